"""Test-time augmentation: the 8 dihedral transforms, colour permutations, voting.

A *view* of a task is one dihedral transform ``t`` (0-7) followed by one permutation
of the colours 1-9 (colour 0, black, always maps to itself; the pad token maps to
itself). The whole task (demonstrations and test input) is shown to the model under
the view; its prediction is mapped back with the exact inverse and the candidates of
all views vote.

Dihedral transform ``t`` (the group D4 acting on the last two axes):

* ``t = 0..3``: rotate by ``t`` quarter turns counter-clockwise (``rot90(x, t)``);
* ``t = 4..7``: mirror left-right, then rotate by ``t - 4`` quarter turns.

Inverse: ``t < 4`` -> ``rot90(y, -t)``; ``t >= 4`` -> ``fliplr(rot90(y, -(t - 4)))``.
Transforms and inverses work on numpy arrays and torch tensors (any leading batch
dimensions); transforms act on unpadded grids (a rotation moves a top-left padded
grid to another corner).

Voting (:func:`vote`): candidates are grouped by exact equality (shape and every
cell). Groups are ranked by number of votes (descending), then by the mean
confidence of their members (descending, rounded to 6 decimals so the order does not
hang on the last float bits), then by the index of their first member (the view
order), which makes the order fully deterministic (:func:`arcnb.voting.majority_vote`
with the tie rule ``first``: a submission needs one grid per attempt). ``attempt_1`` and
``attempt_2`` are the first two groups' grids.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .errors import ParameterError
from .grids import PAD_TOKEN
from .voting import majority_vote

__all__ = [
    "N_DIHEDRAL",
    "DIHEDRAL_NAMES",
    "DIHEDRAL_INDEX",
    "dihedral_fn",
    "AUGMENT_MODES",
    "View",
    "dihedral",
    "inverse_dihedral",
    "dihedral_inverse_index",
    "color_table",
    "inverse_color_table",
    "apply_colors",
    "random_color_perms",
    "make_views",
    "vote",
    "Vote",
]

#: The number of dihedral transforms (rotations and flips of a square).
N_DIHEDRAL = 8
#: Their names, indexed as in :func:`dihedral` (``rot90`` is ``numpy.rot90(g, 1)``,
#: ``flip_lr`` mirrors left-right, ``flip_ud`` top-bottom, ``transpose`` is ``g.T``,
#: ``anti_transpose`` mirrors across the other diagonal). The one naming of the group:
#: the baselines' whole-grid programs and the structural taxonomy use these names too.
DIHEDRAL_NAMES = ("identity", "rot90", "rot180", "rot270", "flip_lr", "transpose",
                  "flip_ud", "anti_transpose")
#: ``name -> t`` for :data:`DIHEDRAL_NAMES`.
DIHEDRAL_INDEX = {name: t for t, name in enumerate(DIHEDRAL_NAMES)}
#: The test-time augmentation modes (``--augment``).
AUGMENT_MODES = ("none", "dihedral", "dihedral+colors")


def _is_torch(x) -> bool:
    return hasattr(x, "detach") and hasattr(x, "flip")


def _rot90(x, k: int):
    k %= 4
    if k == 0:
        return x
    if _is_torch(x):
        import torch

        return torch.rot90(x, k, dims=(-2, -1))
    return np.rot90(x, k, axes=(-2, -1))


def _fliplr(x):
    if _is_torch(x):
        return x.flip(-1)
    return np.flip(x, axis=-1)


def _check_t(t: int) -> int:
    if isinstance(t, bool) or not isinstance(t, (int, np.integer)) or not 0 <= int(t) < 8:
        raise ParameterError(f"dihedral transform index must be an int in 0-7, got {t!r}")
    return int(t)


def dihedral(x, t: int):
    """Apply dihedral transform ``t`` (0-7) to the last two axes of ``x``.

    Returns a contiguous copy for numpy input (never a view into ``x``).
    """
    t = _check_t(t)
    y = _rot90(x, t) if t < 4 else _rot90(_fliplr(x), t - 4)
    return y.contiguous() if _is_torch(y) else np.ascontiguousarray(y)


def inverse_dihedral(x, t: int):
    """Undo :func:`dihedral`: ``inverse_dihedral(dihedral(x, t), t) == x`` exactly."""
    t = _check_t(t)
    y = _rot90(x, -t) if t < 4 else _fliplr(_rot90(x, -(t - 4)))
    return y.contiguous() if _is_torch(y) else np.ascontiguousarray(y)


def dihedral_fn(name: str):
    """The dihedral transform called ``name`` (one of :data:`DIHEDRAL_NAMES`) as a
    function of one grid."""
    t = DIHEDRAL_INDEX[name]
    return lambda x: dihedral(x, t)


def dihedral_inverse_index(t: int) -> int:
    """The index ``u`` with ``dihedral(dihedral(x, t), u) == x``.

    Rotations invert to the opposite rotation; every mirror is its own inverse.
    """
    t = _check_t(t)
    return (4 - t) % 4 if t < 4 else t


def color_table(perm: Sequence[int] | None, *, pad_token: int = PAD_TOKEN) -> np.ndarray:
    """A lookup table of length ``pad_token + 1`` for a colour permutation.

    ``perm`` lists the images of colours 0-9 (``perm[c]`` is the new colour of
    ``c``); ``perm[0]`` must be 0 and it must be a permutation. Values 10 ..
    ``pad_token`` map to themselves. None is the identity.
    """
    table = np.arange(max(pad_token, 9) + 1, dtype=np.int64)
    if perm is None:
        return table
    p = np.asarray(perm, dtype=np.int64)
    if p.shape != (10,) or sorted(p.tolist()) != list(range(10)):
        raise ParameterError(f"a colour permutation lists the images of colours 0-9, got {perm!r}")
    if p[0] != 0:
        raise ParameterError("colour 0 (black) must map to itself")
    table[:10] = p
    return table


def inverse_color_table(perm: Sequence[int] | None, *, pad_token: int = PAD_TOKEN) -> np.ndarray:
    """The table that undoes :func:`color_table` (``inv[perm[c]] = c``)."""
    table = color_table(perm, pad_token=pad_token)
    inv = np.empty_like(table)
    inv[table] = np.arange(table.size)
    return inv


def apply_colors(x, table: np.ndarray):
    """Map every cell ``v`` of ``x`` (numpy or torch, any shape) to ``table[v]``."""
    if _is_torch(x):
        import torch

        return torch.as_tensor(table, device=x.device)[x.long()].to(x.dtype)
    return np.asarray(table)[np.asarray(x)].astype(np.asarray(x).dtype, copy=False)


def random_color_perms(n: int, *, seed: int = 0) -> list[np.ndarray]:
    """``n`` seeded random permutations of colours 1-9 (0 fixed), none the identity."""
    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    ident = list(range(10))
    while len(out) < n:
        p = np.concatenate([[0], 1 + rng.permutation(9)])
        if p.tolist() == ident:  # a permutation, not a grid
            continue
        out.append(p.astype(np.int64))
    return out


@dataclass(frozen=True)
class View:
    """One test-time view: dihedral transform ``t`` then colour permutation ``perm``
    (None = identity colours)."""

    t: int = 0
    perm: tuple[int, ...] | None = None

    def apply(self, grid):
        """``grid`` as this view shows it (transform, then colours)."""
        y = dihedral(grid, self.t)
        if self.perm is not None:
            y = apply_colors(y, color_table(self.perm))
        return y

    def invert(self, grid):
        """The exact inverse of :meth:`apply` (colours, then the inverse transform)."""
        y = grid
        if self.perm is not None:
            y = apply_colors(y, inverse_color_table(self.perm))
        return inverse_dihedral(y, self.t)

    @property
    def name(self) -> str:
        """The transform's name, plus ``+colors(...)`` with the permutation."""
        n = DIHEDRAL_NAMES[self.t]
        if self.perm is not None:
            n += "+colors(" + "".join(str(c) for c in self.perm) + ")"
        return n


