"""Running notebooks with papermill and exporting them as self-contained HTML.

A notebook runs through papermill with the ``python3`` kernel; the executed notebook
is exported with nbconvert and arcnb's template (``arcnb/templates/arcnb_report``):
code hidden, images embedded as ``data:`` URIs, no script and no stylesheet from the
network (the default template's require.js, MathJax and Mermaid CDN scripts are
dropped and a Content-Security-Policy forbids any script or remote resource).

When a cell fails, the partly executed notebook and an HTML page showing the error
are still written, and :class:`NotebookError` names the failing cell (its index,
execution count, exception name and message).

Every kernel arcnb starts (:func:`run_notebook`, :class:`WarmKernel`) starts in a
private, empty working directory of its own (never the notebook's or the output
folder, which may hold files someone else left there: a ``pandas.py`` there would be
imported in place of pandas), with ``PYTHONSAFEPATH=1`` and IPython told not to put
the working directory on ``sys.path`` (:data:`KERNEL_ENV`, :data:`KERNEL_ARGUMENTS`),
and without IPython's history (which would write every cell, paths included, into
the ``history.sqlite`` shared by every kernel of the user). The notebooks get every
path as an absolute one.
"""
from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
import threading
import tempfile
from pathlib import Path
from typing import Mapping, Sequence

from ..data import DATASETS, load_dataset
from ..errors import ArcnbError, NotebookError, one_line, refuse_overwrite
from ..io import atomic_write_text
from ..plot.paper import figure_bytes
from ..plot.palette import pyplot
from ..resources import notebook, templates_dir
from ..taxonomy import structural_taxonomy
from .references import bundled_reference, reference_run
from ..html import CSP, PAGE_CSS, check_self_contained as _check_self_contained
from ..html import escape as _esc
from ..html import insert_contents

__all__ = ["NotebookError", "NOTEBOOKS", "KERNEL_NAME", "KERNEL_ENV", "KERNEL_ARGUMENTS",
           "notebook_path", "run_notebook", "cell_times", "export_html", "prepare_export"]

#: The notebooks shipped in the package (``arcnb/resources/notebooks/``; name -> file name).
NOTEBOOKS = {
    "evaluate": "evaluate.ipynb",
    "report": "report.ipynb",
    "compare": "compare.ipynb",
    "figures": "figures.ipynb",
    "explore": "explore.ipynb",
}
NOTEBOOKS["sweep"] = "sweep.ipynb"  # a checkpoint sweep's page (arcnb.sweep)
NOTEBOOKS["arc3"] = "arc3.ipynb"  # ARC-AGI-3 recordings' report (arcnb.report.arc3)

#: papermill always runs notebooks with this kernel.
KERNEL_NAME = "python3"

#: What every kernel arcnb starts gets in its environment: Python puts neither the
#: working directory nor a script's folder on ``sys.path`` (Python 3.11 and later).
KERNEL_ENV = {"PYTHONSAFEPATH": "1"}
#: ... and on its command line: IPython adds no working directory to ``sys.path``
#: either, and keeps no history (every cell, paths included, would go into
#: ``~/.ipython/profile_default/history.sqlite``, outside the output folder and shared
#: by every report run at once).
KERNEL_ARGUMENTS = ("--InteractiveShellApp.ignore_cwd=True", "--HistoryManager.enabled=False")

_TEMPLATE_NAME = "arcnb_report"


def notebook_libraries(papermill: bool = False) -> None:
    """Import ``jsonschema`` (which nbformat, papermill and nbconvert import) without the
    IRI grammars of ``rfc3987_syntax``: when that package is installed (Jupyter's
    ``jsonschema[format-nongpl]`` brings it), jsonschema compiles about 40 parser
    grammars at import for format checks a notebook's validation never uses, which is
    most of the time papermill takes to import. Later
    imports of ``rfc3987_syntax`` itself work as usual; a no-op once jsonschema is in.
    ``papermill=True`` then imports papermill too (what a thread does while a report's
    run is made; an error is left for the notebook's run to meet)."""
    if "jsonschema" not in sys.modules and "rfc3987_syntax" not in sys.modules:
        sys.modules["rfc3987_syntax"] = None  # ``import rfc3987_syntax`` raises ImportError
        try:
            import jsonschema  # noqa: F401
        finally:
            del sys.modules["rfc3987_syntax"]
    if papermill:
        try:
            import papermill  # noqa: F401
        except Exception:  # noqa: BLE001 - the notebook's run reports it
            pass


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


