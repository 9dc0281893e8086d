"""The CPU kernel of the grid family: numpy, cache-blocked, threaded.

Implements the contract of :mod:`arcnb.metrics.grid_kernel` (padded arrays in, named
counts out) on numpy arrays, usually zero-copy views of CPU tensors.

How it stays close to one pass over memory. The batch is scanned in chunks of grids
small enough to stay in the core's cache, into preallocated buffers (no allocation
in the loop), so each input is read from memory once. Per cell there are three int64
comparisons (pred == tgt and tgt != src stream the inputs, tgt != pad reads the
cached chunk); the rest works on one-byte flags. On the packed path each chunk writes
its per-row / per-column sums of ``valid + 32 * wrong`` into batch arrays, which are
counted once at the end; otherwise each chunk reduces itself to counts.

Change counts: where pred == tgt, pred != src equals tgt != src, so
``n_both_change = n_change_correct + |wrong & tgt!=src & pred!=src|``: pred is
compared with src only at the wrong valid cells where the target changes. Those
cells are gathered by index while they are fewer than 1/:data:`_SPARSE_FRACTION` of
a chunk; otherwise one dense comparison runs.

numpy compares int64 faster than torch on the CPU and releases the GIL inside
ufuncs, so chunks run on ``threads`` Python threads, each with its own buffers.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ._tensors import _fits
from .grid_kernel import CELL_KEYS, CHANGE_KEYS, PACK_LIMIT, chunk_grids, chunks

# Chunks compare pred with source only at the wrong valid cells where the target
# changes, gathered by index while they are fewer than 1 / this of the chunk.
_SPARSE_FRACTION = 16
_U8_32 = np.uint8(32)


def count_numpy(pred, target, source=None, *, pad_token, tols, columns: bool,
                reference: bool, threads: int = 1) -> dict:
    """Counts of one batch (contract: :mod:`arcnb.metrics.grid_kernel`) from numpy
    arrays ``[B, R, W]``, on up to ``threads`` threads."""
    job = _Job(pred, target, source, pad_token=pad_token, tols=tols, columns=columns,
               reference=reference)
    bounds = list(chunks(job.B, job.cells, "cpu"))
    n_workers = max(1, min(threads, len(bounds)))
    bufs = [_Buffers(job, min(chunk_grids(job.cells, "cpu"), job.B))
            for _ in range(n_workers)]
    parts = [None] * len(bounds)
    todo = iter(range(len(bounds)))

    def worker(nb):
        # chunks taken from the shared iterator ``todo`` (``next`` is atomic under the
        # GIL) until none is left, with the worker's own buffers ``nb``
        for i in todo:
            parts[i] = _chunk(job, nb, *bounds[i])

    if n_workers > 1:
        with ThreadPoolExecutor(max_workers=n_workers - 1) as ex:
            futures = [ex.submit(worker, nb) for nb in bufs[1:]]
            worker(bufs[0])
            for fut in futures:
                fut.result()
    else:
        worker(bufs[0])
    return _totals(job, parts)


class _Job:
    """One batch and its options, shared (read-only but for the ``*_all`` batch
    arrays, written at disjoint grids) by the chunk workers."""

    def __init__(self, pred, target, source, *, pad_token, tols, columns, reference):
        self.pred, self.target, self.source = pred, target, source
        self.B, self.H, self.W = target.shape
        self.cells = self.H * self.W
        self.tols = tuple(tols)
        self.columns = columns
        self.reference = reference and source is not None
        self.packed = self.W < PACK_LIMIT and self.H < PACK_LIMIT
        # a pad token the dtype cannot hold matches no cell
        self.pad = (target.dtype.type(pad_token)
                    if pad_token is not None and _fits(pad_token, target.dtype) else None)
        self.flat_ok = (source is not None and pred.flags.c_contiguous
                        and source.flags.c_contiguous)
        if self.packed:
            # per row / column: valid + 32 * wrong; per grid: all of pred == target
            self.rows_all = np.empty((self.B, self.H), dtype=np.float32)
            self.cols_all = np.empty((self.B, self.W), dtype=np.float32) if columns else None
            self.exact_all = np.empty(self.B, dtype=np.uint8)


class _Buffers:
    """Work buffers of one worker for chunks of up to ``n`` grids (reused)."""

    def __init__(self, job: _Job, n: int):
        shape = (n, job.H, job.W)
        self.eq = np.empty(shape, dtype=np.bool_)
        self.v = np.empty(shape, dtype=np.bool_)
        self.wrong = np.empty(shape, dtype=np.bool_)
        self.sparse = True  # whether the last chunk had few wrong changed cells
        if job.source is not None:
            self.tc = np.empty(shape, dtype=np.bool_)
            self.pc = np.empty(shape, dtype=np.bool_)
            self.tcv = np.empty(shape, dtype=np.bool_)
            if job.reference:
                self.flags = np.empty((3,) + shape, dtype=np.bool_)  # tc, pc, both
                self.i16k = np.empty((3,) + shape, dtype=np.int16)
        if job.packed:
            self.lo = np.empty(shape, dtype=np.uint8)
            self.f = np.empty(shape, dtype=np.float32)
            self.ones_w = np.ones(job.W, dtype=np.float32)
            self.ones_h = np.ones(job.H, dtype=np.float32)


def _chunk(job: _Job, nb: _Buffers, a: int, b: int) -> dict:
    """Partial results of grids ``a..b``: ``"c"`` (cell counts, unpacked path only),
    ``"chg"`` and ``"ref"`` (with source). The packed path writes into the batch
    arrays of ``job`` instead."""
    n = b - a
    res = {}
    p, t = job.pred[a:b], job.target[a:b]
    # the int64 passes first, in an order that reads each input from memory once
    # (the chunk of t stays in cache for the second and third pass)
    eq = np.equal(p, t, out=nb.eq[:n])
    if job.source is not None:
        tc = np.not_equal(t, job.source[a:b], out=nb.tc[:n])
    v = nb.v[:n]
    if job.pad is None:
        v.fill(True)
    else:
        np.not_equal(t, job.pad, out=v)
    wrong = np.greater(v, eq, out=nb.wrong[:n])
    if job.packed:
        _packed_line_sums(job, nb, a, b, eq, v, wrong)
    else:
        res["c"] = _unpacked_counts(job, eq, v, wrong)
    if job.source is not None:
        res.update(_change_counts(job, nb, a, b, tc, v, wrong))
    return res


def _packed_line_sums(job, nb, a, b, eq, v, wrong) -> None:
    """Packed path: ``valid + 32 * wrong`` summed over every row and column of grids
    ``a..b``, and their exact flags, straight into the batch arrays of ``job``."""
    n = b - a
    # bit shifts on uint8 are slow in numpy; a multiply and an add are not
    np.min(eq.reshape(n, -1).view(np.uint8), axis=1, out=job.exact_all[a:b])
    lo = np.multiply(wrong.view(np.uint8), _U8_32, out=nb.lo[:n])
    np.add(lo, v.view(np.uint8), out=lo)
    f = nb.f[:n]
    np.copyto(f, lo)
    # per-grid products ([n, H, W] @ [W]): each small enough that OpenBLAS does not
    # start its own threads (those fight the chunk workers)
    np.matmul(f, nb.ones_w, out=job.rows_all[a:b])
    if job.columns:
        np.matmul(nb.ones_h, f, out=job.cols_all[a:b])  # [n, W]


def _unpacked_counts(job, eq, v, wrong) -> list:
    """Unpacked path (lines of 32 cells or more): one chunk's cell counts."""
    n = eq.shape[0]
    exact = eq.reshape(n, -1).view(np.uint8).min(1)
    rv = rw = cv = cw = None
    if job.columns:
        rv, rw = np.count_nonzero(v, axis=2), np.count_nonzero(wrong, axis=2)
        cv, cw = np.count_nonzero(v, axis=1), np.count_nonzero(wrong, axis=1)
        gv, gw = rv.sum(1), rw.sum(1)
    else:
        gv = np.count_nonzero(v.reshape(n, -1), axis=1)
        gw = np.count_nonzero(wrong.reshape(n, -1), axis=1)
    return _cell_counts(rv, rw, cv, cw, gv, gw, exact, job.tols)


