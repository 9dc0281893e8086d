"""Augmentation: exact inverses, the D4 group against a naive coordinate map, voting,
and end-to-end voting with oracle models on real ARC-AGI-1 tasks."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from arcnb.augment import (View, apply_colors, color_table, dihedral, dihedral_inverse_index,
                           inverse_color_table, inverse_dihedral, make_views, random_color_perms,
                           vote)

grids = st.tuples(st.integers(1, 7), st.integers(1, 7)).flatmap(
    lambda s: arrays(np.int8, s, elements=st.integers(0, 9)))


def naive_dihedral(g, t):
    """Reference by explicit coordinates: rotation CCW maps (i, j) of the result to
    (j, W-1-i) of the source; a mirror maps (i, j) to (i, W-1-j)."""
    g = [list(r) for r in g]

    def rot(a):
        h, w = len(a), len(a[0])
        return [[a[j][w - 1 - i] for j in range(h)] for i in range(w)]

    def flip(a):
        return [row[::-1] for row in a]

    if t >= 4:
        g = flip(g)
    for _ in range(t % 4):
        g = rot(g)
    return np.array(g, dtype=np.int8)


@settings(max_examples=50, deadline=None)
@given(grids)
def test_dihedral_matches_naive_and_inverts(g):
    for t in range(8):
        y = dihedral(g, t)
        np.testing.assert_array_equal(y, naive_dihedral(g, t))
        back = inverse_dihedral(y, t)
        assert back.shape == g.shape and np.array_equal(back, g)
        # the inverse is itself a group element
        np.testing.assert_array_equal(dihedral(y, dihedral_inverse_index(t)), g)
        # torch gives the same result
        yt = dihedral(torch.from_numpy(g.astype(np.int64)), t)
        np.testing.assert_array_equal(yt.numpy(), y)
        np.testing.assert_array_equal(inverse_dihedral(yt, t).numpy(), g)


def test_eight_distinct_transforms():
    g = np.arange(6, dtype=np.int8).reshape(2, 3)
    outs = {(dihedral(g, t).shape, dihedral(g, t).tobytes()) for t in range(8)}
    assert len(outs) == 8


@settings(max_examples=50, deadline=None)
@given(grids, st.integers(0, 10**6))
def test_colour_permutation_inverts_and_fixes_black(g, seed):
    perm = random_color_perms(1, seed=seed)[0]
    assert perm[0] == 0 and sorted(perm) == list(range(10))
    y = apply_colors(g, color_table(perm))
    assert np.all((y == 0) == (g == 0))  # black stays black, nothing else becomes black
    for c in range(10):  # naive: every cell of colour c becomes perm[c]
        assert np.all(y[g == c] == perm[c])
    np.testing.assert_array_equal(apply_colors(y, inverse_color_table(perm)), g)
    for t in range(8):
        v = View(t, tuple(int(c) for c in perm))
        np.testing.assert_array_equal(v.invert(v.apply(g)), g)


def test_colour_table_keeps_padding_and_refuses_bad_perms():
    perm = [0, 2, 1, 3, 4, 5, 6, 7, 8, 9]
    x = torch.tensor([[1, 2, 10], [0, 10, 3]])
    y = apply_colors(x, color_table(perm))
    assert y.tolist() == [[2, 1, 10], [0, 10, 3]]
    with pytest.raises(ValueError, match="black"):
        color_table([1, 0, 2, 3, 4, 5, 6, 7, 8, 9])
    with pytest.raises(ValueError):
        color_table([0, 1, 1, 3, 4, 5, 6, 7, 8, 9])
    with pytest.raises(ValueError):
        dihedral(np.zeros((2, 2)), 8)


def test_make_views():
    assert make_views("none") == [View(0, None)]
    assert [v.t for v in make_views("dihedral")] == list(range(8))
    vs = make_views("dihedral+colors", color_perms=2, seed=3)
    assert len(vs) == 24 and vs[0] == View(0, None)
    assert len({v.perm for v in vs[8:]}) == 2
    assert make_views("dihedral+colors", color_perms=2, seed=3) == vs  # seeded
    with pytest.raises(ValueError):
        make_views("rotate")


def G(*rows):
    return np.array(rows, dtype=np.int8)


def test_vote_counts_and_tie_breaks():
    a, b, c = G([1]), G([2]), G([1, 1])
    # b has 3 votes, a 2, c 2: c wins the tie on mean confidence
    v = vote([a, b, c, b, a, None, c, b], [0.5, 0.1, 0.9, 0.1, 0.5, 0.99, 0.8, 0.1])
    assert [g.tolist() for g in v.grids] == [[[2]], [[1, 1]]]
    assert v.votes == [3, 2]
    assert v.confidence == pytest.approx([0.1, 0.85])
    assert (v.n_candidates, v.n_valid, v.n_distinct) == (8, 7, 3)
    # equal votes and equal confidence: the first to appear wins
    v = vote([c, a], [0.5, 0.5], attempts=2)
    assert [g.tolist() for g in v.grids] == [[[1, 1]], [[1]]]
    # same cells, different shape: different candidates
    v = vote([G([1, 2]), G([1], [2]), G([1], [2])], attempts=1)
    assert v.grids[0].shape == (2, 1) and v.votes == [2]


def test_vote_fills_and_all_invalid():
    v = vote([G([3]), G([3])], [0.2, 0.4], attempts=3)
    assert [g.tolist() for g in v.grids] == [[[3]]] * 3
    assert v.votes == [2, 0, 0]
    v = vote([None, None], attempts=2)
    assert v.grids == [None, None] and v.n_valid == 0


# ------------------------------------------------------------------ end to end with oracles
class _Oracle(torch.nn.Module):
    """Knows the truth of every (transformed) test input of the given tasks: for each
    view it stores view(input) -> view(truth), except for the views listed in
    ``wrong`` where it answers a fixed wrong grid (all 5s, the truth's shape)."""

    reads_demonstrations = False

    def __init__(self, tasks, views, wrong=()):
        super().__init__()
        self.table = {}
        for task in tasks:
            for p in task.test:
                for k, v in enumerate(views):
                    x = v.apply(p.input)
                    y = np.full_like(v.apply(p.output), 5) if k in wrong else v.apply(p.output)
                    self.table[(x.shape, x.astype(np.int8).tobytes())] = y

    def forward(self, inputs):
        from arcnb.grids import crop_padding

        B = inputs.shape[0]
        out = torch.full((B, 30, 30), 10, dtype=torch.long)
        for b in range(B):
            x = crop_padding(inputs[b].numpy()).astype(np.int8)
            y = self.table[(x.shape, x.tobytes())]
            out[b, : y.shape[0], : y.shape[1]] = torch.from_numpy(y.astype(np.int64))
        return torch.nn.functional.one_hot(out, 11).permute(0, 3, 1, 2).float()


@pytest.fixture(scope="module")
def slice5():
    from arcnb.data import load_dataset

    ds = load_dataset("arc-agi-1:evaluation")
    return ds.select(ds.task_ids[:5])


def test_oracle_under_every_view_gets_truth_as_attempt_1(slice5, tmp_path):
    from arcnb.evaluate import evaluate

    views = make_views("dihedral+colors", color_perms=1, seed=0)
    model = _Oracle(slice5, views)
    res = evaluate(model, slice5, tmp_path / "run", augment="dihedral+colors", color_perms=1,
                   batch_size=16, progress=False)
    for task in slice5:
        for i, p in enumerate(task.test):
            a1 = res.attempts(task.id, i)[0]
            assert a1 is not None and np.array_equal(a1, p.output)
    assert res.summary["pass@1"] == 1.0
    assert (res.votes["votes_attempt_1"] == 16).all()
    assert (res.votes["n_distinct"] == 1).all()


def test_majority_beats_minority(slice5, tmp_path):
    from arcnb.evaluate import evaluate

    views = make_views("dihedral")
    model = _Oracle(slice5, views, wrong=(1, 4, 6))  # wrong under 3 of 8 views
    res = evaluate(model, slice5, tmp_path / "run", augment="dihedral", progress=False)
    for task in slice5:
        for i, p in enumerate(task.test):
            a1, a2 = res.attempts(task.id, i)
            assert np.array_equal(a1, p.output)
            assert a2.shape == p.output.shape and (a2 == 5).all()
    assert set(res.votes["votes_attempt_1"]) == {5}
    assert set(res.votes["votes_attempt_2"]) == {3}
    # without augmentation the identity view alone decides (it is right)
    res0 = evaluate(model, slice5, tmp_path / "run0", augment="none", progress=False)
    assert res0.summary["pass@1"] == 1.0


class _ColourMapFromDemos(torch.nn.Module):
    """The README's worked example: recolour with the demonstrations' colour map."""

    reads_demonstrations = True

    def forward(self, inputs, demo_inputs, demo_outputs, demo_mask):
        from torch.nn import functional as F

        same = ((demo_inputs == 10) == (demo_outputs == 10)).flatten(2).all(-1) & demo_mask
        di = F.one_hot(demo_inputs, 11).float() * same[:, :, None, None, None]
        do = F.one_hot(demo_outputs, 11).float()
        counts = torch.einsum("bnhwi,bnhwo->bio", di, do)
        counts = counts + 1e-3 * torch.eye(11, device=inputs.device)
        return torch.einsum("bhwi,bio->bohw", F.one_hot(inputs, 11).float(), counts)


def test_demonstrations_are_transformed_with_the_test_input(tmp_path):
    """A colour-map model is right under a view only if the demonstrations went through
    the same dihedral transform *and* colour permutation as the test input."""
    from arcnb.data import load_dataset
    from arcnb.evaluate import evaluate

    ds = load_dataset("arc-agi-1:training", tasks=["0d3d703e", "c8f0f002"])
    res = evaluate(_ColourMapFromDemos(), ds, tmp_path / "run", augment="dihedral+colors",
                   color_perms=2, progress=False)
    assert res.summary["pass@1"] == 1.0
    assert (res.votes["votes_attempt_1"] == 24).all() and (res.votes["n_distinct"] == 1).all()
