"""arcnb/report/sections: every section of the report, in-process, on five real runs
(the embedded default's example predictions, copy-the-input, a run that solves nothing,
an unscored run, a run with three attempts), checked against values computed here by
plain loops over the dataset's grids; every section's HTML escapes hostile task ids."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import arcnb
from arcnb.report import sections as S
from arcnb.resources import example

DATASET = "arc-agi-1:evaluation"
N_TASKS = 24  # the first tasks of the evaluation set: enough for every view, still fast
DS_FIRST = N_TASKS  # the module's dataset (conftest.py's ds)
OPTS = S.Options(n_boot=50, seed=0, gallery_size=6)


@pytest.fixture(scope="module")
def tasks_file(tmp_path_factory, ds):
    path = tmp_path_factory.mktemp("tasks") / "tasks.json"
    path.write_text(json.dumps(ds.task_ids))
    return path


def _open(tmp_path_factory, name, sub, tasks_file):
    path = tmp_path_factory.mktemp(name) / f"{name}.json"
    path.write_text(json.dumps(sub))
    return arcnb.open(str(path), dataset=DATASET, tasks=str(tasks_file), n_boot=50)


def _tasks(ds):
    return list(ds)


@pytest.fixture(scope="module")
def subs(ds):
    """Predictions built here, per test output, with what each attempt is."""
    rng = np.random.default_rng(7)
    out = {"copy": {}, "nothing": {}, "three": {}}
    for t in _tasks(ds):
        out["copy"][t.id] = [{"attempt_1": p.input.tolist(), "attempt_2": p.input.tolist()}
                             for p in t.test]
        out["nothing"][t.id] = [{"attempt_1": [[0]], "attempt_2": [[0]]} for _ in t.test]
        rows = []
        for p in t.test:
            where = int(rng.integers(0, 4))  # the right answer at attempt 1, 2, 3, or never
            wrong = [np.full_like(p.output, 1 + j).tolist() for j in range(3)]
            atts = [p.output.tolist() if j == where else wrong[j] for j in range(3)]
            rows.append({f"attempt_{j + 1}": a for j, a in enumerate(atts)})
        out["three"][t.id] = rows
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory, subs, tasks_file):
    return {
        "default": arcnb.open(str(example()), dataset=DATASET, tasks=str(tasks_file),
                              n_boot=50),
        "copy": _open(tmp_path_factory, "copy", subs["copy"], tasks_file),
        "nothing": _open(tmp_path_factory, "nothing", subs["nothing"], tasks_file),
        "three": _open(tmp_path_factory, "three", subs["three"], tasks_file),
    }


@pytest.fixture(scope="module")
def unscored(tmp_path_factory, ds):
    """A hidden test set: challenges without solutions, and predictions for it."""
    folder = tmp_path_factory.mktemp("hidden")
    tasks = _tasks(ds)[:5]
    ch = {t.id: {"train": [{"input": p.input.tolist(), "output": p.output.tolist()}
                           for p in t.train],
                 "test": [{"input": p.input.tolist()} for p in t.test]} for t in tasks}
    (folder / "hidden_challenges.json").write_text(json.dumps(ch))
    arcnb.evaluate.evaluate("copy-input", str(folder / "hidden_challenges.json"), folder / "run",
                            progress=False)
    return arcnb.open(str(folder / "run"))


# ----------------------------------------------------------------- naive references
def _attempts(sub, tid, i):
    row = sub[tid][i]
    return [np.asarray(row[k]) for k in sorted(row, key=lambda k: int(k.split("_")[1]))]


def _same(a, b):
    return a.shape == b.shape and bool((a == b).all())


def naive_pass(sub, tasks, k):
    per_task = []
    for t in tasks:
        per_task.append(np.mean([any(_same(a, p.output) for a in _attempts(sub, t.id, i)[:k])
                                 for i, p in enumerate(t.test)]))
    return float(np.mean(per_task))


def _example_sub():
    return json.loads(example().read_text())


# ------------------------------------------------------------------------ the tests
@pytest.mark.parametrize("name", ["default", "copy", "nothing", "three"])
def test_headline_and_pass_at_k_against_plain_loops(runs, subs, ds, name):
    sub = _example_sub() if name == "default" else subs[name]
    tasks = _tasks(ds)
    head = S.Headline.from_run(runs[name], OPTS)
    assert head.empty is None
    assert head.numbers["pass@2"] == pytest.approx(naive_pass(sub, tasks, 2))
    assert head.numbers["n_tasks"] == N_TASKS
    pk = S.PassAtK.from_run(runs[name], OPTS)
    for k in range(1, (3 if name == "three" else 2) + 1):
        assert pk.numbers[f"pass@{k}"] == pytest.approx(naive_pass(sub, tasks, k))


def test_three_attempts_hand_counted(runs, subs, ds):
    """pass@3 credits the third attempt; attempt 2's own share is counted here."""
    tasks = _tasks(ds)
    sub = subs["three"]
    n_first = n_second = n_out = 0
    for t in tasks:
        for i, p in enumerate(t.test):
            a = _attempts(sub, t.id, i)
            n_out += 1
            n_first += _same(a[0], p.output)
            n_second += (not _same(a[0], p.output)) and _same(a[1], p.output)
    sec = S.SecondAttempt.from_run(runs["three"], OPTS)
    assert sec.numbers["n_outputs"] == n_out
    assert sec.numbers["solved_attempt_1"] == n_first
    assert sec.numbers["solved_attempt_2_only"] == n_second
    assert sec.numbers["share_of_pass@2_from_attempt_2"] == pytest.approx(
        n_second / (n_first + n_second))
    counts = dict(zip(sec.tables["second_attempt"]["test outputs"],
                      sec.tables["second_attempt"]["count"]))
    assert counts["not solved within 2 attempts"] == n_out - n_first - n_second
    # three distinct candidates per output: the pool is shown, its coverage is the share
    # of outputs (per task) whose right answer is among the three attempts
    pool = S.CandidatePool.from_run(runs["three"], OPTS)
    assert pool.empty is None
    assert pool.numbers["coverage"] == pytest.approx(naive_pass(sub, tasks, 3))


