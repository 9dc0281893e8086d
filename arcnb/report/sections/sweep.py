"""The sections of a checkpoint sweep's page (:data:`arcnb.report.sections.SWEEP`),
each built from a sweep (:func:`arcnb.sweep.open_sweep`)."""
from __future__ import annotations

from ... import plot as P
from ...html import escape, note, table
from ...text import fmt_percent
from .base import Figure, Section, section_names

#: The sweep table's columns shown on the page.
CURVE_COLUMNS = ["step", "epoch", "pass@2", "pass@2_ci_low", "pass@2_ci_high", "shape_accuracy",
                 "cell_accuracy", "partial_credit", "near_miss_rate", "n_near_miss", "checkpoint"]


def selection_text(sel: dict) -> str:
    """The honest selection in words (the sweep page's paragraph)."""
    def pct(v):
        return fmt_percent(v, least=1, most=1)

    lo, hi = sel["report_score_ci95"]
    metric = sel["metric"]
    return (f"The tasks were split at random into a selection half ({sel['n_selection_tasks']} "
            f"tasks) and a report half ({sel['n_report_tasks']} tasks), each structural "
            f"category divided evenly between them. The checkpoint with the best {metric} on "
            f"the selection half is step {sel['chosen_step']} ({pct(sel['selection_score'])} "
            f"there); on the report half, which played no part in choosing it, it scores "
            f"{pct(sel['report_score'])} (95% interval {pct(lo)} to {pct(hi)}). Choosing the "
            f"best checkpoint on the report half itself would have picked step "
            f"{sel['best_step_on_report_half']} and claimed "
            f"{pct(sel['best_score_on_report_half'])}: choosing on the tasks you report on "
            f"inflates the score by {pct(sel['inflation'])} here. Over all tasks the best "
            f"checkpoint is step {sel['full_set_best_step']} with "
            f"{pct(sel['full_set_best_score'])}, a figure that carries the same bias.")


class _SweepSection(Section):
    built_from = "a sweep (arcnb.sweep.open_sweep(DIR))"


class SweepCurves(_SweepSection):
    """Each metric at each checkpoint with its 95% bootstrap band, and the table."""

    title = "Learning curves"
    anchor = "arcnb-section-sweep-curves"
    intro = ("Each metric at each checkpoint, with its 95% bootstrap interval over tasks as a "
             "band. pass@2: per task, the fraction of its test outputs solved within 2 "
             "attempts, then the mean over tasks (the ARC Prize rule). Shape accuracy: per "
             "task, the fraction of its outputs whose first attempt has the right shape, then "
             "the mean over tasks. Cell accuracy: the fraction of right cells, over the outputs "
             "with a right-shaped attempt. Partial credit: per output a graded score in [0, 1], "
             "then per task and over tasks. Near misses: the fraction of test outputs not "
             "solved whose cell accuracy reaches 0.9. The graded metrics move long before "
             "pass@2 does.")

    def compute(self):
        t = self.run.table()
        self.tables["sweep"] = t
        ds = self.run.dataset.info
        self.numbers = {"n_checkpoints": len(self.run.entries), "dataset": ds["name"],
                        "n_tasks": self.run.summary()["n_tasks"],
                        "step_source": self.run.step_source}

    def figures(self):
        return [Figure("learning_curves", lambda ax: P.learning_curves(self.tables["sweep"]),
                       axes_level=False)]

    def body(self):
        n = self.numbers
        t = self.tables["sweep"]
        return [note(f"{n['n_checkpoints']} checkpoints on {n['dataset']} ({n['n_tasks']} "
                     f"tasks); steps from: {n['step_source']}", note_id="arcnb-sweep-count"),
                self.image("learning_curves"),
                table(t[[c for c in CURVE_COLUMNS if c in t.columns]],
                      table_id="arcnb-sweep-table")]


class SweepSelection(_SweepSection):
    """The best checkpoint chosen on one half of the tasks and reported on the other."""

    title = "Best checkpoint, chosen honestly"
    anchor = "arcnb-section-sweep-selection"
    intro = ("Picking the checkpoint with the best score on the tasks you then report on "
             "flatters it: some of its lead is luck on those very tasks.")

    def compute(self):
        self.numbers = dict(self.run.selection())

    def body(self):
        return [f"<p id='arcnb-sweep-selection'>{escape(selection_text(self.numbers))}</p>"]


class SweepChanges(_SweepSection):
    """Test outputs gained and lost from one checkpoint to the next, with galleries."""

    title = "Outputs gained and lost"
    anchor = "arcnb-section-sweep-changes"
    intro = ("Test outputs solved (within 2 attempts) at a checkpoint but not at the one "
             "before (gained), and the reverse (lost). The galleries show each changed output "
             "at the later checkpoint: truth | prediction | difference.")

    def compute(self):
        self.tables["changes"] = self.run.changes()
        self.numbers = {"n_changes": len(self.tables["changes"])}

    def figures(self):
        sw, o = self.run, self.options
        figs = [Figure("changes", lambda ax: P.changes_bars(self.tables["changes"], sw.steps,
                                                            ax=ax))]
        changes = self.tables["changes"]
        for step in sorted(set(changes["to_step"])) if len(changes) else []:
            for change in ("gained", "lost"):
                rows = sw.changed_outputs(step, change)
                if len(rows):
                    figs.append(Figure(
                        f"{change}_at_{step}", (lambda s, c, r: lambda ax: P.gallery(
                            sw.results_at(s), "all", rows=r, max_items=o.gallery_size,
                            title=f"{c} at step {s}"))(step, change, rows),
                        tight=False, axes_level=False))
        return figs

    def body(self):
        parts = self.images()
        if self.tables["changes"].empty:
            parts.append(note("No output was gained or lost between consecutive checkpoints."))
        return parts


class SweepSolved(_SweepSection):
    """Each task's pass@2 at each checkpoint, for the tasks solved at some checkpoint."""

    title = "Which tasks were solved when"
    anchor = "arcnb-section-sweep-solved"
    intro = ("Each task's pass@2 at each checkpoint, for the tasks solved at some checkpoint, "
             "ordered by the step they were first solved.")

    def compute(self):
        self.tables["solved"] = self.run.solved_matrix()
        self.numbers = {"n_solved_tasks": len(self.tables["solved"]),
                        "n_tasks": self.run.summary()["n_tasks"]}

    def figures(self):
        return [Figure("solved", lambda ax: P.solved_heatmap(self.tables["solved"], ax=ax))]

    def body(self):
        n = self.numbers
        return [note(f"{n['n_solved_tasks']} of {n['n_tasks']} tasks solved at some checkpoint"),
                self.image("solved")]


class SweepCategories(_SweepSection):
    """pass@2 and partial credit per structural category at each checkpoint."""

    title = "Per structural category"
    anchor = "arcnb-section-sweep-categories"
    intro = ("pass@2 and partial credit per category of the automatic structural taxonomy (a "
             "task can be in several categories; the number of tasks is in brackets).")

    def compute(self):
        self.tables["categories"] = self.run.categories()

    def figures(self):
        return [Figure(f"categories_{m.replace('@', '_at_')}",
                       (lambda m: lambda ax: P.category_curves(self.tables["categories"], m,
                                                               ax=ax))(m))
                for m in ("pass@2", "partial_credit")]

    def body(self):
        return self.images()


__all__ = ["selection_text"] + section_names(globals())
