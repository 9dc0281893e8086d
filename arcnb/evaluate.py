"""Evaluate a model checkpoint on a dataset: predictions, scores, provenance.

:func:`evaluate` runs a model (see :mod:`arcnb.models` for the interface and the
checkpoint formats) over every test input of every task, optionally under test-time
augmentation with voting (:mod:`arcnb.augment`), and writes a *run directory*
(:mod:`arcnb.runs` describes its files): the predictions in ARC Prize submission
format, the scoring tables (:func:`arcnb.scoring.score`) plus the vote columns
``n_views``, ``n_valid_views``, ``n_distinct``, ``votes_attempt_K`` and
``confidence_attempt_K``, and the metrics with their provenance (checkpoint path and
SHA-256, dataset name / version / filter, arcnb version, git commit, every parameter,
device, torch version). Facts about one particular execution (wall time, resumed or
not, number of processes) sit under ``provenance.run``; everything else is
byte-stable for the same inputs.

How the work is cut (this is what makes resumed and multi-process runs give the same
bytes as a single uninterrupted run): tasks, in sorted order, are packed greedily
into *units* of at most ``batch_size`` model inputs (task x test input x view),
never splitting a task unless it alone exceeds ``batch_size`` (then it is one unit of
several batches). The units depend only on the dataset, the views and
``batch_size``, so every input is always computed in the same batch. Under
``torchrun`` unit ``j`` goes to rank ``j % world_size`` and rank 0 gathers.

Same bytes need the same arithmetic: CPU kernels can round differently with another
number of threads, so compare a torchrun run (``OMP_NUM_THREADS=1`` per process by
default) with a single process run under the same ``OMP_NUM_THREADS``.

Resuming: after each unit every finished task is appended to the run's journal (one
JSON line per task, flushed and fsynced; :class:`arcnb.journal.Journal`);
``resume=True`` reads it (a truncated last line is ignored and cut off), skips
finished units and recomputes the rest. The final files are written atomically
(temporary file + rename), the metrics last: they alone mark a finished run, which is
never overwritten without ``overwrite=True``; a run killed during its final writes (run
files but no metrics) is finished by ``resume=True`` from its journal. Every journal
record carries the SHA-256 of the run's parameters (a record of another run is refused,
never used), and the run directory is locked (:class:`arcnb.journal.RunLock`) for the
whole run, so a second evaluate into it stops with one line.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from .augment import View, make_views, vote
from .errors import ArcnbError, OutputExistsError
from .io import parse_json, plain_json, to_jsonable
from .journal import (Journal, RunLock, journal_name, journal_paths, journal_record_problem,
                      read_journals)
from .runs import (CANDIDATES, METRICS, OPTIONAL_RUN_FILES, RUN_FILES, OutputFolder, Run,
                   check_out_path, options_sha256, read_metrics, refuse_finished,
                   run_provenance, same_run_problem, user_paths)
from .models import load_model
from .options import MAX_ATTEMPTS, MAX_COLOR_PERMS, EvalOptions, combine, run_options
from .models.loading import builder_name, checkpoint_path
from .data import Pair, Task, load_dataset
from .grids import as_grid_or_none
from .models.interface import decode_logits, pad_batch, pad_demonstrations
from .candidates import candidates_bytes
from .probes import probe_plan, run_sections
from .scoring import score
from .models.loading import file_sha256
from .predictions import Predictions, submission_bytes, to_submission

__all__ = ["evaluate", "EvalOptions", "plan_units", "checkpoint_kwargs", "check_run_parameters",
           "run_options", "same_finished_run", "MAX_ATTEMPTS", "MAX_COLOR_PERMS"]


def checkpoint_kwargs(options) -> dict:
    """:func:`evaluate`'s keyword arguments from checkpoint options: an
    :class:`EvalOptions` (the options set away from their defaults) or plain JSON (what
    ``CheckpointSource.options`` and a notebook parameter carry, read by
    :meth:`arcnb.options.EvalOptions.from_mapping`: ``config`` may be a JSON text,
    ``replace_config`` makes it a :class:`arcnb.models.ReplaceConfig`, a
    ``module:callable`` ``arch`` is also looked up in the directory the ``arcnb``
    command was started from). Only the options given are returned; other keys
    (``progress``) pass through as they are."""
    if isinstance(options, EvalOptions):
        given, rest, opts = set(options), {}, options
    else:
        opts = dict(options or {})
        rest = {k: opts.pop(k) for k in list(opts) if k not in EvalOptions.names()}
        given = set(opts)
    kw = EvalOptions.from_mapping(opts).to_kwargs()
    if "replace_config" in given:
        given.add("config")
    return {**{k: v for k, v in kw.items() if k in given}, **rest}


# ------------------------------------------------------------------ planning
def plan_units(counts: Sequence[int], batch_size: int) -> list[list[int]]:
    """Pack consecutive tasks (with ``counts[i]`` model inputs each) into units.

    Greedy in order: a unit takes whole tasks while its total stays <= ``batch_size``;
    a task with more than ``batch_size`` inputs is a unit on its own. Returns lists of
    task positions.

    >>> plan_units([2, 2, 3, 9, 1], 4)
    [[0, 1], [2], [3], [4]]
    """
    units: list[list[int]] = []
    cur: list[int] = []
    size = 0
    for i, n in enumerate(counts):
        if cur and size + n > batch_size:
            units.append(cur)
            cur, size = [], 0
        cur.append(i)
        size += n
        if size >= batch_size:
            units.append(cur)
            cur, size = [], 0
    if cur:
        units.append(cur)
    return units


# ------------------------------------------------------------------ inference
@contextlib.contextmanager
def _deterministic(seed: int):
    import torch

    prev = torch.are_deterministic_algorithms_enabled()
    prev_warn = torch.is_deterministic_algorithms_warn_only_enabled()
    torch.manual_seed(seed)
    # the flag itself; torch.use_deterministic_algorithms() would also import
    # torch._inductor (seconds of start-up) only to set a compiler option unused here
    setter = getattr(torch._C, "_set_deterministic_algorithms", None)
    if setter is None:  # pragma: no cover - other torch versions
        def setter(mode, warn_only=False):
            torch.use_deterministic_algorithms(mode, warn_only=warn_only)
    setter(True, warn_only=True)
    try:
        yield
    finally:
        setter(prev, warn_only=prev_warn)


def resolve_device(device: str):
    """The ``torch.device`` of ``--device`` (``auto``: CUDA when available, else the CPU)."""
    import torch

    if device in (None, "auto"):
        device = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError, ValueError):
        raise ArcnbError(f"--device {device!r} is not a device: use auto, cpu, cuda, cuda:N "
                         "or mps") from None
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ArcnbError("--device cuda was asked for but CUDA is not available")
        if dev.index is None and "LOCAL_RANK" in os.environ:
            dev = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ArcnbError(f"--device {device}: this machine has "
                             f"{torch.cuda.device_count()} CUDA device(s)")
    elif dev.type == "mps":
        if not torch.backends.mps.is_available():
            raise ArcnbError("--device mps was asked for but MPS is not available")
    elif dev.type != "cpu":
        raise ArcnbError(f"--device {device}: arcnb runs models on cpu, cuda or mps, "
                         f"not {dev.type}")
    return dev


def _round(x: float) -> float | None:
    """Confidences are stored to 4 decimals: enough to read, and coarse enough that
    float noise (e.g. another thread count) rarely changes the stored digits."""
    x = float(x)
    return None if x != x else round(x, 4)


def _run_unit(adapter, tasks, views: list[View], *, attempts: int, batch_size: int,
              device) -> list[dict]:
    """Predict every test input of ``tasks`` under every view; vote; return records."""
    return _records(tasks, *_candidates(adapter, tasks, views, attempts=attempts,
                                        batch_size=batch_size, device=device),
                    attempts=attempts)


def _candidates(adapter, tasks, views, *, attempts: int, batch_size: int, device):
    """Every view's candidates of every test input of ``tasks``, mapped back:
    ``(candidates, confidences, solves)`` (what :func:`_records` votes on)."""
    solves = _solves(adapter)
    if solves:
        cands, confs = _solve_unit(adapter.model, tasks, views, attempts=attempts)
    else:
        cands, confs = _logits_unit(adapter, tasks, views, batch_size=batch_size, device=device)
    return cands, confs, solves


def _records(tasks, cands, confs, solves: bool, *, attempts: int) -> list[dict]:
    """The vote over each test input's candidates, as one journal record per task."""
    records = []
    for ti, task in enumerate(tasks):
        atts, votes = [], []
        for i in range(len(task.test)):
            vt = vote(cands[(ti, i)], confs[(ti, i)], attempts=attempts)
            draws = _draws_of(cands[(ti, i)], vt.ranked)
            atts.append([None if g is None else np.asarray(g).tolist() for g in vt.grids])
            conf = [None if solves else _round(c) for c in vt.confidence]
            votes.append({"n_views": vt.n_candidates, "n_valid_views": vt.n_valid,
                          "n_distinct": vt.n_distinct, "votes": vt.votes,
                          "confidence": conf,
                          # every voted grid, not only the submitted ones (the pool)
                          "candidates": [{"grid": np.asarray(g).tolist(), "votes": n,
                                          "confidence": None if solves else _round(c),
                                          # the draws that gave it (a logits model: its views)
                                          "sample": d, "view": None if solves else d}
                                         for (g, n, c), d in zip(vt.ranked, draws)]})
        rec = {"task_id": task.id, "attempts": atts, "votes": votes}
        # normalise through JSON so fresh and journaled records are identical
        records.append(plain_json(rec))
    return records