def test_almost_works_and_failures_against_plain_loops(runs, ds):
    sub, tasks = _example_sub(), _tasks(ds)
    shape, near, failed = [], 0, 0
    for t in tasks:
        right = []
        for i, p in enumerate(t.test):
            a = _attempts(sub, t.id, i)
            right.append(a[0].shape == p.output.shape)
            solved = any(_same(x, p.output) for x in a[:2])
            failed += not solved
            shaped = [x for x in a[:2] if x.shape == p.output.shape]
            best = max((float((x == p.output).mean()) for x in shaped), default=0.0)
            near += (not solved) and best >= OPTS.near_miss
        shape.append(np.mean(right))
    sec = S.AlmostWorks.from_run(runs["default"], OPTS)
    assert sec.numbers["shape_accuracy"] == pytest.approx(float(np.mean(shape)))
    assert sec.numbers["n_near_miss"] == near
    fails = S.Failures.from_run(runs["default"], OPTS)
    assert fails.numbers["n_failures"] == failed
    assert fails.numbers["n_near_misses"] == near
    assert len(sec.tables["nearest_misses"]) == min(OPTS.gallery_size, failed)


def test_colours_against_plain_loops(runs, subs, ds):
    """Copy-the-input: per colour, the truth cells that the input already has in that
    colour, over the outputs whose input has the truth's shape."""
    tasks = _tasks(ds)
    right = np.zeros(10)
    total = np.zeros(10)
    for t in tasks:
        for p in t.test:
            if p.input.shape != p.output.shape:
                continue
            for c in range(10):
                m = p.output == c
                total[c] += m.sum()
                right[c] += (m & (p.input == c)).sum()
    col = S.Colors.from_run(runs["copy"], OPTS)
    acc = col.tables["color_accuracy"]
    by_colour = dict(zip(acc["color"], acc["accuracy"]))
    for c in range(10):
        want = right[c] / total[c] if total[c] else float("nan")
        got = by_colour[c]
        assert (np.isnan(want) and np.isnan(got)) or got == pytest.approx(want), c
    conf = col.tables["color_confusion"]
    assert int(np.asarray(conf).sum()) == int(total.sum())


