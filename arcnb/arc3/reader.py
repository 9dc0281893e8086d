"""Reading ARC-AGI-3 game recordings: one table row per recorded step, frames left on disk.

Three layouts are read, and many of them at once:

* **a recording file** (``.jsonl``), one JSON object per line,
  ``{"timestamp": ISO-8601, "data": {...}}``: the toolkit's ``<game_id>-<guid>.jsonl``
  (under ``recordings/<scorecard_id>/``) or the agents repository's
  ``<game>.<agent>.<n>.<guid>.recording.jsonl`` (whose last line may hold the scorecard);
* **a folder of recordings**, searched for ``*.jsonl`` files and harness run folders;
* **a benchmarking-harness run folder**: ``run_meta.json`` and one ``step_NNN.json`` per
  action (the response's game data, the action, its reasoning, tokens and cost).

A step's ``data`` carries ``game_id``, ``state`` (``NOT_PLAYED``, ``NOT_FINISHED``,
``WIN``, ``GAME_OVER``), ``levels_completed``, ``win_levels``, ``action_input``
(``id`` as a name such as ``"ACTION6"`` or as the number 0-7, ``data`` with ``x`` and
``y`` for ACTION6, ``reasoning``), ``guid``, ``full_reset``, ``available_actions`` and,
unless recorded without frames, ``frame`` (a list of 2-D layers of colours 0-15; an empty
list for an action sent after the game was won or lost). The older agents' format
(``score`` and ``win_score`` for ``levels_completed`` and ``win_levels``) is read too.

Every file is bounded (its size, each line's size, the number of steps), read one line at a
time; frames and reasoning text are checked while reading, then dropped: the table keeps
where each step is in its file, and :meth:`Recording.frame` / :meth:`Recording.reasoning`
read one step again when it is shown. Structural damage (not JSON, not UTF-8, a frame
that is not a stack of 2-D layers of colours 0-15 at most 64 x 64, an unknown action) is
refused with one line naming the file and the line; what the recorder may have got
wrong is left as recorded and named by :mod:`arcnb.arc3.faults`.
"""
from __future__ import annotations

import hashlib
import json
from array import array
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from ..errors import RecordingError, one_line
from ..io import (MAX_LINE_BYTES, JSONInputError, iter_lines, parse_json_line, read_json,
                  read_range)

__all__ = ["ACTIONS", "STATES", "Recording", "Run", "read_recording", "read_run",
           "read_runs", "find_recordings", "MAX_RECORDING_BYTES", "MAX_STEPS", "MAX_FILES",
           "FRAME_SIZE", "N_COLOURS", "STEP_COLUMNS", "step_table"]

#: Action names by number, as the toolkit numbers them: RESET (0), ACTION1-5, ACTION6 (a
#: click at x, y in 0-63), ACTION7 (undo).
ACTIONS = ("RESET", "ACTION1", "ACTION2", "ACTION3", "ACTION4", "ACTION5", "ACTION6",
           "ACTION7")
#: The game states a step can report.
STATES = ("NOT_PLAYED", "NOT_FINISHED", "WIN", "GAME_OVER")
#: Largest side of a frame layer (the board is 64 x 64).
FRAME_SIZE = 64
#: Colours of a frame: 0-15.
N_COLOURS = 16

#: Largest recording file read (8 GiB): a recording with frames can be hundreds of MB.
MAX_RECORDING_BYTES = 8 * 1024 ** 3
#: Most steps read from one recording (two million): its table takes about 500 bytes a
#: step while it is read (about 1 GB at the bound; 400,000 steps: 0.2 GB, 20 s on 2 cores).
MAX_STEPS = 2_000_000
#: Most recording files (and harness run folders) one folder may hold.
MAX_FILES = 100_000
#: Largest ``run_meta.json`` or ``step_NNN.json`` of a harness run (64 MiB).
MAX_STEP_FILE_BYTES = 64 * 1024 ** 2

#: Most layers in one step's frame (an animation of the step; 64 x 64 each).
MAX_LAYERS = 1_001

#: Most arrays and objects one recording line may hold, checked before it is parsed:
#: a frame of MAX_LAYERS layers of FRAME_SIZE rows, and room for the step's other
#: objects (the action, its data, the reasoning).
LINE_CONTAINERS = MAX_LAYERS * (64 + 1) + 1_000