def _draws_of(cands: list, ranked: list) -> list[list[int]]:
    """For each voted grid, the places of the candidates that gave it."""
    where: dict = {}
    for j, g in enumerate(cands):
        if g is not None:
            a = np.asarray(g)
            where.setdefault((a.shape, a.astype(np.int8).tobytes()), []).append(j)
    return [where[(np.asarray(g).shape, np.asarray(g).astype(np.int8).tobytes())]
            for g, _, _ in ranked]


def _solves(adapter) -> bool:
    """A model that gives its attempts itself: it has a ``solve(task, attempts)`` method
    (the program search does) instead of only returning logits."""
    return callable(getattr(adapter.model, "solve", None))


def _solve_unit(model, tasks, views: list[View], *, attempts: int):
    """Candidates of a solver model: ``model.solve(task, attempts)`` on each view of each
    task (demonstrations and test inputs seen through the view, the test outputs hidden),
    every attempt mapped back through the view. Within a view, attempt 1 comes first, so
    with one view the vote keeps the solver's own order. A grid that is not a valid ARC
    grid (2-D, sides 1..30, colours 0..9) is an invalid candidate."""
    cands: dict[tuple[int, int], list] = {}
    confs: dict[tuple[int, int], list] = {}
    for ti, task in enumerate(tasks):
        for view in views:
            seen = Task(task.id, tuple(Pair(view.apply(p.input), view.apply(p.output))
                                       for p in task.train),
                        tuple(Pair(view.apply(p.input), None) for p in task.test))
            try:
                out = model.solve(seen, attempts)
            except Exception as exc:  # noqa: BLE001 - the model's failure: one line
                line = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "")
                raise ArcnbError(f"the model's solve() failed on task {task.id}: "
                                 f"{type(exc).__name__}: {line[:300]}") from None
            if not isinstance(out, (list, tuple)) or len(out) != len(task.test):
                raise ArcnbError(f"the model's solve() returned {type(out).__name__} "
                                 f"{_length(out)}for task {task.id} with {len(task.test)} test "
                                 "input(s); expected one list of attempts per test input")
            for i, grids in enumerate(out):
                grids = list(grids)[:attempts] if isinstance(grids, (list, tuple)) else [grids]
                # no attempt for a test input (a search that found nothing): one invalid
                # attempt, so the output counts wrong (it was a KeyError)
                for g in grids or [None]:
                    g = as_grid_or_none(g)
                    cands.setdefault((ti, i), []).append(None if g is None else view.invert(g))
                    confs.setdefault((ti, i), []).append(0.0)
    return cands, confs


