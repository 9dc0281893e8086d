"""Planning a sweep: the checkpoints given (files, folders, glob patterns, model names)
become :class:`SweepEntry` steps in step order, each with the name of its run
directory; a shard's share of them; the plan a sweep folder records (its entry
files) read back and checked."""
from __future__ import annotations

import glob
import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..errors import ArcnbError, printable
from ..io import file_sha256, read_json
from ..models.loading import CHECKPOINT_SUFFIXES, checkpoint_path, recorded_step
from ..models.registry import builder_names
from ..runs import OutputFolder
from .layout import ENTRY_KIND, ENTRY_SUFFIX, RUNS_DIR

__all__ = ["STEP_SOURCES", "expand_checkpoints", "checkpoint_step", "SweepEntry",
           "run_name", "plan", "parse_shard", "read_entries", "check_plan"]

#: Where a step comes from, best first.
STEP_SOURCES = ("checkpoint", "file name", "order given")


def expand_checkpoints(specs: Sequence[str | os.PathLike]) -> list[str]:
    """The checkpoints named by ``specs``: files, folders (their files ending in
    :data:`CHECKPOINT_SUFFIXES`, sorted), glob patterns (sorted matches), or model names
    such as ``baseline`` / ``copy-input``. Duplicates are dropped (first kept).
    :class:`~arcnb.errors.ArcnbError` when a folder or a pattern matches nothing or a
    path does not exist."""
    if isinstance(specs, (str, os.PathLike)):
        specs = [specs]
    out: list[str] = []
    for spec in specs:
        text = str(spec)
        path = Path(text)
        if path.is_dir():
            found = sorted(str(p) for p in path.iterdir()
                           if p.is_file() and p.suffix.lower() in CHECKPOINT_SUFFIXES)
            if not found:
                raise ArcnbError(f"folder {text} holds no checkpoint (files ending in "
                                 f"{', '.join(CHECKPOINT_SUFFIXES)})")
            out += found
        elif path.is_file() or text == "baseline" or text in builder_names():
            out.append(text)
        elif glob.has_magic(text):
            found = sorted(p for p in glob.glob(text) if Path(p).is_file())
            if not found:
                raise ArcnbError(f"no checkpoint matches {text!r}")
            out += found
        else:
            raise ArcnbError(f"checkpoint not found: {text} (give files, a folder, a glob "
                             "pattern in quotes, 'baseline' or a model name)")
    seen: set[str] = set()
    unique = []
    for c in out:
        key = os.path.realpath(c) if Path(c).is_file() else c
        if key not in seen:
            seen.add(key)
            unique.append(c)
    if not unique:
        raise ArcnbError("no checkpoint given")
    return unique


def checkpoint_step(path: str | os.PathLike) -> tuple[int | None, int | None]:
    """``(step, epoch)`` recorded in a checkpoint file: Lightning's ``global_step`` and
    ``epoch``, arcnb's ``step`` / ``epoch`` (:func:`arcnb.models.save_checkpoint`
    with ``step=``) or a safetensors file's ``"step"`` / ``"epoch"`` metadata
    (:func:`arcnb.models.recorded_step`: the checks ``arcnb evaluate`` makes
    first, the weights not loaded, no code run); ``(None, None)`` for anything else (a
    program archive, a model name, a file that needs pickled code)."""
    return recorded_step(path)


_STEP_IN_NAME = re.compile(r"(?:^|[^a-z])step[=_-]?(\d+)", re.I)
_NUMBER = re.compile(r"\d+")


def _step_from_name(name: str) -> int | None:
    stem = Path(name).name
    for suffix in CHECKPOINT_SUFFIXES:
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
    m = _STEP_IN_NAME.search(stem)
    if m:
        return int(m.group(1))
    nums = _NUMBER.findall(stem)
    return int(nums[-1]) if nums else None


