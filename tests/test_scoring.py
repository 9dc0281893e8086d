"""Official scoring: full marks for the truth, hand-computed values, properties, and the
unbiased pass@k estimator for sampled attempts against independent references."""
from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arcnb.data import load_dataset
from arcnb.io import to_jsonable
from arcnb.metrics import partial_credit
from arcnb.predictions import load_predictions
from arcnb.scoring import SUMMARY_KEYS, pass_at_k_unbiased, score

CONVENTIONS = [f"pass@{k}{s}" for k in (1, 2) for s in ("", "_per_output", "_all_or_nothing")]


def truth_submission(ds):
    return {t.id: [{"attempt_1": p.output.tolist()} for p in t.test] for t in ds}


@pytest.mark.parametrize("fixture,n_outputs", [("arc1_eval", 419), ("arc2_eval", 167)])
def test_truth_scores_one(request, fixture, n_outputs):
    ds = request.getfixturevalue(fixture)
    res = score(ds, truth_submission(ds))
    s = res.summary
    for key in CONVENTIONS:
        assert s[key] == 1.0, key
    assert s["n_outputs"] == n_outputs == len(res.outputs)
    assert s["n_missing_outputs"] == s["n_invalid_attempts"] == s["n_extra_tasks"] == 0
    assert s["pass@2_ci95"] == [1.0, 1.0]
    assert res.outputs["first_correct"].eq(1).all()
    assert res.outputs["cell_accuracy"].eq(1.0).all()
    assert set(SUMMARY_KEYS) <= set(s)


# --------------------------------------------------------------------------- hand-built
@pytest.fixture()
def hand_dataset(tmp_path):
    def task(*outs):
        return {"train": [{"input": [[1]], "output": [[1]]}],
                "test": [{"input": [[0]], "output": o} for o in outs]}

    tasks = {
        "A": task([[1, 2], [3, 4]], [[5]]),
        "B": task([[0, 0, 0]]),
        "C": task([[1]], [[2]], [[3]]),
        "D": task([[7, 7], [7, 7]]),
        "E": task([[9]]),
    }
    for tid, t in tasks.items():
        (tmp_path / f"{tid}.json").write_text(json.dumps(t))
    return load_dataset(tmp_path)


HAND_SUBMISSION = {
    # A0 solved on attempt 1; A1 solved on attempt 2 only
    "A": [{"attempt_1": [[1, 2], [3, 4]]}, {"attempt_1": [[6]], "attempt_2": [[5]]}],
    # wrong shapes only
    "B": [{"attempt_1": [[0, 0]], "attempt_2": [[0], [0], [0]]}],
    # truncated list: C1 and C2 missing; C0 given in the {"answer": grid} form
    "C": [{"attempt_1": {"answer": [[1]], "metadata": {"x": 1}}}],
    # D missing entirely
    # E: two malformed attempts, then the right one as attempt_10 (string order would
    # put it second)
    "E": [{"attempt_10": [[9]], "attempt_2": [[1, 2], [3]], "attempt_1": [[12]]}],
    # an extra task that is not in the dataset
    "Z": [{"attempt_1": [[1]]}],
}


