"""Reports: a report is a list of sections, run as a notebook and exported as one
self-contained HTML page.

* :mod:`arcnb.report.sections`: **the sections**, one display object per view of a run
  (``sections.Colors.from_run(run)`` computes it, shows itself in JupyterLab, holds its
  ``.tables``, draws with ``.plot(ax=None)``), and the pages as lists of sections
  (``sections.REPORT``, ``COMPARE``, ``SWEEP``, ``FIGURES``).
* the verbs: :func:`build_report` (behind ``arcnb report``), :func:`build_reports`
  (several at once, with an index page), :func:`build_compare_report` (behind
  ``arcnb compare --report``), :func:`run_notebook` (papermill with the ``python3``
  kernel) and :func:`export_html` (nbconvert with arcnb's template: code hidden, images
  embedded, a Content-Security-Policy that forbids any script or remote resource);
* the few helpers the shipped notebooks call (what a report is built from, as a typed
  source of :mod:`arcnb.front`: :mod:`arcnb.report.sources`); runs are opened by the
  front door, ``arcnb.open``.

The pieces behind the sections live in their modules: :mod:`arcnb.report.html` (the
report's HTML fragments; the page look and escaping are :mod:`arcnb.html`),
:mod:`arcnb.report.references` (reference points), :mod:`arcnb.report.cost`,
:mod:`arcnb.report.candidates`, :mod:`arcnb.report.overlap`,
:mod:`arcnb.report.unscored`, :mod:`arcnb.report.notebooks`, :mod:`arcnb.report.build`.

When a cell fails, the partly executed notebook and an HTML page showing the error
are still written, and :class:`NotebookError` names the failing cell.
"""
from __future__ import annotations

from . import sections
from .build import (INDEX_HTML, ReportResult, build_compare_report, build_report, build_reports)
from .html import refuse_existing
from .notebooks import NOTEBOOKS, NotebookError, export_html, notebook_path, run_notebook
from .sources import (DEFAULT_DATASET, default_compare_runs, default_out, default_references,
                      default_source, figures_dir, make_run, require_scored, resolve_source,
                      source_dataset)

# ``sections`` (the subpackage) is documented on its own page
__all__ = [
    # the verbs
    "build_report", "build_reports", "build_compare_report", "run_notebook", "export_html",
    # what the shipped notebooks and the command line call
    "figures_dir", "resolve_source", "source_dataset", "default_out", "make_run",
    "default_compare_runs", "require_scored", "refuse_existing", "default_source",
    "default_references", "DEFAULT_DATASET", "notebook_path",
    "NOTEBOOKS", "INDEX_HTML", "ReportResult", "NotebookError",
]
