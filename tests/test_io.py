"""Reading and writing files (arcnb.io): JSON Lines read with the JSON rules."""
from __future__ import annotations

import json
import os

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
