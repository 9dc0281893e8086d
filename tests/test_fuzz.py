"""Fuzz the command line and the loaders with generated files, from valid to damaged.

For every generated input, each entry point must either succeed (exit status 0, the
file's problems counted) or refuse with exactly one line on stderr and exit status 2:
never a traceback, never a partly written output.

CI runs a fixed, derandomised set of examples. For a longer hunt:

    ARCNB_FUZZ_EXAMPLES=5000 .venv/bin/python -m pytest tests/test_fuzz.py
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arcnb.io import _SCAN_CHUNK

pytestmark = pytest.mark.slow  # thousands of generated files through the loaders and the command line

EXAMPLES = int(os.environ.get("ARCNB_FUZZ_EXAMPLES", "60"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize="ARCNB_FUZZ_EXAMPLES" not in os.environ,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow, HealthCheck.data_too_large],
                database=None)

#: Every case run, per entry point and outcome: printed at the end of the session.
TALLY: dict[str, int] = {}


def cli(*argv) -> tuple[int, str, str]:
    """Run ``arcnb`` in-process; an exception escaping ``main`` fails the test (that
    would be a traceback for the user)."""
    from arcnb.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:  # argparse usage errors
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def check(name: str, code, err: str) -> None:
    assert code in (0, 2), (code, err)
    assert "Traceback" not in err
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("arcnb"), err
    TALLY[f"{name}: exit {code}"] = TALLY.get(f"{name}: exit {code}", 0) + 1


# ------------------------------------------------------------------- strategies
colours = st.integers(min_value=-2, max_value=12)
good_colour = st.integers(min_value=0, max_value=9)


@st.composite
def grids(draw, valid_bias=True):
    h = draw(st.integers(1, 4) if valid_bias else st.integers(0, 33))
    w = draw(st.integers(1, 4) if valid_bias else st.integers(0, 33))
    cell = good_colour if valid_bias else colours
    g = [[draw(cell) for _ in range(w)] for _ in range(h)]
    if not valid_bias and h and draw(st.booleans()):
        g[0] = g[0] + [1]  # ragged
    return g


json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20),
                      st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8))
json_any = st.recursive(json_leaf, lambda c: st.one_of(
    st.lists(c, max_size=4), st.dictionaries(st.text(max_size=6), c, max_size=4)), max_leaves=20)

attempt_key = st.one_of(st.sampled_from(["attempt_1", "attempt_2", "attempt_3", "attempt_10",
                                         "attempt_0", "attempt_01", "attempt_\u0661",
                                         "attempt_1\n", "answer", "attempt_" + "9" * 60]),
                        st.text(max_size=6))
attempt_value = st.one_of(grids(), grids(valid_bias=False), json_any,
                          st.builds(lambda g: {"answer": g}, grids()),
                          st.builds(lambda g: {"answer": json.dumps(g)}, grids()))
entry = st.one_of(st.dictionaries(attempt_key, attempt_value, max_size=3), grids(), json_any)
submission = st.dictionaries(st.sampled_from(["a", "b", "zz", "", "a\n", "../x"]),
                             st.one_of(st.lists(entry, max_size=3), entry), max_size=4)


def _dump(obj) -> bytes:
    return json.dumps(obj, allow_nan=True).encode()


file_bytes = st.one_of(
    submission.map(_dump),
    json_any.map(_dump),
    submission.map(lambda o: b"\xef\xbb\xbf" + _dump(o)),
    st.binary(max_size=64),
    st.integers(1, 5000).map(lambda n: b"[" * n + b"]" * n),
    st.integers(1, 5000).map(lambda n: b"[" * n),
    submission.map(lambda o: _dump(o)[: max(1, len(_dump(o)) // 2)]),  # truncated
    st.just(b'{"a": [], "a": []}'),
)

task_obj = st.fixed_dictionaries({
    "train": st.lists(st.fixed_dictionaries({"input": grids(), "output": grids()}), max_size=2),
    "test": st.lists(st.fixed_dictionaries({"input": grids(), "output": grids()}), min_size=1,
                     max_size=2),
})
# mostly valid tasks, so that folders that load are explored too
task_bytes = st.one_of(task_obj.map(_dump), task_obj.map(_dump), task_obj.map(_dump),
                       task_obj.map(lambda o: b"\xef\xbb\xbf" + _dump(o)), json_any.map(_dump),
                       st.binary(max_size=32))
task_name = st.text(alphabet=string.ascii_letters + string.digits + "_-. \u00e9\t",
                    min_size=1, max_size=10)


def _good_task() -> dict:
    return {"train": [{"input": [[0]], "output": [[1]]}],
            "test": [{"input": [[0, 0], [0, 0]], "output": [[1, 2], [3, 4]]}]}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """Two good tasks, ``a`` and ``b``; read, never written, by the tests."""
    ds = tmp_path_factory.mktemp("dataset") / "ds"
    ds.mkdir()
    for t in ("a", "b"):
        (ds / f"{t}.json").write_text(json.dumps(_good_task()))
    return ds


@pytest.fixture(scope="module")
def good_runs(tmp_path_factory, dataset):
    """Run directories scored once on :func:`dataset`, copied by every example that
    damages one: ``{"compare": (r1, r2), "open": run of _GOOD_SUB}``."""
    from arcnb.front import score_to_run_dir

    root = tmp_path_factory.mktemp("good_runs")
    good = {"a": [{"attempt_1": [[1, 2], [3, 4]]}], "b": [{"attempt_1": [[0]]}]}
    for label in ("r1", "r2"):
        score_to_run_dir(good, str(dataset), root / label)
    score_to_run_dir(_GOOD_SUB, str(dataset), root / "open")
    return {"compare": (root / "r1", root / "r2"), "open": root / "open"}


def _files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


# ------------------------------------------------------------------- the fuzzers
@FUZZ
@given(data=file_bytes, strict=st.booleans(), as_json=st.booleans())
def test_fuzz_score_predictions(tmp_path, dataset, data, strict, as_json):
    pred = tmp_path / "pred.json"
    pred.write_bytes(data)
    argv = ["score", "--dataset", dataset, "--predictions", pred]
    code, out, err = cli(*argv, *(["--strict"] if strict else []), *(["--json"] if as_json else []))
    check("score", code, err)
    if code == 0 and as_json:
        summary = json.loads(out)
        for k in ("pass@1", "pass@2", "pass@2_per_output", "pass@2_all_or_nothing"):
            assert 0.0 <= summary[k] <= 1.0


@FUZZ
@given(files=st.lists(st.tuples(task_name, task_bytes), min_size=0, max_size=2),
       sub=st.lists(st.sampled_from(["", "g1", "g1/g2"]), min_size=3, max_size=3))
def test_fuzz_task_folders(tmp_path_factory, files, sub):
    root = tmp_path_factory.mktemp("tasks")
    for (name, data), folder in zip(files, sub):
        d = root / folder
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{name}.json").write_bytes(data)
    pred = root.parent / f"{root.name}_pred.json"
    pred.write_text(json.dumps({}))
    code, _, err = cli("score", "--dataset", root, "--predictions", pred)
    check("score on a task folder", code, err)


@FUZZ
@given(kind=st.sampled_from(["csv", "json"]), body=st.one_of(
    st.text(max_size=80), st.lists(st.tuples(st.sampled_from(["a", "b", "x", "=1+1", ""]),
                                             st.text(max_size=6)), max_size=4).map(
        lambda rows: "task_id,category\n" + "\n".join(f"{t},{c}" for t, c in rows))),
    jbody=st.one_of(json_any, st.dictionaries(st.sampled_from(["a", "b", "q"]),
                                              st.one_of(st.text(max_size=5), st.lists(
                                                  st.text(max_size=5), max_size=3)),
                                              max_size=3)))
def test_fuzz_taxonomy_loader(tmp_path, dataset, kind, body, jbody):
    from arcnb.errors import ArcnbError
    from arcnb.taxonomy import load_taxonomy

    path = tmp_path / f"tax.{kind}"
    path.write_text(body if kind == "csv" else json.dumps(jbody))
    try:
        tax = load_taxonomy(str(path))
    except ArcnbError as exc:
        assert "\n" not in str(exc).strip()
        TALLY["taxonomy loader: refused"] = TALLY.get("taxonomy loader: refused", 0) + 1
        return
    assert all(isinstance(c, tuple) for c in tax.labels.values())
    TALLY["taxonomy loader: loaded"] = TALLY.get("taxonomy loader: loaded", 0) + 1


@FUZZ
@given(data=st.one_of(st.none(), submission.map(_dump), file_bytes),
       name=st.sampled_from(["metrics.json", "predictions.json", "results.csv"]))
def test_fuzz_compare_damaged_runs(tmp_path_factory, good_runs, data, name):
    """Two run directories (fresh copies of two good ones), one of them damaged: compare
    refuses in one line or works, and never leaves a partial output folder behind; two
    undamaged runs compare."""
    root = tmp_path_factory.mktemp("runs")
    runs = [shutil.copytree(run, root / run.name) for run in good_runs["compare"]]
    if data is not None:
        (runs[1] / name).write_bytes(data)
    out = root / "cmp"
    code, _, err = cli("compare", *runs, "--out", out, "--n-boot", 20, "--no-latex")
    check("compare", code, err)
    if data is None:
        assert code == 0, err
    if code == 2:
        assert not out.exists() or not _files(out), sorted(_files(out))


# ------------------------------------------------ evaluate on generated task folders
odd_task_name = st.one_of(task_name, st.sampled_from(["a\nb", "=cmd", "-1", "x$y$", "\u4e2d",
                                                      "t" * 60]))
out_state = st.sampled_from(["none", "empty", "file", "under a file", "finished",
                             "partial run files", "journal of garbage", "journal cut"])


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """``(dataset, run)``: a one-task good dataset and a finished copy-input run of it,
    made once; the examples that need a run in --out copy it."""
    from arcnb.evaluate import evaluate

    root = tmp_path_factory.mktemp("finished")
    good = root / "good"
    good.mkdir()
    (good / "g.json").write_text(json.dumps(_good_task()))
    evaluate("copy-input", str(good), root / "run", progress=False, batch_size=1)
    return good, root / "run"


#: The --out states made from a copy of :func:`finished_run` (evaluated on its dataset).
FROM_A_RUN = ("finished", "partial run files", "journal cut")


def _prepare_out(root: Path, state: str, finished: Path) -> Path:
    """An --out in a given state (what a user may have left there); ``finished``: a
    finished run, copied for the states of :data:`FROM_A_RUN`."""
    out = root / "out"
    if state == "file":
        out.write_text("mine")
    elif state == "under a file":
        (root / "afile").write_text("mine")
        out = root / "afile" / "sub"
    elif state != "none":
        out.mkdir()
    if state in FROM_A_RUN:
        shutil.copytree(finished, out, dirs_exist_ok=True)
        if state == "partial run files":
            (out / "metrics.json").unlink()
        if state == "journal cut":
            for f in ("metrics.json", "predictions.json", "results.csv", "results.parquet",
                      "tasks.csv"):
                (out / f).unlink()
            data = (out / "journal.jsonl").read_bytes()
            (out / "journal.jsonl").write_bytes(data[: len(data) * 2 // 3])
    elif state == "journal of garbage":
        (out / "journal.jsonl").write_bytes(b'{"kind": "arcnb-evaluate-journal"}\n[1]\n{"task')
    return out


@FUZZ
@given(files=st.lists(st.tuples(odd_task_name, task_bytes), min_size=1, max_size=3),
       state=out_state, flag=st.sampled_from([None, "--resume", "--overwrite"]),
       batch=st.sampled_from(["1", "2", "64"]), attempts=st.sampled_from(["1", "2", "3"]),
       augment=st.sampled_from(["none", "none", "dihedral"]),
       tasks=st.one_of(st.none(), st.lists(odd_task_name, max_size=2)))
def test_fuzz_evaluate_copy_input(tmp_path_factory, finished_run, files, state, flag, batch,
                                  attempts, augment, tasks):
    """``arcnb evaluate`` of the copy-the-input model on generated task folders, into
    an --out in any state: exit 0 with a run that re-checks, or one line (exit 2)
    with no run file left behind that was not there before."""
    from arcnb.runs import RUN_FILES, Run

    root = tmp_path_factory.mktemp("evaluate")
    ds = root / "ds"
    ds.mkdir()
    for name, data in files:
        (ds / f"{name}.json").write_bytes(data)
    good, finished = finished_run
    out = _prepare_out(root, state, finished)
    dataset = good if state in FROM_A_RUN else ds
    before = _files(root)
    argv = ["evaluate", "--checkpoint", "copy-input", "--dataset", dataset, "--out", out,
            "--batch-size", batch, "--attempts", attempts, "--augment", augment,
            "--no-progress"]
    if tasks is not None:
        ids = root / "ids.txt"
        ids.write_text("\n".join(tasks))
        before.add(ids)
        argv += ["--tasks", ids]
    if flag:
        argv.append(flag)
    code, _, err = cli(*argv)
    check("evaluate copy-input", code, err)
    if code == 0:
        run = Run.open(out)
        assert run.results.summary["n_tasks"] >= 1
        assert 0.0 <= run.results.summary["pass@2"] <= 1.0
    else:
        new = {p for p in _files(root) - before
               if p.name in RUN_FILES or p.name.endswith(".tmp")}
        assert not new, sorted(new)


# ------------------------------------------------------------ damaged run directories
_GOOD_SUB = {"a": [{"attempt_1": [[1, 2], [3, 4]]}], "b": [{"attempt_1": [[0]],
                                                          "attempt_2": [[1, 2], [3, 4]]}]}
metric_key = st.sampled_from(["pass@1", "pass@2", "pass@2_per_output", "pass@3", "pass@0",
                              "pass@99999999999", "n_tasks", "n_outputs", "dataset", "summary",
                              "task_ids", "tasks", "parameters", "estimator", "bootstrap",
                              "pass@2_ci95", "shape_accuracy", "provenance", "total_cost"])
metric_value = st.one_of(json_any, st.floats(0, 1), st.integers(-3, 10**12),
                         st.sampled_from([{"name": "../nowhere", "version": "folder:/nowhere"},
                                          {"name": "arc-agi-1:evaluation"},
                                          ["a"], ["a", "zz"], "ids.txt", "/etc/passwd"]))
damage = st.one_of(
    st.tuples(st.just("edit metrics"), metric_key, metric_value),
    st.tuples(st.just("drop metric"), metric_key, st.none()),
    st.tuples(st.just("replace file"), st.sampled_from(
        ["metrics.json", "predictions.json", "results.csv", "results.parquet", "tasks.csv"]),
        file_bytes),
    st.tuples(st.just("delete file"), st.sampled_from(
        ["metrics.json", "predictions.json", "results.csv", "results.parquet"]), st.none()),
)


@FUZZ
@given(damages=st.lists(damage, min_size=1, max_size=3))
def test_fuzz_open_damaged_run_dirs(tmp_path_factory, good_runs, damages):
    """``Run.open`` on a run directory (a fresh copy of a good one) damaged in up to
    three ways: it opens (and then its numbers are the re-scored ones) or raises an
    ArcnbError with a one-line message; never another exception."""
    from arcnb.errors import ArcnbError
    from arcnb.runs import Run

    rd = shutil.copytree(good_runs["open"], tmp_path_factory.mktemp("run") / "run")
    for kind, what, value in damages:
        path = rd / what if kind in ("replace file", "delete file") else rd / "metrics.json"
        if kind == "replace file":
            path.write_bytes(value)
        elif kind == "delete file":
            path.unlink(missing_ok=True)
        elif path.exists():
            try:
                m = json.loads(path.read_text())
            except (ValueError, UnicodeDecodeError, RecursionError):
                continue
            if not isinstance(m, dict):
                continue
            if kind == "drop metric":
                m.pop(what, None)
            else:
                m[what] = value
            path.write_text(json.dumps(m, allow_nan=True))
    try:
        run = Run.open(rd)
    except ArcnbError as exc:
        assert "\n" not in str(exc).strip(), str(exc)
        TALLY["Run.open damaged: refused"] = TALLY.get("Run.open damaged: refused", 0) + 1
        return
    s = run.results.summary
    recorded = run.metrics
    for key in ("pass@1", "pass@2", "n_tasks", "n_outputs"):
        if isinstance(recorded.get(key), (int, float)) and not isinstance(recorded[key], bool):
            assert abs(float(recorded[key]) - float(s[key])) <= 1e-9, key
    TALLY["Run.open damaged: opened"] = TALLY.get("Run.open damaged: opened", 0) + 1


def teardown_module(module):
    # The case counts, for the closing note of a fuzzing session (pytest -s shows them).
    print("\nfuzz cases:", json.dumps(dict(sorted(TALLY.items())), indent=1))


# ------------------------------------------------------------------- hostile metadata
hostile_text = st.one_of(st.text(max_size=12), st.sampled_from(
    ["\x1b[2J\x1b[H", "a\rb", "\x07", "\u202e", "x\ny", "\x9b31m", "\x00"]))
hostile_number = st.one_of(st.floats(allow_nan=False), st.integers(-10**30, 10**30),
                           st.sampled_from([1e308, -1e308, -5, 0, 10**400]), hostile_text)
metadata = st.fixed_dictionaries({}, optional={
    "model": hostile_text, "provider": hostile_text, "task_id": hostile_text,
    "pair_index": st.one_of(hostile_number, st.booleans()),
    "start_timestamp": hostile_text, "end_timestamp": hostile_text,
    "cost": st.fixed_dictionaries({}, optional={"total_cost": hostile_number,
                                                "prompt_cost": hostile_number}),
    "usage": st.fixed_dictionaries({}, optional={
        "prompt_tokens": hostile_number, "completion_tokens": hostile_number,
        "total_tokens": hostile_number, "completion_tokens_details": st.fixed_dictionaries(
            {}, optional={"reasoning_tokens": hostile_number}),
        "prompt_tokens_details": st.fixed_dictionaries({}, optional={
            "cache_read_tokens": hostile_number, "cache_creation_tokens": hostile_number})}),
    "num_turns": hostile_number,
    "tool_calls": st.one_of(hostile_number, st.lists(st.dictionaries(hostile_text, hostile_text,
                                                                     max_size=2), max_size=3))})
answer = st.one_of(grids(), hostile_text, st.builds(lambda g, t: f"{t} \\boxed{{{g}}} {t}",
                                                     grids(), hostile_text))


def _printable_output(text: str) -> bool:
    return not any((ord(c) < 32 and c != "\n") or 0x7f <= ord(c) < 0xa0 or c == "\u202e"
                   for c in text)


@FUZZ
@given(entries=st.lists(st.dictionaries(st.sampled_from(["attempt_1", "attempt_2"]),
                                        st.fixed_dictionaries({"answer": answer,
                                                               "metadata": metadata}),
                                        max_size=2), min_size=1, max_size=2),
       as_json=st.booleans())
def test_fuzz_hostile_metadata_in_a_harness_folder(tmp_path_factory, dataset, entries,
                                                   as_json):
    """Huge, negative and non-numeric costs and tokens, and control characters in every
    metadata field: exit 0 or one line, and nothing unescaped reaches the terminal."""
    folder = tmp_path_factory.mktemp("run")
    (folder / "a.json").write_text(json.dumps(entries, default=str))
    code, out, err = cli("score", "--dataset", dataset, "--predictions", folder,
                         *(["--json"] if as_json else []))
    check("score harness metadata", code, err)
    assert _printable_output(out) and _printable_output(err), (out, err)
    if code == 0 and as_json:
        s = json.loads(out)
        for key in ("total_cost", "total_tokens", "total_cost_cached", "total_tool_calls",
                    "total_turns", "total_cache_read_tokens"):
            assert s[key] is None or 0 <= s[key] < 1e20


@FUZZ
@given(kind=st.sampled_from(["fifo", "dev-zero link", "dir", "empty", "sparse"]),
       where=st.sampled_from(["--predictions", "--tasks", "harness file"]))
def test_fuzz_special_files(tmp_path_factory, dataset, kind, where):
    """FIFOs, a link to /dev/zero, folders, empty and sparse files wherever a file is
    read: one line (or a result), never a hang."""
    root = tmp_path_factory.mktemp("special")
    target = root / ("h" if where == "harness file" else "x.json")
    if where == "harness file":
        target.mkdir()
        target = target / "a.json"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "dev-zero link":
        target.symlink_to("/dev/zero")
    elif kind == "dir":
        target.mkdir()
    else:
        target.write_bytes(b"")
        if kind == "sparse":  # over two of the depth scan's chunks
            os.truncate(target, 2 * _SCAN_CHUNK + 1)
    preds = root / "p.json"
    preds.write_text("{}")
    if where == "--predictions":
        argv = ["--predictions", target]
    elif where == "--tasks":
        argv = ["--predictions", preds, "--tasks", target]
    else:
        argv = ["--predictions", target.parent]
    code, out, err = cli("score", "--dataset", dataset, *argv)
    check("score special file", code, err)
