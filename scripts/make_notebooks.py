"""Regenerate arcnb's notebooks from the cell lists below: the shipped ones
(arcnb/resources/notebooks/*.ipynb, package data) and their byte-identical copies in the
clone's notebooks/ folder.

    .venv/bin/python scripts/make_notebooks.py          # write the notebooks
    .venv/bin/python scripts/make_notebooks.py --check  # exit 1 when a notebook differs

Every notebook: the first code cell is tagged ``parameters`` and holds typed,
commented literals (``papermill --help-notebook`` lists them); the defaults run on the
embedded default; no outputs, kernelspec ``python3``; thin cells calling ``arcnb``.
The files are byte-stable (fixed cell ids), so ``--check`` can guard them in tests.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this tree's arcnb, also when run without PYTHONPATH
from arcnb.columns import NEAR_MISS  # noqa: E402  (the one near-miss threshold)

OUT = ROOT / "arcnb" / "resources" / "notebooks"  # shipped in the package
MIRROR = ROOT / "notebooks"  # the clone's copies, byte-identical

KERNELSPEC = {"name": "python3", "display_name": "Python 3 (arcnb)", "language": "python"}
LANGUAGE_INFO = {"name": "python", "pygments_lexer": "ipython3",
                 "codemirror_mode": {"name": "ipython", "version": 3},
                 "file_extension": ".py", "mimetype": "text/x-python"}


def md(text: str):
    return ("md", text.strip("\n"))


def code(text: str, tags=()):
    return ("code", text.strip("\n"), tuple(tags))


def params(text: str):
    return code(text, tags=("parameters",))


# ============================================================================ report
REPORT = [
    md("""
# ARC evaluation report

Built by `arcnb` from a run directory (a `metrics.json` and a `predictions.json`), or from
a predictions file scored in memory. Every number below is a fraction in [0, 1]; an empty
denominator shows as NaN. Run it in JupyterLab, or in batch:
`papermill notebooks/report.ipynb out.ipynb -k python3 -p run_dir RUN_DIR`.
"""),
    params(f"""
# Parameters (papermill: -p NAME VALUE). Literals only.
run_dir: str = ""  # run directory holding metrics.json and predictions.json; empty: score `predictions` in memory
predictions: str = "default"  # used without run_dir: a submission JSON, or "default" for the bundled example predictions
dataset: str = "arc-agi-1:evaluation"  # used without run_dir: dataset name, task folder or *_challenges.json
tasks: str = ""  # file of task ids to keep (JSON list or one per line); empty: every task
taxonomy: str = ""  # user taxonomy (.csv with task_id,category or .json); empty: only the automatic taxonomy
references: list = []  # reference runs shown beside the model: "copy-input", predictions files, or "default" (the bundled ones for the dataset); empty: none
figures_dir: str = ""  # folder for the report's figures (PNG); empty: run_dir/figures, or none without run_dir
gallery_size: int = 24  # at most this many failures and near misses in the gallery
near_miss: float = {NEAR_MISS!r}  # an unsolved output whose cell accuracy reaches this is a near miss
n_boot: int = 1000  # bootstrap resamples for the intervals
seed: int = 0  # bootstrap seed
train_data: list = []  # training data (dataset names, folders, files) to check the test outputs against; empty: no check
"""),
    code("""
from arcnb import breakdown as B
from arcnb import plot as P
from arcnb import report as R

run = R.open_run(run_dir or None, predictions=predictions, dataset=dataset, tasks=tasks or None,
                 n_boot=n_boot, seed=seed)
fig_dir = R.figures_dir(figures_dir, run)
R.show(R.summary_html(run))  # the numbers in one paragraph; section 1 has the full table
"""),
    code("""
if not run.scored:  # a hidden test set: no truth, predictions only (arcnb report stops here)
    print("no truth: predictions only")
    R.show(R.no_truth_html(run))
    R.show_figure(R.predictions_gallery(run, max_items=gallery_size), "gallery_predictions",
                  fig_dir, tight=False)
    R.show(R.provenance_html(run.metrics, run_dir=run.run_dir))
""", tags=("no-truth",)),
    md("""
## 1. Headline

pass@K in the three conventions, with a 95% percentile bootstrap interval over tasks
for pass@2. The table after it defines every metric this report names.
"""),
    code("""
R.show(R.headline_html(run.metrics))
R.show(R.definitions_html())
"""),
    code("""
