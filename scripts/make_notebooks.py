"""Regenerate arcnb's notebooks (notebooks/*.ipynb) from the cell lists below.

    .venv/bin/python scripts/make_notebooks.py          # write the notebooks
    .venv/bin/python scripts/make_notebooks.py --check  # exit 1 when a notebook differs

Every notebook: the first code cell is tagged ``parameters`` and holds typed,
commented literals (``papermill --help-notebook`` lists them); the defaults run on the
embedded default; no outputs, kernelspec ``python3``; thin cells calling ``arcnb``.
The files are byte-stable (fixed cell ids), so ``--check`` can guard them in tests.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "notebooks"

KERNELSPEC = {"name": "python3", "display_name": "Python 3 (arcnb)", "language": "python"}
LANGUAGE_INFO = {"name": "python", "pygments_lexer": "ipython3",
                 "codemirror_mode": {"name": "ipython", "version": 3},
                 "file_extension": ".py", "mimetype": "text/x-python"}


def md(text: str):
    return ("md", text.strip("\n"))


def code(text: str, tags=()):
    return ("code", text.strip("\n"), tuple(tags))


def params(text: str):
    return code(text, tags=("parameters",))


# ============================================================================ report
REPORT = [
    md("""
# ARC evaluation report

Built by `arcnb` from a run directory (a `metrics.json` and a `predictions.json`), or from
a predictions file scored in memory. Every number below is a fraction in [0, 1]; an empty
denominator shows as NaN. Run it in JupyterLab, or in batch:
`papermill notebooks/report.ipynb out.ipynb -k python3 -p run_dir RUN_DIR`.
"""),
    params("""
# Parameters (papermill: -p NAME VALUE). Literals only.
run_dir: str = ""  # run directory holding metrics.json and predictions.json; empty: score `predictions` in memory
predictions: str = "default"  # used without run_dir: a submission JSON, or "default" for the bundled example predictions
dataset: str = "arc-agi-1:evaluation"  # used without run_dir: dataset name, task folder or *_challenges.json
tasks: str = ""  # file of task ids to keep (JSON list or one per line); empty: every task
taxonomy: str = ""  # user taxonomy (.csv with task_id,category or .json); empty: only the automatic taxonomy
figures_dir: str = ""  # folder for the report's figures (PNG); empty: run_dir/figures, or none without run_dir
gallery_size: int = 24  # at most this many failures and near misses in the gallery
near_miss: float = 0.8  # an unsolved output whose cell accuracy reaches this is a near miss
n_boot: int = 1000  # bootstrap resamples for the intervals
seed: int = 0  # bootstrap seed
"""),
    code("""
from arcnb import breakdown as B
from arcnb import report as R

run = R.open_run(run_dir or None, predictions=predictions, dataset=dataset, tasks=tasks or None)
run
"""),
    md("""
## 1. Headline

pass@K in the three conventions, with a 95% percentile bootstrap interval over tasks
for pass@2. The definitions follow the table.
"""),
    code("""
R.show(R.headline_html(run.metrics))
R.show(R.definitions_html())
"""),
    md("""
## 2. pass@K

pass@K for every K up to the number of attempts in the predictions, in the three
conventions.
"""),
    code("""
R.show(R.table_html(run.results.summary_table(), index=True, table_id="arcnb-pass-at-k"))
"""),
    md("""
## 4. Colours

Per-colour accuracy: for each colour, the fraction of truth cells of that colour that
attempt 1 predicts correctly, over the outputs whose attempt 1 has the truth's shape.
The confusion matrix counts cells (rows: truth colour, columns: predicted colour),
normalised by row.
"""),
    code("""
acc = B.color_accuracy(run.results)
R.show(R.table_html(acc, table_id="arcnb-color-accuracy",
                    caption=f"{acc.attrs['n_used']} of {acc.attrs['n_outputs']} outputs used "
                            f"(attempt 1 with the truth's shape)"))
conf = B.color_confusion(run.results, normalize="true")
R.show(R.table_html(conf, index=True, digits=3, table_id="arcnb-color-confusion"))
"""),
    md("""
## 5. Categories

The automatic structural taxonomy (computed from each task's demonstration pairs) covers
every task; a user taxonomy is added when the `taxonomy` parameter names one. A task with
several categories counts in each; a task without one shows as `uncategorized`.
"""),
    code("""
structural = B.breakdown(run.results, "structural", n_boot=n_boot, seed=seed, total=True)
R.show(R.breakdown_html(structural, table_id="arcnb-breakdown-structural",
                        caption="automatic structural taxonomy"))
"""),
    code("""
if taxonomy:
    user = B.breakdown(run.results, taxonomy, n_boot=n_boot, seed=seed, total=True)
    cov = user.attrs.get("coverage", {})
    R.show(R.breakdown_html(user, table_id="arcnb-breakdown-user",
                            caption=f"taxonomy {user.attrs['grouping']}: {cov.get('n_categorized')} "
                                    f"of {cov.get('n_tasks')} tasks categorised"))
else:
    print("No user taxonomy given (parameter `taxonomy`).")
"""),
    md("""
## 6. Grid size and shape change

Grid size bins the larger side of the truth grid; shape change compares the truth's
shape with the test input's. Both assign each test output on its own.
"""),
    code("""
for by in ("grid_size", "shape_change"):
    t = B.breakdown(run.results, by, n_boot=n_boot, seed=seed, total=True)
    R.show(R.breakdown_html(t, table_id=f"arcnb-breakdown-{by.replace('_', '-')}", caption=by))
"""),
    md("""
## 7. Provenance

Where these numbers come from, and the compact line to quote them with (seed 003:
metric, value, checkpoint SHA-256, dataset and version, filter, arcnb version and commit).
"""),
    code("""
R.show(R.provenance_html(run.metrics, run_dir=run.run_dir))
"""),
]


NOTEBOOKS = {
    "report.ipynb": REPORT,
}


def build(cells) -> nbformat.NotebookNode:
    nb = new_notebook()
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nb.metadata["language_info"] = dict(LANGUAGE_INFO)
    out = []
    for i, c in enumerate(cells):
        if c[0] == "md":
            cell = new_markdown_cell(c[1])
        else:
            cell = new_code_cell(c[1])
            if c[2]:
                cell.metadata["tags"] = list(c[2])
        cell["id"] = f"cell-{i:02d}"
        out.append(cell)
    nb.cells = out
    return nb


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="exit 1 when a committed notebook differs from its cell list")
    args = ap.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    stale = []
    for name, cells in NOTEBOOKS.items():
        text = nbformat.writes(build(cells)) + "\n"
        path = OUT / name
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
            continue
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    if stale:
        print("stale notebooks (run scripts/make_notebooks.py): " + ", ".join(stale),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
