"""Parameterized notebooks executed with papermill and exported as self-contained HTML.

Two halves live here:

* **Notebook helpers** (:func:`open_run`, :func:`headline_html`, :func:`table_html`,
  :func:`provenance`, :func:`compact_line`, :func:`show`) that the cells of
  ``notebooks/*.ipynb`` call. They render tables as HTML in which every string from
  the user (task ids, paths, category names) is escaped, so a task id such as
  ``<script>`` shows as text, never as markup.
* **Execution and export** (:func:`run_notebook`, :func:`export_html`,
  :func:`build_report`, :func:`build_reports`), behind ``arcnb report``. A notebook
  runs through papermill with the ``python3`` kernel; the executed notebook is
  exported with nbconvert and arcnb's template (``arcnb/templates/arcnb_report``):
  code hidden, images embedded as ``data:`` URIs, no script and no stylesheet from
  the network (the default template's require.js, MathJax and Mermaid CDN scripts are
  dropped and a Content-Security-Policy forbids any script or remote resource).

When a cell fails, the partly executed notebook and an HTML page showing the error
are still written, and :class:`NotebookError` names the failing cell (its index,
execution count, exception name and message).
"""
from __future__ import annotations

import html
import json
import math
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from .errors import ArcnbError, OutputExistsError
from .io import atomic_write_bytes, atomic_write_text

__all__ = [
    "NotebookError",
    "Run",
    "ReportResult",
    "NOTEBOOKS",
    "notebook_path",
    "default_source",
    "open_run",
    "resolve_source",
    "make_run",
    "default_out",
    "headline_html",
    "table_html",
    "definitions_html",
    "breakdown_html",
    "provenance",
    "compact_line",
    "show",
    "show_figure",
    "figures_dir",
    "default_compare_runs",
    "read_metrics",
    "run_files",
    "file_table",
    "run_notebook",
    "export_html",
    "build_report",
    "build_reports",
    "build_compare_report",
]

#: The notebooks shipped in ``notebooks/`` (name -> file name).
NOTEBOOKS = {
    "evaluate": "evaluate.ipynb",
    "report": "report.ipynb",
    "compare": "compare.ipynb",
    "figures": "figures.ipynb",
}

#: papermill always runs notebooks with this kernel.
KERNEL_NAME = "python3"

_ROOT = Path(__file__).resolve().parents[1]
_TEMPLATES = Path(__file__).resolve().parent / "templates"
_TEMPLATE_NAME = "arcnb_report"
DEFAULT_DATASET = "arc-agi-1:evaluation"
_EXAMPLE_PREDICTIONS = _ROOT / "data" / "examples" / "arc-agi-1-evaluation_heuristic.json"


class NotebookError(ArcnbError):
    """A notebook cell raised. ``cell_index`` (0-based position in the executed
    notebook), ``exec_count``, ``ename`` and ``evalue`` locate it; ``notebook`` and
    ``html`` are the partial notebook and the error page written for it."""

    def __init__(self, message: str, *, notebook: str | None = None, html: str | None = None,
                 cell_index: int | None = None, exec_count: int | None = None,
                 ename: str | None = None, evalue: str | None = None, source: str = ""):
        self.notebook = notebook
        self.html = html
        self.cell_index = cell_index
        self.exec_count = exec_count
        self.ename = ename
        self.evalue = evalue
        self.source = source
        super().__init__(message)


# ============================================================== locations and defaults
def notebook_path(name: str) -> Path:
    """The path of a shipped notebook (``"report"`` or ``"report.ipynb"``) or of any
    ``.ipynb`` file given by path."""
    p = Path(name)
    if p.suffix == ".ipynb" and p.exists():
        return p
    stem = p.stem if p.suffix == ".ipynb" else name
    if stem not in NOTEBOOKS:
        raise ArcnbError(f"unknown notebook {name!r}: use one of {', '.join(NOTEBOOKS)} "
                         "or a path to an .ipynb file")
    path = _ROOT / "notebooks" / NOTEBOOKS[stem]
    if not path.exists():
        raise ArcnbError(f"notebook {path} not found: arcnb's notebooks live in the "
                         "repository's notebooks/ folder (install arcnb from a clone, "
                         "`pip install -e .`)")
    return path


def _bundled_checkpoint() -> Path | None:
    try:
        from .models import BUNDLED_BASELINE
    except ImportError:  # pragma: no cover - the models package is part of arcnb
        return None
    return BUNDLED_BASELINE if BUNDLED_BASELINE.is_file() else None


