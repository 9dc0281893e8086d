"""Comparing runs: run directories re-scored from predictions.json, paired differences,
exact McNemar, refusal of different task sets, the `arcnb compare` command; cost in run
directories and the leaderboard picture (pass@2 against cost per task)."""
import hashlib
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from arcnb.cli import main
from arcnb.compare import CompareError, compare, load_run, pareto_front
from arcnb.data import Dataset, Pair, Task, load_dataset
from arcnb.front import score_to_run_dir
from arcnb.io import atomic_write_json
from arcnb.runs import METRICS, PREDICTIONS, Run, RunDirError, compact_line
from arcnb.scoring import score
from arcnb.taxonomy import structural_taxonomy
from submissions import synthetic_submission

ROOT = Path(__file__).resolve().parents[1]
HEURISTIC = ROOT / "data" / "examples" / "arc-agi-1-evaluation_heuristic.json"
N_BOOT = 300


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
                           + ["summary.json", "difficulty.csv"])
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
        "differences.csv", "difficulty.csv", "only_one_solved.csv", "runs.csv", "summary.json"]


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


# ------------------------------------------------------------- cost and the leaderboard
# Cost in run directories and comparisons: a benchmarking-harness run keeps its cost
# when written as a run directory and re-opened, the estimator travels with the run
# (metrics.json, compact line, re-scoring), and `arcnb compare` draws the leaderboard
# picture (pass@2 against cost per task, log axis, Pareto front).
#
# Expected numbers are counted here from the harness files this module writes (cost per
# attempt times attempts, solved tasks by construction), never read back from arcnb.

N_TASKS = 8
COST_N_BOOT = 200

# name -> (cost of one attempt in dollars, tasks solved: positions n with n % step == 0)
# costs are binary fractions, so every order of summation gives the same float
RUNS = {"cheap": (1 / 64, 4), "mid": (1 / 8, 2), "pricey": (1.0, 2), "best": (2.0, 1)}


@pytest.fixture(scope="module")
def cost_ds():
    full = load_dataset("arc-agi-1:evaluation")
    return full.select(full.task_ids[:N_TASKS])


def _wrong(grid) -> list:
    return ((np.asarray(grid) + 1) % 10).tolist()


def _attempt(answer, task_id, i, cost, model):
    return {"answer": answer, "correct": None,
            "metadata": {"model": model, "provider": "test", "task_id": task_id,
                         "pair_index": i, "start_timestamp": "2025-01-01T00:00:00Z",
                         "end_timestamp": "2025-01-01T00:00:02Z",
                         "usage": {"prompt_tokens": 70, "completion_tokens": 30,
                                   "total_tokens": 100,
                                   "completion_tokens_details": {"reasoning_tokens": 5}},
                         "cost": {"prompt_cost": cost / 2, "completion_cost": cost / 2,
                                  "reasoning_cost": None, "total_cost": cost}}}


def harness_folder(folder: Path, cost_ds, name: str) -> Path:
    """A harness run: one <task_id>.json per task; attempt 1 wrong, attempt 2 the truth
    on the solved tasks (wrong elsewhere); every attempt costs RUNS[name][0]."""
    cost, step = RUNS[name]
    folder.mkdir(parents=True)
    for n, t in enumerate(cost_ds):
        entries = []
        for i, p in enumerate(t.test):
            second = p.output.tolist() if n % step == 0 else _wrong(p.output)
            entries.append({"attempt_1": _attempt(_wrong(p.output), t.id, i, cost, name),
                            "attempt_2": _attempt(second, t.id, i, cost, name)})
        (folder / f"{t.id}.json").write_text(json.dumps(entries))
    (folder / "results.json").write_text(json.dumps({"score": 0}))  # the harness's summary
    return folder


def expected(cost_ds, name: str) -> dict:
    cost, step = RUNS[name]
    n_out = sum(len(t.test) for t in cost_ds)
    return {"pass@2": sum(n % step == 0 for n in range(N_TASKS)) / N_TASKS,
            "total_cost": cost * 2 * n_out, "cost_per_task": cost * 2 * n_out / N_TASKS,
            "total_tokens": 100 * 2 * n_out}


@pytest.fixture(scope="module")
def folders(cost_ds, tmp_path_factory):
    root = tmp_path_factory.mktemp("harness")
    return {name: harness_folder(root / name, cost_ds, name) for name in RUNS}


