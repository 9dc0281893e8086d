"""Comparing runs: run directories re-scored from predictions.json, paired differences,
exact McNemar, refusal of different task sets, the `arcnb compare` command."""
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from arcnb.cli import main
from arcnb.compare import CompareError, compare, load_run
from arcnb.data import Dataset, Pair, Task, load_dataset
from arcnb.io import atomic_write_json
from arcnb.scoring import score
from arcnb.taxonomy import structural_taxonomy
from submissions import synthetic_submission

ROOT = Path(__file__).resolve().parents[1]
HEURISTIC = ROOT / "data" / "examples" / "arc-agi-1-evaluation_heuristic.json"
N_BOOT = 300


@pytest.fixture(scope="module")
def ds():
    return load_dataset("arc-agi-1:evaluation")


def _sub(ds, kind, seed=0):
    return synthetic_submission(ds, kind, seed, p_second=0.45, second_wrong="input")


@pytest.fixture(scope="module")
def subs(ds):
    s = {"truth": _sub(ds, "truth"), "copy": _sub(ds, "copy"), "mixed": _sub(ds, "mixed"),
         "mixed2": _sub(ds, "mixed", seed=1)}
    if HEURISTIC.exists():
        s["heuristic"] = json.loads(HEURISTIC.read_text())
    return s


def write_run(path: Path, dataset, sub, *, tasks=None) -> Path:
    """A run directory in the evaluate layout, made by scoring predictions here."""
    ds = dataset.select(tasks) if tasks is not None else dataset
    res = score(ds, sub)
    path.mkdir(parents=True)
    (path / "predictions.json").write_text(json.dumps(sub))
    atomic_write_json(path / "metrics.json", {"summary": res.summary, "dataset": ds.info,
                                              "provenance": {"arcnb_version": "test"}})
    res.outputs.to_csv(path / "results.csv", index=False)
    return path


@pytest.fixture(scope="module")
def rundirs(tmp_path_factory, ds, subs):
    root = tmp_path_factory.mktemp("runs")
    dirs = {k: write_run(root / k, ds, v) for k, v in subs.items()}
    dirs["mixed_first100"] = write_run(root / "mixed_first100", ds, subs["mixed"],
                                       tasks=ds.task_ids[:100])
    return dirs


def _solved2(sub, t, i, truth):
    return any(np.array_equal(np.asarray(sub[t][i][k]), truth) for k in ("attempt_1", "attempt_2")
               if sub.get(t) and i < len(sub[t]) and sub[t][i].get(k) is not None)


def test_a_run_compared_with_itself_differs_by_exactly_zero(rundirs):
    c = compare([rundirs["mixed"], rundirs["mixed"]], n_boot=N_BOOT)
    d = c.tables["differences"].iloc[0]
    assert (d["difference"], d["ci_low"], d["ci_high"]) == (0.0, 0.0, 0.0)
    assert d["n_a_only"] == d["n_b_only"] == 0 and d["mcnemar_p"] == 1.0
    assert len(c.tables["only_one_solved"]) == 0
    assert (c.tables["categories"]["difference"] == 0).all()
    assert [r.label for r in c.runs] == ["mixed", "mixed#2"]


def test_truth_against_copy_the_input(rundirs):
    c = compare([rundirs["copy"], rundirs["truth"]], n_boot=N_BOOT)
    d = c.tables["differences"].iloc[0]
    assert d["difference"] == 1.0 and d["ci_low"] == d["ci_high"] == 1.0
    assert (d["n_a_only"], d["n_b_only"], d["n_both"], d["n_neither"]) == (0, 419, 0, 0)
    assert d["mcnemar_p"] == pytest.approx(2 * 0.5 ** 419, rel=1e-12)
    assert c.summary["pairs"][0]["n_tasks_b_only"] == 400


