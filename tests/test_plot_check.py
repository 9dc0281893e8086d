"""The figure check (arcnb.plot.check_figure) on planted defects, then over every figure
function of arcnb.plot and every figure the figures, report, compare and sweep notebooks
save or show.

Runs are real: the bundled example predictions on ARC-AGI-1 evaluation (the embedded
default), a copy of each test input (almost nothing solved) and the truth with one
wrong output (almost everything solved), the last two with per-attempt cost metadata
so the cost charts draw. The check reads matplotlib's text bounding boxes, never
pixels.
"""
from __future__ import annotations

import inspect
import json


import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import arcnb  # noqa: E402
from arcnb import breakdown as B  # noqa: E402
from arcnb import candidates as CA  # noqa: E402
from arcnb import compare as C  # noqa: E402
from arcnb import plot as P  # noqa: E402
from arcnb import report as R  # noqa: E402
from arcnb import sweep as S  # noqa: E402
from arcnb.plot.check import check_figure, looks_like_column_name  # noqa: E402
from arcnb.evaluate import evaluate  # noqa: E402
from arcnb.models import ModelAdapter  # noqa: E402
from arcnb.scoring import score  # noqa: E402

from _notebook_cells import notebook_cells_here  # noqa: E402

N_BOOT = 50


# ------------------------------------------------------------------ planted defects
def _fig(w=3.5, h=2.4):
    with P.paper_style():
        fig, ax = plt.subplots(figsize=(w, h))
    return fig, ax


def test_a_clean_figure_passes():
    fig, ax = _fig()
    ax.bar([0, 1], [0.2, 0.4])
    ax.set_xlabel("task category")
    ax.set_ylabel("partial credit")
    ax.set_title("two bars")
    assert check_figure(fig) == []


def test_overlapping_texts_are_found():
    fig, ax = _fig()
    ax.text(0.5, 0.5, "first label", fontsize=8)
    ax.text(0.52, 0.5, "second label", fontsize=8)
    probs = check_figure(fig)
    assert any("'first label'" in p and "'second label'" in p and "overlap" in p
               for p in probs), probs


def test_text_outside_the_canvas_is_found():
    fig, ax = _fig()
    ax.text(1.4, 0.5, "far to the right", transform=ax.transAxes)
    fig.set_layout_engine("none")
    assert any("'far to the right' falls outside" in p for p in check_figure(fig))


def test_tiny_text_is_found_and_a_wide_figure_scales_its_text():
    fig, ax = _fig()
    ax.text(0.1, 0.1, "tiny", fontsize=5)
    assert any("5.0 pt" in p and "'tiny'" in p for p in check_figure(fig))
    # 8 pt on a 14 in figure prints at 8 * 7.2 / 14 = 4.1 pt in a double column
    fig, ax = _fig(14, 3)
    ax.text(0.1, 0.1, "scaled", fontsize=8)
    assert any("4.1 pt" in p and "'scaled'" in p for p in check_figure(fig))
    assert not any("'scaled'" in p for p in check_figure(fig, print_width=14))


def test_text_under_an_image_drawn_later_is_found():
    fig, ax = _fig()
    ax.set_ylabel("hidden title")
    cover = ax.inset_axes((-0.3, 0, 0.3, 1))  # over the y label, drawn after it
    cover.imshow(np.zeros((4, 1, 3)), aspect="auto")
    cover.set_axis_off()
    assert any("'hidden title' is hidden" in p for p in check_figure(fig))
    # a text drawn over its own background box is not hidden
    fig, ax = _fig()
    ax.text(0.5, 0.5, "boxed note", bbox=dict(fc="white"), transform=ax.transAxes)
    assert check_figure(fig) == []


def test_column_names_in_labels_are_found():
    for text, hit in (("partial_credit", "partial_credit"), ("pass@2 (leads)", "(leads)"),
                      ("cost_per_task (log scale)", "cost_per_task"),
                      ("pass@2_per_output", "pass@2_per_output")):
        assert looks_like_column_name(text) == hit
    for words in ("partial credit", "pass@2", "cell accuracy of the best attempt",
                  "K (attempts)", "true colour (cells)"):
        assert looks_like_column_name(words) is None
    fig, ax = _fig()
    ax.set_xlabel("shape_accuracy")
    assert any("x axis label 'shape_accuracy' shows the column name" in p
               for p in check_figure(fig))


