"""Training-data overlap: which evaluation test outputs the training data already holds.

For every test output of an evaluation dataset, :func:`overlap` says whether a pool of
training datasets holds it:

* ``exact``: the (test input, test output) pair appears verbatim as a pair (a
  demonstration pair or a test pair) of some training task;
* ``equivalent``: it appears after one of the 8 dihedral transforms (rotations and
  mirrors, :func:`arcnb.augment.dihedral`) and a permutation of the colours, applied
  to both grids together (so ``exact`` implies ``equivalent``). Which colours may
  permute is ``colors``: ``"1-9"`` (default) keeps colour 0 (black, ARC's
  background) fixed and lets colours 1-9 permute, as ARC augmentation pipelines do
  (arcnb's own test-time views among them); ``"all"`` lets all 10 colours permute;
* ``input_seen``: its test input appears verbatim as the input of some training pair,
  whatever the output.

Per task: ``exact`` / ``equivalent`` / ``input_seen`` when at least one of its test
outputs is, ``same_id`` when a training task has its id, and ``same_id_changed`` when
every training task with its id holds other content (version drift). A task's content
is the set of its pairs (demonstration and test pairs together, order ignored), so a
task whose pairs were only re-arranged between demonstrations and tests counts as the
same content; when either side lacks some test outputs, the inputs are compared.

Canonical forms, not pairwise search: each pair is reduced to one key per relation
and each set is hashed once, so the check is one pass over each set. The canonical
key of a pair under the group: for each of its 8 dihedral images (both grids
transformed alike), relabel the colours in order of first appearance (scanning the
input, then the output, row by row; with ``colors="1-9"`` colour 0 keeps label 0),
serialise the shapes and relabelled cells to bytes; the key is the smallest of the 8
byte strings (hashed with BLAKE2b, 128 bits). Two pairs have the same key exactly
when one is a dihedral image of the other with colours permuted: the relabelling
makes colour permutations exact, the minimum makes the key independent of the
transform.

>>> ov = overlap("arc-agi-1:evaluation", ["arc-agi-2:training"])  # doctest: +SKIP
>>> ov.summary["outputs_exact"]  # doctest: +SKIP
"""
from __future__ import annotations

import functools
import hashlib
import io
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from .augment import N_DIHEDRAL, dihedral
from .data import Dataset, load_dataset
from .errors import ArcnbError, ParameterError
from .text import dataset_line, fmt_count, fmt_percent
from .runs import write_result_folder

__all__ = [
    "COLOR_MODES",
    "MAX_LISTED_REFS",
    "OVERLAP_COLUMNS",
    "SUMMARY_KEYS",
    "Overlap",
    "overlap",
    "canonical_key",
    "canonical_keys",
    "exact_key",
    "input_key",
    "format_line",
    "format_text",
]

#: Which colours may permute in ``equivalent``: ``"1-9"`` keeps 0 (black) fixed.
COLOR_MODES = ("1-9", "all")

#: Columns of the per-output table (``Overlap.outputs``).
OVERLAP_COLUMNS = ("task_id", "test_index", "has_truth", "exact", "equivalent",
                   "input_seen", "exact_train_tasks", "equivalent_train_tasks",
                   "input_seen_train_tasks")

#: The counts every summary holds (``arcnb overlap --json``).
SUMMARY_KEYS = ("n_tasks", "n_outputs", "outputs_exact", "outputs_equivalent",
                "outputs_input_seen", "tasks_exact", "tasks_equivalent", "tasks_input_seen",
                "same_id_tasks", "same_id_changed")

#: File names written by :meth:`Overlap.write`.
OUTPUTS_CSV, OUTPUTS_PARQUET = "overlap.csv", "overlap.parquet"
TASKS_CSV, SUMMARY_JSON = "overlap_tasks.csv", "overlap.json"

_DIGEST = 16


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=_DIGEST).digest()


def _shape_bytes(*grids: np.ndarray) -> bytes:
    return np.array([d for g in grids for d in g.shape], dtype=np.uint8).tobytes()


def _u8(grid) -> np.ndarray:
    return np.ascontiguousarray(grid, dtype=np.uint8)


def input_key(grid) -> bytes:
    """The key of one grid taken verbatim (shape and cells)."""
    g = _u8(grid)
    return _digest(_shape_bytes(g) + g.tobytes())


