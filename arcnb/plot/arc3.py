"""Figures of ARC-AGI-3 runs for papers: a frame in the game's palette, a film strip of key
frames, cumulative actions against the human baseline, where the clicks went, the mix of
action types, and two agents' per-game scores side by side.

Every function takes ``ax=None`` (a new figure at the current style's width, e.g. inside
:func:`arcnb.plot.paper_style`) and returns the Axes; user strings (game ids, run labels)
are drawn as plain text with unprintable characters escaped. A figure with nothing to
show says so in words. The palette is the toolkit's (``arc_agi/rendering.py``
``COLOR_MAP``): 16 colours, 0 is white; ARC-AGI-1/2's 0-9 palette and its 30 x 30 grid
checks are never applied to frames.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd

from ..arc3.reader import ACTIONS, FRAME_SIZE, Recording, Run
from ..arc3.scorer import Scorecard
from ..arc3.tables import frame_rgb, key_frames
from ..errors import ParameterError
from .palette import pyplot
from .pixelfont import plain_label

__all__ = ["plot_frame", "film_strip",
           "cumulative_actions", "click_heatmap", "action_mix", "compare_scores"]

#: Colours of the action types in :func:`action_mix` (colour-blind-safe, RESET grey).
ACTION_COLOURS = ("#999999", "#0072B2", "#56B4E9", "#009E73", "#E69F00", "#D55E00",
                  "#CC79A7", "#000000")


def _new_ax(aspect: float = 0.62, height: float | None = None):
    plt = pyplot()
    width = plt.rcParams["figure.figsize"][0]
    _, ax = plt.subplots(figsize=(width, height if height is not None else width * aspect))
    return ax


def _nothing(ax, text: str):
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])
    return ax


def plot_frame(frame, ax=None, *, title: str | None = None):
    """One frame layer in the ARC-AGI-3 palette, pixel for pixel (``frame``: a 2-D array,
    or ``(recording, step)`` for that step's last layer). Returns the Axes."""
    if isinstance(frame, tuple) and len(frame) == 2 and isinstance(frame[0], Recording):
        rec, i = frame
        frame = rec.frame(i)
        if frame is None:
            ax = ax or _new_ax(1.0)
            return _nothing(ax, f"step {i} holds no frame")
    ax = ax or _new_ax(1.0)
    ax.imshow(frame_rgb(frame), interpolation="nearest")
    ax.set_xticks([])
    ax.set_yticks([])
    for side in ax.spines.values():
        side.set_visible(True)
        side.set_color("#999999")
    if title:
        ax.set_title(plain_label(title))
    return ax


def _pick(items: list, n: int) -> list:
    if len(items) <= n:
        return items
    idx = np.unique(np.round(np.linspace(0, len(items) - 1, n)).astype(int))
    return [items[i] for i in idx]


def film_strip(rec: Recording, *, game_id: str | None = None, max_frames: int = 8, ax=None):
    """Key frames of a recording side by side (level starts and ends, GAME_OVERs, the win,
    the last step; at most ``max_frames``, spread evenly), each labelled with its step
    and what it shows. Returns the Axes."""
    keys = _pick(key_frames(rec, game_id), max(1, int(max_frames)))
    if ax is None:
        plt = pyplot()
        width = plt.rcParams["figure.figsize"][0]
        n = max(len(keys), 1)
        ax = _new_ax(height=min(width / n * 1.05 + 0.55, width * 0.62))
    if not keys:
        return _nothing(ax, "no frame recorded (recorded without frames)")
    gap = 4
    tiles, centres = [], []
    x = 0
    for step, layer, _ in keys:
        img = rec.frame(step, layer=None)[layer]
        rgb = frame_rgb(img)
        pad = np.full((FRAME_SIZE, FRAME_SIZE, 3), 255, dtype=np.uint8)
        pad[:rgb.shape[0], :rgb.shape[1]] = rgb
        if tiles:
            tiles.append(np.full((FRAME_SIZE, gap, 3), 170, dtype=np.uint8))
            x += gap
        tiles.append(pad)
        centres.append(x + FRAME_SIZE / 2 - 0.5)
        x += FRAME_SIZE
    ax.imshow(np.concatenate(tiles, axis=1), interpolation="nearest")
    ax.set_yticks([])
    ax.set_xticks(centres)
    ax.set_xticklabels([f"{step}\n{label}" for step, _, label in keys])
    ax.tick_params(axis="x", length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    gid = game_id or (rec.game_ids[0] if rec.game_ids else "")
    ax.set_title(plain_label(f"key frames of {gid} (step, what it shows)"))
    return ax


def _cards(obj) -> Scorecard:
    if not isinstance(obj, Scorecard):
        raise ParameterError("expected a Scorecard (arcnb.arc3.score(...))")
    return obj


def cumulative_actions(card: Scorecard, game_id: str | None = None, ax=None):
    """Actions spent against levels completed, one line per play of a game (the best
    play solid), with the human baseline's cumulative actions as steps. Returns the
    Axes."""
    card = _cards(card)
    if game_id is None:
        if not len(card.games):
            return _nothing(ax or _new_ax(), "no game played")
        game_id = str(card.games.sort_values("score", ascending=False)["game_id"].iloc[0])
    ax = ax or _new_ax()
    g = card.games[card.games["game_id"] == game_id]
    if not len(g) or int(g["plays"].iloc[0]) == 0:
        return _nothing(ax, plain_label(f"{game_id}: never played"))
    best = int(g["best_play"].iloc[0])
    base = list(g["baseline_actions"].iloc[0])
    lv = card.levels[card.levels["game_id"] == game_id]
    top = 1.0
    for play, rows in lv.groupby("play", sort=True):
        rows = rows.sort_values("level")
        done = rows[rows["completed"]]
        xs = [0] + list(done["level"])
        ys = [0] + list(np.cumsum(done["actions"]))
        left = rows[~rows["completed"]]["actions"].sum()
        kw = dict(lw=1.4, zorder=3) if play == best else dict(lw=0.8, alpha=0.6)
        (line,) = ax.plot(xs, ys, marker="o", label=f"play {play + 1}"
                          + (" (best)" if play == best else ""), **kw)
        if left:
            ax.plot([xs[-1], xs[-1] + 0.5], [ys[-1], ys[-1] + left], ls=":",
                    color=line.get_color(), lw=kw["lw"])
            top = max(top, ys[-1] + left)
        top = max(top, ys[-1])
    if base:
        cum = np.r_[0, np.cumsum(base)]
        ax.step(np.arange(len(cum)), cum, where="post", color="#555555", ls="--", lw=1.0,
                label="human baseline")
        top = max(top, float(cum[-1]))
    n = max(len(base), int(lv["level"].max()) if len(lv) else 1)
    ax.set_xlim(-0.2, n + 0.7)
    ax.set_ylim(0, top * 1.08)
    ax.set_xticks(range(0, n + 1))
    ax.set_xlabel("levels completed")
    ax.set_ylabel("actions so far")
    ax.set_title(plain_label(f"{game_id}: actions per level"))
    ax.legend(loc="upper left")
    return ax


def _runs_of(source) -> list[Recording]:
    if isinstance(source, Scorecard):
        source = source.run
    if isinstance(source, Run):
        return list(source.recordings)
    if isinstance(source, Recording):
        return [source]
    if isinstance(source, (list, tuple)) and all(isinstance(r, Recording) for r in source):
        return list(source)
    raise ParameterError("expected a Scorecard, a Run, a Recording or a list of them")


def click_heatmap(source, ax=None, *, game_id: str | None = None):
    """Where ACTION6 clicked on the 64 x 64 board: a count per cell (``source``: a
    Scorecard, a Run or recordings; ``game_id`` keeps one game). Returns the Axes."""
    counts = np.zeros((FRAME_SIZE, FRAME_SIZE), dtype=np.int64)
    for rec in _runs_of(source):
        s = rec.steps
        if game_id is not None:
            s = s[s["game_id"] == game_id]
        s = s[(s["action"] == "ACTION6") & s["x"].notna() & s["y"].notna()]
        np.add.at(counts, (s["y"].to_numpy(int), s["x"].to_numpy(int)), 1)
    ax = ax or _new_ax(0.8)
    n = int(counts.sum())
    if n == 0:
        return _nothing(ax, "no click (ACTION6) recorded")
    masked = np.ma.masked_equal(counts, 0)
    im = ax.imshow(masked, cmap="viridis", interpolation="nearest", origin="upper",
                   extent=(-0.5, FRAME_SIZE - 0.5, FRAME_SIZE - 0.5, -0.5))
    ax.set_facecolor("#f2f2f2")
    ax.set_xlim(-0.5, FRAME_SIZE - 0.5)
    ax.set_ylim(FRAME_SIZE - 0.5, -0.5)
    ax.set_xticks([0, 16, 32, 48, 63])
    ax.set_yticks([0, 16, 32, 48, 63])
    ax.set_xlabel("x (column)")
    ax.set_ylabel("y (row)")
    ax.set_aspect("equal")
    ax.get_figure().colorbar(im, ax=ax, label="clicks", shrink=0.9)
    ax.set_title(plain_label(f"{n} clicks" + (f" in {game_id}" if game_id else "")))
    return ax


def _mix(source, by: str) -> pd.DataFrame:
    rows = []
    for rec in _runs_of(source):
        s = rec.steps[rec.steps["action"] != "NONE"]
        keys = s["game_id"] if by == "game" else pd.Series([rec.name] * len(s), index=s.index)
        for key, g in s.groupby(keys, sort=False):
            counts = g["action"].value_counts()
            rows.append({"key": key, **{a: int(counts.get(a, 0)) for a in ACTIONS}})
    df = pd.DataFrame(rows, columns=["key", *ACTIONS])
    return df.groupby("key", sort=False).sum() if len(df) else df.set_index("key")


def action_mix(source, ax=None, *, by: str = "game"):
    """The share of each action type (RESET, ACTION1-7) among the recorded actions, one
    stacked bar per game (``by="game"``) or per recording (``by="recording"``), with
    the number of actions at the end of each bar. Returns the Axes."""
    if by not in ("game", "recording"):
        raise ParameterError(f"by must be 'game' or 'recording', got {by!r}")
    mix = _mix(source, by)
    if ax is None:
        plt = pyplot()
        width = plt.rcParams["figure.figsize"][0]
        ax = _new_ax(height=max(width * 0.5, 0.9 + 0.17 * len(mix)))
    if not len(mix) or mix.to_numpy().sum() == 0:
        return _nothing(ax, "no action recorded")
    totals = mix.sum(axis=1).to_numpy(float)
    shares = mix.to_numpy(float) / totals[:, None]
    y = np.arange(len(mix))
    left = np.zeros(len(mix))
    for k, action in enumerate(ACTIONS):
        if not shares[:, k].any():
            continue
        ax.barh(y, shares[:, k], left=left, color=ACTION_COLOURS[k], label=action,
                height=0.7)
        left += shares[:, k]
    for yi, t in zip(y, totals):
        ax.text(1.01, yi, f"{int(t)}", va="center", ha="left", fontsize=6.5,
                transform=ax.get_yaxis_transform())
    ax.set_yticks(y)
    ax.set_yticklabels([plain_label(k) for k in mix.index])
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of the recorded actions (count at the right)")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=4, handlelength=1.0,
              columnspacing=0.8)
    return ax


def compare_scores(a: Scorecard, b: Scorecard, ax=None, *, labels: Sequence[str] | None = None):
    """Two runs' per-game scores side by side: one row per game (every game either run
    counts), a line from one score to the other, sorted by the difference. A game a run
    did not play has no marker of that run (never a 0 it did not score) and no line; the
    axis label says so. Returns the Axes."""
    a, b = _cards(a), _cards(b)
    la, lb = labels or (a.label, b.label)
    if la == lb:
        la, lb = f"{la} (1)", f"{lb} (2)"
    ga = a.games[a.games["counted"]].set_index("game_id")["score"]
    gb = b.games[b.games["counted"]].set_index("game_id")["score"]
    games = list(dict.fromkeys(list(ga.index) + list(gb.index)))
    if ax is None:
        plt = pyplot()
        width = plt.rcParams["figure.figsize"][0]
        ax = _new_ax(height=max(width * 0.55, 0.8 + 0.16 * len(games)))
    if not games:
        return _nothing(ax, "no game in either run")
    sa = np.array([ga.get(g, math.nan) for g in games], dtype=float)
    sb = np.array([gb.get(g, math.nan) for g in games], dtype=float)
    both = ~np.isnan(sa) & ~np.isnan(sb)
    # games both played by the difference, then the games only one played
    order = np.lexsort((np.where(both, -(sb - sa), 0.0), ~both))
    y = np.arange(len(games))
    sa, sb, both = sa[order], sb[order], both[order]
    names = [games[i] for i in order]
    ax.hlines(y[both], sa[both], sb[both], color="#bbbbbb", lw=1.0, zorder=1)
    for vals, label, colour, marker in ((sa, la, "#0072B2", "o"), (sb, lb, "#E69F00", "s")):
        played = ~np.isnan(vals)
        ax.scatter(vals[played], y[played], color=colour, marker=marker, s=16, zorder=3,
                   label=plain_label(label))
    ax.set_yticks(y)
    ax.set_yticklabels([plain_label(n) for n in names])
    ax.invert_yaxis()
    ax.set_xlim(-3, 103)
    ax.set_xlabel("game score (RHAE, 0-100)" if both.all() else
                  "game score (RHAE, 0-100)\nno marker: the run did not play the game")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2)
    return ax
