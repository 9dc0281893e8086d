"""The torch kernel of the grid family: torch operations on the input's device.

Implements the contract of :mod:`arcnb.metrics.grid_kernel` (padded arrays in, named
counts out) on torch tensors; nothing leaves the device (no host synchronisation).
:func:`arcnb.metrics.grid.grid_update` uses it for every device but the CPU, where
the numpy kernel is faster.

The batch is scanned in chunks of grids (:func:`arcnb.metrics.grid_kernel.chunks`)
into preallocated work buffers. Each chunk leaves small per-row / per-column /
per-grid tensors (packed path: float32 sums of ``valid + 32 * wrong``; otherwise
counts per line or per grid) and its change counts; the bookkeeping then runs once on
the collected tensors. Change counts use the identity of the numpy kernel: where
pred == tgt, pred != src equals tgt != src.
"""
from __future__ import annotations

from ._tensors import _fits, _float_dtype, _torch
from .grid_kernel import PACK_LIMIT, chunk_grids, chunks


def count_torch(pred, target, source=None, *, pad_token, tols, columns: bool,
                reference: bool) -> dict:
    """Counts of one batch (contract: :mod:`arcnb.metrics.grid_kernel`) from torch
    tensors ``[B, R, W]`` on one device; the counts are tensors on that device."""
    job = _Job(pred, target, source, pad_token=pad_token, columns=columns,
               reference=reference)
    buf = _Buffers(job, min(chunk_grids(job.cells, job.device.type), job.B))
    parts = [_chunk(job, buf, a, b) for a, b in chunks(job.B, job.cells, job.device.type)]
    out = _cell_counts(job, parts, tols)
    if source is not None:
        torch = _torch()
        chg = parts[0]["chg"] if len(parts) == 1 else torch.stack([r["chg"] for r in parts]).sum(0)
        out["n_tgt_change"], out["n_both_change"], out["n_change_correct"] = \
            chg[0], chg[1], chg[2]
        if job.reference:
            out["ref_per_grid"] = _cat([r["ref"] for r in parts], dim=1)
    return out


class _Job:
    """One batch and its options."""

    def __init__(self, pred, target, source, *, pad_token, columns, reference):
        self.pred, self.target, self.source = pred, target, source
        self.B, self.H, self.W = target.shape
        self.cells = self.H * self.W
        self.device = target.device
        self.columns = columns
        self.reference = reference and source is not None
        # mps takes the unpacked path (a choice kept from the first implementation)
        self.packed = (self.W < PACK_LIMIT and self.H < PACK_LIMIT
                       and self.device.type != "mps")
        # a pad token the dtype cannot hold matches no cell
        self.pad_fits = pad_token is not None and _fits(pad_token, target.dtype)
        self.pad_token = pad_token


class _Buffers:
    """Work buffers for chunks of up to ``n`` grids on the job's device (reused)."""

    def __init__(self, job: _Job, n: int):
        torch = _torch()
        shape = (n, job.H, job.W)

        def new(dt, shp=shape):
            return torch.empty(shp, dtype=dt, device=job.device)

        self.eq, self.v, self.wrong = new(torch.bool), new(torch.bool), new(torch.bool)
        if job.source is not None:
            self.tc, self.pc = new(torch.bool), new(torch.bool)
            k = 6 if job.reference else 3
            self.flags = new(torch.bool, (k,) + shape)
            self.i16k = new(torch.int16, (k,) + shape)
        if job.packed:
            self.lo = new(torch.uint8)
            self.f = new(torch.float32)
            self.ones_w = torch.ones(job.W, dtype=torch.float32, device=job.device)
            self.ones_h = torch.ones(job.H, dtype=torch.float32, device=job.device)


def _per_grid_count(b, n: int):
    """Number of True cells of a bool tensor per grid (first dimension)."""
    torch = _torch()
    cells = b.numel() // max(n, 1)
    dt = torch.int16 if cells <= 32767 else torch.int32
    return b.reshape(n, -1).to(dt).sum(-1, dtype=dt)


def _chunk(job: _Job, buf: _Buffers, a: int, b: int) -> dict:
    """Per-chunk partial results (small tensors) for grids ``a..b``."""
    torch = _torch()
    n = b - a
    res = {}
    p, t = job.pred[a:b], job.target[a:b]
    eq = torch.eq(p, t, out=buf.eq[:n])
    if not job.pad_fits:
        v = buf.v[:n].fill_(True)  # no cell can hold the pad token
    else:
        v = torch.ne(t, job.pad_token, out=buf.v[:n])
    wrong = torch.gt(v, eq, out=buf.wrong[:n])
    res["exact"] = eq.view(torch.uint8).view(n, -1).amin(-1)
    if job.packed:
        # valid + 32 * wrong per cell; one matrix-vector product gives both counts
        # of every row (a row has < 32 cells), one more every column
        lo = torch.add(v.view(torch.uint8), wrong.view(torch.uint8), alpha=32,
                       out=buf.lo[:n])
        f = buf.f[:n].copy_(lo)
        res["rows"] = torch.mv(f.view(-1, job.W), buf.ones_w).view(n, job.H)
        if job.columns:
            res["cols"] = torch.matmul(buf.ones_h, f)  # [n, W]
    elif job.columns:
        res["rv"], res["rw"] = v.sum(-1), wrong.sum(-1)
        res["cv"], res["cw"] = v.sum(-2), wrong.sum(-2)
    else:
        res["gv"], res["gw"] = _per_grid_count(v, n), _per_grid_count(wrong, n)
    if job.source is not None:
        res.update(_chunk_changes(job, buf, a, b, eq, v))
    return res


