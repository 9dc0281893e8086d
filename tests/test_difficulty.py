"""Task difficulty across systems (arcnb.difficulty): recovery of known abilities and
difficulties on simulated systems, equality with an independent logistic regression
(plain Newton in numpy, full dense Hessian), finite estimates and wide intervals at the
edges, surprises computed by hand, the difficulty bins, the files, and compare's
summary and difficulty.csv through the command line."""
import json

import numpy as np
import pandas as pd
import pytest

from _cli import cli, one_line_refusal
from arcnb.breakdown import breakdown
from arcnb.compare import compare
from arcnb.data import load_dataset
from arcnb.difficulty import (PRIOR_SD, difficulty_bins, fit_difficulty, fit_irt,
                              read_difficulty, read_solve_rates, surprises)
from arcnb.errors import InputFileError, ParameterError
from arcnb.scoring import score
from submissions import synthetic_submission

Z = 1.959963984540054


def _simulate(ns, ni, seed, *, two=False):
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 1.2, ns)
    b = rng.normal(0, 1.5, ni)
    a = np.exp(rng.normal(0, 0.4, ni)) if two else np.ones(ni)
    p = 1 / (1 + np.exp(-a[None, :] * (theta[:, None] - b[None, :])))
    y = (rng.random((ns, ni)) < p).astype(float)
    return y, theta - b.mean(), b - b.mean(), a


def _spearman(x, y):
    return float(pd.Series(x).rank().corr(pd.Series(y).rank()))


def _reference(y, n, prior_sd):
    """Rasch MAP as a logistic regression on system and output indicators with the
    Gaussian prior: plain Newton on the full dense Hessian (one row per cell, binomial
    weights), then centred; the SDs of the centred values from the dense inverse."""
    ns, ni = y.shape
    s_idx, j_idx = np.divmod(np.arange(ns * ni), ni)
    X = np.zeros((ns * ni, ns + ni))
    X[np.arange(ns * ni), s_idx] = 1.0
    X[np.arange(ns * ni), ns + j_idx] = -1.0
    yy, nn = y.ravel(), n.ravel()
    beta = np.zeros(ns + ni)
    for _ in range(100):
        p = 1 / (1 + np.exp(-(X @ beta)))
        grad = X.T @ (yy - nn * p) - beta / prior_sd ** 2
        H = (X * (nn * p * (1 - p))[:, None]).T @ X + np.eye(ns + ni) / prior_sd ** 2
        step = np.linalg.solve(H, grad)
        beta += step
        if np.abs(step).max() < 1e-12:
            break
    p = 1 / (1 + np.exp(-(X @ beta)))
    H = (X * (nn * p * (1 - p))[:, None]).T @ X + np.eye(ns + ni) / prior_sd ** 2
    cov = np.linalg.inv(H)
    # centred: theta_s - mean(b), b_j - mean(b) as linear maps of beta
    centre = np.zeros((ns + ni, ns + ni))
    centre[:ns, :ns] = np.eye(ns)
    centre[ns:, ns:] = np.eye(ni)
    centre[:, ns:] -= 1.0 / ni
    est = centre @ beta
    sd = np.sqrt(np.diag(centre @ cov @ centre.T))
    return est[:ns], est[ns:], sd[:ns], sd[ns:]


# ---------------------------------------------------------------------------- recovery
def test_rasch_recovers_known_abilities_and_difficulties():
    """40 systems x 300 outputs drawn from a Rasch model (abilities N(0, 1.2^2),
    difficulties N(0, 1.5^2)): measured here, rank correlation 0.96 (difficulties) and
    0.98 (abilities), mean absolute error 0.33 and 0.13 logits, 95% intervals covering
    94.0% and 92.5%."""
    y, theta, b, _ = _simulate(40, 300, seed=1)
    f = fit_irt(y)
    assert f.converged
    assert _spearman(f.difficulty, b) > 0.93 and _spearman(f.ability, theta) > 0.96
    assert np.abs(f.difficulty - b).mean() < 0.45 and np.abs(f.ability - theta).mean() < 0.25
    cover_b = np.mean(np.abs(f.difficulty - b) <= Z * f.difficulty_sd)
    cover_t = np.mean(np.abs(f.ability - theta) <= Z * f.ability_sd)
    assert 0.88 <= cover_b <= 0.995 and 0.85 <= cover_t <= 1.0
    assert abs(f.difficulty.mean()) < 1e-9  # centred


