"""Static tests of the package layout (read with ``ast``; nothing is imported or run).

They keep five statements of ARCHITECTURE.md true: every exception class lives in
``arcnb/errors.py``; arcnb's own modules (and numpy / pandas) are imported at module
top, so the dependency graph is visible, except for a short allow-list with reasons;
that graph has no cycle at import time; no module uses another module's private
names (its "Private names"); and every test file is named after the module it tests,
or is one of the listed cross-cutting suites.
"""
from __future__ import annotations

import ast
import importlib
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "arcnb"

#: Imports of arcnb's own modules that stay inside a function, as
#: ``(file, imported module)``, each with its reason.
ALLOWED_LAZY = {
    # `import arcnb` stays light: the explorer (`arcnb.explore`) is loaded on first use,
    # and the rich display only inside a running IPython
    ("arcnb/__init__.py", "arcnb.explorer"),
    ("arcnb/__init__.py", "arcnb.plot.display"),
    # models/baseline.py defines torch modules at its top: torch loads only when a
    # model is built
    ("arcnb/models/registry.py", "arcnb.models.baseline"),
    # plot/figures.py imports matplotlib at its top: `import arcnb.plot` stays free of it
    # until a figure is drawn
    ("arcnb/plot/panels.py", "arcnb.plot.figures"),
    ("arcnb/plot/galleries.py", "arcnb.plot.figures"),
    ("arcnb/plot/sweep.py", "arcnb.plot.figures"),
    ("arcnb/plot/palette.py", "arcnb.plot.figures"),  # axes_or_new: a new figure's Axes
    ("arcnb/plot/probes.py", "arcnb.plot.figures"),
}

#: Third-party modules imported at module top, never lazily (cheap, and every arcnb
#: import loads them anyway).
EAGER_THIRD_PARTY = {"numpy", "pandas"}


def _files() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _resolve(path: Path, node: ast.ImportFrom | ast.Import) -> list[str]:
    """The modules an import statement of ``path`` names (absolute dotted names)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level == 0:
        base = node.module or ""
    else:
        pkg = _module_name(path).split(".")
        if not _is_package(path):
            pkg = pkg[:-1]
        pkg = pkg[: len(pkg) - (node.level - 1)]
        base = ".".join(pkg + ([node.module] if node.module else []))
    names = [base] if node.module else []
    # `from . import report` / `from .plot import palette` name submodules
    for a in node.names:
        candidate = f"{base}.{a.name}"
        if _exists(candidate):
            names.append(candidate)
    return names or [base]


def _exists(module: str) -> bool:
    if not module.startswith("arcnb"):
        return False
    p = ROOT.joinpath(*module.split("."))
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


def _top_level_imports(tree: ast.Module):
    """Import statements executed when the module is imported: at module top, in
    top-level ``try``/``if``/``with`` blocks and class bodies, not in functions and not
    under ``if TYPE_CHECKING``."""
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If):
            test = ast.unparse(node.test)
            if "TYPE_CHECKING" not in test:
                stack.extend(node.body)
            stack.extend(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                stack.extend(block)
            for h in node.handlers:
                stack.extend(h.body)
        elif isinstance(node, (ast.With, ast.ClassDef)):
            stack.extend(node.body)


def _function_imports(tree: ast.Module):
    """``(function name, import node)`` for every import inside a function body."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for sub in ast.walk(node):
                if isinstance(sub, (ast.Import, ast.ImportFrom)):
                    yield node.name, sub


def exception_classes_outside_errors(files=None) -> list[str]:
    """``file:line class`` for every class deriving from an exception or warning that is
    not defined in ``arcnb/errors.py``."""
    found = []
    for path in files or _files():
        if _rel(path) == "arcnb/errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            bases = [ast.unparse(b) for b in node.bases]
            if any(b.split(".")[-1].endswith(("Error", "Exception", "Warning", "Exit",
                                                 "Interrupt")) for b in bases):
                found.append(f"{_rel(path)}:{node.lineno} class {node.name}({', '.join(bases)})")
    return found


def lazy_own_imports(files=None) -> list[str]:
    """``file:line in function: module`` for every function-level import of an arcnb
    module (or numpy / pandas) that no allow-list covers."""
    found = []
    for path in files or _files():
        rel = _rel(path)
        for func, node in _function_imports(ast.parse(path.read_text(encoding="utf-8"))):
            for mod in _resolve(path, node):
                top = mod.split(".")[0]
                if top == "arcnb" and (rel, mod) not in ALLOWED_LAZY:
                    found.append(f"{rel}:{node.lineno} in {func}(): {mod}")
                elif top in EAGER_THIRD_PARTY:
                    found.append(f"{rel}:{node.lineno} in {func}(): {mod}")
    return found