def make_views(augment: str = "none", *, color_perms: int = 1, seed: int = 0) -> list[View]:
    """The views for an augmentation mode.

    ``"none"``: the identity only. ``"dihedral"``: the 8 dihedral transforms.
    ``"dihedral+colors"``: each dihedral transform with the identity colours and
    with each of ``color_perms`` seeded random permutations of colours 1-9, i.e.
    ``8 * (1 + color_perms)`` views. The identity view is always first.
    """
    if augment not in AUGMENT_MODES:
        raise ParameterError(f"augment must be one of {', '.join(AUGMENT_MODES)}, got {augment!r}")
    if augment == "none":
        return [View(0, None)]
    views = [View(t, None) for t in range(N_DIHEDRAL)]
    if augment == "dihedral+colors":
        if int(color_perms) < 1:
            raise ParameterError(f"color_perms must be >= 1, got {color_perms}")
        perms = random_color_perms(int(color_perms), seed=seed)
        views += [View(t, tuple(int(c) for c in p)) for p in perms for t in range(N_DIHEDRAL)]
    return views


@dataclass
class Vote:
    """The outcome of a vote over one test input's candidates.

    ``grids[i]`` is attempt ``i+1`` (None when no candidate was valid), ``votes[i]``
    and ``confidence[i]`` its vote count and mean confidence. ``n_candidates``
    counts all views, ``n_valid`` the valid grids among them, ``n_distinct`` the
    distinct valid grids. ``ranked`` holds every distinct valid grid in vote order as
    ``(grid, votes, mean confidence)``, not only the ``attempts`` submitted (the
    candidate pool, see :mod:`arcnb.candidates`).
    """

    grids: list
    votes: list[int]
    confidence: list[float]
    n_candidates: int
    n_valid: int
    n_distinct: int
    ranked: list = field(default_factory=list)


