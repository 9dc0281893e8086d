"""arcnb.plot.breakdowns: bars per group, one panel per metric of a breakdown and the
distribution of cell accuracy, read back from the Axes (values, intervals, labels, the
stub of a bar of 0, the note when every value is 0), against tables and naive counts."""
from __future__ import annotations

import numpy as np
import pandas as pd

import _plot_runs as R
from arcnb import breakdown as B
from arcnb import plot as P

_texts, _gid, _raw_eval = R.texts, R.gid, R.raw_eval


def test_breakdown_bars_values_intervals_and_labels():
    df = pd.DataFrame({"group": ["small", "medium", "large", "empty"],
                       "n_tasks": [10, 5, 3, 0],
                       "pass@2": [0.5, 0.2, 1.0, np.nan],
                       "pass@2_ci_low": [0.3, 0.0, 1.0, np.nan],
                       "pass@2_ci_high": [0.7, 0.5, 1.0, np.nan]})
    ax = P.breakdown_bars(df)
    heights = [p.get_height() for p in ax.patches]
    assert heights == [0.5, 0.2, 1.0, 0.0]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["small (n=10)", "medium (n=5)", "large (n=3)", "empty (n=0)"]
    from matplotlib.container import BarContainer

    bars = next(c for c in ax.containers if isinstance(c, BarContainer))
    segs = bars.errorbar.lines[2][0].get_segments()
    spans = [(round(s[0][1], 6), round(s[1][1], 6)) for s in segs]
    assert spans[:3] == [(0.3, 0.7), (0.0, 0.5), (1.0, 1.0)]
    assert any(t.get_text() == "NaN" for t in ax.texts)
    # an interval reaching 1: the scale stops at 1, the view leaves room for its label
    assert ax.arcnb_limit == 1.0 and ax.get_ylim() == (0.0, 1.12)
    assert max(ax.get_yticks()) == 1.0 and ax.spines["left"].get_bounds() == (0, 1.0)
    ax = P.breakdown_bars(df.rename(columns={"group": "category", "pass@2": "acc"}),
                          value="acc", group="category", horizontal=True)
    assert [p.get_width() for p in ax.patches][:3] == [0.5, 0.2, 1.0]


def test_breakdown_bars_scale_label_and_stub_zero_bars():
    df = pd.DataFrame({"group": ["a", "b", "c"], "n_tasks": [400, 10, 5],
                       "pass@2": [0.0025, 0.0, np.nan],
                       "pass@2_ci_low": [0.0, 0.0, np.nan],
                       "pass@2_ci_high": [0.0075, 0.0, np.nan]})
    ax = P.breakdown_bars(df)
    assert ax.get_ylim() == (0.0, 0.01)
    assert [p.get_height() for p in ax.patches] == [0.0025, 0.0, 0.0]
    assert [t for t in _texts(ax) if t != "NaN"] == ["0.0025", "0"]
    assert "NaN" in _texts(ax)
    stubs = _gid(ax, "arcnb-zero-bar")
    assert len(stubs) == 1 and list(stubs[0].get_ydata()) == [0, 0]
    assert stubs[0].get_linewidth() >= 2
    from matplotlib.container import BarContainer

    bars = next(c for c in ax.containers if isinstance(c, BarContainer))
    segs = bars.errorbar.lines[2][0].get_segments()
    assert (segs[0][0][1], segs[0][1][1]) == (0.0, 0.0075)  # interval drawn, even from 0
    assert (segs[1][0][1], segs[1][1][1]) == (0.0, 0.0)     # a zero-width interval too
    assert not _gid(ax, "arcnb-all-zero")


def test_breakdown_bars_all_zero_says_so_and_count_axis(zero_run):
    t = B.breakdown(zero_run, "grid_size", n_boot=100)
    ax = P.breakdown_bars(t, value="pass@2")
    assert ax.get_ylim() == (0.0, 0.01)
    # every bar a stub on the baseline; the note says they are all 0 (no "0" per bar
    # crowding it)
    assert len(_gid(ax, "arcnb-zero-bar")) == len(t) and "0" not in _texts(ax)
    assert len(_gid(ax, "arcnb-all-zero")) == 1
    ax = P.breakdown_bars(t, value="n_right_shape")
    top = ax.get_ylim()[1]
    assert top >= t["n_right_shape"].max() and top >= 1
    assert [s for s in _texts(ax)] == [str(int(v)) for v in t["n_right_shape"]]


def test_breakdown_panels_lead_with_partial_credit_when_nothing_is_solved(zero_run, small_run):
    t = B.breakdown(zero_run, "structural", n_boot=100)
    fig = P.breakdown_panels(t)
    assert fig.arcnb_lead == "partial_credit"
    assert list(fig.arcnb_axes)[0] == "partial_credit"
    assert set(fig.arcnb_axes) == {"pass@2", "shape_accuracy", "cell_accuracy",
                                   "partial_credit", "n_near_miss"}
    pc = fig.arcnb_axes["partial_credit"]
    # each panel on its own scale: partial credit's limit covers its largest interval end
    assert pc.get_xlim()[1] >= np.nanmax(t["partial_credit_ci_high"])
    assert pc.arcnb_limit <= 1.0 and pc.get_xlim()[1] <= 1.12  # room for a label at 1
    labels = [s for s in _texts(pc) if s != "NaN"]
    assert labels == [P.value_label(v) for v in t["partial_credit"] if np.isfinite(v)]
    assert len(_gid(fig.arcnb_axes["pass@2"], "arcnb-all-zero")) == 1
    # with 1 of 400 tasks solved, the lead is still partial credit (fewer than 3 groups)
    t2 = B.breakdown(small_run, "structural", n_boot=100)
    n_solved_groups = int((t2["pass@2"] > 0).sum())
    assert n_solved_groups < 3
    assert P.breakdown_panels(t2).arcnb_lead == "partial_credit"
    t3 = B.breakdown(small_run, "grid_size", n_boot=100)
    p2 = P.breakdown_panels(t3, lead="pass@2").arcnb_axes["pass@2"]
    assert np.nanmax(t3["pass@2_ci_high"]) < p2.get_xlim()[1] < 0.1  # not [0, 1]
    assert "0.0097" in _texts(p2)  # 1 of the 103 tasks of 6-10


def test_cell_accuracy_histogram_matches_a_naive_count(zero_run):
    """Copy-the-input: each output whose input has the truth's shape has a cell accuracy
    of (cells equal to the input's) / cells, computed here from the raw grids."""
    raw = _raw_eval()
    naive = []
    for tid in zero_run.tasks["task_id"]:
        for p in raw[tid]["test"]:
            a, b = np.array(p["input"]), np.array(p["output"])
            if a.shape == b.shape:
                naive.append(float((a == b).mean()))
    ax = P.cell_accuracy_hist(zero_run, bins=10, near_miss=0.8)
    counts, _ = np.histogram(naive, bins=np.linspace(0, 1, 11))
    assert list(ax.arcnb_counts) == list(counts)
    assert [p.get_height() for p in ax.patches] == list(counts)
    assert sorted(_texts(ax)[:-1]) == sorted(str(c) for c in counts if c)  # + the threshold
    assert ax.get_title().startswith(f"{len(naive)} of {len(zero_run.outputs)} outputs")
    assert ax.get_ylim()[1] >= counts.max()
