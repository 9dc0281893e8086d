"""Anytime curves, refinement steps, the verifier and the confidence head of a candidate
pool (arcnb/candidates/anytime.py), checked against enumerating every subset, random
subsets, and hand-computed pools."""
from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from arcnb.candidates import candidates, candidates_bytes, load_candidates
from arcnb.candidates.anytime import ALWAYS, EARLY, LATE, NEVER, TIE, exact_curves
from arcnb.data import load_dataset
from arcnb.errors import ArcnbError

from test_candidates import A, B, C, D, wrong  # the same four tasks

DS_TASKS = [A, B, C, D]  # the module's dataset (conftest.py's ds)


# ------------------------------------------------------------ plain references
def _order(draws, cls, tie):
    """Each grid's first position in the pool, and the class and tie-break orders (by
    default: one class, then first appearance in the whole pool)."""
    first = {}
    for i, g in enumerate(draws):
        if g is not None:
            first.setdefault(g, i)
    return first, cls or {g: 0 for g in first}, tie or first


def subset_rates(draws, right, *, cls=None, tie=None, votes_matter=True, subsets=None):
    """pass@1, pass@2 and coverage of ``right`` over ``subsets`` of the draw positions
    (default: every subset of every size, one list per size), by plain counting.
    ``draws``: grid labels in axis order (None: a malformed draw). The subset's grids
    rank by ``cls`` (higher first), then its votes (when they matter), then ``tie``
    (default: first appearance in the whole pool)."""
    first, cls, tie = _order(draws, cls, tie)
    n_all = len(draws)
    if subsets is None:
        subsets = [list(itertools.combinations(range(n_all), n)) for n in range(1, n_all + 1)]
    out = []
    for group in subsets:
        a = b = c = 0
        for sub in group:
            votes = {}
            for i in sub:
                if draws[i] is not None:
                    votes[draws[i]] = votes.get(draws[i], 0) + 1
            key = ((lambda g: (-cls[g], -votes[g], tie[g])) if votes_matter
                   else (lambda g: (-cls[g], tie[g])))
            ranked = sorted(votes, key=key)
            a += ranked[:1] == [right]
            b += right in ranked[:2]
            c += right in votes
        out.append((a / len(group), b / len(group), c / len(group)))
    return np.array(out).T


def subset_rates_random_ties(draws, right, *, cls=None):
    """pass@1, pass@2 and coverage of ``right`` over every subset of every size, with
    votes counted in the subset and ties broken uniformly at random: every tie split
    enumerated (each order of the subset's grids equally likely, then a stable sort by
    ``cls`` (higher first) and votes), by plain counting."""
    first, cls, _ = _order(draws, cls, None)
    n_all = len(draws)
    out = []
    for n in range(1, n_all + 1):
        subsets = list(itertools.combinations(range(n_all), n))
        a = b = c = 0.0
        for sub in subsets:
            votes = {}
            for i in sub:
                if draws[i] is not None:
                    votes[draws[i]] = votes.get(draws[i], 0) + 1
            perms = list(itertools.permutations(votes))
            for perm in perms:
                ranked = sorted(perm, key=lambda g: (-cls[g], -votes[g]))
                a += (ranked[:1] == [right]) / len(perms)
                b += (right in ranked[:2]) / len(perms)
            c += right in votes
        out.append((a / len(subsets), b / len(subsets), c / len(subsets)))
    return np.array(out).T


def engine(draws, right, *, cls=None, tie=None, votes_matter=True):
    """The same pool through exact_curves (kinds written out here, per grid)."""
    first, cls, tie = _order(draws, cls, tie)
    others = [g for g in first if g != right]
    kinds = []
    for g in others:
        if cls[g] != cls[right]:
            kinds.append(ALWAYS if cls[g] > cls[right] else NEVER)
        elif not votes_matter:
            kinds.append(ALWAYS if tie[g] < tie[right] else NEVER)
        else:
            kinds.append(EARLY if tie[g] < tie[right] else LATE)
    m = [draws.count(g) for g in others]
    return exact_curves(draws.count(right), np.array(m, np.int64), np.array(kinds, np.int64),
                        draws.count(None))


def _random_pool(rng, max_draws: int, max_labels: int):
    """A small random pool for the enumeration tests: ``(draws, present, right)`` (an
    invalid draw is None; ``right`` one of the grids drawn), or None when nothing valid
    was drawn."""
    n = int(rng.integers(1, max_draws + 1))
    labels = int(rng.integers(1, max_labels + 1))
    draws = [None if rng.random() < 0.1 else int(rng.integers(labels)) for _ in range(n)]
    present = sorted({g for g in draws if g is not None})
    if not present:
        return None
    return draws, present, int(rng.choice(present))


