"""The ``metrics.json`` document: the scoring summary at top level plus ``provenance``;
reading it (summary, K, recorded dataset), an unscored run's summary and Kaggle
submission, and the compact reporting line."""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Mapping

import pandas as pd

from ..columns import upgrade_summary
from ..grids import shape_str
from ..io import JSONInputError, atomic_write_json, read_json
from ..text import fmt_fraction
from .layout import FILLER, METRICS, SUBMISSION, RunDirError


def metrics_document(summary: Mapping, provenance: Mapping | None,
                     sections: Mapping | None = None) -> dict:
    """The ``metrics.json`` object: the summary's keys at top level plus
    ``provenance``, and ``sections`` a producer adds beside them (evaluate's
    ``probes``, ``memorisation`` and ``proxy``: :mod:`arcnb.probes`)."""
    metrics = dict(summary)
    metrics.update(sections or {})
    metrics["provenance"] = provenance
    return metrics


def summary_of(metrics: Mapping) -> dict:
    """The scoring summary inside a metrics.json (top level, or under ``summary``)."""
    if "summary" in metrics and isinstance(metrics["summary"], Mapping):
        return upgrade_summary(metrics["summary"])
    return upgrade_summary(metrics)


def is_scored(metrics: Mapping) -> bool:
    """False for an unscored run (``"scored": false``: a hidden test set), else True."""
    return summary_of(metrics).get("scored", True) is not False


def kaggle_submission(dataset, predictions, *, attempts: int = 2,
                      filler=None) -> tuple[dict, dict]:
    """The Kaggle submission of ``predictions`` on ``dataset``, and the filler count.

    Every task of ``dataset`` (in its order), every test input in order, exactly
    ``attempt_1 .. attempt_<attempts>`` (2 for Kaggle): attempt j is the j-th
    prediction when it is a valid grid, else ``filler`` (default :data:`FILLER`,
    ``[[0]]``: Kaggle rejects ``null``), also when there are fewer predictions than
    ``attempts``. Predictions beyond ``attempts`` are left out. Returns
    ``(submission, fills)`` with ``fills[(task_id, test_index)]`` the number of filler
    attempts of that test input.
    """
    filler = [list(row) for row in (FILLER if filler is None else filler)]
    sub, fills = {}, {}
    for task in dataset:
        entries = []
        for i in range(len(task.test)):
            atts = list(predictions.get(task.id, i))[:attempts]
            entry, n_fill = {}, 0
            for j in range(attempts):
                g = atts[j] if j < len(atts) else None
                if g is None:
                    entry[f"attempt_{j + 1}"] = [list(row) for row in filler]
                    n_fill += 1
                else:
                    entry[f"attempt_{j + 1}"] = g.tolist()
            fills[(task.id, i)] = n_fill
            entries.append(entry)
        sub[task.id] = entries
    return sub, fills


def predictions_table(dataset, predictions, fills: Mapping | None = None):
    """An unscored run's outputs table: one row per task x test input with
    ``task_id``, ``test_index``, ``n_attempts``, ``n_invalid_attempts``, ``missing``,
    ``n_filler_attempts`` (in ``submission.json``), ``input_shape``, ``pred_shape``
    (attempt 1's, ``"HxW"``; empty when invalid), ``pred_h``, ``pred_w``."""
    rows = []
    for task in dataset:
        for i, pair in enumerate(task.test):
            atts = predictions.get(task.id, i)
            a1 = atts[0] if atts else None
            rows.append({"task_id": task.id, "test_index": i, "n_attempts": len(atts),
                         "n_invalid_attempts": sum(g is None for g in atts),
                         "missing": len(atts) == 0,
                         "n_filler_attempts": int((fills or {}).get((task.id, i), 0)),
                         "input_shape": shape_str(pair.input), "pred_shape": shape_str(a1),
                         "pred_h": None if a1 is None else a1.shape[0],
                         "pred_w": None if a1 is None else a1.shape[1]})
    df = pd.DataFrame(rows, columns=["task_id", "test_index", "n_attempts",
                                     "n_invalid_attempts", "missing", "n_filler_attempts",
                                     "input_shape", "pred_shape", "pred_h", "pred_w"])
    for c in ("pred_h", "pred_w"):
        df[c] = df[c].astype("Int64")
    return df


