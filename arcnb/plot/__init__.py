"""Plots of ARC grids and results: the official palette, grid / pair / task panels,
fast galleries, breakdown charts and paper-ready figures.

Everything works offline and headless (no fonts or styles are fetched; the Agg
backend is enough). Plotting functions take ``ax=None`` (or ``axes=None`` for
multi-panel figures) and return the Axes or the Figure they drew on. Importing
``arcnb.plot`` does not import matplotlib; the first drawing does. In a notebook the
figures of :func:`task`, :func:`pair` and :func:`gallery` show once, whether they end
the cell, are assigned, or are passed to ``display`` (:mod:`arcnb.plot.figures`).

User text
    Task ids, category names and run labels are drawn as plain text: control
    characters and characters the font lacks are shown escaped (``\\n``,
    ``\\u4e2d``) and ``$`` never starts mathtext (``safe_text`` and ``plain_label``
    of ``arcnb.plot.pixelfont``), so a label can never stop a figure.

Colours
    ``PALETTE[c]`` is the official ARC colour of value ``c`` (0 black, 1 blue, 2 red,
    3 green, 4 yellow, 5 grey, 6 magenta, 7 orange, 8 azure, 9 maroon). Padding
    (the pad token, default 10) is never drawn black: it is white with a grey hatch.

Images
    :func:`grid` draws one pixel per cell (``imshow`` of an ``H x W x 3`` array whose
    every pixel is exactly ``PALETTE_RGB[value]``) with thin vector cell lines, so
    PDF/SVG output stays sharp. :func:`gallery` instead tiles hundreds of
    truth / prediction / difference triples into one RGBA image per figure (a single
    image artist, labels written into the pixels), which is tens of times faster than
    one Axes per grid.

Difference panel
    Cell ``(r, c)`` is marked wrong iff ``truth[r, c] != prediction[r, c]``; it is only
    defined when the shapes agree. A shape mismatch (or a missing prediction) is
    stated in words instead.

Modules (every public name is importable from ``arcnb.plot`` itself):

* ``palette``: the palette constants, :func:`grid_image`, :func:`diff_mask`, array
  helpers
* ``panels``: :func:`grid`, :func:`pair`, :func:`task`
* ``galleries``: :func:`gallery`, :func:`gallery_items`, :func:`gallery_pages`,
  :func:`pairs_image`
* ``tiles``: the gallery's tile rendering (tokens and their colour look-up table)
* ``pixelfont``: the gallery's text, rasterised into the image; label escaping
* ``figures``: :class:`~arcnb.plot.figures.ArcnbFigure`, the figures that show once
* ``charts``: the scale and labels of every result chart (:func:`value_limit`,
  :func:`value_label`), :func:`color_accuracy`, :func:`confusion_heatmap`
* ``breakdowns``: :func:`breakdown_bars`, :func:`breakdown_panels`,
  :func:`cell_accuracy_hist`
* ``scores``: :func:`pass_at_k`, :func:`compare` (run against run)
* ``cost``: :func:`cost_vs_score`, :func:`cost_by_outcome`, :func:`leaderboard`
* ``sweep``: :func:`learning_curve`, :func:`learning_curves`, :func:`changes_bars`,
  :func:`solved_heatmap`, :func:`category_curves` (a checkpoint sweep's figures)
* ``candidates``: candidate-pool figures, :func:`rank_histogram`,
  :func:`coverage_vs_pass`, :func:`reliability_diagram`, :func:`pass_at_k_by_rule`,
  :func:`candidate_strip`
* ``repeats``: :func:`seed_spread`, :func:`union_coverage`, :func:`solve_matrix`,
  :func:`winners_curse` (many runs analysed together, :mod:`arcnb.repeats`)
* ``difficulty``: :func:`ability_intervals`, :func:`accuracy_by_difficulty`,
  :func:`difficulty_vs_human`, :func:`surprise_gallery` (task difficulty across systems,
  :mod:`arcnb.difficulty`)
* ``probes``: :func:`probe_scores`, :func:`probe_drops`, :func:`probe_consistency`,
  :func:`proxy_vs_true`, :func:`probe_gallery`, :func:`lost_outputs` (the memorisation
  and invariance probes, :mod:`arcnb.probes`)
* ``arc3``: the figures of ARC-AGI-3 game recordings (:mod:`arcnb.plot.arc3`, a module of
  its own: its ``PALETTE`` is the game's 16 colours; not re-exported here)
* ``paper``: :func:`paper_style`, :data:`STYLE`, :func:`figsize`, :func:`save`,
  :data:`WIDTHS` and :func:`paper_width` (``"column"`` 3.5 in, ``"page"`` 7.2 in)
* ``check``: :func:`check_figure`, the problems of a finished figure (overlapping,
  hidden, cut-off or tiny text, column names for labels)
* ``display``: :class:`GridView`, :class:`PairView`, :class:`TaskView`, :func:`view`,
  :func:`enable_rich_display`
"""
from __future__ import annotations

