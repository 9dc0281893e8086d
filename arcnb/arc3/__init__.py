"""ARC-AGI-3: read agents' game recordings, re-score them as the official scorecard
does, and see where the actions went.

ARC-AGI-3 games are turn-based, several levels each, scored by action efficiency
against human players (RHAE). This package reads the recordings agents leave (the
toolkit's ``.jsonl`` files, the agents repository's ``*.recording.jsonl``, the
benchmarking harness's run folders) without running any game::

    from arcnb import arc3
    card = arc3.score("recordings/", "environment_files/")   # or a baselines CSV
    card.score, card.ci95, card.games, card.levels, card.faults

Modules: :mod:`~arcnb.arc3.reader` (the layouts, bounded, frames read lazily),
:mod:`~arcnb.arc3.baselines` (human baselines), :mod:`~arcnb.arc3.scorer` (the
accounting and the rule, by version), :mod:`~arcnb.arc3.faults` (what the recorder got
wrong), :mod:`~arcnb.arc3.tables` (per level, game and run),
:mod:`~arcnb.arc3.replay` (a replay page per recording); the paper figures are
:mod:`arcnb.plot.arc3`'s (matplotlib is imported when one is drawn).
"""
from __future__ import annotations

from .baselines import read_baselines
from .compare import Comparison, compare
from .faults import FAULT_KINDS, faults_table
from .reader import (ACTIONS, STEP_COLUMNS, Recording, Run, find_recordings, read_recording,
                     read_run, read_runs)
from .replay import Replay, replay
from .scorer import DEFAULT_RULE, RULES, Rule, Scorecard, account, level_score, play_score, score
from .tables import GAME_COLUMNS, LEVEL_COLUMNS, RUN_COLUMNS, game_table, level_table, run_table

__all__ = ["read_baselines", "FAULT_KINDS", "faults_table", "ACTIONS", "Recording", "Run",
           "find_recordings", "read_recording", "read_run", "read_runs", "DEFAULT_RULE",
           "RULES", "Rule", "Scorecard", "account", "level_score", "play_score", "score",
           "Replay", "replay", "game_table", "level_table", "run_table", "Comparison",
           "compare", "STEP_COLUMNS", "GAME_COLUMNS", "LEVEL_COLUMNS", "RUN_COLUMNS"]
