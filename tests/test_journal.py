"""arcnb.journal: evaluate's resume journal (one JSON line per finished task after a
header of the run's parameters) and the run-directory lock."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from arcnb.errors import ArcnbError
from arcnb.journal import Journal, RunLock, RunLockedError, journal_name, params_sha256, read_journals


def test_journal_repairs_a_cut_line_and_refuses_other_parameters(tmp_path):
    assert journal_name(0, 1) == "journal.jsonl"
    assert journal_name(1, 2) == "journal.rank1-of-2.jsonl"
    path = tmp_path / journal_name(0, 1)
    params = {"batch_size": 4, "seed": 0}
    j = Journal(path, params)
    j.append({"task_id": "a", "attempts": [[[[1]]]]}, {"task_id": "b", "attempts": [[[[2]]]]})
    j.append()  # nothing to write: no line
    j.close()
    with open(path, "ab") as fh:
        fh.write(b'{"task_id": "c", "att')  # killed mid-line
    assert sorted(read_journals(tmp_path, params)) == ["a", "b"]
    Journal(path, params).close()  # reopening cuts the half line off, no second header
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 4
    assert json.loads(lines[0]) == {"kind": "arcnb-evaluate-journal", "version": 2,
                                    "params": params, "params_sha256": params_sha256(params)}
    with pytest.raises(ArcnbError, match=r"different parameters \(seed\)"):
        read_journals(tmp_path, {"batch_size": 4, "seed": 1})
    assert read_journals(Path(tmp_path / "empty"), params) == {}


def test_run_lock_is_exclusive_and_released(tmp_path):
    first = RunLock(tmp_path).acquire()
    with pytest.raises(RunLockedError, match="another arcnb process"):
        RunLock(tmp_path).acquire()
    first.release()
    with RunLock(tmp_path):
        pass
    assert sorted(tmp_path.iterdir()) == []  # no lock file left behind


def test_a_line_the_json_rules_refuse_is_not_used(tmp_path):
    """The journal's lines go through io's parse of a JSON line: a record with a key
    given twice (which of the two would count?), one nested too deep or holding a
    number of hundreds of digits is no line arcnb writes, and is skipped like a line
    cut short: its task is done again, never read half-right."""
    params = {"seed": 0}
    j = Journal(tmp_path / journal_name(0, 1), params)
    j.append({"task_id": "a", "attempts": []})
    j.close()
    stamp = params_sha256(params)
    with open(tmp_path / journal_name(0, 1), "ab") as fh:
        fh.write(b'{"task_id": "b", "task_id": "c", "params_sha256": "%s"}\n' % stamp.encode())
        fh.write(b'{"task_id": "d", "params_sha256": "%s", "x": %s}\n'
                 % (stamp.encode(), b"[" * 100 + b"]" * 100))
        fh.write(b'{"task_id": "e", "params_sha256": "%s", "x": 1%s}\n'
                 % (stamp.encode(), b"0" * 400))
        fh.write(b'\xef\xbb\xbf{"task_id": "f", "params_sha256": "%s"}\n' % stamp.encode())
    assert sorted(read_journals(tmp_path, params)) == ["a"]
