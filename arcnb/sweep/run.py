"""Running a sweep: one :func:`arcnb.evaluate.evaluate` run directory per checkpoint
under ``out/runs/`` (finished runs reused when they are the run asked for, an
interrupted one resumed), a shard's share of them, runs made elsewhere copied in,
and the sweep opened or collected from its finished runs."""
from __future__ import annotations

from pathlib import Path

from ..data import load_dataset
from ..errors import ArcnbError, OutputExistsError, printable
from ..evaluate import distributed_setup, evaluate, resolve_device, run_options
from ..journal import journal_paths
from ..options import EvalOptions, combine
from ..io import json_bytes
from ..runs import (CANDIDATES, METRICS, RUN_FILES, Run, is_finished, read_metrics,
                     same_run_problem)
from .layout import ENTRY_SUFFIX, RUNS_DIR, claim_plan, sweep_folder
from .steps import SweepEntry, parse_shard, plan, read_entries
from .tables import Sweep

__all__ = ["sweep", "collect", "open_sweep", "example_sweep", "sweep_or_example", "from_run_dirs"]


def sweep(checkpoints, dataset, out, *, options: EvalOptions | None = None, arch=None,
          config: dict | None = None,
          trust_checkpoint: bool = False, augment: str = "none", color_perms: int = 1,
          attempts: int = 2, tasks=None, device: str = "auto", batch_size: int = 64,
          jobs: int = 1, shard=None, seed: int = 0, n_boot: int = 1000,
          overwrite: bool = False, report: bool = True, progress: bool | None = None,
          estimator: str = "ranked") -> "Sweep | None":
    """Evaluate every checkpoint into ``out/runs/`` and write the sweep's files.

    ``checkpoints``: files, folders, glob patterns or model names
    (:func:`expand_checkpoints`). ``dataset`` is loaded once (``tasks`` filters it).
    ``arch``, ``config``, ``trust_checkpoint``, ``augment``, ``color_perms``,
    ``attempts``, ``device``, ``batch_size``, ``seed`` and ``estimator`` go to every
    :func:`arcnb.evaluate.evaluate`: one by one, or together as ``options`` (an
    :class:`arcnb.evaluate.EvalOptions`; a keyword given a value other than its default
    overrides that field). ``jobs`` checkpoints are evaluated at once
    (threads; CPU work shares the cores). ``shard=(i, n)`` or ``"i/n"`` evaluates only
    the checkpoints at positions ``i, i + n, ...`` and writes no summary files (run
    :func:`collect` when every shard is done); returns None then. Under ``torchrun``
    each checkpoint's evaluation is spread over the processes, as
    :func:`arcnb.evaluate.evaluate` does, and only rank 0 writes the summary (the other
    ranks return None). ``seed`` also seeds
    the bootstrap intervals and the selection split. ``overwrite`` redoes finished
    runs. ``report`` also writes ``sweep.html``. Returns the :class:`Sweep`.
    """
    shard = parse_shard(shard)
    if isinstance(jobs, bool) or int(jobs) < 1:
        raise ArcnbError(f"--jobs must be >= 1, got {jobs}")
    # every option checked before a checkpoint is read or a folder written
    o = combine(options, arch=arch, config=config, trust_checkpoint=trust_checkpoint,
                augment=augment, color_perms=color_perms, attempts=attempts, device=device,
                batch_size=batch_size, seed=seed, n_boot=n_boot, estimator=estimator)
    seed, n_boot = o.seed, o.n_boot
    folder = sweep_folder(out)
    entries = plan(checkpoints)
    ds = load_dataset(dataset, tasks=tasks, require_truth=False)
    if not all(t.has_truth for t in ds):
        raise ArcnbError(f"{ds.name} has test inputs without their outputs (a hidden test "
                         "set): a sweep scores every checkpoint, so it needs the outputs")
    runs = claim_plan(folder, entries, overwrite=overwrite)
    mine = [e for e in entries if shard is None or e.position % shard[1] == shard[0]]
    dev = resolve_device(o.device)

    def wanted(e: SweepEntry) -> dict:
        return run_options(e.checkpoint, ds, dev.type, batch_size=o.batch_size,
                           attempts=o.attempts, augment=o.augment, color_perms=o.color_perms,
                           arch=o.arch, config=o.model_config, seed=seed,
                           estimator=o.estimator, n_boot=n_boot,
                           checkpoint_sha256=e.checkpoint_sha256)

    def one(e: SweepEntry):
        rd = runs.folder(e.name).path  # never a link out of the sweep folder
        if is_finished(rd) and not overwrite:
            _check_same_run(rd, e, wanted(e))
            return None
        resume = bool(journal_paths(rd)) and not overwrite
        return evaluate(e.checkpoint, ds, rd, options=o, resume=resume, overwrite=overwrite,
                        progress=progress)

    results: dict[str, object] = {}
    # under torchrun: one process group for every evaluation (evaluate joins it), as a
    # group cannot be made again once destroyed
    rank, world, created = distributed_setup(dev)
    try:
        if rank == 0:
            # every shard records the whole plan (the same bytes), so that --collect
            # knows which checkpoints are still missing; under torchrun only rank 0
            # writes it (two processes writing one file clear each other's temporary
            # file as left over from a killed write)
            runs.write({f"{e.name}{ENTRY_SUFFIX}": json_bytes(e.to_json()) for e in entries},
                       overwrite=True)
        if int(jobs) == 1 or len(mine) <= 1 or world > 1:
            for e in mine:
                results[e.name] = one(e)
        else:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=int(jobs)) as pool:
                for e, res in zip(mine, pool.map(one, mine)):
                    results[e.name] = res
    finally:
        if created:
            import torch.distributed as dist

            dist.destroy_process_group()
    if shard is not None or rank != 0:
        # a shard leaves the summary to --collect; under torchrun rank 0 writes it
        return None
    sw = Sweep.from_runs(out, entries, ds, results=results, seed=seed, n_boot=n_boot)
    sw.write(report=report)
    return sw


