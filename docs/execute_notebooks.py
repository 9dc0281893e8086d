"""Execute arcnb's notebooks on the embedded default for the documentation's example pages.

    .venv/bin/python docs/execute_notebooks.py            # every notebook, 2 at a time
    .venv/bin/python docs/execute_notebooks.py --reuse    # skip notebooks already executed
    .venv/bin/python docs/execute_notebooks.py --given report=OUT/report.ipynb
                                # a page's notebook as a run of its command already wrote it

Each notebook in ``notebooks/`` runs with papermill (kernel ``python3``) on its own
default parameters, the embedded default, into ``docs/examples/NAME.ipynb``; the report
and ARC-AGI-3 pages are what arcnb's own commands write (``arcnb report --default``,
which ``make report`` runs, and ``arcnb arc3 report``: their notebook is copied); the files
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
import os
import shutil
import subprocess
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

#: Pages that are what an arcnb command writes: page -> (the command's arguments, with
#: ``{out}`` its output folder; the notebook it writes there).
COMMANDS = {
    "report": (["report", "--default", "--out", "{out}", "--overwrite", "--no-progress"],
               "report.ipynb"),
    "arc3": (["arc3", "report", "--out", "{out}", "--overwrite"], "arc3.ipynb"),
}

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def notebook_names() -> list[str]:
    """Every notebook of ``notebooks/``: those of :data:`ORDER` first, then any other."""
    found = sorted(p.stem for p in NOTEBOOKS_DIR.glob("*.ipynb"))
    found += [v for v, nb in VARIANTS.items() if nb in found]
    return [n for n in ORDER if n in found] + [n for n in found if n not in ORDER]


def parameters(name: str, work: Path) -> dict:
    """The embedded default: no parameter changed but where files are written (inside
    ``work``, ``docs/_build/notebooks/NAME``; absolute, as a kernel starts in a private
    folder of its own)."""
    return {
        "evaluate": {"out": str(work / "run"), "overwrite": True},
        "figures": {"out": str(work / "figures"), "overwrite": True},
        "figures-page": {"out": str(work / "figures"), "width": "page", "overwrite": True},
        "compare": {"out": str(work / "tables"), "overwrite": True},
        "sweep": {"example_dir": str(work / "sweep-example")},
    }.get(name, {})


def execute(name: str, given: Path | None = None) -> tuple[str, float]:
    """Execute page ``name`` into ``docs/examples/NAME.ipynb``, or take ``given`` (the
    notebook a run of the page's command in :data:`COMMANDS` wrote) as it."""
    # arcnb's one way to run a notebook: its kernel starts in a private folder of its own
    # without changing this process's directory (the notebooks run in threads, two at
    # a time); what it writes goes into `work`
    from arcnb.report.notebooks import run_notebook

    t0 = time.perf_counter()
    work = WORK / name
    out = EXAMPLES / f"{name}.ipynb"
    moved = {}
    if given is not None:  # written by the page's command into given's folder
        shutil.copyfile(given, out)
        moved = {str(Path(given).resolve().parent): str(work)}
    elif name in COMMANDS:
        args, notebook = COMMANDS[name]
        shutil.rmtree(work, ignore_errors=True)
        work.parent.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
        proc = subprocess.run([sys.executable, "-m", "arcnb"] +
                              [a.format(out=work) for a in args],
                              capture_output=True, text=True, env=env, cwd=ROOT)
        if proc.returncode:
            raise RuntimeError(f"{name}: arcnb {' '.join(args[:2])} failed: "
                               f"{proc.stderr.strip()[-2000:]}")
        shutil.copyfile(work / notebook, out)
    else:
        work.mkdir(parents=True, exist_ok=True)
        run_notebook(NOTEBOOKS_DIR / f"{VARIANTS.get(name, name)}.ipynb", out,
                     parameters(name, work.resolve()), progress=False, overwrite=True)
    add_widget_pictures(out)
    relativize_paths(out, moved)
    return name, time.perf_counter() - t0


def relativize_paths(path: Path, moved: dict | None = None) -> int:
    """Show the checkout's absolute path as relative paths in the text outputs and the
    papermill metadata (the pages must not show where they were built); ``moved``
    (folder -> folder) first names a given notebook's folder as the page's own work
    folder. Returns how many strings changed."""
    import nbformat

    nb = nbformat.read(str(path), as_version=4)
    root = str(ROOT)
    changed = 0

    def fix(text: str) -> str:
        nonlocal changed
        new = text
        for old, now in (moved or {}).items():
            new = new.replace(old, now)
        new = new.replace(root + "/", "").replace(root, ".")
        changed += new != text
        return new

    for cell in nb.cells:
        if "injected-parameters" in cell.get("metadata", {}).get("tags", []):
            cell["source"] = fix(cell["source"])  # papermill's cell of the given values
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
        elif isinstance(value, list):
            pm_meta["parameters"][key] = [fix(v) if isinstance(v, str) else v for v in value]
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
    ap.add_argument("--given", action="append", default=[], metavar="PAGE=NOTEBOOK",
                    help="a page of COMMANDS taken from the notebook its command already "
                         "wrote (e.g. report=reports/default/report.ipynb)")
    ap.add_argument("names", nargs="*", help="notebooks to execute (default: all)")
    args = ap.parse_args(argv)
    names = args.names or notebook_names()
    given = {}
    for item in args.given:
        page, _, path = item.partition("=")
        if page not in COMMANDS or not Path(path).is_file():
            ap.error(f"--given {item}: PAGE is one of {', '.join(COMMANDS)} and NOTEBOOK "
                     "a file")
        given[page] = Path(path)
    EXAMPLES.mkdir(parents=True, exist_ok=True)
    todo = []
    for n in names:
        out = EXAMPLES / f"{n}.ipynb"
        src = NOTEBOOKS_DIR / f"{VARIANTS.get(n, n)}.ipynb"
        if n in given:
            continue
        if args.reuse and out.exists() and out.stat().st_mtime > src.stat().st_mtime:
            print(f"{n}: kept {out.relative_to(ROOT)}")
            continue
        todo.append(n)
    for page, path in given.items():
        execute(page, path)
        print(f"{page}: taken from {path}")
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for name, dt in pool.map(execute, todo):
            print(f"{name}: executed in {dt:.1f} s -> docs/examples/{name}.ipynb")
    if todo:
        print(f"{len(todo)} notebooks in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
