"""Streaming metrics for training loops (``torchmetrics.Metric`` classes).

The classes live in :mod:`arcnb.metrics.streaming`, next to the functions whose
counts they keep; this module is the documented import path::

    from arcnb.modules import ArcMetricCollection, GridMetrics
"""
from __future__ import annotations

from .metrics.streaming import (ArcMetricCollection, GridMetrics, LatentDiagnostics,
                                ReconstructionMetrics, TokenAccuracy)

__all__ = [
    "GridMetrics",
    "ReconstructionMetrics",
    "TokenAccuracy",
    "LatentDiagnostics",
    "ArcMetricCollection",
]