# ------------------------------------------------------------------ three real runs
def _attempt(grid, task_id, i, cost):
    return {"answer": np.asarray(grid).tolist(),
            "metadata": {"model": "test", "provider": "test", "task_id": task_id,
                         "pair_index": i, "usage": {"prompt_tokens": 70,
                                                    "completion_tokens": 30,
                                                    "total_tokens": 100},
                         "cost": {"total_cost": cost}}}


@pytest.fixture(scope="module")
def runs(arc1_eval, tmp_path_factory):
    """{name: Results}: the embedded default, copy-the-input, the truth with one wrong
    output (both with costs that vary per task)."""
    default = arcnb.open(R.resolve_source(predictions="default"), dataset="arc-agi-1:evaluation",
                         n_boot=N_BOOT, seed=0).results
    copy, truth = {}, {}
    first_wrong = True
    for n, t in enumerate(arc1_eval):
        cost = 0.001 * (1 + n % 7)
        copy[t.id] = [{"attempt_1": _attempt(p.input, t.id, i, cost)}
                      for i, p in enumerate(t.test)]
        entries = []
        for i, p in enumerate(t.test):
            out = p.output
            if first_wrong:
                out, first_wrong = (out + 1) % 10, False
            entries.append({"attempt_1": _attempt(out, t.id, i, 2 * cost)})
        truth[t.id] = entries
    # a two-checkpoint sweep (copy the input, then the bundled baseline) on 40 tasks
    sweep_dir = tmp_path_factory.mktemp("sweep") / "sweep"
    sweep = S.sweep(["copy-input", "baseline"], "arc-agi-1:evaluation",
                    sweep_dir, tasks=arc1_eval.task_ids[:40],
                    report=False, progress=False, n_boot=N_BOOT)
    # a candidate pool of three per output: the input twice (two votes), then the truth
    # (one vote), on 40 tasks
    ids = arc1_eval.task_ids[:40]
    pool = {t: [{f"attempt_{j + 1}": g.tolist() for j, g in enumerate((p.input, p.input,
                                                                         p.output))}
                for p in arc1_eval[t].test] for t in ids}
    files = tmp_path_factory.mktemp("costed")
    (files / "copy.json").write_text(json.dumps(copy))
    (files / "truth.json").write_text(json.dumps(truth))
    # many runs: two configurations of two runs each (named config-seedN), made of the
    # copy-the-input and the truth predictions above, on 30 tasks
    from arcnb import repeats as REP

    many = tmp_path_factory.mktemp("many")
    for name, src in (("a-seed1", "copy"), ("a-seed2", "truth"), ("b-seed1", "truth"),
                      ("b-seed2", "truth")):
        (many / f"{name}.json").write_text((files / f"{src}.json").read_text())
    rep = REP.repeats(sorted(str(p) for p in many.glob("*.json")),
                      dataset="arc-agi-1:evaluation", tasks=arc1_eval.task_ids[:30],
                      n_boot=N_BOOT)
    # two probed runs on 8 tasks: a memoriser (the stored answer only for the input as
    # stored, or for its own task id) and copy-the-input
    probed = tmp_path_factory.mktemp("probed")
    sub = arc1_eval.select(arc1_eval.task_ids[:8])
    memo = evaluate(ModelAdapter(_Memoriser(sub)), sub, probed / "memoriser",
                    probe=["dihedral", "colors", "task-id"], proxy=True, device="cpu",
                    n_boot=N_BOOT)
    copy_run = evaluate("copy-input", sub, probed / "copy", probe="dihedral", proxy=True,
                        device="cpu", n_boot=N_BOOT)
    return {"default": default, "files": files, "sweep_dir": sweep_dir, "repeats": rep,
            "probed": [memo, copy_run],
            "nothing": score(arc1_eval, copy, n_boot=N_BOOT),
            "everything": score(arc1_eval, truth, n_boot=N_BOOT), "sweep": sweep,
            "pool": CA.candidates(arc1_eval.select(ids), pool), "pool_task": ids[0],
            "budget_pool": CA.candidates(arc1_eval.select(ids), _budget_pool(arc1_eval, ids),
                                         taxonomy=None, n_boot=N_BOOT)}