#: The columns of ``Recording.steps``, one row per recorded step, with their words.
STEP_COLUMNS = {
    "step": "the step's position in its recording, from 0",
    "line": "its line in the recording file (from 1), or the number of its step file",
    "timestamp": "when it was recorded (UTC), NaT when not recorded",
    "game_id": "the game, with its version (ls20-9607627b)",
    "guid": "the game session the toolkit gave it",
    "state": "the game's state after the step",
    "levels_completed": "levels completed after the step",
    "win_levels": "levels the game has",
    "action": "the action sent (RESET, ACTION1-7), or NONE when the step records none",
    "x": "the click's column for ACTION6 (0-63), else NaN",
    "y": "the click's row for ACTION6 (0-63), else NaN",
    "full_reset": "whether the step says the RESET was a full reset",
    "frame": "present (the step's frames), empty (an action after the game ended) or "
             "absent (recorded without frames)",
    "n_layers": "how many frame layers the step holds",
    "frame_changed": "whether its last layer differs from the previous step's (NaN "
                     "without frames on either side)",
    "reasoning_chars": "length of the reasoning text recorded with the action",
    "tokens": "tokens the model used for the step (harness runs), else NaN",
    "cost": "cost of the step in dollars (harness runs), else NaN",
}

_ACTION_INDEX = {name: i for i, name in enumerate(ACTIONS)}
_AGENTS_NAME = re.compile(r"^(?P<game>[^.]+)\.(?P<agent>[^.]+)\.(?P<n>[^.]+)\.(?P<guid>[^.]+)"
                          r"\.recording\.jsonl$")
_STEP_FILE = re.compile(r"^step_(\d+)\.json$")


@dataclass
class _Where:
    """Where each step is: a file and the byte range of its line (file layouts), or its
    own step file (harness runs)."""
    files: list[Path]
    file_of: np.ndarray   # index into files, per step
    offset: np.ndarray    # byte offset of the line (-1 for a whole step file)
    length: np.ndarray    # its length in bytes


@dataclass
class Recording:
    """One recording: a game's steps as one agent played them (one file of the toolkit or
    the agents repository, or one harness run folder).

    ``steps`` has one row per recorded step (:data:`STEP_COLUMNS`); frames and reasoning
    stay on disk and are read back one step at a time by :meth:`frame` and
    :meth:`reasoning`. ``layout`` is ``"toolkit"``, ``"agents"`` or ``"harness"``.
    ``meta`` holds the harness's ``run_meta.json`` (else ``{}``); ``scorecard`` the
    scorecard line the agents' recorder may append (else ``None``); ``agent`` the agent's
    name where the file name or ``run_meta.json`` gives it; ``declared`` what the run
    says of itself (``competition_mode``, ``max_actions``) when it says it."""

    path: Path
    layout: str
    steps: pd.DataFrame
    _where: _Where = field(repr=False)
    meta: dict = field(default_factory=dict, repr=False)
    scorecard: dict | None = field(default=None, repr=False)
    agent: str | None = None
    declared: dict = field(default_factory=dict)
    key: str | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        """The recording's name, unique within its run: its file (or folder) name, or,
        when another recording of the run has the same file name, its path from the
        folder they share (``a/rec.jsonl``, ``b/rec.jsonl``): the tables, the faults and
        the replays key recordings by it."""
        return self.key or self.path.name

    @property
    def game_ids(self) -> list[str]:
        """The games it holds, in order of first appearance."""
        # Series.unique keeps the order of first appearance (no Python loop over steps)
        return self.steps["game_id"].unique().tolist() if len(self.steps) else []

    @property
    def has_frames(self) -> bool:
        """Whether any step carries its frames."""
        return bool((self.steps["frame"] != "absent").any()) if len(self.steps) else False

    def __len__(self) -> int:
        return len(self.steps)

    def _data(self, i: int) -> dict:
        i = int(i)
        if not 0 <= i < len(self.steps):
            raise RecordingError(f"{self.path} has no step {i} (it has {len(self.steps)})",
                                 file=str(self.path))
        w = self._where
        path = w.files[int(w.file_of[i])]
        if w.offset[i] < 0:
            obj = _read_step_file(path)
            return _harness_data(obj, path)[0]
        raw = read_range(path, int(w.offset[i]), int(w.length[i]), what="recording",
                         error=RecordingError)
        line = int(self.steps["line"].iat[i])
        obj = _parse_line(raw, path, line)
        return obj.get("data") if isinstance(obj, dict) else {}

    def step_view(self, i: int) -> tuple[np.ndarray | None, str]:
        """Step ``i``'s last frame layer (``None`` without one) and its reasoning text,
        read from disk once."""
        data = self._data(i)
        frames = _frame_array(data.get("frame"), self.path, int(self.steps["line"].iat[int(i)]))
        return (frames[-1] if frames is not None and frames.shape[0] else None,
                _reasoning_of(data))

    def frame(self, i: int, layer: int | None = -1) -> np.ndarray | None:
        """The frame of step ``i`` read again from disk: its last layer (default) as a
        ``uint8`` array of colours 0-15, every layer (``layer=None``, shape
        ``[layers, rows, columns]``) or one layer by index. ``None`` when the step holds
        no frame (recorded without frames, or an action after the game ended)."""
        frames = _frame_array(self._data(i).get("frame"), self.path,
                              int(self.steps["line"].iat[int(i)]))
        if frames is None or frames.shape[0] == 0:
            return None
        return frames if layer is None else frames[layer]

    def reasoning(self, i: int) -> str:
        """The reasoning text recorded with step ``i``'s action (``""`` when none); an
        object is shown as its JSON."""
        return _reasoning_of(self._data(i))


