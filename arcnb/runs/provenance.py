"""Provenance of a run: what produced it (arcnb version, git commit, python, numpy,
torch; a checkpoint's or a predictions file's path and SHA-256; the dataset) and
its flat view for reports."""
from __future__ import annotations

import hashlib
import json
import subprocess
import importlib.metadata
import sys
from pathlib import Path

import numpy as np

from .._version import __version__
from ..resources import checkout_root
from .layout import user_paths
from ..io import file_sha256


def _git_commit() -> str | None:
    # only a clone of arcnb has a commit of its own: an installed arcnb inside
    # someone else's repository must not report that repository's commit
    root = checkout_root()
    if root is None:
        return None
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = out.stdout.strip()
    return commit if out.returncode == 0 and len(commit) == 40 else None


def _torch_version() -> str | None:
    """torch's version, read from the loaded module or the installed package's metadata
    (importing torch only to read its version would cost seconds)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        return torch.__version__
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover
        return None


def run_provenance(**extra) -> dict:
    """Base provenance: arcnb version, git commit (or None), python, torch, numpy;
    ``extra`` keys are added (and win)."""
    prov = {"arcnb_version": __version__, "git_commit": _git_commit(),
            "python": sys.version.split()[0], "numpy": np.__version__}
    prov["torch"] = _torch_version()
    prov.update(extra)
    return prov


def predictions_provenance(path, preds, dataset) -> dict:
    """The provenance of a scored predictions file or harness run folder (the one
    definition): :func:`run_provenance` plus ``source="predictions"``, ``predictions``
    (the path), ``predictions_sha256`` (the file's, or for a folder the digest of its
    task files: :meth:`arcnb.predictions.Predictions.source_sha256`), ``dataset`` (its
    info) and, when the ``arcnb`` command made the run, ``run.paths`` (its command
    line's paths, as typed and resolved)."""
    prov = run_provenance(source="predictions",
                          predictions=str(path) if preds.source else None,
                          predictions_sha256=preds.source_sha256(), dataset=dataset.info)
    if user_paths():
        prov["run"] = {"paths": user_paths()}
    return prov


def file_sha256_or_none(path) -> str | None:
    """The SHA-256 of ``path`` when it is a file, else None."""
    if path and Path(path).is_file():
        return file_sha256(path)
    return None


def options_sha256(options: dict) -> str:
    """The SHA-256 of a run's options (every parameter that changes its result) as
    canonical JSON: the one "is this the same run?" key, recorded in ``metrics.json``
    (``provenance.options_sha256``) and compared wherever a finished run is reused."""
    text = json.dumps(options, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def same_run_problem(metrics: dict, options: dict, *, ignore: tuple = ()) -> str | None:
    """Why the finished run of ``metrics`` is not the run ``options`` ask for (None when
    it is): the options it records must hash to the same :func:`options_sha256`
    (``ignore`` names options left out of the comparison on both sides). The answer
    names the first option that differs, as recorded and as asked."""
    prov = metrics.get("provenance") if isinstance(metrics.get("provenance"), dict) else {}
    recorded = prov.get("options")
    if not isinstance(recorded, dict):
        return "it records no options (an older arcnb wrote it)"
    mine = {k: v for k, v in options.items() if k not in ignore}
    theirs = {k: v for k, v in recorded.items() if k not in ignore}
    if options_sha256(mine) == options_sha256(theirs):
        return None
    diff = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
    key = diff[0] if diff else "options"
    return (f"its {key.replace('_', ' ')} is {json.dumps(theirs.get(key), default=str)[:80]}"
            f", not {json.dumps(mine.get(key), default=str)[:80]}")


#: The rules a number depends on, each by a name that changes when the rule does: the
#: scoring rule of ARC-AGI-1/2 (with the estimator of pass@K), the tie rule of votes
#: and the ARC-AGI-3 scoring rule (by toolkit version).
SCORING_RULE = "arc-prize"
SCORING_RULE_WORDS = ("per task, the share of its test outputs solved within K attempts; "
                      "the mean over tasks")


def provenance_block(dataset=None, *, estimator: str | None = None, tie: str | None = None,
                     arc3_rule: str | None = None, **extra) -> dict:
    """The one provenance block every page and every ``summary.json`` carries: the
    dataset, its version and task filter (``dataset``: a
    :class:`~arcnb.data.Dataset` or its recorded ``{"name", "version", "filter"}``;
    None for ARC-AGI-3 games), the arcnb version, and the rules the numbers follow
    (``rules``: ``scoring`` (``arc-prize/<estimator>``), ``tie`` (how votes break
    ties), ``arc3`` (the ARC-AGI-3 rule), the ones given). ``extra`` keys are added
    (the run labels, the games' baselines, ...)."""
    info = getattr(dataset, "info", dataset) if dataset is not None else None
    info = dict(info) if isinstance(info, dict) else {}
    rules = {}
    if estimator is not None:
        rules["scoring"] = f"{SCORING_RULE}/{estimator}"
    if tie is not None:
        rules["tie"] = str(tie)
    if arc3_rule is not None:
        rules["arc3"] = str(arc3_rule)
    block = {"dataset": info.get("name"), "dataset_version": info.get("version"),
             "task_filter": info.get("filter"), "arcnb_version": __version__,
             "rules": rules}
    block.update(extra)
    return block