if train_data:  # which test outputs the training data already holds (parameter `train_data`)
    from arcnb.report import overlap as RO

    check = RO.overlap_check(run, train_data, run_dir=run.run_dir)
    R.show(RO.overlap_section_html(run, check, n_boot=n_boot, seed=seed))
"""),
    md("""
## 2. Where it almost works

When few tasks are solved, the signal is in what the model almost gets right: whether
its attempt has the right size at all (shape accuracy), how many cells are right when it
does (cell accuracy over the right-shaped outputs), and the unsolved outputs that come
closest (near misses: cell accuracy of at least `near_miss`).
"""),
    code("""
overall = B.overall(run.results, ks=run.results.ks, n_boot=n_boot, seed=seed, near_miss=near_miss)
R.show(R.graded_table_html(overall, table_id="arcnb-overall",
                           caption="every scored output; under each value, its 95% bootstrap "
                                   "interval over tasks"))
R.show_figure(P.cell_accuracy_hist(run.results, near_miss=near_miss), "cell_accuracy_hist", fig_dir)
"""),
    code("""
structural = B.breakdown(run.results, "structural", n_boot=n_boot, seed=seed, near_miss=near_miss)
R.show(R.note_html("Shape accuracy per structural category: which kinds of task get an "
                   "attempt of the right size at all (95% intervals over the category's tasks)."))
R.show_figure(P.breakdown_bars(structural, value="shape_accuracy", horizontal=True),
              "shape_accuracy_structural", fig_dir)
"""),
    code("""
nearest = P.gallery_items(run.results, "failed", sort="cell_accuracy", max_items=gallery_size)
R.show(R.table_html(nearest[["task_id", "test_index", "cell_accuracy", "partial_credit",
                             "truth_shape", "pred_shape", "n_attempts"]],
                    table_id="arcnb-nearest-misses",
                    caption="unsolved outputs, nearest misses first (highest cell accuracy)"))
R.show(R.cut_note(run, "failed", gallery_size))
"""),
    md("""
## 3. Reference points

Simple baselines scored on the same tasks, set beside the model: copy-the-input (every
attempt is the test input) and, on the embedded default, the bundled program-search
baseline's precomputed predictions. Then the categories where a reference solves tasks
the model does not (a task is solved when all its test outputs are right within 2
attempts).
"""),
    code("""
refs = R.reference_runs(R.resolve_references(references, run.results.dataset.name,
                                             exclude=run.flat_provenance().get("predictions")),
                        run, n_boot=n_boot, seed=seed)
if refs:
    ref_table = R.reference_table([run] + refs, labels=[f"this run: {run.label}"]
                                  + [r.label for r in refs], n_boot=n_boot, seed=seed,
                                  near_miss=near_miss)
    R.show(R.reference_html(ref_table))
    R.show_figure(P.breakdown_panels(ref_table, group="run", lead="pass@2"), "reference_points",
                  fig_dir)
    only = R.reference_categories(run, refs)
    if len(only):
        R.show(R.table_html(only, table_id="arcnb-reference-categories",
                            caption="categories where a reference solves tasks the model does not"))
        R.show_figure(P.breakdown_bars(only, value="reference_only", group="group", hue="reference",
                                       horizontal=True, count=True,
                                       ylabel="tasks solved by the reference only"),
                      "reference_categories", fig_dir)
    else:
        R.show(R.note_html("No reference solves a task that the model does not."))
else:
    R.show(R.note_html("No reference runs (parameter references)."))
"""),
    md("""
## 4. pass@K

pass@K for every K up to the number of attempts in the predictions, in the three
conventions; the curve shows pass@K (per task) with its bootstrap band.
"""),
    code("""
pass_k = run.results.pass_at_k_table(n_boot=n_boot, seed=seed)
R.show(R.table_html(pass_k, table_id="arcnb-pass-at-k",
                    caption="pass@K in the three conventions; ci_low / ci_high: 95% bootstrap "
                            "interval over tasks for pass@K (per task)"))
R.show_figure(P.pass_at_k(pass_k), "pass_at_k", fig_dir)
"""),
    md("""
## 5. Failures and near misses

Truth | prediction | difference for each output (the best attempt: the first correct
one, else the right-shaped one with the most correct cells). Wrong cells are marked
in the difference panel; a wrong shape or a missing prediction is stated instead.
Near misses are unsolved outputs whose cell accuracy reaches `near_miss`, nearest first.
"""),
    code("""
