"""Shared test fixtures."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import matplotlib
import pytest

# the one place the tests choose matplotlib's backend: no window, in every test process
# (before any test module imports pyplot)
matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[1]


def pytest_configure(config):
    """One cache folder for the whole run (``ARCNB_CACHE_DIR``, made by the first
    process, inherited by pytest-xdist's workers and every process a test starts): the
    bundled splits are parsed once per run, never read from a developer's own cache.
    The test processes import jsonschema as arcnb's notebook runner does
    (``notebook_libraries``: without the IRI grammars nbformat never uses, 1.5 s of each
    process that reads a notebook)."""
    if "ARCNB_CACHE_DIR" not in os.environ:
        import atexit
        import shutil
        import tempfile

        folder = tempfile.mkdtemp(prefix="arcnb-test-cache-")
        os.environ["ARCNB_CACHE_DIR"] = folder
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
    if getattr(config.option, "numprocesses", None) and not os.environ.get(
            "PYTEST_XDIST_WORKER"):
        return  # pytest-xdist's controller runs no test
    from arcnb.report.notebooks import notebook_libraries

    notebook_libraries()
SHARED = ROOT.parent / "shared"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """``../shared`` beside the checkout; tests that need it skip when it is absent."""
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent (it exists beside the project only in the "
                    "developers' and CI's checkouts)")
    return SHARED


@pytest.fixture(scope="session")
def arc1_eval():
    from arcnb.data import load_dataset

    return load_dataset("arc-agi-1:evaluation")


@pytest.fixture(scope="session")
def arc2_eval():
    from arcnb.data import load_dataset

    return load_dataset("arc-agi-2:evaluation")


#: The dataset most test modules work on (the ``ds`` fixture).
DS_NAME = "arc-agi-1:evaluation"


@pytest.fixture(scope="module")
def ds(request):
    """The dataset a test module works on, loaded once per module: ARC-AGI-1's evaluation
    split (:data:`DS_NAME`), or the part of it the module names, ``DS_TASKS`` (task ids:
    ``load_dataset(DS_NAME, tasks=DS_TASKS)``) or ``DS_FIRST`` (a number n: the split's
    first n tasks, ``select``-ed, so its filter reads "n task ids")."""
    from arcnb.data import load_dataset

    tasks = getattr(request.module, "DS_TASKS", None)
    first = getattr(request.module, "DS_FIRST", None)
    if tasks is not None and first is not None:
        raise AssertionError(f"{request.module.__name__} sets both DS_TASKS and DS_FIRST")
    if tasks is not None:
        return load_dataset(DS_NAME, tasks=list(tasks))
    full = load_dataset(DS_NAME)
    return full if first is None else full.select(full.task_ids[:first])


@pytest.fixture(scope="module")
def default_report(tmp_path_factory):
    """``arcnb report --default`` (built once per session by
    ``_report_fixture.default_report``), checked to have succeeded."""
    import _report_fixture as F

    info = F.default_report(tmp_path_factory)
    assert info["returncode"] == 0, info["stderr"][-3000:]
    return info


@pytest.fixture(autouse=True)
def _close_figures():
    """Close the figures a test leaves open in pyplot (nothing to do where no test of the
    process has imported it)."""
    yield
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close("all")


def pytest_collection_modifyitems(config, items):
    """Order the tests, the longest files first (:data:`LONGEST_FILES`). The tests ``make
    test-fast`` leaves out (``-m "not slow"``) carry their ``slow`` mark in their own file
    (``pytestmark = pytest.mark.slow`` or ``@pytest.mark.slow``, with the reason);
    ``tests/test_layout.py`` checks that a test that starts a kernel, a browser, the docs
    build or another process carries it."""
    # the longest files first: `make test` runs a file per worker (--dist loadfile, with
    # --no-loadscope-reorder: pytest-xdist otherwise hands out the files with the most
    # tests first, whatever their length), in this order, so that a long file started
    # last does not run alone at the end
    first = {name: i for i, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: first.get(item.path.name, len(first)))


#: The files that take longest, longest first (seconds of their tests, fast and slow, on
#: a 2-core machine under CI: the docs build 96, the figure checks 57, the wheel in a
#: fresh venv 53, the sweeps 47, the ARC-AGI-3 scorer 43, the command line end to end 36,
#: the explorer in JupyterLab 35, the program search 35, the fuzzing 30, evaluation 30,
#: the report 27, the report notebooks 24); then the other files with more than 8 s.
LONGEST_FILES = ["test_docs.py", "test_plot_check.py", "test_wheel.py", "test_sweep.py",
                 "test_arc3_scorer.py", "test_robust.py", "test_explore_browser.py",
                 "test_baselines.py", "test_fuzz.py", "test_evaluate.py", "test_report.py",
                 "test_report_notebooks.py", "test_compare.py", "test_repeats.py",
                 "test_breakdown.py", "test_hostile.py", "test_report_browser.py",
                 "test_report_sections.py", "test_overlap.py", "test_candidates.py"]


@pytest.fixture(scope="session")
def small_run(arc1_eval):
    """The bundled example predictions scored on ARC-AGI-1 evaluation (the plots' run)."""
    import _plot_runs

    return _plot_runs.example_run(arc1_eval)


@pytest.fixture(scope="session")
def zero_run():
    """A real run that solves nothing (every chart's empty case)."""
    import _plot_runs

    return _plot_runs.zero_run()
