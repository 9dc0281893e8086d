"""The one definition of every column of the results tables.

Each :class:`Column` says what a column is: its name, the table it lives in (its
``level``: ``"output"``, ``"task"``, ``"group"`` for a breakdown's rows, or
``"summary"``), its dtype, its definition in words, how it aggregates, whether it gets
a bootstrap interval and a reader's label for figures.

:func:`arcnb.scoring.score` builds its outputs and tasks tables from :data:`OUTPUTS`
and :data:`TASKS`; breakdowns, reports, charts, exports and the explorer take their
column lists from here, and the report's definitions table is :data:`DEFINITIONS`.
A name means one number: where a metric is wanted per task and per output, the two get
two names, as pass@2 (mean over tasks of each task's mean over its outputs, the ARC
Prize rule) and ``pass@2_per_output`` (mean over all outputs) do; ``shape_accuracy``
and ``shape_accuracy_per_output`` follow the same rule.

A name with ``K`` (``"pass@K"``) stands for one column per scored K; consecutive such
columns of a table are expanded together, K by K (:func:`expand`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .text import fmt_significant

__all__ = ["Column", "OUTPUTS", "TASKS", "GROUPS", "SUMMARY", "DEFINITIONS", "NEAR_MISS",
           "expand", "column", "is_near_miss", "label", "definitions", "interval_columns",
           "graded_columns", "group_metrics", "upgrade_summary"]

#: The near-miss threshold: an output not solved within 2 attempts whose cell accuracy
#: is at least this is a near miss (galleries, breakdowns, the report, the explorer).
NEAR_MISS = 0.9

LEVELS = ("output", "task", "group", "summary")


def is_near_miss(solved, cell_accuracy, threshold: float = NEAR_MISS) -> np.ndarray:
    """The near-miss rule, per output: not ``solved`` (solved@2, or the K a view uses)
    and ``cell_accuracy`` at least ``threshold`` (NaN, no right-shaped attempt, is
    never a near miss)."""
    acc = np.nan_to_num(np.asarray(cell_accuracy, dtype=float), nan=-1.0)
    return ~np.asarray(solved, dtype=bool) & (acc >= threshold)


@dataclass(frozen=True)
class Column:
    """One column of a results table (see the module docstring).

    ``task``: for an output column, how the tasks table aggregates it over a task's
    outputs (``"mean"``: NaN skipped; ``"mean_defined"``: NaN when one output is NaN;
    ``"prod_defined"``; ``"all"``; ``"sum"``: an integer count; ``"sum_known"``: NaN
    when no output has a value, never 0), under the name ``task_name`` (default: the
    same name). ``computed``: ``"output"`` when :func:`arcnb.scoring._score_output`
    returns it, ``"key"`` for the row keys, ``"estimator"`` for the estimator's pass@K.
    ``graded``: a graded column of every breakdown (shown next to the exact pass@K).
    """

    name: str
    level: str
    dtype: str
    definition: str
    aggregate: str = ""
    interval: bool = False
    label: str = ""
    task: str | None = None
    task_name: str | None = None
    computed: str = "output"
    graded: bool = False

    @property
    def per_k(self) -> bool:
        """True for a column per scored K (``"pass@K"``)."""
        return "@K" in self.name

    def named(self, k: int | None = None) -> str:
        """The column's name for one K (its name when it has no K)."""
        return self.name.replace("@K", f"@{k}") if self.per_k else self.name


def expand(cols: Sequence[Column], ks: Sequence[int], *, name=lambda c: c.name
           ) -> list[tuple[str, Column]]:
    """``(name, column)`` for each column of ``cols`` in order, a run of consecutive
    per-K columns expanded K by K (``solved@1, pass@1, solved@2, pass@2``)."""
    out: list[tuple[str, Column]] = []
    i = 0
    while i < len(cols):
        if not cols[i].per_k:
            out.append((name(cols[i]), cols[i]))
            i += 1
            continue
        j = i
        while j < len(cols) and cols[j].per_k:
            j += 1
        for k in ks:
            out += [(name(c).replace("@K", f"@{k}"), c) for c in cols[i:j]]
        i = j
    return out


