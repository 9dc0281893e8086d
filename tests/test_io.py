"""Reading and writing files (arcnb.io): JSON Lines read with the JSON rules."""
from __future__ import annotations

import os

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
