"""The run directory (arcnb.runs): writing, opening, validating, the journal.

Predictions are built here from the dataset's truths, so every expected number is
counted by hand, never read back from arcnb's scoring.
"""
from __future__ import annotations

import json

import pytest

from arcnb.compare import CompareError, compare, load_run
from arcnb.errors import ArcnbError, OutputExistsError
from arcnb.runs import (METRICS, PREDICTIONS, RESULTS_CSV, RUN_FILES, Run, RunDirError,
                        run_provenance)
from arcnb.scoring import score

N = 12
DS_FIRST = N  # the module's dataset (conftest.py's ds)


def _wrong(grid):
    return [[(v + 1) % 10 for v in row] for row in grid.tolist()]


def _submission(ds, attempts=2):
    """Even tasks: the truth as the last attempt after wrong ones; odd tasks: wrong."""
    sub = {}
    for n, t in enumerate(ds):
        outs = []
        for p in t.test:
            atts = [_wrong(p.output)] * attempts
            if n % 2 == 0:
                atts[-1] = p.output.tolist()
            outs.append({f"attempt_{k + 1}": a for k, a in enumerate(atts)})
        sub[t.id] = outs
    return sub


@pytest.fixture(scope="module")
def run_dir(ds, tmp_path_factory):
    out = tmp_path_factory.mktemp("runs") / "mine"
    res = score(ds, _submission(ds))
    run = Run.from_results(res, provenance=run_provenance(source="predictions"))
    written = run.write(out)
    assert written.run_dir == out and written.label == "mine" and run.run_dir is None
    return out


def test_write_then_open_round_trip(run_dir, ds):
    assert sorted(p.name for p in run_dir.iterdir()) == sorted(RUN_FILES)
    metrics = json.loads((run_dir / METRICS).read_text())
    assert metrics["n_tasks"] == N
    assert metrics["pass@1"] == 0.0 and metrics["pass@2"] == 0.5  # 6 of 12 tasks, attempt 2
    assert metrics["provenance"]["source"] == "predictions"
    assert json.loads((run_dir / PREDICTIONS).read_text()) == _submission(ds)

    run = Run.open(run_dir, label="x")
    assert run.label == "x" and run.path == str(run_dir) and run.ks == (1, 2)
    assert run.results.summary["pass@2"] == 0.5
    assert run.summary == {k: v for k, v in metrics.items() if k != "provenance"}
    assert run.compact_line().startswith("pass@2=0.5000 (50.00%), estimator=ranked, "
                                      "checkpoint=none, ")
    assert run.flat_provenance()["run_dir"] == str(run_dir)
    assert repr(run) == "Run('x', dataset='arc-agi-1:evaluation', tasks=12, outputs=" \
        f"{ds.n_outputs}, pass@2=0.5)"

    read = Run.read(run_dir)
    assert read.results is None and read.metrics == metrics and read.label == "mine"
    with pytest.raises(ValueError, match="without scoring"):
        read.write(run_dir.parent / "again")
    # compare takes a Run read without scoring (it opens the directory) or a scored Run
    old = Run(run.results, metrics, run_dir, "old")
    c = compare([read, old], n_boot=50, taxonomy=None)
    assert c.tables["differences"]["difference"].tolist() == [0.0]


def test_refuses_to_overwrite_a_finished_run(run_dir, ds):
    res = score(ds, _submission(ds))
    before = (run_dir / METRICS).read_bytes()
    with pytest.raises(OutputExistsError, match="already holds a finished run"):
        Run.from_results(res, provenance={}).write(run_dir)
    assert (run_dir / METRICS).read_bytes() == before


def test_three_attempts_score_pass_at_3(ds, tmp_path):
    res = score(ds, _submission(ds, attempts=3), ks=(1, 2, 3))
    Run.from_results(res, provenance={}).write(tmp_path / "r3")
    run = Run.open(tmp_path / "r3", ks="attempts")
    assert run.results.ks == (1, 2, 3)
    s = run.results.summary
    assert (s["pass@2"], s["pass@3"]) == (0.0, 0.5)  # the truth is the third attempt


