"""Candidate pools (arcnb.candidates): hand-computed pools for every number, a naive
reference over random pools, calibration by construction, and the ``order`` rule
against ``arcnb score`` on real benchmarking-harness runs."""
from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from _cli import cli

import arcnb
from arcnb.baselines import program_search_candidates, program_search_submission
from arcnb.candidates import (PRODUCT_OF_EXPERTS, calibration, candidates, load_candidates,
                              write_candidates)
from arcnb.data import load_dataset
from arcnb.errors import ArcnbError
from arcnb.scoring import score
from test_predictions import attempt, complete_run, write_run
from test_predictions import TASK_IDS as HARNESS_TASKS

A, B, C, D = "00576224", "12997ef3", "66e6c45b", "3b4c2228"  # 1, 2, 1, 2 test outputs
DS_TASKS = [A, B, C, D]  # the module's dataset (conftest.py's ds)


def wrong(grid, k=1):
    return ((np.asarray(grid) + k) % 10).tolist()


def hand_submission(ds):
    ta, tb, td = ds[A].test[0].output, ds[B].test[0].output, ds[D].test[0].output
    T = ta.tolist()
    return {
        # W1 W2 W1 T (malformed) T T: W1 2 votes, W2 1, T 3 votes, first at attempt 4
        A: [{"attempt_1": wrong(ta), "attempt_2": wrong(ta, 2), "attempt_3": wrong(ta),
             "attempt_4": T, "attempt_5": [[1, 2], [3]], "attempt_6": T, "attempt_7": T}],
        # test 0: W then T, one vote each (a tie: W came first); test 1: no entry
        B: [{"attempt_1": wrong(tb), "attempt_2": tb.tolist()}],
        # C: no predictions at all; D: test 0 one distinct wrong grid three times
        D: [{"attempt_1": wrong(td), "attempt_2": wrong(td), "attempt_3": wrong(td)}],
    }


def test_hand_computed_pool(ds):
    a = candidates(ds, hand_submission(ds), tie="first")
    s = a.summary
    assert (s["n_tasks"], s["n_outputs"], s["n_invalid_attempts"]) == (4, 6, 1)
    # per task coverage: A 1, B 1/2, C 0, D 0
    assert s["coverage"] == pytest.approx(0.375)
    assert s["coverage_per_output"] == pytest.approx(2 / 6)
    v, o = s["rankings"]["votes"], s["rankings"]["order"]
    assert v["pass@1"] == pytest.approx(0.25) and v["pass@2"] == pytest.approx(0.375)
    assert v["pass@1_per_output"] == pytest.approx(1 / 6)
    assert v["selection_gap"] == pytest.approx(0.0)
    # order: A's right answer is attempt 4 (malformed and duplicate attempts keep their
    # places), B's is attempt 2
    assert o["pass@1"] == 0.0 and o["pass@2"] == pytest.approx(0.125)
    assert o["selection_gap"] == pytest.approx(0.25)
    assert s["rank_of_correct"] == {"1": 1, "2": 1, "absent": 4}
    assert s["distinct_mean"] == pytest.approx(6 / 6)  # 3 + 2 + 0 + 0 + 1 + 0
    assert s["single_candidate_share"] == pytest.approx(1 / 6)
    # top vote shares: A 3/6 right, B 1/2 wrong (tie broken by first appearance),
    # D 3/3 wrong -> bins 0.5 (acc 1/2, conf 1/2) and 1.0 (acc 0, conf 1): ECE = 1/3
    assert s["ece"] == pytest.approx(1 / 3)
    rel = a.reliability.set_index("bin_low")
    assert rel.loc[0.5, "n"] == 2 and rel.loc[0.5, "accuracy"] == 0.5
    assert rel.loc[0.9, "n"] == 1 and rel.loc[0.9, "accuracy"] == 0.0
    for key in ("coverage_ci95",):
        lo, hi = s[key]
        assert 0 <= lo <= s["coverage"] <= hi <= 1
    pa = a.pool[a.pool["task_id"] == A].sort_values("first")
    assert pa["votes"].tolist() == [2, 1, 3] and pa["first"].tolist() == [0, 1, 3]
    assert pa["rank_votes"].tolist() == [2, 3, 1] and pa["rank_order"].tolist() == [1, 2, 4]
    assert not s["warnings"] or "single distinct" not in s["warnings"][0]
    # the order rule is the scorer's pass@K
    res = score(ds, hand_submission(ds))
    assert o["pass@1"] == res.summary["pass@1"] and o["pass@2"] == res.summary["pass@2"]
    # the paired comparison of the two rules uses the compare statistics
    row = a.comparisons.iloc[0]
    assert (row["rule_a"], row["rule_b"]) == ("order", "votes")
    assert row["difference"] == pytest.approx(0.25) and row["n_b_only"] == 1
    assert row["mcnemar_p"] == 1.0


def test_scores_lower_is_better_product_of_experts_and_merging(ds, tmp_path):
    t = ds[A].test[0].output
    g1, g2 = wrong(t), wrong(t, 2)
    records = [
        {"task_id": A, "test_index": 0, "grid": g1, "votes": 2, "logprob": -1.0, "loss": 3.0,
         "view_logprobs": [-3.0, -3.0]},
        {"task_id": A, "test_index": 0, "grid": g2, "votes": 2, "logprob": -0.5, "loss": 1.0,
         "view_logprobs": [-2.0, -2.0]},
        {"task_id": A, "test_index": 0, "grid": t, "votes": 1, "logprob": -2.0, "loss": 2.0,
         "view_logprobs": [-1.0, -1.0]},
        # the same grid again: its vote adds up, the first listing's scores are kept
        {"task_id": A, "test_index": 0, "grid": g1, "votes": 1, "logprob": 5.0, "loss": 0.0,
         "view_logprobs": [0.0, 0.0]},
    ]
    rules = ["votes", "logprob", "loss", PRODUCT_OF_EXPERTS]
    for suffix in ("json", "parquet"):
        path = write_candidates(tmp_path / f"c.{suffix}", records, lower_is_better=["loss"])
        with pytest.raises(arcnb.ArcnbError):
            write_candidates(path, records)  # never overwritten silently
        expected = {"votes": 3, "logprob": 3, "loss": 2, PRODUCT_OF_EXPERTS: 1}
        for rule in rules:
            a = candidates(ds, path, rank_by=[rule], taxonomy=None)
            assert a.summary["rank_of_correct"] == {str(expected[rule]): 1, "absent": 5}, rule
        pool = a.pool.sort_values("first")
        assert pool["votes"].tolist() == [3, 2, 1]
        assert pool["logprob"].tolist() == [-1.0, -0.5, -2.0]
        assert pool[PRODUCT_OF_EXPERTS].tolist() == [-6.0, -4.0, -2.0]
        assert a.summary["lower_is_better"] == ["loss"]