def import_graph(files=None) -> dict[str, set[str]]:
    """``module -> arcnb modules it imports at import time``."""
    graph: dict[str, set[str]] = {}
    for path in files or _files():
        me = _module_name(path)
        deps = graph.setdefault(me, set())
        for node in _top_level_imports(ast.parse(path.read_text(encoding="utf-8"))):
            for mod in _resolve(path, node):
                if mod.split(".")[0] == "arcnb" and mod != me and _exists(mod):
                    deps.add(mod)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of modules (first == last), or None."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if state.get(nxt) is None:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if state.get(node) is None:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


# ------------------------------------------------------------------------ the tests
def test_every_exception_class_lives_in_errors_py():
    assert exception_classes_outside_errors() == []


def test_every_error_class_is_in_the_arcnb_family():
    tree = ast.parse((PACKAGE / "errors.py").read_text(encoding="utf-8"))
    classes = {n.name: [ast.unparse(b) for b in n.bases] for n in tree.body
               if isinstance(n, ast.ClassDef)}
    assert "ArcnbError" in classes

    def in_family(name, seen=()):
        if name == "ArcnbError":
            return True
        return any(b in classes and b not in seen and in_family(b, seen + (name,))
                   for b in classes.get(name, []))

    assert [c for c in classes if not in_family(c)] == []


def test_arcnb_modules_are_imported_at_module_top():
    assert lazy_own_imports() == []


def test_the_allow_lists_name_real_files():
    for rel in {f for f, _ in ALLOWED_LAZY}:
        assert (ROOT / rel).is_file(), rel


def test_no_import_cycle_at_import_time():
    graph = import_graph()
    assert len(graph) > 30  # the whole package was read
    assert "arcnb.stats" in graph["arcnb.compare"]
    assert find_cycle(graph) is None


@pytest.mark.parametrize("source, finder", [
    ("class BadInput(ValueError):\n    pass\n", "exceptions"),
    ("def f():\n    from .scoring import score\n    return score\n", "lazy"),
    ("def f():\n    import pandas as pd\n    return pd\n", "lazy"),
])
def test_the_checks_catch_a_planted_violation(tmp_path, monkeypatch, source, finder):
    """The finders are real: a violation planted in a module of a copy of the
    package is reported."""
    fake_root = tmp_path / "root"
    pkg = fake_root / "arcnb"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "scoring.py").write_text("def score():\n    return 1\n")
    (pkg / "planted.py").write_text(source)
    monkeypatch.setitem(globals(), "ROOT", fake_root)
    files = sorted(pkg.rglob("*.py"))
    if finder == "exceptions":
        assert exception_classes_outside_errors(files) == [
            "arcnb/planted.py:1 class BadInput(ValueError)"]
    else:
        assert [f.split(" in ")[0] for f in lazy_own_imports(files)] == ["arcnb/planted.py:2"]


def test_the_cycle_finder_finds_a_planted_cycle(tmp_path, monkeypatch):
    pkg = tmp_path / "arcnb"
    (pkg / "plot").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "compare.py").write_text("from .plot import leaderboard\n")
    (pkg / "plot" / "__init__.py").write_text("from .charts import leaderboard\n")
    (pkg / "plot" / "charts.py").write_text(
        "from ..compare import pareto_front\n\ndef leaderboard():\n    pass\n")
    (pkg / "stats.py").write_text("import numpy as np\n")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    graph = import_graph(sorted(pkg.rglob("*.py")))
    assert graph["arcnb.compare"] == {"arcnb.plot"}
    cycle = find_cycle(graph)
    assert cycle is not None and cycle[0] == cycle[-1]
    assert set(cycle) == {"arcnb.compare", "arcnb.plot", "arcnb.plot.charts"}
    # without the back edge there is none
    (pkg / "plot" / "charts.py").write_text("from ..stats import np\n")
    assert find_cycle(import_graph(sorted(pkg.rglob("*.py")))) is None


# ------------------------------------------------------------------------ private names
def _is_private(name: str) -> bool:
    """One leading underscore (``_name``), not a dunder (``__version__``)."""
    return name.startswith("_") and not name.startswith("__")


