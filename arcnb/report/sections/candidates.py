"""The sections of a candidate pool that carries a budget axis or demonstration checks
(:mod:`arcnb.candidates`): what more draws buy, and how well passing the demonstrations
predicts being right. Each shows only when the run's pool has those fields, numbered
after the candidate pool (:func:`arcnb.report.candidates.section_numbers`)."""
from __future__ import annotations

import pandas as pd

from ... import plot as P
from ...html import note, table
from ...text import fmt_number
from ..candidates import candidate_pool, has_budget, has_checks, section_numbers
from .base import Figure, Section, section_names

#: The budgets the report's anytime table shows (those within the pool's size).
_SHOWN = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000)


def _fmt(x) -> str:
    return fmt_number(x, least=4, most=4)


class CandidateBudget(Section):
    """Anytime curves (pass@1, pass@2 and coverage against the number of draws, the
    exact expectation over subsets of that size, with a bootstrap band over tasks), the
    voting gain, and, with refinement steps, the first right step and what is lost."""

    title = "What more draws buy"
    anchor = "arcnb-candidate-budget"
    optional = True
    intro = ("For a budget of n draws, the exact expectation over every subset of n of each "
             "test output's draws (not one random draw): coverage (the right answer is among "
             "them), pass@1 and pass@2 with votes counted in the subset. Per task, then the "
             "mean over tasks, with a 95% bootstrap band over tasks.")

    def compute(self):
        o = self.options
        self.pool = candidate_pool(self.run, n_boot=o.n_boot, seed=o.seed)
        if not has_budget(self.pool):
            self.empty = ("The candidate pool has no budget axis (sample, view, step or "
                          "iteration per draw).")
            return
        s = self.pool.summary
        self.title = f"{section_numbers(self.run, o, self.pool)['CandidateBudget']}. {type(self).title}"
        if "anytime" in s:
            pts = s["anytime"]["points"]
            shown = [n for n in _SHOWN if n <= len(pts)] + (
                [len(pts)] if len(pts) not in _SHOWN else [])
            self.tables["anytime"] = pd.DataFrame([
                {"n": n, **{k: pts[n - 1][k] for k in ("pass@1", "pass@2", "coverage")}}
                for n in shown])
            self.numbers["voting_gain"] = s["voting_gain"]
            self.numbers["axis"] = s["anytime"]["axis"]
            self.numbers["tie"] = s["anytime"].get("tie", "first")
        if "first_right_step" in s:
            self.tables["steps"] = self.pool.steps
            self.numbers.update({k: s[k] for k in ("first_right_step", "stability")})

    def figures(self):
        if self.empty is not None:
            return []
        s = self.pool.summary
        out = []
        if "anytime" in s:
            out.append(Figure("candidates_anytime",
                              lambda ax: P.anytime_curve(self.pool, ax=ax)))
        if "first_right_step" in s:
            out.append(Figure("candidates_first_right_step",
                              lambda ax: P.first_right_step_histogram(self.pool, ax=ax)))
        return out

    def body(self):
        parts = []
        if "anytime" in self.tables:
            g = self.numbers["voting_gain"]
            tie = ("ties at random, the exact expectation" if self.numbers["tie"] == "random"
                   else "ties by first appearance")
            parts += [table(self.tables["anytime"], caption=f"per number of draws "
                            f"({self.numbers['axis']}), rule votes ({tie})"),
                      note(f"Voting gain: pass@1 with all {g['n']} draws minus pass@1 with one "
                           f"draw = {_fmt(g['value'])} [{_fmt(g['ci95'][0])}, "
                           f"{_fmt(g['ci95'][1])}]."),
                      self.image("candidates_anytime")]
        if "steps" in self.tables:
            st = self.numbers["stability"]
            parts += [note(f"{st['n_right_at_some_step']} of {st['n_outputs']} test outputs "
                           f"are right at some step: {st['n_stable']} stay right to the last "
                           f"step, {st['n_lost']} are wrong at the last step."),
                      table(self.tables["steps"], caption="per step: shares of all test "
                            "outputs"),
                      self.image("candidates_first_right_step")]
        return parts


class CandidateChecks(Section):
    """The verifier: precision, recall and overfit rate of ``passes_train`` as a
    predictor of a right test answer, and coverage among passing candidates. Shown only
    for a pool with demonstration checks (a confidence score's calibration is in the
    candidate pool's section)."""

    title = "Passing the demonstrations"
    anchor = "arcnb-candidate-checks"
    optional = True
    intro = ("Of the distinct candidates that reproduce every demonstration pair, how many "
             "are right on the test (precision), of the right ones how many pass (recall), "
             "and how many pass yet are wrong (the demonstration-overfit rate).")

    def compute(self):
        o = self.options
        self.pool = candidate_pool(self.run, n_boot=o.n_boot, seed=o.seed)
        if not has_checks(self.pool):
            self.empty = "The candidate pool has no demonstration checks (passes_train)."
            return
        self.title = f"{section_numbers(self.run, o, self.pool)['CandidateChecks']}. {type(self).title}"
        v = self.pool.summary["verifier"]
        self.numbers["verifier"] = v
        self.tables["verifier"] = pd.DataFrame([
            {"number": k, "value": v[k]} for k in (
                "precision", "recall", "overfit_rate", "coverage_passers", "coverage_all")])

    def figures(self):
        if self.empty is None:
            return [Figure("candidates_verifier",
                           lambda ax: P.verifier_confusion(self.pool, ax=ax))]
        return []

    def body(self):
        verifier = self.tables["verifier"].assign(value=self.tables["verifier"]["value"].map(_fmt))
        return [table(verifier, caption="distinct candidates with "
                      "passes_train"), self.image("candidates_verifier")]


__all__ = section_names(globals())
