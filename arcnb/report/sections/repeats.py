"""The sections of the page of many runs (:data:`arcnb.report.sections.REPEATS`), each
built from a :class:`arcnb.repeats.Repeats` (``arcnb.repeats(...)``)."""
from __future__ import annotations

import pandas as pd

from ... import plot as P
from ...html import note, table
from ...repeats import GRADED
from ...text import fmt_interval, fmt_number, fmt_percent
from .base import Figure, Options, Section, page_of, section_names
from .run import Provenance


class _RepeatsSection(Section):
    built_from = "many runs (arcnb.repeats([run, run, ...], dataset=...))"
    needs_truth = False


class RepeatsConfigs(_RepeatsSection):
    """pass@2 per configuration over its runs: mean, SD, min, max, both intervals."""

    title = "Spread over runs"
    anchor = "arcnb-section-repeats-configs"
    intro = ("pass@2 of each configuration as the mean over its runs, with the SD between "
             "runs, the lowest and highest run, and two 95% intervals: one over tasks and "
             "runs (a t interval whose variance adds the task sampling and the run-to-run "
             "spread; it needs two runs), and one from a single run (its tasks resampled, as "
             "a score of one run gives it). When runs disagree the single-run interval is too "
             "narrow. The variance columns are the two parts of the first interval's "
             "variance: task sampling and run-to-run spread. The graded metrics "
             "(shape accuracy, cell accuracy over the outputs with a right-shaped attempt, "
             "partial credit) get the same numbers in a table of their own.")

    def compute(self):
        graded = [f"{m}_{k}" for m in GRADED
                  for k in ("mean", "sd", "min", "max", "ci95_low", "ci95_high")]
        configs = self.run.configs
        self.tables["configs"] = configs.drop(columns=[c for c in graded if c in configs])
        self.tables["graded"] = self.run.graded
        self.tables["runs"] = self.run.runs
        s = self.run.summary
        self.numbers = {"n_runs": len(self.run.runs), "n_configs": len(s["configs"]),
                        "n_tasks": s["n_tasks"]}

    def figures(self):
        return [Figure("seed_spread", lambda ax: P.seed_spread(self.run.summary, ax=ax))]

    def body(self):
        n = self.numbers
        alone = [name for name, c in self.run.summary["configs"].items()
                 if c["pass@2"].get("ci95_note")]
        one_run = [note("No interval over tasks and runs for " + ", ".join(alone)
                        + ": one run gives no run-to-run spread to estimate (NaN); the "
                        "one-run interval is beside it.", note_id="arcnb-repeats-one-run")]
        return [note(f"{n['n_runs']} runs in {n['n_configs']} configurations on "
                     f"{n['n_tasks']} tasks", note_id="arcnb-repeats-count"),
                self.image("seed_spread"),
                table(self.tables["configs"], table_id="arcnb-repeats-configs")] + (
            one_run if alone else []) + (
            [] if self.tables["graded"].empty else
            [note("Graded metrics over runs: mean, SD, lowest and highest run, and the 95% "
                  "interval over tasks and runs."),
             table(self.tables["graded"], table_id="arcnb-repeats-graded")]) + [
                table(self.tables["runs"], table_id="arcnb-repeats-runs")]


class RepeatsFlips(_RepeatsSection):
    """Tasks whose pass@2 differs between runs of one configuration."""

    title = "Tasks that flip"
    anchor = "arcnb-section-repeats-flips"
    intro = ("Per configuration, the tasks always solved (pass@2 of 1 in every run), never "
             "solved (0 in every run) and flipping (solved in some runs only), with each "
             "flipping task's solve rate: the mean over runs of its pass@2.")

    def compute(self):
        self.tables["flips"] = self.run.flips
        self.numbers = {name: {k: c[k] for k in ("always_solved", "never_solved", "flipping",
                                                 "steady_partial")}
                        for name, c in self.run.summary["configs"].items()}

    def figures(self):
        return [Figure("solve_matrix", lambda ax: P.solve_matrix(self.run.matrix, ax=ax))]

    def body(self):
        counts = pd.DataFrame([{"config": k, **v} for k, v in self.numbers.items()])
        parts = [table(counts, table_id="arcnb-repeats-flip-counts"), self.image("solve_matrix")]
        if self.tables["flips"].empty:
            parts.append(note("No task flips between runs of a configuration."))
        else:
            parts.append(table(self.tables["flips"], table_id="arcnb-repeats-flips"))
        return parts


