"""Candidate pools: what a model found versus what it picked.

Strong ARC systems produce many answers per test output and pick two (augmentation
voting, product-of-experts re-ranking, sampling an LLM many times, program search).
This module reads those pools as data and measures them against a dataset's truth.

Candidates as data
    Per test output: the *distinct* candidate grids, each with its vote count (how many
    samples gave it), its first appearance (the position of the first sample that gave
    it) and any named numeric scores (``logprob``, ``q_halt``, ...). Read from

    * any submission file or benchmarking-harness run folder (:func:`load_candidates`):
      every attempt is one sample, identical grids merge and their count is their votes;
    * a candidates file, JSON or Parquet (the format is below; :func:`write_candidates`
      writes it);
    * the program search (:func:`arcnb.baselines.program_search_candidates`): every
      consistent program's output is a candidate, simplest program first.

    Malformed attempts (None, ragged, values outside 0-9) are never candidates, but
    they keep their place in the attempt order.

Ranking rules (:data:`BUILTIN_RULES` plus every named score)
    ``order``: the attempts as given; a candidate's rank is the attempt number of its
    first appearance, so duplicates and malformed attempts use up places exactly as in
    :func:`arcnb.scoring.score` (pass@K under ``order`` is ``arcnb score``'s pass@K).
    ``votes``: distinct grids by vote count, ties broken by first appearance.
    A named score: higher first (unless the file lists it as lower-is-better), ties by
    first appearance, candidates without the score last. ``product_of_experts``: the
    sum of a candidate's per-view log-probabilities (``view_logprobs``), higher first.

Numbers
    The dataset is the denominator: a task or output without candidates counts as not
    covered, its right answer as ``absent``. ``coverage``: per task, the fraction of its
    test outputs whose truth is among the candidates, then the mean over tasks (like
    pass@K); ``coverage_per_output``: over all test outputs. Per rule: ``pass@1``,
    ``pass@2`` and ``selection_gap`` = coverage - pass@2 (what a perfect selector would
    add). ``rank_of_correct``: test outputs counted by the rank of the right candidate
    under the first rule asked for (``"1"``, ``"2"``, ..., ``"absent"``).
    ``distinct_mean``: distinct candidates per test output (0 where there are none);
    ``single_candidate_share``: the fraction of test outputs with exactly one distinct
    candidate. ``ece``: expected calibration error of the top candidate's vote share
    (see :func:`calibration`). Every rate comes with a 95 % bootstrap interval over
    tasks (:mod:`arcnb.stats`).

Candidates file, JSON::

    {"arcnb_candidates": 1,
     "lower_is_better": ["loss"],
     "tasks": {"<task_id>": [              # one list per test input, in the task's order
        [{"grid": [[0, 1], [1, 0]], "votes": 5, "scores": {"logprob": -0.3, "loss": 1.2},
          "view_logprobs": [-0.1, -0.2]},
         ...],                             # candidates in the order they came
        ...]}}

``votes`` defaults to 1, ``scores``, ``view_logprobs`` and ``lower_is_better`` are
optional. The same grid listed twice for one output is merged: the votes add up, the
first listing's place and scores are kept.

Candidates file, Parquet (for large pools): one row per candidate, in the order they
came, columns ``task_id`` (string), ``test_index`` (integer), ``height``, ``width``
(integers) and ``cells`` (binary: the ``height * width`` cell values row by row, one
byte each), optional ``votes`` (integer) and ``view_logprobs`` (list of floats), and any
other numeric column is a named score. The schema metadata key ``arcnb_candidates``
holds ``{"version": 1, "lower_is_better": [...]}``.
"""
from __future__ import annotations

import json
import math
import os
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from .data import Dataset, load_dataset
from .errors import ParameterError, PredictionsError, one_line
from .grids import MAX_SIZE, as_grid_or_none
from .io import JSONInputError, csv_text, read_json, read_parquet, to_jsonable
from .predictions import MAX_TEST_INPUTS, Predictions, load_predictions
from .runs import OutputFolder
from .stats import (bootstrap_ci, bootstrap_indices, check_n_boot, check_seed, mcnemar_table,
                    paired_bootstrap_ci, percentile_interval, ratio_bootstrap_ci)
from .taxonomy import load_taxonomy

__all__ = ["CandidateSet", "CandidateAnalysis", "candidates", "load_candidates",
           "write_candidates", "candidates_bytes", "calibration", "grid_codes", "BUILTIN_RULES", "PRODUCT_OF_EXPERTS",
           "CANDIDATE_DEFINITIONS", "FORMAT_KEY"]

#: The key (and version) that marks a candidates file.
FORMAT_KEY = "arcnb_candidates"
#: The rule name of the product of experts (sum of per-view log-probabilities).
PRODUCT_OF_EXPERTS = "product_of_experts"
#: Rules every pool has.
BUILTIN_RULES = ("order", "votes")
_RESERVED = frozenset({"task_id", "test_index", "height", "width", "cells", "grid", "votes",
                       "view_logprobs"})
#: The columns of the pool table (:attr:`CandidateAnalysis.pool`) besides the scores
#: and the ``rank_<rule>`` columns: no score may take one of these names.
POOL_COLUMNS = ("task_id", "test_index", "votes", "first", "correct", "sample")
#: Most votes one listed candidate may carry (10^9): no sum of votes can wrap.
MAX_VOTES = 10 ** 9
#: Most named scores one candidates file may hold.
MAX_SCORES = 256