R.show_figure(P.gallery(run.results, "near_miss", near_miss=near_miss, sort="cell_accuracy",
                        max_items=gallery_size, title="near misses"),
              "gallery_near_misses", fig_dir, tight=False)
R.show(R.cut_note(run, "near_miss", gallery_size, near_miss=near_miss))
R.show_figure(P.gallery(run.results, "failed", max_items=gallery_size, title="failures"),
              "gallery_failures", fig_dir, tight=False)
"""),
    md("""
## 6. Colours

Per-colour accuracy: for each colour, the fraction of truth cells of that colour that
attempt 1 predicts correctly, over the outputs whose attempt 1 has the truth's shape.
The confusion matrix counts cells (rows: truth colour, columns: predicted colour),
normalised by row.
"""),
    code("""
acc = B.color_accuracy(run.results)
R.show(R.table_html(acc, table_id="arcnb-color-accuracy",
                    caption=f"{acc.attrs['n_used']} of {acc.attrs['n_outputs']} outputs used "
                            f"(attempt 1 with the truth's shape)"))
R.show_figure(P.color_accuracy(acc), "color_accuracy", fig_dir)
"""),
    code("""
import matplotlib.pyplot as plt

counts = B.color_confusion(run.results)
_, ax = plt.subplots(figsize=(7, 6.4))  # large enough to read every cell's number
R.show_figure(P.confusion_heatmap(counts, ax=ax), "color_confusion", fig_dir)
R.show(R.table_html(B.color_confusion(run.results, normalize="true"), index=True, digits=3,
                    table_id="arcnb-color-confusion"))
"""),
    md("""
## 7. Categories

The automatic structural taxonomy (computed from each task's demonstration pairs) covers
every task; a user taxonomy is added when the `taxonomy` parameter names one. A task with
several categories counts in each; a task without one shows as `uncategorized`. Each
table gives the exact pass@2 next to the graded metrics, with 95% bootstrap intervals
over the category's tasks; the chart leads with pass@2 when enough categories have
something solved, else with partial credit.
"""),
    code("""
R.show(R.breakdown_html(structural, table_id="arcnb-breakdown-structural",
                        caption="automatic structural taxonomy"))
R.show(R.lead_html(structural))
R.show_figure(P.breakdown_panels(structural), "breakdown_structural", fig_dir)
"""),
    code("""
if taxonomy:
    user = B.breakdown(run.results, taxonomy, n_boot=n_boot, seed=seed, near_miss=near_miss)
    cov = user.attrs.get("coverage", {})
    R.show(R.breakdown_html(user, table_id="arcnb-breakdown-user",
                            caption=f"taxonomy {user.attrs['grouping']}: {cov.get('n_categorized')} "
                                    f"of {cov.get('n_tasks')} tasks categorised"))
    R.show(R.lead_html(user))
    R.show_figure(P.breakdown_panels(user), "breakdown_user", fig_dir)
else:
    print("No user taxonomy given (parameter `taxonomy`).")
"""),
    md("""
## 8. Grid size and shape change

Grid size bins the larger side of the truth grid; shape change compares the truth's
shape with the test input's. Both assign each test output on its own.
"""),
    code("""
for by in ("grid_size", "shape_change"):
    t = B.breakdown(run.results, by, n_boot=n_boot, seed=seed, near_miss=near_miss)
    R.show(R.breakdown_html(t, table_id=f"arcnb-breakdown-{by.replace('_', '-')}", caption=by))
    R.show(R.lead_html(t))
    R.show_figure(P.breakdown_panels(t), f"breakdown_{by}", fig_dir)
"""),
    md("""
## 9. Cost and efficiency

What the run cost, from the attempts' metadata (a benchmarking-harness run folder
carries it): cost per task, score against cost per task on a log scale, and cost and
tokens for the solved and the unsolved tasks.
"""),
    code("""
costed = R.cost_results(run)  # the results with cost, or None
if costed is not None:
    R.show(R.cost_html(costed.summary))
    R.show_figure(P.cost_vs_score(costed), "cost_vs_score", fig_dir)
    R.show(R.table_html(B.cost_by_outcome(costed), table_id="arcnb-cost-by-outcome",
                        caption="per task; solved: every test output right within 2 attempts"))
    R.show_figure(P.cost_by_outcome(costed), "cost_by_outcome", fig_dir)
else:
    R.show(R.note_html("No cost: the predictions carry no cost metadata.", note_id="arcnb-no-cost"))
"""),
    code("""
from arcnb.report.candidates import candidate_pool, candidates_html

