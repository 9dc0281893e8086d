"""``arcnb candidates`` (:mod:`arcnb.commands.candidates`): its lines on a bundled
predictions file (coverage, the rules' table, ties, ranks, calibration, the anytime
curve), the ``--json`` object, the budget lines of a pool that has them, and a run
directory without a pool refused in one line."""
from __future__ import annotations

import json
from pathlib import Path

from _cli import cli, one_line_refusal
from arcnb.commands import candidates as command

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "data" / "examples" / "arc-agi-1-evaluation_heuristic.json"


def _run(tmp_path, *extra):
    ids = tmp_path / "ids.txt"
    ids.write_text("00576224\n009d5c81\n00dbd492\n03560426\n")
    return cli("candidates", "--dataset", "arc-agi-1:evaluation", "--predictions", EXAMPLE,
               "--tasks", ids, "--n-boot", "50", *extra, cwd=tmp_path)


def test_the_lines_of_a_two_attempt_pool(tmp_path):
    r = _run(tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("dataset: arc-agi-1:evaluation (") and "filter: " in lines[0]
    assert lines[1].startswith("tasks: 4  outputs: 4  samples: ")
    assert lines[2] == "coverage: 0.0000 [0.0000, 0.0000]  per output: 0.0000"
    assert lines[3:6] == ["rule                   pass@1   pass@2  selection_gap",
                          "order                  0.0000   0.0000         0.0000",
                          "votes                  0.0000   0.0000         0.0000"]
    assert lines[6].startswith("ties between equal votes: at random")
    assert lines[7] == "rank of the right candidate (votes): absent: 4"
    assert lines[9].startswith("calibration of the top vote share: ece ")
    assert lines[10].startswith("anytime (sample, votes in each subset, ties random): n=1 ")
    assert lines[11].startswith("voting gain (pass@1 at n=2 - at n=1): 0.0000 [")
    assert "arcnb: warning: every test output has a single distinct candidate" in r.stderr


def test_json_is_the_summary_without_the_definitions(tmp_path):
    r = _run(tmp_path, "--json", "--out", "pool")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert "definitions" not in out and out["n_tasks"] == 4 and "rankings" in out
    assert (tmp_path / "pool" / "summary.json").is_file()


def test_the_budget_lines_name_steps_the_verifier_and_the_confidence():
    s = {"first_right_step": {"step 0": 2, "never": 1}, "step_axis": "step",
         "stability": {"n_stable": 2, "n_lost": 0},
         "verifier": {"precision": 0.5, "recall": 1.0, "overfit_rate": 0.25,
                      "coverage_passers": 0.5, "coverage_all": 0.75},
         "confidence": {"score": "logprob", "ece": float("nan"), "ece_ci95": [None, None]}}
    assert command._budget_lines(s) == [
        "first right step: step 0: 2, never: 1  stable: 2  lost: 0",
        "verifier (passes_train): precision 0.5000  recall 1.0000  overfit rate 0.2500  "
        "coverage among passers 0.5000 (all 0.7500)",
        "calibration of logprob: ece NaN [NaN, NaN]"]


def test_a_run_directory_without_a_pool_is_refused_in_one_line(tmp_path):
    run = tmp_path / "run"
    r = cli("evaluate", "--checkpoint", "copy-input", "--dataset", "arc-agi-1:evaluation",
            "--tasks", _ids(tmp_path), "--out", run, "--no-progress", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = cli("candidates", "--dataset", "arc-agi-1:evaluation", "--predictions", run,
            cwd=tmp_path)
    one_line_refusal(r.returncode, r.stderr, "holds no candidate pool")


def _ids(tmp_path):
    ids = tmp_path / "two.txt"
    ids.write_text("00576224\n009d5c81\n")
    return ids
