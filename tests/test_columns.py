"""The column definitions (arcnb.columns) and the numbers every view shows from them.

Each number is checked against an independent naive computation over a real dataset:
one pass@2 (the headline's) wherever pass@2 is shown, one near-miss count wherever near
misses are counted, one name per number for shape accuracy.
"""
from __future__ import annotations

import ast
import json
import math
import re

import numpy as np
import pandas as pd
import pytest

import arcnb
from arcnb import breakdown as B
from arcnb import columns
from arcnb import plot as P
from arcnb.report import html as RH
from arcnb.report.references import reference_table
from arcnb.resources import notebook
from arcnb.runs import Run
from arcnb.scoring import score

N_TASKS = 80
DS_FIRST = N_TASKS  # the module's dataset (conftest.py's ds)


def _perturbed(truth: np.ndarray, n_wrong: int, rng) -> np.ndarray:
    """``truth`` with exactly ``n_wrong`` cells set to another colour."""
    g = truth.copy()
    idx = rng.choice(g.size, size=n_wrong, replace=False)
    flat = g.reshape(-1)
    flat[idx] = (flat[idx] + 1 + rng.integers(0, 9, size=n_wrong)) % 10
    return g


# ----------------------------------------------------------------- unbiased pass@2
@pytest.fixture(scope="module")
def sampled(ds):
    """Four sampled attempts per test output, c of them right (c = 0..3) at random
    positions; the wrong ones are the truth with 1-3 cells changed."""
    rng = np.random.default_rng(7)
    sub, counts = {}, {}
    for t in ds:
        rows = []
        for i, p in enumerate(t.test):
            c = int(rng.choice([0, 0, 1, 1, 2, 3]))
            right = set(rng.choice(4, size=c, replace=False).tolist())
            atts = [p.output if j in right else
                    _perturbed(p.output, int(rng.integers(1, 4)) if p.output.size > 3 else 1,
                               rng)
                    for j in range(4)]
            rows.append({f"attempt_{j + 1}": a.tolist() for j, a in enumerate(atts)})
            counts[(t.id, i)] = c
        sub[t.id] = rows
    return sub, counts


def _naive_unbiased(n: int, c: int, k: int) -> float:
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def test_unbiased_run_every_pass2_is_the_headline(ds, sampled, tmp_path):
    sub, counts = sampled
    res = score(ds, sub, estimator="unbiased", ks=(1, 2, 4))
    # independent reference: Chen et al.'s formula with exact binomials, per output,
    # then the task mean, then the mean over tasks
    per_task = {}
    for (tid, _), c in counts.items():
        per_task.setdefault(tid, []).append(_naive_unbiased(4, c, 2))
    naive = float(np.mean([np.mean(v) for v in per_task.values()]))
    naive_out = float(np.mean([_naive_unbiased(4, c, 2) for c in counts.values()]))
    naive_aon = float(np.mean([np.prod(v) for v in per_task.values()]))
    ranked = score(ds, sub, ks=(1, 2, 4)).summary["pass@2"]
    assert abs(ranked - naive) > 0.01  # the two estimators differ on this run

    assert res.summary["pass@2"] == pytest.approx(naive, abs=1e-12)
    ov = B.overall(res, ks=res.ks, n_boot=200)
    total = B.breakdown(res, "grid_size", ks=res.ks, n_boot=200, total=True)
    total = total[total["group"] == "(all)"]
    refs = reference_table([Run.from_results(res, label="model")], n_boot=200)
    for table in (ov, total, refs):
        assert table["pass@2"].iloc[0] == pytest.approx(naive, abs=1e-12)
        assert table["pass@2_per_output"].iloc[0] == pytest.approx(naive_out, abs=1e-12)
        assert table["pass@2_all_or_nothing"].iloc[0] == pytest.approx(naive_aon, abs=1e-12)
    # per task, the breakdown by task is each task's own mean
    by_task = B.breakdown(res, "task", ks=res.ks, n_boot=50).set_index("group")
    for tid, v in per_task.items():
        assert by_task.loc[tid, "pass@2"] == pytest.approx(float(np.mean(v)), abs=1e-12)
    # the report's tables, as the report's helpers render them
    for html in (RH.reference_html(refs), RH.breakdown_html(total),
                 RH.graded_table_html(ov, metrics=RH.BREAKDOWN_METRICS)):
        shown = re.findall(r"data-metric='pass@2' data-value='([^']+)'", html)
        assert shown and all(float(v) == pytest.approx(naive, abs=1e-12) for v in shown)


