"""arcnb.arc3.baselines: human baselines from metadata.json folders and CSV files."""
from __future__ import annotations

import json

import pytest

from arcnb.arc3 import read_baselines
from arcnb.errors import BaselinesError


def _meta(path, **fields):
    path.mkdir(parents=True, exist_ok=True)
    (path / "metadata.json").write_text(json.dumps(fields))


def test_the_toolkits_layout_and_one_folder_per_game(tmp_path):
    _meta(tmp_path / "ls20" / "9607627b", game_id="ls20-9607627b", title="LS20",
          baseline_actions=[55, 8, 41])
    _meta(tmp_path / "ft09" / "0a1b2c3d", baseline_actions=[3, 4])        # no game_id
    _meta(tmp_path / "vc33-77777777", baseline_actions=[9])               # one folder
    _meta(tmp_path / "xx01" / "ffffffff", game_id="xx01-ffffffff")        # none yet
    assert read_baselines(tmp_path) == {"ls20-9607627b": [55, 8, 41],
                                        "ft09-0a1b2c3d": [3, 4], "vc33-77777777": [9],
                                        "xx01-ffffffff": []}
    assert read_baselines(tmp_path / "ls20" / "9607627b" / "metadata.json") == \
        {"ls20-9607627b": [55, 8, 41]}


def test_a_csv(tmp_path):
    p = tmp_path / "b.csv"
    p.write_text("game_id,level,baseline_actions\nls20-1,2,8\nls20-1,1,55\nft09-2,1,3\n\n")
    assert read_baselines(p) == {"ls20-1": [55, 8], "ft09-2": [3]}


@pytest.mark.parametrize("text, needle", [
    ("game,level,actions\n", "the header must be"),
    ("game_id,level,baseline_actions\nls20-1,0,8\n", "level 0 is not in 1-254"),
    ("game_id,level,baseline_actions\nls20-1,1,8\nls20-1,1,9\n", "listed twice"),
    ("game_id,level,baseline_actions\nls20-1,2,8\n", "lacks level 1"),
    ("game_id,level,baseline_actions\nls20-1,1,many\n", "whole numbers"),
    ("game_id,level,baseline_actions\nls20-1,1,-4\n", "not a whole number of actions"),
    ("game_id,level,baseline_actions\nls20-1,1\n", "expected 3 values"),
    ("game_id,level,baseline_actions\n", "holds no baseline"),
])
def test_a_bad_csv_is_refused_in_one_line(tmp_path, text, needle):
    p = tmp_path / "b.csv"
    p.write_text(text)
    with pytest.raises(BaselinesError) as e:
        read_baselines(p)
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_bad_metadata_is_refused(tmp_path):
    _meta(tmp_path / "a" / "v1", game_id="a-v1", baseline_actions=[1, "two"])
    with pytest.raises(BaselinesError, match="not a whole number"):
        read_baselines(tmp_path)
    (tmp_path / "a" / "v1" / "metadata.json").write_text("{not json")
    with pytest.raises(BaselinesError, match="not valid JSON"):
        read_baselines(tmp_path)


def test_two_different_baselines_for_one_game_are_refused(tmp_path):
    _meta(tmp_path / "a", game_id="g-1", baseline_actions=[1])
    _meta(tmp_path / "b", game_id="g-1", baseline_actions=[2])
    with pytest.raises(BaselinesError, match="two different baselines"):
        read_baselines(tmp_path)


def test_a_folder_without_metadata_and_a_missing_file(tmp_path):
    with pytest.raises(BaselinesError, match="holds no metadata.json"):
        read_baselines(tmp_path)
    with pytest.raises(BaselinesError, match="not found"):
        read_baselines(tmp_path / "none.csv")


def test_a_mapping_is_checked(tmp_path):
    assert read_baselines({"g": (1, 2)}) == {"g": [1, 2]}
    with pytest.raises(BaselinesError):
        read_baselines({"g": [1.5]})
    with pytest.raises(BaselinesError, match="more than 254"):
        read_baselines({"g": [1] * 300})