def _chunk_changes(job: _Job, buf: _Buffers, a: int, b: int, eq, v) -> dict:
    """``"chg"``: ``[n_tgt_change, n_both_change, n_change_correct]`` of grids
    ``a..b`` over valid cells; with ``reference`` also ``"ref"``, the ``[3, n]``
    per-grid counts of tgt != src, pred != src and both over every cell."""
    torch = _torch()
    n = b - a
    p, t, s = job.pred[a:b], job.target[a:b], job.source[a:b]
    res = {}
    fl = buf.flags[:, :n]  # [k, n, H, W]: one copy + one sum counts them all
    tc = torch.ne(t, s, out=buf.tc[:n])
    pc = torch.ne(p, s, out=buf.pc[:n])
    tcv = torch.logical_and(tc, v, out=fl[0])
    torch.logical_and(tcv, pc, out=fl[1])
    torch.logical_and(tcv, eq, out=fl[2])
    if job.reference:
        fl[3].copy_(tc)
        fl[4].copy_(pc)
        torch.logical_and(tc, pc, out=fl[5])
    k = fl.shape[0]
    if job.cells <= 32767:
        x16 = buf.i16k[:, :n].copy_(fl.view(torch.uint8))
        counts = x16.reshape(k, n, -1).sum(-1, dtype=torch.int16)  # [k, n]
    else:
        counts = fl.reshape(k, n, -1).sum(-1)
    counts = counts.to(torch.int64)
    res["chg"] = counts[:3].sum(1)  # n_tc, n_both, n_cc
    if job.reference:
        res["ref"] = counts[3:]  # per grid: tc, pc, both (every cell)
    return res


def _cat(xs: list, dim: int = 0):
    """``torch.cat`` of the chunks' tensors; one chunk's tensor as it is (a small batch
    is one chunk, and every skipped copy is a kernel launch less on a GPU)."""
    return xs[0] if len(xs) == 1 else _torch().cat(xs, dim=dim)


def _unpack(x):
    """float32 ``valid + 32 * wrong`` (exact small integers) -> ``(valid, wrong)``;
    float arithmetic is vectorised where int64 bit operations are not."""
    torch = _torch()
    w = torch.floor(x * (1.0 / 32))
    return x - 32 * w, w


def _cell_counts(job: _Job, parts: list, tols) -> dict:
    """Bookkeeping on the collected per-row / per-column / per-grid tensors: every
    count of the contract but the change counts."""
    torch = _torch()
    i64 = torch.int64
    fdt = _float_dtype(job.device)

    def cat(key):
        return _cat([r[key] for r in parts])

    out = dict.fromkeys(("n_rows", "n_rows_correct", "n_cols", "n_cols_correct"), 0)
    if job.packed:
        rv, rw = _unpack(cat("rows"))  # [B, H]
    elif job.columns:
        rv, rw = cat("rv").to(i64), cat("rw").to(i64)
    if job.columns:
        if job.packed:
            cv, cw = _unpack(cat("cols"))  # [B, W]
        else:
            cv, cw = cat("cv").to(i64), cat("cw").to(i64)
        has_row = rv > 0
        has_col = cv > 0
        out["n_rows"] = has_row.sum()
        out["n_rows_correct"] = (has_row & (rw == 0)).sum()
        out["n_cols"] = has_col.sum()
        out["n_cols_correct"] = (has_col & (cw == 0)).sum()
    if job.packed or job.columns:
        g_valid = rv.sum(-1).to(i64)
        g_wrong = rw.sum(-1).to(i64)
    else:
        g_valid = cat("gv").to(i64)
        g_wrong = cat("gw").to(i64)
    nonempty = g_valid > 0
    out["n_grids"] = nonempty.sum()
    out["n_valid"] = g_valid.sum()
    out["n_wrong"] = g_wrong.sum()
    out["n_correct"] = (nonempty & (g_wrong == 0)).sum()
    out["n_exact"] = (nonempty & (cat("exact") > 0)).sum()
    g_acc = (g_valid - g_wrong).to(fdt) / g_valid.clamp_min(1).to(fdt)
    # the tolerances as Python numbers: no tensor copied from host memory to the
    # device on every call
    tol_counts = (torch.stack([g_acc >= t for t in tols], dim=1) & nonempty[:, None]).sum(0)
    out["n_tol"] = [tol_counts[k] for k in range(len(tols))]
    return out
