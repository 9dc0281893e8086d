"""Running notebooks with papermill and exporting them as self-contained HTML.

A notebook runs through papermill with the ``python3`` kernel; the executed notebook
is exported with nbconvert and arcnb's template (``arcnb/templates/arcnb_report``):
code hidden, images embedded as ``data:`` URIs, no script and no stylesheet from the
network (the default template's require.js, MathJax and Mermaid CDN scripts are
dropped and a Content-Security-Policy forbids any script or remote resource).

When a cell fails, the partly executed notebook and an HTML page showing the error
are still written, and :class:`NotebookError` names the failing cell (its index,
execution count, exception name and message).
"""
from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Mapping

from ..errors import ArcnbError, NotebookError, one_line, refuse_overwrite
from ..io import atomic_write_text
from ..resources import notebook, templates_dir
from .html import _esc

__all__ = ["NotebookError", "NOTEBOOKS", "KERNEL_NAME", "notebook_path", "run_notebook",
           "insert_contents",
           "export_html"]

#: The notebooks shipped in the package (``arcnb/resources/notebooks/``; name -> file name).
NOTEBOOKS = {
    "evaluate": "evaluate.ipynb",
    "report": "report.ipynb",
    "compare": "compare.ipynb",
    "figures": "figures.ipynb",
    "explore": "explore.ipynb",
}
NOTEBOOKS["sweep"] = "sweep.ipynb"  # a checkpoint sweep's page (arcnb.sweep)

#: papermill always runs notebooks with this kernel.
KERNEL_NAME = "python3"

_TEMPLATE_NAME = "arcnb_report"


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

    return notebook(NOTEBOOKS[stem])


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
            raise refuse_overwrite(target, "pass --overwrite")
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
               f"{one_line(other, first_line=True)}")
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
        first = one_line(failure.source or "", 60, first_line=True)
        msg = (f"{src.name} failed at {where} "
               f"({first or 'empty cell'}): "
               f"{failure.ename}: {one_line(failure.evalue, first_line=True)}"
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
                            extra_template_basedirs=[str(templates_dir())],
                            exclude_input=True, exclude_input_prompt=True,
                            exclude_output_prompt=True, embed_images=True)
    body, _ = exporter.from_notebook_node(nb)
    body = insert_contents(body)
    if error is not None:
        body = _insert_error_banner(body, error, notebook)
    _check_self_contained(body)
    return atomic_write_text(html_path, body, overwrite=overwrite)


# a section heading as nbconvert writes a markdown "##" heading
_H2 = re.compile(r"<h2\b[^>]*\bid=\"([^\"]+)\"[^>]*>(.*?)</h2>", re.S | re.I)


def insert_contents(body: str) -> str:
    """``body`` with a contents list (``<nav id="arcnb-contents">``) after its first
    heading, one link per section heading (``<h2>`` with an ``id``, as nbconvert
    writes markdown ``##`` headings). A page without sections is returned as it is."""
    items = []
    for m in _H2.finditer(body):
        text = re.sub(r"<a\b[^>]*class=\"anchor-link\"[^>]*>.*?</a>", "", m.group(2), flags=re.S)
        text = re.sub(r"<[^>]+>", "", text).strip()
        items.append(f"<li><a href=\"#{m.group(1)}\">{text}</a></li>")
    if not items:
        return body
    nav = ("<nav class=\"arcnb-contents\" id=\"arcnb-contents\"><p><b>Contents</b></p><ul>"
           + "".join(items) + "</ul></nav>")
    end = re.search(r"</h1>", body, re.I)
    if end is None:
        i = body.find("<main>")
        at = i + len("<main>") if i >= 0 else 0
    else:
        at = end.end()
    return body[:at] + nav + body[at:]


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
