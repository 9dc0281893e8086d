"""The harness's raw API logs (arcnb.harness_logs) and the version-two attempt metadata
(tool calls, turns, reasoning and cache tokens, cost with the cache priced): counted by
hand on small harness trees laid out as the benchmarking harness writes them."""
from __future__ import annotations

import json
import math

import pytest

import arcnb
from arcnb import harness_logs as H
from arcnb.compare import compare
from arcnb.errors import PredictionsError
from arcnb.report import sections as S

GRID = [[1, 2], [3, 4]]
WRONG = [[0, 0], [0, 0]]


def _task_dir(tmp_path):
    d = tmp_path / "tasks"
    d.mkdir()
    task = {"train": [{"input": GRID, "output": GRID}],
            "test": [{"input": GRID, "output": GRID}, {"input": GRID, "output": WRONG}]}
    (d / "t1.json").write_text(json.dumps(task))
    one = {"train": [{"input": GRID, "output": GRID}], "test": [{"input": GRID, "output": GRID}]}
    (d / "t2.json").write_text(json.dumps(one))
    return d


def _md(pair, **extra):
    md = {"model": "m", "provider": "p", "start_timestamp": "2026-01-01T00:00:00+00:00",
          "end_timestamp": "2026-01-01T00:00:02+00:00", "choices": [], "kwargs": {},
          "pair_index": pair}
    md.update(extra)
    return md


#: Attempt 1 of t1's first output: 1000 prompt tokens (600 read from the cache, 200
#: written to it) at $1 per million, 100 completion tokens of which 30 reasoning, three
#: tool calls in four turns.
AGENTIC = {"usage": {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100,
                     "prompt_tokens_details": {"cache_creation_tokens": 200,
                                               "cache_read_tokens": 600},
                     "completion_tokens_details": {"reasoning_tokens": 30,
                                                   "accepted_prediction_tokens": 100,
                                                   "rejected_prediction_tokens": 0}},
           "cost": {"prompt_cost": 0.001, "completion_cost": 0.002, "total_cost": 0.003},
           "tool_calls": [{"tool_name": "python", "tool_use_id": str(i), "input": {}}
                          for i in range(3)],
           "num_turns": 4}
#: Attempt 2: no cache details, no tool calls (null), one turn.
PLAIN = {"usage": {"prompt_tokens": 500, "completion_tokens": 50, "total_tokens": 550,
                   "completion_tokens_details": {"reasoning_tokens": 0,
                                                 "accepted_prediction_tokens": 50,
                                                 "rejected_prediction_tokens": 0}},
         "cost": {"prompt_cost": 0.0005, "completion_cost": 0.0005, "total_cost": 0.001},
         "tool_calls": None, "num_turns": 1}


def _harness_tree(tmp_path):
    run = tmp_path / "submissions" / "cfg" / "v1" / "public_eval"
    run.mkdir(parents=True)
    t1 = [{"attempt_1": {"answer": WRONG, "metadata": _md(0, **AGENTIC)},
           "attempt_2": {"answer": GRID, "metadata": _md(0, **PLAIN)}},
          {"attempt_1": WRONG}]
    (run / "t1.json").write_text(json.dumps(t1))
    (run / "t2.json").write_text(json.dumps([{"attempt_1": GRID}]))
    return run


def _event(event, task, **ctx):
    return {"schema_version": 1, "event": event, "run_id": "r", "timestamp": "x",
            "operation": "responses.create", "context": {"config": "cfg", "task_id": task,
                                                         **ctx}}


