"""Hostile inputs, round three: every case is built here (FIFOs, sparse files, a
deflate bomb, control characters, huge and negative numbers) and answered with one
line, a bound, or the number the official scorer gives. Memory bounds are checked with
RLIMIT_AS on a subprocess, never with timings."""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from arcnb.cli import main
from arcnb.data import load_dataset

ROOT = Path(__file__).resolve().parents[1]
TASK = "00576224"  # arc-agi-1 evaluation, one test input


def _task():
    return load_dataset("arc-agi-1:evaluation")[TASK]


def _truth():
    return _task().test[0].output.tolist()


def _run_limited(code: str, *, mem_mb: int, cwd, timeout: int = 120):
    """Run ``code`` in a fresh Python with its address space limited to ``mem_mb``."""
    limit = mem_mb << 20

    def pre():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1",
               OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, preexec_fn=pre,
                          capture_output=True, text=True, timeout=timeout)


def _one_line_error(capsys, rc, *needles):
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2, err
    assert len(lines) == 1 and lines[0].startswith("arcnb: error:"), err
    for n in needles:
        assert n in lines[0], err
    return lines[0]


# ---------------------------------------------------------------- 1: colour accuracy
def test_colour_accuracy_is_the_float64_ratio_of_counts_and_its_chart_draws():
    from arcnb.baselines import copy_input_submission
    from arcnb.breakdown import color_accuracy
    from arcnb.plot import color_accuracy as chart
    from arcnb.scoring import score

    ds = load_dataset("arc-agi-1:evaluation")
    ds20 = ds.select(ds.task_ids[:20])
    res = score(ds20, copy_input_submission(ds20))
    df = color_accuracy(res)
    # naive reference: attempt 1 where its shape matches the truth, counted per colour
    right, total = np.zeros(10), np.zeros(10)
    for task in ds20:
        for i, pair in enumerate(task.test):
            pred = res.attempts(task.id, i)[0]
            if pred is None or pred.shape != pair.output.shape:
                continue
            for c in range(10):
                m = pair.output == c
                total[c] += m.sum()
                right[c] += (pred[m] == c).sum()
    for c in range(10):
        if total[c]:
            assert df["accuracy"][c] == right[c] / total[c]  # exactly, float64
        else:
            assert np.isnan(df["accuracy"][c])
    # a value a rounding step outside its interval still draws (arms clipped at zero)

    bad = df.copy()
    bad.loc[0, "ci_high"] = bad.loc[0, "accuracy"] - 1e-9
    bad.loc[1, "ci_low"] = bad.loc[1, "accuracy"] + 1e-9
    chart(bad)


# ---------------------------------------------------------------- 5, 15, 16: checkpoints
def test_program_search_config_from_a_checkpoint_is_bounded(tmp_path):
    import torch

    from arcnb.errors import ArcnbError
    from arcnb.models import load_model

    path = tmp_path / "ps.pt"
    torch.save({"arch": "program-search", "state_dict": {},
                "config": {"max_depth": 8, "budget": 1e15, "time_limit": None}}, path)
    with pytest.raises(ArcnbError, match="max_depth=8 is outside") as exc:
        load_model(path)
    assert "\n" not in str(exc.value)
    for bad, what in (({"budget": 1e15}, "budget"), ({"time_limit": 1e9}, "time_limit"),
                      ({"time_limit": float("nan")}, "time_limit")):
        torch.save({"arch": "program-search", "state_dict": {}, "config": bad}, path)
        with pytest.raises(ArcnbError, match=what):
            load_model(path)
    torch.save({"arch": "program-search", "state_dict": {}, "config": {"max_depth": 1}}, path)
    assert load_model(path) is not None  # in bounds: built


def test_a_builder_stored_as_a_device_is_refused(tmp_path):
    import torch

    from arcnb.models import UnsafeCheckpointError, load_model

    path = tmp_path / "dev.pt"
    torch.save({"arch": torch.device("hip", 0), "config": {}, "state_dict": {}}, path)
    with pytest.raises(UnsafeCheckpointError, match="not a registered name"):
        load_model(path)


