"""The test and the intervals of many runs (arcnb.repeats.inference): a plain loop for
the arithmetic, and simulations with a known truth for the level, the coverage and the
power, through the same functions ``arcnb repeats`` calls.

The simulation (as scripts/repeats_simulation.py): 80 tasks drawn afresh per
experiment, a task's difficulty N(-1, 2) on the logit scale, a per-run seed shift
N(0, seed SD) that moves every task of the run, each run solving each task with
probability expit(difficulty + shift). Tolerance: 1,000 experiments per scenario, so a
rate near 5 % (95 %) has a binomial SD of sqrt(.05 * .95 / 1000) = 0.0069; the checks
allow 3 SD (0.021) on both sides for the rejection rate (and so for the coverage of the
difference's interval: the same test). The interval of a configuration's mean must cover
at least 95 % - 3 SD and at most 98.5 %: it is conservative with two or three runs and no
seed effect (the runs' part weighs Student's t with 1 or 2 degrees of freedom, since so
few runs cannot tell a seed-free system apart), 98.3 % at worst in the guide's table, far
from the old interval of the difference that covered 0 in 100 %."""
from __future__ import annotations

import math
import statistics

import numpy as np
import pytest

from arcnb import repeats as R
from arcnb.repeats.inference import (NOTE_ONE_RUN, NOTE_ONE_RUN_CONFIG, compare,
                                     config_interval, mixed_p, mixed_quantile, runs_needed,
                                     two_way)
from arcnb.stats import t_quantile, t_sf

N_EXP, N_TASKS = 1000, 80
SD3 = 3 * math.sqrt(0.05 * 0.95 / N_EXP)


def _expit(x):
    return 1.0 / (1.0 + np.exp(-x))


def _simulate(rng, n_runs, seed_sd, effect=0.0, n_exp=N_EXP):
    theta = rng.normal(-1.0, 2.0, (n_exp, N_TASKS, 1))
    out = []
    for shift in (0.0, effect):
        u = rng.normal(0.0, seed_sd, (n_exp, 1, n_runs))
        out.append((rng.random((n_exp, N_TASKS, n_runs)) < _expit(theta + shift + u))
                   .astype(float))
    return out


def _true_mean(seed_sd):
    x, w = np.polynomial.hermite_e.hermegauss(120)
    return float((w * _expit(-1.0 + math.hypot(2.0, seed_sd) * x)).sum() / w.sum())


# ------------------------------------------------------------------ a plain loop
def _plain(P):
    """Task means, the variances over tasks and runs and the residual mean square of a
    task x run list of lists, one number at a time."""
    t, n = len(P), len(P[0])
    tm = [sum(row) / n for row in P]
    rm = [sum(P[i][r] for i in range(t)) / t for r in range(n)]
    g = sum(tm) / t
    ss = sum((P[i][r] - tm[i] - rm[r] + g) ** 2 for i in range(t) for r in range(n))
    return tm, statistics.variance(tm), statistics.variance(rm), ss / ((t - 1) * (n - 1))


def test_the_arithmetic_against_a_plain_loop():
    rng = np.random.default_rng(11)
    Pa = rng.choice([0.0, 0.5, 1.0], size=(12, 3))
    Pb = rng.choice([0.0, 0.5, 1.0], size=(12, 4))
    Pb[:, 0] = 1.0  # a run that solves everything: the runs of B differ a lot
    tma, vta, vra, msa = _plain(Pa.tolist())
    tmb, vtb, vrb, msb = _plain(Pb.tolist())
    w = two_way(Pa)
    assert w["var_tasks"] == pytest.approx(vta) and w["var_runs"] == pytest.approx(vra)
    assert w["ms_resid"] == pytest.approx(msa)
    # a configuration's interval: the parts, Cochran and Cox's weighted t quantile
    ci = config_interval(Pa)
    vt, vr = max(0.0, vta - msa / 3) / 12, vra / 3
    q = (vt * t_quantile(0.975, 11) + vr * t_quantile(0.975, 2)) / (vt + vr)
    m = sum(tma) / 12
    assert (ci["var_tasks"], ci["var_runs"]) == pytest.approx((vt, vr))
    assert (ci["low"], ci["high"]) == pytest.approx(
        (max(0.0, m - q * math.sqrt(vt + vr)), min(1.0, m + q * math.sqrt(vt + vr))))
    # the difference: the interaction (kept when positive) and the pooled run spread;
    # the critical value weighs the t quantiles of 11 (tasks) and 5 (runs) degrees of
    # freedom by the two parts' shares
    d = [b - a for a, b in zip(tma, tmb)]
    vd = statistics.variance(d)
    c_int = max(0.0, vd - msa / 3 - msb / 4) / 12
    c_run = (2 * vra + 3 * vrb) / 5 * (1 / 3 + 1 / 4)
    var = c_int + c_run
    w = c_int / var
    diff = statistics.fmean(d)
    c = compare(Pa, Pb)
    assert c["diff"] == pytest.approx(diff) and c["se"] == pytest.approx(math.sqrt(var))
    assert c["share_tasks"] == pytest.approx(w)

    def crit(level):
        return w * t_quantile(level, 11) + (1 - w) * t_quantile(level, 5)

    q = crit(0.975)
    assert (c["low"], c["high"]) == pytest.approx((diff - q * math.sqrt(var),
                                                   diff + q * math.sqrt(var)))
    assert c["mde80"] == pytest.approx((q + crit(0.8)) * math.sqrt(var))
    # the p-value is the level whose critical value is |diff| / se
    assert crit(1 - c["p"] / 2) == pytest.approx(abs(diff) / math.sqrt(var), rel=1e-8)
    # the p-value and the interval describe one test: 0 is outside exactly when p < .05
    assert (c["p"] < 0.05) == (not c["low"] <= 0 <= c["high"])


