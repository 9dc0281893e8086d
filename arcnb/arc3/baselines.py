"""Human baselines of ARC-AGI-3 games: the actions a human player needed per level.

From the games' ``metadata.json`` files (their ``baseline_actions``, levels in order from
level 1), laid out as the toolkit downloads them (``<game>/<version>/metadata.json``) or
one folder per game (``<game_id>/metadata.json``); or from a CSV with the header
``game_id,level,baseline_actions`` (levels numbered from 1, every level of a game
listed once). A game id keeps its version (``ls20-9607627b``): the official scorecard
matches baselines to a game by its full id.
"""
from __future__ import annotations

import csv
import io as _io
import os
from pathlib import Path
from typing import Mapping

from ..errors import BaselinesError, JSONInputError, one_line
from ..io import read_json, read_text

__all__ = ["read_baselines", "check_baselines", "MAX_METADATA_FILES", "MAX_LEVELS"]

#: Most ``metadata.json`` files read from one folder.
MAX_METADATA_FILES = 100_000
#: Most levels a game may have (the toolkit's level counter stops at 254).
MAX_LEVELS = 254
#: Largest ``metadata.json`` or baselines CSV read (16 MiB).
MAX_BASELINE_BYTES = 16 * 1024 ** 2


def _whole(v, where: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 0 or v > 10 ** 9:
        raise BaselinesError(f"{where}: a baseline is {one_line(repr(v), 40)}, not a whole "
                             "number of actions >= 0")
    return int(v)


def check_baselines(baselines: Mapping) -> dict[str, list[int]]:
    """``{game_id: [actions of level 1, level 2, ...]}`` checked (whole numbers >= 0, at
    most :data:`MAX_LEVELS` levels)."""
    if not isinstance(baselines, Mapping):
        raise BaselinesError("baselines must map each game id to its list of baseline "
                             "actions per level")
    out = {}
    for gid, levels in baselines.items():
        where = f"baselines of game {one_line(str(gid), 80)}"
        if levels is None:
            levels = []
        if not isinstance(levels, (list, tuple)):
            raise BaselinesError(f"{where}: not a list of actions per level")
        if len(levels) > MAX_LEVELS:
            raise BaselinesError(f"{where}: {len(levels)} levels, more than {MAX_LEVELS}")
        out[str(gid)] = [_whole(v, where) for v in levels]
    return out


def _from_metadata(path: Path, root: Path) -> tuple[str, list[int]]:
    try:
        meta = read_json(path, what="game metadata.json", max_bytes=MAX_BASELINE_BYTES)
    except JSONInputError as exc:
        raise BaselinesError(str(exc)) from None
    if not isinstance(meta, dict):
        raise BaselinesError(f"game metadata {path} is not a JSON object")
    gid = meta.get("game_id")
    if not isinstance(gid, str) or not gid.strip():
        rel = path.parent.relative_to(root).parts if path.parent != root else ()
        if len(rel) >= 2:
            gid = f"{rel[-2]}-{rel[-1]}"
        elif len(rel) == 1:
            gid = rel[0]
        else:
            raise BaselinesError(f"game metadata {path} has no game_id and no folder names "
                                 "it (<game>/<version>/metadata.json or "
                                 "<game_id>/metadata.json)")
    levels = meta.get("baseline_actions")
    return gid, check_baselines({gid: levels})[gid]


def _from_folder(folder: Path) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    where: dict[str, Path] = {}
    n = 0
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        if "metadata.json" in files:
            n += 1
            if n > MAX_METADATA_FILES:
                raise BaselinesError(f"{folder} holds more than {MAX_METADATA_FILES} "
                                     "metadata.json files")
            path = Path(root) / "metadata.json"
            gid, levels = _from_metadata(path, folder)
            if gid in out and out[gid] != levels:
                raise BaselinesError(f"game {one_line(gid, 80)} has two different baselines: "
                                     f"{where[gid]} and {path}")
            out[gid] = levels
            where[gid] = path
    if not out:
        raise BaselinesError(f"{folder} holds no metadata.json (expected "
                             "<game>/<version>/metadata.json or <game_id>/metadata.json)")
    return out


def _from_csv(path: Path) -> dict[str, list[int]]:
    try:
        text = read_text(path, what="baselines CSV", max_bytes=MAX_BASELINE_BYTES)
    except JSONInputError as exc:
        raise BaselinesError(str(exc)) from None
    rows = csv.reader(_io.StringIO(text))
    header = [h.strip() for h in next(rows, [])]
    need = ["game_id", "level", "baseline_actions"]
    if [h for h in header if h] != need:
        raise BaselinesError(f"baselines CSV {path}: the header must be "
                             f"{','.join(need)}, got {one_line(','.join(header), 80)!r}")
    levels: dict[str, dict[int, int]] = {}
    for n, row in enumerate(rows, 2):
        if not any(c.strip() for c in row):
            continue
        if len(row) < 3 or any(c.strip() for c in row[3:]):
            raise BaselinesError(f"baselines CSV {path} line {n}: expected 3 values, got "
                                 f"{len(row)}")
        gid, level, actions = (c.strip() for c in row[:3])
        if not gid:
            raise BaselinesError(f"baselines CSV {path} line {n}: empty game_id")
        try:
            lv, act = int(level), int(actions)
        except ValueError:
            raise BaselinesError(f"baselines CSV {path} line {n}: level and baseline_actions "
                                 "must be whole numbers") from None
        if not 1 <= lv <= MAX_LEVELS:
            raise BaselinesError(f"baselines CSV {path} line {n}: level {lv} is not in "
                                 f"1-{MAX_LEVELS} (levels are numbered from 1)")
        game = levels.setdefault(gid, {})
        if lv in game:
            raise BaselinesError(f"baselines CSV {path} line {n}: game {one_line(gid, 80)} "
                                 f"level {lv} is listed twice")
        game[lv] = _whole(act, f"baselines CSV {path} line {n}")
    if not levels:
        raise BaselinesError(f"baselines CSV {path} holds no baseline")
    out = {}
    for gid, game in levels.items():
        missing = sorted(set(range(1, max(game) + 1)) - set(game))
        if missing:
            raise BaselinesError(f"baselines CSV {path}: game {one_line(gid, 80)} lacks level "
                                 f"{missing[0]} (every level from 1 is needed)")
        out[gid] = [game[i] for i in range(1, max(game) + 1)]
    return out


def read_baselines(source) -> dict[str, list[int]]:
    """Human baselines as ``{game_id: [actions of level 1, level 2, ...]}`` from a folder
    of game ``metadata.json`` files, one ``metadata.json``, a CSV
    (``game_id,level,baseline_actions``) or a mapping already in that form."""
    if isinstance(source, Mapping):
        return check_baselines(source)
    path = Path(source)
    if path.is_dir():
        return _from_folder(path)
    if not path.exists():
        raise BaselinesError(f"baselines not found: {path}")
    if path.name == "metadata.json" or path.suffix.lower() == ".json":
        gid, levels = _from_metadata(path, path.parent.parent)
        return {gid: levels}
    return _from_csv(path)