def test_2pl_recovers_difficulties_and_discriminations():
    """60 systems x 300 outputs from a 2PL model (log discrimination N(0, 0.4^2)):
    measured here, rank correlation 0.97 (difficulties), 0.68 (discriminations), 0.99
    (abilities); mean absolute error of the difficulties 0.32 logits."""
    y, theta, b, a = _simulate(60, 300, seed=2, two=True)
    f = fit_irt(y, model="2pl")
    assert f.converged
    assert _spearman(f.difficulty, b) > 0.93 and _spearman(f.ability, theta) > 0.97
    assert _spearman(f.discrimination, a) > 0.4
    # a Rasch model has discriminations one by construction
    assert np.all(fit_irt(y).discrimination == 1.0)


# ---------------------------------------------------------------------------- reference
@pytest.mark.parametrize("prior_sd", [PRIOR_SD, 1.0])
def test_rasch_equals_an_independent_logistic_regression(prior_sd):
    y, *_ = _simulate(12, 30, seed=3)
    f = fit_irt(y, prior_sd=prior_sd)
    theta, b, sd_t, sd_b = _reference(y, np.ones_like(y), prior_sd)
    np.testing.assert_allclose(f.ability, theta, atol=1e-4)
    np.testing.assert_allclose(f.difficulty, b, atol=1e-4)
    np.testing.assert_allclose(f.ability_sd, sd_t, atol=1e-4)
    np.testing.assert_allclose(f.difficulty_sd, sd_b, atol=1e-4)


def test_counts_and_missing_cells_equal_the_reference():
    """Pooled runs are binomial counts; a cell with no trial is missing."""
    rng = np.random.default_rng(4)
    n = rng.integers(0, 4, size=(8, 20)).astype(float)
    y = np.floor(rng.random(n.shape) * (n + 1))
    f = fit_irt(y, n)
    theta, b, _, sd_b = _reference(y, n, PRIOR_SD)
    np.testing.assert_allclose(f.ability, theta, atol=1e-4)
    np.testing.assert_allclose(f.difficulty, b, atol=1e-4)
    np.testing.assert_allclose(f.difficulty_sd, sd_b, atol=1e-4)


def test_task_interval_is_the_sd_of_the_mean_of_its_outputs():
    y, *_ = _simulate(10, 12, seed=5)
    f = fit_irt(y)
    groups = np.zeros((12, 3))
    groups[[0, 1, 2], 0] = groups[[3], 1] = groups[4:, 2] = 1
    # the reference: the dense covariance of the centred difficulties, averaged
    ns, ni = y.shape
    beta = np.concatenate([f.ability, f.difficulty])  # shift-invariant: probabilities only
    s_idx, j_idx = np.divmod(np.arange(ns * ni), ni)
    X = np.zeros((ns * ni, ns + ni))
    X[np.arange(ns * ni), s_idx], X[np.arange(ns * ni), ns + j_idx] = 1.0, -1.0
    p = 1 / (1 + np.exp(-(X @ beta)))
    cov = np.linalg.inv((X * (p * (1 - p))[:, None]).T @ X + np.eye(ns + ni) / PRIOR_SD ** 2)
    L = np.zeros((ns + ni, 3))
    L[ns:] = groups / groups.sum(axis=0) - 1.0 / ni
    np.testing.assert_allclose(f.mean_sd(groups), np.sqrt(np.diag(L.T @ cov @ L)), atol=1e-6)


