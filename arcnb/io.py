"""Atomic, non-clobbering file writes.

Every artefact arcnb writes goes through these helpers: the data is written to a
temporary file in the same folder, flushed and renamed over the target, so a run
killed at any moment never leaves a truncated file. An existing file is only replaced
when the caller says so.
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
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .errors import DuplicateKeyError, JSONInputError, one_line, refuse_overwrite

__all__ = ["atomic_write_bytes", "atomic_write_text", "atomic_write_json", "to_jsonable",
           "read_json", "JSONInputError", "MAX_JSON_DEPTH", "csv_text", "file_sha256",
           "take_back_on_failure"]

#: Deepest nesting of arrays and objects arcnb accepts in an input JSON file. The deepest
#: legitimate input (a benchmarking-harness task file: list > test input > attempt >
#: metadata > usage > details, or an answer grid) needs 7; 64 leaves room to spare.
MAX_JSON_DEPTH = 64

#: Largest input JSON file arcnb reads (2 GiB: a run of 1000 sampled attempts per test
#: input over 400 tasks is well under it). Larger files, and endless ones such as
#: /dev/zero, are refused instead of filling the memory.
MAX_JSON_BYTES = 2 * 1024 ** 3

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)


def _json_depth(raw: bytes) -> int:
    """Deepest nesting of ``[``/``{`` outside strings, vectorised (no Python loop)."""
    body = np.frombuffer(_STRING.sub(b'""', raw), dtype=np.uint8)
    step = (np.isin(body, (0x5B, 0x7B)).astype(np.int32)
            - np.isin(body, (0x5D, 0x7D)).astype(np.int32))
    return int(np.cumsum(step).max()) if step.size else 0


def _no_duplicates(pairs):
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise DuplicateKeyError(key)
        seen[key] = value
    return seen


def read_json(path: str | os.PathLike, *, what: str = "JSON file",
              max_depth: int = MAX_JSON_DEPTH, max_bytes: int = MAX_JSON_BYTES) -> Any:
    """Parse a JSON input file the way every arcnb loader does.

    UTF-8 with or without a byte-order mark is accepted (Windows tools write one).
    Nesting deeper than ``max_depth`` is refused before parsing (no recursion error).
    A key given twice in one object is refused, naming the key: in a predictions file
    or a taxonomy that is a duplicated task id, which is ambiguous. Every failure is a
    :class:`JSONInputError` with a one-line message that names the file, never its
    contents.
    """
    path = Path(path)
    try:
        st = path.stat()
        if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
            raise JSONInputError(f"{what} {path} is a device, not a file")
        if st.st_size > max_bytes:
            raise JSONInputError(f"{what} {path} is larger than {max_bytes} bytes")
        with open(path, "rb") as fh:
            raw = fh.read(max_bytes + 1)
    except FileNotFoundError:
        raise JSONInputError(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise JSONInputError(f"{what} {path} is a directory, not a file") from None
    except MemoryError:
        raise JSONInputError(f"{what} {path} is too large to read") from None
    except OSError as exc:
        raise JSONInputError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if len(raw) > max_bytes:
        raise JSONInputError(f"{what} {path} is larger than {max_bytes} bytes")
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JSONInputError(f"{what} {path} is not UTF-8 text (byte {exc.start})") from None
    depth = _json_depth(raw)
    if depth > max_depth:
        raise JSONInputError(f"{what} {path} nests arrays/objects {depth} levels deep; "
                             f"ARC data never needs more than {max_depth}")
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates)
    except DuplicateKeyError as dup:
        raise JSONInputError(f"{what} {path}: the key {one_line(repr(dup.key), 64)} appears more than "
                             "once in one object (a duplicated task id is ambiguous)") from None
    except json.JSONDecodeError as exc:
        raise JSONInputError(f"{what} {path} is not valid JSON: {exc.msg} at line "
                             f"{exc.lineno} column {exc.colno}") from None
    except (RecursionError, MemoryError):
        raise JSONInputError(f"{what} {path} is too deeply nested or too large") from None


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
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


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


def atomic_write_json(path: str | os.PathLike, obj: Any, *, overwrite: bool = False) -> Path:
    """Write ``obj`` as indented, key-sorted JSON (byte-stable for the same input)."""
    text = json.dumps(to_jsonable(obj), indent=2, sort_keys=True, allow_nan=False)
    return atomic_write_text(path, text + "\n", overwrite=overwrite)


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
