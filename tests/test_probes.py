"""The memorisation and invariance probes and the proxy score (arcnb.probes), through
``arcnb.evaluate`` and ``arcnb evaluate``: every expected number is counted here with
plain loops over the ARC data, never taken from the code under test."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

import arcnb
from arcnb.augment import dihedral, inverse_dihedral
from arcnb.cli import main
from arcnb.data import load_dataset
from arcnb.errors import ArcnbError, ParameterError
from arcnb.evaluate import evaluate
from arcnb.models import ModelAdapter
from arcnb.probes import PROBE_NAMES, check_probes
from arcnb.runs import METRICS, PROBE_PREDICTIONS

from _cli import one_line_refusal

#: A few evaluation tasks; d4b1c2b1 and d931c21c have demonstrations whose output is
#: their input (the copy-the-input proxy is then above 0).
IDS = ["00576224", "009d5c81", "12997ef3", "1d398264", "d4b1c2b1", "d931c21c"]
DS_TASKS = IDS  # the module's dataset (conftest.py's ds)


def _equal(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool((a == b).all())


class Memoriser:
    """Returns the stored answer of a test input only when it sees that input exactly as
    stored (its orientation and colours), else the input itself."""

    def __init__(self, ds):
        self.store = {t.id: [(p.input, p.output) for p in t.test] for t in ds}
        self.calls = 0

    def solve(self, task, attempts=2):
        self.calls += 1
        out = []
        stored = self.store.get(task.id, [])
        for i, pair in enumerate(task.test):
            x, y = stored[i] if i < len(stored) else (None, None)
            out.append([y if x is not None and _equal(pair.input, x) else pair.input])
        return out


class IdMemoriser:
    """Returns the stored answers of the task whose id it is given, whatever the grids."""

    def __init__(self, ds):
        self.store = {t.id: [p.output for p in t.test] for t in ds}

    def solve(self, task, attempts=2):
        known = self.store.get(task.id, [])
        return [[known[i] if i < len(known) else p.input] for i, p in enumerate(task.test)]


class DemoOracle:
    """Knows every demonstration pair of the tasks: answers a test input that is one of
    their demonstration inputs with its output (the input otherwise)."""

    def __init__(self, ds):
        self.pairs = [(p.input, p.output) for t in ds for p in t.train]

    def solve(self, task, attempts=2):
        return [[next((y for x, y in self.pairs if _equal(x, p.input)), p.input)]
                for p in task.test]


def _color_map_model(perm):
    """A logits model that recolours its input by the fixed map ``perm`` (equivariant
    under the dihedral group, not under colour permutations)."""
    import torch

    class ColorMap(torch.nn.Module):
        reads_demonstrations = False

        def forward(self, inputs):
            table = torch.tensor(list(perm) + [10], device=inputs.device)
            mapped = table[inputs.long()]
            return torch.nn.functional.one_hot(mapped, 11).permute(0, 3, 1, 2).float()

    return ColorMap()


# ---------------------------------------------------------------- parameters
def test_probe_names_expand_and_bad_ones_are_refused():
    assert check_probes(None) == ()
    assert check_probes("task-id") == ("task-id-blank", "task-id-random")
    assert check_probes(["colors", "dihedral", "colors"]) == ("dihedral", "colors")
    assert check_probes("dihedral+colors,dihedral") == ("dihedral", "dihedral+colors")
    for bad in ("rot90", "task-id-blank ", ["dihedral", 3], 7):
        with pytest.raises(ParameterError):
            check_probes(bad if bad != "task-id-blank " else "task id")


def test_task_id_probe_needs_a_model_that_reads_task_ids(ds, tmp_path):
    with pytest.raises(ParameterError, match="task id"):
        evaluate("copy-input", ds, tmp_path / "r", probe="task-id", device="cpu", n_boot=10)
    assert not (tmp_path / "r").exists()


# ------------------------------------------------------------- equivariant models
def test_copy_the_input_is_invariant_and_its_answers_map_back(ds, tmp_path):
    run = evaluate("copy-input", ds, tmp_path / "r", probe=["dihedral", "colors"],
                   device="cpu", n_boot=50)
    for p in ("dihedral", "colors"):
        n = run.probes[p]
        assert n["consistency"] == 1.0
        assert n["drop"] == 0.0 and n["drop_ci95"] == [0.0, 0.0]
        # copy-the-input solves no evaluation output here: an empty denominator is NaN
        assert math.isnan(n["robustly_solved"])
        views = run.probe_predictions(p)
        assert len(views) == (7 if p == "dihedral" else 8)
        for preds in views.values():  # every view's answer, mapped back, is the input
            for t in ds:
                for i, pair in enumerate(t.test):
                    assert _equal(preds.get(t.id, i)[0], pair.input)


def test_a_fixed_colour_map_is_dihedral_invariant(ds, tmp_path):
    perm = [0, 2, 3, 4, 5, 6, 7, 8, 9, 1]
    model = _color_map_model(perm)
    run = evaluate(model, ds, tmp_path / "r", probe="dihedral", device="cpu", n_boot=50)
    assert run.probes["dihedral"]["consistency"] == 1.0
    assert run.probes["dihedral"]["drop"] == 0.0
    for preds in run.probe_predictions("dihedral").values():
        for t in ds:
            for i, pair in enumerate(t.test):
                assert _equal(preds.get(t.id, i)[0], np.asarray(perm)[pair.input])


# ------------------------------------------------------------------ memorisers
def test_a_memoriser_drops_by_what_a_hand_count_says(ds, tmp_path):
    model = Memoriser(ds)
    run = evaluate(ModelAdapter(model), ds, tmp_path / "r", probe="dihedral", device="cpu",
                   n_boot=200)
    # by hand: under rotation/reflection t the memoriser answers the stored output
    # (mapped back) only when the rotated input is the input, else the input
    probe_task, consistent, robust, n_out = [], 0, 0, 0
    for t in ds:
        solved_views = []
        for tr in range(1, 8):
            per_out = []
            for pair in t.test:
                seen = dihedral(pair.input, tr)
                answer = inverse_dihedral(pair.output, tr) if _equal(seen, pair.input) \
                    else pair.input
                per_out.append(_equal(answer, pair.output))
            solved_views.append(per_out)
        probe_task.append(np.mean([np.mean(v) for v in solved_views]))
        for i, pair in enumerate(t.test):
            n_out += 1
            same = all(_equal(inverse_dihedral(pair.output, tr), pair.output)
                       if _equal(dihedral(pair.input, tr), pair.input) else
                       _equal(pair.input, pair.output) for tr in range(1, 8))
            consistent += same
            robust += all(v[i] for v in solved_views)
    n = run.probes["dihedral"]
    assert run.summary["pass@2"] == 1.0
    assert n["pass@2"] == pytest.approx(np.mean(probe_task))
    assert n["drop"] == pytest.approx(1.0 - np.mean(probe_task))
    assert n["drop"] > 0.8
    assert n["drop_ci95"][0] > 0.5
    assert n["consistency"] == pytest.approx(consistent / n_out)
    assert n["consistency"] <= 0.2
    assert n["robustly_solved"] == pytest.approx(robust / n_out)
    assert run.metrics["memorisation"]["largest_drop"] == "dihedral"
    assert "dihedral" in run.metrics["memorisation"]["line"]


def test_a_model_keyed_on_the_task_id_drops_to_zero_without_it(ds, tmp_path):
    # by hand: no test output of these tasks equals its input, nor another task's output
    for t in ds:
        for p in t.test:
            assert not _equal(p.input, p.output)
    run = evaluate(ModelAdapter(IdMemoriser(ds)), ds, tmp_path / "r", probe="task-id", device="cpu",
                   n_boot=50)
    assert run.summary["pass@2"] == 1.0
    for p in ("task-id-blank", "task-id-random"):
        assert run.probes[p]["pass@2"] == 0.0
        assert run.probes[p]["drop"] == 1.0
        assert run.probes[p]["robustly_solved"] == 0.0
    assert set(run.probes) == {"task-id-blank", "task-id-random"}


def test_a_logits_model_receives_the_task_id_it_is_asked_about(ds, tmp_path):
    import torch

    seen: list = []

    class Keyed(torch.nn.Module):
        reads_task_ids = True

        def forward(self, inputs, task_ids):
            seen.extend(task_ids)
            return torch.nn.functional.one_hot(inputs.long(), 11).permute(0, 3, 1, 2).float()

    evaluate(Keyed(), ds, tmp_path / "r", probe="task-id", device="cpu", n_boot=10)
    n_tests = sum(len(t.test) for t in ds)
    assert len(seen) == 3 * n_tests
    assert sorted(x for x in seen[:n_tests]) == sorted(t.id for t in ds for _ in t.test)
    assert seen.count("") == n_tests
    others = [x for x in seen if x not in ("",)]
    assert set(others) <= set(IDS)


# ---------------------------------------------------------------------- proxy
def test_proxy_of_a_model_that_solves_every_demonstration_is_one(ds, tmp_path):
    run = evaluate(ModelAdapter(DemoOracle(ds)), ds, tmp_path / "r", proxy=True, device="cpu", n_boot=50)
    assert run.proxy["pass@2"] == 1.0
    assert run.proxy["ci95"] == [1.0, 1.0]
    assert run.proxy["n_tasks"] == sum(len(t.train) >= 2 for t in ds)


def test_proxy_of_copy_the_input_is_the_share_of_demonstrations_it_copies(ds, tmp_path):
    shares = []
    for t in ds:
        if len(t.train) < 2:
            continue
        same = 0
        for p in t.train:
            same += _equal(p.input, p.output)
        shares.append(same / len(t.train))
    expected = sum(shares) / len(shares)
    assert expected > 0
    run = evaluate("copy-input", ds, tmp_path / "r", proxy=True, device="cpu", n_boot=50)
    assert run.proxy["pass@2"] == pytest.approx(expected)
    assert run.proxy["true_pass@2"] == 0.0
    lo, hi = run.proxy["ci95"]
    assert 0.0 <= lo <= expected <= hi <= 1.0
    table = run.proxy_table
    assert list(table["task_id"]) == sorted(t.id for t in ds if len(t.train) >= 2)


# ----------------------------------------------------------- files, resume, open
def test_open_gives_the_recorded_numbers_and_resume_reuses_the_journal(ds, tmp_path):
    model = Memoriser(ds)
    out = tmp_path / "r"
    run = evaluate(ModelAdapter(model), ds, out, probe=["dihedral", "task-id"], proxy=True, device="cpu",
                   n_boot=50)
    metrics = json.loads((out / METRICS).read_text())
    opened = arcnb.open(out)
    assert opened.probes.keys() == metrics["probes"].keys() == run.probes.keys()
    assert opened.probes["dihedral"]["drop"] == metrics["probes"]["dihedral"]["drop"]
    assert opened.proxy["pass@2"] == metrics["proxy"]["pass@2"]
    for p in ("dihedral", "task-id-blank", "task-id-random"):
        assert (out / PROBE_PREDICTIONS[p]).is_file()
    # a kill during the final writes: the journal finishes the run, nothing is asked again
    for f in out.iterdir():
        if not f.name.startswith("journal"):
            f.unlink()
    calls = model.calls
    again = evaluate(ModelAdapter(model), ds, out, probe=["dihedral", "task-id"], proxy=True,
                     device="cpu", n_boot=50, resume=True)
    assert model.calls == calls
    assert again.probes == run.probes and again.proxy == run.proxy


def test_resume_refuses_a_journal_of_a_run_without_the_probes(ds, tmp_path):
    out = tmp_path / "r"
    evaluate("copy-input", ds, out, device="cpu", n_boot=10)
    (out / METRICS).unlink()
    with pytest.raises(ArcnbError, match="different parameters"):
        evaluate("copy-input", ds, out, probe="dihedral", device="cpu", n_boot=10,
                 resume=True)


def test_a_run_without_probes_has_none(ds, tmp_path):
    run = evaluate("copy-input", ds, tmp_path / "r", device="cpu", n_boot=10)
    assert run.probes == {} and run.proxy == {}
    assert "probes" not in json.loads((tmp_path / "r" / METRICS).read_text())
    assert run.probe_predictions("dihedral") == {}


# ------------------------------------------------------------------ command line
def test_cli_probe_and_proxy_json_keys(tmp_path, capsys):
    ids = tmp_path / "ids.json"
    ids.write_text(json.dumps(IDS[:3]))
    code = main(["evaluate", "--checkpoint", "copy-input", "--dataset", "arc-agi-1:evaluation",
                 "--tasks", str(ids), "--out", str(tmp_path / "r"), "--device", "cpu",
                 "--probe", "dihedral", "--probe", "colors", "--proxy", "--json",
                 "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0
    doc = json.loads(out)
    assert set(doc["probes"]) == {"dihedral", "colors"}
    for p in doc["probes"].values():
        assert {"pass@2", "drop", "drop_ci95", "consistency", "robustly_solved"} <= set(p)
        assert len(p["drop_ci95"]) == 2
        assert p["robustly_solved"] is None  # NaN (nothing solved) is null in JSON
    assert {"pass@2", "ci95"} <= set(doc["proxy"])
    assert "planned forward passes" in err
    # 3 tasks x their test inputs x (1 plain + 7 dihedral + 8 colour views) + held-out pairs
    ds3 = load_dataset("arc-agi-1:evaluation", tasks=IDS[:3])
    n_tests = sum(len(t.test) for t in ds3)
    n_demos = sum(len(t.train) for t in ds3 if len(t.train) >= 2)
    assert f"{n_tests * 16 + n_demos:,}" in err
    assert doc["probes"]["dihedral"]["n_forward"] == n_tests * 7


@pytest.mark.parametrize("value", ["rotate", "task-id-blank-ish", "dihedral,bogus"])
def test_cli_bad_probe_is_one_line_and_exit_2(tmp_path, capsys, value):
    code = main(["evaluate", "--checkpoint", "copy-input", "--dataset", "arc-agi-1:evaluation",
                 "--out", str(tmp_path / "r"), "--probe", value])
    err = capsys.readouterr().err
    one_line_refusal(code, err, "probe")
    assert not (tmp_path / "r").exists()


def test_probe_names_are_the_layouts():
    assert tuple(PROBE_PREDICTIONS) == PROBE_NAMES


def probe_name_lists(root=None) -> list[str]:
    """``file:line`` of every literal collection (tuple, list, set, dict keys) in arcnb/
    that spells three or more of the probes' names: a list of the probes."""
    import ast
    from pathlib import Path

    from arcnb.runs.layout import PROBE_NAMES

    root = Path(root or Path(__file__).resolve().parents[1] / "arcnb")
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            items = (node.keys if isinstance(node, ast.Dict) else
                     node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [])
            names = {i.value for i in items if isinstance(i, ast.Constant)} & set(PROBE_NAMES)
            if len(names) >= 3:
                found.append(f"{path.relative_to(root).as_posix()}:{node.lineno}")
    return found


def test_the_probes_names_are_listed_once():
    """One list of the probes (``runs/layout.py``'s ``PROBE_NAMES``, which
    ``arcnb.probes`` re-exports): the probes' choices, their files and their figures'
    colours are made from it, never listed again."""
    import arcnb.probes as P
    from arcnb.runs import layout

    assert P.PROBE_NAMES is layout.PROBE_NAMES
    assert [f.split(":")[0] for f in probe_name_lists()] == ["runs/layout.py"]


def test_the_probe_list_check_sees_a_copy(tmp_path):
    (tmp_path / "a.py").write_text('COLOURS = {"dihedral": 1, "colors": 2, "task-id-blank": 3}\n')
    (tmp_path / "b.py").write_text('MODES = ("none", "dihedral", "dihedral+colors")\n')
    assert probe_name_lists(tmp_path) == ["a.py:1"]