def unscored_summary(dataset, predictions, *, fills: Mapping, attempts: int = 2) -> dict:
    """The summary of an unscored run (``"scored": false``, no score keys); see the
    module docstring. ``fills`` is :func:`kaggle_submission`'s filler count."""
    n_out = dataset.n_outputs
    no_truth = sum(p.output is None for t in dataset for p in t.test)
    per_out = [predictions.get(t.id, i) for t in dataset for i in range(len(t.test))]
    n_fill = int(sum(fills.values()))
    notes = [f"no truth for {no_truth} of the {n_out} test outputs (a hidden test set): the "
             f"predictions are not scored; {SUBMISSION} holds them for Kaggle"]
    if n_fill:
        notes.append(f"{n_fill} attempts of {SUBMISSION} are the filler {FILLER} (an invalid "
                     "or absent prediction: Kaggle rejects null)")
    return {
        "scored": False,
        "n_tasks": len(dataset),
        "n_outputs": n_out,
        "n_outputs_without_truth": int(no_truth),
        "n_attempts": int(sum(len(a) for a in per_out)),
        "n_invalid_attempts": int(sum(g is None for a in per_out for g in a)),
        "n_missing_outputs": int(sum(len(a) == 0 for a in per_out)),
        "dataset": dataset.info,
        "submission": {"file": SUBMISSION, "attempts": int(attempts), "filler": FILLER,
                       "n_filler_attempts": n_fill},
        "notes": notes,
        "warnings": [],
    }


def ks_of(metrics: Mapping) -> tuple[int, ...]:
    """The K of every ``pass@K`` a metrics.json holds (always 1 and 2; K is a plain
    ASCII number >= 1)."""
    return tuple(sorted({1, 2} | pass_k_values(summary_of(metrics))))


def pass_k_values(keys) -> set[int]:
    """The K of the ``pass@K`` keys among ``keys``."""
    return {int(key[5:]) for key in keys
            if isinstance(key, str) and key.startswith("pass@") and "_" not in key
            and key[5:].isascii() and key[5:].isdigit() and int(key[5:]) >= 1}


def attempt_ks(preds) -> tuple[int, ...]:
    """1 .. the largest number of attempts of any output of ``preds`` (at least 1, 2)."""
    most = max((len(a) for outs in preds.attempts.values() for a in outs), default=2)
    return tuple(range(1, max(2, most) + 1))


def recorded_dataset(metrics: Mapping) -> tuple[str | None, object, dict]:
    """(dataset spec, task filter, recorded dataset info) from a metrics.json.

    The dataset is ``dataset.name`` (top level or in the summary), else
    ``parameters.dataset`` / ``params.dataset``. The task filter is a task-id list
    (``task_ids`` or ``tasks`` at the top level, in the summary or in the dataset
    info), else ``parameters.tasks``, else the dataset's ``filter``.
    """
    summ = summary_of(metrics)
    info = metrics.get("dataset") if isinstance(metrics.get("dataset"), dict) else \
        (summ.get("dataset") if isinstance(summ.get("dataset"), dict) else {})
    params = metrics.get("parameters") or metrics.get("params") or {}
    spec = info.get("name") or (params.get("dataset") if isinstance(params, dict) else None)
    tasks = None
    for holder in (metrics, summ, info):
        for key in ("task_ids", "tasks"):
            if isinstance(holder.get(key), list):
                tasks = holder[key]
                break
        if tasks is not None:
            break
    if tasks is None and isinstance(params, dict) and params.get("tasks"):
        tasks = params["tasks"]
    if tasks is None and info.get("filter"):
        tasks = info["filter"]
    return spec, tasks, info


def read_metrics(run_dir: str | os.PathLike) -> dict:
    """A run directory's ``metrics.json`` (a JSON object; :class:`RunDirError` when it
    is missing or is not one)."""

    path = Path(run_dir) / METRICS
    if not path.is_file():
        raise RunDirError(f"{Path(run_dir)} is not a run directory: {METRICS} is missing")
    try:  # BOM, nesting depth, size and duplicated keys checked as for every input
        metrics = read_json(path, what="run file")
    except JSONInputError as exc:
        raise RunDirError(str(exc)) from None
    if not isinstance(metrics, dict):
        raise RunDirError(f"{path} must hold a JSON object")
    return metrics


def flat_provenance(metrics: Mapping, *, run_dir=None) -> dict:
    """Flat provenance of a run: checkpoint path and SHA-256 (or the predictions file),
    dataset name, version and filter, arcnb version and git commit, parameters, and
    (``reused``) when the finished run was taken as it was instead of made again."""
    s = summary_of(metrics)
    prov = dict(metrics.get("provenance") or {})
    ds = prov.get("dataset") if isinstance(prov.get("dataset"), Mapping) else \
        (s.get("dataset") or {})
    ck = prov.get("checkpoint")
    if isinstance(ck, Mapping):  # {"path", "sha256"}
        ck_path, ck_sha = ck.get("path"), ck.get("sha256")
    else:
        ck_path, ck_sha = ck, prov.get("checkpoint_sha256")
    pr = prov.get("predictions")
    if isinstance(pr, Mapping):
        pr_path, pr_sha = pr.get("path"), pr.get("sha256")
    else:
        pr_path, pr_sha = pr, prov.get("predictions_sha256")
    run = prov.get("run") if isinstance(prov.get("run"), Mapping) else {}
    flat = {
        "checkpoint": ck_path,
        "checkpoint_sha256": ck_sha,
        "predictions": pr_path,
        "predictions_sha256": pr_sha,
        "dataset": ds.get("name"),
        "dataset_version": ds.get("version"),
        "filter": ds.get("filter"),
        "arcnb_version": prov.get("arcnb_version"),
        "git_commit": prov.get("git_commit"),
        "device": prov.get("device"),
        "wall_time_s": run.get("wall_time_s"),
        "torch": prov.get("torch"),
        "parameters": prov.get("parameters"),
        "reused": _reused_words(prov.get(REUSED_KEY)),
    }
    flat = {k: v for k, v in flat.items()
            if v is not None or k in ("checkpoint_sha256", "filter", "git_commit")}
    if run_dir is not None:
        flat["run_dir"] = str(run_dir)
    return flat


