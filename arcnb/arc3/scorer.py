"""Re-scoring ARC-AGI-3 recordings exactly as the toolkit's scorecard does (RHAE).

**Accounting** (``arc_agi`` 0.9.9: ``Scorecard.update_scorecard``, ``Card``, and
``arcengine``'s reset handling), step by step, per game:

* a RESET whose step says ``full_reset`` starts a new *play* (the engine makes a RESET a
  full reset when the current level has had no action yet, e.g. right after a level was
  finished or right after a level reset, and when the game is won); any other RESET is a
  *level reset*: one action and one reset of the current play;
* ACTION1-7 count one action each;
* every change of ``levels_completed`` records (levels, actions so far) for the play;
* a step whose frame is empty (an action sent after GAME_OVER or WIN) is not counted; in
  a recording without frames such a step is recognised by the game having ended before
  it (the state of the step before);
* steps before the first full reset of a game count nowhere (no play has started).

A play's actions on level *k* are its actions between the (k-1)-th and the k-th change
of ``levels_completed``; the first level it did not complete gets the rest of its
actions.

**RHAE** (``EnvironmentScoreCalculator``, ``EnvironmentScorecard``; rule ``0.9.9``): per
play, a completed level scores ``min(115, 100 (h/a)^2)`` (h: the human baseline of the
level, a: the play's actions on it; 0 when a = 0), an uncompleted level 0; the play
scores the mean of its levels' scores weighted by level number (1, 2, ..., n over every
level of the game), at most 100 x (the weight of the levels scored above 0) / (the
total weight). A game scores its best play's score; its ``levels_completed`` is the
most over its plays, its actions and resets the sums over them. A game without
baselines, or with fewer baselines than level changes in a play, scores 0 (a fault is
named). The run scores the mean over its games.

Older rules are kept under their toolkit version (:data:`RULES`), and every result
records the rule it was computed with. The rules, a level's and a play's score are
``arcnb.arc3.rules`` (re-exported here).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from ..errors import ParameterError, printable
from ..html import escape, note, table
from ..runs import SUMMARY_JSON, provenance_block, write_result_folder
from ..stats import bootstrap_ci
from ..text import fmt_number, fmt_significant
from .baselines import read_baselines
from .faults import fault_lines, faults_table, find_faults
from .reader import ACTIONS, Run, read_run
from .rules import DEFAULT_RULE, RULES, Rule, get_rule, level_score, play_score

__all__ = ["Rule", "RULES", "DEFAULT_RULE", "get_rule", "level_score", "play_score",
           "Scorecard", "score", "account"]


#: The largest action cap, as a multiple of the human baseline (the verified leaderboard
#: uses 5): beyond it a cap stops no play and its actions overflow a whole number.
MAX_CAP = 1e6


# ------------------------------------------------------------------ the accounting
@dataclass
class _Play:
    game_id: str
    guid: str
    recording: str
    first_step: int
    actions: int = 0
    resets: int = 0
    levels_completed: int = 0
    state: str = "NOT_FINISHED"
    by_level: list = field(default_factory=list)  # [(levels_completed, actions so far)]
    # per level index (0-based, as the toolkit indexes them): resets, game overs, ...
    level_resets: dict = field(default_factory=dict)
    level_game_overs: dict = field(default_factory=dict)
    level_unchanged: dict = field(default_factory=dict)
    level_seconds: dict = field(default_factory=dict)
    level_tokens: dict = field(default_factory=dict)
    level_cost: dict = field(default_factory=dict)
    level_known_frames: dict = field(default_factory=dict)


_MOVES = frozenset(ACTIONS[1:])


def _recording_order(run: Run) -> list:
    def key(rec):
        ts = rec.steps["timestamp"]
        known = ts.notna().to_numpy()  # the first recorded timestamp, without a copy
        first = ts.iloc[int(known.argmax())].value if known.any() else np.iinfo(np.int64).max
        return (first, str(rec.path))
    return sorted(run.recordings, key=key)


def _add(d: dict, k, v) -> None:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return
    d[k] = d.get(k, 0) + v


# the kinds of ``account``'s ``counted`` column, by code
_KINDS = ("", "action", "level reset", "full reset", "no action", "not counted: game ended",
          "not counted: no play")
_ACTION, _LEVEL_RESET, _FULL_RESET, _NO_ACTION, _GAME_ENDED, _NO_PLAY = range(1, 7)
_STEP_COLUMNS = ["recording", "step", "game_id", "counted", "play", "level", "levels_done"]


def _run_firsts(key: np.ndarray) -> np.ndarray:
    """Where each run of equal values of ``key`` begins (``key`` sorted by group)."""
    return np.concatenate(([0], np.flatnonzero(key[1:] != key[:-1]) + 1))


def _per_step(firsts: np.ndarray, values: np.ndarray, n: int):
    """``values`` (one per run) spread over the ``n`` steps of the runs beginning at
    ``firsts`` (a scalar when there is one run)."""
    if len(firsts) == 1:
        return values[0]
    return np.repeat(values, np.diff(np.append(firsts, n)))


def _last_flagged(flag: np.ndarray, firsts: np.ndarray, *, before: bool = False
                  ) -> np.ndarray:
    """Per step i, the last step j <= i (j < i when ``before``) of i's run (runs begin
    at ``firsts``) where ``flag`` holds; -1 when none."""
    n = len(flag)
    idx = np.arange(n)
    idx[~flag] = -1
    np.maximum.accumulate(idx, out=idx)
    if before:
        idx[1:] = idx[:-1].copy()
        idx[:1] = -1
    idx[idx < _per_step(firsts, firsts, n)] = -1
    return idx


def _segment_cumsum(x: np.ndarray, firsts: np.ndarray) -> np.ndarray:
    """The running sum of ``x`` (bools or ints) within each run (inclusive), runs
    beginning at ``firsts``."""
    cs = np.cumsum(x, dtype=np.int64)
    cs -= _per_step(firsts, cs[firsts] - x[firsts], len(cs))
    return cs


def _stable_order(key: np.ndarray) -> np.ndarray | None:
    """A stable sort of ``key``, or None when it is sorted already."""
    if len(key) < 2 or bool((key[1:] >= key[:-1]).all()):
        return None
    return np.argsort(key, kind="stable")


def _str_take(values: list, codes: np.ndarray):
    """``values[codes]`` as the column a DataFrame built from the values would infer."""
    if all(isinstance(v, str) for v in values):
        return pd.array(values, dtype="str").take(codes)
    # anything else (not what the reader gives): inferred as from a list of the values
    return pd.Series(np.asarray(values + [None], dtype=object)[:-1][codes].tolist()).array


def _level_count(mask: np.ndarray, lid: np.ndarray, m: int) -> tuple[np.ndarray, list]:
    """Per level id (0..m-1): whether any step of ``mask`` is on it, and how many."""
    counts = np.bincount(lid[mask], minlength=m)
    return counts > 0, counts.tolist()


def _level_sums(values: np.ndarray, mask: np.ndarray, lid: np.ndarray, m: int
                ) -> tuple[np.ndarray, list]:
    """Per level id (0..m-1): whether a value was added (as ``_add`` adds: None and NaN
    are skipped), and the sum of the values of the steps in ``mask``, added in step
    order as ``_add`` adds them (ints stay ints)."""
    if values.dtype.kind == "f":
        mask = mask & ~np.isnan(values)
        present = np.bincount(lid[mask], minlength=m) > 0
        return present, np.bincount(lid[mask], weights=values[mask], minlength=m).tolist()
    if values.dtype.kind in "iub":
        present = np.bincount(lid[mask], minlength=m) > 0
        sums = np.zeros(m, dtype=np.int64)
        np.add.at(sums, lid[mask], values[mask].astype(np.int64))
        return present, sums.tolist()
    acc: dict = {}  # anything else: added one by one
    for k, v in zip(lid[mask].tolist(), values[mask].tolist()):
        _add(acc, k, v)
    return np.isin(np.arange(m), list(acc)), [acc.get(k, 0) for k in range(m)]


def account(run: Run, rule: str | Rule | None = None) -> tuple[dict, pd.DataFrame]:
    """The scorecard's accounting of ``run``: ``({game_id: [play, ...]}, steps)`` where
    ``steps`` says for every recorded step how it counted (``counted``: ``action``,
    ``level reset``, ``full reset``, ``not counted: game ended`` (an empty frame),
    ``not counted: no play`` (before the first full reset)), its ``play`` (from 0, -1
    when none), ``level`` (the level it was spent on, from 1; 0 when none) and
    ``levels_done`` (the levels its play had completed after it).

    The step-by-step rules of the module's docstring, computed over every step at once:
    the steps of all recordings (in recording order) are grouped by game, by game and
    guid, and by play with stable sorts, and each rule is a running count or a "last
    step before this one that ..." within its group."""
    rule = get_rule(rule)
    recs = _recording_order(run)
    sizes = np.array([len(r.steps) for r in recs], dtype=np.int64)
    n = int(sizes.sum())
    if n == 0:
        return {}, pd.DataFrame([], columns=_STEP_COLUMNS)
    names = [r.name for r in recs]  # once per recording
    st, rec_of, first_of_rec, secs = _all_steps(recs, sizes)
    gid, gids = pd.factorize(st["game_id"], use_na_sentinel=False)
    guid, _ = pd.factorize(st["guid"], use_na_sentinel=False)
    gids = gids.tolist()
    action, state = st["action"], st["state"]
    is_reset = (action == "RESET").to_numpy(bool)
    is_move = action.isin(list(_MOVES)).to_numpy(bool)
    full = st["full_reset"].to_numpy().astype(bool)
    over = (state == "GAME_OVER").to_numpy(bool)
    ended = over | (state == "WIN").to_numpy(bool)
    lc = st["levels_completed"].to_numpy()

    skip = _skipped_steps(st, rec_of * len(gids) + gid, ended, is_reset, rule)
    counted = ~skip
    new = counted & is_reset & full  # a full reset: a new play of its game
    play = _play_of_steps(new, gid, guid)
    kind = np.full(n, _NO_ACTION, dtype=np.int64)
    kind[is_move] = _ACTION
    kind[is_reset] = np.where(full[is_reset], _FULL_RESET, _LEVEL_RESET)
    kind[counted & (play < 0)] = _NO_PLAY
    kind[skip] = _GAME_ENDED
    # the table's int columns, written in place: step, play, level, levels_done
    block = np.zeros((4, n), dtype=np.int64)
    block[0] = st["step"].to_numpy()
    block[1] = play
    level, done = block[2], block[3]

    cards, plays, first_play = _open_plays(st, new, play, gid, gids, rec_of, names)
    if plays:
        _play_steps(plays, _rows_of_plays(play, gid, first_play), st, counted, kind,
                    lc, ended, over, secs, first_of_rec, level, done)

    steps = pd.DataFrame(block.T, columns=["step", "play", "level", "levels_done"],
                         copy=False)
    steps.insert(0, "recording", _str_take(names, rec_of))
    steps.insert(2, "game_id", _str_take(gids, gid))
    steps.insert(3, "counted", pd.array(list(_KINDS), dtype="str").take(kind))
    return cards, steps


