"""arcnb.arc3.scorer: the scorecard's accounting and RHAE, against hand-computed values,
closed forms for agents of known efficiency, (where Python 3.12 is at hand) the real
toolkit, and the vectorised accounting against the plain per-step reference in
``tests/_arc3_naive_account.py``: the same ``steps`` table and the same plays, field by
field, on the synthetic game's recordings, hand-built lines and random step tables
(several games, interleaved guids, level and full resets, empty and absent frames,
game-over states), under every rule; and the same scorecard."""
from __future__ import annotations

import json
import math
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import _arc3_game as G
from _arc3_naive_account import PLAY_FIELDS, naive_account
from arcnb import arc3
from arcnb.arc3 import scorer
from arcnb.errors import RecordingError
from arcnb.arc3.reader import (ACTIONS, STATES, STEP_COLUMNS, Recording, Run, _Where, read_run,
                               step_table)
from arcnb.arc3.scorer import RULES, level_score, play_score
from arcnb.errors import ArcnbError, ParameterError

WORKED = [55, 8, 41, 21, 23, 23]
HERE = Path(__file__).resolve().parent


def _score(tmp_path, lines, baselines, name="hb01-00000001-hand-1.jsonl", **kw):
    G.write_lines(tmp_path / name, lines)
    return arc3.score(tmp_path / name, baselines, **kw)


def _game(card, gid="hb01-00000001"):
    return card.summary()["games"][gid]


# ------------------------------------------------------------------ the worked examples
def test_worked_example_first_four_levels_at_baseline_give_47_62():
    # levels 1-4 at baseline score 100 each, levels 5 and 6 not completed score 0;
    # weighted by level number: 100 x (1+2+3+4) / 21 = 47.619...
    scores = [level_score(h, h, True) for h in WORKED[:4]] + [0.0, 0.0]
    assert play_score(scores) == pytest.approx(1000 / 21)
    assert round(play_score(scores), 2) == 47.62


def test_worked_example_twice_the_baseline_everywhere_gives_25(tmp_path):
    scores = [level_score(h, 2 * h, True) for h in WORKED]
    assert play_score(scores) == 25.0


def test_worked_examples_from_recordings(tmp_path):
    base = {"hb01-00000001": WORKED}
    card = _score(tmp_path, G.level_walk([55, 8, 41, 21, ("open", 7)]), base)
    g = _game(card)
    assert round(card.score, 2) == 47.62 and round(g["score"], 2) == 47.62
    assert g["level_actions"] == [55, 8, 41, 21, 7, 0]
    assert g["level_scores"] == [100.0, 100.0, 100.0, 100.0, 0.0, 0.0]
    assert g["levels_completed"] == 4 and g["actions"] == 132 and g["resets"] == 0
    card2 = _score(tmp_path / "b", G.level_walk([2 * h for h in WORKED]), base)
    assert card2.score == 25.0
    assert _game(card2)["level_scores"] == [25.0] * 6


# ------------------------------------------------------------------ the rule
def test_every_result_records_its_rule(tmp_path):
    for name in RULES:
        card = _score(tmp_path / name, G.level_walk([3]), {"hb01-00000001": [3]}, rule=name)
        s = card.summary()
        assert s["rule"] == name and name in s["rule_words"]


# ------------------------------------------------------------------ the accounting
def test_a_level_reset_counts_one_action_and_one_reset(tmp_path):
    lines = [G.step("RESET", full=True), G.step("ACTION1"), G.step("ACTION1"),
             G.step("RESET"), G.step("ACTION1", 1)]
    card = _score(tmp_path, lines, {"hb01-00000001": [2, 9]})
    g = _game(card)
    assert (g["actions"], g["resets"], g["plays"]) == (4, 1, 1)
    assert g["level_actions"] == [4, 0]
    # level 1 in 4 against 2: 25; level 2 not completed; weights 1 and 2
    assert g["score"] == pytest.approx(25 / 3)
    assert card.levels.loc[0, "resets"] == 1


def test_a_full_reset_starts_a_play_and_the_game_scores_its_best(tmp_path):
    lines = (G.level_walk([4, ("open", 3)]) + G.level_walk([2, 2]))
    card = _score(tmp_path, lines, {"hb01-00000001": [2, 2]})
    g = _game(card)
    assert g["plays"] == 2
    # play 1: level 1 in 4 (25), level 2 open: (25 x 1) / 3, capped at 100/3 -> 8.33
    # play 2: both at baseline -> 100
    assert list(card.plays["score"]) == pytest.approx([25 / 3, 100.0])
    assert g["score"] == 100.0 and g["first_play_score"] == pytest.approx(25 / 3)
    # actions and resets are summed over the plays; levels completed is the best
    assert g["actions"] == 7 + 4 and g["levels_completed"] == 2
    assert g["level_actions"] == [2, 2]  # the best play's
    assert card.first_play_score == pytest.approx(25 / 3)