def default_source() -> dict:
    """The embedded default: the bundled baseline checkpoint on ARC-AGI-1 evaluation when
    ``data/checkpoints/`` holds one, else the bundled example predictions.

    Returns ``{"kind": "checkpoint" | "predictions", "path": str, "dataset": str}``.
    """
    ckpt = _bundled_checkpoint()
    if ckpt is not None:
        return {"kind": "checkpoint", "path": str(ckpt), "dataset": DEFAULT_DATASET}
    if not _EXAMPLE_PREDICTIONS.exists():
        raise ArcnbError(f"the bundled example predictions {_EXAMPLE_PREDICTIONS} are "
                         "missing and no bundled checkpoint was found in data/checkpoints/")
    return {"kind": "predictions", "path": str(_EXAMPLE_PREDICTIONS),
            "dataset": DEFAULT_DATASET}


def _resolve_default(value: str, *, kind: str) -> str:
    """``"default"`` -> the bundled example predictions (``kind="predictions"``)."""
    if value != "default":
        return value
    if kind == "predictions":
        return str(_EXAMPLE_PREDICTIONS)
    raise ArcnbError(f"no default for {kind}")


def resolve_source(checkpoint: str = "", predictions: str = "") -> dict:
    """What a notebook's ``checkpoint`` / ``predictions`` parameters name.

    ``predictions`` (a file, or ``"default"`` for the bundled example predictions) wins
    when set; else ``checkpoint`` (a file, ``"baseline"``, a registered model name such
    as ``"copy-input"``, or ``"default"`` = :func:`default_source`). Returns
    ``{"kind": "checkpoint" | "predictions", "path": str}``.
    """
    if predictions:
        return {"kind": "predictions", "path": _resolve_default(predictions, kind="predictions")}
    if not checkpoint or checkpoint == "default":
        src = default_source()
        return {"kind": src["kind"], "path": src["path"]}
    return {"kind": "checkpoint", "path": str(checkpoint)}


def make_run(source: Mapping, dataset: str, out: str | os.PathLike, *, tasks=None,
             overwrite: bool = False, evaluate_options: Mapping | None = None):
    """Write a run directory ``out`` from ``source`` (see :func:`resolve_source`):
    :func:`arcnb.evaluate.evaluate` for a checkpoint (``evaluate_options`` are its
    keyword arguments: device, batch_size, attempts, augment, seed, ...),
    :func:`arcnb.evaluate.score_to_run_dir` for a predictions file. Returns the
    Results."""
    import warnings

    from .evaluate import evaluate, score_to_run_dir

    if source["kind"] == "predictions":
        return score_to_run_dir(source["path"], dataset, out, tasks=tasks or None,
                                overwrite=overwrite)
    if source["kind"] == "checkpoint":
        with warnings.catch_warnings():
            # tqdm.auto in a kernel without ipywidgets warns even for a disabled bar
            warnings.filterwarnings("ignore", message=".*IProgress not found.*")
            return evaluate(source["path"], dataset, out, tasks=tasks or None,
                            overwrite=overwrite, **dict(evaluate_options or {}))
    raise ArcnbError(f"unknown source kind {source['kind']!r}")


def default_out(out: str, source: Mapping, dataset: str, *, kind: str = "runs") -> Path:
    """``out`` when given, else ``reports/<kind>/<source name>-<dataset>-<UTC time>``
    (a fresh folder, so a notebook run never replaces an earlier one)."""
    if out:
        return Path(out)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    name = f"{Path(str(source['path'])).stem}-{str(dataset).replace(':', '-')}-{stamp}"
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)
    return _ROOT / "reports" / kind / safe


# ===================================================================== run view
@dataclass
class Run:
    """A scored run as the notebooks see it: ``results`` (:class:`arcnb.scoring.Results`),
    ``metrics`` (the run's ``metrics.json``, or the in-memory summary plus provenance),
    the run directory (None for an in-memory run) and its label."""

    results: object
    metrics: dict
    run_dir: Path | None
    label: str

    @property
    def summary(self) -> dict:
        return _summary_of(self.metrics)

    def __repr__(self) -> str:
        s = self.summary
        ds = s.get("dataset") or {}
        return (f"Run({self.label!r}, dataset={ds.get('name')!r}, tasks={s.get('n_tasks')}, "
                f"outputs={s.get('n_outputs')}, pass@2={s.get('pass@2')})")


def _summary_of(metrics: Mapping) -> dict:
    """The scoring summary inside a metrics.json (top level or under ``summary``)."""
    if "summary" in metrics and isinstance(metrics["summary"], Mapping):
        return dict(metrics["summary"])
    return dict(metrics)