# shown only when some test output has more than 2 distinct candidates
pool = candidate_pool(run, n_boot=n_boot, seed=seed)
if pool is not None:
    R.show(candidates_html(pool))
    R.show_figure(P.rank_histogram(pool), "candidates_rank", fig_dir)
    R.show_figure(P.pass_at_k_by_rule(pool), "candidates_pass_at_k", fig_dir)
"""),
    md("""
## 10. Provenance

Where these numbers come from, and the compact line to quote them with: the metric and
its value, the checkpoint's SHA-256, the dataset and its version, the task filter, and
the arcnb version and commit.
"""),
    code("""
R.show(R.provenance_html(run.metrics, run_dir=run.run_dir))
"""),
]

# ========================================================================== evaluate
EVALUATE = [
    md("""
# Evaluate a checkpoint (or score a predictions file)

Writes a run directory: `predictions.json` (ARC Prize format), `results.csv` /
`results.parquet`, `tasks.csv` and `metrics.json` (scores plus provenance). Open it
with `report.ipynb` (`run_dir` parameter). Same as `arcnb evaluate` / `arcnb score`.
On a dataset without test outputs (a hidden test set, such as a `*_challenges.json`
without its solutions file) nothing is scored and `submission.json` is written for
Kaggle.
"""),
    params("""
# Parameters (papermill: -p NAME VALUE). Literals only.
checkpoint: str = "default"  # checkpoint file, "baseline" or a model name such as "copy-input"; "default": the bundled baseline when present, else the example predictions
predictions: str = ""  # a submission JSON to score instead of running a model ("default": the bundled example predictions); empty: run `checkpoint`
dataset: str = "arc-agi-1:evaluation"  # dataset name, task folder or *_challenges.json
tasks: str = ""  # file of task ids to keep (JSON list or one per line); empty: every task
out: str = ""  # run directory to write; empty: a new folder under reports/runs/
overwrite: bool = False  # replace a finished run in `out`
device: str = "auto"  # auto, cpu or cuda
batch_size: int = 64  # model inputs per forward pass
attempts: int = 2  # attempts per test input
augment: str = "none"  # test-time augmentation: none, dihedral or dihedral+colors
seed: int = 0  # torch and colour-permutation seed
estimator: str = "ranked"  # how attempts become pass@K: ranked (ARC Prize rule) or unbiased (sampled attempts)
arch: str = ""  # model builder (registered name or module:callable) for Lightning / state-dict checkpoints
config: str = ""  # JSON object of builder arguments (merged over the checkpoint's saved config)
replace_config: bool = False  # use `config` instead of the checkpoint's saved config
trust_checkpoint: bool = False  # allow a checkpoint that needs arbitrary pickled code (only for files you trust)
"""),
    code("""
from arcnb import report as R

source = R.resolve_source(checkpoint, predictions)
run_dir = R.default_out(out, source, dataset)
results = R.make_run(source, dataset, run_dir, tasks=tasks or None, overwrite=overwrite,
                     evaluate_options=dict(device=device, batch_size=batch_size,
                                           attempts=attempts, augment=augment, seed=seed,
                                           arch=arch, config=config,
                                           replace_config=replace_config,
                                           trust_checkpoint=trust_checkpoint,
                                           progress=False), estimator=estimator)
print(f"wrote {run_dir}")
results
"""),
    md("## Headline"),
    code("""
metrics = R.read_metrics(run_dir)
if metrics.get("scored", True):
    R.show(R.headline_html(metrics))
else:  # a hidden test set: no truth, nothing scored; submission.json is for Kaggle
    R.show(R.no_truth_html(R.Run.read(run_dir)))
"""),
    md("## Files and provenance"),
    code("""
R.show(R.table_html(R.run_files(run_dir), table_id="arcnb-run-files"))
R.show(R.provenance_html(metrics, run_dir=run_dir))
"""),
]

# =========================================================================== compare
COMPARE = [
    md("""
# Compare runs

Several run directories side by side on the same tasks: a paired bootstrap interval for
the difference in pass@2, an exact McNemar test on solved / unsolved outputs, the outputs
only one run solved, a per-category table of differences and, when the runs have a cost,
pass@2 against cost per task (`arcnb.compare`; the same as `arcnb compare`).
"""),
    params("""
