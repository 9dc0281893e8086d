"""arcnb.arc3.scorer.account (vectorised) against the plain per-step reference in
``tests/_arc3_naive_account.py``: the same ``steps`` table and the same plays, field by
field, on the synthetic game's recordings, hand-built lines and random step tables
(several games, interleaved guids, level and full resets, empty and absent frames,
game-over states), under every rule; and the same scorecard."""
from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import _arc3_game as G
from _arc3_naive_account import PLAY_FIELDS, naive_account
from arcnb import arc3
from arcnb.arc3 import scorer
from arcnb.arc3.reader import ACTIONS, STATES, Recording, Run, _Where, read_run

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
    df = pd.DataFrame(rows, columns=["step", "line", "timestamp", "game_id", "guid", "state",
                                     "levels_completed", "win_levels", "action", "x", "y",
                                     "full_reset", "frame", "n_layers", "frame_changed",
                                     "reasoning_chars", "tokens", "cost"])
    df["timestamp"] = pd.to_datetime(df["timestamp"], utc=True)
    for col in ("step", "line", "levels_completed", "win_levels", "n_layers",
                "reasoning_chars"):
        df[col] = df[col].astype("int64")
    for col in ("x", "y", "frame_changed", "tokens", "cost"):
        df[col] = df[col].astype("float64")
    df["full_reset"] = df["full_reset"].astype(bool)
    return df


def _recording(path: Path, steps: pd.DataFrame) -> Recording:
    n = len(steps)
    return Recording(path=path, layout="toolkit", steps=steps,
                     _where=_Where([path], np.zeros(n, int), np.zeros(n, int),
                                   np.zeros(n, int)))


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
        recs.append(_recording(Path(f"/nowhere/r{rng.randint(0, 9)}-{r}.jsonl"), steps))
    return Run(f"random-{seed}", recs)


@pytest.mark.parametrize("chunk", range(8))
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
    cases = {
        "empty": [],
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
