"""The :class:`Run`: a run in memory or a run directory, written atomically and
re-opened with every recorded number re-checked."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from ..columns import upgrade_summary
from ..data import DATASETS, load_dataset, load_task_ids
from ..errors import ParameterError
from ..html import escape
from ..io import (FORMULA_START, JSONInputError, file_sha256, json_bytes, read_bytes, read_csv,
                  read_json, read_parquet, to_jsonable)
from ..predictions import Predictions, load_predictions, submission_bytes, to_submission
from ..scoring import ESTIMATORS, score
from .document import (attempt_ks, compact_line, flat_provenance, is_scored, kaggle_submission,
                       ks_of,
                       metrics_document, pass_k_values, predictions_table, read_metrics,
                       recorded_dataset, summary_of, unscored_summary)
from .layout import (CANDIDATES, METRICS, OPTIONAL_RUN_FILES, PREDICTIONS, PROBE_PREDICTIONS,
                     PROBES_CSV, PROXY_CSV, RESULTS_CSV,
                     RESULTS_PARQUET, RUN_FILES, SUBMISSION, TASKS_CSV, OutputFolder, RunDirError,
                     REQUIRED_RUN_FILES, csv_bytes, refuse_finished)


# ======================================================================= the Run
@dataclass
class Run:
    """A run: its scored ``results`` (:class:`arcnb.scoring.Results`; None for a run
    read with :meth:`read`, without scoring, and for an unscored run), ``metrics`` (its
    ``metrics.json``, or the in-memory summary plus provenance), the run directory
    (None for an in-memory run) and a label. An unscored run (a hidden test set, no
    truth: :attr:`scored` is False) carries its ``dataset`` and ``predictions``
    instead of results.

    Make one with :meth:`open` (a run directory, validated and re-scored),
    :meth:`read` (a run directory's metrics only), :meth:`from_results` (in memory)
    or :meth:`unscored` (predictions without truth); :meth:`write` writes it as a run
    directory.
    """

    results: object
    #: The run's ``metrics.json`` (or the in-memory summary plus ``provenance``).
    metrics: dict
    run_dir: Path | None = None
    label: str = ""
    #: An unscored run's dataset (read without requiring test outputs); else None.
    dataset: object = None
    #: An unscored run's predictions (:class:`arcnb.predictions.Predictions`); else None.
    predictions: object = None
    #: Columns the producer added to the outputs table (evaluate's votes), keyed by
    #: ``task_id`` and ``test_index``; read from the run's files when None.
    extra_columns: object = None

    def __post_init__(self) -> None:
        # a scored run's dataset and predictions are its results'
        if self.results is not None:
            if self.dataset is None:
                self.dataset = self.results.dataset
            if self.predictions is None:
                self.predictions = self.results.predictions

    # ------------------------------------------------------------------ tables
    @property
    def outputs(self):
        """The outputs table: one row per task x test output (the scores of
        :func:`arcnb.scoring.score`; an unscored run's predictions table)."""
        if self.results is not None:
            return self.results.outputs
        if self.dataset is not None and self.predictions is not None:
            attempts = int((self.summary.get("submission") or {}).get("attempts") or 2)
            _, fills = kaggle_submission(self.dataset, self.predictions, attempts=attempts)
            return predictions_table(self.dataset, self.predictions, fills)
        return None

    @property
    def tasks(self):
        """The per-task table (of the results; for an unscored run, the sums of its
        predictions table)."""
        if self.results is not None:
            return self.results.tasks
        outputs = self.outputs
        return None if outputs is None else _unscored_tasks(outputs)

    @property
    def votes(self):
        """The columns the producer added to the outputs table (``arcnb evaluate``'s
        ``n_views``, ``votes_attempt_K``, ``confidence_attempt_K``...), keyed by
        ``task_id`` and ``test_index``; None when there are none."""
        if self.extra_columns is not None:
            return self.extra_columns
        outputs = self.outputs
        if self.run_dir is None or outputs is None:
            return None
        return _file_columns(Path(self.run_dir), outputs)

    @property
    def costs(self):
        """``cost_attempt_K`` per output (``task_id``, ``test_index``): each attempt's
        cost from the predictions' metadata (a benchmarking-harness run); None when no
        attempt has a cost."""
        return _cost_columns(self.predictions)

    @property
    def table(self):
        """:attr:`outputs` with :attr:`votes` and :attr:`costs` joined on (one row per
        test output, the outputs' order): everything a browser shows per output."""
        table = self.outputs
        if table is None:
            return None
        table = table.reset_index(drop=True)
        for extra in (self.votes, self.costs):
            if extra is not None:
                extra = extra[[c for c in extra.columns
                               if c in ("task_id", "test_index") or c not in table.columns]]
                table = table.merge(extra, on=["task_id", "test_index"], how="left")
        return table

    @property
    def recorded_tasks(self):
        """The per-task table as the run directory recorded it (``tasks.csv``), None in
        memory or when it is missing (a run whose re-scored predictions lost their
        metadata keeps its recorded usage columns there)."""
        if self.run_dir is None:
            return None
        path = Path(self.run_dir) / TASKS_CSV
        if not path.is_file():
            return None
        return read_csv(path, what="run file", dtype={"task_id": str})

    def attempts(self, task_id: str, test_index: int) -> list:
        """The attempts of one test output, in order (None for an invalid one)."""
        if self.results is not None:
            return self.results.attempts(task_id, test_index)
        return list(self.predictions.get(task_id, test_index)) if self.predictions else []

    def candidates(self):
        """Where this run's candidate pool comes from, by one rule (the report and the
        explorer both ask here): the run directory's candidates file when the run wrote
        one (checked by :func:`candidates_file`: never another run's pool), else the
        run's predictions when some test output has more than 2 attempts, else None
        (the run has no pool beyond its two attempts). Pass it to
        :func:`arcnb.candidates.candidates` to measure the pool."""
        if self.run_dir is not None:
            path = candidates_file(self.run_dir)
            if path is not None:
                return path
        preds = self.predictions
        attempts = getattr(preds, "attempts", None) or {}
        if max((len(a) for outs in attempts.values() for a in outs), default=0) > 2:
            return preds
        return None

    # ---------------------------------------------------------------- the probes
    @property
    def probes(self) -> dict:
        """The probes' numbers (``metrics.json`` ``"probes"``: ``{PROBE: {"pass@2",
        "drop", "drop_ci95", "consistency", "robustly_solved", ...}}``, see
        :mod:`arcnb.probes`); empty for a run without probes."""
        probes = self.metrics.get("probes")
        return dict(probes) if isinstance(probes, Mapping) else {}

    @property
    def proxy(self) -> dict:
        """The leave-one-demonstration-out proxy score (``metrics.json`` ``"proxy"``:
        ``{"pass@2", "ci95", ...}``); empty when it was not asked for."""
        proxy = self.metrics.get("proxy")
        return dict(proxy) if isinstance(proxy, Mapping) else {}

    @property
    def probe_table(self):
        """The probes' per-output table (one row per probe x view x test output; see
        :func:`arcnb.probes.probe_table`), None without one."""
        return self._csv(PROBES_CSV)

    @property
    def proxy_table(self):
        """The proxy's per-task table (:func:`arcnb.probes.proxy_table`), None without one."""
        return self._csv(PROXY_CSV)

    def probe_predictions(self, probe: str) -> dict:
        """One probe's predictions, by view: ``{view name: Predictions}`` (every answer
        mapped back to the task's own frame); empty when the run has none."""
        name = PROBE_PREDICTIONS.get(probe)
        if self.run_dir is None or name is None or not (Path(self.run_dir) / name).is_file():
            return {}
        try:
            doc = read_json(Path(self.run_dir) / name, what="run file")
        except JSONInputError as exc:
            raise RunDirError(str(exc)) from None
        preds = doc.get("predictions") if isinstance(doc, Mapping) else None
        if not isinstance(preds, Mapping):
            raise RunDirError(f"{Path(self.run_dir) / name} holds no predictions by view")
        return {str(v): Predictions.from_obj(p, source=f"{name} ({v})")
                for v, p in preds.items()}

    def _csv(self, name: str):
        if self.run_dir is None or not (Path(self.run_dir) / name).is_file():
            return None
        return read_csv(Path(self.run_dir) / name, what="run file", dtype={"task_id": str})

    # ------------------------------------------------------------------ views
    @property
    def summary(self) -> dict:
        """The scoring summary recorded in :attr:`metrics` (without its
        ``provenance``)."""
        s = summary_of(self.metrics)
        s.pop("provenance", None)
        return s

    @property
    def scored(self) -> bool:
        """False for an unscored run (``"scored": false`` in metrics.json: no truth)."""
        return is_scored(self.metrics)

    @property
    def provenance(self) -> dict:
        """The raw ``provenance`` section of :attr:`metrics` (empty when absent)."""
        return dict(self.metrics.get("provenance") or {})

    @property
    def path(self) -> str | None:
        """The run directory as a string (None in memory)."""
        return None if self.run_dir is None else str(self.run_dir)

    @property
    def ks(self) -> tuple[int, ...]:
        """The K of every ``pass@K`` in :attr:`metrics`."""
        return ks_of(self.metrics)

    def file(self, name: str) -> Path:
        """``run_dir / name`` (e.g. ``run.file(METRICS)``); ValueError in memory."""
        if self.run_dir is None:
            raise ParameterError(f"{self.label or 'this run'} is in memory: it has no {name}")
        return Path(self.run_dir) / name

    def flat_provenance(self) -> dict:
        """:func:`flat_provenance` of this run (with its run directory)."""
        return flat_provenance(self.metrics, run_dir=self.run_dir)

    def compact_line(self, metric: str = "pass@2") -> str:
        """:func:`compact_line` of this run."""
        return compact_line(self.metrics, metric)

    def __repr__(self) -> str:
        s = self.summary
        ds = s.get("dataset") or {}
        score = f"pass@2={s.get('pass@2')}" if self.scored else "not scored (no truth)"
        return (f"Run({self.label!r}, dataset={ds.get('name')!r}, tasks={s.get('n_tasks')}, "
                f"outputs={s.get('n_outputs')}, {score})")

    def _repr_html_(self) -> str | None:
        """Jupyter's view: the results' for a scored run; for an unscored one, what it
        holds and that it is not scored."""
        if self.results is not None and hasattr(self.results, "_repr_html_"):
            return self.results._repr_html_()
        if self.scored:
            return None
        s = self.summary
        sub = s.get("submission") or {}
        return (f"<div><p><b>No truth: predictions only.</b> {escape(str(self.label))} on "
                f"{escape(str((s.get('dataset') or {}).get('name')))}: {s.get('n_tasks')} "
                f"tasks, {s.get('n_outputs')} test outputs, {s.get('n_invalid_attempts')} "
                f"invalid attempts; {escape(str(sub.get('file')))} has "
                f"{sub.get('n_filler_attempts')} filler attempts "
                f"{escape(json.dumps(sub.get('filler')))}.</p></div>")

    # ----------------------------------------------------------- constructors
    @classmethod
    def from_results(cls, results, *, provenance: Mapping | None = None,
                     label: str = "", sections: Mapping | None = None) -> "Run":
        """An in-memory run: ``metrics`` = the results' summary plus ``provenance`` (and
        ``sections``, see :func:`metrics_document`)."""
        return cls(results, metrics_document(results.summary, provenance, sections), None,
                   label)

    @classmethod
    def unscored(cls, dataset, predictions, *, provenance: Mapping | None = None,
                 label: str = "", attempts: int = 2, sections: Mapping | None = None) -> "Run":
        """An in-memory unscored run: ``predictions`` (a
        :class:`~arcnb.predictions.Predictions`) on ``dataset`` without truth;
        ``metrics`` = :func:`unscored_summary` plus ``provenance``. ``attempts`` is the
        number of attempts per test input of ``submission.json`` (2 for Kaggle)."""
        _, fills = kaggle_submission(dataset, predictions, attempts=attempts)
        summary = unscored_summary(dataset, predictions, fills=fills, attempts=attempts)
        return cls(None, metrics_document(summary, provenance, sections), None, label,
                   dataset=dataset, predictions=predictions)

    @classmethod
    def read(cls, run_dir: str | os.PathLike, *, label: str | None = None) -> "Run":
        """A run directory's ``metrics.json`` only (no scoring: ``results`` is None)."""
        rd = Path(run_dir)
        return cls(None, read_metrics(rd), rd, label or rd.name)

    @classmethod
    def open(cls, run_dir: str | os.PathLike, *, dataset=None, label: str | None = None,
             ks: Sequence[int] | str = (1, 2), n_boot: int = 1000, seed: int = 0,
             cache: dict | None = None) -> "Run":
        """Open a run directory and re-score its ``predictions.json``.

        The dataset is ``dataset`` when given, else the one ``metrics.json`` records
        (:func:`recorded_dataset`). The task set is, in order: a task-id list recorded
        in metrics.json, the recorded task filter file (absolute, or relative to the
        run dir / the working directory), the task ids of ``results.csv`` /
        ``results.parquet`` when the recorded filter cannot be resolved, else the whole
        dataset. Every number ``metrics.json`` records must equal the re-scored one
        (pass@K in every convention for every recorded K, counts, accuracies, costs;
        not only :data:`HEADLINE_KEYS`), and
        the recorded dataset version the current one (unless ``dataset`` is given),
        else :class:`RunDirError`.
        The predictions are scored with the recorded ``estimator`` (``ranked`` when
        none is recorded).

        An unscored run (``"scored": false``) is not scored: its dataset (read without
        requiring test outputs) and predictions are loaded into :attr:`dataset` and
        :attr:`predictions`, and ``results`` stays None.

        ``ks``: the K to score (``"attempts"``: 1 .. the most attempts of any output).
        ``cache`` (a dict) keeps loaded datasets between calls. The label defaults to
        the folder name.
        """
        rd = Path(run_dir)
        if not rd.is_dir():
            raise RunDirError(f"run directory not found: {rd}")
        for name in REQUIRED_RUN_FILES:
            if not (rd / name).is_file():
                raise RunDirError(f"{rd} is not a run directory: {name} is missing")
        metrics = read_metrics(rd)
        if not is_scored(metrics):
            return cls._open_unscored(rd, metrics, dataset=dataset, label=label, cache=cache)
        estimator = summary_of(metrics).get("estimator") or "ranked"
        if estimator not in ESTIMATORS:
            raise RunDirError(f"{rd / METRICS} records an unknown estimator {estimator!r} "
                              f"(expected one of {', '.join(ESTIMATORS)})")
        ds = _recorded_tasks(metrics, rd, dataset, cache)
        preds = load_predictions(str(rd / PREDICTIONS))
        # the numbers at the top level and those under "summary" (an older layout), when
        # there is one: a number anywhere in metrics.json must hold
        layers = [metrics] + ([metrics["summary"]] if isinstance(metrics.get("summary"), Mapping)
                              else [])
        if isinstance(ks, str):
            if ks != "attempts":
                raise ParameterError(f"ks must be a list of K or 'attempts', got {ks!r}")
            ks = attempt_ks(preds)
            # the best attempt is chosen among the first max(K) attempts: never among
            # more than the run was scored with, or its recorded accuracies would change
            recorded_max = max(set().union(*(pass_k_values(m) for m in layers)), default=None)
            if recorded_max is not None:
                ks = tuple(k for k in ks if k <= recorded_max)
        # every recorded pass@K is re-scored, with the recorded estimator
        ks = tuple(sorted(set(ks).union(*(pass_k_values(m) for m in layers))))
        res = score(ds, preds, ks=ks, n_boot=n_boot, seed=seed, estimator=estimator)
        for recorded in layers:
            _check_recorded(upgrade_summary(recorded), res.summary, rd)
        _check_version(metrics, ds, rd, dataset)
        return cls(res, metrics, rd, label or rd.name)

    def on_tasks(self, dataset, *, n_boot: int = 1000, seed: int = 0,
                 label: str | None = None) -> "Run":
        """This run scored on another task set: ``dataset`` (a
        :class:`~arcnb.data.Dataset`, usually a selection of the run's dataset) is the
        denominator, so a task the run has no predictions for counts as wrong (the
        scoring summary warns how many). The same run when it already covers exactly
        those tasks. Its predictions, estimator and K are kept."""
        res = self.results
        if res is None:
            raise RunDirError(f"run {self.label} is not scored (no truth): it cannot be "
                              "scored on other tasks")
        if list(res.tasks["task_id"]) == list(dataset.task_ids):
            return self
        return Run(score(dataset, res.predictions, ks=res.ks, n_boot=n_boot, seed=seed,
                         estimator=res.estimator), self.metrics, self.run_dir,
                   label or self.label)

    @classmethod
    def _open_unscored(cls, rd: Path, metrics: dict, *, dataset, label, cache) -> "Run":
        ds = _recorded_tasks(metrics, rd, dataset, cache, require_truth=False)
        preds = load_predictions(str(rd / PREDICTIONS))
        s = summary_of(metrics)
        for key, fresh in (("n_tasks", len(ds)), ("n_outputs", ds.n_outputs)):
            if s.get(key) is not None and s[key] != fresh:
                raise RunDirError(f"{rd}: {METRICS} says {key}={s[key]} but the recorded "
                                  f"dataset now has {fresh}; the run directory is "
                                  "inconsistent")
        _check_version(metrics, ds, rd, dataset)
        return cls(None, metrics, rd, label or rd.name, dataset=ds, predictions=preds)

    # ----------------------------------------------------------------- writing
    def write(self, out: str | os.PathLike, *, overwrite: bool = False,
              extra_columns=None, predictions_text: str | None = None,
              extra_files: Mapping[str, bytes] | None = None) -> "Run":
        """Write this run as the run directory ``out``; returns the Run at ``out``.

        ``extra_columns`` (keyed by ``task_id`` and ``test_index``) are joined onto the
        outputs table. ``predictions_text`` is written verbatim as ``predictions.json``;
        by default the predictions source file is copied byte for byte when there is
        one, else the parsed attempts (with their metadata: cost, tokens) are written in
        submission format. An unscored run also gets
        ``submission.json`` and the predictions table as ``results.csv``. All writes are
        atomic, ``metrics.json`` last; existing run files are only replaced with
        ``overwrite=True`` (checked up front). A write that fails (a full disk) takes
        back the files it created, so no half run directory is left. ``extra_files``
        (``{name: bytes}``, e.g. ``candidates.parquet``) are written before ``metrics.json``.
        """
        res = self.results
        if res is None and self.scored:
            raise ParameterError("a Run read without scoring (Run.read) cannot be written")
        if res is None and (self.dataset is None or self.predictions is None):
            raise ParameterError("an unscored Run needs its dataset and predictions to be "
                                 "written")
        folder = OutputFolder(out)
        out = folder.path
        refuse_finished(out, overwrite=overwrite)
        preds = res.predictions if res is not None else self.predictions
        predictions_bytes = _predictions_bytes(preds, predictions_text)
        names = list(RUN_FILES)
        added: dict = {}
        if res is not None:
            outputs, tasks = res.outputs, res.tasks
        else:
            attempts = int((self.summary.get("submission") or {}).get("attempts") or 2)
            sub, fills = kaggle_submission(self.dataset, preds, attempts=attempts)
            sub_bytes = submission_bytes(sub)
            added[SUBMISSION] = lambda: sub_bytes
            names.insert(names.index(METRICS), SUBMISSION)
            outputs = predictions_table(self.dataset, preds, fills)
            tasks = _unscored_tasks(outputs)
        for name, data in (extra_files or {}).items():
            added[name] = (lambda d=data: d)
            names.insert(names.index(METRICS), name)
        if extra_columns is not None:
            outputs = outputs.merge(extra_columns, on=["task_id", "test_index"], how="left",
                                    validate="one_to_one")
        files = {PREDICTIONS: lambda: predictions_bytes, RESULTS_CSV: lambda: csv_bytes(outputs),
                 RESULTS_PARQUET: lambda: _df_parquet(outputs),
                 TASKS_CSV: lambda: csv_bytes(tasks),
                 METRICS: lambda: json_bytes(self.metrics), **added}
        # through the guarded folder: no file through a link; an earlier run's
        # metrics.json goes first (a kill then leaves an unfinished run, which --resume
        # finishes, never old numbers beside new files), and so do its optional files that
        # this run does not write (another run's candidates.parquet); a full disk or a kill
        # takes back the files this call created, metrics.json is written last
        stale = [METRICS] + [n for n in OPTIONAL_RUN_FILES if n not in names]
        folder.write({name: files[name] for name in names}, overwrite=overwrite,
                     remove=stale if overwrite else ())
        return Run(res, self.metrics, out, self.label or out.name, dataset=self.dataset,
                   predictions=self.predictions,
                   extra_columns=extra_columns if extra_columns is not None
                   else self.extra_columns)


def candidates_file(run_dir: str | os.PathLike) -> Path | None:
    """The run's candidate pool (:data:`~arcnb.runs.CANDIDATES`) when it is the one the
    run wrote: its SHA-256 must be the ``candidates_sha256`` that ``metrics.json``
    records (None when the run has no pool). A pool the run does not record, or one
    with other bytes (left by another run, copied in), is refused with
    :class:`RunDirError`: a report or the explorer never shows another run's pool as
    this run's."""
    rd = Path(run_dir)
    path = rd / CANDIDATES
    if not path.is_file():
        return None
    recorded = (read_metrics(rd).get("provenance") or {}).get("candidates_sha256")
    if recorded is None or recorded != file_sha256(path):
        raise RunDirError(f"{path} is not the candidate pool of the run in {rd}: "
                          f"{METRICS} records {'no pool' if recorded is None else 'other bytes'}"
                          " (left by another run?); remove it or evaluate again")
    return path


def _file_columns(run_dir: Path, outputs):
    """Columns of the run's ``results.parquet`` / ``results.csv`` that ``outputs``
    lacks (votes, confidences, ...), keyed by task_id and test_index; None when there
    are none."""
    for name in (RESULTS_PARQUET, RESULTS_CSV):
        p = run_dir / name
        if not p.is_file():
            continue
        try:
            df = (read_parquet(p, what="run file").to_pandas() if name == RESULTS_PARQUET
                  else read_csv(p, what="run file", dtype={"task_id": str}))
        except Exception:  # noqa: BLE001 - an unreadable extra file only loses its columns
            continue
        extra = [c for c in df.columns if c not in outputs.columns]
        if not extra or not {"task_id", "test_index"} <= set(df.columns):
            return None
        df = df[["task_id", "test_index"] + extra].copy()
        df["task_id"] = df["task_id"].astype(str)
        df["test_index"] = df["test_index"].astype("int64")
        return df.drop_duplicates(["task_id", "test_index"])
    return None


def _cost_columns(preds):
    """``cost_attempt_K`` per output from the attempts' metadata
    (``metadata.cost.total_cost``, or a number under ``metadata.cost``); None when no
    attempt has one."""
    meta = getattr(preds, "metadata", None) or {}
    rows = []
    for tid, outs in meta.items():
        for i, atts in enumerate(outs or ()):
            row = {"task_id": str(tid), "test_index": i}
            for j, m in enumerate(atts or ()):
                cost = (m or {}).get("cost") if isinstance(m, Mapping) else None
                if isinstance(cost, Mapping):
                    cost = cost.get("total_cost")
                if isinstance(cost, (int, float)) and not isinstance(cost, bool):
                    row[f"cost_attempt_{j + 1}"] = float(cost)
            if len(row) > 2:
                rows.append(row)
    return pd.DataFrame(rows) if rows else None


def _predictions_bytes(preds, predictions_text: str | None) -> bytes:
    """What a run's ``predictions.json`` holds: ``predictions_text``, else a byte copy
    of the source file, else the attempts (with their metadata) in submission format."""
    if predictions_text is not None:
        return predictions_text.encode("utf-8")
    src = getattr(preds, "source", None)
    if src and Path(src).is_file():
        return read_bytes(src, what="predictions file")
    sub = to_submission(preds.attempts, getattr(preds, "metadata", None) or None)
    return submission_bytes(sub)


def _unscored_tasks(outputs):
    """An unscored run's per-task table (sums of the predictions table's counts)."""
    g = outputs.groupby("task_id", sort=True)
    tasks = g[["n_attempts", "n_invalid_attempts", "missing", "n_filler_attempts"]].sum()
    tasks = tasks.rename(columns={"missing": "n_missing_outputs"}).astype("int64")
    tasks.insert(0, "n_outputs", g.size().astype("int64"))
    return tasks.reset_index()


def unique_labels(labels: Sequence[str], *, sep: str = "#") -> list[str]:
    """``labels`` made unique, in order: the first of each label stays as it is, the
    next ones get ``sep`` and their number (``["a", "a", "b"]`` -> ``["a", "a#2",
    "b"]``), skipping a number whose label is already taken. The one way arcnb tells
    runs of the same name apart: compare and the explorer use ``#``; folder names pass
    a filesystem-safe ``sep="_"``."""
    labels = [str(lab) for lab in labels]
    taken = set(labels)  # a label the user gave is never handed to another run
    out, seen = [], set()
    for lab in labels:
        new, n = lab, 1
        while new in seen:
            n += 1
            new = f"{lab}{sep}{n}"
            if new in taken:
                new = lab  # taken by the user: try the next number
        seen.add(new)
        out.append(new)
    return out


def write_run_dir(results, out, *, provenance: dict, overwrite: bool = False,
                  extra_columns=None, predictions_text: str | None = None,
                  extra_files: Mapping[str, bytes] | None = None) -> Path:
    """Write a run directory from scored :class:`~arcnb.scoring.Results` and its
    provenance (:meth:`Run.write`). Returns the directory."""
    run = Run.from_results(results, provenance=provenance)
    return run.write(out, overwrite=overwrite, extra_columns=extra_columns,
                     predictions_text=predictions_text, extra_files=extra_files).run_dir






def _df_parquet(df) -> bytes:
    import io

    buf = io.BytesIO()
    df.to_parquet(buf, index=False, engine="pyarrow")
    return buf.getvalue()


# ----------------------------------------------------------- opening, validating
def _recorded_tasks(metrics: dict, rd: Path, dataset, cache: dict | None, *,
                    require_truth: bool = True):
    """The dataset (and task subset) a run was scored on, as its metrics.json records
    it (or on ``dataset`` when given). ``require_truth=False`` for an unscored run."""
    spec, tasks, info = recorded_dataset(metrics)
    if dataset is None and not spec:
        raise RunDirError(f"{rd / METRICS} names no dataset (expected dataset.name); pass "
                          "dataset= / --dataset")
    if dataset is None:
        spec = _existing_spec(spec, info)
    use_tasks = _resolve_tasks(tasks, rd)
    if tasks is not None and use_tasks is None:
        use_tasks = _table_task_ids(rd)
        if use_tasks is None:
            raise RunDirError(f"{rd}: the recorded task filter {tasks!r} cannot be found and "
                              f"there is no {RESULTS_CSV} listing the tasks")
    if dataset is None:
        spec = _findable(spec, recorded_dataset(metrics)[2].get("version"))
    key = (str(dataset if dataset is not None else spec), require_truth)
    if cache is not None and key in cache:
        ds = cache[key]
    else:
        ds = load_dataset(dataset if dataset is not None else spec,
                          require_truth=require_truth)
        if cache is not None:
            cache[key] = ds
    if use_tasks is not None:
        ds = ds.select(use_tasks, label=str(tasks) if not isinstance(tasks, list) else None)
    return ds


def recorded_task_ids(run_dir: str | os.PathLike) -> list[str] | None:
    """The task ids a run directory records having been made on (a run made with
    ``--tasks`` / ``tasks=``): its recorded list or task filter file, else the task ids
    of its tables; None when it records no filter (the whole recorded dataset).
    :class:`RunDirError` when a recorded filter can be found nowhere."""
    rd = Path(run_dir)
    _, tasks, _ = recorded_dataset(read_metrics(rd))
    if tasks is None:
        return None
    ids = _resolve_tasks(tasks, rd)
    if ids is None:
        ids = _table_task_ids(rd)
    if ids is None:
        raise RunDirError(f"{rd}: the recorded task filter {tasks!r} cannot be found and "
                          f"there is no {RESULTS_CSV} listing the tasks")
    return sorted({str(t) for t in ids})


def _findable(spec: str, version) -> str:
    """A recorded dataset as it can be loaded from here: a folder or file recorded by a
    relative path that does not resolve from the working directory (a notebook kernel
    runs in the run directory) is found through the absolute path in its version
    (``folder:/abs/path``, ``file:/abs/path``)."""
    if Path(str(spec)).exists() or not isinstance(version, str):
        return spec
    kind, _, where = version.partition(":")
    if kind in ("folder", "file") and Path(where).is_absolute() and Path(where).exists():
        return where
    return spec


def _existing_spec(spec: str, info: Mapping) -> str:
    """A recorded dataset path given relative to another working directory: the
    absolute path its version records (``file:<path>`` / ``folder:<path>``) when
    ``spec`` itself is not found."""
    version = str(info.get("version") or "")
    if spec in DATASETS or Path(spec).exists():
        return spec
    for prefix in ("file:", "folder:"):
        if version.startswith(prefix) and Path(version[len(prefix):]).exists():
            return version[len(prefix):]
    return spec


def _check_version(metrics: Mapping, ds, rd: Path, dataset) -> None:
    rec_version = recorded_dataset(metrics)[2].get("version")
    if rec_version and dataset is None and rec_version != ds.version:
        raise RunDirError(f"{rd}: {METRICS} records dataset version {rec_version} but "
                          f"{ds.name} is now {ds.version}")


def _resolve_tasks(tasks, run_dir: Path):
    """A task filter as recorded: a list, or a path (absolute, or relative to the run
    dir / the working directory). None when it cannot be resolved."""
    if tasks is None or isinstance(tasks, list):
        return tasks
    for cand in (Path(str(tasks)), run_dir / str(tasks)):
        if cand.is_file():
            return load_task_ids(cand)
    return None


def _table_task_ids(run_dir: Path) -> list[str] | None:
    """The task ids of the run's outputs table (Parquet, which keeps the exact ids, else
    CSV, whose formula-neutralising ``'`` is taken off again), or None."""
    for name in (RESULTS_PARQUET, RESULTS_CSV):
        p = run_dir / name
        if p.exists():
            try:
                df = read_csv(p, what="run file", dtype={"task_id": str}) if name == RESULTS_CSV \
                    else read_parquet(p, what="run file").to_pandas()[["task_id"]]
            except Exception:  # noqa: BLE001 - an unreadable table is just not used
                continue
            if "task_id" in df.columns:
                ids = df["task_id"].astype(str)
                if name == RESULTS_CSV:
                    ids = ids.map(lambda t: t[1:] if t.startswith("'") and
                                  t[1:].startswith(FORMULA_START) else t)
                return sorted(set(ids))
    return None


#: Summary entries that are not numbers re-scoring must reproduce: free text, the
#: dataset (its version is checked on its own) and the bootstrap settings (the interval
#: is checked when they match).
_NOT_RECHECKED = frozenset({"provenance", "dataset", "notes", "warnings", "bootstrap"})


def _same(a, b) -> bool:
    """Whether a recorded JSON value equals a re-scored one (NaN is stored as null;
    numbers agree to 1e-9)."""
    import math

    if isinstance(b, float) and math.isnan(b):
        return a is None or (isinstance(a, float) and math.isnan(a))
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(a, list) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, Mapping):
        return set(a) == set(b) and all(_same(a[k], b[k]) for k in a)
    return a == b


def _shown(value) -> str:
    text = json.dumps(to_jsonable(value), sort_keys=True)
    return text if len(text) <= 60 else text[:57] + "..."


def _check_recorded(recorded: Mapping, fresh: Mapping, where: Path) -> None:
    """Every number ``metrics.json`` records (any key re-scoring also computes: pass@K
    in every convention, counts, cell and shape accuracies, costs, tokens, the
    interval when the bootstrap settings match) must equal the re-scored one."""
    for key in sorted(recorded, key=str):
        if key in _NOT_RECHECKED or key not in fresh:
            continue
        if key.endswith("_ci95") and not _same(recorded.get("bootstrap"),
                                               fresh.get("bootstrap")):
            continue
        a, b = recorded[key], fresh[key]
        if not _same(a, b):
            raise RunDirError(f"{where}: re-scoring {PREDICTIONS} gives {key}={_shown(b)}, but "
                              f"{METRICS} says {_shown(a)}; the run directory is inconsistent")