def _all_steps(recs: list, sizes: np.ndarray):
    """Every recording's steps in recording order as one table (one concat: many small
    files too), as ``(steps, each step's recording, whether it is its recording's first,
    the seconds since the step before in the same recording (NaN for a first step))``."""
    n = int(sizes.sum())
    tables = [r.steps for r in recs if len(r.steps)]
    st = tables[0] if len(tables) == 1 else pd.concat(tables, ignore_index=True)
    rec_of = np.repeat(np.arange(len(recs)), sizes)
    first_of_rec = np.zeros(n, dtype=bool)
    first_of_rec[np.cumsum(sizes)[sizes > 0] - sizes[sizes > 0]] = True
    if len({t.dtypes["timestamp"] for t in tables}) == 1:
        secs = st["timestamp"].diff().dt.total_seconds().to_numpy(float, copy=True)
        secs[first_of_rec] = np.nan
    else:  # (timestamps of several units: each file's own)
        secs = np.concatenate([t["timestamp"].diff().dt.total_seconds().to_numpy(float)
                               for t in tables])
    return st, rec_of, first_of_rec, secs


def _skipped_steps(st: pd.DataFrame, key: np.ndarray, ended: np.ndarray,
                   is_reset: np.ndarray, rule: Rule) -> np.ndarray:
    """The steps ``not counted: game ended`` (none when ``rule`` counts them): an empty
    frame, or no frame after the game ended; "ended" is the state of the game's last step
    with a non-empty frame before it in the same recording (``key``: recording x game)."""
    frame = st["frame"]
    frame_empty = (frame == "empty").to_numpy(bool)
    order = _stable_order(key)
    o = slice(None) if order is None else order
    last = _last_flagged(~frame_empty[o], _run_firsts(key[o]), before=True)
    prev_ended = np.zeros(len(key), dtype=bool)
    prev_ended[o] = ended[o][last] & (last >= 0)
    empty = frame_empty | ((frame == "absent").to_numpy(bool) & ~is_reset & prev_ended)
    return empty & (not rule.count_empty)


