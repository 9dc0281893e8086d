"""``arcnb arc3 report``: the notebook of sections executed with papermill into one
self-contained HTML page, the runs' tables and replays beside it, and its one-line
refusals."""
from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

import _arc3_game as G
from _cli import one_line_refusal, run_arcnb
from arcnb.arc3.report import build_report
from arcnb.errors import OutputExistsError, RecordingError
from arcnb.html import check_self_contained


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("arc3report")
    base = G.scenario(tmp / "agent-a")
    for i, m in enumerate([2, 3]):
        g = G.Game("tw01-0a1b2c3d") if i == 0 else G.Game("tw02-1b2c3d4e", G.GAME_B_LEVELS)
        G.play(tmp / "agent-b" / f"{g.game_id}-b{i}.jsonl", G.agent(g, m), game=g,
               guid=f"b{i}", reasoning=lambda k: f"<b>step</b> {k} \u202e")
    with open(tmp / "baselines.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["game_id", "level", "baseline_actions"])
        for g, levels in base.items():
            for i, v in enumerate(levels, 1):
                w.writerow([g, i, v])
    return tmp


def test_the_report_of_two_runs(inputs):
    out = inputs / "report"
    res = run_arcnb("arc3", "report", inputs / "agent-a", inputs / "agent-b", "--baselines",
                    inputs / "baselines.csv", "--out", out, "--label", "A", "--label", "B")
    assert res.returncode == 0, res.stderr[-3000:]
    page = (out / "report.html").read_text()
    check_self_contained(page)
    assert "<script" not in page.lower()
    for title in ("Scores", "Games", "Levels", "Recorder faults", "Frames and clicks",
                  "Comparison", "Files and replays"):
        assert f">{title}<" in page, title
    assert "31.88" in page and "baselines_missing" in page
    assert len(re.findall(r"<img[^>]+src=\"?'?data:image/png", page)) >= 6
    assert (out / "arc3.ipynb").is_file() and (out / "A" / "summary.json").is_file()
    assert json.loads((out / "B" / "summary.json").read_text())["n_games"] == 2
    replays = sorted(p.name for p in (out / "replays" / "B").glob("*.html"))
    assert replays == ["tw01-0a1b2c3d-b0.jsonl.html", "tw02-1b2c3d4e-b1.jsonl.html"]
    replay = (out / "replays" / "B" / replays[0]).read_text()
    assert "&lt;b&gt;step&lt;/b&gt;" in replay and "\u202e" not in replay
    # a second time without --overwrite: one line
    again = run_arcnb("arc3", "report", inputs / "agent-a", "--baselines",
                      inputs / "baselines.csv", "--out", out)
    one_line_refusal(again.returncode, again.stderr, "refusing to overwrite")


def test_bad_inputs_are_refused_before_the_notebook_runs(inputs, tmp_path):
    with pytest.raises(RecordingError, match="not found"):
        build_report([inputs / "missing"], tmp_path / "o", baselines=inputs / "baselines.csv")
    assert not (tmp_path / "o" / "arc3.ipynb").exists()
    (tmp_path / "o2").mkdir()
    (tmp_path / "o2" / "report.html").write_text("mine")
    with pytest.raises(OutputExistsError):
        build_report([inputs / "agent-a"], tmp_path / "o2", baselines=inputs / "baselines.csv")
    assert Path(tmp_path / "o2" / "report.html").read_text() == "mine"
