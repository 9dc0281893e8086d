"""Hostile inputs, round three (upper half): text that reaches Pillow or HTML, disks
that fill up, links inside ``--out``, and report inputs checked before any work. Every
hostile file is built here (long and multi-line names, symlinks, a small tmpfs)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest


from arcnb.data import load_dataset

ROOT = Path(__file__).resolve().parents[1]


def _ds(n: int = 3):
    full = load_dataset("arc-agi-1:evaluation")
    return full.select(full.task_ids[:n])


def _copy_sub(ds) -> dict:
    return {t.id: [{"attempt_1": p.input.tolist(), "attempt_2": p.input.tolist()}
                   for p in t.test] for t in ds}


# ------------------------------------------------- 6, 12: explorer text and frame size
def test_long_and_multiline_names_are_cut_and_escaped_in_the_explorer(tmp_path):
    import arcnb

    ds = _ds()
    ids = ds.task_ids
    long = "c" * 100_000
    csv = tmp_path / "taxonomy.csv"
    csv.write_text(f'task_id,category\n{ids[0]},"line\nbreak"\n{ids[1]},{long}\n{ids[2]},x\n')
    r = arcnb.score(ds, _copy_sub(ds))
    ex = arcnb.explore(r, taxonomy=str(csv), category="line\nbreak", compare=[r],
                       labels=["run\none", "z" * 100_000], max_width=1200)
    img = ex.render()
    grids_w = max(p["x"] + p["w"] for p in ex.layout())
    # the frame is as wide as its grids or max_width, never as wide as a name
    assert img.shape[1] <= max(1200, grids_w + 10), img.shape
    titles = " ".join(p["title"] for p in ex.layout())
    assert "\n" not in titles and "run\\none" in titles and "…" in titles
    ex.category = long
    assert ex.render().shape[1] <= max(1200, grids_w + 10)

    # a task id with a newline, from a task file's name
    folder = tmp_path / "tasks"
    folder.mkdir()
    task = load_dataset("arc-agi-1:evaluation")[ids[0]]
    doc = {"train": [{"input": p.input.tolist(), "output": p.output.tolist()}
                     for p in task.train],
           "test": [{"input": p.input.tolist(), "output": p.output.tolist()} for p in task.test]}
    (folder / "odd\nid.json").write_text(json.dumps(doc))
    ex = arcnb.explore(str(folder))
    assert ex.render().shape[0] > 0
    assert ex.panels()[0].startswith("task odd")


# ------------------------------------------------------ 11: the self-containment check
def test_the_self_containment_check_reads_attributes_not_text():
    from arcnb.errors import ArcnbError
    from arcnb.report.html import _esc
    from arcnb.report.notebooks import _check_self_contained

    for text in ("src=//evil.example", "href=//x", "<img src='//x'>", "javascript:alert(1)"):
        _check_self_contained(f"<html><body><td class='arcnb-text'>{_esc(text)}</td>"
                              f"<img alt='{_esc(text)}' src='data:image/png;base64,AA=='>"
                              "<a href='./a/report.html'>a</a><a href='#top'>t</a></body></html>")
    for bad in ("<img src='//evil.example/x.png'>", "<img src=' HTTPS://evil/x.png'>",
                "<a href='javascript:alert(1)'>x</a>", "<a href='java\tscript:alert(1)'>x</a>",
                "<link rel=stylesheet href=http://evil/x.css>", "<script>1</script>",
                "<a href='&#x2f;&#x2f;evil'>x</a>"):
        with pytest.raises(ArcnbError, match="internal error"):
            _check_self_contained(f"<html><body>{bad}</body></html>")


# ------------------------------------------------------ 18: links of the index page
def test_index_links_are_relative_quoted_paths(tmp_path):
    from html.parser import HTMLParser
    from urllib.parse import unquote, urlsplit

    from arcnb.report import ReportResult
    from arcnb.report.build import _write_index

    names = ["javascript:alert(1)", "a'b\"<c>", "plain"]
    results = []
    for n in names:
        (tmp_path / n).mkdir()
        results.append(ReportResult(tmp_path / n, tmp_path / n / "report.html",
                                    tmp_path / n / "report.ipynb", {"pass@2": 0.5}, {}, n))
    _write_index(tmp_path, results, overwrite=False)
    hrefs = []

    class P(HTMLParser):
        def handle_starttag(self, tag, attrs):
            hrefs.extend(v for k, v in attrs if k == "href")

    P().feed((tmp_path / "index.html").read_text())
    assert len(hrefs) == 3
    for n, h in zip(names, hrefs):
        assert h.startswith("./") and urlsplit(h).scheme == "" and urlsplit(h).netloc == ""
        assert unquote(h) == f"./{n}/report.html"


# ------------------------------------------------ 23: no kernel warning on stderr
def _tiny_notebook(path: Path, code: str) -> Path:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(code)]
    nbformat.write(nb, str(path))
    return path


@pytest.mark.slow  # runs a notebook in a Jupyter kernel
def test_running_a_notebook_prints_nothing_on_stderr(tmp_path):
    import os
    import subprocess
    import sys

    _tiny_notebook(tmp_path / "t.ipynb", "x = 6 * 7\nprint(x)")
    code = ("from arcnb.report.notebooks import run_notebook\n"
            "run_notebook('t.ipynb', 'o.ipynb', progress=False)\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, p.stderr
    assert p.stderr.strip() == "", p.stderr            # no "[IPKernelApp] WARNING | ... TCP"
    assert "42" in (tmp_path / "o.ipynb").read_text()


# ------------------------------------------------ 4: a full disk
@pytest.fixture
def small_disk(tmp_path):
    import os
    import subprocess

    mnt = tmp_path / "small"
    mnt.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root; the full-disk case is not exercised")
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"could not mount a small tmpfs ({p.stderr.strip()}); "
                    "the full-disk case is not exercised")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


@pytest.mark.slow  # runs a notebook in a Jupyter kernel
def test_a_full_disk_leaves_the_old_notebook_and_names_the_disk(tmp_path, small_disk):
    import nbformat

    from arcnb.report.notebooks import NotebookError, run_notebook

    src = _tiny_notebook(tmp_path / "big.ipynb", "print('x' * 600_000)")
    good = _tiny_notebook(small_disk / "report.ipynb", "print('the good report')")
    before = good.read_bytes()
    with pytest.raises(NotebookError) as err:
        run_notebook(src, good, progress=False, overwrite=True,
                     html=small_disk / "report.html")
    msg = str(err.value)
    assert "no space left on the disk holding" in msg and str(small_disk) in msg, msg
    assert "\n" not in msg and "does not appear to be JSON" not in msg
    assert good.read_bytes() == before                 # the good notebook is untouched
    nbformat.read(str(good), as_version=4)
    assert sorted(p.name for p in small_disk.iterdir()) == ["report.ipynb"]  # no leftovers


# ------------------------------------------------ 24: the figures notebook's overwrite
def test_the_figures_notebook_refuses_existing_files_before_writing_any(tmp_path):
    """The figures notebook's own cells, in this process (the notebook executes in a
    kernel in its one notebook test)."""
    from _notebook_cells import notebook_cells_here

    from arcnb.errors import ArcnbError

    ds = _ds()
    (tmp_path / "p.json").write_text(json.dumps(_copy_sub(ds)))
    (tmp_path / "tasks.txt").write_text("\n".join(ds.task_ids) + "\n")
    out = tmp_path / "figs"
    out.mkdir()
    (out / "headline.tex").write_text("my own table\n")
    with pytest.raises(ArcnbError, match="already exists"):
        notebook_cells_here("figures", {"predictions": str(tmp_path / "p.json"),
                                        "tasks": str(tmp_path / "tasks.txt"),
                                        "out": str(out), "n_boot": 20})
    assert (out / "headline.tex").read_text() == "my own table\n"
    assert sorted(p.name for p in out.iterdir()) == ["headline.tex"]   # nothing written


# ------------------------------------------------ 2: a journal symlink in --out
def test_resume_never_writes_through_a_journal_symlink(tmp_path):
    from test_robust import _copy_run, _unfinish, cli, one_line_error

    out = _copy_run(tmp_path)
    _unfinish(out)
    journal = out / "journal.jsonl"
    victim = tmp_path / "victim.txt"
    victim.write_bytes(journal.read_bytes() + b'{"cut off')      # a half line to repair
    before = victim.read_bytes()
    journal.unlink()
    journal.symlink_to(victim)
    args = ("evaluate", "--checkpoint", "copy-input", "--dataset", tmp_path / "ds", "--out", out,
            "--batch-size", "2", "--no-progress", "--resume")
    one_line_error(*cli(*args)[::2], "journal.jsonl", "symbolic link")
    assert victim.read_bytes() == before                            # not truncated, not appended
    assert journal.is_symlink() and not (out / "metrics.json").exists()


# ------------------------------------------- 3, 21, 22: report outputs and inputs
def _report(tmp_path, *args):
    from test_robust import cli

    ds = _ds()
    sub = tmp_path / "p.json"
    if not sub.exists():
        sub.write_text(json.dumps(_copy_sub(ds)))
    tasks = tmp_path / "tasks.txt"
    tasks.write_text("\n".join(ds.task_ids) + "\n")
    base = ["report", "--predictions", sub, "--dataset", "arc-agi-1:evaluation",
            "--tasks", tasks, "--no-progress"]
    return cli(*base, *args)


@pytest.mark.parametrize("planted", ["failed_outputs.csv", "near_miss_outputs.csv",
                                     "figures/pass_at_k.png"])
def test_the_report_claims_every_output_before_any_work(tmp_path, planted):
    from test_robust import one_line_error

    out = tmp_path / "rep"
    (out / planted).parent.mkdir(parents=True)
    (out / planted).write_text("mine\n")
    code, _, err = _report(tmp_path, "--out", out)
    one_line_error(code, err, "refusing to overwrite")
    assert (out / planted).read_text() == "mine\n"
    assert not (out / "predictions.json").exists() and not (out / "report.html").exists()


@pytest.mark.parametrize("link", ["figures", "failed_outputs.csv", "report.html"])
def test_the_report_refuses_links_inside_out_even_with_overwrite(tmp_path, link):
    from test_robust import one_line_error

    out = tmp_path / "rep"
    out.mkdir()
    elsewhere = tmp_path / "elsewhere"
    if link == "figures":
        elsewhere.mkdir()
    else:
        elsewhere.write_text("mine\n")
    (out / link).symlink_to(elsewhere)
    code, _, err = _report(tmp_path, "--out", out, "--overwrite")
    one_line_error(code, err, link, "symbolic link")
    assert elsewhere.is_dir() and not any(elsewhere.iterdir()) if link == "figures" \
        else elsewhere.read_text() == "mine\n"
    assert not (out / "predictions.json").exists()


def test_a_malformed_taxonomy_is_refused_before_any_work(tmp_path):
    from test_robust import one_line_error

    out = tmp_path / "rep"
    out.mkdir()
    good = b"<html>the good report</html>"
    (out / "report.html").write_bytes(good)
    bad = tmp_path / "tax.csv"
    bad.write_text('task_id,category\n"unclosed,quote\n')
    code, _, err = _report(tmp_path, "--out", out, "--overwrite", "--taxonomy", bad)
    one_line_error(code, err, "tax.csv")
    assert (out / "report.html").read_bytes() == good
    assert sorted(p.name for p in out.iterdir()) == ["report.html"]
    # a taxonomy that is not there at all
    code, _, err = _report(tmp_path, "--out", tmp_path / "new", "--taxonomy", tmp_path / "no.csv")
    one_line_error(code, err)
    assert not (tmp_path / "new").exists()


@pytest.mark.slow  # builds a report: its notebook runs in a Jupyter kernel
@pytest.mark.parametrize("case", ["dataset", "json_list", "task_ids"])
def test_early_bad_input_leaves_no_out_folder(tmp_path, case):
    from test_robust import cli, one_line_error

    ds = _ds()
    sub = tmp_path / "p.json"
    sub.write_text(json.dumps([1, 2]) if case == "json_list" else json.dumps(_copy_sub(ds)))
    tasks = tmp_path / "tasks.txt"
    tasks.write_text("no-such-task\n" if case == "task_ids" else "\n".join(ds.task_ids) + "\n")
    out = tmp_path / "rep"
    code, _, err = cli("report", "--predictions", sub, "--dataset",
                       "no-such-dataset" if case == "dataset" else "arc-agi-1:evaluation",
                       "--tasks", tasks, "--out", out, "--no-progress")
    one_line_error(code, err)
    assert not out.exists(), sorted(p.name for p in out.iterdir())


# --------------------------------------------- several reports: their folders in --out
def test_a_stem_of_dots_never_names_a_folder_outside_out():
    """arcnb report --predictions a.json ...json --out parent/rep: the stem of ...json is
    "..", and the second report went to parent/."""
    from arcnb.report.build import _unique_names

    assert _unique_names(["a.json", "...json", "x/..json", "....json"]) == \
        ["a", "run", "run_2", "run_3"]
    # sweep.pt would have taken the automatic sweep's folder (the command then failed
    # after both reports were built)
    assert _unique_names(["a.pt", "sweep.pt", "sweep.ckpt"]) == ["a", "sweep_2", "sweep_3"]


@pytest.mark.slow  # builds a report: its notebook runs in a Jupyter kernel
@pytest.mark.parametrize("planted", ["a", "sweep"])
def test_links_planted_in_out_are_refused_before_any_report(tmp_path, capsys, planted):
    """arcnb report --checkpoint a.pt b.pt --out R followed links placed beforehand at
    R/sweep and R/<name>, writing the sweep and a whole report outside R."""
    from arcnb.cli import main

    outside = tmp_path / "outside"
    outside.mkdir()
    out = tmp_path / "R"
    out.mkdir()
    (out / planted).symlink_to(outside)
    ckpts = []
    for name, step in (("a", 1), ("b", 2)):
        from arcnb.models import load_model, save_checkpoint

        ckpts.append(str(save_checkpoint(tmp_path / f"{name}.pt", load_model("baseline").model,
                                         arch="demo-conv", step=step)))
    rc = main(["report", "--checkpoint", *ckpts, "--dataset", "arc-agi-1:evaluation",
               "--out", str(out), "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "is a symbolic link" in err[0], err
    assert list(outside.iterdir()) == []
    assert sorted(p.name for p in out.iterdir()) == [planted]


@pytest.mark.slow  # builds a report: its notebook runs in a Jupyter kernel
def test_an_existing_index_is_kept_without_overwrite(tmp_path, capsys):
    """A report of several runs replaced an existing R/index.html without --overwrite:
    refused before any report is built."""
    from arcnb.cli import main

    ds = _ds(2)
    files = []
    for name in ("a", "b"):
        p = tmp_path / f"{name}.json"
        p.write_text(json.dumps(_copy_sub(ds)))
        files.append(str(p))
    out = tmp_path / "R"
    out.mkdir()
    (out / "index.html").write_text("mine")
    rc = main(["report", "--predictions", *files, "--dataset", "arc-agi-1:evaluation",
               "--out", str(out), "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "index.html already exists" in err[0], err
    assert (out / "index.html").read_text() == "mine"
    assert sorted(p.name for p in out.iterdir()) == ["index.html"]


@pytest.mark.slow  # builds a report: its notebook runs in a Jupyter kernel
def test_train_data_naming_a_fifo_says_so(tmp_path, capsys):
    """report --train-data naming a FIFO said "unknown dataset"; the guide says one line
    naming it, as for every input: it is a FIFO, not a regular file."""
    import os

    from arcnb.cli import main

    fifo = tmp_path / "train.json"
    os.mkfifo(fifo)
    sub = tmp_path / "sub.json"
    sub.write_text(json.dumps(_copy_sub(_ds(2))))
    rc = main(["report", "--predictions", str(sub), "--dataset", "arc-agi-1:evaluation",
               "--out", str(tmp_path / "R"), "--train-data", str(fifo)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1, err
    assert f"{fifo} is a FIFO, not a regular file" in err[0]
    assert not (tmp_path / "R").exists()


# ------------------------------------- a kernel never imports from a data or output folder
def _plant(folder: Path, marker: Path) -> list[str]:
    """Files that run code when a kernel imports from ``folder`` (or reads its
    matplotlibrc): each appends its name to ``marker``, then fails."""
    folder.mkdir(parents=True, exist_ok=True)
    planted = {}
    for name in ("pandas.py", "sitecustomize.py", "matplotlib.py"):
        planted[name] = (f"open({str(marker)!r}, 'a').write({name!r} + '\\n')\n"
                         "raise ImportError('planted')\n")
    planted["matplotlibrc"] = "backend: module://pandas\n"
    for name, text in planted.items():
        (folder / name).write_text(text)
    return sorted(planted)


def _private_home(tmp_path: Path) -> dict:
    """HOME and IPYTHONDIR in ``tmp_path`` (where IPython would keep its history);
    matplotlib keeps its usual cache folder (a fresh one costs a font scan)."""
    import matplotlib

    home = tmp_path / "home"
    home.mkdir()
    return {"HOME": str(home), "IPYTHONDIR": str(home / ".ipython"),
            "MPLCONFIGDIR": matplotlib.get_configdir()}


def _histories(tmp_path: Path) -> list:
    return sorted(str(p) for p in (tmp_path / "home").rglob("history.sqlite*"))


@pytest.mark.slow  # builds a report: its notebook runs in a Jupyter kernel
def test_a_report_never_imports_from_its_run_or_its_out_folder(tmp_path):
    """``arcnb report --run DIR --out OUT``: a ``pandas.py`` (and a
    ``sitecustomize.py``, a ``matplotlib.py``, a ``matplotlibrc``) left in the shared
    run directory or already in OUT is never imported or read by the report's kernel,
    and is never copied into OUT (only the run's own files are); the kernel keeps no
    IPython history."""
    from _cli import cli

    from arcnb.front import score_to_run_dir
    from arcnb.runs import COPIED_RUN_FILES

    ds = _ds(3)
    sub, tasks = tmp_path / "sub.json", tmp_path / "tasks.txt"
    sub.write_text(json.dumps(_copy_sub(ds)))
    tasks.write_text("\n".join(ds.task_ids))
    run, out, marker = tmp_path / "shared" / "run", tmp_path / "out", tmp_path / "imported"
    score_to_run_dir(sub, "arc-agi-1:evaluation", run, tasks=str(tasks))
    in_run = _plant(run, marker)
    in_out = _plant(out, marker)
    env = _private_home(tmp_path)
    r = cli("report", "--run", run, "--out", out, "--no-progress", env=env)
    assert r.returncode == 0, r.stderr
    assert (out / "report.html").is_file() and "pass@2" in (out / "report.html").read_text()
    assert not marker.exists(), marker.read_text()
    # only the run's files were copied: what was planted in OUT is still the planted file
    copied = {p.name for p in out.iterdir() if p.is_file()} - set(in_out)
    assert copied <= set(COPIED_RUN_FILES) | {"report.ipynb", "report.html",
                                              "failed_outputs.csv", "near_miss_outputs.csv"}
    assert "ImportError('planted')" in (out / "pandas.py").read_text()
    assert in_run == in_out
    # and again over it (--overwrite): the run copied again, nothing planted read
    r = cli("report", "--run", run, "--out", out, "--no-progress", "--overwrite", env=env)
    assert r.returncode == 0, r.stderr
    assert not marker.exists(), marker.read_text()
    assert "ImportError('planted')" in (out / "pandas.py").read_text()
    assert _histories(tmp_path) == []


def test_the_arc3_report_never_imports_from_its_out_folder(tmp_path):
    """``arcnb arc3 report --out OUT`` with a ``pandas.py`` (and others) already in
    OUT: the report is written and nothing planted is imported or read."""
    from _cli import cli

    out, marker = tmp_path / "out", tmp_path / "imported"
    _plant(out, marker)
    r = cli("arc3", "report", "--out", out, "--n-boot", "50", "--overwrite",
            env=_private_home(tmp_path))
    assert r.returncode == 0, r.stderr
    assert (out / "report.html").is_file()
    assert not marker.exists(), marker.read_text()
    assert _histories(tmp_path) == []


def test_a_run_copy_takes_the_run_files_only_and_leaves_no_other_runs_file(tmp_path):
    """``copy_run_files``: only the names of ``COPIED_RUN_FILES`` are copied (a planted
    script, a hidden file, a folder and an earlier report are not); an existing file
    is refused without ``overwrite``, and with it an earlier run's optional file that
    the copied run lacks is removed, never left beside the new run's files."""
    from arcnb.errors import OutputExistsError
    from arcnb.front import score_to_run_dir
    from arcnb.runs import CANDIDATES, COPIED_RUN_FILES, RUN_FILES, copy_run_files

    ds = _ds(2)
    sub, tasks = tmp_path / "sub.json", tmp_path / "tasks.txt"
    sub.write_text(json.dumps(_copy_sub(ds)))
    tasks.write_text("\n".join(ds.task_ids))
    run = tmp_path / "run"
    score_to_run_dir(sub, "arc-agi-1:evaluation", run, tasks=str(tasks))
    for name in ("pandas.py", ".hidden", "report.html", "notes.txt"):
        (run / name).write_text("x")
    (run / "figures").mkdir()
    dest = tmp_path / "dest"
    written = copy_run_files(run, dest, overwrite=False)
    assert [p.name for p in written][-1] == "metrics.json"
    assert sorted(p.name for p in dest.iterdir()) == sorted(RUN_FILES)
    assert set(RUN_FILES) <= set(COPIED_RUN_FILES)
    for name in RUN_FILES:
        assert (dest / name).read_bytes() == (run / name).read_bytes()
    with pytest.raises(OutputExistsError):
        copy_run_files(run, dest, overwrite=False)
    (dest / CANDIDATES).write_bytes(b"another run's pool")
    copy_run_files(run, dest, overwrite=True)
    assert sorted(p.name for p in dest.iterdir()) == sorted(RUN_FILES)
