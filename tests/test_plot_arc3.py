"""arcnb.plot.arc3: what each figure draws (from matplotlib's artists, against values
known from the synthetic game), and every figure through the figure check at one- and
two-column widths."""
from __future__ import annotations


import numpy as np  # noqa: E402
import pytest  # noqa: E402

import _arc3_game as G  # noqa: E402
from arcnb import arc3  # noqa: E402
from arcnb.plot import arc3 as F  # noqa: E402
from arcnb.arc3 import tables as T  # noqa: E402
from arcnb.arc3.reader import read_recording  # noqa: E402
from arcnb.errors import ParameterError  # noqa: E402
from arcnb.plot import paper_style  # noqa: E402
from arcnb.plot.check import check_figure  # noqa: E402


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("arc3fig")
    base = G.scenario(tmp / "a")
    card_a = arc3.score(tmp / "a", base, label="agent A")
    for i, m in enumerate([1, 2]):
        g = G.Game("tw01-0a1b2c3d") if i == 0 else G.Game("tw02-1b2c3d4e", G.GAME_B_LEVELS)
        G.play(tmp / "b" / f"{g.game_id}.jsonl", G.agent(g, m + 1), game=g, guid=f"b{i}")
    card_b = arc3.score(tmp / "b", base, label="agent B")
    rec = read_recording(tmp / "a" / "tw01-0a1b2c3d-aaaa-1.jsonl")
    empty = arc3.score(G.write_lines(tmp / "e" / "r.jsonl",
                                     [G.step("RESET", full=True, frame="absent")]),
                       {"hb01-00000001": [1]})
    return {"a": card_a, "b": card_b, "rec": rec, "empty": empty}


def test_the_palette_is_the_toolkits():
    assert len(T.PALETTE) == 16 and T.PALETTE[0] == "#FFFFFF" and T.PALETTE[5] == "#000000"
    assert T.PALETTE[9] == "#1E93FF" and T.PALETTE[15] == "#A356D6"
    rgb = T.frame_rgb(np.array([[0, 8], [14, 15]]))
    assert rgb.tolist() == [[[255, 255, 255], [249, 60, 49]], [[79, 204, 48], [163, 86, 214]]]
    with pytest.raises(ParameterError):
        T.frame_rgb(np.full((2, 2), 16))
    with pytest.raises(ParameterError):
        T.frame_rgb(np.zeros((65, 3), int))


def test_plot_frame_draws_the_pixels(made):
    rec = made["rec"]
    ax = F.plot_frame((rec, 0), title="start")
    img = ax.get_images()[0].get_array()
    np.testing.assert_array_equal(np.asarray(img), T.frame_rgb(rec.frame(0)))
    assert ax.get_title() == "start"


def test_key_frames_of_the_scenario(made):
    keys = T.key_frames(made["rec"])
    labels = [k[2] for k in keys]
    # opening RESET, level 1 done -> level 2, a level reset, level 2 done -> 3, a trap
    # (lost), a level reset, the win, then a RESET after the win (a new play) whose
    # level 1 is done on the last step
    assert labels == ["start", "done", "start", "start", "done", "start", "lost", "start",
                      "won", "start", "done", "start"]
    assert keys[0][0] == 0
    strip = F.film_strip(made["rec"], max_frames=5)
    ticks = [t.get_text() for t in strip.get_xticklabels()]
    assert len(ticks) == 5 and ticks[0] == "0\nstart" and ticks[-1].endswith("start")


def test_the_bundled_example_keeps_the_key_frames(made):
    """The example's first recording keeps its frames at the key steps only: the same
    key frames, the same pixels, as the recording with every frame."""
    from arcnb.resources import arc3_example

    rec = read_recording(arc3_example().runs[0] / "tw01-0a1b2c3d-aaaa-1.jsonl")
    keys = T.key_frames(rec)
    assert keys == T.key_frames(made["rec"])
    for step, layer, _ in keys:
        np.testing.assert_array_equal(rec.frame(step, layer), made["rec"].frame(step, layer))
    assert set(rec.steps["frame"]) == {"present", "absent", "empty"}


def test_cumulative_actions_follows_the_plays(made):
    ax = F.cumulative_actions(made["a"], "tw01-0a1b2c3d")
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    assert list(lines["play 1"].get_ydata()) == [0, 10, 18, 29]
    assert list(lines["play 3 (best)"].get_ydata()) == [0, 5, 10, 18]
    assert list(lines["human baseline"].get_ydata()) == [0, 5, 10, 18]
    none = F.cumulative_actions(made["a"], "zz99-1")
    assert "never played" in none.texts[0].get_text()