def _length(obj) -> str:
    return f"of length {len(obj)} " if isinstance(obj, (list, tuple)) else ""


def _logits_unit(adapter, tasks, views: list[View], *, batch_size: int, device):
    """Candidates of a logits model: batches of (test input, view), decoded."""
    import torch

    items = [(ti, i, v) for ti, task in enumerate(tasks) for i in range(len(task.test))
             for v in range(len(views))]
    cands: dict[tuple[int, int], list] = {}
    confs: dict[tuple[int, int], list] = {}
    for start in range(0, len(items), batch_size):
        chunk = items[start:start + batch_size]
        xs = [views[v].apply(tasks[ti].test[i].input) for ti, i, v in chunk]
        x = pad_batch(xs, device=device)
        demos = None
        if adapter.reads_demonstrations:
            demos = pad_demonstrations(
                [[(views[v].apply(p.input), views[v].apply(p.output)) for p in tasks[ti].train]
                 for ti, _, v in chunk], device=device)
        # the task-id hook: a model that reads task ids gets the one each input is of
        ids = ({"task_ids": [tasks[ti].id for ti, _, _ in chunk]}
               if getattr(adapter, "reads_task_ids", False) else {})
        with torch.inference_mode():
            logits = adapter.logits(x, demos, **ids)
        if not hasattr(logits, "shape") or logits.ndim < 1 or logits.shape[0] != len(chunk):
            raise ArcnbError(f"the model returned {getattr(logits, 'shape', type(logits))} for a "
                             f"batch of {len(chunk)} inputs; expected logits [B, 11, H, W]")
        grids, conf = decode_logits(logits)
        for (ti, i, v), g, c in zip(chunk, grids, conf):
            g = None if g is None else views[v].invert(g)
            cands.setdefault((ti, i), []).append(g)
            confs.setdefault((ti, i), []).append(0.0 if c != c else float(c))
    return cands, confs