# ---------------------------------------------------------------------------- edges
def test_all_solved_and_none_solved_outputs_are_finite_with_wide_intervals():
    y, *_ = _simulate(15, 40, seed=6)
    y[:, 0] = 1.0  # every system solves output 0
    y[:, 1] = 0.0  # none solves output 1
    y[2, :] = 1.0  # system 2 solves everything
    for model in ("rasch", "2pl"):
        f = fit_irt(y, model=model)
        assert np.isfinite(f.difficulty).all() and np.isfinite(f.ability).all()
        assert np.isfinite(f.difficulty_sd).all() and np.isfinite(f.ability_sd).all()
        median = np.median(f.difficulty_sd[2:])
        # measured: 2.2 and 1.8 times the median SD (Rasch), the data still say "very easy"
        assert f.difficulty_sd[0] > 1.5 * median and f.difficulty_sd[1] > 1.5 * median
        assert f.difficulty[0] == f.difficulty.min() and f.difficulty[1] == f.difficulty.max()
        assert f.ability[2] == f.ability.max()
    f = fit_irt(np.ones((3, 4)))  # every system solves everything: the prior alone holds
    assert np.isfinite(f.ability).all() and np.isfinite(f.difficulty).all()


def test_bad_arguments_are_refused():
    with pytest.raises(ParameterError, match="model"):
        fit_irt(np.ones((2, 2)), model="3pl")
    with pytest.raises(ParameterError, match="prior_sd"):
        fit_irt(np.ones((2, 2)), prior_sd=0)
    with pytest.raises(ParameterError):
        fit_irt(np.full((2, 2), 2.0))  # more successes than trials


# ---------------------------------------------------------------------------- surprises
def test_surprises_of_a_hand_built_probability_matrix():
    prob = np.array([[0.95, 0.80, 0.79, 0.10],
                     [0.50, 0.85, 0.20, 0.21]])
    share = np.array([[0.0, 0.0, 0.0, 1.0],
                      [0.0, np.nan, 1.0, 1.0]])
    surprise, beyond = surprises(prob, share)
    # by hand: surprises = never solved and p >= 0.8; beyond = always solved and p <= 0.2
    assert [tuple(x) for x in np.argwhere(surprise)] == [(0, 0), (0, 1)]
    assert [tuple(x) for x in np.argwhere(beyond)] == [(0, 3), (1, 2)]


class _R:
    """The few attributes fit_difficulty reads of a run."""

    def __init__(self, label, solved):
        self.label = label
        self.results = type("Res", (), {})()
        self.results.outputs = pd.DataFrame({"task_id": ["t1", "t1", "t2", "t3", "t4", "t5"],
                                             "test_index": [0, 1, 0, 0, 0, 0],
                                             "solved@2": np.asarray(solved, bool)})


def test_surprises_of_a_hand_built_matrix():
    """Five systems in a Guttman pattern (the strongest solves the most) on six outputs,
    but the strongest fails the easiest output: its one surprise."""
    rows = [[0, 1, 1, 1, 1, 1],  # strongest: fails the easiest output (t1:0)
            [1, 1, 1, 1, 1, 0],
            [1, 1, 1, 1, 0, 0],
            [1, 1, 1, 0, 0, 0],
            [1, 1, 0, 0, 0, 0]]
    runs = [_R(f"s{i}", r) for i, r in enumerate(rows)]
    d = fit_difficulty(runs, prior_sd=1.5)
    prob = d.fit.probability()
    # by hand from the fit's probabilities: the never-solved cells at p >= 0.8
    expected = [(f"s{s}", j) for s, j in zip(*np.nonzero((np.array(rows) == 0) & (prob >= 0.8)))]
    assert expected == [("s0", 0)]
    assert d.summary()["surprises"]["s0"] == ["t1:0"]
    assert all(v == [] for k, v in d.summary()["surprises"].items() if k != "s0")
    assert d.abilities.set_index("system").loc["s0", "n_surprises"] == 1


