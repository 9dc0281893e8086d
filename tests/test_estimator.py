"""The unbiased pass@k estimator for sampled attempts (Chen et al. 2021) against
independent references: the average of the ranked rule over every ordering of the
attempts, the ranked rule itself when n = k, and exact rational arithmetic for n = 1000.
"""
from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from arcnb.data import load_dataset
from arcnb.scoring import pass_at_k_unbiased, score

ROOT = Path(__file__).resolve().parents[1]
TASK_IDS = ["66e6c45b", "00576224", "12997ef3", "1d398264", "31d5ba1a", "3b4c2228",
            "4852f2fa", "4c177718"]


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
@pytest.fixture(scope="module")
def ds():
    return load_dataset("arc-agi-1:evaluation", tasks=TASK_IDS)


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
    assert s["warnings"] == []  # a note, not a warning: --strict does not fail on it


def test_cli_estimator(tmp_path, ds):
    sub, _ = sampled(ds, lambda ti, i: 4, seed=5)
    path = tmp_path / "sampled.json"
    path.write_text(json.dumps(sub))
    ids = tmp_path / "ids.txt"
    ids.write_text("\n".join(TASK_IDS))

    def run(*extra):
        return subprocess.run([sys.executable, "-m", "arcnb", "score", "--dataset",
                               "arc-agi-1:evaluation", "--tasks", ids, "--predictions", path,
                               *map(str, extra)], capture_output=True, text=True, cwd=ROOT,
                              timeout=300)

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