def _vote_columns(records: Iterable[dict], attempts: int) -> pd.DataFrame:
    rows = []
    for rec in records:
        for i, v in enumerate(rec["votes"]):
            row = {"task_id": rec["task_id"], "test_index": i, "n_views": v["n_views"],
                   "n_valid_views": v["n_valid_views"], "n_distinct": v["n_distinct"]}
            for k in range(attempts):
                row[f"votes_attempt_{k + 1}"] = v["votes"][k]
            for k in range(attempts):
                c = v["confidence"][k]
                row[f"confidence_attempt_{k + 1}"] = float("nan") if c is None else c
            rows.append(row)
    df = pd.DataFrame(rows)
    for c in df.columns:
        if c.startswith(("n_", "votes_")):
            df[c] = df[c].astype("int64")
    df["test_index"] = df["test_index"].astype("int64")
    return df


def _candidate_files(records: Iterable[dict], params: dict) -> dict:
    """With augmentation, every voted candidate of every test output with its votes and
    mean confidence, as the run's candidates file (:data:`arcnb.runs.CANDIDATES`)."""
    if params.get("augment", "none") == "none":
        return {}
    rows = [{"task_id": rec["task_id"], "test_index": i, "grid": c["grid"],
             "votes": c["votes"],
             **({} if c["confidence"] is None else {"confidence": c["confidence"]}),
             **{k: c[k] for k in ("sample", "view") if c.get(k) is not None}}
            for rec in records for i, v in enumerate(rec["votes"])
            for c in v.get("candidates", [])]
    return {CANDIDATES: candidates_bytes(CANDIDATES, rows)}


def distributed_setup(device):
    """(rank, world_size, created_group) from torch.distributed / torchrun's env."""
    world_env = int(os.environ.get("WORLD_SIZE", "1"))
    try:
        import torch.distributed as dist
    except ImportError:  # pragma: no cover
        return 0, 1, False
    if not dist.is_available():
        return 0, 1, False
    if dist.is_initialized():
        return dist.get_rank(), dist.get_world_size(), False
    if world_env <= 1:
        return 0, 1, False
    if device.type == "cuda":
        import torch

        torch.cuda.set_device(device)  # NCCL object collectives use the current device
    dist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
    return dist.get_rank(), dist.get_world_size(), True


@dataclass(frozen=True)
class _Setup:
    """What an evaluation is made of, read and checked before its first forward pass."""

    dev: object
    ds: object
    adapter: object
    views: list
    plan: object
    params: dict
    options: dict
    task_list: list
    counts: list


def _setup(checkpoint, dataset, tasks, o: EvalOptions) -> _Setup:
    """The device, the dataset, the model, the views, the probes, the run's parameters
    and options, and the model inputs of each task."""
    dev = resolve_device(o.device)
    ds = load_dataset(dataset, tasks=tasks, require_truth=False)
    adapter = load_model(checkpoint, arch=o.arch, config=o.model_config,
                         trust_checkpoint=o.trust_checkpoint, device=dev)
    views = make_views(o.augment, color_perms=o.color_perms, seed=o.seed)
    plan = probe_plan(o.probe, o.proxy, ds, adapter, seed=o.seed)
    params = _parameters(checkpoint, adapter, ds, dev, views, batch_size=o.batch_size,
                         attempts=o.attempts, augment=o.augment, color_perms=o.color_perms,
                         arch=o.arch, config=o.model_config, seed=o.seed,
                         trust_checkpoint=o.trust_checkpoint)
    options = _same_run_options(checkpoint, ds, dev.type, o, plan,
                                checkpoint_sha256=params["checkpoint_sha256"])
    if plan:  # the probes are part of the run (its journal, the same-run check)
        params.update(plan.parameters())
    task_list = list(ds)
    counts = [len(t.test) * len(views) + (plan.n_inputs(t, len(views)) if plan else 0)
              for t in task_list]
    return _Setup(dev, ds, adapter, views, plan, params, options, task_list, counts)


