"""Static checks of the run package's layout: the run-directory file names are spelled
in ``arcnb/runs/`` only (everything else asks :mod:`arcnb.runs` for them)."""
from __future__ import annotations

import ast
import json
import re
import shutil
from pathlib import Path

import numpy as np
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


# ============================================== result folders: one writer
#: Calls that turn a table into CSV text for a file.
CSV_MAKERS = {"csv_text", "csv_bytes", "to_csv"}
#: Calls that turn a document into arcnb's JSON file text (indented; ``json.dumps`` of a
#: cell or a hash, without ``indent``, is not a file's document).
JSON_MAKERS = {"json_bytes", "atomic_write_json"}


def _called(node: ast.Call) -> str:
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")


def _result_folder_by_hand(path: Path) -> list[tuple[int, str]]:
    """Where ``path`` writes a result folder itself: it makes CSV files *and* a JSON
    document (the summary-plus-tables set), or spells the result summary's file name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _docstrings(tree)
    csv, js, found = [], [], []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _called(node)
            if name in CSV_MAKERS:
                csv.append(node.lineno)
            if name in JSON_MAKERS or (name in ("dumps", "dump") and any(
                    k.arg == "indent" for k in node.keywords)):
                js.append(node.lineno)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in skip and Path(node.value).name == runs.SUMMARY_JSON:
            found.append((node.lineno, runs.SUMMARY_JSON))
    if csv and js:
        found += [(line, "CSV tables beside a JSON document") for line in (csv[0], js[0])]
    return found


def test_result_folders_have_one_writer():
    """A result folder (a JSON summary beside its CSV tables: compare, candidates,
    repeats, overlap, a sweep, an ARC-AGI-3 scorecard) is written by
    :func:`arcnb.runs.write_result_folder` only: no module outside ``arcnb/runs/`` (the
    run directory and the result folder, the two folders arcnb writes) makes CSV files
    and a JSON document itself, nor spells ``summary.json``; ``arcnb/io.py`` defines
    the two serialisations (``csv_text``, ``atomic_write_json``) and writes no folder."""
    found = _outside_runs(_result_folder_by_hand)
    io_module = found.pop("arcnb/io.py", [])
    assert found == {}
    assert all(what != runs.SUMMARY_JSON for _, what in io_module)


def test_the_result_folder_check_sees_a_writer_of_its_own(tmp_path):
    """The check is not vacuous: the hand-made writers it replaced are each caught (the
    CSV and JSON made in two functions of a module count too), a cell's JSON text and
    a help text naming the file are not."""
    p = tmp_path / "m.py"
    p.write_text('"""Writes summary.json."""\n'
                 "def tables(df):\n    return csv_text(df)\n"
                 "def summary(s):\n    return json.dumps(to_jsonable(s), indent=2)\n"
                 'FILES = ("summary.json", "games.csv")\n'
                 'HELP = "folder for summary.json and the CSV tables"\n'
                 "cell = json.dumps([1, 2])\n")
    assert sorted(_result_folder_by_hand(p)) == [
        (3, "CSV tables beside a JSON document"), (5, "CSV tables beside a JSON document"),
        (6, "summary.json")]
    for text in ("atomic_write_json(out / 'x.json', s)\ndf.to_csv(out / 't.csv')\n",
                 "f = {'a.csv': csv_text(df), 'b.json': json_bytes(s)}\n"):
        p.write_text(text)
        assert len(_result_folder_by_hand(p)) == 2


def test_write_result_folder(tmp_path):
    """Tables, then the extra files, then the summary (last: it marks a finished result),
    each as its one serialisation; refused before anything is computed unless
    ``overwrite``; never through a link."""
    import pandas as pd

    from arcnb.errors import ArcnbError, OutputExistsError
    from arcnb.io import atomic_write_json, csv_text

    out = tmp_path / "res"
    df = pd.DataFrame({"name": ["=cmd()", "ok"], "x": [1.5, float("nan")]})
    matrix = pd.DataFrame({"r1": [1.0]}, index=pd.Index(["t1"], name="task_id"))
    summary = {"n": np.int64(3), "v": float("nan"), "a": [np.float32(0.5)]}
    written = runs.write_result_folder(out, summary, {"t.csv": df, "m.csv": lambda: matrix,
                                                      "none.csv": None},
                                       indexed=["m.csv"], extra_files={"p.html": b"<p>"})
    assert [p.name for p in written] == ["t.csv", "m.csv", "p.html", "summary.json"]
    assert (out / "t.csv").read_text() == csv_text(df) and "'=cmd()" in csv_text(df)
    assert (out / "m.csv").read_text() == csv_text(matrix, index=True)
    assert (out / "p.html").read_bytes() == b"<p>" and not (out / "none.csv").exists()
    atomic_write_json(tmp_path / "ref.json", summary)
    assert (out / "summary.json").read_bytes() == (tmp_path / "ref.json").read_bytes()
    assert json.loads((out / "summary.json").read_text()) == {"a": [0.5], "n": 3, "v": None}

    def never():
        raise AssertionError("computed before the refusal")

    with pytest.raises(OutputExistsError, match="pass it"):
        runs.write_result_folder(out, never, {"t.csv": never}, hint="pass it")
    again = runs.write_result_folder(runs.OutputFolder(out), {"n": 4}, {"t.csv": df},
                                     summary_name="other.json", overwrite=True)
    assert [p.name for p in again] == ["t.csv", "other.json"]
    (out / "t.csv").unlink()
    (out / "t.csv").symlink_to(tmp_path / "elsewhere.csv")
    with pytest.raises(ArcnbError, match="symbolic link"):
        runs.write_result_folder(out, {}, {"t.csv": df}, overwrite=True)
    assert not (tmp_path / "elsewhere.csv").exists()
