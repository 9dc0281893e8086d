"""A small ARC-AGI-3 game in pure Python, and recordings of it in the toolkit's exact line
format, for the arc3 tests.

The game: a 64 x 64 board of 4 x 4-pixel cells (16 x 16 cells). The player (blue) walks
with ACTION1-4 (up, down, left, right) to the goal (green); a step onto a trap (red) is
GAME_OVER. ACTION5, ACTION6 (a click) and ACTION7 leave the board as it is. Reaching the
goal completes the level; completing the last level wins. The engine follows
``arcengine`` 0.9.3's rules where the recordings show them: a RESET is a full reset when
the level has had no action yet or the game is won, else a level reset; an action sent
after GAME_OVER or WIN returns an empty frame (and the default ``levels_completed`` 0);
finishing a level renders two layers (the old level's last frame, the new level's first).

The human baseline of a level is its shortest walk (``Game.baseline()``), so an agent that
walks m times as far on every level has RHAE ``100 / m**2`` per level, in closed form.
"""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

CELL = 4
N = 64 // CELL
MOVES = {"ACTION1": (-1, 0), "ACTION2": (1, 0), "ACTION3": (0, -1), "ACTION4": (0, 1)}
WALL, FLOOR, PLAYER, GOAL, TRAP = 5, 0, 9, 14, 8

#: Default levels: start, goal, traps (cells as (row, column)).
LEVELS = (
    {"start": (1, 1), "goal": (1, 6), "traps": {(2, 3)}},            # 5 steps
    {"start": (2, 2), "goal": (5, 4), "traps": {(0, 0)}},            # 5 steps
    {"start": (8, 8), "goal": (12, 12), "traps": {(9, 9), (7, 7)}},  # 8 steps
)


class Game:
    """The engine: ``perform(action, data)`` returns the response the toolkit records."""

    def __init__(self, game_id: str = "tw01-0a1b2c3d", levels=LEVELS):
        self.game_id = game_id
        self.levels = [dict(lv) for lv in levels]
        self.state = "NOT_PLAYED"
        self.score = 0
        self.level = 0
        self.action_count = 0
        self.pos = self.levels[0]["start"]

    def baseline(self) -> list[int]:
        return [abs(lv["goal"][0] - lv["start"][0]) + abs(lv["goal"][1] - lv["start"][1])
                for lv in self.levels]

    def render(self) -> list[list[int]]:
        lv = self.levels[self.level]
        board = np.full((64, 64), FLOOR, dtype=np.int64)
        board[0, :] = board[-1, :] = board[:, 0] = board[:, -1] = WALL
        for (r, c), colour in [*((t, TRAP) for t in lv["traps"]), (lv["goal"], GOAL),
                               (self.pos, PLAYER)]:
            board[r * CELL + 1:(r + 1) * CELL, c * CELL + 1:(c + 1) * CELL] = colour
        board[62, 1:1 + self.level + 1] = 11  # a level counter in yellow
        return board.tolist()

    def _set_level(self, k: int) -> None:
        self.level = k
        self.action_count = 0
        self.pos = self.levels[k]["start"]

    def perform(self, action: str, data: dict | None = None) -> dict:
        full = False
        if action == "RESET":
            if self.action_count == 0 or self.state == "WIN":
                self.score = 0
                self._set_level(0)
                full = True
            else:
                self._set_level(self.level)
            self.state = "NOT_FINISHED"
            return self._response(action, data, [self.render()], full)
        if self.state in ("GAME_OVER", "WIN"):
            # arcengine answers with an empty frame and FrameData's defaults
            return {"state": self.state, "levels_completed": 0, "win_levels": 0,
                    "frame": [], "full_reset": False, "action": action, "data": data or {}}
        self.state = "NOT_FINISHED"
        self.action_count += 1
        frames = []
        if action in MOVES:
            dr, dc = MOVES[action]
            r, c = self.pos[0] + dr, self.pos[1] + dc
            if 0 <= r < N and 0 <= c < N:
                self.pos = (r, c)
            lv = self.levels[self.level]
            if self.pos in lv["traps"]:
                self.state = "GAME_OVER"
            elif self.pos == lv["goal"]:
                frames.append(self.render())
                self.score += 1
                if self.score == len(self.levels):
                    self.state = "WIN"
                    return self._response(action, data, frames, full)
                self._set_level(self.level + 1)
        frames.append(self.render())
        return self._response(action, data, frames, full)

    def _response(self, action, data, frames, full) -> dict:
        return {"state": self.state, "levels_completed": self.score,
                "win_levels": len(self.levels), "frame": frames, "full_reset": full,
                "action": action, "data": data or {}}


