"""HTML fragments for the report notebooks, and displaying them.

Every builder returns a string of HTML in which every string from the user (task
ids, paths, category names, run labels) is escaped, so a task id such as
``<script>`` shows as text, never as markup. :func:`show` and :func:`show_figure`
display them (and figures) in a notebook.
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import pandas as pd

from ..breakdown import lead_metric, lead_reason
from ..columns import NEAR_MISS, group_metrics
from ..errors import refuse_overwrite
from ..html import HTML, PAGE_CSS, data_value as _data_value, escape as _esc
from ..html import note as note_html, table as table_html
from ..io import atomic_write_text, csv_text
from ..plot import gallery_items, save
from ..runs import compact_line, flat_provenance, ks_of, summary_of
from ..scoring import METRIC_DEFINITIONS
from ..text import MISSING, fmt_count, fmt_fraction, fmt_number, fmt_percent, fmt_significant

__all__ = ["headline_html", "definitions_html", "table_html", "BREAKDOWN_COLUMNS",
           "BREAKDOWN_METRICS", "breakdown_html", "graded_table_html", "lead_html",
           "note_html", "reference_html", "cost_html", "provenance_html", "provenance_block_html", "show",
           "show_figure", "file_table", "run_files", "cut_note", "summary_html",
           "percent_text", "PAGE_CSS"]


def headline_html(metrics: Mapping, *, ks: Sequence[int] | None = None) -> str:
    """The headline table: pass@K in the three conventions (rows K, columns
    ``pass@K``, ``pass@K_per_output``, ``pass@K_all_or_nothing``) with the pass@2
    bootstrap interval and counts.

    The table has ``id="arcnb-headline"``; each number cell carries
    ``data-metric`` (e.g. ``pass@2_per_output``) and ``data-value`` (the exact float),
    so a browser test can read the numbers back.
    """
    s = summary_of(metrics)
    ks = tuple(ks) if ks else ks_of(metrics)
    conv = [("", "pass@K"), ("_per_output", "pass@K_per_output"),
            ("_all_or_nothing", "pass@K_all_or_nothing")]
    rows = ["<table class='arcnb-table' id='arcnb-headline'>",
            "<thead><tr><th>K</th>" + "".join(f"<th>{_esc(c)}</th>" for _, c in conv)
            + "</tr></thead><tbody>"]
    for k in ks:
        cells = [f"<th>{int(k)}</th>"]
        for suffix, _ in conv:
            key = f"pass@{int(k)}{suffix}"
            v = s.get(key)
            cells.append(f"<td data-metric='{_esc(key)}' data-value='{_data_value(v)}'>"
                         f"{_esc(fmt_fraction(v))}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    rows.append("</tbody></table>")
    ci = s.get("pass@2_ci95") or [None, None]
    boot = s.get("bootstrap") or {}
    counts = [("n_tasks", "tasks"), ("n_outputs", "test outputs"),
              ("n_missing_outputs", "missing outputs"), ("n_invalid_attempts",
                                                         "invalid attempts"),
              ("n_extra_tasks", "extra tasks ignored")]
    parts = [f"<span data-metric='{k}' data-value='{_esc(s.get(k))}'>{_esc(label)}: "
             f"{_esc(s.get(k))}</span>" for k, label in counts if k in s]
    lo, hi = (ci + [None, None])[:2]
    rows.append(
        "<p class='arcnb-note' id='arcnb-headline-ci'>pass@2 95% bootstrap interval over "
        f"tasks: <span data-metric='pass@2_ci95_low' data-value='{_data_value(lo)}'>"
        f"{_esc(fmt_fraction(lo))}</span> to <span data-metric='pass@2_ci95_high' "
        f"data-value='{_data_value(hi)}'>{_esc(fmt_fraction(hi))}</span>"
        + (f" (percentile bootstrap, {_esc(boot.get('n_boot'))} resamples of tasks, seed "
           f"{_esc(boot.get('seed'))})" if boot else "") + ".</p>")
    rows.append("<p class='arcnb-note'>" + " &middot; ".join(parts) + "</p>")
    return "\n".join(rows)


def definitions_html(definitions: Mapping[str, str] | None = None) -> str:
    """The metric definitions (default :data:`arcnb.scoring.METRIC_DEFINITIONS`) as a
    two-column table."""
    if definitions is None:
        definitions = METRIC_DEFINITIONS
    body = "".join(f"<tr><th class='arcnb-text'>{_esc(k)}</th>"
                   f"<td class='arcnb-text'>{_esc(v)}</td></tr>" for k, v in definitions.items())
    return f"<table class='arcnb-table' id='arcnb-definitions'><tbody>{body}</tbody></table>"


#: Columns of a breakdown table for export (LaTeX, CSV): the exact pass@2 with its
#: interval next to the graded columns.
BREAKDOWN_COLUMNS = (("group", "n_tasks", "n_outputs", "pass@2", "pass@2_ci_low",
                      "pass@2_ci_high")
                     + tuple(c for c, _ in group_metrics(2) if c != "pass@2"))

#: The cells of a breakdown table in a report: ``(column, with its interval)``.
BREAKDOWN_METRICS = group_metrics(2)

_INTERVAL_NOTE = ("each metric: its value, and under it [the 95% bootstrap interval over "
                  "tasks]; the definitions are in the table of section 1")


def _fmt_value(v, *, count: bool = False) -> str:
    """A table value: counts as integers, fractions with 3 decimals and more for
    small values (0.0025, never 0.003), NaN as NaN."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return MISSING
    try:
        if pd.isna(v):
            return MISSING
    except (TypeError, ValueError):
        pass
    if count:
        return fmt_count(v)
    return fmt_number(v, least=3, most=8)  # the one rule: two significant digits when small


