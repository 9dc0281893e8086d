"""The probes' report section (arcnb.report.sections.probes), on runs evaluated here:
a model keyed on the task id (its drops are known by hand) and copy-the-input."""
from __future__ import annotations


import numpy as np  # noqa: E402
import pytest  # noqa: E402

from arcnb.evaluate import evaluate  # noqa: E402
from arcnb.models import ModelAdapter  # noqa: E402
from arcnb.report import sections as S  # noqa: E402
from test_probes import IdMemoriser  # noqa: E402

IDS = ["00576224", "009d5c81", "12997ef3", "1d398264"]
DS_TASKS = IDS  # the module's dataset (conftest.py's ds)


@pytest.fixture(scope="module")
def runs(ds, tmp_path_factory):
    root = tmp_path_factory.mktemp("probes")
    keyed = evaluate(ModelAdapter(IdMemoriser(ds)), ds, root / "keyed",
                     probe=["dihedral", "task-id"], proxy=True, device="cpu", n_boot=50)
    plain = evaluate("copy-input", ds, root / "plain", device="cpu", n_boot=50)
    return keyed, plain


def test_the_section_is_left_out_for_a_run_without_probes(runs):
    section = S.Probes.from_run(runs[1])
    assert section.empty is not None
    assert section.to_html() == ""
    assert S.Probes in S.REPORT and S.Probes in S.EVALUATE


def test_the_drops_table_and_the_lost_outputs(runs, ds):
    section = S.Probes.from_run(runs[0])
    assert section.empty is None
    t = section.tables["probes"]
    # in the order of the probes' names, each once
    assert list(t["probe"]) == ["dihedral", "task-id-blank", "task-id-random"]
    # by hand: the model answers by task id whatever the grids, so a rotated task gets
    # the stored output mapped back, right exactly when it is symmetric under the view;
    # without its own id it answers another task's output or the input: never right
    from arcnb.augment import inverse_dihedral

    n_right, n = 0, 0
    for task in ds:
        per_view = []
        for tr in range(1, 8):
            right = [np.array_equal(inverse_dihedral(p.output, tr), p.output) for p in task.test]
            per_view.append(np.mean(right))
        n_right += np.mean(per_view)
        n += 1
    row = t.set_index("probe")
    assert row.loc["dihedral", "pass@2"] == pytest.approx(n_right / n)
    assert row.loc["task-id-blank", "drop"] == 1.0
    assert row.loc["task-id-random", "pass@2"] == 0.0
    n_outputs = sum(len(task.test) for task in ds)
    assert len(section.tables["lost"]) == n_outputs  # every output is lost somewhere
    assert set(section.tables["categories"]["probe"]) == set(row.index)


def test_the_figures_and_the_page(runs):
    section = S.Probes.from_run(runs[0], gallery_size=4)
    names = [f.name for f in section.figures()]
    assert names == ["probe_drops", "probe_scores", "probe_consistency", "probe_lost",
                     "proxy_vs_true"]
    html = section.to_html()
    assert "Memorisation: largest drop under task-id-blank" in html
    assert html.count("<img") == len(names)
    assert "leave-one-demonstration-out" in html
