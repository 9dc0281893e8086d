"""arcnb.plot.charts: the scale and labels every result chart shares and the colour
charts; every chart scales to its data and labels its values, read from the Axes.

The runs are ``tests/_plot_runs.py``'s: the bundled example predictions (pass@2 =
0.0025) and copy-the-input on a 20-task slice (pass@2 = 0). The charts of
``breakdowns.py``, ``scores.py`` and ``cost.py`` are tested in their own files. Axis
limits, value labels, zero bars, intervals and the "every value is 0" note are read back
from the matplotlib Axes, not judged by eye.
"""
from __future__ import annotations

import numpy as np

import _plot_runs as R
from arcnb import breakdown as B
from arcnb import plot as P


_texts, _gid = R.texts, R.gid


# ------------------------------------------------------------------ the helpers, by hand
def test_value_label_never_rounds_a_small_score_away():
    assert P.value_label(0.0025) == "0.0025"
    assert P.value_label(0.0) == "0"
    assert P.value_label(0.013) == "0.013"
    assert P.value_label(0.5) == "0.50"
    assert P.value_label(1.0) == "1.00"
    assert P.value_label(float("nan")) == "NaN"
    assert P.value_label(162, count=True) == "162"


def test_value_limit_by_hand():
    assert P.value_limit([0.0025], [0.0075]) == 0.01       # 0.0075 x 1.15 = 0.0086 -> 0.01
    assert P.value_limit([0.0, 0.0]) == 0.01                # the floor
    assert P.value_limit([0.6], [0.65]) == 0.8              # 0.7475 -> 0.8
    assert P.value_limit([1.0]) == 1.0                      # never above 1 for a fraction
    assert P.value_limit([0.04]) == 0.05                    # 0.046 -> 0.05
    assert P.value_limit([162], count=True) == 200          # 186.3 -> 200
    assert P.value_limit([0], count=True) == 1
    assert P.value_limit([np.nan]) == 0.01






# ------------------------------------------------------------------ colours
def test_color_accuracy_labels_every_bar(small_run, zero_run):
    acc = B.color_accuracy(small_run, n_boot=100)
    ax = P.color_accuracy(acc)
    assert ax.get_ylim()[1] >= np.nanmax(acc["ci_high"])
    shown = [s for s in _texts(ax) if s != "NaN"]
    assert shown == [P.value_label(v) for v in acc["accuracy"] if np.isfinite(v)]