def _play_of_steps(new: np.ndarray, gid: np.ndarray, guid: np.ndarray) -> np.ndarray:
    """Each step's play, numbered within its game (-1 when none): the game's latest play
    of the step's guid, else the game's latest play (``new``: the steps that open one)."""
    order = _stable_order(gid)
    o = slice(None) if order is None else order
    latest = np.empty(len(new), dtype=np.int64)  # the game's latest play so far, -1 when none
    latest[o] = _segment_cumsum(new[o], _run_firsts(gid[o])) - 1
    key = gid * (int(guid.max()) + 1) + guid
    order = _stable_order(key)
    o = slice(None) if order is None else order
    mine = _last_flagged(new[o], _run_firsts(key[o]))  # the guid's latest full reset
    play = latest.copy()
    play[o] = np.where(mine >= 0, latest[o][mine], latest[o])
    return play


def _open_plays(st: pd.DataFrame, new: np.ndarray, play: np.ndarray, gid: np.ndarray,
                gids: list, rec_of: np.ndarray, names: list):
    """The plays, numbered over all games (each game's in the order they started):
    ``({game_id: [play, ...]}, every play, each game's first play number)``."""
    n_plays = np.bincount(gid[new], minlength=len(gids))
    first_play = np.concatenate([[0], np.cumsum(n_plays)[:-1]])
    cards: dict[str, list[_Play]] = {g: [] for g in gids}
    plays: list[_Play] = []
    if n_plays.sum():
        opening = np.flatnonzero(new)
        opening = opening[np.argsort(first_play[gid[opening]] + play[opening],
                                     kind="stable")]
        plays = [_Play(gids[g], u, names[r], int(s)) for g, u, r, s in zip(
            gid[opening].tolist(), st["guid"].take(opening).tolist(),
            rec_of[opening].tolist(), st["step"].take(opening).tolist())]
        for p in plays:
            cards[p.game_id].append(p)
    return cards, plays, first_play