def test_single_candidate_warning_and_flat_pass_at_k(ds):
    sub = {t.id: [{"attempt_1": p.output.tolist(), "attempt_2": p.output.tolist(),
                   "attempt_3": p.output.tolist()} for p in t.test] for t in ds}
    a = candidates(ds, sub, taxonomy=None)
    assert a.summary["single_candidate_share"] == 1.0
    assert any("single distinct candidate" in w for w in a.warnings)
    assert a.summary["coverage"] == 1.0 and a.summary["rankings"]["votes"]["pass@1"] == 1.0


# ------------------------------------------------------------ naive reference
def _naive(ds, pool, rule, lower):
    """Per output: distinct grids by pairwise comparison in Python, ranks by sorting."""
    ranks = {}
    for t in ds:
        for i, p in enumerate(t.test):
            distinct = []  # [grid, votes, first, scores]
            for pos, c in enumerate(pool.get(t.id, [[]] * len(t.test))[i]
                                    if i < len(pool.get(t.id, [])) else []):
                g = c["grid"]
                if g is None:
                    continue
                g = np.asarray(g)
                for d in distinct:
                    if d[0].shape == g.shape and np.array_equal(d[0], g):
                        d[1] += c["votes"]
                        break
                else:
                    sc = dict(c["scores"])
                    sc[PRODUCT_OF_EXPERTS] = sum(c["view_logprobs"])
                    distinct.append([g, c["votes"], pos, sc])
            if rule == "order":
                keyed = [(d[2] + 1, d) for d in distinct]
            else:
                def key(d):
                    if rule == "votes":
                        return (-d[1], d[2])
                    v = d[3].get(rule, math.nan)
                    return (math.isnan(v), v if rule in lower else -v, d[2])
                keyed = [(r + 1, d) for r, d in enumerate(sorted(distinct, key=key))]
            right = [r for r, d in keyed if d[0].shape == p.output.shape
                     and np.array_equal(d[0], p.output)]
            ranks[(t.id, i)] = (right[0] if right else None, len(distinct))
    return ranks


def _random_pool(ds, rng):
    tasks = {}
    for t in ds:
        if rng.random() < 0.15:
            continue  # a task without predictions
        outs = []
        for p in t.test[:len(t.test) - int(rng.random() < 0.2)]:  # sometimes one missing
            truth = p.output
            palette = [truth.tolist(), wrong(truth), wrong(truth, 3), truth[:1].tolist(), None]
            cands = []
            for _ in range(int(rng.integers(0, 9))):
                j = int(rng.integers(0, len(palette)))
                sc = {}
                if rng.random() < 0.8:
                    sc["s"] = float(rng.integers(0, 4))  # ties on purpose
                sc["l"] = float(rng.integers(0, 4))
                cands.append({"grid": palette[j], "votes": int(rng.integers(1, 4)),
                              "scores": sc,
                              "view_logprobs": [float(rng.integers(-3, 1)) for _ in range(2)]})
            outs.append(cands)
        tasks[t.id] = outs
    return tasks


def _naive_random_votes(ds, pool) -> dict:
    """Per output: the probability that the right grid is among the top k = 1 .. 5 under
    votes with ties broken uniformly at random, by enumerating every order of the
    distinct grids (each equally likely) and sorting it stably by votes."""
    out = {}
    for t in ds:
        for i, p in enumerate(t.test):
            listed = pool.get(t.id, [])
            distinct = []  # [grid, votes]
            for c in (listed[i] if i < len(listed) else []):
                if c["grid"] is None:
                    continue
                g = np.asarray(c["grid"])
                for d in distinct:
                    if d[0].shape == g.shape and np.array_equal(d[0], g):
                        d[1] += c["votes"]
                        break
                else:
                    distinct.append([g, c["votes"]])
            hits = np.zeros(5)
            perms = list(itertools.permutations(range(len(distinct))))
            for perm in perms:
                ranked = sorted(perm, key=lambda j: -distinct[j][1])
                for k in range(1, 6):
                    hits[k - 1] += any(distinct[j][0].shape == p.output.shape
                                       and np.array_equal(distinct[j][0], p.output)
                                       for j in ranked[:k])
            out[(t.id, i)] = hits / len(perms)
    return out


def test_random_pools_random_ties_against_enumerated_orders():
    ds = load_dataset("arc-agi-1:evaluation")[:12]
    rng = np.random.default_rng(11)
    n_per_task = {t.id: len(t.test) for t in ds}
    for trial in range(4):
        tasks = _random_pool(ds, rng)
        a = candidates(ds, {"arcnb_candidates": 1, "tasks": tasks}, taxonomy=None, n_boot=20)
        ref = _naive_random_votes(ds, tasks)
        for k in range(1, 6):
            want = np.mean([np.mean([ref[(t.id, i)][k - 1] for i in range(n_per_task[t.id])])
                            for t in ds])
            pak = a.pass_at_k[(a.pass_at_k["rule"] == "votes") & (a.pass_at_k["K"] == k)]
            if len(pak):
                assert pak["pass@K"].iloc[0] == pytest.approx(want), (trial, k)
            if k <= 2:
                assert a.summary["rankings"]["votes"][f"pass@{k}"] == pytest.approx(want)
        # the expected counts of rank_of_correct are the differences of those probabilities
        roc = a.summary["rank_of_correct"]
        for k in range(1, 4):
            want = sum(r[k - 1] - (r[k - 2] if k > 1 else 0) for r in ref.values())
            assert roc.get(str(k), 0) == pytest.approx(want)


def test_random_pools_against_naive_reference():
    ds = load_dataset("arc-agi-1:evaluation")[:12]
    rng = np.random.default_rng(7)
    for trial in range(6):
        tasks = _random_pool(ds, rng)
        obj = {"arcnb_candidates": 1, "lower_is_better": ["l"], "tasks": tasks}
        for rule in ("order", "votes", "s", "l", PRODUCT_OF_EXPERTS):
            a = candidates(ds, obj, rank_by=[rule], taxonomy=None, n_boot=50, tie="first")
            ref = _naive(ds, tasks, rule, {"l"})
            out = a.outputs.set_index(["task_id", "test_index"])
            n_per_task = {t.id: len(t.test) for t in ds}
            for key, (rank, n_distinct) in ref.items():
                got = out.loc[key, f"rank_{rule}"]
                assert (None if got is None or got is np.nan or str(got) == "<NA>"
                        else int(got)) == rank, (trial, rule, key)
                assert out.loc[key, "n_distinct"] == n_distinct
            cov = np.mean([np.mean([ref[(t.id, i)][0] is not None for i in range(len(t.test))])
                           for t in ds])
            assert a.summary["coverage"] == pytest.approx(cov)
            absent = sum(r is None for r, _ in ref.values())
            assert a.summary["rank_of_correct"]["absent"] == absent
            for k in range(1, 6):
                want = np.mean([sum(ref[(t.id, i)][0] is not None and ref[(t.id, i)][0] <= k
                                    for i in range(n_per_task[t.id])) / n_per_task[t.id]
                                for t in ds])
                pak = a.pass_at_k[(a.pass_at_k["rule"] == rule) & (a.pass_at_k["K"] == k)]
                if len(pak):
                    assert pak["pass@K"].iloc[0] == pytest.approx(want), (rule, k)
                if k <= 2:
                    assert a.summary["rankings"][rule][f"pass@{k}"] == pytest.approx(want)


