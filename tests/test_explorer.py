"""arcnb.explore driven through its API, on real ARC-AGI-1 evaluation tasks.

Submissions are crafted per output (right at attempt 1, right at attempt 2, one cell
off, one row too many, malformed, missing, ...). Every expected selection is computed
twice, independently of the explorer: from the raw submission JSON and the truth
grids with plain Python loops, and from the columns of ``Results.outputs``. The view
is checked pixel by pixel: each drawn grid is read back from the composed image's
cell centres and compared with the raw grids.
"""
from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import arcnb
from arcnb.data import load_dataset, load_task_ids
from arcnb.explorer import SELECTIONS, ExploreError

ROOT = Path(__file__).resolve().parents[1]
N_TASKS = 40
DS_FIRST = N_TASKS  # the module's dataset (conftest.py's ds)


# ------------------------------------------------------------------ fixtures
def _case_attempts(case: int, inp: np.ndarray, truth: np.ndarray) -> list:
    """The attempts of one output for a crafted case (lists, as in a JSON file)."""
    t = truth.tolist()
    off = truth.copy()
    off[0, 0] = (off[0, 0] + 1) % 10
    if case == 0:
        return [t, inp.tolist()]                                 # right at attempt 1
    if case == 1:
        return [inp.tolist(), t]                                 # right at attempt 2
    if case == 2:
        return [off.tolist(), off.tolist()]                      # one cell wrong
    if case == 3:
        return [t + [t[-1]], t + [t[-1]]]                        # one row too many
    if case == 4:
        return [None, np.zeros_like(truth).tolist()]             # attempt 1 malformed
    if case == 5:
        return ["not a grid", [[1, 2], [3]]]                     # both malformed
    return [np.zeros_like(truth).tolist(), np.full_like(truth, 5).tolist()]


def crafted(ds, shift: int = 0, drop_every: int = 9) -> dict:
    """A submission where output number r (in dataset order) follows case (r + shift) % 7;
    every ``drop_every``-th task is missing, and 12997ef3 lacks its second output."""
    sub, r = {}, 0
    for n, task in enumerate(ds):
        outs = []
        for p in task.test:
            atts = _case_attempts((r + shift) % 7, p.input, p.output)
            outs.append({f"attempt_{j + 1}": a for j, a in enumerate(atts)})
            r += 1
        if drop_every and n % drop_every == drop_every - 1:
            continue
        if task.id == "12997ef3":
            outs = outs[:1]
        sub[task.id] = outs
    return sub


def _valid(a) -> np.ndarray | None:
    """A naive validity check: a non-empty rectangular list of lists of ints 0-9, at
    most 30 x 30."""
    if not isinstance(a, list) or not a or not all(isinstance(r, list) and r for r in a):
        return None
    if len({len(r) for r in a}) != 1 or len(a) > 30 or len(a[0]) > 30:
        return None
    if not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 9
               for r in a for v in r):
        return None
    return np.array(a)


def naive_rows(ds, sub: dict, k: int = 2) -> list[dict]:
    """Per output, from the raw JSON and the truths only."""
    rows = []
    for task in ds:
        entries = sub.get(task.id, [])
        for i, p in enumerate(task.test):
            entry = entries[i] if i < len(entries) else None
            raw = [] if entry is None else [entry[key] for key in sorted(
                entry, key=lambda s: int(s.split("_")[1]))]
            grids = [_valid(a) for a in raw]
            first_k = grids[:k]
            solved = any(g is not None and g.shape == p.output.shape and (g == p.output).all()
                         for g in first_k)
            same = [float((g == p.output).mean()) for g in first_k
                    if g is not None and g.shape == p.output.shape]
            rows.append({"key": (task.id, i), "solved": solved, "missing": entry is None,
                         "acc": max(same) if same else None, "any_invalid":
                         any(g is None for g in grids), "any_valid":
                         any(g is not None for g in grids), "right_shape": bool(same),
                         "grids": grids})
    return rows


