"""Task taxonomies: user CSV / JSON files, folder layouts and automatic structural
categories computed from each task's demonstration pairs.

A :class:`Taxonomy` maps task ids to one or more categories. A task may carry several
categories (multi-label); a task with none is reported as ``uncategorized``, never
dropped, and :meth:`Taxonomy.coverage` says how many tasks of a dataset have a
category.

Sources:

* :func:`read_taxonomy_csv`: rows ``task_id,category[,taxonomy]`` (one row per
  task-category pair; a header naming those columns is optional, extra columns and
  lines starting with ``#`` are ignored; ``.json`` and ``_vN`` id suffixes are
  normalised with :func:`arcnb.data.normalize_task_id`);
* :func:`read_taxonomy_json`: ``{task_id: category | [categories]}``;
* :func:`folder_taxonomy`: tasks under ``Group/...json`` take the folder name (as in
  ConceptARC);
* :func:`structural_taxonomy`: the automatic categories of
  :data:`STRUCTURAL_CATEGORIES`, so every task of every dataset (the evaluation sets
  included) has categories;
* :func:`load_taxonomy`: any of the above from a path, a dict, a dataset or the name
  ``"structural"``.
"""
from __future__ import annotations

import csv
import io
import os
import weakref
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from .augment import dihedral_fn
from .data import Dataset, Task, load_dataset, normalize_task_id
from .errors import TaxonomyError
from .grids import background, same_grid
from .io import JSONInputError, read_json, read_text

__all__ = [
    "UNCATEGORIZED",
    "Taxonomy",
    "TaxonomyError",
    "STRUCTURAL_CATEGORIES",
    "read_taxonomy_csv",
    "read_taxonomy_json",
    "folder_taxonomy",
    "structural_taxonomy",
    "structural_categories",
    "load_taxonomy",
    "coverage_table",
]

#: The category shown for a task that has no category in a taxonomy.
UNCATEGORIZED = "uncategorized"


