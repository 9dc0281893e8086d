"""A shipped notebook's code run in the test's own process, without a kernel: the
notebook's own cells, so that what a page shows is tested in milliseconds; each
notebook is executed in a real kernel by its one notebook test."""
from __future__ import annotations

import json


def notebook_cells_here(name: str, params: dict, *, only=()) -> list:
    """The shipped notebook ``name``'s code cells executed in this process, no kernel, in
    the order a kernel runs them: the parameters cell, then ``params`` assigned after it
    (as the injected-parameters cell does), then each code cell (with ``only``, those
    whose source holds one of these strings). Returns the value of each executed cell's
    last expression (what the cell shows)."""
    import ast

    from arcnb.report.notebooks import notebook_path

    # the notebook's JSON read as it is (importing nbformat takes seconds)
    nb = json.loads(notebook_path(name).read_text(encoding="utf-8"))
    scope: dict = {}
    shown = []
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] != "code":
            continue
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            exec(source, scope)
            scope.update(params)
            continue
        if only and not any(s in source for s in only):
            continue
        tree = ast.parse(source)
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, f"{name}.ipynb", "exec"), scope)
        shown.append(None if last is None else
                     eval(compile(ast.Expression(last.value), f"{name}.ipynb", "eval"), scope))
    return shown


def run_notebook_here(ran: list):
    """A stand-in for :func:`arcnb.report.notebooks.run_notebook` (monkeypatch it where a
    command calls it) that runs the notebook's cells in this process, in an empty
    temporary folder (as its kernel starts in a private, empty folder), with the
    parameters papermill would inject; each call appends ``(notebook, output, shown)``
    to ``ran`` (``shown``: what its cells display) and returns ``output``, as
    ``run_notebook`` does."""
    import contextlib
    import tempfile

    def run(notebook, output, parameters=None, **kw):
        with tempfile.TemporaryDirectory(prefix="arcnb-kernel-") as work, \
                contextlib.chdir(work):
            shown = notebook_cells_here(str(notebook), dict(parameters or {}))
        ran.append((notebook, output, shown))
        return output

    return run