def _intervals(summary, prefix="") -> dict:
    """Every interval of a summary (a key ending in ``_ci95``, or ``ci95``), by path."""
    out = {}
    items = (summary.items() if isinstance(summary, dict)
             else enumerate(summary) if isinstance(summary, list) else [])
    for k, v in items:
        path = f"{prefix}.{k}"
        if isinstance(k, str) and (k.endswith("_ci95") or k == "ci95"):
            out[path] = tuple(v)
        else:
            out.update(_intervals(v, path))
    return out


def _budget_pool(ds, rng):
    """Every test output with 6 draws over 4 grids (the truth among them), a score and
    the demonstration checks: every kind of interval the analysis gives."""
    tasks = {}
    for t in ds:
        outs = []
        for p in t.test:
            grids = [p.output.tolist()] + [wrong(p.output, k) for k in (1, 2, 3)]
            labels = rng.integers(0, 4, size=6)
            outs.append([{"grid": grids[g], "sample": np.flatnonzero(labels == g).tolist(),
                          "scores": {"q_halt": float(rng.random())},
                          "passes_train": bool(rng.random() < 0.5)}
                         for g in range(4) if (labels == g).any()])
        tasks[t.id] = outs
    return {"arcnb_candidates": 1, "tasks": tasks}


def test_every_interval_follows_n_boot_and_seed():
    from arcnb.stats import bootstrap_ci

    ds = load_dataset("arc-agi-1:evaluation")[:40]
    pool = _budget_pool(ds, np.random.default_rng(3))
    runs = {(nb, sd): candidates(ds, pool, n_boot=nb, seed=sd)
            for nb, sd in ((1000, 0), (1000, 1), (1000, 2), (200, 0), (3000, 0))}
    base = _intervals(runs[(1000, 0)].summary)
    assert {".rankings.votes.pass@1_ci95", ".rankings.votes.selection_gap_ci95",
            ".voting_gain.ci95", ".ece_ci95", ".confidence.ece_ci95",
            ".anytime.points.0.pass@1_ci95"} <= set(base)
    for path, value in base.items():
        if value[0] == value[1]:
            continue  # a constant: the same interval whatever the resampling
        by_seed = {_intervals(runs[(1000, sd)].summary)[path] for sd in (0, 1, 2)}
        by_n = {_intervals(runs[(nb, 0)].summary)[path] for nb in (200, 1000, 3000)}
        assert len(by_seed) > 1 and len(by_n) > 1, path
    # and they are the bootstrap of the per-task numbers with that n_boot and seed
    for (nb, sd), a in runs.items():
        o = a.outputs
        per_task = o.assign(p1=(o["rank_votes"].astype(float) == 1) / o["tied_votes"]
                            .astype(float)).groupby("task_id", sort=False)["p1"]
        pt = per_task.apply(lambda v: v.fillna(0).mean()).to_numpy()
        assert a.summary["rankings"]["votes"]["pass@1_ci95"] == pytest.approx(
            list(bootstrap_ci(pt, n_boot=nb, seed=sd)))
    a = runs[(1000, 0)].comparisons
    b = runs[(1000, 1)].comparisons
    assert not np.allclose(a[["ci_low", "ci_high"]], b[["ci_low", "ci_high"]])


def test_cli_n_boot_and_seed_reach_the_intervals(ds, tmp_path):
    path = tmp_path / "pool.json"
    path.write_text(json.dumps(_budget_pool(ds, np.random.default_rng(5))))
    tasks = tmp_path / "tasks.txt"
    tasks.write_text("\n".join(ds.task_ids))
    got = {}
    for extra in ([], ["--seed", "7"], ["--n-boot", "30"]):
        r = run_cli("candidates", "--dataset", "arc-agi-1:evaluation", "--tasks", tasks,
                    "--predictions", path, "--json", *extra)
        assert r.returncode == 0, r.stderr
        s = json.loads(r.stdout)
        got[tuple(extra)] = s
    for extra, (nb, sd) in (((), (1000, 0)), (("--seed", "7"), (1000, 7)),
                            (("--n-boot", "30"), (30, 0))):
        want = candidates(ds, _budget_pool(ds, np.random.default_rng(5)), n_boot=nb,
                          seed=sd).summary
        assert got[extra]["rankings"]["votes"]["pass@1_ci95"] == pytest.approx(
            want["rankings"]["votes"]["pass@1_ci95"])
        assert got[extra]["voting_gain"]["ci95"] == pytest.approx(want["voting_gain"]["ci95"])
    bad = run_cli("candidates", "--dataset", "arc-agi-1:evaluation", "--tasks", tasks,
                  "--predictions", path, "--n-boot", "0")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


# ------------------------------------------------------------------ calibration
def _voting_pool(ds, rng, miscalibrated: bool) -> dict:
    """Ten votes per output; the top candidate holds k of them and is the right answer
    with probability k / 10 (calibrated) or (k / 10) ** 4 (over-confident)."""
    tasks = {}
    for t in ds:
        outs = []
        for p in t.test:
            k = int(rng.integers(4, 11))
            share = k / 10
            right = rng.random() < (share ** 4 if miscalibrated else share)
            top = p.output.tolist() if right else wrong(p.output)
            cands = [{"grid": top, "votes": k}]
            cands += [{"grid": wrong(p.output, 2 + j % 7), "votes": 1} for j in range(10 - k)]
            outs.append(cands)
        tasks[t.id] = outs
    return {"arcnb_candidates": 1, "tasks": tasks}


def test_calibrated_pool_interval_covers_zero_and_miscalibrated_does_not():
    ds = load_dataset("arc-agi-1:training")
    cal = candidates(ds, _voting_pool(ds, np.random.default_rng(1), False), taxonomy=None)
    lo, hi = cal.summary["ece_ci95"]
    assert lo == 0.0 <= cal.summary["ece"] <= hi
    mis = candidates(ds, _voting_pool(ds, np.random.default_rng(1), True), taxonomy=None)
    lo, hi = mis.summary["ece_ci95"]
    assert lo > 0.1 and lo <= mis.summary["ece"] <= hi


def test_calibration_hand_values():
    table, cal = calibration([0.05, 0.15, 0.15, 0.95], [False, True, False, True], [0, 0, 1, 1])
    # bins: [0,0.1): conf .05 acc 0; [0.1,0.2): conf .15 acc .5; [0.9,1]: conf .95 acc 1
    assert cal["ece"] == pytest.approx((0.05 + 2 * 0.35 + 0.05) / 4)
    assert table["n"].sum() == 4 and table.loc[1, "accuracy"] == 0.5
    assert table.loc[5, "n"] == 0 and np.isnan(table.loc[5, "accuracy"])


