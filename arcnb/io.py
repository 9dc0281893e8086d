"""Atomic, non-clobbering file writes, and the one home of reading input and parsing JSON.

Every artefact arcnb writes goes through these helpers: the data is written to a
temporary file in the same folder, flushed and renamed over the target, so a run
killed at any moment never leaves a truncated file. An existing file is only replaced
when the caller says so.

Every JSON text arcnb parses is parsed here, by one set of rules (bounds checked before
parsing, a key given twice refused, one-line errors): a file (:func:`read_json`), a
JSON Lines file (:func:`read_json_lines`), one line (:func:`parse_json_line`: a
recording's step, a journal record) and a text that is not a file of its own
(:func:`parse_json`: an option, a header, an answer). :func:`plain_json` is the one
round trip of arcnb's own values through JSON text. ``tests/test_io.py`` checks that no
other module parses JSON.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import stat
import tempfile
from io import BytesIO
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .errors import (DuplicateKeyError, HugeNumberError, InputFileError, JSONInputError,
                     one_line, refuse_overwrite)

__all__ = ["atomic_write_bytes", "atomic_write_text", "atomic_write_json", "json_bytes", "to_jsonable",
           "read_json", "read_json_lines", "read_bytes", "read_text", "read_csv", "read_parquet",
           "JSONInputError", "MAX_JSON_DEPTH", "MAX_JSON_CONTAINERS", "MAX_JSON_DIGITS",
           "MAX_PARQUET_ROWS", "MAX_PARQUET_COLUMNS", "MAX_PARQUET_DECODED_BYTES",
           "csv_text", "file_sha256", "take_back_on_failure", "no_duplicate_keys"]

#: Deepest nesting of arrays and objects arcnb accepts in an input JSON file. The deepest
#: legitimate input (a benchmarking-harness task file: list > test input > attempt >
#: metadata > usage > details, or an answer grid) needs 7; 64 leaves room to spare.
MAX_JSON_DEPTH = 64

#: Largest input file arcnb reads (1 GiB). The biggest real inputs (a submission of
#: hundreds of sampled attempts per test input, a harness task file with long reasoning
#: summaries) are far below it; reading and checking a file costs about twice its size
#: in memory before parsing, so the bound is also a bound on that work. Larger files, and
#: endless ones such as /dev/zero, are refused instead of filling the memory.
MAX_JSON_BYTES = 1024 ** 3

#: A JSON string, matched without backtracking (possessive quantifiers), so that a
#: string of a billion characters costs no more than its length.
_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"', re.S)

#: Bytes per step of the depth scan (its numpy buffers are a few times this).
_SCAN_CHUNK = 1 << 22

#: What a JSON text can start with (after white space): anything else, such as the NUL
#: bytes of a sparse file, is refused without reading the rest.
_JSON_START = frozenset(b'[{"-0123456789tfn')

_DEPTH_STEP = None

#: Most arrays and objects one JSON input file may hold (10 million). Each becomes a
#: Python list or dict of about 100 bytes, then a grid or an entry: a file of many tiny
#: tasks or candidates costs 30-50 times its size in memory, so this, not the file size,
#: is the bound on that memory (about 1-2 GB). The largest real inputs are far below it
#: (a submission of 256 sampled attempts per test input on 400 tasks holds about 2
#: million); a larger candidate pool belongs in a Parquet candidates file.
MAX_JSON_CONTAINERS = 10_000_000

#: Longest integer (in digits) an input file may hold. Counts, votes, indices, token
#: counts and costs need at most 20; Python refuses to even read one of more than 4,300.
MAX_JSON_DIGITS = 32


#: ``bytes.translate`` tables of the scan: every byte but a bracket deleted; every digit
#: made ``0`` and every other byte a space (a long number is then a run of ``0``).
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_DIGIT_MARKS = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))


def _json_scan(raw: bytes) -> tuple[int, int, bool]:
    """``(deepest nesting, number of arrays and objects, whether a number has more than
    MAX_JSON_DIGITS digits)`` outside strings: strings are blanked once, then the text is
    read a few megabytes at a time (bounded extra memory): its digits marked and its
    brackets kept (``bytes.translate``, at the speed of a copy), the brackets' nesting
    summed (vectorised)."""
    global _DEPTH_STEP
    if _DEPTH_STEP is None:
        step = np.zeros(256, dtype=np.int64)
        step[[0x5B, 0x7B]] = 1
        step[[0x5D, 0x7D]] = -1
        _DEPTH_STEP = step
    body = _STRING.sub(b'""', raw) if b'"' in raw else raw
    long_run = b"0" * (MAX_JSON_DIGITS + 1)
    containers, level, deepest, long_number, tail = 0, 0, 0, False, b""
    view = memoryview(body)
    for start in range(0, len(body), _SCAN_CHUNK):
        piece = body if len(body) <= _SCAN_CHUNK else bytes(view[start:start + _SCAN_CHUNK])
        if not long_number:  # a number may run over a chunk's border: its tail is kept
            marks = tail + piece.translate(_DIGIT_MARKS)
            long_number = long_run in marks
            tail = marks[-MAX_JSON_DIGITS:]
        brackets = piece.translate(None, _NOT_BRACKETS)
        if brackets:
            containers += brackets.count(b"[") + brackets.count(b"{")
            run = np.cumsum(_DEPTH_STEP[np.frombuffer(brackets, dtype=np.uint8)])
            deepest = max(deepest, level + int(run.max()))
            level += int(run[-1])
    return deepest, containers, long_number


def _json_depth(raw: bytes) -> int:
    """Deepest nesting of ``[``/``{`` outside strings (see :func:`_json_scan`)."""
    return _json_scan(raw)[0]


def _finite_float(text: str) -> float:
    """A JSON number with a fraction or an exponent; one beyond a float's range
    (``1e400``, which Python would read as infinity) is refused."""
    value = float(text)
    if math.isinf(value):
        raise HugeNumberError(text)
    return value


def _open_regular(path: Path, what: str, max_bytes: int, error) -> tuple[int, int]:
    """``(fd, size)`` of a user's input file opened for reading, once it is known to be a
    regular file of at most ``max_bytes`` (a FIFO, a device, a socket or a folder is
    refused without waiting on it)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        kind = "a dangling symbolic link" if os.path.islink(path) else None
        raise error(f"{what} {path} is {kind}" if kind else f"{what} not found: {path}"
                    ) from None
    except IsADirectoryError:
        raise error(f"{what} {path} is a directory, not a file") from None
    except OSError as exc:
        raise error(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise error(f"{what} {path} is a directory, not a file")
        if not stat.S_ISREG(st.st_mode):
            kind = ("a FIFO" if stat.S_ISFIFO(st.st_mode) else "a socket"
                    if stat.S_ISSOCK(st.st_mode) else "a device")
            raise error(f"{what} {path} is {kind}, not a regular file")
        if st.st_size > max_bytes:
            raise error(f"{what} {path} is larger than {max_bytes} bytes")
    except BaseException:
        os.close(fd)
        raise
    return fd, st.st_size


def read_bytes(path: str | os.PathLike, *, what: str = "file",
               max_bytes: int = MAX_JSON_BYTES, error=None) -> bytes:
    """The bytes of a user's input file, read the one safe way: only a regular file (a
    FIFO, a device such as /dev/zero, a socket or a folder is refused without waiting on
    it), at most ``max_bytes`` (a larger file, or one that grows while read, is refused).
    Every failure raises ``error`` (default :class:`JSONInputError`) with one line naming
    the file."""
    error = error or JSONInputError
    path = Path(path)
    fd, size = _open_regular(path, what, max_bytes, error)
    try:
        with os.fdopen(fd, "rb", closefd=False) as fh:
            # read(n) reserves n bytes up front: ask for the file's size (+1 to see a
            # file that grew), never for the bound
            raw = fh.read(size + 1)
            if len(raw) > size:
                raw += fh.read(max_bytes + 1 - len(raw))
    except MemoryError:
        raise error(f"{what} {path} is too large to read") from None
    except OSError as exc:
        raise error(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(raw) > max_bytes:
        raise error(f"{what} {path} is larger than {max_bytes} bytes")
    return raw


#: Most rows arcnb reads from one Parquet file (5 million: a pool of thousands of
#: candidates for every test output of a 400-task dataset). Each row costs about a
#: hundred bytes once read, whatever the file's compression made of it.
MAX_PARQUET_ROWS = 5_000_000
#: Most columns arcnb reads from one Parquet file.
MAX_PARQUET_COLUMNS = 1024
#: Most bytes the columns of one Parquet file may take once decoded (512 MiB: about
#: three million grids of ARC's average size). A file of one grid repeated a million
#: times is a few hundred kilobytes on disk and 900 MB decoded: refused.
MAX_PARQUET_DECODED_BYTES = 512 * 1024 ** 2

_FIXED_WIDTH = {"BOOLEAN": 1, "INT32": 8, "INT64": 8, "INT96": 8, "FLOAT": 8, "DOUBLE": 8}


def read_csv(path: str | os.PathLike, *, what: str = "CSV file",
             max_bytes: int = MAX_JSON_BYTES, error=None, **kwargs):
    """Read a CSV input file the way every arcnb loader does: its bytes through
    :func:`read_bytes` (a regular file, at most ``max_bytes``), then
    ``pandas.read_csv`` with ``kwargs``. Returns a DataFrame."""
    return pd.read_csv(BytesIO(read_bytes(path, what=what, max_bytes=max_bytes,
                                              error=error)), **kwargs)


def read_parquet(path: str | os.PathLike, *, what: str = "Parquet file",
                 max_rows: int = MAX_PARQUET_ROWS, max_columns: int = MAX_PARQUET_COLUMNS,
                 max_decoded_bytes: int = MAX_PARQUET_DECODED_BYTES,
                 max_bytes: int = MAX_JSON_BYTES, error=None):
    """Read a Parquet input file the way every arcnb loader does (the one bounded
    Parquet reader); returns a ``pyarrow.Table``.

    Only a regular file of at most ``max_bytes`` is opened (:func:`read_bytes`'s rule).
    From the file's footer alone, before any column is read, it is refused when it has
    more than ``max_rows`` rows or ``max_columns`` columns, or when its columns would
    take more than ``max_decoded_bytes`` in memory (fixed-width values counted at 8
    bytes each; the pages as stored, uncompressed). Text and binary columns are read
    as dictionaries first (a value repeated a million times is held once), their
    decoded size summed, and only then decoded, within the same bound. Every failure
    raises ``error`` (default :class:`~arcnb.errors.InputFileError`) with one line
    naming the file."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    error = error or InputFileError
    path = Path(path)
    fd, _ = _open_regular(path, what, max_bytes, error)
    fh = os.fdopen(fd, "rb")
    try:
        try:
            md = pq.read_metadata(fh)
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise error(f"{what} {path} is not a readable Parquet file "
                        f"({one_line(exc, 120, first_line=True)})") from None
        if md.num_rows > max_rows:
            raise error(f"{what} {path} has {md.num_rows} rows, more than the {max_rows} "
                        "arcnb reads from one file")
        if md.num_columns > max_columns:
            raise error(f"{what} {path} has {md.num_columns} columns, more than the "
                        f"{max_columns} arcnb reads from one file")
        texts, estimate, stored = set(), 0, 0
        for j in range(md.num_columns):
            col = md.schema.column(j)
            physical = col.physical_type
            for g in range(md.num_row_groups):
                chunk = md.row_group(g).column(j)
                stored += chunk.total_uncompressed_size
                width = _FIXED_WIDTH.get(physical)
                if physical == "FIXED_LEN_BYTE_ARRAY":
                    width = max(int(col.length or 0), 1)
                # a text or binary value costs at least its 4-byte index once read
                estimate += chunk.num_values * (width if width else 4)
            if physical == "BYTE_ARRAY" and col.max_repetition_level == 0:
                texts.add(col.path.split(".")[0])
        if max(estimate, stored) > max_decoded_bytes:
            raise error(f"{what} {path} would take more than {max_decoded_bytes} bytes once "
                        "decoded; arcnb reads Parquet files of at most that")
        try:
            fh.seek(0)
            table = pq.ParquetFile(fh, read_dictionary=sorted(texts)).read()
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise error(f"{what} {path} is not a readable Parquet file "
                        f"({one_line(exc, 120, first_line=True)})") from None
        except MemoryError:
            raise error(f"{what} {path} is too large to read") from None
    finally:
        fh.close()
    decoded = estimate
    columns = []
    for name, column in zip(table.column_names, table.columns):
        if not pa.types.is_dictionary(column.type):
            columns.append(column)
            continue
        for chunk in column.chunks:
            lengths = pc.binary_length(chunk.dictionary).fill_null(0)
            lengths = lengths.to_numpy(zero_copy_only=False).astype(np.int64)
            idx = chunk.indices.fill_null(0).to_numpy(zero_copy_only=False)
            if lengths.size and idx.size:
                decoded += int(lengths[idx].sum())
            if decoded > max_decoded_bytes:
                raise error(f"{what} {path} would take more than {max_decoded_bytes} bytes "
                            "once decoded; arcnb reads Parquet files of at most that")
        columns.append(pa.chunked_array([c.dictionary_decode() for c in column.chunks],
                                        type=column.type.value_type))
    return pa.table(columns, names=table.column_names).replace_schema_metadata(
        table.schema.metadata)


def read_text(path: str | os.PathLike, *, what: str = "file", max_bytes: int = MAX_JSON_BYTES,
              error=None) -> str:
    """:func:`read_bytes` decoded as UTF-8 (a byte-order mark is dropped)."""
    error = error or JSONInputError
    raw = read_bytes(path, what=what, max_bytes=max_bytes, error=error)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{what} {path} is not UTF-8 text (byte {exc.start})") from None


def no_duplicate_keys(pairs):
    """``json.loads``'s ``object_pairs_hook`` that refuses a key given twice in one
    object (:class:`~arcnb.errors.DuplicateKeyError`): the one rule of every JSON
    reader."""
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise DuplicateKeyError(key)
        seen[key] = value
    return seen


def _check_scan(raw: bytes, where: str, max_depth: int, max_containers: int,
                unit: str) -> None:
    """The bounds every JSON input is checked against before it is parsed (one scan of
    its bytes, :func:`_json_scan`): nesting, arrays and objects (the memory a parse
    takes), digits of a number; each refused in one line starting with ``where``."""
    try:
        depth, containers, long_number = _json_scan(raw)
    except MemoryError:
        raise JSONInputError(f"{where} is too large to check") from None
    if depth > max_depth:
        raise JSONInputError(f"{where} nests arrays/objects {depth} levels deep (too deeply "
                             f"nested); ARC data never needs more than {max_depth}")
    if containers > max_containers:
        raise JSONInputError(f"{where} holds {containers} arrays and objects, more than the "
                             f"{max_containers} arcnb reads from {unit}")
    if long_number:
        raise JSONInputError(f"{where} holds a number of more than {MAX_JSON_DIGITS} digits; "
                             "no count, index, vote or cost of ARC data needs one")


def _checked_text(path: Path, what: str, max_depth: int, max_bytes: int, *,
                  first_value: bool) -> str:
    """The text of a JSON (or JSON Lines) input file, once it is known to be a regular
    file within ``max_bytes``, (with ``first_value``) to start like JSON, to nest at most
    ``max_depth`` deep and to be UTF-8 (a byte-order mark is dropped)."""
    raw = read_bytes(path, what=what, max_bytes=max_bytes)
    start = 3 if raw.startswith(b"\xef\xbb\xbf") else 0
    head = raw[start:start + 4096].lstrip(b" \t\r\n")
    if first_value and head and head[0] not in _JSON_START:
        raise JSONInputError(f"{what} {path} is not valid JSON: it does not start with a "
                             "JSON value")
    _check_scan(raw, f"{what} {path}", max_depth, MAX_JSON_CONTAINERS,
                "one JSON file (a large candidate pool belongs in a Parquet candidates file)")
    try:
        return raw[start:].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JSONInputError(f"{what} {path} is not UTF-8 text (byte {exc.start + start})"
                             ) from None
    except MemoryError:
        raise JSONInputError(f"{what} {path} is too large to read") from None


def read_json(path: str | os.PathLike, *, what: str = "JSON file",
              max_depth: int = MAX_JSON_DEPTH, max_bytes: int = MAX_JSON_BYTES) -> Any:
    """Parse a JSON input file the way every arcnb loader does (the one bounded JSON
    reader).

    Only a regular file of at most ``max_bytes`` is read (:func:`read_bytes`). UTF-8
    with or without a byte-order mark is accepted (Windows tools write one). A file
    that does not start like JSON is refused before the rest is read. Before parsing, a
    scan whose memory is about the file's size refuses nesting deeper than
    ``max_depth`` (no recursion error), more than :data:`MAX_JSON_CONTAINERS` arrays and
    objects (the bound on the memory parsing takes) and a number of more than
    :data:`MAX_JSON_DIGITS` digits; a number beyond a float's range (``1e400``) is
    refused while parsing. A key given twice in one object is refused, naming
    the key: in a predictions file or a taxonomy that is a duplicated task id, which is
    ambiguous. Every failure is a :class:`JSONInputError` with a one-line message that
    names the file, never its contents.
    """
    path = Path(path)
    text = _checked_text(path, what, max_depth, max_bytes, first_value=True)
    return _parse(text, f"{what} {path}", duplicate=" (a duplicated task id is ambiguous)",
                  invalid=lambda exc: f"{what} {path} is not valid JSON: {exc.msg} at line "
                                      f"{exc.lineno} column {exc.colno}")


def _parse(text: str, where: str, *, invalid, duplicate: str = "",
           unicode_only: bool = False) -> Any:
    """The one parse of JSON text every reader ends with (its bounds checked before):
    floats within range, no key twice and, with ``unicode_only``, Unicode text only (an
    escaped lone surrogate refused: a game id or a guid; arcnb's own files may hold a
    file name that is not UTF-8, escaped as ``\\udcff``); each failure one
    :class:`JSONInputError` line starting with ``where`` (``invalid(exc)`` words a
    syntax error)."""
    try:
        value = json.loads(text, object_pairs_hook=no_duplicate_keys, parse_float=_finite_float)
        if unicode_only and "\\u" in text:  # an escaped lone surrogate is no text
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        return value
    except UnicodeError as exc:
        raise JSONInputError(f"{where} is not Unicode text (byte {getattr(exc, 'start', 0)}: "
                             "invalid UTF-8 or a lone surrogate)") from None
    except HugeNumberError as huge:
        raise JSONInputError(f"{where} holds the number {one_line(huge.text, 40)}, beyond the "
                             "range of a float") from None
    except DuplicateKeyError as dup:
        raise JSONInputError(f"{where}: the key {one_line(repr(dup.key), 64)} appears more "
                             f"than once in one object{duplicate}") from None
    except json.JSONDecodeError as exc:
        raise JSONInputError(invalid(exc)) from None
    except (RecursionError, MemoryError, ValueError):
        raise JSONInputError(f"{where} is too deeply nested or too large") from None


def parse_json(text: str | bytes, *, what: str, max_depth: int = MAX_JSON_DEPTH,
               max_containers: int = MAX_JSON_CONTAINERS, max_bytes: int = MAX_JSON_BYTES,
               invalid: str = "is not valid JSON", duplicate: str = "",
               unicode_only: bool = False, error=None) -> Any:
    """Parse JSON text that is not a file of its own (a ``--config`` string, a task-id
    list, a model's answer text, a Parquet file's metadata, a checkpoint's header or
    config, an environment variable) by the rules of :func:`read_json`: ``text`` (bytes
    are UTF-8; a byte-order mark is dropped) of at most ``max_bytes``, nesting deeper
    than ``max_depth``, more than ``max_containers`` arrays and objects and a number of
    more than :data:`MAX_JSON_DIGITS` digits refused before parsing, a number beyond a
    float's range and a key given twice in one object (``duplicate``: words added to
    that refusal) refused while parsing, and, with ``unicode_only``, an escaped lone
    surrogate. Every failure raises ``error`` (default :class:`JSONInputError`) with one
    line that starts with ``what`` and never shows the text: a syntax error is ``{what}
    {invalid}: {reason} at line L column C``."""
    error = error or JSONInputError
    try:
        data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
        if len(data) > max_bytes:
            raise JSONInputError(f"{what} is longer than {max_bytes} bytes")
        if not isinstance(text, str):
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise JSONInputError(f"{what} is not UTF-8 text (byte {exc.start})") from None
        if text.startswith("\ufeff"):
            text = text[1:]
        _check_scan(data, what, max_depth, max_containers, "one text")
        return _parse(text, what, duplicate=duplicate, unicode_only=unicode_only,
                      invalid=lambda exc: f"{what} {invalid}: {exc.msg} at line {exc.lineno} "
                                          f"column {exc.colno}")
    except JSONInputError as exc:
        if error is JSONInputError:
            raise
        raise error(exc.args[0]) from None
    except MemoryError:
        raise error(f"{what} is too large to read") from None


def plain_json(value: Any, *, default=None, sort_keys: bool = True) -> Any:
    """``value`` as plain JSON values, the one round trip through JSON text (keys sorted
    unless ``sort_keys`` is False; ``default`` as in ``json.dumps``, for values JSON has
    no form of): tuples become lists, keys strings, numpy scalars what ``default`` makes
    of them; a record made fresh then equals the same record read back from a journal.
    Not a parse of input: the text is arcnb's own."""
    return json.loads(json.dumps(value, sort_keys=sort_keys, default=default))


def read_json_lines(path: str | os.PathLike, *, what: str = "JSON Lines file",
                    max_depth: int = MAX_JSON_DEPTH,
                    max_bytes: int = MAX_JSON_BYTES) -> list[tuple[int, Any]]:
    """Parse a JSON Lines file (one JSON value per line) with the rules of
    :func:`read_json`: a regular file of at most ``max_bytes``, UTF-8 with or without a
    byte-order mark, nesting beyond ``max_depth``, too many arrays and objects and
    numbers of too many digits refused before parsing, a key given twice in one object
    refused. Blank lines are skipped; ``\\r\\n`` line ends are
    accepted. Returns ``[(line_number, value), ...]`` (line numbers from 1); the first
    bad line raises :class:`JSONInputError` with one line naming the file and the line.
    """
    path = Path(path)
    text = _checked_text(path, what, max_depth, max_bytes, first_value=False)
    out = []
    # "\n" only: str.splitlines would also split inside a string at U+2028 and friends
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        out.append((n, parse_json_line(line, what=what, path=path, line=n, scanned=True,
                                       unicode_only=False)))
    return out


def file_sha256(path: str | os.PathLike) -> str:
    """The SHA-256 of a file's bytes, as hex (read in 1 MiB blocks)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@contextlib.contextmanager
def take_back_on_failure():
    """Write several files as one: all of them or none of the new ones.

    ``with take_back_on_failure() as track:`` then ``track(path)`` (it returns ``path``
    as a Path) before each file is written. When the block raises (a full disk, a kill),
    every tracked file that did not exist when it was tracked is removed again and the
    exception goes on; files that existed before are left (each write is atomic, so
    they hold either their old or their new bytes)."""
    created: list[Path] = []

    def track(path: str | os.PathLike) -> Path:
        path = Path(path)
        if not path.exists():
            created.append(path)
        return path

    try:
        yield track
    except BaseException:
        for p in created:
            with contextlib.suppress(OSError):
                p.unlink(missing_ok=True)
        raise


def atomic_write_bytes(path: str | os.PathLike, data: bytes, *, overwrite: bool = False) -> Path:
    """Write ``data`` to a temporary file beside ``path`` (flushed and fsynced), then
    rename it to ``path``, so ``path`` is never half-written. An existing ``path`` is
    refused (:class:`~arcnb.errors.OutputExistsError`) unless ``overwrite``."""
    path = Path(path)
    if path.exists() and not overwrite:
        raise refuse_overwrite(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    for again in (True, False):
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            os.chmod(tmp, 0o666 & ~_umask())
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
            return path
        except FileNotFoundError:
            # another process writing the same file (the shards of a sweep each record
            # the whole plan) took this temporary file for a killed write's leftover
            # and removed it: written once more, from the start
            if not again or os.path.exists(tmp) or not path.parent.is_dir():
                Path(tmp).unlink(missing_ok=True)
                raise
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    raise AssertionError("unreachable: the second attempt returns or raises")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: str | os.PathLike, text: str, *, overwrite: bool = False) -> Path:
    """:func:`atomic_write_bytes` of ``text`` encoded as UTF-8."""
    return atomic_write_bytes(path, text.encode("utf-8"), overwrite=overwrite)


def to_jsonable(obj: Any) -> Any:
    """Convert numpy / torch scalars and arrays to plain JSON; NaN becomes null."""
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if hasattr(obj, "detach"):
        obj = obj.detach().cpu().numpy()
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def json_bytes(obj) -> bytes:
    """``obj`` as arcnb writes a JSON document (a result folder's summary, ``metrics.json``,
    a sweep's files): plain JSON (:func:`to_jsonable`: numpy values as numbers, NaN as
    null), indented, keys sorted, a final newline, UTF-8: the same bytes for the same
    numbers. The one JSON document text."""
    return (json.dumps(to_jsonable(obj), indent=2, sort_keys=True, allow_nan=False)
            + "\n").encode("utf-8")


def atomic_write_json(path: str | os.PathLike, obj: Any, *, overwrite: bool = False) -> Path:
    """Write ``obj`` as :func:`json_bytes` (indented, key-sorted JSON: byte-stable for
    the same input)."""
    return atomic_write_bytes(path, json_bytes(obj), overwrite=overwrite)


#: First characters that make a spreadsheet read a cell as a formula (OWASP, "CSV
#: injection"): such user strings get a leading apostrophe in CSV exports.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _neutralise(value):
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def csv_text(df, *, index: bool = False) -> str:
    """``df`` as CSV text for people to open in a spreadsheet: every string cell (and
    string index / column label) that starts with ``=``, ``+``, ``-``, ``@``, a tab or a
    carriage return gets a leading ``'`` so that it is shown, never run, as OWASP
    recommends. Numbers are untouched; the exact strings stay in Parquet and JSON."""
    out = df.copy()
    for col in out.columns:
        dtype = out[col].dtype
        if isinstance(dtype, pd.CategoricalDtype):
            out[col] = out[col].astype(object)
        if pd.api.types.is_object_dtype(out[col]) or pd.api.types.is_string_dtype(out[col]):
            out[col] = out[col].map(_neutralise)
    out.columns = [_neutralise(c) for c in out.columns]
    if index:
        out.index = out.index.map(_neutralise)
    return out.to_csv(index=index, lineterminator="\n")


#: Longest line :func:`iter_lines` accepts by default (32 MiB): an ARC-AGI-3 recording
#: line holds one step's frames, at most 1,001 layers of 64 x 64 colours (about 12 MB).
MAX_LINE_BYTES = 32 * 1024 ** 2


def iter_lines(path: str | os.PathLike, *, what: str = "file", max_bytes: int = MAX_JSON_BYTES,
               max_line_bytes: int = MAX_LINE_BYTES, error=None):
    """The lines of a large input file, streamed: ``(line_number, offset, raw_bytes)``
    for each line (numbered from 1; ``offset`` where it starts; the bytes without the
    line end, a ``\\r`` before it dropped). Only a regular file of at most ``max_bytes``
    is read (as :func:`read_bytes`), one line at a time, and a line longer than
    ``max_line_bytes`` is refused before it is held whole: memory stays at one line
    however large the file. Every failure raises ``error`` (default
    :class:`JSONInputError`) with one line naming the file (and the line)."""
    error = error or JSONInputError
    path = Path(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise error(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise error(f"{what} {path} is a directory, not a file") from None
    except OSError as exc:
        raise error(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = ("a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO"
                    if stat.S_ISFIFO(st.st_mode) else "a socket"
                    if stat.S_ISSOCK(st.st_mode) else "a device")
            raise error(f"{what} {path} is {kind}, not a regular file")
        if st.st_size > max_bytes:
            raise error(f"{what} {path} is larger than {max_bytes} bytes")
        offset, number = 0, 0
        while True:
            try:
                raw = fh.readline(max_line_bytes + 2)
            except OSError as exc:
                raise error(f"cannot read {what} {path}: {exc.strerror or exc}") from None
            if not raw:
                return
            number += 1
            start = offset
            offset += len(raw)
            if offset > max_bytes:
                raise error(f"{what} {path} is larger than {max_bytes} bytes")
            body = raw[:-1] if raw.endswith(b"\n") else raw
            if body.endswith(b"\r"):
                body = body[:-1]
            if len(body) > max_line_bytes:
                raise error(f"{what} {path} line {number} is longer than {max_line_bytes} "
                            "bytes")
            yield number, start, body


def read_range(path: str | os.PathLike, offset: int, length: int, *, what: str = "file",
               error=None) -> bytes:
    """``length`` bytes of a regular file from ``offset`` (a line found by
    :func:`iter_lines`, read again later); a file that changed under it is refused."""
    error = error or JSONInputError
    try:
        with open(path, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise error(f"{what} {path} is not a regular file")
            fh.seek(offset)
            raw = fh.read(length)
    except OSError as exc:
        raise error(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if len(raw) != length:
        raise error(f"{what} {path} changed since it was read (it is shorter now)")
    return raw


__all__ += ["iter_lines", "read_range", "MAX_LINE_BYTES"]


def parse_json_line(raw: bytes | str, *, what: str, path, line: int,
                    max_depth: int = MAX_JSON_DEPTH, max_containers: int = MAX_JSON_CONTAINERS,
                    scanned: bool = False, unicode_only: bool = True) -> Any:
    """One JSON value of a line (a recording's step, a journal record), by the rules of
    :func:`read_json`: nesting deeper than ``max_depth``, more than ``max_containers``
    arrays and objects, a number of more than :data:`MAX_JSON_DIGITS` digits (an
    integer of 4,300 digits included) or beyond a float's range, a key given twice and
    text that is not Unicode (invalid UTF-8; with ``unicode_only``, the default, a lone
    surrogate such as ``"\\ud800"``, which no game id or guid holds) refused with a
    one-line :class:`JSONInputError` naming ``what``, ``path`` and the ``line`` number
    (from 1); a byte-order mark at the start of line 1 (the file's) is dropped. The one
    parser of a JSON line: :func:`read_json_lines`, the ARC-AGI-3 reader and evaluate's
    resume journal use it. ``scanned``: the caller scanned the whole file already
    (nesting, containers and digits), only the parse is left."""
    where = f"{what} {path} line {line}"
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if not scanned:
        _check_scan(data, where, max_depth, max_containers, "one line")
    try:
        text = data.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeError as exc:
        raise JSONInputError(f"{where} is not UTF-8 text (byte {exc.start})") from None
    if line == 1 and text.startswith("\ufeff"):  # the file's byte-order mark
        text = text[1:]
    return _parse(text, where, unicode_only=unicode_only,
                  invalid=lambda exc: f"{what} {path} is not valid JSON Lines: line {line}: "
                                      f"{exc.msg} at column {exc.colno}")


__all__ += ["parse_json_line", "parse_json", "plain_json"]