def _rows_of_plays(play: np.ndarray, gid: np.ndarray, first_play: np.ndarray):
    """The steps of the plays, grouped by play (numbered over all games) and in order,
    as ``(rows, play number)``: a slice of the steps when they are so already."""
    rows = np.flatnonzero(play >= 0)
    gp = first_play[gid[rows]] + play[rows]
    order = _stable_order(gp)
    if order is not None:
        return rows[order], gp[order]
    if len(rows) and rows[-1] - rows[0] + 1 == len(rows):
        return slice(int(rows[0]), int(rows[-1]) + 1), gp
    return rows, gp


def _play_steps(plays: list, where, st: pd.DataFrame, counted, kind, lc, ended, over,
                secs, first_of_rec, level, done) -> None:
    """Each play's totals, level changes and per-level counts from its steps, and each
    step's ``level`` and ``levels_done`` (filled in)."""
    rows, gp = where
    firsts = _run_firsts(gp)  # where each play's steps begin
    ends = np.append(firsts[1:], len(gp)) - 1
    c = counted[rows]
    kr = kind[rows]
    is_action = c & (kr == _ACTION)
    is_lreset = c & (kr == _LEVEL_RESET)
    spent = is_action | is_lreset  # one action of the play
    actions = _segment_cumsum(spent, firsts)  # the play's actions so far
    # a level change: levels_completed differs from the play's previous counted step's
    # (0 before its first)
    lcr = lc[rows]
    if c.all():  # the previous step's
        change = np.empty(len(c), dtype=bool)
        change[1:] = lcr[1:] != lcr[:-1]
        change[firsts] = lcr[firsts] != 0
    else:
        prev = _last_flagged(c, firsts, before=True)
        change = c & (lcr != np.where(prev >= 0, lcr[prev], 0))
    changes = _segment_cumsum(change, firsts)  # the play's level changes so far
    done[rows] = changes
    changes -= change  # the level (index from 0) the step was spent on
    li = changes
    level[rows] = li
    level[rows] += 1

    # per play: its totals at its last step, its level changes, its state
    last_counted = _last_flagged(c, firsts)[ends]
    last_ended = _last_flagged(c & ended[rows], firsts)[ends]
    n_changes = done[rows][ends].tolist()
    by_lc = lcr[change].tolist()
    by_actions = actions[change].tolist()
    totals = actions[ends].tolist()
    resets = _segment_cumsum(is_lreset, firsts)[ends].tolist()
    final_lc = lcr[last_counted].tolist()
    at = 0
    for k, p in enumerate(plays):
        p.actions, p.resets, p.levels_completed = totals[k], resets[k], final_lc[k]
        m = n_changes[k]
        p.by_level = list(zip(by_lc[at:at + m], by_actions[at:at + m]))
        at += m
    # a play's state: the last GAME_OVER or WIN among its counted steps
    has_end = np.flatnonzero(last_ended >= 0)
    row_ids = np.arange(len(first_of_rec))[rows]
    for k, v in zip(has_end.tolist(), st["state"].take(row_ids[last_ended[has_end]])
                    .tolist()):
        plays[k].state = v

    # per level of each play: its (play, level) run of steps, one id each
    pair = np.ones(len(gp), dtype=bool)
    pair[1:] = (gp[1:] != gp[:-1]) | (li[1:] != li[:-1])
    lid = np.cumsum(pair) - 1
    m = int(lid[-1]) + 1
    lid_play = gp[pair].tolist()
    lid_level = li[pair].tolist()
    fc = st["frame_changed"].to_numpy()[rows]
    if fc.dtype == object:
        known = np.array([not (isinstance(x, float) and math.isnan(x)) for x in fc],
                         dtype=bool) & is_action
        unchanged = known.copy()
        unchanged[known] = [x == 0 for x in fc[known].tolist()]
    else:
        known = ~np.isnan(fc) & is_action  # an action with a frame on either side
        unchanged = known & (fc == 0)
    # seconds also go to the level a step after the game ended was sent on; a file's
    # first step has none
    timed = (spent | ~c) & ~first_of_rec[rows]
    n_known = _level_count(known, lid, m)
    sums = {
        "level_resets": _level_count(is_lreset, lid, m),
        "level_game_overs": _level_count(c & over[rows], lid, m),
        "level_known_frames": n_known,
        "level_unchanged": (n_known[0], _level_count(unchanged, lid, m)[1]),
        "level_seconds": _level_sums(secs[rows], timed, lid, m),
        "level_tokens": _level_sums(st["tokens"].to_numpy()[rows], spent, lid, m),
        "level_cost": _level_sums(st["cost"].to_numpy()[rows], spent, lid, m),
    }
    for name, (present, values) in sums.items():
        for j in np.flatnonzero(present).tolist():
            getattr(plays[lid_play[j]], name)[lid_level[j]] = values[j]


