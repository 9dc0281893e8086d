"""The page of many runs: its sections and figures show the numbers of arcnb.repeats."""
from __future__ import annotations

import numpy as np
import pytest

from arcnb import repeats as R
from arcnb.plot import check_figure
from arcnb.report import sections as S


@pytest.fixture(scope="module")
def rep():
    # t1 always, t2 flips in A, t3 never; B solves t3 in one run
    solved = np.array([[1, 1, 1, 1],
                       [1, 0, 1, 1],
                       [0, 0, 0, 1]], dtype=float)
    return R.analyse(solved, [0, 1, 2], ["t1", "t2", "t3"],
                     ["A-seed1", "A-seed2", "B-seed1", "B-seed2"], ["A", "A", "B", "B"],
                     n_boot=50)


def test_the_page_lists_the_sections():
    assert S.REPEATS == [S.RepeatsConfigs, S.RepeatsFlips, S.RepeatsComparisons,
                         S.RepeatsUnion, S.Provenance]


def test_sections_hold_the_numbers(rep):
    configs = S.RepeatsConfigs.from_run(rep)
    assert configs.empty is None
    t = configs.tables["configs"].set_index("config")
    assert t.loc["A", "pass@2_mean"] == pytest.approx((2 / 3 + 1 / 3) / 2)
    assert t.loc["B", "pass@2_mean"] == pytest.approx((2 / 3 + 1) / 2)
    flips = S.RepeatsFlips.from_run(rep)
    assert flips.numbers["A"] == {"always_solved": 1, "never_solved": 1, "flipping": 1,
                                  "steady_partial": 0}
    assert flips.tables["flips"][["config", "task_id"]].values.tolist() == [["A", "t2"],
                                                                           ["B", "t3"]]
    comp = S.RepeatsComparisons.from_run(rep)
    assert comp.tables["comparisons"]["diff"].iloc[0] == pytest.approx(1 / 3)
    union = S.RepeatsUnion.from_run(rep)
    assert union.tables["union"]["union_pass@2"].tolist()[-1] == pytest.approx(1.0)
    assert union.tables["unique_solves"]["unique_solves"].tolist() == [0, 0, 0, 1]
    for sec in (configs, flips, comp, union):
        html = sec.to_html()
        assert sec.anchor in html and "Traceback" not in html


def test_figures_pass_the_figure_check(rep):
    import matplotlib.pyplot as plt

    names = []
    for section in S.REPEATS:
        sec = section.from_run(rep)
        for spec in sec.figures():
            names.append(spec.name)
            fig = sec.figure(spec.name)
            assert check_figure(fig, tight=True) == [], spec.name
            plt.close(fig)
    assert names == ["seed_spread", "solve_matrix", "winners_curse", "union_coverage"]
    # at a paper's one- and two-column widths
    for width in ("column", "page"):
        for section in S.REPEATS:
            sec = section.from_run(rep, S.Options(width=width))
            for spec in sec.figures():
                fig = sec.figure(spec.name)
                assert check_figure(fig) == [], (width, spec.name, check_figure(fig))
                plt.close(fig)
    ax = S.RepeatsConfigs.from_run(rep).plot()
    from matplotlib.collections import PathCollection

    # one point per run: A 2/3, 1/3; B 2/3, 1
    points = np.concatenate([c.get_offsets() for c in ax.collections
                             if isinstance(c, PathCollection)])
    assert sorted(points[:, 1].tolist()) == pytest.approx(sorted([2 / 3, 1 / 3, 2 / 3, 1.0]))
    plt.close(ax.figure)


def test_winners_curse_figure_draws_the_numbers(rep):
    import matplotlib.pyplot as plt

    ax = S.RepeatsComparisons.from_run(rep).plot()
    heights = [p.get_height() for p in ax.patches]
    curse = rep.summary["winners_curse"]
    want = [curse[c][k] for k in ("public", "private", "mean") for c in ("A", "B")]
    assert heights == pytest.approx(want)
    # A: the mean of t1 1, t2 1/2, t3 0 over its two runs
    assert curse["A"]["mean"] == pytest.approx(0.5)
    plt.close(ax.figure)