@pytest.mark.slow  # starts another process
def test_a_deflate_bomb_state_dict_is_refused_before_inflating(tmp_path):
    import torch

    from arcnb.errors import ArcnbError
    from arcnb.models import load_model

    small = tmp_path / "small.pt"
    torch.save({"w": torch.zeros(4)}, small)
    bomb = tmp_path / "bomb.pt"
    # the other records stored as torch writes them; the tensor record deflated at level
    # 1 (the fastest: 1 GiB of zeros in a few MiB, far past the 4 x size + 64 MiB a
    # checkpoint may declare)
    with zipfile.ZipFile(small) as zin, zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED,
                                                        compresslevel=1) as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename.endswith("/data/0"):  # the tensor record: 1 GiB of zeros
                with zout.open(info.filename, "w", force_zip64=True) as fh:
                    block = b"\0" * (1 << 24)
                    for _ in range(64):
                        fh.write(block)
            else:
                zout.writestr(info.filename, data, compress_type=zipfile.ZIP_STORED)
    with zipfile.ZipFile(bomb) as zf:
        assert sum(i.file_size for i in zf.infolist()) > 1 << 30
    assert bomb.stat().st_size < 8 << 20
    # torch reserves a lot of address space on import: the bound, set once torch and the
    # loader are imported, leaves 600 MB, no room for 1 GiB (the last line shows it bites)
    code = ("import resource\n"
            "import torch, arcnb.models\n"
            "from arcnb.models import load_model\n"
            "from arcnb.errors import ArcnbError\n"
            "peak = int(open('/proc/self/status').read().split('VmPeak:')[1].split()[0])\n"
            "limit = (peak << 10) + (600 << 20)\n"
            "resource.setrlimit(resource.RLIMIT_AS, (limit, limit))\n"
            "try:\n    load_model('bomb.pt')\n"
            "except ArcnbError as e:\n    print('REFUSED', e)\n"
            "try:\n    bytearray(1 << 30)\nexcept MemoryError:\n    print('BOUND')\n")
    r = _run_limited(code, mem_mb=16000, cwd=tmp_path)
    assert "REFUSED" in r.stdout and "compression bomb" in r.stdout, r.stdout + r.stderr
    assert r.stdout.splitlines()[-1] == "BOUND", r.stdout + r.stderr
    with pytest.raises(ArcnbError, match="compression bomb"):
        load_model(bomb)
    tar = tmp_path / "dir"
    tar.mkdir()
    with pytest.raises(ArcnbError, match="directory"):
        load_model(tar)


# ---------------------------------------------------------------- 7, 13, 14: files
@pytest.mark.slow  # starts another process
def test_a_sparse_dataset_file_is_refused_within_a_memory_bound(tmp_path):
    folder = tmp_path / "ds"
    folder.mkdir()
    big = folder / "aaaa.json"
    big.write_bytes(b"[")
    os.truncate(big, 100 << 20)  # 100 MB, sparse: "[" then NUL bytes
    nul = folder / "bbbb.json"
    nul.write_bytes(b"")
    os.truncate(nul, 100 << 20)
    (tmp_path / "p.json").write_text("{}")
    # both cases in one bounded process (the second runs after the first let go of its
    # memory); 800 MB is about 370 MB of imports and 4 x the file (reading and checking
    # a file costs about twice its size)
    code = ("import os, sys\nfrom arcnb.cli import main\n"
            "argv = ['score', '--dataset', 'ds', '--predictions', 'p.json']\n"
            "print('RC', main(argv), file=sys.stderr, flush=True)\n"
            "os.unlink('ds/aaaa.json')\n"
            "print('RC', main(argv), file=sys.stderr, flush=True)\n")
    r = _run_limited(code, mem_mb=800, cwd=tmp_path)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 0 and len(lines) == 4, r.stderr
    assert lines[1] == "RC 2" and "not valid JSON" in lines[0], r.stderr
    assert lines[3] == "RC 2" and "does not start with a JSON value" in lines[2], r.stderr
    assert not big.exists()


def test_the_depth_scan_matches_a_naive_count():
    from arcnb import io as aio

    rng = np.random.default_rng(0)
    for _ in range(30):
        parts, depth, deepest = [], 0, 0
        for _ in range(int(rng.integers(1, 400))):
            r = rng.random()
            if r < 0.35:
                parts.append("["), parts.append(" ")
                depth += 1
                deepest = max(deepest, depth)
            elif r < 0.6 and depth:
                parts.append("]")
                depth -= 1
            else:
                parts.append(json.dumps("s[{\\\"]" * int(rng.integers(0, 3))))
        raw = "".join(parts).encode()
        old = aio._SCAN_CHUNK
        aio._SCAN_CHUNK = 7  # many chunk borders
        try:
            assert aio._json_depth(raw) == deepest
        finally:
            aio._SCAN_CHUNK = old