def test_categories_and_grid_size_partition_the_outputs(runs, subs, ds):
    tasks = _tasks(ds)
    sub = subs["copy"]
    gs = S.GridSizeAndShape.from_run(runs["copy"], OPTS)
    table = gs.tables["grid_size"]
    groups = table[table["group"] != "(all)"]
    assert int(groups["n_outputs"].sum()) == sum(len(t.test) for t in tasks)
    for _, row in groups.iterrows():
        lo, hi = (int(x) for x in row["group"].split("-"))
        outs = [(t, i, p) for t in tasks for i, p in enumerate(t.test)
                if lo <= max(p.output.shape) <= hi]
        want = np.mean([_same(_attempts(sub, t.id, i)[0], p.output) for t, i, p in outs])
        assert row["pass@2_per_output"] == pytest.approx(want), row["group"]
    shapes = gs.tables["shape_change"]
    same = shapes[shapes["group"] == "same_shape"]
    n_same = sum(p.input.shape == p.output.shape for t in tasks for p in t.test)
    assert int(same["n_outputs"].sum()) == n_same
    cat = S.Categories.from_run(runs["copy"], OPTS)
    assert "structural" in cat.tables and "user" not in cat.tables


def test_references_score_copy_the_input_like_a_plain_loop(runs, subs, ds):
    ref = S.References.from_run(runs["nothing"], OPTS, references=["copy-input"])
    assert ref.empty is None
    t = ref.tables["references"]
    copy_row = t[t["run"] != t["run"].iloc[0]].iloc[0]
    assert copy_row["pass@2"] == pytest.approx(naive_pass(subs["copy"], _tasks(ds), 2))
    assert t["pass@2"].iloc[0] == 0.0
    assert S.References.from_run(runs["nothing"], OPTS).empty  # no references asked for


def test_a_run_that_solves_nothing(runs):
    run = runs["nothing"]
    assert S.Headline.from_run(run, OPTS).numbers["pass@2"] == 0.0
    sec = S.SecondAttempt.from_run(run, OPTS)
    assert sec.numbers["solved_attempt_1"] == 0 and np.isnan(
        sec.numbers["share_of_pass@2_from_attempt_2"])  # empty denominator: NaN, never 0
    assert "no output that attempt 1 misses" in sec.to_html()
    assert S.CandidatePool.from_run(run, OPTS).empty and S.CandidatePool.from_run(run, OPTS).to_html() == ""
    assert S.Cost.from_run(run, OPTS).empty.startswith("No cost")
    assert "arcnb-no-cost" in S.Cost.from_run(run, OPTS).to_html()


def test_an_unscored_run_says_so_in_every_section(unscored):
    assert not unscored.scored
    for cls in S.REPORT:
        sec = cls.from_run(unscored, OPTS)
        if cls.needs_truth:
            assert sec.empty == S.NO_TRUTH, cls.__name__
            html = sec.to_html()
            assert (html == "") if cls.optional else ("no truth" in html), cls.__name__
    only = S.PredictionsOnly.from_run(unscored, OPTS)
    assert only.empty is None and "arcnb-no-truth" in only.to_html()
    assert "data:image/png;base64," in only.to_html()
    assert "Predictions only" in S.Summary.from_run(unscored, OPTS).to_html()


