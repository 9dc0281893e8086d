"""The sections of one run's report, in the order the report shows them
(:data:`arcnb.report.sections.REPORT`).

Each is built from a :class:`arcnb.runs.Run` and the report's :class:`Options`
(``Colors.from_run(run, options)`` as the last line of a notebook cell shows the section); see
:class:`~arcnb.report.sections.base.Section` for what every section offers.
"""
from __future__ import annotations

import pandas as pd

from ... import breakdown as B
from ... import plot as P
from ...harness_logs import run_log_rates
from ...html import note, table
from ..candidates import section_numbers
from ..cost import cost_results
from ..html import (breakdown_html, cost_html, cut_note, definitions_html, graded_table_html,
                    headline_html, lead_html, provenance_block_html, provenance_html,
                    reference_html, run_files,
                    summary_html)
from ..overlap import overlap_check, overlap_section_html, overlap_split
from ..references import reference_categories, reference_runs, reference_table
from ..sources import resolve_references
from ..unscored import no_truth_html, predictions_gallery
from ...text import fmt_number, fmt_percent
from ...runs import provenance_block
from .base import Figure, Section, section_names


class Summary(Section):
    """The report's opening paragraph, written from the numbers (pass@2 with its
    interval, shapes, cells, partial credit); for an unscored run, that there is no
    truth."""

    needs_truth = False

    def compute(self):
        res = self.run.results
        if res is not None:
            self.numbers = {k: res.summary.get(k) for k in (
                "pass@2", "pass@2_ci95", "n_tasks", "n_outputs", "shape_accuracy",
                "cell_accuracy_right_shape", "partial_credit")}

    def body(self):
        return [summary_html(self.run)]


class PredictionsOnly(Section):
    """What the report shows for a run without truth (a hidden test set): the counts,
    the Kaggle submission's filler, and a gallery of the predictions."""

    title = "Predictions (no truth)"
    anchor = "arcnb-predictions-only"
    needs_truth = False

    def compute(self):
        if self.run.scored:
            self.empty = "This run is scored: its report shows the sections below."
            return
        s = self.run.summary
        self.numbers = {k: s.get(k) for k in ("n_tasks", "n_outputs", "n_attempts",
                                              "n_invalid_attempts")}

    def figures(self):
        return [Figure("gallery_predictions", lambda ax: predictions_gallery(
            self.run, max_items=self.options.gallery_size), tight=False, axes_level=False)]

    def to_html(self):
        self._require()
        if self.run.scored:  # a scored run's report shows the sections that follow
            return ""
        return super().to_html()

    def body(self):
        return [no_truth_html(self.run), self.image("gallery_predictions"),
                provenance_html(self.run.metrics, run_dir=self.run.run_dir)]


class Headline(Section):
    """pass@K in the three conventions with the pass@2 interval, the counts, and the
    definitions of every metric the report names."""

    title = "1. Headline"
    anchor = "arcnb-section-headline"
    intro = ("pass@K in the three conventions, with a 95% percentile bootstrap interval over "
             "tasks for pass@2. The table after it defines every metric this report names.")

    def compute(self):
        self.tables["headline"] = self.run.results.summary_table()
        s = self.run.results.summary
        self.numbers = {k: s.get(k) for k in ("pass@1", "pass@2", "pass@2_per_output",
                                              "pass@2_all_or_nothing", "pass@2_ci95",
                                              "n_tasks", "n_outputs")}

    def body(self):
        return [headline_html(self.run.metrics), definitions_html()]


