"""A sweep's results and tables: :class:`Sweep` (the checkpoints' scored results, in
step order, re-checked against the plan), the rows of ``sweep.csv``, the categories,
the changes between checkpoints, the solved matrix and the summary, and writing
them (with the sweep page)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..breakdown import breakdown, overall
from ..columns import NEAR_MISS, is_near_miss
from ..errors import ArcnbError, printable
from ..report.notebooks import run_notebook
from ..runs import Run, provenance_block, read_metrics, same_run_problem, write_result_folder
from ..stats import check_n_boot, check_seed, ratio_bootstrap_ci
from ..taxonomy import structural_taxonomy
from .layout import (CATEGORIES_CSV, CHANGES_CSV, RUNS_DIR, SOLVED_CSV, SWEEP_CSV, SWEEP_HTML,
                     SWEEP_JSON, SWEEP_NOTEBOOK, sweep_folder)
from .select import honest_selection
from .steps import STEP_SOURCES, SweepEntry, check_plan

__all__ = ["Sweep", "METRIC_COLUMNS", "check_runs"]

#: The metrics of a sweep row that carry a 95 % interval.
METRIC_COLUMNS = ("pass@2", "shape_accuracy", "cell_accuracy", "partial_credit",
                  "near_miss_rate")


def check_runs(out: Path, entries: list[SweepEntry]) -> None:
    """Every finished run of a sweep is the run of its entry: evaluated from the bytes
    of the checkpoint the plan records (a checkpoint rewritten by training between two
    shards is refused, never reported under its new step), and all with the same
    options (:func:`arcnb.evaluate.run_options`, the checkpoint aside)."""
    ref = None
    for e in entries:
        rd = out / RUNS_DIR / e.name
        metrics = read_metrics(rd)
        prov = metrics.get("provenance") if isinstance(metrics.get("provenance"), dict) else {}
        if e.checkpoint_sha256 is not None and prov.get("checkpoint_sha256") != \
                e.checkpoint_sha256:
            raise ArcnbError(f"{rd} was evaluated from other bytes of "
                             f"{printable(e.checkpoint)} than the sweep's plan records (the "
                             "file changed between shards?); evaluate it again with "
                             "arcnb sweep ... --overwrite")
        if ref is None:
            ref = (rd, metrics)
            continue
        has = isinstance(prov.get("options"), dict)
        had = isinstance((ref[1].get("provenance") or {}).get("options"), dict)
        if not has and not had:
            continue  # runs of an older arcnb: nothing recorded to compare
        options = (ref[1].get("provenance") or {}).get("options") or {}
        problem = same_run_problem(metrics, options, ignore=("checkpoint",))
        if problem:
            raise ArcnbError(f"the runs of {out} were not evaluated alike: {rd} differs from "
                             f"{ref[0]}: {problem}")


@dataclass
class Sweep:
    """The checkpoints of a sweep (:class:`SweepEntry`, step order) and their scored
    :class:`~arcnb.scoring.Results`, with the tables of the sweep page."""

    out: Path
    entries: list[SweepEntry]
    results: list
    seed: int = 0
    n_boot: int = 1000
    _cache: dict = field(default_factory=dict, repr=False)

    @classmethod
    def from_runs(cls, out, entries, dataset, *, results: dict, seed: int = 0,
                  n_boot: int = 1000) -> "Sweep":
        """The sweep of ``entries`` in the folder ``out``: each checkpoint's results from
        ``results`` (``{run name: Results}``, fresh from evaluate) or else from its run
        directory (:meth:`arcnb.runs.Run.open`, scored on ``dataset`` when given)."""
        out = Path(out)
        seed, n_boot = check_seed(seed), check_n_boot(n_boot)
        cache: dict = {}
        scored = []
        for e in entries:
            res = results.get(e.name)
            if isinstance(res, Run):  # evaluate's Run: its scored results (None: no truth)
                res = res.results if res.scored else False
            if res is False:
                raise ArcnbError(f"{out / RUNS_DIR / e.name} is not scored (no truth): a "
                                 "sweep needs a dataset with test outputs")
            if res is None:
                res = Run.open(out / RUNS_DIR / e.name, dataset=dataset, cache=cache).results
            if res is None:
                raise ArcnbError(f"{out / RUNS_DIR / e.name} is not scored (no truth): a sweep "
                                 "needs a dataset with test outputs")
            scored.append(res)
        ids = [list(r.tasks["task_id"]) for r in scored]
        if any(i != ids[0] for i in ids):
            raise ArcnbError(f"the runs of {out} are not on the same tasks")
        check_plan(out, list(entries))
        check_runs(out, list(entries))
        return cls(out, list(entries), scored, seed, n_boot)

    # ------------------------------------------------------------ tables
    @property
    def steps(self) -> list[int]:
        """The checkpoints' steps, in order."""
        return [e.step for e in self.entries]

    @property
    def dataset(self):
        """The dataset the checkpoints were evaluated on (the tasks of the sweep)."""
        return self.results[0].dataset

    @property
    def step_source(self) -> str:
        """Where the steps came from: one of :data:`STEP_SOURCES`."""
        return self.entries[0].step_source if self.entries else STEP_SOURCES[2]

    def results_at(self, step: int):
        """The scored results of the checkpoint at ``step``."""
        for e, r in zip(self.entries, self.results):
            if e.step == int(step):
                return r
        raise ArcnbError(f"no checkpoint at step {step} (steps: {self.steps})")

    def changed_outputs(self, step: int, change: str):
        """The rows of the results at ``step`` that were ``"gained"`` or ``"lost"``
        coming from the previous checkpoint (for :func:`arcnb.plot.gallery` ``rows=``)."""
        ch = self.changes()
        part = ch[(ch["to_step"] == int(step)) & (ch["change"] == change)]
        out = self.results_at(step).outputs
        return out.merge(part[["task_id", "test_index"]], on=["task_id", "test_index"])

    def taxonomy(self):
        """The automatic structural taxonomy of the sweep's tasks (computed once)."""
        if "taxonomy" not in self._cache:
            self._cache["taxonomy"] = structural_taxonomy(self.dataset)
        return self._cache["taxonomy"]

    def table(self) -> pd.DataFrame:
        """The rows of ``sweep.csv`` (see the module docstring)."""
        if "table" in self._cache:
            return self._cache["table"]
        rows = []
        for e, res in zip(self.entries, self.results):
            o = overall(res, ks=(1, 2), n_boot=self.n_boot, seed=self.seed,
                        near_miss=NEAR_MISS).iloc[0]
            row = {"step": e.step, "epoch": e.epoch, "step_source": e.step_source,
                   # shown, never raw: a newline or a non-UTF-8 byte in a file name is
                   # escaped (\n, \xff), so it can neither forge a row nor fail a write
                   "checkpoint": printable(e.checkpoint), "run_dir": f"{RUNS_DIR}/{e.name}",
                   "n_tasks": int(o["n_tasks"]), "n_outputs": int(o["n_outputs"]),
                   "pass@1": o["pass@1"], "pass@2_per_output": o["pass@2_per_output"]}
            for m in METRIC_COLUMNS[:-1]:
                row[m] = o[m]
                row[f"{m}_ci_low"] = o[f"{m}_ci_low"]
                row[f"{m}_ci_high"] = o[f"{m}_ci_high"]
            near, n_out = _near_miss_per_task(res)
            row["near_miss_rate"] = near.sum() / n_out.sum() if n_out.sum() else float("nan")
            lo, hi = ratio_bootstrap_ci(near, n_out, n_boot=self.n_boot, seed=self.seed, level=0.95)
            row["near_miss_rate_ci_low"], row["near_miss_rate_ci_high"] = lo, hi
            row["n_near_miss"] = int(o["n_near_miss"])
            row["n_right_shape"] = int(o["n_right_shape"])
            rows.append(row)
        df = pd.DataFrame(rows)
        self._cache["table"] = df
        return df

    def task_matrix(self, metric: str = "pass@2") -> pd.DataFrame:
        """Tasks x steps: each task's ``metric`` (a column of the tasks table) at each
        checkpoint, tasks in dataset order."""
        cols = {e.step: r.tasks.set_index("task_id")[metric] for e, r in
                zip(self.entries, self.results)}
        m = pd.DataFrame(cols)
        m.columns.name = "step"
        return m

    def solved_matrix(self) -> pd.DataFrame:
        """The tasks solved at some checkpoint x steps, each cell the task's pass@2,
        ordered by the first step the task had a solved output (then task id)."""
        m = self.task_matrix("pass@2").fillna(0.0)
        hit = m.to_numpy() > 0
        keep = hit.any(axis=1)
        first = np.where(keep, hit.argmax(axis=1), len(self.entries))
        order = np.lexsort((m.index.to_numpy(), first))
        order = [i for i in order if keep[i]]
        out = m.iloc[order]
        out.index.name = "task_id"
        return out

    def changes(self) -> pd.DataFrame:
        """Outputs gained and lost between consecutive checkpoints: ``from_step``,
        ``to_step``, ``task_id``, ``test_index``, ``change`` (``gained``/``lost``)."""
        cols = ["from_step", "to_step", "task_id", "test_index", "change"]
        rows = []
        keys = ["task_id", "test_index"]
        prev = None
        for e, res in zip(self.entries, self.results):
            cur = res.outputs[keys + ["solved@2"]].set_index(keys)["solved@2"].astype(bool)
            if prev is not None:
                a, b = prev[1].align(cur, fill_value=False)
                for change, mask in (("gained", ~a & b), ("lost", a & ~b)):
                    for tid, i in mask[mask].index:
                        rows.append((prev[0], e.step, tid, int(i), change))
            prev = (e.step, cur)
        return pd.DataFrame(rows, columns=cols)

    def categories(self) -> pd.DataFrame:
        """Per checkpoint and structural category: ``step``, ``group``, ``n_tasks``,
        ``pass@2``, ``partial_credit`` and their intervals."""
        if "categories" in self._cache:
            return self._cache["categories"]
        tax = self.taxonomy()
        keep = ["group", "n_tasks", "pass@2", "pass@2_ci_low", "pass@2_ci_high",
                "partial_credit", "partial_credit_ci_low", "partial_credit_ci_high"]
        parts = []
        for e, res in zip(self.entries, self.results):
            b = breakdown(res, tax, n_boot=self.n_boot, seed=self.seed)[keep]
            parts.append(b.assign(step=e.step)[["step"] + keep])
        df = pd.concat(parts, ignore_index=True)
        self._cache["categories"] = df
        return df

    def selection(self, metric: str = "pass@2") -> dict:
        """:func:`honest_selection` on this sweep (the sweep's seed)."""
        return honest_selection(self.task_matrix(metric), self._strata(), seed=self.seed,
                                n_boot=self.n_boot, metric=metric)

    def _strata(self) -> dict[str, tuple]:
        tax = self.taxonomy()
        ids = list(self.results[0].tasks["task_id"])
        return {t: tax.categories_of(t) for t in ids}  # every category, not the first

    def notes(self) -> list[str]:
        """What to know about the checkpoints: files with the same bytes, evaluated once."""
        return [f"{', '.join(printable(n) for n in e.same_bytes)} "
                f"{'holds' if len(e.same_bytes) == 1 else 'hold'} the same bytes as "
                f"{printable(Path(e.checkpoint).name)}: evaluated once, as step {e.step}"
                for e in self.entries if e.same_bytes]

    def summary(self) -> dict:
        """What ``sweep.json`` holds."""
        solved = self.solved_matrix()
        return {
            "kind": "arcnb-sweep",
            "dataset": dict(self.dataset.info),
            "provenance": provenance_block(self.dataset, estimator=self.results[0].estimator),
            "n_tasks": int(len(self.results[0].tasks)),
            "n_outputs": int(len(self.results[0].outputs)),
            "n_checkpoints": len(self.entries),
            "step_source": self.step_source,
            "checkpoints": [{"step": e.step, "epoch": e.epoch,
                             "checkpoint": printable(e.checkpoint),
                             "run_dir": f"{RUNS_DIR}/{e.name}",
                             "same_bytes": [printable(n) for n in e.same_bytes]}
                            for e in self.entries],
            "notes": self.notes(),
            "n_tasks_ever_solved": int(len(solved)),
            "selection": self.selection(),
            "bootstrap": {"n_boot": self.n_boot, "seed": self.seed, "level": 0.95,
                          "unit": "task"},
        }

    # ------------------------------------------------------------ writing
    def write(self, *, report: bool = True) -> Path:
        """Write the sweep's files into its folder as one result folder
        (:func:`arcnb.runs.write_result_folder`: the tables, then ``sweep.json``; they
        are rebuilt from the run directories, so rewriting them loses nothing); with ``report`` also run the
        sweep notebook into ``sweep.ipynb`` / ``sweep.html``. Returns ``sweep.csv``."""
        out = self.out
        folder = sweep_folder(out)  # a sweep folder only: never a user's own files
        write_result_folder(folder, self.summary(), {
            CATEGORIES_CSV: self.categories(), CHANGES_CSV: self.changes(),
            SOLVED_CSV: self.solved_matrix(), SWEEP_CSV: self.table()},
            summary_name=SWEEP_JSON, indexed=(SOLVED_CSV,), overwrite=True)
        path = folder.target(SWEEP_CSV)
        if report:
            folder.claim([SWEEP_NOTEBOOK, SWEEP_HTML], overwrite=True)  # links refused
            run_notebook("sweep", out / SWEEP_NOTEBOOK,
                         {"sweep_dir": str(Path(out).resolve()), "seed": int(self.seed),
                          "n_boot": int(self.n_boot)},
                         progress=False, html=out / SWEEP_HTML, overwrite=True,
                         title="Checkpoint sweep")
        return path


def _near_miss_per_task(res) -> tuple[np.ndarray, np.ndarray]:
    """Per task (dataset order): near misses (:func:`arcnb.columns.is_near_miss`) and
    test outputs."""
    out = res.outputs
    near = is_near_miss(out["solved@2"], out["cell_accuracy"])
    g = pd.DataFrame({"task_id": out["task_id"], "near": near.astype(float)}) \
        .groupby("task_id", sort=False)
    return g["near"].sum().to_numpy(float), g.size().to_numpy(float)
