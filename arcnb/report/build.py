"""Building reports: one (:func:`build_report`, behind ``arcnb report``), many at once
(:func:`build_reports`, with an index page) and a comparison's
(:func:`build_compare_report`, behind ``arcnb compare --report``).

A report is the run directory (made from a checkpoint, a predictions file or an
existing run), ``report.ipynb`` executed on it with papermill and its HTML export,
written beside the run files; the time of each stage is printed and returned.

An unscored run (a hidden test set: no truth, ``"scored": false``) gets the report
notebook's cells up to and including the one tagged :data:`NO_TRUTH_TAG` (which says
there is no truth and shows the predictions gallery); the sections after it need the
truth and are left out.
"""
from __future__ import annotations

import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping, Sequence
from urllib.parse import quote

from ..columns import label as column_label
from ..data import DATASETS, check_dataset, load_dataset
from ..errors import ArcnbError, refuse_overwrite
from ..io import atomic_write_text
from ..evaluate import checkpoint_kwargs, same_finished_run
from ..options import EvalOptions
from ..taxonomy import load_taxonomy
from ..text import fmt_fraction, fmt_seconds
from ..front import CheckpointSource, PredictionsSource, RunDirSource, parse_source
from ..runs import (EVALUATE_HTML, EVALUATE_NOTEBOOK, FIGURES, METRICS, PREDICTIONS, REPORT_HTML,
                    REPORT_NOTEBOOK, OutputFolder, absolute_path, check_out_path, copy_run_files,
                    is_finished,
                    is_scored, read_metrics, record_reuse, require_finished, summary_of,
                    unique_labels)
from ..html import escape as _esc, page as html_page
from .sections import open_report, report_page
from .notebooks import (NOTEBOOKS, WarmKernel, cell_times, export_html, notebook_libraries,
                        notebook_path, prepare_export, run_notebook)

__all__ = ["ReportResult", "build_report", "build_reports", "build_compare_report", "source_name",
           "INDEX_HTML", "NO_TRUTH_TAG"]

#: The page listing the reports that :func:`build_reports` built (in its ``out``).
INDEX_HTML = "index.html"
#: The folder of ``out`` that the reports' checkpoints become a sweep in (``arcnb
#: report --checkpoint a b c``); never a report's folder name.
SWEEP_FOLDER = "sweep"

#: The tag of the report notebook's last cell for an unscored run (no truth): the
#: cells after it need the truth.
NO_TRUTH_TAG = "no-truth"


@dataclass
class ReportResult:
    """What :func:`build_report` wrote and measured."""

    out: Path
    html: Path
    notebook: Path | None  # None: built without a notebook (notebook=False)
    metrics: dict
    timings: dict = field(default_factory=dict)
    label: str = ""
    #: where the notebook's time went: ``(name, seconds)`` for the kernel's start, the
    #: setup cell and each section (``arcnb.report.notebooks.cell_times``)
    cell_times: list = field(default_factory=list)


@contextmanager
def _stage(timings: dict, name: str, log):
    t0 = time.perf_counter()
    yield  # a stage that fails is reported by the error, in one line
    timings[name] = time.perf_counter() - t0
    log(f"{name}: {fmt_seconds(timings[name])}")


#: the lists a report writes beside itself (:func:`arcnb.report.cut_note`)
CUT_LISTS = ("failed_outputs.csv", "near_miss_outputs.csv")


def _report_targets(out: Path) -> tuple:
    """Every file a report writes in ``out`` besides the run files."""
    return (out / REPORT_HTML, out / REPORT_NOTEBOOK, *(out / n for n in CUT_LISTS))


def _claim_outputs(out: Path, targets, *, overwrite: bool, log, folders=()) -> None:
    """Refuse existing ``targets`` (and non-empty ``folders``) without ``overwrite``; say
    so when replacing them. A symbolic link among them is always refused: nothing is
    written through a link inside ``--out``."""
    for p in (*targets, *folders):
        if p.is_symlink():
            raise ArcnbError(f"{p} is a symbolic link; arcnb never writes through a link "
                             "inside --out (remove it)")
    existing = [p for p in targets if p.exists()]
    existing += [f for f in folders if f.is_dir() and any(f.iterdir())]
    if existing and not overwrite:
        raise refuse_overwrite(existing[0], "pass --overwrite")
    if existing:
        log(f"replacing the existing report in {out} (--overwrite)")
    out.mkdir(parents=True, exist_ok=True)


