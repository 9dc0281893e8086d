"""Streaming metrics for training loops (``torchmetrics.Metric`` classes).

The classes live in :mod:`arcnb.metrics.streaming`, next to the functions whose
counts they keep; this module is the documented import path (it re-exports every
public name of that module, so a new class needs no edit here)::

    from arcnb.modules import ArcMetricCollection, GridMetrics
"""
from __future__ import annotations

from .metrics import streaming as _streaming
from .metrics.streaming import *  # noqa: F401,F403 (the documented path; names below)

__all__ = list(_streaming.__all__)
