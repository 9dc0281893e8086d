"""One Source protocol: every source kind is a typed value with a ``label`` and its own
``open(...)``; ``parse_source`` is the one place a path or a name becomes one; the
report's source dicts and the extra openers are gone.

The headline numbers each source's ``open`` gives are checked against ``arcnb.open``
on the same input and against counts made here with plain loops over the dataset."""
from __future__ import annotations

import ast
import inspect
import json
from pathlib import Path

import numpy as np
import pytest

import arcnb
from arcnb.data import load_dataset
from arcnb.front import (SOURCE_KINDS, BaselineSource, CheckpointSource, DatasetSource,
                         PredictionsSource, RunDirSource, Source, open_run, parse_source)
from arcnb.resources import example
from arcnb.runs import is_run_dir

from test_predictions import complete_run, write_run
from test_predictions import TASK_IDS as HARNESS_TASKS

PACKAGE = Path(arcnb.__file__).parent
HEADLINE = ("pass@1", "pass@2", "pass@2_per_output", "pass@2_all_or_nothing", "n_tasks",
            "n_outputs", "shape_accuracy", "cell_accuracy_right_shape")


def _headline(run) -> dict:
    s = run.results.summary
    return {k: s[k] for k in HEADLINE}


def _same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert a[k] == b[k] or (a[k] != a[k] and b[k] != b[k]), k  # NaN == NaN here


def _solved_per_output(sub: dict, ds) -> float:
    """The fraction of test outputs one of whose first two attempts is the truth, by a
    plain loop over the dataset."""
    solved = total = 0
    for task in ds:
        entries = sub.get(task.id, [])
        for i, pair in enumerate(task.test):
            total += 1
            entry = entries[i] if i < len(entries) else {}
            for key in ("attempt_1", "attempt_2"):
                grid = entry.get(key)
                if grid is not None and np.array_equal(np.asarray(grid), pair.output):
                    solved += 1
                    break
    return solved / total


# ------------------------------------------------------------------ the protocol
def test_every_source_kind_has_a_label_and_its_own_open():
    params = list(inspect.signature(open_run).parameters)[1:]  # without ``source``
    made = {"predictions": PredictionsSource("x.json"), "run": RunDirSource("runs/x"),
            "checkpoint": CheckpointSource("model.pt"), "baseline": BaselineSource("copy-input"),
            "dataset": DatasetSource("arc-agi-1:evaluation")}
    assert made.keys() == SOURCE_KINDS.keys()
    for kind, cls in SOURCE_KINDS.items():
        src = made[kind]
        assert type(src) is cls and isinstance(src, Source), kind
        assert isinstance(src.label, str) and src.label, kind
        # the one opener's keywords, each defined by the class itself
        assert "open" in vars(cls), kind
        assert list(inspect.signature(cls.open).parameters)[1:] == params, kind
        assert parse_source(src) is src  # a typed source passes through


def test_labels_are_what_a_run_is_named_after():
    assert PredictionsSource("a/b/model-v2.json").label == "model-v2"
    assert PredictionsSource("a/harness_run/").label == "harness_run"
    assert PredictionsSource({"t": []}).label == "predictions"
    assert RunDirSource("runs/model.v2").label == "model.v2"
    assert CheckpointSource("ckpts/step-100.pt").label == "step-100"
    assert CheckpointSource("copy-input").label == "copy-input"
    assert BaselineSource("copy-input").label == "copy the input"
    assert DatasetSource("arc-agi-1:evaluation").label == "arc-agi-1:evaluation"


# ------------------------------------------------------------- real inputs, opened
@pytest.fixture(scope="module")
def few(arc1_eval):
    """A few ARC-AGI-1 evaluation tasks: the first (at most two) the bundled example
    predictions solve an output of, then four they do not."""
    sub = json.loads(example().read_text())
    solved = [t.id for t in arc1_eval if _solved_per_output(sub, arc1_eval.select([t.id]))]
    unsolved = [t.id for t in arc1_eval if t.id not in solved]
    assert solved
    return solved[:2] + unsolved[:4]