def may_use(owner: str, name: str, user: str) -> bool:
    """Whether module ``user`` may use ``name`` of module ``owner`` (dotted names; an
    empty ``name`` asks about the module itself). The rule of ARCHITECTURE.md's "Private
    names": a module whose file name starts with an underscore is private to its package
    (its users lie in that package or below it), and a name starting with an underscore
    is private to its module, except in such a private module, where the package's
    modules may use it too."""
    parts = owner.split(".")
    for i, part in enumerate(parts):
        if _is_private(part) and not (user + ".").startswith(".".join(parts[:i]) + "."):
            return False
    return not _is_private(name) or owner == user or _is_private(parts[-1])


def _from_module(me: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute name of the module a ``from ... import`` statement of ``me`` names."""
    if node.level == 0:
        return node.module or ""
    pkg = me.split(".")
    if not is_package:
        pkg = pkg[:-1]
    pkg = pkg[: len(pkg) - (node.level - 1)]
    return ".".join(pkg + ([node.module] if node.module else []))


def _private_uses_in(tree: ast.AST, me: str, is_package: bool, where: str) -> list[str]:
    """``where:line owner.name`` for each private name (or private module) of another
    arcnb module that ``tree`` imports or reads as an attribute (``P._name`` where ``P``
    is bound by an import of an arcnb module)."""
    found, bound = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            owner = _from_module(me, is_package, node)
            if owner.split(".")[0] != "arcnb":
                continue
            for a in node.names:
                if _exists(f"{owner}.{a.name}"):  # a module: `from . import palette`
                    bound[a.asname or a.name] = f"{owner}.{a.name}"
                    ok = may_use(f"{owner}.{a.name}", "", me)
                else:
                    ok = may_use(owner, a.name, me)
                if not ok:
                    found.append(f"{where}:{node.lineno} {owner}.{a.name}")
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] != "arcnb":
                    continue
                bound[a.asname or "arcnb"] = a.name if a.asname else "arcnb"
                if not may_use(a.name, "", me):
                    found.append(f"{where}:{node.lineno} {a.name}")
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and _is_private(node.attr)):
            continue
        chain, value = [], node.value
        while isinstance(value, ast.Attribute):
            chain.insert(0, value.attr)
            value = value.value
        if isinstance(value, ast.Name) and value.id in bound:
            owner = ".".join([bound[value.id]] + chain)
            if _exists(owner) and not may_use(owner, node.attr, me):
                found.append(f"{where}:{node.lineno} {owner}.{node.attr}")
    return found


def private_name_uses(files=None, notebooks=None) -> list[str]:
    """``file:line module.name`` for every use of another module's private name (or of
    a private module outside its package) in arcnb's modules and in the code cells of
    the shipped notebooks (which stand outside the package: they use public names
    only)."""
    found = []
    for path in files if files is not None else _files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += _private_uses_in(tree, _module_name(path), _is_package(path), _rel(path))
    if notebooks is None:
        notebooks = sorted((PACKAGE / "resources" / "notebooks").glob("*.ipynb"))
    for path in notebooks:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for i, cell in enumerate(cells):
            if cell["cell_type"] == "code":
                code = "".join(cell["source"])
                code = "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                                 for line in code.splitlines())
                found += _private_uses_in(ast.parse(code), "notebook", False,
                                          f"{_rel(path)} cell {i}")
    return found


def test_no_module_uses_another_modules_private_names():
    found = private_name_uses()
    assert found == [], "\n".join(found)


@pytest.mark.parametrize("rel, source, bad", [
    ("arcnb/compare.py", "from .plot.palette import _plt\n", ["arcnb.plot.palette._plt"]),
    ("arcnb/plot/charts.py", "from .palette import (PALETTE,\n    _plt)\n",
     ["arcnb.plot.palette._plt"]),
    ("arcnb/plot/charts.py", "def f():\n    from arcnb.plot.palette import _plt\n",
     ["arcnb.plot.palette._plt"]),
    ("arcnb/plot/charts.py", "from . import palette as P\nP._plt()\n",
     ["arcnb.plot.palette._plt"]),
    ("arcnb/compare.py", "import arcnb.plot.palette\narcnb.plot.palette._plt()\n",
     ["arcnb.plot.palette._plt"]),
    ("arcnb/compare.py", "import arcnb.metrics._tensors as T\n", ["arcnb.metrics._tensors"]),
    ("arcnb/compare.py", "from .metrics._tensors import as_tensor\n",
     ["arcnb.metrics._tensors.as_tensor"]),
    ("arcnb/compare.py", "from .metrics import _tensors\n", ["arcnb.metrics._tensors"]),
    ("arcnb/metrics/grid.py", "from ._tensors import _torch\nfrom . import _tensors\n", []),
    ("arcnb/metrics/grid.py", "from .streaming import _helper\n",
     ["arcnb.metrics.streaming._helper"]),
    ("arcnb/plot/charts.py", "from ..html import escape as _esc\nfrom .palette import pyplot\n"
     "from . import palette\npalette.pyplot()\nfrom ..version import __version__\n", []),
])
def test_the_private_name_check_catches_a_planted_use(tmp_path, monkeypatch, rel, source, bad):
    """Private names (single underscore) and private modules are found in every form of
    import, relative or absolute, at module top or in a function, and as attributes of
    an imported module; public names, dunders, aliases to a private local name and a
    private module used inside its own package pass."""
    pkg = tmp_path / "arcnb"
    for name in ("__init__.py", "compare.py", "html.py", "version.py", "plot/__init__.py",
                 "plot/palette.py", "plot/charts.py", "metrics/__init__.py",
                 "metrics/_tensors.py", "metrics/grid.py", "metrics/streaming.py"):
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text("")
    (tmp_path / rel).write_text(source)
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    found = private_name_uses([tmp_path / rel], notebooks=[])
    assert [f.split(" ", 1)[1] for f in found] == bad
    assert all(f.startswith(rel + ":") for f in found)


def test_the_private_name_check_reads_the_notebooks(tmp_path, monkeypatch):
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    (tmp_path / "arcnb" / "report").mkdir(parents=True)
    for rel in ("arcnb/__init__.py", "arcnb/report/__init__.py"):
        (tmp_path / rel).write_text("")
    nb = tmp_path / "n.ipynb"
    nb.write_text(json.dumps({"cells": [
        {"cell_type": "markdown", "source": ["R._x"]},
        {"cell_type": "code", "source": ["%matplotlib inline\n", "import arcnb.report as R\n",
                                         "R.REPORT\n", "R._sections\n"]}]}))
    found = private_name_uses([], notebooks=[nb])
    assert [f.rsplit(" ", 1)[1] for f in found] == ["arcnb.report._sections"]


# ------------------------------------------------------------- test files follow modules
TESTS = ROOT / "tests"

#: Test files that check the whole product rather than one module, each with its
#: reason. Every other ``tests/test_*.py`` is named after the module it tests (see
#: :func:`module_test_names`); ARCHITECTURE.md's "Tests" section lists these same files.
CROSS_CUTTING = {
    "test_cuda.py": "the metrics, a breakdown and an evaluation on a CUDA device (skipped without)",
    "test_docs.py": "the strict, offline documentation build",
    "test_environment.py": "environment.yml and pyproject.toml list the same packages",
    "test_explore_browser.py": "the explore notebook in a real JupyterLab and browser",
    "test_fuzz.py": "generated files, valid to damaged, through the CLI and the loaders",
    "test_hostile.py": "hostile inputs built on disk, answered with one line or a bound",
    "test_hostile_report.py": "hostile inputs that reach the report, images and the disk",
    "test_layout.py": "static checks of the package layout (this file)",
    "test_odd_inputs.py": "odd inputs and scoring corner cases across the loaders",
    "test_public_names.py": "every name the README and the guide show imports",
    "test_report_browser.py": "the HTML report in a real headless browser",
    "test_robust.py": "relative paths, locks, resumes and one-line refusals end to end",
    "test_vocabulary.py": "no internal vocabulary in anything a user reads",
    "test_wheel.py": "a real wheel installed in a fresh venv, used from anywhere",
}


def module_test_names(package: Path | None = None) -> set[str]:
    """The test file name of every public module of arcnb: ``test_<module>.py`` for a
    module or package at the top (``arcnb/scoring.py``, ``arcnb/plot/``) and
    ``test_<package>_<module>.py`` for a module of a subpackage
    (``arcnb/plot/check.py`` -> ``test_plot_check.py``)."""
    package = PACKAGE if package is None else package
    names = set()
    for path in package.rglob("*.py"):
        parts = path.relative_to(package).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts and not any(p.startswith("_") for p in parts):
            names.add("test_" + "_".join(parts) + ".py")
    return names


def misnamed_test_files(test_files, module_tests, cross_cutting) -> list[str]:
    """The test files named after neither a module nor a listed cross-cutting check."""
    return sorted(f for f in test_files if f not in module_tests and f not in cross_cutting)


def test_every_test_file_is_named_after_a_module_or_is_cross_cutting():
    files = {p.name for p in TESTS.glob("test_*.py")}
    assert misnamed_test_files(files, module_test_names(), CROSS_CUTTING) == []


def test_the_cross_cutting_list_is_exact():
    files = {p.name for p in TESTS.glob("test_*.py")}
    assert sorted(set(CROSS_CUTTING) - files) == []  # no stale entry
    assert sorted(set(CROSS_CUTTING) & module_test_names()) == []  # no module test listed
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split("\n## Tests", 1)[1].split("\n## ", 1)[0]
    shown = set(re.findall(r"`tests/(test_\w+\.py)`", section))
    assert shown - module_test_names() == set(CROSS_CUTTING)


def test_the_naming_check_catches_a_theme_name(tmp_path):
    pkg = tmp_path / "arcnb"
    (pkg / "plot").mkdir(parents=True)
    for rel in ("__init__.py", "scoring.py", "_version.py", "plot/__init__.py",
                "plot/charts.py", "plot/_private.py"):
        (pkg / rel).write_text("")
    names = module_test_names(pkg)
    assert names == {"test_scoring.py", "test_plot.py", "test_plot_charts.py"}
    files = ["test_scoring.py", "test_plot_charts.py", "test_charts_scale.py",
             "test_version.py", "test_charts.py", "test_docs.py"]
    assert misnamed_test_files(files, names, {"test_docs.py": "docs"}) == [
        "test_charts.py", "test_charts_scale.py", "test_version.py"]


def test_html_has_one_home():
    """Escaping, the page look and the content-security policy live in arcnb/html.py:
    no other module imports the standard library's escaping, writes a whole page or a
    policy, or carries its own stylesheet (the report template takes both from there)."""
    offenders = []
    for path in _files():
        rel = _rel(path)
        if rel == "arcnb/html.py":
            continue
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0
                     else [])
            if any(n == "html" or (n or "").startswith("html.") for n in names):
                offenders.append(f"{rel}: imports the standard library's html")
        for marker in ("<!DOCTYPE", "Content-Security-Policy'", "<style"):
            if marker.lower() in text.lower():
                offenders.append(f"{rel}: writes {marker}")
    template = (PACKAGE / "templates" / "arcnb_report" / "index.html.j2").read_text("utf-8")
    assert "resources.arcnb_csp" in template and "resources.arcnb_css" in template
    assert not re.search(r"default-src|border-collapse", template), "the template's own CSS/CSP"
    assert offenders == [], "\n".join(offenders)


# ------------------------------------------------------ the module table is the layout
def _module_table() -> dict[str, str]:
    """ARCHITECTURE.md's module table: ``{"scoring.py": "...", "plot/": "...", ...}``."""
    rows = {}
    for line in (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8").splitlines():
        m = re.match(r"\| `([^`]+)` \| (.*) \|\s*$", line)
        if m:
            rows[m.group(1)] = m.group(2)
    return rows


def _unlisted_modules(package: Path, rows: dict[str, str]) -> list[str]:
    """Modules of ``package`` that the table does not name: a top-level module needs
    its own row; a module of a subpackage is named (``name.py``, or the folder of a
    nested subpackage, ``language/``) in its package's row."""
    missing = []
    for f in sorted(package.rglob("*.py")):
        rel = f.relative_to(package)
        if rel.parts[0] == "resources" or rel.name == "__init__.py" and len(rel.parts) <= 2:
            continue
        if len(rel.parts) == 1:
            if rel.name not in rows and rel.name != "__main__.py":
                missing.append(str(rel))
            continue
        row = rows.get(rel.parts[0] + "/", "")
        inner = "/".join(rel.parts[1:])
        named = {f"`{inner}`", f"`{rel.name}`"} | {
            f"`{'/'.join(rel.parts[1:i])}/`" for i in range(2, len(rel.parts))}
        if rel.name == "__main__.py":
            continue
        if not any(n in row for n in named):
            missing.append(str(rel))
    return missing


def test_every_module_has_its_line_in_the_architecture_table():
    """ARCHITECTURE.md is the truth about the layout: every module of the package is
    named in its module table (``__main__.py`` is named in the ``cli.py`` row), and
    every module a package's row names exists."""
    rows = _module_table()
    assert not _unlisted_modules(ROOT / "arcnb", rows)
    assert "__main__.py" in rows["cli.py"]
    ghosts = []
    for key, row in rows.items():
        if not key.endswith("/"):
            assert (ROOT / "arcnb" / key).is_file(), f"the table names a missing module {key}"
            continue
        for name in re.findall(r"`([\w/]+\.py)`", row):
            here = list((ROOT / "arcnb" / key).rglob(name.split("/")[-1]))
            if not here and not (ROOT / "arcnb" / name).is_file() \
                    and not (ROOT / name).is_file():  # a script of the clone
                ghosts.append(f"{key}: {name}")
    assert not ghosts, ghosts


def test_the_module_table_check_finds_an_unlisted_module(tmp_path):
    pkg = tmp_path / "arcnb"
    (pkg / "plot").mkdir(parents=True)
    for f in ("scoring.py", "plot/__init__.py", "plot/charts.py", "plot/newfigs.py", "extra.py"):
        (pkg / f).write_text("")
    rows = {"scoring.py": "x", "plot/": "`charts.py` (charts)"}
    assert _unlisted_modules(pkg, rows) == ["extra.py", "plot/newfigs.py"]


#: Modules without a test file of their own, with the reason.
NO_TEST_FILE = {
    "__main__.py": "two lines that call cli.main (the command line's tests run it)",
    "_version.py": "one constant",
}


def test_every_module_has_its_test_file():
    """One test file per module (the rule under "Tests" in ARCHITECTURE.md):
    ``tests/test_<module>.py`` for a module or package at the top of ``arcnb/``, and
    ``tests/test_<package>_<module>.py`` or the package's own file for a module of a
    subpackage."""
    tests = ROOT / "tests"
    missing = []
    for f in sorted((ROOT / "arcnb").rglob("*.py")):
        rel = f.relative_to(ROOT / "arcnb")
        if rel.parts[0] in ("resources",) or rel.name == "__init__.py" or str(rel) in NO_TEST_FILE:
            continue
        stem = "_".join(rel.with_suffix("").parts).lstrip("_")
        if not ((tests / f"test_{stem}.py").is_file()
                or (tests / f"test_{rel.parts[0].removesuffix('.py')}.py").is_file()):
            missing.append(str(rel))
    assert not missing, missing


def test_the_tests_choose_matplotlibs_backend_in_one_place():
    """``conftest.py`` sets matplotlib's backend once for every test process; no test
    module sets it again (fifteen did)."""
    tests = Path(__file__).resolve().parent
    setters = sorted(p.name for p in tests.glob("*.py")
                     if re.search(r"matplotlib\.use\(", p.read_text()))
    assert setters == ["conftest.py"]


# ------------------------------------------------------------ slow tests carry their mark
#: What a test's code names when it starts a Jupyter kernel (papermill, nbclient, arcnb's
#: ``run_notebook``), a browser (playwright), the docs build (sphinx) or another process:
#: such a test carries the ``slow`` mark that ``make test-fast`` leaves out, in its own
#: file (``pytestmark = pytest.mark.slow`` or ``@pytest.mark.slow``).
STARTS_A_PROCESS = {"papermill", "run_notebook", "nbclient", "NotebookClient", "jupyter_client",
                    "KernelManager", "playwright", "sync_playwright", "sphinx", "subprocess",
                    "multiprocessing", "start_processes", "torchrun"}


def _is_slow_mark(node: ast.AST) -> bool:
    """``pytest.mark.slow`` (or ``pytest.mark.slow(...)``) anywhere in ``node``."""
    return any(isinstance(n, ast.Attribute) and n.attr == "slow"
               and isinstance(n.value, ast.Attribute) and n.value.attr == "mark"
               for n in ast.walk(node))


def _is_fixture(fn: ast.FunctionDef) -> bool:
    return any("fixture" in ast.unparse(d) for d in fn.decorator_list)


def _helper_imports(nodes, trees: dict) -> dict:
    """What the import statements among ``nodes`` bind to the test helpers: a name to the
    ``(file, name)`` of a function (``from _cli import cli``), a module's alias to its file
    (``import _report_fixture as F``)."""
    bind = {}
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and f"{node.module}.py" in trees:
            for a in node.names:
                bind[a.asname or a.name] = (f"{node.module}.py", a.name)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if f"{a.name}.py" in trees:
                    bind[a.asname or a.name] = f"{a.name}.py"
    return bind


def _functions(tests: Path) -> dict:
    """``{(file, name): (function, its bindings)}`` for the module-level functions of
    every ``tests/*.py``; the bindings map a name to the ``(file, name)`` it calls (its
    file's functions, those it or its file imports from the test helpers) or, for an
    imported helper module, to the module's file."""
    trees = {p.name: ast.parse(p.read_text(encoding="utf-8")) for p in sorted(tests.glob("*.py"))}
    out = {}
    for name, tree in trees.items():
        bind = _helper_imports(tree.body, trees)
        defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        bind.update({fn.name: (name, fn.name) for fn in defs})
        for fn in defs:
            out[(name, fn.name)] = (fn, {**bind, **_helper_imports(ast.walk(fn), trees)})
    return out


def _starts_a_process(key, functions, seen=None) -> str | None:
    """What in function ``key`` starts a kernel, a browser or a process, followed through
    the functions it calls, the fixtures it takes (its file's, then ``conftest.py``'s) and
    the test helpers; None when nothing does."""
    seen = set() if seen is None else seen
    if key in seen or key not in functions:
        return None
    seen.add(key)
    fn, bind = functions[key]
    code = [fn.args, *fn.body]
    for node in (n for part in code for n in ast.walk(part)):
        names = {node.id if isinstance(node, ast.Name) else getattr(node, "attr", None)}
        if isinstance(node, ast.Import):
            names = {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            names = {(node.module or "").split(".")[0]}
        if names & STARTS_A_PROCESS:
            return f"{key[0]}::{key[1]} names {min(names & STARTS_A_PROCESS)}"
        callee = None
        if isinstance(node, ast.Name) and isinstance(bind.get(node.id), tuple):
            callee = bind[node.id]
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
              and isinstance(bind.get(node.value.id), str)):
            callee = (bind[node.value.id], node.attr)
        if callee and (why := _starts_a_process(callee, functions, seen)):
            return why
    for arg in fn.args.args:
        for fixture in ((key[0], arg.arg), ("conftest.py", arg.arg)):
            if fixture in functions and _is_fixture(functions[fixture][0]):
                if why := _starts_a_process(fixture, functions, seen):
                    return why
                break
    return None


def unmarked_slow_tests(tests: Path = TESTS) -> list[str]:
    """The tests that start a kernel, a browser, the docs build or another process (see
    :data:`STARTS_A_PROCESS`) without the ``slow`` mark, each with what starts it."""
    functions = _functions(tests)
    out = []
    for path in sorted(tests.glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "pytestmark" for t in n.targets)
               and _is_slow_mark(n.value) for n in tree.body):
            continue
        for fn in tree.body:
            if (isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name.startswith("test_")
                    and not any(_is_slow_mark(d) for d in fn.decorator_list)):
                if why := _starts_a_process((path.name, fn.name), functions):
                    out.append(f"{path.name}::{fn.name} ({why})")
    return out