class AlmostWorks(Section):
    """Where it almost works: shape accuracy, cell accuracy on right-shaped outputs,
    partial credit and near misses over every output, the cell-accuracy histogram,
    shape accuracy per structural category, and the nearest misses."""

    title = "2. Where it almost works"
    anchor = "arcnb-section-almost"
    intro = ("When few tasks are solved, the signal is in what the model almost gets right: "
             "whether its attempt has the right size at all (shape accuracy), how many cells "
             "are right when it does (cell accuracy over the right-shaped outputs), and the "
             "unsolved outputs that come closest (near misses: cell accuracy of at least the "
             "near-miss threshold).")

    def compute(self):
        o, res = self.options, self.run.results
        self.tables["overall"] = B.overall(res, ks=res.ks, n_boot=o.n_boot, seed=o.seed,
                                           near_miss=o.near_miss)
        self.tables["structural"] = B.breakdown(res, "structural", n_boot=o.n_boot, seed=o.seed,
                                                near_miss=o.near_miss)
        nearest = P.gallery_items(res, "failed", sort="cell_accuracy", max_items=o.gallery_size)
        self.tables["nearest_misses"] = nearest[["task_id", "test_index", "cell_accuracy",
                                                 "partial_credit", "truth_shape", "pred_shape",
                                                 "n_attempts"]]
        row = self.tables["overall"].iloc[0]
        self.numbers = {k: row.get(k) for k in ("shape_accuracy", "cell_accuracy_right_shape",
                                                "partial_credit", "n_near_miss")}

    def figures(self):
        o = self.options
        return [Figure("cell_accuracy_hist", lambda ax: P.cell_accuracy_hist(
                    self.run.results, near_miss=o.near_miss, ax=ax)),
                Figure("shape_accuracy_structural", lambda ax: P.breakdown_bars(
                    self.tables["structural"], value="shape_accuracy", horizontal=True, ax=ax))]

    def body(self):
        return [graded_table_html(self.tables["overall"], table_id="arcnb-overall",
                                  caption="every scored output; under each value, its 95% "
                                          "bootstrap interval over tasks"),
                self.image("cell_accuracy_hist"),
                note("Shape accuracy per structural category: which kinds of task get an "
                     "attempt of the right size at all (95% intervals over the category's "
                     "tasks)."),
                self.image("shape_accuracy_structural"),
                table(self.tables["nearest_misses"], table_id="arcnb-nearest-misses",
                      caption="unsolved outputs, nearest misses first (highest cell accuracy)"),
                cut_note(self.run, "failed", self.options.gallery_size)]


class References(Section):
    """Reference points (copy-the-input, the bundled program-search predictions, or the
    ``references`` option) scored on the same tasks beside the model, and the
    categories where a reference solves tasks the model does not."""

    title = "3. Reference points"
    anchor = "arcnb-section-references"
    intro = ("Simple baselines scored on the same tasks, set beside the model: copy-the-input "
             "(every attempt is the test input) and, on the embedded default, the bundled "
             "program-search baseline's precomputed predictions. Then the categories where a "
             "reference solves tasks the model does not (a task is solved when all its test "
             "outputs are right within 2 attempts).")

    def compute(self):
        o, run = self.options, self.run
        specs = resolve_references(o.references, run.results.dataset.name,
                                   exclude=run.flat_provenance().get("predictions"))
        self.refs = reference_runs(specs, run, n_boot=o.n_boot, seed=o.seed)
        if not self.refs:
            self.empty = "No reference runs (the references option names none)."
            return
        self.tables["references"] = reference_table(
            [run] + self.refs, labels=[f"this run: {run.label}"] + [r.label for r in self.refs],
            n_boot=o.n_boot, seed=o.seed, near_miss=o.near_miss)
        self.tables["reference_only"] = reference_categories(run, self.refs)
        self.numbers = dict(zip(self.tables["references"]["run"],
                                self.tables["references"]["pass@2"]))

    def figures(self):
        figs = [Figure("reference_points", lambda ax: P.breakdown_panels(
            self.tables["references"], group="run", lead="pass@2"), axes_level=False)]
        if len(self.tables["reference_only"]):
            figs.append(Figure("reference_categories", lambda ax: P.breakdown_bars(
                self.tables["reference_only"], value="reference_only", group="group",
                hue="reference", horizontal=True, count=True,
                ylabel="tasks solved by the reference only", ax=ax)))
        return figs

    def body(self):
        parts = [reference_html(self.tables["references"]), self.image("reference_points")]
        only = self.tables["reference_only"]
        if len(only):
            parts += [table(only, table_id="arcnb-reference-categories",
                            caption="categories where a reference solves tasks the model "
                                    "does not"),
                      self.image("reference_categories")]
        else:
            parts.append(note("No reference solves a task that the model does not."))
        return parts


