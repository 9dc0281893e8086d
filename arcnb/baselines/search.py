"""The program search's engine: breadth-first search over compositions of the
primitives of ``arcnb.baselines.language``, with a colour map learnt last.

:func:`search_task` finds every consistent program of a task (simplest first) within a
budget of primitive applications; :func:`solve_task` turns them into attempts. The
rules (what is consistent, the order, the budget) are in :mod:`arcnb.baselines`.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..data import Task
from ..grids import cell_accuracy, same_grid
from .language import MARK, clear_object_cache, fits, primitives

__all__ = ["Program", "SearchResult", "search_task", "solve_task", "run_program",
           "train_score", "DEFAULT_BUDGET", "DEFAULT_TIME_LIMIT"]

# --------------------------------------------------------------------------------------
# program search: the search
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Program:
    """A program: its primitives, its learnt colour map and its test outputs, with its
    demonstration checks: ``passes_train`` (it reproduces every demonstration pair: the
    consistent programs) and ``train_score`` (the mean over demonstration pairs of the
    fraction of cells right, 0 for a wrong shape; 1 for a consistent program)."""

    names: tuple
    cost: int
    mapping: tuple  # ((value, colour), ...) sorted; identity pairs left out
    outputs: tuple  # one grid (or None) per test input
    passes_train: bool = True
    train_score: float = 1.0

    @property
    def key(self) -> tuple:
        """The sort key of the simplest-first order: cost, depth, then :attr:`text`."""
        return (self.cost, len(self.names), self.text)

    @property
    def text(self) -> str:
        """The program as text: its primitives joined by ``|``, then its colour map."""
        body = " | ".join(self.names) if self.names else "identity"
        if self.mapping:
            body += " | map " + ",".join(f"{a}>{b}" for a, b in self.mapping)
        return body


class _MapFit:
    """A value -> colour map learnt one demonstration pair at a time."""

    def __init__(self):
        self.mapping: dict[int, int] = {}

    def add(self, pred: np.ndarray, out: np.ndarray) -> bool:
        """Extend the map with one pair; False when the pair contradicts it."""
        if pred.shape != out.shape:
            return False
        keys = np.unique(pred.astype(np.int64) * 16 + out)
        m = self.mapping
        for k in keys.tolist():
            a, b = divmod(k, 16)
            if m.setdefault(a, b) != b:
                return False
        return True


def _apply_map(g: np.ndarray, mapping: dict) -> np.ndarray | None:
    vals, inv = np.unique(g, return_inverse=True)
    to = []
    for v in vals.tolist():
        if v >= MARK and v not in mapping:
            return None
        to.append(mapping.get(v, v))
    return np.asarray(to, dtype=np.int8)[inv].reshape(g.shape)


def _program(names, cost, mapping: dict, tests) -> Program | None:
    changed = tuple(sorted((a, b) for a, b in mapping.items() if a != b))
    outs = tuple(_apply_map(g, mapping) for g in tests)
    if all(t is None for t in outs):
        return None
    recolours = any(a < MARK for a, _ in changed)
    return Program(tuple(names), cost + int(recolours), changed, outs)


def _consistent(names, cost, state, outs) -> Program | None:
    fit = _MapFit()
    if not all(fit.add(p, o) for p, o in zip(state, outs)):
        return None
    return _program(names, cost, fit.mapping, state[len(outs):])


#: The families that may extend a program past its second step.
_CHEAP = frozenset({"whole-grid transforms", "tiling and mirroring", "scaling"})


def _same(a: Sequence[np.ndarray], b: Sequence[np.ndarray]) -> bool:
    return all(same_grid(x, y) for x, y in zip(a, b))


def _state_key(state) -> tuple:
    return tuple((g.shape, g.tobytes()) for g in state)


@dataclass
class SearchResult:
    """Every consistent program found (simplest first) and what the search spent."""

    programs: list
    evaluations: int
    exhausted: bool  # the budget ran out before the search finished
    timed_out: bool  # the wall-clock safety cap triggered


class _Search:
    """The state of one task's search: budget, clock and the programs found."""

    def __init__(self, task: Task, budget: int, time_limit: float | None):
        self.prims = primitives(task)
        self.outs = [p.output for p in task.train]
        self.n = len(self.outs)
        self.budget, self.time_limit = budget, time_limit
        self.used, self.exhausted, self.timed_out = 0, False, False
        self.t0 = time.monotonic()
        self.found: dict[str, Program] = {}
        self.near: dict[str, Program] = {}

    def stop(self) -> bool:
        if self.used >= self.budget:
            self.exhausted = True
        elif self.time_limit is not None and time.monotonic() - self.t0 > self.time_limit:
            self.timed_out = True
        return self.exhausted or self.timed_out

    def add(self, p: Program | None) -> None:
        if p is not None and (p.text not in self.found or p.key < self.found[p.text].key):
            self.found[p.text] = p

    def expand(self, frontier, seen: set, first: bool) -> list:
        """Every new state one primitive away from ``frontier`` (full states: the
        demonstrations' and the tests' grids), simplest program per state. Past the
        first step only the cheap primitives extend a program of depth 2 or more."""
        level: dict[tuple, tuple] = {}
        for (cost, names), state in frontier:
            for prim in self.prims:
                if prim.first_only and not first:
                    continue
                if len(names) >= 1 and not first and prim.family not in _CHEAP:
                    continue
                new = []
                for g in state:
                    self.used += 1
                    r = prim.fn(g)
                    if r is None or not fits(r.shape):
                        new = None
                        break
                    new.append(r)
                if new is None or _same(new[:self.n], state[:self.n]):
                    continue  # a step that changes no demonstration explains nothing
                if prim.final_only:
                    self.add(_consistent(names + (prim.name,), cost + prim.cost, new, self.outs))
                    continue
                k = _state_key(new)
                prog = (cost + prim.cost, names + (prim.name,))
                if k not in seen and (k not in level or prog < level[k][0]):
                    level[k] = (prog, new)
            if self.stop():
                break
        seen.update(level)
        for (cost, names), state in level.values():
            prog = _consistent(names, cost, state, self.outs)
            self.add(prog)
            if prog is None:
                self.near_miss(names, cost, state)
        return sorted(level.values(), key=lambda x: x[0])

    def near_miss(self, names, cost, state) -> None:
        """Remember a program that does not reproduce the demonstrations (without a
        colour map), with its test outputs when they are all grids of colours."""
        tests = state[self.n:]
        if not all(int(g.min()) >= 0 and int(g.max()) < MARK for g in tests):
            return
        prog = Program(tuple(names), cost, (), tuple(g.astype(np.int8) for g in tests),
                       passes_train=False, train_score=train_score(state[:self.n], self.outs))
        if prog.text not in self.near or prog.key < self.near[prog.text].key:
            self.near[prog.text] = prog

    def last(self, frontier, first: bool) -> None:
        """The final step: only programs that can still match, checked one
        demonstration at a time (a mismatch stops the work on that program)."""
        outs, n = self.outs, self.n
        shapes_out = [o.shape for o in outs]
        for (cost, names), state in frontier:
            shapes_in = [g.shape for g in state[:n]]
            for prim in self.prims:
                if prim.first_only and not first:
                    continue
                if not all(prim.may_give(a, b) for a, b in zip(shapes_in, shapes_out)):
                    continue
                fit, ok, changed = _MapFit(), True, False
                for g, o in zip(state[:n], outs):
                    self.used += 1
                    r = prim.fn(g)
                    if r is None or not fit.add(r, o):
                        ok = False
                        break
                    changed = changed or not same_grid(r, g)
                if not ok or not changed:
                    continue
                tests = []
                for g in state[n:]:
                    self.used += 1
                    r = prim.fn(g)
                    tests.append(r if r is not None and fits(r.shape)
                                 else np.full((1, 1), MARK + 999, dtype=np.int16))
                self.add(_program(names + (prim.name,), cost + prim.cost, fit.mapping, tests))
            if self.stop():
                break


