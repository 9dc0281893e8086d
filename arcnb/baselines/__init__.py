"""Reference baselines for ARC: copy the input, a tiny whole-grid heuristic, and a
deterministic program search.

Paper tables put a model next to simple reference points. This module holds them:

* :func:`copy_input_submission`: every attempt is the test input unchanged;
* :func:`heuristic_submission`: the tiny heuristic behind
  the bundled example ``arc-agi-1-evaluation_heuristic.json`` (whole-grid programs only);
* :func:`program_search_submission`: a search over compositions of grid programs
  that keeps the programs reproducing *every* demonstration pair of a task.

The program search
------------------
A *primitive* maps a grid to a grid (or fails). The background of a grid is black
when the grid has black cells, else its most common colour. The families
(:data:`FAMILIES`, :func:`primitives`) are:

* whole-grid transforms: rotations, flips, transposes;
* cropping: to the non-background cells, to a colour's bounding box, to the largest /
  smallest / odd-one-out object (connected components, one colour 4- or 8-connected,
  or several colours 8-connected), to the inner part of a frame;
* largest or smallest object: keep it alone, drop small specks, its colour as a 1x1
  grid;
* cells and halves: one cell of a grid split by separator lines (the odd one, the
  fullest, ...), the two halves combined cell-wise (and, or, xor, ...), a half or a
  quarter, one value per cell;
* colour maps and filters: keep or drop one colour, swap background and foreground,
  recolour objects by size or by whether they touch the border;
* symmetry completion: cells of a masking colour (or missing background) filled from
  the grid's own mirror symmetries or from its smallest repeating period, the whole
  grid or only the masked patch; overlaying a grid with its mirror images;
* tiling and mirroring: tiles with flipped rows or columns, mirrored concatenations,
  rotation quads, self-similar (fractal) tilings;
* scaling: up and down by the demonstrations' ratio (or 2 and 3), one value per block,
  dropping repeated or empty rows and columns;
* gravity: cells fall towards one of the four sides;
* outlines and fills: enclosed background, outlines, interiors, bounding boxes, lines
  between same-colour cells, rays to the border, a frame;
* local rules (last step only): each cell's colour from its 3x3 neighbourhood.

Primitives that paint new cells use *marker* values (10 and up) instead of colours.

A *program* is a sequence of up to ``max_depth`` primitives (default 2) followed by a
colour map learnt from the demonstrations: the map sends each value of the program's
output to one colour, consistently across every demonstration pair (markers must all be
mapped; colours unseen in the demonstrations stay as they are). A program is
*consistent* when, with its map, it reproduces every demonstration output exactly.

The search is breadth first: all programs of depth 1, then depth 2, with the
primitives in a fixed order. Programs of depth 1 whose outputs on the task's inputs
(demonstrations and tests) equal those of a simpler program are not extended. The
last step skips primitives that cannot give the demonstration outputs' shapes and
stops at the first demonstration it gets wrong. The complexity of a program is the sum
of its primitives' costs (1 to 3) plus 1 for a colour map that changes a colour; ties
are broken by depth, then by the program's text. ``attempt_1`` and ``attempt_2`` are
the test outputs of the two simplest consistent programs (distinct grids); a test input
no program covers gets copies of the input.

The budget is counted in primitive applications (``budget`` per task), not in
seconds, so the output is the same bytes on every machine and every run.
``time_limit`` is a wall-clock safety cap per task that should never trigger; when it
does, :func:`program_search_submission` warns, because the output then depends on the
machine's speed.

Where it lives
--------------
``arcnb/baselines/references.py`` holds the reference baselines over a whole dataset
(the ``*_submission`` functions, :func:`program_search_candidates`);
``language/`` the primitives, one module per group of families (``core.py``,
``objects.py``, ``transforms.py``, ``regions.py``, ``colours.py``, ``completion.py``,
``drawing.py``; :func:`primitives` assembles them); ``search.py`` the search
(:func:`search_task`, :func:`solve_task`); ``model.py`` the search as a model
(:func:`program_search_model`). Every public name is importable from
``arcnb.baselines`` itself.

Words: a *reference baseline* is one of these reference points. It is not the
*bundled checkpoint* (``"baseline"`` on the command line,
:data:`arcnb.models.BUNDLED_CHECKPOINT`), a trained copy of the *demo network*
(``DemoConvNet``, the ``demo-conv`` builder).
"""
from __future__ import annotations

from .language import FAMILIES, MARK, GridFn, Primitive, primitives
from .model import program_search_model
from .references import (NEAR_MISSES, PROGRAMS, copy_input_submission, fit_programs,
                         heuristic_submission, program_search_candidates,
                         program_search_submission)
from .search import (DEFAULT_BUDGET, DEFAULT_TIME_LIMIT, Program, SearchResult, run_program,
                     search_task, solve_task, train_score)

__all__ = [
    "PROGRAMS", "fit_programs", "heuristic_submission", "copy_input_submission",
    "Primitive", "Program", "SearchResult", "primitives", "search_task", "solve_task",
    "program_search_submission", "program_search_candidates", "program_search_model",
    "FAMILIES", "DEFAULT_BUDGET",
    "DEFAULT_TIME_LIMIT", "run_program", "train_score", "NEAR_MISSES",
]
