"""Deliberately naive reference implementations of arcnb.metrics (tests only).

Per-grid Python loops over numpy arrays, written straight from the definitions in
issue 3 / seeds 000, 002, 004, sharing no code with arcnb.metrics. Return plain
floats (NaN for an empty denominator).
"""
from __future__ import annotations

import math

import numpy as np

NAN = float("nan")


def _div(a, b):
    return a / b if b > 0 else NAN


def tol_key(tol):
    s = f"{tol:.2f}"
    if float(s) != tol:
        s = repr(float(tol))
    return "grid_tol_" + s.replace(".", "p")


def naive_grid_metrics(pred, target, source=None, pad_token=10, tolerances=(0.90, 0.95, 0.99),
                       weights=(0.0, 0.8, 0.2), convention="arcnb"):
    pred = np.asarray(pred)
    target = np.asarray(target)
    src = None if source is None else np.asarray(source)
    B = target.shape[0]
    is_grid = target.ndim == 3
    n_grids = n_correct = n_exact = 0
    n_tol = {t: 0 for t in tolerances}
    n_tol95 = 0
    valid_cells = correct_cells = 0
    rows = rows_ok = cols = cols_ok = 0
    tgt_ch = pred_ch = both_ch = copy = change_ok = 0
    ref = {"copy_rate": 0.0, "change_recall": 0.0, "change_precision": 0.0, "transformation_f1": 0.0}
    for i in range(B):
        p, t = pred[i], target[i]
        if pad_token is None:
            valid = np.ones(t.shape, dtype=bool)
        else:
            valid = t != pad_token
        nv = int(valid.sum())
        if src is not None and convention == "reference":
            s = src[i]
            tc = int(np.sum(t != s))
            pc = int(np.sum(p != s))
            bc = int(np.sum((t != s) & (p != s)))
            r = bc / tc if tc > 0 else 1.0
            pr = bc / pc if pc > 0 else 1.0
            ref["copy_rate"] += float(np.mean(p == s))
            ref["change_recall"] += r
            ref["change_precision"] += pr
            ref["transformation_f1"] += 2 * pr * r / (pr + r + 1e-8)
        # rows / columns (grids only), counted for every grid
        if is_grid:
            for r_ in range(t.shape[0]):
                if valid[r_].any():
                    rows += 1
                    if all(p[r_, c] == t[r_, c] for c in range(t.shape[1]) if valid[r_, c]):
                        rows_ok += 1
            for c in range(t.shape[1]):
                if valid[:, c].any():
                    cols += 1
                    if all(p[r_, c] == t[r_, c] for r_ in range(t.shape[0]) if valid[r_, c]):
                        cols_ok += 1
        correct = int(np.sum((p == t) & valid))
        valid_cells += nv
        correct_cells += correct
        if src is not None:
            s = src[i]
            tcm = (t != s) & valid
            pcm = (p != s) & valid
            tgt_ch += int(tcm.sum())
            pred_ch += int(pcm.sum())
            both_ch += int((tcm & pcm).sum())
            copy += int(((p == s) & valid).sum())
            change_ok += int(((p == t) & tcm).sum())
        if nv == 0:
            continue  # not a grid
        n_grids += 1
        acc = correct / nv
        if correct == nv:
            n_correct += 1
        if np.array_equal(p, t):
            n_exact += 1
        for tol in tolerances:
            if acc >= tol:
                n_tol[tol] += 1
        if acc >= 0.95:
            n_tol95 += 1
    den = B if convention == "reference" else n_grids
    out = {
        "grid_accuracy": _div(n_correct, den),
        "exact_match": _div(n_exact, den),
        "cell_accuracy": _div(correct_cells, valid_cells),
        "row_all_correct_rate": _div(rows_ok, rows),
        "col_all_correct_rate": _div(cols_ok, cols),
        "n_grids": float(den),
    }
    for tol in tolerances:
        out[tol_key(tol)] = _div(n_tol[tol], den)
    parts = [(weights[0], out["cell_accuracy"]), (weights[1], _div(n_tol95, den)),
             (weights[2], out["grid_accuracy"])]
    out["dense_grid_objective"] = sum(w * m for w, m in parts if w != 0)
    if src is not None:
        if convention == "reference":
            for k, v in ref.items():
                out[k] = _div(v, B)
        else:
            rec = _div(both_ch, tgt_ch)
            prec = _div(both_ch, pred_ch)
            out["change_recall"] = rec
            out["change_precision"] = prec
            if math.isnan(rec) or math.isnan(prec):
                out["transformation_f1"] = NAN
            elif rec + prec == 0:
                out["transformation_f1"] = 0.0
            else:
                out["transformation_f1"] = 2 * rec * prec / (rec + prec)
            out["copy_rate"] = _div(copy, valid_cells)
        out["change_accuracy"] = _div(change_ok, tgt_ch)
    return out