def _budget_pool(ds, ids) -> dict:
    """Per output: the input at samples 0 and 1 (steps 1, 2), failing the
    demonstrations, then the truth at sample 2 (step 3), passing them; every fourth task
    the input again at sample 3 (step 4), so some outputs are lost."""
    tasks = {}
    for j, t in enumerate(ids):
        outs = []
        for p in ds[t].test:
            cands = [{"grid": p.input.tolist(), "sample": [0, 1], "step": [1, 2],
                      "passes_train": False, "train_score": 0.5},
                     {"grid": p.output.tolist(), "sample": [2], "step": [3],
                      "passes_train": True, "train_score": 1.0}]
            if j % 4 == 0:
                cands[0] = {**cands[0], "sample": [0, 1, 3], "step": [1, 2, 4]}
            outs.append(cands)
        tasks[t] = outs
    return {"arcnb_candidates": 1, "tasks": tasks}


class _Memoriser:
    """Answers the stored output when it sees the stored input under its own task id."""

    def __init__(self, ds):
        self.store = {t.id: [(p.input, p.output) for p in t.test] for t in ds}

    def solve(self, task, attempts=2):
        known = self.store.get(task.id, [])
        return [[known[i][1] if i < len(known) and np.array_equal(known[i][0], p.input)
                 else p.input] for i, p in enumerate(task.test)]


def _with_ax(draw, size=None):
    """Run ``draw(ax)`` on a new paper-style Axes of ``size`` (a single column)."""
    with P.paper_style():
        fig, ax = plt.subplots(figsize=size or P.figsize(1))
        got = draw(ax)
    # the rule of arcnb.plot: a function given ``ax=`` draws there and returns that Axes
    assert got is ax, f"returned {type(got).__name__}, not the Axes it was given"
    return fig


def _breakdown(res, by="structural"):
    return B.breakdown(res, by, n_boot=N_BOOT, seed=0)