_USAGE = (("cost", "cost of the attempts (metadata cost.total_cost)", "cost ($)"),
          ("prompt_tokens", "prompt tokens (metadata usage.prompt_tokens)", "prompt tokens"),
          ("completion_tokens", "completion tokens (metadata usage.completion_tokens)",
           "completion tokens"),
          ("reasoning_tokens", "reasoning tokens (metadata "
           "usage.completion_tokens_details.reasoning_tokens)", "reasoning tokens"),
          ("total_tokens", "total tokens (metadata usage.total_tokens)", "tokens"),
          ("duration_s", "time of the attempts in seconds (metadata end_timestamp - "
           "start_timestamp)", "time (s)"),
          ("cache_read_tokens", "prompt tokens read from the provider's cache (metadata "
           "usage.prompt_tokens_details.cache_read_tokens)", "cache read tokens"),
          ("cache_creation_tokens", "prompt tokens written to the provider's cache "
           "(metadata usage.prompt_tokens_details.cache_creation_tokens)",
           "cache creation tokens"),
          ("cost_cached", "cost of the attempts with the cache priced: cost.total_cost "
           "(where the benchmarking harness prices every prompt token, cached or not, at the "
           "input price) minus the cache read tokens at 0.9 x and plus the cache creation "
           "tokens at 0.25 x the attempt's input price per token (cost.prompt_cost / "
           "usage.prompt_tokens); NaN without the cache counts (or when that would be negative)",
           "cost with cache ($)"),
          ("tool_calls", "tool calls of an agentic attempt (the length of metadata "
           "tool_calls)", "tool calls"),
          ("num_turns", "agentic turns (metadata num_turns)", "turns"))

_CELL_ACCURACY = ("per output: the best attempt's fraction of correct cells, where the best "
                  "attempt is the first exact one, else the right-shaped one with the most "
                  "correct cells (NaN when no attempt has the truth's shape); in breakdowns "
                  "and reference tables, the mean over the outputs that have a right-shaped "
                  "attempt (n_right_shape of them)")
_PARTIAL_CREDIT = ("per output: the highest graded score among the attempts, rows ratio x "
                   "columns ratio x fraction of correct cells on the top-left overlap; 1 only "
                   "when exact; per task the mean over its outputs, then the mean over tasks")

#: The outputs table (``Results.outputs``), one row per task x test output, in order.
OUTPUTS: tuple[Column, ...] = (
    Column("task_id", "output", "object", "the task", computed="key", label="task"),
    Column("test_index", "output", "int64", "the test input's position in the task (from 0)",
           computed="key", label="test input"),
    Column("n_attempts", "output", "int64", "attempts given for the output", task="sum",
           label="attempts"),
    Column("n_invalid_attempts", "output", "int64", "attempts that are not a valid grid",
           task="sum", label="invalid attempts"),
    Column("missing", "output", "bool", "the predictions have no attempt for the output",
           task="sum", task_name="n_missing_outputs", label="missing"),
    Column("first_correct", "output", "Int64", "1-based position of the first right attempt "
           "(<NA> when none is right)", label="first right attempt"),
    Column("best_attempt", "output", "Int64", "1-based position of the best attempt "
           "(arcnb.grids.best_attempt; <NA> when no attempt is valid)", label="best attempt"),
    Column("solved@K", "output", "bool", "one of the first K attempts, in order, is the truth "
           "exactly (the ranked rule, whatever the estimator)", task="all",
           task_name="all_solved@K", label="solved within K attempts"),
    Column("shape_correct", "output", "bool", "some attempt among the first max(K) has the "
           "truth's height and width", label="right shape (any attempt)"),
    Column("cell_accuracy", "output", "float64", _CELL_ACCURACY, task="mean",
           aggregate="mean over the outputs with a right-shaped attempt", interval=True,
           label="cell accuracy (right shape)"),
    Column("partial_credit", "output", "float64", _PARTIAL_CREDIT, task="mean",
           aggregate="mean over a task's outputs, then over tasks", interval=True,
           label="partial credit"),
    Column("truth_shape", "output", "object", "the truth's shape, \"HxW\"", label="truth shape"),
    Column("pred_shape", "output", "object", "attempt 1's shape, \"HxW\"",
           label="attempt 1 shape"),
    Column("truth_h", "output", "int64", "the truth's height", label="truth height"),
    Column("truth_w", "output", "int64", "the truth's width", label="truth width"),
    Column("pred_h", "output", "Int64", "attempt 1's height (<NA> without a valid attempt 1)",
           label="attempt 1 height"),
    Column("pred_w", "output", "Int64", "attempt 1's width (<NA> without a valid attempt 1)",
           label="attempt 1 width"),
    Column("n_correct", "output", "int64", "right attempts among all of them",
           label="right attempts"),
) + tuple(Column(n, "output", "float64", f"per output: {d}, summed over its attempts (NaN "
                 "when no attempt has it, never 0)", task="sum_known",
                 aggregate="sum over the outputs", label=lab) for n, d, lab in _USAGE) + (
    Column("n_wrong_cells", "output", "Int64", "per output with a right-shaped attempt: the "
           "number of cells the best attempt gets wrong (0 when solved; <NA> when no attempt "
           "has the truth's shape), the distance to a solve in cells",
           label="wrong cells (right shape)"),
    Column("pass@K", "output", "float64", "the estimator's pass@K of the output: solved@K as "
           "0/1 (ranked) or the probability that K attempts drawn from the n given hold a "
           "right one (unbiased; NaN when 0 < n < K)", computed="estimator",
           task="mean_defined", label="pass@K"),
)

