"""Reading and writing files (arcnb.io): JSON Lines read with the JSON rules."""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from arcnb.errors import JSONInputError
from arcnb.io import read_json_lines


def test_lines_numbers_blank_lines_bom_and_crlf(tmp_path):
    p = tmp_path / "a.jsonl"
    p.write_bytes(b'\xef\xbb\xbf{"a": 1}\r\n\r\n  \n[2, 3]\r\n"x\\u2028y"\n')
    assert read_json_lines(p) == [(1, {"a": 1}), (4, [2, 3]), (5, "x\u2028y")]


def test_a_line_separator_inside_a_string_does_not_split_the_line(tmp_path):
    # U+2028 may appear unescaped inside a JSON string; it is not a line end here
    p = tmp_path / "a.jsonl"
    p.write_text('{"note": "one\u2028line"}\n{"b": 2}\n', encoding="utf-8")
    assert read_json_lines(p) == [(1, {"note": "one\u2028line"}), (2, {"b": 2})]


def test_an_empty_file_has_no_lines(tmp_path):
    p = tmp_path / "e.jsonl"
    p.write_text("\n\n")
    assert read_json_lines(p) == []


@pytest.mark.parametrize("content, said", [
    (b'{"a": 1}\n{"a": 1, "a": 2}\n', "line 2: the key 'a' appears more than once"),
    (b'{"a": 1}\n{"a": \n', "not valid JSON Lines: line 2"),
    (b'[' * 70 + b']' * 70 + b'\n', "nests arrays/objects 70 levels deep"),
    (b'{"a": "\xff"}\n', "is not UTF-8 text (byte 7)"),
])
def test_bad_files_are_one_line_naming_the_file(tmp_path, content, said):
    p = tmp_path / "bad.jsonl"
    p.write_bytes(content)
    with pytest.raises(JSONInputError) as exc:
        read_json_lines(p)
    assert said in str(exc.value) and str(p) in str(exc.value)


def test_only_a_regular_file_within_the_size_limit_is_read(tmp_path):
    p = tmp_path / "big.jsonl"
    p.write_text('{"a": 1}\n' * 10)
    with pytest.raises(JSONInputError, match="larger than"):
        read_json_lines(p, max_bytes=50)
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(JSONInputError, match="not a regular file"):
        read_json_lines(fifo)


# ------------------------------------------------------------ the bounded JSON reader
@pytest.mark.parametrize("body", ['{"a": [[1, %s]]}' % ("9" * 5000),
                                  '{"a": -%s}' % ("1" * 33),
                                  '[%s.5]' % ("2" * 40)])
def test_a_number_of_too_many_digits_is_refused_before_parsing(tmp_path, body, monkeypatch):
    """Valid JSON, but Python refuses to read an integer of more than 4,300 digits
    (a ValueError traceback): the reader refuses more than 32 digits, before parsing."""
    import json as json_module

    from arcnb import io as aio

    p = tmp_path / "big.json"
    p.write_text(body)
    monkeypatch.setattr(json_module, "loads", lambda *a, **k: pytest.fail("parsed"))
    for read in (aio.read_json, aio.read_json_lines):
        with pytest.raises(JSONInputError, match="a number of more than 32 digits") as exc:
            read(p)
        assert str(p) in str(exc.value) and "\n" not in str(exc.value)


def test_numbers_within_the_bound_and_digits_inside_strings_are_read(tmp_path):
    from arcnb.io import read_json

    p = tmp_path / "ok.json"
    p.write_text('{"n": %d, "m": -%d, "s": "%s", "f": 0.30000000000000004}'
                 % (2 ** 64, 10 ** 31, "7" * 5000))
    assert read_json(p) == {"n": 2 ** 64, "m": -10 ** 31, "s": "7" * 5000,
                            "f": 0.30000000000000004}


def test_a_float_beyond_range_is_refused(tmp_path):
    from arcnb.io import read_json

    p = tmp_path / "inf.json"
    p.write_text('{"step": 1e400}')
    with pytest.raises(JSONInputError, match="holds the number 1e400, beyond the range"):
        read_json(p)
    q = tmp_path / "inf.jsonl"
    q.write_text('{"a": 1}\n{"step": -2E+999}\n')
    with pytest.raises(JSONInputError, match="line 2 holds the number -2E\\+999"):
        read_json_lines(q)


