"""The sections of the comparison page (:data:`arcnb.report.sections.COMPARE`), each
built from a comparison of several runs (:func:`arcnb.compare.compare`)."""
from __future__ import annotations

from ... import plot as P
from ...html import note, table
from ..html import file_table
from .base import Figure, FilesSection, Section, section_names

#: What the sections of the comparison page are built from (``built_from``).
COMPARISON = "a comparison (arcnb.compare.compare([run, run, ...]))"


class _CompareSection(Section):
    built_from = COMPARISON


class CompareRuns(_CompareSection):
    """The runs side by side on the same tasks, and the comparison's notes."""

    title = "Runs"
    anchor = "arcnb-section-compare-runs"

    def compute(self):
        self.tables["runs"] = self.run.tables["runs"]
        self.numbers = {"notes": list(self.run.summary.get("notes", []))}

    def body(self):
        return ([table(self.tables["runs"], table_id="arcnb-compare-runs")]
                + [note(f"note: {n}") for n in self.numbers["notes"]])


class Leaderboard(_CompareSection):
    """pass@2 with its interval against cost per task (log axis) and the Pareto front;
    says so when the runs carry no cost."""

    title = "Score against cost"
    anchor = "arcnb-section-leaderboard"
    intro = ("The leaderboard picture: one point per run, pass@2 (ARC Prize rule) with its 95% "
             "bootstrap interval over tasks, against cost per task (the runs' attempt metadata "
             "cost.total_cost over the common tasks) on a log axis; the dashed line joins the "
             "Pareto front, the runs that no other run beats on both cost and score.")

    def compute(self):
        if not self.run.has_cost:
            self.empty = ((self.run.summary.get("leaderboard") or {}).get("note")
                          or "Some run has no cost: no leaderboard picture.")
            return
        self.tables["runs"] = self.run.tables["runs"]

    def figures(self):
        return [Figure("leaderboard", lambda ax: self.run.leaderboard(ax=ax))]

    def body(self):
        return [self.image("leaderboard")]


class CompareDifferences(_CompareSection):
    """The paired difference in pass@2 (B - A) with its bootstrap interval and the
    exact McNemar test, and a per-task picture for each pair of consecutive runs."""

    title = "Paired differences"
    anchor = "arcnb-section-compare-differences"
    intro = ("Difference in pass@2 (B - A) over the same tasks with a 95% paired bootstrap "
             "interval, and the exact McNemar test on the outputs solved by exactly one of "
             "the two runs.")

    def compute(self):
        self.tables["differences"] = self.run.tables["differences"]

    def figures(self):
        runs = self.run.runs
        return [Figure(f"compare_{i}", (lambda a, b: lambda ax: P.compare(
            a.results, b.results, labels=(a.label, b.label), ax=ax))(a, b))
            for i, (a, b) in enumerate(zip(runs[:-1], runs[1:]))]

    def body(self):
        return ([table(self.tables["differences"], table_id="arcnb-compare-differences")]
                + self.images())


class CompareOnlyOne(_CompareSection):
    """The test outputs that only one of the runs solved."""

    title = "Outputs only one run solved"
    anchor = "arcnb-section-compare-only-one"

    def compute(self):
        self.tables["only_one_solved"] = self.run.tables["only_one_solved"]

    def body(self):
        return [table(self.tables["only_one_solved"], table_id="arcnb-compare-only-one")]


class CompareCategories(_CompareSection):
    """Per category, the differences between the runs."""

    title = "Per category"
    anchor = "arcnb-section-compare-categories"

    def compute(self):
        if "categories" not in self.run.tables:
            self.empty = "No taxonomy (the taxonomy option)."
            return
        self.tables["categories"] = self.run.tables["categories"]

    def body(self):
        return [table(self.tables["categories"], table_id="arcnb-compare-categories")]


class CompareFiles(_CompareSection, FilesSection):
    """With ``figures_dir`` (the compare page's ``out``): the comparison's tables (CSV,
    LaTeX, ``summary.json``) and leaderboard picture written there, listed."""

    title = "Files written"
    anchor = "arcnb-section-compare-files"
    nothing = "Nothing written (the out option names no folder)."

    def write(self, folder, *, overwrite=True):
        paths = self.run.write(folder, overwrite=overwrite)
        self.tables["files"] = file_table(paths)
        return paths

    def body(self):
        return [table(self.tables["files"], table_id="arcnb-compare-files")]


__all__ = section_names(globals())