@dataclass
class SweepEntry:
    """One checkpoint of a sweep: where it is, its step (and epoch), where the step
    came from, its position in step order and its run directory's name."""

    checkpoint: str
    step: int
    step_source: str
    position: int
    name: str
    epoch: int | None = None
    checkpoint_sha256: str | None = None
    #: Other files given for the sweep that hold the same bytes (Lightning's
    #: ``last.pt`` beside the step it copies): evaluated once, as this checkpoint.
    same_bytes: tuple = ()

    def to_json(self) -> dict:
        """The entry as the JSON object of its entry file (``runs/NAME.sweep.json``)."""
        return {"kind": ENTRY_KIND, "checkpoint": self.checkpoint, "step": self.step,
                "epoch": self.epoch, "step_source": self.step_source,
                "position": self.position, "name": self.name,
                "checkpoint_sha256": self.checkpoint_sha256,
                "same_bytes": list(self.same_bytes)}

    @classmethod
    def from_json(cls, obj: dict, where) -> "SweepEntry":
        """The entry of an entry file's JSON object (``where`` names the file in errors).
        Every field is checked as written: ``name`` one plain folder name (never a path
        out of ``runs/``), ``step``, ``position`` and ``epoch`` whole numbers from 0 to
        2^63 - 1, the texts strings."""
        if not isinstance(obj, dict) or obj.get("kind") != ENTRY_KIND:
            raise ArcnbError(f"{where} is not a sweep entry file")

        def whole(key, optional=False):
            v = obj.get(key)
            if v is None and optional:
                return None
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= _MAX_STEP:
                raise ArcnbError(f"{where}: {key} is not a whole number from 0 to "
                                 f"{_MAX_STEP} ({printable(repr(v))[:40]})")
            return v

        def text(key, optional=False):
            v = obj.get(key)
            if v is None and optional:
                return None
            if not isinstance(v, str):
                raise ArcnbError(f"{where}: {key} is not a string")
            return v

        name = text("name")
        if not _RUN_NAME.fullmatch(name) or name in (".", ".."):
            raise ArcnbError(f"{where}: name {printable(repr(name))[:80]} is not the name of a "
                             f"run folder inside {RUNS_DIR}/")
        same = obj.get("same_bytes") or []
        if not isinstance(same, list) or not all(isinstance(x, str) for x in same):
            raise ArcnbError(f"{where}: same_bytes is not a list of file names")
        return cls(text("checkpoint"), whole("step"), text("step_source"), whole("position"),
                   name, whole("epoch", optional=True),
                   text("checkpoint_sha256", optional=True), tuple(same))


#: The largest step, epoch or position an entry file may hold.
_MAX_STEP = 2 ** 63 - 1
#: What a run folder's name is made of (see :func:`run_name`).
_RUN_NAME = re.compile(r"[A-Za-z0-9._-]{1,80}")