def test_resets_are_summed_over_plays(tmp_path):
    lines = [G.step("RESET", full=True), G.step("ACTION1"), G.step("RESET"),
             G.step("RESET", full=True), G.step("ACTION1"), G.step("RESET"),
             G.step("ACTION2"), G.step("RESET")]
    card = _score(tmp_path, lines, {"hb01-00000001": [5]})
    g = _game(card)
    assert (g["plays"], g["resets"], g["actions"]) == (2, 3, 2 + 4)


def test_the_115_cap_and_the_completion_cap(tmp_path):
    # level 1 in 5 against 10 (400 -> 115), level 2 in 20 against 10 (25)
    card = _score(tmp_path, G.level_walk([5, 20]), {"hb01-00000001": [10, 10]})
    assert card.score == pytest.approx((115 + 2 * 25) / 3)
    assert _game(card)["level_scores"] == [115.0, 25.0]
    older = _score(tmp_path / "o", G.level_walk([5, 20]), {"hb01-00000001": [10, 10]},
                   rule="0.9.6")
    assert older.score == pytest.approx((100 + 2 * 25) / 3)
    linear = _score(tmp_path / "l", G.level_walk([5, 20]), {"hb01-00000001": [10, 10]},
                    rule="0.9.1")
    assert linear.score == pytest.approx((100 + 50) / 2)
    # level 1 at 115, level 2 not completed: capped at the weighted share 1/3
    capped = _score(tmp_path / "c", G.level_walk([5, ("open", 2)]), {"hb01-00000001": [10, 10]})
    assert capped.score == pytest.approx(100 / 3)


def test_a_level_completed_with_no_action_scores_zero(tmp_path):
    # the levels completed change on a step without an action (action_input null)
    lines = [G.step("RESET", full=True), G.step("ACTION1", 1), G.step(None, 2)]
    card = _score(tmp_path, lines, {"hb01-00000001": [1, 1]})
    g = _game(card)
    assert g["level_actions"] == [1, 0] and g["level_scores"] == [100.0, 0.0]
    assert g["score"] == pytest.approx(100 / 3)


def test_steps_with_an_empty_frame_are_not_counted(tmp_path):
    lines = [G.step("RESET", full=True), G.step("ACTION1", 1, state="WIN", win=1),
             G.step("ACTION1", 0, state="WIN", frame="empty", win=0),
             G.step("ACTION2", 0, state="WIN", frame="empty", win=0)]
    card = _score(tmp_path, lines, {"hb01-00000001": [1]})
    g = _game(card)
    assert (g["actions"], g["score"], g["levels_completed"]) == (1, 100.0, 1)
    assert list(card.steps["counted"]) == ["full reset", "action", "not counted: game ended",
                                           "not counted: game ended"]
    # the linear rule's toolkit still counted them (and their levels_completed 0)
    old = _score(tmp_path / "o", lines, {"hb01-00000001": [1]}, rule="0.9.1")
    assert _game(old)["actions"] == 3


def test_without_frames_an_action_after_the_game_ended_is_not_counted(tmp_path):
    lines = [G.step("RESET", full=True, frame="absent"),
             G.step("ACTION1", 0, state="GAME_OVER", frame="absent"),
             G.step("ACTION1", 0, state="GAME_OVER", frame="absent"),  # empty in the game
             G.step("RESET", 0, frame="absent"),                           # a level reset
             G.step("ACTION1", 1, frame="absent")]
    card = _score(tmp_path, lines, {"hb01-00000001": [1]})
    g = _game(card)
    assert (g["actions"], g["resets"], g["levels_completed"]) == (3, 1, 1)
    assert g["level_scores"] == [pytest.approx(100 / 9)]
    assert card.levels.loc[0, "game_overs"] == 1


def test_steps_before_the_first_full_reset_count_nowhere(tmp_path):
    lines = [G.step("ACTION1"), G.step("RESET"), G.step("RESET", full=True),
             G.step("ACTION1", 1)]
    card = _score(tmp_path, lines, {"hb01-00000001": [1]})
    assert _game(card)["actions"] == 1
    assert list(card.steps["counted"][:2]) == ["not counted: no play"] * 2


def test_a_game_without_baselines_or_with_too_few_scores_zero(tmp_path):
    card = _score(tmp_path, G.level_walk([1, 1]), {"other-1": [1]})
    g = _game(card)
    assert g["score"] == 0.0 and g["baseline_actions"] == []
    assert g["level_actions"] == [1, 1, 0]  # the toolkit's split without baselines
    short = _score(tmp_path / "s", G.level_walk([1, 1]), {"hb01-00000001": [1]})
    assert _game(short)["score"] == 0.0


def test_a_game_never_played_scores_zero_when_counted(tmp_path):
    base = {"hb01-00000001": [2], "zz99-00000009": [3, 4]}
    card = _score(tmp_path, G.level_walk([2]), base)
    assert card.n_games == 1 and card.score == 100.0  # as the scorecard: played games
    every = _score(tmp_path / "all", G.level_walk([2]), base, all_games=True)
    assert every.n_games == 2 and every.score == 50.0
    g = _game(every, "zz99-00000009")
    assert (g["score"], g["plays"], g["actions"]) == (0.0, 0, 0)
    named = _score(tmp_path / "named", G.level_walk([2]), base,
                   games=["hb01-00000001", "zz99-00000009"])
    assert named.score == 50.0