# Parameters (papermill: -p NAME VALUE). Literals only.
runs: list = []  # run directories to compare (two or more); empty: the example predictions vs the copy-the-input baseline
labels: list = []  # one label per run; empty: the folder names
dataset: str = ""  # re-score every run on this dataset; empty: the dataset each metrics.json records
taxonomy: str = "structural"  # categories for the per-category table: structural, folder, or a .csv or .json file
common_tasks: bool = False  # compare on the tasks the runs share instead of refusing different task sets
n_boot: int = 1000  # bootstrap resamples
seed: int = 0  # bootstrap seed
out: str = ""  # folder for the tables (CSV, LaTeX, summary.json) and the leaderboard picture; empty: write nothing
overwrite: bool = False  # replace existing tables in `out`
"""),
    code("""
from arcnb import compare as C
from arcnb import plot as P
from arcnb import report as R

run_dirs = runs or R.default_compare_runs()
cmp = C.compare(run_dirs, labels=labels or None, common_only=common_tasks,
                taxonomy=taxonomy or None, dataset=dataset or None, n_boot=n_boot, seed=seed)
cmp
"""),
    md("## Runs"),
    code("""
R.show(R.table_html(cmp.tables["runs"], table_id="arcnb-compare-runs"))
for note in cmp.summary["notes"]:
    print(f"note: {note}")
"""),
    md("""
## Score against cost

The leaderboard picture: one point per run, pass@2 (ARC Prize rule) with its 95% bootstrap
interval over tasks, against cost per task (the runs' attempt metadata `cost.total_cost`
over the common tasks) on a log axis; the dashed line joins the Pareto front, the runs
that no other run beats on both cost and score.
"""),
    code("""
ax = cmp.leaderboard()
if ax is None:
    print(cmp.summary["leaderboard"]["note"])
else:
    R.show_figure(ax.get_figure())  # saved as leaderboard.png / .pdf by cmp.write(out) below
"""),
    md("""
## Paired differences

Difference in pass@2 (B - A) over the same tasks with a 95% paired bootstrap interval,
and the exact McNemar test on the outputs solved by exactly one of the two runs.
"""),
    code("""
R.show(R.table_html(cmp.tables["differences"], table_id="arcnb-compare-differences"))
for a, b in zip(cmp.runs[:-1], cmp.runs[1:]):
    R.show_figure(P.compare(a.results, b.results, labels=(a.label, b.label)))
"""),
    md("## Outputs only one run solved"),
    code("""
R.show(R.table_html(cmp.tables["only_one_solved"], table_id="arcnb-compare-only-one"))
"""),
    md("## Per category"),
    code("""
if "categories" in cmp.tables:
    R.show(R.table_html(cmp.tables["categories"], table_id="arcnb-compare-categories"))
else:
    print("No taxonomy (parameter `taxonomy`).")
"""),
    code("""
if out:
    for path in cmp.write(out, overwrite=overwrite):
        print(path)
"""),
]

# =========================================================================== figures
FIGURES = [
    md("""
# Figures and tables for a paper

PDF and SVG figures in the packaged paper style (TrueType fonts embedded in PDF, text
kept as text in SVG, written deterministically) and booktabs LaTeX tables, saved in the
run's `figures/` folder.
"""),
    params("""
# Parameters (papermill: -p NAME VALUE). Literals only.
run_dir: str = ""  # run directory holding metrics.json and predictions.json; empty: score `predictions` in memory
predictions: str = "default"  # used without run_dir: a submission JSON, or "default" for the bundled example predictions
dataset: str = "arc-agi-1:evaluation"  # used without run_dir: dataset name, task folder or *_challenges.json
tasks: str = ""  # file of task ids to keep; empty: every task
taxonomy: str = ""  # user taxonomy (.csv or .json) for an extra breakdown figure; empty: none
out: str = ""  # folder for the figures and tables; empty: run_dir/figures, or a new folder under reports/figures/
formats: list = ["pdf", "svg"]  # figure formats: pdf, svg, png
width: str = "column"  # figure width: "column" (one column of a two-column paper, 3.5 in) or "page" (the full text width, 7.2 in)
gallery_size: int = 12  # near misses in the gallery figure
n_boot: int = 1000  # bootstrap resamples for the intervals
seed: int = 0  # bootstrap seed
overwrite: bool = False  # replace figures and tables already in `out`
"""),
    code("""
import matplotlib.pyplot as plt

from arcnb import breakdown as B
from arcnb import plot as P
from arcnb import report as R

run = R.open_run(run_dir or None, predictions=predictions, dataset=dataset, tasks=tasks or None,
                 n_boot=n_boot, seed=seed)