class RepeatsComparisons(_RepeatsSection):
    """Differences between configurations and the winner's curse."""

    title = "Differences between configurations"
    anchor = "arcnb-section-repeats-comparisons"
    intro = ("For each pair of configurations, the difference of their mean pass@2 (b - a) "
             "and one t-test of it: its variance adds the task-by-configuration interaction "
             "over tasks and the run-to-run spread pooled over the two configurations "
             "(critical values between the t quantiles of the two parts, weighted by their "
             "shares). The 95% interval, the two-sided "
             "p-value and mde80, the smallest difference the test finds with 80% power at "
             "the 5% level, all come from that test; it needs two runs of each "
             "configuration, and NaN says it could not be made. Below, the winner's "
             "curse: the run with the best pass@2 on a random half of the tasks, its score "
             "on that half and on the other half (averaged over many halves), beside the "
             "configuration's mean.")

    def compute(self):
        self.tables["comparisons"] = self.run.comparisons
        self.tables["winners_curse"] = pd.DataFrame(
            [{"config": k, **v} for k, v in self.run.summary["winners_curse"].items()])
        self.numbers = {"n_comparisons": len(self.tables["comparisons"])}

    def figures(self):
        return [Figure("winners_curse", lambda ax: P.winners_curse(
            self.run.summary["winners_curse"], ax=ax))]

    def body(self):
        parts = []
        if self.tables["comparisons"].empty:
            parts.append(note("A single configuration: nothing to compare."))
        else:
            parts.append(table(self.tables["comparisons"], table_id="arcnb-repeats-comparisons"))
            untested = [f"{c['b']} - {c['a']}: {c['note']}"
                        for c in self.run.summary["comparisons"] if c.get("note")]
            if untested:
                parts.append(note("No test for " + "; ".join(untested) + ".",
                                  note_id="arcnb-repeats-untested"))
        parts.append(self.image("winners_curse"))
        parts.append(table(self.tables["winners_curse"], table_id="arcnb-repeats-curse"))
        return parts


class RepeatsUnion(_RepeatsSection):
    """Union coverage against the number of runs, and unique solves per run."""

    title = "What more runs would add"
    anchor = "arcnb-section-repeats-union"
    intro = ("Union coverage: per test output, whether any of k runs solves it (per task "
             "then the mean over tasks), averaged over every choice of k runs. Unique solves: "
             "the test outputs a run solves and no other run does. The best pair: the two runs "
             "whose union has the highest pass@2. Ensembles: two attempts picked from the "
             "runs' attempts by votes across runs (ties by the named score when one is given, "
             "then run order). The ensemble chosen on a public half: among each run alone and "
             "each ensemble, the one with the best pass@2 on a random half of the tasks, "
             "scored on the other half, averaged over many halves, beside the same choice "
             "among the runs alone.")

    def compute(self):
        s = self.run.summary
        self.tables["union"] = self.run.union
        self.tables["unique_solves"] = pd.DataFrame(
            {"run": list(s["unique_solves"]), "unique_solves": list(s["unique_solves"].values())})
        self.numbers = {"union": s["union"]["pass@2"],
                        "mean_single": float(self.run.runs["pass@2"].mean())}
        e = s.get("ensemble") or {}
        rows = []
        for name, v in (e.get("sets") or {}).items():
            rows.append({"ensemble": name, "runs": len(v["runs"]), "pass@2": v["pass@2"],
                         "ci95_low": v["ci95"][0], "ci95_high": v["ci95"][1]})
            if "with_score" in v:
                w = v["with_score"]
                rows.append({"ensemble": f"{name} (ties by {e['score']})",
                             "runs": len(v["runs"]), "pass@2": w["pass@2"],
                             "ci95_low": w["ci95"][0], "ci95_high": w["ci95"][1]})
        self.tables["ensembles"] = pd.DataFrame(
            rows, columns=["ensemble", "runs", "pass@2", "ci95_low", "ci95_high"])
        self.numbers["held_out"] = e.get("held_out")

    def figures(self):
        return [Figure("union_coverage", lambda ax: P.union_coverage(
            self.tables["union"]["union_pass@2"], mean_single=self.numbers["mean_single"],
            ax=ax))]

    def body(self):
        pair = self.run.summary.get("best_pair") or {}
        parts = [self.image("union_coverage"),
                 table(self.tables["unique_solves"], table_id="arcnb-repeats-unique")]
        if pair.get("runs"):
            parts.append(note(f"Best pair by union: {pair['runs'][0]} and {pair['runs'][1]}, "
                              f"pass@2 {fmt_number(pair['pass@2'], least=4)}", note_id="arcnb-repeats-pair"))
        if not self.tables["ensembles"].empty:
            parts.append(table(self.tables["ensembles"], table_id="arcnb-repeats-ensembles"))
        h = self.numbers.get("held_out")
        if h and h.get("n_splits"):
            m, b = h["most_chosen"], h["best_run"]
            parts.append(note(
                f"Chosen on a public half ({h['n_splits']} halves; most often the "
                f"{m['kind']} {m['name']}, {fmt_percent(m['share'], least=0)}): public pass@2 "
                f"{fmt_number(h['public'], least=4)}, private {fmt_number(h['private'], least=4)} (95% "
                f"{fmt_interval(*h['ci95'])}); the best run alone chosen the "
                f"same way: private {fmt_number(b['private'], least=4)}", note_id="arcnb-repeats-held-out"))
        return parts


#: The page of many runs (``arcnb.repeats``), ending with the provenance block.
REPEATS = [RepeatsConfigs, RepeatsFlips, RepeatsComparisons, RepeatsUnion, Provenance]


def repeats_page(rep, options: Options | None = None, *, title: str = "Many runs") -> str:
    """The page of many runs as one self-contained HTML page (every section of
    :data:`REPEATS`, figures embedded): what ``arcnb repeats --report`` writes."""
    return page_of(REPEATS, rep, options, title=title)


__all__ = ["repeats_page"] + section_names(globals())