def test_every_test_that_starts_a_process_is_marked_slow():
    """The ``slow`` mark is written in the test's file, not guessed: a test that starts a
    kernel, a browser, the docs build or another process carries it (whole files by
    ``pytestmark = pytest.mark.slow``), so that ``make test-fast`` leaves it out."""
    assert unmarked_slow_tests() == []


def test_the_slow_check_catches_an_unmarked_test(tmp_path):
    (tmp_path / "_helpers.py").write_text("import subprocess\n\n\ndef run():\n    subprocess.run(['true'])\n")
    (tmp_path / "conftest.py").write_text(
        "import pytest\n\n\n@pytest.fixture\ndef kernel():\n    import papermill\n    return papermill\n")
    (tmp_path / "test_a.py").write_text(
        "import pytest\nfrom _helpers import run\n\n\n"
        "def _indirect():\n    run()\n\n\n"
        "def test_helper():\n    _indirect()\n\n\n"
        "def test_fixture(kernel):\n    pass\n\n\n"
        "@pytest.mark.slow  # starts another process\ndef test_marked():\n    run()\n\n\n"
        "def test_plain():\n    assert 1\n")
    (tmp_path / "test_b.py").write_text(
        "import pytest\nimport subprocess\n\npytestmark = pytest.mark.slow\n\n\n"
        "def test_in_a_slow_file():\n    subprocess.run(['true'])\n")
    (tmp_path / "test_c.py").write_text(
        "def test_imports():\n    import os, subprocess\n    subprocess.run(['true'])\n")
    assert [line.split(" ")[0] for line in unmarked_slow_tests(tmp_path)] == [
        "test_a.py::test_helper", "test_a.py::test_fixture", "test_c.py::test_imports"]


