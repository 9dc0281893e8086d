"""arcnb/options.py: EvalOptions, the one definition of the evaluation options, against
what reads them independently: evaluate()'s and sweep()'s signatures, the command
line's parser, the evaluate notebook's parameters and a plain-loop score."""
from __future__ import annotations

import argparse
import ast
import inspect
import json
import re
from pathlib import Path

import numpy as np
import pytest

from _cli import cli, one_line_refusal
from arcnb.augment import AUGMENT_MODES
from arcnb.cli import build_parser
from arcnb.errors import ParameterError
from arcnb.evaluate import EvalOptions, check_run_parameters, checkpoint_kwargs, evaluate
from arcnb.models import ReplaceConfig
from arcnb.options import MAX_ATTEMPTS, MAX_COLOR_PERMS, combine
from arcnb.scoring import ESTIMATORS
from arcnb.stats import MAX_SEED
from arcnb.sweep import sweep

ROOT = Path(__file__).resolve().parents[1]


def _subparsers(parser) -> dict:
    """Every subcommand's parser, nested ones (``arc3 score``) included."""
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found[sub.prog] = sub
                found.update(_subparsers(sub))
    return found


def _options(parser) -> dict:
    return {a.dest: a for a in parser._actions
            if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))}


# ------------------------------------------------------------------ defaults
@pytest.mark.parametrize("func", [evaluate, sweep])
def test_the_defaults_are_the_signatures(func):
    params = inspect.signature(func).parameters
    defaults = EvalOptions.defaults()
    shared = [n for n in EvalOptions.names() if n in params]
    assert len(shared) >= 11
    for name in shared:
        assert params[name].default == defaults[name], name
    assert params["options"].default is None


@pytest.mark.parametrize("argv", [["evaluate", "--checkpoint", "c", "--dataset", "d", "--out", "o"],
                                  ["sweep"], ["report", "--default", "--out", "o"],
                                  ["score", "--dataset", "d", "--predictions", "p"],
                                  ["compare", "a", "b", "--out", "o"],
                                  ["repeats", "a", "--dataset", "d"]])
def test_the_defaults_are_the_command_lines(argv):
    args = build_parser().parse_args(argv)
    defaults = EvalOptions.defaults()
    given = [n for n in EvalOptions.names() if hasattr(args, n)]
    assert given
    for name in given:
        assert getattr(args, name) == defaults[name], (argv[0], name)
    if argv[0] != "report":  # what the command hands evaluate is the defaults
        return
    from arcnb.commands.common import eval_options

    assert eval_options(args) == EvalOptions()


def _notebook_parameters(name: str) -> dict:
    """The literals of a shipped notebook's ``parameters`` cell, read from its source."""
    from arcnb.report.notebooks import notebook_path

    nb = json.loads(Path(notebook_path(name)).read_text(encoding="utf-8"))
    cell = next(c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", []))
    tree = ast.parse("".join(cell["source"]))
    return {n.target.id: ast.literal_eval(n.value) for n in tree.body
            if isinstance(n, ast.AnnAssign)}


def test_the_evaluate_notebook_declares_every_option_with_its_default():
    declared = _notebook_parameters("evaluate")
    for name in EvalOptions.names():
        assert name in declared, name
    literals = {n: declared[n] for n in EvalOptions.names()}
    assert EvalOptions.from_mapping(literals) == EvalOptions()
    # every evaluation option `arcnb report --checkpoint` takes reaches the notebook
    report = _subparsers(build_parser())["arcnb report"]
    assert {d for d in _options(report) if d in EvalOptions.names()} <= set(declared)


# ------------------------------------------------------------------ choices
def test_every_choice_list_is_the_packages_constant():
    meta = {f: EvalOptions.__dataclass_fields__[f].metadata for f in ("augment", "estimator")}
    assert meta["augment"]["choices"] == AUGMENT_MODES
    assert meta["estimator"]["choices"] == ESTIMATORS
    seen = 0
    for prog, sub in _subparsers(build_parser()).items():
        opts = _options(sub)
        if "augment" in opts:
            assert tuple(opts["augment"].choices) == AUGMENT_MODES, prog
            seen += 1
        if "estimator" in opts:
            assert tuple(opts["estimator"].choices) == ESTIMATORS, prog
            seen += 1
    assert seen >= 7  # augment: evaluate, report, sweep; estimator: also score


def test_no_option_is_defined_twice_differently():
    """Across every subcommand, the same destination has the same default and choices."""
    seen: dict = {}
    for prog, sub in _subparsers(build_parser()).items():
        for dest, action in _options(sub).items():
            key = (action.default if not isinstance(action.default, list) else
                   tuple(action.default), None if action.choices is None
                   else tuple(action.choices), type(action).__name__)
            first = seen.setdefault(dest, (prog, key))
            assert first[1] == key, (dest, first, (prog, key))


@pytest.mark.parametrize("path", [ROOT / "arcnb" / "cli.py",
                                  *sorted((ROOT / "arcnb" / "commands").glob("*.py"))],
                         ids=lambda p: p.name)
def test_the_command_line_patches_no_parser(path):
    text = path.read_text(encoding="utf-8")
    assert "._actions" not in text and "_extend_" not in text
    tree = ast.parse(text)
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "_actions"]


