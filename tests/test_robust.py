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

ROOT = Path(__file__).resolve().parents[1]


def run(*args, cwd=ROOT, timeout=600):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "arcnb", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=timeout, env=env)


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


def one_line_error(code, err, *needles):
    assert code == 2, (code, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


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
    from arcnb.evaluate import score_to_run_dir

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
    from arcnb.evaluate import score_to_run_dir

    base = tmp_path_factory.mktemp("scored")
    ds = make_folder(base / "ds")
    sub = {"a": [{"attempt_1": [[0]], "attempt_2": [[1, 2], [3, 4]]}],
           "b": [{"attempt_1": [[5, 5], [5, 0]], "attempt_2": [[1]]}]}
    score_to_run_dir(sub, str(ds), base / "run")
    return base / "run"


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
    from test_harness import TASK_IDS, complete_run, task_json, write_run

    from arcnb.data import load_dataset
    from arcnb.evaluate import score_to_run_dir
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