def test_mixed_p_inverts_mixed_quantile():
    w = np.array([0.0, 0.2, 0.5, 0.9, 1.0])
    for tail in (0.4, 0.025, 1e-4, 1e-15):
        x = mixed_quantile(tail, w, 79, 3)
        assert mixed_p(x, w, 79, 3) == pytest.approx(np.full(5, 2 * tail), rel=1e-7)
    # between the two t distributions' own p-values
    p = mixed_p(2.5, 0.5, 79, 2)
    assert 2 * t_sf(2.5, 79) < p < 2 * t_sf(2.5, 2)


def test_the_command_calls_these_functions():
    rng = np.random.default_rng(3)
    A, B = _simulate(rng, 3, 0.5, n_exp=1)
    S = np.concatenate([A[0], B[0]], axis=1)
    rep = R.analyse(S, np.arange(N_TASKS), [f"t{i}" for i in range(N_TASKS)],
                    [f"r{i}" for i in range(6)], ["a"] * 3 + ["b"] * 3, n_boot=50,
                    n_splits=10)
    (cmp,) = rep.summary["comparisons"]
    c, ci = compare(A[0], B[0]), config_interval(A[0])
    assert cmp["ci95"] == pytest.approx([c["low"], c["high"]])
    assert (cmp["p"], cmp["mde80"]) == pytest.approx((float(c["p"]), float(c["mde80"])))
    assert rep.summary["configs"]["a"]["pass@2"]["ci95"] == pytest.approx(
        [ci["low"], ci["high"]])
    assert cmp["runs_needed"] == runs_needed(float(c["var_interaction"]),
                                             float(c["var_run"]), N_TASKS)
    row = rep.comparisons.iloc[0]
    assert (row["p"], row["mde80"], row["se"]) == pytest.approx(
        (float(c["p"]), float(c["mde80"]), float(c["se"])))


def test_too_few_runs_or_tasks_are_said_not_guessed():
    P = np.array([[1.0, 0.0], [0.0, 0.0], [1.0, 1.0]])
    c = compare(P[:, :1], P)
    assert c["note"] == NOTE_ONE_RUN and math.isnan(c["p"]) and math.isnan(c["mde80"])
    assert c["diff"] == pytest.approx(P.mean() - P[:, 0].mean())
    one = config_interval(P[:, :1])
    assert one["note"] == NOTE_ONE_RUN_CONFIG and math.isnan(one["low"])
    assert math.isnan(compare(P[:1], P[:1])["p"])  # one task


# ------------------------------------------------------------------ simulations
@pytest.mark.parametrize("seed_sd", [0.0, 0.5, 1.0])
def test_identical_configurations_hold_the_level_and_the_coverage(seed_sd):
    rng = np.random.default_rng(2026 + int(seed_sd * 10))
    truth = _true_mean(seed_sd)
    for n in (2, 3, 5):
        A, B = _simulate(rng, n, seed_sd)
        c, ci = compare(A, B), config_interval(A)
        assert not np.isnan(c["p"]).any()
        reject = float(np.mean(c["p"] < 0.05))
        covers = float(np.mean((c["low"] <= 0) & (0 <= c["high"])))
        mean_covers = float(np.mean((ci["low"] <= truth) & (truth <= ci["high"])))
        # one test: the interval misses 0 exactly when p < 0.05
        assert covers == pytest.approx(1 - reject, abs=1e-9)
        msg = (seed_sd, n, reject, covers, mean_covers)
        assert reject <= 0.05 + SD3, msg
        assert mean_covers >= 0.95 - SD3 and mean_covers <= 0.985, msg
        assert reject >= 0.05 - SD3, msg


def test_the_old_sign_flip_test_would_have_rejected_often():
    # the same seed effects through the per-task differences alone (what the old test
    # tested): far above 5 %, while the new test holds it (previous test)
    rng = np.random.default_rng(7)
    A, B = _simulate(rng, 3, 0.5, n_exp=400)
    d = B.mean(axis=2) - A.mean(axis=2)
    t = d.mean(axis=1) / np.sqrt(d.var(axis=1, ddof=1) / N_TASKS)
    assert np.mean(2 * t_sf(np.abs(t), N_TASKS - 1) < 0.05) > 0.15
    assert np.mean(compare(A, B)["p"] < 0.05) <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 400)


def test_a_real_difference_is_found():
    # B +1 on the logit scale (about +0.15 pass@2), five runs each
    rng = np.random.default_rng(99)
    A, B = _simulate(rng, 5, 0.25, effect=1.0, n_exp=400)
    c = compare(A, B)
    assert np.mean(c["p"] < 0.05) >= 0.85
    A, B = _simulate(rng, 5, 0.0, effect=1.0, n_exp=400)
    assert np.mean(compare(A, B)["p"] < 0.05) >= 0.95
    # mde80 is what the power says: a difference of about mde80 is found about 80 % of
    # the time; the mean mde80 here is near the true difference (0.15) or above
    assert float(np.median(c["mde80"])) > 0.05
