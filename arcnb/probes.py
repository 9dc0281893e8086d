"""Memorisation and invariance probes, and the leave-one-demonstration-out proxy score.

A *probe* asks a model the same tasks again, changed in a way that should not change
the answer once it is mapped back (:func:`arcnb.evaluate.evaluate`, ``probe=``;
``arcnb evaluate --probe``):

* ``dihedral``: the 7 rotations and reflections other than the identity
  (:data:`arcnb.augment.DIHEDRAL_NAMES`); with the plain run, the 8 dihedral views;
* ``colors``: :data:`PROBE_COLOR_PERMS` seeded permutations of the colours 1-9
  (0, black, stays black; :func:`arcnb.augment.random_color_perms`);
* ``dihedral+colors``: each of the 8 dihedral transforms together with one of
  :data:`PROBE_COLOR_PERMS` seeded colour permutations (8 views, none the identity);
* ``task-id`` (two probes, ``task-id-blank`` and ``task-id-random``): the same tasks
  with the task identifier blanked (``""``) or replaced by another task's identifier
  of the dataset (seeded). Only for models that receive the task id they are asked
  about: a model with ``solve(task, attempts)`` reads it as ``task.id``; a logits model
  whose ``reads_task_ids`` attribute is True is called with the keyword argument
  ``task_ids`` (one string per input of the batch; see :mod:`arcnb.models.interface`).

Every view's answer is mapped back to the task's own frame with the exact inverse
(:class:`arcnb.augment.View`); under test-time augmentation (``augment=``) each probe
view is followed by the run's own views, and their answers vote as in the plain run.
Each probe's predictions are kept in the run directory (one file per probe,
:data:`arcnb.runs.PROBE_PREDICTIONS`), with the per-output table
(:data:`arcnb.runs.PROBES_CSV`).

The numbers (:func:`probe_numbers`; ``metrics.json`` ``"probes"``, ``Run.probes``), per
probe, with 95 % paired bootstrap intervals over tasks (:mod:`arcnb.stats`):

* ``pass@2``: the mean over the probe's views of the pass@2 under that view;
* ``drop``: plain pass@2 minus ``pass@2`` (positive when the probe hurts), with
  ``drop_ci95``;
* ``consistency``: the share of test outputs whose attempt 1, mapped back, is the same
  under every view (the plain run's and each of the probe's);
* ``robustly_solved``: among the test outputs the plain run solves, the share solved
  under every view of the probe (NaN when the plain run solves none);
* ``categories``: the drop per category of the structural taxonomy
  (:func:`arcnb.taxonomy.structural_taxonomy`);
* ``n_forward``: the model inputs (forward passes) the probe took.

``"memorisation"`` names the largest drop in one line.

The *proxy score* (``proxy=True``; ``arcnb evaluate --proxy``): for every task with at
least two demonstration pairs, each pair in turn is held out and asked as a test input
given the others; its pass@2 is the task's proxy score, and the proxy pass@2 is their
mean over those tasks, with a bootstrap interval (``metrics.json`` ``"proxy"``). It
needs no test output, so it can be read on a hidden test set; with truth it stands
beside the true pass@2 on the same tasks, with their per-task agreement (a task counts
as solved when its score is at least 0.5).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from .augment import N_DIHEDRAL, View, random_color_perms
from .data import Dataset, Pair, Task
from .errors import ArcnbError, ParameterError
from .grids import same_grid
from .io import csv_text, plain_json
from .predictions import Predictions, submission_bytes, to_submission
from .runs.layout import PROBE_NAMES, PROBE_PREDICTIONS, PROBES_CSV, PROXY_CSV, PROXY_PREDICTIONS
from .scoring import score
from .stats import bootstrap_ci, paired_bootstrap_ci
from .taxonomy import structural_taxonomy
from .text import fmt_count, fmt_interval, fmt_number

__all__ = ["PROBES", "PROBE_NAMES", "PROBE_COLOR_PERMS", "ProbeView", "ProbePlan",
           "check_probes", "probe_views", "probe_plan", "probe_numbers", "proxy_numbers",
           "memorisation_line", "probe_lines", "probe_table", "proxy_table", "run_sections",
           "SOLVED_AT"]

#: What ``--probe`` takes: each probe's name, ``task-id`` standing for both of its probes
#: (the names themselves, :data:`PROBE_NAMES`, are :data:`arcnb.runs.PROBE_NAMES`).
PROBES = tuple(dict.fromkeys(p.removesuffix("-blank").removesuffix("-random")
                             for p in PROBE_NAMES))
#: Colour permutations of the ``colors`` and ``dihedral+colors`` probes.
PROBE_COLOR_PERMS = 8
#: The proxy and the agreement count a task as solved at this score or above.
SOLVED_AT = 0.5


def check_probes(probe) -> tuple[str, ...]:
    """The probes asked for, as their names (:data:`PROBE_NAMES`, in that order, each
    once): ``probe`` is None, a name of :data:`PROBES`, a comma-separated text of them,
    or a list. ``task-id`` gives ``task-id-blank`` and ``task-id-random``. Anything else
    is refused with :class:`~arcnb.errors.ParameterError` (one line)."""
    if probe is None:
        return ()
    items = [probe] if isinstance(probe, str) else probe
    if not isinstance(items, (list, tuple)):
        raise ParameterError(f"probe must be one of {', '.join(PROBES)} (or a list of them), "
                             f"got {type(probe).__name__}")
    asked: set[str] = set()
    for item in items:
        if not isinstance(item, str):
            raise ParameterError(f"probe must be one of {', '.join(PROBES)}, got {item!r}")
        for name in (p.strip() for p in item.split(",")):
            if not name:
                continue
            if name == "task-id":
                asked.update(("task-id-blank", "task-id-random"))
            elif name in PROBE_NAMES:
                asked.add(name)
            else:
                raise ParameterError(f"unknown probe {name!r}: expected one of "
                                     f"{', '.join(PROBES)}")
    return tuple(p for p in PROBE_NAMES if p in asked)


@dataclass(frozen=True)
class ProbeView:
    """One view of a probe: a :class:`~arcnb.augment.View` of the grids, and what the
    model is told the task is (``task_id``: None keeps it; ``"blank"``; ``"random"``)."""

    probe: str
    view: View
    task_id: str | None = None

    @property
    def name(self) -> str:
        """The view's name (``rot90``, ``identity+colors(0...)``, ``task-id-blank``)."""
        return self.probe if self.task_id else self.view.name