def test_a_game_whose_steps_start_no_play_is_left_out_as_the_scorecard_does(tmp_path):
    G.write_lines(tmp_path / "a.jsonl", G.level_walk([1]))
    G.write_lines(tmp_path / "b.jsonl", [G.step("ACTION1", game="nn01-1", guid="n")])
    card = arc3.score(tmp_path, {"hb01-00000001": [1], "nn01-1": [1]})
    assert card.n_games == 1 and card.score == 100.0
    row = card.games.set_index("game_id").loc["nn01-1"]
    assert not row["counted"] and row["plays"] == 0
    assert [f["kind"] for f in card.faults] == ["missing_first_frame", "never_started"]


def test_the_action_cap_stops_a_play_past_m_times_the_baseline(tmp_path):
    base = {"hb01-00000001": [2, 2, 2]}
    lines = G.level_walk([4, 11, 2])
    full = _score(tmp_path, lines, base)
    assert _game(full)["level_scores"] == pytest.approx([25.0, 100 * (2 / 11) ** 2, 100.0])
    capped = _score(tmp_path / "c", lines, base, cap=5)
    g = _game(capped)
    # level 2 took 11 > 5 x 2 actions: the play stops there after 10 of them
    assert g["level_actions"] == [4, 10, 0] and g["level_scores"] == [25.0, 0.0, 0.0]
    assert g["score"] == pytest.approx(25 / 6) and capped.summary()["cap"] == 5.0
    with pytest.raises(ParameterError):
        _score(tmp_path / "bad", lines, base, cap=0)


def test_two_files_of_one_game_are_plays_of_one_game(tmp_path):
    G.write_lines(tmp_path / "a.jsonl", G.level_walk([4], guid="a",
                                                     ts="2026-03-25T12:00:00+00:00"))
    G.write_lines(tmp_path / "b.jsonl", G.level_walk([2], guid="b",
                                                     ts="2026-03-25T13:00:00+00:00"))
    card = arc3.score(tmp_path, {"hb01-00000001": [2]})
    g = _game(card)
    assert g["plays"] == 2 and g["score"] == 100.0 and g["first_play_score"] == 25.0
    assert g["actions"] == 6


# ------------------------------------------------------------------ agents of known efficiency
@pytest.mark.parametrize("m", [1, 2, 3])
def test_an_agent_m_times_the_baseline_scores_100_over_m_squared(tmp_path, m):
    game = G.Game()
    G.play(tmp_path / "r.jsonl", G.agent(game, m), game=game)
    card = arc3.score(tmp_path / "r.jsonl", {game.game_id: game.baseline()})
    assert card.score == pytest.approx(100 / m ** 2)
    assert _game(card, game.game_id)["level_actions"] == [m * h for h in game.baseline()]


@pytest.mark.parametrize("k", [0, 1, 2])
def test_an_agent_that_stops_after_k_levels(tmp_path, k):
    game = G.Game()
    G.play(tmp_path / "r.jsonl", G.agent(game, 1, k), game=game)
    card = arc3.score(tmp_path / "r.jsonl", {game.game_id: game.baseline()})
    # levels 1..k at 100, weights 1..3: 100 x k(k+1)/2 / 6
    assert card.score == pytest.approx(100 * k * (k + 1) / 2 / 6)


def test_the_run_is_the_mean_over_games_with_a_bootstrap_interval_over_games(tmp_path):
    scores = []
    for i, m in enumerate([1, 2, 3, 4]):
        game = G.Game(f"tw0{i}-abcdef0{i}")
        G.play(tmp_path / f"{game.game_id}.jsonl", G.agent(game, m), game=game, guid=f"g{i}")
        scores.append(100 / m ** 2)
    base = {f"tw0{i}-abcdef0{i}": G.Game().baseline() for i in range(4)}
    card = arc3.score(tmp_path, base, n_boot=500, seed=3)
    assert card.score == pytest.approx(np.mean(scores))
    # a naive percentile bootstrap of the mean over the 4 games, same draws
    rng = np.random.default_rng(3)
    idx = rng.integers(0, 4, size=(500, 4))
    means = np.asarray(scores)[idx].mean(axis=1)
    assert card.ci95 == pytest.approx(tuple(np.quantile(means, [0.025, 0.975])))
    assert card.ci95[0] < card.score < card.ci95[1]


