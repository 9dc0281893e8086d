"""The program search's language: about a hundred grid primitives in families.

A *primitive* maps a grid to a grid (or fails); :func:`primitives` gives a task's
primitive set in search order and :data:`FAMILIES` names the families (see
:mod:`arcnb.baselines` for what each family holds). Primitives that paint new cells use
*marker* values (:data:`MARK`, 10 and up) instead of colours. The search over their
compositions is ``arcnb.baselines.search``.

The package is cut by family: ``core.py`` (:class:`Primitive`, the grid program type,
the dihedral transforms, the markers, the background guess, a task's context),
``objects.py`` (connected components, their selection, keep / drop / recolour objects),
``transforms.py`` (whole-grid transforms, tiling, mirroring and scaling, gravity),
``regions.py`` (cropping, separator-split cells and halves, halves and quarters),
``colours.py`` (colour filters, one colour per block, local rules), ``completion.py``
(symmetry and periodic completion), ``drawing.py`` (outlines, fills, rays and frames).
A new primitive is a function in its family's builder there; a new family is a builder
in :data:`FAMILY_BUILDERS` (its place there is its place in the search order's ties).
"""
from __future__ import annotations

from ...data import Task
from .colours import colour_filters, local_rules, summaries
from .completion import periodic, symmetry
from .core import DIHEDRAL, MARK, GridFn, Primitive, context
from .drawing import fills, lines
from .objects import clear_object_cache, object_edits
from .regions import cropping, parts, splitting
from .transforms import fits, geometry, gravities, tiling

__all__ = ["GridFn", "DIHEDRAL", "MARK", "FAMILIES", "Primitive", "primitives", "fits",
           "clear_object_cache"]

#: The families' builders (a task's context -> its primitives), in search order.
FAMILY_BUILDERS = (geometry, cropping, splitting, parts, colour_filters, symmetry,
                   periodic, tiling, summaries, gravities, fills, lines, object_edits,
                   local_rules)
#: The program families, as named in :attr:`Primitive.family`.
FAMILIES = ("whole-grid transforms", "cropping", "cells and halves", "colour maps and filters",
            "symmetry completion", "tiling and mirroring", "scaling", "gravity",
            "outlines and fills", "largest or smallest object", "local rules")


def primitives(task: Task) -> list[Primitive]:
    """The task's primitive set, in search order (cost, then name)."""
    ctx = context(task)
    prims = [p for build in FAMILY_BUILDERS for p in build(ctx)]
    return sorted(prims, key=lambda p: (p.cost, p.name))
