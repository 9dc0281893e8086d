"""``arcnb arc3 report``: the shipped notebook ``arc3.ipynb`` executed with papermill into
one self-contained HTML page, the runs' tables and replays beside it; the parameters the
command hands it are those it declares; its one-line refusals. The notebook executes
once here, on its defaults (the bundled example)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import _arc3_game as G
import _report_fixture as F
from _cli import one_line_refusal, run_arcnb
from arcnb.report import arc3 as R
from arcnb.report.arc3 import build_report
from arcnb.errors import OutputExistsError, ParameterError, RecordingError
from arcnb.html import check_self_contained
from arcnb.report.notebooks import NOTEBOOKS, notebook_path

pytestmark = pytest.mark.slow  # runs the arc3 notebook in a Jupyter kernel


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("arc3report")
    base = G.scenario(tmp / "agent-a")
    G.second_agent(tmp / "agent-b", reasoning=lambda k: f"<b>step</b> {k} \u202e")
    G.baselines_csv(tmp / "baselines.csv", base)
    return tmp


def test_the_report_of_the_bundled_example(tmp_path_factory):
    """No run and no baselines: the notebook on its defaults, the bundled example's two
    agents (agent-a: the tests' scenario, 31.88; agent-b: 18.46). Built once per session
    (its notebook is also the docs' arc3 page)."""
    res = F.arc3_default_report(tmp_path_factory)
    out = Path(res["out"])
    assert res["returncode"] == 0, res["stderr"][-3000:]
    page = (out / "report.html").read_text()
    check_self_contained(page)
    assert "<script" not in page.lower()
    for title in ("Scores", "Games", "Levels", "Recorder faults", "Frames and clicks",
                  "Comparison", "Files and replays"):
        assert f">{title}<" in page, title
    assert "31.88" in page and "18.46" in page
    assert "baselines_missing" in page and "no_frames" in page
    assert "Key frames of tw01-0a1b2c3d-aaaa-1.jsonl" in page
    assert len(re.findall(r"<img[^>]+src=\"?'?data:image/png", page)) >= 6
    # the notebook ran on its own defaults: the example is resolved inside arcnb
    nb = json.loads((out / "arc3.ipynb").read_text())
    assert nb["metadata"]["papermill"]["parameters"]["runs"] == []
    assert nb["metadata"]["papermill"]["parameters"]["baselines"] == ""
    errors = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c["outputs"]
              if o["output_type"] == "error"]
    assert not errors
    assert json.loads((out / "agent-b" / "summary.json").read_text())["n_games"] == 2
    replays = sorted(p.name for p in (out / "replays" / "agent-b").glob("*.html"))
    assert replays == ["tw01-0a1b2c3d-b0.jsonl.html", "tw02-1b2c3d4e-b1.jsonl.html"]
    assert len(list((out / "replays" / "agent-a").glob("*.html"))) == 5
    # a second time without --overwrite: one line
    again = run_arcnb("arc3", "report", "--out", out)
    one_line_refusal(again.returncode, again.stderr, "refusing to overwrite")


class _Stop(Exception):
    pass


def _declared() -> dict:
    import papermill as pm

    return pm.inspect_notebook(str(notebook_path("arc3")))


def _handed(monkeypatch, *args, **kw) -> dict:
    """The notebook and parameters ``build_report`` hands ``run_notebook`` (stopped
    there: the notebook is not executed)."""
    seen = {}

    def fake_run(notebook, output, parameters=None, **kw):
        seen.update(notebook=str(notebook), parameters=dict(parameters or {}))
        raise _Stop

    monkeypatch.setattr(R, "run_notebook", fake_run)
    with pytest.raises(_Stop):
        build_report(*args, **kw)
    return seen


_TYPES = {"str": str, "int": int, "float": (int, float), "bool": bool, "list": list}


def test_the_parameters_handed_to_the_notebook_are_declared(inputs, tmp_path, monkeypatch):
    """The command runs the shipped notebook by name and hands it every parameter it
    declares, each of the declared type; with no run, the declared defaults of runs and
    baselines (the notebook resolves the example itself)."""
    assert NOTEBOOKS["arc3"] == "arc3.ipynb"
    declared = _declared()
    seen = _handed(monkeypatch, [inputs / "agent-a", [inputs / "agent-b"]], tmp_path / "o",
                   baselines=inputs / "baselines.csv", labels=["A", "B"], cap=5,
                   all_games=True, competition=True, max_actions=40, n_boot=50, seed=1)
    assert seen["notebook"] == "arc3"
    params = seen["parameters"]
    assert set(params) == set(declared)
    for key, value in params.items():
        assert isinstance(value, _TYPES[declared[key]["inferred_type_name"]]), (key, value)
    assert params["runs"] == [[str(inputs / "agent-a")], [str(inputs / "agent-b")]]
    assert params["labels"] == ["A", "B"] and params["cap"] == 5.0
    example = _handed(monkeypatch, [], tmp_path / "e")["parameters"]
    assert (example["runs"], example["baselines"]) == ([], "")
    assert repr(example["runs"]) == declared["runs"]["default"]
    assert json.dumps(example["baselines"]) == declared["baselines"]["default"]


def test_bad_inputs_are_refused_before_the_notebook_runs(inputs, tmp_path):
    with pytest.raises(RecordingError, match="not found"):
        build_report([inputs / "missing"], tmp_path / "o", baselines=inputs / "baselines.csv")
    assert not (tmp_path / "o" / "arc3.ipynb").exists()
    (tmp_path / "o2").mkdir()
    (tmp_path / "o2" / "report.html").write_text("mine")
    with pytest.raises(OutputExistsError):
        build_report([inputs / "agent-a"], tmp_path / "o2", baselines=inputs / "baselines.csv")
    assert Path(tmp_path / "o2" / "report.html").read_text() == "mine"
    # runs without baselines, or baselines without runs (the example has its own)
    with pytest.raises(ParameterError, match="baselines"):
        build_report([inputs / "agent-a"], tmp_path / "o3")
    with pytest.raises(ParameterError, match="without runs"):
        build_report([], tmp_path / "o3", baselines=inputs / "baselines.csv")
    assert not (tmp_path / "o3").exists()
    res = run_arcnb("arc3", "report", inputs / "agent-a", "--out", tmp_path / "o4")
    one_line_refusal(res.returncode, res.stderr, "baselines")


def test_what_a_cell_would_find_is_refused_before_the_kernel(inputs, tmp_path, monkeypatch):
    """A label count that is not the run count, a recording without steps, a folder at
    OUT/report.html, a figure or a run's folder the report would replace: each is one
    line before the notebook runs (the kernel is never started), as a bad recording
    is; a label of 300 characters gives a folder name of at most 120."""
    from arcnb.report.sections import arc3 as A
    from arcnb.errors import ArcnbError

    def no_kernel(*a, **k):
        raise AssertionError("the notebook ran")

    monkeypatch.setattr(R, "run_notebook", no_kernel)
    base = inputs / "baselines.csv"
    with pytest.raises(ParameterError, match="1 labels for 2 runs"):
        build_report([inputs / "agent-a", inputs / "agent-b"], tmp_path / "a", baselines=base,
                     labels=["one"])
    G.write_lines(tmp_path / "empty" / "r.jsonl", [])
    with pytest.raises(RecordingError, match="holds no game step"):
        build_report([tmp_path / "empty"], tmp_path / "b", baselines=base)
    (tmp_path / "c" / "report.html").mkdir(parents=True)
    with pytest.raises(ArcnbError, match="is a folder where arcnb writes a file"):
        build_report([inputs / "agent-a"], tmp_path / "c", baselines=base, overwrite=True)
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "clicks.png").write_bytes(b"mine")
    with pytest.raises(OutputExistsError, match="clicks.png"):
        build_report([inputs / "agent-a"], tmp_path / "d", baselines=base)
    (tmp_path / "e" / "agent").mkdir(parents=True)
    (tmp_path / "e" / "agent" / "summary.json").write_text("{}")
    with pytest.raises(OutputExistsError, match="agent"):
        build_report([inputs / "agent-a"], tmp_path / "e", baselines=base, labels=["agent"])
    assert (tmp_path / "d" / "clicks.png").read_bytes() == b"mine"
    assert [len(n) for n in A.folder_names(["L" * 300, "a b"])] == [120, 3]