# ------------------------------------------------------------------ validation
BAD = [({"attempts": 0}, ["--attempts", "0"]),
       ({"attempts": MAX_ATTEMPTS + 1}, ["--attempts", str(MAX_ATTEMPTS + 1)]),
       ({"batch_size": -1}, ["--batch-size", "-1"]),
       ({"color_perms": MAX_COLOR_PERMS + 1}, ["--color-perms", str(MAX_COLOR_PERMS + 1)]),
       ({"seed": -1}, ["--seed", "-1"]),
       ({"seed": 10 ** 23}, ["--seed", str(10 ** 23)])]


@pytest.mark.parametrize("bad,flags", BAD)
def test_a_bad_value_is_the_same_line_in_python_and_on_the_command_line(tmp_path, bad, flags):
    with pytest.raises(ParameterError) as exc:
        EvalOptions(**bad)
    message = str(exc.value)
    assert "\n" not in message
    r = cli("evaluate", "--checkpoint", "copy-input", "--dataset", "arc-agi-1:evaluation",
            "--out", tmp_path / "o", *flags)
    assert one_line_refusal(r.returncode, r.stderr) == f"arcnb: error: {message}"
    assert not (tmp_path / "o").exists()  # refused before any work
    # the same line from evaluate() and the older check
    with pytest.raises(ParameterError, match="^" + re.escape(message) + "$"):
        evaluate("copy-input", "arc-agi-1:evaluation", tmp_path / "o2", **bad)
    if "seed" not in bad or bad["seed"] != 10 ** 23:
        with pytest.raises(ParameterError, match="whole number"):
            check_run_parameters(**bad)


def test_the_old_messages_stay():
    with pytest.raises(ParameterError, match=r"^attempts must be a whole number from 1 to 1000, "
                                             r"got 0$"):
        EvalOptions(attempts=0)
    with pytest.raises(ParameterError, match=rf"^the seed must be a whole number from 0 to "
                                             rf"{MAX_SEED}, got -1$"):
        EvalOptions(seed=-1)
    with pytest.raises(ParameterError, match=r"^augment must be one of none, dihedral, "
                                             r"dihedral\+colors, got 'x'$"):
        EvalOptions(augment="x")
    with pytest.raises(ParameterError, match=r"^unknown estimator 'x': expected one of ranked, "
                                             r"unbiased$"):
        EvalOptions(estimator="x")
    with pytest.raises(ParameterError, match="not an evaluation option"):
        EvalOptions.from_mapping({"atempts": 1})
    with pytest.raises(ParameterError, match="^--config is invalid JSON"):
        EvalOptions.from_mapping({"config": "{"})
    with pytest.raises(ParameterError, match="^--config must be a JSON object$"):
        EvalOptions.from_mapping({"config": "[1]"})
    # the rules of every JSON input: a key given twice, nesting beyond 64 levels
    with pytest.raises(ParameterError, match="^--config: the key 'hidden' appears more than once"):
        EvalOptions.from_mapping({"config": '{"hidden": 8, "hidden": 16}'})
    with pytest.raises(ParameterError, match="^--config nests arrays/objects 65 levels deep"):
        EvalOptions.from_mapping({"config": '{"a": ' + "[" * 64 + "]" * 64 + "}"})
    with pytest.raises(ParameterError, match="probe"):
        EvalOptions(probe="rotate")


def test_an_unknown_augmentation_is_one_line_everywhere(tmp_path):
    with pytest.raises(ParameterError) as exc:
        EvalOptions(augment="x")
    for mode in AUGMENT_MODES:
        assert mode in str(exc.value)
    r = cli("evaluate", "--checkpoint", "copy-input", "--dataset", "arc-agi-1:evaluation",
            "--out", tmp_path / "o", "--augment", "x")
    line = one_line_refusal(r.returncode, r.stderr, "'x'", "--augment")
    for mode in AUGMENT_MODES:
        assert mode in line


def test_whole_numbers_are_stored_as_ints():
    o = EvalOptions(attempts=np.int64(3), seed=np.int32(5), n_boot=np.int64(10))
    assert (type(o.attempts), type(o.seed), type(o.n_boot)) == (int, int, int)
    with pytest.raises(ParameterError):
        EvalOptions(attempts=True)
    with pytest.raises(ParameterError):
        EvalOptions(batch_size=2.0)