R.require_scored(run, "paper figures")  # a hidden test set has no truth to plot against
fig_dir = R.figures_dir(out, run) or R.default_out("", {"path": run.label}, run.results.dataset.name,
                                                    kind="figures")
size = P.figsize(width)
written = []
by_names = ["structural", "grid_size", "shape_change"] + (["user"] if taxonomy else [])
figure_names = ["pass_at_k", "color_accuracy", "color_confusion", "gallery_near_misses"]
figure_names += [f"breakdown_{by}" for by in by_names]
figure_names += ["candidates_rank", "candidates_by_category", "candidates_reliability",
                 "candidates_pass_at_k"]  # drawn for a candidate pool
# every file this notebook may write is checked before the first is written
R.refuse_existing([fig_dir / f"{n}.{f}" for n in figure_names for f in formats]
                  + [fig_dir / "headline.tex"] + [fig_dir / f"breakdown_{by}.tex" for by in by_names],
                  overwrite=overwrite)
print(f"figures go to {fig_dir}")
"""),
    md("## pass@K and colours"),
    code("""
with P.paper_style():
    fig, ax = plt.subplots(figsize=size)
    P.pass_at_k(run.results, ax=ax)
    R.show_figure(fig, "pass_at_k", fig_dir, formats=formats, written=written,
                  overwrite=overwrite)
    fig, ax = plt.subplots(figsize=size)
    P.color_accuracy(B.color_accuracy(run.results), ax=ax)
    R.show_figure(fig, "color_accuracy", fig_dir, formats=formats, written=written,
                  overwrite=overwrite)
    fig, ax = plt.subplots(figsize=(size[0], min(size[0] * 0.92, 4.6)))
    P.confusion_heatmap(B.color_confusion(run.results), ax=ax)
    R.show_figure(fig, "color_confusion", fig_dir, formats=formats, written=written,
                  overwrite=overwrite)
"""),
    md("""
## Breakdowns

One figure per breakdown, led by pass@2 when enough groups have something solved, else
by partial credit (the note above each figure says which); the LaTeX tables show the
group, its number of tasks, pass@2 and its interval (pass `columns=[...]` to
`B.to_latex` for more).
"""),
    code("""
tables = {by: B.breakdown(run.results, by, n_boot=n_boot, seed=seed)
          for by in ("structural", "grid_size", "shape_change")}
if taxonomy:
    tables["user"] = B.breakdown(run.results, taxonomy, n_boot=n_boot, seed=seed)
with P.paper_style():
    for by, t in tables.items():
        lead = B.lead_metric(t)  # pass@2 when enough groups have something solved, else partial credit
        R.show(R.lead_html(t, lead, what=f"figure of {by}", panels=False))
        n_groups = int((t["group"] != "(all)").sum()) if "group" in t.columns else len(t)
        fig, ax = plt.subplots(figsize=(size[0], max(size[1], 0.2 * n_groups + 0.8)))
        P.breakdown_bars(t, value=lead, horizontal=True, ax=ax)  # group names read across
        R.show_figure(fig, f"breakdown_{by}", fig_dir, formats=formats, written=written,
                      overwrite=overwrite)
"""),
    md("## Near misses"),
    code("""
fig = P.gallery(run.results, "near_miss", sort="cell_accuracy", max_items=gallery_size,
                ncols=3, text="artists", title="near misses")
R.show_figure(fig, "gallery_near_misses", fig_dir, formats=formats, written=written, tight=False,
              overwrite=overwrite)
"""),
    md("## LaTeX tables (booktabs)"),
    code("""
written.append(B.to_latex(run.results.summary_table().reset_index(), fig_dir / "headline.tex",
                          overwrite=overwrite, caption="pass@K in three conventions",
                          label="tab:arc-headline"))
for by, t in tables.items():  # group, tasks, pass@2 and its interval; columns=[...] for more
    written.append(B.to_latex(t, fig_dir / f"breakdown_{by}.tex", overwrite=overwrite,
                              caption=f"pass@2 with its 95% interval by {by}",
                              label=f"tab:arc-{by}"))
print(open(fig_dir / "headline.tex").read())
"""),
    code("""
from arcnb.report.candidates import candidate_pool