def test_an_undefined_pass_at_k_stays_undefined_in_breakdowns(ds, sampled):
    # pass@4 is undefined (NaN) for an output with fewer than 4 attempts: its task and
    # every table over it are NaN, as the headline
    sub, _ = sampled
    sub = json.loads(json.dumps(sub))
    first = next(iter(sub))
    sub[first][0] = {"attempt_1": sub[first][0]["attempt_1"]}
    res = score(ds, sub, estimator="unbiased", ks=(1, 2, 4))
    assert math.isnan(res.summary["pass@4"])
    ov = B.overall(res, ks=res.ks, n_boot=50)
    assert math.isnan(ov["pass@4"].iloc[0]) and math.isnan(ov["pass@4_per_output"].iloc[0])
    assert math.isnan(res.summary["pass@2"]) and math.isnan(ov["pass@2"].iloc[0])
    assert ov["pass@1"].iloc[0] == pytest.approx(res.summary["pass@1"], abs=1e-12)


# ----------------------------------------------------------------- near misses
@pytest.fixture(scope="module")
def graded(ds):
    """One attempt per output: the truth with 0 to 30% of its cells changed, so cell
    accuracies spread over [0.7, 1]."""
    rng = np.random.default_rng(3)
    sub = {}
    for t in ds:
        sub[t.id] = [{"attempt_1": _perturbed(p.output, int(round(p.output.size
                                                                  * rng.uniform(0, 0.3))),
                                              rng).tolist()} for p in t.test]
    return score(ds, sub)


def _param_default(name_: str, name: str):
    nb = json.loads(notebook(name_).read_text(encoding="utf-8"))
    cell = next(c for c in nb["cells"] if "parameters" in c["metadata"].get("tags", []))
    for node in ast.parse("".join(cell["source"])).body:
        if isinstance(node, ast.AnnAssign) and node.target.id == name:
            return ast.literal_eval(node.value)
    raise AssertionError(f"{name_} has no parameter {name}")


def test_one_near_miss_count_everywhere(ds, graded, tmp_path):
    res = graded
    # independent reference: not exact, and the share of equal cells >= the threshold
    naive = 0
    for t in ds:
        for i, p in enumerate(t.test):
            a = np.asarray(res.attempts(t.id, i)[0])
            if a.shape == p.output.shape and not np.array_equal(a, p.output):
                naive += float((a == p.output).mean()) >= 0.9
    assert columns.NEAR_MISS == 0.9  # the README's number
    # between 0.8 and 0.9 there are outputs: two thresholds would give two counts
    acc = res.outputs["cell_accuracy"]
    assert ((acc >= 0.8) & (acc < 0.9) & ~res.outputs["solved@2"]).sum() > 0
    # the API
    assert len(P.gallery_items(res, "near_miss")) == naive
    assert int(B.overall(res, n_boot=50)["n_near_miss"].iloc[0]) == naive
    assert int(B.breakdown(res, "grid_size", n_boot=50)["n_near_miss"].sum()) == naive
    # the report, with its notebook's default threshold: the near-miss list it writes
    # and the overview row
    thr = _param_default("report.ipynb", "near_miss")
    note = RH.cut_note(Run.from_results(res), "near_miss", 5, near_miss=thr, folder=tmp_path)
    assert f"of {naive} near misses" in note
    assert len(pd.read_csv(tmp_path / "near_miss_outputs.csv")) == naive
    assert int(B.overall(res, n_boot=50, near_miss=thr)["n_near_miss"].iloc[0]) == naive
    # the explorer, from the API and from its notebook's default
    assert len(arcnb.explore(res, select="near_miss").items) == naive
    thr = _param_default("explore.ipynb", "near_miss")
    assert len(arcnb.explore(res, select="near_miss", near_miss=thr).items) == naive


