"""Static checks of the run package's layout: the run-directory file names are spelled
in ``arcnb/runs/`` only (everything else asks :mod:`arcnb.runs` for them)."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import arcnb.runs as runs

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "arcnb"

#: The run directory's file names (values of the layout's constants).
FILE_NAMES = {runs.METRICS, runs.PREDICTIONS, runs.RESULTS_CSV, runs.RESULTS_PARQUET,
              runs.TASKS_CSV, runs.REPORT_NOTEBOOK, runs.REPORT_HTML, runs.EVALUATE_NOTEBOOK,
              runs.EVALUATE_HTML, runs.JOURNAL, runs.JOURNAL_GLOB, runs.SUBMISSION}
#: The shipped notebooks' own file names, which the executed copies in a run directory
#: keep: spelled where the shipped notebooks are listed.
SHIPPED_NOTEBOOKS = {runs.REPORT_NOTEBOOK, runs.EVALUATE_NOTEBOOK}
NOTEBOOK_LISTS = {PKG / "report" / "notebooks.py", PKG / "resources" / "__init__.py"}


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = getattr(node, "body", [])
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def _spelled(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            for name in FILE_NAMES:
                # the whole name (overlap_tasks.csv is another file than tasks.csv)
                whole = re.search(r"(?<![\w.-])" + re.escape(name), node.value)
                if whole and not (path in NOTEBOOK_LISTS and name in SHIPPED_NOTEBOOKS):
                    found.append((node.lineno, name))
    return found


def test_run_file_names_are_spelled_in_the_run_package_only():
    offenders = {}
    for path in sorted(PKG.rglob("*.py")):
        if (PKG / "runs") in path.parents:
            continue
        hits = _spelled(path)
        if hits:
            offenders[str(path.relative_to(ROOT))] = hits
    assert offenders == {}


def test_the_check_sees_a_file_name(tmp_path):
    """The check is not vacuous: a module that spells one is caught, a docstring is not."""
    p = tmp_path / "m.py"
    p.write_text('"""Reads metrics.json."""\nNAME = "metrics.json"\nMSG = f"no {1} tasks.csv"\n')
    assert sorted(_spelled(p)) == [(2, "metrics.json"), (3, "tasks.csv")]


def test_runs_is_a_package_cut_by_concept():
    names = {p.stem for p in (PKG / "runs").glob("*.py")}
    assert {"layout", "document", "run", "provenance"} <= names
    assert not (PKG / "runs.py").exists()
    for name in runs.__all__:  # the public names are still arcnb.runs'
        assert hasattr(runs, name), name
