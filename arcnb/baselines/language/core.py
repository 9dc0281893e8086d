"""The language's ground: a grid program's type (:data:`GridFn`), the dihedral
transforms, the marker values, the background guess, :class:`Primitive` and the
task context a family builds its primitives from."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ...augment import dihedral_fn
from ...data import Task
from ...grids import MAX_SIZE, background

__all__ = ["GridFn", "DIHEDRAL", "MAX", "MARK", "background_guess", "Primitive", "Context",
           "context"]

#: A grid program: a grid in, a grid (or None: it does not apply) out.
GridFn = Callable[[np.ndarray], "np.ndarray | None"]

#: The dihedral transforms (:mod:`arcnb.augment`), in the order the tiny heuristic tries
#: them (:func:`arcnb.baselines.heuristic_submission`) and the whole-grid primitives list them.
DIHEDRAL: dict[str, GridFn] = {
    n: dihedral_fn(n) for n in ("identity", "rot90", "rot180", "rot270", "flip_lr", "flip_ud",
                                "transpose", "anti_transpose")}

MAX = MAX_SIZE  # largest ARC grid side
#: The first marker value: a painted cell whose colour the final colour map learns.
MARK = 10


def background_guess(g: np.ndarray) -> int:
    """The search's background guess (:func:`arcnb.grids.background` with
    ``prefer_black``): black when the grid has black, else the most common value."""
    return background(g, prefer_black=True)


@dataclass(frozen=True)
class Primitive:
    """One grid program: ``fn(grid) -> grid | None``. ``cost`` counts toward a
    program's complexity; a ``first_only`` primitive only reads the task's own inputs
    (it is expensive, or only meaningful there)."""

    name: str
    cost: int
    fn: GridFn
    #: the family it belongs to (one of :data:`FAMILIES`)
    family: str
    first_only: bool = False
    #: only as a program's last step (its output is a feature grid for the colour map)
    final_only: bool = False
    #: the output's shape from the input's: "same", "swap" (transposed), "le" (no
    #: side grows) or a function ``(h, w) -> (H, W)``
    shape: object = "same"

    def may_give(self, shape: tuple, target: tuple) -> bool:
        """Can this primitive turn a grid of ``shape`` into one of ``target``?"""
        s = self.shape
        if s is None:
            return True
        if s == "same":
            return shape == target
        if s == "swap":
            return shape[::-1] == target
        if s == "le":
            return target[0] <= shape[0] and target[1] <= shape[1]
        return s(shape) == target


@dataclass(frozen=True)
class Context:
    """What a task's primitive set depends on: its colours and its size ratios."""

    colours: tuple
    up: tuple   # (fy, fx) factors for tiling and upscaling
    down: tuple  # (fy, fx) factors for downscaling
    fixed: tuple  # the demonstration outputs' shape when they all share it


def context(task: Task) -> Context:
    grids = [p.input for p in task.train] + [p.input for p in task.test]
    colours = tuple(sorted({int(v) for g in grids for v in np.unique(g)}))
    up, down = {(2, 2), (3, 3)}, {(2, 2), (3, 3)}
    ups, downs = set(), set()
    for p in task.train:
        (h, w), (H, W) = p.input.shape, p.output.shape
        ups.add((H // h, W // w) if H % h == 0 and W % w == 0 else None)
        downs.add((h // H, w // W) if h % H == 0 and w % W == 0 else None)
    for learnt, into in ((ups, up), (downs, down)):
        if len(learnt) == 1 and None not in learnt and learnt != {(1, 1)}:
            into |= learnt
    shapes = {p.output.shape for p in task.train}
    fixed = tuple(shapes) if len(shapes) == 1 else ()
    up |= set(fixed)  # a 1x1 grid scales up to the fixed output shape
    return Context(colours, tuple(sorted(up)), tuple(sorted(down)), fixed)
