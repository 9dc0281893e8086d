"""``arcnb notebooks DEST`` (:mod:`arcnb.commands.notebooks`), in this process: one
``wrote`` line per shipped notebook, a second copy refused in one line, --overwrite.
(``tests/test_resources.py`` runs the console script.)"""
from __future__ import annotations

from pathlib import Path

from _cli import cli, one_line_refusal
from arcnb.resources import notebook_names


def test_copies_refuses_and_overwrites(tmp_path):
    r = cli("notebooks", "nb", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    dest = tmp_path / "nb"
    # the paths as given (notebooks hands none to a kernel or a run)
    assert r.stdout.splitlines() == [f"wrote {Path('nb') / f'{n}.ipynb'}" for n in notebook_names()]
    (dest / "report.ipynb").write_text("my edits")
    r = cli("notebooks", "nb", cwd=tmp_path)
    one_line_refusal(r.returncode, r.stderr, "--overwrite", "report.ipynb")
    assert (dest / "report.ipynb").read_text() == "my edits"
    r = cli("notebooks", "nb", "--overwrite", cwd=tmp_path)
    assert r.returncode == 0 and (dest / "report.ipynb").read_text() != "my edits"
