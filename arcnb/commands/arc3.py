"""``arcnb arc3``: the command line of the ARC-AGI-3 recordings (``score`` and
``report``, :mod:`arcnb.arc3`); bad input is an :class:`~arcnb.errors.ArcnbError`,
which the command answers in one line."""
from __future__ import annotations

from ..report.arc3 import build_report
from ..arc3.scorer import OUTPUT_FILES, score
from ..runs import REPORT_HTML, OutputFolder, unique_labels
from .common import Parser, add_eval_options, add_option, add_result_options, show_result

__all__ = ["add", "run"]


def add(sub) -> None:
    """Add ``arcnb arc3`` (``score``, ``report``) to the command line's sub-parsers.
    Its shared options (``--n-boot``, ``--seed``, ``--json``, ``--out``,
    ``--overwrite``, the paths) come from the command line's one registry
    (:func:`arcnb.commands.common.add_option`), so that each means here what it means
    in every other subcommand."""
    p = sub.add_parser("arc3", help="ARC-AGI-3 game recordings: re-score them as the official "
                                    "scorecard does",
                       description="Read ARC-AGI-3 game recordings (the toolkit's .jsonl "
                                   "files, the agents repository's *.recording.jsonl, "
                                   "benchmarking-harness run folders) without running any "
                                   "game.")
    cmds = p.add_subparsers(dest="arc3_command", required=True, parser_class=Parser)

    def rule_options(q) -> None:
        q.add_argument("--rule", default="0.9.9",
                       help="the scoring rule, by toolkit version: 0.9.9 (default: squared "
                            "efficiency capped at 115, levels weighted by number, completion "
                            "cap), 0.9.6 (capped at 100, no completion cap) or 0.9.1 (the "
                            "linear rule, plain mean)")
        q.add_argument("--cap", type=float, metavar="M",
                       help="score as if each play stopped past M x the human baseline on a "
                            "level (the verified leaderboard uses 5)")
        q.add_argument("--all-games", action="store_true",
                       help="count every game of the baselines in the mean (a game never "
                            "played scores 0), not only the games the recordings play")
        q.add_argument("--competition", action="store_true",
                       help="the run claims competition mode (one play per game, no full "
                            "resets)")
        q.add_argument("--max-actions", type=int, metavar="N",
                       help="the run's declared cap on actions per recording")
        add_eval_options(q, "arc3", "n_boot", "seed")

    s = cmds.add_parser("score", help="score recordings with the official rule (RHAE)",
                        description="Re-score recordings exactly as the toolkit's scorecard "
                                    "does: per level, play, game and run, the best play of "
                                    "each game, the first play alone, a 95% bootstrap "
                                    "interval over games, and the recorder's faults, named "
                                    "and never repaired.")
    s.add_argument("recordings", nargs="+", metavar="PATH",
                   help="one run each, as in 'arcnb arc3 report': a recording (.jsonl), a "
                        "harness run folder (run_meta.json and step_NNN.json files) or a "
                        "folder of them; several PATHs give one scorecard each")
    s.add_argument("--merge", action="store_true",
                   help="score all the PATHs as one run (one scorecard: their plays add up) "
                        "instead of one run each")
    s.add_argument("--baselines", required=True,
                   help="human baselines: a folder of game metadata.json files "
                        "(<game>/<version>/metadata.json or <game_id>/metadata.json) or a CSV "
                        "game_id,level,baseline_actions (levels from 1)")
    rule_options(s)
    add_result_options(s, "arc3", out_help="folder for summary.json and the games, plays, levels "
                                           "and faults tables (CSV)",
                       overwrite_help="replace existing files in --out")
    s.set_defaults(func=run)
    r = cmds.add_parser("report", help="an HTML report of one or more runs (papermill "
                                       "notebook of sections)",
                        description="Score each run, compare them, and write a self-contained "
                                    f"HTML report (DIR/{REPORT_HTML}, from the executed "
                                    "DIR/arc3.ipynb) with the figures, each run's tables and "
                                    "every recording's replay page beside it. With no RUN "
                                    "and no --baselines: the bundled example (two agents "
                                    "on a small synthetic game).")
    r.add_argument("runs", nargs="*", metavar="RUN",
                   help="one run each: a recording, a harness run folder or a folder of them "
                        "(none: the bundled example)")
    r.add_argument("--baselines", help="as for 'arcnb arc3 score' (required with RUN)")
    add_option(r, "arc3", "out", required=True, help="the report's folder")
    r.add_argument("--label", action="append", default=[], metavar="LABEL",
                   help="a run's label, once per run in order (default: the agent's or the "
                        "folder's name)")
    rule_options(r)
    add_option(r, "arc3", "overwrite", help="replace an existing report")
    r.set_defaults(func=run)


def run(args) -> int:
    """Run ``arcnb arc3 score`` or ``arcnb arc3 report`` on parsed arguments."""
    if args.arc3_command == "report":
        html = build_report(args.runs, args.out, baselines=args.baselines,
                            labels=args.label or None, rule=args.rule, cap=args.cap,
                            all_games=args.all_games, competition=args.competition,
                            max_actions=args.max_actions, n_boot=args.n_boot, seed=args.seed,
                            overwrite=args.overwrite)
        print(f"wrote {html}")
        return 0
    # each PATH is a run (as in 'arc3 report'); one scorecard of them all only when asked
    runs = [args.recordings] if args.merge else [[p] for p in args.recordings]
    cards = [score(r, args.baselines, rule=args.rule, cap=args.cap, all_games=args.all_games,
                   n_boot=args.n_boot, seed=args.seed,
                   competition=True if args.competition else None,
                   max_actions=args.max_actions) for r in runs]
    if len(cards) == 1:
        card = cards[0]
        return show_result(args, card.summary(), card.text,
                           lambda out: card.write(out, overwrite=args.overwrite))
    names = unique_labels([c.label for c in cards], sep="_")

    def write(out) -> None:  # one folder per run, all claimed before any is written
        folders = [OutputFolder(out).folder(n) for n in names]
        for folder in folders:
            folder.claim(OUTPUT_FILES, overwrite=args.overwrite)
        for card, folder in zip(cards, folders):
            card.write(folder.path, overwrite=args.overwrite)

    return show_result(args, {"runs": [c.summary() for c in cards]},
                       lambda: "\n\n".join(c.text() for c in cards), write)