def test_the_summary_is_the_json_contract(tmp_path):
    base = G.scenario(tmp_path)
    s = json.loads(json.dumps(arc3.score(tmp_path, base).summary()))
    assert {"rule", "score", "ci95", "n_games", "games", "faults"} <= set(s)
    assert s["rule"] == "0.9.9" and s["n_games"] == 4 and len(s["ci95"]) == 2
    for g in s["games"].values():
        assert {"score", "levels_completed", "win_levels", "actions", "resets", "plays",
                "level_scores", "level_actions", "baseline_actions"} <= set(g)
    for f in s["faults"]:
        assert {"recording", "kind", "detail"} <= set(f)
    # the scenario's numbers, computed by hand (see _arc3_game.scenario)
    a = s["games"]["tw01-0a1b2c3d"]
    assert (a["score"], a["plays"], a["actions"], a["resets"], a["levels_completed"]) == \
        (100.0, 3, 52, 2, 3)
    b = s["games"]["tw02-1b2c3d4e"]
    assert b["level_scores"] == [115.0, 25.0, 0.0] and b["score"] == 27.5
    assert b["level_actions"] == [5, 8, 2]
    assert s["score"] == pytest.approx((100 + 27.5 + 0 + 0) / 4)


def test_the_first_play_of_the_scenario(tmp_path):
    base = G.scenario(tmp_path)
    card = arc3.score(tmp_path, base)
    plays = card.plays[card.plays["game_id"] == "tw01-0a1b2c3d"]
    # play 1: level 1 in 10 (25), level 2 in 2 + 1 + 5 = 8 against 5 (39.0625),
    # level 3 in 2 + 1 + 8 = 11 against 8 (52.89...): weighted by 1, 2, 3
    expect = (25 + 2 * 100 * (5 / 8) ** 2 + 3 * 100 * (8 / 11) ** 2) / 6
    assert plays["score"].iloc[0] == pytest.approx(expect)
    assert list(plays["actions"]) == [29, 5, 18]
    assert card.first_play_score == pytest.approx((expect + 27.5) / 4)


def test_the_bundled_example_scores_as_computed_by_hand():
    """arcnb.resources.arc3_example(): agent A is the scenario above (recorded without
    most frames, which the score does not depend on); agent B walks twice the baseline
    on every level of tw01 and three times its own walk on tw02 (walks 5, 4, 9 against
    baselines 6, 4, 9)."""
    from arcnb.resources import arc3_example

    ex = arc3_example()
    a, b = (arc3.score(r, ex.baselines) for r in ex.runs)
    assert (a.label, b.label) == ("agent-a", "agent-b")
    ga, gb = a.summary()["games"], b.summary()["games"]
    # agent A: tw01's third play at the baseline (100), tw02 115 and 25 on levels 1-2,
    # tw03 without baselines and tw04 with too few (0 each)
    assert {g: v["score"] for g, v in ga.items()} == {
        "tw01-0a1b2c3d": 100.0, "tw02-1b2c3d4e": (115 + 2 * 25) / 6,
        "tw03-2c3d4e5f": 0.0, "tw04-3d4e5f6a": 0.0}
    assert a.score == pytest.approx((100 + 27.5) / 4)
    first = (25 + 2 * 100 * (5 / 8) ** 2 + 3 * 100 * (8 / 11) ** 2) / 6
    assert a.first_play_score == pytest.approx((first + 27.5) / 4)
    # agent B: 100 / m**2 on every level of tw01 (m = 2); on tw02, level 1 in 15 actions
    # against 6, levels 2 and 3 at 3 x the baseline, weighted by 1, 2, 3
    tw02 = (100 * (6 / 15) ** 2 + 2 * 100 / 3 ** 2 + 3 * 100 / 3 ** 2) / 6
    assert gb["tw01-0a1b2c3d"]["score"] == pytest.approx(100 / 2 ** 2)
    assert gb["tw02-1b2c3d4e"]["score"] == pytest.approx(tw02)
    assert gb["tw02-1b2c3d4e"]["level_actions"] == [15, 12, 27]
    assert b.score == pytest.approx((25 + tw02) / 2) and b.first_play_score == b.score
    assert {f["kind"] for f in a.summary()["faults"]} == {
        "no_frames", "baselines_missing", "baselines_short"}
    assert {f["kind"] for f in b.summary()["faults"]} == {"no_frames"}


def test_a_million_steps_are_accounted(tmp_path):
    n = 1_000_000
    steps = pd.DataFrame({
        "step": np.arange(n), "line": np.arange(1, n + 1),
        "timestamp": pd.NaT, "game_id": "big1-1", "guid": "u", "state": "NOT_FINISHED",
        "levels_completed": np.repeat([0, 1], [n - 1, 1]), "win_levels": 1,
        "action": ["RESET"] + ["ACTION1"] * (n - 1), "x": np.nan, "y": np.nan,
        "full_reset": np.r_[True, np.zeros(n - 1, bool)], "frame": "absent", "n_layers": 0,
        "frame_changed": np.nan, "reasoning_chars": 0, "tokens": np.nan, "cost": np.nan})
    steps["timestamp"] = pd.to_datetime(steps["timestamp"], utc=True)
    rec = Recording(path=tmp_path / "big.jsonl", layout="toolkit", steps=steps,
                    _where=_Where([tmp_path / "big.jsonl"], np.zeros(n, int), np.zeros(n, int),
                                  np.zeros(n, int)))
    card = arc3.score(Run("big", [rec]), {"big1-1": [999]})
    g = _game(card, "big1-1")
    assert g["actions"] == n - 1
    assert g["score"] == pytest.approx(100 * (999 / (n - 1)) ** 2)