# How to call each figure function of arcnb.plot: name -> (results, others) -> Figure.
FIGURES = {
    "grid": lambda r, o: _with_ax(lambda ax: P.grid(r.dataset[r.dataset.task_ids[0]]
                                                    .test[0].output, ax=ax)),
    "pair": lambda r, o: _styled(lambda: P.pair(*_truth_pred(r))),
    "task": lambda r, o: _styled(lambda: P.task(r.dataset[r.dataset.task_ids[0]], r)),
    "gallery": lambda r, o: _styled(lambda: P.gallery(r, "all", max_items=12, ncols=3,
                                                      text="artists", title="outputs")),
    "color_accuracy": lambda r, o: _with_ax(lambda ax: P.color_accuracy(
        B.color_accuracy(r), ax=ax)),
    "confusion_heatmap": lambda r, o: _with_ax(lambda ax: P.confusion_heatmap(
        B.color_confusion(r), ax=ax), size=(3.5, 3.5)),
    "breakdown_bars": lambda r, o: _with_ax(lambda ax: P.breakdown_bars(
        _breakdown(r), value=B.lead_metric(_breakdown(r)), horizontal=True, ax=ax),
        size=(3.5, 3.6)),
    "breakdown_panels": lambda r, o: _styled(lambda: P.breakdown_panels(_breakdown(r))),
    "pass_at_k": lambda r, o: _with_ax(lambda ax: P.pass_at_k(r, ax=ax)),
    "cell_accuracy_hist": lambda r, o: _with_ax(lambda ax: P.cell_accuracy_hist(r, ax=ax)),
    "compare": lambda r, o: _with_ax(lambda ax: P.compare(r, o["nothing"], ax=ax,
                                                          labels=("this run", "copy")),
                                     size=(3.5, 3.5)),
    "leaderboard": lambda r, o: _with_ax(lambda ax: P.leaderboard(
        C.compare([o["nothing"], o["everything"], o["default"]],
                  labels=["copy the input", "the truth", "example predictions"],
                  taxonomy=None, n_boot=N_BOOT), ax=ax)),
    "cost_vs_score": lambda r, o: _with_ax(lambda ax: P.cost_vs_score(_costed(r, o), ax=ax)),
    "cost_by_outcome": lambda r, o: _styled(lambda: P.cost_by_outcome(_costed(r, o))),
    # a checkpoint sweep's figures (the same sweep whatever the run)
    "learning_curve": lambda r, o: _styled(lambda: P.learning_curve(o["sweep"].table())),
    "learning_curves": lambda r, o: _styled(lambda: P.learning_curves(o["sweep"].table())),
    "changes_bars": lambda r, o: _styled(lambda: P.changes_bars(o["sweep"].changes(),
                                                                o["sweep"].steps)),
    "solved_heatmap": lambda r, o: _styled(lambda: P.solved_heatmap(o["sweep"].solved_matrix())),
    "category_curves": lambda r, o: _styled(lambda: P.category_curves(o["sweep"].categories(),
                                                                      "pass@2")),
    # a candidate pool's figures (the same pool whatever the run)
    "rank_histogram": lambda r, o: _styled(lambda: P.rank_histogram(o["pool"])),
    "coverage_vs_pass": lambda r, o: _styled(lambda: P.coverage_vs_pass(o["pool"])),
    "reliability_diagram": lambda r, o: _styled(lambda: P.reliability_diagram(o["pool"])),
    "pass_at_k_by_rule": lambda r, o: _styled(lambda: P.pass_at_k_by_rule(o["pool"])),
    "candidate_strip": lambda r, o: _styled(lambda: P.candidate_strip(
        o["pool"], o["pool_task"], 0)),
    "anytime_curve": lambda r, o: _styled(lambda: P.anytime_curve(o["budget_pool"])),
    "verifier_confusion": lambda r, o: _styled(lambda: P.verifier_confusion(o["budget_pool"])),
    "first_right_step_histogram": lambda r, o: _styled(
        lambda: P.first_right_step_histogram(o["budget_pool"])),
    # many runs' figures (the same analysis whatever the run)
    "seed_spread": lambda r, o: _with_ax(lambda ax: P.seed_spread(o["repeats"].summary, ax=ax)),
    "union_coverage": lambda r, o: _with_ax(lambda ax: P.union_coverage(
        o["repeats"].summary["union"]["by_n_runs"], ax=ax)),
    "solve_matrix": lambda r, o: _with_ax(lambda ax: P.solve_matrix(o["repeats"].matrix, ax=ax),
                                          size=(3.5, 3.6)),
    "winners_curse": lambda r, o: _with_ax(lambda ax: P.winners_curse(
        o["repeats"].summary["winners_curse"], ax=ax)),
    # the probes' figures (the same probed runs whatever the run)
    "probe_scores": lambda r, o: _styled(lambda: P.probe_scores(o["probed"][0],
                                                                n_boot=N_BOOT)),
    "probe_drops": lambda r, o: _with_ax(lambda ax: P.probe_drops(
        o["probed"], labels=["memoriser", "copy the input"], ax=ax)),
    "probe_consistency": lambda r, o: _with_ax(lambda ax: P.probe_consistency(
        o["probed"][0], ax=ax)),
    "proxy_vs_true": lambda r, o: _with_ax(lambda ax: P.proxy_vs_true(
        o["probed"], labels=["memoriser", "copy the input"], ax=ax), size=(3.5, 3.5)),
    "probe_gallery": lambda r, o: _styled(lambda: P.probe_gallery(o["probed"][0],
                                                                  max_items=6)),
    # task difficulty across systems (the same comparison whatever the run)
    "ability_intervals": lambda r, o: _with_ax(lambda ax: P.ability_intervals(
        _difficulty(o).abilities, ax=ax)),
    "accuracy_by_difficulty": lambda r, o: _with_ax(lambda ax: P.accuracy_by_difficulty(
        _difficulty(o).curves, ax=ax)),
    "difficulty_vs_human": lambda r, o: _with_ax(lambda ax: P.difficulty_vs_human(
        _difficulty(o).tasks.assign(solve_rate=lambda t: 1 / (1 + np.exp(t["difficulty"]))),
        ax=ax)),
    "surprise_gallery": lambda r, o: _styled(lambda: P.surprise_gallery(
        r, r.outputs.head(6), title="surprises")),
}


