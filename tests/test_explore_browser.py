"""notebooks/explore.ipynb in a real JupyterLab, driven by a real headless Chromium.

The test starts ``jupyter lab`` from this Python environment on 127.0.0.1 (a free
port, a random token, no browser, a temporary root folder holding copies of
explore.ipynb, its own config / data / runtime / settings folders so nothing of the
user's is read, news and update checks off), opens the notebook in Debian's chromium
through Playwright (``executable_path``; no browser is ever downloaded), runs every
cell from the Run menu and checks the widget: it renders an image (not a "Loading
widget" or "could not be displayed" placeholder), "next" changes the task id shown,
the search box goes to a typed task id, and the page logs no console error and asks
nothing from outside the server. The server is stopped by its own process id.

Two notebooks: the embedded default (the bundled example predictions on ARC-AGI-1
evaluation) and a compared pair of run directories whose solved sets differ.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium"
                                        if Path("/usr/bin/chromium").exists() else None)
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]
PLACEHOLDERS = ("Loading widget", "could not be displayed", "Error displaying widget",
                "Failed to load model class")

# drives a headless browser
pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install chromium; "
                             ".ci/run installs it)")]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _compare_runs(folder: Path) -> tuple[Path, Path, list[str]]:
    """Two run directories on the same 12 ARC-AGI-1 evaluation tasks: the bundled
    example predictions, and a submission that is right on some outputs (truth) and
    copies the input on others. Returns them and the task ids (in order) of the
    outputs exactly one of them solves."""
    sys.path.insert(0, str(ROOT / "tests"))
    from submissions import synthetic_submission

    from arcnb.data import load_dataset
    from arcnb.front import score_to_run_dir

    ds = load_dataset("arc-agi-1:evaluation")
    ids = ds.task_ids[:11] + ["60c09cac"]  # 60c09cac: the one task the example solves
    small = ds.select(ids)
    example = ROOT / "data" / "examples" / "arc-agi-1-evaluation_heuristic.json"
    sub = folder / "mixed.json"
    mixed = synthetic_submission(small, "mixed", seed=1, p_first=0.4, p_second=0.6)
    mixed["60c09cac"] = synthetic_submission(small.select(["60c09cac"]), "copy")["60c09cac"]
    sub.write_text(json.dumps(mixed))
    a, b = folder / "example", folder / "mixed"
    ra = score_to_run_dir(example, "arc-agi-1:evaluation", a, tasks=ids)
    rb = score_to_run_dir(sub, "arc-agi-1:evaluation", b, tasks=ids)
    both = ra.outputs.merge(rb.outputs, on=["task_id", "test_index"])
    differ = both[both["solved@2_x"] != both["solved@2_y"]]
    assert differ["solved@2_x"].any() and differ["solved@2_y"].any()  # each solves some
    return a, b, list(dict.fromkeys(differ.sort_values(["task_id", "test_index"])["task_id"]))


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server on loopback; yields (base URL, token, root folder, info)."""
    import nbformat
    from papermill.iorw import load_notebook_node
    from papermill.parameterize import parameterize_notebook

    tmp = tmp_path_factory.mktemp("jupyterlab")
    root = tmp / "root"
    root.mkdir()
    shutil.copy(ROOT / "notebooks" / "explore.ipynb", root / "explore.ipynb")
    a, b, disagree = _compare_runs(tmp)
    parameterized = parameterize_notebook(
        load_notebook_node(str(root / "explore.ipynb")),
        {"run": str(a), "compare": [str(b)], "selection": "disagree"})
    nbformat.write(parameterized, str(root / "explore-compare.ipynb"))

    cfg = tmp / "config"
    cfg.mkdir()
    conf = {"ServerApp": {"open_browser": False, "terminals_enabled": False,
                          "port_retries": 0},
            "LabApp": {"news_url": None, "extension_manager": "readonly",
                       "check_for_updates_class": "jupyterlab.NeverCheckForUpdate"}}
    for name in ("jupyter_server_config.json", "jupyter_lab_config.json"):
        (cfg / name).write_text(json.dumps(conf))
    settings = tmp / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    # the news toast would otherwise ask whether to fetch news from the network
    (settings / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(os.environ,
               PYTHONPATH=os.pathsep.join([str(ROOT)] + [p for p in os.environ.get(
                   "PYTHONPATH", "").split(os.pathsep) if p]),
               JUPYTER_CONFIG_DIR=str(cfg), JUPYTER_DATA_DIR=str(tmp / "data"),
               JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
               JUPYTERLAB_SETTINGS_DIR=str(tmp / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"))
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
           f"--ServerApp.port={port}", f"--IdentityProvider.token={token}",
           f"--ServerApp.root_dir={root}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")  # CI containers run as root
    log = open(tmp / "server.log", "w")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=str(root))
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 120
        while True:
            assert proc.poll() is None, (tmp / "server.log").read_text()[-3000:]
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                break
            except OSError:
                assert time.time() < deadline, "jupyter lab did not start in 120 s"
                time.sleep(0.5)
        yield {"base": base, "token": token, "root": root, "disagree": disagree,
               "log": tmp / "server.log"}
    finally:
        # this server only, by its own process id: SIGTERM lets it shut its kernels down
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)
        log.close()


