"""Tests of arcnb.plot. They inspect plot objects (image arrays, artists, bytes), never
screenshots; expected values come from hand-written tables or naive loops."""
from __future__ import annotations

import io
import types

import matplotlib


import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import _plot_runs  # noqa: E402
from _plot_runs import perturb as _perturb  # noqa: E402
from arcnb import plot as P  # noqa: E402
from arcnb.errors import OutputExistsError  # noqa: E402
from arcnb.plot import tiles as T  # noqa: E402
from arcnb.scoring import score  # noqa: E402

# the official ARC palette, written out by hand (value -> RGB)
OFFICIAL = {
    0: (0x00, 0x00, 0x00), 1: (0x00, 0x74, 0xD9), 2: (0xFF, 0x41, 0x36), 3: (0x2E, 0xCC, 0x40),
    4: (0xFF, 0xDC, 0x00), 5: (0xAA, 0xAA, 0xAA), 6: (0xF0, 0x12, 0xBE), 7: (0xFF, 0x85, 0x1B),
    8: (0x7F, 0xDB, 0xFF), 9: (0x87, 0x0C, 0x25),
}
RED_MARK = (0xD6, 0x27, 0x28)  # DIFF_WRONG_COLOR, by hand


@pytest.fixture(scope="module")
def small_ds(arc1_eval):
    """30 real evaluation tasks (some with two test outputs)."""
    return _plot_runs.small_ds(arc1_eval)


@pytest.fixture(scope="module")
def mixed_results(small_ds):
    """Real predictions of four kinds (solved on attempt 2, a near miss, a copy of the
    test input, missing outputs), scored."""
    return _plot_runs.mixed_results(small_ds)


# ------------------------------------------------------------------ palette and grid
def test_palette_is_the_official_one():
    assert P.PALETTE == ("#000000", "#0074D9", "#FF4136", "#2ECC40", "#FFDC00",
                         "#AAAAAA", "#F012BE", "#FF851B", "#7FDBFF", "#870C25")
    for v, rgb in OFFICIAL.items():
        assert tuple(P.PALETTE_RGB[v]) == rgb


def test_grid_image_has_the_palette_colour_in_every_cell(arc1_eval):
    g = arc1_eval["00576224"].test[0].output  # a real 6x6 grid
    ax = P.grid(g)
    img = np.asarray(ax.images[0].get_array())
    assert img.shape == (6, 6, 3)
    for r in range(6):
        for c in range(6):
            assert tuple(img[r, c]) == OFFICIAL[int(g[r, c])]
    assert "6x6" in ax.get_title()


def test_grid_rendered_pixels_are_exact_at_cell_centres(arc1_eval):
    g = next(t for t in arc1_eval if len(np.unique(t.test[0].output)) >= 4).test[0].output
    h, w = g.shape
    fig = plt.figure(figsize=(w * 0.3, h * 0.3), dpi=100)
    ax = fig.add_axes((0, 0, 1, 1))
    P.grid(g, ax=ax, label=False)
    fig.canvas.draw()
    buf = np.asarray(fig.canvas.buffer_rgba())[..., :3]
    H = buf.shape[0]
    for r in range(h):
        for c in range(w):
            x, y = ax.transData.transform((c, r))
            px = buf[int(round(H - y)), int(round(x))]
            assert tuple(px) == OFFICIAL[int(g[r, c])], (r, c)


def test_padding_is_drawn_distinctly_never_black():
    g = np.array([[0, 1, 10], [2, 10, 10]])
    ax = P.grid(g)
    img = np.asarray(ax.images[0].get_array())
    pad_rgb = tuple(img[0, 2])
    assert pad_rgb != (0, 0, 0)
    assert pad_rgb not in OFFICIAL.values()
    assert tuple(img[0, 0]) == (0, 0, 0)  # colour 0 is black, a real colour
    hatch = [c for c in ax.collections if c.get_gid() == "arcnb-padding"]
    assert len(hatch) == 1 and len(hatch[0].get_paths()) == 3  # the three pad cells
    assert hatch[0].get_hatch() is not None