def test_hand_computed_scores(hand_dataset):
    res = score(hand_dataset, HAND_SUBMISSION, ks=(1, 2, 3))
    s = res.summary
    # per task pass@1: A 1/2, B 0, C 1/3, D 0, E 0
    assert s["pass@1"] == pytest.approx((1 / 2 + 1 / 3) / 5)
    # per task pass@2: A 1, C 1/3
    assert s["pass@2"] == pytest.approx((1 + 1 / 3) / 5)
    # attempt_10 is the third attempt in numeric order
    assert s["pass@3"] == pytest.approx((1 + 1 / 3 + 1) / 5)
    # 8 outputs: solved@1 = A0, C0; solved@2 adds A1; solved@3 adds E0
    assert s["pass@1_per_output"] == pytest.approx(2 / 8)
    assert s["pass@2_per_output"] == pytest.approx(3 / 8)
    assert s["pass@3_per_output"] == pytest.approx(4 / 8)
    assert s["pass@1_all_or_nothing"] == 0.0
    assert s["pass@2_all_or_nothing"] == pytest.approx(1 / 5)
    assert s["pass@3_all_or_nothing"] == pytest.approx(2 / 5)
    assert s["n_tasks"] == 5 and s["n_outputs"] == 8
    assert s["n_missing_outputs"] == 3  # C1, C2, D0
    assert s["n_invalid_attempts"] == 2  # E's attempt_1 and attempt_2
    assert s["n_extra_tasks"] == 1 and s["extra_tasks"] == ["Z"]

    o = res.outputs.set_index(["task_id", "test_index"])
    assert o.loc[("A", 1), "first_correct"] == 2
    assert o.loc[("E", 0), "first_correct"] == 3
    assert bool(o.loc[("E", 0), "solved@2"]) is False
    assert o.loc[("E", 0), "n_attempts"] == 3
    assert pd.isna(o.loc[("E", 0), "pred_shape"])  # attempt 1 is malformed
    assert bool(o.loc[("B", 0), "shape_correct"]) is False
    assert math.isnan(o.loc[("B", 0), "cell_accuracy"])
    assert o.loc[("B", 0), "truth_shape"] == "1x3" and o.loc[("B", 0), "pred_shape"] == "1x2"
    # B: best partial credit among [[0,0]] (1 x 2/3 x 1) and [[0],[0],[0]] (1/3 x 1/3 x 1)
    assert o.loc[("B", 0), "partial_credit"] == pytest.approx(2 / 3)
    # A1: attempt 1 [[6]] has the right shape but is wrong; best cell accuracy is attempt 2's
    assert o.loc[("A", 1), "cell_accuracy"] == 1.0
    assert bool(o.loc[("D", 0), "missing"]) is True
    assert o.loc[("D", 0), "partial_credit"] == 0.0
    # pass@K at any K from first_correct, hand-computed (E's attempt_10 is its 3rd attempt)
    pk = res.pass_at_k_table(n_boot=50).set_index("K")
    assert list(pk.index) == [1, 2, 3]  # most attempts given for one output: 3
    assert pk.loc[3, "pass@K"] == pytest.approx((1 + 1 / 3 + 1) / 5)
    assert pk.loc[2, "pass@K_per_output"] == pytest.approx(3 / 8)
    assert pk.loc[3, "pass@K_all_or_nothing"] == pytest.approx(2 / 5)
    assert pk.loc[1, "ci_low"] <= pk.loc[1, "pass@K"] <= pk.loc[1, "ci_high"]
    t = res.tasks.set_index("task_id")
    assert t.loc["C", "n_missing_outputs"] == 2 and t.loc["E", "n_invalid_attempts"] == 2
    assert t.loc["A", "pass@1"] == 0.5


def test_filter_keeps_missing_tasks_in_the_denominator(hand_dataset):
    res = score(hand_dataset, {"A": HAND_SUBMISSION["A"]}, tasks=["A", "D"])
    assert res.summary["n_tasks"] == 2
    assert res.summary["pass@2"] == pytest.approx(0.5)
    assert res.summary["n_extra_tasks"] == 0


def test_partial_credit_seed_examples():
    assert partial_credit([[1, 2, 3], [4, 5, 6]], [[3, 2, 1], [4, 5, 6]]) == pytest.approx(0.6667, abs=1e-4)
    assert partial_credit([[1, 2, 3], [4, 5, 6]],
                          [[3, 2, 1], [4, 5, 6], [7, 8, 9]]) == pytest.approx(0.4444, abs=1e-4)
    assert partial_credit([[1, 2, 3], [4, 5, 6], [7, 8, 9]],
                          [[3, 2, 1], [4, 5, 6]]) == pytest.approx(0.4444, abs=1e-4)
    assert partial_credit([[1]], [[1]]) == 1.0
    assert partial_credit([[1]], None) == 0.0


