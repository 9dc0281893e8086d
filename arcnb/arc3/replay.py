"""A replay of one recording as a self-contained HTML page: the frames with a slider and
keyboard steps, each step's action and reasoning (escaped), its level and the play's
score so far.

The page runs no script: it is an :func:`arcnb.html.page`, whose Content-Security-Policy
(:data:`arcnb.html.CSP`) forbids scripts and every remote resource, as the report's does.
The slider is a row of radio buttons, one per step (the checked one is the step shown):
click anywhere on it, or focus it (it has the focus when the page opens) and step with
the arrow keys. Each distinct frame is encoded once, as a small palette PNG, and the
steps that show the same frame share it; the
reasoning shown per step is cut at ``reasoning_chars`` characters, and a recording with
more than ``max_steps`` steps shows an even sample of them plus every key step (level
starts and ends, GAME_OVERs, the win), and says so. Every string from the recording
(game ids, reasoning) is HTML-escaped, with control and bidirectional characters shown
as escapes (``\\u202e``).
"""
from __future__ import annotations

import base64
import hashlib
import math
import os
import struct
import uuid
import zlib
from dataclasses import KW_ONLY, dataclass
from pathlib import Path

import numpy as np

from ..errors import ParameterError, printable
from ..html import check_self_contained, escape, page, replay_css, style
from ..io import atomic_write_text
from ..text import fmt_number
from .reader import Recording
from .scorer import Scorecard, play_score
from .tables import PALETTE_RGB, key_frames

__all__ = ["Replay", "replay", "png_bytes"]

_PLTE = PALETTE_RGB.tobytes()


def _chunk(kind: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def png_bytes(layer) -> bytes:
    """A frame layer (2-D, colours 0-15) as a palette PNG in the ARC-AGI-3 palette, one
    pixel per cell (about 100-400 bytes for a 64 x 64 frame)."""
    a = np.asarray(layer, dtype=np.uint8)
    if a.ndim != 2 or a.size == 0 or a.max() > 15:
        raise ParameterError("a frame layer is a non-empty 2-D array of colours 0-15")
    h, w = a.shape
    # 4 bits per pixel: two cells per byte, each row led by filter type 0
    if w % 2:
        a = np.pad(a, ((0, 0), (0, 1)))
    packed = (a[:, 0::2] << 4) | a[:, 1::2]
    raw = np.hstack([np.zeros((h, 1), dtype=np.uint8), packed]).tobytes()
    return (b"\x89PNG\r\n\x1a\n"
            + _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 4, 3, 0, 0, 0))
            + _chunk(b"PLTE", _PLTE) + _chunk(b"IDAT", zlib.compress(raw, 9))
            + _chunk(b"IEND", b""))


def _esc_text(text: str) -> str:
    """Escaped for HTML, every control or bidirectional character shown as its escape
    (line breaks kept)."""
    return escape("\n".join(printable(line) for line in str(text).split("\n")))


def _esc(text) -> str:
    return escape(printable(str(text)))


@dataclass(repr=False, eq=False)
class Replay:
    """The replay page of one recording (one game of it): ``html`` (the whole page),
    ``fragment`` (the same player to embed in a notebook: ``_repr_html_``), ``n_steps``
    (shown) of ``n_recorded``, ``n_images`` (distinct frames encoded); :meth:`write`
    writes the page."""

    html: str
    fragment: str
    _: KW_ONLY
    n_steps: int
    n_recorded: int
    n_images: int
    title: str

    @property
    def size(self) -> int:
        """The page's size in bytes (UTF-8)."""
        return len(self.html.encode("utf-8"))

    def write(self, path: str | os.PathLike, *, overwrite: bool = False) -> Path:
        """Write the page atomically (an existing file is refused unless ``overwrite``)."""
        return atomic_write_text(path, self.html, overwrite=overwrite)

    def _repr_html_(self) -> str:
        return self.fragment

    def __repr__(self) -> str:
        return (f"Replay({self.title!r}, steps={self.n_steps} of {self.n_recorded}, "
                f"frames={self.n_images}, {self.size} bytes)")