def _remove_empty(folder: Path) -> None:
    """Remove ``folder`` when it is empty (what a failed first step leaves)."""
    try:
        folder.rmdir()
    except OSError:
        pass


def _printer(label: str | None):
    prefix = f"[arcnb report{': ' + label if label else ''}] "

    def log(msg: str) -> None:
        print(prefix + msg, file=sys.stderr, flush=True)

    return log


def _make_run_dir(source, dataset: str, out: Path, *, tasks, overwrite: bool,
                  progress: bool, log, timings: dict, in_process: bool,
                  estimator: str = "ranked") -> Path:
    if isinstance(source, RunDirSource):
        rd = require_finished(source.path)
        _check_run_estimator(rd, estimator)
        if rd.resolve() != out.resolve():
            with _stage(timings, "copy run", log):
                copy_run_files(rd, out, overwrite=overwrite)
        return out
    if isinstance(source, PredictionsSource):
        with _stage(timings, "score predictions", log):
            source.open(dataset=dataset, tasks=tasks or None, out=out, overwrite=overwrite,
                        estimator=estimator)
        return out
    if isinstance(source, CheckpointSource) and _reuse_evaluation(
            source, dataset, out, tasks=tasks, estimator=estimator, log=log, timings=timings):
        return out
    if isinstance(source, CheckpointSource) and in_process:
        opts = dict(source.options)
        opts.setdefault("progress", progress)
        with _stage(timings, "evaluate checkpoint", log):
            replace(source, options=opts).open(dataset=dataset, tasks=tasks or None, out=out,
                                               overwrite=overwrite, estimator=estimator)
        return out
    if isinstance(source, CheckpointSource):
        path = source.checkpoint
        ck = str(Path(path).resolve()) if Path(path).exists() else str(path)
        params = {"checkpoint": ck, "predictions": "", "dataset": dataset,
                  "out": str(out.resolve()), "tasks": str(Path(tasks).resolve()) if tasks
                  else "", "overwrite": bool(overwrite), "estimator": estimator}
        # evaluate.ipynb's parameters are literals: the evaluation options set away from
        # their defaults (checked here, before a kernel starts), the config as JSON text
        opts = dict(EvalOptions.from_mapping({k: v for k, v in source.options.items()
                                              if k in EvalOptions.names()}))
        if opts.get("config") is not None:
            opts["config"] = json.dumps(opts["config"], sort_keys=True)
        params.update({k: ("" if v is None and k in ("arch", "config") else v)
                       for k, v in opts.items()})
        with _stage(timings, f"evaluate ({EVALUATE_NOTEBOOK})", log):
            run_notebook("evaluate", out / EVALUATE_NOTEBOOK, params, progress=progress,
                         overwrite=True, html=out / EVALUATE_HTML,
                         html_on_success=False)
        return out
    raise ArcnbError(f"a report is made from a checkpoint, a predictions file or a run "
                     f"directory, not {source!r}")


def _reuse_evaluation(source: CheckpointSource, dataset, out: Path, *, tasks, estimator: str,
                      log, timings: dict) -> bool:
    """Take the finished run in ``out`` as it is when it is the evaluation asked for
    (:func:`arcnb.evaluate.same_finished_run`: the same checkpoint bytes, dataset, task
    ids, device type and options, by the same arcnb and torch): said in one line and
    recorded in its provenance (:func:`arcnb.runs.record_reuse`). False: evaluate."""
    if not is_finished(out):
        return False
    t0 = time.perf_counter()
    kw = checkpoint_kwargs(source.options)
    kw.setdefault("estimator", estimator)
    options = EvalOptions(**{k: v for k, v in kw.items() if k in EvalOptions.names()})
    if not same_finished_run(source.checkpoint, dataset, out, options=options,
                             tasks=tasks or None):
        return False
    record_reuse(out, "arcnb report")
    timings["reuse the finished evaluation"] = time.perf_counter() - t0
    log(f"not evaluated again: {out} holds the finished evaluation of the same checkpoint, "
        f"dataset and options, reused as it is (recorded in its {METRICS}; remove it to "
        "evaluate again)")
    return True