# --------------------------------------------------------------------------- properties
@pytest.fixture(scope="module")
def small_slice():
    return load_dataset("arc-agi-1:evaluation", tasks=load_dataset("arc-agi-1:evaluation").task_ids[:25])


CHOICES = ["truth", "input", "none", "bad"]


def _submission(ds, picks):
    sub, i = {}, 0
    for t in ds:
        entries = []
        for p in t.test:
            a = picks[i % len(picks)]
            i += 1
            grids = {"truth": p.output.tolist(), "input": p.input.tolist(), "none": None,
                     "bad": [[1, 2], [3]]}
            entries.append({"attempt_1": grids[a[0]], "attempt_2": grids[a[1]]})
        if picks[i % len(picks)][0] != "none":  # sometimes drop a whole task
            sub[t.id] = entries
    return sub


pick = st.tuples(st.sampled_from(CHOICES), st.sampled_from(CHOICES))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(picks=st.lists(pick, min_size=1, max_size=30), seed=st.integers(0, 2**16))
def test_properties(small_slice, picks, seed):
    sub = _submission(small_slice, picks)
    res = score(small_slice, sub, n_boot=50)
    s = res.summary
    for k in (1, 2):
        for key in (f"pass@{k}", f"pass@{k}_per_output", f"pass@{k}_all_or_nothing"):
            assert 0.0 <= s[key] <= 1.0
        assert s[f"pass@{k}_all_or_nothing"] <= s[f"pass@{k}"] + 1e-12
    for suffix in ("", "_per_output", "_all_or_nothing"):
        assert s[f"pass@1{suffix}"] <= s[f"pass@2{suffix}"] + 1e-12
    lo, hi = s["pass@2_ci95"]
    assert lo <= s["pass@2"] + 1e-12 and s["pass@2"] <= hi + 1e-12
    # reordering the tasks of the submission (and of its JSON text) changes nothing
    rng = np.random.default_rng(seed)
    keys = list(sub)
    rng.shuffle(keys)
    shuffled = json.loads(json.dumps({k: sub[k] for k in keys}))
    res2 = score(small_slice, shuffled, n_boot=50)
    assert json.dumps(to_jsonable(res2.summary)) == json.dumps(to_jsonable(s))
    assert res2.outputs.equals(res.outputs)


def test_predictions_attempt_order_and_malformed():
    p = load_predictions({"t": [{"attempt_10": [[1]], "attempt_2": [[2]], "attempt_1": "x",
                                 "note": 3}]})
    got = p.get("t", 0)
    assert got[0] is None and got[1].tolist() == [[2]] and got[2].tolist() == [[1]]
    assert p.n_invalid_attempts == 1
    assert p.problems[0]["attempt"] == "attempt_1"
    assert p.get("t", 1) == [] and p.get("missing", 0) == []


# -------------------------------------------------------- the unbiased pass@k estimator
# The unbiased pass@k estimator for sampled attempts (Chen et al. 2021) against
# independent references: the average of the ranked rule over every ordering of the
# attempts, the ranked rule itself when n = k, and exact rational arithmetic for n = 1000.

TASK_IDS = ["66e6c45b", "00576224", "12997ef3", "1d398264", "31d5ba1a", "3b4c2228",
            "4852f2fa", "4c177718"]
DS_TASKS = TASK_IDS  # the module's dataset (conftest.py's ds)


def ordering_average(flags, k) -> float:
    """Mean over every ordering of the attempts of "one of the first k is right"."""
    perms = list(itertools.permutations(flags))
    return sum(any(p[:k]) for p in perms) / len(perms)


def exact(n, c, k) -> Fraction:
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


@pytest.mark.parametrize("n", range(1, 7))
def test_average_over_orderings(n):
    for c in range(n + 1):
        flags = [True] * c + [False] * (n - c)
        for k in range(1, n + 1):
            got = pass_at_k_unbiased(n, c, k)
            assert got == pytest.approx(ordering_average(flags, k), abs=1e-12), (n, c, k)


