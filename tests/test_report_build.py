"""arcnb/report/build.py: the parameters each command hands a notebook are parameters
that notebook declares, with the declared type (papermill's inspect_notebook reads the
notebook; the build is run in-process up to the notebook, which is not executed)."""
from __future__ import annotations

import pytest

from arcnb.front import CheckpointSource, PredictionsSource
from arcnb.report import build as BLD
from arcnb.report.notebooks import notebook_path

pytestmark = pytest.mark.slow  # builds reports: their notebooks run in a Jupyter kernel


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


def test_a_second_report_reuses_the_finished_evaluation_and_a_changed_one_evaluates(
        tmp_path, monkeypatch, capsys):
    """A report over a folder holding the finished evaluation asked for (the same
    checkpoint bytes, dataset, task ids and options) does not evaluate again, even with
    --overwrite: it says so in one line and records it in the run's provenance (shown in
    the page's provenance table). A changed option, checkpoint or task filter evaluates
    again. Evaluations are counted by wrapping the one evaluate the reports call."""
    import torch

    from arcnb import front
    from arcnb.data import load_dataset
    from arcnb.models import load_model, save_checkpoint
    from arcnb.runs import PREDICTIONS, flat_provenance, read_metrics

    calls = []
    real = front.evaluate
    monkeypatch.setattr(front, "evaluate", lambda *a, **k: calls.append(a[0]) or real(*a, **k))

    def no_evaluate_notebook(notebook, *a, **k):
        raise AssertionError(f"{notebook} was run")

    ids = load_dataset("arc-agi-1:evaluation").task_ids[:4]
    tasks = tmp_path / "tasks.txt"
    tasks.write_text("\n".join(ids[:3]))
    from arcnb.resources import checkpoint

    config = torch.load(checkpoint(), weights_only=True)["config"]
    net = load_model("baseline").model
    ck = save_checkpoint(tmp_path / "m.pt", net, arch="demo-conv", config=config)
    out = tmp_path / "rep"

    def report(overwrite=True, **opts):
        capsys.readouterr()
        BLD.build_report(CheckpointSource(str(ck), {"device": "cpu", **opts}),
                         dataset="arc-agi-1:evaluation", tasks=str(tasks), out=out,
                         overwrite=overwrite, progress=False, notebook=False, **kw)
        return [line for line in capsys.readouterr().err.splitlines()
                if "not evaluated again" in line]

    kw = {}
    assert report(overwrite=False) == [] and len(calls) == 1
    assert "reused" not in read_metrics(out)["provenance"]
    predictions = (out / PREDICTIONS).read_bytes()
    said = report()  # the same again, with --overwrite: reused
    assert len(calls) == 1 and len(said) == 1 and str(out) in said[0]
    assert (out / PREDICTIONS).read_bytes() == predictions
    reused = read_metrics(out)["provenance"]["reused"]
    assert reused["by"] == "arcnb report" and reused["times"] == 1
    words = flat_provenance(read_metrics(out))["reused"]
    assert "arcnb report" in words and "not evaluated again" in words
    assert "not evaluated again" in (out / "report.html").read_text()
    # the same through the evaluate notebook (several checkpoints): no notebook runs
    monkeypatch.setattr(BLD, "run_notebook", no_evaluate_notebook)
    kw = {"evaluate_in_process": False}
    assert len(report()) == 1 and len(calls) == 1
    assert read_metrics(out)["provenance"]["reused"]["times"] == 2
    kw = {}
    # another option: evaluated again, then reused
    assert report(seed=1) == [] and len(calls) == 2
    assert "reused" not in read_metrics(out)["provenance"]
    assert len(report(seed=1)) == 1 and len(calls) == 2
    # another checkpoint (one weight changed, the same path): evaluated again
    with torch.no_grad():
        next(net.parameters()).add_(0.5)
    save_checkpoint(ck, net, arch="demo-conv", config=config, overwrite=True)
    assert report(seed=1) == [] and len(calls) == 3
    # another task filter: evaluated again
    tasks.write_text("\n".join(ids))
    assert report(seed=1) == [] and len(calls) == 4
    assert read_metrics(out)["n_tasks"] == 4


def test_the_reuse_check_knows_the_device_type_without_importing_torch():
    """``auto`` on a torch built without CUDA and ROCm is the CPU, read without importing
    torch (seconds of a second report); the answer is the one ``resolve_device`` gives
    once torch is imported, and an explicit device goes through ``resolve_device``."""
    import subprocess
    import sys

    code = ("import sys; from arcnb.evaluate import _device_type; t = _device_type('auto'); "
            "before = 'torch' in sys.modules; from arcnb.evaluate import resolve_device; "
            "print(t, before, resolve_device('auto').type, _device_type('cpu'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    import torch

    gpu_build = torch.version.cuda is not None or getattr(torch.version, "hip", None)
    assert out[0] == out[2] and out[3] == "cpu"
    assert out[1] == str(bool(gpu_build))  # torch imported only where a GPU may be found