def test_paired_statistics_against_hand_counts(ds, subs, rundirs):
    c = compare([rundirs["mixed"], rundirs["mixed2"]], n_boot=N_BOOT, seed=3)
    d = c.tables["differences"].iloc[0]
    a_only = b_only = 0
    per_task_a, per_task_b, only_rows = [], [], set()
    for t in ds:
        sa = [_solved2(subs["mixed"], t.id, i, p.output) for i, p in enumerate(t.test)]
        sb = [_solved2(subs["mixed2"], t.id, i, p.output) for i, p in enumerate(t.test)]
        per_task_a.append(np.mean(sa))
        per_task_b.append(np.mean(sb))
        for i, (x, y) in enumerate(zip(sa, sb)):
            a_only += x and not y
            b_only += y and not x
            if x != y:
                only_rows.add((t.id, i, "mixed" if x else "mixed2"))
    assert d["difference"] == pytest.approx(np.mean(per_task_b) - np.mean(per_task_a))
    assert (d["n_a_only"], d["n_b_only"]) == (a_only, b_only)
    n, m = a_only + b_only, min(a_only, b_only)
    assert d["mcnemar_p"] == pytest.approx(min(1.0, 2 * sum(math.comb(n, i) for i in range(m + 1))
                                               / 2 ** n))
    assert d["ci_low"] <= d["difference"] <= d["ci_high"]
    got = {(r.task_id, r.test_index, r.solved_by)
           for r in c.tables["only_one_solved"].itertuples()}
    assert got == only_rows
    # per-category differences: hand-computed for each structural category
    tax = structural_taxonomy(ds)
    cats = c.tables["categories"].set_index("category")
    assert cats["multi_label"].all()
    for cat in cats.index:
        idx = [k for k, t in enumerate(ds) if cat in tax.categories_of(t.id)]
        ref = np.mean([per_task_b[k] for k in idx]) - np.mean([per_task_a[k] for k in idx])
        assert cats.loc[cat, "n_tasks"] == len(idx)
        assert cats.loc[cat, "difference"] == pytest.approx(ref)
        assert cats.loc[cat, "ci_low"] - 1e-12 <= cats.loc[cat, "difference"] \
            <= cats.loc[cat, "ci_high"] + 1e-12


def test_three_runs_give_every_pair(rundirs):
    if "heuristic" not in rundirs:
        pytest.skip("bundled heuristic predictions are absent")
    c = compare([rundirs["copy"], rundirs["heuristic"], rundirs["mixed"]], n_boot=N_BOOT,
                taxonomy=None)
    pairs = list(zip(c.tables["differences"]["run_a"], c.tables["differences"]["run_b"]))
    assert pairs == [("copy", "heuristic"), ("copy", "mixed"), ("heuristic", "mixed")]
    runs = c.tables["runs"].set_index("run")
    d = c.tables["differences"].set_index(["run_a", "run_b"])
    assert d.loc[("heuristic", "mixed"), "difference"] == pytest.approx(
        runs.loc["mixed", "pass@2"] - runs.loc["heuristic", "pass@2"])
    assert "categories" not in c.tables


def test_different_task_sets_are_refused_or_restricted(ds, subs, rundirs):
    with pytest.raises(CompareError, match="different task sets.*100 in common"):
        compare([rundirs["mixed"], rundirs["mixed_first100"]])
    c = compare([rundirs["mixed2"], rundirs["mixed_first100"]], common_only=True, n_boot=N_BOOT)
    assert c.summary["common_tasks_only"] and c.summary["n_tasks"] == 100
    assert c.summary["tasks_dropped"] == {"mixed2": 300, "mixed_first100": 0}
    ref = score(ds.select(ds.task_ids[:100]), subs["mixed2"]).summary["pass@2"]
    assert c.tables["runs"].set_index("run").loc["mixed2", "pass@2"] == pytest.approx(ref)


def test_runs_that_disagree_on_the_truth_are_refused(ds, subs):
    ids = ds.task_ids[:3]
    small = ds.select(ids)
    tasks = dict(small.tasks)
    t0 = tasks[ids[0]]
    wrong = t0.test[0].output.copy()
    wrong[0, 0] = (wrong[0, 0] + 1) % 10
    tasks[ids[0]] = Task(t0.id, t0.train, (Pair(t0.test[0].input, wrong),) + t0.test[1:])
    other = Dataset("edited", "test", tasks)
    a = score(small, subs["truth"])
    b = score(other, subs["truth"])
    with pytest.raises(CompareError, match=f"disagree on the truth of task {ids[0]}"):
        compare([a, b], taxonomy=None)