def _difficulty(o):
    """Task difficulty across three runs (copy the input, the truth, the example
    predictions), fitted once."""
    if "difficulty" not in o:
        o["difficulty"] = C.compare([o["nothing"], o["everything"], o["default"]],
                                    labels=["copy the input", "the truth", "example"],
                                    taxonomy=None, n_boot=N_BOOT).difficulty
    return o["difficulty"]
# public callables of arcnb.plot that draw no figure of their own
NOT_FIGURES = {"grid_image", "diff_mask", "pairs_image", "gallery_items", "gallery_pages",
               "paper_style", "lost_outputs",
               "figsize", "save", "view", "enable_rich_display", "value_limit",
               "value_label", "check_figure", "paper_width", "GridView", "PairView", "TaskView"}


def _styled(make):
    with P.paper_style():
        return make()


def _truth_pred(r):
    row = r.outputs.iloc[0]
    t = r.dataset[row["task_id"]]
    return t.test[int(row["test_index"])].output, t.test[int(row["test_index"])].input


def _costed(r, others):
    return r if "cost" in r.tasks.columns else others["everything"]


def _figure(obj):
    if hasattr(obj, "savefig"):
        return obj
    if isinstance(obj, (list, tuple)) or hasattr(obj, "ravel"):  # several Axes
        obj = np.ravel(obj)[0]
    return obj.get_figure()


def test_every_figure_function_is_registered():
    public = {n for n in P.__all__ if callable(getattr(P, n)) and
              not inspect.isclass(getattr(P, n)) or n in ("GridView", "PairView", "TaskView")}
    assert public - NOT_FIGURES == set(FIGURES), \
        "register each new figure function of arcnb.plot in FIGURES (how to call it)"


@pytest.mark.parametrize("run", ["default", "nothing", "everything"])
@pytest.mark.parametrize("name", sorted(FIGURES))
def test_every_figure_function_passes_the_check(runs, run, name):
    fig = _figure(FIGURES[name](runs[run], runs))
    _assert_passes(check_figure(fig), f"{name} on the {run} run")


def _assert_passes(problems, what):
    """No problem at all (labels are words: charts take them from the column spec)."""
    assert problems == [], f"{what}:\n" + "\n".join(problems)


# ------------------------------------------------------------------ notebooks' figures
def _run_in_process(notebook: str, parameters: dict, monkeypatch, cwd, *,
                    paper: bool) -> dict:
    """Execute a shipped notebook's code cells in this process
    (:func:`_notebook_cells.notebook_cells_here`), each cell's value shown as JupyterLab
    would, through its ``_repr_html_``, checking every figure a report section draws
    before it is saved or embedded (``paper``: at its own size; else as saved for a
    screen, the canvas grown to its texts). Returns ``{name: problems}``."""
    from arcnb.report.sections import base

    found: dict = {}
    draw = base.Section.figure_of

    def checked(self, spec):
        fig = draw(self, spec)
        found[spec.name] = check_figure(fig, tight=not paper)
        return fig

    monkeypatch.setattr(base.Section, "figure_of", checked)
    monkeypatch.chdir(cwd)
    for value in notebook_cells_here(notebook, parameters):
        getattr(value, "_repr_html_", lambda: None)()
    return found