# ------------------------------------------------------- real harness runs
def test_order_rule_equals_score_on_harness_runs(tmp_path):
    ds = load_dataset("arc-agi-1:evaluation", tasks=HARNESS_TASKS)
    run = complete_run(ds)
    # more than two attempts: append duplicates, malformed answers and right answers
    for tid, entries in run.items():
        truth = [p.output.tolist() for p in ds[tid].test]
        for j, entry in enumerate(entries):
            i = min(j, len(truth) - 1)
            extra = [wrong(truth[i]), None, truth[i], wrong(truth[i], 2), truth[i]]
            for n, g in enumerate(extra[: (j + len(tid)) % 5 + 1]):
                entry[f"attempt_{len(entry) + 1}"] = attempt(g, tid, i, cost=0.25,
                                                             pair_key=False)
    folder = write_run(tmp_path / "run", run)
    ks = list(range(1, 8))
    res = score(ds, folder, ks=ks)
    a = candidates(ds, folder, taxonomy=None)
    assert a.summary["rankings"]["order"]["pass@1"] == pytest.approx(res.summary["pass@1"])
    assert a.summary["rankings"]["order"]["pass@2"] == pytest.approx(res.summary["pass@2"])
    merged = a.outputs.merge(res.outputs, on=["task_id", "test_index"])
    assert len(merged) == ds.n_outputs
    for k in ks:
        ranks = merged["rank_order"].astype("float").to_numpy()
        assert ((ranks <= k) == merged[f"solved@{k}"].to_numpy(bool)).all(), k
        pak = a.pass_at_k[(a.pass_at_k["rule"] == "order") & (a.pass_at_k["K"] == k)]
        if len(pak):
            assert pak["pass@K"].iloc[0] == pytest.approx(res.summary[f"pass@{k}"])
    assert a.summary["n_invalid_attempts"] == res.summary["n_invalid_attempts"]


def test_program_search_candidates():
    ds = load_dataset("arc-agi-1:training")[:4]
    pool = program_search_candidates(ds)
    a = candidates(ds, pool, rank_by=["cost"], taxonomy=None)
    res = score(ds, program_search_submission(ds))
    # the cheapest two distinct outputs are the search's two attempts
    merged = a.outputs.merge(res.outputs, on=["task_id", "test_index"])
    assert ((merged["rank_cost"].astype("float").to_numpy() <= 2)
            == merged["solved@2"].to_numpy(bool)).all()
    assert a.summary["coverage"] >= a.summary["rankings"]["cost"]["pass@2"]
    n_programs = sum(len(o) for outs in pool["tasks"].values() for o in outs)
    assert a.summary["n_samples"] == n_programs


# --------------------------------------------------------------------- CLI
def run_cli(*args):
    return cli(*args)


def test_cli_json_and_out(ds, tmp_path):
    sub = tmp_path / "sub.json"
    sub.write_text(json.dumps(hand_submission(ds)))
    tasks = tmp_path / "tasks.txt"
    tasks.write_text("\n".join(ds.task_ids))
    r = run_cli("candidates", "--dataset", "arc-agi-1:evaluation", "--tasks", tasks,
                "--predictions", sub, "--json", "--out", tmp_path / "out", "--tie", "first")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    for key in ("n_tasks", "n_outputs", "coverage", "coverage_per_output", "rankings",
                "rank_of_correct", "distinct_mean", "single_candidate_share", "ece"):
        assert key in s
    assert s["coverage"] == 0.375 and s["rank_of_correct"] == {"1": 1, "2": 1, "absent": 4}
    assert set(s["rankings"]["votes"]) >= {"pass@1", "pass@2", "selection_gap"}
    assert (tmp_path / "out" / "summary.json").is_file()
    again = run_cli("candidates", "--dataset", "arc-agi-1:evaluation", "--tasks", tasks,
                    "--predictions", sub, "--out", tmp_path / "out")
    assert again.returncode == 2 and len(again.stderr.strip().splitlines()) == 1
    ok = run_cli("candidates", "--dataset", "arc-agi-1:evaluation", "--tasks", tasks,
                 "--predictions", sub, "--out", tmp_path / "out", "--overwrite",
                 "--rank-by", "order")
    assert ok.returncode == 0 and "rank of the right candidate (order)" in ok.stdout


@pytest.mark.parametrize("content,extra", [
    ('{"arcnb_candidates": 1, "tasks": {"x": 3}}', []),
    ('{"arcnb_candidates": 2, "tasks": {}}', []),
    ('{"arcnb_candidates": 1, "tasks": {"00576224": [[{"grid": [[1]], "votes": -1}]]}}', []),
    ("{}", ["--rank-by", "logprob"]),
    ("not json", []),
])
def test_cli_bad_input_is_one_line(tmp_path, content, extra):
    path = tmp_path / "c.json"
    path.write_text(content)
    r = run_cli("candidates", "--dataset", "arc-agi-1:evaluation", "--predictions", path,
                *extra)
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_bad_parquet_is_one_line(tmp_path):
    path = tmp_path / "c.parquet"
    path.write_bytes(b"not parquet")
    r = run_cli("candidates", "--dataset", "arc-agi-1:evaluation", "--predictions", path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1


def test_module_is_callable_and_importable(ds):
    import arcnb.candidates as mod

    assert mod is arcnb.candidates and mod.load_candidates is load_candidates
    a = arcnb.candidates(ds, hand_submission(ds), taxonomy=None)
    assert a.summary["coverage"] == pytest.approx(0.375)
    cs = load_candidates(hand_submission(ds))
    assert cs.n_samples == 7 + 2 + 3 and int((~cs.valid).sum()) == 1


def test_hand_computed_pool_with_random_ties(ds):
    # the default tie rule: B's test 0 ties W and T at one vote each, so T is first with
    # probability 1/2; A's T leads with 3 votes
    a = candidates(ds, hand_submission(ds))
    s = a.summary
    v = s["rankings"]["votes"]
    assert s["tie"] == "random" and v["tie"] == "random" and "tie" not in s["rankings"]["order"]
    assert v["pass@1"] == pytest.approx((1 + 0.5 / 2) / 4)
    assert v["pass@2"] == pytest.approx((1 + 1 / 2) / 4)
    assert v["pass@1_per_output"] == pytest.approx(1.5 / 6)
    assert s["rankings"]["order"]["pass@2"] == pytest.approx(0.125)  # order has no ties
    assert s["rank_of_correct"] == {"1": 1.5, "2": 0.5, "absent": 4}
    # top vote shares: A 1/2 right, B 1/2 right with probability 1/2, D 1 wrong:
    # bin 0.5 (accuracy 3/4, confidence 1/2), bin 1 (accuracy 0): ECE 2/3 * 1/4 + 1/3
    assert s["ece"] == pytest.approx(0.5)
    o = a.outputs.set_index(["task_id", "test_index"])
    assert o.loc[(B, 0), "rank_votes"] == 1 and o.loc[(B, 0), "tied_votes"] == 2
    assert o.loc[(A, 0), "tied_votes"] == 1

    from arcnb import plot as P
    ax = P.rank_histogram(a)
    assert [b.get_height() for b in ax.patches] == [1.5, 0.5, 4]


# ------------------------------------------------------------------- figures
def test_figures_draw_the_numbers(ds):

    from arcnb import plot as P

    a = candidates(ds, hand_submission(ds), tie="first")
    ax = P.rank_histogram(a)
    assert [b.get_height() for b in ax.patches] == [1, 1, 4]  # ranks 1, 2, absent
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "absent"]
    ax = P.reliability_diagram(a)
    xs = sorted(map(tuple, ax.collections[-1].get_offsets().data.tolist()))
    assert xs == [(0.5, 0.5), (1.0, 0.0)]
    ax = P.pass_at_k_by_rule(a)
    lines = {line.get_label(): line.get_ydata().tolist() for line in ax.get_lines()
             if not line.get_label().startswith("_")}
    assert lines["votes"][:2] == [0.25, 0.375] and lines["order"][:2] == [0.0, 0.125]
    ax = P.coverage_vs_pass(a)
    widths = [b.get_width() for b in ax.patches]
    assert len(widths) == 2 * len(a.by_category)
    assert widths[:len(a.by_category)] == pytest.approx(a.by_category["coverage"].tolist())


