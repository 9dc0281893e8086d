"""arcnb.arc3.tables: per level, per game, per run, against hand-computed values."""
from __future__ import annotations

import math

import pytest

import _arc3_game as G
from arcnb import arc3
from arcnb.arc3.tables import GAME_COLUMNS, LEVEL_COLUMNS, RUN_COLUMNS, game_table, \
    level_table, run_table


@pytest.fixture
def card(tmp_path):
    return arc3.score(tmp_path, G.scenario(tmp_path))


def test_level_table(card):
    lv = level_table(card)
    assert list(lv.columns) == list(LEVEL_COLUMNS)
    a = lv[(lv["game_id"] == "tw01-0a1b2c3d") & (lv["play"] == 1)].set_index("level")
    # play 1 of tw01 (see _arc3_game.scenario): level 1 in 10 actions (5 of them ACTION5,
    # which leave the frame as it is), level 2 in 8 with one level reset, level 3 in 11
    # with a GAME_OVER and a level reset; one second per recorded step
    assert list(a["actions"]) == [10, 8, 11] and list(a["baseline"]) == [5, 5, 8]
    assert list(a["ratio"]) == pytest.approx([2.0, 1.6, 11 / 8])
    assert list(a["resets"]) == [0, 1, 1] and list(a["game_overs"]) == [0, 0, 1]
    assert list(a["unchanged_actions"]) == [5, 0, 0]
    assert list(a["seconds_per_action"]) == [1.0, 1.0, pytest.approx(12 / 11)]
    assert a["tokens_per_action"].isna().all()
    assert not a["best_play"].any()
    assert lv[(lv["game_id"] == "tw01-0a1b2c3d") & (lv["play"] == 3)]["best_play"].all()


def test_game_table(card):
    g = game_table(card).set_index("game_id")
    assert list(g.reset_index().columns) == list(GAME_COLUMNS)
    b = g.loc["tw02-1b2c3d4e"]
    # levels 1 and 2 scored above 0 of 3: cap 100 x (1 + 2) / 6
    assert b["completion_cap"] == 50.0
    assert (b["best_play_actions"], b["baseline_actions"]) == (13.0, 10.0)
    assert b["actions_per_baseline"] == pytest.approx(1.3)
    assert math.isnan(g.loc["tw03-2c3d4e5f", "completion_cap"])  # no baselines
    a = g.loc["tw01-0a1b2c3d"]
    assert (a["plays"], a["won"], a["first_play_score"] < a["score"]) == (3, True, True)


def test_run_table(card, tmp_path):
    r = run_table(card)
    assert list(r.columns) == list(RUN_COLUMNS) and len(r) == 1
    row = r.iloc[0]
    assert row["score"] == pytest.approx(31.875) and row["n_games"] == 4
    assert row["ci_low"] <= row["score"] <= row["ci_high"]
    assert (row["games_won"], row["levels_completed"], row["actions"], row["faults"]) == \
        (1, 3 + 2 + 1 + 2, 52 + 15 + 5 + 10, 2)
    assert row["rule"] == "0.9.9"


def test_a_level_without_actions_has_nan_per_action(tmp_path):
    card = arc3.score(G.write_lines(tmp_path / "r.jsonl", G.level_walk([2])),
                      {"hb01-00000001": [2, 3]})
    lv = level_table(card).set_index("level")
    assert lv.loc[2, "actions"] == 0 and math.isnan(lv.loc[2, "seconds_per_action"])


def test_a_game_scored_zero_for_its_baselines_has_no_cap_nor_ratio(card):
    g = game_table(card).set_index("game_id")
    # tw04: one baseline for a game whose play completed two levels
    assert math.isnan(g.loc["tw04-3d4e5f6a", "completion_cap"])
    assert math.isnan(g.loc["tw04-3d4e5f6a", "baseline_actions"])
    assert math.isnan(g.loc["tw04-3d4e5f6a", "actions_per_baseline"])
