"""No internal vocabulary in what a user reads.

The project was specified in internal documents numbered like "seed 003" and in
numbered issues; a reader has never seen them. This check scans the README and the
user guide (docs/**/*.md), the
notebooks (and their generator), the CLI help of every command, arcnb's source (its
docstrings show in help() and the API docs, its strings are the CLI's messages and the
report's text), the report template and the HTML of the embedded default report, and
fails on "seed 0NN", "seed-0NN", "seed NNN:", "seed NNN's" or "issue N". The word
"seed" for a random seed ("--seed", "bootstrap seed 0") is fine.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import _report_fixture as F

ROOT = F.ROOT
INTERNAL = re.compile(r"(?i)\bseeds?[ _-]?0\d\d\b|\bseeds?[ _-]?\d{3}\s*(?::|'s\b)"
                      r"|\bissues? #?\d+\b")


def _hits(text: str, where: str) -> list[str]:
    out = []
    for m in INTERNAL.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        ctx = text[max(0, m.start() - 40):m.end() + 40].replace("\n", " ")
        out.append(f"{where}:{line}: {m.group(0)!r} in ...{ctx}...")
    return out


def test_the_pattern_catches_internal_names_and_spares_random_seeds():
    for bad in ("seed 003", "Seed-001", "(seed 000: formulas)", "seed 002's report",
                "named as seed004 logs them", "seeds 000 and 002", "as issue 3 specifies",
                "Compact reporting line (seed 003):", "best seed-001 partial credit"):
        assert INTERNAL.search(bad), bad
    for ok in ("seed 0", "--seed 42", "bootstrap seed", "seed=123", "a seeded bootstrap",
               "random seed 0", "(seed 0,", "torch seed and colour-permutation seed",
               "seed: int = 0  # bootstrap seed", "1000 resamples of tasks, seed 0)"):
        assert not INTERNAL.search(ok), ok


def test_readme_guide_and_notebooks():
    hits = _hits((ROOT / "README.md").read_text(encoding="utf-8"), "README.md")
    guide = sorted((ROOT / "docs").rglob("*.md"))
    assert any(p.parent.name == "guide" for p in guide)
    for page in guide:
        if "_build" not in page.parts:
            hits += _hits(page.read_text(encoding="utf-8"), str(page.relative_to(ROOT)))
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert len(notebooks) >= 4
    for nb in notebooks:
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        text = "\n".join("".join(c["source"]) for c in cells)
        hits += _hits(text, f"notebooks/{nb.name}")
    assert not hits, "\n".join(hits)


def _all_help(parser: argparse.ArgumentParser, prefix: str = "arcnb") -> dict[str, str]:
    out = {prefix: parser.format_help()}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out.update(_all_help(sub, f"{prefix} {name}"))
    return out


@pytest.mark.slow  # starts another process
def test_cli_help_of_every_command():
    from arcnb.cli import build_parser

    helps = _all_help(build_parser())
    assert {"arcnb", "arcnb score", "arcnb report", "arcnb evaluate", "arcnb compare"} <= set(helps)
    hits = [h for name, text in helps.items() for h in _hits(text, f"`{name} --help`")]
    exe = Path(sys.executable).with_name("arcnb")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "arcnb"]
    proc = subprocess.run(cmd + ["--help"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "report" in proc.stdout
    hits += _hits(proc.stdout, "`arcnb --help` (console script)")
    assert not hits, "\n".join(hits)


def test_arcnb_source_docstrings_strings_and_template():
    """The whole text of every module (docstrings, messages, comments) and template."""
    files = sorted((ROOT / "arcnb").rglob("*.py")) + sorted(
        p for p in (ROOT / "arcnb" / "templates").rglob("*") if p.is_file())
    assert len(files) > 30
    hits = [h for p in files for h in _hits(p.read_text(encoding="utf-8"),
                                            str(p.relative_to(ROOT)))]
    assert not hits, "\n".join(hits)


def test_public_help_texts():
    """What help() shows for the public modules and their public names."""
    import importlib
    import inspect
    import pydoc

    hits = []
    for mod_name in ("arcnb", "arcnb.metrics", "arcnb.plot", "arcnb.report", "arcnb.breakdown",
                     "arcnb.scoring", "arcnb.modules", "arcnb.lightning"):
        try:
            mod = importlib.import_module(mod_name)
        except ImportError:  # an optional extra (lightning) may be absent
            continue
        hits += _hits(pydoc.render_doc(mod, renderer=pydoc.plaintext), f"help({mod_name})")
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name, None)
            doc = inspect.getdoc(obj) if callable(obj) or inspect.isclass(obj) else None
            if doc:
                hits += _hits(doc, f"help({mod_name}.{name})")
    assert not hits, "\n".join(hits)


@pytest.mark.slow  # builds a report: its notebook runs in a Jupyter kernel
def test_default_report_html_and_command_output(default_report):
    html = (Path(default_report["out"]) / "report.html").read_text(encoding="utf-8")
    hits = _hits(html, "report.html")
    hits += _hits(default_report["stdout"] + default_report["stderr"], "`arcnb report --default`")
    assert not hits, "\n".join(hits)
    assert "Compact reporting line" in html