def test_a_submission_file(few, arc1_eval, tmp_path):
    src = parse_source(str(example()))
    assert type(src) is PredictionsSource
    run = src.open(dataset="arc-agi-1:evaluation", tasks=few)
    _same(_headline(run), _headline(arcnb.open(str(example()), dataset="arc-agi-1:evaluation",
                                               tasks=few)))
    sub = json.loads(example().read_text())
    expected = _solved_per_output(sub, arc1_eval.select(few))
    assert 0 < expected < 1
    assert run.results.summary["pass@2_per_output"] == pytest.approx(expected)
    assert run.label == example().stem

    # written as a run directory, it parses as one and re-opens to the same numbers
    written = src.open(dataset="arc-agi-1:evaluation", tasks=few, out=tmp_path / "rd")
    assert is_run_dir(tmp_path / "rd")
    rd = parse_source(str(tmp_path / "rd"))
    assert type(rd) is RunDirSource
    for again in (rd.open(), arcnb.open(str(tmp_path / "rd"))):
        _same(_headline(again), _headline(run))
        assert again.label == "rd"
    _same(_headline(written), _headline(run))
    with pytest.raises(arcnb.ArcnbError, match="already a run directory"):
        rd.open(out=tmp_path / "elsewhere")


def test_a_harness_run_folder(arc1_eval, tmp_path):
    folder = write_run(tmp_path / "harness", complete_run(arc1_eval))
    src = parse_source(str(folder))
    assert type(src) is PredictionsSource
    ds = arc1_eval.select(HARNESS_TASKS)
    run = src.open(dataset=ds)
    _same(_headline(run), _headline(arcnb.open(str(folder), dataset=ds)))
    assert run.label == "harness" and run.results.summary["n_tasks"] == len(HARNESS_TASKS)


def test_json_lines(few, arc1_eval, tmp_path):
    ds = arc1_eval.select(few)
    lines = []
    for n, task in enumerate(ds):
        for i, pair in enumerate(task.test):
            right = pair.output.tolist()
            attempts = [right] if n % 2 == 0 else [[[0]], [[1]]]
            lines.append(json.dumps({"task_id": task.id, "pair_index": i,
                                     "attempts": attempts}))
    path = tmp_path / "preds.jsonl"
    path.write_text("\n".join(lines) + "\n")
    src = parse_source(str(path))
    assert type(src) is PredictionsSource
    run = src.open(dataset=ds)
    _same(_headline(run), _headline(arcnb.open(str(path), dataset=ds)))
    solved = sum(1 for n, task in enumerate(ds) if n % 2 == 0)
    assert run.results.summary["pass@2"] == pytest.approx(solved / len(ds))


@pytest.fixture()
def identity_tasks(tmp_path):
    """A task folder whose test outputs equal their inputs in some tasks (what copying
    the input solves), and one task file."""
    folder = tmp_path / "tasks"
    folder.mkdir()
    grids = {"a": ([[1, 2], [3, 4]], True), "b": ([[5]], False), "c": ([[0, 7, 0]], True),
             "d": ([[2, 2], [2, 9]], False), "e": ([[6], [6]], True)}
    for tid, (grid, same) in grids.items():
        out = grid if same else [[(v + 1) % 10 for v in row] for row in grid]
        task = {"train": [{"input": grid, "output": out}],
                "test": [{"input": grid, "output": out}]}
        (folder / f"{tid}.json").write_text(json.dumps(task))
    return folder


def test_copy_the_input_as_a_baseline_and_as_a_model(identity_tasks, tmp_path):
    ds = load_dataset(identity_tasks)
    # counted here: a test output is solved when its input equals its output
    solved = sum(np.array_equal(p.input, p.output) for t in ds for p in t.test)
    expected = solved / sum(len(t.test) for t in ds)
    assert expected == pytest.approx(3 / 5)

    src = parse_source("copy-input")
    assert type(src) is BaselineSource
    run = src.open(dataset=ds)
    assert run.results.summary["pass@2_per_output"] == pytest.approx(expected)
    _same(_headline(run), _headline(arcnb.open("copy-input", dataset=ds)))

    model = CheckpointSource("copy-input", {"progress": False})
    with pytest.raises(arcnb.ArcnbError, match="pass out="):
        model.open(dataset=str(identity_tasks))
    evaluated = model.open(dataset=str(identity_tasks), out=tmp_path / "copy")
    assert evaluated.results.summary["pass@2_per_output"] == pytest.approx(expected)
    reopened = parse_source(str(tmp_path / "copy")).open()
    _same(_headline(reopened), _headline(evaluated))


def test_checkpoints_and_datasets(identity_tasks):
    assert type(parse_source("baseline")) is CheckpointSource
    assert type(parse_source(str(identity_tasks / "a.json"))) is DatasetSource  # a task file
    src = parse_source("arc-agi-1:evaluation")
    assert type(src) is DatasetSource
    ids = ["00576224", "12997ef3", "66e6c45b"]
    run = src.open(tasks=ids)
    assert not run.scored and run.results is None
    assert sorted(run.dataset.task_ids) == sorted(ids)
    assert run.label == "arc-agi-1:evaluation"
    same = arcnb.open("arc-agi-1:evaluation", tasks=ids)
    assert sorted(same.dataset.task_ids) == sorted(ids)
    with pytest.raises(arcnb.ArcnbError, match="cannot open"):
        parse_source(str(identity_tasks / "missing.json"))


