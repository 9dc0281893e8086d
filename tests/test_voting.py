"""Majority voting (arcnb/voting.py): the ranks and the top-k probabilities of both tie
rules against enumerating every order of the tied grids by hand."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from arcnb.errors import ParameterError
from arcnb.voting import TIE_RULES, check_tie, majority_vote


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
