"""Candidate pools as data: the :class:`CandidateSet` read from submissions, harness
runs and candidates files (JSON / Parquet), the candidates file writer, and exact grid
codes (:func:`grid_codes`). The formats are described in :mod:`arcnb.candidates`."""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ..errors import PredictionsError, one_line
from ..grids import MAX_SIZE, as_grid_or_none
from ..io import JSONInputError, parse_json, read_json, read_parquet
from ..predictions import MAX_TEST_INPUTS, Predictions, load_predictions
from ..runs import OutputFolder

__all__ = ["CandidateSet", "load_candidates", "write_candidates", "candidates_bytes",
           "grid_codes", "BUILTIN_RULES", "PRODUCT_OF_EXPERTS", "FORMAT_KEY", "MAX_VOTES",
           "POOL_COLUMNS"]

#: The key (and version) that marks a candidates file.
FORMAT_KEY = "arcnb_candidates"
#: The rule name of the product of experts (sum of per-view log-probabilities).
PRODUCT_OF_EXPERTS = "product_of_experts"
#: Rules every pool has.
BUILTIN_RULES = ("order", "votes")
#: The budget axes a candidate's draws may carry (per draw: an integer).
AXES = ("sample", "view", "step", "iteration")
#: The demonstration checks a candidate may carry: ``passes_train`` (reproduces every
#: demonstration pair) and ``train_score`` (a soft score on them, in [0, 1]).
VERIFIER_FIELDS = ("passes_train", "train_score")
#: Largest value of an axis field (10^9).
MAX_AXIS_VALUE = 10 ** 9
#: The rules of the fields both formats carry, worded once (a JSON candidates file and
#: a Parquet one are read by the same rules: the same file refused or taken by both).
VIEW_LOGPROBS_RULE = ("view_logprobs must be a non-empty list of finite numbers whose sum "
                      "is within a float's range (or absent)")
TRAIN_SCORE_RULE = "train_score must be a number in [0, 1] (or absent)"

_RESERVED = frozenset({"task_id", "test_index", "height", "width", "cells", "grid", "votes",
                       "view_logprobs", *AXES, *VERIFIER_FIELDS})
#: The columns of the pool table (:attr:`CandidateAnalysis.pool`) besides the scores
#: and the ``rank_<rule>`` columns: no score may take one of these names.
POOL_COLUMNS = ("task_id", "test_index", "votes", "first", "correct", "sample", *AXES,
                *VERIFIER_FIELDS)
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


