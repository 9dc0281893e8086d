"""Draw the ARC-AGI-3 figures of the guide (docs/guide/images/arc3-*.png) and its replay
page (docs/guide/images/arc3-replay.html, with a screenshot where Debian's chromium and
playwright are installed), from recordings of the tests' synthetic game
(tests/_arc3_game.py): agent A is the tests' scenario (several plays, level resets, a
GAME_OVER, clicks), agent B walks twice (tw01) and three times (tw02) the human baseline;
the agents of the bundled example (scripts/make_arc3_example.py), with every frame.

    PYTHONPATH=. .venv/bin/python scripts/arc3_figures.py [--overwrite]
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import matplotlib.pyplot as plt  # noqa: E402

from make_arc3_example import record  # noqa: E402
from arcnb import arc3  # noqa: E402
from arcnb.plot import arc3 as F  # noqa: E402
from arcnb.plot import paper_style, save  # noqa: E402

OUT = ROOT / "docs" / "guide" / "images"


def runs(tmp: Path):
    base = record(tmp)
    a = arc3.score(tmp / "agent-a", base, label="agent A")
    b = arc3.score(tmp / "agent-b", base, label="agent B")
    return a, b


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--overwrite", action="store_true")
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        a, b = runs(Path(tmp))
        rec = next(r for r in a.run.recordings if r.name == "tw01-0a1b2c3d-aaaa-1.jsonl")
        drawings = {
            "frame": lambda: F.plot_frame((rec, 20), title="step 20: GAME_OVER"),
            "strip": lambda: F.film_strip(rec),
            "cumulative": lambda: F.cumulative_actions(a, "tw01-0a1b2c3d"),
            "clicks": lambda: F.click_heatmap(a),
            "mix": lambda: F.action_mix(a),
            "compare": lambda: F.compare_scores(a, b),
        }
        for name, draw in drawings.items():
            with paper_style("column"):
                ax = draw()
                save(ax.get_figure(), OUT / f"arc3-{name}.png", dpi=150,
                     overwrite=args.overwrite)
            plt.close("all")
        page = arc3.replay(a, rec).write(OUT / "arc3-replay.html", overwrite=args.overwrite)
        _screenshot(page, OUT / "arc3-replay.png", args.overwrite)
        print(f"agent A {a.score:.2f} [{a.ci95[0]:.2f}, {a.ci95[1]:.2f}], "
              f"agent B {b.score:.2f}; wrote {OUT}")


def _screenshot(page: Path, png: Path, overwrite: bool) -> None:
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(chromium).exists() or (png.exists() and not overwrite):
        return
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True,
                                    args=["--no-sandbox", "--disable-gpu"])
        try:
            view = browser.new_page(viewport={"width": 1100, "height": 620})
            view.goto(page.resolve().as_uri(), wait_until="load")
            for _ in range(20):
                view.keyboard.press("ArrowRight")
            view.screenshot(path=str(png))
        finally:
            browser.close()


if __name__ == "__main__":
    main()