def _check_same_run(rd: Path, e: SweepEntry, wanted: dict) -> None:
    """A finished run is reused only when it is the run asked for: the hash of every
    option that changes a result (:func:`arcnb.evaluate.run_options`) must match."""
    problem = same_run_problem(read_metrics(rd), wanted)
    if problem:
        raise OutputExistsError(f"{rd} holds a finished run of {printable(e.checkpoint)} that is "
                                f"not the one asked for: {problem}; pass --overwrite to redo "
                                "it, or sweep into a new folder")


def example_sweep(out, dataset="arc-agi-1:evaluation", *, seed: int = 0,
                  n_boot: int = 1000) -> "Sweep":
    """A two-checkpoint sweep to try the sweep page on without a training run: copying
    the input (a model that learned nothing) then the bundled baseline, in that order
    (their steps are 0 and 1: the order given). Finished runs in ``out`` are reused."""
    return sweep(["copy-input", "baseline"], dataset, out, seed=seed, n_boot=n_boot,
                 report=False, progress=False)


def sweep_or_example(sweep_dir, example_dir: str = "sweep-example",
                     dataset: str = "arc-agi-1:evaluation", *, seed: int = 0,
                     n_boot: int = 1000) -> "Sweep":
    """The sweep page's sweep: the sweep folder ``sweep_dir`` (:func:`open_sweep`) or,
    when it is empty, the :func:`example_sweep` written to ``example_dir``."""
    if sweep_dir:
        return open_sweep(sweep_dir, seed=seed, n_boot=n_boot)
    return example_sweep(example_dir, dataset, seed=seed, n_boot=n_boot)


def from_run_dirs(checkpoints, run_dirs, out, *, seed: int = 0, n_boot: int = 1000,
                  report: bool = True, overwrite: bool = False) -> "Sweep":
    """A sweep folder ``out`` from checkpoints already evaluated elsewhere (e.g. the
    run directories of ``arcnb report --checkpoint a b c``): each run directory's files
    are copied into ``out/runs/`` (``metrics.json`` last), matched to its checkpoint by
    the checkpoint's SHA-256 recorded in the run, then the sweep's files are written."""
    folder = sweep_folder(out)
    out = folder.path
    entries = plan(checkpoints)
    runs = claim_plan(folder, entries, overwrite=overwrite)
    by_sha = {}
    for rd in run_dirs:
        by_sha[Run.read(rd).provenance.get("checkpoint_sha256")] = Path(rd)
    missing = [e.checkpoint for e in entries if e.checkpoint_sha256 not in by_sha]
    if missing:
        raise ArcnbError(f"no run directory of checkpoint {missing[0]}")
    for e in entries:
        dest = runs.folder(e.name)
        if is_finished(dest.path) and not overwrite:
            raise OutputExistsError(f"{dest.path} already holds a finished run; refusing to "
                                    "overwrite it (pass --overwrite)")
        src = by_sha[e.checkpoint_sha256]
        names = [n for n in RUN_FILES if n != METRICS] + [CANDIDATES, METRICS]
        files = {name: (src / name).read_bytes for name in names
                 if (src / name).is_file()}  # metrics.json last: it marks a finished run
        dest.write(files, overwrite=True, remove=(METRICS, CANDIDATES))
        runs.write({f"{e.name}{ENTRY_SUFFIX}": json_bytes(e.to_json())}, overwrite=True)
    sw = Sweep.from_runs(out, entries, None, results={}, seed=seed, n_boot=n_boot)
    sw.write(report=report)
    return sw


def collect(out, *, dataset=None, seed: int = 0, n_boot: int = 1000,
            report: bool = True) -> "Sweep":
    """Build the sweep's files in ``out`` from its finished run directories (after the
    shards of a job array). ``dataset`` overrides the one the runs record."""
    sw = open_sweep(out, dataset=dataset, seed=seed, n_boot=n_boot)
    sw.write(report=report)
    return sw


def open_sweep(out, *, dataset=None, seed: int = 0, n_boot: int = 1000) -> "Sweep":
    """The :class:`Sweep` of a sweep folder, from its finished run directories
    (re-scored by :meth:`arcnb.runs.Run.open`). Checkpoints without a finished run (a
    shard still running) are named in one error."""
    out = Path(out)
    entries = read_entries(out)
    missing = [printable(e.checkpoint) for e in entries
               if not is_finished(out / RUNS_DIR / e.name)]
    if missing:
        raise ArcnbError(f"{len(missing)} of {len(entries)} checkpoints have no finished run "
                         f"yet (e.g. {missing[0]}); finish every shard first")
    ds = None if dataset is None else load_dataset(dataset, require_truth=False)
    return Sweep.from_runs(out, entries, ds, results={}, seed=seed, n_boot=n_boot)
