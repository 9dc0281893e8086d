"""What the subcommands share (:mod:`arcnb.commands.common`): the one-line usage error
and failure, the escaped stdout, the option registry and its path marks, the
terminal's numbers and the summaries several commands print."""
from __future__ import annotations

import argparse
import io

import pytest

from arcnb.commands.common import (OPTIONS, Parser, add_option, escaped_stdout, fail,
                                   format_summary, format_unscored, number, path_dests,
                                   printable_lines, resolve_paths, say)
from arcnb.text import MISSING


def test_the_registrys_path_marks_are_the_paths_each_command_resolves():
    """resolve_paths makes absolute the registry's is_path options of the commands that
    hand paths to a kernel, a worker or a run's provenance, and nothing else."""
    from arcnb.cli import build_parser

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
        assert set(path_dests(command)) == dests, command
        if command != "arc3":  # every mark is an option the command has
            have = {a.dest for a in sub.choices[command]._actions}
            assert dests <= have, command


def test_a_usage_error_is_one_line_naming_the_commands_help(capsys):
    parser = Parser(prog="arcnb score")
    parser.add_argument("--k", type=int)
    with pytest.raises(SystemExit) as e:
        parser.parse_args(["--k", "x\x1b[31m"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("arcnb: error: argument --k")
    assert "\x1b" not in err and err.endswith("(see 'arcnb score --help')\n")


def test_fail_and_say_write_one_escaped_line_on_stderr(capsys):
    assert fail("bad input\nsecond line \x1b[2J") == 2
    say("warning", "odd \x1b[31mname")
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert out == "" and len(lines) == 2
    assert lines[0].startswith("arcnb: error: bad input") and "\x1b" not in lines[0]
    assert lines[1] == "arcnb: warning: odd \\x1b[31mname"
    assert fail("") == 2 and capsys.readouterr().err == "arcnb: error: error\n"


def test_stdout_keeps_its_line_breaks_and_escapes_the_rest(monkeypatch):
    assert printable_lines("a\x1b[31m\nb\u202e") == "a\\x1b[31m\nb\\u202e"
    buf = io.StringIO()
    monkeypatch.setattr("sys.stdout", buf)
    with escaped_stdout():
        print("model \x1b[2Jname\nnext")
    assert buf.getvalue() == "model \\x1b[2Jname\nnext\n"


def test_the_terminals_numbers_go_through_the_one_rule():
    assert number(0.25) == "0.2500" and number(0.00004) == "0.000040"
    assert number(float("nan")) == MISSING and number(None) == MISSING
    assert number(3) == "3"  # a count stays a count
    assert number(1e-9) == "0.00000000"  # at most 8 decimals


def test_an_option_is_added_only_to_the_commands_it_is_registered_for():
    p = argparse.ArgumentParser()
    add_option(p, "score", "json")
    assert p.parse_args(["--json"]).json is True
    with pytest.raises(RuntimeError, match="--jobs is not registered for score"):
        add_option(p, "score", "jobs")
    with pytest.raises(RuntimeError, match="PATH is not registered"):  # arc3 words its own
        add_option(p, "arc3", "recordings")
    dests = [o.dest for o in OPTIONS]
    assert len(dests) == len(set(dests))  # one definition each


def test_resolve_paths_makes_a_run_commands_paths_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()  # an existing path is made absolute, a name is kept
    args = argparse.Namespace(command="compare", runs=["a", "b"], dataset="arc-agi-1:evaluation",
                              taxonomy=None, out="o", tasks=None)
    record = resolve_paths(args)
    assert args.runs == [str(tmp_path / "a"), str(tmp_path / "b")]
    assert args.out == str(tmp_path / "o") and args.dataset == "arc-agi-1:evaluation"
    assert record == {"cwd": str(tmp_path), "RUN_DIR": {"given": ["a", "b"],
                                                        "resolved": args.runs}}
    score = argparse.Namespace(command="score", predictions="p.json", dataset="d", tasks=None)
    assert resolve_paths(score) == {} and score.predictions == "p.json"  # printed as given


SUMMARY = {"dataset": {"name": "d", "version": "1"}, "estimator": "ranked", "pass@1": 0.5,
           "pass@1_per_output": 0.5, "pass@1_all_or_nothing": 0.5, "pass@2": 0.75,
           "pass@2_per_output": 0.75, "pass@2_all_or_nothing": None,
           "pass@2_ci95": [0.5, 1.0], "n_tasks": 4, "n_outputs": 4, "n_missing_outputs": 0,
           "n_invalid_attempts": 0, "n_extra_tasks": 0, "n_extra_outputs": 2}


def test_format_summary_writes_the_table_and_a_missing_number_as_nan():
    """A summary read back from metrics.json holds a NaN as null: it shows as NaN, the
    one spelling of a missing number."""
    text = format_summary(SUMMARY)
    assert text.splitlines()[:3] == [
        "dataset: d (1)", "estimator: ranked (any of the first K attempts, in file order)",
        "  K    pass@K  pass@K_per_output  pass@K_all_or_nothing"]
    assert "\n  2    0.7500             0.7500                    NaN\n" in text
    assert "pass@2 95% bootstrap interval over tasks: [0.5000, 1.0000]" in text
    assert text.splitlines()[-1] == ("tasks: 4  outputs: 4  missing outputs: 0  invalid "
                                     "attempts: 0  extra tasks: 0  extra outputs: 2")
    unknown = format_summary({**SUMMARY, "pass@2_ci95": [None, None]})  # no traceback
    assert "pass@2 95% bootstrap interval over tasks: [NaN, NaN]" in unknown


def test_format_unscored_says_what_a_hidden_test_set_gives():
    text = format_unscored({"dataset": {"name": "d", "version": "1"}, "n_outputs": 3,
                            "n_outputs_without_truth": 3, "n_tasks": 2, "n_attempts": 6,
                            "n_invalid_attempts": 1,
                            "submission": {"file": "submission.json", "n_filler_attempts": 1,
                                           "filler": [[0]]}})
    assert text.splitlines() == [
        "dataset: d (1)",
        "not scored: no truth for 3 of the 3 test outputs (a hidden test set); predictions only",
        "tasks: 2  outputs: 3  attempts: 6  invalid attempts: 1",
        "submission.json: attempt_1 and attempt_2 for every test input, 1 filler attempts "
        "[[0]]"]