from .breakdowns import breakdown_bars
from .charts import color_accuracy, confusion_heatmap
from .cost import leaderboard
from .scores import compare, pass_at_k
from .display import GridView, PairView, TaskView, enable_rich_display, view
from .galleries import gallery, gallery_items, gallery_pages, pairs_image
# charts that scale to their data and the report's graded and cost charts
from .breakdowns import breakdown_panels, cell_accuracy_hist
from .charts import value_label, value_limit
from .cost import cost_by_outcome, cost_vs_score
from .palette import (COLOR_NAMES, DIFF_OK_COLOR, DIFF_WRONG_COLOR, LINE_COLOR, PAD_COLOR,
                      PAD_HATCH_COLOR, PALETTE, PALETTE_RGB, diff_mask, grid_image)
from .panels import grid, pair, task
from .check import check_figure
from .paper import (DOUBLE_COLUMN, SINGLE_COLUMN, STYLE, WIDTHS, figsize, paper_style,
                    paper_width, save)

__all__ = [
    "PALETTE", "PALETTE_RGB", "COLOR_NAMES", "PAD_COLOR", "PAD_HATCH_COLOR", "LINE_COLOR",
    "DIFF_OK_COLOR", "DIFF_WRONG_COLOR", "SINGLE_COLUMN", "DOUBLE_COLUMN", "STYLE",
    "grid_image", "diff_mask", "grid", "pair", "task", "gallery", "gallery_items",
    "gallery_pages", "color_accuracy", "confusion_heatmap",
    "breakdown_bars", "pass_at_k", "compare", "leaderboard", "paper_style",
    "figsize", "save", "GridView", "PairView", "TaskView", "view", "enable_rich_display",
]
__all__ += ["pairs_image"]
# a checkpoint sweep's figures (arcnb.sweep)
from .sweep import (category_curves, changes_bars, learning_curve, learning_curves,  # noqa: E402
                    solved_heatmap)

__all__ += ["learning_curve", "learning_curves", "changes_bars", "solved_heatmap",
            "category_curves"]
from .candidates import (anytime_curve, candidate_strip, coverage_vs_pass,  # noqa: E402
                         first_right_step_histogram, pass_at_k_by_rule, rank_histogram,
                         reliability_diagram, verifier_confusion)

__all__ += ["rank_histogram", "coverage_vs_pass", "reliability_diagram", "pass_at_k_by_rule",
            "candidate_strip", "anytime_curve", "verifier_confusion",
            "first_right_step_histogram"]
__all__ += ["breakdown_panels", "cell_accuracy_hist", "cost_vs_score", "cost_by_outcome",
            "value_limit", "value_label"]
__all__ += ["check_figure"]
# many runs analysed together (arcnb.repeats)
from .repeats import seed_spread, solve_matrix, union_coverage, winners_curse  # noqa: E402

__all__ += ["seed_spread", "union_coverage", "solve_matrix", "winners_curse"]
__all__ += ["WIDTHS", "paper_width"]
from .probes import (lost_outputs, probe_consistency, probe_drops, probe_gallery,  # noqa: E402
                     probe_scores, proxy_vs_true)
__all__ += ["probe_scores", "probe_drops", "probe_consistency", "proxy_vs_true",
            "probe_gallery", "lost_outputs"]
# task difficulty across systems (arcnb.difficulty)
from .difficulty import (ability_intervals, accuracy_by_difficulty,  # noqa: E402
                         difficulty_vs_human, surprise_gallery)
__all__ += ["ability_intervals", "accuracy_by_difficulty", "difficulty_vs_human",
            "surprise_gallery"]