def _reasoning_of(data: dict) -> str:
    ai = data.get("action_input")
    value = ai.get("reasoning") if isinstance(ai, dict) else None
    if value is None and "reasoning" in data:
        value = data.get("reasoning")
    return _text(value)


@dataclass
class Run:
    """The recordings of one run of an agent (one scorecard): what was given on the
    command line or to :func:`read_run`, with a ``label``. ``competition`` and
    ``max_actions`` say what the run claims: competition mode (one play per game, no
    full resets) and a cap on actions per game, from the harness's ``run_meta.json``
    or given by the caller; ``None`` when nothing says."""

    label: str
    recordings: list[Recording]
    paths: list[str] = field(default_factory=list)
    competition: bool | None = None
    max_actions: int | None = None

    @property
    def steps(self) -> pd.DataFrame:
        """Every recording's steps, one table, with a ``recording`` column."""
        frames = [r.steps.assign(recording=r.name) for r in self.recordings]
        if not frames:
            return pd.DataFrame(columns=["recording", *STEP_COLUMNS])
        return pd.concat(frames, ignore_index=True)

    @property
    def game_ids(self) -> list[str]:
        """The games the run's recordings hold, in order of first appearance."""
        return list(dict.fromkeys(g for r in self.recordings for g in r.game_ids))


# ---------------------------------------------------------------- parsing helpers
def _parse_line(raw: bytes, path: Path, line: int) -> Any:
    try:  # io's parser of a JSON line: UTF-8 (line 1's byte-order mark dropped), bounded,
        # Unicode only, no duplicate key; at most MAX_LAYERS layers of 64 rows (and a few
        # objects more) before parsing: a 30 MB line of 5 million one-cell layers is
        # refused by the scan, never parsed (1.5 GB)
        return parse_json_line(raw, what="recording", path=path, line=line,
                               max_containers=LINE_CONTAINERS)
    except JSONInputError as exc:
        raise RecordingError(str(exc), file=str(path), line=line) from None


def _text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return str(value)


def _frame_array(frame, path: Path, line: int) -> np.ndarray | None:
    """A step's ``frame`` as a ``uint8`` array ``[layers, rows, columns]`` (``None`` when
    absent, 0 layers when empty), refused unless it is a list of equal 2-D layers of
    whole numbers 0-15 at most 64 x 64."""
    if frame is None:
        return None
    where = f"recording {path} line {line}"
    if not isinstance(frame, list):
        raise RecordingError(f"{where}: 'frame' is not a list of layers", file=str(path),
                             line=line)
    if not frame:
        return np.zeros((0, FRAME_SIZE, FRAME_SIZE), dtype=np.uint8)
    if len(frame) > MAX_LAYERS:
        raise RecordingError(f"{where}: the frame has {len(frame)} layers, more than the "
                             f"{MAX_LAYERS} a step shows", file=str(path), line=line)
    try:
        arr = np.array(frame)
    except (ValueError, TypeError):
        raise RecordingError(f"{where}: the frame's layers are ragged (rows of different "
                             "lengths, or layers of different sizes)", file=str(path),
                             line=line) from None
    if arr.dtype == object or arr.ndim != 3:
        raise RecordingError(f"{where}: the frame is not a list of 2-D layers (its shape is "
                             f"{list(arr.shape)})", file=str(path), line=line)
    if arr.dtype.kind not in "iu":
        kind = "true/false" if arr.dtype.kind == "b" else "non-integer"
        raise RecordingError(f"{where}: the frame holds {kind} values, not colours 0-15",
                             file=str(path), line=line)
    rows, cols = arr.shape[1:]
    if not (1 <= rows <= FRAME_SIZE and 1 <= cols <= FRAME_SIZE):
        raise RecordingError(f"{where}: a frame layer is {rows} x {cols}, not at most "
                             f"{FRAME_SIZE} x {FRAME_SIZE}", file=str(path), line=line)
    lo, hi = int(arr.min()), int(arr.max())
    if lo < 0 or hi >= N_COLOURS:
        bad = lo if lo < 0 else hi
        raise RecordingError(f"{where}: the frame holds the value {bad}, outside the "
                             f"colours 0-{N_COLOURS - 1}", file=str(path), line=line)
    return arr.astype(np.uint8)


