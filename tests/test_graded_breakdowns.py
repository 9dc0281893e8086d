"""Graded breakdown columns, the lead-metric choice, LaTeX precision and CSV formula
neutralisation. Expected numbers are worked out by hand in the comments."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from arcnb.breakdown import breakdown, latex_table, lead_metric, to_csv
from arcnb.data import Dataset, Pair, Task
from arcnb.scoring import score


def _g(rows):
    return np.array(rows, dtype=np.int8)


@pytest.fixture
def results():
    """Three tasks with one 2x2 test output each (truth [[1,2],[3,4]]):
    a: solved;  b: right shape, 3 of 4 cells (a near miss at 0.75);  c: wrong shape 1x2
    whose overlap [1,2] matches the first row (partial credit 0.5 x 1 x 1 = 0.5)."""
    truth = _g([[1, 2], [3, 4]])
    tasks = {t: Task(t, (Pair(truth, truth),), (Pair(truth, truth),)) for t in "abc"}
    ds = Dataset("tiny", "v", tasks)
    sub = {"a": [{"attempt_1": truth.tolist()}],
           "b": [{"attempt_1": [[1, 2], [3, 0]]}],
           "c": [{"attempt_1": [[1, 2]]}]}
    return score(ds, sub)


def test_graded_columns_by_hand(results):
    t = breakdown(results, by={"a": "x", "b": "x", "c": "y"}, n_boot=200, near_miss=0.7)
    x = t.set_index("group").loc["x"]
    y = t.set_index("group").loc["y"]
    # x = {a, b}: shape accuracy 2/2; cell accuracy (1 + 0.75) / 2; partial credit same
    assert x["shape_accuracy"] == 1.0
    assert x["cell_accuracy"] == pytest.approx(0.875) and x["n_right_shape"] == 2
    assert x["partial_credit"] == pytest.approx(0.875)
    assert x["n_near_miss"] == 1 and x["pass@2"] == 0.5
    # y = {c}: wrong shape; cell accuracy NaN over 0 outputs; partial credit 0.5
    assert y["shape_accuracy"] == 0.0 and np.isnan(y["cell_accuracy"])
    assert y["n_right_shape"] == 0 and y["partial_credit"] == pytest.approx(0.5)
    assert np.isnan(y["cell_accuracy_ci_low"]) and y["n_near_miss"] == 0
    for m in ("pass@2", "shape_accuracy", "partial_credit", "cell_accuracy"):
        for _, row in t.iterrows():
            if np.isnan(row[m]):
                continue
            assert row[f"{m}_ci_low"] <= row[m] <= row[f"{m}_ci_high"], (m, row["group"])


def test_graded_intervals_contain_estimates_on_real_data(arc1_eval):
    from submissions import synthetic_submission

    res = score(arc1_eval, synthetic_submission(arc1_eval, "mixed", seed=3))
    for by in ("structural", "grid_size", "shape_change"):
        t = breakdown(res, by=by, n_boot=300)
        for m in ("shape_accuracy", "partial_credit", "cell_accuracy", "pass@2"):
            ok = t[m].notna()
            assert (t.loc[ok, f"{m}_ci_low"] <= t.loc[ok, m] + 1e-12).all(), (by, m)
            assert (t.loc[ok, m] <= t.loc[ok, f"{m}_ci_high"] + 1e-12).all(), (by, m)


def test_lead_metric():
    t = pd.DataFrame({"group": ["a", "b", "c", "d"], "pass@2": [0.0, 0.1, 0.0, 0.0]})
    assert lead_metric(t) == "partial_credit"
    t["pass@2"] = [0.2, 0.1, 0.3, 0.0]
    assert lead_metric(t) == "pass@2"
    assert lead_metric(pd.DataFrame({"group": ["a"], "pass@2": [0.5]})) == "pass@2"


def test_latex_never_rounds_a_small_score_away():
    df = pd.DataFrame({"K": [2, 2], "pass@2": [0.0025, 1 / 3]})
    body = latex_table(df)
    assert "0.0025" in body and "0.003 " not in body and "0.333" in body
    pct = latex_table(df, percent=True)
    assert "0.25" in pct and "33.33" in pct and r"pass@2 (\%)" in pct
    assert "0.003" in latex_table(df, float_format="{:.3f}")


def test_csv_neutralises_formulas(tmp_path):
    df = pd.DataFrame({"group": ["=cmd|'/c calc'!A1", "+x", "-y", "@z", "\tt", "plain"],
                       "pass@2": [0.5, -0.25, 0.0, 1.0, 0.0, 0.1]})
    p = to_csv(df, tmp_path / "t.csv")
    back = pd.read_csv(p)
    assert list(back["group"]) == ["'=cmd|'/c calc'!A1", "'+x", "'-y", "'@z", "'\tt", "plain"]
    assert back["pass@2"].tolist() == [0.5, -0.25, 0.0, 1.0, 0.0, 0.1]  # numbers untouched