def _logs(tmp_path):
    logs = tmp_path / "logs" / "cfg" / "v1" / "public_eval"
    logs.mkdir(parents=True)
    t1 = [{"timestamp": "x", "level": "INFO", "logger": "a", "message": "start"},
          _event("request_started", "t1", attempt=1, retry=1, orchestrator_attempt=1),
          _event("request_failed", "t1", attempt=1, retry=1, orchestrator_attempt=1),
          _event("request_started", "t1", attempt=1, retry=2, orchestrator_attempt=1),
          _event("request_succeeded", "t1", attempt=1, retry=2, orchestrator_attempt=1),
          _event("request_started", "t1", attempt=2, retry=1, orchestrator_attempt=1),
          _event("request_succeeded", "t1", attempt=2, retry=1, orchestrator_attempt=1)]
    t2 = [_event("request_started", "t2", attempt=1, retry=1, orchestrator_attempt=2),
          {"schema_version": 1, "event": "task_timed_out", "run_id": "r", "timestamp": "x",
           "context": {"task_id": "t2", "config": "cfg"}, "elapsed_seconds": 9.0,
           "timeout_seconds": 5.0}]
    for name, recs in (("t1", t1), ("t2", t2)):
        (logs / f"{name}.jsonl").write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    return logs


def test_log_rates_counted_by_hand(tmp_path):
    run = _harness_tree(tmp_path)
    assert H.logs_folder(run) is None  # no logs yet
    logs = _logs(tmp_path)
    assert H.logs_folder(run) == logs
    r = H.log_rates(logs)
    # four requests: t1's second try of attempt 1 (retry 2) and t2's request of the
    # task's second run (orchestrator_attempt 2) are retries; one of three finished
    # requests failed; one of two tasks timed out
    assert r == {"n_log_tasks": 2, "n_requests": 4, "n_succeeded": 2, "n_failed": 1,
                 "n_retries": 2, "n_timed_out_tasks": 1, "failure_rate": pytest.approx(1 / 3),
                 "retry_rate": 0.5, "timeout_rate": 0.5}
    only = H.log_rates(logs, ["t1"])
    assert only["n_log_tasks"] == 1 and only["timeout_rate"] == 0.0
    empty = tmp_path / "empty"
    empty.mkdir()
    e = H.log_rates(empty)
    assert e["n_log_tasks"] == 0
    assert all(math.isnan(e[k]) for k in ("failure_rate", "retry_rate", "timeout_rate"))


def test_a_damaged_log_is_refused_in_one_line(tmp_path):
    _harness_tree(tmp_path)
    logs = _logs(tmp_path)
    (logs / "t1.jsonl").write_text('{"event": "request_started"}\n{not json\n')
    with pytest.raises(PredictionsError) as err:
        H.log_rates(logs)
    assert "line 2" in str(err.value) and "\n" not in str(err.value)


def test_version_two_metadata_columns_and_summary_by_hand(tmp_path):
    ds = _task_dir(tmp_path)
    res = arcnb.score(str(ds), str(_harness_tree(tmp_path)), n_boot=20)
    row = res.outputs.set_index(["task_id", "test_index"]).loc[("t1", 0)]
    # cost with the cache priced: 0.003 - 600 x $1e-6 x 0.9 + 200 x $1e-6 x 0.25; the
    # second attempt has no cache counts, so it adds nothing (NaN, not 0)
    assert row["cost"] == pytest.approx(0.004)
    assert row["cost_cached"] == pytest.approx(0.003 - 0.00054 + 0.00005)
    assert (row["cache_read_tokens"], row["cache_creation_tokens"]) == (600, 200)
    assert (row["tool_calls"], row["num_turns"], row["reasoning_tokens"]) == (3, 5, 30)
    plain = res.outputs.set_index(["task_id", "test_index"]).loc[("t1", 1)]
    assert all(math.isnan(plain[c]) for c in ("cost_cached", "tool_calls", "num_turns"))
    s = res.summary
    assert s["total_cost"] == pytest.approx(0.004)
    assert s["total_cost_cached"] == pytest.approx(0.00251)
    assert s["cost_cached_per_task"] == pytest.approx(0.00251 / 2)
    assert (s["total_reasoning_tokens"], s["total_cache_read_tokens"],
            s["total_cache_creation_tokens"], s["total_tool_calls"], s["total_turns"]) == \
        (30, 600, 200, 3, 5)


