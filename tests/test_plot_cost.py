"""arcnb.plot.cost: score against cost, cost by outcome and the leaderboard, read back
from the Axes against the costs of a harness run summed by hand."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import _plot_runs as R
from arcnb import breakdown as B
from arcnb import plot as P
from arcnb.scoring import score

_texts, _gid, _raw_eval = R.texts, R.gid, R.raw_eval


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


def test_leaderboard_marks_the_pareto_front_and_a_free_run():
    table = pd.DataFrame({"run": ["cheap", "mid", "dear", "worse", "free"],
                          "cost_per_task": [0.01, 0.1, 1.0, 0.5, 0.0],
                          "pass@2": [0.1, 0.3, 0.5, 0.2, 0.05],
                          "pass@2_ci_low": [0.05, 0.2, 0.4, 0.1, 0.0],
                          "pass@2_ci_high": [0.15, 0.4, 0.6, 0.3, 0.1]})
    ax = P.leaderboard(table)
    assert ax.get_xscale() == "log"
    drawn = {name: (x, y) for name, x, y in ax.arcnb_points}
    assert drawn["free"][0] == pytest.approx(0.001)  # a decade below the cheapest, "$0"
    assert any(t.get_text() == "free ($0)" for t in ax.texts)
    front = [ln for ln in ax.lines if ln.get_gid() == "arcnb-pareto-front"]
    # by hand: a run is on the front when no other is as cheap and scores higher
    on = [n for n, c, s in zip(table["run"], table["cost_per_task"], table["pass@2"])
          if not any(c2 <= c and s2 > s for c2, s2 in zip(table["cost_per_task"], table["pass@2"]))]
    assert sorted(on) == ["cheap", "dear", "free", "mid"]
    assert len(front) == 1 and len(front[0].get_xdata()) == len(on)
    assert ax.get_title() == f"5 runs, {len(on)} on the Pareto front"