def warm_up(dataset: str, references: Sequence[str] = ()) -> None:
    """What a report's kernel does while it waits for its run (:class:`WarmKernel`): read
    the bundled ``dataset`` (kept by the loader for the notebook's ``arcnb.open``), find
    its tasks' structural categories (kept per task for the breakdowns), score the
    bundled ``references`` on all its tasks (kept by
    :func:`arcnb.report.references.reference_run` for a run of every task with the
    report's default K, bootstrap and seed) and draw one small figure (matplotlib's
    first drawing loads its fonts). Only a bundled dataset name and bundled references
    are read, never a user's path."""
    if dataset not in DATASETS:
        return
    ds = load_dataset(dataset)
    structural_taxonomy(ds)
    for spec in references:
        if bundled_reference(spec):
            reference_run(spec, ds)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(1, 1))
    ax.set_title("arcnb")
    figure_bytes(fig, "png", bbox_inches="tight")
    plt.close(fig)


class WarmKernel:
    """A ``python3`` kernel started in the background, with the report's modules imported
    in it, while this process does other work (evaluating a checkpoint, scoring a
    predictions file): :func:`run_notebook` (``kernel=``) executes on it, so the
    kernel's start and imports overlap that work instead of following it. Started in
    a private working directory of its own (never the notebook's folder: see the
    module docstring); :meth:`close` shuts it down and removes that folder
    (``run_notebook`` does, once it has run)."""

    #: what the kernel imports while it waits (``IPKernelApp.exec_lines``)
    PRELOAD = "import arcnb.report.sections, matplotlib.pyplot"

    def __init__(self, dataset: str | None = None, references: Sequence[str] = ()):
        self.preload = self.preload_for(dataset, references)
        self.folder = tempfile.mkdtemp(prefix="arcnb-kernel-")
        self.manager = _kernel_manager(self.folder)(kernel_name=KERNEL_NAME)
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._start, name="arcnb-warm-kernel",
                                        daemon=True)
        self._thread.start()

    @classmethod
    def preload_for(cls, dataset: str | None, references: Sequence[str] = ()) -> str:
        """The kernel's preload line: :attr:`PRELOAD`, and for a bundled dataset name
        (never a user's path or text) :func:`warm_up` of it and of the report's
        ``references`` (``copy-input`` and bundled files; others are left out)."""
        if str(dataset) not in DATASETS:
            return cls.PRELOAD
        refs = [str(r) for r in references or () if bundled_reference(r)]
        return (f"{cls.PRELOAD}; import arcnb.report.notebooks as _n; "
                f"_n.warm_up({str(dataset)!r}, {refs!r})")

    def _start(self) -> None:
        try:
            asyncio.run(self.manager.start_kernel(
                extra_arguments=[f"--IPKernelApp.exec_lines={self.preload}"]))
        except Exception as exc:  # noqa: BLE001 - then the notebook starts its own kernel
            self.error = exc

    def ready(self):
        """The started kernel's manager (waits for the start), or None when it failed."""
        self._thread.join()
        return self.manager if self.error is None and self.manager.has_kernel else None

    def close(self) -> None:
        """Shut the kernel down (now) and remove its folder; safe to call twice."""
        self._thread.join()
        if self.manager.has_kernel:
            # in a thread of its own: the caller may be inside a running event loop (Jupyter)
            stop = threading.Thread(target=lambda: asyncio.run(
                self.manager.shutdown_kernel(now=True)), daemon=True)
            stop.start()
            stop.join()
        shutil.rmtree(self.folder, ignore_errors=True)


def run_notebook(notebook: str | os.PathLike, output: str | os.PathLike,
                 parameters: Mapping | None = None, *, progress: bool = True,
                 html: str | os.PathLike | None = None, overwrite: bool = False,
                 title: str | None = None,
                 html_on_success: bool = True, kernel=None) -> Path:
    """Execute ``notebook`` with papermill (kernel ``python3``) into ``output``, and export
    it to ``html`` when given.

    The executed notebook is written atomically (papermill saves progress into a
    temporary file beside ``output``, renamed at the end). When a cell raises, the
    partial notebook and an error page (``html``) are still written, then
    :class:`NotebookError` names the failing cell. ``kernel``: a ``WarmKernel`` (this
    module) started earlier to execute on (shut down here, whatever happens). The
    kernel starts in a private, empty working directory (see the module docstring):
    give the notebook absolute paths.
    """
    try:
        return _run_notebook(notebook, output, parameters, progress=progress,
                             html=html, overwrite=overwrite, title=title,
                             html_on_success=html_on_success, kernel=kernel)
    finally:
        if kernel is not None:
            kernel.close()


