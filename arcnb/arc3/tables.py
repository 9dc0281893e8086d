"""The tables of a re-scored ARC-AGI-3 run: per level, per game, per run.

Every table is built from a :class:`~arcnb.arc3.scorer.Scorecard`; a ratio whose
denominator is empty (no action on a level, no baseline) is NaN, never 0.
"""
from __future__ import annotations

import math
from typing import Iterable

import numpy as np
import pandas as pd

from ..errors import ParameterError
from .reader import FRAME_SIZE, N_COLOURS, Recording
from .scorer import Scorecard

__all__ = ["PALETTE", "PALETTE_RGB", "frame_rgb", "key_frames",
           "LEVEL_COLUMNS", "GAME_COLUMNS", "RUN_COLUMNS", "level_table", "game_table",
           "run_table"]

#: The columns of :func:`level_table`, with their words.
LEVEL_COLUMNS = {
    "game_id": "the game",
    "play": "the play (from 1, in the order the plays started)",
    "best_play": "whether this play is the one that scores the game",
    "level": "the level (from 1)",
    "completed": "whether the play completed it",
    "actions": "actions the play spent on it (level resets included)",
    "baseline": "the human baseline's actions",
    "ratio": "actions / baseline (NaN without a baseline)",
    "score": "the level's score (0-115 under rule 0.9.9)",
    "resets": "level resets on it",
    "game_overs": "GAME_OVERs on it",
    "unchanged_actions": "actions that left the frame unchanged (NaN without frames)",
    "seconds_per_action": "recorded time on the level (every step on it, counted or not) "
                          "per action (NaN without timestamps)",
    "tokens_per_action": "model tokens per action (NaN where the harness did not record them)",
    "cost_per_action": "model cost per action in dollars (likewise)",
}
#: The columns of :func:`game_table`, with their words.
GAME_COLUMNS = {
    "game_id": "the game",
    "score": "RHAE: its best play's score (0-100)",
    "levels_completed": "the most levels a play completed",
    "win_levels": "the levels the game has",
    "completion_cap": "the most the best play could score given the levels it scored on "
                      "(100 x their weight / the total weight; NaN under rules without it "
                      "and for a game scored 0 for its baselines)",
    "plays": "plays (each full reset starts one)",
    "actions": "actions summed over the plays",
    "resets": "level resets summed over the plays",
    "best_play_actions": "actions of the best play on the levels it completed",
    "baseline_actions": "the human baseline's actions on those levels (NaN when one lacks "
                        "a baseline)",
    "actions_per_baseline": "best_play_actions / baseline_actions (NaN when no level was "
                            "completed)",
    "first_play_score": "the first play's score alone",
    "won": "whether a play won the game",
    "counted": "whether the run's mean counts the game",
}
#: The columns of :func:`run_table`, with their words.
RUN_COLUMNS = {
    "run": "the run's label",
    "rule": "the scoring rule",
    "n_games": "games in the mean",
    "score": "mean over games (0-100)",
    "ci_low": "95% bootstrap interval over games, low end",
    "ci_high": "its high end",
    "first_play_score": "mean over games of the first play alone",
    "games_won": "games a play won",
    "levels_completed": "levels completed, summed over games (best play each)",
    "actions": "actions summed over games and plays",
    "faults": "faults named",
}


def _div(a, b) -> float:
    return float(a) / float(b) if b and not (isinstance(b, float) and math.isnan(b)) and \
        not (isinstance(a, float) and math.isnan(a)) else math.nan


def level_table(card: Scorecard) -> pd.DataFrame:
    """One row per level of each play (:data:`LEVEL_COLUMNS`)."""
    lv = card.levels.copy()
    best = dict(zip(card.games["game_id"], card.games["best_play"]))
    lv["best_play"] = [best.get(g) == p for g, p in zip(lv["game_id"], lv["play"])]
    lv["play"] = lv["play"] + 1
    lv["seconds_per_action"] = [_div(s, a) for s, a in zip(lv["seconds"], lv["actions"])]
    lv["tokens_per_action"] = [_div(t, a) for t, a in zip(lv["tokens"], lv["actions"])]
    lv["cost_per_action"] = [_div(c, a) for c, a in zip(lv["cost"], lv["actions"])]
    return lv[list(LEVEL_COLUMNS)].reset_index(drop=True)