def probe_views(probe: str, *, seed: int = 0) -> list[ProbeView]:
    """The views of one probe (see the module docstring); seeded by ``seed``."""
    if probe == "dihedral":
        return [ProbeView(probe, View(t, None)) for t in range(1, N_DIHEDRAL)]
    if probe == "colors":
        return [ProbeView(probe, View(0, tuple(int(c) for c in p)))
                for p in random_color_perms(PROBE_COLOR_PERMS, seed=seed)]
    if probe == "dihedral+colors":
        perms = random_color_perms(N_DIHEDRAL, seed=seed)
        return [ProbeView(probe, View(t, tuple(int(c) for c in perms[t])))
                for t in range(N_DIHEDRAL)]
    if probe in ("task-id-blank", "task-id-random"):
        return [ProbeView(probe, View(0, None), probe.rsplit("-", 1)[1])]
    raise ParameterError(f"unknown probe {probe!r}: expected one of {', '.join(PROBE_NAMES)}")


@dataclass(frozen=True)
class _Then:
    """A probe view followed by one of the run's own views (test-time augmentation):
    what :mod:`arcnb.evaluate`'s batching needs of a view (``apply``, ``invert``)."""

    first: View
    then: View

    def apply(self, grid):
        return self.then.apply(self.first.apply(grid))

    def invert(self, grid):
        return self.first.invert(self.then.invert(grid))

    @property
    def name(self) -> str:
        return f"{self.first.name}|{self.then.name}"


def _random_ids(task_ids: Sequence[str], seed: int) -> dict[str, str]:
    """For each task another task's id of the dataset, drawn with a seeded generator
    (the task's own id only when it is the only task)."""
    ids = list(task_ids)
    rng = np.random.default_rng(seed)
    out = {}
    for i, tid in enumerate(ids):
        if len(ids) == 1:
            out[tid] = tid
            continue
        j = int(rng.integers(0, len(ids) - 1))
        out[tid] = ids[j + 1 if j >= i else j]
    return out