# ------------------------------------------------------------ one copy of each fixture
def _fixtures(path: Path):
    """``(name, body)`` of each fixture ``path`` defines, the body as ``ast.unparse``
    writes it, its docstring left out."""
    for fn in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_fixture(fn):
            body = fn.body[1:] if ast.get_docstring(fn) is not None else fn.body
            yield fn.name, ast.unparse(ast.Module(body=body, type_ignores=[]))


def copied_fixtures(tests: Path = TESTS) -> list[str]:
    """The fixtures of the test files that redefine a fixture of ``conftest.py`` (its
    name) or repeat the body of another fixture (``conftest.py``'s or a test file's):
    a fixture that several files need is defined once, in ``conftest.py``."""
    shared = dict(_fixtures(tests / "conftest.py"))
    seen = {body: f"conftest.py::{name}" for name, body in shared.items()}
    out = []
    for path in sorted(tests.glob("test_*.py")):
        for name, body in _fixtures(path):
            where = f"{path.name}::{name}"
            if name in shared:
                out.append(f"{where} redefines conftest.py::{name}")
            elif body in seen:
                out.append(f"{where} repeats {seen[body]}")
            else:
                seen[body] = where
    return out


def test_no_test_file_copies_a_fixture():
    """The dataset (``ds``, ``arc1_eval``, ``arc2_eval``), the default report
    (``default_report``) and the figures' clean-up (``_close_figures``) are defined once,
    in ``conftest.py``; a module narrows ``ds`` by ``DS_TASKS`` or ``DS_FIRST``."""
    assert copied_fixtures() == []


