"""Re-score two or more run directories and compare them: paired bootstrap interval for the
difference in pass@2, exact McNemar test, outputs only one run solved, per-category
differences, and, when every run has a cost, the leaderboard picture (pass@2 against
cost per task, Pareto front). Writes CSV + LaTeX tables, summary.json and
leaderboard.png/.pdf into --out.
"""
from __future__ import annotations

from .. import report as R
from ..compare import compare
from ..difficulty import DIFFICULTY_FILE, MODELS as DIFFICULTY_MODELS
from ..errors import ParameterError
from ..runs import METRICS, PREDICTIONS
from ..text import fmt_interval, fmt_number, fmt_significant
from .common import add_eval_options, add_option, number, say

__all__ = ["add", "run"]


def add(sub) -> None:
    """Add ``arcnb compare`` to the command line's sub-parsers (its ``func``: :func:`run`)."""
    p = sub.add_parser("compare", help="compare run directories on the same tasks",
                       description=__doc__)
    add_option(p, "compare", "runs", help=f"run directories ({PREDICTIONS} + {METRICS}); with "
                                           "--dataset also submission files or benchmarking-harness "
                                           "run folders")
    add_option(p, "compare", "out", required=True, help="output folder for the tables and summary.json")
    add_option(p, "compare", "tasks", help="file of task ids: score every run on these tasks of its "
                                            "dataset (a task a run has no predictions for counts as "
                                            "wrong)")
    p.add_argument("--common-tasks", action="store_true",
                   help="compare on the tasks the runs share instead of refusing different "
                        "task sets")
    add_option(p, "compare", "taxonomy", help="categories for the per-category table: 'structural' "
                                               "(default), 'folder', a taxonomy .csv/.json file, or "
                                               "'none'")
    add_option(p, "compare", "dataset", help="re-score every run on this dataset instead of the one "
                                              f"recorded in its {METRICS} (needed for predictions "
                                              "given instead of run directories)")
    p.add_argument("--labels", help="comma-separated run labels (default: folder names)")
    add_eval_options(p, "compare", "n_boot", "seed")
    p.add_argument("--no-latex", action="store_true", help="write CSV tables only")
    add_option(p, "compare", "overwrite")
    p.add_argument("--report", action="store_true",
                   help="also run arcnb's compare notebook and export OUT/compare.html")
    _add_difficulty_options(p)
    p.set_defaults(func=run)


def _add_difficulty_options(p) -> None:
    """compare's task difficulty across the runs (:mod:`arcnb.difficulty`)."""
    p.add_argument("--difficulty-model", choices=(*DIFFICULTY_MODELS, "none"), default="rasch",
                   help="item response model of task difficulty across the runs, written to "
                        f"summary.json and {DIFFICULTY_FILE}: rasch (default), 2pl, or none")
    p.add_argument("--pool", action="store_true",
                   help="difficulty: runs given the same --labels label are one system")
    p.add_argument("--human-solve-rates", metavar="CSV",
                   help="difficulty: a CSV of task_id,solve_rate (people's solve rates) drawn "
                        "against the fitted task difficulty")


def _difficulty_kwargs(args) -> dict:
    model = args.difficulty_model
    return {"difficulty": None if model == "none" else model, "pool": True if args.pool else None,
            "solve_rates": args.human_solve_rates}


def _difficulty_line(summary: dict) -> str | None:
    d = summary.get("difficulty")
    if not d:
        return None
    n = sum(len(v) for v in d["surprises"].values())
    items = sorted(d["systems"].items(), key=lambda kv: -kv[1]["ability"])
    shown = items if len(items) <= 8 else items[:3] + items[-3:]
    words = [f"{k} {fmt_number(v['ability'], least=2, most=2)}" for k, v in shown]
    if len(items) > 8:
        words.insert(3, "...")
    return (f"difficulty: {d['model']} fit over {d['n_systems']} systems and {d['n_outputs']} "
            f"outputs (prior SD {fmt_significant(d['prior_sd'])}); abilities, highest first: "
            + ", ".join(words) + f"; {n} surprises; {DIFFICULTY_FILE}")


def _compare_taxonomy(args):
    """``--taxonomy``: 'structural' when not given, None for 'none'."""
    taxonomy = args.taxonomy or "structural"
    return None if taxonomy.lower() == "none" else taxonomy


def run(args) -> int:
    """Run ``arcnb compare`` on parsed arguments; returns the exit status."""
    if len(args.runs) < 2:
        raise ParameterError("compare needs at least two run directories")
    labels = [s.strip() for s in args.labels.split(",")] if args.labels else None
    cmp = compare(args.runs, labels=labels, common_only=args.common_tasks,
                  taxonomy=_compare_taxonomy(args), dataset=args.dataset, n_boot=args.n_boot,
                  seed=args.seed, tasks=args.tasks, **_difficulty_kwargs(args))
    cmp.write(args.out, overwrite=args.overwrite, latex=not args.no_latex)
    for w in cmp.summary["warnings"]:
        say("warning", w)
    print(f"compared {len(cmp.runs)} runs on {len(cmp.task_ids)} tasks"
          + (" (common tasks only)" if cmp.summary["common_tasks_only"] else ""))
    for pr in cmp.summary["pairs"]:
        print(f"{pr['run_b']} - {pr['run_a']}: pass@2 difference {number(pr['difference'])} "
              f"{fmt_interval(pr['ci_low'], pr['ci_high'])}, "
              # a p-value keeps 4 decimals (a tiny one is 0.0000, not 0.00000000)
              f"McNemar p={fmt_number(pr['mcnemar_p'], least=4, most=4)} "
              f"({pr['n_a_only']} outputs only {pr['run_a']}, {pr['n_b_only']} only "
              f"{pr['run_b']})")
    board = cmp.summary["leaderboard"]
    if board["drawn"]:
        print("leaderboard: " + ", ".join(f"{row['run']} {number(row['pass@2'])} at "
                                          f"${fmt_number(row['cost_per_task'], least=4, most=4)}"
                                          " per task"
                                          for row in cmp.summary["runs"])
              + "; Pareto front: " + ", ".join(board["pareto_front"]))
    else:
        print(board["note"])
    if _difficulty_line(cmp.summary):
        print(_difficulty_line(cmp.summary))
        for note in cmp.summary["difficulty"]["notes"][1:]:  # the first is in the guide
            say("note", "difficulty: " + note)
    for note in cmp.summary.get("notes", []):
        say("note", note)
    print(f"wrote {args.out}")
    if args.report:  # arcnb's compare notebook, exported as OUT/compare.html
        html = R.build_compare_report(args.runs, args.out, labels=labels, dataset=args.dataset,
                                      taxonomy=_compare_taxonomy(args),
                                      common_tasks=args.common_tasks, n_boot=args.n_boot,
                                      seed=args.seed, overwrite=args.overwrite,
                                      difficulty_model=args.difficulty_model, pool=args.pool,
                                      human_solve_rates=args.human_solve_rates,
                                      tasks=args.tasks)
        print(f"report: {html}")
    return 0
