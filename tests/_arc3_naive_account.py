"""An independent, plain-Python reference of ``arcnb.arc3.scorer.account``: the per-step
state machine as it was before the accounting was vectorised (a copy of its semantics),
for the tests to compare the fast accounting with, step by step and play by play.

Returns ``({game_id: [NaivePlay, ...]}, steps)`` exactly as ``account`` does; a
``NaivePlay`` has the same fields as the scorer's plays.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from arcnb.arc3.reader import ACTIONS
from arcnb.arc3.scorer import get_rule

_ENDED = ("WIN", "GAME_OVER")
_MOVES = frozenset(ACTIONS[1:])


@dataclass
class NaivePlay:
    game_id: str
    guid: str
    recording: str
    first_step: int
    actions: int = 0
    resets: int = 0
    levels_completed: int = 0
    state: str = "NOT_FINISHED"
    by_level: list = field(default_factory=list)
    level_resets: dict = field(default_factory=dict)
    level_game_overs: dict = field(default_factory=dict)
    level_unchanged: dict = field(default_factory=dict)
    level_seconds: dict = field(default_factory=dict)
    level_tokens: dict = field(default_factory=dict)
    level_cost: dict = field(default_factory=dict)
    level_known_frames: dict = field(default_factory=dict)


PLAY_FIELDS = tuple(NaivePlay.__dataclass_fields__)


def recording_order(run) -> list:
    def key(rec):
        ts = rec.steps["timestamp"].dropna()
        first = ts.iloc[0].value if len(ts) else np.iinfo(np.int64).max
        return (first, str(rec.path))
    return sorted(run.recordings, key=key)


def _add(d: dict, k, v) -> None:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return
    d[k] = d.get(k, 0) + v


def naive_account(run, rule=None):
    rule = get_rule(rule)
    cards: dict[str, list[NaivePlay]] = {}
    rows = []
    for rec in recording_order(run):
        s = rec.steps
        cols = {c: s[c].tolist() for c in ("step", "game_id", "guid", "state",
                                           "levels_completed", "action", "full_reset",
                                           "frame", "frame_changed", "tokens", "cost")}
        ts = s["timestamp"]
        secs = ts.diff().dt.total_seconds().tolist() if len(ts) else []
        prev_state: dict[str, str] = {}
        for i in range(len(s)):
            gid, guid, state = cols["game_id"][i], cols["guid"][i], cols["state"][i]
            action, frame = cols["action"][i], cols["frame"][i]
            empty = frame == "empty" or (frame == "absent" and action != "RESET"
                                         and prev_state.get(gid) in _ENDED)
            if frame != "empty":
                prev_state[gid] = state
            plays = cards.setdefault(gid, [])
            kind, play_i, level, done_levels = "", -1, 0, 0
            if empty and not rule.count_empty:
                kind = "not counted: game ended"
                if plays:
                    play_i = next((k for k in range(len(plays) - 1, -1, -1)
                                   if plays[k].guid == guid), len(plays) - 1)
                    p = plays[play_i]
                    if i:
                        _add(p.level_seconds, len(p.by_level), secs[i])
                    level, done_levels = len(p.by_level) + 1, len(p.by_level)
            else:
                if action == "RESET" and cols["full_reset"][i]:
                    plays.append(NaivePlay(gid, guid, rec.name, int(cols["step"][i])))
                if not plays:
                    kind = "not counted: no play"
                else:
                    play_i = next((k for k in range(len(plays) - 1, -1, -1)
                                   if plays[k].guid == guid), len(plays) - 1)
                    p = plays[play_i]
                    li = len(p.by_level)
                    if action == "RESET":
                        if cols["full_reset"][i]:
                            kind = "full reset"
                        else:
                            kind = "level reset"
                            p.resets += 1
                            p.actions += 1
                            _add(p.level_resets, li, 1)
                    elif action in _MOVES:
                        kind = "action"
                        p.actions += 1
                        ch = cols["frame_changed"][i]
                        if not (isinstance(ch, float) and math.isnan(ch)):
                            _add(p.level_known_frames, li, 1)
                            _add(p.level_unchanged, li, int(ch == 0))
                    else:
                        kind = "no action"
                    if kind in ("action", "level reset"):
                        _add(p.level_seconds, li, secs[i] if i else None)
                        _add(p.level_tokens, li, cols["tokens"][i])
                        _add(p.level_cost, li, cols["cost"][i])
                    if state == "GAME_OVER":
                        p.state = "GAME_OVER"
                        _add(p.level_game_overs, li, 1)
                    elif state == "WIN":
                        p.state = "WIN"
                    lc = cols["levels_completed"][i]
                    if lc != p.levels_completed:
                        p.by_level.append((lc, p.actions))
                    p.levels_completed = lc
                    level = li + 1
                    done_levels = len(p.by_level)
            rows.append((rec.name, int(cols["step"][i]), gid, kind, play_i, level,
                         done_levels))
    steps = pd.DataFrame(rows, columns=["recording", "step", "game_id", "counted", "play",
                                        "level", "levels_done"])
    return cards, steps
