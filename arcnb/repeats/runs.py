"""Finding and grouping the runs of a many-runs analysis (:mod:`arcnb.repeats`): the
sources given, the runs found under a root folder (the benchmarking harness's
``submissions/`` tree included), and their configurations (folder level, a name
pattern such as ``config-seed3``, or a CSV of run, config, seed)."""
from __future__ import annotations

import io
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import RepeatsError
from ..front import PredictionsSource, RunDirSource, parse_source
from ..io import read_text
from ..runs import Run, unique_labels
from ..text import printable

#: Most runs one analysis takes (a root holding more is refused, not walked forever).
MAX_RUNS = 10_000
#: Deepest folder below a root that is searched for runs.
MAX_DEPTH = 16
_PATTERN = re.compile(r"^(?P<config>.+?)[-_.]?(?:seed|run|rep|trial)[-_=]?(?P<seed>\d+)$",
                      re.IGNORECASE)


@dataclass(frozen=True)
class RunEntry:
    """One run to open: its ``name`` (the source as given, or its path relative to
    ``root``), what :func:`arcnb.open` takes (``source``), and the root it was found
    under (None for a source given directly)."""

    name: str
    source: object
    root: str | None = None
    rel: str | None = None  # the path below the root, when the name is qualified by it

    @property
    def parts(self) -> tuple[str, ...]:
        """The folders of the path below the root (``a/v1/public`` -> ``("a", "v1",
        "public")``): the folder levels grouping reads, whatever qualifies the name."""
        return Path(self.rel or self.name).parts


def _holds_task_files(path: Path) -> bool:
    """Whether ``path`` holds a harness task file directly: a ``.json`` file whose text
    opens a list (a summary or a settings file beside runs opens an object)."""
    try:
        for c in sorted(path.iterdir()):
            if c.suffix.lower() != ".json" or c.name.startswith(".") or c.is_symlink() \
                    or not c.is_file():
                continue
            with open(c, "rb") as fh:
                head = fh.read(256).lstrip(b"\xef\xbb\xbf \t\r\n")
            if head.startswith(b"["):
                return True
    except OSError:
        return False
    return False


def _is_root(path: Path) -> bool:
    """A folder that is not a run itself: no run files and no task files directly."""
    return (path.is_dir() and isinstance(parse_source(str(path)), PredictionsSource)
            and not _holds_task_files(path))


def _walk(root: Path) -> list[str]:
    """Relative paths of the runs below ``root`` (sorted; links never followed)."""
    found: list[str] = []
    stack = [(root, 0)]
    while stack:
        here, depth = stack.pop()
        try:
            children = sorted((c for c in here.iterdir()
                               if c.is_dir() and not c.is_symlink()
                               and not c.name.startswith(".")), reverse=True)
        except OSError as exc:
            raise RepeatsError(f"cannot read folder {printable(str(here))}: "
                               f"{exc.strerror or exc}") from exc
        for child in children:
            if isinstance(parse_source(str(child)), RunDirSource) or _holds_task_files(child):
                found.append(child.relative_to(root).as_posix())
                if len(found) > MAX_RUNS:
                    raise RepeatsError(f"{printable(str(root))} holds more than {MAX_RUNS} "
                                       "runs")
            elif depth + 1 < MAX_DEPTH:
                stack.append((child, depth + 1))
    return sorted(found)


def find_runs(sources) -> list[RunEntry]:
    """The runs ``sources`` name, in order: each source as given, a root folder as every
    run below it (see the module docstring). Names must be unique."""
    if isinstance(sources, (str, os.PathLike, Run)) or not isinstance(sources, Sequence):
        sources = [sources]
    entries: list[RunEntry] = []
    for src in sources:
        if isinstance(src, Run):
            entries.append(RunEntry(str(src.label), src))
            continue
        text = str(src) if isinstance(src, (str, os.PathLike)) else None
        if text is not None and _is_root(Path(text)):
            rels = _walk(Path(text))
            if not rels:
                raise RepeatsError(f"{printable(text)} holds no run: no sub-folder is a run "
                                   "directory or holds task files")
            entries += [RunEntry(rel, str(Path(text) / rel), root=text) for rel in rels]
        else:
            label = text if text is not None else str(getattr(src, "label", src))
            entries.append(RunEntry(label, src))
    if not entries:
        raise RepeatsError("no runs given")
    entries = _qualified(entries)
    names = [e.name for e in entries]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise RepeatsError(f"two runs are named {printable(dup)}: give each run once")
    return entries