def test_too_many_arrays_and_objects_are_refused_before_parsing(tmp_path, monkeypatch):
    """Many tiny tasks cost 30-50 times the file in memory: the number of arrays and
    objects (each a Python container once parsed) is the bound, checked by the scan
    before json.loads allocates anything."""
    import json as json_module

    from arcnb import io as aio

    p = tmp_path / "tiny.json"
    p.write_text(json.dumps({f"t{i}": [{"attempt_1": [[1]]}] for i in range(1000)}))
    assert len(aio.read_json(p)) == 1000  # 4,001 containers (1 + 4 per task): read
    monkeypatch.setattr(aio, "MAX_JSON_CONTAINERS", 4000)
    monkeypatch.setattr(json_module, "loads", lambda *a, **k: pytest.fail("parsed"))
    with pytest.raises(JSONInputError, match="holds 4001 arrays and objects, more than the "
                                             "4000"):
        aio.read_json(p)
    # brackets inside strings are not containers
    q = tmp_path / "s.json"
    q.write_text(json.dumps({"a": "[" * 10000}))
    assert aio._json_scan(q.read_bytes())[1] == 1


# --------------------------------------------------------- the bounded Parquet reader
def _parquet(path, table):
    import pyarrow.parquet as pq

    pq.write_table(table, path)
    return path


def test_parquet_rows_and_columns_are_bounded_from_the_footer(tmp_path, monkeypatch):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from arcnb import io as aio
    from arcnb.errors import InputFileError

    p = _parquet(tmp_path / "t.parquet", pa.table({"a": pa.array(range(1000), pa.int64()),
                                                   "b": pa.array([1.5] * 1000)}))
    assert aio.read_parquet(p).num_rows == 1000
    # refused from the footer: no column is read
    monkeypatch.setattr(pq.ParquetFile, "read", lambda *a, **k: pytest.fail("read"))
    with pytest.raises(InputFileError, match="has 1000 rows, more than the 999"):
        aio.read_parquet(p, max_rows=999)
    with pytest.raises(InputFileError, match="has 2 columns, more than the 1"):
        aio.read_parquet(p, max_columns=1)
    with pytest.raises(InputFileError, match="more than 15999 bytes once decoded"):
        aio.read_parquet(p, max_decoded_bytes=15999)  # 1,000 x (8 + 8) bytes


def test_a_repeated_grid_is_refused_by_its_decoded_size_not_its_file_size(tmp_path):
    """One 30x30 grid repeated 100,000 times: a few kilobytes on disk (dictionary
    encoded), 90 MB decoded. The reader holds it as a dictionary, sums the decoded
    size, and refuses before decoding."""
    import pyarrow as pa

    from arcnb import io as aio
    from arcnb.errors import InputFileError

    n = 100_000
    cells = pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)),
                                           pa.array([bytes(900)], pa.binary()))
    p = _parquet(tmp_path / "bomb.parquet", pa.table({"cells": cells}))
    assert p.stat().st_size < 100_000
    with pytest.raises(InputFileError, match="would take more than 50000000 bytes"):
        aio.read_parquet(p, max_decoded_bytes=50_000_000)
    t = aio.read_parquet(p, max_decoded_bytes=100_000_000)
    assert t.column("cells").type == pa.binary() and t.num_rows == n


def test_parquet_reader_refuses_fifos_and_garbage_in_one_line(tmp_path):
    from arcnb import io as aio
    from arcnb.errors import InputFileError

    fifo = tmp_path / "f.parquet"
    os.mkfifo(fifo)
    with pytest.raises(InputFileError, match="is a FIFO, not a regular file"):
        aio.read_parquet(fifo)
    junk = tmp_path / "j.parquet"
    junk.write_bytes(b"PAR1" + b"\0" * 100)
    with pytest.raises(InputFileError, match="is not a readable Parquet file") as exc:
        aio.read_parquet(junk)
    assert "\n" not in str(exc.value)


def test_csv_reader_reads_like_pandas_and_refuses_fifos_and_big_files(tmp_path):
    from arcnb.errors import InputFileError
    from arcnb.io import read_csv

    p = tmp_path / "tasks.csv"
    p.write_text("task_id,pass@2\n007bbfb7,0.5\n00576224,1.0\n")
    df = read_csv(p, dtype={"task_id": str})
    assert list(df["task_id"]) == ["007bbfb7", "00576224"] and list(df["pass@2"]) == [0.5, 1.0]
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    with pytest.raises(InputFileError, match="not a regular file|regular"):
        read_csv(fifo)
    with pytest.raises(InputFileError):
        read_csv(p, max_bytes=10)


