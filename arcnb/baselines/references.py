"""The reference baselines: what a paper table puts beside a model.

:func:`copy_input_submission` (every attempt is the test input), the tiny whole-grid
heuristic (:func:`heuristic_submission`, :func:`fit_programs`) and the program
search's predictions and candidate pools over a whole dataset
(:func:`program_search_submission`, :func:`program_search_candidates`; the search
itself is ``arcnb.baselines.search``).
"""
from __future__ import annotations

import warnings
from typing import Iterable

import numpy as np

from ..data import Dataset, Task
from ..errors import ParameterError
from ..grids import MAX_SIZE, same_grid
from ..predictions import attempt_entry
from .language import DIHEDRAL, GridFn
from .search import DEFAULT_BUDGET, DEFAULT_TIME_LIMIT, search_task, solve_task

#: Programs that do not reproduce the demonstrations :func:`program_search_candidates`
#: adds per task after the consistent ones (best fraction of demonstration cells first).
NEAR_MISSES = 3

__all__ = ["PROGRAMS", "copy_input_submission", "fit_programs", "heuristic_submission",
           "program_search_submission", "program_search_candidates"]

# --------------------------------------------------------------------------------------
# copy the input, and the tiny whole-grid heuristic (the first bundled example)
# --------------------------------------------------------------------------------------

#: The tiny heuristic's programs (:func:`heuristic_submission`).
PROGRAMS = tuple(DIHEDRAL) + ("colour map", "tile", "upscale", "constant")


def copy_input_submission(dataset: Dataset, *, attempts: int = 2) -> dict:
    """Every attempt is the test input (the copy-the-input reference point)."""
    return {t.id: [attempt_entry([p.input] * attempts) for p in t.test] for t in dataset}


def _colour_map(task: Task) -> GridFn | None:
    mapping: dict[int, int] = {}
    for p in task.train:
        if p.input.shape != p.output.shape:
            return None
        for a, b in zip(p.input.ravel().tolist(), p.output.ravel().tolist()):
            if mapping.setdefault(a, b) != b:
                return None
    if all(a == b for a, b in mapping.items()):
        return None  # identity, already covered

    def apply(g: np.ndarray) -> np.ndarray | None:
        if any(int(v) not in mapping for v in np.unique(g)):
            return None
        lut = np.arange(10, dtype=np.int8)
        for a, b in mapping.items():
            lut[a] = b
        return lut[g]

    return apply


