"""arcnb.arc3.replay: a self-contained, script-free replay page; frames encoded once and
decoded back to the game's frames; every user string escaped; the size bounded; and (where
Debian's chromium is installed) the slider and the arrow keys in a real browser."""
from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import _arc3_game as G
from arcnb import arc3
from arcnb.arc3.tables import PALETTE
from arcnb.arc3.replay import png_bytes, replay
from arcnb.errors import ParameterError
from arcnb.html import CSP
from arcnb.html import check_self_contained as _check_self_contained

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium"
                                        if Path("/usr/bin/chromium").exists() else None)


def _decode(data: bytes) -> np.ndarray:
    """A PNG decoded by Pillow, mapped back to colour numbers through the palette."""
    rgb = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
    table = {tuple(int(h[i:i + 2], 16) for i in (1, 3, 5)): k for k, h in enumerate(PALETTE)}
    return np.vectorize(lambda r, g, b: table[(r, g, b)])(rgb[..., 0], rgb[..., 1], rgb[..., 2])


def _images(page: str) -> list[np.ndarray]:
    import base64

    return [_decode(base64.b64decode(m)) for m in
            re.findall(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'", page)]


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("replay")
    base = G.scenario(tmp)
    return arc3.score(tmp, base)


def test_png_bytes_round_trip():
    rng = np.random.default_rng(0)
    for shape in [(64, 64), (7, 5), (1, 1)]:
        a = rng.integers(0, 16, size=shape)
        assert (_decode(png_bytes(a)) == a).all()
    assert len(png_bytes(np.zeros((64, 64), int))) < 200
    with pytest.raises(ParameterError):
        png_bytes(np.full((2, 2), 16))


def test_the_page_is_self_contained_and_script_free(scenario):
    r = replay(scenario, "tw01-0a1b2c3d-aaaa-1.jsonl")
    page = r.html
    assert f'content="{CSP}"' in page and "script-src 'none'" in CSP
    assert "<script" not in page.lower() and "http" not in page.split("</style>", 1)[1]
    _check_self_contained(page)
    assert r.n_steps == r.n_recorded == 38
    assert page.count("type='radio'") == 38 and page.count(" checked autofocus") == 1
    assert r.fragment in page or r.fragment.split("</style>", 1)[1] in page
    # one stylesheet, arcnb.html's: the page look and the player's rules, scoped to it
    from arcnb.html import PAGE_CSS, REPLAY_CSS

    uid = re.search(r"<div class='arcnb-replay' id='([\w-]+)'>", page).group(1)
    sheet = page.split("<style>", 1)[1].split("</style>", 1)[0]
    assert page.count("<style>") == 1 and sheet.startswith(PAGE_CSS)
    assert REPLAY_CSS.replace(".arcnb-replay", f"#{uid}") in sheet
    assert sheet.count(":checked~.view .t") == 38


def test_distinct_frames_are_encoded_once_and_decode_to_the_game(scenario):
    rec = next(x for x in scenario.run.recordings if x.name == "tw01-0a1b2c3d-aaaa-1.jsonl")
    r = replay(scenario, rec)
    decoded = _images(r.html)
    distinct = {rec.frame(i).tobytes() for i in range(len(rec)) if rec.frame(i) is not None}
    assert r.n_images == len(decoded) == len(distinct)
    assert {d.astype(np.uint8).tobytes() for d in decoded} == distinct
    # the step shown at position k maps to the image of its own frame
    rules = dict(re.findall(r"#r\w+s(\d+):checked~\.view \.i(\d+),", r.html))
    for k in (0, 5, 20, 37):
        np.testing.assert_array_equal(decoded[int(rules[str(k)])], rec.frame(k))


def test_each_step_says_how_it_counted_and_the_score_so_far(scenario):
    page = replay(scenario, "tw01-0a1b2c3d-aaaa-1.jsonl").html
    by = {int(k): re.sub("<[^>]+>", " ", v) for k, v in
          re.findall(r"<div class='st t(\d+)'>(.*?)</p>", page, re.S)}
    assert "RESET ; level reset;" in by[13] and "state GAME_OVER" in by[20]
    assert "; not counted: game ended;" in by[21] and "play 1, level 3 of 3" in by[21]
    # the step that wins play 1: its three levels' scores, weighted (see test_arc3_scorer)
    expect = (25 + 2 * 100 * (5 / 8) ** 2 + 3 * 100 * (8 / 11) ** 2) / 6
    assert f"score so far {expect:.2f}" in by[30] and "3 completed; 29 actions so far" in by[30]
    assert "play 2, level 1 of 3, 0 completed; 0 actions so far" in by[32]


def test_reasoning_and_ids_are_escaped(tmp_path):
    evil = "<script>alert(1)</script> \x1b[31m red \u202e txet & 'quote'\nsecond line"
    gid = "ev<il>-\u202e1"
    G.write_lines(tmp_path / "r.jsonl", G.level_walk([2], game=gid, reasoning=evil))
    card = arc3.score(tmp_path / "r.jsonl", {gid: [2]})
    page = replay(card).html
    assert "<script>" not in page and "\x1b" not in page and "\u202e" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; \\x1b[31m red \\u202e txet &amp; " \
           "&#x27;quote&#x27;\nsecond line" in page
    assert "ev&lt;il&gt;-\\u202e1" in page
    _check_self_contained(page)


def test_a_long_recording_is_sampled_with_its_key_steps(tmp_path):
    game = G.Game()
    G.play(tmp_path / "r.jsonl", G.agent(game, 20), game=game)
    card = arc3.score(tmp_path / "r.jsonl", {game.game_id: game.baseline()})
    r = replay(card, max_steps=40)
    assert r.n_recorded == 1 + 20 * 18 and 40 <= r.n_steps <= 45
    assert "Showing" in r.html and f"of the {r.n_recorded} steps" in r.html
    shown = [int(x) for x in re.findall(r"<b>step (\d+)</b> of", r.html)]
    level_done = [100, 200, 361 - 1]  # the steps that complete levels 1, 2, 3
    assert set(level_done) <= set(shown)
    with pytest.raises(ParameterError):
        replay(card, max_steps=0)


def test_long_reasoning_is_cut_and_the_size_of_a_1000_step_replay(tmp_path):
    game = G.Game("tw01-0a1b2c3d", [{"start": (1, 1), "goal": (1, 14), "traps": set()}] * 3)
    actions = ["RESET"]
    for k in range(3):  # a walk and back, over and over: frames change on every step
        actions += (["ACTION4"] * 12 + ["ACTION3"] * 12) * (14 if k == 0 else 13)
        actions += ["ACTION4"] * 13
    assert len(actions) == 1000
    G.play(tmp_path / "r.jsonl", actions, game=game,
           reasoning=lambda k: f"thinking about step {k} " * 20)
    card = arc3.score(tmp_path / "r.jsonl", {game.game_id: [13, 13, 13]})
    r = replay(card, reasoning_chars=100)
    assert r.n_steps == 1000
    assert "more characters)" in r.html
    # bounded: frames are ~100-200 bytes each, one per distinct board
    assert r.size < 1_500_000, r.size


@pytest.mark.slow  # drives a headless browser
@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
def test_the_slider_and_the_arrow_keys_in_a_browser(scenario, tmp_path):
    from playwright.sync_api import sync_playwright

    path = replay(scenario, "tw01-0a1b2c3d-aaaa-1.jsonl").write(tmp_path / "replay.html")
    url = path.resolve().as_uri()
    requests = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                    args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page()
            page.on("request", lambda r: requests.append(r.url))
            page.goto(url, wait_until="load")

            def shown():
                return page.evaluate("""() => Array.from(document.querySelectorAll('.st'))
                    .filter(e => e.offsetParent !== null).map(e => e.className)""")

            def images():
                return page.evaluate("""() => Array.from(document.querySelectorAll('img'))
                    .filter(e => e.offsetParent !== null && e.naturalWidth === 64).length""")

            assert shown() == ["st t0"] and images() == 1
            page.keyboard.press("ArrowRight")
            page.keyboard.press("ArrowRight")
            assert shown() == ["st t2"] and images() == 1
            page.keyboard.press("ArrowLeft")
            assert shown() == ["st t1"]
            page.click("label[for$='s37']" if page.query_selector("label[for$='s37']")
                       else "input[id$='s37']")
            assert shown() == ["st t37"]
        finally:
            browser.close()
    assert all(u == url or u.startswith("data:") for u in requests), requests


def test_frames_of_the_same_bytes_and_another_shape_are_two_images(tmp_path):
    """A 32 x 16 frame of zeros and a 16 x 32 frame of zeros hold the same bytes: the
    replay shows each step its own frame (two images), never the other's."""
    lines = [G.step("RESET", full=True, frame=[[[0] * 16 for _ in range(32)]]),
             G.step("ACTION1", frame=[[[0] * 32 for _ in range(16)]])]
    G.write_lines(tmp_path / "r.jsonl", lines)
    card = arc3.score(tmp_path / "r.jsonl", {"hb01-00000001": [2] * 6})
    r = replay(card)
    decoded = _images(r.html)
    assert r.n_images == len(decoded) == 2
    assert sorted(d.shape for d in decoded) == [(16, 32), (32, 16)]
    rules = dict(re.findall(r"#r\w+s(\d+):checked~\.view \.i(\d+),", r.html))
    assert decoded[int(rules["0"])].shape == (32, 16)
    assert decoded[int(rules["1"])].shape == (16, 32)