def test_an_atomic_write_whose_temporary_file_another_process_removed_is_written_again(
        tmp_path, monkeypatch):
    """Two processes writing the same file (the shards of a sweep each record the whole
    plan) each clear what looks like a killed write's leftover beside it: a temporary
    file removed before its rename is written again, not a failed write."""
    import arcnb.io as io_mod
    from arcnb.runs import OutputFolder

    real = os.replace
    removed = []

    def replace_after_another_cleared(src, dst):
        if not removed:  # the other process's clean-up, between the write and the rename
            removed.extend(OutputFolder(tmp_path).clean_temporary(["plan.json"]))
        return real(src, dst)

    monkeypatch.setattr(io_mod.os, "replace", replace_after_another_cleared)
    io_mod.atomic_write_bytes(tmp_path / "plan.json", b'{"a": 1}\n', overwrite=True)
    assert len(removed) == 1 and not removed[0].exists()
    assert (tmp_path / "plan.json").read_bytes() == b'{"a": 1}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.json"]
    # a folder removed under the write is still an error, not a loop
    monkeypatch.setattr(io_mod.os, "replace", real)
    gone = tmp_path / "gone"

    def replace_into_a_removed_folder(src, dst):
        os.unlink(src)
        os.rmdir(gone)
        return real(src, dst)

    gone.mkdir()
    monkeypatch.setattr(io_mod.os, "replace", replace_into_a_removed_folder)
    with pytest.raises(FileNotFoundError):
        io_mod.atomic_write_bytes(gone / "plan.json", b"{}", overwrite=True)


def test_a_lone_surrogate_is_refused_in_a_recording_line_and_kept_in_a_file_name(tmp_path):
    """``"\\ud800"`` escapes no character: a game id or a guid holding one reached
    pyarrow as a traceback, and the one line parser (the ARC-AGI-3 reader's) refuses it
    in one line. arcnb's own files may hold a file name that is not UTF-8 (escaped as
    ``\\udcff``, as Python names such a file): a JSON file and JSON Lines still read it,
    and an escaped character that is one (``\\u00e9``) reads everywhere."""
    from arcnb.io import JSONInputError, parse_json_line, read_json, read_json_lines

    with pytest.raises(JSONInputError, match="lone surrogate"):
        parse_json_line(b'{"g": "\\ud800"}', what="recording", path="r", line=1)
    assert parse_json_line(b'{"g": "caf\\u00e9"}', what="recording", path="r",
                           line=1) == {"g": "caf\u00e9"}
    (tmp_path / "a.json").write_text('{"path": "ck\\udcff-10.pt"}')
    assert read_json(tmp_path / "a.json") == {"path": "ck\udcff-10.pt"}
    (tmp_path / "b.jsonl").write_text('{"path": "ck\\udcff"}\n')
    assert read_json_lines(tmp_path / "b.jsonl") == [(1, {"path": "ck\udcff"})]


# ------------------------------------------------- JSON text that is not a file of its own
def test_parse_json_has_the_rules_of_the_file_readers():
    """``parse_json`` (a ``--config`` string, a task-id list, a model's answer, a
    checkpoint's header): the bounds and the duplicate-key rule of ``read_json``, each
    refusal one line that starts with ``what`` and never shows the text."""
    from arcnb.io import MAX_JSON_DIGITS, parse_json

    assert parse_json('{"a": [1, 2.5, null]}', what="x") == {"a": [1, 2.5, None]}
    assert parse_json(b'\xef\xbb\xbf[1]', what="x") == [1]  # bytes: UTF-8, its BOM dropped
    assert parse_json("\ufeff[1]", what="x") == [1]
    assert parse_json('"caf\\u00e9"', what="x") == "caf\u00e9"
    secret = "s3cr3t"
    cases = [
        ('{"%s": 1, "%s": 2}' % (secret, secret), "the key 's3cr3t' appears more than once"),
        ("[" * 65 + "]" * 65, "nests arrays/objects 65 levels deep"),
        ("[%s]" % ("9" * (MAX_JSON_DIGITS + 1)), f"more than {MAX_JSON_DIGITS} digits"),
        ("[1e400]", "beyond the range of a float"),
        ('{"%s": 1,\n "b": }' % secret, "is not valid JSON: Expecting value at line 2 column 7"),
        (b'["\xff"]', "is not UTF-8 text (byte 2)"),
        ("[]" * 11, "holds 11 arrays and objects, more than the 10"),
        ("[1, 2, 3, 4]", "longer than 8 bytes"),
    ]
    for text, said in cases:
        with pytest.raises(JSONInputError) as exc:
            parse_json(text, what="the option\nX", max_containers=10,
                       max_bytes=8 if said.startswith("longer") else 1000)
        message = str(exc.value)
        assert message.startswith("the option\\nX") and said in message, message
        assert "\n" not in message and (secret not in message or "key" in said)