def _absolute(source):
    """``source`` with its path made absolute (the kernels run in a folder of their own)."""
    if isinstance(source, (PredictionsSource, RunDirSource)):
        return replace(source, path=absolute_path(source.path))
    if isinstance(source, CheckpointSource):
        return replace(source, checkpoint=absolute_path(source.checkpoint))
    return source


def source_name(source) -> str:
    """The path or name a report's source was given by (a checkpoint, a predictions
    file, a run directory)."""
    return str(getattr(source, "path", None) or getattr(source, "checkpoint", None) or source)


def _check_run_estimator(rd: Path, estimator: str) -> None:
    """A run directory is re-opened with its recorded estimator: asking for another
    one is an error, not a silent change."""
    metrics = read_metrics(rd)
    recorded = summary_of(metrics).get("estimator") or "ranked"
    if is_scored(metrics) and estimator != "ranked" and estimator != recorded:
        raise ArcnbError(f"{rd} was scored with the {recorded} estimator; a run directory is "
                         f"re-opened with its recorded estimator (score its {PREDICTIONS} "
                         f"again with --predictions ... --estimator {estimator})")


def _truncated_report(out: Path) -> Path:
    """The report notebook cut after the cell tagged :data:`NO_TRUTH_TAG`, written as
    a hidden file in ``out`` (for an unscored run)."""
    notebook_libraries()
    import nbformat

    nb = nbformat.read(str(notebook_path("report")), as_version=4)
    cut = next((i for i, c in enumerate(nb.cells)
                if NO_TRUTH_TAG in c.get("metadata", {}).get("tags", [])), None)
    if cut is None:
        raise ArcnbError(f"{out} has no truth (a hidden test set) and the report notebook has "
                         f"no predictions-only section (a cell tagged {NO_TRUTH_TAG!r})")
    nb.cells = nb.cells[:cut + 1]
    path = out / ".report-no-truth.ipynb"
    atomic_write_text(path, nbformat.writes(nb), overwrite=True)
    return path


def _check_inputs(source, dataset, tasks, taxonomy) -> None:
    """The checks of a report's inputs before anything is written or a kernel starts,
    each failing in one line: a run directory is re-scored (a run whose metrics.json
    disagrees with its predictions is refused), then the taxonomy, the dataset and a
    task filter naming ids the bundled set lacks."""
    if isinstance(source, RunDirSource):
        require_finished(source.path)
        source.open(ks=(1, 2))
    if taxonomy and str(taxonomy) not in ("structural", "folder"):
        load_taxonomy(taxonomy)
    if not isinstance(source, RunDirSource) and dataset:
        check_dataset(dataset)
        if tasks and str(dataset) in DATASETS:
            # its split read from the cache folder in milliseconds, kept for the run's
            # scoring in this process
            load_dataset(dataset, tasks=tasks, require_truth=False)


def _report_params(out: Path, taxonomy, references, report_parameters) -> dict:
    """The report notebook's parameters for the run in ``out``: absolute paths, the
    reference runs shown beside the model (the embedded default's reference points),
    then the caller's ``report_parameters``."""
    params = {"run_dir": str(out.resolve()),
              "taxonomy": str(Path(taxonomy).resolve()) if taxonomy else "",
              "figures_dir": str((out / FIGURES).resolve())}
    if references:
        params["references"] = [r if not Path(r).exists() else str(Path(r).resolve())
                                for r in map(str, references)]
    params.update(dict(report_parameters or {}))
    return params


