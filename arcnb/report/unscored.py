"""What a report shows for an unscored run (a hidden test set: the dataset has no test
outputs, so nothing can be scored): a note saying so, with the run's counts and its
Kaggle submission, and a gallery of the predictions (each test input beside its
attempts)."""
from __future__ import annotations

import json

import numpy as np

from ..html import escape as _esc
from ..plot import grid
from ..plot.palette import pyplot

__all__ = ["no_truth_html", "predictions_gallery"]


def no_truth_html(run) -> str:
    """One paragraph: no truth, predictions only; the tasks, test outputs, invalid
    attempts and the filler attempts of ``submission.json`` (``id="arcnb-no-truth"``)."""
    s = run.summary
    sub = s.get("submission") or {}
    ds = s.get("dataset") or {}
    return ("<div class='arcnb-note' id='arcnb-no-truth'><p><b>No truth: predictions only.</b> "
            f"The dataset {_esc(ds.get('name'))} has no test outputs for "
            f"{_esc(s.get('n_outputs_without_truth'))} of its {_esc(s.get('n_outputs'))} test "
            "inputs (a hidden test set), so nothing is scored and the sections that need the "
            f"truth are left out. {_esc(s.get('n_tasks'))} tasks, "
            f"{_esc(s.get('n_attempts'))} attempts, {_esc(s.get('n_invalid_attempts'))} "
            f"invalid. {_esc(sub.get('file'))} (the Kaggle submission: attempt_1 and "
            f"attempt_2 for every test input) holds {_esc(sub.get('n_filler_attempts'))} "
            f"filler attempts {_esc(json.dumps(sub.get('filler')))} for invalid or absent "
            "predictions.</p></div>")


def predictions_gallery(run, *, max_items: int = 24, attempts: int = 2, per_row: int = 2):
    """A figure of the first ``max_items`` test inputs (task order) of an unscored
    run, each beside its first ``attempts`` attempts (``per_row`` test inputs per row
    of panels); an invalid or absent attempt is written as such. Returns the Figure."""
    items = [(t, i) for t in run.dataset for i in range(len(t.test))][:max_items]
    cols = 1 + attempts
    n_rows = max(1, -(-len(items) // per_row))
    fig, axes = pyplot().subplots(n_rows, cols * per_row, squeeze=False,
                                  figsize=(1.25 * cols * per_row, 1.6 * n_rows))
    for ax in axes.ravel():
        ax.set_axis_off()
    for q, (task, i) in enumerate(items):
        r, c0 = divmod(q, per_row)
        row = axes[r, c0 * cols:(c0 + 1) * cols]
        row[0].set_axis_on()
        grid(task.test[i].input, ax=row[0], title=f"{task.id} test {i}\ninput", fontsize=6)
        atts = run.predictions.get(task.id, i)
        for j in range(attempts):
            ax = row[1 + j]
            g = atts[j] if j < len(atts) else None
            ax.set_axis_on()
            if g is None:
                ax.set_xticks([])
                ax.set_yticks([])
                ax.text(0.5, 0.5, "invalid" if j < len(atts) else "no attempt",
                        transform=ax.transAxes, ha="center", va="center", fontsize=6)
                ax.set_title(f"attempt {j + 1}", fontsize=6)
            else:
                grid(np.asarray(g), ax=ax, title=f"attempt {j + 1}", fontsize=6)
    total = sum(len(t.test) for t in run.dataset)
    fig.suptitle(f"predictions (no truth): {len(items)} of {total} test inputs", fontsize=8)
    return fig
