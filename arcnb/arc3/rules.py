"""The ARC-AGI-3 scorecard's rule (RHAE) by toolkit version: ``Rule``, ``RULES``, a
level's and a play's score (the rest of the scorecard, the accounting of the steps and
the games, is ``arcnb.arc3.scorer``, which re-exports these names).

**RHAE** (``EnvironmentScoreCalculator``, ``EnvironmentScorecard``; rule ``0.9.9``): a
completed level scores ``min(115, 100 (h/a)^2)`` (h: the human baseline of the level, a:
the play's actions on it; 0 when a = 0), an uncompleted level 0; a play scores the mean
of its levels' scores weighted by level number (1, 2, ..., n over every level of the
game), at most 100 x (the weight of the levels scored above 0) / (the total weight).
Older rules are kept under their toolkit version, and every result records the rule it
was computed with.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..errors import ParameterError
from ..text import fmt_significant

__all__ = ["Rule", "RULES", "DEFAULT_RULE", "get_rule", "level_score", "play_score"]


@dataclass(frozen=True)
class Rule:
    """One version of the scoring rule: ``power`` (2: squared efficiency, 1: linear),
    ``level_cap`` (the most a level scores), ``weighted`` (levels weighted by their
    number, else a plain mean), ``completion_cap`` (a play scores at most the weighted
    share of the levels it scored on), ``count_empty`` (whether steps with an empty
    frame are counted, as before the toolkit stopped counting them). ``toolkit`` names
    the ``arc-agi`` versions that score this way."""

    name: str
    power: int
    level_cap: float
    weighted: bool
    completion_cap: bool
    count_empty: bool
    toolkit: str

    @property
    def words(self) -> str:
        """The rule in one sentence (shown with every result)."""
        ratio = "(h/a)^2" if self.power == 2 else "h/a"
        mean = ("mean of its levels' scores weighted by level number" if self.weighted
                else "plain mean of its levels' scores")
        cap = (", at most the weighted share of levels scored above 0"
               if self.completion_cap else "")
        return (f"rule {self.name} ({self.toolkit}): a completed level scores "
                f"min({fmt_significant(self.level_cap)}, 100 {ratio}); a play the {mean}{cap}; a game its "
                "best play; the run the mean over games")

    def as_dict(self) -> dict:
        """The rule's parameters and its sentence, as JSON."""
        return {"name": self.name, "power": self.power, "level_cap": self.level_cap,
                "weighted": self.weighted, "completion_cap": self.completion_cap,
                "count_empty": self.count_empty, "toolkit": self.toolkit,
                "words": self.words}


#: The scoring rules by name (the ``arc-agi`` version that introduced them last).
RULES = {
    "0.9.9": Rule("0.9.9", power=2, level_cap=115.0, weighted=True, completion_cap=True,
                  count_empty=False, toolkit="arc-agi 0.9.7 to 0.9.9"),
    "0.9.6": Rule("0.9.6", power=2, level_cap=100.0, weighted=True, completion_cap=False,
                  count_empty=False, toolkit="arc-agi 0.9.6; 0.9.3 to 0.9.5 also counted "
                                             "empty-frame steps"),
    "0.9.1": Rule("0.9.1", power=1, level_cap=100.0, weighted=False, completion_cap=False,
                  count_empty=True, toolkit="arc-agi 0.9.1 to 0.9.2, the linear rule"),
}
#: The rule used unless another is asked for: the current toolkit's.
DEFAULT_RULE = "0.9.9"

def get_rule(rule: str | Rule | None) -> Rule:
    """A :class:`Rule` from its name (``"0.9.9"``, ``"0.9.6"``, ``"0.9.1"``)."""
    if rule is None:
        return RULES[DEFAULT_RULE]
    if isinstance(rule, Rule):
        return rule
    if rule not in RULES:
        raise ParameterError(f"unknown scoring rule {rule!r}; known: {', '.join(RULES)}")
    return RULES[rule]


def level_score(baseline: int, actions: int, completed: bool, rule: str | Rule | None = None
                ) -> float:
    """One level's score: ``min(cap, 100 (h/a)^power)`` when completed with a > 0
    actions, else 0."""
    rule = get_rule(rule)
    if not completed or actions <= 0:
        return 0.0
    return min(100.0 * (baseline / actions) ** rule.power, rule.level_cap)


def play_score(level_scores: Sequence[float], rule: str | Rule | None = None) -> float:
    """A play's score from the scores of every level of its game (level 1 first)."""
    rule = get_rule(rule)
    if not len(level_scores):
        return 0.0
    w = np.arange(1, len(level_scores) + 1, dtype=float) if rule.weighted else \
        np.ones(len(level_scores))
    s = np.asarray(level_scores, dtype=float)
    total = float((w * s).sum() / w.sum())
    if rule.completion_cap:
        total = min(total, float(w[s > 0].sum() / w.sum() * 100.0))
    return total
