"""Official ARC Prize scoring over a dataset, as tidy tables.

A test output is *solved at K* when any of its first K attempts (in attempt order)
equals the truth exactly: same shape and every cell. Three conventions are reported
side by side:

* ``pass@K``: mean over each task's test outputs, then mean over tasks (the ARC Prize
  rule);
* ``pass@K_per_output``: mean over all test outputs;
* ``pass@K_all_or_nothing``: a task counts only when all its outputs are solved.

The denominator is always the dataset's task list (after any filter): a task or test
output missing from the predictions counts as wrong, extra tasks are ignored and
reported.

Two estimators turn the attempts into pass@K (``score(..., estimator=)``):

* ``ranked`` (default, the ARC Prize rule): an output is solved at K when any of its
  first K attempts, in the file's order, is right (0 or 1 per output);
* ``unbiased``: the attempts are taken as an unordered sample of n, c of them right,
  and pass@K is the probability that K drawn without replacement hold a right one,
  ``1 - C(n-c, K) / C(n, K)`` (Chen et al. 2021), per output; undefined (NaN) when
  0 < n < K. It is the average of the ranked rule over every ordering of the attempts.

Attempts that carry benchmarking-harness ``metadata`` add cost, token and duration
columns and summary keys (NaN when unknown, never 0).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Sequence

import numpy as np
import pandas as pd

from .columns import DEFINITIONS, OUTPUTS, TASK_ORDER, TASKS, expand
from .data import DATASETS, Dataset, bundled_task_ids, load_dataset
from .errors import DatasetError, ParameterError
from .html import escape, table as html_table
from .grids import best_attempt, same_grid, shape_str
from .metrics import partial_credit
from .predictions import Predictions, load_predictions, problem_summary
from .stats import bootstrap_ci
from .text import MISSING, fmt_count, fmt_interval, fmt_number, fmt_significant

__all__ = ["Results", "score", "SUMMARY_KEYS", "METRIC_DEFINITIONS", "ESTIMATORS",
           "COST_SUMMARY_KEYS", "USAGE_COLUMNS", "pass_at_k_unbiased", "cost_line"]

#: The ways attempts become pass@K (see the module docstring).
ESTIMATORS = ("ranked", "unbiased")

#: Cost and usage keys every summary carries: NaN (null in JSON) or None when the
#: attempts carry no such metadata, never 0.
COST_SUMMARY_KEYS = (
    "total_cost", "cost_per_task", "cost_per_attempt", "total_tokens", "tokens_per_task",
    "total_duration_s", "n_attempts_with_cost", "model", "provider",
    "total_cost_cached", "cost_cached_per_task", "total_reasoning_tokens",
    "total_cache_read_tokens", "total_cache_creation_tokens", "total_tool_calls",
    "total_turns",
)

#: The price of a prompt token read from a provider's cache, and of one written to it,
#: as a multiple of the input price (Anthropic's published prompt-caching rates for the
#: five-minute cache; other providers and models differ): ``cost_cached`` uses them.
CACHE_READ_PRICE = 0.1
CACHE_WRITE_PRICE = 1.25

#: Keys every summary carries (plus pass@K variants for extra K).
SUMMARY_KEYS = (
    "pass@1", "pass@2", "pass@1_per_output", "pass@2_per_output",
    "pass@1_all_or_nothing", "pass@2_all_or_nothing",
    "n_tasks", "n_outputs", "n_missing_outputs", "n_invalid_attempts", "n_extra_tasks",
    "n_extra_outputs", "n_bad_attempt_keys", "estimator", "n_attempts", "notes",
) + COST_SUMMARY_KEYS

#: Per-output (summed over the attempts) and per-task (summed over the outputs) usage
#: columns, from each attempt's ``metadata``: ``cost`` is ``cost.total_cost``, the
#: tokens come from ``usage`` (``reasoning_tokens`` from
#: ``usage.completion_tokens_details``), ``duration_s`` is ``end_timestamp -
#: start_timestamp`` in seconds. NaN when no attempt of the row has the value.
USAGE_COLUMNS = tuple(c.name for c in OUTPUTS if c.task == "sum_known")

#: Each metric of the summary, defined in words (shown in reports), generated from the
#: column definitions (:mod:`arcnb.columns`).
METRIC_DEFINITIONS = DEFINITIONS

#: Share of submitted tasks missing from the dataset above which scoring warns that
#: the predictions were probably made for another dataset.
FOREIGN_TASKS_WARNING = 0.5


@dataclass
class Results:
    """Scored predictions: one tidy table per output, one per task, and a summary.

    ``outputs`` has one row per task x test output with the columns ``task_id``,
    ``test_index``, ``n_attempts``, ``n_invalid_attempts``, ``missing``,
    ``first_correct`` (1-based attempt position, <NA> when none is right),
    ``best_attempt`` (1-based position of the best attempt, see
    :func:`arcnb.grids.best_attempt`; <NA> when no attempt is valid),
    ``solved@K`` for each K, ``shape_correct``, ``cell_accuracy``, ``partial_credit``,
    ``truth_shape`` / ``pred_shape`` (``"HxW"``; pred is attempt 1's) and
    ``truth_h``, ``truth_w``, ``pred_h``, ``pred_w``; ``n_correct`` (right attempts
    among all of them), ``pass@K`` for each K (the estimator's value for the output:
    ``solved@K`` as 0/1 for ``ranked``, a probability or NaN for ``unbiased``), the
    :data:`USAGE_COLUMNS` and ``n_wrong_cells`` (the best attempt's wrong cells when it
    has the truth's shape, else <NA>). Every column, in this order, is defined in
    :data:`arcnb.columns.OUTPUTS`; the tasks table follows
    ``arcnb.columns.TASK_ORDER``.

    ``tasks`` has one row per task: ``n_outputs``, ``pass@K`` (mean of the outputs'
    ``pass@K``; NaN when one is NaN), ``all_solved@K`` (ranked rule),
    ``pass@K_all_or_nothing`` (product of the outputs' ``pass@K``: 0/1 for ``ranked``),
    ``cell_accuracy``, ``partial_credit``, ``n_missing_outputs``, ``n_attempts``,
    ``n_invalid_attempts`` and the :data:`USAGE_COLUMNS` summed over the outputs.
    ``solved@K``, ``first_correct`` and ``all_solved@K`` always follow the ranked rule.
    """

    dataset: Dataset
    predictions: Predictions
    outputs: pd.DataFrame
    tasks: pd.DataFrame
    summary: dict
    ks: tuple[int, ...]
    extra_tasks: list[str] = field(default_factory=list)
    #: cost/token values left out of the sums (``MAX_USAGE_VALUE``), one problem
    #: entry each (as ``Predictions.problems``).
    usage_problems: list[dict] = field(default_factory=list, repr=False)

    @property
    def problems(self) -> list[dict]:
        """What was malformed, or read in another way than given, in the scored tasks'
        predictions, by kind: ``[{"kind", "count", "examples"}]``, most frequent first
        (see :func:`arcnb.predictions.problem_summary`)."""
        return problem_summary(list(self.predictions.problems) + list(self.usage_problems),
                               task_ids=set(self.dataset.task_ids))

    def truth(self, task_id: str, test_index: int) -> np.ndarray:
        """The truth grid of one test output."""
        return self.dataset[task_id].test[test_index].output

    def test_input(self, task_id: str, test_index: int) -> np.ndarray:
        """The input grid of one test output."""
        return self.dataset[task_id].test[test_index].input

    def attempts(self, task_id: str, test_index: int) -> list[np.ndarray | None]:
        """The attempts for one test output, in order (None for a malformed one;
        ``[]`` when the output is missing from the predictions)."""
        return self.predictions.get(task_id, test_index)

    def attempt_metadata(self, task_id: str, test_index: int) -> list[dict | None]:
        """Each attempt's ``metadata`` object (None where there is none)."""
        return self.predictions.get_metadata(task_id, test_index)

    @property
    def estimator(self) -> str:
        """``"ranked"`` or ``"unbiased"``: how attempts became pass@K."""
        return self.summary.get("estimator", "ranked")

    @property
    def has_cost(self) -> bool:
        """True when some attempt carries a cost (``total_cost`` is a number)."""
        return _known(self.summary.get("total_cost"))

    def summary_table(self) -> pd.DataFrame:
        """The headline numbers in the three conventions, one row per K."""
        rows = []
        for k in self.ks:
            rows.append({
                "K": k,
                "pass@K": self.summary[f"pass@{k}"],
                "pass@K_per_output": self.summary[f"pass@{k}_per_output"],
                "pass@K_all_or_nothing": self.summary[f"pass@{k}_all_or_nothing"],
            })
        return pd.DataFrame(rows).set_index("K")

    def pass_at_k_table(self, max_k: int | None = None, *, n_boot: int | None = None,
                        seed: int | None = None) -> pd.DataFrame:
        """pass@K for K = 1 .. ``max_k`` in the three conventions, with a seeded bootstrap
        interval over tasks for ``pass@K`` (columns ``K``, ``pass@K``,
        ``pass@K_per_output``, ``pass@K_all_or_nothing``, ``ci_low``, ``ci_high``).

        Computed from ``first_correct`` (``ranked``) or ``n_attempts`` and
        ``n_correct`` (``unbiased``, the summary's estimator), so any K works, not only
        the scored ones; ``max_k`` defaults to the most attempts any output has (at
        least max(ks)). ``n_boot`` and ``seed`` default to the summary's.
        """
        boot = self.summary.get("bootstrap", {})
        n_boot = boot.get("n_boot", 1000) if n_boot is None else n_boot
        seed = boot.get("seed", 0) if seed is None else seed
        out = self.outputs
        if max_k is None:
            max_k = int(max(max(self.ks), out["n_attempts"].max() if len(out) else 1))
        task_ids = out["task_id"].to_numpy()
        rows = []
        for k in range(1, max_k + 1):
            per_out = _output_pass(out, k, self.estimator)
            per_task, all_or_nothing = task_means(per_out, task_ids)
            lo, hi = _task_ci(per_task, n_boot=n_boot, seed=seed)
            rows.append({"K": k, "pass@K": _mean(per_task), "pass@K_per_output": _mean(per_out),
                         "pass@K_all_or_nothing": _mean(all_or_nothing), "ci_low": lo,
                         "ci_high": hi})
        return pd.DataFrame(rows)

    def _repr_html_(self) -> str:
        """Jupyter's rich view: the headline table in the three conventions, the
        bootstrap interval and the counts."""
        s = self.summary
        table = html_table(self.summary_table(), index=True, classes="arcnb-results arcnb-table")
        lo, hi = s.get("pass@2_ci95", [float("nan")] * 2)
        counts = ", ".join(f"{label}: {s.get(key, 0)}" for key, label in (
            ("n_tasks", "tasks"), ("n_outputs", "test outputs"),
            ("n_missing_outputs", "missing outputs"), ("n_invalid_attempts", "invalid attempts"),
            ("n_extra_tasks", "extra tasks"), ("n_extra_outputs", "extra outputs")))
        warn = "".join(f"<p><b>warning:</b> {escape(w)}</p>" for w in s.get("warnings", []))
        notes = "".join(f"<p><b>note:</b> {escape(w)}</p>" for w in s.get("notes", []))
        cost = f"<p>{escape(cost_line(s))}</p>" if cost_line(s) else ""
        return (f"<div><p><b>Results</b> on {escape(str(self.dataset.name))} "
                f"({escape(str(self.dataset.version))}), estimator: "
                f"{escape(str(self.estimator))}</p>{table}"
                f"<p>pass@2 (ARC Prize rule) 95% bootstrap interval over tasks: "
                f"{fmt_interval(lo, hi)}</p><p>{escape(counts)}</p>{cost}{warn}{notes}</div>")

    def __repr__(self) -> str:
        s = self.summary
        est = "" if self.estimator == "ranked" else f", estimator={self.estimator}"
        return (f"Results({self.dataset.name}, tasks={s['n_tasks']}, outputs={s['n_outputs']}, "
                f"pass@2={fmt_number(s['pass@2'], least=4)}{est})")


def _score_output(truth: np.ndarray, attempts: list, metas: list, ks: Sequence[int]) -> dict:
    max_k = max(ks)
    considered = attempts[:max_k]
    correct = [same_grid(g, truth) for g in attempts]
    first = next((i + 1 for i, c in enumerate(correct) if c), None)
    same_shape = [g for g in considered if g is not None and g.shape == truth.shape]
    best, cell_acc = best_attempt(truth, attempts, max_k)
    pc = max((partial_credit(truth, g) for g in considered), default=0.0)
    a1 = attempts[0] if attempts else None
    row = {
        "n_attempts": len(attempts),
        "n_invalid_attempts": sum(g is None for g in attempts),
        "missing": len(attempts) == 0,
        "first_correct": first,
        "best_attempt": None if best is None else best + 1,
    }
    for k in ks:
        row[f"solved@{k}"] = first is not None and first <= k
    row.update({
        "shape_correct": bool(same_shape),
        "cell_accuracy": cell_acc,
        "partial_credit": pc,
        "truth_shape": shape_str(truth),
        "pred_shape": shape_str(a1),
        "truth_h": truth.shape[0], "truth_w": truth.shape[1],
        "pred_h": None if a1 is None else a1.shape[0],
        "pred_w": None if a1 is None else a1.shape[1],
        "n_correct": sum(correct),
        "n_wrong_cells": (None if best is None or math.isnan(cell_acc)
                          else int((attempts[best] != truth).sum())),
    })
    row.update(_usage(metas))
    return row


# ------------------------------------------------------------------ estimators
def pass_at_k_unbiased(n, c, k: int) -> np.ndarray:
    """The unbiased pass@k estimator (Chen et al. 2021) per output, vectorised.

    ``n`` attempts with ``c`` right give ``1 - C(n-c, k) / C(n, k)``, computed as
    ``1 - prod_{i=n-c+1}^{n} (1 - k/i)`` in log space (``-expm1(sum(log1p(-k/i)))``),
    so no binomial is ever formed and n = 1000 or more is exact to rounding. It is 1
    when ``n - c < k`` (every draw of k holds a right one) and 0 when ``c = 0``. An
    output without attempts (``n = 0``) is 0, wrong like a missing output; ``0 < n < k``
    is undefined: NaN.
    """
    k = int(k)
    if k < 1:
        raise ParameterError(f"k must be >= 1, got {k}")
    n, c = np.broadcast_arrays(np.asarray(n, dtype=np.int64), np.asarray(c, dtype=np.int64))
    if np.any(c < 0) or np.any(c > n):
        raise ParameterError("need 0 <= c <= n for every output")
    out = np.full(n.shape, np.nan)
    defined = n >= k
    out[n == 0] = 0.0
    out[defined & (c == 0)] = 0.0
    out[defined & (n - c < k)] = 1.0
    todo = defined & (c > 0) & (n - c >= k)
    if np.any(todo):
        pairs, inverse = np.unique(np.stack([n[todo], c[todo]], axis=1), axis=0,
                                   return_inverse=True)
        vals = np.empty(len(pairs))
        for j, (nn, cc) in enumerate(pairs):  # one product per distinct (n, c)
            i = np.arange(nn - cc + 1, nn + 1, dtype=np.float64)
            vals[j] = -np.expm1(np.log1p(-k / i).sum())
        out[todo] = vals[inverse.ravel()]
    return out


def _output_pass(out: pd.DataFrame, k: int, estimator: str) -> np.ndarray:
    """Each output's pass@k under ``estimator`` (float array, NaN where undefined)."""
    if estimator == "unbiased":
        return pass_at_k_unbiased(out["n_attempts"].to_numpy(np.int64),
                                  out["n_correct"].to_numpy(np.int64), k)
    first = out["first_correct"].astype("Float64").fillna(np.inf).to_numpy(float)
    return (first <= k).astype(float)


def task_means(per_out, task_ids):
    """Per task (sorted ids): the mean and the product of its outputs' values, NaN when
    one of them is NaN (an undefined output leaves its task undefined). ``per_out`` is
    an array (Series returned) or a DataFrame (one column each)."""
    frame = isinstance(per_out, pd.DataFrame)
    df = (per_out if frame else pd.DataFrame({"v": np.asarray(per_out, dtype=float)}))
    df = df.astype(float).reset_index(drop=True)
    keys = np.asarray(task_ids)
    g = df.groupby(keys, sort=True)
    undefined = df.isna().groupby(keys, sort=True).any()
    mean, prod = g.mean().mask(undefined), g.prod().mask(undefined)
    return (mean, prod) if frame else (mean["v"], prod["v"])


def _task_ci(per_task, *, n_boot: int, seed: int) -> tuple[float, float]:
    """Bootstrap interval over tasks; NaN when some task's value is undefined (the
    interval would otherwise cover a different set of tasks than the estimate)."""
    v = np.asarray(per_task, dtype=float)
    if np.isnan(v).any():
        return (float("nan"), float("nan"))
    return bootstrap_ci(v, n_boot=n_boot, seed=seed)


# ------------------------------------------------------------------ cost and usage
#: Largest cost (dollars) or token count arcnb accepts for one attempt. A value above it,
#: a negative one or one that is not a finite number is invalid metadata: left out of
#: the sums (as if absent), counted in ``n_invalid_usage_values`` and warned about. Sums
#: of valid values over millions of attempts stay far from float overflow.
MAX_USAGE_VALUE = 1e12

_INVALID = object()


def _number(x) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return math.nan
    try:
        x = float(x)
    except OverflowError:
        return _INVALID
    return x if math.isfinite(x) else _INVALID


#: Where each cost/token column of :data:`USAGE_COLUMNS` is in an attempt's metadata
#: (``tool_calls`` is a list: its length counts).
_USAGE_PATHS = {"cost": ("cost", "total_cost"), "prompt_tokens": ("usage", "prompt_tokens"),
                "completion_tokens": ("usage", "completion_tokens"),
                "reasoning_tokens": ("usage", "completion_tokens_details",
                                     "reasoning_tokens"),
                "total_tokens": ("usage", "total_tokens"),
                "cache_read_tokens": ("usage", "prompt_tokens_details", "cache_read_tokens"),
                "cache_creation_tokens": ("usage", "prompt_tokens_details",
                                          "cache_creation_tokens"),
                "tool_calls": ("tool_calls",), "num_turns": ("num_turns",)}
_USAGE_FIELDS = {k: "metadata." + ".".join(p) for k, p in _USAGE_PATHS.items()}

#: The problem kind of an invalid cost or token value (see ``MAX_USAGE_VALUE``).
INVALID_USAGE = "invalid cost or token value (left out of the sums)"


def _shown(value, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _amount(x):
    """A cost or token count: a float in [0, MAX_USAGE_VALUE], NaN when absent, or
    ``_INVALID`` (negative, too large, infinite)."""
    v = _number(x)
    if v is _INVALID or (not math.isnan(v) and not 0 <= v <= MAX_USAGE_VALUE):
        return _INVALID
    return v


def _dig(obj, *path):
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def _timestamp(x) -> datetime | None:
    if not isinstance(x, str):
        return None
    try:
        return datetime.fromisoformat(x.strip())
    except ValueError:
        return None


def _usage_value(md, name):
    v = _dig(md, *_USAGE_PATHS[name])
    if name == "tool_calls":
        v = len(v) if isinstance(v, list) else None
    return _amount(v)


def _cost_cached(md, vals: dict) -> float:
    """The attempt's cost with cache reads and writes priced (see ``cost_cached`` in
    :mod:`arcnb.columns`); NaN without the cost, the prompt cost and tokens, or the
    cache counts, and NaN when the result would be negative or beyond
    :data:`MAX_USAGE_VALUE`."""
    cost, prompt = vals["cost"], vals["prompt_tokens"]
    read, write = vals["cache_read_tokens"], vals["cache_creation_tokens"]
    prompt_cost = _amount(_dig(md, "cost", "prompt_cost"))
    if any(v is _INVALID or math.isnan(v) for v in (cost, prompt, prompt_cost)) \
            or prompt <= 0:
        return math.nan
    known = [v for v in (read, write) if v is not _INVALID and not math.isnan(v)]
    if not known:
        return math.nan
    price = prompt_cost / prompt
    read = 0.0 if read is _INVALID or math.isnan(read) else read
    write = 0.0 if write is _INVALID or math.isnan(write) else write
    with np.errstate(over="ignore", invalid="ignore"):
        v = (cost - read * price * (1 - CACHE_READ_PRICE)
             + write * price * (CACHE_WRITE_PRICE - 1))
    # metadata whose cost does not hold its cache tokens at the input price gives no
    # number rather than a negative or infinite one
    return v if math.isfinite(v) and 0 <= v <= MAX_USAGE_VALUE else math.nan


def _attempt_usage(md) -> tuple:
    """One attempt's values for :data:`USAGE_COLUMNS` (NaN where absent or unusable;
    ``_INVALID`` for an invalid cost or token value)."""
    if not isinstance(md, dict):
        return (math.nan,) * len(USAGE_COLUMNS)
    start, end = _timestamp(md.get("start_timestamp")), _timestamp(md.get("end_timestamp"))
    try:
        duration = (end - start).total_seconds() if start and end else math.nan
    except TypeError:  # one timestamp with a time zone, one without
        duration = math.nan
    vals = {name: _usage_value(md, name) for name in _USAGE_PATHS}
    vals["duration_s"] = duration
    vals["cost_cached"] = _cost_cached(md, vals)
    return tuple(vals[c] for c in USAGE_COLUMNS)


def _usage(metas: list) -> dict:
    """Sum of each usage value over one output's attempts (NaN when none has it), plus
    the private count of attempts with a cost."""
    if not metas or all(m is None for m in metas):
        row = dict.fromkeys(USAGE_COLUMNS, math.nan)
        row["_n_cost"] = 0
        row["_bad_usage"] = []
        return row
    raw = [_attempt_usage(m) for m in metas]
    bad = [f"attempt {j + 1}: {_USAGE_FIELDS[c]} = {_shown(_dig(metas[j], *_USAGE_PATHS[c]))}"
           for j, r in enumerate(raw) for c, v in zip(USAGE_COLUMNS, r) if v is _INVALID]
    vals = np.array([[math.nan if v is _INVALID else v for v in r] for r in raw],
                    dtype=float)
    known = ~np.isnan(vals)
    sums = np.where(known.any(axis=0), np.nansum(vals, axis=0), np.nan)
    row = dict(zip(USAGE_COLUMNS, sums.tolist()))
    row["_n_cost"] = int(known[:, USAGE_COLUMNS.index("cost")].sum())
    row["_bad_usage"] = bad
    return row


def _fsum(col: pd.Series) -> float:
    """Exactly rounded sum of the known values; NaN when none is known (never 0)."""
    v = col.to_numpy(float)
    v = v[~np.isnan(v)]
    return math.fsum(v) if v.size else math.nan


def _ratio(a: float, b: int) -> float:
    return a / b if b and not math.isnan(a) else math.nan


def _names(preds: Predictions, task_ids, key: str) -> str | None:
    """The distinct ``metadata[key]`` strings of the scored tasks' attempts, joined."""
    names = {md.get(key) for t in task_ids for outs in preds.metadata.get(t, [])
             for md in outs if isinstance(md, dict)}
    names = sorted(n for n in names if isinstance(n, str) and n)
    return ", ".join(names) if names else None


def _cost_summary(out: pd.DataFrame, counts: tuple[int, int], preds: Predictions,
                  task_ids) -> dict:
    n_cost, n_bad_usage = counts
    n_tasks, n_attempts = len(task_ids), int(out["n_attempts"].sum())
    total_cost = _fsum(out["cost"])
    total_tokens = _fsum(out["total_tokens"])
    if not math.isnan(total_tokens) and total_tokens.is_integer():
        total_tokens = int(total_tokens)
    return {
        "n_attempts": n_attempts,
        "total_cost": total_cost,
        "cost_per_task": _ratio(total_cost, n_tasks),
        "cost_per_attempt": _ratio(total_cost, n_attempts),
        "total_tokens": total_tokens,
        "tokens_per_task": _ratio(float(total_tokens), n_tasks),
        "total_duration_s": _fsum(out["duration_s"]),
        "n_attempts_with_cost": n_cost,
        "n_invalid_usage_values": int(n_bad_usage),
        "model": _names(preds, task_ids, "model"),
        "provider": _names(preds, task_ids, "provider"),
        "total_cost_cached": _fsum(out["cost_cached"]),
        "cost_cached_per_task": _ratio(_fsum(out["cost_cached"]), n_tasks),
        **{f"total_{c}": _count(_fsum(out[c]))
           for c in ("reasoning_tokens", "cache_read_tokens", "cache_creation_tokens",
                     "tool_calls")},
        "total_turns": _count(_fsum(out["num_turns"])),
    }


def _count(v: float):
    """A summed count as an int (NaN stays NaN)."""
    return int(v) if not math.isnan(v) and float(v).is_integer() else v


def _known(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v)


def cost_line(summary: dict) -> str:
    """``"cost: total $X, $Y per task, $Z per attempt (...); tokens: ...; model: ..."``,
    or "" when the summary has neither cost, tokens nor a model (also for a summary
    read back from JSON, where NaN is null)."""
    def money(v):
        return f"${fmt_number(v, least=4)}" if _known(v) else MISSING

    parts = []
    if _known(summary.get("total_cost")):
        parts.append(f"cost: total {money(summary['total_cost'])}, "
                     f"{money(summary.get('cost_per_task'))} per task, "
                     f"{money(summary.get('cost_per_attempt'))} per attempt "
                     f"({summary.get('n_attempts_with_cost', 0)} of "
                     f"{summary.get('n_attempts', 0)} attempts with a cost)")
    if _known(summary.get("total_tokens")):
        per = summary.get("tokens_per_task")
        parts.append(f"tokens: {fmt_count(summary['total_tokens'])} total, "
                     + (fmt_number(per, least=1, most=1) if _known(per) else MISSING) + " per task")
    if summary.get("model"):
        parts.append(f"model: {summary['model']}"
                     + (f" ({summary['provider']})" if summary.get("provider") else ""))
    return "; ".join(parts)


def _mean(x) -> float:
    x = np.asarray(x, dtype=float)
    return float(x.mean()) if x.size else float("nan")


def score(dataset: Dataset | str, predictions, *, ks: Sequence[int] = (1, 2), tasks=None,
          n_boot: int = 1000, seed: int = 0, estimator: str = "ranked") -> Results:
    """Score ``predictions`` on ``dataset`` with the official rule.

    ``dataset`` is a :class:`~arcnb.data.Dataset` or anything
    :func:`~arcnb.data.load_dataset` takes; ``predictions`` a path (a submission file
    or a benchmarking-harness run folder), a dict in the ARC Prize format or a
    :class:`~arcnb.predictions.Predictions`. ``ks`` always includes 1 and 2.
    ``estimator`` is ``"ranked"`` (any of the first K attempts, the ARC Prize rule) or
    ``"unbiased"`` (see :func:`pass_at_k_unbiased`). The summary's ``pass@2_ci95`` is a
    seeded percentile bootstrap over tasks.
    """
    if estimator not in ESTIMATORS:
        raise ParameterError(f"unknown estimator {estimator!r}: expected one of "
                             f"{', '.join(ESTIMATORS)}")
    ds = load_dataset(dataset, tasks=tasks)
    preds = load_predictions(predictions)
    preds = preds.aligned({t.id: len(t.test) for t in ds if t.id in preds})
    ks = tuple(sorted(set(int(k) for k in ks) | {1, 2}))
    if any(k < 1 for k in ks):
        raise ParameterError(f"K must be >= 1, got {ks}")
    out, n_cost, bad_usage = _output_table(ds, preds, ks, estimator)
    per_task = _task_table(out, ks)
    summary = _summary(ds, preds, out, per_task, ks, estimator)
    summary.update(_cost_summary(out, n_cost, preds, ds.task_ids))
    summary["warnings"] = _warnings(ds, preds, summary)
    summary["notes"] = _notes(out, preds, ks, estimator)
    lo, hi = _task_ci(per_task["pass@2"], n_boot=n_boot, seed=seed)
    summary["pass@2_ci95"] = [lo, hi]
    summary["bootstrap"] = {"n_boot": n_boot, "seed": seed, "level": 0.95, "unit": "task"}
    summary["dataset"] = ds.info
    extra = summary["extra_tasks"]
    return Results(ds, preds, out, per_task, summary, ks, extra, bad_usage)


def _output_table(ds: Dataset, preds: Predictions, ks, estimator: str):
    rows = []
    for task in ds:
        for i, pair in enumerate(task.test):
            if pair.output is None:
                raise DatasetError(f"task {task.id} test {i}: truth missing, cannot score")
            row = {"task_id": task.id, "test_index": i}
            row.update(_score_output(pair.output, preds.get(task.id, i),
                                     preds.get_metadata(task.id, i), ks))
            rows.append(row)
    n_cost = sum(r.pop("_n_cost") for r in rows)
    bad_usage = [{"task_id": r["task_id"], "test_index": r["test_index"], "attempt": None,
                  "kind": INVALID_USAGE, "problem": what}
                 for r in rows for what in r.pop("_bad_usage")]
    cols = expand(OUTPUTS, ks)
    out = pd.DataFrame(rows, columns=[n for n, c in cols if c.computed != "estimator"])
    for name, c in cols:
        if c.computed == "estimator":
            out[name] = _output_pass(out, int(_k_of(name)), estimator)
        elif c.dtype != "object":
            out[name] = out[name].astype(c.dtype)
    return out, (n_cost, len(bad_usage)), bad_usage


def _k_of(name: str) -> str:
    """``"pass@2_per_output"`` -> ``"2"`` (``""`` without a K)."""
    tail = name.partition("@")[2]
    return tail[:len(tail) - len(tail.lstrip("0123456789"))]


def _task_table(out: pd.DataFrame, ks) -> pd.DataFrame:
    """The tasks table, column by column as ``arcnb.columns.TASK_ORDER`` says: an
    output column aggregated by its ``task`` rule, or a task-level column."""
    g = out.groupby("task_id", sort=True)
    per_task = pd.DataFrame({"n_outputs": g.size()})
    by_name = {c.name: c for c in OUTPUTS + TASKS}
    pass_cols = [f"pass@{k}" for k in ks]
    mean, prod = task_means(out[pass_cols], out["task_id"])
    for name, c in expand([by_name[n] for n in TASK_ORDER], ks):
        if c.level == "task":
            if name.endswith("_all_or_nothing"):
                per_task[name] = prod[name[: -len("_all_or_nothing")]]
            continue
        rule = c.task
        task_name = (c.task_name or c.name).replace("@K", "@" + _k_of(name))
        if rule == "mean_defined":
            per_task[task_name] = mean[name]
        elif rule == "all":
            per_task[task_name] = g[name].all()
        elif rule == "mean":  # NaNs skipped
            per_task[task_name] = g[name].mean()
        elif rule == "sum":
            per_task[task_name] = g[name].sum().astype("int64")
        elif rule == "sum_known":
            per_task[task_name] = g[name].sum(min_count=1)
        else:
            raise AssertionError(f"column {c.name!r}: unknown task rule {rule!r}")
    return per_task.reset_index()


def _summary(ds, preds, out, per_task, ks, estimator: str) -> dict:
    extra = sorted(set(preds.task_ids) - set(ds.task_ids))
    # invalid attempts are counted over the scored tasks only (extra tasks are ignored)
    summary: dict = {"estimator": estimator}
    shape_ok = (out["pred_shape"] == out["truth_shape"]).to_numpy(float)  # attempt 1's shape
    for k in ks:
        summary[f"pass@{k}"] = _mean(per_task[f"pass@{k}"])
        summary[f"pass@{k}_per_output"] = _mean(out[f"pass@{k}"])
        summary[f"pass@{k}_all_or_nothing"] = _mean(per_task[f"pass@{k}_all_or_nothing"])
    summary.update({
        "n_tasks": int(len(per_task)),
        "n_outputs": int(len(out)),
        "n_missing_outputs": int(out["missing"].sum()),
        "n_invalid_attempts": int(out["n_invalid_attempts"].sum()),
        "n_extra_tasks": len(extra),
        "extra_tasks": extra,
        "n_extra_outputs": _extra_outputs(ds, preds),
        "n_bad_attempt_keys": int(preds.n_bad_attempt_keys),
        "cell_accuracy_right_shape": float(out["cell_accuracy"].mean())
        if out["cell_accuracy"].notna().any() else float("nan"),
        "n_right_shape_outputs": int(out["cell_accuracy"].notna().sum()),
        "shape_accuracy": _mean(task_means(shape_ok, out["task_id"])[0]),
        "shape_accuracy_per_output": _mean(shape_ok),
        "partial_credit": _mean(per_task["partial_credit"]),
    })
    return summary


def _notes(out: pd.DataFrame, preds: Predictions, ks, estimator: str) -> list[str]:
    """Plain-words notes on how to read the numbers (never an error, even --strict)."""
    notes = []
    if estimator == "unbiased":
        n = out["n_attempts"].to_numpy()
        for k in ks:
            short = int(((n > 0) & (n < k)).sum())
            if short:
                notes.append(f"pass@{k} (unbiased estimator) is undefined for {short} test "
                             f"outputs with fewer than {k} attempts: NaN for them, their "
                             f"tasks and the pass@{k} means; use a smaller K or the ranked "
                             "estimator")
    scored = set(out["task_id"])
    merged = sum(p.get("kind") == "pair_index" and p["task_id"] in scored
                 for p in preds.problems)
    if merged:
        notes.append(f"{merged} test-input entries were mapped by metadata.pair_index to a "
                     "test input another entry already holds; their attempts were appended "
                     "to that input's (the benchmarking harness would score them twice)")
    return notes


def _extra_outputs(ds: Dataset, preds: Predictions) -> int:
    """Test-input entries in the predictions beyond a scored task's test inputs."""
    return int(sum(max(0, len(preds.attempts[t]) - len(ds[t].test))
                   for t in preds.task_ids if t in ds))


def missing_tasks_warning(ds: Dataset, covered) -> str | None:
    """The one warning that a source covers fewer of the scored tasks than given
    (``covered``: the task ids it has predictions for): how many count as wrong and how
    to restrict. None when it covers them all, or none of them (then the predictions
    look made for another dataset, which :func:`score` says instead). Every command
    that scores runs shows it first."""
    n_absent = len(set(ds.task_ids) - set(covered))
    if not n_absent or n_absent == len(ds):
        return None
    return (f"{n_absent} of the {len(ds)} tasks of {ds.name} have no predictions and count "
            f"as wrong (the dataset is the denominator); to score only the "
            f"{len(ds) - n_absent} tasks the predictions cover, pass --tasks FILE (their "
            "ids, one a line)")


def _warnings(ds: Dataset, preds: Predictions, summary: dict) -> list[str]:
    """Plain-words warnings that the numbers may not mean what they seem."""
    out = []
    n_sub = len(preds.task_ids)
    n_foreign = summary["n_extra_tasks"]
    foreign = n_sub and n_foreign / n_sub > FOREIGN_TASKS_WARNING
    if not foreign and missing_tasks_warning(ds, preds.task_ids):
        out.append(missing_tasks_warning(ds, preds.task_ids))
    if foreign:
        msg = (f"{n_foreign} of the {n_sub} submitted tasks are not in {ds.name}: the "
               "predictions look made for another dataset")
        better = _better_dataset(preds.task_ids, exclude=ds.name)
        if better is not None:
            name, hits = better
            msg += f"; {name} holds {hits} of the {n_sub}"
        out.append(msg)
    if summary.get("n_invalid_usage_values"):
        out.append(f"{summary['n_invalid_usage_values']} cost or token values in the attempts' "
                   "metadata are negative, not finite or above "
                   f"{fmt_significant(MAX_USAGE_VALUE)}: left out of the cost and token sums")
    if summary["n_extra_outputs"]:
        out.append(f"{summary['n_extra_outputs']} test-output entries in the predictions have "
                   f"no test input in {ds.name}: they may be aligned with another version of "
                   "the dataset (entries are matched to test inputs by position)")
    return out


def _better_dataset(task_ids, *, exclude: str) -> tuple[str, int] | None:
    """The bundled dataset holding the most of ``task_ids`` (ties: first listed)."""
    ids = set(task_ids)
    best = None
    for name in DATASETS:
        if name == exclude:
            continue
        hits = len(ids & bundled_task_ids(name))
        if hits and (best is None or hits > best[1]):
            best = (name, hits)
    return best