# ------------------------------------------------- augmented evaluate runs
def test_evaluate_dihedral_keeps_every_voted_candidate(tmp_path):
    from arcnb.evaluate import evaluate
    from arcnb.models import BUNDLED_CHECKPOINT
    from arcnb.runs import CANDIDATES

    if not BUNDLED_CHECKPOINT.exists():
        pytest.skip("bundled baseline checkpoint not present")
    ds = load_dataset("arc-agi-1:evaluation")[:6]
    res = evaluate("baseline", ds, tmp_path / "run", augment="dihedral", progress=False)
    cs = load_candidates(tmp_path / "run" / CANDIDATES)
    votes = {}
    for s in range(cs.n_samples):
        votes[cs.keys[cs.block[s]]] = votes.get(cs.keys[cs.block[s]], 0) + int(cs.votes[s])
    table = res.votes.set_index(["task_id", "test_index"])
    assert len(table) == ds.n_outputs
    for key, row in table.iterrows():
        assert row["n_views"] == 8
        # the votes of every kept candidate add up to the views that gave a grid
        assert votes.get(key, 0) == row["n_valid_views"], key
    # one draw per view that gave a grid, each view once (a logits model: sample = view)
    views: dict = {}
    for e, v, s in zip(cs.draws["entry"], cs.draws["view"], cs.draws["sample"]):
        assert v == s
        views.setdefault(cs.keys[cs.block[e]], []).append(int(v))
    for key, row in table.iterrows():
        got = views.get(key, [])
        assert len(got) == len(set(got)) == row["n_valid_views"] and set(got) <= set(range(8))
    pool = candidates(ds, tmp_path / "run" / CANDIDATES, taxonomy=None)
    # every submitted attempt is among the candidates: coverage bounds pass@2
    assert pool.summary["coverage"] >= res.summary["pass@2"]
    # the file lists them in vote order: the first two are the submitted attempts
    assert pool.summary["rankings"]["order"]["pass@2"] == pytest.approx(res.summary["pass@2"])
    without = evaluate("baseline", ds, tmp_path / "plain", progress=False)
    assert not (tmp_path / "plain" / CANDIDATES).exists() and without is not None


# ------------------------------------------------------------- report section
def test_report_section_only_for_pools(ds, tmp_path):
    from arcnb.report.candidates import candidate_pool, candidates_html

    tasks = tmp_path / "tasks.txt"
    tasks.write_text("\n".join(ds.task_ids))
    many = tmp_path / "many.json"
    t = ds[A].test[0].output
    sub = hand_submission(ds)
    sub[A][0]["attempt_8"] = wrong(t, 5)  # A: four distinct candidates
    many.write_text(json.dumps(sub))
    run = arcnb.open(str(many), dataset="arc-agi-1:evaluation", tasks=str(tasks), n_boot=100)
    pool = candidate_pool(run, n_boot=100)
    assert pool is not None and pool.summary["coverage"] == pytest.approx(0.375)
    html = candidates_html(pool)
    assert "Candidate pool" in html and "selection_gap" in html and "0.3750" in html
    two = tmp_path / "two.json"
    two.write_text(json.dumps({t.id: [{"attempt_1": p.output.tolist(),
                                       "attempt_2": wrong(p.output)} for p in t.test]
                               for t in ds}))
    run2 = arcnb.open(str(two), dataset="arc-agi-1:evaluation", tasks=str(tasks), n_boot=100)
    assert candidate_pool(run2) is None


def test_candidate_strip_marks_the_right_one(ds):

    from arcnb import plot as P

    a = candidates(ds, hand_submission(ds), taxonomy=None)
    ax = P.candidate_strip(a, A, 0)  # votes: T (3), W1 (2), W2 (1)
    subs = [s for s in ax.figure.axes if s is not ax]
    assert [s.get_title() for s in subs] == ["1: 3 votes, right", "2: 2 votes", "3: 1 vote"]
    assert "3 candidates by votes" in ax.get_title()
    assert subs[0].get_images()[0].get_array().shape[:2] == ds[A].test[0].output.shape
    ax = P.candidate_strip(a, A, 0, rule="order", max_items=2)
    subs = [s for s in ax.figure.axes if s is not ax]
    assert [s.get_title() for s in subs] == ["1: 2 votes", "2: 1 vote"]