def test_union_section_shows_the_ensembles_and_the_held_out_choice():
    # three tasks, runs r1 = 100, r2 = 001, an ensemble E = 111; halves of one public
    # task (C(3, 1) = 3), candidates r1, r2, E, the first on ties:
    # {t1}: r1 (1, tied with E) -> private 0; {t2}: E -> 1; {t3}: r2 -> 0
    solved = np.array([[1, 0], [0, 0], [0, 1]], dtype=float)
    rep = R.analyse(solved, [0, 1, 2], ["t1", "t2", "t3"], ["r1", "r2"], ["c", "c"],
                    n_boot=50, ensembles=[{"name": "c", "runs": ["r1", "r2"],
                                           "solved": np.ones(3)}])
    sec = S.RepeatsUnion.from_run(rep)
    assert sec.tables["ensembles"].values.tolist() == [["c", 2, 1.0, 1.0, 1.0]]
    html = sec.to_html()
    assert "most often the run r1, 33%" in html
    assert "public pass@2 1.0000, private 0.3333" in html
    # runs alone: {t1} r1 -> 0; {t2} r1 (first on ties) -> (1 + 0)/2; {t3} r2 -> 0
    assert "the best run alone chosen the same way: private 0.1667" in html


def test_configs_section_shows_graded_metrics_in_their_own_table():
    solved = np.array([[1, 0], [0, 0]], dtype=float)
    cell = np.array([[1.0, 0.5], [0.25, np.nan]])
    rep = R.analyse(solved, [0, 1], ["t1", "t2"], ["r1", "r2"], ["c", "c"], n_boot=50,
                    graded={"cell_accuracy": cell})
    sec = S.RepeatsConfigs.from_run(rep)
    row = sec.tables["graded"].iloc[0]
    # r1: (1 + .25) / 2 outputs; r2: .5 / 1 output; mean .5625, SD of .625 and .5
    assert (row["config"], row["metric"]) == ("c", "cell_accuracy")
    assert row["mean"] == pytest.approx(0.5625)
    assert row["sd"] == pytest.approx(np.std([0.625, 0.5], ddof=1))
    assert (row["min"], row["max"]) == pytest.approx((0.5, 0.625))
    assert "cell_accuracy_mean" not in sec.tables["configs"]
    assert "arcnb-repeats-graded" in sec.to_html()
    assert rep.runs.set_index("run")["cell_accuracy"].tolist() == pytest.approx([0.625, 0.5])


def test_a_seed_is_shown_as_the_whole_number_it_is():
    """The runs table's seed column holds whole numbers (1, not 1.0000), missing for a
    run without a seed."""
    import re

    solved = np.array([[1, 0, 1], [0, 0, 1]], dtype=float)
    rep = R.analyse(solved, [0, 1], ["t1", "t2"], ["A-seed1", "A-seed2", "B"],
                    ["A", "A", "B"], seeds=[1, 2, None], n_boot=20)
    assert rep.runs["seed"].tolist()[:2] == [1, 2]
    html = S.RepeatsConfigs.from_run(rep).to_html()
    runs = html[html.index("arcnb-repeats-runs"):].split("</table>")[0]
    col = re.findall(r"<th>([^<]*)</th>", runs).index("seed")
    seeds = [re.findall(r"<td[^>]*>([^<]*)</td>", row)[col]
             for row in re.findall(r"<tr>(.*?)</tr>", runs.split("<tbody>")[1], flags=re.S)]
    assert seeds == ["1", "2", "NaN"]


def test_untestable_comparisons_and_one_run_intervals_are_said_in_words():
    # X has one run, Y two: no interval over tasks and runs for X, no test of Y - X; the
    # tables hold numbers, NaN spelled as everywhere in the report
    solved = np.array([[1, 1, 0], [0, 1, 1], [1, 0, 1], [0, 0, 1]], dtype=float)
    rep = R.analyse(solved, [0, 1, 2, 3], ["t1", "t2", "t3", "t4"], ["x", "y1", "y2"],
                    ["X", "Y", "Y"], n_boot=50, n_splits=10)
    configs = S.RepeatsConfigs.from_run(rep)
    t = configs.tables["configs"].set_index("config")
    assert np.isnan(t.loc["X", "ci95_low"]) and not np.isnan(t.loc["Y", "ci95_low"])
    html = configs.to_html()
    assert "arcnb-repeats-one-run" in html and "No interval over tasks and runs for X" in html
    comp = S.RepeatsComparisons.from_run(rep)
    row = comp.tables["comparisons"].iloc[0]
    assert row["diff"] == pytest.approx(solved[:, 1:].mean() - solved[:, 0].mean())
    assert np.isnan(row["p"]) and np.isnan(row["mde80"])
    assert all(comp.tables["comparisons"][c].dtype == float
               for c in ("diff", "ci95_low", "ci95_high", "p", "mde80", "se"))
    html = comp.to_html()
    assert "arcnb-repeats-untested" in html and "two runs of each configuration" in html
    assert ">NaN<" in html and ">nan<" not in html and ">None<" not in html