def test_every_report_section_renders_with_headings_the_contents_link(runs):
    from arcnb.html import insert_contents

    sections = [cls.from_run(runs["three"], OPTS, references=["copy-input"]) for cls in S.REPORT]
    html = "<h1>r</h1>" + "".join(sec.to_html() for sec in sections)
    body = insert_contents(html)
    for sec in sections:
        cls = type(sec)
        # an optional section without its data (demonstration checks) renders nothing
        if cls.anchor and cls not in (S.TrainingOverlap, S.Cost, S.Probes) and not (
                cls.optional and sec.empty):
            assert f'href="#{cls.anchor}"' in body, cls.__name__
    from arcnb.html import check_self_contained

    check_self_contained(body)


def test_plot_returns_axes_and_files_are_written(runs, tmp_path):

    import matplotlib.pyplot as plt

    _, ax = plt.subplots()
    pk = S.PassAtK.from_run(runs["three"], OPTS)
    assert pk.plot(ax=ax) is ax
    plt.close("all")
    sec = S.Colors.from_run(runs["copy"], OPTS, figures_dir=tmp_path, formats=("png", "svg"))
    assert sorted(p.name for p in sec.written) == sorted(sec.files())
    assert all((tmp_path / n).stat().st_size > 0 for n in sec.files())
    with pytest.raises(arcnb.errors.ArcnbError, match="overwrite"):
        S.Colors.from_run(runs["copy"], OPTS, figures_dir=tmp_path, overwrite=False)
    with pytest.raises(arcnb.errors.ArcnbError, match="no figure"):
        S.Headline.from_run(runs["copy"], OPTS).plot()
    no_cost = S.Cost.from_run(runs["copy"], OPTS)
    with pytest.raises(arcnb.errors.ArcnbError, match="no figure .No cost"):
        no_cost.plot()
    assert no_cost.files() == []
    with pytest.raises(arcnb.errors.ArcnbError, match="has no figure 'x': it has color_accuracy"):
        sec.figure("x")



def test_from_run_computes_and_the_constructor_only_stores(runs, tmp_path):
    """A Display: ``from_run`` computes (and writes with figures_dir), ``__init__`` stores
    what it is given, ``plot`` keeps ``ax_`` / ``figure_``; a section never computed
    refuses to show itself and says to use from_run."""
    import matplotlib.pyplot as plt

    bare = S.Colors(runs["copy"], OPTS)
    assert bare.tables == {} and bare.numbers == {} and bare.empty is None
    assert bare.written == [] and not list(tmp_path.iterdir())
    assert "from_run" in repr(bare)
    for call in (bare.to_html, bare.plot, bare.files, bare._repr_html_):
        with pytest.raises(arcnb.errors.ParameterError,
                           match=r"never computed: build it with Colors\.from_run\(run, options\)"):
            call()
    with pytest.raises(arcnb.errors.ParameterError, match="from_run"):
        S.Cost(runs["copy"], OPTS).to_html()  # a section with a to_html of its own
    computed = S.Colors.from_run(runs["copy"], OPTS)
    stored = S.Colors(runs["copy"], OPTS, tables=computed.tables, numbers=computed.numbers)
    assert stored.to_html() == computed.to_html()  # what it is given, shown as computed
    assert S.Cost(runs["copy"], OPTS, empty="no cost here").to_html().count("no cost here") == 1
    ax = computed.plot()
    assert computed.ax_ is ax and computed.figure_ is ax.get_figure()
    _, mine = plt.subplots()
    assert computed.plot(ax=mine) is mine and computed.ax_ is mine
    plt.close("all")
    written = S.Colors.from_run(runs["copy"], OPTS, figures_dir=tmp_path)
    assert sorted(p.name for p in written.written) == sorted(written.files())