def test_every_candidates_figure_passes_the_figure_check(ds):
    # the figures of the guide's inputs: a pool with many candidates per output (the
    # strip draws eight, four to a row), the budget axis and the checks
    import matplotlib

    from arcnb import plot as P
    from arcnb.plot import check_figure

    t = ds[A].test[0].output
    pool = {"arcnb_candidates": 1, "tasks": {A: [[
        {"grid": t.tolist() if k == 3 else wrong(t, k + (k < 3)), "votes": 12 - k,
         "sample": list(range(10 * k, 10 * k + 12 - k)), "step": 1 + k % 3,
         "passes_train": k % 2 == 0, "train_score": 1 - k / 10} for k in range(10)]]}}
    a = candidates(ds, pool, taxonomy="structural", n_boot=50)
    for draw in (P.rank_histogram, P.coverage_vs_pass, P.reliability_diagram,
                 P.pass_at_k_by_rule, P.anytime_curve, P.verifier_confusion,
                 P.first_right_step_histogram):
        ax = draw(a)
        assert check_figure(ax.figure) == [], draw.__name__
        matplotlib.pyplot.close(ax.figure)
    for n in (1, 3, 4, 5, 8):
        ax = P.candidate_strip(a, A, 0, max_items=n)
        assert check_figure(ax.figure) == [], n
        subs = [s for s in ax.figure.axes if s is not ax]
        assert len(subs) == n and len({round(s.get_position().y0, 3) for s in subs}) == \
            -(-n // 4)  # four to a row
        matplotlib.pyplot.close(ax.figure)
    # pass@K by rule reaches the pool's largest K (10 distinct candidates), not one point
    assert a.pass_at_k.groupby("rule")["K"].max().eq(10).all()


# ------------------------------------------------------------------ hostile pools
def _table(rows, **extra):
    """A candidates Parquet table from ``(task_id, test_index, grid, votes)`` rows."""
    import pyarrow as pa

    grids = [np.asarray(g, np.int8) for _, _, g, _ in rows]
    cols = {"task_id": pa.array([r[0] for r in rows], pa.string()),
            "test_index": pa.array([r[1] for r in rows], pa.int64()),
            "height": pa.array([g.shape[0] for g in grids], pa.int16()),
            "width": pa.array([g.shape[1] for g in grids], pa.int16()),
            "cells": pa.array([g.tobytes() for g in grids], pa.binary()),
            "votes": pa.array([r[3] for r in rows], pa.int64())}
    cols.update(extra)
    return pa.table(cols)


def _write_parquet(path, table, meta=None):
    import pyarrow.parquet as pq

    if meta is not None:
        table = table.replace_schema_metadata(
            {"arcnb_candidates": meta if isinstance(meta, str) else json.dumps(meta)})
    pq.write_table(table, path)
    return path


def _cli_refuses(capsys, predictions, *needles, dataset="arc-agi-1:evaluation", out=None):
    from arcnb.cli import main

    args = ["candidates", "--dataset", str(dataset), "--predictions", str(predictions)]
    rc = main(args + (["--out", str(out)] if out else []))
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("arcnb: error:"), err
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("index", [2 ** 62 - 1, 2 ** 63 - 1, 100, -1])
def test_a_test_index_beyond_any_task_is_refused_never_wrapped(ds, tmp_path, capsys, index):
    """test_index 2^62 - 1 made the key task_code * (max_index + 1) + index wrap int64:
    B's candidate (A's right answer) was credited to A (coverage 0.2 instead of 0.0);
    2^63 - 1 was an OverflowError. The index is checked on entry (0 to 99)."""
    ta = ds[A].test[0].output
    rows = [(A, 0, wrong(ta), 1), (B, index, ta.tolist(), 1)]
    path = _write_parquet(tmp_path / "c.parquet", _table(rows))
    _cli_refuses(capsys, path, "the test_index column holds", "it must lie in 0 .. 99")
    # the same pool with B's index in range: A's wrong grid does not cover A
    ok = _write_parquet(tmp_path / "ok.parquet", _table([(A, 0, wrong(ta), 1),
                                                         (B, 1, ta.tolist(), 1)]))
    assert candidates(ds, ok, taxonomy=None).summary["coverage"] == 0.0


def test_votes_cannot_wrap_and_huge_numbers_are_one_line(ds, tmp_path, capsys):
    """Votes 2^62 listed twice summed to -2^63 (the right grid ranked last, n_votes
    negative): votes are at most 10^9 each, so no sum wraps; at the bound the sums are
    exact."""
    from arcnb.candidates import MAX_VOTES

    ta = ds[A].test[0].output
    big = _write_parquet(tmp_path / "big.parquet",
                         _table([(A, 0, ta.tolist(), 2 ** 62), (A, 0, ta.tolist(), 2 ** 62),
                                 (A, 0, wrong(ta), 1)]))
    _cli_refuses(capsys, big, "the votes column holds 4611686018427387904",
                 "0 .. 1000000000")
    edge = _write_parquet(tmp_path / "edge.parquet",
                          _table([(A, 0, wrong(ta), MAX_VOTES), (A, 0, ta.tolist(), MAX_VOTES),
                                  (A, 0, ta.tolist(), MAX_VOTES)]))
    a = candidates(ds, edge, taxonomy=None)
    row = a.outputs.set_index("task_id").loc[A]
    assert int(row["n_votes"]) == 3 * MAX_VOTES and int(row["rank_votes"]) == 1
    pool = a.pool[a.pool["task_id"] == A].sort_values("first")
    assert pool["votes"].tolist() == [MAX_VOTES, 2 * MAX_VOTES]
    assert a.summary["rankings"]["votes"]["pass@1"] == pytest.approx(0.25)
    # JSON: votes 2^64 and a score of 10**400 are one line each
    for body, said in (
            ({"grid": ta.tolist(), "votes": 2 ** 64}, "votes must be an integer from 0 to"),
            ({"grid": ta.tolist(), "scores": {"logprob": 10 ** 400}},
             "a number of more than 32 digits"),
            ({"grid": ta.tolist(), "scores": {"logprob": 10 ** 30 * 1.0e300}},
             "beyond the range of a float")):
        path = tmp_path / "c.json"
        path.write_text(json.dumps({"arcnb_candidates": 1, "tasks": {A: [[body]]}})
                        .replace("Infinity", "1e330"))
        _cli_refuses(capsys, path, said)


@pytest.mark.parametrize("kind", ["predictions", "candidates"])
def test_an_integer_of_5000_digits_is_one_line(ds, tmp_path, capsys, kind):
    path = tmp_path / "c.json"
    huge = "9" * 5000
    path.write_text('{"arcnb_candidates": 1, "tasks": {"%s": [[{"grid": [[1]], "votes": %s}]]}}'
                    % (A, huge) if kind == "candidates"
                    else '{"%s": [{"attempt_1": [[%s]]}]}' % (A, huge))
    _cli_refuses(capsys, path, str(path), "a number of more than 32 digits")


@pytest.mark.parametrize("name", ["correct", "first", "sample", "votes", "rank_votes",
                                  "rank_logprob", "order", "task_id"])
def test_a_score_named_like_a_pool_column_is_refused(ds, tmp_path, capsys, name):
    """A score named correct, first, sample, votes or rank_* overwrote the pool's own
    column: candidates.csv marked a wrong grid right, and the explorer's strip framed it
    "right". Such a name is refused, in a JSON file and a Parquet file alike."""
    import pyarrow as pa

    ta = ds[A].test[0].output
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"arcnb_candidates": 1, "tasks": {A: [[
        {"grid": wrong(ta), "scores": {name: 1.0}}, {"grid": ta.tolist()}]]}}))
    _cli_refuses(capsys, path, f"a score may not be named '{name}'")
    if name in ("votes", "task_id", "sample"):  # the Parquet format's own columns (sample: a draw's index)
        return
    pq_path = _write_parquet(tmp_path / "c.parquet",
                             _table([(A, 0, wrong(ta), 1), (A, 0, ta.tolist(), 1)],
                                    **{name: pa.array([1, 0], pa.int64())}))
    _cli_refuses(capsys, pq_path, f"a score may not be named '{name}'")


def test_fractional_shapes_indices_and_votes_are_refused_not_truncated(ds, tmp_path, capsys):
    """height 6.9 x width 6.2, test_index 0.9 and votes 0.9 were cut to integers: a
    malformed candidate was counted right."""
    import pyarrow as pa

    ta = ds[A].test[0].output  # 6 x 6
    base = _table([(A, 0, ta.tolist(), 1)])
    for column, value in (("height", 6.9), ("width", 6.2), ("test_index", 0.9),
                          ("votes", 0.9)):
        t = base.set_column(base.column_names.index(column), column, pa.array([value]))
        path = _write_parquet(tmp_path / f"{column}.parquet", t)
        _cli_refuses(capsys, path, f"the {column} column must hold integers, not double")
    # the integer file is right: coverage of A's one output
    ok = _write_parquet(tmp_path / "ok.parquet", base)
    assert candidates(ds, ok, taxonomy=None).summary["coverage"] == pytest.approx(0.25)