class ProbePlan:
    """The probes and proxy of one evaluation: their views, the inputs they add per
    task, the parameters they add to the run's (so the journal and the "same run" check
    see them), and :meth:`add`, which computes them for the tasks of one unit of
    :mod:`arcnb.evaluate` and puts them into the tasks' journal records."""

    def __init__(self, probes: Sequence[str], proxy: bool, dataset: Dataset, *, seed: int = 0):
        self.probes = tuple(probes)
        self.proxy = bool(proxy)
        self.seed = int(seed)
        self.views = {p: probe_views(p, seed=self.seed) for p in self.probes}
        self.random_ids = (_random_ids(dataset.task_ids, self.seed)
                           if "task-id-random" in self.probes else {})

    def __bool__(self) -> bool:
        return bool(self.probes) or self.proxy

    # ------------------------------------------------------------------ planning
    def parameters(self) -> dict:
        """What the plan adds to the run's parameters (plain JSON)."""
        out: dict = {}
        if self.probes:
            out["probes"] = {p: [v.name for v in self.views[p]] for p in self.probes}
        if self.proxy:
            out["proxy"] = "leave-one-demonstration-out"
        return out

    def n_probe_inputs(self, task: Task, n_views: int, probe: str) -> int:
        """Model inputs of one probe on ``task`` (each test input under each view)."""
        return len(task.test) * n_views * len(self.views[probe])

    def n_proxy_inputs(self, task: Task, n_views: int) -> int:
        """Model inputs of the proxy on ``task`` (each held-out pair under each view)."""
        return len(task.train) * n_views if self.proxy and len(task.train) >= 2 else 0

    def n_inputs(self, task: Task, n_views: int) -> int:
        """Every model input the plan adds for ``task``."""
        return (sum(self.n_probe_inputs(task, n_views, p) for p in self.probes)
                + self.n_proxy_inputs(task, n_views))

    def forward_counts(self, tasks: Iterable[Task], n_views: int) -> dict:
        """``{"plain": n, PROBE: n, ..., "proxy": n, "total": n}``: the model inputs
        (forward passes) of the evaluation."""
        tasks = list(tasks)
        counts = {"plain": sum(len(t.test) * n_views for t in tasks)}
        for p in self.probes:
            counts[p] = sum(self.n_probe_inputs(t, n_views, p) for t in tasks)
        if self.proxy:
            counts["proxy"] = sum(self.n_proxy_inputs(t, n_views) for t in tasks)
        counts["total"] = sum(counts.values())
        return counts

    def cost_line(self, tasks: Iterable[Task], n_views: int) -> str:
        """The planned forward passes, in one line (printed before the work starts)."""
        counts = self.forward_counts(tasks, n_views)
        parts = [f"{k} {fmt_count(v, thousands=True)}" for k, v in counts.items() if k != "total"]
        return (f"planned forward passes: {fmt_count(counts['total'], thousands=True)} ({', '.join(parts)}; "
                "one per model input)")

    def check_record(self, rec: Mapping, task: Task) -> None:
        """A journal record must hold every probe's attempts for ``task`` (and its proxy
        attempts) before it is used on resume."""
        probes = rec.get("probes") if self.probes else {}
        for p in self.probes:
            got = probes.get(p) if isinstance(probes, Mapping) else None
            if not isinstance(got, Mapping) or set(got) != {v.name for v in self.views[p]} \
                    or any(not isinstance(a, list) or len(a) != len(task.test)
                           for a in got.values()):
                raise ArcnbError(f"the journal's record of task {task.id} lacks the {p} probe's "
                                 "attempts; use --overwrite to start over")
        if self.proxy:
            got = rec.get("proxy")
            want = len(task.train) if len(task.train) >= 2 else 0
            if not isinstance(got, list) or len(got) != want:
                raise ArcnbError(f"the journal's record of task {task.id} lacks its proxy "
                                 "attempts; use --overwrite to start over")

    # ------------------------------------------------------------------ running
    def add(self, predict, tasks: Sequence[Task], views: Sequence[View],
            records: list[dict]) -> None:
        """Run the probes and the proxy on ``tasks`` (one unit) and add their attempts to
        the tasks' ``records`` (``"probes": {PROBE: {VIEW: attempts per test input}}``,
        ``"proxy": attempts per held-out pair``). ``predict(tasks, views)`` is the plain
        run's batching and vote (one record with ``attempts`` per task)."""
        for rec in records:
            if self.probes:
                rec["probes"] = {p: {} for p in self.probes}
        for probe in self.probes:
            for pv in self.views[probe]:
                seen = [self._renamed(t, pv) for t in tasks]
                composed = [_Then(pv.view, v) for v in views]
                recs = predict(seen, composed)
                for rec, r in zip(records, recs):
                    rec["probes"][probe][pv.name] = r["attempts"]
        if self.proxy:
            pseudo, owner = [], []
            for ti, task in enumerate(tasks):
                if len(task.train) < 2:
                    continue
                for j in range(len(task.train)):
                    pseudo.append(Task(task.id, task.train[:j] + task.train[j + 1:],
                                       (Pair(task.train[j].input, None),)))
                    owner.append(ti)
            for rec in records:
                rec["proxy"] = []
            if pseudo:
                recs = predict(pseudo, list(views))
                for ti, r in zip(owner, recs):
                    records[ti]["proxy"].append(r["attempts"][0])
        for i, rec in enumerate(records):  # as JSON, so fresh and journaled records match
            records[i] = plain_json(rec)

    def _renamed(self, task: Task, pv: ProbeView) -> Task:
        if pv.task_id == "blank":
            return Task("", task.train, task.test, task.group)
        if pv.task_id == "random":
            return Task(self.random_ids[task.id], task.train, task.test, task.group)
        return task


