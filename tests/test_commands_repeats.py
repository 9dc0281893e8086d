"""``arcnb repeats`` (:mod:`arcnb.commands.repeats`): the text of two runs, the
``--json`` object and ``wrote`` on stderr beside it, and --report without --out
refused in one line."""
from __future__ import annotations

import json
from pathlib import Path

from _cli import cli, one_line_refusal

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "data" / "examples"
RUNS = [EXAMPLES / "arc-agi-1-evaluation_heuristic.json",
        EXAMPLES / "arc-agi-1-evaluation_program_search.json"]


def _run(tmp_path, *extra):
    ids = tmp_path / "ids.txt"
    ids.write_text("00576224\n009d5c81\n00dbd492\n03560426\n")
    return cli("repeats", *RUNS, "--dataset", "arc-agi-1:evaluation", "--tasks", ids,
               "--n-boot", "50", *extra, cwd=tmp_path)


def test_two_runs_as_text(tmp_path):
    r = _run(tmp_path)
    assert r.returncode == 0, r.stderr
    assert "union of all runs: pass@2 0.2500" in r.stdout
    assert "wrote" not in r.stdout


def test_json_and_out(tmp_path):
    r = _run(tmp_path, "--json", "--out", "rep")
    assert r.returncode == 0, r.stderr
    assert isinstance(json.loads(r.stdout), dict)
    assert r.stderr.splitlines()[-1] == f"wrote {tmp_path / 'rep'}"
    assert (tmp_path / "rep" / "summary.json").is_file()


def test_report_without_out_is_one_line(tmp_path):
    r = _run(tmp_path, "--report")
    one_line_refusal(r.returncode, r.stderr, "--report writes repeats.html into a folder")
