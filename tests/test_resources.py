"""What arcnb ships inside the package (arcnb/resources, templates, paper style), the
clone's notebooks/ (a link to the shipped notebooks: one source each) and byte-identical
data/, the shipped notebooks' shape (thin cells, parameters that match the command
line), and ``arcnb notebooks DEST``."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from arcnb import resources

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "arcnb"
#: shipped folder -> the clone's copy (data/; notebooks/ is a link to the shipped ones)
MIRRORS = {
    PKG / "resources" / "checkpoints": ROOT / "data" / "checkpoints",
    PKG / "resources" / "examples": ROOT / "data" / "examples",
}
NOTEBOOKS = {"report", "evaluate", "compare", "figures", "explore", "sweep", "arc3"}


def _files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder``, sub-folders included (examples/arc3/)."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*")
            if p.is_file() and p.name != "__init__.py" and "__pycache__" not in p.parts
            and not any(part.startswith(".") for part in p.relative_to(folder).parts)}


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in
                                         env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env


def arcnb_cli(*args, cwd):
    exe = Path(sys.executable).with_name("arcnb")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "arcnb"]
    return subprocess.run(cmd + [str(a) for a in args], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


# ------------------------------------------------------------------ one source of truth
@pytest.mark.parametrize("shipped", list(MIRRORS), ids=lambda p: p.name)
def test_clone_copies_are_byte_identical_to_the_shipped_files(shipped):
    copy = MIRRORS[shipped]
    a, b = _files(shipped), _files(copy)
    assert a, f"{shipped} is empty"
    assert sorted(a) == sorted(b), (f"{copy.relative_to(ROOT)} and {shipped.relative_to(ROOT)} "
                                    "hold different files (scripts/sync_data.py)")
    for name in a:
        assert a[name] == b[name], f"{copy.relative_to(ROOT) / name} differs from the shipped file"


def test_the_clone_notebooks_are_the_shipped_notebooks():
    """One source per notebook: the clone's notebooks/ is a link to the package's
    notebooks, so editing one in JupyterLab edits the shipped file."""
    link = ROOT / "notebooks"
    assert link.is_symlink(), "notebooks/ must link to arcnb/resources/notebooks"
    assert link.resolve() == (PKG / "resources" / "notebooks").resolve()
    assert {p.stem for p in link.glob("*.ipynb")} == NOTEBOOKS


@pytest.mark.slow  # starts another process
def test_sync_script_agrees():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "sync_data.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_sync_script_reports_a_file_only_in_the_copy(tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import sync_data
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    src, dst = tmp_path / "pkg", tmp_path / "copy"
    src.mkdir()
    dst.mkdir()
    (src / "a.json").write_text("{}")
    (src / "sub" / "run").mkdir(parents=True)
    (src / "sub" / "run" / "c.jsonl").write_text("{}\n")
    (dst / "b.json").write_text("[]")
    monkeypatch.setattr(sync_data, "ROOT", tmp_path)
    monkeypatch.setattr(sync_data, "MIRRORS", {src: dst})
    assert sync_data.main(["--check"]) == 1  # a.json missing, b.json not shipped
    assert not (dst / "sub").exists()
    assert sync_data.main([]) == 1  # writes a.json, still reports b.json, deletes nothing
    assert (dst / "a.json").read_text() == "{}" and (dst / "b.json").exists()
    assert (dst / "sub" / "run" / "c.jsonl").read_text() == "{}\n"  # sub-folders too
    (dst / "b.json").unlink()
    assert sync_data.main(["--check"]) == 0
    (dst / "sub" / "run" / "d.jsonl").write_text("")
    assert sync_data.main(["--check"]) == 1  # a file only in a copy's sub-folder


def test_code_finds_shipped_files_only_through_arcnb_resources():
    """No module but arcnb/resources locates files next to its own source."""
    offenders = []
    for path in PKG.rglob("*.py"):
        if path.parent.name == "resources":
            continue
        text = path.read_text(encoding="utf-8")
        for pat in (r"Path\(__file__\)", r"parents\[\d\]", r"\"data\" / \"(checkpoints|examples)\"",
                    r"data/(checkpoints|examples)/\w"):
            if re.search(pat, text):
                offenders.append(f"{path.relative_to(ROOT)}: {pat}")
    assert not offenders, offenders


def test_package_data_globs_cover_every_shipped_file():
    """pyproject's package-data patterns match every non-Python file under arcnb/
    (the wheel test then proves that a real wheel holds them)."""
    from fnmatch import fnmatch

    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    globs = cfg["package-data"]
    data = [p for p in PKG.rglob("*") if p.is_file() and p.suffix not in (".py", ".pyc")
            and "__pycache__" not in p.parts]
    assert data
    for p in data:
        ok = False
        for pkg, patterns in globs.items():
            base = ROOT.joinpath(*pkg.split("."))
            if base not in p.parents:
                continue
            rel = p.relative_to(base).as_posix()
            ok |= any(fnmatch(rel, pat.replace("**/", "*")) for pat in patterns)
        assert ok, f"{p.relative_to(ROOT)} is not package data"


# ------------------------------------------------------------------ arcnb.resources
def test_resources_resolve_inside_the_imported_package():
    pkg = Path(__import__("arcnb").__file__).parent
    assert set(resources.notebook_names()) == NOTEBOOKS
    for name in NOTEBOOKS:
        assert resources.notebook(name) == pkg / "resources" / "notebooks" / f"{name}.ipynb"
        assert resources.notebook(f"{name}.ipynb").is_file()
    assert resources.checkpoint("baseline") == pkg / "resources" / "checkpoints" / "baseline.pt"
    assert resources.checkpoint().is_file()
    assert (resources.checkpoints_dir() / "README.md").is_file()
    assert resources.example().is_file()
    assert (resources.templates_dir() / "arcnb_report" / "index.html.j2").is_file()
    assert resources.paper_style_path() == pkg / "paper.mplstyle"
    with pytest.raises(resources.ArcnbError, match="unknown notebook"):
        resources.notebook("nope")


def test_examples_lists_every_json_file_of_the_folder():
    folder = PKG / "resources" / "examples"
    want = sorted(n[:-5] for n in os.listdir(folder) if n.endswith(".json"))
    got = resources.example_files()
    assert sorted(got) == want and want
    assert all(p.parent == resources.examples_dir() for p in got.values())
    # the ARC-AGI-3 example's sub-folder holds no predictions
    assert (folder / "arc3").is_dir() and not [p for p in got.values() if "arc3" in p.parts]


@pytest.mark.slow  # starts another process
def test_the_arc3_example_is_bundled_small_and_regenerated_by_its_script():
    ex = resources.arc3_example()
    folder = resources.examples_dir() / resources.ARC3_EXAMPLE
    assert [p.name for p in ex.runs] == ["agent-a", "agent-b"]
    assert all(p.parent == folder for p in ex.runs) and ex.baselines == folder / "baselines.csv"
    assert ex.baselines.read_text().splitlines()[0] == "game_id,level,baseline_actions"
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    assert size < 300_000, f"the ARC-AGI-3 example is {size} bytes"
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_arc3_example.py"),
                           "--check"], capture_output=True, text=True, env=_env())
    assert proc.returncode == 0, proc.stderr


def test_the_arc3_example_missing_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(resources, "examples_dir", lambda: tmp_path)
    with pytest.raises(resources.ArcnbError, match="missing from the arcnb installation"):
        resources.arc3_example()


def test_examples_picks_up_a_new_file(tmp_path, monkeypatch):
    (tmp_path / "b_model.json").write_text("{}")
    (tmp_path / "a_model.json").write_text("{}")
    (tmp_path / "notes.txt").write_text("")
    monkeypatch.setattr(resources, "examples_dir", lambda: tmp_path)
    assert list(resources.example_files()) == ["a_model", "b_model"]


def test_bundled_files_are_what_the_commands_use():
    from arcnb.models import BUNDLED_CHECKPOINT
    from arcnb.report import default_source, notebook_path

    assert BUNDLED_CHECKPOINT == resources.checkpoint("baseline")
    assert default_source().checkpoint == str(resources.checkpoint("baseline"))
    for name in NOTEBOOKS:
        assert notebook_path(name) == resources.notebook(name)


def test_clone_is_detected_for_reports_and_commit():
    assert resources.checkout_root() == Path(__import__("arcnb").__file__).parent.parent
    assert resources.reports_root() == resources.checkout_root() / "reports"


# ------------------------------------------------------------------ arcnb notebooks DEST
@pytest.mark.slow  # runs the arcnb command in another process
def test_notebooks_command_copies_refuses_and_overwrites(tmp_path):
    dest = tmp_path / "my project" / "nb"
    proc = arcnb_cli("notebooks", dest, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    written = {p.name for p in dest.iterdir()}
    assert written == {f"{n}.ipynb" for n in NOTEBOOKS}
    for name in written:
        assert (dest / name).read_bytes() == (ROOT / "notebooks" / name).read_bytes()
        assert f"wrote {dest / name}" in proc.stdout
    # a second copy refuses, in one line, and changes nothing
    (dest / "report.ipynb").write_text("my edits")
    (dest / "evaluate.ipynb").unlink()
    proc = arcnb_cli("notebooks", dest, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "--overwrite" in proc.stderr
    assert "report.ipynb" in proc.stderr and "Traceback" not in proc.stderr
    assert (dest / "report.ipynb").read_text() == "my edits"
    assert not (dest / "evaluate.ipynb").exists()
    proc = arcnb_cli("notebooks", dest, "--overwrite", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (dest / "report.ipynb").read_bytes() == (ROOT / "notebooks" / "report.ipynb").read_bytes()
    assert (dest / "evaluate.ipynb").is_file()


@pytest.mark.slow  # runs the arcnb command in another process
def test_notebooks_command_relative_dest_and_bad_dest(tmp_path):
    proc = arcnb_cli("notebooks", "nbs", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "nbs" / "report.ipynb").is_file()
    (tmp_path / "afile").write_text("x")
    proc = arcnb_cli("notebooks", "afile", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "not a folder" in proc.stderr


# ------------------------------------------------------------------ the notebooks' shape
def _code_cells(name: str) -> list:
    import json

    nb = json.loads((PKG / "resources" / "notebooks" / f"{name}.ipynb").read_text("utf-8"))
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_notebook_cells_hold_calls_only(name):
    """A notebook is a parameters cell plus short cells that call arcnb: no loop, no
    ``if`` statement, no function or class, no HTML written in a string; what a report
    contains lives in arcnb.report.sections, not in cells."""
    import ast

    cells = _code_cells(name)
    assert "parameters" in cells[0].get("metadata", {}).get("tags", [])
    for cell in cells[1:]:
        src = "".join(cell["source"])
        tree = ast.parse(src)
        for node in ast.walk(tree):
            assert not isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.If, ast.With,
                                         ast.Try, ast.FunctionDef, ast.ClassDef, ast.Lambda,
                                         ast.ListComp, ast.DictComp, ast.SetComp,
                                         ast.GeneratorExp)), (
                f"{name}.ipynb: {type(node).__name__} in a cell:\n{src}")
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                assert not re.search(r"<\s*/?\s*[a-zA-Z][^>]*>", node.value), (
                    f"{name}.ipynb: HTML in a cell: {node.value!r}")
        assert len(src.splitlines()) <= 15, f"{name}.ipynb: a cell of {len(src.splitlines())} lines"


@pytest.mark.slow  # builds a report: its notebook runs in a Jupyter kernel
def test_report_cells_are_the_report_page():
    """The report notebook shows the sections of arcnb.report.sections.REPORT, one cell
    each, in the page's order (the page list is the one definition of the report)."""
    from arcnb.report import sections as S

    called = []
    for cell in _code_cells("report")[1:]:
        called += re.findall(r"\bS\.([A-Z]\w+)\.from_run\(run", "".join(cell["source"]))
    page = [c.__name__ for c in S.REPORT]
    no_truth = [c.__name__ for c in S.REPORT_NO_TRUTH]
    assert [c for c in called if c in page] == page
    assert set(called) <= set(page) | set(no_truth)


def test_the_quick_start_counts_and_names_every_shipped_notebook():
    """The quick start says how many notebooks ``arcnb notebooks`` copies and names each
    one: the words and the package agree (it once said six while seven were copied)."""
    words = ("zero one two three four five six seven eight nine ten eleven twelve").split()
    text = (Path(__file__).resolve().parents[1] / "docs" / "guide" / "quickstart.md"
            ).read_text()
    names = resources.notebook_names()
    said = re.search(r"copies the (\w+) shipped notebooks, (.*?) \(`\.ipynb`\)", text, re.S)
    assert said, "the quick start no longer says what arcnb notebooks copies"
    assert said.group(1) == words[len(names)]
    assert sorted(re.findall(r"`(\w+)`", said.group(2))) == sorted(names)