def probe_plan(probe, proxy: bool, dataset: Dataset, adapter=None, *,
               seed: int = 0) -> ProbePlan | None:
    """The :class:`ProbePlan` of ``probe`` (see :func:`check_probes`) and ``proxy`` on
    ``dataset``, or None when neither is asked. The ``task-id`` probes are refused
    (:class:`~arcnb.errors.ParameterError`) for a model that does not receive the task
    id: one without ``solve(task, attempts)`` and without ``reads_task_ids``."""
    probes = check_probes(probe)
    if not isinstance(proxy, bool):
        raise ParameterError(f"proxy must be True or False, got {proxy!r}")
    if not probes and not proxy:
        return None
    if adapter is not None and any(p.startswith("task-id") for p in probes):
        model = getattr(adapter, "model", adapter)
        if not (callable(getattr(model, "solve", None)) or getattr(adapter, "reads_task_ids",
                                                                  False)):
            raise ParameterError("--probe task-id needs a model that receives the task id: "
                                 "one with solve(task, attempts), or one whose "
                                 "reads_task_ids attribute is True")
    return ProbePlan(probes, proxy, dataset, seed=seed)


# ====================================================================== the numbers
def _preds(attempts_by_task: Mapping[str, list]) -> Predictions:
    as_arrays = {tid: [[None if g is None else np.asarray(g, dtype=np.int8) for g in outs]
                       for outs in per_test] for tid, per_test in attempts_by_task.items()}
    return Predictions.from_obj(plain_json(to_submission(as_arrays), sort_keys=False))


def _scored(ds: Dataset, attempts_by_task: Mapping[str, list], estimator: str) -> pd.DataFrame:
    """Per output (task_id, test_index): ``pass@2`` of these attempts, by the scoring
    rule (:func:`arcnb.scoring.score`)."""
    res = score(ds, _preds(attempts_by_task), ks=(1, 2), n_boot=1, estimator=estimator)
    return res.outputs[["task_id", "test_index", "pass@2"]]


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return same_grid(a, b)