def test_exact_curves_equal_every_subset_enumerated():
    rng = np.random.default_rng(3)
    checked = 0
    for _ in range(250):
        pool = _random_pool(rng, 10, 4)
        if pool is None:
            continue
        draws, present, right = pool
        votes_matter = bool(rng.random() < 0.7)
        cls = ({g: int(rng.integers(2)) for g in present} if rng.random() < 0.4 else None)
        perm = rng.permutation(len(present))
        tie = ({g: int(perm[i]) for i, g in enumerate(present)} if rng.random() < 0.3
               else None)
        want = subset_rates(draws, right, cls=cls, tie=tie, votes_matter=votes_matter)
        got = engine(draws, right, cls=cls, tie=tie, votes_matter=votes_matter)
        for w, g in zip(want, got):
            np.testing.assert_allclose(g, w, rtol=0, atol=1e-12)
        checked += 1
    assert checked > 200


def test_random_ties_equal_every_subset_and_every_tie_split_enumerated():
    rng = np.random.default_rng(5)
    checked = 0
    for _ in range(120):
        pool = _random_pool(rng, 8, 5)
        if pool is None:
            continue
        draws, present, right = pool
        cls = {g: int(rng.integers(2)) for g in present} if rng.random() < 0.3 else None
        c = cls or {g: 0 for g in present}
        others = [g for g in present if g != right]
        kinds = [ALWAYS if c[g] > c[right] else NEVER if c[g] < c[right] else TIE
                 for g in others]
        got = exact_curves(draws.count(right), np.array([draws.count(g) for g in others],
                                                        np.int64),
                           np.array(kinds, np.int64), draws.count(None))
        want = subset_rates_random_ties(draws, right, cls=cls)
        for w, g in zip(want, got):
            np.testing.assert_allclose(g, w, rtol=0, atol=1e-12)
        checked += 1
    assert checked > 100


def test_random_ties_by_hand():
    # R W R W: two draws {R, W} tie at one vote each: R first with probability 1/2
    p1, p2, cov = exact_curves(2, np.array([2]), np.array([TIE]))
    # subsets of 2: RW x4 (tie: 1/2), RR (1), WW (0): (4 / 2 + 1) / 6
    assert p1[1] == pytest.approx(3 / 6) and p2[1] == pytest.approx(5 / 6)
    assert p1[3] == pytest.approx(0.5) and p2[3] == 1.0  # the whole pool: a 2-2 tie
    # four grids drawn once each: one draw is one grid; the whole pool is a 4-way tie
    p1, p2, _ = exact_curves(1, np.array([1, 1, 1]), np.array([TIE] * 3))
    assert p1 == pytest.approx([1 / 4] * 4) and p2 == pytest.approx([1 / 4, 1 / 2, 1 / 2, 1 / 2])


def test_exact_random_ties_on_a_larger_pool_against_random_subsets():
    # 40 draws of 6 grids: the exact curve against 4,000 random subsets per n, ties split
    # by a random order (a sampled check where enumerating is out of reach)
    rng = np.random.default_rng(2)
    draws = list(rng.choice(6, size=40, p=[0.2, 0.2, 0.2, 0.15, 0.15, 0.1]))
    m = np.bincount(draws, minlength=6)
    p1, p2, _ = exact_curves(int(m[0]), m[1:], np.full(5, TIE))
    for n in (2, 5, 13):
        hits1 = hits2 = 0
        trials = 4000
        for _ in range(trials):
            sub = rng.choice(40, size=n, replace=False)
            votes = np.bincount(np.asarray(draws)[sub], minlength=6).astype(float)
            order = np.lexsort((rng.random(6), -votes))
            order = [g for g in order if votes[g] > 0]
            hits1 += order[:1] == [0]
            hits2 += 0 in order[:2]
        assert abs(hits1 / trials - p1[n - 1]) < 0.03 and abs(hits2 / trials - p2[n - 1]) < 0.03