def exact_key(inp, out) -> bytes:
    """The key of a pair taken verbatim: equal keys mean both grids are equal."""
    a, b = _u8(inp), _u8(out)
    return _digest(_shape_bytes(a, b) + a.tobytes() + b.tobytes())


@functools.lru_cache(maxsize=1024)
def _grid_views(shape: tuple) -> tuple[np.ndarray, tuple]:
    """The 8 dihedral images of a grid of this shape as gathers of its flattened cells:
    ``idx[t, k]`` is the cell at position ``k`` of image ``t``; ``shapes[t]`` its shape."""
    cells = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    images = [dihedral(cells, t) for t in range(N_DIHEDRAL)]
    return np.stack([im.reshape(-1) for im in images]), tuple(im.shape for im in images)


def _views(shape_in: tuple, shape_out: tuple) -> tuple[np.ndarray, np.ndarray]:
    """The same for a pair, flattened as input cells then output cells: ``perm`` is
    (8, cells) and ``heads[t]`` the four dimensions of image ``t``."""
    ia, sa = _grid_views(shape_in)
    ib, sb = _grid_views(shape_out)
    perm = np.concatenate([ia, ib + ia.shape[1]], axis=1)
    heads = np.array([[*a, *b] for a, b in zip(sa, sb)], dtype=np.uint8)
    return perm, heads


def _relabel(seqs: np.ndarray, *, keep_black: bool) -> np.ndarray:
    """Each row of ``seqs`` (values 0-9) with its colours renamed 0, 1, 2, ... in order
    of first appearance (with ``keep_black``, 0 keeps the name 0 and the others count
    from 1). Vectorised with bit sets: ``seen[k]`` is the set of colours among the
    first ``k + 1`` cells, so a cell is a first appearance where the set grows."""
    bits = np.left_shift(np.uint16(1), seqs, dtype=np.uint16)
    seen = np.bitwise_or.accumulate(bits, axis=-1)
    before = np.empty_like(seen)
    before[..., 0] = 1 if keep_black else 0
    before[..., 1:] = seen[..., :-1] | before[..., :1]
    new = (seen | before[..., :1]) != before  # a colour's first cell
    names = np.cumsum(new, axis=-1, dtype=np.uint8)  # its name + 1 (+ 0 with keep_black)
    if not keep_black:
        names -= 1
    label = np.zeros((*seqs.shape[:-1], 10), dtype=np.uint8)
    where = np.nonzero(new)
    label[(*where[:-1], seqs[where])] = names[where]
    return np.take_along_axis(label, seqs, axis=-1)


#: Cells relabelled at once (bounds the memory of one batch).
_BATCH_CELLS = 1 << 20