def probe_table(ds: Dataset, records: Sequence[Mapping], probes: Sequence[str], *,
                estimator: str = "ranked",
                views: Mapping[str, Sequence[str]] | None = None) -> pd.DataFrame:
    """One row per probe x view x test output: ``probe``, ``view``, ``task_id``,
    ``test_index``, ``plain_pass@2`` and ``pass@2`` (NaN without truth), ``same_answer``
    (attempt 1, mapped back, equals the plain run's attempt 1). ``views`` orders each
    probe's views (default: as the records hold them)."""
    by_id = {r["task_id"]: r for r in records}
    tasks = [t for t in ds if t.id in by_id]
    truth = all(p.output is not None for t in tasks for p in t.test)
    sub = Dataset(ds.name, ds.version, {t.id: t for t in tasks}, filter=ds.filter)
    plain = (_scored(sub, {t.id: by_id[t.id]["attempts"] for t in tasks}, estimator)
             if truth else None)
    rows = []
    for probe in probes:
        names = list((views or {}).get(probe) or
                     (by_id[tasks[0].id]["probes"][probe] if tasks else []))
        for view in names:
            atts = {t.id: by_id[t.id]["probes"][probe][view] for t in tasks}
            scored = _scored(sub, atts, estimator) if truth else None
            k = 0
            for t in tasks:
                for i in range(len(t.test)):
                    first = atts[t.id][i][0] if atts[t.id][i] else None
                    plain_first = by_id[t.id]["attempts"][i][0] if by_id[t.id]["attempts"][i] \
                        else None
                    rows.append({"probe": probe, "view": view, "task_id": t.id, "test_index": i,
                                 "plain_pass@2": float(plain["pass@2"].iloc[k]) if truth
                                 else float("nan"),
                                 "pass@2": float(scored["pass@2"].iloc[k]) if truth
                                 else float("nan"),
                                 "same_answer": _same(first, plain_first)})
                    k += 1
    cols = ["probe", "view", "task_id", "test_index", "plain_pass@2", "pass@2", "same_answer"]
    df = pd.DataFrame(rows, columns=cols)
    df["test_index"] = df["test_index"].astype("int64")
    df["same_answer"] = df["same_answer"].astype(bool)
    return df


def _ci(pair) -> list:
    return [float(pair[0]), float(pair[1])]


def probe_numbers(table: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0,
                  categories: Mapping[str, Sequence[str]] | None = None,
                  forward: Mapping[str, int] | None = None) -> dict:
    """``{PROBE: {"pass@2", "pass@2_ci95", "plain_pass@2", "drop", "drop_ci95",
    "consistency", "robustly_solved", "n_tasks", "n_outputs", "n_views", "categories",
    "n_forward"}}`` from :func:`probe_table`'s rows (see the module docstring).
    ``categories`` maps each task id to its categories (default: none)."""
    out = {}
    for probe, rows in table.groupby("probe", sort=False):
        per_out = rows.groupby(["task_id", "test_index"], sort=True).agg(
            plain=("plain_pass@2", "first"), probe=("pass@2", "mean"),
            worst=("pass@2", "min"), same=("same_answer", "all"))
        per_task = per_out.groupby(level="task_id", sort=True)[["plain", "probe"]].mean()
        plain, probed = per_task["plain"].to_numpy(float), per_task["probe"].to_numpy(float)
        drop, lo, hi = paired_bootstrap_ci(probed, plain, n_boot=n_boot, seed=seed)
        solved = per_out["plain"] > 0
        n_solved = int(solved.sum())
        robust = (float((per_out.loc[solved, "worst"] >= per_out.loc[solved, "plain"]).mean())
                  if n_solved else float("nan"))
        entry = {"pass@2": float(np.mean(probed)) if probed.size else float("nan"),
                 "pass@2_ci95": _ci(bootstrap_ci(probed, n_boot=n_boot, seed=seed)),
                 "plain_pass@2": float(np.mean(plain)) if plain.size else float("nan"),
                 "drop": drop, "drop_ci95": [lo, hi],
                 "consistency": float(per_out["same"].mean()) if len(per_out)
                 else float("nan"),
                 "robustly_solved": robust,
                 "n_tasks": int(len(per_task)), "n_outputs": int(len(per_out)),
                 "n_views": int(rows["view"].nunique()) + 1}
        if categories is not None:
            entry["categories"] = _category_drops(per_task, categories, n_boot=n_boot,
                                                  seed=seed)
        if forward is not None and probe in forward:
            entry["n_forward"] = int(forward[probe])
        out[probe] = entry
    return out


def _category_drops(per_task: pd.DataFrame, categories: Mapping[str, Sequence[str]], *,
                    n_boot: int, seed: int) -> dict:
    cats: dict[str, list[str]] = {}
    for tid in per_task.index:
        for c in categories.get(tid) or ("uncategorized",):
            cats.setdefault(c, []).append(tid)
    out = {}
    for c, ids in cats.items():
        sub = per_task.loc[ids]
        drop, lo, hi = paired_bootstrap_ci(sub["probe"].to_numpy(float),
                                           sub["plain"].to_numpy(float), n_boot=n_boot,
                                           seed=seed)
        out[c] = {"n_tasks": len(ids), "plain_pass@2": float(sub["plain"].mean()),
                  "pass@2": float(sub["probe"].mean()), "drop": drop, "drop_ci95": [lo, hi]}
    return out


