"""Grid validation (arcnb.grids) on hostile cells: booleans are never colours."""
from __future__ import annotations

import json

import numpy as np
import pytest

from arcnb.data import load_dataset
from arcnb.errors import GridError
from arcnb.grids import as_grid_or_none, grid_problem, validate_grid


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
