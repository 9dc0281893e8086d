"""arcnb.arc3.compare: paired per-game differences with a bootstrap interval, games won
by only one run, the spread of repeated runs; against hand-computed values and a naive
paired bootstrap."""
from __future__ import annotations

import numpy as np
import pytest

import _arc3_game as G
from arcnb import arc3
from arcnb.errors import ParameterError

IDS = ["tw01-00000001", "tw02-00000002", "tw03-00000003", "tw04-00000004"]


def _run(folder, plan):
    """One recording per game of ``plan`` ``{game id: m}``: m x the baseline on every
    level (it wins), 0 the opening RESET alone, None no recording."""
    for gid, m in plan.items():
        game = G.Game(gid)
        if m is None:
            continue
        actions = ["RESET"] if m == 0 else G.agent(game, m)
        G.play(folder / f"{gid}.jsonl", actions, game=game, guid=gid)
    return folder


@pytest.fixture
def base():
    return {g: G.Game(g).baseline() for g in IDS}


def test_two_agents_paired(tmp_path, base):
    a = arc3.score(_run(tmp_path / "a", dict(zip(IDS, [1, 2, 1, 0]))), base, label="A")
    b = arc3.score(_run(tmp_path / "b", dict(zip(IDS, [2, 2, 0, 1]))), base, label="B")
    cmp = arc3.compare([a, b], n_boot=400, seed=5)
    sa = np.array([100, 25, 100, 0.0])
    sb = np.array([25, 25, 0, 100.0])
    p = cmp.pair("A", "B")
    assert p["n_games"] == 4 and p["difference"] == pytest.approx((sb - sa).mean())
    # a naive paired bootstrap: the same draws over games, differences resampled together
    idx = np.random.default_rng(5).integers(0, 4, size=(400, 4))
    means = (sb - sa)[idx].mean(axis=1)
    assert (p["ci_low"], p["ci_high"]) == pytest.approx(tuple(np.quantile(means, [0.025, 0.975])))
    # A won tw01, tw02 and tw03; B won tw01, tw02 and tw04
    assert (p["won_only_a"], p["won_only_b"]) == (1, 1)
    alone = cmp.tables["won_alone"]
    assert sorted(zip(alone["game_id"], alone["won_by"])) == [("tw03-00000003", "A"),
                                                               ("tw04-00000004", "B")]
    assert (p["higher_a"], p["higher_b"], p["ties"]) == (2, 1, 1)
    assert list(cmp.tables["scores"]["A"]) == list(sa)


def test_common_or_all_games(tmp_path, base):
    a = arc3.score(_run(tmp_path / "a", dict(zip(IDS, [1, 1, 1, None]))), base, label="A")
    b = arc3.score(_run(tmp_path / "b", dict(zip(IDS, [1, None, 1, 1]))), base, label="B")
    common = arc3.compare([a, b])
    assert common.games == ["tw01-00000001", "tw03-00000003"]
    assert common.pair()["difference"] == 0.0 and common.pair()["ci_low"] == 0.0
    every = arc3.compare([a, b], games="all")
    assert len(every.games) == 4
    # a game a run did not play scores 0 there: (0 + (-100) + 0 + 100) / 4
    assert every.pair()["difference"] == 0.0
    assert every.pair()["won_only_a"] == 1 and every.pair()["won_only_b"] == 1


def test_repeated_runs_spread(tmp_path, base):
    cards = []
    for k, m in enumerate([1, 2, 1]):
        cards.append(arc3.score(_run(tmp_path / str(k), {IDS[0]: m, IDS[1]: 1}), base,
                                label="agent"))
    cmp = arc3.compare(cards)
    assert cmp.labels == ["agent", "agent #2", "agent #3"]
    assert len(cmp.tables["pairs"]) == 3
    spread = cmp.tables["spread"].set_index("game_id")
    assert spread.loc[IDS[0], "mean"] == pytest.approx(75.0)
    assert spread.loc[IDS[0], "std"] == pytest.approx(np.std([100, 25, 100], ddof=1))
    assert (spread.loc[IDS[0], "lowest"], spread.loc[IDS[0], "highest"]) == (25.0, 100.0)
    assert spread.loc[IDS[1], "std"] == 0.0
    runs = [100.0, 62.5, 100.0]
    assert cmp.numbers["run_score_mean"] == pytest.approx(np.mean(runs))
    assert cmp.numbers["run_score_std"] == pytest.approx(np.std(runs, ddof=1))


def test_runs_given_as_paths_and_refusals(tmp_path, base):
    _run(tmp_path / "a", {IDS[0]: 1})
    _run(tmp_path / "b", {IDS[0]: 2})
    cmp = arc3.compare([tmp_path / "a", tmp_path / "b"], base, labels=["one", "two"])
    assert cmp.pair("one", "two")["difference"] == pytest.approx(-75.0)
    with pytest.raises(ParameterError, match="at least two runs"):
        arc3.compare([cmp.cards[0]])
    with pytest.raises(ParameterError, match="need baselines"):
        arc3.compare([tmp_path / "a", tmp_path / "b"])
    old = arc3.score(tmp_path / "b", base, rule="0.9.1")
    with pytest.raises(ParameterError, match="different rules"):
        arc3.compare([cmp.cards[0], old])
    with pytest.raises(ParameterError):
        arc3.compare(cmp.cards, games="some")
