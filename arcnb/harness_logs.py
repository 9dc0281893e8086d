"""The benchmarking harness's raw API logs: retries, timeouts and failures of a run.

The harness (``arcprize/arc-agi-benchmarking``, ``cli/run_configs.py``) writes a run's
attempts to ``submissions/<config>/<dataset>/<task>.json`` and, beside them, one log
per task to ``logs/<config>/<dataset>/<task>.jsonl``: one JSON object a line, its
application log records (``level``, ``logger``, ``message``) and the raw API events of
its ``RawAPILogger`` (``schema_version``, ``event``, ``run_id``, ``timestamp``,
``operation``, ``context``; ``context`` names ``config``, ``task_id``, ``pair_index``,
``attempt``, ``retry`` (1 for the first try of an attempt) and ``orchestrator_attempt``
(1 for the first run of a task)). The events:

* ``request_started``: a request to the provider's API;
* ``request_succeeded`` / ``request_failed``: how it ended (``error`` on a failure);
* ``task_timed_out``: the task ran past the harness's task timeout.

:func:`logs_folder` finds a run folder's logs; :func:`log_rates` counts, per run:

* ``n_requests``: requests started; ``failure_rate``: failed requests over the finished
  ones (failed + succeeded);
* ``retry_rate``: the requests that are retries (``retry`` above 1, or
  ``orchestrator_attempt`` above 1) over the requests started;
* ``timeout_rate``: tasks with a ``task_timed_out`` event over the tasks with a log.

Every rate is NaN when its denominator is 0. Log files are read only through
:func:`arcnb.io.read_json_lines` (regular files, a size bound, the JSON rules); other
lines (the application's records) are counted as nothing.
"""
from __future__ import annotations

import math
import os
from pathlib import Path

from .errors import PredictionsError
from .io import JSONInputError, read_json_lines
from .text import printable

__all__ = ["logs_folder", "log_rates", "run_log_rates", "LOG_RATE_KEYS", "MAX_LOG_BYTES", "MAX_LOG_FILES"]

#: Largest log file read (a larger one is refused in one line).
MAX_LOG_BYTES = 256 * 1024 ** 2
#: Most task logs one run folder may hold.
MAX_LOG_FILES = 100_000
#: The keys :func:`log_rates` returns.
LOG_RATE_KEYS = ("n_log_tasks", "n_requests", "n_succeeded", "n_failed", "n_retries",
                 "n_timed_out_tasks", "failure_rate", "retry_rate", "timeout_rate")


def logs_folder(run_folder: str | os.PathLike) -> Path | None:
    """The harness's log folder of a run folder ``.../submissions/<config>/<dataset>``:
    ``.../logs/<config>/<dataset>`` when it is a folder (never a link), else None."""
    path = Path(run_folder)
    if not path.is_dir():
        return None
    for parent in path.parents:
        if parent.name == "submissions":
            here = parent.parent / "logs"
            for part in ("", *path.relative_to(parent).parts):
                here = here / part if part else here
                if here.is_symlink() or not here.is_dir():
                    return None
            return here
    return None


def _positive_above_one(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x > 1


def log_rates(folder: str | os.PathLike, task_ids=None) -> dict:
    """Retry, timeout and failure counts and rates of the task logs (``<task>.jsonl``)
    in ``folder`` (see the module docstring); ``task_ids``: only those tasks' logs."""
    folder = Path(folder)
    keep = None if task_ids is None else {str(t) for t in task_ids}
    files = []
    try:
        for f in sorted(folder.iterdir()):
            if f.suffix != ".jsonl" or f.name.startswith(".") or f.is_symlink() \
                    or not f.is_file() or (keep is not None and f.stem not in keep):
                continue
            files.append(f)
            if len(files) > MAX_LOG_FILES:
                raise PredictionsError(f"{printable(str(folder))} holds more than "
                                       f"{MAX_LOG_FILES} task logs")
    except OSError as exc:
        raise PredictionsError(f"cannot read the log folder {printable(str(folder))}: "
                               f"{exc.strerror or exc}") from exc
    n = dict.fromkeys(LOG_RATE_KEYS[:6], 0)
    n["n_log_tasks"] = len(files)
    for f in files:
        try:
            lines = read_json_lines(f, what="harness log", max_bytes=MAX_LOG_BYTES)
        except JSONInputError as exc:
            raise PredictionsError(str(exc), file=str(f)) from None
        timed_out = False
        for _, rec in lines:
            event = rec.get("event") if isinstance(rec, dict) else None
            if event == "request_started":
                n["n_requests"] += 1
                ctx = rec.get("context")
                ctx = ctx if isinstance(ctx, dict) else {}
                if _positive_above_one(ctx.get("retry")) or \
                        _positive_above_one(ctx.get("orchestrator_attempt")):
                    n["n_retries"] += 1
            elif event == "request_succeeded":
                n["n_succeeded"] += 1
            elif event == "request_failed":
                n["n_failed"] += 1
            elif event == "task_timed_out":
                timed_out = True
        n["n_timed_out_tasks"] += int(timed_out)

    def rate(a, b):
        return a / b if b else math.nan

    n["failure_rate"] = rate(n["n_failed"], n["n_failed"] + n["n_succeeded"])
    n["retry_rate"] = rate(n["n_retries"], n["n_requests"])
    n["timeout_rate"] = rate(n["n_timed_out_tasks"], n["n_log_tasks"])
    return n


def run_log_rates(predictions) -> dict | None:
    """:func:`log_rates` of a harness run's logs (its ``source`` folder's, through
    :func:`logs_folder`), over the tasks it holds; None when it has no logs."""
    source = getattr(predictions, "source", None)
    if not source or getattr(predictions, "format", None) != "harness":
        return None
    folder = logs_folder(source)
    if folder is None:
        return None
    return log_rates(folder, predictions.task_ids)