FIFO_CASES = """
import os, sys, threading
from arcnb.cli import main
os.mkfifo('fifo.json')
os.mkdir('h')
os.mkfifo('h/00576224.json')
for argv in (['score', '--dataset', 'arc-agi-1:evaluation', '--predictions', 'fifo.json'],
             ['score', '--dataset', 'arc-agi-1:evaluation', '--predictions', 'h'],
             ['score', '--dataset', 'arc-agi-1:evaluation', '--predictions', 'p.json',
              '--tasks', 'fifo.json'],
             ['score', '--dataset', 'arc-agi-1:evaluation', '--predictions', 'p.json',
              '--tasks', '/dev/zero'],
             ['compare', 'a', 'b', '--out', 'o', '--taxonomy', '/dev/zero.csv']):
    print('RC', main(argv), flush=True)
from arcnb.taxonomy import read_taxonomy_csv, read_taxonomy_json
for reader in (read_taxonomy_csv, read_taxonomy_json):
    try:
        reader('/dev/zero')
    except Exception as e:
        print('TAX', type(e).__name__, e, flush=True)
"""


@pytest.mark.slow  # starts another process
def test_fifos_and_devices_are_refused_without_waiting(tmp_path):
    (tmp_path / "p.json").write_text("{}")
    r = _run_limited(FIFO_CASES, mem_mb=3000, cwd=tmp_path, timeout=240)
    rcs = [ln for ln in r.stdout.splitlines() if ln.startswith("RC")]
    assert rcs[:4] == ["RC 2"] * 4, r.stdout + r.stderr
    err = r.stderr.splitlines()
    assert "is a FIFO, not a regular file" in err[0] and "fifo.json" in err[0]
    assert "00576224.json is a FIFO" in err[1]
    assert "task-id file fifo.json is a FIFO" in err[2]
    assert "/dev/zero is a device" in err[3]
    tax = [ln for ln in r.stdout.splitlines() if ln.startswith("TAX")]
    assert len(tax) == 2 and all("TaxonomyError" in t and "device" in t for t in tax), r.stdout


# ---------------------------------------------------------------- 8, 19: numbers
def _meta_sub(metas):
    return {TASK: [{f"attempt_{j + 1}": {"answer": _truth(), "metadata": md}
                    for j, md in enumerate(metas)}]}


def test_huge_and_negative_costs_and_tokens_are_invalid_metadata():
    from arcnb.scoring import score

    ds = load_dataset("arc-agi-1:evaluation", tasks=[TASK])
    res = score(ds, _meta_sub([
        {"cost": {"total_cost": 1e308}, "usage": {"total_tokens": 1e308}},
        {"cost": {"total_cost": 1e308}, "usage": {"total_tokens": 10}},
        {"cost": {"total_cost": -5}, "usage": {"total_tokens": -3}},
        {"cost": {"total_cost": 0.25}, "usage": {"total_tokens": 7}}]))
    s = res.summary
    assert s["total_cost"] == 0.25 and s["total_tokens"] == 17
    assert s["n_attempts_with_cost"] == 1 and s["n_invalid_usage_values"] == 5
    assert any("5 cost or token values" in w for w in s["warnings"])
    kinds = {p["kind"]: p["count"] for p in res.problems}
    assert kinds == {"invalid cost or token value (left out of the sums)": 5}
    # only negative costs: no cost at all, so no leaderboard point can claim one
    res = score(ds, _meta_sub([{"cost": {"total_cost": -5}}] * 2))
    assert np.isnan(res.summary["total_cost"]) and not res.has_cost


def test_huge_tokens_on_the_command_line(tmp_path, capsys):
    (tmp_path / "p.json").write_text(json.dumps(_meta_sub(
        [{"cost": {"total_cost": 1e308}, "usage": {"total_tokens": 1e308}}] * 2)))
    rc = main(["score", "--dataset", "arc-agi-1:evaluation", "--predictions",
               str(tmp_path / "p.json")])
    cap = capsys.readouterr()
    assert rc == 0 and "pass@2" in cap.out and "Traceback" not in cap.err
    assert "4 cost or token values" in cap.err


# ---------------------------------------------------------------- 9, 10, 26: one line
def test_n_boot_zero_is_one_line(tmp_path, capsys):
    from arcnb.stats import bootstrap_ci, paired_bootstrap_ci

    rc = main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--out",
               str(tmp_path / "o"), "--n-boot", "0"])
    _one_line_error(capsys, rc, "bootstrap resamples", "got 0")
    for fn, args in ((bootstrap_ci, ([0.0, 1.0],)), (paired_bootstrap_ci, ([0, 1], [1, 1]))):
        with pytest.raises(ValueError, match="resamples"):
            fn(*args, n_boot=0)


