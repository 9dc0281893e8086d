"""Grid validation (arcnb.grids) on hostile cells: booleans are never colours."""
from __future__ import annotations

import ast
import doctest
import json
from pathlib import Path

import numpy as np
import pytest

from arcnb.data import load_dataset
from arcnb.errors import GridError
from arcnb.grids import (as_grid_or_none, best_attempt, cell_accuracy, grid_problem, same_grid,
                         validate_grid)


@pytest.mark.parametrize("grid", [[[1, True]], [[True]], [[0, 1], [False, 2]],
                                  [[1, 2], [3, True]]])
def test_a_boolean_cell_makes_the_grid_malformed(grid):
    assert grid_problem(grid) == "grid holds a boolean (true/false), not a colour"
    assert as_grid_or_none(grid) is None
    with pytest.raises(GridError, match="boolean"):
        validate_grid(grid)


def test_integer_grids_are_unchanged():
    assert grid_problem([[1, 2], [3, 0]]) is None
    assert as_grid_or_none([[1, 2], [3, 0]]).tolist() == [[1, 2], [3, 0]]
    assert grid_problem(np.array([[True]])) is not None  # a boolean array, as before


def test_a_task_file_with_a_boolean_cell_is_refused(tmp_path):
    (tmp_path / "t.json").write_text(json.dumps(
        {"train": [{"input": [[1, True]], "output": [[1]]}],
         "test": [{"input": [[0]], "output": [[1]]}]}))
    with pytest.raises(GridError, match=r"train\[0\]\.input: grid holds a boolean"):
        load_dataset(tmp_path)


# ---------------------------------------------------------------- grid equality, one home

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "arcnb"
#: numpy's whole-array equality tests: only arcnb/grids.py may call them (``same_grid``).
EQUALITY = {"array_equal", "array_equiv"}
#: Modules allowed to call them, with the reason. Empty: the tensor metrics of
#: arcnb/metrics/ compare tensors with torch, and metrics/credit.py's grids go through
#: same_grid like every other grid.
EXEMPT: dict[str, str] = {}


def _equality_calls(path: Path) -> list[str]:
    """``file:line name`` of every call of numpy's array equality in ``path``: as
    ``np.array_equal`` / ``numpy.array_equal`` (any alias of numpy) or imported by name
    (``from numpy import array_equal [as eq]``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    numpy_names, direct = {"np", "numpy"}, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            numpy_names |= {a.asname or a.name for a in node.names if a.name == "numpy"}
        elif isinstance(node, ast.ImportFrom) and node.module == "numpy":
            direct |= {a.asname or a.name for a in node.names if a.name in EQUALITY}
    hits = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if (isinstance(f, ast.Attribute) and f.attr in EQUALITY and isinstance(f.value, ast.Name)
                and f.value.id in numpy_names) or (isinstance(f, ast.Name) and f.id in direct):
            hits.append(f"{path.name}:{node.lineno} {ast.unparse(f)}")
    return hits


def test_only_grids_compares_whole_arrays():
    """"Is this grid right" has one home: :func:`arcnb.grids.same_grid`. No module of
    arcnb/ other than grids.py calls ``np.array_equal`` (or ``array_equiv``)."""
    offenders = {}
    for path in sorted(PKG.rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        if rel == "arcnb/grids.py" or rel in EXEMPT:
            continue
        hits = _equality_calls(path)
        if hits:
            offenders[rel] = hits
    assert offenders == {}, "compare grids with arcnb.grids.same_grid"


def test_the_equality_check_sees_every_spelling(tmp_path):
    """The check is not vacuous: each way of calling numpy's equality is caught."""
    p = tmp_path / "m.py"
    p.write_text("import numpy\nimport numpy as xp\nfrom numpy import array_equal as eq, array_equiv\n"
                 "import numpy as np\n\n"
                 "def f(a, b):\n    '''np.array_equal(a, b) in words is fine'''\n"
                 "    return (np.array_equal(a, b), numpy.array_equal(a, b), xp.array_equiv(a, b),\n"
                 "            eq(a, b), array_equiv(a, b), a.array_equal(b))\n", encoding="utf-8")
    assert [h.split(" ", 1)[1] for h in _equality_calls(p)] == [
        "np.array_equal", "numpy.array_equal", "xp.array_equiv", "eq", "array_equiv"]


@pytest.mark.parametrize(("a", "b", "same"), [
    ([[1, 2], [3, 4]], [[1, 2], [3, 4]], True),
    (np.array([[1, 2]], np.int8), np.array([[1, 2]], np.int16), True),   # dtypes may differ
    ([[1, 2], [3, 4]], [[1, 2], [3, 5]], False),                          # one cell
    ([[1, 2]], [[1], [2]], False),                                        # shape first
    ([[0, 0]], [[0], [0]], False),                                        # same cells, other shape
    ([[1, 1]], [[1]], False),                                             # never broadcast
    (None, [[1]], False), ([[1]], None, False),                           # a missing attempt
    (None, None, False),                                                  # ... is never right
])
def test_same_grid(a, b, same):
    assert same_grid(a, b) is same
    assert same_grid(b, a) is same


def test_cell_accuracy():
    assert cell_accuracy([[1, 2], [3, 4]], [[1, 2], [3, 0]]) == 0.75
    assert cell_accuracy(np.array([[5]], np.int8), np.array([[5]], np.int64)) == 1.0
    assert np.isnan(cell_accuracy([[1, 2]], [[1], [2]]))
    assert np.isnan(cell_accuracy(None, [[1]]))
    assert cell_accuracy(None, [[1]], otherwise=0.0) == 0.0
    assert cell_accuracy([[1, 2]], [[1], [2]], otherwise=0.0) == 0.0


def test_best_attempt_agrees_with_same_grid_and_cell_accuracy():
    truth = np.array([[1, 2], [3, 4]])
    attempts = [None, np.array([[1, 2]]), np.array([[1, 0], [3, 0]]), np.array([[1, 2], [3, 0]])]
    assert best_attempt(truth, attempts) == (3, cell_accuracy(attempts[3], truth))
    assert best_attempt(truth, attempts + [truth.copy()]) == (4, 1.0)
    assert same_grid(attempts[3], truth) is False


def test_grids_doctests():
    import arcnb.grids

    res = doctest.testmod(arcnb.grids)
    assert res.attempted >= 2 and res.failed == 0
