"""arcnb/report/build.py: the parameters each command hands a notebook are parameters
that notebook declares, with the declared type (papermill's inspect_notebook reads the
notebook; the build is run in-process up to the notebook, which is not executed)."""
from __future__ import annotations

import pytest

from arcnb.front import CheckpointSource, PredictionsSource
from arcnb.report import build as BLD
from arcnb.report.notebooks import notebook_path


class _Stop(Exception):
    pass


def _declared(name: str) -> dict:
    import papermill as pm

    return pm.inspect_notebook(str(notebook_path(name)))


_TYPES = {"str": str, "int": int, "float": (int, float), "bool": bool, "list": list}


def _check(name: str, params: dict) -> None:
    declared = _declared(name)
    unknown = sorted(set(params) - set(declared))
    assert not unknown, f"{name}.ipynb declares no parameter {unknown}"
    for key, value in params.items():
        want = _TYPES[declared[key]["inferred_type_name"]]
        assert isinstance(value, want), (name, key, value)


class _NoKernel:
    """Stands for the report's warm kernel (no kernel is started: the notebook is not run
    here); ``run_notebook`` then starts its own, as when a warm start failed."""

    started = 0  # how many were made since the last _capture

    def __init__(self, *args, **kwargs):
        _NoKernel.started += 1

    def ready(self):
        return None

    def close(self):
        pass


def _capture(monkeypatch, stop_after: str):
    seen = {}
    _NoKernel.started = 0
    # no warm kernel: the notebook is not run here
    monkeypatch.setattr(BLD, "WarmKernel", _NoKernel)

    def fake_run(notebook, output, parameters=None, **kw):
        key = str(notebook)
        key = "report" if key.endswith(".report-no-truth.ipynb") else key
        seen[key] = dict(parameters or {})
        if key == stop_after:
            raise _Stop
        return output

    monkeypatch.setattr(BLD, "run_notebook", fake_run)
    return seen


def test_report_parameters_are_declared(tmp_path, monkeypatch):
    from arcnb.resources import example

    seen = _capture(monkeypatch, "report")
    with pytest.raises(_Stop):
        BLD.build_report(PredictionsSource(str(example())),
                         dataset="arc-agi-1:evaluation", out=tmp_path / "r", progress=False,
                         references=["copy-input"], taxonomy="structural",
                         report_parameters={"train_data": ["arc-agi-1:training"]})
    assert {"run_dir", "figures_dir", "references", "train_data"} <= set(seen["report"])
    _check("report", seen["report"])


def test_evaluate_parameters_are_declared(tmp_path, monkeypatch):
    seen = _capture(monkeypatch, "evaluate")
    with pytest.raises(_Stop):
        BLD.build_report(CheckpointSource("copy-input", {
                             "device": "cpu", "batch_size": 8, "attempts": 2,
                             "augment": "none", "seed": 0, "arch": None,
                             "config": {"width": 4}, "replace_config": False,
                             "trust_checkpoint": False}),
                         dataset="arc-agi-1:evaluation", out=tmp_path / "e", progress=False,
                         evaluate_in_process=False)
    params = seen["evaluate"]
    assert params["checkpoint"] == "copy-input" and params["config"] == '{"width": 4}'
    _check("evaluate", params)


def test_compare_parameters_are_declared(tmp_path, monkeypatch):
    seen = _capture(monkeypatch, "compare")
    with pytest.raises(_Stop):
        BLD.build_compare_report([tmp_path / "a", tmp_path / "b"], tmp_path / "c",
                                 progress=False)
    _check("compare", seen["compare"])


def test_the_report_without_a_notebook_takes_the_notebooks_parameters():
    """``open_report`` (what the report notebook's setup cell and ``--no-notebook``
    call) takes exactly the parameters the report notebook declares."""
    import inspect

    from arcnb.report.sections import open_report

    assert set(inspect.signature(open_report).parameters) == set(_declared("report"))


def test_a_report_without_a_notebook_of_a_hidden_set_and_over_an_old_one(tmp_path):
    """``arcnb report --no-notebook``: no kernel, no report.ipynb; a run without truth
    gets the predictions-only sections; an existing report (its notebook included) is
    refused, and replaced with ``--overwrite`` (the old notebook removed, not left
    beside a page it no longer matches)."""
    import json

    from _cli import cli
    from _report_fixture import _raw_eval_tasks

    raw = _raw_eval_tasks()
    ids = sorted(raw)[:2]
    hidden = {t: {"train": raw[t]["train"], "test": [{"input": p["input"]} for p in raw[t]["test"]]}
              for t in ids}
    data = tmp_path / "eval_challenges.json"
    data.write_text(json.dumps(hidden))
    out = tmp_path / "rep"
    args = ("report", "--checkpoint", "copy-input", "--dataset", data, "--out", out,
            "--no-progress", "--no-notebook")
    r = cli(*args)
    assert r.returncode == 0, r.stderr[-3000:]
    page = (out / "report.html").read_text()
    assert "Predictions (no truth)" in page and "1. Headline" not in page
    assert not (out / "report.ipynb").exists()
    (out / "report.ipynb").write_text("{}")  # an older report's notebook
    r = cli(*args)
    assert r.returncode == 2 and "--overwrite" in r.stderr and r.stderr.count("\n") == 1
    r = cli(*args, "--overwrite")
    assert r.returncode == 0, r.stderr[-3000:]
    assert not (out / "report.ipynb").exists() and (out / "report.html").is_file()


@pytest.mark.parametrize("dataset", ["no-such-dataset", "arc-agi-1:evaluaton"])
def test_an_unknown_dataset_is_refused_before_a_kernel_starts(tmp_path, monkeypatch,
                                                               dataset):
    from arcnb.errors import DatasetError
    from arcnb.resources import example

    seen = _capture(monkeypatch, "report")
    with pytest.raises(DatasetError, match="unknown (dataset|split)"):
        BLD.build_report(PredictionsSource(str(example())), dataset=dataset,
                         out=tmp_path / "r", progress=False)
    assert _NoKernel.started == 0 and not seen and not (tmp_path / "r").exists()
    # the same call with a real dataset gets as far as the notebook, its kernel started
    with pytest.raises(_Stop):
        BLD.build_report(PredictionsSource(str(example())), dataset="arc-agi-1:evaluation",
                         out=tmp_path / "r", progress=False)
    assert _NoKernel.started == 1 and "report" in seen


def test_a_task_filter_naming_unknown_ids_is_refused_before_a_kernel_starts(tmp_path,
                                                                            monkeypatch):
    """--tasks naming an id that the bundled set lacks: one line before the kernel
    starts (the error of the dataset's filter, counting the unknown ids); a filter of
    known ids gets as far as the notebook."""
    from arcnb.errors import DatasetError
    from arcnb.resources import example

    seen = _capture(monkeypatch, "report")
    bad = tmp_path / "ids.txt"
    bad.write_text("00576224\nno-such-task\nnor-this-one\n")
    with pytest.raises(DatasetError, match="2 of the 3 task ids in .*ids.txt are not in"):
        BLD.build_report(PredictionsSource(str(example())), dataset="arc-agi-1:evaluation",
                         tasks=str(bad), out=tmp_path / "r", progress=False)
    assert _NoKernel.started == 0 and not seen and not (tmp_path / "r").exists()
    good = tmp_path / "good.txt"
    good.write_text("00576224\n009d5c81\n")
    with pytest.raises(_Stop):
        BLD.build_report(PredictionsSource(str(example())), dataset="arc-agi-1:evaluation",
                         tasks=str(good), out=tmp_path / "r", progress=False)
    assert _NoKernel.started == 1 and "report" in seen