def _run_notebook_in_browser(lab, name: str, actions):
    """Open ``name`` in JupyterLab, Run > Run All Cells, wait for the widget's image,
    then call ``actions(page)``. Returns (result of actions, console errors, outside
    requests)."""
    from playwright.sync_api import sync_playwright

    base = lab["base"]
    console, outside = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: console.append(f"page error: {e}"))
            page.on("request", lambda r: outside.append(r.url)
                    if not r.url.startswith((base, "data:", "blob:" + base)) else None)
            # a workspace of its own, reset: no tab of an earlier test is restored
            page.goto(f"{base}/lab/workspaces/{name.replace('.', '-')}/tree/{name}"
                      f"?reset&token={lab['token']}")
            page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
            # the kernel must be up before Run All: the status bar says "... | Idle"
            page.get_by_text("| Idle").first.wait_for(timeout=120_000)
            page.locator(".lm-MenuBar-item", has_text="Run").first.click()
            page.locator(".lm-Menu-item", has_text="Run All Cells").first.click()
            try:
                page.wait_for_function(
                    "() => { const i = document.querySelector('.arcnb-explore img');"
                    " return i && i.complete && i.naturalWidth > 0; }", timeout=240_000)
                result = actions(page)
            except Exception:
                page.screenshot(path=str(lab["log"].with_name(f"{name}.png")), full_page=True)
                raise
        finally:
            browser.close()
    return result, console, outside


def _shown_task(page) -> str:
    return page.locator(".arcnb-explore .arcnb-explore-task").first.inner_text().strip()


def _wait_task(page, old: str | None = None, want: str | None = None) -> str:
    page.wait_for_function(
        "([old, want]) => { const e = document.querySelector('.arcnb-explore .arcnb-explore-task');"
        " if (!e) return false; const t = e.innerText.trim();"
        " return want ? t === want : t !== old; }", arg=[old, want], timeout=60_000)
    return _shown_task(page)


def _image_info(page) -> dict:
    return page.evaluate("""() => {
        const i = document.querySelector('.arcnb-explore img');
        return {w: i.naturalWidth, h: i.naturalHeight, src: i.src.slice(0, 5),
                text: document.querySelector('.jp-Notebook').innerText};
    }""")


def _search(page, task_id: str) -> None:
    box = page.locator(".arcnb-explore input[type='text']").first
    box.fill(task_id)
    box.press("Enter")


def test_explore_notebook_on_the_embedded_default(lab):
    def actions(page):
        first = _wait_task(page, want="00576224")  # the first task of ARC-AGI-1 evaluation
        img = _image_info(page)
        page.locator(".arcnb-explore button", has_text="next").first.click()
        second = _wait_task(page, old=first)
        _search(page, "60c09cac")
        searched = _wait_task(page, want="60c09cac")
        solved_note = page.locator(".arcnb-explore .arcnb-explore-numbers").first.inner_text()
        return first, second, searched, img, solved_note

    (first, second, searched, img, numbers), console, outside = _run_notebook_in_browser(
        lab, "explore.ipynb", actions)
    assert img["w"] > 200 and img["h"] > 200 and img["src"] == "blob:", img
    for text in PLACEHOLDERS:
        assert text not in img["text"]
    assert second == "009d5c81" != first  # the second task of ARC-AGI-1 evaluation
    assert searched == "60c09cac"
    assert "yes" in numbers  # the example predictions solve 60c09cac
    assert console == []
    assert outside == []


def test_explore_notebook_on_a_compared_pair(lab):
    def actions(page):
        first = _shown_task(page)
        img = _image_info(page)
        solved_by = page.locator(".arcnb-explore .arcnb-explore-solved-by").first.inner_text()
        rows = page.locator(".arcnb-explore .arcnb-explore-numbers tr").count()
        page.locator(".arcnb-explore button", has_text="next").first.click()
        second = _wait_task(page, old=first) if len(lab["disagree"]) > 1 else first
        target = lab["disagree"][-1]
        _search(page, target)
        searched = _wait_task(page, want=target)
        return first, second, searched, img, solved_by, rows

    (first, second, searched, img, solved_by, rows), console, outside = \
        _run_notebook_in_browser(lab, "explore-compare.ipynb", actions)
    assert img["w"] > 200 and img["h"] > 200, img
    for text in PLACEHOLDERS:
        assert text not in img["text"]
    # the selection is "runs disagree": exactly one of the two runs solved what is shown
    assert first == lab["disagree"][0]
    assert solved_by.startswith("solved@2 by: ") and solved_by.split(": ")[1] in ("example",
                                                                                  "mixed")
    assert rows == 3  # header + one row per run
    assert second != first and second in lab["disagree"]
    assert searched == lab["disagree"][-1]
    assert console == []
    assert outside == []
