"""The analysis of a solve matrix (arcnb/repeats/analysis.py): ``analyse`` on
matrices built in the test, against brute force, plain loops, hand-computed values and
a simulation with known truth; its edges (one run, constant runs, no graded value, the
bound on pairs of runs)."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from arcnb.errors import RepeatsError
from arcnb.repeats import analysis as A
from arcnb.stats import bootstrap_ci


def test_every_interval_follows_n_boot_and_seed():
    # every resampled interval follows n_boot and seed (the same seed draws the same
    # resamples, another seed or n_boot others); the t-based ones draw nothing
    rng = np.random.default_rng(5)
    S = (rng.random((40, 6)) < rng.uniform(0.1, 0.9, (40, 1))).astype(float)
    args = (S, np.arange(40), [f"t{i}" for i in range(40)], [f"r{i}" for i in range(6)],
            ["A"] * 3 + ["B"] * 3)
    kw = {"ensembles": {"A": S[:, 0]},
          "graded": {"partial_credit": rng.random(S.shape)}, "n_splits": 20}

    def intervals(n_boot, seed):
        s = A.analyse(*args, n_boot=n_boot, seed=seed, **kw).summary
        c = s["configs"]["A"]
        return {"single": c["pass@2"]["ci95_single_run"],
                "graded": c["graded"]["partial_credit"]["ci95"],
                "ensemble": s["ensemble"]["sets"]["A"]["ci95"],
                "held_out": s["ensemble"]["held_out"]["ci95"],
                "t": c["pass@2"]["ci95"] + s["comparisons"][0]["ci95"]}

    base = intervals(300, 7)
    assert intervals(300, 7) == base
    for got in (intervals(300, 8), intervals(40, 7)):
        assert got["t"] == base["t"]
        for k in ("single", "graded", "ensemble", "held_out"):
            assert got[k] != base[k], k


def test_single_run_and_constant_edges():
    from arcnb.repeats.inference import NOTE_NO_SPREAD, NOTE_ONE_RUN, NOTE_ONE_RUN_CONFIG
    # one run: SD, the run share and the interval over tasks and runs are NaN (no
    # run-to-run spread to estimate), and the note says so; the one-run interval is there
    rep = A.analyse(np.array([[1.0], [0.0], [1.0]]), [0, 1, 2], ["a", "b", "c"], ["r"], ["c"],
                    n_boot=100)
    c = rep.summary["configs"]["c"]
    assert math.isnan(c["pass@2"]["sd"]) and math.isnan(c["variance"]["runs_share"])
    assert c["pass@2"]["mean"] == pytest.approx(2 / 3)
    assert all(math.isnan(x) for x in c["pass@2"]["ci95"])
    assert c["pass@2"]["ci95_note"] == NOTE_ONE_RUN_CONFIG
    assert not any(math.isnan(x) for x in c["pass@2"]["ci95_single_run"])
    assert "no interval over tasks and runs" in rep.text()
    # every run solves everything: a configuration's interval is exactly 1; between the
    # two nothing varies, so there is no test: p, mde80, the interval are NaN, the runs
    # needed unknown, and the note says why (never mde80 = 0)
    ones = np.ones((4, 4))
    rep = A.analyse(ones, [0, 1, 2, 3], list("abcd"), list("wxyz"), ["p", "p", "q", "q"],
                    n_boot=100)
    assert rep.summary["configs"]["p"]["pass@2"]["ci95"] == [1.0, 1.0]
    (cmp,) = rep.summary["comparisons"]
    assert cmp["diff"] == 0.0 and cmp["note"] == NOTE_NO_SPREAD
    assert all(math.isnan(cmp[k]) for k in ("p", "mde80", "se", "share_tasks"))
    assert all(math.isnan(x) for x in cmp["ci95"])
    assert all(math.isnan(v) for v in cmp["runs_needed"].values())
    assert "NaN" in rep.text() and NOTE_NO_SPREAD in rep.text()
    # one run against three: the other's spread is not borrowed, the test is not made
    S = np.array([[1, 0, 1, 1], [0, 1, 1, 0], [1, 1, 0, 1], [0, 0, 0, 1]], dtype=float)
    rep = A.analyse(S, [0, 1, 2, 3], list("abcd"), list("wxyz"), ["p", "q", "q", "q"],
                    n_boot=100)
    (cmp,) = rep.summary["comparisons"]
    assert cmp["note"] == NOTE_ONE_RUN and math.isnan(cmp["p"]) and math.isnan(cmp["mde80"])
    assert cmp["diff"] == pytest.approx(S[:, 1:].mean() - S[:, 0].mean())


# ------------------------------------------------------------------ brute force


def test_union_and_unique_solves_against_brute_force():
    rng = np.random.default_rng(11)
    for _ in range(20):
        n_tasks, n_runs = int(rng.integers(2, 8)), int(rng.integers(1, 6))
        n_out = rng.integers(1, 3, size=n_tasks)
        codes = np.repeat(np.arange(n_tasks), n_out)
        S = (rng.random((codes.size, n_runs)) < rng.random()).astype(float)
        names = [f"r{i}" for i in range(n_runs)]
        rep = A.analyse(S, codes, [f"t{i}" for i in range(n_tasks)], names, ["c"] * n_runs,
                        n_boot=20)
        for k in range(1, n_runs + 1):
            vals = []
            for subset in itertools.combinations(range(n_runs), k):
                per_task = []
                for t in range(n_tasks):
                    rows = [i for i in range(codes.size) if codes[i] == t]
                    per_task.append(np.mean([max(S[i, r] for r in subset) for i in rows]))
                vals.append(np.mean(per_task))
            assert rep.summary["union"]["by_n_runs"][k - 1] == pytest.approx(np.mean(vals))
        assert rep.summary["union"]["pass@2"] == pytest.approx(
            rep.summary["union"]["by_n_runs"][-1])
        for r in range(n_runs):
            n = sum(1 for i in range(codes.size)
                    if S[i, r] == 1 and all(S[i, q] == 0 for q in range(n_runs) if q != r))
            assert rep.summary["unique_solves"][names[r]] == n
        best, best_pair = -1.0, []
        for i, j in itertools.combinations(range(n_runs), 2):
            a = {o for o in range(codes.size) if S[o, i]}
            b = {o for o in range(codes.size) if S[o, j]}
            jac = len(a & b) / len(a | b) if a | b else float("nan")
            got = rep.jaccard.iloc[i, j]
            assert (math.isnan(jac) and math.isnan(got)) or got == pytest.approx(jac)
            per_task = [np.mean([max(S[o, i], S[o, j]) for o in range(codes.size)
                                 if codes[o] == t]) for t in range(n_tasks)]
            if np.mean(per_task) > best + 1e-12:
                best, best_pair = np.mean(per_task), [names[i], names[j]]
        if n_runs > 1:
            assert rep.summary["best_pair"]["runs"] == best_pair
            assert rep.summary["best_pair"]["pass@2"] == pytest.approx(best)


# ------------------------------------------------------------------ simulation


def _simulate(rng, *, n_tasks=60, n_runs=8, spread=1.2):
    """Per-task solve probabilities p_t ~ U(0, 0.6), each run scaled by its own factor
    m_r ~ U(1 - spread/2, 1 + spread/2): the true configuration mean is E[p] = 0.3."""
    p = rng.uniform(0, 0.6, size=n_tasks)
    m = rng.uniform(1 - spread / 2, 1 + spread / 2, size=n_runs)
    return (rng.random((n_tasks, n_runs)) < p[:, None] * m[None, :]).astype(float)


def test_two_level_interval_covers_the_true_mean():
    rng = np.random.default_rng(2024)
    n_exp, truth = 200, 0.3
    two, single = 0, 0
    for e in range(n_exp):
        S = _simulate(rng)
        rep = A.analyse(S, np.arange(S.shape[0]), [f"t{i}" for i in range(S.shape[0])],
                        [f"r{i}" for i in range(S.shape[1])], ["c"] * S.shape[1],
                        n_boot=400, seed=e, n_splits=50)
        p = rep.summary["configs"]["c"]["pass@2"]
        two += p["ci95"][0] <= truth <= p["ci95"][1]
        single += p["ci95_single_run"][0] <= truth <= p["ci95_single_run"][1]
    assert 0.88 * n_exp <= two <= 0.99 * n_exp, two
    assert single <= two - 0.08 * n_exp, (single, two)


def test_winners_curse_with_identical_runs():
    rng = np.random.default_rng(5)
    pub, priv, mean = [], [], []
    for e in range(40):
        p = rng.uniform(0, 0.8, size=200)
        S = (rng.random((200, 6)) < p[:, None]).astype(float)
        rep = A.analyse(S, np.arange(200), [f"t{i}" for i in range(200)],
                        [f"r{i}" for i in range(6)], ["c"] * 6, n_boot=20, seed=e,
                        n_splits=200)
        w = rep.summary["winners_curse"]["c"]
        pub.append(w["public"]), priv.append(w["private"]), mean.append(w["mean"])
    gap_private = np.mean(np.array(priv) - np.array(mean))
    gap_public = np.mean(np.array(pub) - np.array(mean))
    assert abs(gap_private) < 0.01, gap_private     # the picked run is only average
    assert gap_public > 0.02, gap_public            # its public score is inflated


# ------------------------------------------------------------------ harness layout


def test_ensemble_chosen_on_public_halves_by_hand():
    # four tasks, runs r1 = 1010 and r2 = 0100, an ensemble E = 1101; every half of two
    # public tasks (C(4, 2) = 6); candidates in order r1, r2, E, the first on ties:
    # public {0,1}: .5 .5 1 -> E, private {2,3} .5 | {0,2}: 1 0 .5 -> r1, private {1,3} 0
    # {0,3}: .5 0 1 -> E, .5 | {1,2}: .5 .5 .5 -> r1, {0,3} .5 | {1,3}: 0 .5 1 -> E, .5
    # {2,3}: .5 0 .5 -> r1, {0,1} .5
    S = np.array([[1, 0], [0, 1], [1, 0], [0, 0]], dtype=float)
    E = np.array([1, 1, 0, 1], dtype=float)
    rep = A.analyse(S, [0, 1, 2, 3], list("abcd"), ["r1", "r2"], ["c", "c"], n_boot=300,
                    seed=5, ensembles={"E": E})
    h = rep.summary["ensemble"]["held_out"]
    assert h["n_splits"] == 6
    assert h["public"] == pytest.approx(5 / 6)
    assert h["private"] == pytest.approx(2.5 / 6)
    assert h["chosen"] == [{"kind": "run", "name": "r1", "share": 0.5},
                           {"kind": "ensemble", "name": "E", "rule": "votes", "share": 0.5}]
    assert h["most_chosen"]["name"] == "r1"
    assert "ensemble chosen on a public half (most often: run r1, 50% of 6 halves): " \
        "public 0.8333, private 0.4167" in rep.text()
    # among the runs alone: {0,1} r1 -> .5, {0,2} r1 -> 0, {0,3} r1 -> .5, {1,2} r1 -> .5,
    # {1,3} r2 -> 0 (private {0,2}), {2,3} r1 -> .5
    assert h["best_run"]["public"] == pytest.approx(3.5 / 6)
    assert h["best_run"]["private"] == pytest.approx(2 / 6)
    # the interval: bootstrap_ci of the chosen candidate's private tasks (in task order),
    # its ends averaged over the six halves
    chosen = {(0, 1): E, (0, 2): S[:, 0], (0, 3): E, (1, 2): S[:, 0], (1, 3): E,
              (2, 3): S[:, 0]}
    ends = [bootstrap_ci(v[[i for i in range(4) if i not in half]], n_boot=300, seed=5)
            for half, v in chosen.items()]
    assert h["ci95"] == pytest.approx(np.mean(ends, axis=0).tolist())
    assert rep.summary["ensemble"]["sets"]["E"]["pass@2"] == pytest.approx(0.75)


def test_ensemble_held_out_by_a_naive_loop_on_random_runs():
    rng = np.random.default_rng(11)
    codes = np.repeat(np.arange(9), [1, 2, 1, 1, 1, 2, 1, 1, 1])
    S = (rng.random((codes.size, 4)) < 0.5).astype(float)
    ens = {"x": (rng.random(codes.size) < 0.6).astype(float),
           "y": (rng.random(codes.size) < 0.6).astype(float)}
    rep = A.analyse(S, codes, [f"t{i}" for i in range(9)], list("pqrs"), list("ccdd"),
                    n_boot=100, seed=2, n_splits=40, ensembles=ens)
    per_task = np.stack([np.bincount(codes, weights=v) / np.bincount(codes)
                         for v in [*S.T, *ens.values()]], axis=1)
    mask = A._splits(9, 40, 2)  # the same halves as the winner's curse
    pub, priv, lo, hi = [], [], [], []
    for m in mask:
        scores = [per_task[m, c].mean() for c in range(per_task.shape[1])]
        c = scores.index(max(scores))
        pub.append(scores[c])
        priv.append(per_task[~m, c].mean())
        a, b = bootstrap_ci(per_task[~m, c], n_boot=100, seed=2)
        lo.append(a)
        hi.append(b)
    h = rep.summary["ensemble"]["held_out"]
    assert h["n_splits"] == 40
    assert h["public"] == pytest.approx(np.mean(pub))
    assert h["private"] == pytest.approx(np.mean(priv))
    assert h["ci95"] == pytest.approx([np.mean(lo), np.mean(hi)])
    assert sum(c["share"] for c in h["chosen"]) == pytest.approx(1.0)


def test_graded_metric_without_any_value_is_nan():
    S = np.array([[1.0, 0.0], [0.0, 0.0]])
    none = np.full((2, 2), np.nan)
    rep = A.analyse(S, [0, 1], ["a", "b"], ["r1", "r2"], ["c", "c"], n_boot=20,
                    graded={"cell_accuracy": none})
    g = rep.summary["configs"]["c"]["graded"]["cell_accuracy"]
    assert all(math.isnan(g[k]) for k in ("mean", "sd", "min", "max"))
    assert all(math.isnan(x) for x in g["ci95"])
    with pytest.raises(RepeatsError):
        A.analyse(S, [0, 1], ["a", "b"], ["r1", "r2"], ["c", "c"], graded={"pass@9": S})


def test_runs_that_agree_have_an_sd_of_exactly_zero():
    """Per-run numbers that agree up to rounding (the same outputs summed in another
    order: 1e-16 apart) have an SD of 0, not 1.4e-16."""
    x = np.array([0.1 + 0.2, 0.3, 0.3 + 1e-16 * 3])
    assert np.std(x, ddof=1) > 0 and A._sd(x) == 0.0
    assert A._sd(np.array([0.2, 0.3])) == pytest.approx(np.std([0.2, 0.3], ddof=1))
    assert np.isnan(A._sd(np.array([0.5])))


def test_pairs_of_runs_are_bounded(monkeypatch):
    """Past MAX_PAIR_RUNS runs the pairs (Jaccard, best pair) are not computed (their
    memory grows with the square of the runs): said in a note, jaccard left empty."""
    solved = np.array([[1, 0, 1, 1], [0, 1, 1, 0], [1, 1, 0, 0]], dtype=float)
    args = ([0, 1, 2], ["t1", "t2", "t3"], ["r1", "r2", "r3", "r4"], ["A", "A", "B", "B"])
    full = A.analyse(solved, *args, n_boot=20)
    assert full.jaccard.shape == (4, 4) and len(full.summary["best_pair"]["runs"]) == 2
    monkeypatch.setattr(A, "MAX_PAIR_RUNS", 3)
    cut = A.analyse(solved, *args, n_boot=20)
    assert cut.jaccard.empty and cut.summary["best_pair"]["runs"] == []
    assert "at most 3 runs" in cut.summary["best_pair"]["note"]
    assert cut.summary["configs"] == full.summary["configs"]