def _run_notebook(notebook, output, parameters, *, progress, html, overwrite, title,
                  html_on_success, kernel) -> Path:
    notebook_libraries()
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
    # the kernel's own folder (its working directory, its sockets); papermill's `cwd=`
    # is never used: it changes the whole process's directory, which notebooks run from
    # several threads at once (``arcnb report`` of several checkpoints) would swap
    # under each other
    folder = tempfile.mkdtemp(prefix="arcnb-kernel-")
    try:
        try:
            extra = {"kernel_manager_class": _kernel_manager(folder)}
            warm = kernel.ready() if kernel is not None else None
            if warm is not None:
                extra["km"] = warm  # started the same way, the report's modules imported
            # saved once at the end (also after a failing cell), not after every cell:
            # a report's cells carry their figures, and rewriting them all each time
            # costs seconds
            # the kernel is stopped at once when the last cell is done (every output is
            # in by then): a graceful shutdown races ipykernel's own (its control
            # handler can write to a closed socket and print a traceback on stderr)
            pm.execute_notebook(str(src), tmp, parameters=dict(parameters or {}),
                                kernel_name=KERNEL_NAME, progress_bar=progress,
                                log_output=False, request_save_on_cell_execute=False,
                                shutdown_kernel="immediate", **extra)
        except PapermillExecutionError as exc:
            failure = exc
        except (KeyboardInterrupt, ArcnbError):
            raise
        except Exception as exc:  # noqa: BLE001 - a dead kernel, a timeout, ...
            other = exc
        # the notebook goes in place only once it was completely written: a full disk
        # leaves a cut-off file, never a report.ipynb that is not JSON
        complete = _is_complete_notebook(tmp)
        if complete:
            os.chmod(tmp, 0o644)
            os.replace(tmp, output)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
        shutil.rmtree(folder, ignore_errors=True)
    if not complete:
        cause = other if isinstance(other, OSError) else None
        raise NotebookError(_write_failure(output, cause), ename=type(cause).__name__
                            if cause else None, evalue=str(cause) if cause else None)
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


def cell_times(notebook: str | os.PathLike) -> list[tuple[str, float]]:
    """Where an executed notebook's time went, from papermill's records: ``("kernel
    start", s)`` (papermill's start to the first cell), then one ``(name, s)`` per code
    cell that ran: a section's class name for a cell that shows one
    (``S.Colors.from_run(run, options)`` -> ``Colors``), ``setup`` for the cell that opens the
    run (imports included; ``setup and Summary`` when it also shows a section). Empty
    when the notebook holds no such records."""
    import datetime as dt

    notebook_libraries()
    import nbformat

    nb = nbformat.read(str(notebook), as_version=4)

    def when(text):
        return dt.datetime.fromisoformat(str(text).replace("Z", "+00:00"))

    out = []
    meta = nb.metadata.get("papermill") or {}
    cells = [c for c in nb.cells if (c.metadata.get("papermill") or {}).get("start_time")]
    if meta.get("start_time") and cells:
        first = when(cells[0].metadata["papermill"]["start_time"])
        out.append(("kernel start", max(0.0, (first - when(meta["start_time"])).total_seconds())))
    for c in cells:
        if c.cell_type != "code" or "parameters" in c.metadata.get("tags", []) \
                or "injected-parameters" in c.metadata.get("tags", []):
            continue
        m = re.search(r"^S\.([A-Z]\w*)\.from_run\(", c.source, re.M)
        name = m.group(1) if m else ""
        if re.search(r"^(run|sw|cmp|source) = ", c.source, re.M):  # imports, opening the run
            name = f"setup and {name}" if name else "setup"
        out.append((name or "cell", float(c.metadata["papermill"].get("duration") or 0.0)))
    return out


def _is_complete_notebook(path) -> bool:
    """Whether ``path`` holds a whole notebook (it parses as one)."""
    notebook_libraries()
    import nbformat

    try:
        return os.path.getsize(path) > 0 and bool(nbformat.read(str(path), as_version=4)
                                                  .get("cells") is not None)
    except Exception:  # noqa: BLE001 - cut-off JSON, unreadable file
        return False


