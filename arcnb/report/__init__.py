"""Parameterized notebooks executed with papermill and exported as self-contained HTML.

Everything the notebooks and ``arcnb report`` use imports from here
(``from arcnb import report as R``); the work is split in four modules:

* :mod:`arcnb.report.html`: **HTML fragments** (:func:`headline_html`,
  :func:`table_html`, :func:`provenance_html`, ...) and :func:`show` /
  :func:`show_figure`, which the cells of ``notebooks/*.ipynb`` call. Every string
  from the user (task ids, paths, category names) is escaped, so a task id such as
  ``<script>`` shows as text, never as markup.
* :mod:`arcnb.report.sources`: what a report is built from (the embedded default,
  :func:`resolve_source`, :func:`make_run`) and :func:`open_run`, which gives the
  notebooks an :class:`arcnb.runs.Run`.
* :mod:`arcnb.report.notebooks`: **running and exporting** notebooks
  (:func:`run_notebook`, :func:`export_html`): papermill with the ``python3``
  kernel, then nbconvert with arcnb's template (``arcnb/templates/arcnb_report``):
  code hidden, images embedded as ``data:`` URIs, no script and no stylesheet from
  the network (the default template's require.js, MathJax and Mermaid CDN scripts
  are dropped and a Content-Security-Policy forbids any script or remote resource).
* :mod:`arcnb.report.references`: **reference points** (copy-the-input, the bundled
  program-search predictions) scored on the report's tasks and set beside the model
  (:func:`reference_runs`, :func:`reference_table`, :func:`reference_categories`).
* :mod:`arcnb.report.build`: **building** one report, many at once, or a
  comparison's (:func:`build_report`, :func:`build_reports`,
  :func:`build_compare_report`), behind ``arcnb report``.
* :mod:`arcnb.report.unscored`: what the report shows for an unscored run (a hidden
  test set, no truth): :func:`no_truth_html` and :func:`predictions_gallery`.

The run directory itself (its files, provenance, the compact reporting line) is
:mod:`arcnb.runs`; :func:`provenance`, :func:`compact_line` and :func:`read_metrics`
are re-exported here.

When a cell fails, the partly executed notebook and an HTML page showing the error
are still written, and :class:`NotebookError` names the failing cell (its index,
execution count, exception name and message).
"""
from __future__ import annotations

# re-exports: the names the notebooks, the CLI and users import from arcnb.report
from ..runs import Run, compact_line, read_metrics
from ..runs import flat_provenance as provenance
from .build import (INDEX_HTML, NO_TRUTH_TAG, ReportResult, build_compare_report, build_report,
                    build_reports, source_name)
from .cost import cost_results
from .html import (BREAKDOWN_COLUMNS, BREAKDOWN_METRICS, breakdown_html, cost_html, cut_note,
                   definitions_html, file_table, graded_table_html, headline_html, lead_html,
                   note_html, provenance_html, reference_html, run_files, show, show_figure,
                   table_html)
from .notebooks import (KERNEL_NAME, NOTEBOOKS, NotebookError, export_html, notebook_path,
                        run_notebook)
from .references import (COPY_INPUT, reference_categories, reference_label, reference_long,
                         reference_runs, reference_table)
from .sources import (DEFAULT_DATASET, default_compare_runs, default_out, default_references,
                      default_source, figures_dir, make_run, open_run, require_scored,
                      resolve_references, resolve_source, as_source)
from .unscored import no_truth_html, predictions_gallery
from .html import refuse_existing  # noqa: E402 - a notebook checks its files before writing

__all__ = [
    "NotebookError",
    "Run",
    "ReportResult",
    "NOTEBOOKS",
    "notebook_path",
    "default_source",
    "open_run",
    "require_scored",
    "resolve_source",
    "make_run",
    "default_out",
    "headline_html",
    "table_html",
    "cut_note",
    "definitions_html",
    "breakdown_html",
    "provenance_html",
    "provenance",
    "compact_line",
    "show",
    "show_figure",
    "refuse_existing",
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
    "no_truth_html",
    "predictions_gallery",
    "BREAKDOWN_METRICS",
    "graded_table_html",
    "lead_html",
    "note_html",
    "reference_html",
    "cost_html",
    "COPY_INPUT",
    "default_references",
    "resolve_references",
    "reference_label",
    "reference_runs",
    "reference_table",
    "reference_long",
    "reference_categories",
    "cost_results",
    "as_source",
    "source_name",
]

# the report page's opening paragraph and its contents list
from .html import percent_text, summary_html  # noqa: E402
from .notebooks import insert_contents  # noqa: E402

__all__ += ["summary_html", "percent_text", "insert_contents"]
