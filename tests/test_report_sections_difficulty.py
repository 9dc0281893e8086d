"""The Difficulty section of the comparison page: its tables against plain loops over
the runs' outputs, its figures checked, and its words when nothing was fitted."""

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from arcnb.compare import compare  # noqa: E402
from arcnb.data import load_dataset  # noqa: E402
from arcnb.plot.check import check_figure  # noqa: E402
from arcnb.report import sections as S  # noqa: E402
from arcnb.scoring import score  # noqa: E402
from submissions import synthetic_submission  # noqa: E402


@pytest.fixture(scope="module")
def runs():
    ds = load_dataset("arc-agi-1:evaluation")
    ds = ds.select(ds.task_ids[:50])
    return [score(ds, synthetic_submission(ds, "mixed", s)) for s in range(5)]


def test_section_numbers_match_plain_loops(runs):
    cmp = compare(runs, labels=[f"s{i}" for i in range(5)], n_boot=20, taxonomy=None)
    sec = S.Difficulty.from_run(cmp, gallery_size=6)
    assert sec.empty is None
    d = cmp.difficulty
    prob = d.fit.probability()
    keys = list(zip(d.outputs["task_id"], d.outputs["test_index"]))
    for i, r in enumerate(cmp.runs):  # surprises and accuracy by a loop over outputs
        solved = {(t, j): bool(v) for t, j, v in zip(r.results.outputs["task_id"],
                                                    r.results.outputs["test_index"],
                                                    r.results.outputs["solved@2"])}
        want = sorted(f"{t}:{j}" for k, (t, j) in enumerate(keys)
                      if not solved[(t, j)] and prob[i, k] >= 0.8)
        assert sorted(d.summary()["surprises"][r.label]) == want
        row = sec.tables["abilities"].set_index("system").loc[r.label]
        assert row["accuracy"] == pytest.approx(np.mean(list(solved.values())))
        assert row["n_surprises"] == len(want)
    # the hardest tasks first
    assert sec.tables["tasks"]["difficulty"].is_monotonic_decreasing
    for f in sec.figures():
        fig = sec.figure(f.name)
        assert check_figure(fig) == [], f.name
    html = sec.to_html()
    assert "arcnb-section-difficulty" in html and "prior" in html
    assert S.Difficulty in S.COMPARE


def test_section_says_when_no_model_was_fitted(runs):
    cmp = compare(runs[:2], n_boot=20, taxonomy=None, difficulty=None)
    sec = S.Difficulty.from_run(cmp)
    assert sec.empty and "none" in sec.empty
    assert "difficulty" not in cmp.summary
