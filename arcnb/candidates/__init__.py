"""Candidate pools: what a model found versus what it picked.

Strong ARC systems produce many answers per test output and pick two (augmentation
voting, product-of-experts re-ranking, sampling an LLM many times, program search).
This module reads those pools as data and measures them against a dataset's truth.

Candidates as data
    Per test output: the *distinct* candidate grids, each with its vote count (how many
    samples gave it), its first appearance (the position of the first sample that gave
    it) and any named numeric scores (``logprob``, ``q_halt``, ...). Read from

    * any submission file or benchmarking-harness run folder (:func:`load_candidates`):
      every attempt is one sample (its ``sample`` index the attempt's place), identical
      grids merge and their count is their votes;
    * a candidates file, JSON or Parquet (the format is below; :func:`write_candidates`
      writes it);
    * the program search (:func:`arcnb.baselines.program_search_candidates`): every
      consistent program's output is a candidate, simplest program first.

    Malformed attempts (None, ragged, values outside 0-9) are never candidates, but
    they keep their place in the attempt order.

Ranking rules (:data:`BUILTIN_RULES` plus every named score)
    ``order``: the attempts as given; a candidate's rank is the attempt number of its
    first appearance, so duplicates and malformed attempts use up places exactly as in
    :func:`arcnb.scoring.score` (pass@K under ``order`` is ``arcnb score``'s pass@K).
    ``votes``: distinct grids by vote count, ties under the tie rule (below).
    A named score: higher first (unless the file lists it as lower-is-better), ties by
    first appearance, candidates without the score last. ``product_of_experts``: the
    sum of a candidate's per-view log-probabilities (``view_logprobs``), higher first.
    ``passes_train`` (a pool with that field): candidates that pass the demonstrations
    first, then votes, then ``train_score``. ``votes_then_<score>`` (a pool with the
    confidence ``q_halt``, else ``confidence``; or asked for with any score): votes, then
    the score.

Ties (``tie=``, ``--tie``; :mod:`arcnb.voting`, the one home of majority voting)
    The rules that count votes (``votes``, ``passes_train``, ``votes_then_<score>``)
    break ties between grids equal on every key of the rule by one rule, named in the
    output (``summary["tie"]``, ``rankings[rule]["tie"]``, ``anytime["tie"]``):
    ``random`` (the default: uniformly at random; pass@K is the exact expectation over
    the tie-breaking, ``rank_of_correct`` counts expected outputs) or ``first`` (first
    appearance: the first draw along the budget axis, then the listing). The anytime
    curves break ties within each subset by the same rule, so at the pool's full size
    the curve of ``votes`` is that rule's pass@1 and pass@2 on the whole pool.

Numbers
    The dataset is the denominator: a task or output without candidates counts as not
    covered, its right answer as ``absent``. ``coverage``: per task, the fraction of its
    test outputs whose truth is among the candidates, then the mean over tasks (like
    pass@K); ``coverage_per_output``: over all test outputs. Per rule: ``pass@1``,
    ``pass@2`` and ``selection_gap`` = coverage - pass@2 (what a perfect selector would
    add). ``rank_of_correct``: test outputs counted by the rank of the right candidate
    under the first rule asked for (``"1"``, ``"2"``, ..., ``"absent"``; under random
    ties a tied right candidate counts ``1/t`` at each of the ``t`` tied ranks).
    ``distinct_mean``: distinct candidates per test output (0 where there are none);
    ``single_candidate_share``: the fraction of test outputs with exactly one distinct
    candidate. ``ece``: expected calibration error of the top candidate's vote share
    (see :func:`calibration`). Every rate comes with a 95 % bootstrap interval over
    tasks (:mod:`arcnb.stats`), drawn with ``n_boot`` resamples from ``seed``.

Budgets, refinement steps, verifier (the method in ``arcnb/candidates/anytime.py``)
    With per-draw ``sample``, ``view``, ``step`` or ``iteration``: ``anytime`` (pass@1,
    pass@2 and coverage for every number of draws ``n``, the exact expectation over
    subsets of ``n`` draws, with a bootstrap band over tasks), ``anytime_by_rule``,
    ``voting_gain``; with ``step`` (or ``iteration``): ``first_right_step``,
    ``stability`` and ``steps``; with ``passes_train``: ``verifier`` (precision, recall,
    overfit rate, coverage among passers against all); with a confidence score:
    ``confidence`` (its reliability and ECE).

Candidates file, JSON::

    {"arcnb_candidates": 1,
     "lower_is_better": ["loss"],
     "tasks": {"<task_id>": [              # one list per test input, in the task's order
        [{"grid": [[0, 1], [1, 0]], "votes": 5, "scores": {"logprob": -0.3, "loss": 1.2},
          "view_logprobs": [-0.1, -0.2]},
         ...],                             # candidates in the order they came
        ...]}}

``votes`` defaults to 1, ``scores``, ``view_logprobs`` and ``lower_is_better`` are
optional. Optional per candidate: the budget axes ``sample``, ``view``, ``step``,
``iteration`` (an integer for every draw of the candidate, or a list with one integer
per draw, whose length is then its votes: a grid drawn in several samples is one
candidate whose ``sample`` is a list), ``passes_train`` (true / false: it reproduces
every demonstration pair) and ``train_score`` (in [0, 1]). The same grid listed twice
for one output is merged: the votes add up, the first listing's place and scores are
kept, it passes the demonstrations when one listing does (its best ``train_score``).

Candidates file, Parquet (for large pools): one row per candidate, in the order they
came, columns ``task_id`` (string), ``test_index`` (integer), ``height``, ``width``
(integers) and ``cells`` (binary: the ``height * width`` cell values row by row, one
byte each), optional ``votes`` (integer) and ``view_logprobs`` (list of floats), and any
other numeric column is a named score, except the integer columns ``sample``,
``view``, ``step``, ``iteration`` (one row is one draw; nulls allowed), the boolean
``passes_train`` and ``train_score`` (numbers in [0, 1]). The schema metadata key ``arcnb_candidates``
holds ``{"version": 1, "lower_is_better": [...]}``.
"""
from __future__ import annotations

from ..callable_module import callable_module
from .analysis import CANDIDATE_DEFINITIONS, CandidateAnalysis, calibration, candidates
from .files import (BUILTIN_RULES, FORMAT_KEY, MAX_VOTES, PRODUCT_OF_EXPERTS, CandidateSet,
                    candidates_bytes, grid_codes, load_candidates, write_candidates)

__all__ = ["CandidateSet", "CandidateAnalysis", "candidates", "load_candidates",
           "write_candidates", "candidates_bytes", "calibration", "grid_codes",
           "BUILTIN_RULES", "PRODUCT_OF_EXPERTS", "CANDIDATE_DEFINITIONS", "FORMAT_KEY"]

# ``arcnb.candidates`` is this package and, called, candidates(): both
# ``arcnb.candidates(dataset, predictions)`` and ``arcnb.candidates.load_candidates`` work
callable_module(__name__, candidates)
