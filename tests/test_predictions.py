"""Benchmarking-harness runs as predictions: the ARC Prize harness's own file layout,
its scorer's numbers reproduced, pair_index remapping, string / None / [] attempts,
cost and usage, and bad folders or files answered with one line (exit status 2).

The harness is ``arcprize/arc-agi-benchmarking``. ``SAMPLE_ENTRY`` below is a trimmed
copy of its sample run file ``data/sample/submissions/example_model/66e6c45b.json``
(schema ``src/arc_agi_benchmarking/schemas.py``: ``Attempt``, ``AttemptMetadata``,
``Usage``, ``Cost``). :func:`harness_scorer` is an independent naive transcription of
the loop of its scorer ``src/arc_agi_benchmarking/scoring/scoring.py``
(``ARCScorer.score_submission`` / ``score_task``), working on the raw JSON the way its
pydantic schema reads it.
"""
from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _cli import cli

from arcnb.data import load_dataset
from arcnb.errors import PredictionsError
from arcnb.predictions import load_predictions
from arcnb.scoring import COST_SUMMARY_KEYS, USAGE_COLUMNS, score

ROOT = Path(__file__).resolve().parents[1]

# A trimmed copy of the harness's sample run file (one test input, one attempt).
SAMPLE_ENTRY = {
    "attempt_1": {
        "answer": [[2, 0, 0, 3], [0, 0, 0, 0], [0, 0, 0, 0], [4, 0, 0, 9]],
        "metadata": {
            "model": "sample-model",
            "provider": "sample",
            "start_timestamp": "2025-01-01T00:00:00Z",
            "end_timestamp": "2025-01-01T00:00:01Z",
            "choices": [
                {"index": 0, "message": {"role": "user",
                                         "content": "ARC task prompt omitted for brevity"}},
                {"index": 1, "message": {"role": "assistant",
                                         "content": "Predicted grid output"}},
            ],
            "reasoning_summary": None,
            "kwargs": {},
            "usage": {
                "prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20,
                "completion_tokens_details": {"reasoning_tokens": 0,
                                              "accepted_prediction_tokens": 10,
                                              "rejected_prediction_tokens": 0},
            },
            "cost": {"prompt_cost": 0.0, "completion_cost": 0.0, "reasoning_cost": None,
                     "total_cost": 0.0},
            "task_id": "66e6c45b",
            "pair_index": 0,
            "test_id": "sample-config",
        },
        "correct": True,
    }
}

# real ARC-AGI-1 evaluation tasks: 66e6c45b is the harness's sample task, 00576224 the
# sample task of its data/sample/tasks; the others have two test inputs
TASK_IDS = ["66e6c45b", "00576224", "12997ef3", "1d398264", "31d5ba1a", "3b4c2228"]


# --------------------------------------------------------------------------- builders
def attempt(answer, task_id, pair_index, *, cost, tokens=(100, 40, 8), seconds=2.5,
            model="sample-model", start="2025-01-01T00:00:00Z", pair_key=True):
    """One attempt in the harness's schema (fields of the sample's metadata)."""
    md = copy.deepcopy(SAMPLE_ENTRY["attempt_1"]["metadata"])
    prompt, completion, reasoning = tokens
    md["usage"].update(prompt_tokens=prompt, completion_tokens=completion,
                       total_tokens=prompt + completion)
    md["usage"]["completion_tokens_details"]["reasoning_tokens"] = reasoning
    md["cost"].update(prompt_cost=cost / 2, completion_cost=cost / 2, total_cost=cost)
    md["model"] = model
    md["task_id"] = task_id
    md["start_timestamp"] = start
    end = pd.Timestamp(start) + pd.Timedelta(seconds=seconds)
    md["end_timestamp"] = end.isoformat()
    if pair_key:
        md["pair_index"] = pair_index
    else:
        del md["pair_index"]
    return {"answer": answer, "metadata": md, "correct": None}


def task_json(task) -> dict:
    pair = lambda p: {"input": p.input.tolist(), "output": p.output.tolist()}  # noqa: E731
    return {"train": [pair(p) for p in task.train], "test": [pair(p) for p in task.test]}


@pytest.fixture(scope="module")
def arc_tasks():
    return load_dataset("arc-agi-1:evaluation", tasks=TASK_IDS)


@pytest.fixture()
def task_dir(tmp_path, arc_tasks):
    """The selected tasks as ARC task files (the harness's --task_dir)."""
    d = tmp_path / "tasks"
    d.mkdir()
    for t in arc_tasks:
        (d / f"{t.id}.json").write_text(json.dumps(task_json(t)))
    return d