def test_undefined_and_edge_values():
    n = np.array([0, 1, 3, 3, 3, 5])
    c = np.array([0, 1, 0, 3, 1, 2])
    got = pass_at_k_unbiased(n, c, 2)
    assert got[0] == 0.0                      # no attempt: wrong, like a missing output
    assert math.isnan(got[1])                 # 0 < n < k: undefined
    assert got[2] == 0.0 and got[3] == 1.0    # none right / n - c < k
    assert got[4] == pytest.approx(float(exact(3, 1, 2)))
    assert got[5] == pytest.approx(float(exact(5, 2, 2)))
    with pytest.raises(ValueError):
        pass_at_k_unbiased(2, 3, 1)
    with pytest.raises(ValueError):
        pass_at_k_unbiased(2, 1, 0)


def test_stable_for_a_thousand_samples():
    n = 1000
    for k in (1, 2, 10, 100, 500, 1000):
        for c in (0, 1, 2, 3, 10, 100, 499, 500, 990, 999, 1000):
            got = float(pass_at_k_unbiased(n, c, k))
            assert math.isfinite(got) and 0.0 <= got <= 1.0, (c, k)
            want = exact(n, c, k)
            assert abs(Fraction(got) - want) <= Fraction(1, 10**12) * max(want, Fraction(1, 10**3)), \
                (c, k, got, float(want))
    # far beyond what binomials in floating point survive
    assert float(pass_at_k_unbiased(10**6, 3, 1000)) == pytest.approx(
        float(exact(10**6, 3, 1000)), rel=1e-12)


# ------------------------------------------------------------ end to end in score()
def sampled(ds, n_of, seed=0, p_right=0.4):
    """Per output, ``n_of(task_index, test_index)`` attempts, each right with
    probability p_right, else a wrong grid, a malformed one (None) now and then."""
    rng = np.random.default_rng(seed)
    sub, flags = {}, {}
    for ti, t in enumerate(ds):
        entries = []
        for i, p in enumerate(t.test):
            entry, fl = {}, []
            for j in range(n_of(ti, i)):
                u = rng.random()
                if u < p_right:
                    g, ok = p.output.tolist(), True
                elif u < 0.9:
                    g, ok = ((p.output + 1) % 10).tolist(), False
                else:
                    g, ok = None, False
                entry[f"attempt_{j + 1}"] = g
                fl.append(ok)
            entries.append(entry)
            flags[(t.id, i)] = fl
        sub[t.id] = entries
    return sub, flags


def test_score_unbiased_matches_ordering_average(ds):
    sub, flags = sampled(ds, lambda ti, i: 3 + (ti + i) % 3)  # 3 to 5 attempts
    res = score(ds, sub, ks=(1, 2, 3), estimator="unbiased")
    assert res.summary["estimator"] == "unbiased" and res.estimator == "unbiased"
    o = res.outputs.set_index(["task_id", "test_index"])
    per_task = {}
    for k in (1, 2, 3):
        ref = {key: ordering_average(fl, k) for key, fl in flags.items()}
        for key, v in ref.items():
            assert o.loc[key, f"pass@{k}"] == pytest.approx(v, abs=1e-12), (key, k)
        by_task = {}
        for (tid, _), v in ref.items():
            by_task.setdefault(tid, []).append(v)
        per_task[k] = by_task
        s = res.summary
        assert s[f"pass@{k}"] == pytest.approx(np.mean([np.mean(v) for v in by_task.values()]))
        assert s[f"pass@{k}_per_output"] == pytest.approx(np.mean(list(ref.values())))
        assert s[f"pass@{k}_all_or_nothing"] == pytest.approx(
            np.mean([np.prod(v) for v in by_task.values()]))
    # the ranked columns are untouched by the estimator
    ranked = score(ds, sub, ks=(1, 2, 3))
    assert ranked.summary["estimator"] == "ranked"
    assert (ranked.outputs["solved@2"] == res.outputs["solved@2"]).all()
    # pass_at_k_table follows the estimator
    table = res.pass_at_k_table(max_k=3).set_index("K")
    for k in (1, 2, 3):
        assert table.loc[k, "pass@K"] == pytest.approx(res.summary[f"pass@{k}"])
        assert table.loc[k, "pass@K_all_or_nothing"] == pytest.approx(
            res.summary[f"pass@{k}_all_or_nothing"])


