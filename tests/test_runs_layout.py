"""Static checks of the run package's layout: the run-directory file names are spelled
in ``arcnb/runs/`` only (everything else asks :mod:`arcnb.runs` for them)."""
from __future__ import annotations

import ast
import json
import re
import shutil
from pathlib import Path

import pytest

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


def _outside_runs(check) -> dict:
    """``check(path)``'s findings in every module outside ``arcnb/runs/``, by file."""
    offenders = {}
    for path in sorted(PKG.rglob("*.py")):
        if (PKG / "runs") not in path.parents:
            hits = check(path)
            if hits:
                offenders[str(path.relative_to(ROOT))] = hits
    return offenders


def test_run_file_names_are_spelled_in_the_run_package_only():
    assert _outside_runs(_spelled) == {}


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


# ============================================== "is this a run directory?": one rule
#: The names whose presence beside a path makes (or finishes) a run directory.
RUN_MARKS = {"METRICS", "PREDICTIONS", "RUN_FILES"}
#: Path calls that ask whether something is there.
PROBES = {"exists", "is_file", "is_dir", "glob", "rglob", "iterdir", "isfile", "isdir"}


def _decides(path: Path) -> list[tuple[int, str]]:
    """The calls of ``path`` that ask whether a run mark is there: ``(p / METRICS)
    .exists()``, ``os.path.isfile(os.path.join(p, PREDICTIONS))``, ``p.glob(f"*/
    {METRICS}")``... (a mark as a bare name or as ``runs.METRICS``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in PROBES):
            continue
        parts = [node.func.value, *node.args, *(k.value for k in node.keywords)]
        for sub in (n for part in parts for n in ast.walk(part)):
            name = sub.id if isinstance(sub, ast.Name) else \
                sub.attr if isinstance(sub, ast.Attribute) else None
            if name in RUN_MARKS:
                found.append((node.lineno, f"{node.func.attr}({name})"))
                break
    return found


def test_only_the_run_package_decides_what_a_run_directory_is():
    """No module outside ``arcnb/runs/`` looks for a run's marks (``metrics.json``,
    ``predictions.json``) next to a path itself: front, compare, the explorer and the
    command line ask :func:`arcnb.runs.is_run_dir` / :func:`arcnb.runs.is_finished` /
    :func:`arcnb.runs.finished_runs`."""
    assert _outside_runs(_decides) == {}


def test_the_run_directory_check_sees_a_rule_of_its_own(tmp_path):
    """The check is not vacuous: the four rules that grew in front, the explorer,
    compare and the command line are each caught."""
    p = tmp_path / "m.py"
    p.write_text("import os\n"
                 "a = (path / METRICS).is_file() or (path / PREDICTIONS).is_file()\n"
                 "b = path.is_dir() and (path / runs.PREDICTIONS).is_file()\n"
                 "c = Path(out).glob(f'*/{METRICS}')\n"
                 "d = os.path.exists(os.path.join(p, METRICS))\n"
                 "e = (path / 'other.json').exists()\n")
    assert sorted(line for line, _ in _decides(p)) == [2, 2, 3, 4, 5]


@pytest.fixture(scope="module")
def folders(tmp_path_factory, arc1_eval):
    """Real folders: a finished run, an unfinished one (killed before ``metrics.json``),
    a folder of submissions, a harness run's folder, an empty folder, a file."""
    from arcnb.front import PredictionsSource, open_run

    root = tmp_path_factory.mktemp("is_run_dir")
    ids = arc1_eval.task_ids[:3]
    sub = {t: [{"attempt_1": [[0]], "attempt_2": [[1]]} for _ in arc1_eval[t].test]
           for t in ids}
    (root / "sub.json").write_text(json.dumps(sub))
    open_run(PredictionsSource(str(root / "sub.json")), dataset=arc1_eval.select(ids),
             out=root / "finished")
    shutil.copytree(root / "finished", root / "unfinished")
    (root / "unfinished" / runs.METRICS).unlink()
    (root / "submissions").mkdir()
    (root / "submissions" / "mine.json").write_text(json.dumps(sub))
    (root / "harness").mkdir()
    for t in ids:
        (root / "harness" / f"{t}.json").write_text(json.dumps(
            [{"attempt_1": {"answer": [[0]]}, "attempt_2": {"answer": [[1]]}}
             for _ in arc1_eval[t].test]))
    (root / "empty").mkdir()
    (root / "runs").mkdir()
    (root / "runs" / "a").symlink_to(root / "finished")
    shutil.copytree(root / "finished", root / "runs" / "b")
    shutil.copytree(root / "unfinished", root / "runs" / "c")
    return root


def test_is_run_dir_on_real_folders(folders):
    assert runs.is_run_dir(folders / "finished")
    assert runs.is_finished(folders / "finished")
    # killed during its final writes: still a run directory (opening it says what is
    # missing), not a finished one
    assert runs.is_run_dir(folders / "unfinished")
    assert not runs.is_finished(folders / "unfinished")
    for name in ("submissions", "harness", "empty", "sub.json", "missing"):
        assert not runs.is_run_dir(folders / name), name
    assert not runs.is_run_dir(folders / "finished" / runs.METRICS)  # a file, not a folder
    # the finished runs of a folder: b only (a is a link, c is unfinished)
    assert runs.finished_runs(folders / "runs") == [folders / "runs" / "b"]


def test_every_door_agrees_with_is_run_dir(folders, arc1_eval):
    """``arcnb.open`` / ``parse_source`` opens exactly the run directories as runs, and
    compare and the explorer refuse an unfinished one in the same words."""
    from arcnb.compare import CompareError, load_run
    from arcnb.errors import RunDirError
    from arcnb.explorer import explore
    from arcnb.front import PredictionsSource, RunDirSource, parse_source

    for name in ("finished", "unfinished"):
        assert isinstance(parse_source(str(folders / name)), RunDirSource), name
    for name in ("submissions", "harness", "empty", "sub.json"):
        assert isinstance(parse_source(str(folders / name)), PredictionsSource), name
    words = f"{folders / 'unfinished'} is not a run directory: {runs.METRICS} is missing"
    with pytest.raises(CompareError) as got:
        load_run(folders / "unfinished")
    assert str(got.value) == words
    with pytest.raises(RunDirError) as got:
        explore(str(folders / "unfinished"))
    assert str(got.value) == words