class PassAtK(Section):
    """pass@K for every K up to the number of attempts, in the three conventions, with
    the bootstrap band of pass@K."""

    title = "4. pass@K"
    anchor = "arcnb-section-pass-at-k"
    intro = ("pass@K for every K up to the number of attempts in the predictions, in the "
             "three conventions; the curve shows pass@K (per task) with its bootstrap band.")

    def compute(self):
        o = self.options
        self.tables["pass_at_k"] = self.run.results.pass_at_k_table(n_boot=o.n_boot, seed=o.seed)
        t = self.tables["pass_at_k"]
        self.numbers = {f"pass@{int(k)}": v for k, v in zip(t["K"], t["pass@K"])}

    def figures(self):
        return [Figure("pass_at_k", lambda ax: P.pass_at_k(self.tables["pass_at_k"], ax=ax))]

    def body(self):
        return [table(self.tables["pass_at_k"], table_id="arcnb-pass-at-k",
                      caption="pass@K in the three conventions; ci_low / ci_high: 95% "
                              "bootstrap interval over tasks for pass@K (per task)"),
                self.image("pass_at_k")]


class Failures(Section):
    """Galleries of the near misses (nearest first) and the failures: truth |
    prediction | difference for each output's best attempt."""

    title = "6. Failures and near misses"
    anchor = "arcnb-section-failures"
    intro = ("Truth | prediction | difference for each output (the best attempt: the first "
             "correct one, else the right-shaped one with the most correct cells). Wrong "
             "cells are marked in the difference panel; a wrong shape or a missing prediction "
             "is stated instead. Near misses are unsolved outputs whose cell accuracy reaches "
             "the near-miss threshold, nearest first.")

    def compute(self):
        o, res = self.options, self.run.results
        self.tables["near_misses"] = P.gallery_items(res, "near_miss", near_miss=o.near_miss,
                                                     sort="cell_accuracy")
        self.tables["failures"] = P.gallery_items(res, "failed")
        self.numbers = {"n_near_misses": len(self.tables["near_misses"]),
                        "n_failures": len(self.tables["failures"])}

    def figures(self):
        o, res = self.options, self.run.results
        return [Figure("gallery_near_misses", lambda ax: P.gallery(
                    res, "near_miss", near_miss=o.near_miss, sort="cell_accuracy",
                    max_items=o.gallery_size, title="near misses"), tight=False,
                    axes_level=False),
                Figure("gallery_failures", lambda ax: P.gallery(
                    res, "failed", max_items=o.gallery_size, title="failures"), tight=False,
                    axes_level=False)]

    def body(self):
        o = self.options
        return [self.image("gallery_near_misses"),
                cut_note(self.run, "near_miss", o.gallery_size, near_miss=o.near_miss),
                self.image("gallery_failures")]


class SecondAttempt(Section):
    """What the second attempt adds: the test outputs solved by attempt 1, by attempt 2
    only, and by neither, per output and per task; with attempt 2 only, how much of
    pass@2 it carries."""

    title = "5. What the second attempt adds"
    anchor = "arcnb-section-second-attempt"
    intro = ("pass@2 counts an output solved when either of its first two attempts is right. "
             "This table splits the solved outputs into those attempt 1 already solves and "
             "those only attempt 2 solves: a large second share means the ranking of "
             "candidates (which one goes first) leaves points to a second guess.")

    def compute(self):
        out = self.run.results.outputs
        if "solved@1" not in out.columns or "solved@2" not in out.columns:
            self.empty = "The run has fewer than 2 attempts per output."
            return
        first = out["solved@1"].astype(float)
        both = out["solved@2"].astype(float)
        second_only = (both - first).clip(lower=0)
        n = len(out)
        rows = [("solved by attempt 1", int(first.sum())),
                ("solved by attempt 2 only", int(round(second_only.sum()))),
                ("not solved within 2 attempts", int(round(n - both.sum())))]
        self.tables["second_attempt"] = pd.DataFrame(
            [{"test outputs": what, "count": c, "share": c / n if n else float("nan")}
             for what, c in rows])
        per_task = pd.DataFrame({"task_id": out["task_id"], "first": first,
                                 "second": second_only}).groupby("task_id").mean()
        solved2 = float(both.sum())
        self.numbers = {"n_outputs": n, "solved_attempt_1": rows[0][1],
                        "solved_attempt_2_only": rows[1][1],
                        "pass@1": float(per_task["first"].mean()) if n else float("nan"),
                        "pass@2_gain": float(per_task["second"].mean()) if n else float("nan"),
                        "share_of_pass@2_from_attempt_2":
                            rows[1][1] / solved2 if solved2 else float("nan")}

    def body(self):
        nb = self.numbers
        share = nb["share_of_pass@2_from_attempt_2"]
        words = ("Attempt 2 solves no output that attempt 1 misses."
                 if not nb["solved_attempt_2_only"] else
                 f"Attempt 2 alone solves {nb['solved_attempt_2_only']} of the "
                 f"{nb['solved_attempt_1'] + nb['solved_attempt_2_only']} outputs solved within "
                 f"2 attempts ({fmt_percent(share, least=1)}); it adds "
                 f"{fmt_number(nb['pass@2_gain'], least=4)} to pass@1 "
                 f"({fmt_number(nb['pass@1'], least=4)}) per task.")
        return [table(self.tables["second_attempt"], table_id="arcnb-second-attempt"),
                note(words, note_id="arcnb-second-attempt-note")]


