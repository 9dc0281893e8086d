"""Run the guide's reference probes and draw their figures (docs/guide/images/probes-*.png):
the bundled checkpoint on the 400 ARC-AGI-1 training tasks (the data it was trained on),
and the program search (single primitives, ``max_depth`` 1) on the first 100 of them.

    PYTHONPATH=. .venv/bin/python scripts/probe_figures.py RUNS_DIR [--overwrite]

The runs go to ``RUNS_DIR/baseline`` and ``RUNS_DIR/program-search`` (an unfinished one
is resumed, a finished one reused); the numbers are printed as ``arcnb evaluate`` prints
them.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import arcnb  # noqa: E402
from arcnb import plot as P  # noqa: E402
from arcnb.data import load_dataset  # noqa: E402
from arcnb.evaluate import evaluate  # noqa: E402
from arcnb.probes import probe_lines  # noqa: E402
from arcnb.runs import is_finished  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "docs" / "guide" / "images"
RUNS = {
    "baseline": dict(checkpoint="baseline", dataset="arc-agi-1:training", config=None,
                     n_tasks=400, probe=["dihedral", "colors"]),
    "program-search": dict(checkpoint="program-search", dataset="arc-agi-1:training",
                           config={"max_depth": 1}, n_tasks=100,
                           probe=["dihedral", "colors", "dihedral+colors", "task-id"]),
}


def _run(root: Path, name: str):
    spec = RUNS[name]
    out = root / name
    if is_finished(out):
        return arcnb.open(out)
    ds = load_dataset(spec["dataset"])[:spec["n_tasks"]]
    return evaluate(spec["checkpoint"], ds, out, config=spec["config"], probe=spec["probe"],
                    proxy=True, device="cpu", resume=out.exists())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", type=Path)
    ap.add_argument("--overwrite", action="store_true")
    args = ap.parse_args()
    runs = [_run(args.runs, name) for name in RUNS]
    labels = ["bundled checkpoint", "program search"]
    for run, label in zip(runs, labels):
        print(f"{label}: pass@2 {run.summary['pass@2']:.4f}")
        for line in probe_lines(run.metrics):
            print("  " + line)
    for run, stem in zip(runs, ("baseline", "program-search")):
        ax = P.probe_scores(run)
        P.save(ax.figure, OUT / f"probes-{stem}-views.png", dpi=150, overwrite=args.overwrite)
    ax = P.probe_drops(runs, labels=labels)
    P.save(ax.figure, OUT / "probes-drops.png", dpi=150, overwrite=args.overwrite)
    ax = P.proxy_vs_true(runs, labels=labels)
    P.save(ax.figure, OUT / "probes-proxy.png", dpi=150, overwrite=args.overwrite)


if __name__ == "__main__":
    main()