@dataclass
class Taxonomy:
    """A mapping ``task_id -> categories`` with a name.

    ``labels`` maps each normalised task id to a tuple of categories (in the order
    first seen, no duplicates). ``order`` lists every category in a stable order
    (first appearance in the source, or the order of :data:`STRUCTURAL_CATEGORIES`).
    ``definitions`` optionally maps categories to a written definition.
    """

    name: str
    labels: dict[str, tuple[str, ...]]
    #: Every category in a stable order (first appearance, or the built-in order).
    order: list[str] = field(default_factory=list)
    definitions: dict[str, str] = field(default_factory=dict)
    source: str | None = None

    def __post_init__(self) -> None:
        seen = list(self.order)
        known = set(seen)
        for cats in self.labels.values():
            for c in cats:
                if c not in known:
                    known.add(c)
                    seen.append(c)
        self.order = seen

    # ------------------------------------------------------------------ access
    def __len__(self) -> int:
        return len(self.labels)

    def __contains__(self, task_id: object) -> bool:
        return task_id in self.labels

    @property
    def task_ids(self) -> list[str]:
        """The categorised task ids, sorted."""
        return sorted(self.labels)

    @property
    def categories(self) -> list[str]:
        """Every category, in :attr:`order`."""
        return list(self.order)

    def categories_of(self, task_id: str) -> tuple[str, ...]:
        """The task's categories, or ``("uncategorized",)`` when it has none."""
        cats = self.labels.get(normalize_task_id(task_id), ())
        return cats if cats else (UNCATEGORIZED,)

    def __getitem__(self, task_id: str) -> tuple[str, ...]:
        return self.categories_of(task_id)

    def is_multilabel(self, task_ids: Iterable[str] | None = None) -> bool:
        """True when some task (of ``task_ids``, default all) has several categories."""
        ids = self.labels if task_ids is None else task_ids
        return any(len(self.labels.get(t, ())) > 1 for t in ids)

    def members(self, category: str, task_ids: Iterable[str] | None = None) -> list[str]:
        """Sorted task ids in ``category`` (of ``task_ids`` when given, which is the
        only way ``uncategorized`` can have members)."""
        ids = sorted(self.labels) if task_ids is None else sorted(set(task_ids))
        return [t for t in ids if category in self.categories_of(t)]

    def membership(self, task_ids: Iterable[str]) -> pd.DataFrame:
        """Long table ``task_id, category``: one row per task-category pair for every
        task in ``task_ids``; tasks without a category get ``uncategorized``."""
        rows = [(t, c) for t in sorted(set(task_ids)) for c in self.categories_of(t)]
        return pd.DataFrame(rows, columns=["task_id", "category"])

    def restrict(self, task_ids: Iterable[str]) -> "Taxonomy":
        """A taxonomy holding only ``task_ids`` (those it knows)."""
        keep = set(task_ids)
        return Taxonomy(self.name, {t: c for t, c in self.labels.items() if t in keep},
                        order=list(self.order), definitions=dict(self.definitions),
                        source=self.source)

    def to_frame(self) -> pd.DataFrame:
        """Long table ``task_id, category, taxonomy`` (the CSV shape)."""
        rows = [(t, c, self.name) for t in sorted(self.labels) for c in self.labels[t]]
        return pd.DataFrame(rows, columns=["task_id", "category", "taxonomy"])

    # ---------------------------------------------------------------- coverage
    def coverage(self, task_ids: Iterable[str] | Dataset) -> dict:
        """How much of a task list this taxonomy covers.

        Returns ``n_tasks`` (the task list), ``n_categorized``, ``n_uncategorized``,
        ``coverage = n_categorized / n_tasks`` (NaN for an empty list),
        ``uncategorized`` (their sorted ids), ``n_multilabel`` (tasks with more than one
        category) and ``n_unknown`` (taxonomy ids not in the task list).
        """
        ids = sorted(set(task_ids.task_ids if isinstance(task_ids, Dataset) else
                         (normalize_task_id(t) for t in task_ids)))
        unc = [t for t in ids if not self.labels.get(t)]
        n = len(ids)
        return {
            "taxonomy": self.name,
            "n_tasks": n,
            "n_categorized": n - len(unc),
            "n_uncategorized": len(unc),
            "coverage": (n - len(unc)) / n if n else float("nan"),
            "uncategorized": unc,
            "n_multilabel": sum(len(self.labels.get(t, ())) > 1 for t in ids),
            "n_unknown": len(set(self.labels) - set(ids)),
        }

    def coverage_table(self, task_ids: Iterable[str] | Dataset) -> pd.DataFrame:
        """One row per category (plus ``uncategorized`` when any task has none):
        ``category``, ``n_tasks`` and ``fraction`` of the task list. Fractions of a
        multi-label taxonomy can sum to more than 1."""
        ids = sorted(set(task_ids.task_ids if isinstance(task_ids, Dataset) else
                         (normalize_task_id(t) for t in task_ids)))
        counts = Counter(c for t in ids for c in self.categories_of(t))
        cats = [c for c in self.order if c != UNCATEGORIZED]
        if counts.get(UNCATEGORIZED):
            cats.append(UNCATEGORIZED)
        n = len(ids)
        rows = [{"category": c, "n_tasks": counts.get(c, 0),
                 "fraction": counts.get(c, 0) / n if n else float("nan")} for c in cats]
        df = pd.DataFrame(rows, columns=["category", "n_tasks", "fraction"])
        df.attrs["taxonomy"] = self.name
        df.attrs["n_tasks"] = n
        return df

    def __repr__(self) -> str:
        return (f"Taxonomy({self.name!r}, tasks={len(self.labels)}, "
                f"categories={len(self.order)})")