# a candidate pool (more than 2 distinct candidates for some output): its four figures
pool = candidate_pool(run, n_boot=n_boot, seed=seed)
if pool is not None:
    with P.paper_style():
        for name, draw in (("candidates_rank", P.rank_histogram),
                           ("candidates_by_category", P.coverage_vs_pass),
                           ("candidates_reliability", P.reliability_diagram),
                           ("candidates_pass_at_k", P.pass_at_k_by_rule)):
            fig, ax = plt.subplots(figsize=size)
            draw(pool, ax=ax)
            R.show_figure(fig, name, fig_dir, formats=formats, written=written,
                          overwrite=overwrite)
"""),
    code("""
R.show(R.table_html(R.file_table(written), table_id="arcnb-figures-written"))
print(R.compact_line(run.metrics))
"""),
]

# =========================================================================== explore
EXPLORE = [
    md("""
# Explore a run in JupyterLab

A task and failure browser: previous / next, a slider, a task-id search box, the
selection filter (all, solved, failed, near misses, wrong shape, invalid or missing,
where compared runs disagree), a category filter, an attempt switcher and the cell
values. Each view shows the whole task (every demonstration pair, then the test input),
the truth, the attempt and the difference panel, with the output's numbers above it.
Run all cells; the browser appears under the next cell.
"""),
    params(f"""
# Parameters (papermill: -p NAME VALUE). Literals only.
run: str = "default"  # run directory, predictions file (scored on `dataset`), or a dataset name (tasks only); "default": the bundled example predictions on ARC-AGI-1 evaluation
dataset: str = "arc-agi-1:evaluation"  # the dataset a predictions file in `run` is scored on (a run directory records its own)
selection: str = "all"  # all, solved, failed, near_miss, wrong_shape, invalid_or_missing, or disagree (with compare)
category: str = ""  # show only this category of `taxonomy`; empty: any category
taxonomy: str = "structural"  # categories: structural (automatic), folder, or a task_id,category .csv / .json file
near_miss: float = {NEAR_MISS!r}  # an unsolved output whose cell accuracy reaches this is a near miss
compare: list = []  # other runs on the same tasks (run directories or predictions files), shown side by side
"""),
    code("""
import arcnb

ex = arcnb.explore(run or "default", dataset=dataset, select=selection,
                   category=category or None, taxonomy=taxonomy or None,
                   near_miss=near_miss, compare=compare or None)
ex
"""),
    md("""
## The selection as a table