def _raw_levels(play: _Play) -> list[tuple[bool, int]]:
    """The toolkit's split of a play without usable baselines: one entry per change of
    ``levels_completed``, and one more for the level it was on unless it won."""
    n = len(play.by_level) + (0 if play.state == "WIN" else 1)
    out, prev = [], 0
    for k in range(n):
        done = k < len(play.by_level)
        upto = play.by_level[k][1] if done else play.actions
        out.append((done, upto - prev))
        prev = upto
    return out


def _levels_of(play: _Play, baselines: Sequence[int] | None, cap: float | None
               ) -> tuple[list[tuple[bool, int]], str | None]:
    """``[(completed, actions), ...]`` per level of the game, as the toolkit splits a
    play's actions, and why the play scores 0 regardless (no baselines, too few)."""
    if not baselines:
        return _raw_levels(play), "no baselines"
    if len(baselines) < len(play.by_level):
        return _raw_levels(play), "fewer baselines than levels played"
    out, prev = [], 0
    for k in range(len(baselines)):
        if k < len(play.by_level):
            upto = play.by_level[k][1]
            out.append((True, upto - prev))
        else:
            upto = play.actions
            out.append((False, upto - prev))
        prev = upto
    if cap is not None:
        cut = False
        for k, (done, a) in enumerate(out):
            allowed = int(math.floor(cap * baselines[k]))
            if cut:
                out[k] = (False, 0)
            elif a > allowed:
                out[k] = (False, allowed)
                cut = True
    return out, None


def _score_play(play: _Play, baselines, rule: Rule, cap) -> dict:
    levels, reason = _levels_of(play, baselines, cap)
    if reason is None:
        scores = [level_score(baselines[k], a, done, rule) for k, (done, a) in enumerate(levels)]
        total = play_score(scores, rule)
    else:
        scores = [0.0] * len(levels)
        total = 0.0
    return {"levels": levels, "scores": scores, "score": total, "reason": reason,
            "actions": sum(a for _, a in levels) if cap is not None and reason is None
            else play.actions}


