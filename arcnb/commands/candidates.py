"""Read many candidates per test output (a submission or benchmarking-harness run with more
than 2 attempts, or a candidates .json/.parquet file) and report coverage (is the right
answer among the candidates at all?), pass@1 and pass@2 per ranking rule, the selection
gap (coverage - pass@2), the rank of the right candidate, distinct candidates per output
and the calibration of the top candidate's vote share, with 95% bootstrap intervals over
tasks.
"""
from __future__ import annotations

from ..candidates import candidates
from ..errors import ArcnbError, printable
from ..runs import Run
from ..text import dataset_line, fmt_interval, fmt_number
from .common import (add_eval_options, add_option, add_result_options, add_scoring_inputs,
                     number, say, scored_input, show_result)

__all__ = ["add", "run"]


def add(sub) -> None:
    """Add ``arcnb candidates`` to the command line's sub-parsers (its ``func``: :func:`run`)."""
    p = sub.add_parser("candidates", help="measure a candidate pool: what the model found "
                                          "versus what it picked",
                       description=__doc__)
    add_scoring_inputs(p, "submission JSON file, benchmarking-harness run folder, or "
                          "candidates file (.json or .parquet)")
    p.add_argument("--rank-by", action="append", default=[], metavar="RULE",
                   help="a ranking rule to measure besides 'order' and 'votes': 'votes', "
                        "'order', a score of the candidates file (e.g. logprob), "
                        "'votes_then_<score>', 'passes_train' or 'product_of_experts' "
                        "(repeatable; the first one ranks rank_of_correct, default votes)")
    p.add_argument("--axis", choices=("sample", "view", "step", "iteration"),
                   help="the budget axis of the anytime curves (default: the first of "
                        "sample, view, step, iteration the candidates carry)")
    add_option(p, "candidates", "tie")
    add_eval_options(p, "candidates", "n_boot", "seed")
    add_result_options(p, "candidates", out_help="folder for summary.json and the CSV tables")
    p.set_defaults(func=run)


def run(args) -> int:
    """Run ``arcnb candidates`` on parsed arguments; returns the exit status."""
    ds, given = scored_input(args)
    if isinstance(given, Run):
        given = given.candidates()
        if given is None:
            raise ArcnbError(f"{printable(args.predictions)} holds no candidate pool: its run "
                             "has no candidates file and at most 2 attempts per test output")
    res = candidates(ds, given, rank_by=args.rank_by, axis=args.axis, tie=args.tie,
                     n_boot=args.n_boot, seed=args.seed)
    s = res.summary
    if args.out:
        res.write(args.out, overwrite=args.overwrite)
    for w in s["warnings"]:
        say("warning", w)
    return show_result(args, {k: v for k, v in s.items() if k != "definitions"},
                       lambda: _text(s))


def _text(s: dict) -> str:
    """The pool's numbers on the terminal (``s``: the analysis's summary)."""
    lo, hi = s["coverage_ci95"]
    lines = [dataset_line(s["dataset"]),
             f"tasks: {s['n_tasks']}  outputs: {s['n_outputs']}  samples: {s['n_samples']}  "
             f"distinct candidates: {s['n_candidates']}  invalid attempts: "
             f"{s['n_invalid_attempts']}  outputs without candidates: "
             f"{s['n_outputs_without_candidates']}",
             f"coverage: {number(s['coverage'])} {fmt_interval(lo, hi)}  per output: "
             f"{number(s['coverage_per_output'])}",
             f"{'rule':<20} {'pass@1':>8} {'pass@2':>8} {'selection_gap':>14}"]
    for rule, r in s["rankings"].items():
        lines.append(f"{rule[:20]:<20} {number(r['pass@1']):>8} {number(r['pass@2']):>8} "
                     f"{number(r['selection_gap']):>14}")
    lines.append("ties between equal votes: " + (
        "at random (pass@K is the exact expectation; --tie first: by first appearance)"
        if s["tie"] == "random" else "by first appearance"))
    lines.append(f"rank of the right candidate ({s['rank_by']}): "
                 + ", ".join(f"{k}: {v if isinstance(v, int) else fmt_number(v)}"
                             for k, v in s["rank_of_correct"].items()))
    lines.append(f"distinct candidates per output: {number(s['distinct_mean'])}  single-candidate "
                 f"share: {number(s['single_candidate_share'])}")
    elo, ehi = s["ece_ci95"]
    lines.append(f"calibration of the top vote share: ece {number(s['ece'])} [{number(elo)}, "
                 f"{number(ehi)}]")
    return "\n".join(lines + _budget_lines(s))


def _budget_lines(s: dict) -> list[str]:
    """The anytime curve at a few budgets, the refinement steps, the verifier and the
    confidence head, when the pool has them."""
    lines = []
    if "anytime" in s:
        pts = s["anytime"]["points"]
        shown = sorted({n for n in (1, 2, 4, 8, 16, 64, 256, len(pts)) if n <= len(pts)})
        lines.append(f"anytime ({s['anytime']['axis']}, votes in each subset, ties "
                     f"{s['anytime']['tie']}): "
                     + "; ".join(f"n={n} pass@1 {number(pts[n - 1]['pass@1'])} pass@2 "
                                 f"{number(pts[n - 1]['pass@2'])} coverage "
                                 f"{number(pts[n - 1]['coverage'])}" for n in shown))
        g = s["voting_gain"]
        lines.append(f"voting gain (pass@1 at n={g['n']} - at n=1): {number(g['value'])} "
                     f"[{number(g['ci95'][0])}, {number(g['ci95'][1])}]")
    if "first_right_step" in s:
        st = s["stability"]
        lines.append(f"first right {s['step_axis']}: "
                     + ", ".join(f"{k}: {v}" for k, v in s["first_right_step"].items())
                     + f"  stable: {st['n_stable']}  lost: {st['n_lost']}")
    if "verifier" in s:
        v = s["verifier"]
        lines.append(f"verifier (passes_train): precision {number(v['precision'])}  recall "
                     f"{number(v['recall'])}  overfit rate {number(v['overfit_rate'])}  coverage "
                     f"among passers {number(v['coverage_passers'])} (all "
                     f"{number(v['coverage_all'])})")
    if "confidence" in s:
        c = s["confidence"]
        lines.append(f"calibration of {c['score']}: ece {number(c['ece'])} "
                     f"[{number(c['ece_ci95'][0])}, {number(c['ece_ci95'][1])}]")
    return lines
