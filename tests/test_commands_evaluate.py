"""``arcnb evaluate`` (:mod:`arcnb.commands.evaluate`): the scored table and the run
directory of a model on four tasks, its ``--json`` object, and a bad option refused in
one line before any work."""
from __future__ import annotations

import json

from _cli import cli, one_line_refusal


def _ids(tmp_path):
    ids = tmp_path / "ids.txt"
    ids.write_text("00576224\n009d5c81\n00dbd492\n03560426\n")
    return ids


def test_copy_input_on_four_tasks_prints_the_table_and_writes_the_run(tmp_path):
    r = cli("evaluate", "--checkpoint", "copy-input", "--dataset", "arc-agi-1:evaluation",
            "--tasks", _ids(tmp_path), "--out", "run", "--no-progress", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("dataset: arc-agi-1:evaluation (")
    assert lines[1] == "estimator: ranked (any of the first K attempts, in file order)"
    assert lines[2] == "  K    pass@K  pass@K_per_output  pass@K_all_or_nothing"
    assert lines[4] == "  2    0.0000             0.0000                 0.0000"
    assert "tasks: 4  outputs: 4  missing outputs: 0" in r.stdout
    assert lines[-1] == f"wrote {tmp_path / 'run'}"  # the path made absolute
    assert (tmp_path / "run" / "metrics.json").is_file()


def test_json_is_one_object_of_the_metrics_without_the_provenance(tmp_path):
    r = cli("evaluate", "--checkpoint", "copy-input", "--dataset", "arc-agi-1:evaluation",
            "--tasks", _ids(tmp_path), "--out", "run", "--no-progress", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert "provenance" not in out and out["n_tasks"] == 4 and "pass@2" in out


def test_a_bad_option_is_one_line_before_any_work(tmp_path):
    r = cli("evaluate", "--checkpoint", "copy-input", "--dataset", "arc-agi-1:evaluation",
            "--out", "run", "--attempts", "0", cwd=tmp_path)
    one_line_refusal(r.returncode, r.stderr, "attempts")
    assert not (tmp_path / "run").exists()
