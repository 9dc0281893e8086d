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
    import numpy as np

    from arcnb import stats

    v = np.random.default_rng(1).random(997)
    plain = v[stats.bootstrap_indices(v.size, n_boot=301, seed=4)].mean(axis=1)
    for block in (1, 997, 5000, 10 ** 9):
        monkeypatch.setattr(stats, "BOOTSTRAP_CHUNK", block)
        np.testing.assert_array_equal(stats.bootstrap_means(v, n_boot=301, seed=4), plain)
