"""arcnb.arc3.faults: every recorder fault, detected on a crafted recording, named, and
never repaired (the score stays the score of the steps as recorded)."""
from __future__ import annotations

import json

import pytest

import _arc3_game as G
from arcnb import arc3
from arcnb.arc3.faults import FAULT_KINDS, faults_table

BASE = {"hb01-00000001": [2, 2]}


def _kinds(card):
    return [f["kind"] for f in card.faults]


def test_a_clean_recording_has_no_fault(tmp_path):
    game = G.Game()
    G.play(tmp_path / "r.jsonl", G.agent(game), game=game)
    card = arc3.score(tmp_path / "r.jsonl", {game.game_id: game.baseline()})
    assert card.faults == [] and card.score == 100.0


def test_every_action_recorded_as_reset_while_the_frames_change(tmp_path):
    # the game was played (the board moved, a level was completed) but every step says RESET
    lines = [G.step("RESET", 0, full=True, colour=1), G.step("RESET", 0, colour=2),
             G.step("RESET", 1, colour=3), G.step("RESET", 1, colour=4)]
    path = G.write_lines(tmp_path / "r.jsonl", lines)
    card = arc3.score(path, BASE)
    f = [x for x in card.faults if x["kind"] == "all_actions_reset"]
    assert len(f) == 1 and "all 4 steps are recorded as RESET" in f[0]["detail"]
    assert "the frame changed 3 times" in f[0]["detail"] and f[0]["recording"] == str(path)
    # never repaired: the scorecard counts what is recorded (three level resets)
    g = card.summary()["games"]["hb01-00000001"]
    assert (g["actions"], g["resets"]) == (3, 3)


def test_repeated_full_resets_are_not_that_fault(tmp_path):
    lines = [G.step("RESET", 0, full=True), G.step("RESET", 0, full=True)]
    card = arc3.score(G.write_lines(tmp_path / "r.jsonl", lines), BASE)
    assert "all_actions_reset" not in _kinds(card)


def test_all_resets_without_frames_but_levels_changing(tmp_path):
    lines = [G.step("RESET", 0, full=True, frame="absent"), G.step("RESET", 1, frame="absent")]
    card = arc3.score(G.write_lines(tmp_path / "r.jsonl", lines), BASE)
    f = [x for x in card.faults if x["kind"] == "all_actions_reset"]
    assert f and "levels completed changed 1 times" in f[0]["detail"]


def test_a_missing_first_frame(tmp_path):
    lines = G.level_walk([2, 2])[1:]  # the opening RESET was not recorded
    card = arc3.score(G.write_lines(tmp_path / "r.jsonl", lines), BASE)
    assert _kinds(card) == ["missing_first_frame", "never_started"]
    assert "is ACTION5, not the opening RESET" in card.faults[0]["detail"]
    frameless = [G.step("RESET", full=True, frame="absent")] + G.level_walk([2, 2])[1:]
    card2 = arc3.score(G.write_lines(tmp_path / "b.jsonl", frameless), BASE)
    assert _kinds(card2) == ["missing_first_frame"]
    assert "has no frame while later steps have one" in card2.faults[0]["detail"]


@pytest.mark.parametrize("cap, extra, words", [(4, 1, "one too many"), (2, 3, "3 more")])
def test_steps_past_a_declared_action_cap(tmp_path, cap, extra, words):
    path = G.write_lines(tmp_path / "r.jsonl", G.level_walk([2, 2]))  # 5 actions with RESET
    card = arc3.score(path, BASE, max_actions=cap)
    f = [x for x in card.faults if x["kind"] == "past_action_cap"]
    assert len(f) == 1 and words in f[0]["detail"]
    assert f"5 actions recorded, {extra} more than the declared cap of {cap}" in f[0]["detail"]
    assert card.score == 100.0  # not repaired
    assert "past_action_cap" not in _kinds(arc3.score(path, BASE, max_actions=5))


def test_the_cap_a_harness_run_declares(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "run_meta.json").write_text(json.dumps({"game_id": "hb01-00000001",
                                                     "max_actions": 2,
                                                     "competition_mode": True}))
    for k, s in enumerate(G.level_walk([2]) + G.level_walk([1])):
        (folder / f"step_{k:03d}.json").write_text(json.dumps(s))
    card = arc3.score(folder, {"hb01-00000001": [2]})
    assert sorted(_kinds(card)) == ["full_reset_in_competition", "past_action_cap"]