# ---------------------------------------------------------------------------- builders
def from_mapping(mapping: Mapping, *, name: str = "taxonomy",
                 source: str | None = None) -> Taxonomy:
    """A taxonomy from ``{task_id: category | [categories]}``."""
    if not isinstance(mapping, Mapping):
        raise TaxonomyError(f"a taxonomy mapping must be a dict of task id -> category, "
                            f"got {type(mapping).__name__}", file=source)
    labels: dict[str, list[str]] = {}
    for raw_id, cats in mapping.items():
        if isinstance(cats, str):
            cats = [cats]
        if not isinstance(cats, (list, tuple)) or not all(isinstance(c, str) for c in cats):
            raise TaxonomyError(f"task {raw_id}: categories must be a string or a list of "
                                f"strings, got {cats!r}", file=source)
        tid = normalize_task_id(raw_id)
        if not tid:
            raise TaxonomyError(f"empty task id {raw_id!r}", file=source)
        cur = labels.setdefault(tid, [])
        for c in cats:
            c = c.strip()
            if not c:
                raise TaxonomyError(f"task {raw_id}: empty category", file=source)
            if c not in cur:
                cur.append(c)
    return Taxonomy(name, {t: tuple(c) for t, c in labels.items()}, source=source)


def read_taxonomy_json(path: str | os.PathLike, *, name: str | None = None) -> Taxonomy:
    """Read ``{task_id: category | [categories]}`` from a JSON file."""
    path = Path(path)
    try:
        raw = read_json(path, what="taxonomy file")
    except JSONInputError as exc:
        raise TaxonomyError(str(exc), file=str(path)) from None
    return from_mapping(raw, name=name or path.stem, source=str(path))


def read_taxonomy_csv(path: str | os.PathLike, *, taxonomy: str | None = None,
                      name: str | None = None) -> Taxonomy:
    """Read a user taxonomy CSV: ``task_id,category[,taxonomy]``, one row per
    task-category pair.

    * A header row is recognised when its first two cells are ``task_id`` and
      ``category``; columns are then found by name and any extra column is ignored.
      Without a header the first three columns are taken as task_id, category,
      taxonomy.
    * Blank lines and lines whose first non-blank character is ``#`` are ignored.
    * Ids are normalised (``a/b/007bbfb7_v2.json`` -> ``007bbfb7``); duplicate pairs are
      kept once.
    * When the file holds several taxonomies (distinct values in the ``taxonomy``
      column), pass ``taxonomy=`` to choose one; otherwise a :class:`TaxonomyError`
      lists them.

    The name is ``name``, else the taxonomy column's value, else the file stem.
    """
    path = Path(path)
    try:
        text = read_text(path, what="taxonomy file")
    except JSONInputError as exc:
        raise TaxonomyError(str(exc), file=str(path)) from None
    lines = [(i + 1, ln) for i, ln in enumerate(text.splitlines())
             if ln.strip() and not ln.lstrip().startswith("#")]
    try:
        rows = list(csv.reader(io.StringIO("\n".join(ln for _, ln in lines))))
    except csv.Error as exc:  # a field over csv.field_size_limit(), a NUL byte...
        raise TaxonomyError(f"taxonomy file {path} is not a CSV file arcnb can read: {exc}",
                            file=str(path)) from None
    if not rows:
        raise TaxonomyError(f"taxonomy file {path} has no rows", file=str(path))
    col_t, col_c, col_x = 0, 1, 2
    header = [h.strip().lower() for h in rows[0]]
    start = 0
    if "task_id" in header:
        if "category" not in header:
            raise TaxonomyError(f"{path}: the header must name the columns task_id and "
                                f"category, got {rows[0]}", file=str(path), line=lines[0][0])
        col_t, col_c = header.index("task_id"), header.index("category")
        col_x = header.index("taxonomy") if "taxonomy" in header else None
        start = 1
    pairs: list[tuple[str, str, str | None]] = []
    for (lineno, _), row in zip(lines[start:], rows[start:]):
        if len(row) <= max(col_t, col_c):
            raise TaxonomyError(f"{path}, line {lineno}: expected task_id,category, got {row}",
                                file=str(path), line=lineno)
        tid = normalize_task_id(row[col_t])
        cat = row[col_c].strip()
        if not tid or not cat:
            raise TaxonomyError(f"{path}, line {lineno}: empty task id or category",
                                file=str(path), line=lineno)
        tax = row[col_x].strip() if col_x is not None and len(row) > col_x and \
            row[col_x].strip() else None
        pairs.append((tid, cat, tax))
    names = sorted({t for _, _, t in pairs if t is not None})
    if taxonomy is not None:
        if taxonomy not in names:
            raise TaxonomyError(f"{path}: no taxonomy named {taxonomy!r} (found: "
                                f"{', '.join(names) or 'no taxonomy column'})", file=str(path))
        pairs = [p for p in pairs if p[2] == taxonomy]
    elif len(names) > 1:
        raise TaxonomyError(f"{path} holds {len(names)} taxonomies ({', '.join(names)}); "
                            "choose one with taxonomy=", file=str(path))
    if not pairs:
        raise TaxonomyError(f"taxonomy file {path} has no task-category rows", file=str(path))
    labels: dict[str, list[str]] = {}
    for tid, cat, _ in pairs:
        cur = labels.setdefault(tid, [])
        if cat not in cur:
            cur.append(cat)
    tname = name or taxonomy or (names[0] if names else path.stem)
    return Taxonomy(tname, {t: tuple(c) for t, c in labels.items()}, source=str(path))