class SeveralOutputs(Section):
    """The tasks with several test outputs: by their number of outputs, how many have
    all, some or none of their outputs right within 2 attempts, and pass@2 per task
    (the ARC Prize rule: the fraction right) beside all-or-nothing over them; then the
    tasks only partly solved. Shown when the run has such tasks."""

    title = "Tasks with several test outputs"
    anchor = "arcnb-section-several-outputs"
    optional = True
    intro = ("A task with several test inputs scores the fraction of its test outputs right "
             "within 2 attempts under the ARC Prize rule, and 1 only when every one is right "
             "under all-or-nothing. Here are the tasks with two test outputs or more, by "
             "their number of outputs: how many have all, some or none of them right, and "
             "both scores over those tasks.")

    def compute(self):
        out = self.run.results.outputs
        solved = out["solved@2" if "solved@2" in out.columns else "solved@1"].astype(bool)
        per_task = (pd.DataFrame({"task_id": out["task_id"], "right": solved})
                    .groupby("task_id", sort=False)["right"].agg(["size", "sum"]))
        several = per_task[per_task["size"] >= 2]
        if several.empty:
            self.empty = "No task has several test outputs."
            return
        rows = []
        for n, g in several.groupby("size"):
            rows.append({"test outputs": int(n), "tasks": len(g),
                         "all right": int((g["sum"] == n).sum()),
                         "some right": int(((g["sum"] > 0) & (g["sum"] < n)).sum()),
                         "none right": int((g["sum"] == 0).sum()),
                         "pass@2": float((g["sum"] / n).mean()),
                         "pass@2_all_or_nothing": float((g["sum"] == n).mean())})
        self.tables["by_outputs"] = pd.DataFrame(rows)
        partly = several[(several["sum"] > 0) & (several["sum"] < several["size"])]
        self.tables["partly_solved"] = pd.DataFrame(
            {"task_id": partly.index.astype(str), "test outputs": partly["size"].astype(int).values,
             "right": partly["sum"].astype(int).values})
        t = self.tables["by_outputs"]
        self.numbers = {"n_tasks": int(t["tasks"].sum()), "n_tasks_all": len(per_task),
                        "n_outputs": int(several["size"].sum()),
                        "all_right": int(t["all right"].sum()),
                        "some_right": int(t["some right"].sum()),
                        "none_right": int(t["none right"].sum()),
                        "pass@2": float((several["sum"] / several["size"]).mean()),
                        "pass@2_all_or_nothing": float((several["sum"] == several["size"]).mean())}

    def body(self):
        nb = self.numbers
        words = (f"{nb['n_tasks']} of {nb['n_tasks_all']} tasks have several test outputs "
                 f"({nb['n_outputs']} outputs): all right in {nb['all_right']}, some in "
                 f"{nb['some_right']}, none in {nb['none_right']}; over them pass@2 is "
                 f"{fmt_number(nb['pass@2'], least=4)} per task and "
                 f"{fmt_number(nb['pass@2_all_or_nothing'], least=4)} all-or-nothing.")
        parts = [note(words, note_id="arcnb-several-outputs-note"),
                 table(self.tables["by_outputs"], table_id="arcnb-several-outputs",
                       caption="tasks by their number of test outputs; right: within 2 "
                               "attempts")]
        if len(self.tables["partly_solved"]):
            parts.append(table(self.tables["partly_solved"], table_id="arcnb-several-outputs-partly",
                               caption="tasks with some but not all of their test outputs right"))
        return parts