def wrong(grid) -> list:
    g = np.asarray(grid)
    return ((g + 1) % 10).tolist()


def complete_run(ds) -> dict:
    """A harness run with a file for every task: right and wrong answers, a right answer
    as a JSON string, entries out of order with pair_index, an invalid pair_index, None
    attempts and [] answers. Costs are multiples of 1/1024, so every order of summation
    gives the same float."""
    out = {}
    t = ds["66e6c45b"]
    out[t.id] = [copy.deepcopy(SAMPLE_ENTRY)]
    t = ds["00576224"]  # attempt 2 right, given as a JSON string
    truth = t.test[0].output.tolist()
    out[t.id] = [{"attempt_1": attempt(wrong(truth), t.id, 0, cost=0.25),
                  "attempt_2": attempt(json.dumps(truth), t.id, 0, cost=0.125,
                                       start="2025-03-01T10:00:00+02:00")}]
    t = ds["12997ef3"]  # entries out of order: the file lists test 1 first
    o0, o1 = (p.output.tolist() for p in t.test)
    out[t.id] = [{"attempt_1": attempt(o1, t.id, 1, cost=0.5), "attempt_2": None},
                 {"attempt_1": attempt(wrong(o0), t.id, 0, cost=0.0625),
                  "attempt_2": attempt(wrong(o0), t.id, 0, cost=0.0625)}]
    t = ds["1d398264"]  # [] then right; test 1 has two None attempts
    o0 = t.test[0].output.tolist()
    out[t.id] = [{"attempt_1": attempt([], t.id, 0, cost=0.03125),
                  "attempt_2": attempt(o0, t.id, 0, cost=0.03125)},
                 {"attempt_1": None, "attempt_2": None}]
    t = ds["31d5ba1a"]  # pair_index 7 is not a test index: position
    o0, o1 = (p.output.tolist() for p in t.test)
    out[t.id] = [{"attempt_1": attempt(o0, t.id, 7, cost=0.375)},
                 {"attempt_1": attempt(wrong(o1), t.id, 7, cost=0.375),
                  "attempt_2": attempt(o1, t.id, 1, cost=0.25, model="other-model")}]
    t = ds["3b4c2228"]  # all wrong
    out[t.id] = [{"attempt_1": attempt(wrong(p.output), t.id, i, cost=0.5),
                  "attempt_2": attempt(wrong(p.output), t.id, i, cost=0.5)}
                 for i, p in enumerate(t.test)]
    return out