def folder_taxonomy(dataset: Dataset | str | os.PathLike, *, level: int = -1,
                    name: str = "folder") -> Taxonomy:
    """Categories from a folder layout: a task under ``Group/...json`` takes the folder
    name. ``level`` picks the path component of the task's folder relative to the
    dataset root (default -1: the folder holding the file, so ConceptARC's
    ``corpus/AboveBelow/AboveBelow1.json`` is ``AboveBelow``; 0 would be ``corpus``).
    Tasks at the root have no category (shown as ``uncategorized``).
    """
    ds = dataset if isinstance(dataset, Dataset) else load_dataset(dataset)
    labels = {}
    for task in ds:
        if task.group:
            parts = task.group.split("/")
            try:
                labels[task.id] = (parts[level],)
            except IndexError:
                labels[task.id] = (task.group,)
    order = sorted({c for v in labels.values() for c in v})
    return Taxonomy(name, labels, order=order, source=ds.name)


# ------------------------------------------------------------- structural taxonomy
#: The automatic structural categories and their definitions. They are computed from
#: a task's demonstration (train) pairs only, never from the test pairs. Shapes are
#: compared as (height, width). A task may fall in several categories; the four
#: shape categories (same_shape, output_smaller, output_larger, shape_mixed) form a
#: partition, so every task has at least one category.
STRUCTURAL_CATEGORIES: dict[str, str] = {
    "same_shape": "every demonstration output has the same height and width as its input",
    "output_smaller": "every demonstration output is no taller and no wider than its input "
                      "and at least one is strictly smaller in area (crop or extract)",
    "output_larger": "every demonstration output is no shorter and no narrower than its "
                     "input and at least one is strictly larger in area (tile or scale)",
    "shape_mixed": "the output shape changes in some demonstration but the task is neither "
                   "output_smaller nor output_larger (e.g. taller but narrower, or larger in "
                   "one pair and smaller in another)",
    "crop": "output_smaller, and every demonstration output appears exactly as a "
            "contiguous rectangle of its input (the output is cut out of the input)",
    "scale_up": "output_larger, and every demonstration output is its input with each cell "
                "enlarged to a block of kh x kw equal cells (integers kh, kw >= 1, not both 1; "
                "they may differ between demonstrations)",
    "tile": "output_larger, and every demonstration output is a grid of blocks of the "
            "input's shape, each block equal to the input or to one of its symmetries "
            "(rotations, flips, transposes) of that shape",
    "color_mapping_only": "same_shape, and in every demonstration each input colour maps to "
                          "a single output colour (cells of equal input colour have equal "
                          "output colour), and at least one cell changes in some "
                          "demonstration: the output is a recolouring of the input",
    "dihedral": "one fixed non-identity symmetry of the square (rotation by 90, 180 or 270 "
                "degrees, vertical or horizontal flip, transpose or anti-transpose) maps "
                "every demonstration input exactly onto its output",
    "fill_background": "same_shape, at least one cell changes, and every changed cell had "
                       "the background colour in the input (only background cells change: "
                       "fill or draw). The background of a pair is the most frequent colour "
                       "of its input (ties: the smallest colour)",
    "delete_to_background": "same_shape, at least one cell changes, and every changed cell "
                            "becomes the background colour in the output (only cells that "
                            "become background change: delete). Background as in "
                            "fill_background",
    "colors_added": "some demonstration output holds a colour that its input does not",
    "colors_removed": "some demonstration input holds a colour that its output does not",
    "constant_output_shape": "the task has at least two demonstrations and all their "
                             "outputs have one and the same shape",
}

