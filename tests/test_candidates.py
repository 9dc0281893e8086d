"""Candidate pools (arcnb.candidates): hand-computed pools for every number, a naive
reference over random pools, calibration by construction, and the ``order`` rule
against ``arcnb score`` on real benchmarking-harness runs."""
from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

import arcnb
from arcnb.baselines import program_search_candidates, program_search_submission
from arcnb.candidates import (PRODUCT_OF_EXPERTS, calibration, candidates, load_candidates,
                              write_candidates)
from arcnb.data import load_dataset
from arcnb.scoring import score
from test_predictions import attempt, complete_run, write_run
from test_predictions import TASK_IDS as HARNESS_TASKS

A, B, C, D = "00576224", "12997ef3", "66e6c45b", "3b4c2228"  # 1, 2, 1, 2 test outputs


@pytest.fixture(scope="module")
def ds():
    return load_dataset("arc-agi-1:evaluation", tasks=[A, B, C, D])


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
    a = candidates(ds, hand_submission(ds))
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


def test_random_pools_against_naive_reference():
    ds = load_dataset("arc-agi-1:evaluation")[:12]
    rng = np.random.default_rng(7)
    for trial in range(6):
        tasks = _random_pool(ds, rng)
        obj = {"arcnb_candidates": 1, "lower_is_better": ["l"], "tasks": tasks}
        for rule in ("order", "votes", "s", "l", PRODUCT_OF_EXPERTS):
            a = candidates(ds, obj, rank_by=[rule], taxonomy=None, n_boot=50)
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
    return subprocess.run([sys.executable, "-m", "arcnb", *map(str, args)],
                          capture_output=True, text=True)


def test_cli_json_and_out(ds, tmp_path):
    sub = tmp_path / "sub.json"
    sub.write_text(json.dumps(hand_submission(ds)))
    tasks = tmp_path / "tasks.txt"
    tasks.write_text("\n".join(ds.task_ids))
    r = run_cli("candidates", "--dataset", "arc-agi-1:evaluation", "--tasks", tasks,
                "--predictions", sub, "--json", "--out", tmp_path / "out")
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


# ------------------------------------------------------------------- figures
def test_figures_draw_the_numbers(ds):
    import matplotlib

    matplotlib.use("Agg")
    from arcnb import plot as P

    a = candidates(ds, hand_submission(ds))
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
    from arcnb.models import BUNDLED_BASELINE
    from arcnb.runs import CANDIDATES

    if not BUNDLED_BASELINE.exists():
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
    pool = candidates(ds, tmp_path / "run" / CANDIDATES, taxonomy=None)
    # every submitted attempt is among the candidates: coverage bounds pass@2
    assert pool.summary["coverage"] >= res.summary["pass@2"]
    # the file lists them in vote order: the first two are the submitted attempts
    assert pool.summary["rankings"]["order"]["pass@2"] == pytest.approx(res.summary["pass@2"])
    without = evaluate("baseline", ds, tmp_path / "plain", progress=False)
    assert not (tmp_path / "plain" / CANDIDATES).exists() and without is not None


# ------------------------------------------------------------- report section
def test_report_section_only_for_pools(ds, tmp_path):
    from arcnb import report as R
    from arcnb.report.candidates import candidate_pool, candidates_html

    tasks = tmp_path / "tasks.txt"
    tasks.write_text("\n".join(ds.task_ids))
    many = tmp_path / "many.json"
    t = ds[A].test[0].output
    sub = hand_submission(ds)
    sub[A][0]["attempt_8"] = wrong(t, 5)  # A: four distinct candidates
    many.write_text(json.dumps(sub))
    run = R.open_run(None, predictions=str(many), dataset="arc-agi-1:evaluation",
                     tasks=str(tasks), n_boot=100)
    pool = candidate_pool(run, n_boot=100)
    assert pool is not None and pool.summary["coverage"] == pytest.approx(0.375)
    html = candidates_html(pool)
    assert "Candidate pool" in html and "selection_gap" in html and "0.3750" in html
    two = tmp_path / "two.json"
    two.write_text(json.dumps({t.id: [{"attempt_1": p.output.tolist(),
                                       "attempt_2": wrong(p.output)} for p in t.test]
                               for t in ds}))
    run2 = R.open_run(None, predictions=str(two), dataset="arc-agi-1:evaluation",
                      tasks=str(tasks), n_boot=100)
    assert candidate_pool(run2) is None


def test_candidate_strip_marks_the_right_one(ds):
    import matplotlib

    matplotlib.use("Agg")
    from arcnb import plot as P

    a = candidates(ds, hand_submission(ds), taxonomy=None)
    ax = P.candidate_strip(a, A, 0)  # votes: T (3), W1 (2), W2 (1)
    subs = [s for s in ax.figure.axes if s is not ax]
    assert [s.get_title() for s in subs] == ["1: 3 votes\nright", "2: 2 votes", "3: 1 vote"]
    assert "3 candidates by votes" in ax.get_title()
    assert subs[0].get_images()[0].get_array().shape[:2] == ds[A].test[0].output.shape
    ax = P.candidate_strip(a, A, 0, rule="order", max_items=2)
    subs = [s for s in ax.figure.axes if s is not ax]
    assert [s.get_title() for s in subs] == ["1: 2 votes", "2: 1 vote"]