def test_full_resets_in_a_run_claiming_competition_mode(tmp_path):
    path = G.write_lines(tmp_path / "r.jsonl", G.level_walk([4, ("open", 1)]) +
                         G.level_walk([2, 2]))
    plain = arc3.score(path, BASE)
    assert "full_reset_in_competition" not in _kinds(plain)
    card = arc3.score(path, BASE, competition=True)
    f = [x for x in card.faults if x["kind"] == "full_reset_in_competition"]
    assert len(f) == 1 and "1 full resets after the first (lines 7)" in f[0]["detail"]
    # the best play still scores the game; the first play is what competition mode gives
    assert card.score == 100.0 and card.first_play_score == pytest.approx(25 / 3)


def test_a_recording_without_frames(tmp_path):
    game = G.Game()
    G.play(tmp_path / "r.jsonl", G.agent(game), game=game, frames=False)
    card = arc3.score(tmp_path / "r.jsonl", {game.game_id: game.baseline()})
    assert _kinds(card) == ["no_frames"] and card.score == 100.0
    assert card.levels["unchanged_actions"].isna().all()


def test_missing_and_short_baselines(tmp_path):
    path = G.write_lines(tmp_path / "r.jsonl", G.level_walk([2, 2]))
    card = arc3.score(path, {"hb01-00000009": [2, 2]})
    f = card.faults[0]
    assert f["kind"] == "baselines_missing" and "baselines exist for hb01-00000009" in f["detail"]
    short = arc3.score(path, {"hb01-00000001": [2]})
    assert _kinds(short) == ["baselines_short"]
    assert "1 baselines but the play changed its levels completed 2 times" in \
        short.faults[0]["detail"]
    assert short.score == 0.0


def test_the_recorders_scorecard_line_differs(tmp_path):
    lines = G.level_walk([2, 2])
    lines.append({"timestamp": "2026-03-25T13:00:00+00:00",
                  "data": {"hb01-00000001": {"game_id": "hb01-00000001", "actions": [5]}}})
    name = "hb01-00000001.agent.10.1234.recording.jsonl"
    card = arc3.score(G.write_lines(tmp_path / name, lines), BASE)
    f = card.faults[0]
    assert f["kind"] == "recorded_scorecard_differs"
    assert "counts 5 actions, the recorded steps 4" in f["detail"]
    lines[-1]["data"]["hb01-00000001"]["actions"] = [4]
    ok = arc3.score(G.write_lines(tmp_path / "b" / name, lines), BASE)
    assert ok.faults == []


def test_fault_details_are_one_line_and_every_kind_is_described(tmp_path):
    lines = [G.step("ACTION1", game="bad\nid\u202e", guid="x")]
    card = arc3.score(G.write_lines(tmp_path / "r.jsonl", lines), {})
    for f in card.faults:
        assert f["kind"] in FAULT_KINDS
        assert "\n" not in f["detail"] and "\u202e" not in f["detail"]
    df = faults_table(card.faults)
    assert list(df.columns) == ["recording", "game_id", "kind", "detail"]


def test_levels_beyond_the_game_falling_levels_and_a_session_recorded_twice(tmp_path):
    """Each named once, with its line: a step with more levels completed than the game
    has; levels that fall without a RESET while the game runs (not a step sent after it
    ended, which answers 0); one game session (guid) in two recordings."""
    from arcnb.arc3.reader import read_run

    lines = [G.step("RESET", 0, full=True), G.step("ACTION1", 1), G.step("ACTION1", 2),
             G.step("ACTION1", 1),  # line 4: a fall while the game runs
             G.step("ACTION1", 7, win=6),  # line 5: 7 of 6 levels
             G.step("ACTION1", 7, win=6, state="GAME_OVER"),
             G.step("ACTION1", 0, frame="empty")]  # sent after the game ended
    G.write_lines(tmp_path / "r" / "one.jsonl", lines)
    twin = [G.step("RESET", 0, full=True, guid="s"), G.step("ACTION1", 1, guid="s")]
    G.write_lines(tmp_path / "r" / "a.jsonl", twin)
    G.write_lines(tmp_path / "r" / "b.jsonl", twin)
    card = arc3.score(read_run(tmp_path / "r"), {"hb01-00000001": [2] * 6})
    kinds = {}
    for f in card.faults:
        kinds.setdefault(f["kind"], []).append(f["detail"])
    assert len(kinds["levels_beyond_win"]) == 1 and "line 5" in kinds["levels_beyond_win"][0]
    assert "(2 steps so)" in kinds["levels_beyond_win"][0]
    assert len(kinds["levels_fall"]) == 1 and "line 4" in kinds["levels_fall"][0]
    assert "(1 steps so)" in kinds["levels_fall"][0]  # the answer after GAME_OVER is not one
    assert len(kinds["same_session_twice"]) == 1
    assert "a.jsonl" in kinds["same_session_twice"][0]
    assert "b.jsonl" in kinds["same_session_twice"][0]
    assert set(kinds) <= set(FAULT_KINDS)