# ------------------------------------------------------------------ the real toolkit
def _python312():
    for cand in (os.environ.get("ARCNB_PYTHON312"), "python3.12"):
        exe = cand and shutil.which(cand)
        if not exe:
            continue
        for env in (None, {**os.environ, "PYENV_VERSION": "3.12"}):
            try:
                out = subprocess.run([exe, "-c", "import sys; print(sys.version_info[:2])"],
                                     capture_output=True, text=True, timeout=60, env=env)
            except (OSError, subprocess.TimeoutExpired):
                continue
            if out.returncode == 0 and "(3, 1" in out.stdout:
                return exe, env
    return None, None


@pytest.fixture(scope="module")
def toolkit(tmp_path_factory):
    """A throwaway virtual environment with the real toolkit (arc-agi 0.9.9, Python
    >= 3.12, from the package index); skipped where either is unavailable."""
    exe, env = _python312()
    if exe is None:
        pytest.skip("no Python >= 3.12 on PATH (python3.12): the toolkit needs one")
    venv = tmp_path_factory.mktemp("toolkit") / "venv"
    # without a pip of its own (this venv's pip installs into it: seconds less), and
    # nothing compiled ahead (the test imports a few of the modules)
    made = subprocess.run([exe, "-m", "venv", "--without-pip", str(venv)],
                          capture_output=True, text=True, env=env, timeout=300)
    if made.returncode != 0:
        pytest.skip(f"cannot make a Python 3.12 virtual environment: {made.stderr[-300:]}")
    py = venv / "bin" / "python"
    pip = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q",
                          "--no-compile", "--disable-pip-version-check", "arc-agi==0.9.9",
                          "arcengine==0.9.3"], capture_output=True, text=True, timeout=900)
    if pip.returncode != 0:
        pytest.skip(f"cannot install the toolkit (no package index?): {pip.stderr[-300:]}")
    return py