def game_table(card: Scorecard) -> pd.DataFrame:
    """One row per game (:data:`GAME_COLUMNS`)."""
    rows = []
    for g in card.games.itertuples(index=False):
        scores = np.asarray(g.level_scores, dtype=float)
        w = np.arange(1, len(scores) + 1, dtype=float) if card.rule.weighted else \
            np.ones(len(scores))
        best = card.plays[(card.plays["game_id"] == g.game_id) &
                          (card.plays["play"] == g.best_play)]
        scored = len(best) and not isinstance(best["zero_because"].iloc[0], str)
        cap = (100.0 * w[scores > 0].sum() / w.sum()
               if card.rule.completion_cap and len(scores) and scored else math.nan)
        lv = card.levels[(card.levels["game_id"] == g.game_id) &
                         (card.levels["play"] == g.best_play) & card.levels["completed"]]
        acts = float(lv["actions"].sum()) if len(lv) else math.nan
        # NaN when a completed level has no baseline (no sum over a part of the levels)
        base = float(lv["baseline"].sum(min_count=len(lv))) if len(lv) else math.nan
        rows.append({"game_id": g.game_id, "score": g.score,
                     "levels_completed": g.levels_completed, "win_levels": g.win_levels,
                     "completion_cap": cap, "plays": g.plays, "actions": g.actions,
                     "resets": g.resets, "best_play_actions": acts,
                     "baseline_actions": base, "actions_per_baseline": _div(acts, base),
                     "first_play_score": g.first_play_score, "won": g.won,
                     "counted": g.counted})
    return pd.DataFrame(rows, columns=list(GAME_COLUMNS))


def run_table(cards: Scorecard | Iterable[Scorecard]) -> pd.DataFrame:
    """One row per run (:data:`RUN_COLUMNS`): the mean over games with its 95% bootstrap
    interval over games (wide with 25 or 55 games: show it)."""
    if isinstance(cards, Scorecard):
        cards = [cards]
    rows = []
    for c in cards:
        counted = c.games[c.games["counted"]]
        rows.append({"run": c.label, "rule": c.rule.name, "n_games": c.n_games,
                     "score": c.score, "ci_low": c.ci95[0], "ci_high": c.ci95[1],
                     "first_play_score": c.first_play_score,
                     "games_won": int(counted["won"].sum()),
                     "levels_completed": int(counted["levels_completed"].sum()),
                     "actions": int(counted["actions"].sum()), "faults": len(c.faults)})
    return pd.DataFrame(rows, columns=list(RUN_COLUMNS))


#: The 16 colours of ARC-AGI-3 frames, as the toolkit draws them: 0 white, 1 off-white,
#: 2 light grey, 3 grey, 4 off-black, 5 black, 6 magenta, 7 light magenta, 8 red, 9 blue,
#: 10 light blue, 11 yellow, 12 orange, 13 maroon, 14 green, 15 purple.
PALETTE = ("#FFFFFF", "#CCCCCC", "#999999", "#666666", "#333333", "#000000", "#E53AA3",
           "#FF7BCC", "#F93C31", "#1E93FF", "#88D8F1", "#FFDC00", "#FF851B", "#921231",
           "#4FCC30", "#A356D6")
#: ``PALETTE`` as a ``(16, 3)`` uint8 array.
PALETTE_RGB = np.array([[int(h[i:i + 2], 16) for i in (1, 3, 5)] for h in PALETTE], dtype=np.uint8)


def frame_rgb(frame) -> np.ndarray:
    """A frame layer (2-D, colours 0-15) as an RGB ``uint8`` image."""
    a = np.asarray(frame)
    if a.ndim != 2 or a.size == 0 or a.shape[0] > FRAME_SIZE or a.shape[1] > FRAME_SIZE:
        raise ParameterError(f"a frame layer is a 2-D array at most {FRAME_SIZE} x "
                             f"{FRAME_SIZE}, got shape {list(a.shape)}")
    if a.dtype.kind not in "iu" or a.min() < 0 or a.max() >= N_COLOURS:
        raise ParameterError(f"a frame holds colours 0-{N_COLOURS - 1}")
    return PALETTE_RGB[a.astype(np.intp)]


def key_frames(rec: Recording, game_id: str | None = None) -> list[tuple[int, int, str]]:
    """The key frames of a recording as ``(step, layer, label)``: each level's start
    (``start``), each level's last frame (``done``), each GAME_OVER (``lost``), the win
    (``won``) and the last step (``last``). ``layer`` indexes the step's frame layers."""
    s = rec.steps
    if game_id is not None:
        s = s[s["game_id"] == game_id]
    s = s[s["frame"] == "present"]
    out: list[tuple[int, int, str]] = []
    prev_lc, prev_state = None, None
    for row in s.itertuples(index=False):
        i, lc, state = int(row.step), int(row.levels_completed), row.state
        if row.action == "RESET":
            out.append((i, -1, "start"))
        elif prev_lc is not None and lc > prev_lc:
            if state == "WIN":
                out.append((i, -1, "won"))
            else:
                if row.n_layers > 1:
                    out.append((i, 0, "done"))
                out.append((i, -1, "start"))
        elif state == "GAME_OVER" and prev_state != "GAME_OVER":
            out.append((i, -1, "lost"))
        prev_lc, prev_state = lc, state
    if len(s):
        last = int(s["step"].iloc[-1])
        if not out or out[-1][0] != last:
            out.append((last, -1, "last"))
    return out