def vote(candidates: Sequence[Any], confidences: Sequence[float] | None = None, *,
         attempts: int = 2) -> Vote:
    """Vote over candidate grids (None = an invalid candidate, it gets no vote).

    Returns the ``attempts`` grids with most votes (see the module docstring for the
    tie-break). When there are fewer distinct valid grids than ``attempts``, the
    top grid is repeated for the remaining attempts (the submission format needs a
    grid per attempt; a repeat never adds a solve). With no valid candidate every
    attempt is None.
    """
    if attempts < 1:
        raise ParameterError(f"attempts must be >= 1, got {attempts}")
    if confidences is None:
        confidences = [0.0] * len(candidates)
    if len(confidences) != len(candidates):
        raise ParameterError("candidates and confidences differ in length")
    groups: dict[tuple, list] = {}
    for i, (g, c) in enumerate(zip(candidates, confidences)):
        if g is None:
            continue
        a = np.asarray(g)
        key = (a.shape, a.astype(np.int8).tobytes())
        if key not in groups:
            groups[key] = [i, a, 0, 0.0]
        groups[key][2] += 1
        groups[key][3] += float(c)
    items = list(groups.values())
    ranks = majority_vote(np.zeros(len(items)), [r[2] for r in items],
                          after=[[-round(r[3] / r[2], 6) for r in items]],
                          order=[[r[0] for r in items]], tie="first").rank
    ranked = [items[j] for j in np.argsort(ranks)]
    n_valid = sum(r[2] for r in ranked)
    grids, votes, conf = [], [], []
    for j in range(attempts):
        r = ranked[j] if j < len(ranked) else (ranked[0] if ranked else None)
        if r is None:
            grids.append(None)
            votes.append(0)
            conf.append(float("nan"))
        else:
            grids.append(r[1])
            votes.append(int(r[2]) if j < len(ranked) else 0)
            conf.append(r[3] / r[2])
    return Vote(grids, votes, conf, len(candidates), n_valid, len(ranked),
                [(r[1], int(r[2]), r[3] / r[2]) for r in ranked])