def _metric_cell(row, col: str, with_ci: bool) -> str:
    v = row.get(col)
    count = col.startswith("n_")
    attrs = f"data-metric='{_esc(col)}' data-value='{_data_value(v)}'"
    text = _fmt_value(v, count=count)
    ci = ""
    if with_ci:
        lo, hi = row.get(f"{col}_ci_low"), row.get(f"{col}_ci_high")
        attrs += f" data-ci-low='{_data_value(lo)}' data-ci-high='{_data_value(hi)}'"
        if text != MISSING:
            ci = (f"<br><span class='arcnb-ci'>[{_esc(_fmt_value(lo))}, "
                  f"{_esc(_fmt_value(hi))}]</span>")
    return f"<td {attrs}>{_esc(text)}{ci}</td>"


def graded_table_html(df, *, label: str = "group", counts: Sequence[str] = ("n_tasks",
                      "n_outputs"), metrics=BREAKDOWN_METRICS, table_id: str | None = None,
                      caption: str | None = None) -> str:
    """A table of exact and graded metrics, one row per ``label`` value (a group, a
    run): the ``counts``, then each metric of ``metrics`` (``(column, with_ci)``) as
    ``value [low, high]``. Every metric cell carries ``data-metric``, ``data-value``
    and, with an interval, ``data-ci-low`` / ``data-ci-high`` (the exact floats)."""
    counts = [c for c in counts if c in df.columns]
    metrics = [(c, ci and f"{c}_ci_low" in df.columns) for c, ci in metrics if c in df.columns]
    head = [label] + list(counts) + [c for c, _ in metrics]
    tid = f" id='{_esc(table_id)}'" if table_id else ""
    rows = [f"<table class='arcnb-table arcnb-graded'{tid}><thead><tr>"
            + "".join(f"<th>{_esc(h).replace('_', '_<wbr>')}</th>" for h in head)
            + "</tr></thead><tbody>"]
    for rec in df.to_dict("records"):
        cells = [f"<th class='arcnb-text' data-label='{_esc(rec.get(label))}'>"
                 f"{_esc(rec.get(label))}</th>"]
        cells += [f"<td data-metric='{_esc(c)}'>{_esc(_fmt_value(rec.get(c), count=True))}</td>"
                  for c in counts]
        cells += [_metric_cell(rec, c, ci) for c, ci in metrics]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    rows.append("</tbody></table>")
    out = [f"<p class='arcnb-note'>{_esc(caption)}</p>"] if caption else []
    return "\n".join(out + rows)