def _digest(layer: np.ndarray) -> int:
    h = hashlib.blake2b(layer.tobytes(), digest_size=8)
    h.update(str(layer.shape).encode())
    return int.from_bytes(h.digest(), "little", signed=True)


def _action(ai, path: Path, line: int) -> tuple[str, float, float]:
    """``(name, x, y)`` of an ``action_input`` (``NONE`` when there is none)."""
    if ai is None:
        return "NONE", math.nan, math.nan
    if not isinstance(ai, dict):
        raise RecordingError(f"recording {path} line {line}: 'action_input' is not an object",
                             file=str(path), line=line)
    raw = ai.get("id", "RESET")
    name = None
    if isinstance(raw, bool):
        name = None
    elif isinstance(raw, int):
        name = ACTIONS[raw] if 0 <= raw < len(ACTIONS) else None
    elif isinstance(raw, str):
        text = raw.strip().upper()
        text = text.split(".", 1)[1] if text.startswith("GAMEACTION.") else text
        name = text if text in _ACTION_INDEX else None
        if name is None and text.isdigit() and int(text) < len(ACTIONS):
            name = ACTIONS[int(text)]
    if name is None:
        raise RecordingError(f"recording {path} line {line}: unknown action "
                             f"{one_line(repr(raw), 40)} (RESET, ACTION1-7 or 0-7)",
                             file=str(path), line=line)
    x = y = math.nan
    data = ai.get("data")
    if name == "ACTION6" and isinstance(data, dict):
        x, y = _coordinate(data.get("x")), _coordinate(data.get("y"))
    return name, x, y


def _coordinate(v) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return math.nan
    v = float(v)
    return v if math.isfinite(v) and 0 <= v < FRAME_SIZE else math.nan


def _int(data: dict, keys: Sequence[str], path: Path, line: int, default: int = 0) -> int:
    for key in keys:
        if key in data and data[key] is not None:
            v = data[key]
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 10_000:
                raise RecordingError(f"recording {path} line {line}: {key!r} is "
                                     f"{one_line(repr(v), 40)}, not a whole number 0-10000",
                                     file=str(path), line=line)
            return int(v)
    return default


def _state(data: dict, path: Path, line: int) -> str:
    s = data.get("state", "NOT_PLAYED")
    s = s.split(".", 1)[1] if isinstance(s, str) and s.startswith("GameState.") else s
    if s not in STATES:
        raise RecordingError(f"recording {path} line {line}: unknown game state "
                             f"{one_line(repr(s), 40)} ({', '.join(STATES)})",
                             file=str(path), line=line)
    return s


def _timestamp(value) -> pd.Timestamp:
    if not isinstance(value, str):
        return pd.NaT
    try:
        ts = pd.Timestamp(value)
    except (ValueError, TypeError, OverflowError):
        return pd.NaT
    if ts is pd.NaT:
        return pd.NaT
    return ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")