# ------------------------------------------------------------------ the result
@dataclass
class Scorecard:
    """A run re-scored: per ``games`` (one row per game), ``plays``, ``levels`` (one row
    per level of each play) and ``steps`` (how each recorded step counted); the run's
    ``score`` (mean over games, 0-100) with its 95% bootstrap interval over games
    ``ci95``; ``first_play_score`` (every game's first play alone: what a
    competition-mode run of the same agent would have had); ``faults`` (what the
    recordings got wrong, named, never repaired); the ``rule`` and the action ``cap``
    it was computed with. :meth:`summary` is the ``--json`` object."""

    label: str
    rule: Rule
    cap: float | None
    games: pd.DataFrame
    plays: pd.DataFrame
    levels: pd.DataFrame
    steps: pd.DataFrame
    faults: list[dict]
    score: float
    ci95: tuple[float, float]
    first_play_score: float
    first_play_ci95: tuple[float, float]
    n_boot: int = 1000
    seed: int = 0
    run: Run | None = field(default=None, repr=False)
    baselines: dict = field(default_factory=dict, repr=False)

    @property
    def n_games(self) -> int:
        """How many games the run's mean counts."""
        return int(self.games["counted"].sum()) if len(self.games) else 0

    def summary(self) -> dict:
        """The result as JSON: ``rule``, ``score``, ``ci95``, ``n_games``, ``games``
        (per game: ``score``, ``levels_completed``, ``win_levels``, ``actions``,
        ``resets``, ``plays``, ``level_scores``, ``level_actions``,
        ``baseline_actions``, ``first_play_score``), ``faults``; also ``rule_words``,
        ``cap``, ``first_play_score`` and its ``first_play_ci95``, ``label``."""
        games = {}
        for row in self.games.itertuples(index=False):
            games[row.game_id] = {
                "score": float(row.score), "levels_completed": int(row.levels_completed),
                "win_levels": int(row.win_levels), "actions": int(row.actions),
                "resets": int(row.resets), "plays": int(row.plays),
                "level_scores": list(row.level_scores),
                "level_actions": list(row.level_actions),
                "baseline_actions": list(row.baseline_actions),
                "first_play_score": float(row.first_play_score),
                "counted": bool(row.counted),
            }
        return {"rule": self.rule.name, "rule_words": self.rule.words, "cap": self.cap,
                "label": self.label, "score": self.score, "ci95": list(self.ci95),
                "n_games": self.n_games, "first_play_score": self.first_play_score,
                "first_play_ci95": list(self.first_play_ci95),
                "bootstrap": {"n_boot": self.n_boot, "seed": self.seed, "over": "games"},
                "games": games, "faults": list(self.faults),
                "provenance": provenance_block(arc3_rule=self.rule.name)}

    def text(self) -> str:
        """The result as lines for a terminal: the rule, the score with its interval,
        the first play alone, one line per game, the faults."""
        return _text(self)

    __str__ = text

    def _repr_html_(self) -> str:
        lo, hi = self.ci95
        games = self.games.drop(columns=["level_scores", "level_actions", "baseline_actions"])
        games["game_id"] = games["game_id"].map(printable)
        return (f"<p><b>{escape(printable(self.label))}</b>: {_fmt(self.score)} [{_fmt(lo)}, "
                f"{_fmt(hi)}] over {self.n_games} games; first play alone "
                f"{_fmt(self.first_play_score)}; {len(self.faults)} faults.</p>"
                + note(self.rule.words) + table(games, digits=2))

    def write(self, out, *, overwrite: bool = False) -> list:
        """Write ``summary.json`` (:meth:`summary`), ``games.csv``, ``plays.csv``,
        ``levels.csv`` and ``faults.csv`` into folder ``out`` (each atomically; all or
        none of the new ones); existing files are refused unless ``overwrite``."""
        return _write(self, out, overwrite=overwrite)


def _mean(values) -> float:
    v = [float(x) for x in values]
    return float(np.mean(v)) if v else math.nan


def score(run, baselines, *, rule: str | Rule | None = None, cap: float | None = None,
          all_games: bool = False, games: Sequence[str] | None = None,
          n_boot: int = 1000, seed: int = 0, label: str | None = None,
          competition: bool | None = None, max_actions: int | None = None) -> Scorecard:
    """Score a run of recordings against human baselines.

    ``run``: a :class:`~arcnb.arc3.reader.Run`, or paths (see
    :func:`~arcnb.arc3.reader.read_run`); ``baselines``: a folder of game
    ``metadata.json`` files, a CSV ``game_id,level,baseline_actions`` or a mapping
    ``{game_id: [actions per level]}``. ``rule``: :data:`RULES` name (default
    ``"0.9.9"``). ``cap``: score as if every play had been stopped once it spent more
    than ``cap`` x the human baseline on a level (the verified leaderboard uses 5);
    ``None`` (default) keeps every action. The run's score is the mean over the games
    the scorecard holds (those with a play); ``all_games=True`` also counts every game of
    the baselines (a game never played scores 0), ``games`` names the games to count.
    The interval is a percentile bootstrap over games (``n_boot`` resamples, ``seed``).
    ``competition`` / ``max_actions`` say what the run claims (for the faults)."""
    rule = get_rule(rule)
    cap = _checked_cap(cap)
    # the baselines first: a bad file is refused before gigabytes of recordings are read
    base = read_baselines(baselines) if baselines is not None else {}
    if not isinstance(run, Run):
        run = read_run(run, label=label, competition=competition, max_actions=max_actions)
    else:
        if competition is not None:
            run.competition = competition
        if max_actions is not None:
            run.max_actions = max_actions
    label = label or run.label
    cards, steps = account(run, rule)
    universe, counted_set = _games_of(cards, base, all_games, games)
    win_levels = _win_levels(run)
    play_rows, level_rows, game_rows = [], [], []
    for gid in universe:
        plays = cards.get(gid, [])
        b = base.get(gid)
        results = [_score_play(p, b, rule, cap) for p in plays]
        for k, (p, r) in enumerate(zip(plays, results)):
            play_rows.append(_play_row(gid, k, p, r))
            level_rows += _level_rows(gid, k, p, r, b)
        game_rows.append(_game_row(gid, plays, results, b, win_levels, counted_set))
    games_df = pd.DataFrame(game_rows, columns=_GAME_COLUMNS)
    plays_df = pd.DataFrame(play_rows, columns=_PLAY_COLUMNS)
    levels_df = pd.DataFrame(level_rows, columns=_LEVEL_COLUMNS)
    # as bool: the column of no games is empty and untyped (a mask, not column names)
    counted = games_df[games_df["counted"].astype(bool)]
    run_score = _mean(counted["score"]) if len(counted) else math.nan
    first = _mean(counted["first_play_score"]) if len(counted) else math.nan
    ci = bootstrap_ci(counted["score"].to_numpy(float), n_boot=n_boot, seed=seed)
    fci = bootstrap_ci(counted["first_play_score"].to_numpy(float), n_boot=n_boot, seed=seed)
    faults = find_faults(run, plays=plays_df, steps=steps, baselines=base,
                         games=games_df)
    return Scorecard(label=label, rule=rule, cap=cap, games=games_df, plays=plays_df,
                     levels=levels_df, steps=steps, faults=faults, score=run_score,
                     ci95=(float(ci[0]), float(ci[1])), first_play_score=first,
                     first_play_ci95=(float(fci[0]), float(fci[1])), n_boot=n_boot,
                     seed=seed, run=run, baselines=base)


