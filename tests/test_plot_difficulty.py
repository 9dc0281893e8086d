"""The figures of task difficulty across systems (arcnb.plot.difficulty): what each
draws, read back from the Axes, and no text problem (arcnb.plot.check_figure)."""

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from arcnb import plot as P  # noqa: E402
from arcnb.compare import compare  # noqa: E402
from arcnb.data import load_dataset  # noqa: E402
from arcnb.plot.check import check_figure  # noqa: E402
from arcnb.scoring import score  # noqa: E402
from submissions import synthetic_submission  # noqa: E402


@pytest.fixture(scope="module")
def cmp():
    ds = load_dataset("arc-agi-1:evaluation")
    ds = ds.select(ds.task_ids[:40])
    res = [score(ds, synthetic_submission(ds, k, s)) for k, s in
           (("mixed", 0), ("mixed", 1), ("truth", 0), ("copy", 0))]
    return compare(res, labels=["mixed a", "mixed b", "the truth", "copy"], n_boot=20,
                   taxonomy=None)


def test_ability_intervals_lowest_first(cmp):
    d = cmp.difficulty
    fig, ax = plt.subplots(figsize=(4, 3), layout="constrained")
    assert P.ability_intervals(d.abilities, ax=ax) is ax
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == list(d.abilities.sort_values("ability")["system"])
    xs = ax.lines[0].get_xdata()
    assert list(xs) == sorted(d.abilities["ability"])
    assert check_figure(fig) == []
    plt.close(fig)


def test_accuracy_curves_one_per_system(cmp):
    d = cmp.difficulty
    fig, ax = plt.subplots(figsize=(4, 3), layout="constrained")
    assert P.accuracy_by_difficulty(d.curves, ax=ax) is ax
    assert len(ax.lines) == 4
    truth = [ln for ln in ax.lines if ln.get_label() == "the truth"][0]
    assert np.all(truth.get_ydata() == 1.0)  # the truth solves every bin
    # a plain loop: the share of one system's outputs solved per bin
    out = cmp.runs[0].results.outputs.merge(d.outputs[["task_id", "test_index", "bin"]])
    mine = [ln for ln in ax.lines if ln.get_label() == "mixed a"][0].get_ydata()
    bins = d.curves[d.curves["system"] == "mixed a"].sort_values("bin_index")["bin"]
    expected = [out.loc[out["bin"] == b, "solved@2"].mean() for b in bins]
    np.testing.assert_allclose(mine, expected)
    assert check_figure(fig) == []
    plt.close(fig)


def test_human_scatter_and_gallery(cmp):
    d = cmp.difficulty
    human = d.tasks.assign(solve_rate=np.linspace(0, 1, len(d.tasks)))
    fig, ax = plt.subplots(figsize=(4, 3), layout="constrained")
    assert P.difficulty_vs_human(human, ax=ax) is ax
    assert check_figure(fig) == []
    plt.close(fig)
    res = cmp.runs[0].results
    rows = res.outputs[~res.outputs["solved@2"]].iloc[[3, 0, 2]]
    g = P.surprise_gallery(res, rows, title="surprises")
    drawn = list(zip(g.arcnb_items["task_id"], g.arcnb_items["test_index"]))
    assert drawn == list(zip(rows["task_id"], rows["test_index"]))  # in the order given
    plt.close(g)
    empty = P.surprise_gallery(res, pd.DataFrame({"task_id": [], "test_index": []}))
    plt.close(empty)
