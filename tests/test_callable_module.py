"""A package you call (arcnb/callable_module.py): the module stays the module, a call
calls the function, and it is the one home of the trick (no other module changes a
module's class)."""
from __future__ import annotations

import ast
import inspect
import sys
import types
from pathlib import Path

import arcnb.candidates
import arcnb.repeats  # noqa: F401  (loaded: both packages are checked)
from arcnb.callable_module import callable_module

ROOT = Path(__file__).resolve().parents[1]


def test_a_module_made_callable_stays_the_module(monkeypatch):
    mod = types.ModuleType("arcnb_test_callable")
    mod.value = 3
    monkeypatch.setitem(sys.modules, mod.__name__, mod)

    def add(a, b=1, *, c=0):
        """Add them."""
        return a + b + c + mod.value

    assert callable_module(mod.__name__, add) is mod
    assert isinstance(mod, types.ModuleType) and sys.modules[mod.__name__] is mod
    assert mod(1) == 5 and mod(1, 2, c=4) == 10 and mod.value == 3
    assert type(mod).__call__.__doc__ == "Add them."
    assert list(inspect.signature(type(mod).__call__).parameters) == ["a", "b", "c"]


def test_the_callable_packages():
    import arcnb.repeats.runs  # noqa: F401  (a submodule still imports)

    for mod, func in ((arcnb.repeats, arcnb.repeats.repeats),
                      (arcnb.candidates, arcnb.candidates.candidates)):
        assert isinstance(mod, types.ModuleType) and callable(mod)
        assert type(mod).__call__.__wrapped__ is func
        assert sys.modules[mod.__name__] is mod


def test_no_other_module_changes_a_module_class():
    """The trick has one home: no module but this one assigns ``__class__`` or
    subclasses ``types.ModuleType``."""
    home = ROOT / "arcnb" / "callable_module.py"
    found = []
    for f in sorted((ROOT / "arcnb").rglob("*.py")):
        if f == home:
            continue
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Attribute) and t.attr == "__class__" for t in node.targets):
                found.append(f"{f.relative_to(ROOT)}:{node.lineno}")
            if isinstance(node, ast.ClassDef) and any(
                    ast.unparse(b).endswith("ModuleType") for b in node.bases):
                found.append(f"{f.relative_to(ROOT)}:{node.lineno}")
    assert found == []
