"""Shared test fixtures."""
from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
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


# ------------------------------------------------------------ fast and slow tests
#: Whole files whose every test starts Jupyter kernels, a browser, a wheel build or a
#: docs build.
SLOW_FILES = {"test_report_notebooks.py", "test_report_browser.py", "test_explore_browser.py",
              "test_wheel.py"}

#: A test is ``slow`` when its own source, or the source of a fixture it uses, does one
#: of these: run a notebook (papermill, nbconvert), build a report (which runs them),
#: drive a browser, build a wheel or the docs.
_SLOW_CODE = re.compile(r"papermill|nbconvert|run_notebook|export_html|playwright|sphinx"
                        r"|build_reports?\(|_report_fixture|\bF\.build|pip\b.*\bwheel"
                        r"""|\(\[?["']report["']""")


def _source(fn) -> str:
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        return ""


def _is_slow(item) -> bool:
    if item.path.name in SLOW_FILES:
        return True
    sources = [_source(getattr(item, "function", None))]
    for name in getattr(item, "fixturenames", ()):
        for fixdef in item._fixtureinfo.name2fixturedefs.get(name, ()):
            sources.append(_source(fixdef.func))
    return any(_SLOW_CODE.search(s) for s in sources)


def pytest_collection_modifyitems(config, items):
    """Mark the tests ``make test-fast`` leaves out (``-m "not slow"``): see
    :data:`SLOW_FILES` and :data:`_SLOW_CODE`. ``make test`` runs them all."""
    for item in items:
        if _is_slow(item):
            item.add_marker(pytest.mark.slow)