def test_hand_computed_tie_and_pass_at_2():
    # R W R W: with 2 draws, {R,W} ties at 1 vote each; R appeared first, so it wins
    draws = ["R", "W", "R", "W"]
    p1, p2, cov = engine(draws, "R")
    # subsets of 2: RW(x4) -> R wins the tie, RR -> R, WW -> W (R absent): 5/6
    assert p1[1] == pytest.approx(5 / 6) and p2[1] == pytest.approx(5 / 6)
    assert cov[1] == pytest.approx(1 - 1 / 6)
    # 3 draws: RWR, RRW (R 2 votes) x2 and RWW, WRW (W 2 votes): R first in 2, second in 2
    assert p1[2] == pytest.approx(2 / 4) and p2[2] == pytest.approx(1.0)
    p1w, *_ = engine(draws, "W")
    assert p1w[1] == pytest.approx(1 / 6)  # W wins only when both of its draws are in
    assert p1[3] == 1.0 and p1w[3] == 0.0  # the whole pool: a tie that R wins


def test_exact_curves_equal_random_subsets_on_a_larger_pool():
    rng = np.random.default_rng(7)
    labels = rng.choice(6, size=60, p=[0.3, 0.25, 0.2, 0.1, 0.1, 0.05])
    draws = [int(x) for x in labels]
    draws[5] = None
    got = engine(draws, 1)
    sizes = [1, 2, 3, 5, 8, 13, 30, 59]
    reps = 4000
    subsets = [[tuple(rng.choice(60, size=n, replace=False)) for _ in range(reps)]
               for n in sizes]
    want = subset_rates(draws, 1, subsets=subsets)
    for metric_want, metric_got in zip(want, got):
        for j, n in enumerate(sizes):
            p = metric_got[n - 1]
            se = math.sqrt(max(p * (1 - p), 1e-4) / reps)
            assert abs(metric_want[j] - p) < 5 * se, (n, metric_want[j], p)


def test_exact_curves_edges():
    z = exact_curves(0, np.array([3]), np.array([LATE]), 1)  # the right grid never drawn
    assert np.all(z[0] == 0) and np.all(z[2] == 0) and z[0].size == 4
    p1, p2, cov = exact_curves(5, np.zeros(0, np.int64), np.zeros(0, np.int64), 0)
    assert np.all(p1 == 1) and np.all(cov == 1)
    empty = exact_curves(0, np.zeros(0, np.int64), np.zeros(0, np.int64), 0)
    assert all(x.size == 0 for x in empty)


# ---------------------------------------------------------------- whole pools
def sample_pool(ds, draws_by_output: dict) -> dict:
    """A candidates dict: per (task, test index), a list of grid labels in sample order
    ('T' the truth, 'W1'/'W2' wrong grids, None malformed)."""
    tasks: dict = {}
    for (tid, i), labels in draws_by_output.items():
        truth = ds[tid].test[i].output
        grids = {"T": truth.tolist(), "W1": wrong(truth), "W2": wrong(truth, 2)}
        outs = tasks.setdefault(tid, [[] for _ in ds[tid].test])
        seen = {}
        for s, g in enumerate(labels):
            if g is None:
                outs[i].append({"grid": None, "sample": [s]})
            elif g in seen:
                seen[g]["sample"].append(s)
            else:
                seen[g] = {"grid": grids[g], "sample": [s]}
                outs[i].append(seen[g])
    return {"arcnb_candidates": 1, "tasks": tasks}


def _mean_curve(draws: dict, n_tests: dict, rates_of, n: int = 6) -> np.ndarray:
    """The enumerated curves (pass@1, pass@2, coverage at 1..n draws) averaged per task,
    then over tasks: an output without the right answer among its draws adds 0, and an
    output's curve stays flat past its last draw."""
    want = np.zeros((3, n))
    for tid, k in n_tests.items():
        for i in range(k):
            labels = draws.get((tid, i))
            if not labels or "T" not in labels:
                continue
            rates = rates_of(labels, "T")
            full = np.concatenate([rates, np.repeat(rates[:, -1:], n - rates.shape[1], 1)], 1)
            want += full / k / len(n_tests)
    return want


