"""The report's "Training-data overlap" section (the report's ``train_data`` parameter,
``arcnb report --train-data``): which of the run's test outputs the training data
already holds (:func:`arcnb.overlap.overlap`), and the headline metrics on the clean
and on the overlapping part side by side, with 95% bootstrap intervals.

A test output *overlaps* when it is ``equivalent`` (in the training data verbatim or
rotated / mirrored and recoloured); a task overlaps when at least one of its test
outputs does. ``pass@2`` is compared over tasks (clean tasks against overlapping
tasks), ``pass@2_per_output`` over test outputs."""
from __future__ import annotations

import os

import pandas as pd

from ..overlap import Overlap, overlap
from ..runs import record_training_overlap
from ..stats import bootstrap_ci
from ..html import escape as _esc
from ..text import fmt_interval, fmt_number, fmt_percent
from .html import note_html, table_html

__all__ = ["WARN_SHARE", "overlap_check", "overlap_split", "overlap_section_html"]

#: Share of test outputs in the training data from which the report warns.
WARN_SHARE = 0.05


def overlap_check(run, train, *, colors: str = "1-9",
                  run_dir: str | os.PathLike | None = None) -> Overlap:
    """:func:`arcnb.overlap.overlap` of the run's dataset (its scored tasks) against
    ``train``; with ``run_dir``, the check (sources and counts) is recorded in the run's
    ``metrics.json`` (:func:`arcnb.runs.record_training_overlap`)."""
    ov = overlap(run.results.dataset, train, tasks=sorted(set(run.results.outputs["task_id"])),
                 colors=colors)
    if run_dir:
        record_training_overlap(run_dir, ov.summary)
    return ov


def _row(metric: str, part: str, values, *, n_boot: int, seed: int) -> dict:
    v = pd.Series(values, dtype=float)
    lo, hi = bootstrap_ci(v, n_boot=n_boot, seed=seed)
    return {"metric": metric, "part": part, "n": int(v.size),
            "value": float(v.mean()) if v.size else float("nan"), "ci_low": lo, "ci_high": hi}


def overlap_split(run, ov: Overlap, *, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """``pass@2`` (over tasks) and ``pass@2_per_output`` (over test outputs) on the clean
    and on the overlapping part: one row per metric and part with ``n`` (tasks or
    outputs), ``value`` and its 95% bootstrap interval. An empty part gives NaN."""
    out = run.results.outputs.merge(ov.outputs[["task_id", "test_index", "equivalent"]],
                                    on=["task_id", "test_index"], how="left")
    seen = out["equivalent"].fillna(False).astype(bool)
    task_seen = seen.groupby(out["task_id"]).any()
    tasks = run.results.tasks.set_index("task_id")
    rows = []
    for part, mask_t, mask_o in (("clean", ~task_seen, ~seen), ("in the training data",
                                                               task_seen, seen)):
        rows.append(_row("pass@2", part, tasks.loc[mask_t[mask_t].index, "pass@2"],
                         n_boot=n_boot, seed=seed))
        rows.append(_row("pass@2_per_output", part, out.loc[mask_o, "solved@2"],
                         n_boot=n_boot, seed=seed))
    return pd.DataFrame(rows)


def overlap_section_html(run, ov: Overlap, *, n_boot: int = 1000, seed: int = 0) -> str:
    """The section: a warning line when at least :data:`WARN_SHARE` of the test outputs
    are in the training data, the counts, and the clean / overlapping comparison."""
    s = ov.summary
    share = s["outputs_equivalent"] / s["n_outputs"] if s["n_outputs"] else float("nan")
    sources = ", ".join(t["source"] for t in s["train"])
    parts = [f'<h2 id="arcnb-training-overlap">Training-data overlap ({_esc(sources)})</h2>']
    if share >= WARN_SHARE:
        parts.append(note_html(
            f"Warning: {s['outputs_equivalent']} of the {s['n_outputs']} test outputs "
            f"({fmt_percent(share, least=1, most=1)}) are in the training data ({sources}), verbatim or rotated "
            "and recoloured: the headline partly measures memorisation. Report the clean "
            "part below.", note_id="arcnb-overlap-warning"))
    counts = pd.DataFrame([
        {"relation": "exact (pair verbatim)", "test outputs": s["outputs_exact"],
         "tasks": s["tasks_exact"]},
        {"relation": f"equivalent (rotations, mirrors, colours {s['colors']})",
         "test outputs": s["outputs_equivalent"], "tasks": s["tasks_equivalent"]},
        {"relation": "input seen", "test outputs": s["outputs_input_seen"],
         "tasks": s["tasks_input_seen"]},
        {"relation": "task id in the training data", "test outputs": "",
         "tasks": s["same_id_tasks"]},
        {"relation": "task id in the training data, other content", "test outputs": "",
         "tasks": s["same_id_changed"]},
    ])
    parts.append(table_html(counts, table_id="arcnb-overlap-counts",
                            caption=f"of {s['n_outputs']} test outputs and {s['n_tasks']} "
                                    f"tasks; training data: {sources}"))
    split = overlap_split(run, ov, n_boot=n_boot, seed=seed)
    wide = []
    for metric, grp in split.groupby("metric", sort=False):
        row = {"metric": metric}
        for _, r in grp.iterrows():
            row[r["part"]] = f"{fmt_number(r['value'], least=4, most=8)} {fmt_interval(r['ci_low'], r['ci_high'])}"
            row[f"n ({r['part']})"] = r["n"]
        wide.append(row)
    wide = pd.DataFrame(wide)
    parts.append(table_html(wide, table_id="arcnb-overlap-split",
                            caption="the headline metrics on the clean and on the overlapping "
                                    "part; in brackets the 95% bootstrap interval (over tasks "
                                    "for pass@2, over test outputs for pass@2_per_output)"))
    return "\n".join(parts)