class Colors(Section):
    """Per-colour accuracy of attempt 1 (over the outputs whose attempt 1 has the
    truth's shape) and the colour confusion matrix."""

    title = "7. Colours"
    anchor = "arcnb-section-colours"
    intro = ("Per-colour accuracy: for each colour, the fraction of truth cells of that colour "
             "that attempt 1 predicts correctly, over the outputs whose attempt 1 has the "
             "truth's shape. The confusion matrix counts cells (rows: truth colour, columns: "
             "predicted colour), normalised by row.")

    def compute(self):
        res = self.run.results
        self.tables["color_accuracy"] = B.color_accuracy(res)
        self.tables["color_confusion"] = B.color_confusion(res)
        self.tables["color_confusion_normalized"] = B.color_confusion(res, normalize="true")
        acc = self.tables["color_accuracy"]
        self.numbers = {"n_used": acc.attrs.get("n_used"), "n_outputs": acc.attrs.get("n_outputs")}

    def figures(self):
        if self.options.width:  # a paper: the column's width, about as high
            w = P.figsize(self.options.width)[0]
            size = (w, min(w * 0.92, 4.6))
        else:
            size = (7, 6.4)  # large enough to read every cell's number
        return [Figure("color_accuracy", lambda ax: P.color_accuracy(
                    self.tables["color_accuracy"], ax=ax)),
                Figure("color_confusion", lambda ax: P.confusion_heatmap(
                    self.tables["color_confusion"], ax=ax), figsize=size)]

    def body(self):
        acc = self.tables["color_accuracy"]
        return [table(acc, table_id="arcnb-color-accuracy",
                      caption=f"{acc.attrs['n_used']} of {acc.attrs['n_outputs']} outputs used "
                              "(attempt 1 with the truth's shape)"),
                self.image("color_accuracy"), self.image("color_confusion"),
                table(self.tables["color_confusion_normalized"], index=True, digits=3,
                      table_id="arcnb-color-confusion")]


def _breakdown_body(t, table_id: str, caption: str, image: str) -> list[str]:
    return [breakdown_html(t, table_id=table_id, caption=caption), lead_html(t), image]


class Categories(Section):
    """The automatic structural taxonomy (every task) and, with the ``taxonomy``
    option, a user taxonomy: exact pass@2 beside the graded metrics, with intervals."""

    title = "8. Categories"
    anchor = "arcnb-section-categories"
    intro = ("The automatic structural taxonomy (computed from each task's demonstration "
             "pairs) covers every task; a user taxonomy is added when the taxonomy option "
             "names one. A task with several categories counts in each; a task without one "
             "shows as uncategorized. Each table gives the exact pass@2 next to the graded "
             "metrics, with 95% bootstrap intervals over the category's tasks; the chart leads "
             "with pass@2 when enough categories have something solved, else with partial "
             "credit.")

    def compute(self):
        o, res = self.options, self.run.results
        kw = dict(n_boot=o.n_boot, seed=o.seed, near_miss=o.near_miss)
        self.tables["structural"] = B.breakdown(res, "structural", **kw)
        if o.taxonomy:
            self.tables["user"] = B.breakdown(res, o.taxonomy, **kw)
        self.numbers = {name: B.lead_metric(t) for name, t in self.tables.items()}

    def figures(self):
        return [Figure(f"breakdown_{name}", (lambda t: lambda ax: P.breakdown_panels(t))(t),
                       axes_level=False) for name, t in self.tables.items()]

    def body(self):
        parts = _breakdown_body(self.tables["structural"], "arcnb-breakdown-structural",
                                "automatic structural taxonomy",
                                self.image("breakdown_structural"))
        user = self.tables.get("user")
        if user is None:
            parts.append(note("No user taxonomy given (the taxonomy option)."))
        else:
            cov = user.attrs.get("coverage", {})
            parts += _breakdown_body(user, "arcnb-breakdown-user",
                                     f"taxonomy {user.attrs['grouping']}: "
                                     f"{cov.get('n_categorized')} of {cov.get('n_tasks')} "
                                     "tasks categorised", self.image("breakdown_user"))
        return parts


