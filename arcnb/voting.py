"""Majority voting, the one rule: distinct grids ranked by their votes, and what a tie
does.

:func:`majority_vote` ranks the distinct grids of every group (a test output) by
optional keys that come before the votes (``before``: e.g. passes the demonstrations),
then by votes (more first), then by optional keys that come after (``after``: e.g. a
confidence, a train score); every key is lower-first, so a caller negates a
higher-is-better score. Grids equal on all of those are *tied*. The tie rule
(:data:`TIE_RULES`) decides their order:

``random`` (the default)
    Uniformly at random: a grid with ``ahead`` grids strictly above it and ``tied``
    grids in its tie group (itself included) takes each of the ranks ``ahead + 1 ..
    ahead + tied`` with probability ``1 / tied``; it is among the top ``k`` with
    probability ``clip((k - ahead) / tied, 0, 1)``. This is what a vote over draws
    achieves on average when nothing but the draws tells tied grids apart, and what
    public majority@k code does (it breaks ties at random).
``first``
    By first appearance (``order``: lower first, e.g. the first draw of each grid along
    the budget axis, then its place in the listing): deterministic, ``tied`` is 1.

``rank`` is always the deterministic listing rank (ties by ``order``): the order in
which a pool's candidates are shown. The numbers (pass@K, the rank a right candidate
takes) use :meth:`VoteRanks.top` and ``ahead`` / ``tied``, so they follow the tie rule.
The candidate pools (:mod:`arcnb.candidates`: the rankings and the exact anytime curves)
vote here; ties inside the anytime curves' subsets follow the same rule. So do the vote
ensembles of many runs (:func:`vote_ensemble`, which :mod:`arcnb.repeats` re-exports):
every attempt of every run a vote, the two-attempt ensemble's chance of the right
grid.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .errors import ParameterError
from .grids import same_grid

__all__ = ["TIE_RULES", "VoteRanks", "majority_vote", "check_tie", "vote_ensemble"]

#: The tie rules of a vote: ``random`` (uniformly at random, the default) and ``first``
#: (first appearance).
TIE_RULES = ("random", "first")


def check_tie(tie) -> str:
    """``tie`` if it is one of :data:`TIE_RULES`, else a one-line ParameterError."""
    if tie not in TIE_RULES:
        raise ParameterError(f"unknown tie rule {tie!r}: one of {', '.join(TIE_RULES)}")
    return tie


@dataclass
class VoteRanks:
    """The outcome of :func:`majority_vote`, per grid: ``rank`` (1 = top, ties by first
    appearance: the listing order), ``ahead`` (grids of its group ranked strictly above
    it under the tie rule) and ``tied`` (its tie group's size under the rule; 1 under
    ``first``)."""

    rank: np.ndarray
    ahead: np.ndarray
    tied: np.ndarray
    tie: str

    def top(self, k: int) -> np.ndarray:
        """Per grid, the probability that it is among its group's top ``k`` under the
        tie rule (0 or 1 under ``first``)."""
        return np.clip((k - self.ahead) / self.tied, 0.0, 1.0)

    def rank_share(self, j: int) -> np.ndarray:
        """Per grid, the probability that it takes rank ``j``."""
        return self.top(j) - self.top(j - 1)


def _group_starts(g: np.ndarray) -> np.ndarray:
    return np.r_[0, np.flatnonzero(g[1:] != g[:-1]) + 1] if g.size else np.zeros(0, np.int64)


def majority_vote(group, votes, *, before: Sequence = (), after: Sequence = (),
                  order: Sequence = (), tie: str = "random") -> VoteRanks:
    """Rank the distinct grids of every group by ``before`` keys, then votes (more
    first), then ``after`` keys (every key lower-first, most significant first), ties
    under ``tie`` (see the module docstring); ``order``: the first-appearance keys
    (lower first) of the listing order and of the ``first`` rule. Vectorised over every
    group at once."""
    check_tie(tie)
    group = np.asarray(group, np.int64)
    n = group.size
    keys = [np.asarray(k, float) for k in before]
    if votes is not None:
        keys.append(-np.asarray(votes, float))
    keys += [np.asarray(k, float) for k in after]
    orders = [np.asarray(k, float) for k in order] or [np.arange(n, dtype=float)]
    idx = np.lexsort(tuple(reversed([group, *keys, *orders])))
    rank = np.empty(n, np.int64)
    g = group[idx]
    starts = _group_starts(g)
    gstart = np.repeat(starts, np.diff(np.r_[starts, n]))
    rank[idx] = np.arange(n) - gstart + 1
    if tie == "first" or n == 0:
        return VoteRanks(rank, rank - 1, np.ones(n, np.int64), tie)
    # tie groups: consecutive grids of one group equal on every key
    new = np.r_[True, g[1:] != g[:-1]]
    for k in keys:
        ks = k[idx]
        new[1:] |= ~((ks[1:] == ks[:-1]) | (np.isnan(ks[1:]) & np.isnan(ks[:-1])))
    tstarts = np.flatnonzero(new)
    sizes = np.diff(np.r_[tstarts, n])
    ahead, tied = np.empty(n, np.int64), np.empty(n, np.int64)
    ahead[idx] = np.repeat(tstarts, sizes) - gstart
    tied[idx] = np.repeat(sizes, sizes)
    return VoteRanks(rank, ahead, tied, tie)


def vote_ensemble(truths: Sequence[np.ndarray], attempts: Sequence[Sequence[list]],
                  scores: Sequence[Sequence[list]] | None = None, *,
                  tie: str = "random") -> np.ndarray:
    """Per test output, whether the two-attempt vote ensemble of the runs solves it (the
    ensembles of :mod:`arcnb.repeats`): the probability under random ties
    (``tie="random"``, the default), 0/1 with ``tie="first"``; one
    :func:`majority_vote` over every output at once.

    ``truths[o]`` is output o's truth, ``attempts[r][o]`` run r's attempts for it. Every
    attempt of every run is one vote for its grid (identical grids pool their votes; an
    invalid attempt votes for nothing); the two grids with the most votes are the
    ensemble's attempts. Ties in votes are broken by the named score when ``scores`` is
    given (``scores[r][o][j]``: attempt j's score, NaN where it has none; a grid's score
    is the highest of its attempts', higher first, grids without one after those with
    one), then by the tie rule (``first``: first appearance, run order then attempt
    order)."""
    check_tie(tie)
    group, votes, best, first, right = [], [], [], [], []
    for o, truth in enumerate(truths):
        seen: dict = {}  # grid key -> its index in the flat arrays
        for r, run in enumerate(attempts):
            run_scores = scores[r][o] if scores is not None else None
            for j, g in enumerate(run[o]):
                if g is None:
                    continue
                sc = float(run_scores[j]) if run_scores is not None and j < len(run_scores) \
                    else np.nan
                key = (g.shape, np.ascontiguousarray(g, dtype=np.int64).tobytes())
                k = seen.get(key)
                if k is None:
                    seen[key] = len(group)
                    group.append(o)
                    votes.append(1)
                    best.append(-sc if sc == sc else np.inf)
                    first.append(len(seen))
                    right.append(same_grid(g, truth))
                else:
                    votes[k] += 1
                    if sc == sc and -sc < best[k]:  # a higher score
                        best[k] = -sc
    out = np.zeros(len(truths))
    if group:
        ranks = majority_vote(group, votes, after=[best] if scores is not None else [],
                              order=[first], tie=tie)
        hit = np.asarray(right, bool)
        np.add.at(out, np.asarray(group)[hit], ranks.top(2)[hit])
    return out