@pytest.fixture(scope="module")
def cost_rundirs(cost_ds, folders, tmp_path_factory):
    root = tmp_path_factory.mktemp("cost_rundirs")
    ids = root / "ids.txt"
    ids.write_text("\n".join(cost_ds.task_ids) + "\n")
    return {name: (score_to_run_dir(f, "arc-agi-1:evaluation", root / name, tasks=str(ids)),
                   root / name)[1] for name, f in folders.items()}


def _digest(folder: Path) -> str:
    """The harness folder's digest, by hand: sorted task file names, each with the
    SHA-256 of its bytes."""
    h = hashlib.sha256()
    for f in sorted(p for p in folder.glob("*.json") if p.name != "results.json"):
        h.update(f.name.encode() + b"\0" + hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()


# ------------------------------------------------------------------- run directories
def test_harness_run_dir_keeps_cost_and_reopens_to_the_same_numbers(cost_ds, folders, cost_rundirs):
    rd, exp = cost_rundirs["mid"], expected(cost_ds, "mid")
    metrics = json.loads((rd / METRICS).read_text())
    for key in ("pass@2", "total_cost", "cost_per_task", "total_tokens"):
        assert metrics[key] == exp[key], key
    assert metrics["model"] == "mid" and metrics["provider"] == "test"
    assert metrics["n_attempts_with_cost"] == metrics["n_attempts"] == 2 * cost_ds.n_outputs
    assert metrics["estimator"] == "ranked"
    # predictions.json keeps every attempt's metadata ({"answer", "metadata"} form)
    saved = json.loads((rd / PREDICTIONS).read_text())
    first = saved[cost_ds.task_ids[0]][0]["attempt_1"]
    assert first["metadata"]["cost"]["total_cost"] == RUNS["mid"][0]
    assert metrics["provenance"]["predictions_sha256"] == _digest(folders["mid"])
    run = Run.open(rd)
    for key in ("pass@2", "total_cost", "cost_per_task", "total_tokens", "tokens_per_task",
                "total_duration_s", "n_attempts"):
        assert run.results.summary[key] == metrics[key], key
    assert run.results.has_cost
    assert run.results.tasks["cost"].sum() == exp["total_cost"]
    line = run.compact_line()
    assert line.startswith(f"pass@2={exp['pass@2']:.4f} ({100 * exp['pass@2']:.2f}%), "
                           "estimator=ranked, checkpoint=none, predictions="
                           + _digest(folders["mid"]))


@pytest.mark.slow  # starts another process
def test_a_run_dir_whose_cost_was_edited_is_refused(cost_rundirs, tmp_path):
    rd = tmp_path / "edited"
    rd.mkdir()
    for f in cost_rundirs["cheap"].iterdir():
        (rd / f.name).write_bytes(f.read_bytes())
    m = json.loads((rd / METRICS).read_text())
    m["total_cost"] = m["total_cost"] * 2
    (rd / METRICS).write_text(json.dumps(m))
    with pytest.raises(RunDirError, match="total_cost"):
        Run.open(rd)
    proc = subprocess.run([sys.executable, "-m", "arcnb", "compare", str(rd),
                           str(cost_rundirs["mid"]), "--out", str(tmp_path / "c")],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "total_cost" in proc.stderr and "Traceback" not in proc.stderr


def _sampled(cost_ds, n=5):
    """n attempts per output: the truth at positions 3 and 4 of even tasks, so the
    ranked rule (first two attempts) never solves them, the unbiased one does."""
    sub = {}
    for k, t in enumerate(cost_ds):
        outs = []
        for p in t.test:
            atts = [_wrong(p.output)] * n
            if k % 2 == 0:
                atts[3] = atts[4] = p.output.tolist()
            outs.append({f"attempt_{j + 1}": a for j, a in enumerate(atts)})
        sub[t.id] = outs
    return sub


def test_the_estimator_travels_with_the_run(cost_ds, tmp_path):
    pred = tmp_path / "samples.json"
    pred.write_text(json.dumps(_sampled(cost_ds)))
    ids = tmp_path / "ids.txt"
    ids.write_text("\n".join(cost_ds.task_ids) + "\n")
    rd = tmp_path / "unbiased"
    score_to_run_dir(pred, "arc-agi-1:evaluation", rd, tasks=str(ids), estimator="unbiased")
    m = json.loads((rd / METRICS).read_text())
    # pass@2 of an output with c = 2 right among n = 5: 1 - C(3,2)/C(5,2) = 1 - 3/10
    assert m["estimator"] == "unbiased" and m["pass@2"] == pytest.approx(0.5 * 0.7, abs=1e-12)
    run = Run.open(rd)  # re-scored with the recorded estimator: the numbers match
    assert run.results.estimator == "unbiased"
    assert run.results.summary["pass@2"] == m["pass@2"]
    assert ", estimator=unbiased, checkpoint=none, " in run.compact_line()
    assert compact_line({"pass@2": 0.5}).startswith("pass@2=0.5000 (50.00%), estimator=ranked")
    m["estimator"] = "bogus"
    (rd / METRICS).write_text(json.dumps(m))
    with pytest.raises(RunDirError, match="unknown estimator 'bogus'"):
        Run.open(rd)


def test_compare_notes_an_unbiased_run(cost_ds, cost_rundirs, tmp_path):
    pred = tmp_path / "samples.json"
    pred.write_text(json.dumps(_sampled(cost_ds)))
    ids = tmp_path / "ids.txt"
    ids.write_text("\n".join(cost_ds.task_ids) + "\n")
    score_to_run_dir(pred, "arc-agi-1:evaluation", tmp_path / "u", tasks=str(ids),
                     estimator="unbiased")
    c = compare([cost_rundirs["cheap"], tmp_path / "u"], n_boot=COST_N_BOOT, taxonomy="structural")
    d = c.tables["differences"].iloc[0]
    # the difference follows each run's estimator: 0.35 - 0.25
    assert d["difference"] == pytest.approx(0.35 - expected(cost_ds, "cheap")["pass@2"], abs=1e-12)
    # McNemar and the solved sets use the ranked rule: the sampled run solves nothing
    # within its first two attempts
    assert d["n_b_only"] == 0 and d["n_a_only"] == sum(
        len(t.test) for n, t in enumerate(cost_ds) if n % 4 == 0)
    notes = " ".join(c.summary["notes"])
    assert "run u uses the unbiased estimator" in notes and "different estimators" in notes
    assert list(c.tables["runs"]["estimator"]) == ["ranked", "unbiased"]
    # per category, the difference is also taken on each run's pass@2
    cats = c.tables["categories"]
    assert (cats["pass@2_b"].dropna() > 0).any()
    assert not c.summary["leaderboard"]["drawn"]  # the sampled run has no cost


# --------------------------------------------------------------------- Pareto front
def test_pareto_front_on_hand_made_points():
    #          A     B    C    D    E     F        G    H     I
    cost = [1.0, 2.0, 3.0, 2.0, 0.5, math.nan, 4.0, 1.0, 5.0]
    score = [0.2, 0.5, 0.4, 0.5, 0.1, 0.9, 0.9, 0.2, 0.9]
    # C is beaten by B (cheaper, higher); I by G (same score, cheaper); F has no cost;
    # A and H are equal (both kept), B and D too
    assert pareto_front(cost, score).tolist() == [True, True, False, True, True, False,
                                                  True, True, False]
    assert pareto_front([], []).tolist() == []
    assert pareto_front([1.0, 1.0], [math.nan, 0.0]).tolist() == [False, True]
    with pytest.raises(ValueError):
        pareto_front([1.0, 2.0], [0.5])


def test_cost_vs_score_axes_hold_the_points_and_the_front():

    import pandas as pd

    from arcnb.plot import leaderboard as cost_vs_score

    df = pd.DataFrame({"run": ["a", "b", "c", "zero"], "cost_per_task": [0.1, 1.0, 10.0, 0.0],
                       "pass@2": [0.2, 0.5, 0.4, 0.05], "pass@2_ci_low": [0.1, 0.4, 0.3, 0.0],
                       "pass@2_ci_high": [0.3, 0.6, 0.5, 0.1]})
    ax = cost_vs_score(df)
    assert ax.get_xscale() == "log"
    pts = next(c for c in ax.collections if c.get_gid() == "arcnb-runs")
    # the free run sits a decade below the cheapest other run (0.1 -> 0.01)
    assert pts.get_offsets().tolist() == [[0.1, 0.2], [1.0, 0.5], [10.0, 0.4], [0.01, 0.05]]
    line = next(ln for ln in ax.lines if ln.get_gid() == "arcnb-pareto-front")
    # the front (c is beaten by b), in cost order
    assert line.get_xydata().tolist() == [[0.01, 0.05], [0.1, 0.2], [1.0, 0.5]]
    rings = next(c for c in ax.collections if c.get_gid() == "arcnb-pareto-points")
    assert sorted(map(tuple, rings.get_offsets().tolist())) == [(0.01, 0.05), (0.1, 0.2),
                                                                (1.0, 0.5)]
    texts = sorted(t.get_text() for t in ax.texts)
    assert texts == ["a", "b", "c", "zero ($0)"]
    assert ax.get_ylim()[0] == 0 and ax.get_ylim()[1] <= 1
    import matplotlib.pyplot as plt

    plt.close("all")


# ------------------------------------------------------------------- the leaderboard
def test_compare_draws_the_leaderboard_from_harness_runs(cost_ds, cost_rundirs, tmp_path):
    names = list(RUNS)
    c = compare([cost_rundirs[n] for n in names], n_boot=COST_N_BOOT, taxonomy=None)
    runs = c.tables["runs"].set_index("run")
    for n in names:
        exp = expected(cost_ds, n)
        assert runs.loc[n, "cost_per_task"] == exp["cost_per_task"]
        assert runs.loc[n, "pass@2"] == exp["pass@2"]
    # cheap 0.25 at 1/16, mid 0.5 at 1/2, pricey 0.5 at 4 (beaten by mid), best 1.0 at 8
    assert runs["pareto_front"].to_dict() == {"cheap": True, "mid": True, "pricey": False,
                                              "best": True}
    board = c.summary["leaderboard"]
    assert board["drawn"] and board["pareto_front"] == ["cheap", "mid", "best"]
    ax = c.leaderboard()
    assert ax.get_xscale() == "log"
    line = next(ln for ln in ax.lines if ln.get_gid() == "arcnb-pareto-front")
    assert line.get_xydata().tolist() == [[expected(cost_ds, n)["cost_per_task"],
                                           expected(cost_ds, n)["pass@2"]]
                                          for n in ("cheap", "mid", "best")]
    written = c.write(tmp_path / "cmp", latex=False)
    names_written = sorted(p.name for p in written)
    assert "leaderboard.png" in names_written and "leaderboard.pdf" in names_written
    assert (tmp_path / "cmp" / "leaderboard.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "cmp" / "leaderboard.pdf").read_bytes()[:5] == b"%PDF-"
    summary = json.loads((tmp_path / "cmp" / "summary.json").read_text())
    assert summary["leaderboard"]["files"] == ["leaderboard.png", "leaderboard.pdf"]


def test_compare_cli_leaderboard_and_the_no_cost_line(cost_ds, cost_rundirs, tmp_path, capsys):
    out = tmp_path / "cmp"
    argv = ["compare", str(cost_rundirs["cheap"]), str(cost_rundirs["best"]), "--out", str(out),
            "--n-boot", "50", "--taxonomy", "none", "--no-latex"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    cheap, best = expected(cost_ds, "cheap"), expected(cost_ds, "best")
    assert (f"leaderboard: cheap 0.2500 at ${cheap['cost_per_task']:.4f} per task, best "
            f"1.0000 at ${best['cost_per_task']:.4f} per task; Pareto front: cheap, best"
            in printed)
    assert (out / "leaderboard.png").is_file()
    assert main(argv) == 2  # the figure is an output too: never replaced silently
    assert "already exists" in capsys.readouterr().err
    # runs without cost: one line says so, no figure
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({t.id: [{"attempt_1": p.input.tolist()} for p in t.test]
                                 for t in cost_ds}))
    ids = tmp_path / "ids.txt"
    ids.write_text("\n".join(cost_ds.task_ids) + "\n")
    score_to_run_dir(plain, "arc-agi-1:evaluation", tmp_path / "plain", tasks=str(ids))
    out2 = tmp_path / "cmp2"
    assert main(["compare", str(tmp_path / "plain"), str(cost_rundirs["mid"]), "--out", str(out2),
                 "--n-boot", "50", "--taxonomy", "none", "--no-latex"]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines()
             if ln.startswith(("leaderboard", "no leaderboard"))]
    assert lines == ["no leaderboard picture (pass@2 against cost per task): run plain has no "
                     "cost (attempt metadata cost.total_cost)"]
    assert not list(out2.glob("leaderboard.*"))
    assert json.loads((out2 / "summary.json").read_text())["leaderboard"]["drawn"] is False


def test_compare_takes_harness_folders_with_a_dataset(cost_ds, folders, tmp_path, capsys):
    ids = tmp_path / "ids.txt"
    ids.write_text("\n".join(cost_ds.task_ids) + "\n")
    sub = load_dataset("arc-agi-1:evaluation", tasks=str(ids))
    c = compare([folders["cheap"], folders["mid"]], dataset=sub, n_boot=COST_N_BOOT, taxonomy=None)
    assert [r.label for r in c.runs] == ["cheap", "mid"]
    assert c.summary["leaderboard"]["pareto_front"] == ["cheap", "mid"]
    assert c.tables["runs"].set_index("run").loc["mid", "total_cost"] == \
        expected(cost_ds, "mid")["total_cost"]
    with pytest.raises(CompareError, match="pass the dataset"):
        compare([folders["cheap"], folders["mid"]])
    assert main(["compare", str(folders["cheap"]), str(folders["mid"]), "--out",
                 str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--dataset" in err


def test_compare_page_shows_the_leaderboard_or_says_why_not(cost_rundirs, tmp_path):
    """The compare notebook's cells (its own code, run here in this process: every
    section of ``S.COMPARE``): runs with a cost show the per-task picture and the
    leaderboard, and write leaderboard.pdf into ``out``; runs without a cost show the
    per-task picture and, instead of the leaderboard, the one line saying why."""

    from _notebook_cells import notebook_cells_here

    from arcnb.report import sections as S

    def shown(params):
        values = notebook_cells_here("compare", params)
        sections = [v for v in values if isinstance(v, S.Section)]
        assert [type(v) for v in sections] == S.COMPARE  # every section, one cell each
        html = "\n".join(v._repr_html_() for v in sections)
        text = "\n".join(repr(v) for v in values if v is not None) + html
        # the pictures outside the Difficulty section (tested in its own file)
        others = "\n".join(v._repr_html_() for v in sections if not isinstance(v, S.Difficulty))
        return text, others.count("data:image/png;base64,")

    base = {"taxonomy": "", "n_boot": 50, "labels": [], "dataset": "", "common_tasks": False,
            "seed": 0, "overwrite": False}
    text, images = shown(dict(base, runs=[str(cost_rundirs["cheap"]), str(cost_rundirs["best"])],
                              out=str(tmp_path / "out")))
    assert images == 2  # the per-task scatter and the leaderboard
    assert "no leaderboard picture" not in text
    assert (tmp_path / "out" / "leaderboard.pdf").is_file()
    # without cost: the one line instead of the picture
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({"007bbfb7": [{"attempt_1": [[0]]}]}))
    tasks = json.loads((cost_rundirs["cheap"] / METRICS).read_text())["dataset"]["filter"]
    for name in ("p1", "p2"):
        score_to_run_dir(plain, "arc-agi-1:evaluation", tmp_path / name, tasks=tasks)
    text, images = shown(dict(base, runs=[str(tmp_path / "p1"), str(tmp_path / "p2")], out=""))
    assert images == 1
    assert ("no leaderboard picture (pass@2 against cost per task): no run has a cost "
            "(attempt metadata cost.total_cost)") in text


@pytest.mark.slow  # builds a report: its notebook runs in a Jupyter kernel
def test_report_keeps_a_run_dirs_estimator(cost_rundirs, tmp_path, capsys):
    """`arcnb report --run DIR --estimator unbiased` on a ranked run is one line, exit 2
    (a run directory is re-opened with its recorded estimator, never another)."""
    assert main(["report", "--run", str(cost_rundirs["cheap"]), "--out", str(tmp_path / "r"),
                 "--estimator", "unbiased", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ranked estimator" in err
    with pytest.raises(SystemExit) as exc:  # argparse: usage error, one line, status 2
        main(["evaluate", "--checkpoint", "copy-input", "--dataset", "arc-agi-1:evaluation",
              "--out", str(tmp_path / "e"), "--estimator", "bogus"])
    assert exc.value.code == 2 and capsys.readouterr().err.count("\n") == 1
    assert not (tmp_path / "e").exists()


def test_tricky_harness_run_round_trips_through_a_run_dir(tmp_path):
    """The harness tests' complete run (pair_index out of order and invalid, a JSON-string
    answer, None and [] attempts, two models) written as a run directory re-opens to the
    same scores, counts and cost as scoring the folder."""
    from test_predictions import TASK_IDS, complete_run, write_run

    from arcnb.scoring import score

    cost_ds = load_dataset("arc-agi-1:evaluation", tasks=TASK_IDS)
    folder = write_run(tmp_path / "run", complete_run(cost_ds))
    ids = tmp_path / "ids.json"
    ids.write_text(json.dumps(TASK_IDS))
    direct = score(cost_ds, folder)
    score_to_run_dir(folder, "arc-agi-1:evaluation", tmp_path / "rd", tasks=str(ids))
    reopened = Run.open(tmp_path / "rd").results
    for key in ("pass@1", "pass@2", "pass@2_all_or_nothing", "n_attempts",
                "n_invalid_attempts", "total_cost", "cost_per_attempt", "total_tokens",
                "total_duration_s", "n_attempts_with_cost", "model"):
        assert reopened.summary[key] == direct.summary[key], key
    assert reopened.tasks["cost"].tolist() == direct.tasks["cost"].tolist()
