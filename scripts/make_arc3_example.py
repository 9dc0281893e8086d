"""Regenerate the bundled ARC-AGI-3 example (arcnb/resources/examples/arc3/, package data)
and its copy in the clone's data/examples/arc3/.

    PYTHONPATH=. .venv/bin/python scripts/make_arc3_example.py          # write it
    PYTHONPATH=. .venv/bin/python scripts/make_arc3_example.py --check  # exit 1 when stale

Two agents play the tests' synthetic game (tests/_arc3_game.py), recorded in the
toolkit's line format:

* ``agent-a/``: the tests' scenario (``_arc3_game.scenario``): four games, several plays,
  level resets, a GAME_OVER, actions sent after the game ended, clicks, a game without
  baselines and one with too few;
* ``agent-b/``: twice the human baseline on every level of tw01 and three times on tw02
  (``_arc3_game.agent``), so its RHAE is ``100 / m**2`` per level.

``baselines.csv`` (``game_id,level,baseline_actions``) holds the human baselines of the
games (none for tw03, one level for tw04). To stay small (a 64 x 64 frame is 12 KB of
JSON), only agent A's first recording keeps frames, and only at its key steps
(``arcnb.plot.arc3.key_frames``: level starts and ends, the GAME_OVER, the win, the
last step) and the empty frames of the actions sent after the game ended; every other
recording is recorded without frames (the toolkit's recorder leaves the key out). The
scores do not depend on the frames. Deterministic: the same code writes the same bytes.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import _arc3_game as G  # noqa: E402
from arcnb.arc3 import read_recording  # noqa: E402
from arcnb.arc3.tables import key_frames  # noqa: E402

OUT = ROOT / "arcnb" / "resources" / "examples" / "arc3"
#: The one recording that keeps frames (at its key steps).
WITH_FRAMES = "agent-a/tw01-0a1b2c3d-aaaa-1.jsonl"


def record(folder: Path) -> dict:
    """Both agents' recordings, with every frame, under ``folder`` (``agent-a/``,
    ``agent-b/``); returns the baselines ``{game_id: [per level]}``."""
    base = G.scenario(folder / "agent-a")
    for i, m in enumerate([2, 3]):
        g = G.Game("tw01-0a1b2c3d") if i == 0 else G.Game("tw02-1b2c3d4e", G.GAME_B_LEVELS)
        G.play(folder / "agent-b" / f"{g.game_id}-b{i}.jsonl", G.agent(g, m), game=g,
               guid=f"b{i}", reasoning=lambda k: f"step {k}: try the next cell")
    return base


def compact(path: Path, keep: set[int] | None) -> bytes:
    """The recording at ``path`` with the frames of the steps not in ``keep`` left out
    (``keep=None``: every frame left out, as recorded without frames); an empty frame
    (an action after the game ended) stays when the recording keeps frames."""
    out = io.StringIO()
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        event = json.loads(line)
        data = event["data"]
        if keep is None or (i not in keep and data.get("frame") != []):
            data.pop("frame", None)
        json.dump(event, out)
        out.write("\n")
    return out.getvalue().encode("utf-8")


def baselines_csv(base: dict) -> bytes:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["game_id", "level", "baseline_actions"])
    for game, levels in sorted(base.items()):
        for k, v in enumerate(levels, 1):
            w.writerow([game, k, v])
    return out.getvalue().encode("utf-8")


def build() -> dict[str, bytes]:
    """The example's files: ``{path relative to the example folder: bytes}``."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        base = record(tmp)
        files = {"baselines.csv": baselines_csv(base)}
        for p in sorted(tmp.rglob("*.jsonl")):
            rel = p.relative_to(tmp).as_posix()
            keep = ({step for step, _, _ in key_frames(read_recording(p))}
                    if rel == WITH_FRAMES else None)
            files[rel] = compact(p, keep)
    return files


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="exit 1 when the bundled example differs from what this writes")
    args = ap.parse_args(argv)
    files = build()
    have = {p.relative_to(OUT).as_posix(): p.read_bytes()
            for p in sorted(OUT.rglob("*")) if p.is_file()} if OUT.is_dir() else {}
    if args.check:
        if have != files:
            stale = sorted(k for k in set(have) | set(files) if have.get(k) != files.get(k))
            print("stale (run scripts/make_arc3_example.py): " + ", ".join(stale),
                  file=sys.stderr)
            return 1
        return 0
    if OUT.exists():
        shutil.rmtree(OUT)
    for rel, data in files.items():
        target = OUT / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    print(f"wrote {OUT.relative_to(ROOT)}: {len(files)} files, "
          f"{sum(len(d) for d in files.values()) / 1024:.0f} KiB")
    subprocess.run([sys.executable, str(ROOT / "scripts" / "sync_data.py")], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