#: The non-identity dihedral transforms (:mod:`arcnb.augment`).
_DIHEDRAL = {n: dihedral_fn(n) for n in ("rot90", "rot180", "rot270", "flip_ud", "flip_lr",
                                         "transpose", "anti_transpose")}




def _is_subgrid(small: np.ndarray, big: np.ndarray) -> bool:
    h, w = small.shape
    if h > big.shape[0] or w > big.shape[1]:
        return False
    win = np.lib.stride_tricks.sliding_window_view(big, (h, w))
    return bool((win == small).all(axis=(2, 3)).any())


def _is_scaled(inp: np.ndarray, out: np.ndarray) -> bool:
    (h, w), (H, W) = inp.shape, out.shape
    if H % h or W % w or (H == h and W == w):
        return False
    return same_grid(np.repeat(np.repeat(inp, H // h, axis=0), W // w, axis=1), out)


def _is_tiled(inp: np.ndarray, out: np.ndarray) -> bool:
    (h, w), (H, W) = inp.shape, out.shape
    if H % h or W % w or (H == h and W == w):
        return False
    variants = [inp] + [t(inp) for t in _DIHEDRAL.values()]
    variants = [v for v in variants if v.shape == (h, w)]
    blocks = out.reshape(H // h, h, W // w, w).transpose(0, 2, 1, 3)  # [bi, bj, h, w]
    ok = np.zeros(blocks.shape[:2], dtype=bool)
    for v in variants:
        ok |= (blocks == v).all(axis=(2, 3))
    return bool(ok.all())


def structural_categories(task: Task) -> tuple[str, ...]:
    """The :data:`STRUCTURAL_CATEGORIES` of one task, in that dict's order, computed from
    its demonstration pairs (see each category's definition)."""
    pairs = [(np.asarray(p.input), np.asarray(p.output)) for p in task.train
             if p.output is not None]
    if not pairs:
        return ()
    cats = set()
    shapes = [(i.shape, o.shape) for i, o in pairs]
    same = all(si == so for si, so in shapes)
    if same:
        cats.add("same_shape")
    else:
        le = all(so[0] <= si[0] and so[1] <= si[1] for si, so in shapes)
        ge = all(so[0] >= si[0] and so[1] >= si[1] for si, so in shapes)
        if le:  # some pair differs, so its area is strictly smaller
            cats.add("output_smaller")
            if all(_is_subgrid(o, i) for i, o in pairs):
                cats.add("crop")
        elif ge:
            cats.add("output_larger")
            if all(_is_scaled(i, o) for i, o in pairs):
                cats.add("scale_up")
            if all(_is_tiled(i, o) for i, o in pairs):
                cats.add("tile")
        else:
            cats.add("shape_mixed")
    if same:
        changed_any = any(bool((i != o).any()) for i, o in pairs)
        if changed_any:
            # colour mapping: each input colour -> exactly one output colour, per pair
            mapping = True
            for i, o in pairs:
                code = i.astype(np.int64).ravel() * 10 + o.astype(np.int64).ravel()
                ins = np.unique(code) // 10
                if ins.size != np.unique(ins).size:
                    mapping = False
                    break
            if mapping:
                cats.add("color_mapping_only")
            fill = all(bool((i[i != o] == background(i)).all()) for i, o in pairs)
            if fill:
                cats.add("fill_background")
            delete = all(bool((o[i != o] == background(i)).all()) for i, o in pairs)
            if delete:
                cats.add("delete_to_background")
    for t in _DIHEDRAL.values():
        if all(same_grid(t(i), o) for i, o in pairs):
            cats.add("dihedral")
            break
    if any(set(np.unique(o)) - set(np.unique(i)) for i, o in pairs):
        cats.add("colors_added")
    if any(set(np.unique(i)) - set(np.unique(o)) for i, o in pairs):
        cats.add("colors_removed")
    if len(pairs) >= 2 and len({so for _, so in shapes}) == 1:
        cats.add("constant_output_shape")
    return tuple(c for c in STRUCTURAL_CATEGORIES if c in cats)


#: Each task's structural categories, computed once per task object (a report asks for
#: them in several sections); an entry goes when its task is garbage-collected.
_CATEGORIES: dict[int, tuple] = {}


def _categories_once(task: Task) -> tuple[str, ...]:
    key = id(task)
    hit = _CATEGORIES.get(key)
    if hit is not None and hit[0]() is task:
        return hit[1]
    cats = structural_categories(task)
    try:
        ref = weakref.ref(task, lambda _r, key=key: _CATEGORIES.pop(key, None))
    except TypeError:  # an object that cannot be referenced weakly: not cached
        return cats
    _CATEGORIES[key] = (ref, cats)
    return cats


def structural_taxonomy(dataset: Dataset | str | os.PathLike | Iterable[Task], *,
                        name: str = "structural") -> Taxonomy:
    """The automatic structural taxonomy of every task in ``dataset`` (see
    :data:`STRUCTURAL_CATEGORIES`)."""
    tasks = load_dataset(dataset) if isinstance(dataset, (str, os.PathLike)) else dataset
    labels = {t.id: _categories_once(t) for t in tasks}
    return Taxonomy(name, labels, order=list(STRUCTURAL_CATEGORIES),
                    definitions=dict(STRUCTURAL_CATEGORIES), source="arcnb.taxonomy")


def load_taxonomy(spec, *, dataset: Dataset | str | None = None, taxonomy: str | None = None,
                  name: str | None = None) -> Taxonomy:
    """A taxonomy from any source.

    ``spec`` is a :class:`Taxonomy` (returned as is); ``"structural"`` (computed on
    ``dataset``); ``"folder"`` (the folder layout of ``dataset``); a dict; a ``.csv``
    or ``.json`` file; or a folder of task files (its layout).
    """
    if isinstance(spec, Taxonomy):
        return spec
    if isinstance(spec, Mapping):
        return from_mapping(spec, name=name or "taxonomy")
    if isinstance(spec, Dataset):
        return folder_taxonomy(spec, name=name or "folder")
    text = str(spec)
    if text in ("structural", "folder"):
        if dataset is None:
            raise TaxonomyError(f"the {text} taxonomy needs a dataset")
        ds = load_dataset(dataset)
        return (structural_taxonomy(ds, name=name or "structural") if text == "structural"
                else folder_taxonomy(ds, name=name or "folder"))
    path = Path(text)
    if path.is_dir():
        return folder_taxonomy(path, name=name or path.name)
    if path.suffix.lower() == ".json":
        return read_taxonomy_json(path, name=name)
    if path.suffix.lower() in (".csv", ".txt", ".tsv"):
        return read_taxonomy_csv(path, taxonomy=taxonomy, name=name)
    if not path.exists():
        raise TaxonomyError(f"unknown taxonomy {text!r}: use 'structural', 'folder', a .csv "
                            "or .json file, or a folder of task files")
    raise TaxonomyError(f"cannot tell the format of taxonomy file {path}: use .csv or .json",
                        file=str(path))


def coverage_table(taxonomy: Taxonomy, datasets: Mapping[str, Dataset]) -> pd.DataFrame:
    """Coverage of each category of ``taxonomy`` on several datasets: one row per
    category, columns ``<dataset> n_tasks`` and ``<dataset> fraction``. When the
    taxonomy depends on the dataset (structural), pass a callable instead of a fixed
    taxonomy: ``taxonomy(dataset) -> Taxonomy``."""
    frames = []
    for label, ds in datasets.items():
        tax = taxonomy(ds) if callable(taxonomy) else taxonomy
        t = tax.coverage_table(ds).set_index("category")
        t.columns = [f"{label} n_tasks", f"{label} fraction"]
        frames.append(t)
    table = pd.concat(frames, axis=1)
    for c in table.columns:
        table[c] = table[c].fillna(0)
        if c.endswith("n_tasks"):
            table[c] = table[c].astype("int64")
    return table.reset_index()