def _slug(text: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._-")
    return s[:60] or "checkpoint"


def run_name(checkpoint: str) -> str:
    """A run directory name that stays the same for the same checkpoint file in every
    call (and every shard): the file's stem and a digest of its absolute path."""
    p = Path(checkpoint)
    key = os.path.realpath(checkpoint) if p.is_file() else checkpoint
    digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    stem = p.stem if p.is_file() else checkpoint
    return f"{_slug(stem)}-{digest}"


def plan(checkpoints: Sequence[str | os.PathLike]) -> list[SweepEntry]:
    """The sweep's checkpoints (:func:`expand_checkpoints`) with their steps, ordered by
    step. Files with the same bytes are one checkpoint (kept under the name that gives a
    step, the others listed in its ``same_bytes``): Lightning's ``last.pt`` beside the
    step it copies no longer makes two checkpoints of one step. The step source is the
    first of :data:`STEP_SOURCES` that gives every checkpoint a distinct step."""
    given = expand_checkpoints(checkpoints)
    shas = [_sha256_or_none(checkpoint_path(c)) for c in given]
    # byte-identical files are one checkpoint (Lightning's save_last=True leaves last.pt,
    # a copy of the latest step): a copy whose name gives no step of its own (or the
    # same step) is folded into the file whose name gives one
    groups: dict = {}
    for i, sha in enumerate(shas):
        groups.setdefault(sha if sha is not None else ("name", i), []).append(i)
    keep = []
    for members in groups.values():
        name_step = {i: _step_from_name(given[i]) for i in members}
        kept: dict = {}  # name step (or None) -> the member kept for it
        for i in sorted(members, key=lambda i: (name_step[i] is None, i)):
            key = name_step[i]
            if key is None and kept:
                key = next(iter(kept))  # a copy without a step of its own
            kept.setdefault(key, []).append(i)
        for group in kept.values():
            keep.append((group[0], tuple(Path(given[i]).name for i in group[1:])))
    keep.sort()
    ckpts = [given[i] for i, _ in keep]
    same = [dup for _, dup in keep]
    sha_of = [shas[i] for i, _ in keep]
    recorded = [checkpoint_step(c) for c in ckpts]
    from_name = [_step_from_name(c) if Path(c).is_file() else None for c in ckpts]

    def distinct(steps):
        return all(s is not None for s in steps) and len(set(steps)) == len(steps)

    if distinct([s for s, _ in recorded]):
        steps, source = [s for s, _ in recorded], STEP_SOURCES[0]
    elif distinct(from_name):
        steps, source = from_name, STEP_SOURCES[1]
    else:
        steps, source = list(range(len(ckpts))), STEP_SOURCES[2]
    order = sorted(range(len(ckpts)), key=lambda i: (steps[i], i))
    return [SweepEntry(ckpts[i], int(steps[i]), source, pos, run_name(ckpts[i]),
                       recorded[i][1], sha_of[i], same[i])
            for pos, i in enumerate(order)]


def _sha256_or_none(path: Path) -> str | None:
    """What a run records as ``checkpoint_sha256``: the file's, or None for a model name
    (``copy-input``) that reads no file."""
    return file_sha256(path) if path.is_file() else None


def parse_shard(text) -> tuple[int, int] | None:
    """``"I/N"`` -> ``(I, N)`` with ``0 <= I < N``; None for None / empty."""
    if text is None or text == "":
        return None
    if isinstance(text, tuple):
        i, n = text
    else:
        m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", str(text))
        if not m:
            raise ArcnbError(f"--shard {text!r}: expected I/N, e.g. 0/4 (I from 0 to N-1)")
        i, n = int(m.group(1)), int(m.group(2))
    if n < 1 or not 0 <= i < n:
        raise ArcnbError(f"--shard {i}/{n}: I must be between 0 and N-1 (N >= 1)")
    return int(i), int(n)


def read_entries(out: Path) -> list[SweepEntry]:
    runs_dir = out / RUNS_DIR
    if not runs_dir.is_dir():
        raise ArcnbError(f"{out} is not a sweep folder: {RUNS_DIR}/ is missing")
    OutputFolder(out).folder(RUNS_DIR)  # never read through a link either
    entries = [SweepEntry.from_json(read_json(p, what="sweep entry"), p)
               for p in sorted(runs_dir.glob(f"*{ENTRY_SUFFIX}"))]
    if not entries:
        raise ArcnbError(f"{runs_dir} holds no checkpoint of a sweep")
    entries = sorted(entries, key=lambda e: (e.position, e.name))
    check_plan(out, entries)
    return entries


def check_plan(out: Path, entries: list[SweepEntry]) -> None:
    """The entries of one sweep: distinct steps and positions 0, 1, 2, ... (the entries
    of two training runs in one folder are refused, never merged)."""
    steps: dict[int, SweepEntry] = {}
    for e in entries:
        if e.step in steps:
            raise ArcnbError(f"{out} holds two checkpoints at step {e.step} "
                             f"({printable(steps[e.step].checkpoint)} and "
                             f"{printable(e.checkpoint)}): the sweeps of two training runs? "
                             "Sweep each into its own folder")
        steps[e.step] = e
    if [e.position for e in entries] != list(range(len(entries))):
        raise ArcnbError(f"{out}: the entries of {RUNS_DIR}/ are not one sweep's plan "
                         "(positions missing or repeated); sweep into a new folder")