def test_pad_token_inside_the_palette_is_refused():
    with pytest.raises(ValueError, match="colour 0 is black"):
        P.grid([[0, 1]], pad_token=0)
    with pytest.raises(ValueError, match="outside the ARC colours"):
        P.grid([[0, 11]])


def test_cell_lines_and_values():
    g = np.array([[3, 4, 5], [6, 7, 8]])
    ax = P.grid(g, values=True)
    lines = [c for c in ax.collections if c.get_gid() == "arcnb-cell-lines"]
    assert len(lines) == 1
    assert len(lines[0].get_segments()) == (2 + 1) + (3 + 1)
    assert max(lines[0].get_linewidths()) <= 1.0  # thin
    assert sorted(t.get_text() for t in ax.texts) == sorted(str(v) for v in g.ravel())


# ------------------------------------------------------------------ pair and task
def test_difference_panel_marks_exactly_the_wrong_cells(arc1_eval):
    truth = arc1_eval["009d5c81"].test[0].output
    wrong = {(0, 0), (3, 5), (truth.shape[0] - 1, truth.shape[1] - 1)}
    pred = _perturb(truth, wrong)
    fig = P.pair(truth, pred)
    diff = fig.axes[2]
    img = np.asarray(diff.images[0].get_array())
    marked = {tuple(x) for x in np.argwhere((img == RED_MARK).all(axis=-1))}
    assert marked == wrong
    assert f"3 of {truth.size} cells wrong" in diff.get_title()
    assert P.diff_mask(truth, pred).sum() == 3


def test_shape_mismatch_is_stated():
    truth = np.zeros((3, 3), int)
    fig = P.pair(truth, np.zeros((4, 5), int))
    diff = fig.axes[2]
    assert len(diff.images) == 0  # no cell is marked
    text = " ".join(t.get_text() for t in diff.texts).replace("\n", " ")
    assert "shape mismatch" in text and "truth 3x3" in text and "prediction 4x5" in text
    assert "shape mismatch" in diff.get_title()
    fig = P.pair(truth, None)
    assert "no prediction" in " ".join(t.get_text() for t in fig.axes[2].texts)
    assert P.diff_mask(truth, np.zeros((4, 5), int)) is None


def test_task_draws_demos_then_tests_with_attempts_marked(arc1_eval):
    t = arc1_eval["00576224"]
    truth = t.test[0].output
    fig = P.task(t, [[_perturb(truth, [(1, 1)]), truth]])
    titles = [ax.get_title() for ax in fig.axes if ax.axison]
    n_demo = len(t.train)
    assert titles[: 2 * n_demo:2] == [f"demo {i + 1} input 2x2" for i in range(n_demo)]
    assert any(s.startswith("attempt 1 ✗ wrong") for s in titles)
    assert any(s.startswith("attempt 2 ✓ right") for s in titles)
    right = next(ax for ax in fig.axes if ax.get_title().startswith("attempt 2"))
    assert matplotlib.colors.to_hex(right.title.get_color()) == "#1a9850"


def test_task_accepts_results_and_arc_prize_dicts(arc1_eval, mixed_results):
    t = mixed_results.dataset[mixed_results.dataset.task_ids[0]]  # kind 0: attempt 2 right
    fig = P.task(t, mixed_results)
    titles = [ax.get_title() for ax in fig.axes]
    assert sum("✓ right" in s for s in titles) == len(t.test)
    sub = {t.id: [{"attempt_1": p.output.tolist()} for p in t.test]}
    fig = P.task(t, sub)
    assert sum("✓ right" in ax.get_title() for ax in fig.axes) == len(t.test)


# ------------------------------------------------------------------ gallery
def _naive_label(results, tid, i):
    truth = results.truth(tid, i)
    atts = results.attempts(tid, i)[:2]
    best, acc, first_right = None, None, None
    for j, a in enumerate(atts):
        if a is not None and a.shape == truth.shape:
            s = sum(int(a[r, c] == truth[r, c]) for r in range(truth.shape[0])
                    for c in range(truth.shape[1])) / truth.size
            if s == 1.0 and first_right is None:
                first_right = j
            if acc is None or s > acc:
                best, acc = j, s
    if first_right is not None:
        best, acc = first_right, 1.0
    if best is None:
        best = next((j for j, a in enumerate(atts) if a is not None), None)
    text = f"{tid} test {i}  cell acc " + ("NaN" if acc is None else f"{acc:.3f}")
    if best is not None and len(results.attempts(tid, i)) > 1:
        text += f"  attempt {best + 1}"
    return text


