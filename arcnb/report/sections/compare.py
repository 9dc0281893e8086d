"""The sections of the comparison page (:data:`arcnb.report.sections.COMPARE`), each
built from a comparison of several runs (:func:`arcnb.compare.compare`)."""
from __future__ import annotations

from ... import plot as P
from ...html import note, table
from ..html import file_table
from .base import Figure, Section, section_names


class CompareRuns(Section):
    """The runs side by side on the same tasks, and the comparison's notes."""
    built_from = "a comparison (arcnb.compare.compare([run, run, ...]))"

    title = "Runs"
    anchor = "arcnb-section-compare-runs"

    def compute(self):
        self.tables["runs"] = self.run.tables["runs"]
        self.numbers = {"notes": list(self.run.summary.get("notes", []))}

    def body(self):
        return ([table(self.tables["runs"], table_id="arcnb-compare-runs")]
                + [note(f"note: {n}") for n in self.numbers["notes"]])


class Leaderboard(Section):
    """pass@2 with its interval against cost per task (log axis) and the Pareto front;
    says so when the runs carry no cost."""
    built_from = "a comparison (arcnb.compare.compare([run, run, ...]))"

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


class CompareDifferences(Section):
    """The paired difference in pass@2 (B - A) with its bootstrap interval and the
    exact McNemar test, and a per-task picture for each pair of consecutive runs."""
    built_from = "a comparison (arcnb.compare.compare([run, run, ...]))"

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
                + [self.image(f.name) for f in self.figures()])


class CompareOnlyOne(Section):
    """The test outputs that only one of the runs solved."""
    built_from = "a comparison (arcnb.compare.compare([run, run, ...]))"

    title = "Outputs only one run solved"
    anchor = "arcnb-section-compare-only-one"

    def compute(self):
        self.tables["only_one_solved"] = self.run.tables["only_one_solved"]

    def body(self):
        return [table(self.tables["only_one_solved"], table_id="arcnb-compare-only-one")]


class CompareCategories(Section):
    """Per category, the differences between the runs."""
    built_from = "a comparison (arcnb.compare.compare([run, run, ...]))"

    title = "Per category"
    anchor = "arcnb-section-compare-categories"

    def compute(self):
        if "categories" not in self.run.tables:
            self.empty = "No taxonomy (the taxonomy option)."
            return
        self.tables["categories"] = self.run.tables["categories"]

    def body(self):
        return [table(self.tables["categories"], table_id="arcnb-compare-categories")]


class CompareFiles(Section):
    """With ``figures_dir`` (the compare page's ``out``): the comparison's tables (CSV,
    LaTeX, ``summary.json``) and leaderboard picture written there, listed."""
    built_from = "a comparison (arcnb.compare.compare([run, run, ...]))"

    title = "Files written"
    anchor = "arcnb-section-compare-files"

    def compute(self):
        if not self.options.figures_dir:
            self.empty = "Nothing written (the out option names no folder)."

    def files(self):
        return []

    def write(self, folder, *, overwrite=True):
        paths = self.run.write(folder, overwrite=overwrite)
        self.tables["files"] = file_table(paths)
        return paths

    def body(self):
        return [table(self.tables["files"], table_id="arcnb-compare-files")]


__all__ = section_names(globals())
