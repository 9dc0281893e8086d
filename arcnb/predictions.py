"""Predictions in the ARC Prize submission format: read, validate, write.

The format is ``{task_id: [{"attempt_1": grid, "attempt_2": grid, ...}, ...]}``: one
dict per test input, in the task's order. An attempt may also be given as
``{"answer": grid, ...}``. Attempt keys are exactly ``attempt_N`` with N a positive
ASCII integer without leading zeros (``attempt_1``, ``attempt_2``, ...), ordered by
their number, so ``attempt_2`` comes before ``attempt_10``. Any other key that starts
with ``attempt`` (``attempt_0``, ``attempt_01``, ``attempt_1\n``, non-ASCII digits) is
a malformed entry: counted in ``n_bad_attempt_keys`` and listed in ``problems``, never
taken as an attempt.

Malformed attempts (None, empty, ragged, a string, values outside 0-9) never crash
anything: they are kept as ``None``, scored as wrong and counted.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from .errors import PredictionsError
from .grids import as_grid_or_none, grid_problem
from .io import JSONInputError, atomic_write_text, read_json

__all__ = ["Predictions", "load_predictions", "write_predictions", "to_submission",
           "attempt_keys", "bad_attempt_keys"]

_ATTEMPT = re.compile(r"attempt_([1-9][0-9]*)", re.ASCII)


def attempt_keys(entry: Mapping) -> list[str]:
    """The ``attempt_N`` keys of one test-input dict, ordered by N (not as strings).

    Only ``attempt_[1-9][0-9]*`` (ASCII) counts. N is compared by length, then digits,
    so a key of thousands of digits sorts last instead of overflowing ``int``.
    """
    keys = [(len(m.group(1)), m.group(1), k) for k in entry if isinstance(k, str)
            and (m := _ATTEMPT.fullmatch(k))]
    return [k for _, _, k in sorted(keys)]


def bad_attempt_keys(entry: Mapping) -> list[str]:
    """Keys that start with ``attempt`` but are not a valid ``attempt_N``."""
    return [k for k in entry if isinstance(k, str) and k.startswith("attempt")
            and not _ATTEMPT.fullmatch(k)]


def _show_key(key: str, limit: int = 40) -> str:
    text = repr(key)
    return text if len(text) <= limit else text[:limit] + "...'"


def _attempt_grid(value: Any) -> np.ndarray | None:
    if isinstance(value, dict):
        value = value.get("answer")
    return as_grid_or_none(value)


@dataclass
class Predictions:
    """Parsed predictions.

    ``attempts[task_id][i]`` is the list of attempts for test input ``i``, in attempt
    order; each attempt is an ``int8`` grid or None when it was malformed.
    ``n_invalid_attempts`` counts the malformed ones; ``n_bad_attempt_keys`` counts
    entries whose key looks like an attempt but is not ``attempt_N``; ``problems`` says
    what was wrong (task, test index, attempt key, reason) so nothing is silently
    dropped.
    """

    attempts: dict[str, list[list[np.ndarray | None]]]
    n_invalid_attempts: int = 0
    problems: list[dict] = field(default_factory=list)
    source: str | None = None
    n_bad_attempt_keys: int = 0

    @property
    def task_ids(self) -> list[str]:
        return list(self.attempts)

    def __len__(self) -> int:
        return len(self.attempts)

    def __contains__(self, task_id: object) -> bool:
        return task_id in self.attempts

    def get(self, task_id: str, test_index: int) -> list[np.ndarray | None]:
        """Attempts for one test input; ``[]`` when the task or input is missing."""
        outs = self.attempts.get(task_id)
        if outs is None or test_index >= len(outs):
            return []
        return outs[test_index]

    @classmethod
    def from_obj(cls, obj: Any, *, source: str | None = None) -> "Predictions":
        if not isinstance(obj, dict):
            raise PredictionsError(
                f"{source or 'predictions'}: expected a JSON object mapping task ids to lists "
                f"of attempts, got {type(obj).__name__}", file=source)
        attempts: dict[str, list[list[np.ndarray | None]]] = {}
        problems: list[dict] = []
        n_invalid = n_bad_keys = 0

        def bad(task, idx, key, reason):
            problems.append({"task_id": task, "test_index": idx, "attempt": key,
                             "problem": reason})

        for task_id in sorted(obj, key=str):
            outs = obj[task_id]
            tid = str(task_id)
            if isinstance(outs, dict) and (attempt_keys(outs) or bad_attempt_keys(outs)):
                outs = [outs]  # a single test input given without the list
            if not isinstance(outs, list):
                bad(tid, None, None, f"expected a list of test inputs, got {type(outs).__name__}")
                n_invalid += 1
                attempts[tid] = []
                continue
            task_attempts = []
            for i, entry in enumerate(outs):
                if isinstance(entry, dict):
                    keys = attempt_keys(entry)
                    values = [entry[k] for k in keys]
                    for k in bad_attempt_keys(entry):
                        n_bad_keys += 1
                        bad(tid, i, _show_key(k), "not an attempt key (expected attempt_1, "
                                                  "attempt_2, ...): ignored")
                else:  # a bare grid (or garbage) counts as a single attempt
                    keys, values = ["attempt_1"], [entry]
                grids = []
                for k, v in zip(keys, values):
                    g = _attempt_grid(v)
                    if g is None:
                        n_invalid += 1
                        raw = v.get("answer") if isinstance(v, dict) else v
                        bad(tid, i, k, f"malformed attempt: {grid_problem(raw)}")
                    grids.append(g)
                task_attempts.append(grids)
            attempts[tid] = task_attempts
        return cls(attempts, n_invalid, problems, source, n_bad_keys)


def load_predictions(spec: str | os.PathLike | Mapping | Predictions) -> Predictions:
    """Read predictions from a path, a parsed dict or a :class:`Predictions`."""
    if isinstance(spec, Predictions):
        return spec
    if isinstance(spec, Mapping):
        return Predictions.from_obj(dict(spec))
    path = Path(spec)
    try:
        obj = read_json(path, what="predictions file")
    except JSONInputError as exc:
        raise PredictionsError(str(exc), file=str(path)) from None
    return Predictions.from_obj(obj, source=str(path))


def to_submission(attempts: Mapping[str, list[list[Any]]]) -> dict:
    """Build the ARC Prize submission dict from ``{task: [[grid, grid], ...]}``.

    Every test input gets ``attempt_1 .. attempt_N``; a None attempt is written as
    ``null`` (scored as wrong).
    """
    sub = {}
    for tid in sorted(attempts):
        entries = []
        for outs in attempts[tid]:
            entries.append({f"attempt_{j + 1}": (None if g is None else np.asarray(g).tolist())
                            for j, g in enumerate(outs)})
        sub[tid] = entries
    return sub


def write_predictions(path: str | os.PathLike, predictions: Mapping | Predictions, *,
                      overwrite: bool = False) -> Path:
    """Write a submission file atomically (temporary file, then rename).

    ``predictions`` is a :class:`Predictions` or ``{task: [[grid, ...], ...]}``.
    An existing file is not replaced unless ``overwrite=True``.
    """
    if isinstance(predictions, Predictions):
        predictions = predictions.attempts
    text = json.dumps(to_submission(predictions), separators=(",", ":"))
    return atomic_write_text(path, text + "\n", overwrite=overwrite)
