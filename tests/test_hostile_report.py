"""Hostile inputs, round three (upper half): text that reaches Pillow or HTML, disks
that fill up, links inside ``--out``, and report inputs checked before any work. Every
hostile file is built here (long and multi-line names, symlinks, a small tmpfs)."""
from __future__ import annotations

import json
from pathlib import Path


from arcnb.data import load_dataset

ROOT = Path(__file__).resolve().parents[1]


def _ds(n: int = 3):
    full = load_dataset("arc-agi-1:evaluation")
    return full.select(full.task_ids[:n])


def _copy_sub(ds) -> dict:
    return {t.id: [{"attempt_1": p.input.tolist(), "attempt_2": p.input.tolist()}
                   for p in t.test] for t in ds}


# ------------------------------------------------- 6, 12: explorer text and frame size
def test_long_and_multiline_names_are_cut_and_escaped_in_the_explorer(tmp_path):
    import arcnb

    ds = _ds()
    ids = ds.task_ids
    long = "c" * 100_000
    csv = tmp_path / "taxonomy.csv"
    csv.write_text(f'task_id,category\n{ids[0]},"line\nbreak"\n{ids[1]},{long}\n{ids[2]},x\n')
    r = arcnb.score(ds, _copy_sub(ds))
    ex = arcnb.explore(r, taxonomy=str(csv), category="line\nbreak", compare=[r],
                       labels=["run\none", "z" * 100_000], max_width=1200)
    img = ex.render()
    grids_w = max(p["x"] + p["w"] for p in ex.layout())
    # the frame is as wide as its grids or max_width, never as wide as a name
    assert img.shape[1] <= max(1200, grids_w + 10), img.shape
    titles = " ".join(p["title"] for p in ex.layout())
    assert "\n" not in titles and "run\\none" in titles and "…" in titles
    ex.category = long
    assert ex.render().shape[1] <= max(1200, grids_w + 10)

    # a task id with a newline, from a task file's name
    folder = tmp_path / "tasks"
    folder.mkdir()
    task = load_dataset("arc-agi-1:evaluation")[ids[0]]
    doc = {"train": [{"input": p.input.tolist(), "output": p.output.tolist()}
                     for p in task.train],
           "test": [{"input": p.input.tolist(), "output": p.output.tolist()} for p in task.test]}
    (folder / "odd\nid.json").write_text(json.dumps(doc))
    ex = arcnb.explore(str(folder))
    assert ex.render().shape[0] > 0
    assert ex.panels()[0].startswith("task odd")