def naive_reconstruction_metrics(pred, target, background=0, pad_token=None):
    pred = np.asarray(pred)
    target = np.asarray(target)
    total = correct = 0
    obj_total = obj_correct = 0
    colour_total = [0] * 10
    colour_correct = [0] * 10
    n_grids = n_perfect = 0
    for i in range(target.shape[0]):
        p, t = pred[i].ravel(), target[i].ravel()
        nv = nc = 0
        for pv, tv in zip(p.tolist(), t.tolist()):
            if pad_token is not None and tv == pad_token:
                continue
            nv += 1
            ok = pv == tv
            nc += ok
            colour_total[tv] += 1
            colour_correct[tv] += ok
            if background is None or tv != background:
                obj_total += 1
                obj_correct += ok
        total += nv
        correct += nc
        if nv:
            n_grids += 1
            n_perfect += nc == nv
    per = [_div(colour_correct[c], colour_total[c]) for c in range(10)]
    present = [x for x in per if not math.isnan(x)]
    return {
        "pixel_accuracy": _div(correct, total),
        "perfect_recon_rate": _div(n_perfect, n_grids),
        "per_color_accuracy": per,
        "balanced_accuracy": sum(present) / len(present) if present else NAN,
        "object_accuracy": _div(obj_correct, obj_total),
        "n_grids": float(n_grids),
    }


def naive_color_confusion(pred, target, pad_token=None):
    pred = np.asarray(pred).ravel().tolist()
    target = np.asarray(target).ravel().tolist()
    ncol = 10 if pad_token is None else 11
    m = [[0] * ncol for _ in range(10)]
    for pv, tv in zip(pred, target):
        if pad_token is not None and tv == pad_token:
            continue
        col = 10 if (pad_token is not None and pv == pad_token) else pv
        m[tv][col] += 1
    return np.array(m)


def naive_token_accuracy(pred, target, ignore_index):
    pred = np.asarray(pred)
    target = np.asarray(target)
    n = c = 0
    n_seq = n_seq_ok = 0
    for i in range(target.shape[0]):
        sv = sc = 0
        for pv, tv in zip(pred[i].ravel().tolist(), target[i].ravel().tolist()):
            if ignore_index is not None and tv == ignore_index:
                continue
            sv += 1
            sc += pv == tv
        n += sv
        c += sc
        if sv:
            n_seq += 1
            n_seq_ok += sc == sv
    return {"token_accuracy": _div(c, n), "sequence_accuracy": _div(n_seq_ok, n_seq),
            "n_tokens": float(n)}


