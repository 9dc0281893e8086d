"""Benchmark: the size and load time of the replay page of a 1,000-step ARC-AGI-3
recording, and the time to read and score it.

Two recordings of the tests' synthetic game (``tests/_arc3_game.py``), 1,000 steps each
with a 300-character reasoning text per step:

* ``walk``: the player walks back and forth, so the board takes few distinct states
  (frames repeat, and each distinct frame is encoded once);
* ``distinct``: every step also draws the step number into the board (in binary), so all
  1,000 frames differ: the page's worst case.

For each, the script reads and scores the recording (``arcnb.arc3.score``), builds the
replay page (``arcnb.arc3.replay``) and prints the page's size; where Debian's
``chromium`` and playwright are installed it opens the page headless and prints the
time from navigation to the load event (the median of 5 loads), and checks that an arrow
key steps the replay.

    .venv/bin/python benchmarks/bench_arc3.py [--steps 1000]
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import _arc3_game as G  # noqa: E402

from arcnb import arc3  # noqa: E402


class Counting(G.Game):
    """The synthetic game with the step number drawn in binary on the bottom wall, so
    every frame differs."""

    steps = 0

    def render(self):
        board = super().render()
        Counting.steps += 1
        for bit in range(16):
            board[63][2 + bit] = 1 if (Counting.steps >> bit) & 1 else 4
        return board


def _actions(n: int) -> list[str]:
    out = ["RESET"]
    while len(out) < n:
        out += ["ACTION4"] * 12 + ["ACTION3"] * 12
    return out[:n]


LEVELS = [{"start": (1, 1), "goal": (1, 15), "traps": set()}] * 3


def _make(folder: Path, kind: str, n: int) -> Path:
    game = (Counting if kind == "distinct" else G.Game)("tw01-0a1b2c3d", LEVELS)
    path = folder / f"{kind}.jsonl"
    G.play(path, _actions(n), game=game, reasoning=lambda k: (f"step {k}: " + "x" * 300))
    return path


def _load_ms(page_path: Path) -> float | None:
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(chromium).exists():
        return None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    url = page_path.resolve().as_uri()
    times = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True,
                                    args=["--no-sandbox", "--disable-gpu"])
        try:
            for _ in range(5):
                page = browser.new_page()
                page.goto(url, wait_until="load")
                times.append(page.evaluate(
                    "() => performance.getEntriesByType('navigation')[0].loadEventEnd"))
                page.keyboard.press("ArrowRight")
                shown = page.evaluate("""() => Array.from(document.querySelectorAll('.st'))
                    .filter(e => e.offsetParent !== null).map(e => e.className)""")
                assert shown == ["st t1"], shown
                page.close()
        finally:
            browser.close()
    return statistics.median(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=1000)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for kind in ("walk", "distinct"):
            path = _make(tmp, kind, args.steps)
            t0 = time.perf_counter()
            card = arc3.score(path, {"tw01-0a1b2c3d": [14, 14, 14]})
            t1 = time.perf_counter()
            r = arc3.replay(card)
            t2 = time.perf_counter()
            page = r.write(tmp / f"{kind}.html")
            load = _load_ms(page)
            print(f"{kind}: {r.n_steps} steps, {r.n_images} distinct frames; recording "
                  f"{path.stat().st_size / 1e6:.1f} MB read and scored in {t1 - t0:.2f} s; "
                  f"page {r.size / 1e6:.2f} MB built in {t2 - t1:.2f} s; "
                  + (f"loads in {load:.0f} ms (headless chromium, median of 5)"
                     if load is not None else "no chromium: load time not measured"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