# ----------------------------------------------------------------- one name, one number
def test_shape_accuracy_per_task_and_per_output(ds, graded):
    res = graded
    # change some attempts' shapes: a task with several outputs gets a partial score
    sub = {t.id: [{"attempt_1": (p.output if (j + len(t.id)) % 3 else p.output[:-1] if
                                 p.output.shape[0] > 1 else np.zeros((2, 2), int)).tolist()}
                  for j, p in enumerate(t.test)] for t in ds}
    res = score(ds, sub)
    ok = {t.id: [np.asarray(sub[t.id][j]["attempt_1"]).shape == p.output.shape
                 for j, p in enumerate(t.test)] for t in ds}
    per_task = float(np.mean([np.mean(v) for v in ok.values()]))
    per_output = float(np.mean([x for v in ok.values() for x in v]))
    assert per_task != pytest.approx(per_output)
    assert res.summary["shape_accuracy"] == pytest.approx(per_task, abs=1e-12)
    assert res.summary["shape_accuracy_per_output"] == pytest.approx(per_output, abs=1e-12)
    ov = B.overall(res, n_boot=50)
    assert ov["shape_accuracy"].iloc[0] == pytest.approx(per_task, abs=1e-12)


def test_a_run_directory_written_with_the_old_shape_accuracy_still_opens(ds, graded,
                                                                         tmp_path):
    from arcnb.front import score_to_run_dir

    sub = {t.id: [{"attempt_1": p.output.tolist()} for p in t.test] for t in ds[:5]}
    src = tmp_path / "sub.json"
    src.write_text(json.dumps(sub))
    rd = tmp_path / "run"
    score_to_run_dir(str(src), ds[:5], rd)
    m = json.loads((rd / "metrics.json").read_text())
    m["shape_accuracy"] = m.pop("shape_accuracy_per_output")  # the older layout
    (rd / "metrics.json").write_text(json.dumps(m))
    run = Run.open(rd)
    assert run.summary["shape_accuracy_per_output"] == 1.0


# ----------------------------------------------------------------- the spec builds the tables
def test_the_tables_have_every_column_of_the_spec_in_order(graded):
    res = graded
    want = [n for n, _ in columns.expand(columns.OUTPUTS, res.ks)]
    assert list(res.outputs.columns) == want
    for name, c in columns.expand(columns.OUTPUTS, res.ks):
        if c.dtype != "object":
            assert str(res.outputs[name].dtype) == c.dtype, name
    assert list(res.tasks.columns)[:3] == ["task_id", "n_outputs", "pass@1"]
    assert {"n_missing_outputs", "all_solved@2", "pass@2_all_or_nothing"} <= set(res.tasks)
    # every metric the breakdown tables show is defined in the report's definitions table
    html = RH.definitions_html()
    for name, _ in columns.group_metrics(2):
        generic = name.replace("@2", "@K")
        assert f">{generic}<" in html, name
    assert columns.label("pass@2_per_output") == "pass@2 per output"
    assert columns.label("cell_accuracy") == "cell accuracy (right shape)"


def test_wrong_cells_against_a_naive_count(ds, graded):
    res = graded
    out = res.outputs.set_index(["task_id", "test_index"])
    for t in ds:
        for i, p in enumerate(t.test):
            a = np.asarray(res.attempts(t.id, i)[0])
            v = out.loc[(t.id, i), "n_wrong_cells"]
            if a.shape != p.output.shape:
                assert pd.isna(v)
            else:
                assert int(v) == int((a != p.output).sum())