def _score_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a score (None when it can): the names of the pool's own
    columns, of the built-in rules and of the rank columns are taken."""
    if name in POOL_COLUMNS or name in _RESERVED or name in BUILTIN_RULES \
            or name == PRODUCT_OF_EXPERTS or name.startswith("rank_"):
        return (f"a score may not be named {one_line(repr(name), 40)}: "
                f"{', '.join(POOL_COLUMNS)}, {', '.join(BUILTIN_RULES)}, "
                f"{PRODUCT_OF_EXPERTS} and rank_* are arcnb's own columns and rules "
                "(rename it)")
    return None


def _header(version, lower, where: str, source) -> frozenset:
    """The checked header of a candidates file, JSON or Parquet alike: ``version`` must
    be 1 and ``lower_is_better`` a list of score names (strings)."""
    if isinstance(version, bool) or version != 1:
        raise PredictionsError(f"{where}: unsupported {FORMAT_KEY} version "
                               f"{one_line(repr(version), 40)} (expected 1)", file=source)
    if not isinstance(lower, list) or not all(isinstance(x, str) for x in lower):
        raise PredictionsError(f"{where}: lower_is_better must be a list of score names "
                               f"(strings), got {one_line(repr(lower), 60)}", file=source)
    return frozenset(lower)

#: Each number of the summary, defined in words.
CANDIDATE_DEFINITIONS = {
    "coverage": "per task: fraction of its test outputs whose right answer is among the "
                "candidates, then the mean over tasks (the ceiling of any ranking rule)",
    "coverage_per_output": "fraction of all test outputs whose right answer is among the "
                           "candidates",
    "pass@K": "per task: fraction of its test outputs whose right answer is among the K "
              "top-ranked candidates, then the mean over tasks",
    "selection_gap": "coverage - pass@2: what a perfect choice of two candidates would add",
    "rank_of_correct": "test outputs counted by the rank of the right candidate ('absent': "
                       "not among the candidates)",
    "distinct_mean": "distinct candidate grids per test output (0 where there are none)",
    "single_candidate_share": "fraction of test outputs with exactly one distinct candidate",
    "ece": "expected calibration error of the top candidate's vote share: the mean, over "
           "vote-share bins weighted by their outputs, of |fraction right - mean vote share|",
}


# ---------------------------------------------------------------------------- the data
@dataclass
class CandidateSet:
    """Samples read from a source, before they meet a dataset.

    One entry per sample (an attempt, or a listed candidate): ``block[s]`` indexes
    ``keys`` (``(task_id, test_index)``), ``pos[s]`` is its place within that output,
    ``votes[s]`` its weight, ``heights``/``widths`` its shape (0 x 0 when malformed),
    ``cells[offsets[s]:offsets[s + 1]]`` its cells (``int8``). ``scores`` maps a name to
    one float per sample (NaN where absent); ``lower_is_better`` names the scores that
    rank ascending.
    """

    keys: list
    block: np.ndarray
    pos: np.ndarray
    votes: np.ndarray
    heights: np.ndarray
    widths: np.ndarray
    cells: np.ndarray
    offsets: np.ndarray
    scores: dict = field(default_factory=dict)
    lower_is_better: frozenset = frozenset()
    source: str | None = None
    format: str = "candidates"

    @property
    def n_samples(self) -> int:
        """The number of samples (attempts or listed candidates), malformed ones included."""
        return int(self.block.size)

    @property
    def valid(self) -> np.ndarray:
        """Per sample: whether it is a well-formed grid (malformed ones are no candidates)."""
        return self.heights > 0

    def grid(self, s: int) -> np.ndarray:
        """Sample ``s`` as a grid."""
        h, w = int(self.heights[s]), int(self.widths[s])
        return self.cells[self.offsets[s]:self.offsets[s + 1]].reshape(h, w).copy()


class _Builder:
    """Collects samples one output at a time (grids as arrays)."""

    def __init__(self):
        self.keys, self.block, self.pos, self.votes = [], [], [], []
        self.h, self.w, self.parts = [], [], []
        self.scores: dict[str, list] = {}

    def add(self, key, pos, grid, votes=1, scores=None):
        b = len(self.keys) - 1
        if not self.keys or self.keys[-1] != key:
            self.keys.append(key)
            b += 1
        n = len(self.block)
        self.block.append(b)
        self.pos.append(pos)
        self.votes.append(votes)
        ok = grid is not None and 1 <= grid.shape[0] <= MAX_SIZE and 1 <= grid.shape[1] <= MAX_SIZE
        self.h.append(grid.shape[0] if ok else 0)
        self.w.append(grid.shape[1] if ok else 0)
        if ok:
            self.parts.append(np.ascontiguousarray(grid, dtype=np.int8).ravel())
        for name, value in (scores or {}).items():
            col = self.scores.setdefault(name, [np.nan] * n)
            col.append(value)
        for col in self.scores.values():
            if len(col) < n + 1:
                col.append(np.nan)

    def build(self, **kw) -> CandidateSet:
        h = np.asarray(self.h, dtype=np.int64)
        w = np.asarray(self.w, dtype=np.int64)
        offsets = np.zeros(h.size + 1, dtype=np.int64)
        np.cumsum(h * w, out=offsets[1:])
        cells = np.concatenate(self.parts) if self.parts else np.zeros(0, np.int8)
        return CandidateSet(list(self.keys), np.asarray(self.block, np.int64),
                            np.asarray(self.pos, np.int64), np.asarray(self.votes, np.int64),
                            h, w, cells, offsets,
                            {k: np.asarray(v, dtype=float) for k, v in self.scores.items()},
                            **kw)


def _from_predictions(preds: Predictions, n_tests: Mapping[str, int] | None) -> CandidateSet:
    if n_tests is not None:
        preds = preds.aligned(n_tests)  # entries placed by metadata.pair_index, as scored
    b = _Builder()
    for tid, outs in preds.attempts.items():
        for i, attempts in enumerate(outs):
            for j, g in enumerate(attempts):
                b.add((tid, i), j, g)
    return b.build(source=preds.source, format=preds.format)


def _number(x, what: str, where: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise PredictionsError(f"{where}: {what} must be a number, got {type(x).__name__}")
    try:
        return float(x)
    except OverflowError:
        raise PredictionsError(f"{where}: {what} is beyond the range of a float") from None


def _from_candidates_obj(obj: Mapping, source: str | None) -> CandidateSet:
    where = source or "candidates"
    tasks = obj.get("tasks")
    if not isinstance(tasks, dict):
        raise PredictionsError(f"{where}: expected 'tasks' (an object of task ids) and "
                               "'lower_is_better' (a list of score names)", file=source)
    lower = _header(obj.get(FORMAT_KEY), obj.get("lower_is_better", []), where, source)
    b = _Builder()
    for tid in sorted(tasks, key=str):
        outs = tasks[tid]
        if not isinstance(outs, list):
            raise PredictionsError(f"{where}: task {one_line(repr(str(tid)), 40)}: expected a "
                                   "list with one list of candidates per test input",
                                   file=source)
        if len(outs) > MAX_TEST_INPUTS:
            raise PredictionsError(f"{where}: task {one_line(repr(str(tid)), 40)} lists "
                                   f"{len(outs)} test inputs; an ARC task has at most "
                                   f"{MAX_TEST_INPUTS}", file=source)
        for i, cands in enumerate(outs):
            if not isinstance(cands, list):
                raise PredictionsError(f"{where}: task {one_line(repr(str(tid)), 40)}, test "
                                       f"input {i}: expected a list of candidates", file=source)
            for j, c in enumerate(cands):
                at = f"{where}: task {one_line(repr(str(tid)), 40)}, test input {i}, candidate {j}"
                if not isinstance(c, dict):
                    raise PredictionsError(f"{at}: expected an object with 'grid'",
                                           file=source)
                votes = c.get("votes", 1)
                if isinstance(votes, bool) or not isinstance(votes, int) \
                        or not 0 <= votes <= MAX_VOTES:
                    raise PredictionsError(f"{at}: votes must be an integer from 0 to "
                                           f"{MAX_VOTES}", file=source)
                scores = c.get("scores") or {}
                if not isinstance(scores, dict):
                    raise PredictionsError(f"{at}: scores must be an object", file=source)
                sc = {}
                for k, v in scores.items():
                    problem = _score_name_problem(str(k))
                    if problem:
                        raise PredictionsError(f"{at}: {problem}", file=source)
                    sc[str(k)] = _number(v, f"score {one_line(repr(str(k)), 30)}", at)
                views = c.get("view_logprobs")
                if views is not None:
                    if not isinstance(views, list) or not views:
                        raise PredictionsError(f"{at}: view_logprobs must be a non-empty "
                                               "list of numbers", file=source)
                    sc[PRODUCT_OF_EXPERTS] = math.fsum(_number(v, "view_logprobs", at)
                                                       for v in views)
                b.add((str(tid), i), j, as_grid_or_none(c.get("grid")), votes, sc)
                if len(b.scores) > MAX_SCORES:
                    raise PredictionsError(f"{where}: more than {MAX_SCORES} named scores",
                                           file=source)
    return b.build(source=source, format="candidates", lower_is_better=lower)


def _refuse(where: str, why: str):
    raise PredictionsError(f"{where}: {why}", file=where)


def _int_column(table, name: str, where: str, *, lo: int | None = None,
                hi: int | None = None) -> np.ndarray:
    """Column ``name`` as int64, refused unless it is an integer column without nulls
    whose values lie in ``lo .. hi`` (checked on the column's own type, before any
    conversion could wrap or truncate)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    col = table.column(name)
    if not pa.types.is_integer(col.type):
        _refuse(where, f"the {name} column must hold integers, not {col.type}")
    if col.null_count:
        _refuse(where, f"the {name} column has {col.null_count} empty (null) values")
    if len(col) and (lo is not None or hi is not None):
        mm = pc.min_max(col).as_py()
        if (lo is not None and mm["min"] < lo) or (hi is not None and mm["max"] > hi):
            _refuse(where, f"the {name} column holds {mm['min'] if lo is not None and mm['min'] < lo else mm['max']}; "
                           f"it must lie in {lo} .. {hi}")
    return col.to_numpy().astype(np.int64) if len(col) else np.zeros(0, np.int64)