def _change_counts(job, nb, a, b, tc, v, wrong) -> dict:
    """``"chg"``: ``[n_tgt_change, n_both_change, n_change_correct]`` of grids
    ``a..b``; with ``reference`` also ``"ref"``, the ``[3, n]`` per-grid counts over
    every cell. Overwrites ``tc``."""
    n = b - a
    p, s = job.pred[a:b], job.source[a:b]
    res = {}
    pc = None
    if job.reference:
        # the reference code's per-grid counts over every cell
        fl = nb.flags[:, :n]
        np.copyto(fl[0], tc)
        pc = np.not_equal(p, s, out=fl[1])
        np.logical_and(tc, pc, out=fl[2])
        if job.cells <= 32767:
            x16 = nb.i16k[:, :n]
            np.copyto(x16, fl.view(np.uint8))
            res["ref"] = x16.reshape(3, n, -1).sum(-1, dtype=np.int16)
        else:
            res["ref"] = np.count_nonzero(fl.reshape(3, n, -1), axis=-1)
    # valid cells: n_tc = |tgt!=src|; of those, the wrong ones (tw) are the only
    # cells where pred!=src can differ from tgt!=src (where pred == tgt they
    # agree), so only they need pred compared with src
    n_tc = np.count_nonzero(np.logical_and(tc, v, out=nb.tcv[:n]))
    tw = np.logical_and(tc, wrong, out=tc)
    if pc is None and job.flat_ok and nb.sparse:
        # gathered by index (flatnonzero counts them too); the next chunk of this
        # worker stays sparse while they are few
        idx = np.flatnonzero(tw)
        n_tw = idx.size
        n_twp = np.count_nonzero(p.reshape(-1)[idx] != s.reshape(-1)[idx])
    else:
        n_tw = np.count_nonzero(tw)
        if n_tw == 0:
            n_twp = 0
        else:
            if pc is None:
                pc = np.not_equal(p, s, out=nb.pc[:n])
            n_twp = np.count_nonzero(np.logical_and(tw, pc, out=tw))
    nb.sparse = n_tw * _SPARSE_FRACTION <= tw.size
    n_tc, n_tw, n_twp = int(n_tc), int(n_tw), int(n_twp)
    res["chg"] = [n_tc, n_tc - n_tw + n_twp, n_tc - n_tw]  # n_tc, n_both, n_cc
    return res


