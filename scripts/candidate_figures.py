"""Draw the candidate-pool figures of the guide (docs/guide/images/candidates-*.png):
the program search's candidates on the first 120 ARC-AGI-1 training tasks, ranked by
program cost (with the verifier's confusion table), and, with ``--run``, the anytime
curve of an augmented ``arcnb evaluate`` run directory's candidates.

    PYTHONPATH=. .venv/bin/python scripts/candidate_figures.py [--overwrite] \
        [--run runs/baseline-d8c --run-dataset arc-agi-1:training]
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
    ap.add_argument("--run", help="an augmented evaluate run directory (its candidates file)")
    ap.add_argument("--run-dataset", default="arc-agi-1:evaluation")
    ap.add_argument("--axis", default="view")
    args = ap.parse_args()
    if args.run:
        run = candidates(args.run_dataset, Path(args.run) / "candidates.parquet",
                         axis=args.axis)
        ax = P.anytime_curve(run)
        P.save(ax.figure, OUT / "candidates-anytime.png", dpi=150, overwrite=args.overwrite)
        pts = run.summary["anytime"]["points"]
        for n in sorted({1, 2, 4, 8, len(pts)}):
            pt = pts[n - 1]
            print(f"n={n}: pass@1 {pt['pass@1']:.4f} {pt['pass@1_ci95']}, pass@2 "
                  f"{pt['pass@2']:.4f}, coverage {pt['coverage']:.4f}")
        g = run.summary["voting_gain"]
        print(f"voting gain {g['value']:.4f} {g['ci95']}; rules "
              + ", ".join(f"{r} pass@2 {v['pass@2']:.4f}"
                          for r, v in run.summary["rankings"].items()))
        if "confidence" in run.summary:
            print(f"confidence ece {run.summary['confidence']['ece']:.4f} "
                  f"{run.summary['confidence']['ece_ci95']}")
    ds = load_dataset("arc-agi-1:training")[:120]
    pool = candidates(ds, program_search_candidates(ds), rank_by=["cost"])
    for name, draw in (("rank", P.rank_histogram), ("categories", P.coverage_vs_pass),
                       ("reliability", P.reliability_diagram),
                       ("pass-at-k", P.pass_at_k_by_rule),
                       ("verifier", P.verifier_confusion)):
        ax = draw(pool)
        P.save(ax.figure, OUT / f"candidates-{name}.png", dpi=150, overwrite=args.overwrite)
    s = pool.summary
    print(f"coverage {s['coverage']:.4f}, pass@2 (cost) {s['rankings']['cost']['pass@2']:.4f}, "
          f"distinct per output {s['distinct_mean']:.2f}, ece {s['ece']:.4f} "
          f"{s['ece_ci95']}, absent {s['rank_of_correct']['absent']} of {s['n_outputs']}, "
          f"rank_of_correct {s['rank_of_correct']}")
    print("verifier", s["verifier"])
    print({r: (v["pass@1"], v["pass@2"]) for r, v in s["rankings"].items()})


if __name__ == "__main__":
    main()