def test_cost_section_shows_the_new_numbers_and_the_log_rates(tmp_path):
    ds = _task_dir(tmp_path)
    run_folder = _harness_tree(tmp_path)
    run = arcnb.open(str(run_folder), dataset=str(ds))
    sec = S.Cost.from_run(run)
    assert "api_log" not in sec.tables  # no logs beside the run
    _logs(tmp_path)
    sec = S.Cost.from_run(arcnb.open(str(run_folder), dataset=str(ds)))
    assert sec.numbers["retry_rate"] == 0.5 and sec.numbers["timeout_rate"] == 0.5
    assert sec.numbers["failure_rate"] == pytest.approx(1 / 3)
    assert sec.numbers["total_tool_calls"] == 3
    html = sec.to_html()
    assert "arcnb-cost-api-log" in html
    assert "data-metric='total_cost_cached'" in html and "total_tool_calls" in html


def test_repeats_runs_carry_cost_and_log_rates(tmp_path):
    ds = _task_dir(tmp_path)
    _harness_tree(tmp_path)
    _logs(tmp_path)
    rep = arcnb.repeats(str(tmp_path / "submissions"), dataset=str(ds), n_boot=20)
    (row,) = rep.summary["runs"]
    assert row["run"] == "cfg/v1/public_eval"
    assert row["cost_per_task"] == pytest.approx(0.004 / 2)
    assert row["cost_cached_per_task"] == pytest.approx(0.00251 / 2)
    assert row["total_tool_calls"] == 3
    assert (row["retry_rate"], row["timeout_rate"]) == (0.5, 0.5)
    assert row["failure_rate"] == pytest.approx(1 / 3)
    assert rep.runs.loc[0, "retry_rate"] == 0.5


def test_compare_runs_table_carries_cost_with_cache_and_log_rates(tmp_path):
    ds = _task_dir(tmp_path)
    run = _harness_tree(tmp_path)
    _logs(tmp_path)
    other = tmp_path / "plain"
    other.mkdir()
    (other / "t1.json").write_text(json.dumps([{"attempt_1": GRID}, {"attempt_1": WRONG}]))
    (other / "t2.json").write_text(json.dumps([{"attempt_1": WRONG}]))
    comp = compare([str(run), str(other)], dataset=str(ds), taxonomy=None,
                   n_boot=20)
    t = comp.tables["runs"].set_index("run")
    first, second = t.index
    assert t.loc[first, "cost_cached_per_task"] == pytest.approx(0.00251 / 2)
    assert t.loc[first, "total_tool_calls"] == 3
    assert (t.loc[first, "retry_rate"], t.loc[first, "timeout_rate"]) == (0.5, 0.5)
    assert all(math.isnan(t.loc[second, k]) for k in ("cost_cached_per_task", "retry_rate",
                                                      "timeout_rate", "failure_rate"))


def test_cost_with_cache_is_nan_when_the_metadata_cannot_hold_it(tmp_path):
    ds = _task_dir(tmp_path)
    run = tmp_path / "submissions" / "cfg" / "v1" / "odd"
    run.mkdir(parents=True)
    # 600 cache reads at $1e-6 would take $0.00054 off a cost of $0.0001: not a cost
    # that prices its cache tokens at the input price, so no number; a prompt of 1e-300
    # tokens would make the price per token overflow
    cheap = dict(AGENTIC, cost={"prompt_cost": 0.001, "completion_cost": 0.0,
                                "total_cost": 0.0001})
    tiny = dict(AGENTIC, usage=dict(AGENTIC["usage"], prompt_tokens=1e-300))
    (run / "t1.json").write_text(json.dumps(
        [{"attempt_1": {"answer": WRONG, "metadata": _md(0, **cheap)},
          "attempt_2": {"answer": WRONG, "metadata": _md(0, **tiny)}}, {"attempt_1": WRONG}]))
    res = arcnb.score(str(ds), str(run), n_boot=20)
    assert math.isnan(res.outputs.loc[0, "cost_cached"])
    assert math.isnan(res.summary["total_cost_cached"])