# ---------------------------------------------------------------------------- the data
@dataclass
class CandidateSet:
    """Samples read from a source, before they meet a dataset.

    One entry per sample (an attempt, or a listed candidate): ``block[s]`` indexes
    ``keys`` (``(task_id, test_index)``), ``pos[s]`` is its place within that output,
    ``votes[s]`` its weight, ``heights``/``widths`` its shape (0 x 0 when malformed),
    ``cells[offsets[s]:offsets[s + 1]]`` its cells (``int8``). ``scores`` maps a name to
    one float per sample (NaN where absent); ``lower_is_better`` names the scores that
    rank ascending. ``fields``: ``passes_train`` (1.0 / 0.0) and ``train_score``, one
    float per sample (NaN where absent), when the source has them. ``draws``: when some
    sample carries a budget axis (``sample``, ``view``, ``step``, ``iteration``), one
    row per draw: ``entry`` (the sample it belongs to), ``weight`` (how many draws the
    row stands for) and one float array per axis present (NaN where a draw lacks it);
    else None.
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
    fields: dict = field(default_factory=dict)
    draws: dict | None = None

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
        self.fields: dict[str, list] = {}
        self.draw_entry, self.draw_weight = [], []
        self.draw_axes: dict[str, list] = {}

    def add(self, key, pos, grid, votes=1, scores=None, fields=None, draws=None):
        """``draws``: ``(weights, {axis: values})``, one value per draw row."""
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
        for name, value in (fields or {}).items():
            self.fields.setdefault(name, [np.nan] * n).append(value)
        for col in self.fields.values():
            if len(col) < n + 1:
                col.append(np.nan)
        if draws is not None:
            weights, axes = draws
            d = len(self.draw_entry)
            self.draw_entry += [n] * len(weights)
            self.draw_weight += list(weights)
            for name, values in axes.items():
                self.draw_axes.setdefault(name, [np.nan] * d).extend(values)
            for col in self.draw_axes.values():
                col.extend([np.nan] * (len(self.draw_entry) - len(col)))

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
                            fields={k: np.asarray(v, dtype=float)
                                    for k, v in self.fields.items()},
                            draws=self._draws(), **kw)

    def _draws(self) -> dict | None:
        if not self.draw_entry:
            return None
        d = {"entry": np.asarray(self.draw_entry, np.int64),
             "weight": np.asarray(self.draw_weight, np.int64)}
        d.update({k: np.asarray(v, dtype=float) for k, v in self.draw_axes.items()})
        return d


def _from_predictions(preds: Predictions, n_tests: Mapping[str, int] | None) -> CandidateSet:
    if n_tests is not None:
        preds = preds.aligned(n_tests)  # entries placed by metadata.pair_index, as scored
    b = _Builder()
    for tid, outs in preds.attempts.items():
        for i, attempts in enumerate(outs):
            for j, g in enumerate(attempts):
                # every attempt is one draw: its attempt number is its sample index
                b.add((tid, i), j, g, draws=([1], {"sample": [float(j)]}))
    return b.build(source=preds.source, format=preds.format)


def _number(x, what: str, where: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise PredictionsError(f"{where}: {what} must be a number, got {type(x).__name__}")
    try:
        return float(x)
    except OverflowError:
        raise PredictionsError(f"{where}: {what} is beyond the range of a float") from None


def _from_candidates_obj(obj: Mapping, source: str | None, *,
                         consume: bool = False) -> CandidateSet:
    where = source or "candidates"
    tasks = obj.get("tasks")
    if not isinstance(tasks, dict):
        raise PredictionsError(f"{where}: expected 'tasks' (an object of task ids) and "
                               "'lower_is_better' (a list of score names)", file=source)
    lower = _header(obj.get(FORMAT_KEY), obj.get("lower_is_better", []), where, source)
    b = _Builder()
    for tid in sorted(tasks, key=str):
        # a file's own parse is dropped task by task as it is read (consume): the JSON
        # and the pool are not held at once
        outs = tasks.pop(tid) if consume else tasks[tid]
        tid_words = one_line(repr(str(tid)), 40)
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
                at = f"{where}: task {tid_words}, test input {i}, candidate {j}"
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
                        raise PredictionsError(f"{at}: {VIEW_LOGPROBS_RULE}", file=source)
                    try:
                        total = math.fsum(_number(v, "view_logprobs", at) for v in views)
                    except OverflowError:
                        total = math.inf
                    if not math.isfinite(total):
                        raise PredictionsError(f"{at}: {VIEW_LOGPROBS_RULE}", file=source)
                    sc[PRODUCT_OF_EXPERTS] = total
                votes, fields, draws = _json_budget(c, votes, at, source)
                b.add((str(tid), i), j, as_grid_or_none(c.get("grid")), votes, sc, fields,
                      draws)
                if len(b.scores) > MAX_SCORES:
                    raise PredictionsError(f"{where}: more than {MAX_SCORES} named scores",
                                           file=source)
    return b.build(source=source, format="candidates", lower_is_better=lower)


def _json_budget(c: Mapping, votes: int, at: str, source) -> tuple[int, dict, tuple | None]:
    """A listed candidate's budget axes and demonstration checks: ``(votes, fields,
    draws)``. An axis is an integer (every draw of the candidate) or a list of integers
    (one per draw); lists must agree in length, which is then the candidate's votes."""
    axes, length = {}, None
    for name in AXES:
        v = c.get(name)
        if v is None:
            continue
        values = v if isinstance(v, list) else [v]
        if not values or not all(isinstance(x, int) and not isinstance(x, bool)
                                 and 0 <= x <= MAX_AXIS_VALUE for x in values):
            raise PredictionsError(f"{at}: {name} must be an integer from 0 to "
                                   f"{MAX_AXIS_VALUE} or a non-empty list of them", file=source)
        if isinstance(v, list):
            if length is not None and len(v) != length:
                raise PredictionsError(f"{at}: the lists of {', '.join(AXES)} must have one "
                                       "value per draw (the same length)", file=source)
            length = len(v)
        axes[name] = values
    if length is not None:
        if "votes" in c and votes != length:
            raise PredictionsError(f"{at}: votes ({votes}) must equal the number of draws "
                                   f"its lists give ({length})", file=source)
        votes = length
    draws = None
    if axes:
        n = length or 1
        draws = ([1] * n if length else [votes],
                 {k: [float(x) for x in (vals if len(vals) == n else vals * n)]
                  for k, vals in axes.items()})
    fields = {}
    p = c.get("passes_train")
    if p is not None:
        if not isinstance(p, bool):
            raise PredictionsError(f"{at}: passes_train must be true or false", file=source)
        fields["passes_train"] = float(p)
    t = c.get("train_score")
    if t is not None:
        t = _number(t, "train_score", at)
        if not 0.0 <= t <= 1.0:  # NaN too
            raise PredictionsError(f"{at}: {TRAIN_SCORE_RULE}, got {t}", file=source)
        fields["train_score"] = t
    return votes, fields, draws


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
        header = parse_json(meta, what=f"the {FORMAT_KEY} metadata",
                            error=lambda m: PredictionsError(f"{where}: {m}", file=where))
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
        elif not pa.types.is_null(col.type):  # as a JSON score that is not a number
            _refuse(where, f"column {one_line(repr(name), 40)} holds {col.type}: a score "
                           "column must hold numbers")
    if len(scores) > MAX_SCORES:
        _refuse(where, f"{len(scores)} score columns, more than the {MAX_SCORES} arcnb "
                       "measures")
    if "view_logprobs" in names:
        scores[PRODUCT_OF_EXPERTS] = _parquet_view_logprobs(table, where)
    fields, draws = _parquet_budget(table, names, votes, where)
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
                        format="parquet", fields=fields, draws=draws)