@pytest.mark.parametrize("k", [2, 3])
def test_unbiased_equals_ranked_when_n_equals_k(ds, k):
    sub, _ = sampled(ds, lambda ti, i: k, seed=k)
    ub = score(ds, sub, ks=(k,), estimator="unbiased")
    rk = score(ds, sub, ks=(k,), estimator="ranked")
    assert (ub.outputs[f"pass@{k}"] == rk.outputs[f"solved@{k}"].astype(float)).all()
    for key in (f"pass@{k}", f"pass@{k}_per_output", f"pass@{k}_all_or_nothing"):
        assert ub.summary[key] == pytest.approx(rk.summary[key], abs=1e-15), key
    if k == 2:  # the interval is pass@2's
        assert ub.summary["pass@2_ci95"] == pytest.approx(rk.summary["pass@2_ci95"])


def test_too_few_attempts_is_nan_with_a_note(ds):
    # one output of the first task has a single attempt; the last task is missing
    sub, _ = sampled(ds, lambda ti, i: 1 if (ti, i) == (0, 0) else 4, seed=3)
    last = ds.task_ids[-1]
    del sub[last]
    res = score(ds, sub, ks=(1, 2, 5), estimator="unbiased")
    s = res.summary
    o = res.outputs.set_index(["task_id", "test_index"])
    first = ds.task_ids[0]
    assert math.isnan(o.loc[(first, 0), "pass@2"])
    assert not math.isnan(o.loc[(first, 0), "pass@1"])
    assert o.loc[(last, 0), "pass@2"] == 0.0  # missing: wrong, not undefined
    assert math.isnan(s["pass@2"]) and math.isnan(s["pass@2_per_output"])
    assert math.isnan(s["pass@2_all_or_nothing"]) and not math.isnan(s["pass@1"])
    assert all(math.isnan(v) for v in s["pass@2_ci95"])
    assert math.isnan(s["pass@5"])  # every output has at most 4 attempts
    assert any("pass@2" in n and "1 test outputs" in n for n in s["notes"])
    assert any("pass@5" in n for n in s["notes"])
    # the too-few-attempts case is a note (--strict does not fail on it); the one warning
    # is the task without predictions, counted wrong
    assert len(s["warnings"]) == 1
    assert s["warnings"][0].startswith("1 of the 8 tasks of arc-agi-1:evaluation have no "
                                       "predictions and count as wrong")


def test_cli_estimator(tmp_path, ds):
    sub, _ = sampled(ds, lambda ti, i: 4, seed=5)
    path = tmp_path / "sampled.json"
    path.write_text(json.dumps(sub))
    ids = tmp_path / "ids.txt"
    ids.write_text("\n".join(TASK_IDS))

    def run(*extra):
        from _cli import cli

        return cli("score", "--dataset", "arc-agi-1:evaluation", "--tasks", ids,
                   "--predictions", path, *extra)

    p = run("--estimator", "unbiased", "--k", "4", "--k", "5", "--json", "--strict")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["estimator"] == "unbiased" and out["pass@5"] is None
    assert "arcnb: note: pass@5 (unbiased estimator)" in p.stderr
    ref = score(ds, sub, ks=(4,), estimator="unbiased").summary
    assert out["pass@4"] == pytest.approx(ref["pass@4"])
    p = run("--estimator", "unbiased")
    assert "estimator: unbiased" in p.stdout
    p = run("--estimator", "best")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
    with pytest.raises(ValueError):
        score(ds, sub, estimator="best")