#: Primitive applications allowed per task. The bundled ARC sets need at most about
#: 10,000, so it never cuts a search short there.
DEFAULT_BUDGET = 100_000
#: Wall-clock safety cap per task, in seconds (the bundled sets stay far below it).
DEFAULT_TIME_LIMIT = 60.0


def train_score(predicted: Sequence[np.ndarray], truth: Sequence[np.ndarray]) -> float:
    """The mean over demonstration pairs of the fraction of cells right (0 where the
    shape is wrong): 1.0 exactly when every pair is reproduced."""
    if not truth:
        return float("nan")
    parts = [cell_accuracy(p, t, otherwise=0.0) for p, t in zip(predicted, truth)]
    return float(np.mean(parts))


def run_program(task: Task, program: Program, grid: np.ndarray) -> np.ndarray | None:
    """``program`` applied to ``grid`` (a demonstration or test input of ``task``): its
    primitives in order, then its colour map; None where a step gives nothing."""
    if program.names == ("constant",):
        return task.train[0].output.copy() if task.train else None
    by_name = {p.name: p for p in primitives(task)}
    g = np.asarray(grid).astype(np.int16)
    for name in program.names:
        g = by_name[name].fn(g)
        if g is None or not fits(g.shape):
            return None
    out = _apply_map(g, dict(program.mapping))
    return None if out is None or int(out.max()) >= MARK else out