def _parquet_view_logprobs(table, where: str) -> np.ndarray:
    """Per row, the sum of the ``view_logprobs`` list (NaN for a null), by the rule of
    the JSON form (:data:`VIEW_LOGPROBS_RULE`: a non-empty list of finite numbers whose
    sum is within a float's range)."""
    import pyarrow as pa

    lists = table.column("view_logprobs").combine_chunks()
    if not (pa.types.is_list(lists.type) or pa.types.is_large_list(lists.type)) or not (
            pa.types.is_integer(lists.type.value_type)
            or pa.types.is_floating(lists.type.value_type)):
        _refuse(where, f"the view_logprobs column must hold lists of numbers, not {lists.type}")
    flat = lists.flatten().to_numpy(zero_copy_only=False).astype(float)
    loff = lists.offsets.to_numpy().astype(np.int64)
    null = (lists.is_null().to_numpy(zero_copy_only=False) if lists.null_count
            else np.zeros(len(lists), bool))
    with np.errstate(over="ignore", invalid="ignore"):
        sums = np.add.reduceat(np.append(flat, 0.0), np.minimum(loff[:-1], flat.size))
    if ((np.diff(loff) == 0) & ~null).any() or not np.isfinite(flat).all() \
            or not np.isfinite(sums[~null & (np.diff(loff) > 0)]).all():
        _refuse(where, VIEW_LOGPROBS_RULE)
    return np.where(null, np.nan, sums)