def breakdown_html(df, *, table_id: str | None = None, caption: str | None = None,
                   columns: Sequence[str] | None = None) -> str:
    """A breakdown table (:func:`arcnb.breakdown.breakdown`) as escaped HTML: per group
    the counts, pass@2 with its interval, the other conventions, and the graded
    columns (shape accuracy, cell accuracy on right-shaped outputs, partial credit,
    each with its interval; the right-shaped and near-miss counts). The table's note
    (multi-label or not) follows the caption. ``columns`` instead gives a plain table
    of those columns."""
    note = df.attrs.get("note")
    cap = " ".join(x for x in (caption, f"({note})" if note else None) if x)
    if columns is not None:
        cols = [c for c in columns if c in df.columns]
        return table_html(df[cols], table_id=table_id, caption=cap or None)
    cap = (cap + ". " if cap else "") + _INTERVAL_NOTE + "."
    return graded_table_html(df, table_id=table_id, caption=cap)


def lead_html(table, lead: str | None = None, *, what: str = "chart",
              panels: bool = True) -> str:
    """The caption of a breakdown chart: which metric leads and why
    (:func:`arcnb.breakdown.lead_reason`); ``panels``: the chart has one panel per
    metric (:func:`arcnb.plot.breakdown_panels`), else it shows the leading metric
    only. Carries ``data-lead``."""
    lead = lead or lead_metric(table)
    shows = ("has one panel per metric, each on its own scale" if panels
             else f"shows {lead} only")
    return (f"<p class='arcnb-note arcnb-lead' data-lead='{_esc(lead)}'>The {_esc(what)} "
            f"{_esc(shows)}, with the 95% intervals and the values written on it. "
            f"{_esc(lead_reason(table, lead))}</p>")


def reference_html(table, *, table_id: str = "arcnb-references") -> str:
    """The reference-points table (:func:`arcnb.report.references.reference_table`):
    the model and each reference side by side, every metric with its interval."""
    return graded_table_html(table, label="run", metrics=group_metrics(2, counts=False),
                             table_id=table_id,
                             caption="the model (first row) and the reference runs on the "
                                     "same tasks; " + _INTERVAL_NOTE)


#: Cost keys of the summary shown in the cost section, with their words.
COST_ROWS = (("total_cost", "total cost of every attempt"),
             ("cost_per_task", "cost per task (over the dataset's tasks)"),
             ("cost_per_attempt", "cost per attempt"),
             ("total_tokens", "total tokens"), ("tokens_per_task", "tokens per task"),
             ("total_duration_s", "time of the attempts, summed (s)"),
             ("n_attempts_with_cost", "attempts that carry a cost"),
             ("total_cost_cached", "total cost with the provider's cache priced (cache "
              "reads at 0.1 x, writes at 1.25 x the input price)"),
             ("cost_cached_per_task", "cost per task with the cache priced"),
             ("total_reasoning_tokens", "reasoning tokens"),
             ("total_cache_read_tokens", "prompt tokens read from the cache"),
             ("total_cache_creation_tokens", "prompt tokens written to the cache"),
             ("total_tool_calls", "tool calls"), ("total_turns", "agentic turns"),
             ("model", "model"), ("provider", "provider"))


def cost_html(summary: Mapping) -> str:
    """The cost headline (``id='arcnb-cost'``): total cost, cost per task and per
    attempt, tokens, time, model; each value cell carries ``data-metric`` and
    ``data-value``. Values absent from the summary show as NaN."""
    rows = []
    for key, words in COST_ROWS:
        v = summary.get(key)
        if isinstance(v, (int, float)) or v is None:
            text = (fmt_count(v, thousands=True) if key.endswith("tokens") or key.startswith("n_")
                    else fmt_significant(v))
            dv = _data_value(v)
        else:
            text, dv = str(v), str(v)
        rows.append(f"<tr><th class='arcnb-text'>{_esc(key)}</th><td class='arcnb-text'>"
                    f"{_esc(words)}</td><td data-metric='{_esc(key)}' data-value='{_esc(dv)}'>"
                    f"{_esc(text)}</td></tr>")
    return ("<table class='arcnb-table' id='arcnb-cost'><tbody>" + "".join(rows)
            + "</tbody></table>")


def provenance_block_html(block: Mapping) -> str:
    """The one provenance block of a page (:func:`arcnb.runs.provenance_block`: the
    dataset, its version and task filter, the arcnb version, the rules) as an escaped
    key/value table, words read from the left; an empty dataset line is left out."""
    rows = []
    for k, v in block.items():
        if k == "rules":
            for rule, name in v.items():
                rows.append((f"{rule} rule", name))
        elif v is not None:
            rows.append((k, json.dumps(v, sort_keys=True) if isinstance(v, (dict, list))
                         else v))
    body = "".join(f"<tr><th class='arcnb-text'>{_esc(k)}</th><td class='arcnb-text' "
                   f"data-key='{_esc(k)}'>{_esc(v)}</td></tr>" for k, v in rows)
    return f"<table class='arcnb-table' id='arcnb-provenance'><tbody>{body}</tbody></table>"


