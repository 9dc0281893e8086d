"""``arcnb arc3`` (:mod:`arcnb.commands.arc3`): the command's text, its ``--json``
contract, its ``--out`` tables, each path a run (``--merge`` one scorecard), and its
one-line refusals."""
from __future__ import annotations

import json

import pandas as pd
import pytest

import _arc3_game as G
from _cli import one_line_refusal, run_arcnb
from arcnb.cli import main




@pytest.fixture
def card_dir(tmp_path):
    base = G.scenario(tmp_path / "recordings" / "card-1")
    return tmp_path, G.baselines_csv(tmp_path / "baselines.csv", base)


def test_score_json_contract(card_dir, capsys):
    tmp, base = card_dir
    assert main(["arc3", "score", str(tmp / "recordings"), "--baselines", str(base),
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["rule"] == "0.9.9" and out["n_games"] == 4
    assert out["score"] == pytest.approx(31.875)
    lo, hi = out["ci95"]
    assert lo <= out["score"] <= hi
    g = out["games"]["tw02-1b2c3d4e"]
    assert (g["score"], g["levels_completed"], g["win_levels"], g["actions"], g["resets"],
            g["plays"]) == (27.5, 2, 3, 15, 0, 1)
    assert g["level_scores"] == [115.0, 25.0, 0.0] and g["level_actions"] == [5, 8, 2]
    assert g["baseline_actions"] == [6, 4, 9]
    assert {f["kind"] for f in out["faults"]} == {"baselines_missing", "baselines_short"}
    assert all({"recording", "kind", "detail"} <= set(f) for f in out["faults"])


def test_score_text_and_the_older_rule(card_dir, capsys):
    tmp, base = card_dir
    assert main(["arc3", "score", str(tmp / "recordings"), "--baselines", str(base),
                 "--rule", "0.9.1"]) == 0
    text = capsys.readouterr().out
    assert "rule 0.9.1" in text and "95% bootstrap interval over games" in text
    assert "first play alone" in text and "baselines_missing" in text


def test_out_writes_the_tables_and_refuses_to_overwrite(card_dir, capsys):
    tmp, base = card_dir
    out = tmp / "scored"
    args = ["arc3", "score", str(tmp / "recordings"), "--baselines", str(base), "--out",
            str(out), "--cap", "5"]
    assert main(args) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["cap"] == 5.0 and summary["rule"] == "0.9.9"
    levels = pd.read_csv(out / "levels.csv")
    assert {"game_id", "play", "level", "actions", "baseline", "ratio", "score", "resets",
            "game_overs", "unchanged_actions", "seconds"} <= set(levels.columns)
    games = pd.read_csv(out / "games.csv")
    assert json.loads(games.set_index("game_id").loc["tw02-1b2c3d4e", "level_scores"]) == \
        [115.0, 25.0, 0.0]
    assert len(pd.read_csv(out / "faults.csv")) == 2
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "refusing to overwrite" in err and len(err.strip().splitlines()) == 1
    assert main(args + ["--overwrite"]) == 0


@pytest.mark.parametrize("extra, needle", [
    (["--rule", "2.0"], "unknown scoring rule '2.0'"),
    (["--cap", "-1"], "the action cap must be a number > 0"),
    (["--cap", "1e308"], "at most 1e+06"),  # was an OverflowError traceback
    (["--n-boot", "0"], "bootstrap resamples"),
])
def test_bad_options_are_one_line(card_dir, capsys, extra, needle):
    tmp, base = card_dir
    code = main(["arc3", "score", str(tmp / "recordings"), "--baselines", str(base), *extra])
    one_line_refusal(code, capsys.readouterr().err, needle)


def test_bad_inputs_are_one_line(tmp_path, capsys):
    base = G.baselines_csv(tmp_path / "b.csv", {"x-1": [1]})
    bad = G.write_lines(tmp_path / "r.jsonl", [G.step("RESET", full=True),
                                               G.step("ACTION1", frame=[[[99] * 64] * 64])])
    one_line_refusal(main(["arc3", "score", str(bad), "--baselines", str(base)]),
                     capsys.readouterr().err, "outside the colours 0-15", "line 2")
    one_line_refusal(main(["arc3", "score", str(tmp_path / "none"), "--baselines", str(base)]),
                     capsys.readouterr().err, "recording not found")
    (tmp_path / "b2.csv").write_text("nope\n")
    one_line_refusal(main(["arc3", "score", str(bad), "--baselines",
                           str(tmp_path / "b2.csv")]), capsys.readouterr().err,
                     "the header must be")


@pytest.mark.slow  # starts another process
def test_the_command_in_a_real_process(card_dir):
    tmp, base = card_dir
    res = run_arcnb("arc3", "score", tmp / "recordings", "--baselines", base, "--json",
                    "--all-games")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["n_games"] == 4
    res = run_arcnb("arc3", "score", tmp / "recordings")
    assert res.returncode == 2 and "--baselines" in res.stderr


def test_each_path_is_a_run_and_a_merge_is_asked_for(tmp_path):
    """``arcnb arc3 score a/ b/`` scores two runs (as ``arc3 report`` does), each exactly
    as it scores alone; the two agents' plays are one scorecard only with ``--merge``,
    whose plays are the sum of both (the bundled example: agent-a's first-play score is
    17.78 alone, 13.89 once agent-b's plays of the same games are merged in)."""
    from _cli import cli

    from arcnb.resources import examples_dir

    root = examples_dir() / "arc3"
    a, b, base = root / "agent-a", root / "agent-b", root / "baselines.csv"
    alone = [json.loads(cli("arc3", "score", p, "--baselines", base, "--json").stdout)
             for p in (a, b)]
    r = cli("arc3", "score", a, b, "--baselines", base, "--json")
    assert r.returncode == 0, r.stderr
    both = json.loads(r.stdout)["runs"]
    assert [x["label"] for x in both] == ["agent-a", "agent-b"]
    for got, want in zip(both, alone):
        assert got["score"] == want["score"]
        assert got["first_play_score"] == want["first_play_score"]
    assert round(both[0]["first_play_score"], 2) == 17.78
    r = cli("arc3", "score", a, b, "--merge", "--baselines", base, "--json")
    merged = json.loads(r.stdout)
    assert round(merged["first_play_score"], 2) == 13.89
    plays = lambda s: sum(g["plays"] for g in s["games"].values())  # noqa: E731
    assert plays(merged) == plays(alone[0]) + plays(alone[1])
    # --out: one folder per run
    r = cli("arc3", "score", a, b, "--baselines", base, "--out", tmp_path / "o")
    assert r.returncode == 0, r.stderr
    for name, want in zip(("agent-a", "agent-b"), alone):
        s = json.loads((tmp_path / "o" / name / "summary.json").read_text())
        assert s["score"] == want["score"]