def search_task(task: Task, *, max_depth: int = 2, budget: int = DEFAULT_BUDGET,
                time_limit: float | None = DEFAULT_TIME_LIMIT,
                near_misses: int = 0) -> SearchResult:
    """Search compositions of up to ``max_depth`` of the task's primitives (see the
    module docstring). ``budget`` caps the primitive applications (one per grid).
    ``near_misses``: also return that many programs that do not reproduce the
    demonstrations (``passes_train`` False), best ``train_score`` first, after the
    consistent ones."""
    clear_object_cache()
    s = _Search(task, budget, time_limit)
    ins = [p.input.astype(np.int16) for p in task.train] + \
        [p.input.astype(np.int16) for p in task.test]
    s.add(_consistent((), 0, ins, s.outs))
    outs = s.outs
    if outs and all(same_grid(o, outs[0]) for o in outs):
        s.add(Program(("constant",), 1, (), tuple(outs[0] for _ in task.test)))
    seen = {_state_key(ins)}
    frontier = [((0, ()), ins)]
    for depth in range(1, max_depth):
        frontier = s.expand(frontier, seen, first=depth == 1)
        if s.exhausted or s.timed_out:
            break
    else:
        if max_depth >= 1:
            s.last(frontier, first=max_depth == 1)
    programs = sorted(s.found.values(), key=lambda p: p.key)
    if near_misses > 0:
        near = sorted(s.near.values(), key=lambda p: (-p.train_score, p.key))
        programs += near[:near_misses]
    return SearchResult(programs, s.used, s.exhausted, s.timed_out)


def solve_task(task: Task, *, attempts: int = 2,
               **search) -> tuple[list[list[np.ndarray]], SearchResult]:
    """The attempts for each test input of ``task``: the test outputs of the simplest
    consistent programs (distinct grids), padded with the input itself."""
    res = search_task(task, **search)
    per_test = []
    for i, pair in enumerate(task.test):
        grids: list[np.ndarray] = []
        for p in res.programs:
            g = p.outputs[i]
            if g is not None and not any(same_grid(g, x) for x in grids):
                grids.append(g)
            if len(grids) == attempts:
                break
        while len(grids) < attempts:
            grids.append(pair.input)
        per_test.append(grids)
    return per_test, res

