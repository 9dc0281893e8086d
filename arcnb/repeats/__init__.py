"""Many runs of one or more configurations: seeds, reruns and settings, scored on one
dataset and analysed together (``arcnb.repeats``, ``arcnb repeats``).

Runs come in through the front door (:func:`arcnb.open`): predictions files, harness run
folders, run directories, a sweep's runs; a *root* folder (one that is not a run itself)
stands for every run below it, at any depth: each sub-folder that is a run directory
or holds task files directly (the benchmarking harness writes
``submissions/<config>/<version>/<eval_type>/<task>.json``) is one run, named by its
path relative to the root. A run found under a root that holds none of the dataset's
tasks (another evaluation set of the harness layout) is left out and listed in
``skipped``.

Runs are grouped into *configurations*:

* ``groups``: a CSV (or a DataFrame, or a mapping) with columns ``run, config`` and an
  optional ``seed``; ``run`` is the source as given or a sub-folder's path relative to
  its root; every run must be listed;
* ``group_by=N`` (an int): the N-th folder of the run's path (0: the first);
* ``group_by="pattern"``: the run's last name read as ``CONFIG-seedN`` (also
  ``_seed``, ``-run``, ``-rep``, ``-trial``; the suffix ``.json`` dropped);
* ``group_by="auto"`` (default): a run found under a root at depth two or more is
  grouped by its first folder (the harness's configuration); any other run by the name
  pattern; a run whose name has no such suffix is a configuration of its own.

Everything is computed from one task x run matrix of pass@2 (``Repeats.matrix``; a run's
column is exactly the per-task pass@2 of :func:`arcnb.score`, ranked rule) and its
output x run twin (``Repeats.solved``):

* per configuration: pass@2 mean over runs, between-run SD (n - 1), min, max; the 95 %
  interval of the mean over tasks and runs
  (``arcnb.repeats.inference.config_interval``: the variance of a crossed tasks x
  runs design, a t quantile weighted between the tasks' and the runs' degrees of
  freedom; NaN with one run, and ``ci95_note`` says why) beside the single-run interval (the configuration's first
  run, resampling tasks: the interval :func:`arcnb.score` gives); the variance split:
  the variance of the mean from task sampling and from the runs, the two parts of that
  interval; per task the solve rate (mean over runs of its pass@2); tasks always solved
  (pass@2 = 1 in every run), never solved (0 in every run), flipping (its pass@2
  differs between runs) and steady partial (the rest);
* between configurations (each pair, ``b - a``): the difference of the means and one
  t-test (``arcnb.repeats.inference.compare``): its variance is the
  task-by-configuration interaction over tasks plus the run-to-run spread pooled over
  the two configurations, critical values weighted between the two parts' t quantiles
  (Cochran and Cox); ``ci95``, ``p`` (two-sided), ``mde80`` (the smallest difference it
  detects with 80 % power at the 5 % level) and ``runs_needed[delta]`` (the runs per configuration with which it
  detects ``delta``; null when the interaction alone is too large: more tasks are
  needed, not more runs) all describe that test; ``test`` names it. With fewer than two
  runs of either configuration, or nothing varying, they are NaN / null and ``note``
  says why;
* the winner's curse per configuration: a random public half of the tasks (``T // 2``
  of them; every such half when there are at most ``n_splits``), the run with the best
  public pass@2 picked (the first on ties); ``public`` is its public pass@2 and
  ``private`` its pass@2 on the other tasks, both averaged over the splits, beside the
  configuration's ``mean``;
* union coverage: an output counts when any run solves it (per task then mean over
  tasks); ``by_n_runs[k - 1]`` is its expectation over every choice of k of the N runs
  (``1 - C(N - c, k) / C(N, k)`` per output solved by c runs); unique solves per run:
  the test outputs that run solves and no other run does; per pair of runs the Jaccard
  index of their solved test outputs (``Repeats.jaccard``) and ``best_pair``: the two runs
  whose union has the highest pass@2 (the first such pair in run order); ``ensemble``:
  ``sets``: per configuration (and ``"all"`` runs when there are several
  configurations) the pass@2 and interval of the two-attempt vote ensemble of its runs'
  attempts (:func:`arcnb.voting.vote_ensemble`: votes across runs, ties under the tie
  rule ``tie``: at random, the exact expectation, or by first appearance in run order;
  with a named ``score``, also ``with_score``: vote ties broken by the highest score
  first); ``held_out``: the ensemble chosen on one half and reported on the
  other. The candidates, in this order: each run alone (its own pass@2), then each
  set's ensemble (by votes, then by votes and the score when one is named). On each
  public half of the winner's curse the candidate with the best public pass@2 is
  picked (the first on ties); ``public`` and ``private`` are its pass@2 on the two
  halves averaged over the splits, ``ci95`` the 95 % bootstrap interval over the
  private tasks (:func:`arcnb.stats.bootstrap_ci` of its per-task pass@2 there) with
  its ends averaged over the splits, ``chosen`` how often each candidate was picked, and
  ``best_run`` the same choice among the runs alone.

The package: ``runs.py`` finds and groups the runs, ``inference.py`` holds the test and
the intervals, ``analysis.py`` the analysis of the solve matrix (:func:`analyse`) and
its result (:class:`Repeats`); this module opens the runs (:func:`repeats`) and is
itself callable (``arcnb.repeats(...)``).
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd

from ..callable_module import callable_module
from ..data import Dataset, load_dataset
from ..errors import RepeatsError
from ..front import open_run, task_set
from ..harness_logs import run_log_rates
from ..runs import provenance_block, unique_labels
from ..scoring import missing_tasks_warning
from ..stats import check_n_boot, check_seed
from ..text import printable
from ..voting import check_tie, vote_ensemble
from .analysis import ENSEMBLE_RULE, GRADED, Repeats, analyse
from .inference import POWER_DIFFS, TEST, TEST_NAME
from .runs import MAX_RUNS, RunEntry, find_runs, group_runs

__all__ = ["Repeats", "repeats", "analyse", "vote_ensemble", "find_runs", "group_runs",
           "RunEntry", "MAX_RUNS", "TEST", "TEST_NAME", "POWER_DIFFS", "ENSEMBLE_RULE",
           "attempt_scores", "GRADED"]


def attempt_scores(predictions, keys: Sequence[tuple[str, int]], name: str) -> list[list]:
    """Per test output of ``keys``, the named score of each attempt read from its
    metadata (``metadata[name]``, or ``metadata["scores"][name]`` as in a candidates
    file), NaN where the attempt has no such number."""
    out = []
    for tid, i in keys:
        row = []
        for md in predictions.get_metadata(tid, i):
            v = None
            if isinstance(md, dict):
                v = md.get(name)
                if v is None and isinstance(md.get("scores"), dict):
                    v = md["scores"].get(name)
            ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            row.append(float(v) if ok else float("nan"))
        out.append(row)
    return out


#: The cost keys of a run's summary its entry of ``runs`` repeats.
RUN_COST_KEYS = ("cost_per_task", "cost_cached_per_task", "total_tool_calls")


def _run_info(res) -> dict:
    """A run's cost per task (without and with the cache priced) and tool calls from
    its summary (NaN when unknown), and, for a harness run with API logs, its retry,
    timeout and failure rates."""
    info = {k: res.summary.get(k, float("nan")) for k in RUN_COST_KEYS}
    info = {k: float("nan") if v is None else v for k, v in info.items()}
    rates = run_log_rates(res.predictions)
    if rates is not None:
        info.update({k: rates[k] for k in ("retry_rate", "timeout_rate", "failure_rate")})
    return info


def _graded_values(out: pd.DataFrame) -> dict[str, np.ndarray]:
    """Per test output of a scored run's outputs table, the values :data:`GRADED`
    averages: attempt 1 has the truth's shape (0/1), the cell accuracy (NaN without a
    right-shaped attempt), the partial credit."""
    return {"shape_accuracy": (out["pred_shape"] == out["truth_shape"]).to_numpy(float),
            "cell_accuracy": out["cell_accuracy"].to_numpy(dtype=float),
            "partial_credit": out["partial_credit"].to_numpy(dtype=float)}


def repeats(sources, *, dataset, tasks=None, groups=None, group_by="auto",
            n_boot: int = 1000, seed: int = 0, n_splits: int = 1000,
            cache: dict | None = None, score: str | None = None,
            tie: str = "random") -> Repeats:
    """Many runs on ``dataset`` analysed together (see the module docstring).

    ``sources``: anything :func:`arcnb.open` takes (one or a list), or root folders of
    runs; ``tasks`` filters the dataset; ``groups`` / ``group_by`` make the
    configurations. Every run is scored on the same tasks with the ranked rule.
    ``score``: the name of a number in the attempts' metadata (``metadata[score]`` or
    ``metadata["scores"][score]``, higher is better) that breaks vote ties in the
    ensembles; each ensemble is then also tried with it. ``tie``: how the ensembles
    break the vote ties left (:data:`arcnb.voting.TIE_RULES`: ``"random"``, the
    expectation over uniformly random ties, or ``"first"``: first appearance).
    """
    if score is not None and (not isinstance(score, str) or not score.strip()):
        raise RepeatsError(f"score must name a number in the attempts' metadata, got "
                           f"{score!r}")
    n_boot, seed, tie = check_n_boot(n_boot), check_seed(seed), check_tie(tie)
    entries = find_runs(sources)
    full = dataset if isinstance(dataset, Dataset) else load_dataset(dataset)
    ds = task_set([e.source for e in entries], full, tasks)  # the one task-set rule
    keys = [(t.id, i) for t in ds for i in range(len(t.test))]
    ids = set(ds.task_ids)
    cols, kept, skipped, preds, graded, info, warned = [], [], [], [], {}, [], []
    for e in entries:
        run = open_run(e.source, dataset=full, tasks=ds, label=e.name, cache=cache)
        res = run.results
        if res is None:
            raise RepeatsError(f"run {printable(e.name)} is not scored (no truth); repeats "
                               "needs scored runs")
        if e.root is not None and not ids & set(res.predictions.task_ids):
            skipped.append(e.name)
            continue
        out = res.outputs
        got = list(zip(out["task_id"], out["test_index"].astype(int)))
        if got != keys:
            raise RepeatsError(f"run {printable(e.name)} was scored on other test outputs "
                               f"than {printable(str(ds.name))} holds ({len(got)} test "
                               f"outputs, expected {len(keys)}): another version of the "
                               "dataset?")
        missing = missing_tasks_warning(ds, res.predictions.task_ids)
        if missing:
            warned.append(f"run {printable(e.name)}: {missing}")
        cols.append(out["solved@2"].to_numpy(dtype=float))
        for m, v in _graded_values(out).items():
            graded.setdefault(m, []).append(v)
        info.append(_run_info(res))
        preds.append(res.predictions)
        kept.append(e)
    if not kept:
        raise RepeatsError(f"no run holds any task of {printable(str(ds.name))}")
    pairs = group_runs(kept, groups=groups, group_by=group_by)
    truths = [t.test[i].output for t in ds for i in range(len(t.test))]
    attempts = [[p.get(t, i) for t, i in keys] for p in preds]
    scores = None if score is None else [attempt_scores(p, keys, score) for p in preds]
    if scores is not None and not any(v == v for s in scores for row in s for v in row):
        raise RepeatsError(f"no attempt of any run carries a score named "
                           f"{printable(score)} (a number in its metadata, or under "
                           f"metadata['scores']); leave out the score to break vote ties "
                           f"by first appearance")
    names = list(dict.fromkeys(c for c, _ in pairs))
    members = {name: [r for r, (c, _) in enumerate(pairs) if c == name] for name in names}
    if len(names) > 1:  # the ensemble of every run: "all", or "all#2" beside a
        # configuration named "all" (unique_labels: it was silently dropped)
        members[unique_labels([*names, "all"])[-1]] = list(range(len(kept)))
    ensembles = []
    for name, rs in members.items():
        e = {"name": name, "runs": [kept[r].name for r in rs],
             "solved": vote_ensemble(truths, [attempts[r] for r in rs], tie=tie)}
        if scores is not None:
            e["solved_score"] = vote_ensemble(truths, [attempts[r] for r in rs],
                                              [scores[r] for r in rs], tie=tie)
        ensembles.append(e)
    task_pos = {t: i for i, t in enumerate(t.id for t in ds)}
    rep = analyse(np.stack(cols, axis=1), [task_pos[t] for t, _ in keys],
                   [t.id for t in ds], [e.name for e in kept], [c for c, _ in pairs],
                   seeds=[s for _, s in pairs], test_index=[i for _, i in keys],
                   n_boot=n_boot, seed=seed, n_splits=n_splits, skipped=skipped,
                   ensembles=ensembles, score=score,
                   graded={m: np.stack(v, axis=1) for m, v in graded.items()},
                   run_info=info, tie=tie)
    rep.summary["warnings"] = warned
    rep.summary["provenance"] = provenance_block(ds, estimator="ranked", tie=tie)
    return rep


# ``arcnb.repeats`` is this package and, called, repeats()
callable_module(__name__, repeats)