def naive_selection(rows, select: str, thr: float = 0.8) -> list:
    keep = {
        "all": lambda r: True,
        "solved": lambda r: r["solved"],
        "failed": lambda r: not r["solved"],
        "near_miss": lambda r: not r["solved"] and r["acc"] is not None and r["acc"] >= thr,
        "wrong_shape": lambda r: r["any_valid"] and not r["right_shape"],
        "invalid_or_missing": lambda r: r["missing"] or r["any_invalid"],
    }[select]
    return [r["key"] for r in rows if keep(r)]


def table_selection(res, select: str, thr: float = 0.8) -> list:
    """The same selections written on Results.outputs' columns."""
    o = res.outputs
    m = {
        "all": np.ones(len(o), bool),
        "solved": o["solved@2"].to_numpy(bool),
        "failed": ~o["solved@2"].to_numpy(bool),
        "near_miss": (~o["solved@2"] & (o["cell_accuracy"] >= thr)).to_numpy(bool),
        "wrong_shape": ((o["n_attempts"] > o["n_invalid_attempts"]) & ~o["shape_correct"])
        .to_numpy(bool),
        "invalid_or_missing": (o["missing"] | (o["n_invalid_attempts"] > 0)).to_numpy(bool),
    }[select]
    return list(zip(o["task_id"][m], o["test_index"][m].astype(int)))


def keys(df) -> list:
    return list(zip(df["task_id"], df["test_index"].astype(int)))


@pytest.fixture(scope="module")
def sub_a(ds):
    return crafted(ds)


@pytest.fixture(scope="module")
def sub_b(ds):
    return crafted(ds, shift=3, drop_every=0)


@pytest.fixture(scope="module")
def runs(ds, sub_a, sub_b, tmp_path_factory):
    from arcnb.front import score_to_run_dir

    tmp = tmp_path_factory.mktemp("explore-runs")
    dirs = []
    for name, sub in (("alpha", sub_a), ("beta", sub_b)):
        (tmp / f"{name}.json").write_text(json.dumps(sub))
        score_to_run_dir(tmp / f"{name}.json", "arc-agi-1:evaluation", tmp / name,
                         tasks=ds.task_ids)
        dirs.append(tmp / name)
    return dirs