def memorisation_line(probes: Mapping[str, Mapping]) -> dict | None:
    """The largest drop among ``probes`` (:func:`probe_numbers`) as
    ``{"largest_drop": PROBE, "drop", "drop_ci95", "line"}``; None without a probe that
    has a drop (no truth)."""
    have = {p: n for p, n in probes.items()
            if isinstance(n.get("drop"), float) and n["drop"] == n["drop"]}
    if not have:
        return None
    p = max(have, key=lambda k: (have[k]["drop"], -PROBE_NAMES.index(k)
                                 if k in PROBE_NAMES else 0))
    n = have[p]
    lo, hi = n["drop_ci95"]
    words = ("the interval excludes 0: the model's answers depend on it" if lo > 0
             else "the interval includes 0: no clear drop" if lo <= 0 <= hi
             else "the score rises under it")
    line = (f"largest drop under {p}: pass@2 {fmt_number(n['plain_pass@2'])} -> "
            f"{fmt_number(n['pass@2'])} (drop {fmt_number(n['drop'])}, 95 % interval "
            f"{fmt_number(lo)} to {fmt_number(hi)}; {words})")
    return {"largest_drop": p, "drop": n["drop"], "drop_ci95": [lo, hi], "line": line}


def proxy_table(ds: Dataset, records: Sequence[Mapping], *, estimator: str = "ranked",
                true_scores: Mapping[str, float] | None = None) -> pd.DataFrame:
    """Per task with at least two demonstration pairs: ``task_id``, ``n_held_out``,
    ``proxy_pass@2`` (the mean pass@2 of its held-out pairs) and ``pass@2`` (the true
    one from ``true_scores``; NaN without)."""
    by_id = {r["task_id"]: r for r in records}
    pseudo = {}
    atts = {}
    for t in ds:
        if t.id not in by_id or len(t.train) < 2:
            continue
        pseudo[t.id] = Task(t.id, (), tuple(Pair(p.input, p.output) for p in t.train))
        atts[t.id] = by_id[t.id]["proxy"]
    cols = ["task_id", "n_held_out", "proxy_pass@2", "pass@2"]
    if not pseudo:
        return pd.DataFrame(columns=cols)
    sub = Dataset(ds.name, ds.version, pseudo, filter=ds.filter)
    res = score(sub, _preds(atts), ks=(1, 2), n_boot=1, estimator=estimator)
    per_task = res.outputs.groupby("task_id", sort=True)["pass@2"].agg(["mean", "size"])
    df = pd.DataFrame({"task_id": per_task.index.astype(str),
                       "n_held_out": per_task["size"].astype("int64").to_numpy(),
                       "proxy_pass@2": per_task["mean"].to_numpy(float)})
    df["pass@2"] = [float((true_scores or {}).get(t, float("nan"))) for t in df["task_id"]]
    return df[cols].reset_index(drop=True)


def proxy_numbers(table: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0,
                  n_forward: int | None = None) -> dict:
    """``{"pass@2", "ci95", "n_tasks"}`` of :func:`proxy_table`, plus, with truth,
    ``"true_pass@2"``, ``"true_ci95"`` (on the same tasks) and ``"agreement"`` (the share
    of tasks that both scores call solved or both unsolved, at :data:`SOLVED_AT`)."""
    proxy = table["proxy_pass@2"].to_numpy(float)
    out = {"pass@2": float(proxy.mean()) if proxy.size else float("nan"),
           "ci95": _ci(bootstrap_ci(proxy, n_boot=n_boot, seed=seed)),
           "n_tasks": int(proxy.size), "solved_at": SOLVED_AT}
    true = table["pass@2"].to_numpy(float)
    if true.size and not np.isnan(true).any():
        out["true_pass@2"] = float(true.mean())
        out["true_ci95"] = _ci(bootstrap_ci(true, n_boot=n_boot, seed=seed))
        out["agreement"] = float(np.mean((proxy >= SOLVED_AT) == (true >= SOLVED_AT)))
    if n_forward is not None:
        out["n_forward"] = int(n_forward)
    return out