def _parquet_budget(table, names, votes, where: str) -> tuple[dict, dict | None]:
    """The budget axes (integer columns, nulls allowed: one row is one draw, or
    ``votes`` draws) and the demonstration checks (``passes_train`` boolean,
    ``train_score`` numbers in [0, 1]) of a candidates Parquet table."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def floats(name):
        col = table.column(name)
        return (col.cast(pa.float64()).to_numpy().astype(float) if len(col)
                else np.zeros(0))

    fields = {}
    if "passes_train" in names:
        if not pa.types.is_boolean(table.column("passes_train").type):
            _refuse(where, "the passes_train column must hold booleans, not "
                           f"{table.column('passes_train').type}")
        fields["passes_train"] = floats("passes_train")
    if "train_score" in names:
        t = table.column("train_score").type
        if not (pa.types.is_integer(t) or pa.types.is_floating(t)):
            _refuse(where, f"the train_score column must hold numbers, not {t}")
        col = table.column("train_score")
        v = floats("train_score")
        nulls = (col.is_null().to_numpy(zero_copy_only=False) if len(col) and col.null_count
                 else np.zeros(len(v), bool))
        if (~nulls & ~((v >= 0) & (v <= 1))).any():  # NaN (not a null) too
            _refuse(where, TRAIN_SCORE_RULE)
        fields["train_score"] = v
    axes = {}
    for name in AXES:
        if name not in names:
            continue
        col = table.column(name)
        if not pa.types.is_integer(col.type):
            _refuse(where, f"the {name} column must hold integers, not {col.type}")
        if len(col) and col.null_count < len(col):
            mm = pc.min_max(col).as_py()
            if mm["min"] < 0 or mm["max"] > MAX_AXIS_VALUE:
                _refuse(where, f"the {name} column must lie in 0 .. {MAX_AXIS_VALUE}")
        axes[name] = floats(name)
    if not axes:
        return fields, None
    draws = {"entry": np.arange(table.num_rows, dtype=np.int64), "weight": votes.copy()}
    draws.update(axes)
    return fields, draws


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
        return _from_candidates_obj(obj, str(path), consume=True)
    return _from_predictions(Predictions.from_obj(obj, source=str(path)), n_tests)


def write_candidates(path: str | os.PathLike, records: Iterable[Mapping], *,
                     lower_is_better: Sequence[str] | None = None,
                     overwrite: bool = False) -> Path:
    """Write a candidates file (``.json`` or ``.parquet``, by the suffix) atomically.

    ``records``: one mapping per candidate, in the order they came, with ``task_id``,
    ``test_index``, ``grid`` and optionally ``votes``, ``view_logprobs``, the budget
    axes ``sample``, ``view``, ``step``, ``iteration`` (an integer, or a list with one
    value per draw: one candidate in JSON, one Parquet row per draw), ``passes_train``
    (bool), ``train_score`` (in [0, 1]) and any numeric score (every other key).
    ``lower_is_better`` names the scores that rank ascending.
    """
    path = Path(path)
    folder = OutputFolder(path.parent, what="folder")
    data = candidates_bytes(path, records, lower_is_better=lower_is_better)
    return folder.write({path.name: data}, overwrite=overwrite,
                        hint="pass overwrite=True")[0]


def _one_row_per_draw(r: Mapping) -> list[Mapping]:
    """A record whose axes are lists, as one record per draw (one vote each)."""
    lists = {k: list(r[k]) for k in AXES if isinstance(r.get(k), (list, tuple, np.ndarray))}
    if not lists:
        return [r]
    n = len(next(iter(lists.values())))
    return [{**r, "votes": 1, **{k: v[d] for k, v in lists.items()}} for d in range(n)]


def candidates_bytes(name: str | os.PathLike, records: Iterable[Mapping], *,
                     lower_is_better: Sequence[str] | None = None) -> bytes:
    """The bytes of the candidates file :func:`write_candidates` writes (Parquet when
    ``name`` ends in ``.parquet``, else JSON)."""
    path = Path(name)
    rows = list(records)
    if path.suffix.lower() in (".parquet", ".pq"):
        rows = [d for r in rows for d in _one_row_per_draw(r)]
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
        if any(r.get("passes_train") is not None for r in rows):
            cols["passes_train"] = pa.array([r.get("passes_train") for r in rows], pa.bool_())
        if any(r.get("train_score") is not None for r in rows):
            cols["train_score"] = pa.array([r.get("train_score") for r in rows], pa.float64())
        for name in AXES:
            if any(r.get(name) is not None for r in rows):
                cols[name] = pa.array([r.get(name) for r in rows], pa.int64())
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
        for name in AXES:
            if r.get(name) is not None:
                v = r[name]
                c[name] = ([int(x) for x in v] if isinstance(v, (list, tuple, np.ndarray))
                           else int(v))
                if isinstance(c[name], list):
                    c["votes"] = len(c[name])
        if r.get("passes_train") is not None:
            c["passes_train"] = bool(r["passes_train"])
        if r.get("train_score") is not None:
            c["train_score"] = float(r["train_score"])
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