def evaluate(checkpoint, dataset, out, *, options: EvalOptions | None = None,
             device: str = "auto", batch_size: int = 64,
             attempts: int = 2, augment: str = "none", color_perms: int = 1, tasks=None,
             resume: bool = False, overwrite: bool = False, trust_checkpoint: bool = False,
             arch=None, config: dict | None = None, seed: int = 0, progress: bool | None = None,
             n_boot: int = 1000, estimator: str = "ranked", probe=None, proxy: bool = False):
    """Evaluate a model on a dataset and write a run directory ``out``.

    :param checkpoint: a checkpoint file, ``"baseline"`` (the bundled model), a registered
        model name (``"copy-input"``), an ``nn.Module`` or a ``ModelAdapter``
        (see :func:`arcnb.models.load_model`).
    :param dataset: a :class:`~arcnb.data.Dataset` or anything ``load_dataset`` takes;
        ``tasks`` filters it (list or file of task ids).
    :param options: the evaluation options as one :class:`EvalOptions` (device, batch
        size, attempts, augmentation, colour permutations, seed, builder, config, trust,
        estimator, bootstrap resamples, probes); the keywords below are the same options
        one by one. With ``options``, a keyword given a value other than its default
        overrides that field (the keyword wins).
    :param device: ``"auto"`` (CUDA when available), ``"cpu"`` or ``"cuda"``.
    :param batch_size: model inputs per forward pass (memory is bounded by it).
    :param attempts: attempts per test input (``attempt_1 .. attempt_N``).
    :param augment: ``"none"``, ``"dihedral"`` (8 views) or ``"dihedral+colors"``
        (``8 * (1 + color_perms)`` views); see :mod:`arcnb.augment` for the vote.
    :param resume: continue from the journal in ``out``.
    :param overwrite: replace a finished run.
    :param trust_checkpoint: allow a checkpoint that needs arbitrary pickled code.
    :param arch: the builder for Lightning / state-dict checkpoints.
    :param config: the builder's config.
    :param seed: torch seed and colour-permutation seed.
    :param progress: tqdm bar on stderr (default: when stderr is a terminal).
    :param estimator: how attempts become pass@K (:func:`arcnb.scoring.score`):
        ``"ranked"`` (the ARC Prize rule) or ``"unbiased"`` (for sampled attempts).
    :param probe: memorisation and invariance probes besides the plain run:
        ``"dihedral"``, ``"colors"``, ``"dihedral+colors"``, ``"task-id"`` (or a list,
        or a comma-separated text of them); see :mod:`arcnb.probes`.
    :param proxy: also compute the leave-one-demonstration-out proxy score.

    A dataset without test outputs (a hidden test set, e.g. a Kaggle
    ``*_challenges.json`` without its solutions file) is not scored: the run directory
    gets ``submission.json`` (every task, every test input in order, ``attempt_1`` and
    ``attempt_2``, the filler ``[[0]]`` for an invalid prediction, since Kaggle rejects
    ``null``) and a ``metrics.json`` with ``"scored": false``, the filler count and
    provenance instead of scores (:func:`arcnb.runs.unscored_summary`). When some test
    outputs have a truth and others do not, the run is unscored too.

    Returns the run written (:class:`arcnb.runs.Run`, with its ``results`` and its
    ``votes``) on rank 0, None on other ranks; for a hidden test set the run is
    unscored (``run.scored`` is False).
    """
    t_start = time.time()
    o = combine(options, device=device, batch_size=batch_size, attempts=attempts,
                augment=augment, color_perms=color_perms, trust_checkpoint=trust_checkpoint,
                arch=arch, config=config, seed=seed, n_boot=n_boot, estimator=estimator,
                probe=probe, proxy=proxy)
    out = Path(out)
    _check_out_dir(out, resume=resume, overwrite=overwrite)
    st = _setup(checkpoint, dataset, tasks, o)
    units = plan_units(st.counts, o.batch_size)
    rank, world, created = distributed_setup(st.dev)
    if st.plan and rank == 0:
        print(st.plan.cost_line(st.task_list, len(st.views)), file=sys.stderr)
    lock = None
    try:
        lock = _claim_out_dir(out, rank, world, resume=resume, overwrite=overwrite)
        done = read_journals(out, st.params) if resume else {}
        my_units = [u for j, u in enumerate(units) if j % world == rank]
        show = (sys.stderr.isatty() if progress is None else bool(progress)) and rank == 0
        journal = Journal(out / journal_name(rank, world), st.params)
        try:
            my_records = _run_units(st.adapter, st.task_list, st.views, my_units, st.counts,
                                    done, journal, attempts=o.attempts,
                                    batch_size=o.batch_size, device=st.dev, seed=o.seed,
                                    show=show, plan=st.plan)
        finally:
            journal.close()
        all_records = _gather(my_records, rank, world)
        if all_records is None:
            return None
        # files of an unfinished run (killed during its final writes) are rewritten
        results = _write_results(all_records, st.task_list, st.ds, out, st.params,
                                 _run_facts(resume, len(done), world), t_start,
                                 attempts=o.attempts, n_boot=o.n_boot,
                                 overwrite=overwrite or resume, estimator=o.estimator,
                                 options=st.options, plan=st.plan, n_views=len(st.views),
                                 seed=o.seed)
        if world > 1:
            import torch.distributed as dist

            dist.barrier()
        return results
    finally:
        if lock is not None:
            lock.release()
        if created:
            import torch.distributed as dist

            dist.destroy_process_group()


