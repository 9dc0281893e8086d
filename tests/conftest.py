"""Shared test fixtures."""
from __future__ import annotations

import functools
import inspect
import os
import re
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


# ------------------------------------------------------------ fast and slow tests
#: Whole files whose every test starts Jupyter kernels, a browser, a wheel build or a
#: docs build.
SLOW_FILES = {"test_report_notebooks.py", "test_report_browser.py", "test_explore_browser.py",
              "test_wheel.py",
              # fuzzing: thousands of generated files through the loaders and the CLI
              "test_fuzz.py"}

#: A test is ``slow`` when its own source, the source of a fixture it uses, or of a
#: helper function of the tests those call (followed a few calls deep) does one of
#: these: run a notebook or a Jupyter kernel (papermill, nbconvert, nbclient), build a
#: report (which runs them),
#: drive a browser, build a wheel or the docs, or start another process (the command
#: line as a user runs it, torchrun, a process group).
_SLOW_CODE = re.compile(r"papermill|nbconvert|run_notebook|export_html|playwright|sphinx"
                        r"|build_reports?\(|_report_fixture|\bF\.build|pip\b.*\bwheel"
                        r"""|\(\[?["']report["']"""
                        r"|subprocess|mp\.spawn|multiprocessing|start_processes|torchrun"
                        r"|jupyter_client|KernelManager|start_new_kernel|nbclient|NotebookClient")

_NAME = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


def _source(fn) -> str:
    """``fn``'s source without in-process reports (:func:`_without_in_process_reports`),
    for a function defined in ``tests/``; "" for any other (pytest's own fixtures,
    other plugins': they start no kernel). Each file is parsed once (reading every
    fixture and helper anew with ``inspect.getsource`` took most of the collection's
    time, in every test process)."""
    code = getattr(fn, "__code__", None)
    if code is None or Path(code.co_filename).parent != _TESTS:
        return ""
    return _file_functions(code.co_filename).get(code.co_firstlineno, "")


_TESTS = Path(__file__).parent


@functools.lru_cache(maxsize=None)
def _file_functions(filename: str) -> dict:
    """``first line -> source`` of every function of a tests file (from its first
    decorator, as ``co_firstlineno`` counts), with the in-process reports blanked."""
    import ast

    try:
        text = Path(filename).read_text(encoding="utf-8")
        tree = ast.parse(text)
    except (OSError, SyntaxError):
        return {}
    lines = _without_in_process_reports(text, tree).splitlines(keepends=True)
    out = {}
    for node in _definitions(tree.body):
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        out.setdefault(first, "".join(lines[first - 1:node.end_lineno]))
    return out


def _definitions(body):
    """The function definitions among the statements ``body``, nested ones included
    (the statements only: a walk of every expression node took seconds)."""
    import ast

    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node
        for field in ("body", "orelse", "finalbody", "handlers"):
            sub = getattr(node, field, None)
            if isinstance(sub, list):
                yield from _definitions(sub)


def _without_in_process_reports(src: str, tree) -> str:
    """``src`` (parsed: ``tree``) without the calls that build a report in this process
    (a call given ``"--no-notebook"`` or ``notebook=False``, and not
    ``evaluate_in_process=False``: no kernel starts), so that only what else the code
    does can make it slow."""
    import ast

    if "--no-notebook" not in src and not re.search(r"\bnotebook\s*=\s*False", src):
        return src
    lines = src.splitlines(keepends=True)
    for node in ast.walk(tree):
        false = {k.arg for k in getattr(node, "keywords", ())
                 if isinstance(k.value, ast.Constant) and k.value.value is False}
        if isinstance(node, ast.Call) and "evaluate_in_process" not in false and (
                any(isinstance(a, ast.Constant) and a.value == "--no-notebook" for a in node.args)
                or "notebook" in false):
            for i in range(node.lineno - 1, node.end_lineno):
                lines[i] = "\n"
    return "".join(lines)


@functools.lru_cache(maxsize=None)
def _test_helpers(module) -> dict:
    """``name -> function`` for the functions a test module defines or imports from
    another module of ``tests/``."""
    here = Path(__file__).parent
    out = {}
    for name, obj in vars(module).items():
        code = getattr(obj, "__code__", None)
        if code is not None and Path(code.co_filename).parent == here:
            out[name] = obj
        elif (inspect.ismodule(obj) and obj is not module
              and Path(getattr(obj, "__file__", None) or "/").parent == here):
            # a helper module of the tests (``import _report_fixture as F``)
            for sub, fn in vars(obj).items():
                code = getattr(fn, "__code__", None)
                if code is not None and Path(code.co_filename).parent == here:
                    out.setdefault(sub, fn)
    return out


def _is_slow(item) -> bool:
    if item.path.name in SLOW_FILES:
        return True
    key = (getattr(item, "function", None), tuple(getattr(item, "fixturenames", ())))
    if key not in _SLOW:  # the cases of a parametrized test are decided once
        _SLOW[key] = _decide_slow(item)
    return _SLOW[key]


_SLOW: dict = {}


def _decide_slow(item) -> bool:
    sources = [_source(getattr(item, "function", None))]
    for name in getattr(item, "fixturenames", ()):
        for fixdef in item._fixtureinfo.name2fixturedefs.get(name, ()):
            sources.append(_source(fixdef.func))
    helpers = _test_helpers(item.module) if getattr(item, "module", None) else {}
    seen: set = set()
    todo = list(sources)
    for _ in range(4):  # a few calls deep
        nxt = []
        for src in todo:
            for name in set(_NAME.findall(src)) - seen:
                if name in helpers:
                    seen.add(name)
                    nxt.append(_source(helpers[name]))
        sources += nxt
        todo = nxt
    return any(_SLOW_CODE.search(s) for s in sources)


def pytest_collection_modifyitems(config, items):
    """Mark the tests ``make test-fast`` leaves out (``-m "not slow"``): see
    :data:`SLOW_FILES` and :data:`_SLOW_CODE`. ``make test`` runs them all."""
    for item in items:
        if _is_slow(item):
            item.add_marker(pytest.mark.slow)
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
