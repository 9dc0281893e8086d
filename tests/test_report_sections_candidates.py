"""The report sections of a candidate pool with a budget axis or demonstration checks
(arcnb/report/sections/candidates.py): shown only when the pool has the fields, their
numbers those of hand-counted pools."""
from __future__ import annotations

import numpy as np
import pytest

from arcnb.candidates import candidates
from arcnb.report import sections as S
from arcnb.report.sections import candidates as SC

A, B = "00576224", "12997ef3"  # 1 and 2 test outputs
DS_TASKS = [A, B]  # the module's dataset (conftest.py's ds)


def wrong(grid):
    return ((np.asarray(grid) + 1) % 10).tolist()


def _pool(ds, fields: bool):
    """A: wrong at samples 0 and 1 (steps 1, 2), right at sample 2 (step 3); B's first
    output: right at sample 0 only; B's second: nothing."""
    ta, tb = ds[A].test[0].output, ds[B].test[0].output
    extra = (lambda d: d) if fields else (lambda d: {"grid": d["grid"], "votes": d.get(
        "votes", len(d.get("sample", [0])))})
    return {"arcnb_candidates": 1, "tasks": {
        A: [[extra({"grid": wrong(ta), "sample": [0, 1], "step": [1, 2],
                    "passes_train": True}),
             extra({"grid": ta.tolist(), "sample": [2], "step": [3], "passes_train": True}),
             extra({"grid": wrong(wrong(ta)), "sample": [3], "step": [3],
                    "passes_train": False})]],
        B: [[extra({"grid": tb.tolist(), "sample": [0], "step": [1], "passes_train": False})],
            []]}}


@pytest.fixture
def with_pool(ds, monkeypatch):
    def use(fields: bool):
        a = candidates(ds, _pool(ds, fields), taxonomy=None, n_boot=20)
        monkeypatch.setattr(SC, "candidate_pool", lambda run, **k: a)
        return a
    return use


def test_budget_and_checks_against_hand_counts(with_pool):
    with_pool(True)
    budget = S.CandidateBudget.from_run(None)
    t = budget.tables["anytime"].set_index("n")
    # A: 4 draws, the truth once -> n=1: 1/4; B's first output: always right; B's second 0
    assert t.loc[1, "coverage"] == pytest.approx((1 / 4 + (1 + 0) / 2) / 2)
    assert t.loc[1, "pass@1"] == pytest.approx((1 / 4 + 1 / 2) / 2)
    # all 4 draws of A: the wrong grid has 2 votes -> A wrong; B 1/2
    assert t.loc[4, "pass@1"] == pytest.approx(0.5 / 2)
    assert budget.numbers["stability"]["n_lost"] == 0
    assert budget.numbers["first_right_step"] == {"1": 1, "3": 1, "never": 1}
    html = budget.to_html()
    assert "12. What more draws buy" in html and "data:image/png" in html
    checks = S.CandidateChecks.from_run(None)
    v = checks.numbers["verifier"]
    # passers: A wrong, A right -> precision 1/2; right: A (passes), B (fails) -> recall 1/2
    assert v["precision"] == 0.5 and v["recall"] == 0.5 and v["overfit_rate"] == 0.5
    assert "13. Passing the demonstrations" in checks.to_html()


def test_sections_are_silent_without_the_fields(with_pool):
    with_pool(False)
    for cls in (S.CandidateBudget, S.CandidateChecks):
        section = cls.from_run(None)
        assert section.empty and section.to_html() == "" and section.figures() == []
    assert S.CandidateBudget in S.REPORT and S.CandidateChecks in S.REPORT


def test_a_confidence_without_checks_shows_no_demonstration_section(ds, monkeypatch):
    # a pool with a confidence score and no passes_train: no "Passing the demonstrations"
    # section; the confidence's calibration is in the candidate pool's section, in words
    # that name the score once
    ta = ds[A].test[0].output
    pool = {"arcnb_candidates": 1, "tasks": {A: [[
        {"grid": wrong(ta), "votes": 2, "scores": {"confidence": 0.4}},
        {"grid": ta.tolist(), "votes": 1, "scores": {"confidence": 0.9}},
        {"grid": wrong(wrong(ta)), "votes": 1, "scores": {"confidence": 0.1}}]]}}
    a = candidates(ds, pool, taxonomy=None, n_boot=20)
    assert "confidence" in a.summary and "verifier" not in a.summary
    monkeypatch.setattr(SC, "candidate_pool", lambda run, **k: a)
    checks = S.CandidateChecks.from_run(None)
    assert checks.empty and checks.to_html() == ""
    from arcnb.report.candidates import candidates_html, section_numbers
    html = candidates_html(a, "11. Candidate pool")
    assert "Calibration of the score confidence of the top candidate" in html
    assert "confidence confidence" not in html and "11. Candidate pool" in html
    numbers = section_numbers(None, S.Options(), a)
    assert numbers == {"CandidatePool": 11, "Provenance": 12}
    assert section_numbers(None, S.Options(), None) == {"Provenance": 11}
