"""arcnb.arc3.rules: the scorecard's rule by toolkit version, a level's and a play's score
against hand-computed values (the scorecards these make are tested in
``tests/test_arc3_scorer.py``)."""
from __future__ import annotations

import dataclasses

import pytest

from arcnb import arc3
from arcnb.arc3 import rules, scorer
from arcnb.arc3.rules import DEFAULT_RULE, RULES, Rule, get_rule, level_score, play_score
from arcnb.errors import ParameterError


def test_level_score_by_rule():
    assert level_score(10, 5, True) == 115.0          # 400 capped at 115
    assert level_score(10, 5, True, "0.9.6") == 100.0
    assert level_score(10, 5, True, "0.9.1") == 100.0  # linear 200, capped at 100
    assert level_score(10, 20, True, "0.9.1") == 50.0
    assert level_score(10, 20, True) == 25.0
    assert level_score(10, 0, True) == 0.0             # completed with no action
    assert level_score(10, 10, False) == 0.0
    assert level_score(0, 4, True) == 0.0


def test_play_score_weights_and_caps():
    # 115 on level 1, 25 on level 2: weighted (115 + 2 x 25) / 3 = 55
    assert play_score([115.0, 25.0]) == pytest.approx(55.0)
    # 115 then nothing: weighted 115/3 = 38.33, capped at 100 x 1/3 = 33.33
    assert play_score([115.0, 0.0]) == pytest.approx(100 / 3)
    assert play_score([115.0, 0.0], "0.9.6") == pytest.approx(115 / 3)
    assert play_score([100.0, 50.0], "0.9.1") == 75.0
    assert play_score([]) == 0.0


def test_unknown_rule_is_refused():
    with pytest.raises(ParameterError, match="unknown scoring rule"):
        level_score(1, 1, True, "1.0")


def test_get_rule_by_name_object_or_default():
    assert get_rule(None) is RULES[DEFAULT_RULE] and DEFAULT_RULE == "0.9.9"
    for name, rule in RULES.items():
        assert get_rule(name) is rule and get_rule(rule) is rule and rule.name == name
    with pytest.raises(ParameterError, match="known: 0.9.9, 0.9.6, 0.9.1"):
        get_rule("0.9.8")


def test_a_rule_in_words_and_as_json():
    r = RULES["0.9.9"]
    assert r.words.startswith("rule 0.9.9 (arc-agi 0.9.7 to 0.9.9): a completed level scores "
                              "min(115, 100 (h/a)^2)")
    assert "at most the weighted share" in r.words
    assert "h/a)" in RULES["0.9.1"].words and "plain mean" in RULES["0.9.1"].words
    d = r.as_dict()
    assert d["words"] == r.words
    assert {k: v for k, v in d.items() if k != "words"} == dataclasses.asdict(r)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.power = 1


def test_the_scorer_and_the_package_give_the_same_objects():
    for name in rules.__all__:
        assert getattr(scorer, name) is getattr(rules, name)
        if name in arc3.__all__:
            assert getattr(arc3, name) is getattr(rules, name)
    assert isinstance(arc3.RULES["0.9.6"], Rule)