def test_anytime_curve_of_a_pool_is_the_enumerated_mean_over_tasks(ds):
    draws = {(A, 0): ["W1", "T", "W1", "T", "T", None],
             (B, 0): ["T", "W1", "W1"],
             (B, 1): ["W2"],
             (D, 0): ["W1", "W2", "T", "W2"]}  # C and D's second output: nothing
    a = candidates(ds, sample_pool(ds, draws), taxonomy=None, n_boot=20, tie="first")
    pts = a.summary["anytime"]["points"]
    assert a.summary["anytime"]["axis"] == "sample" and [p["n"] for p in pts] == list(range(1, 7))
    n_tests = {A: 1, B: 2, C: 1, D: 2}
    want = _mean_curve(draws, n_tests, subset_rates)
    for j, name in enumerate(("pass@1", "pass@2", "coverage")):
        np.testing.assert_allclose([p[name] for p in pts], want[j], atol=1e-12)
        lo, hi = np.array([p[f"{name}_ci95"] for p in pts]).T
        assert np.all(lo <= want[j] + 1e-12) and np.all(want[j] <= hi + 1e-12)
    gain = a.summary["voting_gain"]
    assert gain["value"] == pytest.approx(want[0][-1] - want[0][0])
    assert set(a.summary["anytime_by_rule"]) == {"order"}
    # at the whole pool, the curve under votes is the votes rule's pass@1
    assert pts[-1]["pass@1"] == pytest.approx(a.summary["rankings"]["votes"]["pass@1"])
    assert a.summary["anytime"]["tie"] == a.summary["rankings"]["votes"]["tie"] == "first"
    # random ties (the default): against every subset with every tie split
    r = candidates(ds, sample_pool(ds, draws), taxonomy=None, n_boot=20)
    want = _mean_curve(draws, n_tests, subset_rates_random_ties)
    rp = r.summary["anytime"]["points"]
    for j, name in enumerate(("pass@1", "pass@2", "coverage")):
        np.testing.assert_allclose([p[name] for p in rp], want[j], atol=1e-12)
    assert r.summary["anytime"]["tie"] == r.summary["rankings"]["votes"]["tie"] == "random"
    assert rp[-1]["pass@1"] == pytest.approx(r.summary["rankings"]["votes"]["pass@1"])
    assert rp[-1]["pass@2"] == pytest.approx(r.summary["rankings"]["votes"]["pass@2"])


@pytest.mark.parametrize("tie,want", [("random", 0.5), ("first", 0.0)])
def test_votes_ranking_and_curve_agree_when_listing_and_draw_order_differ(tmp_path, tie, want):
    # the right grid is listed first but drawn second: one vote each, a tie
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "t.json").write_text(json.dumps({"train": [
        {"input": [[0]], "output": [[1]]}], "test": [{"input": [[0]], "output": [[1]]}]}))
    ds = load_dataset(tmp_path / "tasks")
    pool = {"arcnb_candidates": 1, "tasks": {"t": [[{"grid": [[1]], "sample": [1]},
                                                    {"grid": [[2]], "sample": [0]}]]}}
    s = candidates(ds, pool, taxonomy=None, n_boot=20, tie=tie).summary
    assert s["rankings"]["votes"]["pass@1"] == pytest.approx(want)
    assert s["anytime"]["points"][-1]["pass@1"] == pytest.approx(want)
    assert s["anytime"]["points"][0]["pass@1"] == pytest.approx(0.5)  # one draw: either
    assert s["voting_gain"]["value"] == pytest.approx(want - 0.5)
    assert s["anytime"]["tie"] == s["rankings"]["votes"]["tie"] == s["tie"] == tie


def test_json_and_parquet_pools_read_alike(ds, tmp_path):
    records = [
        {"task_id": A, "test_index": 0, "grid": ds[A].test[0].output.tolist(),
         "sample": [0, 3], "step": [1, 2], "passes_train": True, "train_score": 1.0},
        {"task_id": A, "test_index": 0, "grid": wrong(ds[A].test[0].output),
         "sample": [1], "step": [1], "passes_train": False, "train_score": 0.25,
         "q_halt": -1.5},
    ]
    got = {}
    for name in ("c.json", "c.parquet"):
        (tmp_path / name).write_bytes(candidates_bytes(name, records))
        cs = load_candidates(tmp_path / name)
        got[name] = candidates(ds, cs, taxonomy=None, n_boot=10).summary
    pq_rows = load_candidates(tmp_path / "c.parquet")
    assert pq_rows.n_samples == 3  # one Parquet row per draw
    js = json.loads((tmp_path / "c.json").read_text())
    assert js["tasks"][A][0][0]["sample"] == [0, 3] and js["tasks"][A][0][0]["votes"] == 2
    for key in ("anytime", "first_right_step", "verifier", "rankings"):
        assert got["c.json"][key] == got["c.parquet"][key]