def canonical_keys(pairs: Sequence[tuple], *, colors: str = "1-9") -> list[bytes]:
    """:func:`canonical_key` of many ``(input, output)`` pairs, vectorised: the pairs
    are grouped by their two shapes and each group's 8 dihedral images are gathered,
    relabelled and serialised in a few numpy operations."""
    if colors not in COLOR_MODES:
        raise ParameterError(f"colors must be one of {', '.join(COLOR_MODES)}, got {colors!r}")
    groups: dict[tuple, list[int]] = {}
    for i, (a, b) in enumerate(pairs):
        groups.setdefault((np.shape(a), np.shape(b)), []).append(i)
    keys: list = [None] * len(pairs)
    for (shape_in, shape_out), members in groups.items():
        perm, heads = _views(shape_in, shape_out)
        n = perm.shape[1]
        step = max(1, _BATCH_CELLS // (N_DIHEDRAL * n))
        for lo in range(0, len(members), step):
            idx = members[lo:lo + step]
            flat = np.concatenate(
                [np.stack([pairs[i][0] for i in idx]).reshape(len(idx), -1),
                 np.stack([pairs[i][1] for i in idx]).reshape(len(idx), -1)],
                axis=1).astype(np.uint8)  # (B, n): input cells, then output cells
            seqs = flat[:, perm]  # (B, 8, n): the 8 images, flattened
            relabelled = _relabel(seqs, keep_black=colors == "1-9")
            rows = np.concatenate([np.broadcast_to(heads, (len(idx), *heads.shape)),
                                   relabelled], axis=-1)
            width = rows.shape[-1]
            for i, blob in zip(idx, rows):
                raw = blob.tobytes()
                keys[i] = _digest(min(raw[t * width:(t + 1) * width]
                                      for t in range(N_DIHEDRAL)))
    return keys


def canonical_key(inp, out, *, colors: str = "1-9") -> bytes:
    """The key of a pair under the 8 dihedral transforms and colour permutations.

    ``canonical_key(a, b) == canonical_key(c, d)`` exactly when ``(c, d)`` is
    ``(P(D(a)), P(D(b)))`` for one dihedral transform ``D`` and one permutation ``P`` of
    the colours (of 1-9 with ``colors="1-9"``, colour 0 fixed; of 0-9 with
    ``colors="all"``). For many pairs use :func:`canonical_keys`.
    """
    return canonical_keys([(inp, out)], colors=colors)[0]


def _source_label(ds: Dataset, spec) -> str:
    return ds.name if isinstance(spec, Dataset) else str(spec)


@dataclass
class _Pool:
    """The training pool's keys: key -> training tasks ("source/task_id")."""

    exact: dict = field(default_factory=dict)
    equivalent: dict = field(default_factory=dict)
    inputs: dict = field(default_factory=dict)
    content: dict = field(default_factory=dict)  # task id -> [content keys]
    n_tasks: int = 0
    n_pairs: int = 0


def _add(index: dict, key: bytes, ref: str) -> None:
    refs = index.setdefault(key, [])
    if not refs or refs[-1] != ref:
        refs.append(ref)


def _set_keys(ds: Dataset, colors: str) -> dict[str, list[tuple]]:
    """Per task, the verbatim, canonical and input keys of its pairs (demonstrations,
    then tests; the first two None for a pair without output). One pass over the set:
    the canonical keys of all its pairs are computed together."""
    pairs = [p for task in ds for p in task.train + task.test]
    canon = iter(canonical_keys([(p.input, p.output) for p in pairs if p.output is not None],
                                colors=colors))
    keys = [(None, None, input_key(p.input)) if p.output is None
            else (exact_key(p.input, p.output), next(canon), input_key(p.input))
            for p in pairs]
    out, at = {}, 0
    for task in ds:
        n = len(task.train) + len(task.test)
        out[task.id] = keys[at:at + n]
        at += n
    return out


def _content(keys: list[tuple]) -> tuple:
    """A task's content from its pair keys: (complete, its set of pair keys, its set of
    input keys); ``complete`` is False when some pair lacks its output. Sets, as the
    content is defined: a copy that lists one pair twice holds the same content."""
    return (all(k[0] is not None for k in keys),
            frozenset(k[0] for k in keys if k[0] is not None),
            frozenset(k[2] for k in keys))


def _same_content(a: tuple, b: tuple) -> bool:
    if a[0] and b[0]:
        return a[1] == b[1]
    return a[2] == b[2]


def _build_pool(train: Sequence[tuple[str, Dataset]], colors: str) -> _Pool:
    pool = _Pool()
    for label, ds in train:
        for task_id, keys in _set_keys(ds, colors).items():
            ref = f"{label}/{task_id}"
            for ex, eq, ik in keys:
                if ex is not None:
                    _add(pool.exact, ex, ref)
                    _add(pool.equivalent, eq, ref)
                _add(pool.inputs, ik, ref)
            pool.content.setdefault(task_id, []).append(_content(keys))
            pool.n_tasks += 1
            pool.n_pairs += len(keys)
    return pool


#: Most training tasks a row of the per-output table lists by name; the others are
#: counted (``"... and 9,990 more"``). The table stays linear in the evaluation outputs
#: even when every training task holds the same pair.
MAX_LISTED_REFS = 10


def _refs(refs: list | None, cache: dict) -> str:
    """The training tasks of a match, joined by ``"; "`` (at most
    :data:`MAX_LISTED_REFS` named, the others counted); formatted once per match."""
    if not refs:
        return ""
    key = id(refs)
    if key not in cache:
        names = sorted(set(refs))
        shown = "; ".join(names[:MAX_LISTED_REFS])
        more = len(names) - MAX_LISTED_REFS
        cache[key] = (refs, shown + (f"; ... and {fmt_count(more, thousands=True)} more" if more > 0 else ""))
    return cache[key][1]


@dataclass
class Overlap:
    """The result of :func:`overlap`.

    ``outputs``: one row per evaluation test output (:data:`OVERLAP_COLUMNS`):
    ``task_id``, ``test_index``, ``has_truth`` (the test output is known; without it
    ``exact`` and ``equivalent`` are missing values), the three flags and, for each, the
    matching training tasks as ``source/task_id`` joined by ``"; "`` (the first
    :data:`MAX_LISTED_REFS` in sorted order, then ``"... and N more"``).
    ``tasks``: one row per evaluation task: the per-output counts (``n_outputs``,
    ``n_exact``, ``n_equivalent``, ``n_input_seen``), the task flags (at least one
    output), ``same_id`` and ``same_id_changed``. ``summary``: the counts
    (:data:`SUMMARY_KEYS`), the dataset, the training sources and ``colors``.
    """

    outputs: pd.DataFrame
    tasks: pd.DataFrame
    summary: dict

    def write(self, out: str | os.PathLike, *, overwrite: bool = False) -> list[Path]:
        """Write the per-output table (``overlap.csv``, ``overlap.parquet``), the task
        table (``overlap_tasks.csv``) and the summary (``overlap.json``, last) into ``out``
        as one result folder (:func:`arcnb.runs.write_result_folder`: each atomically,
        through the guarded output folder). Nothing is written when any of them exists
        and ``overwrite`` is False; a write that fails takes back the files this call
        created."""
        def parquet() -> bytes:
            buf = io.BytesIO()
            self.outputs.to_parquet(buf, index=False, engine="pyarrow")
            return buf.getvalue()

        return write_result_folder(out, self.summary,
                                   {OUTPUTS_CSV: self.outputs, TASKS_CSV: self.tasks},
                                   summary_name=SUMMARY_JSON,
                                   extra_files={OUTPUTS_PARQUET: parquet}, overwrite=overwrite)

    def line(self) -> str:
        """One line: the counts, for a log or a report's compact line."""
        return format_line(self.summary)

    def text(self) -> str:
        """The counts as a few readable lines (what ``arcnb overlap`` prints)."""
        return format_text(self.summary)

    def __repr__(self) -> str:
        return f"Overlap({self.line()})"


def _share(k: int, n: int) -> str:
    return f"{k}/{n}" + (f" ({fmt_percent(k / n, least=1, most=1)})" if n else "")


def format_line(summary: dict) -> str:
    """The one-line account of an overlap summary."""
    s = summary
    return (f"training-data overlap ({', '.join(t['source'] for t in s['train'])}): "
            f"{s['outputs_equivalent']}/{s['n_outputs']} test outputs equivalent "
            f"({s['outputs_exact']} exact, {s['outputs_input_seen']} inputs seen), "
            f"{s['tasks_equivalent']}/{s['n_tasks']} tasks; {s['same_id_tasks']} task ids "
            f"shared, {s['same_id_changed']} changed")


def format_text(summary: dict) -> str:
    """The counts of an overlap summary as readable lines."""
    s = summary
    ds = s["dataset"]
    lines = [dataset_line(ds),
             "training data: " + ", ".join(f"{t['source']} ({t['version']})" for t in s["train"])
             + f"; {s['n_train_tasks']} tasks, {s['n_train_pairs']} pairs",
             f"{'':<37}{'test outputs':<20}tasks"]
    colours = "colours 1-9" if s["colors"] == "1-9" else "all colours"
    for key, label in (("exact", "exact (pair verbatim)"),
                       ("equivalent", f"equivalent (rotations, {colours})"),
                       ("input_seen", "input seen")):
        lines.append(f"{label:<37}{_share(s[f'outputs_{key}'], s['n_outputs']):<20}"
                     f"{_share(s[f'tasks_{key}'], s['n_tasks'])}")
    missing = s["n_outputs"] - s["n_outputs_with_truth"]
    if missing:
        lines.append(f"{missing} test outputs have no truth: only 'input seen' is checked "
                     "for them")
    lines.append(f"task ids also in the training data: {s['same_id_tasks']}, "
                 f"{s['same_id_changed']} of them with other content")
    return "\n".join(lines)


def _load(spec, tasks=None) -> Dataset:
    if isinstance(spec, Dataset):
        return load_dataset(spec, tasks=tasks)
    return load_dataset(spec, tasks=tasks, require_truth=False)


def overlap(dataset, train, *, tasks=None, colors: str = "1-9") -> Overlap:
    """Which test outputs of ``dataset`` the training pool ``train`` already holds.

    ``dataset`` and each of ``train`` are anything :func:`arcnb.data.load_dataset`
    takes (a bundled name such as ``"arc-agi-2:training"``, a task folder, a task file,
    a Kaggle challenges file) or a loaded :class:`~arcnb.data.Dataset`; several training
    sources form one pool. ``tasks`` keeps only these evaluation task ids. ``colors``:
    ``"1-9"`` (default, colour 0 fixed) or ``"all"``, the colours that may permute in
    ``equivalent``. A dataset without test outputs (a hidden test set) is checked for
    ``input_seen`` only. See the module docstring for the definitions.
    """
    if colors not in COLOR_MODES:
        raise ArcnbError(f"colors must be one of {', '.join(COLOR_MODES)}, got {colors!r}")
    specs = [train] if isinstance(train, (str, os.PathLike, Dataset)) else list(train)
    if not specs:
        raise ArcnbError("overlap needs at least one training dataset")
    ev = _load(dataset, tasks=tasks)
    sources = []
    for spec in specs:
        ds = _load(spec)
        sources.append((_source_label(ds, spec), ds))
    pool = _build_pool(sources, colors)
    ev_keys = _set_keys(ev, colors)
    rows, task_rows = [], []
    listed: dict = {}  # one formatting per match (a match shared by many rows)
    for task in ev:
        keys = ev_keys[task.id]
        flags = []
        for i, (ex, eq, ik) in enumerate(keys[len(task.train):]):
            truth = ex is not None
            m_ex = pool.exact.get(ex) if truth else None
            m_eq = pool.equivalent.get(eq) if truth else None
            m_in = pool.inputs.get(ik)
            row = {"task_id": task.id, "test_index": i, "has_truth": truth,
                   "exact": bool(m_ex) if truth else pd.NA,
                   "equivalent": bool(m_eq) if truth else pd.NA,
                   "input_seen": bool(m_in), "exact_train_tasks": _refs(m_ex, listed),
                   "equivalent_train_tasks": _refs(m_eq, listed),
                   "input_seen_train_tasks": _refs(m_in, listed)}
            rows.append(row)
            flags.append(row)
        mine = _content(keys)
        others = pool.content.get(task.id, [])
        task_rows.append({
            "task_id": task.id, "n_outputs": len(flags),
            "n_exact": sum(r["exact"] is True for r in flags),
            "n_equivalent": sum(r["equivalent"] is True for r in flags),
            "n_input_seen": sum(r["input_seen"] for r in flags),
            "exact": any(r["exact"] is True for r in flags),
            "equivalent": any(r["equivalent"] is True for r in flags),
            "input_seen": any(r["input_seen"] for r in flags),
            "same_id": bool(others),
            "same_id_changed": bool(others) and not any(_same_content(mine, o) for o in others),
        })
    outputs = pd.DataFrame(rows, columns=list(OVERLAP_COLUMNS))
    for col in ("exact", "equivalent"):
        outputs[col] = outputs[col].astype("boolean")
    task_df = pd.DataFrame(task_rows)
    summary = {
        "dataset": ev.info, "train": [{"source": label, **ds.info} for label, ds in sources],
        "colors": colors, "n_train_tasks": pool.n_tasks, "n_train_pairs": pool.n_pairs,
        "n_tasks": len(task_df), "n_outputs": len(outputs),
        "n_outputs_with_truth": int(outputs["has_truth"].sum()),
        "outputs_exact": int(outputs["exact"].sum()),
        "outputs_equivalent": int(outputs["equivalent"].sum()),
        "outputs_input_seen": int(outputs["input_seen"].sum()),
        "tasks_exact": int(task_df["exact"].sum()),
        "tasks_equivalent": int(task_df["equivalent"].sum()),
        "tasks_input_seen": int(task_df["input_seen"].sum()),
        "same_id_tasks": int(task_df["same_id"].sum()),
        "same_id_changed": int(task_df["same_id_changed"].sum()),
    }
    return Overlap(outputs, task_df, summary)

