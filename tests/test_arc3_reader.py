"""arcnb.arc3.reader: the three layouts, frames read back lazily, and hostile recordings
answered with one line or a bound."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import _arc3_game as G
from arcnb.arc3 import read_recording, read_run, read_runs
from arcnb.arc3.reader import STEP_COLUMNS, find_recordings
from arcnb.errors import RecordingError


def _one_line(exc) -> str:
    text = str(exc.value)
    assert "\n" not in text and "Traceback" not in text
    return text


# ------------------------------------------------------------------ the toolkit's layout
def test_a_toolkit_recording_reads_as_the_game_played(tmp_path):
    game = G.Game()
    path = tmp_path / "recordings" / "card-1" / f"{game.game_id}-g1.jsonl"
    actions = G.agent(game, 2)
    G.play(path, actions, game=game, guid="g1",
           reasoning=lambda k: f"step {k}")
    rec = read_recording(path)
    s = rec.steps
    assert list(s.columns) == list(STEP_COLUMNS)
    assert rec.layout == "toolkit" and len(rec) == len(actions)
    assert list(s["action"]) == actions
    assert s["game_id"].unique().tolist() == [game.game_id] and rec.game_ids == [game.game_id]
    assert s["full_reset"].tolist() == [True] + [False] * (len(actions) - 1)
    assert s["levels_completed"].iloc[-1] == 3 and s["state"].iloc[-1] == "WIN"
    assert (s["frame"] == "present").all() and rec.has_frames
    # ACTION5 leaves the board unchanged, a move changes it
    changed = s["frame_changed"].tolist()
    assert np.isnan(changed[0])
    assert [c for a, c in zip(actions[1:], changed[1:]) if a == "ACTION5"] == \
        [0.0] * actions.count("ACTION5")
    assert all(c == 1.0 for a, c in zip(actions[1:], changed[1:]) if a != "ACTION5")
    # the level-finishing steps hold two layers
    assert sorted(s["n_layers"].unique()) == [1, 2]
    assert s["timestamp"].iloc[3] - s["timestamp"].iloc[0] == np.timedelta64(3, "s")
    assert s["reasoning_chars"].iloc[12] == len("step 12")


def test_frames_and_reasoning_are_read_back_lazily(tmp_path):
    game = G.Game()
    path = tmp_path / "r.jsonl"
    G.play(path, G.agent(game), game=game, reasoning=lambda k: f"step {k}")
    replay = G.Game()
    rec = read_recording(path)
    for i, a in enumerate(G.agent(replay)):
        resp = replay.perform(a)
        np.testing.assert_array_equal(rec.frame(i), np.asarray(resp["frame"][-1]))
        assert rec.frame(i).dtype == np.uint8
        assert rec.frame(i, layer=None).shape == (len(resp["frame"]), 64, 64)
        assert rec.reasoning(i) == f"step {i}"
    with pytest.raises(RecordingError, match="no step 999"):
        rec.frame(999)


def test_a_recording_without_frames(tmp_path):
    game = G.Game()
    G.play(tmp_path / "r.jsonl", G.agent(game), game=game, frames=False)
    rec = read_recording(tmp_path / "r.jsonl")
    assert (rec.steps["frame"] == "absent").all() and not rec.has_frames
    assert rec.frame(0) is None and rec.steps["frame_changed"].isna().all()


def test_clicks_and_an_empty_frame(tmp_path):
    lines = [G.step("RESET", full=True), G.step("ACTION6", x=5, y=63),
             G.step("ACTION6", x=70, y=-1), G.step("ACTION1", state="GAME_OVER"),
             G.step("ACTION1", state="GAME_OVER", frame="empty")]
    rec = read_recording(G.write_lines(tmp_path / "r.jsonl", lines))
    s = rec.steps
    assert (s["x"].iloc[1], s["y"].iloc[1]) == (5.0, 63.0)
    assert np.isnan(s["x"].iloc[2]) and np.isnan(s["y"].iloc[2])  # outside 0-63
    assert s["frame"].tolist() == ["present"] * 4 + ["empty"]
    assert rec.frame(4) is None


# ------------------------------------------------------------------ the agents' layout
def test_an_agents_recording_with_numbered_actions_and_its_scorecard_line(tmp_path):
    game = G.Game()
    name = f"{game.game_id}.myagent.50.1a2b3c4d-0000-1111-2222-333344445555.recording.jsonl"
    G.play(tmp_path / name, G.agent(game), game=game, action_names=False)
    with open(tmp_path / name, "a") as f:
        f.write(json.dumps({"timestamp": "2026-03-25T13:00:00+00:00",
                            "data": {game.game_id: {"game_id": game.game_id,
                                                    "total_plays": 1, "actions": [18]}}})
                + "\n")
    rec = read_recording(tmp_path / name)
    assert rec.layout == "agents" and rec.agent == "myagent"
    assert list(rec.steps["action"]) == G.agent(G.Game())
    assert rec.scorecard[game.game_id]["actions"] == [18]


def test_the_older_agents_format_with_score_for_levels(tmp_path):
    line = {"timestamp": "2026-01-01T00:00:00", "data": {
        "game_id": "ls20", "frame": [[[0] * 64] * 64], "state": "NOT_FINISHED", "score": 2,
        "win_score": 7, "action_input": {"id": 3, "data": {}}, "guid": "x",
        "full_reset": False}}
    rec = read_recording(G.write_lines(tmp_path / "old.jsonl", [line]))
    row = rec.steps.iloc[0]
    assert (row["levels_completed"], row["win_levels"], row["action"]) == (2, 7, "ACTION3")
    assert str(row["timestamp"].tz) == "UTC"


# ------------------------------------------------------------------ harness run folders
def _harness(folder, n=3, meta=None):
    folder.mkdir(parents=True)
    (folder / "run_meta.json").write_text(json.dumps(
        meta or {"game_id": "ls20-9607627b", "config": "model-x", "max_actions": 40}))
    game = G.Game("ls20-9607627b")
    acts = G.agent(game)[:n]
    for k, a in enumerate(acts):
        resp = game.perform(a)
        step = {"step": k, "messages": [{"role": "user", "content": "..."}],
                "reasoning": {"summary": f"think {k}"},
                "parsed_action": {"action": a},
                "usage": {"prompt_tokens": 100, "completion_tokens": 10 * k},
                "cost": {"total_cost": 0.5},
                "timestamp": f"2026-03-25T12:00:0{k}+00:00",
                "frame_data": {"state": resp["state"], "levels_completed": resp["levels_completed"],
                               "win_levels": resp["win_levels"], "frame": resp["frame"],
                               "full_reset": resp["full_reset"], "guid": "h"}}
        (folder / f"step_{k:03d}.json").write_text(json.dumps(step))
    return acts


def test_a_harness_run_folder(tmp_path):
    acts = _harness(tmp_path / "run")
    rec = read_recording(tmp_path / "run")
    s = rec.steps
    assert rec.layout == "harness" and rec.agent == "model-x"
    assert rec.declared == {"max_actions": 40}
    assert list(s["action"]) == acts and list(s["line"]) == [0, 1, 2]
    assert s["game_id"].unique().tolist() == ["ls20-9607627b"]
    assert s["tokens"].tolist() == [100.0, 110.0, 120.0] and s["cost"].tolist() == [0.5] * 3
    assert rec.reasoning(1) == '{"summary": "think 1"}'
    assert rec.frame(2).shape == (64, 64)


def test_a_step_file_numbered_beyond_int64_is_one_line(tmp_path):
    """``step_<20 digits>.json`` overflowed the steps table's 64-bit line column (a
    traceback); it is refused, naming the file."""
    _harness(tmp_path / "run")
    big = tmp_path / "run" / f"step_{2 ** 70}.json"
    big.write_text((tmp_path / "run" / "step_000.json").read_text())
    with pytest.raises(RecordingError) as e:
        read_recording(tmp_path / "run")
    assert "numbered beyond" in _one_line(e) and big.name in _one_line(e)


def test_a_folder_of_recordings_is_one_run(tmp_path):
    G.scenario(tmp_path / "card")
    _harness(tmp_path / "card" / "harness" / "run-1")
    (tmp_path / "card" / "notes.txt").write_text("not a recording")
    found = find_recordings(tmp_path / "card")
    assert len(found) == 6 and found[0].name == "run-1"
    run = read_run(tmp_path / "card")
    assert len(run.recordings) == 6 and run.max_actions == 40
    assert set(run.game_ids) >= {"tw01-0a1b2c3d", "ls20-9607627b"}
    # the same file given twice is read once
    again = read_run([tmp_path / "card", found[1]])
    assert len(again.recordings) == 6
    runs = read_runs([tmp_path / "card", [found[1]]], labels=["all", "one"])
    assert [r.label for r in runs] == ["all", "one"] and len(runs[1].recordings) == 1


def test_an_empty_folder_and_a_missing_path_are_refused(tmp_path):
    with pytest.raises(RecordingError) as e:
        read_run(tmp_path)
    assert "holds no recording" in _one_line(e)
    with pytest.raises(RecordingError, match="not found"):
        read_run(tmp_path / "nope")
    with pytest.raises(RecordingError, match="without run_meta.json"):
        read_recording(tmp_path)


# ------------------------------------------------------------------ hostile recordings
@pytest.mark.parametrize("frame, needle", [
    ([[[16] * 64] * 64], "value 16, outside the colours 0-15"),
    ([[[-1] * 64] * 64], "value -1"),
    ([[[0] * 64] * 63 + [[0] * 65]], "ragged"),
    ([[[0] * 64] * 64, [[0] * 32] * 32], "ragged"),
    ([[[0] * 65] * 64], "65, not at most 64 x 64"),
    ([[[0] * 4096] * 2], "4096, not at most 64 x 64"),
    ([[[0.5] * 64] * 64], "non-integer"),
    ([[[True] * 64] * 64], "true/false"),
    ([[0] * 64], "not a list of 2-D layers"),
    ("frames", "'frame' is not a list"),
])
def test_malformed_frames_are_refused_in_one_line(tmp_path, frame, needle):
    path = G.write_lines(tmp_path / "r.jsonl", [G.step("RESET", full=True),
                                                G.step("ACTION1", frame=frame)])
    with pytest.raises(RecordingError) as e:
        read_recording(path)
    text = _one_line(e)
    assert needle in text and "line 2" in text and str(path) in text


@pytest.mark.parametrize("line, needle", [
    (b"\xff\xfe not utf-8", "not UTF-8 text"),
    (b'{"data": {"state": "WIN"', "not valid JSON Lines: line 2"),
    (b'[1, 2]', "not a JSON object"),
    (b'{"data": {"weather": "fine"}}', "not a game step"),
    (json.dumps(G.step("ACTION9")).encode(), "unknown action 'ACTION9'"),
    (json.dumps(G.step("RESET", state="PAUSED")).encode(), "unknown game state 'PAUSED'"),
    (json.dumps(G.step("ACTION1", lc=-3, colour=0)).encode(), "not a whole number 0-10000"),
    (b'{"data": {"state": "WIN", "state": "WIN"}}', "appears more than once"),
    (b"[" * 100_000 + b"]" * 100_000, "too deeply nested"),
    # an integer of 5,000 digits (Python's int parser refuses past 4,300: a ValueError
    # traceback before), a lone surrogate in a game id or a guid (a pyarrow traceback)
    (b'{"data": {"state": "WIN", "levels_completed": 1' + b"0" * 5000 + b"}}",
     "more than 32 digits"),
    (json.dumps({"data": {**G.step("RESET")["data"], "game_id": "g\ud800"}}).encode(),
     "lone surrogate"),
    (json.dumps({"data": {**G.step("RESET")["data"], "guid": "\udfff"}}).encode(),
     "lone surrogate"),
])
def test_damaged_lines_are_refused_in_one_line(tmp_path, line, needle):
    path = G.write_lines(tmp_path / "r.jsonl", [G.step("RESET", full=True), line])
    with pytest.raises(RecordingError) as e:
        read_recording(path)
    assert needle in _one_line(e)


def test_a_line_past_its_bound_is_refused_before_it_is_held(tmp_path):
    # a 1 GB line is simulated by a bound smaller than the line
    path = G.write_lines(tmp_path / "r.jsonl", [
        G.step("RESET", full=True, frame="absent"),
        G.step("ACTION1", reasoning="x" * 20_000, frame="absent")])
    with pytest.raises(RecordingError) as e:
        read_recording(path, max_line_bytes=10_000)
    assert "line 2 is longer than 10000 bytes" in _one_line(e)
    assert len(read_recording(path)) == 2


def test_a_file_past_its_bound_and_too_many_steps(tmp_path):
    path = G.write_lines(tmp_path / "r.jsonl", G.level_walk([3, 3]))
    with pytest.raises(RecordingError, match="larger than 1000 bytes"):
        read_recording(path, max_bytes=1000)
    with pytest.raises(RecordingError, match="more than 5 steps"):
        read_recording(path, max_steps=5)


def test_a_fifo_and_a_folder_are_not_read(tmp_path):
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(RecordingError) as e:
        read_recording(fifo)
    assert "FIFO" in _one_line(e)


def test_control_and_bidirectional_characters_are_kept_verbatim_in_the_data(tmp_path):
    text = "evil \x1b[31mred\u202e txet"
    path = G.write_lines(tmp_path / "r.jsonl", [G.step("RESET", full=True, reasoning=text),
                                                G.step("ACTION1", reasoning={"k": text})])
    rec = read_recording(path)
    assert rec.reasoning(0) == text  # the reader keeps them; every page escapes them
    assert json.loads(rec.reasoning(1)) == {"k": text}


def test_a_game_id_in_an_error_is_escaped(tmp_path):
    bad = G.step("ACTION1", state="WIN\nInjected")
    path = G.write_lines(tmp_path / "r\x1b.jsonl", [bad])
    with pytest.raises(RecordingError) as e:
        read_recording(path)
    text = _one_line(e)
    assert "\x1b" not in text and "\\x1b" in text


def test_blank_lines_and_crlf_are_accepted(tmp_path):
    path = tmp_path / "r.jsonl"
    raw = b"\r\n".join(json.dumps(s).encode() for s in G.level_walk([2])) + b"\r\n\r\n"
    path.write_bytes(raw)
    rec = read_recording(path)
    assert len(rec) == 3 and list(rec.steps["line"]) == [1, 2, 3]
    assert rec.frame(2).shape == (64, 64)


def test_a_scorecard_line_is_only_the_last_line(tmp_path):
    """A line that is a dict of dicts is the agents' recorder's scorecard only at the end
    of the file; before a step it is refused (it was silently skipped as the scorecard),
    and a file of a scorecard line alone holds no game step."""
    card = {"data": {"hb01-00000001": {"actions": [3]}}}
    ok = G.write_lines(tmp_path / "ok.jsonl", [G.step("RESET", full=True), card])
    assert read_recording(ok).scorecard == card["data"]
    for name, lines, needle in (("first", [card, G.step("RESET", full=True)],
                                 "line 1 is not a game step"),
                                ("alone", [card], "only a scorecard line"),
                                ("empty", [], "it is empty")):
        with pytest.raises(RecordingError) as e:
            read_recording(G.write_lines(tmp_path / f"{name}.jsonl", lines))
        assert needle in _one_line(e)


def test_the_reader_bounds_memory_before_it_parses(tmp_path):
    """A frame of 1,002 layers is refused; a line of 200,000 one-cell layers is refused
    by counting its arrays before it is parsed (a 30 MB line of them took 1.5 GB), and
    the step bound stands (two million by default)."""
    from arcnb.arc3.reader import LINE_CONTAINERS, MAX_LAYERS, MAX_STEPS

    assert MAX_LAYERS == 1_001 and MAX_STEPS == 2_000_000
    many = G.step("ACTION1", frame=[[[0] * 4] * 4] * (MAX_LAYERS + 1))
    path = G.write_lines(tmp_path / "layers.jsonl", [G.step("RESET", full=True), many])
    with pytest.raises(RecordingError) as e:
        read_recording(path)
    assert "1002 layers" in _one_line(e) and "line 2" in _one_line(e)
    cells = b'{"data": {"state": "NOT_FINISHED", "frame": [' + b",".join(
        [b"[[0]]"] * 200_000) + b"]}}"
    (tmp_path / "cells.jsonl").write_bytes(cells + b"\n")
    with pytest.raises(RecordingError) as e:
        read_recording(tmp_path / "cells.jsonl")
    assert f"more than the {LINE_CONTAINERS}" in _one_line(e)
    steps = [G.step("RESET", full=True)] + [G.step("ACTION1")] * 5
    with pytest.raises(RecordingError, match="more than 4 steps"):
        read_recording(G.write_lines(tmp_path / "steps.jsonl", steps), max_steps=4)
