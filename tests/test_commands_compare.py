"""``arcnb compare`` (:mod:`arcnb.commands.compare`): its lines on two bundled
predictions files (the pair, the leaderboard's note, the difficulty line), the
difficulty line's abilities, and its one-line refusal of a single run."""
from __future__ import annotations

from pathlib import Path

from _cli import cli, one_line_refusal
from arcnb.commands import compare as command

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "data" / "examples"
HEURISTIC = EXAMPLES / "arc-agi-1-evaluation_heuristic.json"
SEARCH = EXAMPLES / "arc-agi-1-evaluation_program_search.json"


def test_two_predictions_files_on_four_tasks(tmp_path):
    ids = tmp_path / "ids.txt"
    ids.write_text("00576224\n009d5c81\n00dbd492\n03560426\n")
    r = cli("compare", HEURISTIC, SEARCH, "--dataset", "arc-agi-1:evaluation", "--tasks", ids,
            "--out", tmp_path / "cmp", "--no-latex", "--n-boot", "50", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "compared 2 runs on 4 tasks"
    a, b = HEURISTIC.stem, SEARCH.stem
    assert lines[1].startswith(f"{b} - {a}: pass@2 difference 0.2500 [")
    assert lines[1].endswith(f"McNemar p=1.0000 (0 outputs only {a}, 1 only {b})")
    assert lines[2].startswith("no leaderboard picture")
    assert lines[3].startswith("difficulty: rasch fit over 2 systems and 4 outputs (prior SD 3); "
                               f"abilities, highest first: {b} -")
    assert lines[-1] == f"wrote {tmp_path / 'cmp'}"
    assert (tmp_path / "cmp" / "summary.json").is_file()


def test_the_difficulty_line_shows_the_ends_of_a_long_list():
    systems = {f"s{i}": {"ability": i / 3} for i in range(10)}
    line = command._difficulty_line({"difficulty": {
        "model": "2pl", "n_systems": 10, "n_outputs": 5, "prior_sd": 1.5,
        "surprises": {"a": [1, 2], "b": [3]}, "systems": systems}})
    assert line == ("difficulty: 2pl fit over 10 systems and 5 outputs (prior SD 1.5); abilities, "
                    "highest first: s9 3.00, s8 2.67, s7 2.33, ..., s2 0.67, s1 0.33, s0 0.00; "
                    "3 surprises; difficulty.csv")
    assert command._difficulty_line({}) is None


def test_a_single_run_is_refused_in_one_line(tmp_path):
    r = cli("compare", HEURISTIC, "--out", tmp_path / "o", cwd=tmp_path)
    one_line_refusal(r.returncode, r.stderr, "compare needs at least two run directories")
    assert not (tmp_path / "o").exists()