def test_gallery_of_50_triples_has_the_right_labels(arc1_eval):
    ds = arc1_eval.select(arc1_eval.task_ids[:52])
    preds = {}
    for n, t in enumerate(ds):
        entries = []
        for p in t.test:
            if n % 3 == 0:
                entries.append({"attempt_1": p.input.tolist()})
            elif n % 3 == 1:
                k = 1 + n % 4
                cells = [(r % p.output.shape[0], (3 * r) % p.output.shape[1]) for r in range(k)]
                entries.append({"attempt_1": _perturb(p.output, cells).tolist(),
                                "attempt_2": _perturb(p.output, cells[:1]).tolist()})
            else:
                entries.append({"attempt_1": p.output.tolist()})
        preds[t.id] = entries
    res = score(ds, preds, n_boot=20)
    assert len(res.outputs) >= 50
    fig = P.gallery(res, "all", max_items=50)
    pairs = list(zip(res.outputs["task_id"], res.outputs["test_index"]))[:50]
    expected = []
    for tid, i in pairs:
        lab = _naive_label(res, tid, int(i))
        if res.outputs.set_index(["task_id", "test_index"]).loc[(tid, i), "solved@2"]:
            lab += "  ✓"
        expected.append(lab)
    assert fig.arcnb_labels == expected
    assert len(fig.axes) == 1 and len(fig.axes[0].images) == 1  # one image, not one Axes per grid
    # as Text artists: every label's two lines are there
    fig = P.gallery(res, "all", max_items=50, text="artists")
    texts = [t.get_text() for t in fig.axes[0].texts]
    for tid, i in pairs:
        assert f"{tid} test {int(i)}" in texts


