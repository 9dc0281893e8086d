"""The sections of a candidate pool that carries a budget axis or demonstration checks
(:mod:`arcnb.candidates`): what more draws buy, and how well passing the demonstrations
predicts being right. Each shows only when the run's pool has those fields."""
from __future__ import annotations

import pandas as pd

from ... import plot as P
from ...html import note, table
from ..candidates import candidate_pool
from .base import Figure, Section

__all__ = ["CandidateBudget", "CandidateChecks"]

#: The budgets the report's anytime table shows (those within the pool's size).
_SHOWN = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000)


def _fmt(x) -> str:
    return "n/a" if x is None or x != x else f"{x:.4f}"


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
        s = self.pool.summary if self.pool is not None else {}
        if "anytime" not in s and "first_right_step" not in s:
            self.empty = ("The candidate pool has no budget axis (sample, view, step or "
                          "iteration per draw).")
            return
        if "anytime" in s:
            pts = s["anytime"]["points"]
            shown = [n for n in _SHOWN if n <= len(pts)] + (
                [len(pts)] if len(pts) not in _SHOWN else [])
            self.tables["anytime"] = pd.DataFrame([
                {"n": n, **{k: pts[n - 1][k] for k in ("pass@1", "pass@2", "coverage")}}
                for n in shown])
            self.numbers["voting_gain"] = s["voting_gain"]
            self.numbers["axis"] = s["anytime"]["axis"]
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
            parts += [table(self.tables["anytime"], caption=f"per number of draws "
                            f"({self.numbers['axis']}), rule votes"),
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
    """The verifier (precision, recall and overfit rate of ``passes_train`` as a
    predictor of a right test answer, coverage among passing candidates) and the
    calibration of a confidence head (``q_halt`` or ``confidence``)."""

    title = "Passing the demonstrations"
    anchor = "arcnb-candidate-checks"
    optional = True
    intro = ("Of the distinct candidates that reproduce every demonstration pair, how many "
             "are right on the test (precision), of the right ones how many pass (recall), "
             "and how many pass yet are wrong (the demonstration-overfit rate).")

    def compute(self):
        o = self.options
        self.pool = candidate_pool(self.run, n_boot=o.n_boot, seed=o.seed)
        s = self.pool.summary if self.pool is not None else {}
        if "verifier" not in s and "confidence" not in s:
            self.empty = "The candidate pool has no demonstration checks or confidence."
            return
        if "verifier" in s:
            v = s["verifier"]
            self.numbers["verifier"] = v
            self.tables["verifier"] = pd.DataFrame([
                {"number": k, "value": _fmt(v[k])} for k in (
                    "precision", "recall", "overfit_rate", "coverage_passers",
                    "coverage_all")])
        if "confidence" in s:
            c = s["confidence"]
            self.numbers["confidence"] = {k: c[k] for k in ("score", "ece", "ece_ci95")}
            self.tables["confidence"] = self.pool.confidence_reliability

    def figures(self):
        if self.empty is None and "verifier" in self.numbers:
            return [Figure("candidates_verifier",
                           lambda ax: P.verifier_confusion(self.pool, ax=ax))]
        return []

    def body(self):
        parts = []
        if "verifier" in self.tables:
            parts += [table(self.tables["verifier"], caption="distinct candidates with "
                            "passes_train"), self.image("candidates_verifier")]
        if "confidence" in self.numbers:
            c = self.numbers["confidence"]
            lo, hi = c["ece_ci95"]
            parts.append(note(f"Calibration of the confidence {c['score']} of the top "
                              f"candidate (votes, then {c['score']}): ECE {_fmt(c['ece'])} "
                              f"[{_fmt(lo)}, {_fmt(hi)}]."))
        return parts
