"""Atomic, non-clobbering file writes.

Every artefact arcnb writes goes through these helpers: the data is written to a
temporary file in the same folder, flushed and renamed over the target, so a run
killed at any moment never leaves a truncated file. An existing file is only replaced
when the caller says so.
"""
from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

from .errors import OutputExistsError

__all__ = ["atomic_write_bytes", "atomic_write_text", "atomic_write_json", "to_jsonable"]


def atomic_write_bytes(path: str | os.PathLike, data: bytes, *, overwrite: bool = False) -> Path:
    path = Path(path)
    if path.exists() and not overwrite:
        raise OutputExistsError(f"{path} already exists; refusing to overwrite it "
                                "(pass overwrite=True / --overwrite)")
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
    return atomic_write_bytes(path, text.encode("utf-8"), overwrite=overwrite)


def to_jsonable(obj: Any) -> Any:
    """Convert numpy / torch scalars and arrays to plain JSON; NaN becomes null."""
    import numpy as np

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
