"""``arcnb sweep`` (:mod:`arcnb.commands.sweep`): its checkpoints, --collect and the
required options refused in one line before any work. Sweeps themselves are tested in
``tests/test_sweep.py``."""
from __future__ import annotations

import pytest

from _cli import cli, one_line_refusal


@pytest.mark.parametrize("args, needle", [
    ([], "give at least one checkpoint (or --collect DIR)"),
    (["--collect", "sw", "baseline"], "--collect DIR takes no checkpoint, --out or --shard"),
    (["--collect", "sw", "--out", "o"], "--collect DIR takes no checkpoint, --out or --shard"),
    (["baseline"], "--dataset and --out are required with checkpoints"),
    (["baseline", "--dataset", "arc-agi-1:evaluation"], "--dataset and --out are required"),
])
def test_what_it_needs_is_asked_in_one_line(tmp_path, args, needle):
    r = cli("sweep", *args, cwd=tmp_path)
    one_line_refusal(r.returncode, r.stderr, needle)
    assert r.stdout == "" and list(tmp_path.iterdir()) == []