def _read_json(path: Path) -> dict:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def open_run(run_dir: str | os.PathLike | None = None, *, predictions: str | None = None,
             dataset: str | None = None, tasks=None, label: str | None = None,
             n_boot: int = 1000, seed: int = 0) -> Run:
    """Open a run for a report.

    With ``run_dir``: :func:`arcnb.compare.load_run` re-scores its ``predictions.json``
    on the dataset and task filter its ``metrics.json`` records (the re-scored headline
    numbers must equal the recorded ones; ``predictions``, ``dataset`` and ``tasks`` are
    then ignored). Without: score ``predictions``
    (``"default"`` = the bundled example predictions) on ``dataset`` (default
    ARC-AGI-1 evaluation) in memory, with provenance from
    :func:`arcnb.evaluate.run_provenance`. Either way pass@K is scored for every K up
    to the largest number of attempts in the predictions.
    """
    from .predictions import load_predictions
    from .scoring import score

    if run_dir:
        from .compare import load_run

        # the run records its dataset and task filter; `dataset`/`tasks` are ignored
        rs = load_run(run_dir, label=label, n_boot=n_boot, seed=seed)
        res, metrics = rs.results, rs.metrics
        ks = _attempt_ks(res.predictions)
        if tuple(ks) != tuple(res.ks):
            res = score(res.dataset, res.predictions, ks=ks, n_boot=n_boot, seed=seed)
        return Run(res, metrics, Path(run_dir), rs.label)
    from .evaluate import run_provenance
    from .models import file_sha256

    path = _resolve_default(predictions or "default", kind="predictions")
    preds = load_predictions(path)
    res = score(dataset or DEFAULT_DATASET, preds, tasks=tasks or None, ks=_attempt_ks(preds),
                n_boot=n_boot, seed=seed)
    metrics = dict(res.summary)
    metrics["provenance"] = run_provenance(source="predictions", predictions=str(path),
                                           predictions_sha256=file_sha256(path),
                                           dataset=res.dataset.info)
    return Run(res, metrics, None, label or Path(path).stem)


def _attempt_ks(preds) -> tuple[int, ...]:
    """1 .. the largest number of attempts of any output (at least 1 and 2)."""
    most = max((len(a) for outs in preds.attempts.values() for a in outs), default=2)
    return tuple(range(1, max(2, most) + 1))


def _ks_of(metrics: Mapping) -> tuple[int, ...]:
    ks = {1, 2}
    for key in _summary_of(metrics):
        if key.startswith("pass@") and "_" not in key and key[5:].isdigit():
            ks.add(int(key[5:]))
    return tuple(sorted(ks))


# ============================================================ HTML building blocks
def _esc(value) -> str:
    return html.escape(str(value), quote=True)


def _fmt_fraction(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "NaN"
    return f"{float(v):.4f} ({100 * float(v):.2f}%)"


def _data_value(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "nan"
    return repr(float(v))


def headline_html(metrics: Mapping, *, ks: Sequence[int] | None = None) -> str:
    """The headline table: pass@K in the three conventions (rows K, columns
    ``pass@K``, ``pass@K_per_output``, ``pass@K_all_or_nothing``) with the pass@2
    bootstrap interval and counts.

    The table has ``id="arcnb-headline"``; each number cell carries
    ``data-metric`` (e.g. ``pass@2_per_output``) and ``data-value`` (the exact float),
    so a browser test can read the numbers back.
    """
    s = _summary_of(metrics)
    ks = tuple(ks) if ks else _ks_of(metrics)
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
                         f"{_esc(_fmt_fraction(v))}</td>")
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
        f"{_esc(_fmt_fraction(lo))}</span> to <span data-metric='pass@2_ci95_high' "
        f"data-value='{_data_value(hi)}'>{_esc(_fmt_fraction(hi))}</span>"
        + (f" (percentile bootstrap, {_esc(boot.get('n_boot'))} resamples of tasks, seed "
           f"{_esc(boot.get('seed'))})" if boot else "") + ".</p>")
    rows.append("<p class='arcnb-note'>" + " &middot; ".join(parts) + "</p>")
    return "\n".join(rows)


def definitions_html(definitions: Mapping[str, str] | None = None) -> str:
    """The metric definitions (default :data:`arcnb.scoring.METRIC_DEFINITIONS`) as a
    two-column table."""
    if definitions is None:
        from .scoring import METRIC_DEFINITIONS as definitions
    body = "".join(f"<tr><th class='arcnb-text'>{_esc(k)}</th>"
                   f"<td class='arcnb-text'>{_esc(v)}</td></tr>" for k, v in definitions.items())
    return f"<table class='arcnb-table' id='arcnb-definitions'><tbody>{body}</tbody></table>"


def table_html(df, *, table_id: str | None = None, caption: str | None = None,
               index: bool = False, max_rows: int | None = 200, digits: int = 4) -> str:
    """A DataFrame as an HTML table with every cell, header and index escaped
    (``DataFrame.to_html(escape=True)``). Floats show ``digits`` decimals and NaN as
    ``NaN``; at most ``max_rows`` rows (a note says how many were left out)."""
    import pandas as pd

    shown = df if max_rows is None or len(df) <= max_rows else df.head(max_rows)
    fmt = (lambda x: "NaN" if pd.isna(x) else f"{x:.{digits}f}")
    text = shown.to_html(escape=True, index=index, na_rep="NaN", float_format=fmt,
                         classes="arcnb-table", border=0,
                         table_id=table_id if table_id else None)
    out = []
    if caption:
        out.append(f"<p class='arcnb-note'>{_esc(caption)}</p>")
    out.append(text)
    if shown is not df:
        out.append(f"<p class='arcnb-note'>{len(df) - len(shown)} more rows not shown.</p>")
    return "\n".join(out)