def _cell_counts(rv, rw, cv, cw, gv, gw, exact, tols) -> list:
    """Counts (Python ints, layout ``CELL_KEYS`` + one per tolerance) from valid /
    wrong cells per row ``rv, rw`` [n, H] and per column ``cv, cw`` [n, W] (None for
    sequences), per grid ``gv, gw`` [n], and ``exact`` [n] (nonzero where pred ==
    target everywhere)."""
    nonempty = gv > 0
    n_grids = int(np.count_nonzero(nonempty))
    out = [n_grids,
           n_grids - int(np.count_nonzero(gw)),  # a wrong cell is a valid cell
           int(np.count_nonzero(np.logical_and(nonempty, exact))),
           int(gv.sum()), int(gw.sum())]
    for v_, w_ in ((rv, rw), (cv, cw)):
        if v_ is None:
            out += [0, 0]
        else:
            has = int(np.count_nonzero(v_))
            out += [has, has - int(np.count_nonzero(w_))]
    # same float64 division and comparison as the torch kernel
    acc = (gv - gw) / np.maximum(gv, 1)
    for tl in tols:
        out.append(int(np.count_nonzero(np.logical_and(acc >= tl, nonempty))))
    return out


def _packed_counts(rows, cols, exact, tols) -> list:
    """:func:`_cell_counts` from float32 arrays of ``valid + 32 * wrong`` per row
    [B, H] and per column [B, W] (None: not counted) and ``exact`` [B]. Overwrites
    ``rows``."""
    # flags (bool arrays count fast): a valid cell / a wrong cell in the line
    lines = (None,) * 4 if cols is None else (rows > 0, rows >= 32, cols > 0, cols >= 32)
    ones = np.ones(rows.shape[1], dtype=np.float32)
    total = rows @ ones  # valid + 32 * wrong per grid, exact in float32 (< 2 ** 24)
    rw = np.floor(np.multiply(rows, np.float32(1 / 32), out=rows), out=rows)  # exact
    gw = rw @ ones
    gv = (total - 32 * gw).astype(np.int64)
    return _cell_counts(*lines, gv, gw.astype(np.int64), exact, tols)


def _totals(job: _Job, parts: list) -> dict:
    """The kernel's output dict from the chunks' partial results."""
    if job.packed:  # counted once on the per-row / per-column / per-grid arrays
        tot = _packed_counts(job.rows_all, job.cols_all, job.exact_all, job.tols)
    else:  # each chunk reduced itself to counts
        tot = [sum(r["c"][j] for r in parts) for j in range(len(parts[0]["c"]))]
    out = dict(zip(CELL_KEYS, tot))
    out["n_tol"] = tot[len(CELL_KEYS):]
    if job.source is not None:
        for j, key in enumerate(CHANGE_KEYS):
            out[key] = sum(r["chg"][j] for r in parts)
        if job.reference:
            out["ref_per_grid"] = np.concatenate([r["ref"] for r in parts], axis=1)
    return out
