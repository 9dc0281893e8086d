"""Majority voting (arcnb/voting.py): the ranks and the top-k probabilities of both tie
rules against enumerating every order of the tied grids by hand."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from arcnb.errors import ParameterError
from arcnb.voting import TIE_RULES, check_tie, majority_vote, vote_ensemble


def naive_top(votes, after, order, k, tie):
    """Per grid of one group: the probability of being among the top k, by plain
    sorting (``first``) or by averaging over every order of the grids (``random``:
    each order equally likely, then a stable sort by votes and the after key)."""
    n = len(votes)
    if tie == "first":
        ranked = sorted(range(n), key=lambda j: (-votes[j], after[j], order[j]))
        return [float(j in ranked[:k]) for j in range(n)]
    hits = np.zeros(n)
    perms = list(itertools.permutations(range(n)))
    for perm in perms:
        ranked = sorted(perm, key=lambda j: (-votes[j], after[j]))
        for j in ranked[:k]:
            hits[j] += 1
    return list(hits / len(perms))


@pytest.mark.parametrize("tie", TIE_RULES)
def test_top_k_against_every_order_enumerated(tie):
    rng = np.random.default_rng(4)
    for _ in range(60):
        sizes = rng.integers(1, 6, size=3)
        group = np.repeat(np.arange(3), sizes)
        rng.shuffle(group)
        votes = rng.integers(1, 4, size=group.size)
        after = rng.integers(0, 2, size=group.size).astype(float)
        order = rng.permutation(group.size).astype(float)
        vr = majority_vote(group, votes, after=[after], order=[order], tie=tie)
        for k in (1, 2, 3):
            got = vr.top(k)
            for g in range(3):
                idx = np.flatnonzero(group == g)
                want = naive_top(votes[idx].tolist(), after[idx].tolist(),
                                 order[idx].tolist(), k, tie)
                np.testing.assert_allclose(got[idx], want, atol=1e-12)
        # the listing rank: votes, the after key, then first appearance, within each group
        for g in range(3):
            idx = np.flatnonzero(group == g)
            ranked = sorted(idx, key=lambda j: (-votes[j], after[j], order[j]))
            assert [int(vr.rank[j]) for j in ranked] == list(range(1, idx.size + 1))


def test_by_hand():
    # one output: A 3 votes, B 2, C 2, D 1; B listed before C
    vr = majority_vote([0, 0, 0, 0], [3, 2, 2, 1], order=[[0, 1, 2, 3]])
    assert vr.tie == "random" and vr.rank.tolist() == [1, 2, 3, 4]
    assert vr.ahead.tolist() == [0, 1, 1, 3] and vr.tied.tolist() == [1, 2, 2, 1]
    assert vr.top(2).tolist() == [1.0, 0.5, 0.5, 0.0]
    assert vr.rank_share(3).tolist() == [0.0, 0.5, 0.5, 0.0]
    first = majority_vote([0, 0, 0, 0], [3, 2, 2, 1], order=[[0, 2, 1, 3]], tie="first")
    assert first.top(2).tolist() == [1.0, 0.0, 1.0, 0.0]  # C appeared first
    # a key before the votes (passes first) outranks any count
    vr = majority_vote([0, 0], [5, 1], before=[[1, 0]])
    assert vr.rank.tolist() == [2, 1] and vr.top(1).tolist() == [0.0, 1.0]


def test_empty_and_bad_rule():
    vr = majority_vote([], [])
    assert vr.rank.size == 0 and vr.top(1).size == 0
    assert check_tie("first") == "first"
    with pytest.raises(ParameterError, match="random, first"):
        majority_vote([0], [1], tie="coin")


# ------------------------------------------------------------------ the vote ensemble of runs
def test_vote_ensemble_by_hand():
    g = {k: np.full((2, 2), v) for k, v in zip("TXYZAB", range(6))}
    truth = [g["T"]]
    # X 2 votes, T 1, Y 2, Z 1: X and Y are picked, the truth is not
    assert vote_ensemble(truth, [[[g["X"], g["T"]]], [[g["X"], g["Y"]]],
                                   [[g["Y"], g["Z"]]]]).tolist() == [0.0]
    # X 2, T 2, Y 1: X and T
    assert vote_ensemble(truth, [[[g["X"], g["T"]]], [[g["X"], g["Y"]]],
                                   [[g["T"], None]]]).tolist() == [1.0]
    # one vote each, four grids: at random the truth is among the two picked with
    # chance 2/4 (the default rule); by first appearance, the first two seen in run
    # order then attempt order
    assert vote_ensemble(truth, [[[g["A"], g["T"]]], [[g["B"], g["Y"]]]]).tolist() == [0.5]
    assert vote_ensemble(truth, [[[g["A"], g["T"]]], [[g["B"], g["Y"]]]],
                           tie="first").tolist() == [1.0]
    assert vote_ensemble(truth, [[[g["B"], g["Y"]]], [[g["A"], g["T"]]]],
                           tie="first").tolist() == [0.0]
    # X 2, T 1, Y 1: X, then T or Y at random (1/2)
    assert vote_ensemble(truth, [[[g["X"], g["T"]]], [[g["X"], g["Y"]]]]).tolist() == [0.5]
    # the same grid in another integer type pools its votes
    # (pooled: T 2, B 2, A 1 -> T and B; apart, B 2 then A would be picked)
    assert vote_ensemble(truth, [[[g["A"], g["T"].astype(np.int8)]],
                                   [[g["B"], g["T"]]], [[g["B"], g["Z"]]]]).tolist() == [1.0]
    assert vote_ensemble(truth, [[[]]]).tolist() == [0.0]


def test_vote_ensemble_score_breaks_vote_ties():
    g = {k: np.full((1, 1), v) for k, v in zip("TXY", range(3))}
    truth = [g["T"]]
    runs = [[[g["X"], g["Y"]]], [[g["T"], g["X"]]], [[g["Y"], g["T"]]]]
    # votes: X 2, Y 2, T 2; by first appearance X and Y: the truth is left out; at
    # random two of the three are picked: the truth with chance 2/3
    assert vote_ensemble(truth, runs, tie="first").tolist() == [0.0]
    assert vote_ensemble(truth, runs).tolist() == pytest.approx([2 / 3])
    # scores: X .1 and .2, Y .3 and NaN, T .9 and .5: a grid's best score ranks it
    sc = [[[0.1, 0.3]], [[0.9, 0.2]], [[np.nan, 0.5]]]
    assert vote_ensemble(truth, runs, sc).tolist() == [1.0]
    # more votes still win over a score: X 2 votes, Y 2, T 1 (score 9)
    runs2 = [[[g["X"], g["Y"]]], [[g["X"], g["Y"]]], [[g["T"], None]]]
    assert vote_ensemble(truth, runs2, [[[0.0, 0.0]], [[0.0, 0.0]], [[9.0, np.nan]]]
                           ).tolist() == [0.0]
    # a tie for second place (Y and T, one vote each) goes to the higher score
    runs3 = [[[g["X"], g["Y"]]], [[g["X"], g["T"]]]]
    assert vote_ensemble(truth, runs3, [[[0.0, 0.0]], [[0.0, 9.0]]]).tolist() == [1.0]
    # without any score, the tie for second place goes by the tie rule
    nan = [[[np.nan] * 2], [[np.nan] * 2]]
    assert vote_ensemble(truth, runs3, nan, tie="first").tolist() == [0.0]
    assert vote_ensemble(truth, runs3, nan).tolist() == [0.5]
