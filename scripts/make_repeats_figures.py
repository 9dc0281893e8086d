"""Draw the figures of the many-runs guide (docs/guide/images/repeats-*.png) from real
runs, and print the numbers the guide quotes.

The runs, on 80 ARC-AGI-1 evaluation tasks (the first 79 task ids in order, and
45737921, the one evaluation task the bundled checkpoint solves):

* the bundled checkpoint with dihedral and colour voting (``--augment dihedral+colors``),
  four seeds (the seed draws the colour permutations);
* the program search under three settings (search depth and budget);
* copy-the-input.

The runs are written under ``reports/repeats-figures/`` (kept between calls: a run
already there is reused) and analysed with ``arcnb.repeats``. The benchmark's figure
(``benchmarks/bench_repeats.py``: every number of 50 runs x 400 tasks against a naive
loop) is drawn from one run of the benchmark.

    PYTHONPATH=. .venv/bin/python scripts/make_repeats_figures.py [--overwrite]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import arcnb  # noqa: E402
from arcnb import plot as P  # noqa: E402
from arcnb.data import load_dataset  # noqa: E402
from arcnb.evaluate import evaluate  # noqa: E402
from arcnb.report import sections as S  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "guide" / "images"
RUNS = ROOT / "reports" / "repeats-figures"
SEEDS = (1, 2, 3, 4)
SEARCH = {"depth1-budget2k": ("search, depth 1, 2k", {"max_depth": 1, "budget": 2_000,
                                                     "time_limit": 5.0}),
          "depth1-budget20k": ("search, depth 1, 20k", {"max_depth": 1, "budget": 20_000,
                                                      "time_limit": 5.0}),
          "depth2-budget20k": ("search, depth 2, 20k", {"max_depth": 2, "budget": 20_000,
                                                      "time_limit": 5.0})}


def _runs(ds) -> dict[str, tuple[str, object]]:
    """Each run's folder name under :data:`RUNS` -> (configuration, seed), evaluated
    when missing."""
    plan = {}
    for seed in SEEDS:
        plan[f"checkpoint-seed{seed}"] = ("bundled checkpoint", seed,
                                          dict(checkpoint="baseline",
                                               augment="dihedral+colors", color_perms=1,
                                               seed=seed))
    for name, (config, cfg) in SEARCH.items():
        plan[f"search-{name}"] = (config, None, dict(checkpoint="program-search", config=cfg))
    plan["copy-input"] = ("copy-the-input", None, dict(checkpoint="copy-input"))
    out = {}
    for name, (config, seed, kw) in plan.items():
        folder = RUNS / name
        if not (folder / "metrics.json").exists():
            checkpoint = kw.pop("checkpoint")
            evaluate(checkpoint, ds, folder, device="cpu", progress=False, **kw)
        out[name] = (config, seed)
    return out


def _bench():
    spec = importlib.util.spec_from_file_location("bench_repeats",
                                                  ROOT / "benchmarks" / "bench_repeats.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.measure()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--overwrite", action="store_true")
    ap.add_argument("--no-bench", action="store_true", help="leave the benchmark's figure")
    args = ap.parse_args()
    full = load_dataset("arc-agi-1:evaluation")
    ids = list(full.task_ids[:79]) + ["45737921"]
    ds = load_dataset("arc-agi-1:evaluation", tasks=ids)
    groups = _runs(ds)
    # the folder of runs as a root: each run is named by its sub-folder
    rep = arcnb.repeats(str(RUNS), dataset=ds, groups=groups, n_boot=1000, seed=0)
    for section, name in ((S.RepeatsConfigs, "seed_spread"), (S.RepeatsFlips, "solve_matrix"),
                          (S.RepeatsComparisons, "winners_curse"),
                          (S.RepeatsUnion, "union_coverage")):
        fig = section.from_run(rep).figure(name)
        P.save(fig, OUT / f"repeats-{name.replace('_', '-')}.png", dpi=150,
               overwrite=args.overwrite)
    print(rep.text())
    print(json.dumps(arcnb.io.to_jsonable(rep.summary["ensemble"]), indent=1))
    if not args.no_bench:
        fig, numbers = _bench()
        P.save(fig, OUT / "repeats-benchmark.png", dpi=150, overwrite=args.overwrite)
        print(numbers)


if __name__ == "__main__":
    main()
