"""arcnb.plot.scores: pass@K curves and two runs compared task by task, read back from
the Axes against naive counts."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import _plot_runs as R
from arcnb import plot as P
from arcnb.scoring import score

_texts, _gid, _raw_eval = R.texts, R.gid, R.raw_eval


@pytest.fixture(scope="module")
def small_ds(arc1_eval):
    return R.small_ds(arc1_eval)


@pytest.fixture(scope="module")
def mixed_results(small_ds):
    return R.mixed_results(small_ds)


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


def test_pass_at_k_curve_matches_a_naive_count(mixed_results):
    ax = P.pass_at_k(mixed_results)
    x, y = ax.lines[0].get_data()
    out = mixed_results.outputs
    for K, v in zip(x, y):
        per_task = {}
        for tid, fc in zip(out["task_id"], out["first_correct"]):
            per_task.setdefault(tid, []).append(0 if pd.isna(fc) else int(fc <= K))
        naive = np.mean([np.mean(v_) for v_ in per_task.values()])
        assert v == pytest.approx(naive)
    assert y[1] == pytest.approx(mixed_results.summary["pass@2"])
    tbl = pd.DataFrame({"K": [1, 2, 1, 2], "pass@K": [0.1, 0.2, 0.3, 0.4],
                        "run": ["a", "a", "b", "b"]})
    ax = P.pass_at_k(tbl)
    assert len(ax.lines) == 2


def test_compare_two_runs(small_ds, mixed_results):
    other = score(small_ds, {t.id: [{"attempt_1": p.output.tolist()} for p in t.test]
                             for t in small_ds}, n_boot=20)
    ax = P.compare(mixed_results, other, kind="bars", labels=("A", "B"))
    a = mixed_results.tasks.set_index("task_id")["pass@2"]
    b = other.tasks.set_index("task_id")["pass@2"]
    naive = [sum(a[t] > b[t] for t in a.index), sum(a[t] == b[t] for t in a.index),
             sum(a[t] < b[t] for t in a.index)]
    assert [int(p.get_height()) for p in ax.patches] == naive
    ax = P.compare(mixed_results, other, metric="cell_accuracy")
    assert ax.collections  # a scatter
    ax = P.compare(mixed_results, other, kind="paired", labels=("A", "B"), max_tasks=5)
    differ = sorted((t for t in a.index if a[t] != b[t]), key=lambda t: (-abs(b[t] - a[t]), t))
    assert [t.get_text() for t in ax.get_yticklabels()] == differ[:5]
    assert [p.get_width() for p in ax.patches[:5]] == [a[t] for t in differ[:5]]
    assert [p.get_width() for p in ax.patches[5:]] == [b[t] for t in differ[:5]]
    with pytest.raises(ValueError, match="share no task"):
        P.compare(mixed_results.tasks.assign(task_id="zz"), other)
