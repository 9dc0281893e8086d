"""Benchmark: the difficulty model (``arcnb.difficulty.fit_irt``) against a plain dense
Newton fit of the same model, in the same run.

The matrix: 100 systems x 1,000 outputs drawn from a Rasch model (abilities N(0, 1.2^2),
difficulties N(0, 1.5^2), seed 0). Timed: the whole fit with its 95 % intervals (Rasch,
then 2PL). The baseline is the textbook route: Newton on all 1,100 parameters with the
full dense Hessian solved at every step (``numpy.linalg.solve``) and inverted once for the
intervals; it gives the same estimates (the maximum difference is printed). The script
prints the times, their ratio and the recovery of the known values.

    .venv/bin/python benchmarks/bench_difficulty.py [--systems 100] [--outputs 1000]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from arcnb.difficulty import PRIOR_SD, fit_irt


def _dense_newton(y: np.ndarray, prior_sd: float = PRIOR_SD):
    """Newton on the dense (systems + outputs) Hessian; centred estimates and SDs."""
    ns, ni = y.shape
    theta, b = np.zeros(ns), np.zeros(ni)
    prec = 1 / prior_sd ** 2
    for _ in range(100):
        p = 1 / (1 + np.exp(-(theta[:, None] - b[None, :])))
        r, w = y - p, p * (1 - p)
        g = np.concatenate([r.sum(1) - theta * prec, -r.sum(0) - b * prec])
        H = np.zeros((ns + ni, ns + ni))
        H[:ns, :ns] = np.diag(w.sum(1) + prec)
        H[ns:, ns:] = np.diag(w.sum(0) + prec)
        H[:ns, ns:] = -w
        H[ns:, :ns] = -w.T
        step = np.linalg.solve(H, g)
        theta, b = theta + step[:ns], b + step[ns:]
        if np.abs(step).max() < 1e-9:
            break
    cov = np.linalg.inv(H)
    centre = np.eye(ns + ni)
    centre[:, ns:] -= 1 / ni
    sd = np.sqrt(np.einsum("ij,jk,ik->i", centre, cov, centre))
    m = b.mean()
    return theta - m, b - m, sd[:ns], sd[ns:]


def _spearman(x, y) -> float:
    rx, ry = np.argsort(np.argsort(x)), np.argsort(np.argsort(y))
    return float(np.corrcoef(rx, ry)[0, 1])


def main(ns: int = 100, ni: int = 1000) -> None:
    rng = np.random.default_rng(0)
    theta = rng.normal(0, 1.2, ns)
    b = rng.normal(0, 1.5, ni)
    y = (rng.random((ns, ni)) < 1 / (1 + np.exp(-(theta[:, None] - b[None, :])))).astype(float)
    t0 = time.perf_counter()
    fit = fit_irt(y)
    fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    fit2 = fit_irt(y, model="2pl")
    fast2 = time.perf_counter() - t0
    t0 = time.perf_counter()
    th_ref, b_ref, _, sd_ref = _dense_newton(y)
    slow = time.perf_counter() - t0
    diff = max(np.abs(fit.ability - th_ref).max(), np.abs(fit.difficulty - b_ref).max(),
               np.abs(fit.difficulty_sd - sd_ref).max())
    bt = b - b.mean()
    print(f"{ns} systems x {ni} outputs")
    print(f"arcnb.difficulty Rasch fit + intervals: {fast:.2f} s ({fit.iterations} iterations); "
          f"2PL: {fast2:.2f} s ({fit2.iterations} iterations)")
    print(f"dense Newton (baseline):               {slow:.2f} s")
    print(f"ratio baseline / arcnb (Rasch):        {slow / fast:.1f}x")
    print(f"largest difference from the baseline:  {diff:.1e}")
    print(f"recovery (Rasch): difficulty rank correlation {_spearman(fit.difficulty, bt):.3f}, "
          f"mean absolute error {np.abs(fit.difficulty - bt).mean():.3f}; ability rank "
          f"correlation {_spearman(fit.ability, theta - b.mean()):.3f}, mean absolute error "
          f"{np.abs(fit.ability - (theta - b.mean())).mean():.3f}; 95% intervals cover "
          f"{np.mean(np.abs(fit.difficulty - bt) <= 1.96 * fit.difficulty_sd):.1%} of the "
          "difficulties")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", type=int, default=100)
    ap.add_argument("--outputs", type=int, default=1000)
    a = ap.parse_args()
    main(a.systems, a.outputs)