def compact_line(metrics: Mapping, metric: str = "pass@2") -> str:
    """The compact reporting line:
    ``<metric>=<fraction> (<percent>%), estimator=<name>, checkpoint=<sha256>,
    data=<name>@<version>, filter=<filter>, arcnb=<version>+<commit>``.

    ``estimator`` is how attempts became pass@K (``ranked``, the ARC Prize rule, when
    metrics.json records none). A model given by name (no file, e.g. ``copy-input``)
    shows its name instead of a SHA-256. Without a checkpoint (a predictions file or a
    harness run folder was scored), ``checkpoint=none`` and the predictions' SHA-256
    follow as ``predictions=<sha256>``. An unscored run (no truth) shows
    ``<metric>=not scored (no truth)`` and no estimator.
    """

    s = summary_of(metrics)
    p = flat_provenance(metrics)
    v = s.get(metric)
    if not is_scored(metrics):
        value = "not scored (no truth)"
    else:
        value = fmt_fraction(v)  # NaN when missing (arcnb.text.MISSING)
    parts = [f"{metric}={value}"]
    if is_scored(metrics):
        parts.append(f"estimator={s.get('estimator') or 'ranked'}")
    parts.append(f"checkpoint={p.get('checkpoint_sha256') or p.get('checkpoint') or 'none'}")
    if not p.get("checkpoint_sha256") and p.get("predictions_sha256"):
        parts.append(f"predictions={p['predictions_sha256']}")
    parts.append(f"data={p.get('dataset')}@{p.get('dataset_version')}")
    parts.append(f"filter={p.get('filter') or 'none'}")
    commit = p.get("git_commit")
    parts.append(f"arcnb={p.get('arcnb_version')}" + (f"+{commit[:12]}" if commit else ""))
    check = metrics.get(TRAINING_OVERLAP_KEY)
    if check:  # the training-data overlap check, when the report made one
        parts.append(f"train_overlap={check.get('outputs_equivalent')}/{check.get('n_outputs')} "
                     "outputs vs " + "+".join(str(t.get("source")) for t in check.get("train", [])))
    return ", ".join(parts)


#: The metrics.json key of the training-data overlap check (``arcnb report --train-data``).
TRAINING_OVERLAP_KEY = "training_overlap"


def record_training_overlap(run_dir: str | os.PathLike, summary: Mapping) -> None:
    """Record a training-data overlap check (:func:`arcnb.overlap.overlap`'s summary:
    sources and counts) in the run's ``metrics.json`` under ``training_overlap``,
    atomically; an earlier check is replaced."""
    path = Path(run_dir) / METRICS
    metrics = read_json(path, what="metrics file")
    metrics[TRAINING_OVERLAP_KEY] = dict(summary)
    atomic_write_json(path, metrics, overwrite=True)


#: The provenance key recording that a finished run was reused instead of made again
#: (``arcnb report`` over the same evaluation): ``{"by", "last", "times"}``.
REUSED_KEY = "reused"


def record_reuse(run_dir: str | os.PathLike, by: str) -> dict:
    """Record in ``run_dir``'s ``metrics.json`` provenance that ``by`` (a command) took
    this finished run as it is instead of making it again: ``provenance["reused"] =
    {"by": by, "last": UTC time, "times": how many reuses so far}``, atomically; the
    numbers and the rest of the provenance are left as they are. Returns the record."""
    path = Path(run_dir) / METRICS
    metrics = read_json(path, what="metrics file")
    prov = metrics.get("provenance") if isinstance(metrics.get("provenance"), dict) else {}
    old = prov.get(REUSED_KEY) if isinstance(prov.get(REUSED_KEY), Mapping) else {}
    times = old.get("times") if isinstance(old.get("times"), int) else 0
    record = {"by": str(by), "last": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "times": times + 1}
    metrics["provenance"] = {**prov, REUSED_KEY: record}
    atomic_write_json(path, metrics, overwrite=True)
    return record


def _reused_words(record) -> str | None:
    """The flat provenance's words for a :data:`REUSED_KEY` record (None: never reused)."""
    if not isinstance(record, Mapping):
        return None
    times = record.get("times")
    return (f"taken as it was by {record.get('by')} {times} time{'s' if times != 1 else ''}, "
            f"last at {record.get('last')} (not evaluated again)")