def test_pooling_sums_the_runs_of_a_configuration():
    runs = [_R("a", [1, 1, 0, 0, 1, 0]), _R("a#2", [1, 0, 0, 1, 1, 0]),
            _R("b", [1, 1, 1, 0, 0, 0])]
    d = fit_difficulty(runs, pool=True)
    assert list(d.abilities["system"]) == ["a", "b"] and d.members["a"] == ["a", "a#2"]
    y = np.array([[2, 1, 0, 1, 2, 0], [1, 1, 1, 0, 0, 0]], float)
    n = np.array([[2] * 6, [1] * 6], float)
    np.testing.assert_allclose(d.fit.ability, fit_irt(y, n).ability, atol=1e-10)
    np.testing.assert_allclose(d.outputs["solve_share"], [1.0, 0.75, 0.5, 0.25, 0.5, 0.0])
    with pytest.raises(ParameterError, match="not compared"):
        fit_difficulty(runs, pool={"zz": "a"})


# ---------------------------------------------------------------------------- bins, files
def test_difficulty_bins_keep_equal_values_together():
    v = np.array([-2.0, -1.0, -1.0, -1.0, 0.0, 0.5, 1.0, 1.0, 3.0, 3.0 + 1e-9])
    idx, labels = difficulty_bins(v, 5)
    for x in np.unique(np.round(v, 6)):
        assert len(set(idx[np.round(v, 6) == x])) == 1
    assert labels[0].startswith("1 easiest") and labels[-1].split()[1] == "hardest"
    assert list(idx) == sorted(idx)  # ordered with the values
    idx, labels = difficulty_bins(np.zeros(4))
    assert list(idx) == [0] * 4 and labels == ["1 (0.0 to 0.0)"]


@pytest.fixture(scope="module")
def cmp():
    ds = load_dataset("arc-agi-1:evaluation").select(
        load_dataset("arc-agi-1:evaluation").task_ids[:60])
    res = [score(ds, synthetic_submission(ds, "mixed", seed, p_second=0.45,
                                          second_wrong="input")) for seed in range(6)]
    return compare(res, labels=[f"sys{i}" for i in range(6)], n_boot=50, taxonomy=None)


def test_compare_summary_follows_the_contract(cmp):
    s = cmp.summary["difficulty"]
    assert s["model"] == "rasch" and s["prior_sd"] == PRIOR_SD
    assert set(s["systems"]) == {f"sys{i}" for i in range(6)}
    for v in s["systems"].values():
        lo, hi = v["ci95"]
        assert lo < v["ability"] < hi
    assert set(s["tasks"]) == set(cmp.task_ids)
    out = cmp.difficulty.outputs
    for tid, v in s["tasks"].items():  # a task's difficulty is the mean of its outputs'
        assert v["difficulty"] == pytest.approx(out.loc[out["task_id"] == tid,
                                                        "difficulty"].mean())
    assert set(s["surprises"]) == set(s["systems"])
    assert "pareto_front" in cmp.tables["runs"]


def test_difficulty_csv_is_a_taxonomy_for_breakdowns(cmp, tmp_path):
    path = cmp.difficulty.write_csv(tmp_path / "difficulty.csv")
    tax = read_difficulty(path)
    tasks = cmp.difficulty.tasks.set_index("task_id")
    assert {t: tax[t][0] for t in tax.task_ids} == tasks["category"].to_dict()
    table = breakdown(cmp.runs[0].results, tax, n_boot=50)
    assert list(table["group"]) == sorted(table["group"], key=lambda g: int(g.split()[0]))
    # the plain file is read by the taxonomy reader too (its category column)
    assert set(breakdown(cmp.runs[0].results, str(path), n_boot=50)["group"]) == \
        set(table["group"])
    df = pd.read_csv(path)
    assert df["task_difficulty"].is_monotonic_increasing
    assert df["solve_share"].between(0, 1).all()


@pytest.mark.parametrize("text, needle", [
    ("task_id,category\nt1,1 easy\n", "task_difficulty"),
    ("task_id,category,task_difficulty\n", "no rows"),
    ("task_id,category,task_difficulty\nt1,1,abc\n", "row 2"),
    ("task_id,category,task_difficulty\nt1,1,0.5\nt1,2,0.5\n", "two difficulty bins"),
])
def test_read_difficulty_refuses_a_bad_file(tmp_path, text, needle):
    p = tmp_path / "d.csv"
    p.write_text(text)
    with pytest.raises(InputFileError, match=needle):
        read_difficulty(p)