class GridSizeAndShape(Section):
    """Breakdowns by the truth grid's size (its larger side, binned) and by shape
    change (the truth's shape against the test input's), per test output."""

    title = "9. Grid size and shape change"
    anchor = "arcnb-section-grid-size"
    intro = ("Grid size bins the larger side of the truth grid; shape change compares the "
             "truth's shape with the test input's. Both assign each test output on its own.")
    BY = ("grid_size", "shape_change")

    def compute(self):
        o, res = self.options, self.run.results
        for by in self.BY:
            self.tables[by] = B.breakdown(res, by, n_boot=o.n_boot, seed=o.seed,
                                          near_miss=o.near_miss)
        self.numbers = {by: B.lead_metric(t) for by, t in self.tables.items()}

    def figures(self):
        return [Figure(f"breakdown_{by}", (lambda t: lambda ax: P.breakdown_panels(t))(t),
                       axes_level=False) for by, t in self.tables.items()]

    def body(self):
        parts = []
        for by in self.BY:
            parts += _breakdown_body(self.tables[by], f"arcnb-breakdown-{by.replace('_', '-')}",
                                     by, self.image(f"breakdown_{by}"))
        return parts


class Cost(Section):
    """What the run cost, from the attempts' metadata: the cost headline, score against
    cost per task, and cost and tokens for solved and unsolved tasks."""

    title = "10. Cost and efficiency"
    anchor = "arcnb-section-cost"
    intro = ("What the run cost, from the attempts' metadata (a benchmarking-harness run "
             "folder carries it): cost per task, score against cost per task on a log scale, "
             "and cost and tokens for the solved and the unsolved tasks.")

    def compute(self):
        self.costed = cost_results(self.run)
        if self.costed is None:
            self.empty = "No cost: the predictions carry no cost metadata."
            return
        self.tables["cost_by_outcome"] = B.cost_by_outcome(self.costed)
        s = self.costed.summary
        self.numbers = {k: s.get(k) for k in ("total_cost", "cost_per_task", "cost_per_attempt",
                                              "total_tokens", "tokens_per_task",
                                              "total_cost_cached", "total_tool_calls",
                                              "total_turns")}
        rates = run_log_rates(self.run.predictions)
        if rates is not None:
            self.tables["api_log"] = pd.DataFrame([rates])
            self.numbers.update({k: rates[k] for k in ("retry_rate", "timeout_rate",
                                                       "failure_rate")})

    def to_html(self):
        self._require()
        if self.empty is not None:  # the id the report has always given this note
            return (f"<section class='arcnb-section' data-section='Cost'>"
                    f"<h2 id=\"{self.anchor}\">{self.title}</h2>"
                    f"<p>{self.intro}</p>{note(self.empty, note_id='arcnb-no-cost')}</section>")
        return super().to_html()

    def figures(self):
        return [Figure("cost_vs_score", lambda ax: P.cost_vs_score(self.costed, ax=ax)),
                Figure("cost_by_outcome", lambda ax: P.cost_by_outcome(self.costed),
                       axes_level=False)]

    def body(self):
        logs = ([table(self.tables["api_log"], table_id="arcnb-cost-api-log",
                       caption="from the harness's API logs (logs/<config>/<dataset>/"
                               "<task>.jsonl): requests, retries (a request that repeats "
                               "an attempt), failed requests, tasks that timed out")]
                if "api_log" in self.tables else [])
        return [cost_html(self.costed.summary), *logs, self.image("cost_vs_score"),
                table(self.tables["cost_by_outcome"], table_id="arcnb-cost-by-outcome",
                      caption="per task; solved: every test output right within 2 attempts"),
                self.image("cost_by_outcome")]


class RunFiles(Section):
    """The files of a run directory (name and size) and its provenance: what the
    evaluate page shows after writing a run."""

    title = "Files and provenance"
    anchor = "arcnb-section-run-files"
    needs_truth = False

    def compute(self):
        if self.run.run_dir is None:
            self.empty = "A run in memory: no files."
            return
        self.tables["files"] = run_files(self.run.run_dir)

    def body(self):
        return [table(self.tables["files"], table_id="arcnb-run-files"),
                provenance_html(self.run.metrics, run_dir=self.run.run_dir)]


