"""The report's candidate-pool section: shown when a run has more than 2 distinct
candidates for some test output (an augmented evaluate run's ``candidates.parquet``, or
predictions with more than 2 attempts), see :mod:`arcnb.candidates`."""
from __future__ import annotations

import pandas as pd

from ..candidates import CANDIDATE_DEFINITIONS, CandidateAnalysis, candidates
from ..text import fmt_interval, fmt_number
from ..html import heading
from .html import note_html, table_html

__all__ = ["candidate_pool", "candidates_html", "section_numbers", "confidence_note",
           "FIRST_OPTIONAL"]

#: The number of the first optional numbered section of one run's report (after "10. Cost
#: and efficiency"): the candidate pool, what more draws buy, passing the
#: demonstrations and the probes are numbered from it when they are shown, in that
#: order, and the provenance takes the next number.
FIRST_OPTIONAL = 11


def candidate_pool(run, *, n_boot: int = 1000, seed: int = 0) -> CandidateAnalysis | None:
    """The candidate pool of a scored run, or None when no test output has more than 2
    distinct candidates (then the report shows nothing). The pool is the run
    directory's :data:`arcnb.runs.CANDIDATES` when it has one (refused when it is not
    the pool that run wrote), else its attempts: :meth:`arcnb.runs.Run.candidates`."""
    res = getattr(run, "results", None)
    if res is None:
        return None
    # the pool sections of one report share one analysis (the same run, n_boot, seed)
    if _LAST and _LAST[0] is run and _LAST[1] == (n_boot, seed):
        return _LAST[2]
    pool = _candidate_pool(run, res, n_boot, seed)
    _LAST[:] = [run, (n_boot, seed), pool]
    return pool


_LAST: list = []


def _candidate_pool(run, res, n_boot, seed):
    source = run.candidates()  # the run's pool: its candidates file, else its attempts
    if source is None:
        return None
    pool = candidates(res.dataset, source, n_boot=n_boot, seed=seed)
    return pool if int(pool.outputs["n_distinct"].max()) > 2 else None


def has_budget(pool: CandidateAnalysis | None) -> bool:
    """Whether the pool has a budget axis or refinement steps (what more draws buy)."""
    return pool is not None and ("anytime" in pool.summary
                                 or "first_right_step" in pool.summary)


def has_checks(pool: CandidateAnalysis | None) -> bool:
    """Whether the pool has demonstration checks (``passes_train``)."""
    return pool is not None and "verifier" in pool.summary


def section_numbers(run, options, pool=False) -> dict:
    """The numbers of the optional sections shown for ``run`` (by class name:
    ``CandidatePool``, ``CandidateBudget``, ``CandidateChecks``, ``Probes``), counted
    from :data:`FIRST_OPTIONAL` over those the run has data for, and ``Provenance``'s
    (the next one). ``pool``: the run's candidate pool when the caller has it."""
    if pool is False:
        pool = (candidate_pool(run, n_boot=options.n_boot, seed=options.seed)
                if getattr(run, "scored", True) else None)
    probes = bool(getattr(run, "probes", None) or getattr(run, "proxy", None))
    shown = {"CandidatePool": pool is not None, "CandidateBudget": has_budget(pool),
             "CandidateChecks": has_checks(pool), "Probes": probes}
    numbers, n = {}, FIRST_OPTIONAL
    for name, here in shown.items():
        if here:
            numbers[name] = n
            n += 1
    numbers["Provenance"] = n
    return numbers


def confidence_note(pool: CandidateAnalysis) -> str:
    """The calibration of the pool's confidence score, in words (empty without one)."""
    c = pool.summary.get("confidence")
    if c is None:
        return ""
    lo, hi = c["ece_ci95"]
    return note_html(f"Calibration of the score {c['score']} of the top candidate (ranked by "
                     f"votes, then {c['score']}"
                     + (", read through the sigmoid" if c.get("transform") == "sigmoid" else "")
                     + f"): ECE {fmt_number(c['ece'], least=4)} {fmt_interval(lo, hi)} over "
                     f"{c['n_outputs']} test outputs.", note_id="arcnb-candidates-confidence")


def candidates_html(pool: CandidateAnalysis, title: str = "Candidate pool") -> str:
    """The section: coverage and, per ranking rule, pass@1, pass@2 and the selection gap
    (with 95 % intervals), the rank of the right candidate, distinct candidates per
    output and the calibration of the top vote share (and of a confidence score)."""
    s = pool.summary

    def ci(v, lo_hi):
        return f"{fmt_number(v, least=4)} {fmt_interval(*lo_hi)}"

    rows = [{"rule": rule, "pass@1": ci(r["pass@1"], r["pass@1_ci95"]),
             "pass@2": ci(r["pass@2"], r["pass@2_ci95"]),
             "selection_gap": ci(r["selection_gap"], r["selection_gap_ci95"])}
            for rule, r in s["rankings"].items()]
    head = pd.DataFrame([
        {"number": "coverage", "value": ci(s["coverage"], s["coverage_ci95"]),
         "meaning": CANDIDATE_DEFINITIONS["coverage"]},
        {"number": "distinct_mean", "value": fmt_number(s['distinct_mean'], least=2),
         "meaning": CANDIDATE_DEFINITIONS["distinct_mean"]},
        {"number": "ece", "value": ci(s["ece"], s["ece_ci95"]),
         "meaning": CANDIDATE_DEFINITIONS["ece"]},
    ])
    ranks = pd.DataFrame([{"rank of the right candidate": k, "test outputs": v}
                          for k, v in s["rank_of_correct"].items()])
    tie = ("ties between equal votes broken uniformly at random (pass@K is the exact "
           "expectation)" if s.get("tie") == "random" else
           "ties between equal votes broken by first appearance")
    parts = [heading(title, "arcnb-candidate-pool"),
             note_html(f"{s['n_candidates']} distinct candidates from {s['n_samples']} "
                       f"samples over {s['n_outputs']} test outputs: what the model found "
                       "versus what it picked. The selection gap (coverage - pass@2) is "
                       f"what a perfect choice of two candidates would add. Rules that "
                       f"count votes: {tie}.",
                       note_id="arcnb-candidates-note"),
             table_html(head, table_id="arcnb-candidates-summary",
                        caption="95% bootstrap intervals over tasks"),
             table_html(pd.DataFrame(rows), table_id="arcnb-candidates-rules",
                        caption="per ranking rule"),
             confidence_note(pool),
             table_html(ranks, table_id="arcnb-candidates-ranks",
                        caption=f"under the rule {s['rank_by']}")]
    parts += [note_html(w, note_id="arcnb-candidates-warning") for w in s["warnings"]]
    return "\n".join(parts)