def _pick_recording(card: Scorecard, recording) -> Recording:
    recs = card.run.recordings if card.run is not None else []
    if isinstance(recording, Recording):
        return recording
    if recording is None:
        if not recs:
            raise ParameterError("the scorecard holds no recording")
        return recs[0]
    if isinstance(recording, int) and not isinstance(recording, bool):
        if not 0 <= recording < len(recs):
            raise ParameterError(f"no recording {recording} (the run has {len(recs)})")
        return recs[recording]
    for r in recs:
        if str(recording) in (r.name, str(r.path)):
            return r
    raise ParameterError(f"no recording named {printable(str(recording))!r} in the run")


def _chosen_steps(rec: Recording, rows: np.ndarray, max_steps: int, game_id) -> list[int]:
    if len(rows) <= max_steps:
        return [int(i) for i in rows]
    keys = {k[0] for k in key_frames(rec, game_id)}
    even = rows[np.unique(np.round(np.linspace(0, len(rows) - 1, max_steps)).astype(int))]
    return sorted(set(int(i) for i in even) | (keys & set(int(i) for i in rows)))


def _frame_of_step(rec: Recording, i: int, row, images: dict, img_tags: list) -> tuple:
    """The class that shows step ``i``'s frame (``.iN``, or ``.nf`` for none) and its
    reasoning; a frame not seen before is encoded once, as a new image tag."""
    wanted = row["frame"] == "present" or row["reasoning_chars"] > 0
    frame, why = rec.step_view(i) if wanted else (None, "")
    if frame is None:
        return ".nf", why
    # the same frame is its shape and its bytes (a 32 x 64 and a 64 x 32 frame of the
    # same bytes are two frames), by a digest, not Python's hash
    key = (frame.shape, hashlib.sha256(np.ascontiguousarray(frame).tobytes()).digest())
    if key not in images:
        images[key] = len(img_tags)
        data = base64.b64encode(png_bytes(frame)).decode("ascii")
        img_tags.append(f"<img class='fr i{images[key]}' alt='frame' "
                        f"src='data:image/png;base64,{data}'>")
    return f".i{images[key]}", why


def _step_kind(row, counted, level_completed: bool) -> str:
    """The class that colours a step's mark on the bar."""
    return ("k-lost" if row["state"] == "GAME_OVER" else
            "k-reset" if counted == "level reset" else
            "k-uncounted" if str(counted).startswith("not counted") else
            "k-level" if level_completed else "")