class Recorder:
    """Writes the toolkit's recording lines (``EnvironmentWrapper._set_last_response``
    and ``_record``): ``{"timestamp", "data": {game_id, state, levels_completed,
    win_levels, action_input {id, data, reasoning}, guid, full_reset,
    available_actions[, frame]}}``, one JSON object per line, ``json.dump``'s default
    separators; one second between steps from a fixed start (deterministic)."""

    def __init__(self, path, game_id: str, guid: str, *, frames: bool = True,
                 start: datetime | None = None, action_names: bool = True):
        self.path = Path(path)
        self.game_id = game_id
        self.guid = guid
        self.frames = frames
        self.t = start or datetime(2026, 3, 25, 12, 0, tzinfo=timezone.utc)
        self.action_names = action_names
        self.n = 0
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def record(self, resp: dict, reasoning=None) -> dict:
        action = resp["action"]
        ident = action if self.action_names else (0 if action == "RESET"
                                                  else int(action[-1]))
        data = {"game_id": self.game_id, "state": resp["state"],
                "levels_completed": resp["levels_completed"],
                "win_levels": resp["win_levels"],
                "action_input": {"id": ident, "data": resp["data"], "reasoning": reasoning},
                "guid": self.guid, "full_reset": resp["full_reset"],
                "available_actions": [1, 2, 3, 4, 5, 6, 7]}
        if self.frames:
            data["frame"] = resp["frame"]
        event = {"timestamp": (self.t + timedelta(seconds=self.n)).isoformat(), "data": data}
        self.n += 1
        with open(self.path, "a", encoding="utf-8") as f:
            json.dump(event, f)
            f.write("\n")
        return event


def walk(game: Game, level: int) -> list[str]:
    """The shortest walk of a level (rows first, then columns; the default levels have
    no trap on it)."""
    lv = game.levels[level]
    (r0, c0), (r1, c1) = lv["start"], lv["goal"]
    moves = ["ACTION2" if r1 > r0 else "ACTION1"] * abs(r1 - r0)
    moves += ["ACTION4" if c1 > c0 else "ACTION3"] * abs(c1 - c0)
    return moves


def wasteful(game: Game, level: int, m: int) -> list[str]:
    """``m`` times the shortest walk's actions: the walk plus ``(m - 1) x h`` actions
    that leave the board unchanged (ACTION5)."""
    h = len(walk(game, level))
    return ["ACTION5"] * ((m - 1) * h) + walk(game, level)


def play(path, actions, *, game: Game | None = None, guid: str = "g-0001",
         frames: bool = True, reasoning=None, action_names: bool = True,
         start: datetime | None = None) -> Game:
    """Play ``actions`` (names, or ``("ACTION6", x, y)``) on ``game`` and record every
    response at ``path``. ``reasoning``: a function of the step number giving the text
    recorded with that action, or None."""
    game = game or Game()
    rec = Recorder(path, game.game_id, guid, frames=frames, action_names=action_names,
                   start=start)
    for k, a in enumerate(actions):
        data = None
        if isinstance(a, tuple):
            a, x, y = a
            data = {"game_id": game.game_id, "x": x, "y": y}
        resp = game.perform(a, data)
        rec.record(resp, reasoning(k) if reasoning else None)
    return game


def agent(game: Game, m: int = 1, levels: int | None = None) -> list[str]:
    """An agent of known efficiency: the opening RESET, then ``m`` x the shortest walk on
    each of the first ``levels`` levels (all by default)."""
    out = ["RESET"]
    for k in range(len(game.levels) if levels is None else levels):
        out += wasteful(game, k, m)
    return out


GAME_B_LEVELS = (
    {"start": (3, 3), "goal": (3, 8), "traps": set()},              # 5 steps
    {"start": (4, 4), "goal": (6, 6), "traps": {(10, 10)}},         # 4 steps
    {"start": (1, 1), "goal": (10, 1), "traps": set()},             # 9 steps
)


def _t(minutes: int) -> datetime:
    return datetime(2026, 3, 25, 12, 0, tzinfo=timezone.utc) + timedelta(minutes=minutes)