def naive_latent(mu, logvar, threshold=0.01):
    mu = np.asarray(mu, dtype=np.float64)
    lv = np.asarray(logvar, dtype=np.float64)
    N, D = mu.shape
    kl = []
    var_mu = []
    std = []
    for d in range(D):
        k = 0.0
        for i in range(N):
            k += -0.5 * (1 + lv[i, d] - mu[i, d] ** 2 - math.exp(lv[i, d]))
        kl.append(k / N)
        m = sum(mu[:, d]) / N
        vm = sum((x - m) ** 2 for x in mu[:, d]) / N
        var_mu.append(vm)
        std.append(math.sqrt(vm + sum(math.exp(x) for x in lv[:, d]) / N))
    return {"kl_per_dim": kl, "mean_kl_per_dim": sum(kl) / D, "kl_total": sum(kl),
            "n_active_dims": float(sum(v > threshold for v in var_mu)), "n_dims": float(D),
            "latent_std": sum(std) / D, "mu_variance_per_dim": var_mu}


# --------------------------------------------------------------------------- #
# random padded batches for the tests
# --------------------------------------------------------------------------- #
def random_batch(rng, B=None, size=None, pad=10, with_empty=True, n_colours=None):
    """(pred, target, source) as int64 numpy arrays [B, H, W] padded with ``pad``.

    Mixes exact predictions, copies of the source, a few wrong cells, wrong shapes
    (smaller or larger than the target), random grids, padding written inside the
    grid, all-padding targets and grids using colour 0 heavily.
    """
    B = int(rng.integers(1, 12)) if B is None else B
    H, W = size if size is not None else (int(rng.integers(1, 8)), int(rng.integers(1, 8)))
    k = int(rng.integers(2, 11)) if n_colours is None else n_colours
    tgt = np.full((B, H, W), pad, dtype=np.int64)
    src = np.full((B, H, W), pad, dtype=np.int64)
    prd = np.full((B, H, W), pad, dtype=np.int64)
    for i in range(B):
        if with_empty and rng.random() < 0.12:
            # all-padding target; the source / prediction may still hold cells
            if rng.random() < 0.5:
                h, w = int(rng.integers(1, H + 1)), int(rng.integers(1, W + 1))
                prd[i, :h, :w] = rng.integers(0, k, (h, w))
            continue
        h, w = int(rng.integers(1, H + 1)), int(rng.integers(1, W + 1))
        t = rng.integers(0, k, (h, w))
        tgt[i, :h, :w] = t
        # source: same shape with changes, or another shape
        if rng.random() < 0.75:
            s = t.copy()
            m = rng.random((h, w)) < rng.random()
            s[m] = rng.integers(0, k, int(m.sum()))
            src[i, :h, :w] = s
        else:
            hs, ws = int(rng.integers(1, H + 1)), int(rng.integers(1, W + 1))
            src[i, :hs, :ws] = rng.integers(0, k, (hs, ws))
        r = rng.random()
        if r < 0.2:
            prd[i] = tgt[i]
        elif r < 0.35:
            prd[i] = src[i]
        elif r < 0.65:
            prd[i] = tgt[i]
            m = (rng.random((h, w)) < 0.15 * rng.random())
            blk = prd[i, :h, :w]
            blk[m] = rng.integers(0, k, int(m.sum()))
        elif r < 0.8:
            hp, wp = int(rng.integers(1, H + 1)), int(rng.integers(1, W + 1))
            prd[i, :hp, :wp] = tgt[i, :hp, :wp]
            hole = prd[i, :hp, :wp] == pad
            prd[i, :hp, :wp][hole] = rng.integers(0, k, int(hole.sum()))
        elif r < 0.9:
            prd[i] = tgt[i]
            m = rng.random((H, W)) < 0.1
            prd[i][m] = pad  # padding written inside (or outside) the grid
        else:
            prd[i] = rng.integers(0, k, (H, W))
    return prd, tgt, src


def close(a, b, tol=1e-6) -> bool:
    """``a`` equals the reference ``b`` up to ``tol`` (relative); NaN only equals NaN."""
    a, b = float(a), float(b)
    if math.isnan(b):
        return math.isnan(a)
    return abs(a - b) <= tol * max(1.0, abs(b))