def _run_facts(resume: bool, from_journal: int, world: int) -> dict:
    """Facts about this execution for the provenance: resumed, tasks taken from the
    journal, processes, and the command line's paths as typed and resolved."""
    run = {"resumed": bool(resume), "tasks_from_journal": from_journal, "world_size": world}
    if user_paths():
        run["paths"] = user_paths()
    return run


def check_run_parameters(*, batch_size=64, attempts=2, augment: str = "none",
                         color_perms=1, seed=0, n_boot=1000,
                         estimator: str = "ranked") -> dict:
    """The numeric options of an evaluation, checked on entry (before a model is loaded
    or a folder written) by :class:`EvalOptions`: each refused in one line unless
    within its bounds, so that no count can exhaust the memory and no seed can reach a
    generator that refuses it. Returns them as ints."""
    o = EvalOptions(batch_size=batch_size, attempts=attempts, augment=augment,
                    color_perms=color_perms, seed=seed, n_boot=n_boot, estimator=estimator)
    return {"batch_size": o.batch_size, "attempts": o.attempts, "color_perms": o.color_perms,
            "seed": o.seed, "n_boot": o.n_boot}


def _check_out_dir(out: Path, *, resume: bool, overwrite: bool) -> None:
    """Refuse a file (or a folder under a file), a finished run (without overwrite) or
    an unfinished one (without resume or overwrite). Only ``metrics.json`` marks a
    finished run: run files without it and with a journal are an unfinished run that
    ``resume`` finishes."""
    check_out_path(out)
    journals = journal_paths(out)
    refuse_finished(out, overwrite=overwrite, resume=resume and bool(journals))
    if journals and not resume and not overwrite:
        raise OutputExistsError(f"{out} holds an unfinished run ({journals[0].name}); pass "
                                "--resume to continue it or --overwrite to start over")


def _claim_out_dir(out: Path, rank: int, world: int, *, resume: bool,
                   overwrite: bool) -> RunLock | None:
    """Create ``out`` and take its lock (rank 0) for the whole run, then check it again
    under the lock (another run may have written it meanwhile); with ``overwrite``
    (and no ``resume``) drop the old journals. Every rank raises when rank 0 could
    not claim it. Returns rank 0's lock."""
    lock, err = None, None
    if rank == 0:
        try:
            out.mkdir(parents=True, exist_ok=True)
            lock = RunLock(out).acquire()
            _check_out_dir(out, resume=resume, overwrite=overwrite)
            folder = OutputFolder(out)
            # a link planted where a run file goes is refused now, not after the work
            folder.claim(RUN_FILES + OPTIONAL_RUN_FILES, overwrite=True)
            # what a killed write left (.predictions.json.*.tmp, ...) goes on resume
            folder.clean_temporary(RUN_FILES + OPTIONAL_RUN_FILES)
            if overwrite and not resume:
                for j in journal_paths(out):
                    j.unlink()
                # the run being replaced is no longer finished: a kill from here on
                # leaves an unfinished run that --resume finishes, never the old
                # metrics.json beside new files
                folder.target(METRICS).unlink(missing_ok=True)
        except BaseException as exc:
            if lock is not None:
                lock.release()
            if world == 1:
                raise
            err = exc
    if world > 1:
        import torch.distributed as dist

        box = [None if err is None else str(err)]
        dist.broadcast_object_list(box, src=0)
        if err is not None:
            raise err
        if box[0] is not None:
            raise ArcnbError(box[0])
    return lock


def _same_run_options(checkpoint, ds, device_type: str, o: EvalOptions, plan, *,
                      checkpoint_sha256: str | None = None) -> dict:
    """:func:`run_options` of an evaluation with options ``o``, with the probe ``plan``'s
    parameters (the probes are part of the run)."""
    options = run_options(checkpoint, ds, device_type, batch_size=o.batch_size,
                          attempts=o.attempts, augment=o.augment, color_perms=o.color_perms,
                          arch=o.arch, config=o.model_config, seed=o.seed,
                          estimator=o.estimator, n_boot=o.n_boot,
                          checkpoint_sha256=checkpoint_sha256)
    return {**options, **(plan.parameters() if plan else {})}