def write_run(folder: Path, run: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for tid, entries in run.items():
        (folder / f"{tid}.json").write_text(json.dumps(entries, indent=2))
    return folder


# ------------------------------------------------------------- the harness's scorer
def _harness_attempt(raw):
    """What the harness's ``Attempt`` schema makes of one attempt value."""
    if raw is None:
        return None
    answer = raw["answer"]
    answer = json.loads(json.dumps(answer) if isinstance(answer, list) else answer)
    md = dict(raw["metadata"])
    md.setdefault("pair_index", 0)  # AttemptMetadata.pair_index: Optional[int] = 0
    return {"answer": answer, "metadata": md}


def harness_scorer(task_dir: Path, submission_dir: Path) -> dict:
    """Naive transcription of ARCScorer.score_submission and score_task."""
    solutions = {f.stem: json.loads(f.read_text()) for f in task_dir.glob("*.json")}
    totals = dict(score=0.0, tasks=0, cost=0.0, attempts=0, output_tokens=0,
                  total_tokens=0, duration=0.0)
    task_results = {}
    for f in submission_dir.glob("*.json"):
        if f.name == "results.json":
            continue
        task = solutions[f.stem]
        pairs = [[_harness_attempt(e[k]) for k in sorted(e) if k.startswith("attempt_")]
                 for e in json.loads(f.read_text())]
        num_pairs = len(task["test"])
        t_score, t_cost, t_attempts, t_out, t_all, t_dur = 0, 0.0, 0, 0, 0, 0.0
        for enum_index, pair_attempts in enumerate(pairs):
            pair_index = None
            for a in pair_attempts:
                if a is None:
                    continue
                pi = a["metadata"]["pair_index"]
                if 0 <= pi < num_pairs:
                    pair_index = pi
                    break
            if pair_index is None:
                pair_index = enum_index
            if not 0 <= pair_index < num_pairs:
                continue
            t_attempts += len(pair_attempts)
            any_correct = False
            for a in pair_attempts:
                if a is None:
                    continue
                md = a["metadata"]
                t_cost += md["cost"]["total_cost"]
                t_out += md["usage"]["completion_tokens"]
                t_all += md["usage"]["total_tokens"]
                t_dur += (pd.Timestamp(md["end_timestamp"])
                          - pd.Timestamp(md["start_timestamp"])).total_seconds()
                if a["answer"] == []:
                    continue
                any_correct = any_correct or a["answer"] == task["test"][pair_index]["output"]
            if any_correct:
                t_score += 1
        task_results[f.stem] = {"score": t_score / num_pairs if num_pairs else 0.0,
                                "cost": t_cost, "attempts": t_attempts}
        totals["score"] += task_results[f.stem]["score"]
        totals["tasks"] += 1
        totals["cost"] += t_cost
        totals["attempts"] += t_attempts
        totals["output_tokens"] += t_out
        totals["total_tokens"] += t_all
        totals["duration"] += t_dur
    n, a = totals["tasks"], totals["attempts"]
    return {"score": totals["score"], "total_tasks": n, "total_cost": totals["cost"],
            "total_attempts": a,
            "avg_cost_per_task": totals["cost"] / n if n else 0,
            "avg_cost_per_attempt": totals["cost"] / a if a else 0,
            "output_tokens": totals["output_tokens"], "total_tokens": totals["total_tokens"],
            "duration": totals["duration"], "task_results": task_results}


def run_cli(*args):
    return cli(*args, cwd=ROOT)


# ------------------------------------------------------------------------ the tests
def test_sample_file_scores_as_the_harness_says(tmp_path, task_dir):
    """The harness's own sample: right (its "correct" is true), cost 0 (known, not NaN)."""
    run = write_run(tmp_path / "run", {"66e6c45b": [copy.deepcopy(SAMPLE_ENTRY)]})
    ds = load_dataset(task_dir, tasks=["66e6c45b"])
    res = score(ds, run)
    s = res.summary
    assert s["pass@2"] == s["pass@1"] == 1.0
    assert s["total_cost"] == 0.0 and s["cost_per_task"] == 0.0
    assert s["total_tokens"] == 20 and s["n_attempts"] == 1 and s["n_attempts_with_cost"] == 1
    assert s["total_duration_s"] == 1.0
    assert s["model"] == "sample-model" and s["provider"] == "sample"
    md = res.predictions.metadata["66e6c45b"][0][0]
    assert md == SAMPLE_ENTRY["attempt_1"]["metadata"]
    assert res.predictions.format == "harness" and res.predictions.files == ["66e6c45b.json"]


def test_harness_scorer_numbers_reproduced(tmp_path, task_dir, arc_tasks):
    run = write_run(tmp_path / "run", complete_run(arc_tasks))
    ref = harness_scorer(task_dir, run)
    assert ref["total_tasks"] == len(TASK_IDS)  # every file present
    res = score(load_dataset(task_dir), run)
    s = res.summary
    # scores: at most two attempts per entry, so the harness's "any attempt" is pass@2
    assert s["pass@2"] == pytest.approx(ref["score"] / ref["total_tasks"], abs=1e-15)
    per_task = res.tasks.set_index("task_id")
    for tid, r in ref["task_results"].items():
        assert per_task.loc[tid, "pass@2"] == pytest.approx(r["score"], abs=1e-15), tid
        assert per_task.loc[tid, "n_attempts"] == r["attempts"], tid
        assert per_task.loc[tid, "cost"] == r["cost"], tid
    # costs and attempt counts: exact (dyadic costs)
    assert s["total_cost"] == ref["total_cost"]
    assert s["n_attempts"] == ref["total_attempts"]
    assert s["cost_per_attempt"] == ref["avg_cost_per_attempt"]
    assert s["cost_per_task"] == ref["avg_cost_per_task"]  # equal: no file is missing
    assert res.outputs["completion_tokens"].sum() == ref["output_tokens"]
    assert s["total_tokens"] == ref["total_tokens"]
    assert s["total_duration_s"] == pytest.approx(ref["duration"], rel=1e-12)
    assert s["model"] == "other-model, sample-model"


def test_hand_checked_details_of_the_complete_run(tmp_path, task_dir, arc_tasks):
    run = write_run(tmp_path / "run", complete_run(arc_tasks))
    res = score(load_dataset(task_dir), run)
    o = res.outputs.set_index(["task_id", "test_index"])
    # JSON-string answer parsed: right on attempt 2
    assert o.loc[("00576224", 0), "first_correct"] == 2
    assert o.loc[("00576224", 0), "duration_s"] == 5.0  # 2.5 s each, one with +02:00
    # out of order: entry 0 holds test 1 (right), entry 1 test 0 (wrong)
    assert o.loc[("12997ef3", 1), "solved@1"] and not o.loc[("12997ef3", 0), "solved@2"]
    assert o.loc[("12997ef3", 1), "n_attempts"] == 2  # the None attempt counts
    assert o.loc[("12997ef3", 1), "cost"] == 0.5 and o.loc[("12997ef3", 0), "cost"] == 0.125
    assert res.predictions.moved == [("12997ef3", 0, 1), ("12997ef3", 1, 0)]
    # [] is a malformed attempt (counted, cost kept); two None attempts: no cost (NaN)
    assert o.loc[("1d398264", 0), "n_invalid_attempts"] == 1
    assert o.loc[("1d398264", 0), "first_correct"] == 2
    assert o.loc[("1d398264", 0), "cost"] == 0.0625
    assert o.loc[("1d398264", 1), "n_attempts"] == 2 and not o.loc[("1d398264", 1), "missing"]
    assert math.isnan(o.loc[("1d398264", 1), "cost"])
    # invalid pair_index 7: position; in entry 1 the valid pair_index 1 of attempt 2
    assert o.loc[("31d5ba1a", 0), "solved@1"] and o.loc[("31d5ba1a", 1), "first_correct"] == 2
    # tokens: prompt 100, completion 40, reasoning 8 per attempt with metadata
    assert o.loc[("3b4c2228", 0), "prompt_tokens"] == 200
    assert o.loc[("3b4c2228", 0), "reasoning_tokens"] == 16
    assert o.loc[("3b4c2228", 0), "total_tokens"] == 280
    t = res.tasks.set_index("task_id")
    assert t.loc["3b4c2228", "cost"] == 2.0 and t.loc["1d398264", "cost"] == 0.0625
    # every attempt's metadata is kept, None for a None attempt
    md = res.attempt_metadata("12997ef3", 1)
    assert md[0]["pair_index"] == 1 and md[1] is None
    assert res.predictions.metadata["12997ef3"][0][1]["cost"]["total_cost"] == 0.0625


def test_missing_file_denominators(tmp_path, task_dir, arc_tasks):
    """A task without a file is missing (wrong) and the cost per task divides by the
    dataset's tasks; the harness divides by the files present."""
    run = complete_run(arc_tasks)
    del run["3b4c2228"], run["12997ef3"]
    folder = write_run(tmp_path / "run", run)
    ref = harness_scorer(task_dir, folder)
    res = score(load_dataset(task_dir), folder)
    s = res.summary
    assert ref["total_tasks"] == 4 and s["n_tasks"] == 6
    assert s["total_cost"] == ref["total_cost"]
    assert s["cost_per_attempt"] == ref["avg_cost_per_attempt"]
    assert s["cost_per_task"] == ref["total_cost"] / 6 != ref["avg_cost_per_task"]
    assert s["pass@2"] == pytest.approx(ref["score"] / 6)
    assert s["n_missing_outputs"] == 4
    t = res.tasks.set_index("task_id")
    assert math.isnan(t.loc["3b4c2228", "cost"])  # unknown, not 0


def test_pair_index_needs_the_dataset_and_merges_duplicates(tmp_path, task_dir, arc_tasks):
    t = arc_tasks["12997ef3"]
    o0, o1 = (p.output.tolist() for p in t.test)
    run = {
        # one entry for test 1 only: on loading (1 entry) pair_index 1 is beyond the
        # file; scoring knows the task has 2 test inputs
        t.id: [{"attempt_1": attempt(o1, t.id, 1, cost=0.25)}],
        # two entries for test 0 (the second one's right answer comes as attempts 3-4)
        "1d398264": [{"attempt_1": attempt(wrong(arc_tasks["1d398264"].test[0].output),
                                           "1d398264", 0, cost=0.25)},
                     {"attempt_1": attempt(arc_tasks["1d398264"].test[0].output.tolist(),
                                           "1d398264", 0, cost=0.25)}],
        # no pair_index at all: position (the harness's schema would say 0 for both)
        "31d5ba1a": [{"attempt_1": attempt(p.output.tolist(), "31d5ba1a", 0, cost=0.125,
                                           pair_key=False)}
                     for p in arc_tasks["31d5ba1a"].test],
        # an entry beyond the test inputs without a valid pair_index: extra output
        "66e6c45b": [copy.deepcopy(SAMPLE_ENTRY),
                     {"attempt_1": attempt([[1]], "66e6c45b", 5, cost=1.0)}],
    }
    folder = write_run(tmp_path / "run", run)
    loaded = load_predictions(folder)
    assert len(loaded.get(t.id, 0)) == 1  # guessed from the file alone
    res = score(load_dataset(task_dir), folder)
    o = res.outputs.set_index(["task_id", "test_index"])
    assert o.loc[(t.id, 0), "missing"] and o.loc[(t.id, 1), "first_correct"] == 1
    assert o.loc[("1d398264", 0), "n_attempts"] == 2
    assert o.loc[("1d398264", 0), "first_correct"] == 2 and o.loc[("1d398264", 0), "cost"] == 0.5
    assert o.loc[("1d398264", 1), "missing"]
    assert o.loc[("31d5ba1a", 0), "solved@1"] and o.loc[("31d5ba1a", 1), "solved@1"]
    s = res.summary
    assert s["n_extra_outputs"] == 1
    assert o.loc[("66e6c45b", 0), "cost"] == 0.0  # the extra entry's 1.0 is not counted
    assert any("already holds" in p["problem"] for p in res.predictions.problems)
    assert any("metadata.pair_index" in n for n in s["notes"])
    # the harness counts the same attempts and cost (duplicates included, the extra
    # entry left out) ...
    ref = harness_scorer(task_dir, folder)["task_results"]
    per_task = res.tasks.set_index("task_id")
    for tid in (t.id, "1d398264", "66e6c45b"):
        assert per_task.loc[tid, "n_attempts"] == ref[tid]["attempts"], tid
        assert per_task.loc[tid, "cost"] == ref[tid]["cost"], tid
        assert per_task.loc[tid, "pass@2"] == ref[tid]["score"], tid
    # ... but takes a missing pair_index as 0: both entries go to test 0, test 1 is lost
    assert ref["31d5ba1a"]["score"] == 0.5 and per_task.loc["31d5ba1a", "pass@2"] == 1.0


def test_string_none_and_empty_attempts_never_stop_the_run(tmp_path, task_dir, arc_tasks):
    t = arc_tasks["66e6c45b"]
    truth = t.test[0].output.tolist()
    run = {t.id: [{"attempt_1": attempt("[[1, 2], [3", t.id, 0, cost=0.25),
                   "attempt_2": attempt(json.dumps(truth), t.id, 0, cost=0.25),
                   "attempt_3": None, "attempt_4": attempt([], t.id, 0, cost=0.25),
                   "attempt_5": attempt("7", t.id, 0, cost=0.25)}]}
    folder = write_run(tmp_path / "run", run)
    preds = load_predictions(folder)
    assert preds.n_invalid_attempts == 4
    reasons = [p["problem"] for p in preds.problems]
    assert any("the answer is text without a grid" in r for r in reasons)
    res = score(load_dataset(task_dir, tasks=[t.id]), folder)
    o = res.outputs.iloc[0]
    assert o["n_attempts"] == 5 and o["n_invalid_attempts"] == 4 and o["first_correct"] == 2
    assert o["cost"] == 1.0 and res.summary["n_attempts_with_cost"] == 4
    assert res.summary["cost_per_attempt"] == 0.2


def test_ignored_files_and_no_metadata(tmp_path, task_dir, arc_tasks):
    """results.json, non-JSON files, hidden files, sub-folders and JSON objects are not
    tasks. Plain grids (no metadata): cost and tokens are NaN / null, never 0."""
    folder = tmp_path / "run"
    folder.mkdir()
    for t in arc_tasks:
        entries = [{"attempt_1": p.output.tolist()} for p in t.test]
        (folder / f"{t.id}.json").write_text(json.dumps(entries))
    (folder / "results.json").write_text(json.dumps([{"attempt_1": [[1]]}]))  # a list!
    (folder / "config.json").write_text(json.dumps({"model": "x"}))
    (folder / "notes.txt").write_text("not json")
    (folder / ".hidden.json").write_text("{not json")
    (folder / "sub").mkdir()
    (folder / "sub" / "x.json").write_text("[]")
    preds = load_predictions(folder)
    assert sorted(preds.task_ids) == sorted(TASK_IDS)
    assert preds.ignored_files == [".hidden.json", "config.json", "notes.txt",
                                   "results.json", "sub/"]
    assert not preds.has_metadata
    res = score(load_dataset(task_dir), folder)
    s = res.summary
    assert s["pass@2"] == 1.0 and s["n_extra_tasks"] == 0
    for key in ("total_cost", "cost_per_task", "cost_per_attempt", "total_tokens",
                "tokens_per_task", "total_duration_s"):
        assert math.isnan(s[key]), key
    assert s["model"] is None and s["provider"] is None and s["n_attempts_with_cost"] == 0
    assert res.outputs[list(USAGE_COLUMNS)].isna().all().all()
    assert res.tasks[list(USAGE_COLUMNS)].isna().all().all()
    p = run_cli("score", "--dataset", task_dir, "--predictions", folder, "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert set(COST_SUMMARY_KEYS) <= set(out)
    assert out["total_cost"] is None and out["cost_per_task"] is None
    assert out["model"] is None and out["estimator"] == "ranked"
    # the folder's digest covers the task files only, and changes with them
    digest = preds.source_sha256()
    (folder / "notes.txt").write_text("changed")
    assert load_predictions(folder).source_sha256() == digest
    (folder / "66e6c45b.json").write_text(json.dumps([{"attempt_1": [[0]]}]))
    assert load_predictions(folder).source_sha256() != digest


def test_cli_on_harness_run(tmp_path, task_dir, arc_tasks):
    folder = write_run(tmp_path / "run", complete_run(arc_tasks))
    ref = harness_scorer(task_dir, folder)
    p = run_cli("score", "--dataset", task_dir, "--predictions", folder, "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["total_cost"] == ref["total_cost"]
    assert out["cost_per_attempt"] == ref["avg_cost_per_attempt"]
    assert out["n_attempts"] == ref["total_attempts"]
    assert out["tokens_per_task"] == ref["total_tokens"] / 6
    p = run_cli("score", "--dataset", task_dir, "--predictions", folder)
    assert p.returncode == 0, p.stderr
    assert "estimator: ranked" in p.stdout
    assert f"cost: total ${ref['total_cost']:.4f}" in p.stdout


def _bad_folders(tmp, arc_tasks):
    t = arc_tasks["66e6c45b"]
    cases = {}
    d = tmp / "empty"
    d.mkdir()
    cases["empty"] = (d, str(d))
    d = tmp / "arc_tasks"
    d.mkdir()
    (d / f"{t.id}.json").write_text(json.dumps(task_json(t)))
    cases["arc_tasks"] = (d, "ARC tasks")
    d = tmp / "nested"
    (d / "gpt-x").mkdir(parents=True)
    (d / "gpt-x" / f"{t.id}.json").write_text(json.dumps([SAMPLE_ENTRY]))
    cases["nested"] = (d, "gpt-x")
    for name, content in {"ints": "[1, 2, 3]", "grid_entries": "[[[1, 2]]]",
                          "null_entry": "[null]",
                          "flat": json.dumps([SAMPLE_ENTRY["attempt_1"]]),
                          "invalid": "[{\"attempt_1\": ", "dup": '[{"attempt_1": 1, '
                                                                 '"attempt_1": 2}]'}.items():
        d = tmp / name
        d.mkdir()
        (d / f"{t.id}.json").write_text(content)
        cases[name] = (d, f"{t.id}.json")
    return cases


@pytest.mark.parametrize("case", ["empty", "arc_tasks", "nested", "ints", "grid_entries",
                                  "null_entry", "flat", "invalid", "dup"])
def test_bad_folder_or_file_is_one_line_exit_2(tmp_path, arc_tasks, case):
    folder, named = _bad_folders(tmp_path, arc_tasks)[case]
    with pytest.raises(PredictionsError):
        load_predictions(folder)
    p = run_cli("score", "--dataset", "arc-agi-1:evaluation", "--predictions", folder)
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arcnb: error:"), p.stderr
    assert named in lines[0] and "Traceback" not in p.stderr


def test_harness_run_written_as_one_file_scores_the_same(tmp_path, task_dir, arc_tasks):
    """Results.predictions (mapped to the dataset) written with its metadata reads back
    to the same scores and cost; without metadata, to the same scores and no cost."""
    from arcnb.predictions import write_predictions

    folder = write_run(tmp_path / "run", complete_run(arc_tasks))
    ds = load_dataset(task_dir)
    res = score(ds, folder)
    path = write_predictions(tmp_path / "predictions.json", res.predictions, with_metadata=True)
    again = score(ds, path)
    for key in ("pass@1", "pass@2", "pass@2_all_or_nothing", "total_cost", "n_attempts",
                "cost_per_attempt", "total_tokens", "total_duration_s", "n_invalid_attempts"):
        assert again.summary[key] == res.summary[key], key
    pd.testing.assert_frame_equal(again.outputs, res.outputs)
    plain = score(ds, write_predictions(tmp_path / "plain.json", res.predictions))
    assert plain.summary["pass@2"] == res.summary["pass@2"]
    assert math.isnan(plain.summary["total_cost"])


# ------------------------------------------------------------------ JSON Lines predictions
def _jsonl(path, records, *, bom=False, crlf=False):
    text = ("\r\n" if crlf else "\n").join(json.dumps(r) for r in records) + "\n"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return path


def test_jsonl_scores_as_the_same_submission(tmp_path, arc1_eval):
    """The bundled example predictions (400 tasks), one line per test output in a shuffled
    order, score exactly as the submission file does."""
    path = ROOT / "data" / "examples" / "arc-agi-1-evaluation_heuristic.json"
    sub = json.loads(path.read_text())
    records = [{"task_id": tid, "pair_index": i, "model_note": "ignored",
                "attempts": [e[k] for k in sorted(e)]}
               for tid, entries in sub.items() for i, e in enumerate(entries)]
    order = np.random.default_rng(0).permutation(len(records))
    jl = _jsonl(tmp_path / "p.jsonl", [records[i] for i in order], bom=True, crlf=True)
    got, want = score(arc1_eval, jl, n_boot=20), score(arc1_eval, path, n_boot=20)
    assert load_predictions(jl).format == "jsonl"
    pd.testing.assert_frame_equal(got.outputs, want.outputs)
    for key in ("pass@1", "pass@2", "pass@2_per_output", "pass@2_all_or_nothing",
                "n_outputs", "n_tasks"):
        assert got.summary[key] == want.summary[key], key


def test_jsonl_missing_outputs_metadata_and_bad_grids(tmp_path):
    recs = [{"task_id": "t", "pair_index": 1, "attempts": [[[1, 2]], [[3]]],
             "metadata": [{"cost": {"total_cost": 0.25}}, None]},
            {"task_id": "u", "pair_index": 0, "attempts": [[[1, 2], [3]], [[0]]]}]
    p = load_predictions(_jsonl(tmp_path / "p.jsonl", recs))
    # t's test input 0 has no line: no prediction; its input 1 has two attempts
    assert p.attempts["t"][0] == []
    assert [g.tolist() for g in p.attempts["t"][1]] == [[[1, 2]], [[3]]]
    assert p.metadata["t"][1] == [{"cost": {"total_cost": 0.25}}, None]
    # a ragged grid is a malformed attempt, counted and said, never fatal
    assert p.attempts["u"][0][0] is None and p.attempts["u"][0][1].tolist() == [[0]]
    assert p.n_invalid_attempts == 1
    assert [(q["task_id"], q["test_index"], q["attempt"]) for q in p.problems] == \
        [("u", 0, "attempt_1")]


@pytest.mark.parametrize("lines, said", [
    (['{"task_id": "t", "pair_index": 0, "attempts": []}',
      '{"task_id": "t", "pair_index": 0, "attempts": []}'], "line 2: a second line for task t"),
    (['[1, 2]'], "line 1: expected an object"),
    (['{"task_id": "t", "attempts": []}'], "line 1: no pair_index"),
    (['', '{"task_id": "t", "pair_index": -1, "attempts": []}'], "line 2: pair_index -1"),
    (['{"task_id": "t", "pair_index": true, "attempts": []}'], "line 1: pair_index True"),
    (['{"task_id": 7, "pair_index": 0, "attempts": []}'], "line 1: task_id is not"),
    (['{"task_id": "t", "pair_index": 0, "attempts": {"a": 1}}'], "line 1: attempts is a dict"),
    (['{"task_id": "t", "pair_index": 0, "attempts": [[[1]]], "metadata": []}'],
     "line 1: metadata is not a list with one entry"),
    (['{"task_id": "t", "pair_index": 0, "attempts": [[[1]]]}', '{"task_id": '],
     "not valid JSON Lines: line 2"),
    (['{"task_id": "t", "task_id": "u", "pair_index": 0, "attempts": []}'],
     "line 1: the key 'task_id' appears more than once"),
    (['{"task_id": "t", "pair_index": 0, "attempts": ' + "[" * 100 + "]" * 100 + "}"],
     "nests arrays/objects"),
])
def test_jsonl_bad_lines_are_one_clear_error(tmp_path, lines, said):
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(PredictionsError) as exc:
        load_predictions(path)
    msg = str(exc.value)
    assert said in msg and str(path) in msg and "\n" not in msg


def test_cli_scores_a_jsonl_file_and_refuses_a_bad_one(tmp_path):
    recs = [{"task_id": "00576224", "pair_index": 0, "attempts": [[[0]]]}]
    ok = run_cli("score", "--dataset", "arc-agi-1:evaluation", "--json", "--predictions",
                 _jsonl(tmp_path / "p.jsonl", recs))
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["n_tasks"] == 400
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "00576224", "pair_index": "zero", "attempts": []}\n')
    p = run_cli("score", "--dataset", "arc-agi-1:evaluation", "--predictions", bad)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "bad.jsonl line 1: pair_index 'zero'" in lines[0], p.stderr


# ------------------------------------------------------------------ hostile JSON Lines
def test_jsonl_line_pair_index_wins_over_the_metadata_pair_index(tmp_path):
    """A line's own pair_index places its attempts: the metadata.pair_index inside an
    attempt (1) does not send line 0's attempts to test input 1, where they would join
    line 1's and make pass@3 of input 1 count an attempt filed under input 0."""
    ds = load_dataset("arc-agi-1:evaluation", tasks=["12997ef3"])  # two test inputs
    t0, t1 = (p.output.tolist() for p in ds["12997ef3"].test)
    wrong = [[(c + 1) % 10 for c in row] for row in t1]
    recs = [{"task_id": "12997ef3", "pair_index": 0, "attempts": [t1, t1, t1],
             "metadata": [{"pair_index": 1}] * 3},
            {"task_id": "12997ef3", "pair_index": 1, "attempts": [wrong, wrong, wrong]}]
    path = _jsonl(tmp_path / "p.jsonl", recs)
    p = load_predictions(path)
    assert [len(o) for o in p.attempts["12997ef3"]] == [3, 3]
    res = score(ds, path, ks=(1, 2, 3), n_boot=10)
    # hand-computed: input 0 gets t1 (wrong: t0 != t1), input 1 gets three wrong grids
    assert t0 != t1
    assert res.summary["pass@3"] == 0.0
    assert res.outputs["solved@3"].tolist() == [False, False]


def test_jsonl_index_beyond_any_task_is_refused_and_memory_stays_bounded(tmp_path):
    """300 lines of pair_index 9999 (17 KB) used to build 3 million empty entries
    (+1 GB) before the dataset was consulted: an index is now 0..99, and the entries a
    file makes are bounded by that, checked structurally."""
    from arcnb.predictions import MAX_TEST_INPUTS

    bad = tmp_path / "far.jsonl"
    bad.write_text("".join(json.dumps({"task_id": f"t{i}", "pair_index": 9999, "attempts": []})
                           + "\n" for i in range(300)))
    with pytest.raises(PredictionsError, match=r"line 1: pair_index 9999 is not a test input "
                                                r"index \(0 to 99\)"):
        load_predictions(bad)
    edge = tmp_path / "edge.jsonl"
    edge.write_text("".join(json.dumps({"task_id": f"t{i}", "pair_index": MAX_TEST_INPUTS - 1,
                                        "attempts": []}) + "\n" for i in range(300)))
    p = load_predictions(edge)
    assert max(len(o) for o in p.attempts.values()) == MAX_TEST_INPUTS
    assert sum(len(o) for o in p.attempts.values()) == 300 * MAX_TEST_INPUTS


def test_a_boolean_cell_is_a_malformed_attempt_never_colour_1(tmp_path):
    """[[true]] was caught, [[1, true]] was read as [[1, 1]] and scored as solved: the
    harness guide says a boolean cell makes the attempt malformed."""
    (tmp_path / "ds").mkdir()
    (tmp_path / "ds" / "t.json").write_text(json.dumps(
        {"train": [{"input": [[1]], "output": [[1]]}],
         "test": [{"input": [[0, 0]], "output": [[1, 1]]}]}))
    ds = load_dataset(tmp_path / "ds")
    path = tmp_path / "sub.json"
    path.write_text('{"t": [{"attempt_1": [[1, true]], "attempt_2": [[true, 1]]}]}')
    res = score(ds, path, n_boot=10)
    assert res.summary["pass@2"] == 0.0
    assert res.summary["n_invalid_attempts"] == 2
    assert "boolean" in res.predictions.problems[0]["problem"]
    # the same grid with integers is solved: only the boolean made it wrong
    path.write_text('{"t": [{"attempt_1": [[1, 1]]}]}')
    assert score(ds, path, n_boot=10).summary["pass@2"] == 1.0


def test_a_file_is_read_task_by_task_and_a_callers_dict_is_left_alone(tmp_path):
    """A predictions file's parse is dropped task by task as it is read (the parse and
    the arrays are not held at once: about half the peak memory for millions of small
    grids); the same predictions come out, and a dict a caller passes is not emptied."""
    import copy

    from arcnb.predictions import Predictions, load_predictions

    sub = {f"t{i}": [{"attempt_1": [[i % 10]], "attempt_2": [[1, 2]]},
                     {"attempt_1": None, "attempt_2": [[3]]}] for i in range(5)}
    path = tmp_path / "sub.json"
    path.write_text(json.dumps(sub))
    mine = copy.deepcopy(sub)
    a, b = load_predictions(path), load_predictions(mine)
    assert mine == sub  # not consumed
    assert a.task_ids == b.task_ids
    for t in a.task_ids:
        for x, y in zip(a.attempts[t], b.attempts[t]):
            assert [None if g is None else g.tolist() for g in x] == \
                   [None if g is None else g.tolist() for g in y]
    assert isinstance(a, Predictions)