def test_parse_json_words_and_error_class_are_the_callers():
    from arcnb.errors import ParameterError
    from arcnb.io import parse_json

    with pytest.raises(ParameterError, match=r"^--config is invalid JSON: Expecting") as exc:
        parse_json("{", what="--config", invalid="is invalid JSON", error=ParameterError)
    assert not isinstance(exc.value, JSONInputError)
    with pytest.raises(ParameterError, match=r"^h: the key 'w' appears more than once in one "
                                             r"object \(a tensor named twice\)$"):
        parse_json('{"w": 1, "w": 1}', what="h", duplicate=" (a tensor named twice)",
                   error=ParameterError)
    with pytest.raises(JSONInputError, match="lone surrogate"):
        parse_json('"\\ud800"', what="id", unicode_only=True)
    assert parse_json('"\\udcff"', what="a file name") == "\udcff"


def test_plain_json_is_the_round_trip_through_json_text():
    from arcnb.io import plain_json

    value = {"b": (1, 2), "a": {3: np.int64(4).item()}, "c": float("nan")}
    out = plain_json(value)
    assert out["b"] == [1, 2] and out["a"] == {"3": 4}
    assert list(out) == ["a", "b", "c"] and out["c"] != out["c"]  # NaN stays NaN
    assert list(plain_json({"b": 1, "a": 2}, sort_keys=False)) == ["b", "a"]
    assert plain_json({"p": Path("x")}, default=str) == {"p": "x"}
    with pytest.raises(TypeError):
        plain_json({"p": Path("x")})


def test_parse_json_line_drops_the_byte_order_mark_of_line_one_only():
    from arcnb.io import parse_json_line

    assert parse_json_line(b'\xef\xbb\xbf{"a": 1}', what="r", path="p", line=1) == {"a": 1}
    with pytest.raises(JSONInputError, match="not valid JSON Lines: line 2"):
        parse_json_line(b'\xef\xbb\xbf{"a": 1}', what="r", path="p", line=2)
    with pytest.raises(JSONInputError, match=r"^r p line 3 is not UTF-8 text \(byte 1\)$"):
        parse_json_line(b'"\xff"', what="r", path="p", line=3)


def test_the_scan_matches_a_naive_reading_across_chunk_borders(monkeypatch):
    """The bounds' scan reads a few megabytes at a time (``bytes.translate`` of each):
    a number cut by a chunk's border, and brackets on both sides of it, are counted as
    a plain reading of the whole text counts them."""
    import re

    from arcnb import io as aio

    rng = np.random.default_rng(1)
    for _ in range(200):
        parts = []
        for _ in range(int(rng.integers(1, 60))):
            r = rng.random()
            if r < 0.3:
                parts.append(str(rng.choice(["[", "]", "{", "}", "[[", "]]"])))
            elif r < 0.6:
                parts.append("7" * int(rng.integers(1, 2 * aio.MAX_JSON_DIGITS)))
            elif r < 0.8:
                parts.append(json.dumps("[{" + "9" * int(rng.integers(0, 40)) + "\\\""))
            else:
                parts.append(str(rng.choice([" ", ",", ":", "-", ".", "e"])))
        raw = "".join(parts).encode()
        body = aio._STRING.sub(b'""', raw)
        level = deepest = 0
        for ch in body:
            level += (ch in b"[{") - (ch in b"]}")
            deepest = max(deepest, level)
        naive = (deepest, body.count(b"[") + body.count(b"{"),
                 re.search(rb"[0-9]{%d}" % (aio.MAX_JSON_DIGITS + 1), body) is not None)
        monkeypatch.setattr(aio, "_SCAN_CHUNK", int(rng.integers(1, 40)))
        assert aio._json_scan(raw) == naive, raw


# --------------------------------------------------------- the one home of every parse
#: The calls and imports that parse JSON text; only arcnb/io.py makes them.
_JSON_PARSERS = {"load", "loads", "JSONDecoder", "decoder", "scanner"}
_PARSE_KEYWORDS = {"object_pairs_hook", "object_hook", "parse_float", "parse_int",
                   "parse_constant"}
