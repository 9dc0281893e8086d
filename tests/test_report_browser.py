"""The HTML report in a real headless Chromium (Debian's ``chromium``, driven by
Playwright with ``executable_path``; no browser is ever downloaded).

Checks: no request leaves the file (only the file:// URL itself and data: URIs), every
image has loaded, no code cell is shown, the headline numbers on the page equal
metrics.json, and HTML in user strings is text, not markup (no script runs).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import _report_fixture as F

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium"
                                        if Path("/usr/bin/chromium").exists() else None)
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]

# drives a headless browser
pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install chromium; "
                             ".ci/run installs it)")]


@pytest.fixture(scope="module")
def page_data(tmp_path_factory):
    from playwright.sync_api import sync_playwright

    info = F.shared_report(tmp_path_factory)
    assert info["returncode"] == 0, info["stderr"]
    html = Path(info["out"]) / "report.html"
    url = html.resolve().as_uri()
    requests, dialogs, console_errors = [], [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            ctx = browser.new_context()

            def route(r):
                requests.append(r.request.url)
                if r.request.url == url or r.request.url.startswith("data:"):
                    r.continue_()
                else:
                    r.abort()

            ctx.route("**/*", route)
            page = ctx.new_page()
            page.on("request", lambda r: requests.append(r.url))
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.on("console", lambda m: console_errors.append(m.text)
                    if m.type == "error" else None)
            page.goto(url, wait_until="load")
            page.wait_for_load_state("networkidle")
            data = page.evaluate("""() => {
                const imgs = Array.from(document.images);
                const visible = (el) => !!(el.offsetWidth || el.offsetHeight ||
                                           el.getClientRects().length);
                return {
                  images: imgs.map(i => ({complete: i.complete, w: i.naturalWidth,
                                           h: i.naturalHeight, src: i.src.slice(0, 30)})),
                  scripts: document.scripts.length,
                  code: Array.from(document.querySelectorAll(
                      '.jp-CodeCell .jp-InputArea, .jp-CodeCell .jp-Cell-inputWrapper, ' +
                      '.jp-InputPrompt, .jp-CodeMirrorEditor, .jp-Editor'))
                      .filter(visible).length,
                  headline: Array.from(document.querySelectorAll('#arcnb-headline td[data-metric]'))
                      .map(td => ({metric: td.dataset.metric, value: td.dataset.value,
                                   text: td.innerText.trim()})),
                  text: document.body.innerText,
                  onAttrs: Array.from(document.querySelectorAll('*')).filter(
                      el => Array.from(el.attributes).some(a => a.name.startsWith('on'))).length,
                  pwned: typeof window.__pwned !== 'undefined',
                  align: Array.from(document.querySelectorAll('table.arcnb-table td'))
                      .map(td => ({text: td.classList.contains('arcnb-text'),
                                   align: getComputedStyle(td).textAlign})),
                };
            }""")
        finally:
            browser.close()
    metrics = json.loads((Path(info["out"]) / "metrics.json").read_text())
    return {"url": url, "requests": requests, "dialogs": dialogs, "data": data,
            "metrics": metrics, "console": console_errors}


def test_no_request_leaves_the_file(page_data):
    url = page_data["url"]
    outside = [u for u in page_data["requests"] if u != url and not u.startswith("data:")]
    assert outside == []
    assert url in page_data["requests"]


def test_every_image_loaded(page_data):
    imgs = page_data["data"]["images"]
    assert len(imgs) >= 8
    for i in imgs:
        assert i["complete"] and i["w"] > 0 and i["h"] > 0, i
        assert i["src"].startswith("data:image/"), i


def test_prose_reads_from_the_left_and_numbers_from_the_right(page_data):
    """In the exported notebook page, JupyterLab's own stylesheet right-aligns every
    table cell more specifically than arcnb's rule did: words (the definitions, the
    provenance, ids, rules) showed right-aligned. Every text cell now reads from the
    left, every number from the right."""
    cells = page_data["data"]["align"]
    assert any(c["text"] for c in cells) and any(not c["text"] for c in cells)
    assert {c["align"] for c in cells if c["text"]} == {"left"}
    assert {c["align"] for c in cells if not c["text"]} <= {"right", "end"}


def test_no_code_cell_is_shown(page_data):
    assert page_data["data"]["code"] == 0
    text = page_data["data"]["text"]
    for snippet in ("R.open_run(", "import ", "R.show("):
        assert snippet not in text


def test_headline_numbers_equal_metrics_json(page_data):
    m = page_data["metrics"]
    cells = page_data["data"]["headline"]
    assert {c["metric"] for c in cells} == {f"pass@{k}{s}" for k in (1, 2)
                                            for s in ("", "_per_output", "_all_or_nothing")}
    for c in cells:
        assert float(c["value"]) == m[c["metric"]]
        v = m[c["metric"]]
        assert c["text"] == f"{v:.4f} ({100 * v:.2f}%)"


def test_html_in_user_strings_is_text(page_data):
    d = page_data["data"]
    assert d["scripts"] == 0 and d["onAttrs"] == 0 and not d["pwned"]
    assert page_data["dialogs"] == []
    for s in (F.EVIL_TASK, F.EVIL_CATS[0], F.EVIL_CATS[1], F.EVIL_DIR):
        assert s in d["text"], s


# ------------------------------------------------------------------ layout: contents, width
_LAYOUT_JS = """() => {
    const nav = document.querySelector('#arcnb-contents');
    const links = nav ? Array.from(nav.querySelectorAll('a')).map(a => a.getAttribute('href')) : [];
    const sections = Array.from(document.querySelectorAll('h2[id]')).map(h => '#' + h.id);
    const reachable = links.filter(h => h.startsWith('#') &&
        document.getElementById(decodeURIComponent(h.slice(1))) !== null);
    return {links: links, sections: sections, reachable: reachable,
            width: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth),
            summary: (document.querySelector('#arcnb-summary') || {}).innerText || null};
}"""


@pytest.fixture(scope="module")
def compare_page(tmp_path_factory):
    """A compare report of the shared run against copy-the-input on its tasks."""
    info = F.shared_report(tmp_path_factory)
    base = tmp_path_factory.mktemp("layout")
    copy = base / "copy"
    proc = F.arcnb("evaluate", "--checkpoint", "copy-input", "--dataset", info["dataset"],
                   "--out", copy, "--no-progress")
    assert proc.returncode == 0, proc.stderr
    out = base / "cmp"
    proc = F.arcnb("compare", copy, info["out"], "--labels", "copy the input,shared run",
                   "--out", out, "--report", "--n-boot", "100")
    assert proc.returncode == 0, proc.stderr
    return out / "compare.html"


def _layout(path, width=1280):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.goto(Path(path).resolve().as_uri(), wait_until="load")
            return page.evaluate(_LAYOUT_JS)
        finally:
            browser.close()


@pytest.mark.parametrize("which", ["report", "compare"])
def test_every_section_is_in_the_contents_and_no_page_is_wider_than_the_window(
        tmp_path_factory, compare_page, which):
    info = F.shared_report(tmp_path_factory)
    path = Path(info["out"]) / "report.html" if which == "report" else compare_page
    d = _layout(path)
    assert len(d["sections"]) >= (8 if which == "report" else 4), d["sections"]
    assert d["links"] == d["sections"]  # every section, in order, and nothing else
    assert d["reachable"] == d["links"]
    assert d["width"] <= 1280, f"{which}.html is {d['width']} px wide in a 1,280 px window"
    if which == "report":  # the opening paragraph, written from metrics.json
        m = json.loads((Path(info["out"]) / "metrics.json").read_text())
        assert d["summary"].startswith("Solves ") and f"of {m['n_tasks']} tasks" in d["summary"]
        assert f"pass@2 {100 * m['pass@2']:.2f} %" in d["summary"], d["summary"]
