"""Comparing agents (or repeated runs of one) on the same ARC-AGI-3 games: paired
per-game differences with a bootstrap interval, the games only one of two runs won, and
the spread of repeated runs.

Games are paired by their full id. By default only the games every run counts are
compared (``games="common"``); ``games="all"`` compares over every game any run counts,
a game a run did not play scoring 0 there (what a leaderboard would give it).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from ..errors import ParameterError
from ..stats import paired_bootstrap_ci
from .scorer import Scorecard, score
from .tables import run_table

__all__ = ["Comparison", "compare"]


@dataclass
class Comparison:
    """Runs compared on the same games. ``tables``: ``runs`` (one row per run, as
    :func:`~arcnb.arc3.tables.run_table`), ``scores`` (one row per game, one column per
    run), ``pairs`` (one row per pair of runs: the mean per-game difference second -
    first with its paired 95% bootstrap interval over games, the games each won alone,
    the games each scored higher on), ``won_alone`` (one row per game won by exactly one
    run of a pair), ``spread`` (one row per game: mean, standard deviation, lowest and
    highest score over the runs). ``numbers``: the run scores' mean, standard deviation,
    lowest and highest (the spread of repeated runs), and how games were chosen."""

    cards: list[Scorecard]
    labels: list[str]
    games: list[str]
    tables: dict = field(default_factory=dict)
    numbers: dict = field(default_factory=dict)

    def pair(self, a: int | str = 0, b: int | str = 1) -> dict:
        """The row of :attr:`tables` ``["pairs"]`` for runs ``a`` and ``b`` (indexes or
        labels)."""
        ia, ib = (self.labels.index(x) if isinstance(x, str) else int(x) for x in (a, b))
        p = self.tables["pairs"]
        rows = p[(p["a"] == self.labels[ia]) & (p["b"] == self.labels[ib])]
        if not len(rows):
            raise ParameterError(f"no pair {self.labels[ia]!r} and {self.labels[ib]!r} "
                                 "(pairs are ordered as the runs were given)")
        return rows.iloc[0].to_dict()


def _unique(labels: Sequence[str]) -> list[str]:
    out, seen = [], {}
    for lab in labels:
        seen[lab] = seen.get(lab, 0) + 1
        out.append(lab if seen[lab] == 1 else f"{lab} #{seen[lab]}")
    return out


def compare(runs: Sequence, baselines=None, *, labels: Sequence[str] | None = None,
            games: str = "common", n_boot: int = 1000, seed: int = 0, **score_kw
            ) -> Comparison:
    """Compare two or more runs. ``runs``: :class:`~arcnb.arc3.scorer.Scorecard`
    objects, or runs (a :class:`~arcnb.arc3.reader.Run`, a path, a list of paths) scored
    here against ``baselines`` with ``score_kw`` (``rule``, ``cap``). ``labels`` name the
    runs (a repeated name gets ``#2``). ``games``: ``"common"`` or ``"all"`` (see the
    module). Intervals: paired percentile bootstrap over games (``n_boot``, ``seed``)."""
    runs = list(runs)
    if len(runs) < 2:
        raise ParameterError(f"a comparison needs at least two runs, got {len(runs)}")
    if games not in ("common", "all"):
        raise ParameterError(f"games must be 'common' or 'all', got {games!r}")
    cards = []
    for r in runs:
        if isinstance(r, Scorecard):
            cards.append(r)
        else:
            if baselines is None:
                raise ParameterError("runs given as recordings need baselines to be scored")
            cards.append(score(r, baselines, n_boot=n_boot, seed=seed, **score_kw))
    rules = {c.rule.name for c in cards}
    if len(rules) > 1:
        raise ParameterError("the runs were scored under different rules "
                             f"({', '.join(sorted(rules))}): score them under one")
    labels = _unique(list(labels) if labels is not None else [c.label for c in cards])
    if len(labels) != len(cards):
        raise ParameterError(f"{len(labels)} labels for {len(cards)} runs")
    counted = [c.games[c.games["counted"]].set_index("game_id") for c in cards]
    sets = [list(g.index) for g in counted]
    if games == "common":
        chosen = [g for g in sets[0] if all(g in s for s in sets[1:])]
    else:
        chosen = list(dict.fromkeys(g for s in sets for g in s))
    scores = pd.DataFrame({lab: [float(g["score"].get(gid, 0.0)) for gid in chosen]
                           for lab, g in zip(labels, counted)}, index=pd.Index(chosen,
                                                                               name="game_id"))
    won = pd.DataFrame({lab: [bool(g["won"].get(gid, False)) for gid in chosen]
                        for lab, g in zip(labels, counted)}, index=scores.index)
    pairs, alone = [], []
    for ia, ib in itertools.combinations(range(len(cards)), 2):
        la, lb = labels[ia], labels[ib]
        a, b = scores[la].to_numpy(), scores[lb].to_numpy()
        diff, lo, hi = paired_bootstrap_ci(a, b, n_boot=n_boot, seed=seed)
        only_a = [g for g in chosen if won.at[g, la] and not won.at[g, lb]]
        only_b = [g for g in chosen if won.at[g, lb] and not won.at[g, la]]
        alone += [{"a": la, "b": lb, "game_id": g, "won_by": la} for g in only_a]
        alone += [{"a": la, "b": lb, "game_id": g, "won_by": lb} for g in only_b]
        pairs.append({"a": la, "b": lb, "n_games": len(chosen),
                      "mean_a": float(a.mean()) if len(a) else math.nan,
                      "mean_b": float(b.mean()) if len(b) else math.nan,
                      "difference": diff, "ci_low": lo, "ci_high": hi,
                      "won_only_a": len(only_a), "won_only_b": len(only_b),
                      "higher_a": int((a > b).sum()), "higher_b": int((b > a).sum()),
                      "ties": int((a == b).sum())})
    values = scores.to_numpy(float)
    spread = pd.DataFrame({
        "game_id": chosen,
        "n_runs": len(cards),
        "mean": values.mean(axis=1) if len(chosen) else [],
        "std": values.std(axis=1, ddof=1) if len(chosen) else [],
        "lowest": values.min(axis=1) if len(chosen) else [],
        "highest": values.max(axis=1) if len(chosen) else []})
    run_scores = values.mean(axis=0) if len(chosen) else np.full(len(cards), math.nan)
    tables = {"runs": run_table(cards).assign(run=labels), "scores": scores.reset_index(),
              "pairs": pd.DataFrame(pairs, columns=[
                  "a", "b", "n_games", "mean_a", "mean_b", "difference", "ci_low",
                  "ci_high", "won_only_a", "won_only_b", "higher_a", "higher_b", "ties"]),
              "won_alone": pd.DataFrame(alone, columns=["a", "b", "game_id", "won_by"]),
              "spread": spread}
    numbers = {"games": games, "n_games": len(chosen), "rule": cards[0].rule.name,
               "run_score_mean": float(np.mean(run_scores)),
               "run_score_std": float(np.std(run_scores, ddof=1)),
               "run_score_lowest": float(np.min(run_scores)),
               "run_score_highest": float(np.max(run_scores)),
               "n_boot": n_boot, "seed": seed}
    return Comparison(cards=cards, labels=labels, games=chosen, tables=tables,
                      numbers=numbers)