def test_a_huge_taxonomy_csv_field_is_one_line(tmp_path):
    from arcnb.taxonomy import TaxonomyError, read_taxonomy_csv

    path = tmp_path / "t.csv"
    path.write_text("task_id,category\n" + TASK + "," + "a" * 200_000 + "\n")
    with pytest.raises(TaxonomyError, match="field larger") as exc:
        read_taxonomy_csv(path)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("argv", [["score"], ["compare", "--bogus"], ["evaluate"],
                                  ["report", "--out", "x"]])
def test_usage_errors_of_subcommands_start_with_arcnb_error(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert err.startswith("arcnb: error: ") and err.count("\n") == 1, err
    assert f"arcnb {argv[0]} --help" in err


# ---------------------------------------------------------------- 17: control characters
def test_control_characters_in_metadata_never_reach_the_terminal(tmp_path, capsys):
    evil = "gpt\x1b[2J\x1b[H\x1b[31mpass@2 1.0000\r\x07\u202e"
    sub = _meta_sub([{"model": evil, "provider": "p\x1b]0;title\x07",
                      "cost": {"total_cost": 0.5}}])
    (tmp_path / "p.json").write_text(json.dumps(sub))
    for extra in ([], ["--json"]):
        rc = main(["score", "--dataset", "arc-agi-1:evaluation", "--predictions",
                   str(tmp_path / "p.json"), *extra])
        cap = capsys.readouterr()
        assert rc == 0
        for text in (cap.out, cap.err):
            assert not any(ord(c) < 32 and c != "\n" or c in "\x7f\u202e" for c in text), \
                repr(text)
    rc = main(["score", "--dataset", "arc-agi-1:evaluation", "--predictions",
               str(tmp_path / "p.json")])
    out = capsys.readouterr().out
    assert "model: gpt\\x1b[2J\\x1b[H\\x1b[31mpass@2 1.0000\\r\\x07" in out


# ---------------------------------------------------------------- 20: bundled names
def test_a_bundled_name_beats_a_folder_of_that_name(tmp_path, monkeypatch, capsys):
    task = _task()
    folder = tmp_path / "arc-agi-1:evaluation"
    folder.mkdir()
    (folder / f"{TASK}.json").write_text(json.dumps(
        {"train": [{"input": p.input.tolist(), "output": p.output.tolist()} for p in task.train],
         "test": [{"input": p.input.tolist(), "output": p.output.tolist()}
                  for p in task.test]}))
    (tmp_path / "p.json").write_text(json.dumps({TASK: [{"attempt_1": _truth()}]}))
    monkeypatch.chdir(tmp_path)
    assert len(load_dataset("arc-agi-1:evaluation")) == 400
    assert len(load_dataset("./arc-agi-1:evaluation")) == 1
    assert len(load_dataset(Path("arc-agi-1:evaluation"))) == 1
    rc = main(["score", "--dataset", "arc-agi-1:evaluation", "--predictions", "p.json",
               "--json"])
    s = json.loads(capsys.readouterr().out)
    assert rc == 0 and s["n_tasks"] == 400 and s["pass@2"] == 1 / 400
    rc = main(["score", "--dataset", "./arc-agi-1:evaluation", "--predictions", "p.json",
               "--json"])
    s = json.loads(capsys.readouterr().out)
    assert rc == 0 and s["n_tasks"] == 1 and s["pass@2"] == 1.0


# ---------------------------------------------------------------- 25: what was malformed
def test_the_cli_says_what_was_malformed(tmp_path, capsys):
    other = next(t for t in load_dataset("arc-agi-1:evaluation").task_ids if t != TASK)
    (tmp_path / "p.json").write_text(json.dumps({TASK: "x", other: [
        {"attempt_1": [[1, 2], [3]], "attempt_2": None, "attempt_01": [[1]]}]}))
    rc = main(["score", "--dataset", "arc-agi-1:evaluation", "--predictions",
               str(tmp_path / "p.json")])
    cap = capsys.readouterr()
    assert rc == 0
    lines = [ln for ln in cap.err.splitlines() if ln.startswith("arcnb: problems:")]
    assert len(lines) == 3, cap.err
    assert "2 x malformed attempt" in lines[0] and "ragged" in lines[0]
    assert any("1 x task not a list of test inputs" in ln and TASK in ln for ln in lines)
    assert any("1 x not an attempt key" in ln and "attempt_01" in ln for ln in lines)
    rc = main(["score", "--dataset", "arc-agi-1:evaluation", "--predictions",
               str(tmp_path / "p.json"), "--json"])
    s = json.loads(capsys.readouterr().out)
    assert {p["kind"]: p["count"] for p in s["problems"]} == {
        "malformed attempt": 2, "task not a list of test inputs": 1,
        "not an attempt key": 1}


# ---------------------------------------------------------------- harness answers
def _harness_folder(tmp_path, answers, metas=None):
    folder = tmp_path / "h"
    folder.mkdir(exist_ok=True)
    entry = {}
    for j, a in enumerate(answers):
        md = {"pair_index": 0} if metas is None else metas[j]
        entry[f"attempt_{j + 1}"] = {"answer": a, "metadata": md}
    (folder / f"{TASK}.json").write_text(json.dumps([entry]))
    return folder


def _score_one(tmp_path, answers, metas=None):
    from arcnb.scoring import score

    ds = load_dataset("arc-agi-1:evaluation", tasks=[TASK])
    return score(ds, _harness_folder(tmp_path, answers, metas))


def test_string_answers_are_extracted_as_the_harness_does(tmp_path):
    truth = json.dumps(_truth())
    wrong = json.dumps([[0]])
    cases = [  # (answer text, pass@2 the official scorer gives)
        (f"The grid is:\n```json\n{truth}\n```\nDone.", 1.0),        # code fence
        (f"Thinking [1, 2] ... so the answer is {truth}.", 1.0),      # prose: last block
        (f"\\boxed{{{truth}}} but later I wrote {wrong}", 1.0),       # boxed first
        (f"\\boxed{{{wrong}}} then {truth}", 0.0),                    # boxed wins
        (f"\\boxed{{not json}} then {truth}", 1.0),                   # bad boxed: back-scan
        ("no grid here at all", 0.0),
        (truth, 1.0),                                                 # a JSON string
    ]
    for text, expected in cases:
        res = _score_one(tmp_path, [text])
        assert res.summary["pass@2"] == expected, text
    res = _score_one(tmp_path, [f"so: {truth}", f"\\boxed{{{truth}}}"])
    kinds = {p["kind"]: p for p in res.problems}
    assert kinds["answer extracted from text"]["count"] == 2
    assert "the last bracketed block" in kinds["answer extracted from text"]["examples"][0]
    assert "\\boxed{}" in kinds["answer extracted from text"]["examples"][1]


def test_string_cells_and_pair_index_forms(tmp_path):
    truth = _truth()
    as_strings = [[str(c) for c in row] for row in truth]
    res = _score_one(tmp_path, [as_strings])
    assert res.summary["pass@2"] == 1.0
    assert {p["kind"] for p in res.problems} == {"cells written as strings (converted)"}
    res = _score_one(tmp_path, [[["1", "x"]]])
    assert res.summary["n_invalid_attempts"] == 1
    # pair_index "0", 0.0 point at the one test input; an out-of-range "1" or 1.0, or
    # true, says nothing (the entry stays at its position 0)
    from arcnb.predictions import _pair_index

    assert [_pair_index(v) for v in ("1", 1.0, 1, True, "1.0", " 1", 1.5, None)] == \
        [1, 1, 1, None, None, None, None, None]
    for md in ({"pair_index": "0"}, {"pair_index": 0.0}, {"pair_index": True}):
        assert _score_one(tmp_path, [truth], [md]).summary["pass@2"] == 1.0


def test_the_leaderboard_never_claims_an_empty_picture():
    from arcnb.compare import compare
    from arcnb.scoring import score

    ds = load_dataset("arc-agi-1:evaluation", tasks=[TASK])
    ok = score(ds, _meta_sub([{"cost": {"total_cost": 0.5}}]))
    negative = score(ds, _meta_sub([{"cost": {"total_cost": -5}}] * 2))
    cmp = compare([ok, negative], labels=["ok", "negative"], taxonomy=None, n_boot=10)
    board = cmp.summary["leaderboard"]
    assert not board["drawn"] and "negative has no cost" in board["note"]
    # costs, but pass@2 undefined for every run (one attempt, unbiased estimator)
    a = score(ds, _meta_sub([{"cost": {"total_cost": 0.5}}]), estimator="unbiased")
    b = score(ds, _meta_sub([{"cost": {"total_cost": 0.7}}]), estimator="unbiased")
    assert np.isnan(a.summary["pass@2"]) and a.has_cost
    board = compare([a, b], labels=["a", "b"], taxonomy=None, n_boot=10).summary["leaderboard"]
    assert not board["drawn"] and board["files"] == []