def scenario(folder) -> dict:
    """A scorecard folder exercising every accounting rule; returns the baselines.

    * ``tw01`` (levels of 5, 5, 8 steps), two files. The first: level 1 at twice the
      baseline; on level 2 two steps, a level reset, then the walk; on level 3 a step
      onto a trap (GAME_OVER), an action sent after it (empty frame), a level reset, the
      walk (WIN), an action after the win (empty frame), a RESET after the win (a full
      reset: a second play) and level 1 walked. The second file: a third play at the
      baseline on every level (100).
    * ``tw02`` (levels of 5, 4, 9 steps, baselines 6, 4, 9): level 1 walked in 5 (scores
      the 115 cap), level 2 with clicks at twice the baseline, level 3 not finished.
    * ``tw03``: played without baselines (scores 0).
    * ``tw04``: baselines for one level, two levels played (scores 0).
    """
    folder = Path(folder)
    a = Game("tw01-0a1b2c3d")
    first = ["RESET"] + wasteful(a, 0, 2) + ["ACTION4", "ACTION4", "RESET"]
    first += walk(a, 1) + ["ACTION2", "ACTION4", "ACTION1", "RESET"] + walk(a, 2)
    first += ["ACTION3", "RESET"] + walk(a, 0)
    play(folder / "tw01-0a1b2c3d-aaaa-1.jsonl", first, game=a, guid="aaaa-1",
         start=_t(0), reasoning=lambda k: f"step {k}: walk to the green cell")
    a2 = Game("tw01-0a1b2c3d")
    play(folder / "tw01-0a1b2c3d-aaaa-2.jsonl", agent(a2), game=a2, guid="aaaa-2",
         start=_t(10))
    b = Game("tw02-1b2c3d4e", GAME_B_LEVELS)
    clicks = [("ACTION6", 10 + k, 20 + 2 * k) for k in range(4)]
    second = ["RESET"] + walk(b, 0) + clicks + walk(b, 1) + ["ACTION2", "ACTION2"]
    play(folder / "tw02-1b2c3d4e-bbbb-1.jsonl", second, game=b, guid="bbbb-1", start=_t(20))
    c = Game("tw03-2c3d4e5f")
    play(folder / "tw03-2c3d4e5f-cccc-1.jsonl", agent(c, 1, 1), game=c, guid="cccc-1",
         start=_t(30))
    d = Game("tw04-3d4e5f6a")
    play(folder / "tw04-3d4e5f6a-dddd-1.jsonl", agent(d, 1, 2), game=d, guid="dddd-1",
         start=_t(40))
    return {"tw01-0a1b2c3d": a.baseline(), "tw02-1b2c3d4e": [6, 4, 9],
            "tw04-3d4e5f6a": [5]}


def step(action="ACTION1", lc=0, *, state="NOT_FINISHED", full=False, colour=None,
         frame="layer", x=None, y=None, game="hb01-00000001", guid="hand-1", win=6,
         reasoning=None, ts=None) -> dict:
    """One hand-built recording line. ``frame``: ``"layer"`` (one 64 x 64 layer of
    ``colour``, default ``lc``), ``"empty"`` (``[]``), ``"absent"`` (no key) or a list."""
    data = {"x": x, "y": y, "game_id": game} if action == "ACTION6" else {}
    d = {"game_id": game, "state": state, "levels_completed": lc, "win_levels": win,
         "action_input": None if action is None else
         {"id": action, "data": data, "reasoning": reasoning},
         "guid": guid, "full_reset": full, "available_actions": [1, 2, 3, 4, 5, 6, 7]}
    if frame == "layer":
        d["frame"] = [[[lc if colour is None else colour] * 64 for _ in range(64)]]
    elif frame == "empty":
        d["frame"] = []
    elif frame != "absent":
        d["frame"] = frame
    return {"timestamp": ts or "2026-03-25T12:00:00+00:00", "data": d}


def write_lines(path, steps) -> Path:
    """Write hand-built lines (``step(...)`` dicts, or raw strings/bytes) as a recording."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        for s in steps:
            if isinstance(s, bytes):
                f.write(s + b"\n")
            elif isinstance(s, str):
                f.write(s.encode("utf-8") + b"\n")
            else:
                f.write(json.dumps(s).encode("utf-8") + b"\n")
    return path


def level_walk(levels, start_lc=0, **kw) -> list[dict]:
    """Lines of one play from its opening RESET: ``levels[k]`` actions (ACTION5) on level
    k + 1, the last of them completing it (an int), or left unfinished (``("open", n)``)."""
    out = [step("RESET", start_lc, full=True, **kw)]
    lc = start_lc
    for item in levels:
        if isinstance(item, tuple):
            out += [step("ACTION5", lc, **kw) for _ in range(item[1])]
            continue
        out += [step("ACTION5", lc, **kw) for _ in range(item - 1)]
        lc += 1
        out.append(step("ACTION5", lc, **kw))
    return out


def baselines_csv(path, baselines: dict) -> Path:
    """``baselines`` (game -> each level's baseline actions) as the human-baseline CSV."""
    import csv

    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["game_id", "level", "baseline_actions"])
        for g, levels in baselines.items():
            for i, v in enumerate(levels, 1):
                w.writerow([g, i, v])
    return Path(path)


def second_agent(folder, reasoning=None) -> None:
    """A second agent's recordings of two games in ``folder`` (2 and 3 times the shortest
    play), beside :func:`scenario`'s."""
    for i, m in enumerate([2, 3]):
        g = Game("tw01-0a1b2c3d") if i == 0 else Game("tw02-1b2c3d4e", GAME_B_LEVELS)
        kw = {"reasoning": reasoning} if reasoning else {}
        play(Path(folder) / f"{g.game_id}-b{i}.jsonl", agent(g, m), game=g, guid=f"b{i}", **kw)
