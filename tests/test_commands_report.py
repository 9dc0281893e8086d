"""``arcnb report`` (:mod:`arcnb.commands.report`): what it checks before any work is
answered in one line (a missing --dataset, --difficulty beside --taxonomy, a
--reference that is not there, --train-data that is no dataset), and nothing is
written. The reports themselves are tested in ``tests/test_report*.py``."""
from __future__ import annotations

from pathlib import Path

import pytest

from _cli import cli, one_line_refusal

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "data" / "examples" / "arc-agi-1-evaluation_heuristic.json"


@pytest.mark.parametrize("args, needle", [
    (["--checkpoint", "copy-input"], "--dataset is required with --checkpoint / --predictions"),
    (["--predictions", EXAMPLE], "--dataset is required"),
    (["--predictions", EXAMPLE, "--dataset", "arc-agi-1:evaluation", "--taxonomy", "t.csv",
      "--difficulty", "d.csv"], "give --difficulty or --taxonomy, not both"),
    (["--predictions", EXAMPLE, "--dataset", "arc-agi-1:evaluation", "--reference",
      "nowhere.json"], "--reference 'nowhere.json': no such file or folder"),
], ids=["checkpoint", "predictions", "difficulty-and-taxonomy", "reference"])
def test_bad_input_is_one_line_before_any_work(tmp_path, args, needle):
    r = cli("report", *args, "--out", "rep", cwd=tmp_path)
    one_line_refusal(r.returncode, r.stderr, needle)
    assert r.stdout == "" and not (tmp_path / "rep").exists()


def test_the_sources_are_mutually_exclusive_and_one_is_required(tmp_path):
    r = cli("report", "--out", "rep", cwd=tmp_path)
    one_line_refusal(r.returncode, r.stderr, "one of the arguments", "(see 'arcnb report --help')")
    r = cli("report", "--default", "--checkpoint", "copy-input", "--out", "rep", cwd=tmp_path)
    one_line_refusal(r.returncode, r.stderr, "not allowed with argument")