#: The columns of the scorecard's tables: games, plays, levels.
_GAME_COLUMNS = ["game_id", "score", "levels_completed", "win_levels", "actions", "resets",
                 "plays", "best_play", "level_scores", "level_actions", "baseline_actions",
                 "first_play_score", "won", "counted"]
_PLAY_COLUMNS = ["game_id", "play", "recording", "guid", "score", "levels_completed",
                 "actions", "resets", "state", "first_step", "level_changes", "zero_because"]
_LEVEL_COLUMNS = ["game_id", "play", "level", "completed", "actions", "baseline", "ratio",
                  "score", "resets", "game_overs", "unchanged_actions", "seconds", "tokens",
                  "cost"]


def _checked_cap(cap) -> float | None:
    """``score``'s action cap as a float, or a one-line refusal."""
    if cap is None:
        return None
    if isinstance(cap, bool) or not isinstance(cap, (int, float)) or not cap > 0 \
            or not math.isfinite(cap) or cap > MAX_CAP:
        raise ParameterError(f"the action cap must be a number > 0 and at most {fmt_significant(MAX_CAP)} "
                             f"(a multiple of the human baseline), got {cap!r}")
    return float(cap)


def _games_of(cards: dict, base: dict, all_games: bool, games) -> tuple[list, set]:
    """The games the scorecard lists (those played, then the others asked for) and the
    set of those its mean counts."""
    counted_games = [g for g, plays in cards.items() if plays]
    universe = list(cards)
    if all_games:
        universe += [g for g in base if g not in cards]
        counted_games += [g for g in base if g not in cards]
    if games is not None:
        games = [str(g) for g in games]
        universe = list(dict.fromkeys(list(universe) + games))
        counted_games = list(dict.fromkeys(games))
    return universe, set(counted_games)  # a set: 300,000 games of baselines are no list scan


def _win_levels(run: Run) -> dict:
    """The most levels any step of a game says it has (only the two columns gathered)."""
    tables = [r.steps for r in run.recordings if len(r.steps)]
    if not tables:
        return {}
    st = tables[0] if len(tables) == 1 else pd.DataFrame({
        c: np.concatenate([t[c].to_numpy() for t in tables])
        for c in ("game_id", "win_levels")})
    return st.groupby("game_id")["win_levels"].max().to_dict()


def _play_row(gid: str, k: int, p: _Play, r: dict) -> dict:
    """Play ``k`` of game ``gid`` as a row of the plays table (``r``: its score)."""
    return {"game_id": gid, "play": k, "recording": p.recording, "guid": p.guid,
            "score": r["score"], "levels_completed": p.levels_completed,
            "actions": r["actions"], "resets": p.resets, "state": p.state,
            "first_step": p.first_step, "level_changes": len(p.by_level),
            "zero_because": r["reason"]}