@pytest.mark.parametrize("width", ["column", "page"])
def test_every_figure_of_the_figures_notebook_passes_the_check(monkeypatch, tmp_path, width):
    found = _run_in_process("figures", {"out": str(tmp_path / "figs"), "n_boot": N_BOOT,
                                        "formats": [], "width": width},
                            monkeypatch, tmp_path, paper=True)
    assert {"pass_at_k", "color_confusion", "breakdown_structural"} <= set(found)
    _assert_passes([f"{k}: {p}" for k, v in found.items() for p in v], "figures saved")


@pytest.mark.slow  # builds a report: its notebook runs in a Jupyter kernel
def test_every_figure_of_the_report_notebook_passes_the_check(monkeypatch, tmp_path):
    found = _run_in_process("report", {"figures_dir": str(tmp_path / "figs"),
                                       "n_boot": N_BOOT}, monkeypatch, tmp_path,
                            paper=False)
    assert {"cell_accuracy_hist", "color_confusion", "breakdown_structural"} <= set(found)
    _assert_passes([f"{k}: {p}" for k, v in found.items() for p in v], "figures saved")


def test_every_figure_of_the_compare_notebook_passes_the_check(runs, monkeypatch, tmp_path):
    # two runs with a cost per attempt (copying the input; the truth with one wrong
    # output), so that the leaderboard is drawn; the notebook saves it in `out`
    rds = []
    for name in ("copy", "truth"):
        rd = tmp_path / name
        arcnb.open(str(runs["files"] / f"{name}.json"), dataset="arc-agi-1:evaluation",
                   out=rd, n_boot=N_BOOT)
        rds.append(str(rd))
    out = tmp_path / "compared"
    found = _run_in_process("compare", {"runs": rds, "n_boot": N_BOOT, "out": str(out)},
                            monkeypatch, tmp_path, paper=False)
    # the leaderboard, one paired comparison, the difficulty's abilities and curves
    assert sorted(found) == ["compare_0", "difficulty_abilities", "difficulty_accuracy",
                             "leaderboard"], sorted(found)
    assert (out / "leaderboard.png").is_file() and (out / "leaderboard.pdf").is_file()
    _assert_passes([f"{k}: {p}" for k, v in found.items() for p in v], "figures shown")


def test_every_figure_of_the_sweep_notebook_passes_the_check(runs, monkeypatch, tmp_path):
    # the fixture's two-checkpoint sweep (copying the input, then the bundled baseline)
    found = _run_in_process("sweep", {"sweep_dir": str(runs["sweep_dir"]), "n_boot": N_BOOT},
                            monkeypatch, tmp_path, paper=False)
    # learning curves, changes, solved heatmap, two category curves (and a gallery per
    # step where outputs were gained or lost, none on these 40 tasks)
    assert len(found) >= 5, sorted(found)
    _assert_passes([f"{k}: {p}" for k, v in found.items() for p in v], "figures shown")


# ------------------------------------------------------------------ gallery notes
def test_gallery_notes_stay_inside_their_panel(runs):
    """A shape mismatch is written on the difference panel in lines that fit its slot:
    the text boxes (artists) and the pixel font's widths (pixels)."""
    from arcnb.plot.galleries import _fit_note
    from arcnb.plot.pixelfont import PixelFont

    r = runs["nothing"]  # copies of the input: many outputs of another shape
    rows = r.outputs[r.outputs["cell_accuracy"].isna()].head(6)
    assert len(rows) == 6
    fig = P.gallery(r, "all", rows=rows, ncols=3, text="artists", slot=64)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    notes = [t for t in fig.axes[0].texts if t.get_bbox_patch() is not None]
    assert any(t.get_text() == "mismatch" for t in notes)
    for t in notes:
        assert t.get_window_extent(renderer).width <= 64, t.get_text()
    small = PixelFont(6.0, 100)
    for line in _fit_note("shape mismatch|30x30 vs|3x3", small.width, 60).split("|"):
        assert small.width(line) <= 60
    assert _fit_note("shape mismatch", small.width, 60) == "shape|mismatch"
    assert _fit_note("no|prediction", small.width, 60) == "no|prediction"