#: Columns of a breakdown table shown in reports (the CSV export keeps them all).
BREAKDOWN_COLUMNS = ("group", "n_tasks", "n_outputs", "pass@2", "pass@2_ci_low",
                     "pass@2_ci_high", "pass@2_per_output", "pass@2_all_or_nothing",
                     "pass@1", "cell_accuracy")


def breakdown_html(df, *, table_id: str | None = None, caption: str | None = None,
                   columns: Sequence[str] = BREAKDOWN_COLUMNS) -> str:
    """A breakdown table (:func:`arcnb.breakdown.breakdown`) as escaped HTML, restricted to
    the report's ``columns``; the table's note (multi-label or not) follows the caption."""
    cols = [c for c in columns if c in df.columns]
    note = df.attrs.get("note")
    cap = " ".join(x for x in (caption, f"({note})" if note else None) if x)
    return table_html(df[cols], table_id=table_id, caption=cap or None)


def provenance(metrics: Mapping, *, run_dir=None) -> dict:
    """Flat provenance of a run: checkpoint path and SHA-256 (or the predictions file),
    dataset name, version and filter, arcnb version and git commit, parameters."""
    s = _summary_of(metrics)
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
    }
    flat = {k: v for k, v in flat.items()
            if v is not None or k in ("checkpoint_sha256", "filter", "git_commit")}
    if run_dir is not None:
        flat["run_dir"] = str(run_dir)
    return flat


def compact_line(metrics: Mapping, metric: str = "pass@2") -> str:
    """Seed 003's compact reporting line:
    ``<metric>=<fraction> (<percent>%), checkpoint=<sha256>, data=<name>@<version>,
    filter=<filter>, arcnb=<version>+<commit>``.

    A model given by name (no file, e.g. ``copy-input``) shows its name instead of a
    SHA-256. Without a checkpoint (a predictions file was scored), ``checkpoint=none``
    and the predictions file's SHA-256 follow as ``predictions=<sha256>``.
    """
    s = _summary_of(metrics)
    p = provenance(metrics)
    v = s.get(metric)
    if v is None or (isinstance(v, float) and math.isnan(v)):
        value = "nan (nan%)"
    else:
        value = f"{float(v):.4f} ({100 * float(v):.2f}%)"
    parts = [f"{metric}={value}",
             f"checkpoint={p.get('checkpoint_sha256') or p.get('checkpoint') or 'none'}"]
    if not p.get("checkpoint_sha256") and p.get("predictions_sha256"):
        parts.append(f"predictions={p['predictions_sha256']}")
    parts.append(f"data={p['dataset']}@{p['dataset_version']}")
    parts.append(f"filter={p['filter'] or 'none'}")
    commit = p.get("git_commit")
    parts.append(f"arcnb={p['arcnb_version']}" + (f"+{commit[:12]}" if commit else ""))
    return ", ".join(parts)


def provenance_html(metrics: Mapping, *, run_dir=None, metric: str = "pass@2") -> str:
    """Provenance as an escaped key/value table followed by the compact reporting line."""
    p = provenance(metrics, run_dir=run_dir)
    rows = []
    for k, v in p.items():
        if isinstance(v, (dict, list)):
            v = json.dumps(v, sort_keys=True)
        rows.append(f"<tr><th class='arcnb-text'>{_esc(k)}</th>"
                    f"<td class='arcnb-text' data-key='{_esc(k)}'>{_esc(v)}</td></tr>")
    line = compact_line(metrics, metric)
    return (f"<table class='arcnb-table' id='arcnb-provenance'><tbody>{''.join(rows)}"
            f"</tbody></table>\n<p>Compact reporting line (seed 003):</p>\n"
            f"<pre id='arcnb-compact-line'>{_esc(line)}</pre>")