def provenance_of(data) -> dict:
    """The provenance block (:func:`arcnb.runs.provenance_block`) of what a page shows:
    a run (its dataset and scoring rule), or a comparison, a sweep, many runs, a
    candidate pool or ARC-AGI-3 scorecards, each of which carries its block in its
    summary (a list of them: the first one's, with every run's label)."""
    if isinstance(getattr(data, "cards", None), list):  # ARC-AGI-3 scored runs
        data = data.cards
    if isinstance(data, (list, tuple)) and data:
        blocks = [provenance_of(d) for d in data]
        labels = [getattr(d, "label", None) for d in data]
        return {**blocks[0], **({"runs": labels} if all(labels) else {})}
    summary = getattr(data, "summary", None)
    summary = summary() if callable(summary) else summary
    if isinstance(summary, dict) and isinstance(summary.get("provenance"), dict):
        return summary["provenance"]
    results = getattr(data, "results", None)
    info = summary.get("dataset") if isinstance(summary, dict) else None
    return provenance_block(info, estimator=getattr(results, "estimator", None))


class Provenance(Section):
    """Where the numbers come from (the one provenance block every page ends with) and,
    for one run, the compact line to quote them with. Takes what the page shows: a run,
    a comparison, a sweep, many runs or ARC-AGI-3 scorecards."""

    title = "11. Provenance"
    anchor = "arcnb-section-provenance"
    intro = ("Where these numbers come from: the dataset, its version and the task filter, "
             "the arcnb version and the rules the numbers follow (the scoring rule, how "
             "votes break ties, the ARC-AGI-3 rule); for one run also the checkpoint's "
             "SHA-256, the commit and the compact line to quote beside the number.")
    needs_truth = False

    def compute(self):
        self.block = provenance_of(self.run)
        one_run = hasattr(self.run, "flat_provenance")
        # numbered after the optional sections a run's report shows (11 when it shows
        # none); the last section of another page, unnumbered
        self.title = (f"{section_numbers(self.run, self.options)['Provenance']}. Provenance"
                      if one_run else "Provenance")
        rows = (self.run.flat_provenance() if one_run else
                {k: v for k, v in self.block.items() if k != "rules"})
        rows.update({f"{k} rule": v for k, v in self.block["rules"].items()})
        self.tables["provenance"] = pd.DataFrame([{"key": k, "value": v}
                                                  for k, v in rows.items()])
        self.numbers = {"provenance": self.block}
        if one_run:
            self.numbers["compact_line"] = self.run.compact_line()

    def body(self):
        if hasattr(self.run, "flat_provenance"):
            return [provenance_html(self.run.metrics, run_dir=self.run.run_dir,
                                    rules=self.block["rules"])]
        return [provenance_block_html(self.block)]


class TrainingOverlap(Section):
    """With the ``train_data`` option: which test outputs the training data already
    holds (verbatim, or rotated / mirrored and recoloured), and the headline metrics on
    the clean and on the overlapping part."""

    title = "Training-data overlap"
    anchor = "arcnb-training-overlap"
    optional = True
    intro = ("A test output overlaps when the training data holds its pair verbatim or "
             "rotated / mirrored and recoloured; a task overlaps when one of its test outputs "
             "does. pass@2 is compared over tasks, pass@2_per_output over test outputs.")

    def compute(self):
        o = self.options
        if not o.train_data:
            self.empty = "No training data given (the train_data option)."
            return
        self.check = overlap_check(self.run, list(o.train_data), run_dir=self.run.run_dir)
        self.tables["outputs"] = self.check.outputs
        self.tables["split"] = overlap_split(self.run, self.check, n_boot=o.n_boot, seed=o.seed)
        s = self.check.summary
        self.numbers = {k: s.get(k) for k in ("n_outputs", "outputs_exact",
                                              "outputs_equivalent", "tasks_equivalent")}

    def to_html(self):
        self._require()
        if self.empty is not None:
            return ""
        o = self.options
        return ("<section class='arcnb-section' data-section='TrainingOverlap'>"
                + overlap_section_html(self.run, self.check, n_boot=o.n_boot, seed=o.seed)
                + "</section>")


__all__ = section_names(globals())