def provenance_html(metrics: Mapping, *, run_dir=None, metric: str = "pass@2",
                    rules: Mapping | None = None) -> str:
    """Provenance as an escaped key/value table followed by the compact reporting line;
    ``rules`` (the block's ``rules``) adds a row per rule."""
    p = flat_provenance(metrics, run_dir=run_dir)
    p.update({f"{rule} rule": name for rule, name in (rules or {}).items()})
    rows = []
    for k, v in p.items():
        if isinstance(v, (dict, list)):
            v = json.dumps(v, sort_keys=True)
        elif v is None:  # as the compact line writes it (filter=none), never Python's None
            v = "none"
        rows.append(f"<tr><th class='arcnb-text'>{_esc(k)}</th>"
                    f"<td class='arcnb-text' data-key='{_esc(k)}'>{_esc(v)}</td></tr>")
    line = compact_line(metrics, metric)
    return (f"<table class='arcnb-table' id='arcnb-provenance'><tbody>{''.join(rows)}"
            f"</tbody></table>\n<p>Compact reporting line, to quote beside the number "
            "(the metric, the checkpoint's SHA-256, the dataset and its version, the task "
            "filter, the arcnb version and commit):</p>\n"
            f"<pre id='arcnb-compact-line'>{_esc(line)}</pre>")


def show(text: str) -> None:
    """Display HTML produced by this module's builders in a notebook."""
    from IPython.display import display

    display(HTML(text))


def refuse_existing(paths: Iterable[str | os.PathLike], *, overwrite: bool) -> None:
    """Refuse (:class:`~arcnb.errors.OutputExistsError`, naming the first) when any of
    ``paths`` exists and ``overwrite`` is off: a notebook checks every file it will write
    before it writes the first."""
    if overwrite:
        return
    for p in paths:
        if os.path.lexists(p):
            raise refuse_overwrite(p, "set overwrite = True")


def show_figure(fig, name: str | None = None, folder: str | os.PathLike | None = None, *,
                formats: Sequence[str] = ("png",), tight: bool = True,
                written: list | None = None, overwrite: bool = True) -> None:
    """Display a matplotlib figure (or Axes) once and close it; with ``folder`` also save
    it as ``folder/<name>.<format>`` through :func:`arcnb.plot.save` (deterministic,
    atomic; an existing file is replaced only with ``overwrite``, the default for a
    report that claimed its outputs up front). The paths written are appended to
    ``written`` when given."""
    from IPython.display import display
    import matplotlib.pyplot as plt

    if hasattr(fig, "get_figure") and not hasattr(fig, "savefig"):
        fig = fig.get_figure()
    paths = []
    if folder is not None and name:
        Path(folder).mkdir(parents=True, exist_ok=True)
        for fmt in formats:
            kw = {"bbox_inches": "tight"} if tight else {}
            paths.append(save(fig, Path(folder) / f"{name}.{fmt}", overwrite=overwrite, **kw))
    display(fig)
    plt.close(fig)
    if written is not None:
        written.extend(paths)


def file_table(paths: Iterable[str | os.PathLike]):
    """A table of files (``file``, ``bytes``) for display."""
    rows = [{"file": str(p), "bytes": Path(p).stat().st_size} for p in paths if Path(p).is_file()]
    return pd.DataFrame(rows, columns=["file", "bytes"])


def run_files(run_dir: str | os.PathLike):
    """The files of a run directory (``file``, ``bytes``), hidden files left out."""
    rd = Path(run_dir)
    return file_table(sorted(p for p in rd.iterdir() if not p.name.startswith(".")))


#: The columns of the full lists :func:`cut_note` writes (those the outputs table has).
CUT_LIST_COLUMNS = ("task_id", "test_index", "cell_accuracy", "partial_credit", "best_attempt",
                    "truth_shape", "pred_shape", "n_attempts")