def _qualified(entries: list[RunEntry]) -> list[RunEntry]:
    """Runs of two roots with the same path below them (two copies of one harness
    layout: ``a/v1/e1`` and ``b/v1/e1``) named by their root too (``a/v1/e1``); their
    grouping still reads the path below the root."""
    names = [e.name for e in entries]
    clash = {n for n in names if names.count(n) > 1}
    roots = {e.root for e in entries if e.name in clash and e.root is not None}
    if len(roots) < 2:
        return entries
    tags = dict(zip(sorted(roots), unique_labels([Path(r).name or r for r in sorted(roots)],
                                                 sep="_")))
    return [RunEntry(f"{tags[e.root]}/{e.name}", e.source, e.root, rel=e.name)
            if e.name in clash and e.root in tags else e for e in entries]


def _read_groups(groups) -> dict[str, tuple[str, object]]:
    """``{run: (config, seed or None)}`` from a CSV path, a DataFrame or a mapping."""
    if isinstance(groups, Mapping):
        out = {}
        for k, v in groups.items():
            config, seed = (v if isinstance(v, tuple) else (v, None))
            out[str(k)] = (str(config), seed)
        return out
    if isinstance(groups, pd.DataFrame):
        df, where = groups, "groups table"
    else:
        where = f"groups file {printable(str(groups))}"
        text = read_text(groups, what="groups CSV", max_bytes=64 * 2 ** 20)
        try:
            df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False,
                             skipinitialspace=True)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeError) as exc:
            raise RepeatsError(f"{where} is not a CSV: {printable(str(exc))}") from exc
    df = df.rename(columns=lambda c: str(c).strip())
    missing = [c for c in ("run", "config") if c not in df.columns]
    if missing:
        raise RepeatsError(f"{where} needs the columns run, config (and optionally seed); "
                           f"missing {', '.join(missing)}")
    out = {}
    seeds = df["seed"] if "seed" in df.columns else [None] * len(df)
    for run, config, seed in zip(df["run"], df["config"], seeds):
        run, config = str(run).strip(), str(config).strip()
        if not run or not config:
            raise RepeatsError(f"{where}: a row has an empty run or config")
        if run in out:
            raise RepeatsError(f"{where} lists run {printable(run)} twice")
        out[run] = (config, None if seed in (None, "") else str(seed).strip())
    return out


def name_pattern(name: str) -> tuple[str, object]:
    last = Path(name).name
    stem = last[:-5] if last.lower().endswith(".json") else last
    m = _PATTERN.match(stem)
    if m is None:
        return stem or name, None
    return m["config"], int(m["seed"])


def group_runs(entries: Sequence[RunEntry], *, groups=None, group_by="auto"
               ) -> list[tuple[str, object]]:
    """Each entry's ``(config, seed)`` (seed None when unknown), by ``groups`` or
    ``group_by`` (see the module docstring)."""
    if groups is not None:
        table = _read_groups(groups)
        out = []
        for e in entries:
            if e.name not in table:
                raise RepeatsError(f"run {printable(e.name)} is not in the groups table "
                                   f"(its run column lists {len(table)} runs)")
            out.append(table[e.name])
        return out
    if isinstance(group_by, bool) or not (isinstance(group_by, (int, np.integer))
                                          or group_by in ("auto", "pattern")):
        raise RepeatsError(f"group_by must be 'auto', 'pattern' or a folder level (an int), "
                           f"got {group_by!r}")
    out = []
    for e in entries:
        if isinstance(group_by, (int, np.integer)):
            parts = e.parts[:-1] if len(e.parts) > 1 else e.parts
            if not -len(parts) <= group_by < len(parts):
                raise RepeatsError(f"run {printable(e.name)} has no folder level {group_by}")
            out.append((parts[group_by], None))
        elif group_by == "auto" and e.root is not None and len(e.parts) >= 2:
            out.append((e.parts[0], None))
        else:
            out.append(name_pattern(e.name))
    return out