@pytest.mark.parametrize("meta, said", [
    ({"version": 1, "lower_is_better": "logprob"}, "lower_is_better must be a list of score"),
    ({"version": 99, "lower_is_better": []}, "unsupported arcnb_candidates version 99"),
    ({"lower_is_better": []}, "unsupported arcnb_candidates version None"),
    ({"version": True}, "unsupported arcnb_candidates version True"),
    ({"version": 1, "lower_is_better": [3]}, "lower_is_better must be a list of score"),
    ("[1, 2]", "metadata is not a JSON object"),
    # parsed by io's rules, as a JSON file is
    ('{"version": 1, "version": 1}', "metadata: the key 'version' appears more than once"),
    ('{"version": 1', "metadata is not valid JSON: Expecting"),
])
def test_parquet_metadata_is_checked_as_the_json_form_is(ds, tmp_path, capsys, meta, said):
    """lower_is_better "logprob" (a string) was split into letters, silently flipping
    the ranking; version 99 was accepted. The JSON form refused both."""
    ta = ds[A].test[0].output
    path = _write_parquet(tmp_path / "c.parquet", _table([(A, 0, ta.tolist(), 1)]), meta)
    _cli_refuses(capsys, path, said)
    if isinstance(meta, dict):
        j = tmp_path / "c.json"
        j.write_text(json.dumps({"arcnb_candidates": meta.get("version"), "tasks": {},
                                 **({"lower_is_better": meta["lower_is_better"]}
                                    if "lower_is_better" in meta else {})}))
        _cli_refuses(capsys, j, said.replace("metadata is not", ""))


def _bad_columns():
    import pyarrow as pa

    lst = pa.array([[1]], pa.list_(pa.int64()))
    struct = pa.array([{"a": 1}])
    null = pa.nulls(1)
    text = pa.array(["7"])
    cases = []
    for column in ("task_id", "test_index", "height", "width", "votes", "cells",
                   "view_logprobs"):
        for name, arr in (("list", lst), ("struct", struct), ("null", null), ("string", text)):
            if (column, name) in (("task_id", "string"), ("view_logprobs", "list")):
                continue  # the right types
            cases.append((column, name, arr))
    cases.append(("view_logprobs", "list of strings", pa.array([["a"]])))
    cases.append(("test_index", "null values", pa.array([None], pa.int64())))
    cases.append(("task_id", "null values", pa.array([None], pa.string())))
    return cases


@pytest.mark.parametrize("column, kind, arr", _bad_columns(),
                         ids=[f"{c}-{k}" for c, k, _ in _bad_columns()])
def test_a_wrongly_typed_parquet_column_is_one_line(ds, tmp_path, capsys, column, kind, arr):
    """list, struct, null or string columns where a number is expected gave 12 different
    tracebacks: each is one line naming the column."""
    ta = ds[A].test[0].output
    base = _table([(A, 0, ta.tolist(), 1)])
    t = (base.set_column(base.column_names.index(column), column, arr)
         if column in base.column_names else base.append_column(column, arr))
    path = _write_parquet(tmp_path / "c.parquet", t)
    line = _cli_refuses(capsys, path, str(path))
    assert column in line


def test_a_jsonl_file_is_read_as_arcnb_score_reads_it(ds, tmp_path):
    """arcnb candidates read a .jsonl file as one JSON document: one line gave coverage
    0 where the same attempts as submission.json give 1; two lines were "not valid JSON"."""
    ta, tb = ds[A].test[0].output, ds[B].test[1].output
    one = tmp_path / "one.jsonl"
    one.write_text(json.dumps({"task_id": A, "pair_index": 0,
                               "attempts": [wrong(ta), ta.tolist()]}) + "\n")
    sub = tmp_path / "submission.json"
    sub.write_text(json.dumps({A: [{"attempt_1": wrong(ta), "attempt_2": ta.tolist()}]}))
    a1, s1 = candidates(ds, one, taxonomy=None), candidates(ds, sub, taxonomy=None)
    assert a1.summary["coverage_per_output"] == s1.summary["coverage_per_output"] == 1 / 6
    assert a1.summary["format"] == "jsonl"
    two = tmp_path / "two.jsonl"
    two.write_text(one.read_text() + json.dumps({"task_id": B, "pair_index": 1,
                                                 "attempts": [tb.tolist()]}) + "\n")
    a2 = candidates(ds, two, taxonomy=None)
    assert a2.summary["coverage_per_output"] == pytest.approx(2 / 6)
    assert a2.summary["rankings"]["order"]["pass@2"] == \
        score(ds, two, n_boot=10).summary["pass@2"] == pytest.approx(0.25 + 0.125)


def test_n_boot_and_seed_reach_every_interval_once(ds, monkeypatch):
    """candidates(..., n_boot=7, seed=123): coverage_ci95 and every pass@K_ci95 come
    from those arguments (equal to a direct arcnb.stats call, unlike the defaults), and
    the per-category intervals are drawn once each."""
    import arcnb.candidates.analysis as mod
    from arcnb.stats import bootstrap_ci

    sub = hand_submission(ds)
    default = candidates(ds, sub, taxonomy=None)
    calls = []
    real = mod.bootstrap_ci
    monkeypatch.setattr(mod, "bootstrap_ci", lambda v, **k: calls.append(k) or real(v, **k))
    a = candidates(ds, sub, n_boot=7, seed=123)
    assert all(k == {"n_boot": 7, "seed": 123} for k in calls)
    n_rules, n_cats = len(a.rules), len(a.by_category)
    # coverage + per rule (pass@1, pass@2, gap) + per category (coverage, pass@2)
    assert len(calls) == 1 + 3 * n_rules + 2 * n_cats
    cov_task = np.array([1.0, 0.5, 0.0, 0.0])  # A, B, C, D (hand-computed above)
    order = [ds.task_ids.index(t) for t in (A, B, C, D)]
    per_task = np.empty(4)
    per_task[order] = cov_task
    assert a.summary["coverage_ci95"] == list(bootstrap_ci(per_task, n_boot=7, seed=123))
    assert a.summary["coverage_ci95"] != default.summary["coverage_ci95"]
    solved_votes = a.outputs["rank_votes"].fillna(99).to_numpy() <= 2
    pt = np.bincount(np.repeat(np.arange(4), [len(t.test) for t in ds]),
                     weights=solved_votes, minlength=4) / [len(t.test) for t in ds]
    assert a.summary["rankings"]["votes"]["pass@2_ci95"] == list(
        bootstrap_ci(pt, n_boot=7, seed=123))
    changed = [k for r in a.rules for k in ("pass@1_ci95", "pass@2_ci95")
               if a.summary["rankings"][r][k] != default.summary["rankings"][r][k]]
    assert changed