`ex.items` is the current selection in browsing order (the Results table's rows);
`ex.save_selection("failures.txt")` writes its task ids as a task filter to send to a
colleague; `ex.gallery()` draws it as a static gallery for saving; `ex.go("task id")`
and `ex.go(12)` move the browser from code.
"""),
    code("""
ex.items.head(20)
"""),
]

# ============================================================================= sweep
SWEEP = [
    md("""
# Checkpoint sweep

The checkpoints of one training run, each evaluated on the same tasks (`arcnb sweep`):
learning curves with 95% bootstrap intervals over tasks, the test outputs gained and
lost from one checkpoint to the next, which tasks were solved when, the curves per
structural category, and the best checkpoint chosen without flattering it.
`arcnb sweep` runs this notebook into `sweep.html`; in batch:
`papermill notebooks/sweep.ipynb out.ipynb -k python3 -p sweep_dir DIR`.
"""),
    params("""
# Parameters (papermill: -p NAME VALUE). Literals only.
sweep_dir: str = ""  # a sweep folder written by arcnb sweep; empty: an example sweep (copying the input, then the bundled baseline) written to example_dir
example_dir: str = "sweep-example"  # where the example sweep is written when sweep_dir is empty
dataset: str = "arc-agi-1:evaluation"  # the example sweep's dataset (a sweep folder records its own)
gallery_size: int = 12  # at most this many grids per gallery of gained or lost outputs
n_boot: int = 1000  # bootstrap resamples for the intervals
seed: int = 0  # bootstrap and task-split seed
"""),
    code("""
from arcnb import plot as P
from arcnb import report as R
from arcnb import sweep as S

sw = (S.open_sweep(sweep_dir, seed=seed, n_boot=n_boot) if sweep_dir
      else S.example_sweep(example_dir, dataset, seed=seed, n_boot=n_boot))
table = sw.table()
ds = sw.dataset.info
print(f"{len(sw.entries)} checkpoints on {ds['name']} ({sw.summary()['n_tasks']} tasks); "
      f"steps from: {sw.step_source}")
"""),
    md("""
## Learning curves

Each metric at each checkpoint, with its 95% bootstrap interval over tasks as a band.
pass@2: per task, the fraction of its test outputs solved within 2 attempts, then the
mean over tasks (the ARC Prize rule). Shape accuracy: per task, the fraction of its
outputs whose first attempt has the right shape, then the mean over tasks. Cell
accuracy: the fraction of right cells, over the outputs with a right-shaped attempt.
Partial credit: per output a graded score in [0, 1], then per task and over tasks.
Near misses: the fraction of test outputs not solved whose cell accuracy reaches 0.9.
The graded metrics move long before pass@2 does.
"""),
    code("""
axes = P.learning_curves(table)
R.show_figure(axes[0].get_figure())
cols = ["step", "epoch", "pass@2", "pass@2_ci_low", "pass@2_ci_high", "shape_accuracy",
        "cell_accuracy", "partial_credit", "near_miss_rate", "n_near_miss", "checkpoint"]
R.show(R.table_html(table[cols], table_id="arcnb-sweep-table"))
"""),
    md("""
## Best checkpoint, chosen honestly

Picking the checkpoint with the best score on the tasks you then report on flatters
it: some of its lead is luck on those very tasks.
"""),
    code("""
from html import escape

sel = sw.selection()
R.show(f"<p id='arcnb-sweep-selection'>{escape(S.selection_text(sel))}</p>")
"""),
    md("""
## Outputs gained and lost

Test outputs solved (within 2 attempts) at a checkpoint but not at the one before
(gained), and the reverse (lost). The galleries show each changed output at the later
checkpoint: truth | prediction | difference.
"""),
    code("""
changes = sw.changes()
R.show_figure(P.changes_bars(changes, sw.steps).get_figure())
if changes.empty:
    print("No output was gained or lost between consecutive checkpoints.")
for step in sorted(set(changes["to_step"])):
    for change in ("gained", "lost"):
        rows = sw.changed_outputs(step, change)
        if len(rows):
            R.show_figure(P.gallery(sw.results_at(step), "all", rows=rows,
                                    max_items=gallery_size, title=f"{change} at step {step}"))
"""),
    md("""
## Which tasks were solved when

Each task's pass@2 at each checkpoint, for the tasks solved at some checkpoint, ordered
by the step they were first solved.
"""),
    code("""
solved = sw.solved_matrix()
print(f"{len(solved)} of {sw.summary()['n_tasks']} tasks solved at some checkpoint")
R.show_figure(P.solved_heatmap(solved).get_figure())
"""),
    md("""
## Per structural category

pass@2 and partial credit per category of the automatic structural taxonomy (a task
can be in several categories; the number of tasks is in brackets).
"""),
    code("""
cats = sw.categories()
R.show_figure(P.category_curves(cats, "pass@2").get_figure())
R.show_figure(P.category_curves(cats, "partial_credit").get_figure())
"""),
]


NOTEBOOKS = {
    "report.ipynb": REPORT,
    "evaluate.ipynb": EVALUATE,
    "compare.ipynb": COMPARE,
    "figures.ipynb": FIGURES,
    "explore.ipynb": EXPLORE,
}
NOTEBOOKS["sweep.ipynb"] = SWEEP


def build(cells) -> nbformat.NotebookNode:
    nb = new_notebook()
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nb.metadata["language_info"] = dict(LANGUAGE_INFO)
    out = []
    for i, c in enumerate(cells):
        if c[0] == "md":
            cell = new_markdown_cell(c[1])
        else:
            cell = new_code_cell(c[1])
            if c[2]:
                cell.metadata["tags"] = list(c[2])
        cell["id"] = f"cell-{i:02d}"
        out.append(cell)
    nb.cells = out
    return nb


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="exit 1 when a committed notebook differs from its cell list")
    args = ap.parse_args(argv)
    stale, extra = [], []
    for folder in (OUT, MIRROR):
        folder.mkdir(exist_ok=True)
        extra += [str(p.relative_to(ROOT)) for p in sorted(folder.glob("*.ipynb"))
                  if p.name not in NOTEBOOKS]
        for name, cells in NOTEBOOKS.items():
            text = nbformat.writes(build(cells)) + "\n"
            path = folder / name
            if args.check:
                if not path.exists() or path.read_text(encoding="utf-8") != text:
                    stale.append(str(path.relative_to(ROOT)))
                continue
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    if extra:
        print("notebooks without a cell list here (remove them or add a cell list): "
              + ", ".join(extra), file=sys.stderr)
    if stale:
        print("stale notebooks (run scripts/make_notebooks.py): " + ", ".join(stale),
              file=sys.stderr)
    return 1 if stale or extra else 0


if __name__ == "__main__":
    sys.exit(main())