# ------------------------------------------------------------- the report's sources
def test_the_report_takes_typed_sources(tmp_path):
    from arcnb import report as R

    assert type(R.resolve_source(run_dir=str(tmp_path))) is RunDirSource
    ex = R.resolve_source(predictions="default")
    assert type(ex) is PredictionsSource and Path(ex.path) == example()
    ck = R.resolve_source("model.pt", evaluate_options={"device": "cpu"})
    assert ck == CheckpointSource("model.pt", {"device": "cpu"})
    default = R.resolve_source()
    assert isinstance(default, (CheckpointSource, PredictionsSource))
    assert R.source_dataset(RunDirSource("r"), "arc-agi-1:training") is None
    assert R.source_dataset(ex, "") == R.DEFAULT_DATASET
    name = R.default_out("", ck, "arc-agi-1:evaluation").name
    assert name.startswith("model-arc-agi-1-evaluation-")
    for gone in ("open_run", "as_source"):
        assert not hasattr(R, gone) and gone not in R.__all__


# ------------------------------------------------------------- static: one opener
def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text(), str(path))


def _string(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def test_no_module_builds_or_reads_a_source_dict():
    """A source is a typed value: no dict literal holds both a "kind" and a "path"
    (other "kind" keys, such as a problem's or a panel's, have no "path"), and no
    function reads both ``x["kind"]`` and ``x["path"]``."""
    found = []
    for name, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Dict):
                keys = {_string(k) for k in node.keys if k is not None}
                if {"kind", "path"} <= keys:
                    found.append(f"{name}:{node.lineno}: a dict with kind and path")
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                read = {_string(s.slice) for s in ast.walk(node) if isinstance(s, ast.Subscript)}
                read |= {_string(c.args[0]) for c in ast.walk(node)
                         if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
                         and c.func.attr == "get" and c.args}
                if {"kind", "path"} <= read:
                    found.append(f"{name}:{node.lineno}: {node.name} reads kind and path")
    assert not found, found


def test_one_opener():
    """Only the front door defines ``open_run``; the report's facade has none."""
    defined = [name for name, tree in _modules() for node in ast.walk(tree)
               if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
               and node.name == "open_run"]
    assert defined == ["front.py"]
    assert arcnb.open is open_run


# ------------------------------------------------------------- the one task-set rule
@pytest.fixture(scope="module")
def runs_on_tasks(tmp_path_factory, arc1_eval):
    """Two run directories made with --tasks (the same 6 tasks; the program search with
    6 attempts holds a candidate pool), one made on every task, the task-id file and a
    predictions file covering the 6 tasks only."""
    from _cli import cli

    root = tmp_path_factory.mktemp("taskset")
    ids = arc1_eval.task_ids[:6]
    (root / "ids.txt").write_text("\n".join(ids))
    for name, ckpt, extra in (("pool", "program-search", ["--attempts", "6"]),
                              ("copy", "copy-input", [])):
        r = cli("evaluate", "--checkpoint", ckpt, "--dataset", "arc-agi-1:evaluation",
                "--tasks", root / "ids.txt", "--out", root / name, "--no-progress", *extra)
        assert r.returncode == 0, r.stderr
    r = cli("evaluate", "--checkpoint", "copy-input", "--dataset", "arc-agi-1:evaluation",
            "--out", root / "all", "--no-progress")
    assert r.returncode == 0, r.stderr
    return root, ids