def _device_type(device: str) -> str:
    """``resolve_device(device).type`` without importing torch (seconds) where the
    answer is certain: ``cpu``, and ``auto`` with a torch built without CUDA and ROCm
    (its ``torch/version.py`` read as text), which never finds a GPU."""
    if device == "cpu":
        return "cpu"
    if device in (None, "auto") and "torch" not in sys.modules:
        import importlib.util
        import re

        spec = importlib.util.find_spec("torch")
        folders = list(spec.submodule_search_locations or []) if spec else []
        try:
            text = Path(folders[0], "version.py").read_text(encoding="utf-8")
        except (IndexError, OSError, UnicodeDecodeError):
            text = ""
        if all(re.search(rf"^{name}\s*(:[^=\n]*)?=\s*None\s*$", text, re.M)
               for name in ("cuda", "hip")):
            return "cpu"
    return resolve_device(device).type


def same_finished_run(checkpoint, dataset, out, *, options: EvalOptions | None = None,
                      tasks=None) -> bool:
    """Whether ``out`` holds a finished run (every run file) of the very evaluation
    ``evaluate(checkpoint, dataset, out, options=options, tasks=tasks)`` would make:
    the same :func:`run_options` (the checkpoint's SHA-256, the dataset's version and
    task ids, the device type, every option, the probes), compared by their hash
    (:func:`arcnb.runs.same_run_problem`), made by the same arcnb and torch versions.
    ``arcnb report`` reuses such a run instead of evaluating again."""
    out = Path(out)
    if not all((out / name).is_file() for name in RUN_FILES):
        return False
    metrics = read_metrics(out)
    prov = metrics.get("provenance") if isinstance(metrics.get("provenance"), dict) else {}
    now = run_provenance()
    if any(prov.get(k) != now[k] for k in ("arcnb_version", "torch")):
        return False
    o = combine(options)
    ds = load_dataset(dataset, tasks=tasks, require_truth=False)
    wanted = _same_run_options(checkpoint, ds, _device_type(o.device), o,
                               probe_plan(o.probe, o.proxy, ds, seed=o.seed))
    return same_run_problem(metrics, wanted) is None


def _parameters(checkpoint, adapter, ds, dev, views, *, batch_size, attempts, augment,
                color_perms, arch, config, seed, trust_checkpoint) -> dict:
    """Every parameter of the run, as plain JSON (the journal header and provenance)."""
    ckpt_path = None
    if isinstance(checkpoint, (str, os.PathLike)):
        p = checkpoint_path(checkpoint)
        ckpt_path = p if p.is_file() else None
    ckpt_name = str(checkpoint) if isinstance(checkpoint, (str, os.PathLike)) \
        else type(getattr(checkpoint, "model", checkpoint)).__name__
    params = {
        "checkpoint": ckpt_name,
        "checkpoint_file": None if ckpt_path is None else (
            "baseline.pt (bundled with arcnb)" if str(checkpoint) == "baseline"
            else str(ckpt_path)),
        "checkpoint_sha256": file_sha256(ckpt_path) if ckpt_path else None,
        "checkpoint_format": adapter.source,
        "arch": None if arch is None else builder_name(arch),
        "config": to_jsonable(config) if config else None,
        "reads_demonstrations": adapter.reads_demonstrations,
        "dataset": ds.info,
        "device": dev.type,
        "batch_size": batch_size,
        "attempts": attempts,
        "augment": augment,
        "color_perms": int(color_perms) if augment == "dihedral+colors" else None,
        "n_views": len(views),
        "views": [v.name for v in views],
        "seed": int(seed),
        "trust_checkpoint": bool(trust_checkpoint),
    }
    return plain_json(to_jsonable(params))


def _run_units(adapter, task_list, views, my_units, counts, done: dict, journal: Journal, *,
               attempts: int, batch_size: int, device, seed: int, show: bool,
               plan=None) -> list[dict]:
    """Predict this rank's units in order (taking finished tasks from ``done``) and
    journal every newly finished task. Returns one record per task of the units."""
    from tqdm.auto import tqdm

    my_records: list[dict] = []
    bar = tqdm(total=sum(counts[i] for u in my_units for i in u), disable=not show,
               file=sys.stderr, unit="grid", desc="evaluate", dynamic_ncols=True)
    try:
        with _deterministic(seed):
            for unit in my_units:
                unit_tasks = [task_list[i] for i in unit]
                n = sum(counts[i] for i in unit)
                for t in unit_tasks:
                    if t.id in done:
                        _check_done(done[t.id], t, attempts)
                        if plan:
                            plan.check_record(done[t.id], t)
                if all(t.id in done for t in unit_tasks):
                    my_records += [done[t.id] for t in unit_tasks]
                    bar.update(n)
                    continue
                recs = _run_unit(adapter, unit_tasks, views, attempts=attempts,
                                 batch_size=batch_size, device=device)
                if plan:  # the probes and the proxy of these tasks, in their records
                    plan.add(lambda ts, vs: _run_unit(adapter, ts, vs, attempts=attempts,
                                                      batch_size=batch_size, device=device),
                             unit_tasks, views, recs)
                recs = [done.get(t.id, rec) for t, rec in zip(unit_tasks, recs)]
                journal.append(*(rec for t, rec in zip(unit_tasks, recs) if t.id not in done))
                my_records += recs
                bar.update(n)
    finally:
        bar.close()
    return my_records