def test_tables_hold_numbers_and_text_is_made_when_shown():
    """The tables a section holds are numbers: the candidate checks' values and the
    probes' intervals are formatted in ``to_html`` only."""
    from arcnb.report.sections import candidates as SC
    from arcnb.report.sections import probes as SP

    t = pd.DataFrame([{"probe": "dihedral", "drop ci95 low": 0.1, "drop ci95 high": 0.25,
                       "consistency": 0.5},
                      {"probe": "colors", "drop ci95 low": float("nan"),
                       "drop ci95 high": float("nan"), "consistency": 1.0}])
    shown = SP.shown(t)
    assert list(shown.columns) == ["probe", "drop 95% interval", "consistency"]
    assert list(shown["drop 95% interval"]) == ["[0.100, 0.250]", "NaN"]
    sec = SC.CandidateChecks(None, S.Options(), tables={"verifier": pd.DataFrame(
        [{"number": "precision", "value": 0.5}, {"number": "recall", "value": float("nan")}])})
    assert sec.tables["verifier"]["value"].dtype == float
    sec.image = lambda name, alt="": ""  # no pool to draw: the table alone
    html = "".join(sec.body())
    assert ">0.5000<" in html and ">NaN<" in html


def _naive_several_outputs(sub, tasks):
    """Per task with two test outputs or more: (outputs, outputs right within 2 attempts),
    by a plain loop over the grids."""
    out = {}
    for t in tasks:
        if len(t.test) < 2:
            continue
        right = 0
        for i, p in enumerate(t.test):
            rows = sub.get(t.id, [])
            atts = rows[i] if i < len(rows) else {}
            firsts = [atts.get(f"attempt_{j}") for j in (1, 2)]
            right += any(a is not None and _same(np.asarray(a), p.output) for a in firsts)
        out[t.id] = (len(t.test), right)
    return out


@pytest.mark.parametrize("name", ["example", "three"])
def test_several_outputs_against_plain_loops(arc1_eval, tmp_path, name):
    """Tasks with several test outputs: all / some / none right and both scores, on the
    bundled example predictions over the whole evaluation set, and on three attempts per
    output over the tasks with several outputs (the right one at attempt 1, 2, 3 or
    never)."""
    full = arc1_eval
    if name == "example":
        run = arcnb.open(str(example()), dataset=DATASET, n_boot=50)
        sub, tasks = _example_sub(), list(full)
    else:
        rng = np.random.default_rng(3)
        tasks = [t for t in full if len(t.test) >= 2]
        sub = {t.id: [{f"attempt_{j + 1}": (p.output.tolist() if j == where else
                                            np.full_like(p.output, 1 + j).tolist())
                       for j in range(3)}
                      for p, where in zip(t.test, rng.integers(0, 4, len(t.test)))]
               for t in tasks}
        (tmp_path / "three.json").write_text(json.dumps(sub))
        (tmp_path / "tasks.json").write_text(json.dumps([t.id for t in tasks]))
        run = arcnb.open(str(tmp_path / "three.json"), dataset=DATASET,
                         tasks=str(tmp_path / "tasks.json"), n_boot=50)
    naive = _naive_several_outputs(sub, tasks)
    sec = S.SeveralOutputs.from_run(run, OPTS)
    assert naive, "the tasks have some with several test outputs"
    assert sec.empty is None
    n = sec.numbers
    assert n["n_tasks"] == len(naive) and n["n_tasks_all"] == len(tasks)
    assert n["n_outputs"] == sum(k for k, _ in naive.values())
    assert n["all_right"] == sum(r == k for k, r in naive.values())
    assert n["some_right"] == sum(0 < r < k for k, r in naive.values())
    assert n["none_right"] == sum(r == 0 for k, r in naive.values())
    assert n["pass@2"] == pytest.approx(np.mean([r / k for k, r in naive.values()]))
    assert n["pass@2_all_or_nothing"] == pytest.approx(np.mean([r == k for k, r in naive.values()]))
    by = sec.tables["by_outputs"].set_index("test outputs")
    for k in sorted({k for k, _ in naive.values()}):
        mine = [r for kk, r in naive.values() if kk == k]
        assert by.loc[k, "tasks"] == len(mine)
        assert by.loc[k, "all right"] == sum(r == k for r in mine)
        assert by.loc[k, "pass@2"] == pytest.approx(np.mean([r / k for r in mine]))
    if name == "three":  # every case is met
        assert min(n["all_right"], n["some_right"], n["none_right"]) > 0
    partly = {tid for tid, (k, r) in naive.items() if 0 < r < k}
    assert set(sec.tables["partly_solved"]["task_id"]) == partly
    assert all(pd.api.types.is_numeric_dtype(t[c]) for t in sec.tables.values()
               for c in t.columns if c != "task_id")  # numbers, formatted when shown
    html = sec.to_html()
    assert "arcnb-section-several-outputs" in html
    assert f"{n['n_tasks']} of {n['n_tasks_all']} tasks have several test outputs" in html
    if name == "example":  # the official estimator on the whole set: the headline agrees
        s = run.results.summary
        n_all = len(tasks)
        gap = (n["pass@2"] - n["pass@2_all_or_nothing"]) * n["n_tasks"] / n_all
        assert s["pass@2"] - s["pass@2_all_or_nothing"] == pytest.approx(gap, abs=1e-12)


