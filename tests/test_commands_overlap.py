"""``arcnb overlap`` (:mod:`arcnb.commands.overlap`): a task folder against a training
folder that holds one of its pairs rotated, as text and as ``--json`` with ``--out``.
The check itself is tested in ``tests/test_overlap.py``."""
from __future__ import annotations

import json

from _cli import cli


def _task(folder, name, pairs):
    folder.mkdir(exist_ok=True)
    train = [{"input": i, "output": o} for i, o in pairs[:-1]]
    test = [{"input": i, "output": o} for i, o in pairs[-1:]]
    (folder / f"{name}.json").write_text(json.dumps({"train": train, "test": test}))


def _folders(tmp_path):
    pair = ([[1, 2], [3, 4]], [[4, 3], [2, 1]])
    _task(tmp_path / "eval", "aaaa0001", [([[5]], [[5]]), pair])
    rotated = ([[3, 1], [4, 2]], [[2, 4], [1, 3]])  # the pair turned a quarter
    _task(tmp_path / "train", "bbbb0001", [rotated, ([[7]], [[7]])])
    return tmp_path / "eval", tmp_path / "train"


def test_text_and_json(tmp_path):
    ev, tr = _folders(tmp_path)
    r = cli("overlap", ev, "--train", tr, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() and "wrote" not in r.stdout
    r = cli("overlap", ev, "--train", tr, "--json", "--out", "ov", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert isinstance(out, dict)
    assert r.stderr.splitlines()[-1] == "wrote ov"  # overlap prints its paths as given
    assert (tmp_path / "ov" / "overlap.json").is_file()