def _write_failure(path: Path, exc: OSError | None) -> str:
    """One line saying that ``path`` could not be written, and why (a full disk named
    by its folder and free space)."""
    import errno

    folder = Path(path).resolve().parent
    if exc is not None and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        try:
            free = f", {shutil.disk_usage(folder).free // 1024} KiB free"
        except OSError:
            free = ""
        return (f"could not write {path}: no space left on the disk holding {folder}{free}; "
                "nothing was replaced (free some space and run again)")
    why = f"{exc.strerror or exc}" if exc is not None else "the notebook was cut off"
    return f"could not write {path} ({why}, in {folder}); nothing was replaced"


def _kernel_manager(folder: str):
    """A kernel manager class whose kernels start in ``folder/work`` (``folder``: a
    private temporary folder; ``work`` is made empty), whatever working directory they
    are asked for, with :data:`KERNEL_ENV` in their environment and
    :data:`KERNEL_ARGUMENTS` on their command line, so that nothing is imported from
    a folder of data or outputs; they talk over Unix sockets in ``folder`` instead of
    TCP on localhost (not on Windows): nothing listens on a port, and the kernel has
    no reason to print its warning about unencrypted TCP."""
    from jupyter_client.manager import AsyncKernelManager

    work = os.path.join(folder, "work")
    os.makedirs(work, mode=0o700, exist_ok=True)

    class _SafeKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs):
            if os.name != "nt":
                kwargs.setdefault("transport", "ipc")
                kwargs.setdefault("ip", os.path.join(folder, "kernel"))
            super().__init__(**kwargs)

        async def _async_pre_start_kernel(self, **kw):
            kw["cwd"] = work
            kw["env"] = {**(kw.get("env") or os.environ), **KERNEL_ENV}
            kw["extra_arguments"] = [*KERNEL_ARGUMENTS, *(kw.get("extra_arguments") or ())]
            return await super()._async_pre_start_kernel(**kw)

    return _SafeKernelManager


#: the HTML exporter, made once per process (its template is compiled once) and used
#: by one export at a time
_EXPORTER: list = []
_EXPORTER_LOCK = threading.Lock()


def _export_body(nb) -> str:
    """The page nbconvert makes of notebook node ``nb`` with arcnb's template."""
    with _EXPORTER_LOCK:
        if not _EXPORTER:
            notebook_libraries()
            from nbconvert import HTMLExporter

            _EXPORTER.append(HTMLExporter(template_name=_TEMPLATE_NAME,
                                          extra_template_basedirs=[str(templates_dir())],
                                          exclude_input=True, exclude_input_prompt=True,
                                          exclude_output_prompt=True, embed_images=True))
        body, _ = _EXPORTER[0].from_notebook_node(nb, resources={"arcnb_csp": CSP,
                                                                 "arcnb_css": PAGE_CSS})
    return body


def prepare_export() -> threading.Thread:
    """Make the notebook libraries and the HTML exporter ready in a background thread
    (import papermill's libraries and nbconvert, compile the template, export a
    one-cell notebook in memory) while other work goes on (a report's run being made),
    so that the export that follows does only its own work. Returns the thread; an
    error there is left for the real export to meet."""
    def work():
        try:
            notebook_libraries(papermill=True)
            import nbformat

            nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("## arcnb"),
                                                 nbformat.v4.new_code_cell("1")])
            insert_contents(_export_body(nb))
        except Exception:  # noqa: BLE001 - the real export reports it
            pass

    thread = threading.Thread(target=work, name="arcnb-prepare-export", daemon=True)
    thread.start()
    return thread


def export_html(notebook: str | os.PathLike, html_path: str | os.PathLike, *,
                overwrite: bool = False, error: Mapping | None = None,
                title: str | None = None) -> Path:
    """Export an executed notebook to a self-contained HTML page.

    Code cells are hidden (``exclude_input``), images are embedded, and the page loads
    nothing from the network. ``error`` (the failing cell's ``cell_index``,
    ``exec_count``, ``ename``, ``evalue``, ``source``) adds an escaped banner at the top.
    """
    notebook_libraries()
    import nbformat

    nb = nbformat.read(str(notebook), as_version=4)
    if title:
        nb.metadata["title"] = str(title)
    body = _export_body(nb)
    body = insert_contents(body)
    if error is not None:
        body = _insert_error_banner(body, error, notebook)
    _check_self_contained(body)
    try:
        return atomic_write_text(html_path, body, overwrite=overwrite)
    except OSError as exc:
        if isinstance(exc, (FileExistsError, IsADirectoryError)) or exc.errno is None:
            raise
        raise ArcnbError(_write_failure(Path(html_path), exc)) from exc


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
