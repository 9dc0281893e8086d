"""The ``arcnb`` command as a whole (:mod:`arcnb.cli`): how it is assembled from the
modules of :mod:`arcnb.commands`, how it answers bad input and bugs (in this process,
``_cli.cli``, and a real subprocess where only a process shows it: a bug's traceback
and exit status), and how it exits. Each command's own tests are in
``tests/test_commands_<name>.py``."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _cli import cli

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "data" / "examples" / "arc-agi-1-evaluation_heuristic.json"


def run(*args):
    return cli(*args, cwd=ROOT)


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


# ------------------------------------------------------- cli.py only assembles
CLI_NAMES = {"build_parser", "main", "run"}


def assembly_problems(cli_path: Path, commands_dir: Path, parser) -> list[str]:
    """What breaks the rule "each command in its own module; cli.py only assembles":
    ``cli_path`` defines no function or class but ``build_parser``, ``main`` and ``run``
    and stays under 200 lines; every module of ``commands_dir`` but ``common.py`` has
    ``add`` and ``run``; and every subcommand of ``parser`` runs (its ``func``) the
    ``run`` of a module of ``arcnb.commands``, each module one subcommand."""
    import ast
    import importlib

    problems = []
    text = cli_path.read_text(encoding="utf-8")
    if len(text.splitlines()) >= 200:
        problems.append(f"cli.py has {len(text.splitlines())} lines (at most 199)")
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                and node.name not in CLI_NAMES:
            problems.append(f"cli.py defines {node.name}")
    modules = sorted(p.stem for p in commands_dir.glob("*.py")
                     if p.stem not in ("__init__", "common"))
    for name in modules:
        tree = ast.parse((commands_dir / f"{name}.py").read_text(encoding="utf-8"))
        defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        if not {"add", "run"} <= defined:
            problems.append(f"commands/{name}.py lacks " + " and ".join(sorted({"add", "run"}
                                                                              - defined)))
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    runners = {}
    for command, p in sub.choices.items():
        func = p.get_default("func")
        module = getattr(func, "__module__", "") or ""
        if func is None:  # a command of subcommands (arc3): its subcommands' func
            inner = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
            funcs = {q.get_default("func") for q in inner.choices.values()}
            func = funcs.pop() if len(funcs) == 1 else None
            module = getattr(func, "__module__", "") or ""
        if not module.startswith("arcnb.commands.") or module == "arcnb.commands.common" \
                or func is not getattr(importlib.import_module(module), "run", None):
            problems.append(f"arcnb {command} runs {module}.{getattr(func, '__name__', func)}, "
                            "not the run of a module of arcnb/commands/")
        else:
            runners.setdefault(module, []).append(command)
    problems += [f"{m} runs several commands: {', '.join(c)}" for m, c in runners.items()
                 if len(c) > 1]
    problems += [f"commands/{m}.py is no subcommand of the parser" for m in modules
                 if f"arcnb.commands.{m}" not in runners]
    return problems


def test_cli_py_only_assembles_the_modules_of_commands():
    from arcnb.cli import COMMANDS, build_parser

    assert assembly_problems(ROOT / "arcnb" / "cli.py", ROOT / "arcnb" / "commands",
                             build_parser()) == []
    assert [m.__name__.rsplit(".", 1)[1] for m in COMMANDS] == [
        "score", "compare", "evaluate", "report", "notebooks", "sweep", "overlap",
        "candidates", "repeats", "arc3"]  # arcnb --help's order


def test_the_assembly_check_fails_on_a_cli_that_holds_its_commands(tmp_path):
    """The check is real: the cli.py of before (every subcommand's body in it, 1,097
    lines) and a planted subcommand both fail it."""
    import argparse as ap

    old = tmp_path / "cli.py"
    old.write_text("def _add_score(sub):\n    pass\n\n\ndef _run_score(args):\n    return 0\n"
                   + "\n" * 1100)
    commands = tmp_path / "commands"
    commands.mkdir()
    (commands / "common.py").write_text("")
    (commands / "score.py").write_text("def add(sub):\n    pass\n")

    def _run_score(args):
        return 0

    parser = ap.ArgumentParser(prog="arcnb")
    parser.add_subparsers(dest="command").add_parser("score").set_defaults(func=_run_score)
    found = assembly_problems(old, commands, parser)
    assert "cli.py has 1106 lines (at most 199)" in found
    assert {"cli.py defines _add_score", "cli.py defines _run_score"} <= set(found)
    assert "commands/score.py lacks run" in found
    assert any(f.startswith("arcnb score runs ") and "not the run of a module" in f
               for f in found)
    assert "commands/score.py is no subcommand of the parser" in found