@pytest.mark.parametrize("cand,said", [
    ({"sample": [0, 1], "votes": 3}, "votes (3) must equal"),
    ({"sample": [0, 1], "view": [0]}, "same length"),
    ({"sample": -1}, "sample must be an integer"),
    ({"step": [1.5]}, "step must be an integer"),
    ({"passes_train": 1}, "passes_train must be true or false"),
    ({"train_score": 1.5}, "train_score must be a number in [0, 1]"),
])
def test_bad_budget_fields_are_refused(ds, cand, said):
    pool = {"arcnb_candidates": 1,
            "tasks": {A: [[{"grid": ds[A].test[0].output.tolist(), **cand}]]}}
    with pytest.raises(ArcnbError, match=said.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]")):
        load_candidates(pool)


# ---------------------------------------------------------------------- steps
def step_pool(ds, steps_by_output: dict) -> dict:
    """One draw per step: the grid label of each step, in step order from 1."""
    tasks: dict = {}
    for (tid, i), labels in steps_by_output.items():
        truth = ds[tid].test[i].output
        grids = {"T": truth.tolist(), "W1": wrong(truth), "W2": wrong(truth, 2)}
        outs = tasks.setdefault(tid, [[] for _ in ds[tid].test])
        for s, g in enumerate(labels, start=1):
            outs[i].append({"grid": grids[g], "step": s})
    return {"arcnb_candidates": 1, "tasks": tasks}


def test_first_right_step_stability_and_per_step_shares(ds):
    pool = step_pool(ds, {(A, 0): ["W1", "W2", "T", "T"],   # right from step 3 on
                          (C, 0): ["T", "W1", "W1", "W1"],  # right, then replaced: lost
                          (B, 0): ["W1", "W1", "W2", "W2"]})  # never right
    s = candidates(ds, pool, taxonomy=None, n_boot=10).summary
    assert s["first_right_step"] == {"1": 1, "3": 1, "never": 4}  # 6 outputs in all
    assert s["stability"] == {"n_outputs": 6, "n_right_at_some_step": 2, "n_stable": 1,
                              "n_lost": 1}
    by_step = {r["step"]: r for r in s["steps"]}
    assert by_step[1]["share_right"] == pytest.approx(1 / 6)
    assert by_step[2]["share_right"] == 0 and by_step[2]["share_lost"] == pytest.approx(1 / 6)
    # step 2: A W1 -> W2 and C T -> W1 change; B stays W1
    assert by_step[2]["share_changed"] == pytest.approx(2 / 6)
    assert by_step[3]["share_right"] == pytest.approx(1 / 6)
    assert by_step[3]["share_changed"] == pytest.approx(2 / 6)  # A W2 -> T, B W1 -> W2
    assert by_step[4]["share_changed"] == 0 and by_step[4]["share_lost"] == pytest.approx(1 / 6)


# ------------------------------------------------------------------- verifier
def verifier_pool(ds, rows):
    tasks: dict = {}
    for tid, i, label, passes in rows:
        truth = ds[tid].test[i].output
        grid = truth.tolist() if label == "T" else wrong(truth, int(label[1:]))
        outs = tasks.setdefault(tid, [[] for _ in ds[tid].test])
        c = {"grid": grid}
        if passes is not None:
            c["passes_train"] = passes
        outs[i].append(c)
    return {"arcnb_candidates": 1, "tasks": tasks}


def test_verifier_precision_recall_overfit_by_hand(ds):
    rows = [(A, 0, "T", True), (A, 0, "W1", True), (A, 0, "W2", False),
            (B, 0, "T", False), (B, 0, "W1", True), (B, 1, "T", True),
            (D, 0, "W1", None)]  # unknown: left out of the rates
    s = candidates(ds, verifier_pool(ds, rows), taxonomy=None, n_boot=10).summary
    v = s["verifier"]
    # passers: A T, A W1, B W1, B1 T -> 2 right of 4; right: A T, B T, B1 T -> 2 pass
    assert v["precision"] == pytest.approx(2 / 4) and v["recall"] == pytest.approx(2 / 3)
    assert v["overfit_rate"] == pytest.approx(2 / 4)
    assert (v["n_pass_right"], v["n_pass_wrong"], v["n_fail_right"], v["n_fail_wrong"]) == (
        2, 2, 1, 1)
    # coverage among passers: A 1, B 1/2 (only B1's truth passes), C 0, D 0
    assert v["coverage_passers"] == pytest.approx((1 + 0.5) / 4)
    assert v["coverage_all"] == pytest.approx((1 + 1) / 4) == s["coverage"]
    assert "passes_train" in s["rankings"]
    assert {(c["rule_a"], c["rule_b"]) for c in s["comparisons"]} >= {("votes", "passes_train")}