#: The tasks table (``Results.tasks``): the columns built from the outputs beyond those
#: of :data:`OUTPUTS` with a ``task`` rule (``n_outputs`` and the all-or-nothing pass@K).
TASKS: tuple[Column, ...] = (
    Column("task_id", "task", "object", "the task", computed="key", label="task"),
    Column("n_outputs", "task", "int64", "the task's test outputs", label="test outputs"),
    Column("pass@K_all_or_nothing", "task", "float64", "product of the outputs' pass@K (0/1 "
           "for the ranked estimator; NaN when one is NaN)", label="pass@K, all or nothing"),
)

#: The order of the tasks table; each name is an output column (aggregated by its
#: ``task`` rule) or a :data:`TASKS` column.
TASK_ORDER = ("task_id", "n_outputs", "pass@K", "solved@K", "pass@K_all_or_nothing",
              "cell_accuracy", "partial_credit", "missing", "n_attempts",
              "n_invalid_attempts") + tuple(n for n, _, _ in _USAGE)

_SHAPE_ACCURACY = ("whether attempt 1 has the truth's height and width: per task, the "
                   "fraction of its test outputs where it does, then the mean over tasks "
                   "(as pass@K)")

#: The metrics of a breakdown's rows (:func:`arcnb.breakdown.breakdown`), in the
#: order a report shows them.
GROUPS: tuple[Column, ...] = (
    Column("pass@K", "group", "float64", "per task: fraction of the task's test outputs "
           "solved within K attempts, then the mean over tasks (as the ARC Prize benchmarking "
           "harness computes it; the Kaggle pages describe pass@K_per_output)",
           aggregate="mean over a task's outputs, then over tasks",
           interval=True, label="pass@K"),
    Column("pass@K_per_output", "group", "float64", "fraction of all test outputs solved "
           "within K attempts", aggregate="mean over outputs", label="pass@K per output"),
    Column("pass@K_all_or_nothing", "group", "float64", "fraction of tasks whose test outputs "
           "are all solved within K attempts", aggregate="mean over tasks",
           label="pass@K, all or nothing"),
    Column("shape_accuracy", "group", "float64", _SHAPE_ACCURACY,
           aggregate="mean over a task's outputs, then over tasks", interval=True,
           label="shape accuracy", graded=True),
    Column("cell_accuracy", "group", "float64", _CELL_ACCURACY,
           aggregate="mean over the outputs with a right-shaped attempt", interval=True,
           label="cell accuracy (right shape)", graded=True),
    Column("n_right_shape", "group", "int64", "number of test outputs with an attempt of the "
           "truth's shape (the outputs a breakdown's cell_accuracy averages over)",
           aggregate="sum", label="outputs with a right-shaped attempt"),
    Column("partial_credit", "group", "float64", _PARTIAL_CREDIT,
           aggregate="mean over a task's outputs, then over tasks", interval=True,
           label="partial credit", graded=True),
    Column("n_near_miss", "group", "int64", "number of near misses: test outputs not solved "
           "within 2 attempts whose cell accuracy is at least the near-miss threshold "
           f"({fmt_significant(NEAR_MISS)} unless the report says otherwise)", aggregate="sum",
           label="near misses", graded=True),
)

#: Summary keys defined in words (the others are counts named for what they count).
SUMMARY: tuple[Column, ...] = (
    Column("estimator", "summary", "object", "how attempts become pass@K: 'ranked' = any of "
           "the first K attempts in file order is right (ARC Prize rule); 'unbiased' = "
           "1 - C(n-c, K)/C(n, K) per output from n attempts with c right (Chen et al. "
           "2021), NaN when 0 < n < K; all-or-nothing is then the product over a task's "
           "outputs"),
    Column("cost_per_task", "summary", "float64", "total cost of the attempts (metadata "
           "cost.total_cost) divided by the dataset's number of tasks (a task without "
           "predictions adds no cost)", label="cost per task ($)"),
    Column("cost_per_attempt", "summary", "float64", "total cost divided by the number of "
           "attempts of the scored tasks", label="cost per attempt ($)"),
    Column("tokens_per_task", "summary", "float64", "total tokens (metadata "
           "usage.total_tokens) divided by the dataset's number of tasks",
           label="tokens per task"),
    Column("cell_accuracy_right_shape", "summary", "float64", "mean cell accuracy over the "
           "outputs that have a right-shaped attempt only (n_right_shape_outputs of them); "
           "not a score over the whole dataset", label="cell accuracy (right shape)"),
    Column("shape_accuracy_per_output", "summary", "float64", "fraction of all test outputs "
           "whose attempt 1 has the truth's height and width",
           label="shape accuracy per output"),
    Column("n_tasks", "summary", "int64", "number of tasks (of the dataset, or of a "
           "breakdown's group: a task with several categories counts in each)",
           label="tasks"),
    Column("n_outputs", "summary", "int64", "number of test outputs (one per test input of "
           "those tasks)", label="test outputs"),
)

