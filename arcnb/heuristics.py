"""Deprecated name of :mod:`arcnb.baselines`, kept so existing code keeps working.

``arcnb.heuristics.heuristic_submission`` is :func:`arcnb.baselines.heuristic_submission`
(the tiny whole-grid heuristic behind the first bundled example); the program search
and copy-the-input live in :mod:`arcnb.baselines` too.
"""
from __future__ import annotations

from .baselines import PROGRAMS, fit_programs, heuristic_submission  # noqa: F401

__all__ = ["PROGRAMS", "fit_programs", "heuristic_submission"]