def _write_report_page(params: dict, nb_path: Path, html_path: Path, title: str) -> None:
    """``report.html`` from the report's sections in this process (no kernel); an older
    report's notebook (``--overwrite``) is removed."""
    run, options = open_report(**params)
    nb_path.unlink(missing_ok=True)
    atomic_write_text(html_path, report_page(run, options, title=title), overwrite=True)


def _run_report_notebook(out: Path, params: dict, nb_path: Path, html_path: Path, title: str, *,
                         scored: bool, progress: bool, kernel) -> None:
    """``report.ipynb`` executed on the run in ``out`` (papermill, in the warm
    ``kernel``): the whole notebook for a scored run, its cells up to
    :data:`NO_TRUTH_TAG` for an unscored one. On a failing cell, ``run_notebook`` still
    writes the partial notebook and an error page, then raises NotebookError naming the
    cell."""
    source_nb = "report" if scored else _truncated_report(out)
    try:
        run_notebook(source_nb, nb_path, params, progress=progress, overwrite=True,
                     html=html_path, html_on_success=False, title=title, kernel=kernel)
    finally:
        if not scored:
            Path(source_nb).unlink(missing_ok=True)


def _log_cell_times(cells: list, timings: dict, log) -> None:
    """Where the notebook's time went: the kernel, the setup, each section (cells of at
    least 0.05 s), and papermill's own time."""
    if cells:
        rest = timings[f"{REPORT_NOTEBOOK} (papermill)"] - sum(sec for _, sec in cells)
        log("  in it: " + ", ".join(f"{name} {fmt_seconds(sec)}" for name, sec in cells
                                    if sec >= 0.05)
            + f"; papermill itself {fmt_seconds(max(rest, 0))}")


def build_report(source, *, dataset: str, out: str | os.PathLike,
                 taxonomy: str | None = None, tasks: str | None = None,
                 overwrite: bool = False, progress: bool = True, label: str | None = None,
                 report_parameters: Mapping | None = None,
                 evaluate_in_process: bool = True, estimator: str = "ranked",
                 references: Sequence[str] | None = None,
                 notebook: bool = True) -> ReportResult:
    """One report: make the run directory ``out`` (evaluate a checkpoint, score a
    predictions file, or copy a run), execute ``report.ipynb`` on it and export
    ``report.html``.

    ``source`` is a typed source of :mod:`arcnb.front`
    (:class:`~arcnb.front.CheckpointSource`, which carries the checkpoint's evaluate
    options, :class:`~arcnb.front.PredictionsSource`,
    :class:`~arcnb.front.RunDirSource`), or a path :func:`~arcnb.front.parse_source`
    reads as one of them. ``references``
    (copy-input, predictions files: the report's ``references`` parameter) are shown
    in its reference-points section. A
    checkpoint is evaluated in this process (``evaluate_in_process``, the fastest: no
    second kernel) or by executing ``evaluate.ipynb`` with papermill in its own kernel
    (kept as ``out/evaluate.ipynb``; what :func:`build_reports` does for several
    checkpoints, so that they run in separate processes).
    Writes ``out/report.ipynb``, ``out/report.html``, ``out/figures/`` and the run files.
    The time of each stage is printed on stderr and returned in ``timings``.
    ``estimator`` (``"ranked"`` or ``"unbiased"``) scores a checkpoint's or a
    predictions file's attempts; a run directory keeps its recorded one. An unscored
    run (no truth) gets the predictions-only part of the report (see the module
    docstring). ``notebook=False`` (``arcnb report --no-notebook``) writes
    ``report.html`` from the same sections in this process
    (:func:`arcnb.report.sections.report_page`): no kernel starts and no
    ``report.ipynb`` is written.
    """
    out = check_out_path(out)
    # the kernels run in a private folder of their own: every path they get is absolute
    dataset, tasks = absolute_path(dataset), absolute_path(tasks)
    source = _absolute(parse_source(source))
    log = _printer(label)
    title = label or out.name
    timings: dict = {}
    html_path, nb_path = out / REPORT_HTML, out / REPORT_NOTEBOOK
    _check_inputs(source, dataset, tasks, taxonomy)
    created = not out.exists()
    t0 = time.perf_counter()
    kernel = None
    try:
        _claim_outputs(out, _report_targets(out), overwrite=overwrite, log=log,
                       folders=(out / FIGURES,))
        # the report's kernel starts, and imports what it needs, while the run is made;
        # so do papermill's libraries and the HTML exporter, in a thread of this process
        kernel = WarmKernel(dataset=dataset, references=references or ()) \
            if notebook else None
        if notebook:
            prepare_export()
        _make_run_dir(source, dataset, out, tasks=tasks, overwrite=overwrite,
                      progress=progress, log=log, timings=timings,
                      in_process=evaluate_in_process, estimator=estimator)
    except BaseException:
        if kernel is not None:
            kernel.close()
        if created:  # bad input found while making the run: leave no empty --out behind
            _remove_empty(out)
        raise
    try:  # the warm kernel is shut down however this ends (run_notebook uses it)
        scored = is_scored(read_metrics(out))
        params = _report_params(out, taxonomy, references, report_parameters)
        if not notebook:
            with _stage(timings, "report page (in this process)", log):
                _write_report_page(params, nb_path, html_path, title)
        else:
            with _stage(timings, f"{REPORT_NOTEBOOK} (papermill)", log):
                _run_report_notebook(out, params, nb_path, html_path, title, scored=scored,
                                     progress=progress, kernel=kernel)
    finally:
        if kernel is not None:
            kernel.close()
    cells = cell_times(nb_path) if notebook else []
    _log_cell_times(cells, timings, log)
    if notebook:
        with _stage(timings, "html export", log):
            export_html(nb_path, html_path, overwrite=True, title=title)
    timings["total"] = time.perf_counter() - t0
    log(f"total: {fmt_seconds(timings['total'])}")
    metrics = read_metrics(out) if is_finished(out) else {}
    return ReportResult(out, html_path, nb_path if notebook else None, metrics, timings,
                        title, cells)