def test_several_outputs_is_left_out_without_such_tasks(runs, arc1_eval, tmp_path):
    full = arc1_eval
    single = [t.id for t in full if len(t.test) == 1][:3]
    tasks = tmp_path / "single.json"
    tasks.write_text(json.dumps(single))
    run = arcnb.open(str(example()), dataset=DATASET, tasks=str(tasks), n_boot=20)
    sec = S.SeveralOutputs.from_run(run, OPTS)
    assert sec.empty == "No task has several test outputs." and sec.to_html() == ""


HOSTILE_IDS = ["<script>alert(1)</script>", "a&b\"'<img src=//evil>", "rtl\u202egnp.exe"]


def test_hostile_task_ids_are_escaped_in_every_section(tmp_path, ds):
    """A dataset folder whose task ids are markup: every section's HTML shows them as
    text and loads nothing."""
    from arcnb.html import check_self_contained

    folder = tmp_path / "hostile"
    folder.mkdir()
    tasks = _tasks(ds)[:len(HOSTILE_IDS)]
    sub = {}
    for hid, t in zip(HOSTILE_IDS, tasks):
        doc = {"train": [{"input": p.input.tolist(), "output": p.output.tolist()}
                         for p in t.train],
               "test": [{"input": p.input.tolist(), "output": p.output.tolist()}
                        for p in t.test]}
        name = hid.replace("/", "_")
        (folder / f"{name}.json").write_text(json.dumps(doc))
        sub[name] = [{"attempt_1": np.zeros_like(p.output).tolist(),
                      "attempt_2": p.input.tolist()} for p in t.test]
    (tmp_path / "sub.json").write_text(json.dumps(sub))
    run = arcnb.open(str(tmp_path / "sub.json"), dataset=str(folder), n_boot=20)
    for cls in S.REPORT:
        html = cls.from_run(run, OPTS, references=["copy-input"]).to_html()
        assert "<script>alert" not in html and "<img src=//evil>" not in html, cls.__name__
        check_self_contained("<html><body>" + html + "</body></html>")
    near = S.AlmostWorks.from_run(run, OPTS).to_html()
    assert "&lt;script&gt;alert(1)&lt;_script&gt;" in near  # the id as text


def test_options_refuse_bad_values():
    for bad in ({"n_boot": 0}, {"gallery_size": -1}, {"near_miss": 1.5}, {"formats": ("gif",)}):
        with pytest.raises(arcnb.errors.ParameterError):
            S.Options(**bad)


