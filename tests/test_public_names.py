"""Every public name the README and the user guide show is importable from the path
they show it at: `from arcnb.x import a, b` and `import arcnb.x as y` lines in their
code blocks, and dotted `arcnb.x.y` names in their text."""
from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The pages checked; ``benchmarks/README.md`` (the benchmarks and their figures, not part
#: of the documentation site) too.
DOCS = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", ROOT / "benchmarks" / "README.md",
        *sorted((ROOT / "docs").rglob("*.md"))]

FROM_IMPORT = re.compile(r"^\s*from (arcnb(?:\.\w+)*) import \(?([\w, \n]+?)\)?\s*(?:#.*)?$", re.M)
IMPORT = re.compile(r"^\s*import (arcnb(?:\.\w+)*)(?: as \w+)?\s*$", re.M)
DOTTED = re.compile(r"`(arcnb(?:\.[A-Za-z_]\w*)+)(?:\([^`]*\))?`")
#: Dotted names that are not Python paths: the matplotlib style sheet's name.
NOT_PATHS = {"arcnb.paper"}


def _texts():
    for path in DOCS:
        if path.is_file():
            yield path, path.read_text(encoding="utf-8")


def _from_imports():
    seen = set()
    for path, text in _texts():
        for mod, names in FROM_IMPORT.findall(text):
            for item in names.split(","):
                name = item.split(" as ")[0].strip()
                if name and (mod, name) not in seen:
                    seen.add((mod, name))
                    yield pytest.param(mod, name, id=f"{mod}:{name}")


def _dotted():
    seen = set()
    for path, text in _texts():
        for m in IMPORT.findall(text):
            seen.add(m)
        for m in DOTTED.findall(text):
            seen.add(m)
    return sorted(seen - NOT_PATHS)


@pytest.mark.parametrize("mod,name", list(_from_imports()))
def test_from_import(mod, name):
    module = importlib.import_module(mod)
    if not hasattr(module, name):
        importlib.import_module(f"{mod}.{name}")  # a submodule


@pytest.mark.parametrize("dotted", _dotted())
def test_dotted_name(dotted):
    parts = dotted.split(".")
    # the longest importable module prefix, then attributes
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return
    raise AssertionError(f"{dotted} is not importable")


def test_names_were_found():
    assert len(list(_from_imports())) >= 20 and len(_dotted()) >= 20