def build_compare_report(runs: Sequence[str | os.PathLike], out: str | os.PathLike, *,
                         labels: Sequence[str] | None = None, dataset: str | None = None,
                         taxonomy: str | None = "structural", common_tasks: bool = False,
                         n_boot: int = 1000, seed: int = 0, overwrite: bool = False,
                         progress: bool = True, difficulty_model: str = "rasch",
                         pool: bool = False, human_solve_rates: str | None = None,
                         tasks: str | None = None) -> Path:
    """Execute ``compare.ipynb`` on ``runs`` into ``out/compare.ipynb`` and export
    ``out/compare.html`` (same export rules and failure handling as the report);
    ``difficulty_model``, ``pool`` and ``human_solve_rates`` are compare's task
    difficulty options (:mod:`arcnb.difficulty`); ``tasks`` (a task-id file) scores
    every run on those tasks (:func:`arcnb.front.task_set`). Returns the HTML path."""
    out = check_out_path(out)
    log = _printer("compare")
    timings: dict = {}
    nb_path = out / NOTEBOOKS["compare"]
    html_path = nb_path.with_suffix(".html")
    _claim_outputs(out, (html_path, nb_path), overwrite=overwrite, log=log)
    params = {"runs": [str(Path(r).resolve()) for r in runs],
              "labels": list(labels or []), "dataset": absolute_path(dataset) or "",
              "taxonomy": str(Path(taxonomy).resolve()) if taxonomy and Path(taxonomy).exists()
              else (taxonomy or ""),
              "common_tasks": bool(common_tasks), "n_boot": int(n_boot), "seed": int(seed),
              "out": "", "difficulty_model": str(difficulty_model), "pool": bool(pool),
              "human_solve_rates": absolute_path(human_solve_rates) or "",
              "tasks": absolute_path(tasks) or ""}
    with _stage(timings, f"{nb_path.name} (papermill)", log):
        run_notebook("compare", nb_path, params, progress=progress, overwrite=True,
                     html=html_path, html_on_success=False, title="arcnb comparison")
    with _stage(timings, "html export", log):
        export_html(nb_path, html_path, overwrite=True, title="arcnb comparison")
    return html_path