def test_gallery_image_is_rendered_pixel_exact_and_marks_wrong_cells(arc1_eval):
    t = arc1_eval["00576224"]
    truth = t.test[0].output
    wrong = {(0, 1), (2, 2), (5, 4)}
    res = score(arc1_eval.select([t.id]), {t.id: [{"attempt_1": _perturb(truth, wrong).tolist()}]},
                n_boot=10)
    fig = P.gallery(res, "failed", dpi=100)
    lay = fig.arcnb_layout
    img = fig.arcnb_image
    slot, gap = lay["slot"], lay["gap"]
    c = (slot - 1) // 6
    x0, y0 = lay["origin"][0] + 2 * (slot + gap), lay["origin"][1] + lay["label_px"]
    marked = set()
    for r in range(6):
        for col in range(6):
            px = img[y0 + r * c + c // 2, x0 + col * c + c // 2]
            if tuple(px) == RED_MARK:
                marked.add((r, col))
    assert marked == wrong
    # the truth tile holds the palette colours
    tx = lay["origin"][0]
    for r in range(6):
        for col in range(6):
            assert tuple(img[y0 + r * c + c // 2, tx + col * c + c // 2]) == OFFICIAL[int(truth[r, col])]
    # what Agg draws is that image, pixel for pixel
    fig.canvas.draw()
    buf = np.asarray(fig.canvas.buffer_rgba())[..., :3]
    assert buf.shape == img.shape and np.array_equal(buf, img)


def test_gallery_selection_matches_a_naive_filter(mixed_results):
    out = mixed_results.outputs
    rows = out.to_dict("records")
    solved = [(r["task_id"], r["test_index"]) for r in rows if r["solved@2"]]
    failed = [(r["task_id"], r["test_index"]) for r in rows if not r["solved@2"]]
    near = [(r["task_id"], r["test_index"]) for r in rows
            if not r["solved@2"] and not np.isnan(r["cell_accuracy"]) and r["cell_accuracy"] >= 0.9]

    def keys(df):
        return list(zip(df["task_id"], df["test_index"]))

    assert keys(P.gallery_items(mixed_results, "solved")) == solved
    assert keys(P.gallery_items(mixed_results, "failed")) == failed
    assert keys(P.gallery_items(mixed_results, "near_miss")) == near
    assert len(near) > 0 and len(solved) > 0
    some = sorted({t for t, _ in failed})[:3]
    assert keys(P.gallery_items(mixed_results, "failed", tasks=some)) == \
        [k for k in failed if k[0] in some]
    cats = {tid: (["even"] if n % 2 == 0 else ["odd", "x"])
            for n, tid in enumerate(mixed_results.dataset.task_ids)}
    got = keys(P.gallery_items(mixed_results, "all", category="odd", categories=cats))
    assert got == [k for k in keys(out) if "odd" in cats[k[0]]]
    with pytest.raises(ValueError, match="no category information"):
        P.gallery_items(mixed_results, "all", category="odd")
    with pytest.raises(ValueError, match="select must be"):
        P.gallery_items(mixed_results, "wrong")
    srt = P.gallery_items(mixed_results, "near_miss", sort="cell_accuracy")
    assert list(srt["cell_accuracy"]) == sorted(srt["cell_accuracy"], reverse=True)


def test_gallery_states_missing_and_mismatched_predictions(mixed_results):
    fig = P.gallery(mixed_results, "failed", text="artists")
    texts = [t.get_text() for t in fig.axes[0].texts]
    # "shape mismatch" is wider than a 64-pixel panel: written on two lines
    assert "shape" in texts and "mismatch" in texts and "prediction" in texts
    fig = P.gallery(mixed_results, "failed", tasks=[], max_items=5)
    assert fig.arcnb_labels == []


def test_gallery_pages_split(mixed_results):
    figs = P.gallery_pages(mixed_results, "all", per_page=8)
    n = len(mixed_results.outputs)
    assert len(figs) == -(-n // 8)
    assert sum(len(f.arcnb_labels) for f in figs) == n


# ------------------------------------------------------------------ breakdown charts


def test_color_accuracy_bars_use_the_arc_colours():
    df = pd.DataFrame({"color": range(10), "accuracy": np.linspace(0, 0.9, 10),
                       "n_cells": range(10, 20), "ci_low": np.linspace(0, 0.9, 10) - 0.05,
                       "ci_high": np.linspace(0, 0.9, 10) + 0.05})
    df.loc[3, ["accuracy", "ci_low", "ci_high"]] = np.nan
    ax = P.color_accuracy(df)
    faces = [matplotlib.colors.to_hex(p.get_facecolor()).upper() for p in ax.patches]
    assert faces == list(P.PALETTE)
    assert ax.patches[5].get_height() == pytest.approx(0.5)
    assert any(t.get_text() == "NaN" for t in ax.texts)


def test_color_charts_from_results(mixed_results):
    ax = P.color_accuracy(mixed_results)
    assert len(ax.patches) == 10
    ax = P.confusion_heatmap(mixed_results)
    m = ax.arcnb_matrix
    rows = m[~np.isnan(m).all(axis=1)]
    assert np.allclose(rows.sum(axis=1), 1.0)


def test_confusion_heatmap_is_row_normalised():
    counts = np.zeros((10, 10), int)
    counts[0, 0], counts[0, 1] = 3, 1
    counts[2, 2] = 5
    ax = P.confusion_heatmap(pd.DataFrame(counts))
    m = ax.arcnb_matrix
    assert m[0, 0] == 0.75 and m[0, 1] == 0.25 and m[2, 2] == 1.0
    assert np.isnan(m[1]).all()  # a colour absent from the truth: NaN, not 0
    with pytest.raises(ValueError, match="10 x 10"):
        P.confusion_heatmap(np.zeros((3, 3)))


# ------------------------------------------------------------------ paper style, saving
def test_packaged_style_by_dotted_name_and_helper():
    with plt.style.context("arcnb.paper"):
        rc = matplotlib.rcParams
        assert rc["pdf.fonttype"] == 42 and rc["svg.fonttype"] == "none"
        assert list(rc["figure.figsize"]) == [P.SINGLE_COLUMN, 2.4]
    with P.paper_style():
        assert matplotlib.rcParams["pdf.fonttype"] == 42
    assert P.figsize(1)[0] == 3.5 and P.figsize(2)[0] == 7.2
    with pytest.raises(ValueError):
        P.figsize(3)


def _chart():
    with P.paper_style():
        fig, axes = plt.subplots(1, 2, figsize=P.figsize(2))
        P.grid(np.arange(12).reshape(3, 4) % 10, ax=axes[0], values=True)
        P.breakdown_bars(pd.DataFrame({"group": ["a", "b"], "pass@2": [0.25, 0.75]}), ax=axes[1])
    return fig


@pytest.mark.parametrize("fmt", ["pdf", "svg", "png"])
def test_save_is_deterministic(tmp_path, fmt):
    fig = _chart()
    a = P.save(fig, tmp_path / f"a.{fmt}")
    b = P.save(fig, tmp_path / f"b.{fmt}")
    fig2 = _chart()  # a fresh figure from the same inputs too
    c = P.save(fig2, tmp_path / f"c.{fmt}")
    assert a.read_bytes() == b.read_bytes() == c.read_bytes()
    data = a.read_bytes()
    if fmt == "pdf":
        assert b"/FontFile2" in data  # TrueType embedded
        assert b"/Subtype /Type3" not in data
        assert b"CreationDate" not in data
    if fmt == "svg":
        assert b"<text" in data  # text kept as text
        assert b"<dc:date>" not in data


def test_save_refuses_to_overwrite_and_unknown_formats(tmp_path):
    fig = _chart()
    p = P.save(fig, tmp_path / "f.png")
    with pytest.raises(OutputExistsError):
        P.save(fig, p)
    P.save(fig, p, overwrite=True)
    with pytest.raises(ValueError, match="pdf, svg or png"):
        P.save(fig, tmp_path / "f.jpg")


def test_gallery_saves_deterministically(tmp_path, mixed_results):
    fig = P.gallery(mixed_results, "all")
    a = P.save(fig, tmp_path / "g1.png").read_bytes()
    b = P.save(P.gallery(mixed_results, "all"), tmp_path / "g2.png").read_bytes()
    assert a == b
    from PIL import Image

    im = np.asarray(Image.open(io.BytesIO(a)).convert("RGB"))
    assert np.array_equal(im, fig.arcnb_image)  # the PNG holds the image pixel for pixel


# ------------------------------------------------------------------ rich display
def test_views_render_png(arc1_eval):
    from PIL import Image

    t = arc1_eval["00576224"]
    for view in (P.view(t.test[0].output), P.view(t), P.view(t.train[0]),
                 P.PairView(t.test[0].output, t.test[0].output), P.TaskView(t, [[t.test[0].input]])):
        png = view._repr_png_()
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        w, h = Image.open(io.BytesIO(png)).size
        assert w > 50 and h > 50
    assert plt.get_fignums() == []  # views never leave pyplot figures behind


def test_enable_rich_display_registers_png_formatters(arc1_eval):
    from IPython.core.formatters import DisplayFormatter

    shell = types.SimpleNamespace(display_formatter=DisplayFormatter())
    assert P.enable_rich_display(shell) is True
    t = arc1_eval["00576224"]
    data, _ = shell.display_formatter.format(t)
    assert data["image/png"][:4] == b"\x89PNG"
    data, _ = shell.display_formatter.format(t.train[0])
    assert "image/png" in data
    assert P.enable_rich_display(types.SimpleNamespace()) is False


# the public names of arcnb.plot, written out by hand (the README's and the notebooks' API)
PUBLIC = """PALETTE PALETTE_RGB COLOR_NAMES PAD_COLOR PAD_HATCH_COLOR LINE_COLOR DIFF_OK_COLOR
DIFF_WRONG_COLOR SINGLE_COLUMN DOUBLE_COLUMN STYLE grid_image diff_mask grid pair task gallery
gallery_items gallery_pages color_accuracy confusion_heatmap breakdown_bars pass_at_k compare
leaderboard
paper_style figsize save GridView PairView TaskView view enable_rich_display""".split()
# the charts that scale to their data, the graded breakdown panels and the cost charts
PUBLIC += "breakdown_panels cell_accuracy_hist cost_vs_score cost_by_outcome value_limit value_label".split()
# the figure check and the paper widths by name
PUBLIC += "check_figure WIDTHS paper_width".split()
# the candidate-pool figures
PUBLIC += "rank_histogram coverage_vs_pass reliability_diagram pass_at_k_by_rule candidate_strip".split()
# a checkpoint sweep's figures and the logger's image
PUBLIC += "pairs_image learning_curve learning_curves changes_bars solved_heatmap category_curves".split()
# many runs analysed together
PUBLIC += "seed_spread union_coverage solve_matrix winners_curse".split()
# test-time compute and verifiers in candidate pools
PUBLIC += "anytime_curve verifier_confusion first_right_step_histogram".split()
# memorisation and invariance probes
PUBLIC += "probe_scores probe_drops probe_consistency proxy_vs_true probe_gallery lost_outputs".split()
# task difficulty across systems
PUBLIC += "ability_intervals accuracy_by_difficulty difficulty_vs_human surprise_gallery".split()


@pytest.mark.slow  # starts another process
def test_every_public_name_is_importable_from_arcnb_plot():
    """`arcnb.plot.X` and `from arcnb.plot import *` give every public name, and importing
    arcnb.plot does not import matplotlib (the first drawing does)."""
    import subprocess
    import sys

    ns: dict = {}
    exec("from arcnb.plot import *", ns)
    assert set(PUBLIC) <= set(ns) and set(P.__all__) == set(PUBLIC)
    for name in PUBLIC:
        assert getattr(P, name) is ns[name]
    assert callable(P.gallery) and callable(P.grid) and callable(P.save)
    code = ("import sys, arcnb.plot\n"
            "print(sorted(m for m in ('matplotlib', 'IPython') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "[]"


# ------------------------------------------------------------------ properties and environment
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@st.composite
def _triple(draw):
    h, w = draw(st.integers(1, 30)), draw(st.integers(1, 30))
    truth = np.array(draw(st.lists(st.integers(0, 9), min_size=h * w, max_size=h * w))).reshape(h, w)
    kind = draw(st.sampled_from(["same", "other", "none"]))
    if kind == "none":
        return truth, None
    if kind == "same":
        flips = np.array(draw(st.lists(st.booleans(), min_size=h * w, max_size=h * w))).reshape(h, w)
        return truth, np.where(flips, (truth + 3) % 10, truth)
    h2, w2 = draw(st.integers(1, 30)), draw(st.integers(1, 30))
    return truth, np.full((h2, w2), draw(st.integers(0, 9)))


@settings(max_examples=50, deadline=None)
@given(st.lists(_triple(), min_size=1, max_size=6), st.sampled_from([31, 40, 64, 97]))
def test_gallery_tiles_hold_every_cell_and_mark_exactly_the_wrong_ones(triples, slot):
    tiles = T.render_tiles(triples, slot)
    for n, (truth, pred) in enumerate(triples):
        dims = truth.shape + (() if pred is None else pred.shape)
        c = max(1, (slot - 1) // max(dims))
        h, w = truth.shape
        for r in range(h):
            for col in range(w):
                y, x = r * c + c // 2, col * c + c // 2
                assert tiles[n, 0, y, x] == truth[r, col]
                d = tiles[n, 2, y, x]
                if pred is None or pred.shape != truth.shape:
                    assert d in (T._T_MISMATCH, T._T_MISMATCH_HATCH)
                elif pred[r, col] != truth[r, col]:
                    assert d == T._T_WRONG
                else:
                    assert d == T._T_OK
        if pred is not None:
            for r in range(pred.shape[0]):
                for col in range(pred.shape[1]):
                    assert tiles[n, 1, r * c + c // 2, col * c + c // 2] == pred[r, col]
        else:
            assert (tiles[n, 1] == T.BACKGROUND_TOKEN).all()


def test_gallery_attempt_choice(mixed_results):
    fig = P.gallery(mixed_results, "solved", attempt=1)
    # kind-0 tasks: attempt 1 is the input copy, so the drawn attempt is not the right one
    assert all("attempt 1" in lab for lab in fig.arcnb_labels)
    with pytest.raises(ValueError, match="attempt must be"):
        P.gallery(mixed_results, "solved", attempt=0)
    with pytest.raises(ValueError, match="slot must be"):
        P.gallery(mixed_results, "solved", slot=8)


@pytest.mark.slow  # starts another process
def test_headless_and_offline(tmp_path):
    """A fresh interpreter with no display, no backend setting and no network draws and
    saves every kind of figure."""
    import os
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(f"""
        import socket
        def _no_network(*a, **k):
            raise OSError("network disabled in this test")
        socket.socket.connect = _no_network
        socket.socket.connect_ex = _no_network
        socket.create_connection = _no_network
        import numpy as np, pandas as pd, matplotlib
        from arcnb import plot as P
        from arcnb.data import load_dataset
        from arcnb.scoring import score
        ds = load_dataset("arc-agi-1:evaluation").select(["00576224", "009d5c81"])
        res = score(ds, {{t.id: [{{"attempt_1": p.input.tolist()}} for p in t.test] for t in ds}},
                    n_boot=10)
        out = {str(tmp_path)!r}
        P.save(P.task(ds["00576224"], res), out + "/task.pdf")
        P.save(P.pair(ds["00576224"].test[0].output, ds["00576224"].test[0].input), out + "/pair.svg")
        P.save(P.gallery(res, "all"), out + "/gallery.png")
        P.save(P.breakdown_bars(pd.DataFrame({{"group": ["a"], "pass@2": [0.5]}})), out + "/b.pdf")
        P.view(ds["00576224"])._repr_png_()
        print(matplotlib.get_backend())
    """)
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY",
                                                             "MPLBACKEND")}
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().lower() == "agg"
    assert {p.name for p in tmp_path.iterdir()} == {"task.pdf", "pair.svg", "gallery.png", "b.pdf"}


@pytest.mark.slow  # runs code in a Jupyter kernel
def test_task_and_grid_show_as_pictures_in_a_real_kernel():
    """A Task, a Pair or a wrapped grid that ends a notebook cell displays as a PNG."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    from jupyter_client.kernelspec import KernelSpecManager

    if "python3" not in KernelSpecManager().find_kernel_specs():
        pytest.skip("no python3 Jupyter kernel installed")
    nb = nbformat.v4.new_notebook()
    # Task and Pair before arcnb.plot is imported: `import arcnb` wires the display
    nb.cells = [nbformat.v4.new_code_cell("from arcnb import load_dataset\n"
                                          "ds = load_dataset('arc-agi-1:evaluation')"),
                nbformat.v4.new_code_cell("ds['00576224']"),
                nbformat.v4.new_code_cell("ds['00576224'].train[0]"),
                nbformat.v4.new_code_cell("import arcnb.plot as P\n"
                                          "P.view(ds['00576224'].test[0].output)")]
    nbclient.NotebookClient(nb, timeout=180, kernel_name="python3").execute()
    for cell in nb.cells[1:]:
        result = [o for o in cell.outputs if o["output_type"] == "execute_result"]
        assert len(result) == 1 and "image/png" in result[0]["data"]


def test_charts_take_a_run_as_they_take_its_results(mixed_results):
    """A Run is charted from its results (no duck typing); a Run without scores is
    refused with a ParameterError."""
    from arcnb.errors import ParameterError
    from arcnb.runs import Run

    run = Run.from_results(mixed_results, label="mixed")
    acc = mixed_results.outputs["cell_accuracy"].to_numpy(float)
    naive, _ = np.histogram(acc[np.isfinite(acc)], bins=20, range=(0.0, 1.0))
    ax = P.cell_accuracy_hist(run, bins=20)
    assert list(ax.arcnb_counts) == list(naive)
    line = P.pass_at_k(run, labels=["mixed"]).get_lines()[0]
    assert list(line.get_ydata()) == list(mixed_results.pass_at_k_table()["pass@K"])
    blank = Run(None, {"scored": True}, None, "blank")  # as Run.read gives: no results
    with pytest.raises(ParameterError, match="no scores to chart"):
        P.cell_accuracy_hist(blank)


def test_explorer_tiles_are_the_gallery_tiles(small_ds):
    """The explorer's grid and difference tiles come from the gallery's raster engine:
    same pixels as the gallery's panels of the same grid at the same cell size, and each
    cell centre is the grid's ARC colour (hand-checked against the palette)."""
    from arcnb.plot.palette import PALETTE, hex_to_rgb
    from arcnb.plot.tiles import _LUT, render_tiles, diff_tile, grid_tile

    g = small_ds[small_ds.task_ids[0]].test[0].output
    p = g.copy()
    p[0, 0] = (p[0, 0] + 1) % 10
    h, w = g.shape
    for c in (2, 3, 6):
        slot = max(h, w) * c + 1
        panels = _LUT[render_tiles([(g, p)], slot)[0]]
        tile = grid_tile(g, c)
        assert tile.shape == (h * c + 1, w * c + 1, 3)
        assert np.array_equal(tile, panels[0][: h * c + 1, : w * c + 1])
        assert np.array_equal(diff_tile(g != p, c), panels[2][: h * c + 1, : w * c + 1])
        centres = tile[c // 2 + np.arange(h)[:, None] * c, c // 2 + np.arange(w)[None, :] * c]
        if c >= 4:  # cells large enough that the centre is off the lines
            want = np.array([hex_to_rgb(PALETTE[v]) for v in g.ravel()]).reshape(h, w, 3)
            assert np.array_equal(centres, want)


def test_a_tight_png_is_trimmed_exactly_as_matplotlib_trims_it():
    """``figure_bytes(..., bbox_inches="tight")`` measures the trimmed box without an
    extra drawing; the picture must equal matplotlib's own tight save pixel for pixel
    (labels sticking out on every side, a suptitle, a legend outside the axes)."""
    from PIL import Image

    from arcnb.plot.paper import figure_bytes

    def make():
        fig, ax = plt.subplots(figsize=(4, 3))
        ax.bar(["a very long category name", "b"], [0.2, 0.9], label="pass@2")
        ax.set_xticks([0, 1], ["a very long category name", "b"], rotation=60)
        ax.set_ylabel("a label far to the left\nof two lines")
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))
        fig.suptitle("a title wider than the axes themselves, far wider")
        return fig

    fig = make()
    ours = figure_bytes(fig, "png", bbox_inches="tight")
    plt.close(fig)
    fig = make()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight", dpi="figure")
    plt.close(fig)
    a = np.asarray(Image.open(io.BytesIO(ours)))
    b = np.asarray(Image.open(io.BytesIO(buf.getvalue())))
    assert a.shape == b.shape and a.shape[1] > 400  # the legend and labels are kept
    assert (a == b).all()


#: arcnb.plot's functions that draw no figure (images as arrays, helpers, the style).
NOT_DRAWING = {"grid_image", "diff_mask", "gallery_items", "paper_style", "figsize", "save",
               "view", "enable_rich_display", "pairs_image", "value_limit", "value_label",
               "check_figure", "paper_width", "lost_outputs"}
#: The figure-level functions: they make a figure of their own (several panels).
FIGURE_LEVEL = {"pair", "task", "gallery", "gallery_pages", "learning_curves",
                "breakdown_panels", "cost_by_outcome", "probe_gallery", "surprise_gallery"}


def test_every_plot_function_takes_ax_none_or_is_a_documented_figure_level_one():
    """The rule of ``arcnb/plot/`` (ARCHITECTURE.md, "A plot"): a drawing function takes
    ``ax=None`` (drawing on a new Axes when none is given; that it returns the Axes it is
    given is checked for every one in ``tests/test_plot_check.py``), or it is a
    figure-level function whose docstring says it makes a figure."""
    import inspect

    axes_level, figure_level = [], []
    for name in P.__all__:
        fn = getattr(P, name)
        if not inspect.isfunction(fn) or name in NOT_DRAWING:
            continue
        params = inspect.signature(fn).parameters
        if "ax" in params:
            assert params["ax"].default is None, name
            axes_level.append(name)
        else:
            assert name in FIGURE_LEVEL, f"{name} draws but takes no ax="
            assert "figure" in (fn.__doc__ or "").lower() or "axes" in (fn.__doc__ or "").lower(), name
            figure_level.append(name)
    assert sorted(figure_level) == sorted(FIGURE_LEVEL)
    assert len(axes_level) >= 29  # the axes-level figures when this test was written
