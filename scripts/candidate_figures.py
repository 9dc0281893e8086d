"""Draw the candidate-pool figures of the guide (docs/guide/images/candidates-*.png):
the program search's candidates on the first 120 ARC-AGI-1 training tasks, ranked by
program cost.

    PYTHONPATH=. .venv/bin/python scripts/candidate_figures.py [--overwrite]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from arcnb import plot as P  # noqa: E402
from arcnb.baselines import program_search_candidates  # noqa: E402
from arcnb.candidates import candidates  # noqa: E402
from arcnb.data import load_dataset  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "docs" / "guide" / "images"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--overwrite", action="store_true")
    args = ap.parse_args()
    ds = load_dataset("arc-agi-1:training")[:120]
    pool = candidates(ds, program_search_candidates(ds), rank_by=["cost"])
    for name, draw in (("rank", P.rank_histogram), ("categories", P.coverage_vs_pass),
                       ("reliability", P.reliability_diagram),
                       ("pass-at-k", P.pass_at_k_by_rule)):
        ax = draw(pool)
        P.save(ax.figure, OUT / f"candidates-{name}.png", dpi=150, overwrite=args.overwrite)
    s = pool.summary
    print(f"coverage {s['coverage']:.4f}, pass@2 (cost) {s['rankings']['cost']['pass@2']:.4f}, "
          f"distinct per output {s['distinct_mean']:.2f}, ece {s['ece']:.4f}")


if __name__ == "__main__":
    main()