@pytest.mark.slow
def test_the_real_toolkit_scores_the_synthetic_game_the_same(tmp_path, toolkit):
    base = G.scenario(tmp_path / "rec")
    (tmp_path / "b.json").write_text(json.dumps(base))
    files = sorted(str(p) for p in (tmp_path / "rec").glob("*.jsonl"))
    out = subprocess.run([str(toolkit), str(HERE / "_arc3_toolkit.py"), str(tmp_path / "b.json"),
                          *files], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    theirs = json.loads(out.stdout.strip().splitlines()[-1])
    mine = arc3.score(tmp_path / "rec", base).summary()
    assert mine["score"] == pytest.approx(theirs["score"], abs=1e-9)
    assert set(mine["games"]) == set(theirs["games"])
    for gid, t in theirs["games"].items():
        m = mine["games"][gid]
        for key in ("score", "actions", "resets", "levels_completed", "plays",
                    "level_scores", "level_actions"):
            assert m[key] == pytest.approx(t[key]), (gid, key)
    assert [p for g in ["tw01-0a1b2c3d"] for p in theirs["games"][g]["play_scores"]] == \
        pytest.approx(list(arc3.score(tmp_path / "rec", base).plays.query(
            "game_id == 'tw01-0a1b2c3d'")["score"]))


def test_a_missing_recording_is_an_arcnb_error(tmp_path):
    with pytest.raises(ArcnbError, match="recording not found"):
        arc3.score(tmp_path / "missing.jsonl", {})


def test_a_scorecard_shows_itself_in_jupyterlab(tmp_path):
    gid = "ev<il>\u202e-1"
    G.write_lines(tmp_path / "r.jsonl", G.level_walk([2], game=gid))
    html = arc3.score(tmp_path / "r.jsonl", {gid: [2]}, label="<b>run</b>")._repr_html_()
    assert "<b>&lt;b&gt;run&lt;/b&gt;</b>: 100.00" in html and "\u202e" not in html
    assert "ev&lt;il&gt;\\u202e-1" in html and "rule 0.9.9" in html


# ------------------------------------------------------------------ against the reference
RULE_NAMES = list(scorer.RULES)


def assert_same_accounting(run, rule):
    cards, steps = scorer.account(run, rule)
    ref_cards, ref_steps = naive_account(run, rule)
    pd.testing.assert_frame_equal(steps, ref_steps, check_exact=True)
    assert list(cards) == list(ref_cards)
    for gid, ref_plays in ref_cards.items():
        plays = cards[gid]
        assert len(plays) == len(ref_plays), gid
        for k, (p, q) in enumerate(zip(plays, ref_plays)):
            for name in PLAY_FIELDS:
                a, b = getattr(p, name), getattr(q, name)
                # equal, and of the same types all the way down (int stays int)
                assert a == b and repr(a) == repr(b), (gid, k, name, a, b)
                if isinstance(b, dict):
                    assert list(a.items()) == list(b.items()), (gid, k, name)
                    assert [type(v) for v in a.values()] == [type(v) for v in b.values()]
                if isinstance(b, list):
                    assert [tuple(map(type, e)) for e in a] == \
                        [tuple(map(type, e)) for e in b]


# ------------------------------------------------------------------ random step tables
def _random_steps(rng: random.Random, games, guids, n, start) -> pd.DataFrame:
    """A step table with the reader's columns and dtypes, drawn at random: mostly
    game-like (an opening full RESET, actions, levels climbing, resets, game overs and
    empty frames after them), with arbitrary steps mixed in."""
    p_absent = rng.choice([0.0, 0.2, 1.0])
    rows = []
    lc, ended = 0, False
    gid, guid = rng.choice(games), rng.choice(guids)
    t = start
    for i in range(n):
        if rng.random() < 0.15:
            gid = rng.choice(games)
        if rng.random() < 0.15:
            guid = rng.choice(guids)
        r = rng.random()
        if i == 0 and rng.random() < 0.8 or r < 0.08:
            action = "RESET"
        elif r < 0.12:
            action = "NONE"
        else:
            action = rng.choice(ACTIONS[1:])
        full = action == "RESET" and rng.random() < 0.5 or rng.random() < 0.03
        if action == "RESET":
            ended = False
            if full:
                lc = 0
        elif rng.random() < 0.15:
            lc += 1
        elif rng.random() < 0.03:
            lc = rng.randint(0, 4)
        state = "NOT_FINISHED"
        if ended:
            state = rng.choice(["GAME_OVER", "WIN"])
        elif rng.random() < 0.08:
            state, ended = rng.choice(["GAME_OVER", "WIN"]), True
        elif rng.random() < 0.03:
            state = rng.choice(STATES)
        if ended and action != "RESET" and rng.random() < 0.6:
            frame = "empty"
        elif rng.random() < p_absent:
            frame = "absent"
        else:
            frame = rng.choice(["present"] * 8 + ["empty"])
        changed = np.nan if frame != "present" or rng.random() < 0.2 else \
            float(rng.random() < 0.6)
        ts = pd.NaT if rng.random() < 0.05 else t
        t += pd.Timedelta(seconds=rng.choice([0, 0.5, 1, 2.25, 7]))
        rows.append({
            "step": i, "line": i + 1, "timestamp": ts, "game_id": gid, "guid": guid,
            "state": state, "levels_completed": lc if frame != "empty" else 0,
            "win_levels": rng.randint(0, 5), "action": action,
            "x": np.nan, "y": np.nan, "full_reset": full, "frame": frame,
            "n_layers": 1 if frame == "present" else 0, "frame_changed": changed,
            "reasoning_chars": 0,
            "tokens": np.nan if rng.random() < 0.3 else float(rng.randint(0, 500)),
            "cost": np.nan if rng.random() < 0.5 else rng.random() / 7})
    return step_table(rows)  # the reader's column types


def _recording(path: Path, steps: pd.DataFrame) -> Recording:
    n = len(steps)
    return Recording(path=path, layout="toolkit", steps=steps,
                     _where=_Where([path], np.zeros(n, int), np.zeros(n, int),
                                   np.zeros(n, int)))


def test_a_run_of_recordings_without_steps_scores_nothing_and_says_so(tmp_path):
    """No step in any recording: no game was played, so the run's score and its interval
    are NaN over no games (never 0), under every rule, beside the accounting of no step."""
    empty = step_table({k: [] for k in STEP_COLUMNS})
    run = Run("empty", [_recording(tmp_path / "a.jsonl", empty),
                        _recording(tmp_path / "b.jsonl", empty.copy())])
    for rule in RULE_NAMES:
        s = arc3.score(run, {"g-1": [10]}, rule=rule).summary()
        assert s["n_games"] == 0 and s["games"] == {}
        assert math.isnan(s["score"]) and all(math.isnan(x) for x in s["ci95"])
        assert_same_accounting(run, rule)


def random_run(seed: int) -> Run:
    rng = random.Random(seed)
    games = [f"rg0{k}-0000000{k}" for k in range(rng.randint(1, 3))]
    guids = [f"u{k}" for k in range(rng.randint(1, 3))]
    recs = []
    base = pd.Timestamp("2026-03-25T12:00:00", tz="UTC")
    for r in range(rng.randint(1, 4)):
        n = rng.choice([0, 1, 2, rng.randint(3, 25), rng.randint(25, 120)])
        start = base + pd.Timedelta(minutes=rng.choice([0, 0, 5, 10, 30]))
        steps = _random_steps(rng, games, guids, n, start)
        if rng.random() < 0.1:
            steps["timestamp"] = pd.NaT
            steps["timestamp"] = pd.to_datetime(steps["timestamp"], utc=True)
        if rng.random() < 0.1:  # timestamps of another unit than the other files'
            steps["timestamp"] = steps["timestamp"].astype("datetime64[ms, UTC]")
        if rng.random() < 0.1:  # a hand-built table's own index: the steps count by position
            steps.index = np.arange(len(steps))[::-1] * 3 + 7
        recs.append(_recording(Path(f"/nowhere/r{rng.randint(0, 9)}-{r}.jsonl"), steps))
    return Run(f"random-{seed}", recs)


@pytest.mark.parametrize("chunk", range(2))
def test_random_step_tables_are_accounted_as_the_reference(chunk):
    for seed in range(chunk * 60, (chunk + 1) * 60):
        run = random_run(seed)
        for rule in RULE_NAMES:
            assert_same_accounting(run, rule)


# ------------------------------------------------------------------ the synthetic game
def test_the_scenario_is_accounted_as_the_reference(tmp_path):
    G.scenario(tmp_path)
    run = read_run(tmp_path)
    for rule in RULE_NAMES:
        assert_same_accounting(run, rule)


def test_the_bundled_example_is_accounted_as_the_reference():
    from arcnb.resources import arc3_example

    for run in arc3_example().runs:
        for rule in RULE_NAMES:
            assert_same_accounting(run if isinstance(run, Run) else read_run(run), rule)


@pytest.mark.parametrize("seed", range(12))
def test_random_plays_of_the_game_are_accounted_as_the_reference(tmp_path, seed):
    """Agents pressing random keys on the synthetic game (traps, wins, empty frames after
    them, level and full resets), several agents and games in one run, interleaved
    guids in one file, with and without frames."""
    rng = random.Random(seed)
    keys = ["RESET"] + list(G.MOVES) * 3 + ["ACTION5", ("ACTION6", 3, 4), "ACTION7"]
    for f in range(rng.randint(1, 4)):
        game = G.Game(rng.choice(["tw01-0a1b2c3d", "tw02-1b2c3d4e"]),
                      rng.choice([G.LEVELS, G.GAME_B_LEVELS]))
        acts = [rng.choice(keys) for _ in range(rng.randint(1, 60))]
        if rng.random() < 0.8:
            acts = ["RESET"] + acts
        G.play(tmp_path / f"{game.game_id}-{f}.jsonl", acts, game=game, guid=f"g{f}",
               frames=rng.random() < 0.6, start=G._t(rng.choice([0, 10, 20])))
    # two sessions of one game interleaved in one file
    lines = []
    for k in range(rng.randint(2, 30)):
        guid = rng.choice(["s1", "s2", "s3"])
        action = rng.choice(["RESET", "ACTION1", "ACTION2", None])
        lines.append(G.step(action, rng.randint(0, 2), guid=guid,
                            full=action == "RESET" and rng.random() < 0.5,
                            state=rng.choice(["NOT_FINISHED"] * 4 + ["GAME_OVER", "WIN"]),
                            frame=rng.choice(["layer", "layer", "empty", "absent"]),
                            ts=f"2026-03-25T12:{k:02d}:00+00:00"))
    G.write_lines(tmp_path / "mixed.jsonl", lines)
    run = read_run(tmp_path)
    for rule in RULE_NAMES:
        assert_same_accounting(run, rule)


def test_hand_built_corner_cases_are_accounted_as_the_reference(tmp_path):
    # an empty recording (or one holding only a scorecard line) is refused when read: it
    # once scored NaN with exit status 0
    G.write_lines(tmp_path / "empty" / "empty.jsonl", [])
    with pytest.raises(RecordingError, match="holds no game step"):
        read_run(tmp_path / "empty")
    cases = {
        "no-play": [G.step("ACTION1"), G.step("RESET"), G.step("ACTION1", frame="empty")],
        "ended": [G.step("RESET", full=True, frame="absent"),
                  G.step("ACTION1", 0, state="GAME_OVER", frame="absent"),
                  G.step("ACTION1", 0, state="GAME_OVER", frame="absent"),
                  G.step("RESET", 0, frame="absent"), G.step("ACTION1", 1, frame="absent"),
                  G.step("ACTION2", 1, state="WIN", frame="absent"),
                  G.step("ACTION2", 0, state="WIN", frame="empty")],
        "guids": [G.step("RESET", full=True, guid="a"), G.step("ACTION1", guid="b"),
                  G.step("RESET", full=True, guid="b"), G.step("ACTION1", 1, guid="a"),
                  G.step("ACTION1", 1, guid="b"), G.step("RESET", guid="c"),
                  G.step(None, 2, guid="a"), G.step("ACTION6", 2, guid="b", x=1, y=2)],
        "levels": G.level_walk([3, 1, ("open", 2)]) + G.level_walk([1, 1, 1], start_lc=2),
    }
    for name, lines in cases.items():
        G.write_lines(tmp_path / name / f"{name}.jsonl", lines)
        run = read_run(tmp_path / name)
        for rule in RULE_NAMES:
            assert_same_accounting(run, rule)


# ------------------------------------------------------------------ the scorecard
@pytest.mark.parametrize("seed", range(6))
def test_the_scorecard_is_the_reference_accountings(monkeypatch, seed):
    """score() over the fast accounting equals score() over the reference one."""
    run = random_run(1000 + seed)
    if not sum(len(r.steps) for r in run.recordings):
        # a run of empty recordings is refused by score() before and after (no games)
        run = random_run(2000 + seed)
    rng = random.Random(seed)
    base = {g: [rng.randint(1, 9) for _ in range(rng.randint(1, 4))]
            for g in {g for r in run.recordings for g in r.steps["game_id"]}
            if rng.random() < 0.7}
    for rule in RULE_NAMES:
        for cap in (None, 5):
            fast = arc3.score(run, base, rule=rule, cap=cap, all_games=True)
            with monkeypatch.context() as m:
                m.setattr(scorer, "account", naive_account)
                ref = arc3.score(run, base, rule=rule, cap=cap, all_games=True)
            for name in ("games", "plays", "levels", "steps"):
                pd.testing.assert_frame_equal(getattr(fast, name), getattr(ref, name),
                                              check_exact=True)
            assert fast.faults == ref.faults
            assert repr(fast.summary()) == repr(ref.summary())
            # the game's win_levels: the most any of its steps says
            st = run.steps
            if len(st):
                expect = st.groupby("game_id")["win_levels"].max().to_dict()
                for row in fast.games.itertuples(index=False):
                    if row.game_id in expect:
                        assert row.win_levels == int(expect[row.game_id])


def _old_scorecard_faults(rec, steps):
    """The scorecard-line check as it was (one filter of the steps per file)."""
    out = []
    mine = steps[steps["recording"] == rec.name]
    for gid, card in rec.scorecard.items():
        if not isinstance(card, dict) or not isinstance(card.get("actions"), list):
            continue
        theirs = sum(int(a) for a in card["actions"])
        ours = int(mine[(mine["game_id"] == gid)
                        & mine["counted"].isin(["action", "level reset"])].shape[0])
        if theirs != ours:
            out.append((str(rec.path), gid, theirs, ours))
    return out


def test_scorecard_lines_are_checked_as_before(tmp_path):
    """Files with the agents' scorecard line, one file name in two folders, two games in
    one file: the same faults as the per-file filter found."""
    name = "hb01-00000001.agent.10.1234.recording.jsonl"
    for folder, n, claims in (("a", 2, [5]), ("b", 3, [3]), ("c", 1, [1, 1])):
        lines = G.level_walk([n, 1]) + G.level_walk([2], game="hb02-2", guid="other")
        lines.append({"timestamp": "2026-03-25T13:00:00+00:00",
                      "data": {"hb01-00000001": {"actions": claims},
                               "hb02-2": {"actions": [2]}, "zz09-9": {"actions": [0]},
                               "hb03-3": {"actions": [1]}}})
        G.write_lines(tmp_path / folder / name, lines)
    card = arc3.score(tmp_path, {"hb01-00000001": [2, 1]})
    expect = [x for rec in card.run.recordings for x in _old_scorecard_faults(rec, card.steps)]
    found = [(f["recording"], f["game_id"]) for f in card.faults
             if f["kind"] == "recorded_scorecard_differs"]
    assert found == [(path, gid) for path, gid, _, _ in expect] and len(found) >= 3
    for f, (_, _, theirs, ours) in zip([f for f in card.faults
                                        if f["kind"] == "recorded_scorecard_differs"], expect):
        assert f"counts {theirs} actions, the recorded steps {ours}" in f["detail"]


def test_the_terminal_table_escapes_ids_and_counts_repeated_faults(tmp_path):
    """A newline in a game id shows as ``\\n`` (one row per game, never a forged one);
    twelve recordings without frames give five fault lines and a count of the rest,
    while the JSON keeps all twelve."""
    forged = "hb01\nforged  99.99  3/3"
    G.write_lines(tmp_path / "r" / "evil.jsonl",
                  G.level_walk([2], game=forged))
    for k in range(12):
        G.write_lines(tmp_path / "r" / f"bare{k:02d}.jsonl",
                      [dict(G.step("RESET", full=True, frame="absent", guid=f"g{k}"))])
    card = arc3.score(read_run(tmp_path / "r"), {forged: [2]})
    text = card.text()
    table = text.split("\n")
    rows = [ln for ln in table if ln.startswith("hb01")]
    assert len(rows) == 2  # two games, two rows
    assert any(r.startswith("hb01\\nforged  99.99  3/3") for r in rows)
    assert not any(ln.startswith("forged") for ln in table)
    bare = [ln for ln in table if ln.startswith("  no_frames:")]
    assert len(bare) == 5
    assert "  ... and 7 more no_frames faults" in text  # 12 recordings without frames
    assert sum(f["kind"] == "no_frames" for f in card.summary()["faults"]) == 12
