"""Statistics against hand-computed values: exact McNemar, bootstrap intervals."""
import math

import numpy as np
import pytest

from arcnb.stats import bootstrap_ci, mcnemar_exact, mcnemar_table, paired_bootstrap_ci


def test_mcnemar_hand_computed():
    # n = 10 discordant, min = 1: p = 2 * (C(10,0) + C(10,1)) / 2^10 = 22 / 1024
    assert mcnemar_exact(1, 9) == pytest.approx(22 / 1024, abs=0)
    assert mcnemar_exact(9, 1) == mcnemar_exact(1, 9)
    # n = 8, min = 3: 2 * (1 + 8 + 28 + 56) / 256
    assert mcnemar_exact(3, 5) == pytest.approx(186 / 256, abs=0)
    # balanced tables are capped at 1, no discordant pair gives 1
    assert mcnemar_exact(5, 5) == 1.0
    assert mcnemar_exact(0, 0) == 1.0
    # all discordant pairs on one side: 2 / 2^n
    assert mcnemar_exact(0, 6) == pytest.approx(2 / 64, abs=0)
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 3)


def test_mcnemar_table_counts_a_hand_made_2x2():
    # both: 2, a only: 1, b only: 4, neither: 3
    a = [1, 1, 1, 0, 0, 0, 0, 0, 0, 0]
    b = [1, 1, 0, 1, 1, 1, 1, 0, 0, 0]
    t = mcnemar_table(a, b)
    assert (t["n_both"], t["n_a_only"], t["n_b_only"], t["n_neither"], t["n"]) == (2, 1, 4, 3, 10)
    # n = 5 discordant, min 1: 2 * (1 + 5) / 32
    assert t["p_value"] == pytest.approx(12 / 32, abs=0)


def test_bootstrap_of_a_constant_is_that_constant():
    assert bootstrap_ci([0.25] * 37, n_boot=200, seed=3) == (0.25, 0.25)
    assert bootstrap_ci([1.0]) == (1.0, 1.0)
    lo, hi = bootstrap_ci([])
    assert math.isnan(lo) and math.isnan(hi)


def test_paired_comparison_of_a_run_with_itself_is_exactly_zero():
    rng = np.random.default_rng(1)
    a = rng.random(400)
    assert paired_bootstrap_ci(a, a) == (0.0, 0.0, 0.0)


def test_paired_bootstrap_matches_mean_difference_and_normal_approximation():
    rng = np.random.default_rng(7)
    a = (rng.random(2000) < 0.4).astype(float)
    b = np.where(rng.random(2000) < 0.8, a, 1 - a)
    diff, lo, hi = paired_bootstrap_ci(a, b, n_boot=2000, seed=0)
    assert diff == pytest.approx(b.mean() - a.mean())
    assert lo <= diff <= hi
    # normal approximation of the paired difference, computed independently
    d = b - a
    se = d.std(ddof=1) / math.sqrt(d.size)
    assert lo == pytest.approx(diff - 1.96 * se, abs=0.25 * se + 1e-3)
    assert hi == pytest.approx(diff + 1.96 * se, abs=0.25 * se + 1e-3)
    # seeded: the same seed gives the same interval
    assert paired_bootstrap_ci(a, b, n_boot=2000, seed=0) == (diff, lo, hi)


def test_paired_bootstrap_constant_shift_and_bad_input():
    a = np.linspace(0, 1, 11)
    assert paired_bootstrap_ci(a, a + 0.5) == pytest.approx((0.5, 0.5, 0.5), abs=1e-12)
    with pytest.raises(ValueError):
        paired_bootstrap_ci([1, 2], [1, 2, 3])
    assert all(math.isnan(x) for x in paired_bootstrap_ci([], []))


@pytest.mark.parametrize("seed", [-1, 2 ** 63, 10 ** 23, 1.5, True, "0"])
def test_a_seed_out_of_range_is_one_parameter_error(seed):
    from arcnb.errors import ParameterError
    from arcnb.stats import bootstrap_ci, bootstrap_indices, check_seed

    with pytest.raises(ParameterError, match="the seed must be a whole number from 0 to "
                                             "9223372036854775807"):
        check_seed(seed)
    with pytest.raises(ParameterError):
        bootstrap_indices(3, seed=seed)
    with pytest.raises(ParameterError):
        bootstrap_ci([0.0, 1.0], seed=seed)
    assert check_seed(2 ** 63 - 1) == 2 ** 63 - 1