def _check_done(rec: dict, task, attempts: int) -> None:
    """A journal record must have the shape evaluate writes and fit its task: one entry
    per test input, ``attempts`` attempts each (else it is refused, never used)."""
    problem = journal_record_problem(rec)
    if problem:
        raise ArcnbError(f"the journal's record of task {task.id} is not usable: {problem}; "
                         "use --overwrite to start over")
    if len(rec["attempts"]) != len(task.test) or any(len(o) != attempts
                                                     for o in rec["attempts"]):
        raise ArcnbError(f"the journal's record of task {task.id} does not fit it "
                         f"({len(task.test)} test input(s), {attempts} attempts each); use "
                         "--overwrite to start over")


def _gather(my_records: list[dict], rank: int, world: int) -> list[dict] | None:
    """Every rank's records on rank 0 (None on the other ranks, after a barrier)."""
    if world == 1:
        return my_records
    import torch.distributed as dist

    gathered = [None] * world if rank == 0 else None
    dist.gather_object(my_records, gathered, dst=0)
    if rank != 0:
        dist.barrier()
        return None
    return [r for part in gathered for r in part]


def _write_results(all_records: list[dict], task_list, ds, out: Path, params: dict, run: dict,
                   t_start: float, *, attempts: int, n_boot: int, overwrite: bool,
                   estimator: str = "ranked", options: dict | None = None, plan=None,
                   n_views: int = 1, seed: int = 0):
    """Score the gathered records and write the run directory; returns the Run
    (unscored when some test output has no truth). ``run`` (facts about this
    execution) gets the wall time since ``t_start``."""
    by_id = {r["task_id"]: r for r in all_records}
    missing = [t.id for t in task_list if t.id not in by_id]
    if missing:  # pragma: no cover - would be a bug in the unit bookkeeping
        raise RuntimeError(f"no predictions for {len(missing)} task(s), e.g. {missing[0]}")
    attempts_by_task = {t.id: [[None if g is None else np.asarray(g, dtype=np.int8)
                                for g in outs] for outs in by_id[t.id]["attempts"]]
                        for t in task_list}
    submission = to_submission(attempts_by_task)
    text = submission_bytes(submission).decode()
    preds = Predictions.from_obj(parse_json(text, what="the predictions written"))
    votes = _vote_columns([by_id[t.id] for t in task_list], attempts)
    extra_files = _candidate_files([by_id[t.id] for t in task_list], params)
    # what ties the run to its options (the same-run check) and to its pool (a report
    # never shows another run's candidates.parquet as this one's)
    same_run = {} if options is None else {"options": options,
                                            "options_sha256": options_sha256(options)}
    pool = {"candidates_sha256": hashlib.sha256(data).hexdigest()
            for name, data in extra_files.items() if name == CANDIDATES}
    provenance = run_provenance(
        checkpoint=params["checkpoint"], checkpoint_file=params["checkpoint_file"],
        checkpoint_sha256=params["checkpoint_sha256"],
        dataset=ds.info, device=params["device"], parameters=params, **same_run, **pool,
        run={"wall_time_s": round(time.time() - t_start, 3), **run})
    records = [by_id[t.id] for t in task_list]
    if not all(t.has_truth for t in task_list):  # a hidden test set: predictions only
        sections, probe_files = (run_sections(ds, records, plan, n_views=n_views,
                                              estimator=estimator, n_boot=n_boot, seed=seed)
                                 if plan else ({}, {}))
        unscored = Run.unscored(ds, preds, provenance=provenance, sections=sections)
        return unscored.write(out, overwrite=overwrite, extra_columns=votes,
                              predictions_text=text, extra_files={**extra_files, **probe_files})
    ks = sorted({1, 2, attempts})
    results = score(ds, preds, ks=ks, n_boot=n_boot, estimator=estimator)
    sections, probe_files = ({}, {}) if not plan else run_sections(
        ds, records, plan, n_views=n_views, estimator=estimator, n_boot=n_boot, seed=seed,
        true_scores=dict(zip(results.tasks["task_id"], results.tasks["pass@2"])))
    extra_files = {**extra_files, **probe_files}
    return Run.from_results(results, provenance=provenance, sections=sections).write(
        out, overwrite=overwrite, extra_columns=votes, predictions_text=text,
        extra_files=extra_files)