_NOUNS = {"failed": "unsolved outputs", "near_miss": "near misses", "solved": "solved outputs",
          "all": "outputs"}


def cut_note(run, select: str = "failed", shown: int = 24, *, near_miss: float = NEAR_MISS,
             k: int = 2, folder: str | os.PathLike | None = None) -> str:
    """The caption of a gallery or a table cut to ``shown`` rows, saying so: "24 of 418
    unsolved outputs shown", with a link to the full list.

    The full list (every output :func:`arcnb.plot.gallery_items` selects with
    ``select``, best cell accuracy first; the columns ``CUT_LIST_COLUMNS``) is written as
    ``<select>_outputs.csv`` in ``folder`` (default: the run directory, beside the
    report; not written for a run in memory), with spreadsheet formulas neutralised
    (:func:`arcnb.io.csv_text`). Returns the HTML (user text escaped)."""
    every = gallery_items(run.results, select, near_miss=near_miss, k=k, sort="cell_accuracy")
    total, n = len(every), min(int(shown), len(every))
    noun = _NOUNS.get(select, f"{select} outputs")
    text = (f"{n} of {total} {noun} shown, best cell accuracy first" if total > n
            else f"all {total} {noun} shown")
    where = Path(folder) if folder else (Path(run.run_dir) if run.run_dir is not None else None)
    if where is None:
        return f"<p class='arcnb-note arcnb-cut'>{_esc(text)}.</p>"
    cols = [c for c in CUT_LIST_COLUMNS if c in every.columns]
    path = atomic_write_text(where / f"{select}_outputs.csv", csv_text(every[cols]),
                             overwrite=True)
    base = Path(run.run_dir) if run.run_dir is not None else where
    href = os.path.relpath(path, base).replace(os.sep, "/")
    return (f"<p class='arcnb-note arcnb-cut'>{_esc(text)}; the full list of {total}: "
            f"<a href='{_esc(href)}'>{_esc(href)}</a>.</p>")


def percent_text(v) -> str:
    """A fraction as a percent for a sentence: two decimals (``0.25 %``), more for a
    small nonzero value so it is never written as 0 (``0.0040 %``); ``NaN`` for NaN
    (:func:`arcnb.text.fmt_percent`)."""
    if v is None or not math.isfinite(float(v)):
        return MISSING
    return fmt_percent(v, least=2, most=8, sep=" ")


def summary_html(run) -> str:
    """The report's opening paragraph, written from the numbers: tasks solved within 2
    attempts (pass@2 with its 95% interval), the share of outputs with the right shape,
    the cells right in those, partial credit and near misses. ``run``: a
    :class:`~arcnb.runs.Run` or a :class:`~arcnb.scoring.Results`. Carries
    ``id="arcnb-summary"``."""
    results = getattr(run, "results", run)
    if results is None or not getattr(run, "scored", True) or not hasattr(results, "summary"):
        return ("<p class='arcnb-summary' id='arcnb-summary'>Predictions only: this "
                "dataset has no truth to score them against.</p>")
    s = results.summary
    n_tasks = int(s.get("n_tasks", 0))
    tasks = getattr(results, "tasks", None)
    solved = (int(tasks["all_solved@2"].sum()) if tasks is not None and
              "all_solved@2" in getattr(tasks, "columns", ()) else None)
    lo, hi = s.get("pass@2_ci95") or [float("nan")] * 2
    first = (f"Solves {solved} of {n_tasks} tasks within 2 attempts"
             if solved is not None else f"Scored on {n_tasks} tasks")
    parts = [f"{first} (pass@2 {percent_text(s.get('pass@2'))}, 95 % interval "
             f"{percent_text(lo)} to {percent_text(hi)})"]
    n_out = int(s.get("n_outputs", 0))
    if s.get("shape_accuracy") is not None:
        parts.append(f"the right shape for {percent_text(s['shape_accuracy'])} of its "
                     f"{n_out} test outputs")
    if s.get("cell_accuracy_right_shape") is not None:
        parts.append(f"{percent_text(s['cell_accuracy_right_shape'])} of the cells right "
                     "where the shape is right")
    if s.get("partial_credit") is not None:
        parts.append(f"partial credit {percent_text(s['partial_credit'])}")
    text = "; ".join(parts) + "."
    return f"<p class='arcnb-summary' id='arcnb-summary'>{_esc(text)}</p>"