def test_task_filter_falls_back_to_the_results_table(ds, tmp_path):
    from arcnb.front import score_to_run_dir

    pred = tmp_path / "sub.json"
    pred.write_text(json.dumps(_submission(ds)))
    ids = tmp_path / "ids.txt"
    ids.write_text("\n".join(ds.task_ids[:5]) + "\n")
    score_to_run_dir(pred, "arc-agi-1:evaluation", tmp_path / "run", tasks=str(ids))
    ids.unlink()  # the recorded filter file is gone: results.csv lists the tasks
    assert Run.open(tmp_path / "run").results.summary["n_tasks"] == 5
    (tmp_path / "run" / RESULTS_CSV).unlink()
    (tmp_path / "run" / "results.parquet").unlink()
    with pytest.raises(RunDirError, match="cannot be found"):
        Run.open(tmp_path / "run")


def test_bad_run_directories(run_dir, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    for name in (PREDICTIONS, RESULTS_CSV):  # the recorded filter is "12 task ids": the
        (bad / name).write_bytes((run_dir / name).read_bytes())  # table lists them
    m = json.loads((run_dir / METRICS).read_text())
    m["pass@2"] = 0.25
    (bad / METRICS).write_text(json.dumps(m))
    with pytest.raises(RunDirError, match="pass@2=0.5, but metrics.json says 0.25"):
        Run.open(bad)
    with pytest.raises(CompareError, match="inconsistent"):  # the same, through compare
        load_run(bad)
    (bad / METRICS).write_text("[1, 2]")
    with pytest.raises(RunDirError, match="must hold a JSON object"):
        Run.open(bad)
    (bad / METRICS).write_text("{oops")
    with pytest.raises(RunDirError, match="not valid JSON"):
        Run.read(bad)
    (bad / PREDICTIONS).unlink()
    with pytest.raises(RunDirError, match="predictions.json is missing"):
        Run.open(bad)
    with pytest.raises(RunDirError, match="not found"):
        Run.open(tmp_path / "nope")
    assert issubclass(RunDirError, ArcnbError) and issubclass(CompareError, RunDirError)




def test_unique_labels_numbers_repeats_and_never_takes_a_given_label():
    from arcnb.runs import unique_labels

    assert unique_labels(["a", "a", "b", "a"]) == ["a", "a#2", "b", "a#3"]
    # "a#2" is the user's own label: the repeat of "a" skips to #3
    assert unique_labels(["a", "a", "a#2"]) == ["a", "a#3", "a#2"]
    assert unique_labels(["run", "run"], sep="_") == ["run", "run_2"]
    assert unique_labels([]) == []


def test_a_runs_candidate_pool_comes_from_one_rule(ds, run_dir, tmp_path):
    """``Run.candidates()`` is where the report and the explorer get a run's pool: the
    candidates file the run wrote, else its predictions when some output has more than
    2 attempts, else None; a pool file the run did not write is refused."""
    from arcnb.evaluate import evaluate
    from arcnb.runs import CANDIDATES

    assert Run.open(run_dir).candidates() is None  # 2 attempts, no pool file
    res = score(ds, _submission(ds, attempts=3), ks=(1, 2, 3))
    mem = Run.from_results(res, provenance={})
    assert mem.candidates() is res.predictions
    assert max(len(a) for outs in res.predictions.attempts.values() for a in outs) == 3
    out = tmp_path / "aug"
    evaluate("copy-input", ds.select(ds.task_ids[:2]), out, progress=False, augment="dihedral")
    assert Run.open(out).candidates() == out / CANDIDATES
    pool = (out / CANDIDATES).read_bytes()
    (run_dir / CANDIDATES).write_bytes(pool)  # another run's pool copied in
    try:
        with pytest.raises(RunDirError, match="is not the candidate pool of the run"):
            Run.open(run_dir).candidates()
    finally:
        (run_dir / CANDIDATES).unlink()