def _number(value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return math.nan
    value = float(value)
    return value if math.isfinite(value) and value >= 0 else math.nan


def _is_step(data) -> bool:
    return isinstance(data, dict) and any(k in data for k in ("state", "action_input",
                                                               "frame", "levels_completed",
                                                               "score"))


class _Table:
    """Columns of the steps table, filled one step at a time."""

    def __init__(self):
        # numbers in typed arrays, the few distinct strings shared, a timestamp as its
        # microseconds: about 150 bytes a step (Python objects took about 700)
        self.cols = {k: (array("q") if k in _INT_COLUMNS or k == "timestamp" else
                         array("d") if k in _FLOAT_COLUMNS else
                         bytearray() if k == "full_reset" else [])
                     for k in STEP_COLUMNS}
        self.file_of, self.offset, self.length = array("q"), array("q"), array("q")
        self.prev_digest = None
        self._strings: dict[str, str] = {}

    def _shared(self, text: str) -> str:
        if len(self._strings) < 100_000:
            return self._strings.setdefault(text, text)
        return text

    def add(self, data: dict, ts, path: Path, line: int, extra: dict | None = None) -> None:
        c = self.cols
        frames = _frame_array(data.get("frame"), path, line)
        name, x, y = _action(data.get("action_input"), path, line)
        ai = data.get("action_input") if isinstance(data.get("action_input"), dict) else {}
        reasoning = ai.get("reasoning")
        if reasoning is None and "reasoning" in data:
            reasoning = data.get("reasoning")
        game_id = data.get("game_id", "")
        guid = data.get("guid")
        c["step"].append(len(c["step"]))
        c["line"].append(line)
        c["timestamp"].append(_NAT if ts is pd.NaT else int(ts.as_unit("us").asm8.view("int64")))
        c["game_id"].append(self._shared(game_id if isinstance(game_id, str)
                                         else _text(game_id)))
        c["guid"].append(self._shared(guid if isinstance(guid, str) else
                                      ("" if guid is None else _text(guid))))
        c["state"].append(self._shared(_state(data, path, line)))
        c["levels_completed"].append(_int(data, ("levels_completed", "score"), path, line))
        c["win_levels"].append(_int(data, ("win_levels", "win_score"), path, line))
        c["action"].append(self._shared(name))
        c["x"].append(math.nan if x is None else x)
        c["y"].append(math.nan if y is None else y)
        c["full_reset"].append(data.get("full_reset") is True)
        if frames is None:
            c["frame"].append("absent")
            c["n_layers"].append(0)
            c["frame_changed"].append(math.nan)
            self.prev_digest = None
        elif frames.shape[0] == 0:
            c["frame"].append("empty")
            c["n_layers"].append(0)
            c["frame_changed"].append(math.nan)
        else:
            d = _digest(frames[-1])
            c["frame"].append("present")
            c["n_layers"].append(int(frames.shape[0]))
            c["frame_changed"].append(math.nan if self.prev_digest is None
                                      else float(d != self.prev_digest))
            self.prev_digest = d
        c["reasoning_chars"].append(len(_text(reasoning)))
        extra = extra or {}
        c["tokens"].append(_number(extra.get("tokens")))
        c["cost"].append(_number(extra.get("cost")))

    def frame(self) -> pd.DataFrame:
        return step_table(self.cols)


def step_table(data) -> pd.DataFrame:
    """A recording's steps table from ``data`` (columns as a dict of lists, or rows as
    a list of dicts, with the keys of :data:`STEP_COLUMNS`), its columns in the reader's
    types: the timestamps in UTC, the counts as int64, coordinates, changes, tokens and
    cost as float64 (NaN where absent), ``full_reset`` as bool."""
    if not isinstance(data, dict):  # rows: as columns first
        data = pd.DataFrame(data, columns=list(STEP_COLUMNS)).to_dict(orient="list")
    # each column typed once, then one frame (a column set and cast one at a time cost
    # ~14 ms per recording: 20,000 one-step recordings spent minutes here)
    cols = {}
    for col in STEP_COLUMNS:
        v = data[col]
        if col == "timestamp" and isinstance(v, array):  # microseconds (the reader's table)
            cols[col] = pd.DatetimeIndex(np.frombuffer(v, dtype=np.int64).view("M8[us]")
                                         ).tz_localize("UTC")
        elif col == "timestamp":
            cols[col] = pd.to_datetime(pd.Series(v, dtype=object), utc=True)
        elif col in _INT_COLUMNS:
            cols[col] = (np.frombuffer(v, dtype=np.int64).copy() if isinstance(v, array)
                         else np.asarray(v, dtype=np.int64))
        elif col in _FLOAT_COLUMNS:
            cols[col] = (np.frombuffer(v, dtype=np.float64).copy() if isinstance(v, array)
                         else np.asarray([math.nan if x is None else x for x in v],
                                         dtype=np.float64))
        elif col == "full_reset":
            cols[col] = (np.frombuffer(bytes(v), dtype=np.uint8).astype(bool)
                         if isinstance(v, bytearray) else np.asarray(v, dtype=bool))
        else:
            cols[col] = pd.array(list(v), dtype="str")
    return pd.DataFrame(cols)


#: A missing timestamp in the reader's table (numpy's NaT as an int64).
_NAT = np.iinfo(np.int64).min

_INT_COLUMNS = frozenset({"step", "line", "levels_completed", "win_levels", "n_layers",
                          "reasoning_chars"})
_FLOAT_COLUMNS = frozenset({"x", "y", "frame_changed", "tokens", "cost"})


# ---------------------------------------------------------------- the layouts
def read_recording(path: str | os.PathLike, *, max_bytes: int = MAX_RECORDING_BYTES,
                   max_line_bytes: int = MAX_LINE_BYTES, max_steps: int = MAX_STEPS
                   ) -> Recording:
    """One recording: a ``.jsonl`` file (the toolkit's or the agents repository's) or a
    harness run folder (``run_meta.json`` and ``step_NNN.json`` files). Bounded by
    ``max_bytes`` (the file), ``max_line_bytes`` (each line) and ``max_steps``; refused
    with a :class:`~arcnb.errors.RecordingError` (one line) when damaged."""
    path = Path(path)
    if path.is_dir():
        if (path / "run_meta.json").is_file():
            return _read_harness(path, max_steps=max_steps)
        raise RecordingError(f"{path} is a folder without run_meta.json, not a recording "
                             "(give it to read_run to read the recordings inside)",
                             file=str(path))
    table = _Table()
    scorecard = scorecard_line = None
    for line, offset, raw in iter_lines(path, what="recording", max_bytes=max_bytes,
                                        max_line_bytes=max_line_bytes, error=RecordingError):
        if not raw.strip():
            continue
        obj = _parse_line(raw, path, line)
        if not isinstance(obj, dict):
            raise RecordingError(f"recording {path} line {line} is not a JSON object",
                                 file=str(path), line=line)
        data = obj.get("data", obj) if "data" in obj else obj
        if scorecard_line is not None:
            raise RecordingError(f"recording {path} line {scorecard_line} is not a game step: "
                                 "a scorecard line ({game_id: card}) is only the last line",
                                 file=str(path), line=scorecard_line)
        if not _is_step(data):
            if isinstance(data, dict) and data and all(isinstance(v, dict) for v in data.values()):
                scorecard, scorecard_line = data, line  # the agents' recorder's last line
                continue
            raise RecordingError(f"recording {path} line {line} is not a game step (no "
                                 "'state', 'action_input' or 'frame')", file=str(path),
                                 line=line)
        if len(table.cols["step"]) >= max_steps:
            raise RecordingError(f"recording {path} has more than {max_steps} steps",
                                 file=str(path), line=line)
        table.add(data, _timestamp(obj.get("timestamp")), path, line)
        table.file_of.append(0)
        table.offset.append(offset)
        table.length.append(len(raw))
    if not table.cols["step"]:
        raise RecordingError(f"recording {path} holds no game step"
                             + (" (only a scorecard line)" if scorecard is not None else
                                " (it is empty)"), file=str(path))
    m = _AGENTS_NAME.match(path.name)
    layout = "agents" if m else "toolkit"
    return Recording(path=path, layout=layout, steps=table.frame(),
                     _where=_Where([path], np.asarray(table.file_of, dtype=np.int64),
                                   np.asarray(table.offset, dtype=np.int64),
                                   np.asarray(table.length, dtype=np.int64)),
                     scorecard=scorecard, agent=m.group("agent") if m else None)


def _read_step_file(path: Path) -> Any:
    return read_json(path, what="harness step file", max_bytes=MAX_STEP_FILE_BYTES)


def _usage(obj: dict) -> tuple[float, float]:
    """Tokens and cost of a harness step: ``usage.total_tokens`` (or the sum of
    ``prompt_tokens`` and ``completion_tokens``, or a number ``tokens``) and ``cost``
    (a number, or ``cost.total_cost``)."""
    tokens = math.nan
    for key in ("usage", "tokens"):
        u = obj.get(key)
        if isinstance(u, dict):
            total = _number(u.get("total_tokens"))
            if math.isnan(total):
                parts = [_number(u.get(k)) for k in ("prompt_tokens", "completion_tokens",
                                                      "input_tokens", "output_tokens")]
                parts = [p for p in parts if not math.isnan(p)]
                total = float(sum(parts)) if parts else math.nan
            tokens = total
        elif u is not None:
            tokens = _number(u)
        if not math.isnan(tokens):
            break
    c = obj.get("cost")
    cost = _number(c.get("total_cost")) if isinstance(c, dict) else _number(c)
    return tokens, cost


def _harness_data(obj, path: Path) -> tuple[dict, dict]:
    """A harness step file as ``(data, extra)``: the game's response (under
    ``frame_data``, ``response``, ``result``, ``observation``, ``game_state`` or
    ``data``, or at the top) with the action (``action``, ``parsed_action`` or ``action_input``: a name,
    or an object with ``id``/``action``/``name`` and ``x``, ``y`` or ``data``) and its
    ``reasoning``; ``extra`` holds the tokens and the cost."""
    if not isinstance(obj, dict):
        raise RecordingError(f"harness step file {path} is not a JSON object", file=str(path))
    data = None
    for key in ("frame_data", "response", "result", "observation", "game_state", "data"):
        if isinstance(obj.get(key), dict):
            data = dict(obj[key])
            break
    if data is None:
        data = dict(obj)
    action = None
    for key in ("action_input", "parsed_action", "action"):
        for source in (data, obj):
            if source.get(key) is not None:
                action = source[key]
                break
        if action is not None:
            break
    if isinstance(action, (str, int)) and not isinstance(action, bool):
        action = {"id": action}
    if isinstance(action, dict):
        ai = dict(action)
        if "id" not in ai:
            ai["id"] = ai.get("action", ai.get("name", "RESET"))
        if not isinstance(ai.get("data"), dict):
            ai["data"] = {k: ai[k] for k in ("x", "y") if k in ai}
        if ai.get("reasoning") is None and obj.get("reasoning") is not None:
            ai["reasoning"] = obj["reasoning"]
        data["action_input"] = ai
    elif action is not None:
        raise RecordingError(f"harness step file {path}: the action is not a name or an "
                             "object", file=str(path))
    tokens, cost = _usage(obj)
    return data, {"tokens": tokens, "cost": cost}


def _read_harness(folder: Path, *, max_steps: int) -> Recording:
    meta = read_json(folder / "run_meta.json", what="harness run_meta.json",
                     max_bytes=MAX_STEP_FILE_BYTES)
    if not isinstance(meta, dict):
        raise RecordingError(f"{folder / 'run_meta.json'} is not a JSON object",
                             file=str(folder / "run_meta.json"))
    numbered = []
    for n, entry in enumerate(os.scandir(folder)):
        if n > MAX_FILES + 2:
            raise RecordingError(f"harness run folder {folder} holds more than {MAX_FILES} "
                                 "files", file=str(folder))
        m = _STEP_FILE.match(entry.name)
        if m and entry.is_file():
            if len(m.group(1).lstrip("0")) > 12:  # a step number, not a 64-bit overflow
                raise RecordingError(f"harness step file {Path(entry.path)} is numbered beyond "
                                     "any step a run takes (at most 12 digits)",
                                     file=str(entry.path))
            numbered.append((int(m.group(1)), Path(entry.path)))
    numbered.sort()
    if len(numbered) > max_steps:
        raise RecordingError(f"harness run folder {folder} has more than {max_steps} steps",
                             file=str(folder))
    table = _Table()
    default_game = meta.get("game_id")
    for n, path in numbered:
        obj = _read_step_file(path)
        data, extra = _harness_data(obj, path)
        if "game_id" not in data and isinstance(default_game, str):
            data["game_id"] = default_game
        if not _is_step(data):
            raise RecordingError(f"harness step file {path} holds no game step (no 'state', "
                                 "'action_input' or 'frame')", file=str(path))
        ts = obj.get("timestamp", data.get("timestamp"))
        table.add(data, _timestamp(ts), path, n, extra)
    files = [p for _, p in numbered]
    declared = {}
    if isinstance(meta.get("competition_mode"), bool):
        declared["competition_mode"] = meta["competition_mode"]
    cap = meta.get("max_actions")
    if isinstance(cap, int) and not isinstance(cap, bool) and cap > 0:
        declared["max_actions"] = cap
    agent = next((meta[k] for k in ("agent", "config", "model") if isinstance(meta.get(k), str)),
                 None)
    k = len(files)
    return Recording(path=folder, layout="harness", steps=table.frame(),
                     _where=_Where(files, np.arange(k, dtype=np.int64),
                                   np.full(k, -1, dtype=np.int64), np.zeros(k, dtype=np.int64)),
                     meta=meta, agent=agent, declared=declared)


def find_recordings(path: str | os.PathLike, *, max_files: int = MAX_FILES) -> list[Path]:
    """The recordings a path holds: itself (a ``.jsonl`` file or a harness run folder),
    or, for a folder, every ``*.jsonl`` file and harness run folder under it (links to
    folders are not followed), sorted. A folder with none is refused."""
    path = Path(path)
    if not path.exists():
        raise RecordingError(f"recording not found: {path}", file=str(path))
    if path.is_file() or (path / "run_meta.json").is_file():
        return [path]
    if not path.is_dir():
        raise RecordingError(f"{path} is not a file or a folder", file=str(path))
    found: list[Path] = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        if "run_meta.json" in files:
            found.append(Path(root))
            dirs[:] = []
            continue
        for f in sorted(files):
            if f.endswith(".jsonl"):
                found.append(Path(root) / f)
        if len(found) > max_files:
            raise RecordingError(f"{path} holds more than {max_files} recordings",
                                 file=str(path))
    if not found:
        raise RecordingError(f"{path} holds no recording (no *.jsonl file and no folder "
                             "with run_meta.json)", file=str(path))
    return sorted(found)


def read_run(paths: str | os.PathLike | Iterable[str | os.PathLike], *,
             label: str | None = None, competition: bool | None = None,
             max_actions: int | None = None, **bounds) -> Run:
    """The recordings of one run (one scorecard): each path a recording file, a harness
    run folder or a folder of them (see :func:`find_recordings`). ``competition`` and
    ``max_actions`` say what the run claims (default: what its harness
    ``run_meta.json`` files say, else nothing). ``bounds`` go to
    :func:`read_recording`."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = [str(p) for p in paths]
    if not paths:
        raise RecordingError("no recording given")
    recs: list[Recording] = []
    seen = set()
    for p in paths:
        for f in find_recordings(p):
            key = os.path.realpath(f)
            if key in seen:
                continue
            seen.add(key)
            recs.append(read_recording(f, **bounds))
    _unique_names(recs)
    if competition is None:
        claims = {r.declared["competition_mode"] for r in recs if "competition_mode" in r.declared}
        competition = True if True in claims else (False if claims else None)
    if max_actions is None:
        caps = [r.declared["max_actions"] for r in recs if "max_actions" in r.declared]
        max_actions = min(caps) if caps else None
    elif isinstance(max_actions, bool) or not isinstance(max_actions, int) or max_actions < 1:
        raise RecordingError(f"max_actions must be a whole number >= 1, got {max_actions!r}")
    if label is None:
        agents = sorted({r.agent for r in recs if r.agent})
        label = agents[0] if len(agents) == 1 else Path(paths[0]).name or str(paths[0])
    return Run(label=str(label), recordings=recs, paths=paths, competition=competition,
               max_actions=max_actions)


def _unique_names(recs: list[Recording]) -> None:
    """Give recordings that share a file name their path from the folder they share."""
    by_name: dict[str, list[Recording]] = {}
    for r in recs:
        by_name.setdefault(r.path.name, []).append(r)
    for same in by_name.values():
        if len(same) < 2:
            continue
        paths = [Path(os.path.abspath(r.path)) for r in same]
        root = Path(os.path.commonpath([str(p) for p in paths]))
        for r, p in zip(same, paths):
            r.key = p.relative_to(root).as_posix() if p != root else str(p)


def read_runs(runs: Iterable, *, labels: Sequence[str] | None = None, **kw) -> list[Run]:
    """Several runs at once (to compare agents): each item a path or a list of paths of
    one run (see :func:`read_run`); ``labels`` name them."""
    runs = list(runs)
    labels = list(labels) if labels is not None else [None] * len(runs)
    if len(labels) != len(runs):
        raise RecordingError(f"{len(labels)} labels for {len(runs)} runs")
    return [r if isinstance(r, Run) else read_run(r, label=lab, **kw)
            for r, lab in zip(runs, labels)]