def test_verifier_without_passers_or_right_answers_is_nan(ds):
    rows = [(A, 0, "W1", False), (B, 0, "W2", False)]
    v = candidates(ds, verifier_pool(ds, rows), taxonomy=None, n_boot=10).summary["verifier"]
    assert math.isnan(v["precision"]) and math.isnan(v["overfit_rate"])
    assert math.isnan(v["recall"]) and v["coverage_passers"] == 0


def test_passes_train_rule_ranks_passers_then_votes_then_train_score(ds):
    t = ds[A].test[0].output
    pool = {"arcnb_candidates": 1, "tasks": {A: [[
        {"grid": wrong(t), "votes": 5, "passes_train": False, "train_score": 0.9},
        {"grid": wrong(t, 2), "votes": 1, "passes_train": True, "train_score": 0.2},
        {"grid": t.tolist(), "votes": 1, "passes_train": True, "train_score": 0.7}]]}}
    a = candidates(ds, pool, taxonomy=None, n_boot=10)
    ranks = dict(zip(a.pool["votes"].astype(int).astype(str) + a.pool["correct"].astype(str),
                     a.pool["rank_passes_train"]))
    assert ranks == {"1True": 1, "1False": 2, "5False": 3}
    assert a.summary["rankings"]["passes_train"]["pass@1"] == pytest.approx(1 / 4)
    assert a.summary["rankings"]["votes"]["pass@1"] == 0


# ------------------------------------------------------------------ confidence
def test_confidence_head_calibration_and_votes_then_confidence(ds):
    t = ds[A].test[0].output
    pool = {"arcnb_candidates": 1, "tasks": {A: [[
        {"grid": wrong(t), "votes": 2, "scores": {"q_halt": 0.2}},
        {"grid": t.tolist(), "votes": 2, "scores": {"q_halt": 0.9}}]]}}
    a = candidates(ds, pool, taxonomy=None, n_boot=10)
    s = a.summary
    assert s["rankings"]["votes_then_q_halt"]["pass@1"] == pytest.approx(1 / 4)
    assert s["rankings"]["votes"]["pass@1"] == pytest.approx(1 / 8)  # a tie: 1/2 of 1/4
    first = candidates(ds, pool, taxonomy=None, n_boot=10, tie="first").summary
    assert first["rankings"]["votes"]["pass@1"] == 0  # the tie goes to the first listed
    conf = s["confidence"]
    assert conf["score"] == "q_halt" and conf["transform"] == "none"
    assert conf["n_outputs"] == 1 and conf["ece"] == pytest.approx(abs(1 - 0.9))


# ------------------------------------------------------------------------ CLI
def test_cli_json_contract(ds, tmp_path, capsys):
    from arcnb.cli import main

    draws = {(A, 0): ["W1", "T", "T"], (B, 0): ["T", "W1"]}
    pool = sample_pool(ds, draws)
    for (tid, i), _ in draws.items():
        for c in pool["tasks"][tid][i]:
            c["passes_train"] = c["grid"] == ds[tid].test[i].output.tolist()
            c["step"] = c["sample"]
    path = tmp_path / "pool.json"
    path.write_text(json.dumps(pool))
    tasks = tmp_path / "tasks.txt"
    tasks.write_text("\n".join(ds.task_ids))
    rc = main(["candidates", "--dataset", "arc-agi-1:evaluation", "--tasks", str(tasks),
               "--predictions", str(path), "--json"])
    s = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert s["anytime"]["axis"] == "sample"
    assert [p["n"] for p in s["anytime"]["points"]] == [1, 2, 3]
    assert all({"n", "pass@1", "pass@2", "coverage"} <= set(p) for p in s["anytime"]["points"])
    assert s["anytime"]["tie"] == "random" and s["n_tasks"] == 4
    assert set(s["anytime_by_rule"]) == {"order", "passes_train"}
    assert set(s["first_right_step"]) == {"0", "1", "never"}
    assert set(s["verifier"]) >= {"precision", "recall", "overfit_rate", "coverage_passers",
                                  "coverage_all"}
    assert "passes_train" in s["rankings"]
    rc = main(["candidates", "--dataset", "arc-agi-1:evaluation", "--tasks", str(tasks),
               "--predictions", str(path)])
    text = capsys.readouterr().out
    assert rc == 0 and "anytime (sample" in text and "verifier" in text
    rc = main(["candidates", "--dataset", "arc-agi-1:evaluation", "--tasks", str(tasks),
               "--predictions", str(path), "--axis", "iteration"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "iteration" in err[0]