def test_the_fixture_check_catches_a_copy(tmp_path):
    fixture = "import pytest\n\n\n@pytest.fixture\ndef {}():\n    {}return {}\n\n\n"
    (tmp_path / "conftest.py").write_text(fixture.format("ds", "", 1))
    (tmp_path / "test_a.py").write_text(fixture.format("ds", "", 2)
                                        + fixture.format("runs", '"""Runs."""\n    ', [3]))
    (tmp_path / "test_b.py").write_text(fixture.format("one", "", 1) + fixture.format("runs", "", [3])
                                        + fixture.format("own", "", 4))
    assert copied_fixtures(tmp_path) == ["test_a.py::ds redefines conftest.py::ds",
                                         "test_b.py::one repeats conftest.py::ds",
                                         "test_b.py::runs repeats test_a.py::runs"]


def feature_families() -> list[dict]:
    """The rows of ARCHITECTURE.md's "Feature families" table: the family and, for each
    of its parts, the paths named (in backticks) in that column."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    part = text.split("## Feature families", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in part.splitlines() if line.startswith("| ") and "---" not in line]
    head = [c.strip() for c in rows[0].strip("|").split("|")]
    families = []
    for line in rows[1:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        row = {"family": cells[0]}
        for name, cell in zip(head[1:], cells[1:]):
            row[name] = [p for p in re.findall(r"`([^`]+)`", cell) if p.endswith((".py", "/"))]
        families.append(row)
    return families


def test_every_feature_family_keeps_its_parts_where_the_table_says():
    """Each family's computation, figures, sections and command are where ARCHITECTURE.md's
    table names them, and each place holds that part: figures that take ``ax``, sections
    on a page, a command of ``cli.py``."""
    import inspect

    from arcnb import cli
    from arcnb.report import sections as S
    from arcnb.report.sections import arc3 as A
    from arcnb.report.sections.base import Section

    families = feature_families()
    assert len(families) >= 6, "the table of feature families is gone"
    on_a_page = {c for page in (*S.PAGES.values(), A.ARC3) for c in page}
    commands = {m.__name__ for m in cli.COMMANDS}
    problems = []
    for fam in families:
        for column in ("computation", "figures", "sections", "command"):
            if not fam[column]:
                problems.append(f"{fam['family']}: no {column}")
            for rel in fam[column]:
                if not (PACKAGE / rel).exists():
                    problems.append(f"{fam['family']}: {column} {rel} does not exist")
        for rel in fam["figures"]:
            mod = importlib.import_module(_module_name(PACKAGE / rel))
            draws = [n for n, f in inspect.getmembers(mod, inspect.isfunction)
                     if f.__module__ == mod.__name__ and not n.startswith("_")
                     and "ax" in inspect.signature(f).parameters]
            if not draws:
                problems.append(f"{fam['family']}: {rel} draws nothing on an ax")
        for rel in fam["sections"]:
            mod = importlib.import_module(_module_name(PACKAGE / rel))
            mine = [c for _, c in inspect.getmembers(mod, inspect.isclass)
                    if issubclass(c, Section) and c.__module__ == mod.__name__
                    and not c.__name__.startswith("_")]
            if not mine or not set(mine) <= on_a_page:
                problems.append(f"{fam['family']}: {rel} holds no section, or one on no page")
        for rel in fam["command"]:
            if _module_name(PACKAGE / rel) not in commands:
                problems.append(f"{fam['family']}: {rel} is not one of cli.py's commands")
    assert problems == []