class _HTML:
    """A minimal rich-display object (``text/html``) built from already-escaped HTML."""

    def __init__(self, text: str):
        self.text = text

    def _repr_html_(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"<HTML {len(self.text)} chars>"


def show(text: str) -> None:
    """Display HTML produced by this module's builders in a notebook."""
    from IPython.display import display

    display(_HTML(text))


def figures_dir(figures_dir: str | os.PathLike | None, run: Run | None = None) -> Path | None:
    """Where a report saves its figures: ``figures_dir`` when given, else
    ``<run_dir>/figures`` for a run directory, else None (nothing saved)."""
    if figures_dir:
        return Path(figures_dir)
    if run is not None and run.run_dir is not None:
        return Path(run.run_dir) / "figures"
    return None


def show_figure(fig, name: str | None = None, folder: str | os.PathLike | None = None, *,
                formats: Sequence[str] = ("png",), tight: bool = True,
                written: list | None = None) -> None:
    """Display a matplotlib figure (or Axes) once and close it; with ``folder`` also save
    it as ``folder/<name>.<format>`` through :func:`arcnb.plot.save` (deterministic,
    atomic; files of an earlier run of the same report are replaced). The paths written
    are appended to ``written`` when given."""
    from IPython.display import display
    import matplotlib.pyplot as plt

    if hasattr(fig, "get_figure") and not hasattr(fig, "savefig"):
        fig = fig.get_figure()
    paths = []
    if folder is not None and name:
        from .plot import save

        Path(folder).mkdir(parents=True, exist_ok=True)
        for fmt in formats:
            kw = {"bbox_inches": "tight"} if tight else {}
            paths.append(save(fig, Path(folder) / f"{name}.{fmt}", overwrite=True, **kw))
    display(fig)
    plt.close(fig)
    if written is not None:
        written.extend(paths)


def read_metrics(run_dir: str | os.PathLike) -> dict:
    """A run directory's ``metrics.json``."""
    return _read_json(Path(run_dir) / "metrics.json")


def file_table(paths: Iterable[str | os.PathLike]):
    """A table of files (``file``, ``bytes``) for display."""
    import pandas as pd

    rows = [{"file": str(p), "bytes": Path(p).stat().st_size} for p in paths if Path(p).is_file()]
    return pd.DataFrame(rows, columns=["file", "bytes"])


def run_files(run_dir: str | os.PathLike):
    """The files of a run directory (``file``, ``bytes``), hidden files left out."""
    rd = Path(run_dir)
    return file_table(sorted(p for p in rd.iterdir() if not p.name.startswith(".")))


def default_compare_runs(folder: str | os.PathLike | None = None, *,
                         dataset: str = DEFAULT_DATASET, tasks=None) -> list[Path]:
    """Two run directories to compare by default: the bundled example predictions and
    the copy-the-input baseline (:func:`arcnb.evaluate.evaluate` with ``"copy-input"``)
    on ``dataset``. They are written under ``folder`` (default
    ``reports/compare-default/``) once and reused when already finished."""
    root = Path(folder) if folder else _ROOT / "reports" / "compare-default"
    runs = [(root / "example-predictions", {"kind": "predictions",
                                            "path": str(_EXAMPLE_PREDICTIONS)}),
            (root / "copy-input", {"kind": "checkpoint", "path": "copy-input"})]
    for rd, src in runs:
        if not (rd / "metrics.json").exists():
            make_run(src, dataset, rd, tasks=tasks,
                     evaluate_options={"progress": False} if src["kind"] == "checkpoint"
                     else None)
    return [rd for rd, _ in runs]


# ============================================================ notebook execution
def run_notebook(notebook: str | os.PathLike, output: str | os.PathLike,
                 parameters: Mapping | None = None, *, cwd: str | os.PathLike | None = None,
                 progress: bool = True, html: str | os.PathLike | None = None,
                 overwrite: bool = False, title: str | None = None,
                 html_on_success: bool = True) -> Path:
    """Execute ``notebook`` with papermill (kernel ``python3``) into ``output``, and export
    it to ``html`` when given.

    The executed notebook is written atomically (papermill saves progress into a
    temporary file beside ``output``, renamed at the end). When a cell raises, the
    partial notebook and an error page (``html``) are still written, then
    :class:`NotebookError` names the failing cell.
    """
    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    src = notebook_path(str(notebook))
    output = Path(output)
    for target in (output, Path(html) if html else None):
        if target is not None and target.exists() and not overwrite:
            raise OutputExistsError(f"{target} already exists; refusing to overwrite it "
                                    "(pass --overwrite)")
    output.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{output.stem}.", suffix=".ipynb", dir=output.parent)
    os.close(fd)
    failure: PapermillExecutionError | None = None
    other: Exception | None = None
    try:
        try:
            pm.execute_notebook(str(src), tmp, parameters=dict(parameters or {}),
                                kernel_name=KERNEL_NAME, progress_bar=progress,
                                cwd=str(cwd) if cwd else None, log_output=False)
        except PapermillExecutionError as exc:
            failure = exc
        except (KeyboardInterrupt, ArcnbError):
            raise
        except Exception as exc:  # noqa: BLE001 - a dead kernel, a timeout, ...
            other = exc
        if os.path.getsize(tmp) > 0:
            os.chmod(tmp, 0o644)
            os.replace(tmp, output)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    if other is not None:
        msg = (f"{src.name} could not be executed: {type(other).__name__}: "
               f"{str(other).strip().splitlines()[0] if str(other).strip() else ''}")
        if output.exists() and html:
            export_html(output, html, overwrite=True, title=title,
                        error={"cell_index": None, "exec_count": None,
                               "ename": type(other).__name__, "evalue": str(other),
                               "source": ""})
        raise NotebookError(msg, notebook=str(output) if output.exists() else None,
                            html=str(html) if html and output.exists() else None,
                            ename=type(other).__name__, evalue=str(other))
    error = None
    if failure is not None:
        error = {"cell_index": failure.cell_index, "exec_count": failure.exec_count,
                 "ename": failure.ename, "evalue": failure.evalue,
                 "source": failure.source}
    if html and (failure is not None or html_on_success):
        export_html(output, html, overwrite=True, error=error, title=title)
    if failure is not None:
        where = f"cell {failure.exec_count}" if failure.exec_count else \
            f"cell #{failure.cell_index}"
        first = (failure.source or "").strip().splitlines()
        msg = (f"{src.name} failed at {where} "
               f"({first[0][:60] if first else 'empty cell'}): "
               f"{failure.ename}: {str(failure.evalue).strip().splitlines()[0] if str(failure.evalue).strip() else ''}"
               f"; partial notebook {output}" + (f", error page {html}" if html else ""))
        raise NotebookError(msg, notebook=str(output), html=str(html) if html else None,
                            cell_index=failure.cell_index, exec_count=failure.exec_count,
                            ename=failure.ename, evalue=failure.evalue,
                            source=failure.source)
    return output


def export_html(notebook: str | os.PathLike, html_path: str | os.PathLike, *,
                overwrite: bool = False, error: Mapping | None = None,
                title: str | None = None) -> Path:
    """Export an executed notebook to a self-contained HTML page.

    Code cells are hidden (``exclude_input``), images are embedded, and the page loads
    nothing from the network. ``error`` (the failing cell's ``cell_index``,
    ``exec_count``, ``ename``, ``evalue``, ``source``) adds an escaped banner at the top.
    """
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.read(str(notebook), as_version=4)
    if title:
        nb.metadata["title"] = str(title)
    exporter = HTMLExporter(template_name=_TEMPLATE_NAME,
                            extra_template_basedirs=[str(_TEMPLATES)],
                            exclude_input=True, exclude_input_prompt=True,
                            exclude_output_prompt=True, embed_images=True)
    body, _ = exporter.from_notebook_node(nb)
    if error is not None:
        body = _insert_error_banner(body, error, notebook)
    _check_self_contained(body)
    return atomic_write_text(html_path, body, overwrite=overwrite)


def _insert_error_banner(body: str, error: Mapping, notebook) -> str:
    if error.get("exec_count"):
        head = f"The notebook failed at cell {error['exec_count']}"
    elif error.get("cell_index") is not None:
        head = f"The notebook failed at cell #{error['cell_index']}"
    else:
        head = "The notebook could not be executed"
    banner = (
        "<div class='arcnb-error' id='arcnb-error'>"
        f"<h2>{_esc(head)}</h2>"
        f"<p><b>{_esc(error.get('ename'))}</b>: {_esc(error.get('evalue'))}</p>"
        f"<p>The partly executed notebook is {_esc(notebook)}. The failing cell:</p>"
        f"<pre>{_esc(error.get('source') or '')}</pre></div>")
    marker = "<main>"
    i = body.find(marker)
    if i < 0:
        return banner + body
    i += len(marker)
    return body[:i] + banner + body[i:]


def _check_self_contained(body: str) -> None:
    """Refuse to write a page that could load a script or a remote resource."""
    import re

    low = body.lower()
    if re.search(r"<script\b", low):
        raise ArcnbError("internal error: the exported HTML contains a <script> element")
    for m in re.finditer(r"""<[^>]*\b(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", low):
        raise ArcnbError("internal error: the exported HTML references a network resource "
                         f"near {body[max(0, m.start() - 40):m.end() + 40]!r}")


# ================================================================== the report job
@dataclass
class ReportResult:
    """What :func:`build_report` wrote and measured."""

    out: Path
    html: Path
    notebook: Path
    metrics: dict
    timings: dict = field(default_factory=dict)
    label: str = ""


@contextmanager
def _stage(timings: dict, name: str, log):
    t0 = time.perf_counter()
    try:
        yield
    finally:
        timings[name] = time.perf_counter() - t0
        log(f"{name}: {timings[name]:.1f} s")


def _claim_outputs(out: Path, targets, *, overwrite: bool, log) -> None:
    """Refuse existing ``targets`` without ``overwrite``; say so when replacing them."""
    existing = [p for p in targets if p.exists()]
    if existing and not overwrite:
        raise OutputExistsError(f"{existing[0]} already exists; refusing to overwrite it "
                                "(pass --overwrite)")
    if existing:
        log(f"replacing the existing report in {out} (--overwrite)")
    out.mkdir(parents=True, exist_ok=True)


def _printer(label: str | None):
    prefix = f"[arcnb report{': ' + label if label else ''}] "

    def log(msg: str) -> None:
        print(prefix + msg, file=sys.stderr, flush=True)

    return log


def _copy_run_files(run_dir: Path, out: Path, overwrite: bool) -> None:
    for p in sorted(run_dir.iterdir()):
        if not p.is_file() or p.name.startswith(".") or p.name.startswith("report."):
            continue
        dest = out / p.name
        if dest.exists() and not overwrite:
            raise OutputExistsError(f"{dest} already exists; refusing to overwrite it "
                                    "(pass --overwrite)")
        atomic_write_bytes(dest, p.read_bytes(), overwrite=True)


def _make_run_dir(source: Mapping, dataset: str, out: Path, *, tasks, overwrite: bool,
                  progress: bool, log, timings: dict, evaluate_options: Mapping | None,
                  in_process: bool) -> Path:
    kind, path = source["kind"], source["path"]
    if kind == "run":
        rd = Path(path)
        if not (rd / "metrics.json").exists():
            raise ArcnbError(f"{rd} is not a run directory: metrics.json is missing")
        if rd.resolve() != out.resolve():
            with _stage(timings, "copy run", log):
                _copy_run_files(rd, out, overwrite)
        return out
    if kind == "predictions":
        with _stage(timings, "score predictions", log):
            make_run(source, dataset, out, tasks=tasks, overwrite=overwrite)
        return out
    if kind == "checkpoint" and in_process:
        opts = dict(evaluate_options or {})
        opts.setdefault("progress", progress)
        with _stage(timings, "evaluate checkpoint", log):
            make_run(source, dataset, out, tasks=tasks, overwrite=overwrite,
                     evaluate_options=opts)
        return out
    if kind == "checkpoint":
        ck = str(Path(path).resolve()) if Path(path).exists() else str(path)
        params = {"checkpoint": ck, "predictions": "", "dataset": dataset,
                  "out": str(out.resolve()), "tasks": str(Path(tasks).resolve()) if tasks
                  else "", "overwrite": bool(overwrite)}
        params.update(dict(evaluate_options or {}))
        with _stage(timings, "evaluate (evaluate.ipynb)", log):
            run_notebook("evaluate", out / "evaluate.ipynb", params, progress=progress,
                         overwrite=True, cwd=out, html=out / "evaluate.html",
                         html_on_success=False)
        return out
    raise ArcnbError(f"unknown source kind {kind!r}")


def build_report(source: Mapping, *, dataset: str, out: str | os.PathLike,
                 taxonomy: str | None = None, tasks: str | None = None,
                 overwrite: bool = False, progress: bool = True, label: str | None = None,
                 report_parameters: Mapping | None = None,
                 evaluate_options: Mapping | None = None,
                 evaluate_in_process: bool = True) -> ReportResult:
    """One report: make the run directory ``out`` (evaluate a checkpoint, score a
    predictions file, or copy a run), execute ``report.ipynb`` on it and export
    ``report.html``.

    ``source`` is ``{"kind": "checkpoint" | "predictions" | "run", "path": ...}``. A
    checkpoint is evaluated in this process (``evaluate_in_process``, the fastest: no
    second kernel) or by executing ``evaluate.ipynb`` with papermill in its own kernel
    (kept as ``out/evaluate.ipynb``; what :func:`build_reports` does for several
    checkpoints, so that they run in separate processes).
    Writes ``out/report.ipynb``, ``out/report.html``, ``out/figures/`` and the run files.
    The time of each stage is printed on stderr and returned in ``timings``.
    """
    out = Path(out)
    log = _printer(label)
    timings: dict = {}
    html_path, nb_path = out / "report.html", out / "report.ipynb"
    _claim_outputs(out, (html_path, nb_path), overwrite=overwrite, log=log)
    t0 = time.perf_counter()
    _make_run_dir(source, dataset, out, tasks=tasks, overwrite=overwrite, progress=progress,
                  log=log, timings=timings, evaluate_options=evaluate_options,
                  in_process=evaluate_in_process)
    params = {"run_dir": str(out.resolve()),
              "taxonomy": str(Path(taxonomy).resolve()) if taxonomy else "",
              "figures_dir": str((out / "figures").resolve())}
    params.update(dict(report_parameters or {}))
    with _stage(timings, "report.ipynb (papermill)", log):
        # on a failing cell, run_notebook still writes the partial notebook and an error
        # page, then raises NotebookError naming the cell
        run_notebook("report", nb_path, params, progress=progress, overwrite=True, cwd=out,
                     html=html_path, html_on_success=False, title=label or out.name)
    with _stage(timings, "html export", log):
        export_html(nb_path, html_path, overwrite=True, title=label or out.name)
    timings["total"] = time.perf_counter() - t0
    log(f"total: {timings['total']:.1f} s")
    metrics = _read_json(out / "metrics.json") if (out / "metrics.json").exists() else {}
    return ReportResult(out, html_path, nb_path, metrics, timings, label or out.name)


def build_compare_report(runs: Sequence[str | os.PathLike], out: str | os.PathLike, *,
                         labels: Sequence[str] | None = None, dataset: str | None = None,
                         taxonomy: str | None = "structural", common_tasks: bool = False,
                         n_boot: int = 1000, seed: int = 0, overwrite: bool = False,
                         progress: bool = True) -> Path:
    """Execute ``compare.ipynb`` on ``runs`` into ``out/compare.ipynb`` and export
    ``out/compare.html`` (same export rules and failure handling as the report).
    Returns the HTML path."""
    out = Path(out)
    log = _printer("compare")
    timings: dict = {}
    html_path, nb_path = out / "compare.html", out / "compare.ipynb"
    _claim_outputs(out, (html_path, nb_path), overwrite=overwrite, log=log)
    params = {"runs": [str(Path(r).resolve()) for r in runs],
              "labels": list(labels or []), "dataset": dataset or "",
              "taxonomy": str(Path(taxonomy).resolve()) if taxonomy and Path(taxonomy).exists()
              else (taxonomy or ""),
              "common_tasks": bool(common_tasks), "n_boot": int(n_boot), "seed": int(seed),
              "out": ""}
    with _stage(timings, "compare.ipynb (papermill)", log):
        run_notebook("compare", nb_path, params, progress=progress, overwrite=True, cwd=out,
                     html=html_path, html_on_success=False, title="arcnb comparison")
    with _stage(timings, "html export", log):
        export_html(nb_path, html_path, overwrite=True, title="arcnb comparison")
    return html_path


def _unique_names(paths: Sequence[str]) -> list[str]:
    names, seen = [], {}
    for p in paths:
        base = Path(p).stem or "run"
        n = seen.get(base, 0)
        seen[base] = n + 1
        names.append(base if n == 0 else f"{base}_{n + 1}")
    return names


def build_reports(sources: Sequence[Mapping], *, dataset: str, out: str | os.PathLike,
                  max_workers: int | None = None, **kwargs) -> list[ReportResult]:
    """Several reports at once, one sub-folder of ``out`` per source (named after the
    file), run concurrently on at most ``max_workers`` (default: the number of cores)
    workers. Every report is attempted; the first failure is raised at the end."""
    out = Path(out)
    if len(sources) == 1:
        return [build_report(sources[0], dataset=dataset, out=out, **kwargs)]
    names = _unique_names([s["path"] for s in sources])
    workers = max(1, min(len(sources), max_workers or os.cpu_count() or 1))
    kwargs = dict(kwargs)
    kwargs["progress"] = False  # one progress bar per cell would interleave
    results: list = [None] * len(sources)
    errors: list = []
    with ThreadPoolExecutor(max_workers=workers) as pool:
        # checkpoints are evaluated by evaluate.ipynb, each in its own kernel process
        futs = {pool.submit(build_report, s, dataset=dataset, out=out / n, label=n,
                            evaluate_in_process=False, **kwargs): i
                for i, (s, n) in enumerate(zip(sources, names))}
        for fut, i in futs.items():
            try:
                results[i] = fut.result()
            except Exception as exc:  # noqa: BLE001 - reported after every report ran
                errors.append(exc)
    if errors:
        raise errors[0]
    _write_index(out, results, overwrite=kwargs.get("overwrite", False))
    return results


def _write_index(out: Path, results: Sequence[ReportResult], *, overwrite: bool) -> Path:
    """``out/index.html``: one row per report with its headline numbers (escaped)."""
    rows = []
    for r in results:
        s = _summary_of(r.metrics)
        rel = f"{r.out.name}/report.html"
        rows.append(f"<tr><td class='arcnb-text'><a href='{_esc(rel)}'>{_esc(r.label)}</a>"
                    f"</td>" + "".join(f"<td>{_esc(_fmt_fraction(s.get(k)))}</td>" for k in
                                       ("pass@2", "pass@2_per_output",
                                        "pass@2_all_or_nothing")) + "</tr>")
    page = ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
            "style-src 'unsafe-inline'\"><title>arcnb reports</title><style>"
            "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px}"
            "</style></head><body><h1>arcnb reports</h1><table><thead><tr><th>run</th>"
            "<th>pass@2</th><th>pass@2_per_output</th><th>pass@2_all_or_nothing</th></tr>"
            "</thead><tbody>" + "".join(rows) + "</tbody></table></body></html>\n")
    return atomic_write_text(out / "index.html", page, overwrite=True)