# ------------------------------------------------------------------ import and notebook
@pytest.mark.slow  # starts another process
def test_import_arcnb_stays_light_and_explore_is_lazy():
    code = ("import sys, arcnb; heavy = [m for m in ('ipywidgets', 'matplotlib', 'PIL') "
            "if m in sys.modules]; assert heavy == [], heavy; "
            "assert 'explore' in dir(arcnb); f = arcnb.explore; "
            "from arcnb.explorer import explore; assert f is explore; "
            "assert 'ipywidgets' not in sys.modules; print('ok')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=str(ROOT))
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


@pytest.mark.slow  # runs a notebook in a Jupyter kernel
def test_explore_notebook_has_its_parameters():
    # the parameter cell's form (typed, commented literals) is checked with the other
    # notebooks in test_report_notebooks.py; here: the names the browser's cells use
    import papermill as pm

    params = pm.inspect_notebook(str(ROOT / "notebooks" / "explore.ipynb"))
    assert {"run", "selection", "taxonomy", "compare"} <= set(params)


def test_explore_notebook_builds_the_browser_on_a_compared_pair(runs):
    """The notebook's own cells in this process (no display, no kernel: it executes in a
    real kernel in JupyterLab in tests/test_explore_browser.py): the browser on two runs,
    on the outputs they disagree on."""
    from _notebook_cells import notebook_cells_here

    shown = notebook_cells_here("explore", {"run": str(runs[0]), "compare": [str(runs[1])],
                                            "selection": "disagree"})
    bundle = shown[0]._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "runs disagree" in bundle["text/plain"]
    assert len(shown[1]) == min(20, len(shown[0].items))  # the table cell: the first rows


# ------------------------------------------------------------------ selections
@pytest.mark.parametrize("select", ["all", "solved", "failed", "near_miss", "wrong_shape",
                                    "invalid_or_missing"])
def test_selections_give_the_rows_of_the_results_table(ds, sub_a, select):
    res = arcnb.score(ds, sub_a)
    ex = arcnb.explore(res, select=select)
    got = keys(ex.items)
    assert got == naive_selection(naive_rows(ds, sub_a), select)
    assert got == table_selection(res, select)
    assert len(got) > 0
    assert list(ex.items.columns[:len(res.outputs.columns)]) == list(res.outputs.columns)


def test_near_miss_threshold_moves_the_selection(ds, sub_a):
    res = arcnb.score(ds, sub_a)
    ex = arcnb.explore(res, select="near_miss", near_miss=0.95)
    rows = naive_rows(ds, sub_a)
    assert keys(ex.items) == naive_selection(rows, "near_miss", 0.95)
    ex.near_miss = 0.2
    assert keys(ex.items) == naive_selection(rows, "near_miss", 0.2)
    assert len(naive_selection(rows, "near_miss", 0.2)) > len(naive_selection(rows, "near_miss",
                                                                             0.95))
    with pytest.raises(ExploreError):
        ex.near_miss = 1.5


def test_a_run_directory_opens_with_the_same_rows(ds, sub_a, runs):
    ex = arcnb.explore(str(runs[0]), select="failed")
    assert ex.labels == ["alpha"]
    assert keys(ex.items) == naive_selection(naive_rows(ds, sub_a), "failed")


def test_a_predictions_file_needs_its_dataset(runs, ds, sub_a, tmp_path):
    path = tmp_path / "alpha.json"
    path.write_text(json.dumps(sub_a))
    with pytest.raises(ExploreError, match="dataset="):
        arcnb.explore(path)
    ex = arcnb.explore(path, dataset="arc-agi-1:evaluation", select="solved")
    # scored on the whole dataset: the 360 tasks absent from the file are missing
    assert ex.results.summary["n_tasks"] == 400
    assert keys(ex.items) == naive_selection(naive_rows(ds, sub_a), "solved")


def test_unknown_selection_and_disagree_without_compare(ds, sub_a):
    ex = arcnb.explore(arcnb.score(ds, sub_a))
    with pytest.raises(ExploreError, match="unknown selection"):
        ex.select = "broken"
    with pytest.raises(ExploreError, match="compare="):
        ex.select = "disagree"
    assert set(SELECTIONS) == {"all", "solved", "failed", "near_miss", "wrong_shape",
                               "invalid_or_missing", "disagree"}


# ------------------------------------------------------------------ categories
def test_structural_category_filter(ds, sub_a):
    ex = arcnb.explore(arcnb.score(ds, sub_a), category="same_shape", select="failed")
    same = {t.id for t in ds if all(p.input.shape == p.output.shape for p in t.train)}
    want = [k for k in naive_selection(naive_rows(ds, sub_a), "failed") if k[0] in same]
    assert keys(ex.items) == want and want
    assert "same_shape" in ex.categories
    with pytest.raises(ExploreError, match="categories"):
        ex.category = "no such category"


def test_user_csv_taxonomy_and_uncategorized(ds, sub_a, tmp_path):
    ids = ds.task_ids
    csv = tmp_path / "tags.csv"
    csv.write_text("task_id,category\n" + "".join(
        f"{t},{'even' if n % 2 == 0 else 'odd'}\n" for n, t in enumerate(ids[:30]))
        + f"{ids[0]},special\n")
    ex = arcnb.explore(arcnb.score(ds, sub_a), taxonomy=str(csv), category="odd")
    odd = {t for n, t in enumerate(ids[:30]) if n % 2 == 1}
    assert keys(ex.items) == [k for k in naive_selection(naive_rows(ds, sub_a), "all")
                              if k[0] in odd]
    ex.category = ["special", "uncategorized"]
    assert sorted({k[0] for k in keys(ex.items)}) == sorted([ids[0]] + ids[30:])
    ex.category = None
    assert len(ex.items) == sum(len(t.test) for t in ds)


def test_folder_groups_on_a_dataset_alone(ds, tmp_path):
    for n, t in enumerate(ds.task_ids[:6]):
        group = tmp_path / ("left" if n < 4 else "right")
        group.mkdir(exist_ok=True)
        task = ds[t]
        raw = {"train": [{"input": p.input.tolist(), "output": p.output.tolist()}
                         for p in task.train],
               "test": [{"input": p.input.tolist(), "output": p.output.tolist()}
                        for p in task.test]}
        (group / f"{t}.json").write_text(json.dumps(raw))
    folder = load_dataset(tmp_path)
    ex = arcnb.explore(folder, taxonomy="folder", category="right")
    assert sorted({k[0] for k in keys(ex.items)}) == sorted(ds.task_ids[4:6])
    assert ex.results is None
    with pytest.raises(ExploreError, match="needs predictions"):
        ex.select = "failed"
    kinds = [p["kind"] for p in ex.layout()]
    assert "attempt" not in kinds and kinds.count("demo_input") == len(ds[ex.current[0]].train)


# ------------------------------------------------------------------ navigation
def test_go_by_index_and_by_task_id(ds, sub_a):
    ex = arcnb.explore(arcnb.score(ds, sub_a), select="failed")
    items = keys(ex.items)
    ex.go(3)
    assert ex.current == items[3] and ex.position == 3
    ex.go(-1)
    assert ex.current == items[-1]
    with pytest.raises(ExploreError, match="outside"):
        ex.go(len(items))
    ex.next()
    assert ex.current == items[0]  # wraps around
    ex.prev()
    assert ex.current == items[-1]
    tid = items[5][0]
    ex.go(tid)
    assert ex.current == items[5]
    ex.go(f"{tid}.json")
    assert ex.current == items[5]
    ex.go(("12997ef3", 1))
    assert ex.current == ("12997ef3", 1)
    with pytest.raises(ExploreError, match="no test output 5"):
        ex.go(("12997ef3", 5))
    with pytest.raises(ExploreError, match="no task"):
        ex.go("zzzzzzzz")
    with pytest.raises(ExploreError, match="start with"):
        ex.go("0")


def test_go_to_a_task_outside_the_selection_widens_it(ds, sub_a):
    ex = arcnb.explore(arcnb.score(ds, sub_a), select="solved")
    failed_task = naive_selection(naive_rows(ds, sub_a), "failed")[0][0]
    assert failed_task not in {k[0] for k in keys(ex.items)}
    ex.go(failed_task)
    assert ex.select == "all" and ex.current[0] == failed_task
    assert "not in the selection" in ex.message
    prefix = failed_task[:6]
    if sum(t.startswith(prefix) for t in ds.task_ids) == 1:
        ex.go(prefix)
        assert ex.current[0] == failed_task


def test_changing_the_filter_keeps_the_current_output_when_it_stays(ds, sub_a):
    ex = arcnb.explore(arcnb.score(ds, sub_a), select="all")
    target = naive_selection(naive_rows(ds, sub_a), "failed")[4]
    ex.go(target)
    ex.select = "failed"
    assert ex.current == target
    ex.select = "solved"
    assert ex.current == keys(ex.items)[0]


# ------------------------------------------------------------------ the view
def _decode(img: np.ndarray, place: dict, shape) -> np.ndarray:
    """Read a grid back from its tile: the colour at each cell centre -> palette index."""
    from arcnb.plot import PALETTE_RGB

    h, w = shape
    c = (place["w"] - 1) // w
    assert (place["h"] - 1) == h * c, (place, shape)
    ys = place["y"] + np.arange(h) * c + c // 2 + 1
    xs = place["x"] + np.arange(w) * c + c // 2 + 1
    px = img[ys[:, None], xs[None, :]].astype(int)
    dist = ((px[:, :, None, :] - PALETTE_RGB[None, None].astype(int)) ** 2).sum(-1)
    assert dist.min(-1).max() == 0, "a cell centre is not an exact palette colour"
    return dist.argmin(-1)


def _diff_cells(img, place, shape) -> np.ndarray:
    from arcnb.plot import DIFF_WRONG_COLOR

    h, w = shape
    c = (place["w"] - 1) // w
    ys = place["y"] + np.arange(h) * c + c // 2 + 1
    xs = place["x"] + np.arange(w) * c + c // 2 + 1
    red = np.array([int(DIFF_WRONG_COLOR[i:i + 2], 16) for i in (1, 3, 5)])
    return (img[ys[:, None], xs[None, :]] == red).all(-1)


def test_the_view_draws_the_whole_task_truth_attempt_and_difference(ds, sub_a):
    ex = arcnb.explore(arcnb.score(ds, sub_a), select="near_miss")
    tid, ti = ex.current
    task = ds[tid]
    img, places = ex.render(), ex.layout()
    by_kind = {}
    for p in places:
        by_kind.setdefault(p["kind"], []).append(p)
    assert len(by_kind["demo_input"]) == len(by_kind["demo_output"]) == len(task.train)
    for p, pair in zip(by_kind["demo_input"], task.train):
        assert np.array_equal(_decode(img, p, pair.input.shape), pair.input)
    for p, pair in zip(by_kind["demo_output"], task.train):
        assert np.array_equal(_decode(img, p, pair.output.shape), pair.output)
    truth = task.test[ti].output
    assert np.array_equal(_decode(img, by_kind["test_input"][0], task.test[ti].input.shape),
                          task.test[ti].input)
    assert np.array_equal(_decode(img, by_kind["truth"][0], truth.shape), truth)
    attempt = np.array(sub_a[tid][ti]["attempt_1"])  # the near-miss case: one cell off
    assert np.array_equal(_decode(img, by_kind["attempt"][0], truth.shape), attempt)
    assert np.array_equal(_diff_cells(img, by_kind["difference"][0], truth.shape),
                          attempt != truth)
    assert "1 of" in by_kind["difference"][0]["title"] and "cells wrong" in \
        by_kind["difference"][0]["title"]
    # every panel shares one cell size
    sizes = {(p["w"] - 1) // p["grid"].shape[1] for p in places if p["grid"] is not None}
    assert len(sizes) == 1


def test_shape_mismatch_missing_and_invalid_are_said_in_words(ds, sub_a):
    res = arcnb.score(ds, sub_a)
    rows = naive_rows(ds, sub_a)
    ex = arcnb.explore(res)
    wrong = next(r for r in rows if r["any_valid"] and not r["right_shape"])
    ex.go(wrong["key"])
    truth = ds[wrong["key"][0]].test[wrong["key"][1]].output
    g = wrong["grids"][0]
    sentence = (f"shape mismatch: truth {truth.shape[0]}x{truth.shape[1]}, attempt 1 "
                f"{g.shape[0]}x{g.shape[1]}")
    assert sentence in ex.info_html()
    missing = next(r for r in rows if r["missing"])
    ex.go(missing["key"])
    assert "no attempt: this output is missing from the predictions" in ex.info_html()
    assert any("no attempt" in p["title"] for p in ex.layout())
    invalid = next(r for r in rows if not r["missing"] and r["grids"][0] is None
                   and r["any_valid"])
    ex.go(invalid["key"])
    ex.attempt = 1
    assert "attempt 1 is not a valid grid" in ex.info_html()
    ex.attempt = 2
    assert "attempt 2" in [p for p in ex.layout() if p["kind"] == "attempt"][0]["title"]
    with pytest.raises(ExploreError):
        ex.attempt = 0


def test_numbers_come_from_the_results_row(ds, sub_a):
    res = arcnb.score(ds, sub_a)
    ex = arcnb.explore(res, select="near_miss")
    row = res.outputs.set_index(["task_id", "test_index"]).loc[ex.current]
    info = ex.info_html()
    assert f"<td>{row['cell_accuracy']:.3f}</td>" in info
    assert f"<td>{row['partial_credit']:.3f}</td>" in info
    assert "solved@1" in info and "solved@2" in info


def test_values_toggle_writes_digits(ds, sub_a):
    ex = arcnb.explore(arcnb.score(ds, sub_a), cell=20)
    plain = ex.render()
    ex.values = True
    written = ex.render()
    assert plain.shape == written.shape and (plain != written).any()
    ex.values = False
    assert np.array_equal(ex.render(), plain)


# ------------------------------------------------------------------ compare
def test_compare_two_runs_whose_solved_sets_differ(ds, sub_a, sub_b, runs):
    ex = arcnb.explore(str(runs[0]), compare=str(runs[1]), select="disagree")
    ra, rb = naive_rows(ds, sub_a), naive_rows(ds, sub_b)
    assert [r["key"] for r in ra] == [r["key"] for r in rb]
    want = [a["key"] for a, b in zip(ra, rb) if a["solved"] != b["solved"]]
    only_b = [a["key"] for a, b in zip(ra, rb) if b["solved"] and not a["solved"]]
    assert only_b and len(want) > len(only_b)
    assert keys(ex.items) == want
    ex.go(only_b[0])
    info = ex.info_html()
    assert "solved@2 by: beta" in info
    tid, ti = ex.current
    img = ex.render()
    attempts = {p["run"]: p for p in ex.layout() if p["kind"] == "attempt"}
    assert set(attempts) == {"alpha", "beta"}
    truth = ds[tid].test[ti].output
    b_grid = next(g for g in (_valid(sub_b[tid][ti][k]) for k in ("attempt_1", "attempt_2"))
                  if g is not None and g.shape == truth.shape and (g == truth).all())
    assert np.array_equal(_decode(img, attempts["beta"], truth.shape), b_grid)
    assert "✓ right" in attempts["beta"]["title"]
    assert "✗ wrong" in attempts["alpha"]["title"]
    assert ex.items["solved_by"].tolist() == [
        ", ".join(n for n, r in (("alpha", a), ("beta", b)) if r["solved"])
        for a, b in zip(ra, rb) if a["solved"] != b["solved"]]


def test_compare_refuses_other_tasks(ds, sub_a, runs):
    other = arcnb.score(ds.select(ds.task_ids[:10]), sub_a)
    with pytest.raises(ExploreError, match="same tasks"):
        arcnb.explore(str(runs[0]), compare=other)


def test_compare_accepts_results_and_labels(ds, sub_a, sub_b):
    a, b = arcnb.score(ds, sub_a), arcnb.score(ds, sub_b)
    ex = arcnb.explore(a, compare=[b, b], labels=["A", "B", "B"], select="disagree")
    assert ex.labels == ["A", "B", "B#2"]
    assert "solved@2 (B#2)" in ex.items.columns


# ------------------------------------------------------------------ run files
def test_votes_from_a_checkpoint_run_are_shown(ds, tmp_path):
    import pandas as pd

    from arcnb.evaluate import evaluate

    out = tmp_path / "copy"
    evaluate("copy-input", ds.select(ds.task_ids[:3]), out, progress=False)
    ex = arcnb.explore(str(out))
    csv = pd.read_csv(out / "results.csv", dtype={"task_id": str})
    row = csv[(csv["task_id"] == ex.current[0]) & (csv["test_index"] == ex.current[1])].iloc[0]
    info = ex.info_html()
    assert "votes_attempt_1" in info and "confidence_attempt_1" in info
    assert f"<td>{row['votes_attempt_1']}</td>" in info


def test_costs_from_harness_metadata_are_shown(ds, tmp_path):
    task = ds[ds.task_ids[0]]
    sub = {task.id: [{"attempt_1": {"answer": task.test[0].output.tolist(),
                                    "metadata": {"cost": {"total_cost": 0.0125}}},
                      "attempt_2": {"answer": task.test[0].input.tolist(),
                                    "metadata": {"cost": {"total_cost": 0.5}}}}]}
    path = tmp_path / "harness.json"
    path.write_text(json.dumps(sub))
    ex = arcnb.explore(arcnb.score(ds.select([task.id]), str(path)))
    info = ex.info_html()
    assert "cost_attempt_1" in info and "<td>0.013</td>" in info and "<td>0.500</td>" in info


# ------------------------------------------------------------------ saving
def test_gallery_and_saved_selection(ds, sub_a, tmp_path):
    ex = arcnb.explore(arcnb.score(ds, sub_a), select="near_miss")
    fig = ex.gallery()
    assert keys(fig.arcnb_items) == keys(ex.items)
    path = ex.save_selection(tmp_path / "near.txt")
    assert load_task_ids(path) == list(dict.fromkeys(ex.items["task_id"]))
    with pytest.raises(arcnb.ArcnbError):
        ex.save_selection(tmp_path / "near.txt")
    ex.show_all = True
    bundle = ex._repr_mimebundle_()
    assert bundle["image/png"].startswith(b"\x89PNG")


# ------------------------------------------------------------------ the widget
def test_widget_controls_drive_the_explorer(ds, sub_a):
    from PIL import Image

    ex = arcnb.explore(arcnb.score(ds, sub_a), select="failed")
    box = ex.widget
    w = ex._w
    assert "arcnb-explore" in box._dom_classes
    first = ex.current
    w["next"].click()
    assert ex.current == keys(ex.items)[1] != first
    shown = np.asarray(Image.open(io.BytesIO(w["image"].value)).convert("RGB"))
    assert np.array_equal(shown, ex.render())
    assert ex.current[0] in w["info"].value
    target = keys(ex.items)[7]
    w["search"].value = target[0]
    assert ex.current[0] == target[0]
    w["index"].value = 3
    assert ex.position == 2
    w["select"].value = "near_miss"
    assert ex.select == "near_miss" and keys(ex.items) == naive_selection(
        naive_rows(ds, sub_a), "near_miss")
    labels = dict((v, lab) for lab, v in w["select"].options)
    assert labels["near_miss"] == f"near misses ({len(ex.items)})"
    w["category"].value = "same_shape"
    assert ex.category == "same_shape"
    w["attempt"].value = 2
    assert ex.attempt == 2
    w["values"].value = True
    assert ex.values is True
    w["search"].value = "zzzz"
    assert "no task" in w["status"].value


# ------------------------------------------------------------------ candidates
def test_candidates_in_rank_order_with_the_right_one_marked(ds, tmp_path):
    """A submission with 5 attempts per output is a candidate pool: the explorer shows
    the current output's distinct candidates by votes (counted here by hand), the
    right one marked; a 2-attempt run shows none."""
    tid = ds.task_ids[0]
    task = ds[tid]
    truth = task.test[0].output
    wrong = (truth + 1) % 10
    other = np.zeros((2, 2), int)
    atts = [wrong, truth, other, truth, wrong, truth]  # truth 3 votes, wrong 2, other 1
    sub = {tid: [{f"attempt_{j + 1}": a.tolist() for j, a in enumerate(atts)}
                 for _ in task.test]}
    path = tmp_path / "five.json"
    path.write_text(json.dumps(sub))
    ex = arcnb.explore(str(path), dataset=ds.select([tid]))
    cands = [p for p in ex.layout() if p["kind"] == "candidate"]
    assert [p["grid"].tolist() for p in cands] == [truth.tolist(), wrong.tolist(),
                                                   other.tolist()]
    assert ["✓ right" in p["title"] for p in cands] == [True, False, False]
    assert [p["title"].split(" ✓")[0] for p in cands] == ["1: 3 votes", "2: 2 votes",
                                                          "3: 1 vote"]
    two = {tid: [{"attempt_1": wrong.tolist(), "attempt_2": truth.tolist()}
                 for _ in task.test]}
    ex2 = arcnb.explore(arcnb.score(ds.select([tid]), two))
    assert not [p for p in ex2.layout() if p["kind"] == "candidate"]


def test_candidates_show_whether_they_pass_the_demonstrations(ds, monkeypatch):
    """A pool with passes_train: each candidate panel says whether it passes the
    demonstrations (the pool's own flags, listed here by hand)."""
    import arcnb.explorer.view as V
    from arcnb.candidates import candidates

    tid = ds.task_ids[0]
    truth = ds[tid].test[0].output
    pool = {"arcnb_candidates": 1, "tasks": {tid: [
        [{"grid": ((truth + 1) % 10).tolist(), "votes": 3, "passes_train": True},
         {"grid": truth.tolist(), "votes": 2, "passes_train": False},
         {"grid": [[0]], "votes": 1}]] + [[] for _ in ds[tid].test[1:]]}}
    analysis = candidates(ds.select([tid]), pool, taxonomy=None, n_boot=1)
    monkeypatch.setattr(V, "candidate_pool", lambda run, dataset: analysis)
    sub = {tid: [{"attempt_1": truth.tolist()} for _ in ds[tid].test]}
    ex = arcnb.explore(arcnb.score(ds.select([tid]), sub))
    titles = [p["title"] for p in ex.layout() if p["kind"] == "candidate"]
    assert len(titles) == 3
    assert ["passes demos" in t for t in titles] == [True, False, False]
    assert ["fails demos" in t for t in titles] == [False, True, False]