def test_the_page_lists_are_the_one_definition():
    assert S.REPORT[0] is S.Summary and S.Provenance in S.REPORT
    assert all(issubclass(c, S.Section) for page in (S.REPORT, S.COMPARE, S.SWEEP, S.FIGURES)
               for c in page)
    assert Path(S.__file__).parent.name == "sections"


@pytest.mark.slow  # runs a notebook in a Jupyter kernel
def test_cell_times_name_the_kernel_setup_and_sections(tmp_path):
    """Where a report's time went, read from papermill's records of a notebook written
    here (two sections, a setup cell, the kernel's start)."""
    import nbformat

    from arcnb.report.notebooks import cell_times

    nb = nbformat.v4.new_notebook()
    nb.metadata["papermill"] = {"start_time": "2026-01-01T00:00:00+00:00"}
    cells = [("x: int = 1", ["parameters"], 0.01, "00:00:01"),
             ("from arcnb.report import sections as S\nrun = arcnb.open(source)\nS.Summary.from_run(run)", [],
              1.5, "00:00:02"),
             ("S.Colors.from_run(run, options)  # colours", [], 0.25, "00:00:04")]
    for src, tags, dur, start in cells:
        c = nbformat.v4.new_code_cell(src)
        c.metadata["tags"] = tags
        c.metadata["papermill"] = {"duration": dur, "start_time": f"2026-01-01T{start}+00:00"}
        nb.cells.append(c)
    path = tmp_path / "nb.ipynb"
    path.write_text(nbformat.writes(nb))
    assert cell_times(path) == [("kernel start", 1.0), ("setup and Summary", 1.5),
                                ("Colors", 0.25)]


# ------------------------------------------------- one provenance block on every page
def _block_rows(html: str) -> dict:
    import re

    return dict(re.findall(r"<th class='arcnb-text'>([^<]*)</th><td class='arcnb-text' "
                           r"data-key='[^']*'>([^<]*)</td>", html))


def test_every_page_and_summary_names_dataset_version_filter_arcnb_and_rules(runs, ds, tmp_path,
                                                                          tasks_file):
    """The run report, a comparison, many runs, a candidate pool, a sweep summary and
    ARC-AGI-3 scorecards each carry the same block: the dataset (an ``arc-agi`` name),
    its version, the task filter, the arcnb version and the rules they follow."""
    from arcnb.compare import compare
    from arcnb.repeats import repeats
    from arcnb.arc3 import score as arc3_score
    from arcnb.report.sections import arc3 as A
    from arcnb.candidates import candidates
    from arcnb.resources import examples_dir

    full = ds
    want = {"dataset": DATASET, "dataset_version": full.version,
            "arcnb_version": arcnb.__version__}
    cmp = compare([runs["copy"], runs["three"]], n_boot=20)
    rep = repeats([runs["copy"].run_dir or _write(runs["copy"], tmp_path / "a"),
                   _write(runs["three"], tmp_path / "b")], dataset=DATASET,
                  tasks=str(tasks_file), n_boot=20)
    pool = candidates(DATASET, runs["three"].predictions, tasks=str(tasks_file), n_boot=20)
    for what in (cmp.summary, rep.summary, pool.summary):
        block = what["provenance"]
        for k, v in want.items():
            assert block[k] == v, (k, block)
        assert block["task_filter"] and block["rules"]["scoring"] == "arc-prize/ranked"
    for what in (rep.summary, pool.summary):  # the vote's tie rule, named
        assert what["provenance"]["rules"]["tie"] == "random"
        json.dumps(block)  # plain JSON
    # the pages: the block's rows as the reader sees them
    for data, page in ((runs["copy"], S.REPORT), (cmp, S.COMPARE), (rep, S.REPEATS)):
        assert page[-1] is S.Provenance
        rows = _block_rows(S.Provenance.from_run(data, OPTS).to_html())
        assert DATASET in rows.get("dataset", rows.get("dataset_name", "")), rows
        assert rows.get("arcnb_version") == arcnb.__version__, rows
        assert rows["scoring rule"] == "arc-prize/ranked", rows
    root = examples_dir() / "arc3"
    card = arc3_score([root / "agent-a"], root / "baselines.csv", n_boot=20)
    assert card.summary()["provenance"]["rules"] == {"arc3": card.rule.name}
    assert A.ARC3[-1] is S.Provenance
    rows = _block_rows(S.Provenance.from_run(A.ScoredRuns([card]), OPTS).to_html())
    assert rows["arc3 rule"] == card.rule.name and rows["arcnb_version"] == arcnb.__version__