def probe_lines(metrics: Mapping) -> list[str]:
    """The probes' and the proxy's numbers of a ``metrics.json`` as lines of text (what
    ``arcnb evaluate`` prints): numbers with 3 decimals (:func:`arcnb.text.fmt_number`)."""
    def num(v):
        return fmt_number(v, least=3, most=3)

    lines = []
    probes = metrics.get("probes") or {}
    for p, n in sorted(probes.items(), key=lambda kv: (
            PROBE_NAMES.index(kv[0]) if kv[0] in PROBE_NAMES else len(PROBE_NAMES), kv[0])):
        lo, hi = n.get("drop_ci95") or (None, None)
        lines.append(f"probe {p}: pass@2 {num(n.get('pass@2'))}, drop {num(n.get('drop'))} "
                     f"{fmt_interval(lo, hi, least=3, most=3)}, consistency {num(n.get('consistency'))}, "
                     f"robustly solved {num(n.get('robustly_solved'))} "
                     f"({n.get('n_views')} views, {fmt_count(n.get('n_forward', 0), thousands=True)} forward passes)")
    if metrics.get("memorisation"):
        lines.append("memorisation: " + str(metrics["memorisation"].get("line")))
    proxy = metrics.get("proxy")
    if proxy:
        lo, hi = proxy.get("ci95") or (None, None)
        line = (f"proxy (leave-one-demonstration-out): pass@2 {num(proxy.get('pass@2'))} "
                f"{fmt_interval(lo, hi, least=3, most=3)} on {proxy.get('n_tasks')} tasks")
        if "true_pass@2" in proxy:
            line += (f"; true pass@2 on them {num(proxy['true_pass@2'])}, per-task agreement "
                     f"{num(proxy.get('agreement'))}")
        lines.append(line)
    return lines


# ================================================================ the run's parts
def run_sections(ds: Dataset, records: Sequence[Mapping], plan: ProbePlan, *,
                 n_views: int, estimator: str = "ranked", n_boot: int = 1000,
                 seed: int = 0, true_scores: Mapping[str, float] | None = None
                 ) -> tuple[dict, dict]:
    """What a probed run adds: the ``metrics.json`` sections (``probes``,
    ``memorisation``, ``proxy``) and the files (each probe's predictions, the per-output
    probe table, the proxy's predictions and per-task table) as ``{name: bytes}``."""
    tasks = [t for t in ds]
    forward = plan.forward_counts(tasks, n_views)
    sections: dict = {}
    files: dict = {}
    by_id = {r["task_id"]: r for r in records}
    if plan.probes:
        table = probe_table(ds, records, plan.probes, estimator=estimator,
                            views={p: [v.name for v in plan.views[p]] for p in plan.probes})
        cats = structural_taxonomy(ds).labels
        numbers = probe_numbers(table, n_boot=n_boot, seed=seed, categories=cats,
                                forward=forward)
        sections["probes"] = numbers
        line = memorisation_line(numbers)
        if line is not None:
            sections["memorisation"] = line
        for p in plan.probes:
            views = [v.name for v in plan.views[p]]
            doc = {"probe": p, "views": views,
                   "predictions": {v: to_submission(
                       {t.id: [[None if g is None else np.asarray(g, dtype=np.int8)
                                for g in outs] for outs in by_id[t.id]["probes"][p][v]]
                        for t in tasks}) for v in views}}
            files[PROBE_PREDICTIONS[p]] = submission_bytes(doc)
        files[PROBES_CSV] = csv_text(table).encode("utf-8")
    if plan.proxy:
        table = proxy_table(ds, records, estimator=estimator, true_scores=true_scores)
        sections["proxy"] = proxy_numbers(table, n_boot=n_boot, seed=seed,
                                          n_forward=forward.get("proxy"))
        held = {t.id: [[None if g is None else np.asarray(g, dtype=np.int8) for g in outs]
                       for outs in by_id[t.id]["proxy"]] for t in tasks if len(t.train) >= 2}
        files[PROXY_PREDICTIONS] = submission_bytes(to_submission(held))
        files[PROXY_CSV] = csv_text(table).encode("utf-8")
    return sections, files