def test_solve_rates_are_read_checked_and_correlated(cmp, tmp_path):
    p = tmp_path / "human.csv"
    tasks = cmp.difficulty.tasks
    # people find the same tasks hard: the solve rate falls with the fitted difficulty
    rate = 1 / (1 + np.exp(tasks["difficulty"].round(6).to_numpy()))
    pd.DataFrame({"task_id": tasks["task_id"], "solve_rate": rate}).to_csv(p, index=False)
    d = fit_difficulty(cmp, solve_rates=p)
    assert d.summary()["human"]["spearman"] == pytest.approx(-1.0)
    assert len(d.human) == len(tasks)
    p.write_text("task_id,solve_rate\nt1,1.5\n")
    with pytest.raises(InputFileError, match=r"\[0, 1\]"):
        read_solve_rates(p)


# ---------------------------------------------------------------------------- command line
def _predictions(tmp_path):
    ds = load_dataset("arc-agi-1:evaluation")
    runs = []
    for kind, seed in (("mixed", 0), ("mixed", 1), ("copy", 0)):
        p = tmp_path / f"{kind}{seed}.json"
        p.write_text(json.dumps(synthetic_submission(ds, kind, seed)))
        runs.append(p)
    return runs


def test_cli_compare_writes_difficulty(tmp_path):
    runs = _predictions(tmp_path)
    out = tmp_path / "cmp"
    r = cli("compare", *runs, "--dataset", "arc-agi-1:evaluation", "--out", out,
            "--n-boot", 50, "--taxonomy", "none", "--difficulty-model", "2pl")
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())["difficulty"]
    assert {"model", "prior_sd", "systems", "tasks", "surprises"} <= set(s)
    assert s["model"] == "2pl" and len(s["systems"]) == 3 and len(s["tasks"]) == 400
    assert all(len(v["ci95"]) == 2 for v in s["tasks"].values())
    assert "difficulty:" in r.stdout
    assert (out / "difficulty.csv").is_file()
    bad = tmp_path / "bad.csv"
    bad.write_text("task_id,solve_rate\nt1,0.5\n")
    r = cli("compare", *runs[:2], "--dataset", "arc-agi-1:evaluation", "--out",
            tmp_path / "c2", "--human-solve-rates", bad)
    assert r.returncode == 0, r.stderr  # a good solve-rate file
    bad.write_text("task_id,solve_rate\nt1,2\n")
    r = cli("compare", *runs[:2], "--dataset", "arc-agi-1:evaluation", "--out",
            tmp_path / "c3", "--human-solve-rates", bad)
    one_line_refusal(r.returncode, r.stderr, "solve_rate")


def test_report_refuses_a_bad_difficulty_file_in_one_line(tmp_path):
    runs = _predictions(tmp_path)
    bad = tmp_path / "bad.csv"
    bad.write_text("task_id,solve_rate\nt1,0.5\n")
    r = cli("report", "--predictions", runs[0], "--dataset", "arc-agi-1:evaluation",
            "--difficulty", bad, "--out", tmp_path / "rep", "--no-notebook")
    one_line_refusal(r.returncode, r.stderr, "difficulty file", "task_difficulty")
    assert not (tmp_path / "rep").exists()  # refused before any work
    good = tmp_path / "cmp"
    assert cli("compare", *runs, "--dataset", "arc-agi-1:evaluation", "--out", good,
               "--n-boot", 20, "--taxonomy", "none").returncode == 0
    r = cli("report", "--predictions", runs[0], "--dataset", "arc-agi-1:evaluation",
            "--difficulty", good / "difficulty.csv", "--taxonomy", bad, "--out",
            tmp_path / "rep", "--no-notebook")
    one_line_refusal(r.returncode, r.stderr, "--difficulty or --taxonomy")