def _write(run, folder):
    run.write(folder)
    return folder


def test_a_section_given_a_path_opens_it_through_the_front_door(tmp_path, runs):
    """A path instead of a run is opened by ``arcnb.open`` (it was an AttributeError),
    a sweep folder by ``open_sweep``; a section of data a path alone does not make (a
    comparison, many runs) says in one line what it is built from."""
    from arcnb.errors import ParameterError

    folder = tmp_path / "run"
    runs["three"].write(folder)
    by_path = S.PassAtK.from_run(str(folder), OPTS)
    by_run = S.PassAtK.from_run(runs["three"], OPTS)
    def exact(numbers):  # the intervals follow the run's own resamples
        return {k: v for k, v in numbers.items() if "ci" not in k}

    assert exact(by_path.numbers) == exact(by_run.numbers) != {}
    assert by_path.tables.keys() == by_run.tables.keys()
    for cls, words in ((S.CompareRuns, "a comparison"), (S.RepeatsConfigs, "many runs")):
        with pytest.raises(ParameterError) as e:
            cls.from_run(str(folder), OPTS)
        assert words in str(e.value) and "\n" not in str(e.value)


def test_one_spelling_per_public_section_name():
    """The colour section and its tables share one spelling (``Colors``,
    ``color_accuracy``, ...): every public name of the sections module spells colour
    the way the metrics and the plots do."""
    import re

    names = [n for n in S.__all__ if re.search("colou?r", n, re.I)]
    assert names == ["Colors"]
    sec_tables = S.Colors.compute.__code__.co_consts
    assert not any(isinstance(c, str) and "colour" in c for c in sec_tables)


def test_the_provenance_writes_no_python_none(runs):
    """A provenance value that is absent (no task filter, no commit) is written as the
    compact line writes it, ``none``, never Python's ``None``."""
    html = S.Provenance.from_run(runs["copy"], OPTS).to_html()
    assert ">None<" not in html


def _notebook_sections(name: str) -> list[str]:
    """The sections a shipped notebook shows, in its cells' order."""
    import json as _json
    import re as _re

    from arcnb import resources

    cells = _json.loads(resources.notebook(name).read_text())["cells"]
    found = []
    for cell in cells:
        if cell["cell_type"] == "code":
            found += _re.findall(r"\bS\.([A-Z]\w+)\.from_run\(", "".join(cell["source"]))
    return found


@pytest.mark.parametrize("page, notebook", [("EVALUATE", "evaluate"), ("COMPARE", "compare"),
                                            ("SWEEP", "sweep"), ("FIGURES", "figures")])
def test_each_page_list_is_what_its_notebook_shows(page, notebook):
    """A page list is the one definition of its page: the shipped notebook shows exactly
    its sections, in its order (the evaluate page once listed two of them the other way
    round)."""
    assert _notebook_sections(notebook) == [c.__name__ for c in S.PAGES[page]]


def test_the_report_and_arc3_notebooks_show_their_pages():
    from arcnb.report.sections import arc3 as A

    shown = _notebook_sections("report")
    report = [c.__name__ for c in S.REPORT]
    assert [c for c in shown if c in report] == report
    assert set(shown) == set(report) | {c.__name__ for c in S.REPORT_NO_TRUTH}
    assert _notebook_sections("arc3") == [c.__name__ for c in A.ARC3]