def _shape_column(table, name: str, where: str) -> np.ndarray:
    """``height`` or ``width`` as int64, a value outside 1 .. 30 as 0 (a malformed
    candidate), without a conversion that could wrap."""
    import pyarrow as pa

    col = table.column(name)
    if not pa.types.is_integer(col.type):
        _refuse(where, f"the {name} column must hold integers, not {col.type}")
    if col.null_count:
        _refuse(where, f"the {name} column has {col.null_count} empty (null) values")
    x = col.to_numpy() if len(col) else np.zeros(0, np.int64)
    return np.where((x >= 1) & (x <= MAX_SIZE), x, 0).astype(np.int64)


def _from_parquet(path: Path) -> CandidateSet:
    import pyarrow as pa
    import pyarrow.compute as pc

    where = str(path)
    table = read_parquet(path, what="candidates Parquet file",
                         error=lambda m: PredictionsError(m, file=where))
    names = set(table.column_names)
    missing = [c for c in ("task_id", "test_index", "height", "width", "cells") if c not in names]
    if missing:
        _refuse(where, "a candidates Parquet file needs the columns task_id, test_index, "
                       f"height, width, cells (missing: {', '.join(missing)})")
    if len(names) != table.num_columns:
        _refuse(where, "two columns share one name")
    meta = (table.schema.metadata or {}).get(FORMAT_KEY.encode())
    lower: frozenset = frozenset()
    if meta is not None:
        try:
            header = json.loads(meta)
        except (ValueError, RecursionError):
            header = None
        if not isinstance(header, dict):
            _refuse(where, f"the {FORMAT_KEY} metadata is not a JSON object")
        lower = _header(header.get("version"), header.get("lower_is_better", []), where, where)
    n = table.num_rows
    tcol = table.column("task_id").combine_chunks()
    if not (pa.types.is_string(tcol.type) or pa.types.is_large_string(tcol.type)
            or pa.types.is_integer(tcol.type)):
        _refuse(where, f"the task_id column must hold strings, not {tcol.type}")
    if tcol.null_count:
        _refuse(where, "every row needs a task_id")
    if not pa.types.is_string(tcol.type) and not pa.types.is_large_string(tcol.type):
        tcol = tcol.cast(pa.string())
    tenc = pc.dictionary_encode(tcol)
    tcode = tenc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    tnames = tenc.dictionary.to_pylist()
    # ranges checked on entry: the block key below can never wrap
    idx = _int_column(table, "test_index", where, lo=0, hi=MAX_TEST_INPUTS - 1)
    h = _shape_column(table, "height", where)
    w = _shape_column(table, "width", where)
    cells_col = table.column("cells").combine_chunks()
    if not pa.types.is_binary(cells_col.type) and not pa.types.is_large_binary(cells_col.type):
        _refuse(where, f"the cells column must be binary (one byte per cell), not "
                       f"{cells_col.type}")
    off_dtype = np.int64 if pa.types.is_large_binary(cells_col.type) else np.int32
    bufs = cells_col.buffers()
    raw_off = np.frombuffer(bufs[1], dtype=off_dtype)[cells_col.offset:cells_col.offset + n + 1]
    raw_off = raw_off.astype(np.int64)
    raw = (np.frombuffer(bufs[2], dtype=np.int8) if bufs[2] is not None
           else np.zeros(0, np.int8))
    lengths = np.diff(raw_off)
    if cells_col.null_count:
        lengths = np.where(cells_col.is_null().to_numpy(zero_copy_only=False), -1, lengths)
    ok = (h > 0) & (w > 0) & (lengths == h * w)
    if n:
        # a cell outside 0-9 makes its row malformed (found without a per-row loop)
        span = raw[raw_off[0]:raw_off[-1]].view(np.uint8)
        bad_at = (np.flatnonzero(span > 9) + raw_off[0] if span.size and span.max() > 9
                  else np.zeros(0, np.int64))
        if bad_at.size:
            ok[np.searchsorted(raw_off, bad_at, side="right") - 1] = False
    cells, offsets = raw, raw_off  # a malformed row's segment is never read
    votes = (_int_column(table, "votes", where, lo=0, hi=MAX_VOTES) if "votes" in names
             else np.ones(n, np.int64))
    scores = {}
    for name in table.column_names:
        if name in _RESERVED:
            continue
        col = table.column(name)
        if pa.types.is_integer(col.type) or pa.types.is_floating(col.type):
            problem = _score_name_problem(name)
            if problem:
                _refuse(where, problem)
            scores[name] = (col.to_numpy(zero_copy_only=False).astype(float) if n
                            else np.zeros(0))
    if len(scores) > MAX_SCORES:
        _refuse(where, f"{len(scores)} score columns, more than the {MAX_SCORES} arcnb "
                       "measures")
    if "view_logprobs" in names:
        lists = table.column("view_logprobs").combine_chunks()
        if not (pa.types.is_list(lists.type) or pa.types.is_large_list(lists.type)) or not (
                pa.types.is_integer(lists.type.value_type)
                or pa.types.is_floating(lists.type.value_type)):
            _refuse(where, "the view_logprobs column must hold lists of numbers, not "
                           f"{lists.type}")
        flat = lists.flatten().to_numpy(zero_copy_only=False).astype(float)
        loff = lists.offsets.to_numpy().astype(np.int64)
        sums = np.add.reduceat(np.append(flat, 0.0), np.minimum(loff[:-1], flat.size))
        sums = np.where(np.diff(loff) > 0, sums, np.nan)
        if lists.null_count:
            sums = np.where(lists.is_null().to_numpy(zero_copy_only=False), np.nan, sums)
        scores[PRODUCT_OF_EXPERTS] = sums
    # one block per (task, test_index); an output's rows keep the file's order. The
    # key cannot wrap: task codes are below the row bound, indices below MAX_TEST_INPUTS
    width = int(idx.max()) + 1 if n else 1
    keys_int = tcode * width + idx
    uniq, block = np.unique(keys_int, return_inverse=True)
    block = block.reshape(-1)
    order = np.argsort(block, kind="stable")
    sizes = np.bincount(block, minlength=uniq.size)
    group_start = np.repeat(np.cumsum(sizes) - sizes, sizes)
    pos = np.empty(n, np.int64)
    pos[order] = np.arange(n) - group_start
    keys = [(str(tnames[int(k // width)]), int(k % width)) for k in uniq]
    return CandidateSet(keys, block.astype(np.int64), pos, votes, np.where(ok, h, 0),
                        np.where(ok, w, 0), cells, offsets, scores, lower, source=where,
                        format="parquet")


def load_candidates(spec, *, n_tests: Mapping[str, int] | None = None) -> CandidateSet:
    """Read a candidate pool from a :class:`CandidateSet` (returned as is), a
    :class:`~arcnb.predictions.Predictions`, a candidates file (``.json`` with the
    ``arcnb_candidates`` key, or ``.parquet``), a candidates dict, a submission file or
    dict, a JSON Lines predictions file (``.jsonl``) or a benchmarking-harness run
    folder (every attempt a sample; read by :func:`arcnb.predictions.load_predictions`,
    as ``arcnb score`` reads them). ``n_tests``
    (``{task_id: number of test inputs}``) places harness entries by their
    ``metadata.pair_index`` exactly as :func:`arcnb.scoring.score` does."""
    if isinstance(spec, CandidateSet):
        return spec
    if isinstance(spec, Predictions):
        return _from_predictions(spec, n_tests)
    if isinstance(spec, Mapping):
        if FORMAT_KEY in spec:
            return _from_candidates_obj(spec, None)
        return _from_predictions(load_predictions(spec), n_tests)
    path = Path(spec)
    if not path.exists() and not path.is_symlink():
        raise PredictionsError(f"no such predictions or candidates file or folder: {path}",
                               file=str(path))
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq"):
        return _from_parquet(path)
    if path.is_dir() or suffix == ".jsonl":
        # a harness run folder or JSON Lines: read exactly as arcnb score reads them
        return _from_predictions(load_predictions(path), n_tests)
    try:
        obj = read_json(path, what="predictions or candidates file")
    except JSONInputError as exc:
        raise PredictionsError(str(exc), file=str(path)) from None
    if isinstance(obj, dict) and FORMAT_KEY in obj:
        return _from_candidates_obj(obj, str(path))
    return _from_predictions(Predictions.from_obj(obj, source=str(path)), n_tests)


def write_candidates(path: str | os.PathLike, records: Iterable[Mapping], *,
                     lower_is_better: Sequence[str] | None = None,
                     overwrite: bool = False) -> Path:
    """Write a candidates file (``.json`` or ``.parquet``, by the suffix) atomically.

    ``records``: one mapping per candidate, in the order they came, with ``task_id``,
    ``test_index``, ``grid`` and optionally ``votes``, ``view_logprobs`` and any numeric
    score (every other key). ``lower_is_better`` names the scores that rank ascending.
    """
    path = Path(path)
    folder = OutputFolder(path.parent, what="folder")
    data = candidates_bytes(path, records, lower_is_better=lower_is_better)
    return folder.write({path.name: data}, overwrite=overwrite,
                        hint="pass overwrite=True")[0]


def candidates_bytes(name: str | os.PathLike, records: Iterable[Mapping], *,
                     lower_is_better: Sequence[str] | None = None) -> bytes:
    """The bytes of the candidates file :func:`write_candidates` writes (Parquet when
    ``name`` ends in ``.parquet``, else JSON)."""
    path = Path(name)
    rows = list(records)
    if path.suffix.lower() in (".parquet", ".pq"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        grids = [np.asarray(r["grid"], dtype=np.int8) for r in rows]
        cols: dict[str, Any] = {
            "task_id": pa.array([str(r["task_id"]) for r in rows], pa.string()),
            "test_index": pa.array([int(r["test_index"]) for r in rows], pa.int32()),
            "height": pa.array([g.shape[0] for g in grids], pa.int16()),
            "width": pa.array([g.shape[1] for g in grids], pa.int16()),
            "cells": pa.array([g.tobytes() for g in grids], pa.binary()),
            "votes": pa.array([int(r.get("votes", 1)) for r in rows], pa.int64()),
        }
        names = sorted({k for r in rows for k in r} - _RESERVED)
        for name in names:
            cols[name] = pa.array([float(r.get(name, np.nan)) for r in rows], pa.float64())
        if any("view_logprobs" in r for r in rows):
            cols["view_logprobs"] = pa.array([r.get("view_logprobs") for r in rows],
                                             pa.list_(pa.float64()))
        table = pa.table(cols).replace_schema_metadata(
            {FORMAT_KEY: json.dumps({"version": 1, "lower_is_better": list(lower_is_better or [])})})
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink)
        return sink.getvalue().to_pybytes()
    tasks: dict[str, list] = {}
    for r in rows:
        outs = tasks.setdefault(str(r["task_id"]), [])
        i = int(r["test_index"])
        while len(outs) <= i:
            outs.append([])
        c: dict[str, Any] = {"grid": np.asarray(r["grid"]).tolist(),
                             "votes": int(r.get("votes", 1))}
        sc = {k: float(v) for k, v in r.items() if k not in _RESERVED}
        if sc:
            c["scores"] = sc
        if r.get("view_logprobs") is not None:
            c["view_logprobs"] = [float(v) for v in r["view_logprobs"]]
        outs[i].append(c)
    return (json.dumps({FORMAT_KEY: 1, "lower_is_better": list(lower_is_better or []),
                        "tasks": tasks}, separators=(",", ":")) + "\n").encode()


# ------------------------------------------------------------------------- grid codes
def grid_codes(cells: np.ndarray, offsets: np.ndarray, *, also=None):
    """One integer per grid such that two grids share it iff their cell bytes are equal,
    without comparing grids in Python: the bytes of every grid are hashed at once by
    Arrow's ``dictionary_encode`` (exact: equal hashes are checked byte for byte).

    Grid ``s`` is ``cells[offsets[s]:offsets[s + 1]]``. The shape is not part of the
    code (compare it beside). ``also``: another ``(cells, offsets)``; its grids get the
    code of the equal grid among the first ones, or -1. Returns ``codes`` or
    ``(codes, other_codes)``.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    def arrow(c, o):
        o = np.ascontiguousarray(o, dtype=np.int64)
        c = np.ascontiguousarray(c, dtype=np.int8)
        return pa.LargeBinaryArray.from_buffers(pa.large_binary(), o.size - 1,
                                                [None, pa.py_buffer(o), pa.py_buffer(c)])

    enc = pc.dictionary_encode(arrow(cells, offsets))
    codes = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    if also is None:
        return codes
    other = pc.index_in(arrow(*also), value_set=enc.dictionary)
    return codes, other.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)


# ------------------------------------------------------------------------ analysis
@dataclass
class _Pool:
    """Distinct candidates aligned on a dataset's test outputs."""

    out: np.ndarray        # output row of each candidate
    votes: np.ndarray
    first: np.ndarray      # first appearance (place within the output)
    correct: np.ndarray
    src: np.ndarray        # the sample that first gave it
    scores: dict
    n_out: int


def _distinct(cs: CandidateSet, row_of_key: dict, truth) -> tuple[_Pool, dict]:
    """Merge identical grids of each output. ``truth``: ``(cells, offsets, heights,
    widths)`` of the dataset's test outputs, in row order."""
    block_row = np.array([row_of_key.get(k, -1) for k in cs.keys], dtype=np.int64)
    row = block_row[cs.block] if cs.n_samples else np.zeros(0, np.int64)
    valid = cs.valid
    in_ds = row >= 0
    counts = {"n_samples": int(cs.n_samples), "n_invalid": int((~valid).sum()),
              "n_outside_dataset": int((~in_ds).sum())}
    keep = np.flatnonzero(valid & in_ds)
    tcells, toffs, th, tw = truth
    codes, tcode = grid_codes(cs.cells, cs.offsets, also=(tcells, toffs))
    r, p, c = row[keep], cs.pos[keep], codes[keep]
    hh, ww = cs.heights[keep], cs.widths[keep]
    order = np.lexsort((p, ww, hh, c, r))
    r, p, c, hh, ww = r[order], p[order], c[order], hh[order], ww[order]
    v, src = cs.votes[keep][order], keep[order]
    if r.size:
        new = np.r_[True, (r[1:] != r[:-1]) | (c[1:] != c[:-1]) | (hh[1:] != hh[:-1])
                    | (ww[1:] != ww[:-1])]
        starts = np.flatnonzero(new)
    else:
        starts = np.zeros(0, np.int64)
    votes = np.add.reduceat(v, starts) if starts.size else np.zeros(0, np.int64)
    out = r[starts]
    correct = (c[starts] == tcode[out]) & (hh[starts] == th[out]) & (ww[starts] == tw[out])
    scores = {k: s[src[starts]] for k, s in cs.scores.items()}
    return _Pool(out, votes, p[starts], correct, src[starts], scores, int(th.size)), counts


def _ranks(pool: _Pool, rule: str, lower: frozenset) -> np.ndarray:
    """Rank (1 = top) of every candidate within its output under ``rule``."""
    if rule == "order":
        return pool.first + 1
    if rule == "votes":
        key = -pool.votes.astype(float)
    else:
        s = pool.scores[rule]
        key = np.where(np.isnan(s), np.inf, s if rule in lower else -s)
    order = np.lexsort((pool.first, key, pool.out))
    ranks = np.empty(order.size, np.int64)
    o = pool.out[order]
    start = np.r_[0, np.flatnonzero(o[1:] != o[:-1]) + 1] if o.size else np.zeros(0, np.int64)
    group_start = np.repeat(start, np.diff(np.r_[start, o.size]))
    ranks[order] = np.arange(order.size) - group_start + 1
    return ranks


_ABSENT = np.iinfo(np.int64).max


def _rank_of_correct(pool: _Pool, ranks: np.ndarray) -> np.ndarray:
    r = np.full(pool.n_out, _ABSENT, np.int64)
    c = pool.correct
    np.minimum.at(r, pool.out[c], ranks[c])
    return r


def calibration(confidence, correct, task_codes, *, bins: int = 10, n_boot: int = 1000,
                seed: int = 0, level: float = 0.95) -> tuple[pd.DataFrame, dict]:
    """Reliability of a confidence in [0, 1] against right / wrong, over outputs.

    Returns the reliability table (one row per equal-width bin: ``bin_low``,
    ``bin_high``, ``n``, ``confidence`` (mean), ``accuracy`` (fraction right) and its
    Wilson 95 % interval ``ci_low``/``ci_high``) and ``{"ece", "ece_ci95"}``.
    ECE = sum over bins of ``n_b / n * abs(accuracy_b - confidence_b)``. The binned estimate
    is biased upwards on finite samples, so its interval is the basic bootstrap interval
    over tasks (``2 * ece - quantiles`` of the resampled ECE, which removes that bias),
    clipped to [0, 1]: a calibrated pool gives an interval that reaches 0.
    """
    conf = np.asarray(confidence, float)
    ok = np.asarray(correct, bool).astype(float)
    codes = np.asarray(task_codes, np.int64)
    edges = np.linspace(0.0, 1.0, bins + 1)
    b = np.clip(np.searchsorted(edges, conf, side="right") - 1, 0, bins - 1)
    n_b = np.bincount(b, minlength=bins).astype(float)
    c_b = np.bincount(b, weights=conf, minlength=bins)
    a_b = np.bincount(b, weights=ok, minlength=bins)
    z = 1.959963984540054
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = a_b / n_b
        mconf = c_b / n_b
        centre = (acc + z * z / (2 * n_b)) / (1 + z * z / n_b)
        half = z * np.sqrt(acc * (1 - acc) / n_b + z * z / (4 * n_b * n_b)) / (1 + z * z / n_b)
    table = pd.DataFrame({"bin_low": edges[:-1], "bin_high": edges[1:], "n": n_b.astype(int),
                          "confidence": mconf, "accuracy": acc,
                          "ci_low": np.clip(centre - half, 0, 1),
                          "ci_high": np.clip(centre + half, 0, 1)})
    n = conf.size
    if n == 0:
        return table, {"ece": float("nan"), "ece_ci95": [float("nan"), float("nan")]}

    def ece_of(nb, cb, ab):
        tot = nb.sum(axis=-1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            gap = np.abs(ab - cb) / np.where(tot > 0, tot, 1)
        return gap.sum(axis=-1)

    ece = float(ece_of(n_b, c_b, a_b))
    # per task x bin sums, then each resample's sums as a weighted sum over tasks
    _, tix = np.unique(codes, return_inverse=True)
    n_t = int(tix.max()) + 1
    cell = tix * bins + b
    per = [np.bincount(cell, weights=w, minlength=n_t * bins).reshape(n_t, bins)
           for w in (np.ones(n), conf, ok)]
    draws = bootstrap_indices(n_t, n_boot=n_boot, seed=seed)
    weights = np.zeros((n_boot, n_t))
    np.add.at(weights, (np.repeat(np.arange(n_boot), n_t), draws.ravel()), 1.0)
    boot = ece_of(weights @ per[0], weights @ per[1], weights @ per[2])
    q_lo, q_hi = percentile_interval(boot, level)
    lo, hi = float(np.clip(2 * ece - q_hi, 0, 1)), float(np.clip(2 * ece - q_lo, 0, 1))
    return table, {"ece": ece, "ece_ci95": [lo, hi]}


def _task_mean(values: np.ndarray, task_of: np.ndarray, n_per_task: np.ndarray) -> np.ndarray:
    return np.bincount(task_of, weights=values.astype(float),
                       minlength=n_per_task.size) / n_per_task


@dataclass
class CandidateAnalysis:
    """What :func:`candidates` measured.

    ``summary``: the numbers (see the module docstring; ``--json`` prints it).
    ``outputs``: one row per test output of the dataset (distinct candidates, votes,
    coverage, the rank of the right candidate under every rule, the top candidate's vote
    share). ``pool``: one row per distinct candidate (votes, first appearance, scores,
    ``correct``, ``rank_<rule>``). ``pass_at_k``: pass@K for K = 1 ... the largest rank,
    per rule (long table). ``reliability``: the calibration bins. ``by_category``:
    coverage beside pass@2 per category of the structural taxonomy. ``comparisons``:
    paired comparison of every two rules on pass@2. ``warnings``: what to know.
    """

    summary: dict
    outputs: pd.DataFrame
    pool: pd.DataFrame
    pass_at_k: pd.DataFrame
    reliability: pd.DataFrame
    by_category: pd.DataFrame
    comparisons: pd.DataFrame
    warnings: list
    dataset: Dataset
    candidate_set: CandidateSet = field(repr=False, default=None)

    @property
    def rules(self) -> list[str]:
        """The ranking rules measured, ``order`` and ``votes`` first."""
        return list(self.summary["rankings"])

    def grids(self, task_id: str, test_index: int = 0, *, rule: str | None = None
              ) -> list[tuple[np.ndarray, int, bool]]:
        """The candidates of one output in rank order under ``rule`` (default: the
        first rule asked for): ``(grid, votes, correct)`` each."""
        rule = rule or self.summary["rank_by"]
        p = self.pool[(self.pool["task_id"] == task_id) & (self.pool["test_index"] == test_index)]
        p = p.sort_values([f"rank_{rule}", "first"])
        return [(self.candidate_set.grid(int(s)), int(v), bool(c))
                for s, v, c in zip(p["sample"], p["votes"], p["correct"])]

    def write(self, out: str | os.PathLike, *, overwrite: bool = False) -> Path:
        """Write ``summary.json`` and the tables as CSV into the folder ``out`` through
        the guarded output folder (:class:`arcnb.runs.OutputFolder`: not inside arcnb's
        own folders, never through a link; the seven files written as one, atomically;
        existing files are kept unless ``overwrite=True``)."""
        folder = OutputFolder(out)
        summary = json.dumps(to_jsonable(self.summary), indent=2, sort_keys=True,
                             allow_nan=False) + "\n"
        files = {"summary.json": summary.encode()}
        for name, table in (("outputs.csv", self.outputs),
                            ("candidates.csv", self.pool.drop(columns=["sample"])),
                            ("pass_at_k.csv", self.pass_at_k),
                            ("reliability.csv", self.reliability),
                            ("by_category.csv", self.by_category),
                            ("comparisons.csv", self.comparisons)):
            files[name] = (lambda t=table: csv_text(t).encode())
        # the seven files as one: all claimed first, a failure takes back those created
        folder.write(files, overwrite=overwrite)
        return folder.path


def _ci(values, n_boot: int, seed: int) -> list:
    return list(bootstrap_ci(values, n_boot=n_boot, seed=seed))


def _pass_at_k_table(rules, roc, task_of, n_per_task) -> pd.DataFrame:
    """pass@K per ranking rule, for K from 1 to the deepest rank of a right candidate
    (every K up to 50, then 40 steps on a log scale)."""
    max_rank = int(max([1, *[int(r[r != _ABSENT].max()) for r in roc.values()
                             if (r != _ABSENT).any()]]))
    ks = np.unique(np.r_[np.arange(1, min(max_rank, 50) + 1),
                         np.geomspace(1, max_rank, 40).round().astype(int)])
    rows = []
    for rule in rules:
        for k in ks:
            pt = _task_mean(roc[rule] <= k, task_of, n_per_task)
            rows.append({"rule": rule, "K": int(k), "pass@K": float(pt.mean())})
    return pd.DataFrame(rows)


def _rule_comparisons(rules, rankings, per_task_pass2, solved2, n_boot, seed) -> pd.DataFrame:
    """Every pair of ranking rules: the paired bootstrap difference in pass@2 over tasks
    and the exact McNemar test on the outputs one rule solves and the other does not."""
    rows = []
    for a_i, a in enumerate(rules):
        for b in rules[a_i + 1:]:
            diff, lo, hi = paired_bootstrap_ci(per_task_pass2[a], per_task_pass2[b],
                                               n_boot=n_boot, seed=seed)
            mc = mcnemar_table(solved2[a], solved2[b])
            rows.append({"rule_a": a, "rule_b": b, "pass@2_a": rankings[a]["pass@2"],
                         "pass@2_b": rankings[b]["pass@2"], "difference": diff,
                         "ci_low": lo, "ci_high": hi, "n_a_only": mc["n_a_only"],
                         "n_b_only": mc["n_b_only"], "mcnemar_p": mc["p_value"]})
    return pd.DataFrame(rows, columns=["rule_a", "rule_b", "pass@2_a", "pass@2_b", "difference",
                                       "ci_low", "ci_high", "n_a_only", "n_b_only",
                                       "mcnemar_p"])


def _by_category(ds, taxonomy, cov_task, pass2_task, n_boot, seed) -> pd.DataFrame:
    """Coverage beside pass@2 (of the first ranking rule) per category of ``taxonomy``
    (None: an empty table), each with its bootstrap interval, drawn once."""
    rows = []
    if taxonomy is not None:
        task_ids = ds.task_ids
        tax = load_taxonomy(taxonomy, dataset=ds)
        mem = tax.membership(task_ids)
        pos_of = {t: j for j, t in enumerate(task_ids)}
        for cat in tax.order:
            members = [pos_of[t] for t in mem.loc[mem["category"] == cat, "task_id"]]
            if not members:
                continue
            m = np.asarray(members)
            cv, p2 = cov_task[m], pass2_task[m]
            cv_ci, p2_ci = _ci(cv, n_boot, seed), _ci(p2, n_boot, seed)
            rows.append({"category": cat, "n_tasks": m.size, "coverage": float(cv.mean()),
                         "coverage_ci_low": cv_ci[0], "coverage_ci_high": cv_ci[1],
                         "pass@2": float(p2.mean()), "pass@2_ci_low": p2_ci[0],
                         "pass@2_ci_high": p2_ci[1], "selection_gap": float((cv - p2).mean())})
    return pd.DataFrame(rows, columns=[
        "category", "n_tasks", "coverage", "coverage_ci_low", "coverage_ci_high", "pass@2",
        "pass@2_ci_low", "pass@2_ci_high", "selection_gap"])


def candidates(dataset, predictions, *, tasks=None, rank_by: Sequence[str] | str | None = None,
               taxonomy="structural", bins: int = 10, n_boot: int = 1000,
               seed: int = 0) -> CandidateAnalysis:
    """Measure a candidate pool against ``dataset``'s truth.

    ``predictions``: anything :func:`load_candidates` reads. ``rank_by``: extra ranking
    rules (``order`` and ``votes`` are always measured); the first one given ranks
    ``rank_of_correct`` (default ``votes``). ``taxonomy``: categories for
    ``by_category`` (``"structural"``, a taxonomy file, or None to skip).
    """
    n_boot, seed = check_n_boot(n_boot), check_seed(seed)
    ds = load_dataset(dataset, tasks=tasks) if not isinstance(dataset, Dataset) else (
        dataset if tasks is None else load_dataset(dataset, tasks=tasks))
    cs = load_candidates(predictions, n_tests={t.id: len(t.test) for t in ds})
    rank_by = [rank_by] if isinstance(rank_by, str) else list(rank_by or [])
    available = set(BUILTIN_RULES) | set(cs.scores)
    for rule in rank_by:
        if rule not in available:
            have = ", ".join(sorted(available))
            raise ParameterError(f"unknown ranking rule {rule!r}: this pool offers {have}")
    rules = list(dict.fromkeys([*BUILTIN_RULES, *rank_by]))
    first_rule = rank_by[0] if rank_by else "votes"

    keys, task_of, truths = [], [], []
    for t, task in enumerate(ds):
        for i, pair in enumerate(task.test):
            keys.append((task.id, i))
            task_of.append(t)
            truths.append(pair.output)
    n_out, n_tasks = len(keys), len(ds)
    if n_out == 0:
        raise ParameterError("the dataset has no test outputs to measure candidates against")
    task_of = np.asarray(task_of, np.int64)
    n_per_task = np.bincount(task_of, minlength=n_tasks).astype(float)
    row_of_key = {k: r for r, k in enumerate(keys)}
    tcells = np.concatenate([np.ascontiguousarray(g, np.int8).ravel() for g in truths])
    th = np.array([g.shape[0] for g in truths], np.int64)
    tw = np.array([g.shape[1] for g in truths], np.int64)
    toffs = np.zeros(n_out + 1, np.int64)
    np.cumsum(th * tw, out=toffs[1:])
    pool, counts = _distinct(cs, row_of_key, (tcells, toffs, th, tw))

    covered = np.zeros(n_out, bool)
    covered[pool.out[pool.correct]] = True
    n_distinct = np.bincount(pool.out, minlength=n_out)
    # integer sums (votes are at most MAX_VOTES each: no sum can wrap, none is rounded)
    total_votes = np.zeros(n_out, np.int64)
    np.add.at(total_votes, pool.out, pool.votes)
    ranks = {rule: _ranks(pool, rule, cs.lower_is_better) for rule in rules}
    roc = {rule: _rank_of_correct(pool, ranks[rule]) for rule in rules}

    cov_task = _task_mean(covered, task_of, n_per_task)
    out_per_task = np.bincount(task_of, weights=covered.astype(float), minlength=n_tasks)
    coverage = float(cov_task.mean())
    rankings, per_task_pass2, solved2 = {}, {}, {}
    for rule in rules:
        entry = {}
        for k in (1, 2):
            solved = roc[rule] <= k
            pt = _task_mean(solved, task_of, n_per_task)
            entry[f"pass@{k}"] = float(pt.mean())
            entry[f"pass@{k}_ci95"] = _ci(pt, n_boot, seed)
            entry[f"pass@{k}_per_output"] = float(solved.mean())
            if k == 2:
                per_task_pass2[rule], solved2[rule] = pt, solved
        gap = cov_task - per_task_pass2[rule]
        entry["selection_gap"] = float(gap.mean())
        entry["selection_gap_ci95"] = _ci(gap, n_boot, seed)
        rankings[rule] = entry

    r0 = roc[first_rule]
    present = r0[r0 != _ABSENT]
    rank_of_correct = {str(int(k)): int(n) for k, n in zip(*np.unique(present, return_counts=True))}
    rank_of_correct["absent"] = int((r0 == _ABSENT).sum())

    # the top candidate under votes: its share of the output's votes
    top = ranks["votes"] == 1
    has = n_distinct > 0
    share = np.full(n_out, np.nan)
    top_right = np.zeros(n_out, bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        share[pool.out[top]] = pool.votes[top] / total_votes[pool.out[top]]
    top_right[pool.out[top]] = pool.correct[top]
    voted = np.isfinite(share)  # outputs with candidates and at least one vote
    reliability, cal = calibration(share[voted], top_right[voted], task_of[voted], bins=bins,
                                   n_boot=n_boot, seed=seed)

    warnings = []
    single_share = float((n_distinct == 1).mean())
    if has.any() and n_distinct.max() == 1:
        warnings.append("every test output has a single distinct candidate: pass@K is the "
                        "same for every K, and ranking rules cannot differ")
    if counts["n_outside_dataset"]:
        warnings.append(f"{counts['n_outside_dataset']} samples are for tasks or test outputs "
                        "the dataset lacks: ignored")
    n_without = int((~has).sum())

    ratio_lo, ratio_hi = ratio_bootstrap_ci(out_per_task, n_per_task, n_boot=n_boot, seed=seed,
                                            level=0.95)
    pass_at_k = _pass_at_k_table(rules, roc, task_of, n_per_task)
    comparisons = _rule_comparisons(rules, rankings, per_task_pass2, solved2, n_boot, seed)
    by_category = _by_category(ds, taxonomy, cov_task, per_task_pass2[first_rule], n_boot, seed)

    out_tid = [k[0] for k in keys]
    out_idx = [k[1] for k in keys]
    outputs = pd.DataFrame({"task_id": out_tid, "test_index": out_idx,
                            "n_distinct": n_distinct, "n_votes": total_votes,
                            "covered": covered, "top_vote_share": share,
                            "top_correct": top_right})
    for rule in rules:
        r = roc[rule]
        outputs[f"rank_{rule}"] = pd.array(np.where(r == _ABSENT, 0, r), dtype="Int64")
        outputs.loc[r == _ABSENT, f"rank_{rule}"] = pd.NA
    tid_arr = np.asarray(out_tid, dtype=object)
    # every column at once (one insert per score column is quadratic); no score can
    # take a pool column's name (refused when read)
    pool_cols = {"task_id": tid_arr[pool.out], "test_index": np.asarray(out_idx)[pool.out],
                 "votes": pool.votes, "first": pool.first, "correct": pool.correct,
                 "sample": pool.src}
    pool_cols.update(pool.scores)
    pool_cols.update({f"rank_{rule}": ranks[rule] for rule in rules})
    pool_df = pd.DataFrame(pool_cols)

    summary = {
        "dataset": ds.info, "source": cs.source, "format": cs.format,
        "n_tasks": n_tasks, "n_outputs": n_out,
        "n_outputs_without_candidates": n_without,
        "n_samples": counts["n_samples"], "n_invalid_attempts": counts["n_invalid"],
        "n_candidates": int(pool.out.size),
        "coverage": coverage, "coverage_ci95": _ci(cov_task, n_boot, seed),
        "coverage_per_output": float(covered.mean()),
        "coverage_per_output_ci95": [ratio_lo, ratio_hi],
        "rankings": rankings, "rank_by": first_rule, "rank_of_correct": rank_of_correct,
        "distinct_mean": float(n_distinct.mean()), "single_candidate_share": single_share,
        "ece": cal["ece"], "ece_ci95": cal["ece_ci95"],
        "reliability": reliability.to_dict(orient="records"),
        "comparisons": comparisons.to_dict(orient="records"),
        "by_category": by_category.to_dict(orient="records"),
        "scores": sorted(cs.scores), "lower_is_better": sorted(cs.lower_is_better),
        "warnings": warnings, "definitions": CANDIDATE_DEFINITIONS,
    }
    return CandidateAnalysis(summary, outputs, pool_df, pass_at_k, reliability, by_category,
                             comparisons, warnings, ds, cs)


class _CallableModule(types.ModuleType):
    """``arcnb.candidates`` is this module and, called, :func:`candidates`: both
    ``arcnb.candidates(dataset, predictions)`` and ``arcnb.candidates.load_candidates``
    work, and ``import arcnb.candidates`` never meets a function in its place."""

    def __call__(self, *args, **kwargs) -> CandidateAnalysis:
        return candidates(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
