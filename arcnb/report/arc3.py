"""``arcnb arc3 report``: the ARC-AGI-3 report of one or more runs, the shipped notebook
``arc3.ipynb`` (one cell per section of :data:`arcnb.report.sections.arc3.ARC3`) executed with
papermill and exported to one self-contained HTML page, with the runs' tables and every
recording's replay beside it. Given no run and no baselines, the bundled example
(:func:`arcnb.resources.arc3_example`).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from ..arc3.baselines import read_baselines
from ..arc3.reader import find_recordings
from ..arc3.scorer import get_rule
from ..errors import ParameterError
from ..runs import REPORT_HTML, OutputFolder, absolute_path, check_out_path
from .notebooks import export_html, run_notebook
from .sections.arc3 import ARC3, Options, folder_names, report_inputs, scored_runs

__all__ = ["build_report", "REPORT_FILES"]

#: The files the report writes at the top of its folder (besides the figures, the
#: runs' tables and ``replays/``).
REPORT_FILES = ("arc3.ipynb", REPORT_HTML)


def _check_before_the_kernel(groups, baselines, out: Path, *, labels, rule, cap, all_games,
                             competition, max_actions, seed, overwrite) -> None:
    """What the notebook would find only in a cell, found here in one line before the
    kernel starts: the runs read and scored as its setup cell scores them (a label count
    that is not the run count, a recording without steps, an unknown rule), and, without
    ``overwrite``, a figure, a run's tables or a replay folder the report would replace."""
    scored = scored_runs(groups, baselines, labels=labels, rule=rule, cap=cap or None,
                         all_games=all_games, competition=True if competition else None,
                         max_actions=max_actions or None, n_boot=10, seed=seed)
    if overwrite:
        return
    names = [f for cls in ARC3 for f in cls.from_run(scored, Options()).files()]
    names += [n for n in folder_names(scored.labels) if (out / n).exists()]
    if (out / "replays").exists():
        names.append("replays")
    OutputFolder(out).claim([n for n in names if not (out / n).is_dir()],
                            folders=[n for n in names if (out / n).is_dir()], overwrite=False)


def build_report(runs: Sequence, out: str | os.PathLike, *, baselines=None,
                 labels: Sequence[str] | None = None, rule: str = "0.9.9",
                 cap: float | None = None, all_games: bool = False,
                 competition: bool = False, max_actions: int | None = None,
                 n_boot: int = 1000, seed: int = 0,
                 overwrite: bool = False, progress: bool = False) -> Path:
    """Execute the shipped notebook ``arc3.ipynb`` on ``runs`` (each a path, or a list of
    paths, per run) and ``baselines`` into ``out/arc3.ipynb`` and export
    ``out/report.html``; the figures, each run's tables and the replays go into ``out``.
    With neither runs nor baselines, the bundled example
    (:func:`~arcnb.report.sections.arc3.report_inputs`). Inputs are checked before the notebook
    runs (a bad baselines file or a missing recording is one line, not a failed cell).
    Returns the HTML path."""
    out = check_out_path(out)
    OutputFolder(out).claim(REPORT_FILES, overwrite=overwrite)  # no link, nothing replaced
    example = not runs and not baselines
    runs, baselines = report_inputs(runs, baselines)
    get_rule(rule)
    read_baselines(baselines)
    groups = [[r] if isinstance(r, (str, os.PathLike)) else list(r) for r in runs]
    if not all(groups):
        raise ParameterError("a run with no recording (an empty list of paths)")
    for group in groups:
        for p in group:
            find_recordings(p)
    if not example:
        _check_before_the_kernel(groups, baselines, out, labels=labels, rule=rule, cap=cap,
                                 all_games=all_games, competition=competition,
                                 max_actions=max_actions, seed=seed, overwrite=overwrite)
    # the example is left to the notebook (its parameters say "the bundled example")
    params = {"runs": [] if example else [[absolute_path(str(p)) for p in g] for g in groups],
              "labels": list(labels or []),
              "baselines": "" if example else absolute_path(str(baselines)),
              "rule": rule, "cap": float(cap or 0.0), "all_games": bool(all_games),
              "competition": bool(competition), "max_actions": int(max_actions or 0),
              "n_boot": int(n_boot), "seed": int(seed),
              "out": str(out.resolve()), "overwrite": bool(overwrite)}
    out.mkdir(parents=True, exist_ok=True)
    run_notebook("arc3", out / "arc3.ipynb", params, progress=progress, overwrite=True,
                 html=out / REPORT_HTML, html_on_success=False,
                 title="arcnb ARC-AGI-3 report")
    return export_html(out / "arc3.ipynb", out / REPORT_HTML, overwrite=True,
                       title="arcnb ARC-AGI-3 report")