def _factor(task: Task) -> tuple[int, int] | None:
    factors = set()
    for p in task.train:
        (h, w), (H, W) = p.input.shape, p.output.shape
        if H % h or W % w:
            return None
        factors.add((H // h, W // w))
    if len(factors) != 1:
        return None
    f = factors.pop()
    return None if f == (1, 1) else f


def _candidates(task: Task) -> Iterable[tuple[str, GridFn]]:
    yield from DIHEDRAL.items()
    cmap = _colour_map(task)
    if cmap is not None:
        yield "colour map", cmap
    f = _factor(task)
    if f is not None:
        yield f"tile {f[0]}x{f[1]}", lambda g: np.tile(g, f)
        yield f"upscale {f[0]}x{f[1]}", lambda g: np.kron(g, np.ones(f, dtype=np.int8))
    outs = [p.output for p in task.train]
    if outs and all(same_grid(o, outs[0]) for o in outs):
        const = outs[0]
        yield "constant", lambda g: const


def fit_programs(task: Task) -> list[tuple[str, GridFn]]:
    """The tiny heuristic's programs that reproduce every demonstration pair exactly."""
    fitted = []
    for name, prog in _candidates(task):
        ok = True
        for p in task.train:
            out = prog(p.input)
            if not same_grid(out, p.output):
                ok = False
                break
        if ok:
            fitted.append((name, prog))
    return fitted


def heuristic_submission(dataset: Dataset, *, attempts: int = 2) -> dict:
    """The tiny heuristic's predictions for every test input of ``dataset`` (ARC Prize
    format): the first ``attempts`` whole-grid programs that fit, else the input."""
    sub = {}
    for task in dataset:
        progs = fit_programs(task)
        entries = []
        for pair in task.test:
            grids = []
            for _, prog in progs:
                g = prog(pair.input)
                if g is not None and g.size and max(g.shape) <= MAX_SIZE and not any(
                        same_grid(g, x) for x in grids):
                    grids.append(g)
                if len(grids) == attempts:
                    break
            while len(grids) < attempts:
                grids.append(pair.input)
            entries.append(attempt_entry(grids))
        sub[task.id] = entries
    return sub


# --------------------------------------------------------------------------------------
# the program search over a dataset
# --------------------------------------------------------------------------------------

def _solve_entry(args) -> tuple[str, list, dict]:
    task, attempts, search = args
    grids, res = solve_task(task, attempts=attempts, **search)
    entries = [attempt_entry(gs) for gs in grids]
    info = {"programs": [p.text for p in res.programs[:attempts]],
            "n_consistent": len(res.programs), "evaluations": res.evaluations,
            "exhausted": res.exhausted, "timed_out": res.timed_out}
    return task.id, entries, info


def program_search_submission(dataset: Dataset, *, attempts: int = 2, max_depth: int = 2,
                              budget: int = DEFAULT_BUDGET,
                              time_limit: float | None = DEFAULT_TIME_LIMIT,
                              workers: int = 1, details: dict | None = None) -> dict:
    """The program search's predictions for every test input of ``dataset`` (ARC Prize
    submission format: ``{task_id: [{"attempt_1": grid, "attempt_2": grid}, ...]}``).

    ``attempts``: attempts per test input (the simplest consistent programs first).
    ``max_depth``: the longest composition searched. ``budget``: primitive applications
    per task. ``time_limit``: the per-task wall-clock safety cap in seconds (None: no
    cap); a search it cuts short makes the output depend on the machine, so it warns.
    ``workers``: processes searching tasks in parallel (the output does not depend on
    it). ``details``: a dict to fill with, per task, the programs behind the attempts,
    the number of consistent programs and the primitive applications spent.
    Deterministic: the same dataset and arguments give the same predictions.
    """
    if isinstance(attempts, bool) or int(attempts) < 1:
        raise ParameterError(f"attempts must be >= 1, got {attempts}")
    search = {"max_depth": int(max_depth), "budget": int(budget), "time_limit": time_limit}
    jobs = [(task, int(attempts), search) for task in dataset]
    if int(workers) > 1 and len(jobs) > 1:
        import multiprocessing as mp

        with mp.get_context("spawn").Pool(int(workers)) as pool:
            rows = pool.map(_solve_entry, jobs, chunksize=1)
    else:
        rows = [_solve_entry(j) for j in jobs]
    sub, capped = {}, []
    for task_id, entries, info in rows:
        sub[task_id] = entries
        if info["timed_out"]:
            capped.append(task_id)
        if details is not None:
            details[task_id] = info
    if capped:
        warnings.warn(f"the wall-clock cap of {time_limit} s cut the search short on "
                      f"{len(capped)} task(s) ({', '.join(capped[:5])}); those predictions "
                      "depend on the machine's speed", RuntimeWarning, stacklevel=2)
    return sub


def program_search_candidates(dataset: Dataset, *, max_depth: int = 2,
                              budget: int = DEFAULT_BUDGET,
                              time_limit: float | None = DEFAULT_TIME_LIMIT,
                              near_misses: int = NEAR_MISSES) -> dict:
    """Every consistent program's test outputs as a candidate pool, in the candidates
    file format of :mod:`arcnb.candidates` (a dict to pass to
    :func:`arcnb.candidates.candidates` or to write as JSON).

    Per test input, one candidate per consistent program, simplest program first (the
    ``order`` the attempts follow), with the score ``cost`` (the program's cost, lower
    is better). Programs that give the same grid merge into one candidate whose votes
    count them. A program whose test output is undefined gives a malformed candidate
    (``null``), which keeps its place but is never a candidate.

    Every candidate carries its demonstration checks: ``passes_train`` (true for the
    consistent programs) and ``train_score`` (the fraction of demonstration cells right).
    After the consistent programs come up to ``near_misses`` programs that do not
    reproduce the demonstrations (best ``train_score`` first, without a ``cost``, so
    they rank last under ``cost``): the verifier view (:mod:`arcnb.candidates`).
    """
    tasks = {}
    for task in dataset:
        res = search_task(task, max_depth=max_depth, budget=budget, time_limit=time_limit,
                          near_misses=near_misses)
        outs = []
        for i in range(len(task.test)):
            cands = []
            for p in res.programs:
                g = p.outputs[i]
                ok = g is not None and g.size and int(g.min()) >= 0 and int(g.max()) <= 9
                c = {"grid": np.asarray(g).tolist() if ok else None,
                     "passes_train": bool(p.passes_train),
                     "train_score": float(p.train_score)}
                if p.passes_train:
                    c["scores"] = {"cost": float(p.cost)}
                cands.append(c)
            outs.append(cands)
        tasks[task.id] = outs
    return {"arcnb_candidates": 1, "lower_is_better": ["cost"], "tasks": tasks}
