"""The sections of a run's candidate pool (:mod:`arcnb.candidates`): the pool itself
(when some test output has more than 2 distinct candidates), and, when it carries a
budget axis or demonstration checks, what more draws buy and how well passing the
demonstrations predicts being right. Each shows only when the run's pool has its
fields, numbered among the optional sections of one run's report
(:func:`arcnb.report.candidates.section_numbers`)."""
from __future__ import annotations

from typing import ClassVar

import pandas as pd

from ... import plot as P
from ...html import note, table
from ...text import fmt_number
from ..candidates import candidate_pool, candidates_html, section_numbers
from .base import Figure, Section, section_names

#: The budgets the report's anytime table shows (those within the pool's size).
_SHOWN = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000)


def _fmt(x) -> str:
    return fmt_number(x, least=4, most=4)


class _PoolSection(Section):
    """An optional section of the run's candidate pool (one analysis for the three:
    :func:`arcnb.report.candidates.candidate_pool`): shown, numbered among the optional
    sections (:func:`~arcnb.report.candidates.section_numbers` says which are shown),
    when the pool has what it shows, else empty, ``absent`` saying why; a subclass
    fills its tables and numbers in ``compute_pool(summary)``."""

    optional = True
    absent: ClassVar[str] = ""

    def compute(self):
        o = self.options
        self.pool = candidate_pool(self.run, n_boot=o.n_boot, seed=o.seed)
        number = section_numbers(self.run, o, self.pool).get(type(self).__name__)
        if number is None:
            self.empty = self.absent
            return
        self.title = f"{number}. {type(self).title}"
        self.compute_pool(self.pool.summary)

    def compute_pool(self, s: dict) -> None:
        """Fill ``tables`` and ``numbers`` from the pool (``s``: its summary)."""


class CandidatePool(_PoolSection):
    """The candidate pool, shown when some test output has more than 2 distinct
    candidates: coverage, each ranking rule's pass@1 / pass@2 and selection gap, the
    rank of the right candidate and the calibration of the top vote share."""

    title = "Candidate pool"
    anchor = "arcnb-candidate-pool"
    intro = ("What the model found versus what it picked, when it proposes more than two "
             "distinct candidates for some test output (an augmented evaluation, or "
             "predictions with more than two attempts).")
    absent = "No candidate pool: no test output has more than 2 distinct candidates."

    def compute_pool(self, s):
        self.tables.update({"outputs": self.pool.outputs, "rankings": pd.DataFrame(
            [{"rule": rule, **{k: v for k, v in r.items() if not isinstance(v, (list, tuple))}}
             for rule, r in s["rankings"].items()])})
        self.numbers = {k: s.get(k) for k in ("coverage", "coverage_ci95", "distinct_mean",
                                              "ece", "n_candidates", "n_outputs")}

    def figures(self):
        return [Figure(name, (lambda draw: lambda ax: draw(self.pool, ax=ax))(draw))
                for name, draw in (("candidates_rank", P.rank_histogram),
                                   ("candidates_by_category", P.coverage_vs_pass),
                                   ("candidates_reliability", P.reliability_diagram),
                                   ("candidates_pass_at_k", P.pass_at_k_by_rule))]

    def to_html(self):
        self._require()
        if self.empty is not None:  # nothing at all: the report shows no section
            return ""
        # the pool's own fragment carries the heading (id arcnb-candidate-pool)
        return ("<section class='arcnb-section' data-section='CandidatePool'>"
                + "\n".join(self.body()) + "</section>")

    def body(self):
        return [candidates_html(self.pool, self.title), self.image("candidates_rank"),
                self.image("candidates_pass_at_k")]


class CandidateBudget(_PoolSection):
    """Anytime curves (pass@1, pass@2 and coverage against the number of draws, the
    exact expectation over subsets of that size, with a bootstrap band over tasks), the
    voting gain, and, with refinement steps, the first right step and what is lost."""

    title = "What more draws buy"
    anchor = "arcnb-candidate-budget"
    intro = ("For a budget of n draws, the exact expectation over every subset of n of each "
             "test output's draws (not one random draw): coverage (the right answer is among "
             "them), pass@1 and pass@2 with votes counted in the subset. Per task, then the "
             "mean over tasks, with a 95% bootstrap band over tasks.")
    absent = "The candidate pool has no budget axis (sample, view, step or iteration per draw)."

    def compute_pool(self, s):
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


class CandidateChecks(_PoolSection):
    """The verifier: precision, recall and overfit rate of ``passes_train`` as a
    predictor of a right test answer, and coverage among passing candidates. Shown only
    for a pool with demonstration checks (a confidence score's calibration is in the
    candidate pool's section)."""

    title = "Passing the demonstrations"
    anchor = "arcnb-candidate-checks"
    intro = ("Of the distinct candidates that reproduce every demonstration pair, how many "
             "are right on the test (precision), of the right ones how many pass (recall), "
             "and how many pass yet are wrong (the demonstration-overfit rate).")
    absent = "The candidate pool has no demonstration checks (passes_train)."

    def compute_pool(self, s):
        v = s["verifier"]
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