def replay(card: Scorecard, recording=None, *, game_id: str | None = None,
           max_steps: int = 2000, reasoning_chars: int = 2000) -> Replay:
    """The replay of one recording of a scored run (``recording``: its file name, path or
    index in ``card.run.recordings``, default the first; ``game_id``: one game of it,
    default its first). Each step shows its last frame layer, the action (and where
    ACTION6 clicked), how the scorecard counted it, the level, the levels completed, the
    play's actions and score so far, and the reasoning (at most ``reasoning_chars``
    characters). At most ``max_steps`` steps are shown (an even sample plus the key
    steps)."""
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
        raise ParameterError(f"max_steps must be a whole number >= 1, got {max_steps!r}")
    rec = _pick_recording(card, recording)
    s = rec.steps
    gid = game_id if game_id is not None else (rec.game_ids[0] if rec.game_ids else "")
    rows = np.flatnonzero((s["game_id"] == gid).to_numpy())
    chosen = _chosen_steps(rec, rows, max_steps, gid)
    acc = card.steps[card.steps["recording"] == rec.name].set_index("step")
    # the play's actions so far, from the accounting of every step (shown or not)
    counts = acc["counted"].isin(["action", "level reset"]) & (acc["game_id"] == gid)
    so_far_actions = counts.astype(int).groupby(acc["play"]).cumsum()
    lv = card.levels[card.levels["game_id"] == gid]
    level_scores = {p: list(g.sort_values("level")["score"]) for p, g in lv.groupby("play")}
    win = int(s["win_levels"].iloc[rows].max()) if len(rows) else 0
    uid = "r" + uuid.uuid5(uuid.NAMESPACE_URL, str(rec.path) + "|" + str(gid)).hex[:8]

    images: dict[tuple, int] = {}     # (shape, frame digest) -> image index
    img_tags: list[str] = []
    radios, texts, shown = [], [], []
    actions_in_play: dict[int, int] = {}
    budget = 4 * 1024 ** 2  # characters of reasoning on the whole page
    for n, i in enumerate(chosen):
        row = s.iloc[i]
        a = acc.loc[i] if i in acc.index else None
        counted = a["counted"] if a is not None else ""
        play = int(a["play"]) if a is not None else -1
        done = int(a["levels_done"]) if a is not None else 0
        show, why = _frame_of_step(rec, i, row, images, img_tags)
        # the play's actions and score so far
        if a is not None and play >= 0:
            actions_in_play[play] = int(so_far_actions.loc[i])
            scores = level_scores.get(play, [])
            so_far = play_score([sc if k < done else 0.0 for k, sc in enumerate(scores)],
                                card.rule) if scores else 0.0
            where = (f"play {play + 1}, level {min(done + 1, max(win, 1))} of {win}, "
                     f"{done} completed; {actions_in_play[play]} actions so far; score so "
                     f"far {fmt_number(so_far, least=2, most=2)}")
        else:
            where = "before any play (not counted)"
        act = row["action"]
        if act == "ACTION6" and not math.isnan(row["x"]):
            act = f"ACTION6 at x {int(row['x'])}, y {int(row['y'])}"
        why = why if budget > 0 else ""
        if len(why) > reasoning_chars:
            why = why[:reasoning_chars] + f" ... ({len(why) - reasoning_chars} more characters)"
        budget -= len(why)
        if row["reasoning_chars"] and not why:
            why = "(reasoning left out: the page's reasoning budget is spent)"
        kind = _step_kind(row, counted, i > 0 and row["levels_completed"]
                          > s["levels_completed"].iloc[i - 1])
        label = f"step {i}: {row['action']}"
        radios.append(f"<input type='radio' name='{uid}' id='{uid}s{n}' class='{kind}' "
                      f"aria-label='{_esc(label)}' title='{_esc(label)}'"
                      + (" checked autofocus" if n == 0 else "") + ">")
        texts.append(
            f"<div class='st t{n}'><p><b>step {i}</b> of {len(s) - 1} (line "
            f"{int(row['line'])}): <b>{_esc(act)}</b>; {_esc(counted or '-')}; state "
            f"{_esc(row['state'])}<br>{_esc(where)}</p>"
            + (f"<div class='why'>{_esc_text(why)}</div>" if why else "") + "</div>")
        shown.append(show)
    ticks = []
    if chosen:
        for t in sorted(set(np.round(np.linspace(0, len(chosen) - 1,
                                                 min(11, len(chosen)))).astype(int))):
            ticks.append(f"<label for='{uid}s{t}'>{chosen[t]}</label>")
    sample = (f" Showing {len(chosen)} of the {len(rows)} steps (an even sample and every "
              "key step)." if len(chosen) < len(rows) else "")
    g = card.games[card.games["game_id"] == gid]
    score_line = (f"game score {fmt_number(g['score'].iloc[0], least=2, most=2)} (best of "
                  f"{int(g['plays'].iloc[0])} plays; rule {card.rule.name})" if len(g) else "")
    title = f"{gid}: {rec.name}"
    css = replay_css(uid, shown)
    if chosen:
        noframe = "<div class='noframe nf'>no frame at this step</div>"
        body = (f"<div class='arcnb-replay' id='{uid}'>" + "".join(radios)
                + "<div class='ticks'>" + "".join(ticks) + "</div><div class='view'>"
                + "<div>" + "".join(img_tags) + noframe + "</div><div>" + "".join(texts)
                + "</div></div></div>")
    else:
        body = "<p>This recording holds no step of that game.</p>"
    intro = (f"<p class='arcnb-note'>{_esc(rec.name)}: {len(rows)} steps of game "
             f"{_esc(gid)}; {len(img_tags)} distinct frames. {_esc(score_line)}. Click the bar "
             "or use the arrow keys on it to step (colours: green a level completed, "
             "orange a level reset, red GAME_OVER, light grey not counted by the "
             f"scorecard).{_esc(sample)}</p>")
    fragment = style(css) + intro + body
    whole = page(f"replay: {printable(title)}",
                 f"<main><h1>Replay: {_esc(title)}</h1>{intro}{body}</main>", css=css)
    check_self_contained(fragment)
    return Replay(whole, fragment, n_steps=len(chosen), n_recorded=len(rows),
                  n_images=len(img_tags), title=title)