def test_a_run_made_with_tasks_is_scored_on_them_by_every_command(runs_on_tasks):
    """``score``, ``candidates``, ``repeats``, ``compare`` and ``report`` take the tasks a
    run directory records (not the dataset's 400): the same pass@2 everywhere, computed
    here by hand from the run's own per-output table."""
    import pandas as pd
    from _cli import cli

    root, ids = runs_on_tasks
    table = pd.read_csv(root / "pool" / "results.csv", dtype={"task_id": str})
    assert sorted(set(table["task_id"])) == sorted(ids)
    by_hand = float(table.groupby("task_id")["solved@2"].mean().mean())
    d = "arc-agi-1:evaluation"

    r = cli("score", "--dataset", d, "--predictions", root / "pool", "--json")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["n_tasks"] == 6 and s["pass@2"] == pytest.approx(by_hand)
    assert "filter" in s["dataset"] and "6 tasks" in s["dataset"]["filter"]

    r = cli("candidates", "--dataset", d, "--predictions", root / "pool", "--json")
    assert r.returncode == 0, r.stderr
    c = json.loads(r.stdout)
    assert c["n_tasks"] == 6 and c["warnings"] == []
    # coverage: a right grid among the 6 attempts, per task then averaged, by hand
    pool = json.loads((root / "pool" / "predictions.json").read_text())
    tasks = {t.id: t for t in load_dataset(d)}
    cov = []
    for t in ids:
        per = [any(a is not None and np.array_equal(np.asarray(a), tasks[t].test[i].output)
                   for a in entry.values()) for i, entry in enumerate(pool[t])]
        cov.append(sum(per) / len(per))
    assert c["coverage"] == pytest.approx(sum(cov) / len(cov))

    r = cli("repeats", "--dataset", d, root / "pool", root / "copy", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["n_tasks"] == 6

    r = cli("compare", root / "pool", root / "copy", "--out", root / "cmp", "--no-latex")
    assert r.returncode == 0, r.stderr
    cmp = json.loads((root / "cmp" / "summary.json").read_text())
    assert cmp["n_tasks"] == 6
    assert {x["run"]: x["pass@2"] for x in cmp["runs"]}["pool"] == pytest.approx(by_hand)

    r = cli("report", "--run", root / "pool", "--out", root / "rep", "--no-notebook",
            "--no-progress")
    assert r.returncode == 0, r.stderr
    assert "tasks: 6 " in r.stdout


def test_runs_made_on_different_tasks_are_refused_with_the_way_out(runs_on_tasks):
    """A run made on 6 tasks beside one made on all 400: refused in one line that names
    ``--tasks``; with ``--tasks`` both are scored on those tasks, a task the second run
    has no predictions for counted wrong."""
    from _cli import cli, one_line_refusal

    root, ids = runs_on_tasks
    d = "arc-agi-1:evaluation"
    for args in (("repeats", "--dataset", d, root / "pool", root / "all"),
                 ("compare", root / "pool", root / "all", "--out", root / "c2")):
        r = cli(*args)
        one_line_refusal(r.returncode, r.stderr, "--tasks")
    r = cli("repeats", "--dataset", d, root / "pool", root / "all", "--tasks", root / "ids.txt",
            "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["n_tasks"] == 6
    # the other way: the 6-task run scored on 12 tasks; its 6 missing tasks count wrong
    (root / "ids12.txt").write_text("\n".join(load_dataset(d).task_ids[:12]))
    r = cli("score", "--dataset", d, "--predictions", root / "copy", "--tasks",
            root / "ids12.txt", "--json")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["n_tasks"] == 12
    first = r.stderr.splitlines()[0]
    assert first.startswith("arcnb: warning: 6 of the 12 tasks") and "--tasks" in first


def test_a_file_covering_fewer_tasks_counts_the_rest_wrong_and_says_so_first(runs_on_tasks):
    """A predictions file of 6 tasks scored on the whole dataset: the 400 tasks are the
    denominator (pass@2 = solved share of the 6, times 6/400) and the first line of
    every command's output says how many are missing and names ``--tasks``."""
    import pandas as pd
    from _cli import cli

    root, ids = runs_on_tasks
    d = "arc-agi-1:evaluation"
    table = pd.read_csv(root / "pool" / "results.csv", dtype={"task_id": str})
    on_six = float(table.groupby("task_id")["solved@2"].mean().sum())
    for args in (("score", "--dataset", d, "--predictions", root / "pool" / "predictions.json"),
                 ("candidates", "--dataset", d, "--predictions",
                  root / "pool" / "predictions.json"),
                 ("repeats", "--dataset", d, root / "pool" / "predictions.json"),
                 ("compare", root / "pool" / "predictions.json", root / "all", "--dataset", d,
                  "--out", root / "c3", "--no-latex")):
        r = cli(*args)
        assert r.returncode == 0, (args, r.stderr)
        first = r.stderr.splitlines()[0]
        assert "394 of the 400 tasks" in first and "--tasks" in first, (args[0], first)
    r = cli("score", "--dataset", d, "--predictions", root / "pool" / "predictions.json",
            "--json")
    assert json.loads(r.stdout)["pass@2"] == pytest.approx(on_six / 400)
    r = cli("candidates", "--dataset", d, "--predictions", root / "pool" / "predictions.json",
            "--json")
    c = json.loads(r.stdout)
    assert c["n_tasks"] == 400 and "394 of the 400 tasks" in c["warnings"][0]