_INTERVAL = Column("95% interval", "summary", "object", "a percentile bootstrap interval that "
                   "resamples tasks (1000 resamples unless the report says otherwise), shown "
                   "as [low, high] or as ci_low / ci_high")


def column(name: str, level: str | None = None) -> Column:
    """The :class:`Column` named ``name`` (``"pass@2"`` finds ``"pass@K"``), at
    ``level`` when given, else the first found in groups, outputs, tasks, summary."""
    tables = {"group": GROUPS, "output": OUTPUTS, "task": TASKS, "summary": SUMMARY}
    order = [level] if level else ["group", "output", "task", "summary"]
    for lv in order:
        for c in tables[lv]:
            if c.name == name or (c.per_k and _k_form(name) == c.name):
                return c
    raise KeyError(f"no column {name!r}" + (f" at level {level!r}" if level else ""))


def _k_form(name: str) -> str:
    """``"pass@2_per_output"`` -> ``"pass@K_per_output"``."""
    head, sep, tail = name.partition("@")
    if not sep:
        return name
    digits = len(tail) - len(tail.lstrip("0123456789"))
    return f"{head}@K{tail[digits:]}" if digits else name


def label(name: str) -> str:
    """A reader's label for a column (``"cell accuracy (right shape)"``); K filled in."""
    try:
        c = column(name)
    except KeyError:
        return name.replace("_", " ")
    text = c.label or name.replace("_", " ")
    if c.per_k:
        k = name.partition("@")[2].split("_")[0]
        text = text.replace("@K", f"@{k}").replace(" K ", f" {k} ")
    return text


#: The definitions table's rows, in order: ``(name, level)``.
_DEFINED = (("pass@K", "group"), ("pass@K_per_output", "group"),
            ("pass@K_all_or_nothing", "group"), ("estimator", "summary"),
            ("cost_per_task", "summary"), ("cost_per_attempt", "summary"),
            ("tokens_per_task", "summary"), ("cell_accuracy", "group"),
            ("cell_accuracy_right_shape", "summary"), ("shape_accuracy", "group"),
            ("shape_accuracy_per_output", "summary"), ("partial_credit", "group"),
            ("n_tasks", "summary"), ("n_outputs", "summary"), ("n_right_shape", "group"),
            ("n_near_miss", "group"), ("n_wrong_cells", "output"))


def definitions() -> dict[str, str]:
    """Every defined metric in words, for the report's definitions table: the breakdown
    metrics, the per-output cell accuracy and wrong cells, the summary's words, the
    interval."""
    order = [column(name, level) for name, level in _DEFINED] + [_INTERVAL]
    return {c.name: c.definition for c in order}


#: Each metric defined in words (the report's definitions table), generated from the
#: columns above.
DEFINITIONS = definitions()


def group_metrics(k: int = 2, *, counts: bool = True) -> tuple[tuple[str, bool], ...]:
    """The metrics of a breakdown table for one K, in the report's order, as
    ``(column, with its interval)``; ``counts=False`` leaves out ``n_right_shape``."""
    return tuple((c.named(k), c.interval) for c in GROUPS
                 if counts or c.graded or c.name.startswith("pass@"))


def interval_columns(k: int = 2) -> tuple[str, ...]:
    """The breakdown metrics that carry a bootstrap interval, for one K."""
    return tuple(c.named(k) for c in GROUPS if c.interval)


def graded_columns() -> tuple[str, ...]:
    """The graded columns of every breakdown (shown next to the exact pass@K)."""
    return tuple(c.name for c in GROUPS if c.graded)


#: Summary keys renamed since older run directories were written: ``{old: new}``, for
#: documents that lack the new key (``shape_accuracy`` there was per output).
_RENAMED = {"shape_accuracy": "shape_accuracy_per_output"}


def upgrade_summary(summary: dict) -> dict:
    """A summary (or metrics.json document) written before a key got its own name, in
    today's names: an old ``shape_accuracy`` (per output) becomes
    ``shape_accuracy_per_output``. A current summary is returned unchanged."""
    out = dict(summary)
    for old, new in _RENAMED.items():
        if old in out and new not in out and "pass@2" in out:
            out[new] = out.pop(old)
    return out