def _level_rows(gid: str, k: int, p: _Play, r: dict, b) -> list[dict]:
    """The levels of play ``k`` of game ``gid`` as rows of the levels table (``r``: the
    play's score, ``b``: the game's baselines)."""
    rows = []
    for lv, ((done, a), sc) in enumerate(zip(r["levels"], r["scores"])):
        h = b[lv] if b and lv < len(b) else math.nan
        known = p.level_known_frames.get(lv, 0)
        rows.append({
            "game_id": gid, "play": k, "level": lv + 1, "completed": done,
            "actions": a, "baseline": h,
            "ratio": a / h if (h == h and h > 0) else math.nan,
            "score": sc, "resets": p.level_resets.get(lv, 0),
            "game_overs": p.level_game_overs.get(lv, 0),
            "unchanged_actions": p.level_unchanged.get(lv, 0) if known else math.nan,
            "seconds": p.level_seconds.get(lv, math.nan),
            "tokens": p.level_tokens.get(lv, math.nan),
            "cost": p.level_cost.get(lv, math.nan)})
    return rows


def _game_row(gid: str, plays: list, results: list, b, win_levels: dict,
              counted_set: set) -> dict:
    """Game ``gid`` as a row of the games table: its best play's score and levels."""
    best = int(np.argmax([r["score"] for r in results])) if results else -1
    g_score = float(results[best]["score"]) if results else 0.0
    return {
        "game_id": gid, "score": g_score,
        "levels_completed": max((p.levels_completed for p in plays), default=0),
        "win_levels": int(win_levels.get(gid, len(b) if b else 0)),
        "actions": int(sum(r["actions"] for r in results)),
        "resets": int(sum(p.resets for p in plays)), "plays": len(plays),
        "best_play": best,
        "level_scores": [float(x) for x in results[best]["scores"]] if results else [],
        "level_actions": [int(a) for _, a in results[best]["levels"]] if results else [],
        "baseline_actions": list(b) if b else [],
        "first_play_score": float(results[0]["score"]) if results else 0.0,
        "won": any(p.state == "WIN" for p in plays),
        "counted": gid in counted_set,
    }


# ------------------------------------------------------------------ output
#: The files :meth:`Scorecard.write` writes into a folder.
OUTPUT_FILES = (SUMMARY_JSON, "games.csv", "plays.csv", "levels.csv", "faults.csv")


def _fmt(v) -> str:
    """A score (0-100) with two decimals (:func:`arcnb.text.fmt_number`), NaN as NaN."""
    return fmt_number(v, least=2, most=2)


def _text(self) -> str:
    """The result as lines for a terminal."""
    lo, hi = self.ci95
    flo, fhi = self.first_play_ci95
    # every string from a recording is escaped (text.printable): a newline in a game id
    # or a label shows as \n and never forges a row of the table
    lines = [f"{printable(self.label)}: {self.rule.words}"
             + (f"; every play stopped past {fmt_significant(self.cap)} x the human baseline on a level"
                if self.cap is not None else ""),
             f"score: {_fmt(self.score)} [{_fmt(lo)}, {_fmt(hi)}] over {self.n_games} games "
             "(mean over games, 0-100; 95% bootstrap interval over games)",
             f"first play alone: {_fmt(self.first_play_score)} [{_fmt(flo)}, {_fmt(fhi)}] "
             "(what one play per game, as in competition mode, scores)"]
    ids = [printable(g) for g in self.games["game_id"]]
    width = max([len("game")] + [len(g) for g in ids])
    lines.append(f"{'game':<{width}}  {'score':>6}  {'levels':>7}  {'actions':>7}  "
                 f"{'baseline':>8}  {'resets':>6}  {'plays':>5}  first play")
    for gid, row in zip(ids, self.games.itertuples(index=False)):
        levels = f"{row.levels_completed}/{row.win_levels}"
        base = sum(row.baseline_actions) if row.baseline_actions else "-"
        mark = "" if row.counted else "  (not counted: no play)"
        lines.append(f"{gid:<{width}}  {_fmt(row.score):>6}  {levels:>7}  "
                     f"{row.actions:>7}  {base!s:>8}  {row.resets:>6}  {row.plays:>5}  "
                     f"{_fmt(row.first_play_score)}{mark}")
    return "\n".join(lines + fault_lines(self.faults))


def _games_table(games: pd.DataFrame) -> pd.DataFrame:
    """The games table as ``games.csv`` holds it: each list (the levels' scores and
    actions, the baselines) as its JSON text in one cell."""
    games = games.copy()
    for col in ("level_scores", "level_actions", "baseline_actions"):
        games[col] = games[col].map(lambda v: json.dumps(list(v)))
    return games


def _write(self, out, *, overwrite: bool = False) -> list:
    """Write :data:`OUTPUT_FILES` into folder ``out`` (:func:`arcnb.runs.write_result_folder`:
    each atomically, all or none, claimed before any work; refused unless ``overwrite``)."""
    return write_result_folder(out, self.summary, {
        "games.csv": lambda: _games_table(self.games), "plays.csv": self.plays,
        "levels.csv": self.levels, "faults.csv": lambda: faults_table(self.faults)},
        overwrite=overwrite)

