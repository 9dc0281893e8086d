"""Predictions in the ARC Prize submission format: read, validate, write.

The format is ``{task_id: [{"attempt_1": grid, "attempt_2": grid, ...}, ...]}``: one
dict per test input, in the task's order. An attempt may also be given as
``{"answer": grid, ...}``. Attempt keys are exactly ``attempt_N`` with N a positive
ASCII integer without leading zeros (``attempt_1``, ``attempt_2``, ...), ordered by
their number, so ``attempt_2`` comes before ``attempt_10``. Any other key that starts
with ``attempt`` (``attempt_0``, ``attempt_01``, ``attempt_1\n``, non-ASCII digits) is
a malformed entry: counted in ``n_bad_attempt_keys`` and listed in ``problems``, never
taken as an attempt.

Malformed attempts (None, empty, ragged, a string, values outside 0-9) never crash
anything: they are kept as ``None``, scored as wrong and counted. In the
``{"answer": ..., "metadata": {...}}`` form an answer given as a JSON string of a grid
(``"[[1, 2], [3, 4]]"``) is parsed, and a grid inside answer text is extracted
(``\\boxed{...}`` first, then the last bracketed block), as the benchmarking harness
does; each extraction is listed in ``problems`` (kind ``"answer extracted from text"``).
A string without a grid is a malformed attempt. The ``metadata`` object of every attempt is kept
(``Predictions.metadata``).

A folder is read as a run of ARC Prize's benchmarking harness
(``arcprize/arc-agi-benchmarking``): one ``<task_id>.json`` per task, each a list with one
entry per test input, each entry mapping ``attempt_N`` to
``{"answer": grid, "metadata": {...}, "correct": ...}`` or null. See
:func:`load_predictions` for which files are read and how ``metadata.pair_index`` maps an
entry to its test input.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from .errors import PredictionsError, one_line, printable
from .grids import as_grid_or_none, grid_problem
from .io import (JSONInputError, atomic_write_bytes, file_sha256, parse_json, read_json,
                 read_json_lines)

__all__ = ["submission_bytes", "Predictions", "load_predictions", "write_predictions", "to_submission",
           "attempt_entry", "attempt_keys", "bad_attempt_keys", "HARNESS_SKIPPED_FILES",
           "extract_grid", "problem_summary", "MAX_TEST_INPUTS"]

#: Most test inputs of one task that predictions may refer to (100): an index of a test
#: input (a JSON Lines ``pair_index``, a candidates file's ``test_index``) is refused
#: from 100 on. ARC tasks have at most 4 (the bundled datasets), so the bound is far
#: from any real task, and it keeps what an index costs bounded: a line that names test
#: input 9,999 no longer builds 9,999 empty entries before the dataset is consulted.
MAX_TEST_INPUTS = 100

_ATTEMPT = re.compile(r"attempt_([1-9][0-9]*)", re.ASCII)


def attempt_keys(entry: Mapping) -> list[str]:
    """The ``attempt_N`` keys of one test-input dict, ordered by N (not as strings).

    Only ``attempt_[1-9][0-9]*`` (ASCII) counts. N is compared by length, then digits,
    so a key of thousands of digits sorts last instead of overflowing ``int``.
    """
    keys = [(len(m.group(1)), m.group(1), k) for k in entry if isinstance(k, str)
            and (m := _ATTEMPT.fullmatch(k))]
    return [k for _, _, k in sorted(keys)]


def bad_attempt_keys(entry: Mapping) -> list[str]:
    """Keys that start with ``attempt`` but are not a valid ``attempt_N``."""
    return [k for k in entry if isinstance(k, str) and k.startswith("attempt")
            and not _ATTEMPT.fullmatch(k)]


def _show_key(key: str, limit: int = 40) -> str:
    text = repr(key)
    return text if len(text) <= limit else text[:limit] + "...'"


#: Files of a benchmarking-harness run folder that are never task files: the harness's
#: scorer writes its summary there as ``results.json``.
HARNESS_SKIPPED_FILES = frozenset({"results.json"})


#: ``\\boxed{...}`` in an answer string, as the benchmarking harness looks for it first
#: (the shortest match: up to the first closing brace).
_BOXED = re.compile(r"\\boxed\{(.*?)\}", re.S)

#: The kinds of ``Predictions.problems`` entries that are notes on answers read as
#: the harness reads them (the attempt is scored), not malformed attempts.
EXTRACTED = "answer extracted from text"
STRING_CELLS = "cells written as strings (converted)"


def _list_of_lists(obj) -> bool:
    return isinstance(obj, list) and all(isinstance(row, list) for row in obj)


#: What :func:`_answer_json` gives for text that is not JSON (``null`` is JSON).
_NOT_JSON = object()


def _answer_json(text: str):
    """``text`` (an answer, or a part of one) parsed as JSON by io's rules (bounded, no
    key twice), else :data:`_NOT_JSON`."""
    try:
        return parse_json(text, what="answer text")
    except JSONInputError:
        return _NOT_JSON


def _backscan(text: str):
    """The last bracketed block of ``text``: from its last ``]`` (or ``}``) back to the
    bracket that opens it, counting only that bracket kind (the harness's back-scan);
    a non-empty JSON list of lists, else None."""
    close = max(text.rfind("]"), text.rfind("}"))
    if close < 0:
        return None
    closing = text[close]
    opening = "[" if closing == "]" else "{"
    depth = 1
    for i in range(close - 1, -1, -1):
        ch = text[i]
        if ch == closing:
            depth += 1
        elif ch == opening:
            depth -= 1
            if depth == 0:
                obj = _answer_json(text[i:close + 1])
                return obj if obj is not _NOT_JSON and obj and _list_of_lists(obj) else None
    return None


def extract_grid(text: str):
    """The grid in a model's answer text, found as the benchmarking harness finds it:
    the content of the first ``\\boxed{...}`` when it is a JSON list of lists, else
    the last bracketed block (:func:`_backscan`); None when neither gives one. The
    result is not validated as a grid yet."""
    return _extract(text)[0]


def _extract(text: str):
    """``(list of lists or None, where it was found)`` (see :func:`extract_grid`)."""
    m = _BOXED.search(text)
    if m:
        obj = _answer_json(m.group(1).strip())
        if _list_of_lists(obj):
            return obj, "\\boxed{}"
    return _backscan(text), "the last bracketed block"


_DIGIT = frozenset("0123456789")


def _string_cells(raw):
    """``raw`` with cells written as one-digit strings (``[["1", "2"]]``) turned into
    integers, as the harness's schema converts them; None when some cell is not a
    one-digit string."""
    if not (raw and _list_of_lists(raw)):
        return None
    if not any(isinstance(c, str) for row in raw for c in row):
        return None
    if not all(isinstance(c, str) and c in _DIGIT for row in raw for c in row):
        return None
    return [[int(c) for c in row] for row in raw]


def _attempt_value(value: Any) -> tuple[np.ndarray | None, dict | None, str | None,
                                        tuple[str, str] | None]:
    """One attempt's (grid or None, metadata object or None, problem or None, note or
    None); a note is ``(kind, what)`` for an answer read as the harness reads it.

    ``value`` is a grid or ``{"answer": grid-or-string, "metadata": {...}}``. In the
    second form (the harness's), a string answer is parsed as JSON, else its grid is
    extracted (:func:`extract_grid`), and cells written as one-digit strings are
    converted, as the harness's scorer does; both are noted.
    """
    metadata = None
    raw = value
    note = None
    if isinstance(value, dict):
        md = value.get("metadata")
        metadata = md if isinstance(md, dict) else None
        raw = value.get("answer")
        if isinstance(raw, str):  # the harness stores some answers as text
            parsed = _answer_json(raw)
            if parsed is not _NOT_JSON:
                raw = parsed
            else:
                found, how = _extract(raw)
                if found is None:
                    return None, metadata, ("malformed attempt: the answer is text without a "
                                            "grid (no \\boxed{...} and no bracketed list of "
                                            "rows)"), None
                raw, note = found, (EXTRACTED, f"grid taken from {how} of the answer text")
        converted = _string_cells(raw)
        if converted is not None:
            raw, note = converted, (STRING_CELLS, "cells written as strings were converted "
                                                  "to integers")
    grid = as_grid_or_none(raw)
    if grid is None:
        return None, metadata, f"malformed attempt: {grid_problem(raw)}", None
    return grid, metadata, None, note


def _pair_index_hints(entry: Mapping, keys: list[str]) -> list[int]:
    """``metadata.pair_index`` of an entry's attempts in the order the harness's scorer
    looks at them: attempt keys sorted as strings, attempts that are not objects or hold
    no integer ``pair_index`` passed over."""
    hints = []
    for key in sorted(keys):
        value = entry[key]
        md = value.get("metadata") if isinstance(value, dict) else None
        hint = _pair_index(md.get("pair_index") if isinstance(md, dict) else None)
        if hint is not None:
            hints.append(hint)
    return hints


def _pair_index(value) -> int | None:
    """A ``metadata.pair_index`` as an index, read as the harness's schema reads the
    unambiguous forms: an integer, an integral float (``1.0``) or a string of ASCII
    digits (``"1"``); booleans and anything else say nothing (None)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer() and abs(value) < 2 ** 53:
        return int(value)
    if isinstance(value, str) and 0 < len(value) <= 18 and value.isascii() and \
            value.isdigit():
        return int(value)
    return None


def problem_summary(problems, *, task_ids=None, n_examples: int = 3) -> list[dict]:
    """``problems`` (as ``Predictions.problems``) grouped by kind, most frequent
    first: ``[{"kind", "count", "examples"}]`` with the first ``n_examples`` of each
    kind as short one-line strings (``"task 007bbfb7, test input 0, attempt_1: ..."``).
    ``task_ids`` keeps only the problems of those tasks."""
    groups: dict[str, list[dict]] = {}
    for p in problems:
        if task_ids is not None and p.get("task_id") not in task_ids:
            continue
        groups.setdefault(str(p.get("kind") or _kind_of(str(p.get("problem", "")))),
                          []).append(p)
    out = []
    for kind, items in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        out.append({"kind": kind, "count": len(items),
                    "examples": [_example(p) for p in items[:n_examples]]})
    return out


def _example(p: dict, limit: int = 160) -> str:
    where = [f"task {p.get('task_id')}"]
    if p.get("test_index") is not None:
        where.append(f"test input {p['test_index']}")
    if p.get("attempt") is not None:
        where.append(str(p["attempt"]))
    text = printable(", ".join(where) + ": " + str(p.get("problem", "")))
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _kind_of(reason: str) -> str:
    """The kind of a problem, from its text: the words before the first colon."""
    if reason.startswith("not an attempt key"):
        return "not an attempt key"
    if reason.startswith("expected a list of test inputs"):
        return "task not a list of test inputs"
    return reason.split(":", 1)[0]


@dataclass
class _Entry:
    """One test-input entry as read, before it is mapped to a test input."""

    grids: list
    metadata: list
    hints: list[int]


class _Reader:
    """Parses test-input entries, collecting problems and counts."""

    def __init__(self):
        self.problems: list[dict] = []
        self.n_invalid = 0
        self.n_bad_keys = 0

    def bad(self, task, idx, key, reason, kind=None):
        self.problems.append({"task_id": task, "test_index": idx, "attempt": key,
                              "kind": kind or _kind_of(reason), "problem": reason})

    def entry(self, tid: str, i: int, entry: Any) -> _Entry:
        if isinstance(entry, dict):
            keys = attempt_keys(entry)
            values = [entry[k] for k in keys]
            hints = _pair_index_hints(entry, keys)
            for k in bad_attempt_keys(entry):
                self.n_bad_keys += 1
                self.bad(tid, i, _show_key(k), "not an attempt key (expected attempt_1, "
                                               "attempt_2, ...): ignored")
        else:  # a bare grid (or garbage) counts as a single attempt
            keys, values, hints = ["attempt_1"], [entry], []
        grids, metas = [], []
        for k, v in zip(keys, values):
            grid, md, problem, note = _attempt_value(v)
            if problem is not None:
                self.n_invalid += 1
                self.bad(tid, i, k, problem)
            elif note is not None:
                self.bad(tid, i, k, note[1], kind=note[0])
            grids.append(grid)
            metas.append(md)
        return _Entry(grids, metas, hints)


def _place(tid: str, entries: list[_Entry], n_test: int):
    """Map entries to test inputs as the harness's scorer does.

    Entry ``j`` goes to the first of its attempts' ``pair_index`` values that is a valid
    test index (``0 <= pair_index < n_test``), else to position ``j``. Returns
    ``(attempts, metadata, problems, moved)``: test inputs ``0 .. n_test-1`` (``[]``
    when no entry maps there), then the entries that map beyond them (extra outputs).
    Two entries mapped to one test input are merged: the later one's attempts follow.
    """
    slots: list[list | None] = [None] * n_test
    metas: list[list | None] = [None] * n_test
    owner = [-1] * n_test
    extra_g, extra_m, problems, moved = [], [], [], []
    for j, e in enumerate(entries):
        target = next((h for h in e.hints if 0 <= h < n_test), j)
        if target >= n_test:
            extra_g.append(list(e.grids))
            extra_m.append(list(e.metadata))
            continue
        if target != j:
            moved.append((tid, j, target))
        if slots[target] is None:
            slots[target], metas[target], owner[target] = list(e.grids), list(e.metadata), j
        else:
            slots[target].extend(e.grids)
            metas[target].extend(e.metadata)
            problems.append({"task_id": tid, "test_index": target, "attempt": None,
                             "kind": "pair_index",
                             "problem": f"entry {j} maps to test input {target} "
                                        f"(metadata.pair_index), which entry {owner[target]} "
                                        "already holds: its attempts are appended"})
    attempts = [s if s is not None else [] for s in slots] + extra_g
    metadata = [m if m is not None else [] for m in metas] + extra_m
    return attempts, metadata, problems, moved


@dataclass
class Predictions:
    """Parsed predictions.

    ``attempts[task_id][i]`` is the list of attempts for test input ``i``, in attempt
    order; each attempt is an ``int8`` grid or None when it was malformed.
    ``n_invalid_attempts`` counts the malformed ones; ``n_bad_attempt_keys`` counts
    entries whose key looks like an attempt but is not ``attempt_N``; ``problems`` says
    what was wrong (task, test index, attempt key, reason) so nothing is silently
    dropped.

    ``metadata[task_id][i][j]`` is attempt ``j``'s ``metadata`` object (a dict, as
    read) or None; a task none of whose attempts has metadata is absent from it (use
    :meth:`get_metadata`). ``format`` is ``"submission"`` (one JSON file or a dict),
    ``"harness"`` (a benchmarking-harness run folder) or ``"jsonl"`` (JSON Lines, one test
    output per line); ``files`` lists the task files
    read from a folder and ``ignored_files`` the folder's other entries. ``moved`` lists
    ``(task_id, entry, test_index)`` for entries that ``metadata.pair_index`` sent to
    another test input than their position.

    Entries whose ``pair_index`` differs from their position can only be mapped for
    sure once the task's number of test inputs is known: on loading, that number is
    taken as the file's number of entries; :meth:`aligned` (which
    :func:`arcnb.scoring.score` calls) maps them again with the dataset's numbers.
    """

    attempts: dict[str, list[list[np.ndarray | None]]]
    n_invalid_attempts: int = 0
    problems: list[dict] = field(default_factory=list)
    source: str | None = None
    n_bad_attempt_keys: int = 0
    #: ``metadata[task_id][i][j]``: attempt ``j``'s ``metadata`` object for test input
    #: ``i`` (None where there is none; tasks without any are absent).
    metadata: dict[str, list[list[dict | None]]] = field(default_factory=dict)
    format: str = "submission"
    files: list[str] = field(default_factory=list)
    ignored_files: list[str] = field(default_factory=list)
    moved: list[tuple[str, int, int]] = field(default_factory=list)
    _entries: dict[str, list[_Entry]] = field(default_factory=dict, repr=False)

    @property
    def task_ids(self) -> list[str]:
        """The predicted task ids, in the file's order."""
        return list(self.attempts)

    def __len__(self) -> int:
        return len(self.attempts)

    def __contains__(self, task_id: object) -> bool:
        return task_id in self.attempts

    def get(self, task_id: str, test_index: int) -> list[np.ndarray | None]:
        """Attempts for one test input; ``[]`` when the task or input is missing."""
        outs = self.attempts.get(task_id)
        if outs is None or test_index >= len(outs):
            return []
        return outs[test_index]

    def get_metadata(self, task_id: str, test_index: int) -> list[dict | None]:
        """The attempts' metadata for one test input, parallel to :meth:`get` (None for
        an attempt without a ``metadata`` object)."""
        outs = self.metadata.get(task_id)
        if outs is not None and test_index < len(outs):
            return outs[test_index]
        return [None] * len(self.get(task_id, test_index))

    @property
    def has_metadata(self) -> bool:
        """Whether some attempt carries a ``metadata`` object."""
        return bool(self.metadata)

    def aligned(self, n_tests: Mapping[str, int]) -> "Predictions":
        """These predictions with every entry mapped to its test input by the harness's
        rule, given each task's number of test inputs (``{task_id: n}``).

        Returns ``self`` when no entry carries a ``pair_index`` other than its position.
        """
        todo = [t for t in self._entries if t in n_tests]
        if not todo:
            return self
        attempts, metadata = dict(self.attempts), dict(self.metadata)
        problems = [p for p in self.problems
                    if not (p.get("kind") == "pair_index" and p["task_id"] in todo)]
        moved = [m for m in self.moved if m[0] not in todo]
        for tid in todo:
            a, m, probs, mv = _place(tid, self._entries[tid], int(n_tests[tid]))
            attempts[tid] = a
            if tid in metadata:
                metadata[tid] = m
            problems += probs
            moved += mv
        return replace(self, attempts=attempts, metadata=metadata, problems=problems,
                       moved=sorted(moved))

    def source_sha256(self) -> str | None:
        """SHA-256 of what was read: the file's bytes; for a harness folder, a digest of
        the task files read (each file's name and the SHA-256 of its bytes, by name).
        None for predictions built in memory."""
        if not self.source:
            return None
        path = Path(self.source)
        if path.is_file():
            return file_sha256(path)
        if not self.files:
            return None
        h = hashlib.sha256()
        for name in sorted(self.files):
            h.update(name.encode("utf-8") + b"\0" + bytes.fromhex(file_sha256(path / name)))
        return h.hexdigest()

    @classmethod
    def from_obj(cls, obj: Any, *, source: str | None = None,
                 consume: bool = False) -> "Predictions":
        """Parse a submission already read from JSON (``{task_id: [entry, ...]}``);
        ``source`` names it in messages. ``consume``: ``obj`` is this call's own (just
        parsed from a file): each task's JSON is dropped once read, so the parsed file
        and its arrays are not held at once (a file of millions of small grids: about
        half the peak memory)."""
        if not isinstance(obj, dict):
            raise PredictionsError(
                f"{source or 'predictions'}: expected a JSON object mapping task ids to lists "
                f"of attempts, got {type(obj).__name__}", file=source)
        reader = _Reader()
        parsed: dict[str, list[_Entry] | None] = {}
        for task_id in sorted(obj, key=str):
            outs = obj.pop(task_id) if consume else obj[task_id]
            tid = str(task_id)
            if isinstance(outs, dict) and (attempt_keys(outs) or bad_attempt_keys(outs)):
                outs = [outs]  # a single test input given without the list
            if not isinstance(outs, list):
                reader.bad(tid, None, None,
                           f"expected a list of test inputs, got {type(outs).__name__}")
                reader.n_invalid += 1
                parsed[tid] = None
                continue
            parsed[tid] = [reader.entry(tid, i, e) for i, e in enumerate(outs)]
        return cls._build(parsed, reader, source=source)

    @classmethod
    def _build(cls, parsed: Mapping[str, list[_Entry] | None], reader: _Reader, *,
               source: str | None, **extra) -> "Predictions":
        attempts, metadata, entries, moved = {}, {}, {}, []
        problems = list(reader.problems)
        for tid, task_entries in parsed.items():
            if task_entries is None:
                attempts[tid] = []
                continue
            a, m, probs, mv = _place(tid, task_entries, len(task_entries))
            attempts[tid] = a
            if any(md is not None for e in task_entries for md in e.metadata):
                metadata[tid] = m
            if any(h != j for j, e in enumerate(task_entries) for h in e.hints):
                entries[tid] = task_entries
            problems += probs
            moved += mv
        return cls(attempts, reader.n_invalid, problems, source, reader.n_bad_keys,
                   metadata=metadata, moved=moved, _entries=entries, **extra)


def _check_harness_file(path: Path, obj: list) -> None:
    """A harness task file is a list of objects keyed by ``attempt_N``; anything else is
    a file with the wrong structure (one line naming the file and the first fault)."""
    for i, entry in enumerate(obj):
        if not isinstance(entry, dict):
            raise PredictionsError(
                f"benchmarking-harness task file {path}: entry {i} is a "
                f"{type(entry).__name__}, expected an object of attempt_1, attempt_2, ...",
                file=str(path))
        if entry and not any(isinstance(k, str) and k.startswith("attempt") for k in entry):
            keys = ", ".join(_show_key(k, 20) for k in list(entry)[:4])
            raise PredictionsError(
                f"benchmarking-harness task file {path}: entry {i} has no attempt_N key "
                f"(its keys: {keys})", file=str(path))


def _scan_folder(path: Path):
    """The task files of a harness run folder: ``({task_id: (file, list)}, ignored,
    n_arc_task_files, sub-folders)``."""
    tasks, ignored, subdirs, n_arc = {}, [], [], 0
    try:
        children = sorted(path.iterdir())
    except OSError as exc:
        raise PredictionsError(f"cannot read the predictions folder {path}: "
                               f"{exc.strerror or exc}", file=str(path)) from None
    for child in children:
        name = child.name
        if child.is_dir():
            subdirs.append(child)
            ignored.append(name + "/")
            continue
        if name.startswith(".") or child.suffix != ".json" or name in HARNESS_SKIPPED_FILES:
            ignored.append(name)
            continue
        try:
            obj = read_json(child, what="benchmarking-harness task file")
        except JSONInputError as exc:
            raise PredictionsError(str(exc), file=str(child)) from None
        if isinstance(obj, list):
            _check_harness_file(child, obj)
            tasks[child.stem] = (child, obj)
        else:  # an object (a summary, a config, an ARC task) or a scalar: not a result
            n_arc += isinstance(obj, dict) and "train" in obj and "test" in obj
            ignored.append(name)
    return tasks, ignored, n_arc, subdirs


def _load_folder(path: Path) -> Predictions:
    tasks, ignored, n_arc, subdirs = _scan_folder(path)
    if not tasks:
        msg = (f"{path} is not a benchmarking-harness run: it holds no <task_id>.json file "
               "with a list of test-input entries")
        if n_arc:
            msg += (f"; its {n_arc} JSON files with train/test are ARC tasks (pass that folder "
                    "as the dataset, not as predictions)")
        with_json = [d.name for d in subdirs if any(d.glob("*.json"))]
        if with_json:
            msg += ("; sub-folders with JSON files: " + ", ".join(with_json[:3])
                    + (" ..." if len(with_json) > 3 else "") + " (pass one of them)")
        raise PredictionsError(msg, file=str(path))
    reader = _Reader()
    parsed = {tid: [reader.entry(tid, i, e) for i, e in enumerate(obj)]
              for tid, (_, obj) in sorted(tasks.items())}
    return Predictions._build(parsed, reader, source=str(path), format="harness",
                              files=sorted(f.name for f, _ in tasks.values()),
                              ignored_files=ignored)


#: The keys of a line of JSON Lines predictions (others, such as a model's reasoning,
#: are ignored).
JSONL_KEYS = ("task_id", "pair_index", "attempts", "metadata")


def _load_jsonl(path: Path) -> Predictions:
    """JSON Lines predictions (``*.jsonl``): one test output per line, as an object
    ``{"task_id": ..., "pair_index": i, "attempts": [grid, ...]}`` with, optionally,
    ``"metadata": [object or null, ...]`` (one per attempt: cost, usage, ... as in a
    benchmarking-harness run). A test output without a line has no prediction. The
    line's ``pair_index`` (0 to :data:`MAX_TEST_INPUTS` - 1) is where its attempts go: a
    ``pair_index`` inside their metadata does not move them."""
    try:
        lines = read_json_lines(path, what="predictions file")
    except JSONInputError as exc:
        raise PredictionsError(str(exc), file=str(path)) from None

    def refuse(n, why):
        raise PredictionsError(f"predictions file {path} line {n}: {why}", file=str(path))

    reader = _Reader()
    by_task: dict[str, dict[int, _Entry]] = {}
    for n, obj in lines:
        if not isinstance(obj, dict):
            refuse(n, f"expected an object with {', '.join(JSONL_KEYS[:3])}, got "
                      f"{type(obj).__name__}")
        missing = [k for k in JSONL_KEYS[:3] if k not in obj]
        if missing:
            refuse(n, f"no {', '.join(missing)}")
        tid, idx, grids = obj["task_id"], obj["pair_index"], obj["attempts"]
        if not isinstance(tid, str) or not tid:
            refuse(n, "task_id is not a non-empty string")
        if isinstance(idx, bool) or not isinstance(idx, int) or not 0 <= idx < MAX_TEST_INPUTS:
            refuse(n, f"pair_index {one_line(repr(idx), 32)} is not a test input index "
                      f"(0 to {MAX_TEST_INPUTS - 1})")
        if not isinstance(grids, list):
            refuse(n, f"attempts is a {type(grids).__name__}, not a list of grids")
        metas = obj.get("metadata")
        if metas is not None and (not isinstance(metas, list) or len(metas) != len(grids)):
            refuse(n, "metadata is not a list with one entry (object or null) per attempt")
        if idx in by_task.setdefault(tid, {}):
            refuse(n, f"a second line for task {one_line(tid, 64)} test input {idx}")
        entry = {f"attempt_{j + 1}": (g if metas is None or metas[j] is None
                                      else {"answer": g, "metadata": metas[j]})
                 for j, g in enumerate(grids)}
        # the line's own pair_index places it: an attempt's metadata.pair_index (a
        # harness run's hint) never sends it to another test input
        by_task[tid][idx] = replace(reader.entry(tid, idx, entry), hints=[])
    empty = _Entry([], [], [])
    parsed = {tid: [found.get(i, empty) for i in range(max(found) + 1)]
              for tid, found in by_task.items()}
    return Predictions._build(parsed, reader, source=str(path), format="jsonl")


def load_predictions(spec: str | os.PathLike | Mapping | Predictions) -> Predictions:
    """Read predictions from a path, a parsed dict or a :class:`Predictions`.

    A path is an ARC Prize submission file, a benchmarking-harness run folder or a
    JSON Lines file (``*.jsonl``, one test output per line: ``{"task_id": ...,
    "pair_index": i, "attempts": [grid, ...]}``, optionally ``"metadata"``, one object
    per attempt; a test output without a line has no prediction). In a
    folder, every ``*.json`` file whose top level is a list is a task's results
    (task id = file name without ``.json``); ``results.json`` (the harness's summary),
    files that are not ``*.json``, hidden files, sub-folders and JSON files whose top
    level is not a list (summaries, configs, ARC task files) are ignored and listed in
    ``ignored_files``. A task file that is not valid JSON, or a list whose entries are
    not objects keyed by ``attempt_N``, raises :class:`~arcnb.errors.PredictionsError`
    naming the file; so does a folder without any task file.

    An entry goes to the test input given by its attempts' ``metadata.pair_index``
    (the first one, in the harness's order, that is a valid index), else to its
    position, as the harness's scorer maps it. Unlike the harness, whose schema takes a
    missing ``pair_index`` as 0, an attempt without an integer ``pair_index`` says
    nothing about its entry's place.
    """
    if isinstance(spec, Predictions):
        return spec
    if isinstance(spec, Mapping):
        return Predictions.from_obj(dict(spec))
    path = Path(spec)
    if path.is_dir():
        return _load_folder(path)
    if path.suffix.lower() == ".jsonl":
        return _load_jsonl(path)
    try:
        obj = read_json(path, what="predictions file")
    except JSONInputError as exc:
        raise PredictionsError(str(exc), file=str(path)) from None
    return Predictions.from_obj(obj, source=str(path), consume=True)


def attempt_entry(grids: Sequence[Any], metadata: Sequence[dict | None] | None = None) -> dict:
    """One test input's entry of a submission: ``{"attempt_1": grid, "attempt_2": grid,
    ...}`` from its attempts in order (a grid is written as nested lists, None as
    ``null``). An attempt with ``metadata`` becomes ``{"answer": grid, "metadata": md}``."""
    entry = {}
    for j, g in enumerate(grids):
        grid = None if g is None else np.asarray(g).tolist()
        md = metadata[j] if metadata is not None and j < len(metadata) else None
        entry[f"attempt_{j + 1}"] = grid if md is None else {"answer": grid, "metadata": md}
    return entry


def submission_bytes(submission) -> bytes:
    """The bytes arcnb writes for a submission (:func:`to_submission`'s dict, or a
    document of them): compact JSON and one final newline. The one serialisation of
    every predictions file arcnb writes (``predictions.json``, ``submission.json``, the
    probes' and the proxy's predictions)."""
    return (json.dumps(submission, separators=(",", ":")) + "\n").encode()


def to_submission(attempts: Mapping[str, list[list[Any]]],
                  metadata: Mapping[str, list[list[dict | None]]] | None = None) -> dict:
    """Build the ARC Prize submission dict from ``{task: [[grid, grid], ...]}``.

    Every test input gets ``attempt_1 .. attempt_N``; a None attempt is written as
    ``null`` (scored as wrong). With ``metadata`` (parallel to ``attempts``, as
    :attr:`Predictions.metadata`), an attempt that has metadata is written as
    ``{"answer": grid-or-null, "metadata": {...}}``, which :func:`load_predictions`
    reads back with its cost and usage (Kaggle wants plain grids: leave it out there).
    """
    metadata = metadata or {}
    sub = {}
    for tid in sorted(attempts):
        task_md = metadata.get(tid) or []
        sub[tid] = [attempt_entry(outs, task_md[i] if i < len(task_md) else None)
                    for i, outs in enumerate(attempts[tid])]
    return sub


def write_predictions(path: str | os.PathLike, predictions: Mapping | Predictions, *,
                      overwrite: bool = False, with_metadata: bool = False) -> Path:
    """Write a submission file atomically (temporary file, then rename).

    ``predictions`` is a :class:`Predictions` or ``{task: [[grid, ...], ...]}``.
    ``with_metadata=True`` keeps a :class:`Predictions`' attempt metadata (cost, tokens,
    ``pair_index``...) in the ``{"answer": ..., "metadata": ...}`` form, so a
    benchmarking-harness run written as one file scores the same, cost included.
    An existing file is not replaced unless ``overwrite=True``.
    """
    metadata = None
    if isinstance(predictions, Predictions):
        metadata = predictions.metadata if with_metadata else None
        predictions = predictions.attempts
    return atomic_write_bytes(path, submission_bytes(to_submission(predictions, metadata)),
                              overwrite=overwrite)