# ------------------------------------------------------------------ plain JSON
def test_from_mapping_reads_what_a_notebook_carries():
    plain = {"device": "cpu", "batch_size": 8, "attempts": 3, "augment": "dihedral",
             "seed": 4, "arch": "", "config": '{"width": 4}', "replace_config": True,
             "trust_checkpoint": False, "probe": "", "proxy": False, "estimator": "ranked"}
    o = EvalOptions.from_mapping(plain)
    assert o == EvalOptions(device="cpu", batch_size=8, attempts=3, augment="dihedral", seed=4,
                            config=ReplaceConfig({"width": 4}))
    assert o.replace_config and o.arch is None and o.probe is None
    kw = o.to_kwargs()
    assert type(kw["config"]) is ReplaceConfig and kw["config"] == {"width": 4}
    assert "replace_config" not in kw
    # the keyword path: checkpoint_kwargs gives evaluate the same keywords
    from_plain = checkpoint_kwargs(plain)
    assert type(from_plain["config"]) is ReplaceConfig
    assert from_plain == {k: kw[k] for k in from_plain}
    assert checkpoint_kwargs(o) == {k: v for k, v in kw.items()
                                    if k in ("device", "batch_size", "attempts", "augment",
                                             "seed", "config")}
    # other keys (progress) pass through; only the options given are returned
    assert checkpoint_kwargs({"progress": False, "attempts": 1}) == {"progress": False,
                                                                     "attempts": 1}
    assert checkpoint_kwargs(None) == {}


def test_the_mapping_is_the_options_set_away_from_their_defaults():
    assert dict(EvalOptions()) == {} and len(EvalOptions()) == 0
    o = EvalOptions(attempts=1, config={"a": 1}, probe=["dihedral", "colors"])
    assert dict(o) == {"attempts": 1, "config": {"a": 1}, "probe": "dihedral,colors"}
    assert EvalOptions.from_mapping(dict(o)).to_json() == o.to_json()
    assert json.loads(json.dumps(o.to_json())) == o.to_json()
    assert set(o.to_json()) == set(EvalOptions.names())
    # a replace-config flag without a config: the builder's defaults replace the saved ones
    assert type(EvalOptions(replace_config=True).model_config) is ReplaceConfig


def test_a_keyword_given_overrides_the_options():
    base = EvalOptions(attempts=3, seed=7)
    assert combine(base, attempts=1, seed=0) == EvalOptions(attempts=1, seed=7)
    assert combine(None, attempts=1) == EvalOptions(attempts=1)
    assert combine({"attempts": 3}) == EvalOptions(attempts=3)
    with pytest.raises(ParameterError):
        combine(base, attempts=0)


# ------------------------------------------------------------------ evaluate
def _task_ids() -> list[str]:
    """Three tasks of the evaluation set, one with a test output equal to its input
    when there is one (copy-input solves it)."""
    from arcnb.data import load_dataset

    ds = load_dataset("arc-agi-1:evaluation")
    ids = sorted(ds.task_ids)
    same = [t.id for t in ds if any(np.array_equal(np.asarray(p.input), np.asarray(p.output))
                                    for p in t.test)]
    return sorted(set(same[:1] + ids[:3]))[:3]


def test_evaluate_with_options_is_evaluate_with_keywords(tmp_path):
    from arcnb.data import load_dataset

    ids = _task_ids()
    a = evaluate("copy-input", "arc-agi-1:evaluation", tmp_path / "a", tasks=ids,
                 options=EvalOptions(attempts=1), progress=False)
    b = evaluate("copy-input", "arc-agi-1:evaluation", tmp_path / "b", tasks=ids, attempts=1,
                 progress=False)
    pa = json.loads((tmp_path / "a" / "predictions.json").read_text())
    pb = json.loads((tmp_path / "b" / "predictions.json").read_text())
    assert pa == pb and sorted(pa) == sorted(ids)
    assert all(list(entry) == ["attempt_1"] for outs in pa.values() for entry in outs)
    ma = json.loads((tmp_path / "a" / "metrics.json").read_text())
    assert ma["provenance"]["options_sha256"] == json.loads(
        (tmp_path / "b" / "metrics.json").read_text())["provenance"]["options_sha256"]
    # pass@1 by a plain loop: a test output is solved by copying when it equals its input
    ds = load_dataset("arc-agi-1:evaluation", tasks=ids)
    scores = []
    for task in ds:
        solved = [np.array_equal(np.asarray(p.input), np.asarray(p.output)) for p in task.test]
        scores.append(sum(solved) / len(solved))
    assert a.summary["pass@1"] == pytest.approx(sum(scores) / len(scores))
    assert b.summary["pass@1"] == a.summary["pass@1"]


def test_a_keyword_beside_options_wins_in_evaluate(tmp_path):
    ids = _task_ids()[:1]
    run = evaluate("copy-input", "arc-agi-1:evaluation", tmp_path / "a", tasks=ids,
                   options=EvalOptions(attempts=3), attempts=1, progress=False)
    assert run.metrics["provenance"]["parameters"]["attempts"] == 1