def test_inconsistent_or_incomplete_run_dirs(tmp_path, ds, subs, rundirs):
    bad = tmp_path / "bad"
    bad.mkdir()
    for f in ("predictions.json", "results.csv"):
        (bad / f).write_bytes((rundirs["mixed"] / f).read_bytes())
    m = json.loads((rundirs["mixed"] / "metrics.json").read_text())
    m["summary"]["pass@2"] = 0.99
    (bad / "metrics.json").write_text(json.dumps(m))
    with pytest.raises(CompareError, match="inconsistent"):
        load_run(bad)
    (bad / "metrics.json").unlink()
    with pytest.raises(CompareError, match="metrics.json is missing"):
        load_run(bad)
    with pytest.raises(CompareError, match="not found"):
        load_run(tmp_path / "nope")
    with pytest.raises(CompareError, match="at least two"):
        compare([rundirs["mixed"]])


def test_cli_writes_tables_and_refuses_to_overwrite(rundirs, tmp_path, capsys):
    out = tmp_path / "cmp"
    argv = ["compare", str(rundirs["copy"]), str(rundirs["mixed"]), "--out", str(out),
            "--n-boot", "200"]
    assert main(argv) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted([f"{t}.{e}" for t in ("runs", "differences", "only_one_solved",
                                                  "categories") for e in ("csv", "tex")]
                           + ["summary.json"])
    summary = json.loads((out / "summary.json").read_text())
    diff = pd.read_csv(out / "differences.csv")
    assert diff.loc[0, "difference"] == pytest.approx(summary["pairs"][0]["difference"])
    assert summary["taxonomy"]["name"] == "structural"
    assert "mixed - copy: pass@2 difference" in capsys.readouterr().out
    before = (out / "summary.json").read_bytes()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("arcnb: error:") and "--overwrite" in err and err.count("\n") == 1
    assert (out / "summary.json").read_bytes() == before
    assert main(argv + ["--overwrite"]) == 0
    assert (out / "summary.json").read_bytes() == before  # deterministic
    # different task sets: one-line error, then --common-tasks works
    argv2 = ["compare", str(rundirs["copy"]), str(rundirs["mixed_first100"]), "--out",
             str(tmp_path / "c2"), "--n-boot", "50", "--no-latex", "--taxonomy", "none"]
    assert main(argv2) == 2
    assert "--common-tasks" in capsys.readouterr().err
    assert main(argv2 + ["--common-tasks"]) == 0
    assert not list((tmp_path / "c2").glob("*.tex"))
    assert sorted(p.name for p in (tmp_path / "c2").iterdir()) == [
        "differences.csv", "only_one_solved.csv", "runs.csv", "summary.json"]


def test_cli_with_a_difficulty_taxonomy(rundirs, tmp_path):
    diff_csv = ROOT.parent / "shared" / "taxonomies" / "arcgame_arc1_difficulty_levels.csv"
    if not diff_csv.exists():
        pytest.skip(f"{diff_csv} is absent")
    out = tmp_path / "cmp"
    assert main(["compare", str(rundirs["copy"]), str(rundirs["truth"]), "--out", str(out),
                 "--taxonomy", str(diff_csv), "--n-boot", "50"]) == 0
    cats = pd.read_csv(out / "categories.csv")
    assert list(cats["category"]) == ["entry", "easy", "intermediate", "medium", "hard",
                                      "very-hard", "expert"]
    assert cats["n_tasks"].sum() == 400 and (cats["difference"] == 1.0).all()
    assert not cats["multi_label"].any()


def test_run_dirs_written_by_arcnb_evaluate(tmp_path, ds, subs):
    from arcnb import front as evaluate
    pred = tmp_path / "mixed.json"
    pred.write_text(json.dumps(subs["mixed"]))
    ids = tmp_path / "ids.txt"
    ids.write_text("\n".join(ds.task_ids[:50]) + "\n")
    evaluate.score_to_run_dir(pred, "arc-agi-1:evaluation", tmp_path / "full")
    evaluate.score_to_run_dir(pred, "arc-agi-1:evaluation", tmp_path / "part", tasks=str(ids))
    evaluate.score_to_run_dir(pred, "arc-agi-1:evaluation", tmp_path / "part_list",
                              tasks=ds.task_ids[50:80])
    part = load_run(tmp_path / "part")
    assert part.results.summary["n_tasks"] == 50
    assert load_run(tmp_path / "part_list").results.summary["n_tasks"] == 30  # from results.csv
    c = compare([tmp_path / "full", tmp_path / "part"], common_only=True, n_boot=50)
    d = c.tables["differences"].iloc[0]
    assert c.summary["n_tasks"] == 50 and d["difference"] == 0.0 and d["mcnemar_p"] == 1.0
