"""Execute arcnb's notebooks on the embedded default for the documentation's example pages.

    .venv/bin/python docs/execute_notebooks.py            # every notebook, 2 at a time
    .venv/bin/python docs/execute_notebooks.py --reuse    # skip notebooks already executed

Each notebook in ``notebooks/`` runs with papermill (kernel ``python3``) on its own
default parameters, the embedded default, into ``docs/examples/NAME.ipynb``; the files
the notebooks write (the evaluate notebook's run directory, the figures notebook's
figures, the comparison's tables) go under ``docs/_build/notebooks/`` instead of
``reports/``. Neither folder is committed. The checkout's absolute path is shown as
relative paths in the outputs. Sphinx (myst-nb, execution off) renders the
executed copies as they are: every output on the example pages comes from this run.

The explore notebook's browser is an ipywidgets widget, which a static page cannot
run. nbclient keeps the widgets' state in the executed notebook; the picture the
browser's Image widget showed is added to that output as ``image/png`` (next to the
widget's own data), so the page shows the first view of the real run.
"""
from __future__ import annotations

import argparse
import base64
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS_DIR = ROOT / "notebooks"
DOCS = ROOT / "docs"
EXAMPLES = DOCS / "examples"
WORK = DOCS / "_build" / "notebooks"

#: The example pages, in the order of the docs' table of contents.
ORDER = ["report", "evaluate", "compare", "figures", "figures-page", "explore", "sweep", "arc3"]
#: Example pages that run a notebook with other parameters: page -> notebook.
#: figures-page: the figures notebook at the full text width (two columns, 7.2 in).
VARIANTS = {"figures-page": "figures"}

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def notebook_names() -> list[str]:
    """Every notebook of ``notebooks/``: those of :data:`ORDER` first, then any other."""
    found = sorted(p.stem for p in NOTEBOOKS_DIR.glob("*.ipynb"))
    found += [v for v, nb in VARIANTS.items() if nb in found]
    return [n for n in ORDER if n in found] + [n for n in found if n not in ORDER]


def parameters(name: str) -> dict:
    """The embedded default: no parameter changed but where files are written
    (relative to the notebook's working directory, ``docs/_build/notebooks/NAME``)."""
    return {
        "evaluate": {"out": "run", "overwrite": True},
        "figures": {"out": "figures", "overwrite": True},
        "figures-page": {"out": "figures", "width": "page", "overwrite": True},
        "compare": {"out": "tables", "overwrite": True},
        "sweep": {"example_dir": "sweep-example"},
    }.get(name, {})


def execute(name: str) -> tuple[str, float]:
    # arcnb's one way to run a notebook: its kernel starts in `work` without changing
    # this process's directory (the notebooks run in threads, two at a time)
    from arcnb.report.notebooks import run_notebook

    t0 = time.perf_counter()
    work = WORK / name
    work.mkdir(parents=True, exist_ok=True)
    out = EXAMPLES / f"{name}.ipynb"
    run_notebook(NOTEBOOKS_DIR / f"{VARIANTS.get(name, name)}.ipynb", out, parameters(name),
                 cwd=work, progress=False, overwrite=True)
    add_widget_pictures(out)
    relativize_paths(out)
    return name, time.perf_counter() - t0


def relativize_paths(path: Path) -> int:
    """Show the checkout's absolute path as relative paths in the text outputs and the
    papermill metadata (the pages must not show where they were built). Returns how
    many strings changed."""
    import nbformat

    nb = nbformat.read(str(path), as_version=4)
    root = str(ROOT)
    changed = 0

    def fix(text: str) -> str:
        nonlocal changed
        new = text.replace(root + "/", "").replace(root, ".")
        changed += new != text
        return new

    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if "text" in output:
                output["text"] = fix(output["text"])
            for mime, value in output.get("data", {}).items():
                if mime.startswith("text/") and isinstance(value, str):
                    output["data"][mime] = fix(value)
    pm_meta = nb.metadata.get("papermill", {})
    for key in ("input_path", "output_path"):
        if isinstance(pm_meta.get(key), str):
            pm_meta[key] = fix(pm_meta[key])
    for key, value in list(pm_meta.get("parameters", {}).items()):
        if isinstance(value, str):
            pm_meta["parameters"][key] = fix(value)
    nbformat.write(nb, str(path))
    return changed


def add_widget_pictures(path: Path) -> int:
    """Give each widget output whose widget holds an Image widget the PNG that Image
    showed (``image/png`` beside the widget's own data). Returns how many were added."""
    import nbformat

    nb = nbformat.read(str(path), as_version=4)
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    added = 0
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(WIDGET_VIEW)
            if not view or "image/png" in output["data"]:
                continue
            png = _first_image(view["model_id"], state, set())
            if png is not None:
                output["data"]["image/png"] = base64.b64encode(png).decode("ascii")
                added += 1
    if added:
        nbformat.write(nb, str(path))
    return added


def _first_image(model_id: str, state: dict, seen: set) -> bytes | None:
    """Depth-first: the first ImageModel under ``model_id`` (its ``value`` buffer)."""
    if model_id in seen or model_id not in state:
        return None
    seen.add(model_id)
    model = state[model_id]
    if model.get("model_name") == "ImageModel":
        for buf in model.get("buffers", []):
            if buf.get("path") == ["value"]:
                return base64.b64decode(buf["data"])
        return None
    children = model.get("state", {}).get("children", [])
    for child in children:
        ref = child[len("IPY_MODEL_"):] if isinstance(child, str) else None
        if ref:
            png = _first_image(ref, state, seen)
            if png is not None:
                return png
    return None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reuse", action="store_true",
                    help="keep an executed copy that is newer than its notebook")
    ap.add_argument("--jobs", type=int, default=2, help="notebooks executed at once")
    ap.add_argument("names", nargs="*", help="notebooks to execute (default: all)")
    args = ap.parse_args(argv)
    names = args.names or notebook_names()
    EXAMPLES.mkdir(parents=True, exist_ok=True)
    todo = []
    for n in names:
        out = EXAMPLES / f"{n}.ipynb"
        src = NOTEBOOKS_DIR / f"{VARIANTS.get(n, n)}.ipynb"
        if args.reuse and out.exists() and out.stat().st_mtime > src.stat().st_mtime:
            print(f"{n}: kept {out.relative_to(ROOT)}")
            continue
        todo.append(n)
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for name, dt in pool.map(execute, todo):
            print(f"{name}: executed in {dt:.1f} s -> docs/examples/{name}.ipynb")
    if todo:
        print(f"{len(todo)} notebooks in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