def test_n_boot_is_bounded():
    from arcnb.errors import ParameterError
    from arcnb.stats import MAX_N_BOOT, check_n_boot

    assert check_n_boot(MAX_N_BOOT) == MAX_N_BOOT
    with pytest.raises(ParameterError, match="from 1 to 100000, got 1000000000"):
        check_n_boot(10 ** 9)


def test_bootstrap_means_in_blocks_draws_what_one_block_draws(monkeypatch):
    """The means are computed a block of resamples at a time (bounded memory for
    300,000 units) from the same draws as :func:`bootstrap_indices` at once: equal to
    the plain computation, exactly, whatever the block size."""
    from arcnb import stats

    v = np.random.default_rng(1).random(997)
    plain = v[stats.bootstrap_indices(v.size, n_boot=301, seed=4)].mean(axis=1)
    for block in (1, 997, 5000, 10 ** 9):
        monkeypatch.setattr(stats, "BOOTSTRAP_CHUNK", block)
        np.testing.assert_array_equal(stats.bootstrap_means(v, n_boot=301, seed=4), plain)


def test_student_t_against_closed_forms_and_the_table():
    from arcnb.stats import t_quantile, t_sf
    ts = np.array([-3.0, -0.5, 0.0, 0.7, 2.0, 12.0])
    # 1 df is Cauchy: P(T >= t) = 1/2 - atan(t) / pi; 2 df: 1/2 - t / (2 sqrt(2 + t^2))
    assert t_sf(ts, 1) == pytest.approx(0.5 - np.arctan(ts) / math.pi, abs=1e-12)
    assert t_sf(ts, 2) == pytest.approx(0.5 - ts / (2 * np.sqrt(2 + ts ** 2)), abs=1e-12)
    # infinite df is the normal: P(Z >= 1.96) = 0.0249979
    assert t_sf(1.96, math.inf) == pytest.approx(0.024997895, abs=1e-9)
    # the t table's 97.5 % and 80 % points
    table = {1: (12.706, 1.376), 2: (4.303, 1.061), 4: (2.776, 0.941), 10: (2.228, 0.879),
             30: (2.042, 0.854), math.inf: (1.960, 0.842)}
    for df, (q975, q80) in table.items():
        assert t_quantile(0.975, df) == pytest.approx(q975, abs=5e-4)
        assert t_quantile(0.8, df) == pytest.approx(q80, abs=5e-4)
    # 1 df in closed form: tan(pi (q - 1/2)); the quantile inverts the tail, also for
    # degrees of freedom that are not whole numbers
    qs = np.array([0.01, 0.2, 0.5, 0.9, 0.999])
    assert t_quantile(qs, 1) == pytest.approx(np.tan(math.pi * (qs - 0.5)), abs=1e-9)
    df = np.array([0.6, 1.7, 3.3, 17.5, 250.0])
    x = t_quantile(0.975, df)
    assert t_sf(x, df) == pytest.approx(np.full(5, 0.025), abs=1e-12)
    assert np.all(np.diff(x) < 0)  # more degrees of freedom, a smaller quantile
    # no degrees of freedom, or a level outside (0, 1): NaN
    assert math.isnan(t_quantile(0.975, 0)) and math.isnan(t_quantile(1.0, 5))
    assert math.isnan(t_sf(1.0, float("nan")))


def test_student_t_upper_tail_inverse_keeps_tiny_tails():
    from arcnb.stats import t_isf
    # 2 df: P(T >= t) = 1/2 - t / (2 sqrt(2 + t^2)), so t = (1 - 2p) sqrt(2 / (4p(1 - p)))
    for p in (0.3, 0.025, 1e-6, 1e-30):
        assert t_isf(p, 2) == pytest.approx((1 - 2 * p) * math.sqrt(2 / (4 * p * (1 - p))),
                                            rel=1e-8)
    assert t_isf(0.025, 10) == pytest.approx(2.228, abs=5e-4)
    assert t_isf(0.975, 10) == pytest.approx(-2.228, abs=5e-4)
    assert t_isf(0.5, 7) == 0.0 and math.isnan(t_isf(0.0, 7))