def test_click_heatmap_counts_the_clicks(made):
    ax = F.click_heatmap(made["a"])
    counts = np.asarray(ax.get_images()[0].get_array().filled(0))
    assert counts.sum() == 4
    assert [counts[20 + 2 * k, 10 + k] for k in range(4)] == [1, 1, 1, 1]
    assert ax.get_title() == "4 clicks"
    assert "no click" in F.click_heatmap(made["b"]).texts[0].get_text()


def test_action_mix_shares(made):
    ax = F.action_mix(made["b"])
    assert [t.get_text() for t in ax.get_yticklabels()] == ["tw01-0a1b2c3d", "tw02-1b2c3d4e"]
    # agent B at twice the baseline on tw01: 1 RESET, 18 ACTION5, 18 walking moves
    widths = {p.get_label(): p for p in ax.containers}
    reset = [c for c in ax.containers if c.get_label() == "RESET"][0]
    assert reset.patches[0].get_width() == pytest.approx(1 / 37)
    assert "37" in [t.get_text() for t in ax.texts]
    assert widths
    with pytest.raises(ParameterError):
        F.action_mix(made["b"], by="colour")


def test_compare_scores_pairs_the_games(made):
    ax = F.compare_scores(made["a"], made["b"])
    names = [t.get_text() for t in ax.get_yticklabels()]
    assert set(names) == {"tw01-0a1b2c3d", "tw02-1b2c3d4e", "tw03-2c3d4e5f", "tw04-3d4e5f6a"}
    pts = {c.get_label(): c.get_offsets() for c in ax.collections if c.get_label() in
           ("agent A", "agent B")}
    a_scores = dict(zip(names, pts["agent A"][:, 0]))
    assert a_scores["tw01-0a1b2c3d"] == 100.0 and a_scores["tw02-1b2c3d4e"] == 27.5
    b_y = {names[int(y)]: x for x, y in pts["agent B"]}
    assert b_y["tw01-0a1b2c3d"] == pytest.approx(100 / 4)
    # agent B never played tw03 and tw04: no marker of B there (not a 0 it never scored),
    # no line from A's score; the axis label says what a missing marker means
    assert set(b_y) == {"tw01-0a1b2c3d", "tw02-1b2c3d4e"}
    assert len(a_scores) == 4
    segments = [s for c in ax.collections for s in getattr(c, "get_segments", list)()]
    assert len(segments) == 2
    assert "did not play" in ax.get_xlabel()


def test_figures_with_nothing_to_show_say_so(made):
    e = made["empty"]
    assert "no frame recorded" in F.film_strip(e.run.recordings[0]).texts[0].get_text()
    assert "no action" in F.action_mix(arc3.score(
        G.write_lines(made["rec"].path.parent.parent / "n" / "r.jsonl", [G.step(None)]),
        {}).run).texts[0].get_text()


def test_user_strings_are_drawn_escaped(tmp_path):
    gid = "evil$\\frac{1}{0}$\u202e\x1b"
    G.write_lines(tmp_path / "r.jsonl", G.level_walk([2], game=gid))
    card = arc3.score(tmp_path / "r.jsonl", {gid: [2]}, label="run\u202e")
    ax = F.action_mix(card)
    label = ax.get_yticklabels()[0].get_text()
    assert "\u202e" not in label and "\\u202e" in label and "\\$" in label
    ax.get_figure().canvas.draw()  # mathtext never parses it


FIGURES = {
    "plot_frame": lambda m: F.plot_frame((m["rec"], 5), title="step 5"),
    "film_strip": lambda m: F.film_strip(m["rec"]),
    "cumulative_actions": lambda m: F.cumulative_actions(m["a"], "tw01-0a1b2c3d"),
    "click_heatmap": lambda m: F.click_heatmap(m["a"]),
    "action_mix": lambda m: F.action_mix(m["a"]),
    "compare_scores": lambda m: F.compare_scores(m["a"], m["b"]),
}


def test_every_figure_is_registered():
    drawn = {n for n in F.__all__ if n not in ("PALETTE", "frame_rgb", "key_frames")}
    assert drawn == set(FIGURES)


@pytest.mark.parametrize("width", ["column", "page"])
@pytest.mark.parametrize("name", sorted(FIGURES))
def test_every_figure_passes_the_figure_check(made, name, width):
    with paper_style(width):
        ax = FIGURES[name](made)
    problems = check_figure(ax.get_figure())
    assert problems == [], f"{name} at {width} width:\n" + "\n".join(problems)