def test_out_goes_through_the_guarded_folder(ds, tmp_path, capsys, monkeypatch):
    """arcnb candidates --out never checked its folder: it wrote among the package's
    shipped notebooks; a write error left 2 of 7 files, named no file, and the rerun was
    refused."""
    from arcnb.resources import notebooks_dir
    from arcnb.runs import layout

    sub = tmp_path / "sub.json"
    sub.write_text(json.dumps(hand_submission(ds)))
    before = sorted(p.name for p in notebooks_dir().iterdir())
    _cli_refuses(capsys, sub, "inside arcnb's own", out=notebooks_dir())
    assert sorted(p.name for p in notebooks_dir().iterdir()) == before
    a = candidates(ds, sub, taxonomy=None)
    out = tmp_path / "out"
    real = layout.atomic_write_bytes
    calls = []

    def full_disk(path, data, **kw):
        calls.append(Path(path).name)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return real(path, data, **kw)

    monkeypatch.setattr(layout, "atomic_write_bytes", full_disk)
    with pytest.raises(OSError) as exc:
        a.write(out)
    assert exc.value.filename == str(out / calls[2])  # names the file that failed
    assert not out.exists() or list(out.iterdir()) == []  # the two written are taken back
    monkeypatch.setattr(layout, "atomic_write_bytes", real)
    a.write(out)  # the rerun is not refused
    # the seven tables, and anytime.csv: a submission's attempts are numbered draws
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["summary.json", "outputs.csv", "candidates.csv", "pass_at_k.csv", "reliability.csv",
         "by_category.csv", "comparisons.csv", "anytime.csv"])
    (out / "outputs.csv").unlink()
    (out / "outputs.csv").symlink_to(tmp_path / "elsewhere.csv")
    with pytest.raises(ArcnbError, match="is a symbolic link"):
        a.write(out, overwrite=True)
    assert not (tmp_path / "elsewhere.csv").exists()


def test_a_parquet_pool_decoding_far_beyond_its_size_is_refused(ds, tmp_path, capsys):
    """A 131 KB Parquet file decoding to 900 MB of cells (one 30x30 grid, 10^6 rows)
    took 2.15 GB: the reader sums the decoded size with the grids still held once (as a
    dictionary) and refuses before decoding."""
    import pyarrow as pa

    n = 1_000_000
    grid = np.zeros((30, 30), np.int8)
    cells = pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)),
                                           pa.array([grid.tobytes()], pa.binary()))
    t = pa.table({"task_id": pa.DictionaryArray.from_arrays(
                      pa.array(np.zeros(n, np.int32)), pa.array([A])),
                  "test_index": pa.array(np.zeros(n, np.int64)),
                  "height": pa.array(np.full(n, 30, np.int16)),
                  "width": pa.array(np.full(n, 30, np.int16)), "cells": cells})
    path = _write_parquet(tmp_path / "bomb.parquet", t)
    assert path.stat().st_size < 2_000_000
    _cli_refuses(capsys, path, "would take more than 536870912 bytes once decoded")


def test_thousands_of_score_columns_are_bounded(ds, tmp_path, capsys):
    """10,000 score columns in a 2.6 MB file: > 45 s and 13,000 lines of pandas
    warnings (one column inserted at a time). Beyond 1,024 columns the file is refused
    from its footer; 200 scores are measured, the pool table built at once."""
    import warnings

    import pyarrow as pa

    ta = ds[A].test[0].output
    rows = [(A, 0, wrong(ta), 1), (A, 0, ta.tolist(), 1)]
    many = {f"s{i}": pa.array([1.0, 0.0]) for i in range(10_000)}
    path = _write_parquet(tmp_path / "many.parquet", _table(rows, **many))
    _cli_refuses(capsys, path, "has 10006 columns, more than the 1024")
    some = {f"s{i}": pa.array([float(i), -float(i)]) for i in range(200)}
    ok = _write_parquet(tmp_path / "some.parquet", _table(rows, **some))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not one pandas PerformanceWarning
        a = candidates(ds, ok, taxonomy=None, rank_by=["s7"])
    assert len(a.summary["scores"]) == 200
    assert list(a.pool.columns[:6]) == ["task_id", "test_index", "votes", "first", "correct",
                                        "sample"]
    # s7 is higher for the wrong grid: it ranks first, the right one second
    assert a.summary["rankings"]["s7"]["pass@1"] == 0.0
    assert a.summary["rankings"]["s7"]["pass@2"] == pytest.approx(0.25)
    too_many = {f"s{i}": pa.array([1.0, 0.0]) for i in range(300)}
    _cli_refuses(capsys, _write_parquet(tmp_path / "300.parquet", _table(rows, **too_many)),
                 "300 score columns, more than the 256")


@pytest.mark.parametrize("record, said", [
    ({"train_score": float("nan")}, "train_score must be a number in [0, 1]"),
    ({"view_logprobs": []}, "view_logprobs must be a non-empty list of finite numbers"),
    ({"view_logprobs": [1e308, 1e308]}, "view_logprobs must be a non-empty list"),
], ids=["nan-train-score", "empty-view-logprobs", "view-logprobs-overflow"])
def test_json_and_parquet_pools_are_read_by_one_set_of_rules(ds, tmp_path, record, said):
    """The same candidate written as JSON and as Parquet is refused by both, with the
    same words (a NaN train_score and an empty view_logprobs were refused in JSON and
    taken in Parquet; a sum of view_logprobs beyond a float was a traceback in JSON)."""
    from arcnb.candidates import load_candidates
    from arcnb.candidates.files import candidates_bytes
    from arcnb.errors import PredictionsError

    ta = ds[A].test[0].output.tolist()
    rec = {"task_id": A, "test_index": 0, "grid": ta, **record}
    for suffix in (".json", ".parquet"):
        path = tmp_path / f"pool{suffix}"
        try:
            path.write_bytes(candidates_bytes(path, [rec]))
        except (ValueError, TypeError, OverflowError):
            continue  # the writer itself will not write it: nothing to read
        with pytest.raises(PredictionsError) as e:
            load_candidates(path)
        assert said in str(e.value) and "\n" not in str(e.value), suffix


def test_a_text_score_column_is_refused_in_parquet_as_in_json(ds, tmp_path):
    """A score that is text: refused in a JSON pool's ``scores`` and, alike, as a text
    column of a Parquet pool (it was silently dropped there)."""
    import json as _json

    import pyarrow as pa

    from arcnb.candidates import load_candidates
    from arcnb.errors import PredictionsError

    ta = ds[A].test[0].output
    t = _table([(A, 0, ta.tolist(), 1)]).append_column("logprob", pa.array(["-1.5"]))
    with pytest.raises(PredictionsError, match="'logprob' holds string: a score column must"):
        load_candidates(_write_parquet(tmp_path / "c.parquet", t))
    obj = {"arcnb_candidates": 1, "lower_is_better": [],
           "tasks": {A: [[{"grid": ta.tolist(), "votes": 1, "scores": {"logprob": "-1.5"}}]]}}
    (tmp_path / "c.json").write_text(_json.dumps(obj))
    with pytest.raises(PredictionsError, match="must be a number"):
        load_candidates(tmp_path / "c.json")