_OTHER_JSON_LIBRARIES = {"orjson", "ujson", "simplejson", "rapidjson", "simdjson",
                         "pysimdjson", "msgspec", "ijson", "json5", "hjson"}


def json_parses(source: str) -> list[tuple[int, str]]:
    """``(line, what)`` for each JSON parse in ``source`` made other than through
    ``arcnb.io``: ``json.load`` / ``json.loads`` / ``json.JSONDecoder`` (the module under
    any name, or those names imported from it), any ``raw_decode``, a call given
    ``object_pairs_hook`` or another of ``json.loads``' parsing hooks, pandas'
    ``read_json``, and another JSON library imported."""
    import ast

    tree = ast.parse(source)
    modules, pandas, found = set(), set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                if top == "json":
                    modules.add(alias.asname or "json")
                elif top == "pandas":
                    pandas.add(alias.asname or "pandas")
                elif top in _OTHER_JSON_LIBRARIES:
                    found.append((node.lineno, f"import {alias.name}"))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            top = node.module.split(".")[0]
            names = {a.name for a in node.names}
            if top in _OTHER_JSON_LIBRARIES:
                found.append((node.lineno, f"from {node.module} import ..."))
            elif top == "json" and (node.module != "json" or names & (_JSON_PARSERS | {"*"})):
                found.append((node.lineno, f"from {node.module} import "
                                           f"{', '.join(sorted(names))}"))
            elif top == "pandas" and "read_json" in names:
                found.append((node.lineno, "from pandas import read_json"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            owner = node.value.id if isinstance(node.value, ast.Name) else None
            if owner in modules and node.attr in _JSON_PARSERS:
                found.append((node.lineno, f"{owner}.{node.attr}"))
            elif owner in pandas and node.attr == "read_json":
                found.append((node.lineno, f"{owner}.read_json"))
            elif node.attr == "raw_decode":
                found.append((node.lineno, "raw_decode"))
        elif isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg in _PARSE_KEYWORDS:
                    found.append((node.lineno, f"{kw.arg}="))
    return sorted(set(found))


@pytest.mark.parametrize("source, caught", [
    ("import json\njson.loads(t)", True),
    ("import json\nwith open(p) as fh:\n    json.load(fh)", True),
    ("import json as j\nj.loads(t)", True),
    ("from json import loads\nloads(t)", True),
    ("from json import loads as parse\nparse(t)", True),
    ("from json.decoder import JSONDecoder", True),
    ("import json\njson.JSONDecoder().raw_decode(t)", True),
    ("import json.decoder\njson.decoder.scanstring(t, 0)", True),
    ("decoder.raw_decode(t)", True),
    ("import json\nparse = json.loads", True),
    ("import json\njson.loads(t, object_pairs_hook=hook)", True),
    ("other.loads(t, object_pairs_hook=hook)", True),
    ("import pandas as pd\npd.read_json(p)", True),
    ("import orjson\norjson.loads(t)", True),
    ("from simplejson import loads", True),
    ("import json\njson.dumps(x, sort_keys=True)", False),
    ("from json import dumps, JSONEncoder", False),
    ("from .io import parse_json, read_json\nread_json(p)\nparse_json(t, what='x')", False),
    ("from ..io import plain_json\nplain_json(x)", False),
    ("import pickle\npickle.loads(b)", False),
    ("import yaml\nyaml.safe_load(t)", False),
])
def test_the_json_rule_checker(source, caught):
    """What the rule means: any parse of JSON text, under any name, is caught; writing
    JSON (``json.dumps``) and io's own readers are not parses outside io."""
    assert bool(json_parses(source)) is caught, json_parses(source)


def test_every_json_parse_is_in_io():
    """Parsing JSON has one home: arcnb/io.py (``read_json``, ``read_json_lines``,
    ``parse_json_line``, ``parse_json``, ``plain_json``), so every JSON text a user
    gives, a file, a line or a string, meets the same bounds and the same refusal of a
    key given twice. No other module of arcnb parses JSON itself."""
    root = Path(__file__).resolve().parents[1] / "arcnb"
    offenders = []
    for path in sorted(root.rglob("*.py")):
        if path == root / "io.py":
            continue
        for line, what in json_parses(path.read_text(encoding="utf-8")):
            offenders.append(f"{path.relative_to(root.parent)}:{line}: {what}")
    assert not offenders, ("JSON parsed outside arcnb/io.py (use io.read_json, read_json_lines, "
                           "parse_json_line, parse_json or plain_json):\n" + "\n".join(offenders))