def _unique_names(paths: Sequence[str]) -> list[str]:
    """One folder name per source: the file's stem, ``_2``, ``_3``... for repeats. A stem
    that is no folder name of its own (``..`` from ``...json``, ``.``, empty) becomes
    ``run``; :data:`SWEEP_FOLDER` is taken (``sweep.pt`` gives ``sweep_2``)."""
    stems = [Path(p).stem for p in paths]
    stems = ["run" if s.strip(".") == "" or "/" in s or "\\" in s else s for s in stems]
    return unique_labels([SWEEP_FOLDER] + stems, sep="_")[1:]


def build_reports(sources: Sequence, *, dataset: str, out: str | os.PathLike,
                  max_workers: int | None = None, **kwargs) -> list[ReportResult]:
    """Several reports at once, one sub-folder of ``out`` per source (a typed source of
    :mod:`arcnb.front`; named after the file), run concurrently on at most
    ``max_workers`` (default: the number of cores) workers. Every report is attempted;
    the first failure is raised at the end. With ``notebook=False`` no kernel starts:
    the reports are built one after another in this process."""
    out = Path(out)
    if len(sources) == 1:
        return [build_report(sources[0], dataset=dataset, out=out, **kwargs)]
    names = _unique_names([source_name(s) for s in sources])
    # before any work: every report's folder is a folder of out's own (a link planted
    # as out/<name> is refused), and an existing index.html needs --overwrite
    folder = OutputFolder(out)
    for n in names:
        folder.folder(n)
    folder.claim([INDEX_HTML], overwrite=kwargs.get("overwrite", False))
    in_kernels = kwargs.get("notebook", True)
    # without notebooks (notebook=False) no kernel starts: the checkpoints are evaluated
    # in this process, one after another
    workers = max(1, min(len(sources), max_workers or os.cpu_count() or 1)) if in_kernels else 1
    kwargs = dict(kwargs)
    kwargs["progress"] = False  # one progress bar per cell would interleave
    results: list = [None] * len(sources)
    errors: list = []
    with ThreadPoolExecutor(max_workers=workers) as pool:
        # checkpoints are evaluated by evaluate.ipynb, each in its own kernel process
        futs = {pool.submit(build_report, s, dataset=dataset, out=out / n, label=n,
                            evaluate_in_process=not in_kernels, **kwargs): i
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


#: The numbers of each report in ``index.html``: the exact rule in its three conventions,
#: then the graded metrics (what a checkpoint that solves little still gets right).
INDEX_COLUMNS = ("pass@2", "pass@2_per_output", "pass@2_all_or_nothing", "shape_accuracy",
                 "cell_accuracy_right_shape", "partial_credit")


def _write_index(out: Path, results: Sequence[ReportResult], *, overwrite: bool) -> Path:
    """``out/index.html`` (:data:`INDEX_HTML`): one row per report with its headline
    numbers (escaped)."""
    rows = []
    for r in results:
        s = summary_of(r.metrics)
        # a relative path, percent-encoded: a folder named ``javascript:alert(1)`` stays a
        # folder (``./javascript%3Aalert%281%29/report.html``), never a scheme
        rel = f"./{quote(r.out.name, safe='')}/{REPORT_HTML}"
        values = [fmt_fraction(s.get(k)) if is_scored(s) else "not scored (no truth)"
                  for k in INDEX_COLUMNS]
        rows.append(f"<tr><td class='arcnb-text'><a href='{_esc(rel)}'>{_esc(r.label)}</a>"
                    f"</td>" + "".join(f"<td>{_esc(v)}</td>" for v in values) + "</tr>")
    page = html_page("arcnb reports", "<h1>arcnb reports</h1><div class='arcnb-scroll'><table>"
                     "<thead><tr><th class='arcnb-text'>run</th>" +
                     "".join(f"<th>{_esc(column_label(k))}</th>" for k in INDEX_COLUMNS) +
                     "</tr></thead><tbody>" + "".join(rows) + "</tbody></table></div>")
    return OutputFolder(out).write({INDEX_HTML: page.encode("utf-8")},
                                   overwrite=overwrite)[0]
