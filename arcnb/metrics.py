"""Metric functions.

``partial_credit`` scores one predicted grid against its truth (seed 001). The tensor
metrics for training loops live here too:

* :func:`grid_metrics`: grid accuracy, exact match, cell accuracy, tolerance
  accuracies, row / column rates, the dense grid objective and, given the source
  grids, the change (transformation) metrics (seed 000);
* :func:`reconstruction_metrics`, :func:`color_confusion`, :func:`latent_diagnostics`
  (seed 002);
* :func:`token_accuracy` (seed 004, corrected: the ignore index is never guessed).

Conventions. Batches are ``[B, H, W]`` grids (or ``[B, L]`` sequences) padded with
``pad_token`` (default 10; a value in 0-9 raises ValueError because colour 0 is black,
never padding; ``pad_token=None`` means no padding). *Valid* cells are those whose
target is not padding. Inputs may be torch tensors on any device with any integer
dtype, numpy arrays or nested lists; results are dicts of 0-dim float32 tensors on
the input's device (nothing is moved to the CPU). A ratio whose denominator is empty
is NaN, never 0 or 1.

Structure (the torchmetrics model). Every metric family has a count-based core:
``_<family>_update(...)`` turns one batch into a dict of counts (sums), and
``_<family>_compute(counts, ...)`` turns counts into ratios. The functions below are
``compute(update(batch))``; the streaming classes in :mod:`arcnb.modules` keep the
same counts as states, add them over batches (and processes, ``dist_reduce_fx="sum"``)
and call the same ``compute``. So streaming over any split of the batches equals the
one-shot result over their concatenation.
"""
from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Mapping, Sequence

import numpy as np

from .grids import check_pad_token

__all__ = [
    "partial_credit",
    "grid_metrics",
    "reconstruction_metrics",
    "color_confusion",
    "latent_diagnostics",
    "token_accuracy",
    "tolerance_name",
    "GRID_METRIC_NAMES",
    "CHANGE_METRIC_NAMES",
    "CONVENTIONS",
    "ACTIVE_DIM_THRESHOLD",
]

CONVENTIONS = ("arcnb", "reference")
DEFAULT_TOLERANCES = (0.90, 0.95, 0.99)
DEFAULT_WEIGHTS = (0.0, 0.8, 0.2)
#: A latent dimension is *active* when the variance over samples of its posterior
#: mean exceeds this value (Burda et al. 2016, "Importance Weighted Autoencoders").
ACTIVE_DIM_THRESHOLD = 0.01

#: Metric names of :func:`grid_metrics` without ``source`` (plus one
#: ``grid_tol_*`` per tolerance).
GRID_METRIC_NAMES = (
    "grid_accuracy", "exact_match", "cell_accuracy", "row_all_correct_rate",
    "col_all_correct_rate", "dense_grid_objective", "n_grids",
)
#: Extra names of :func:`grid_metrics` given ``source``.
CHANGE_METRIC_NAMES = (
    "change_recall", "change_precision", "transformation_f1", "copy_rate",
    "change_accuracy",
)

# Cells per chunk when scanning a batch: small on the CPU so that the passes over a
# chunk stay in cache (each input is read from memory once); larger on
# accelerators (fewer kernel launches) while the work buffers, about 30 bytes per
# cell of a chunk, stay near 250 MB.
_CHUNK_CELLS_CPU = 1 << 17
_CHUNK_CELLS_OTHER = 1 << 23
# CPU chunks compare pred with source only at the wrong valid cells where the
# target changes, gathered by index while they are fewer than 1 / this of the chunk
_SPARSE_FRACTION = 16
_U8_32 = np.uint8(32)


# --------------------------------------------------------------------------- #
# partial credit (scoring)
# --------------------------------------------------------------------------- #
def partial_credit(truth, pred) -> float:
    """Partial credit for one predicted grid (seed 001).

    1.0 on an exact match; 0.0 for None; otherwise
    ``(min/max ratio of rows) * (min/max ratio of columns) * cell accuracy`` on the
    top-left overlap of the two grids.

    >>> partial_credit([[1, 2, 3], [4, 5, 6]], [[3, 2, 1], [4, 5, 6]])
    0.6666666666666666
    >>> round(partial_credit([[1, 2, 3], [4, 5, 6]], [[3, 2, 1], [4, 5, 6], [7, 8, 9]]), 4)
    0.4444
    """
    if pred is None:
        return 0.0
    t = np.asarray(truth)
    p = np.asarray(pred)
    if t.shape == p.shape and np.array_equal(t, p):
        return 1.0
    if p.ndim != 2 or p.size == 0:
        return 0.0
    rows = min(t.shape[0], p.shape[0]) / max(t.shape[0], p.shape[0])
    cols = min(t.shape[1], p.shape[1]) / max(t.shape[1], p.shape[1])
    h, w = min(t.shape[0], p.shape[0]), min(t.shape[1], p.shape[1])
    acc = float(np.mean(t[:h, :w] == p[:h, :w]))
    return float(rows * cols * acc)


# --------------------------------------------------------------------------- #
# input handling
# --------------------------------------------------------------------------- #
def _torch():
    import torch

    return torch


def _first_device(*xs):
    torch = _torch()
    devices = {x.device for x in xs if isinstance(x, torch.Tensor)}
    if len(devices) > 1:
        raise ValueError(f"inputs are on different devices: {sorted(map(str, devices))}")
    return devices.pop() if devices else torch.device("cpu")


def _as_tensor(x: Any, name: str, device, *, integer: bool = True):
    """``x`` as a torch tensor on ``device`` (tensors already there stay untouched)."""
    torch = _torch()
    if isinstance(x, torch.Tensor):
        t = x.detach()
    else:
        if x is None:
            raise ValueError(f"{name} is None")
        try:
            arr = np.asarray(x)
        except (ValueError, TypeError) as exc:  # ragged nested lists
            raise ValueError(f"{name} is not a rectangular array: {exc}") from None
        if arr.dtype == object:
            raise ValueError(f"{name} is not a rectangular array of numbers")
        if arr.dtype.kind == "u" and arr.dtype.itemsize > 1:
            arr = arr.astype(np.int64)  # torch lacks some unsigned dtypes
        t = torch.as_tensor(arr, device=device)
    if integer and (t.is_floating_point() or t.is_complex() or t.dtype == torch.bool):
        raise ValueError(
            f"{name} has dtype {t.dtype}; expected integer class indices "
            "(take the argmax of logits first)"
        )
    return t


def _check_same_shape(a, b, na: str, nb: str) -> None:
    if tuple(a.shape) != tuple(b.shape):
        raise ValueError(f"{na} has shape {tuple(a.shape)} but {nb} has shape {tuple(b.shape)}")


def _check_batch(t, name: str) -> None:
    if t.dim() < 2:
        raise ValueError(
            f"{name} has shape {tuple(t.shape)}; expected a batch [B, H, W] or [B, L] "
            "(wrap a single grid as grid[None])"
        )


def _float_dtype(device):
    torch = _torch()
    return torch.float32 if device.type == "mps" else torch.float64


def _ratio(num, den):
    """``num / den`` as float, NaN where ``den == 0`` (works elementwise)."""
    torch = _torch()
    dt = _float_dtype(num.device)
    num = num.to(dt)
    den = den.to(dt)
    return torch.where(den > 0, num / den.clamp_min(1e-300 if dt == torch.float64 else 1e-30),
                       torch.full_like(num, math.nan))


def _out(x):
    """Final form of a metric: float32 on the same device."""
    torch = _torch()
    return x.to(torch.float32)


def tolerance_name(tol: float) -> str:
    """Key of a tolerance accuracy: ``0.95 -> "grid_tol_0p95"``, ``0.999 -> "grid_tol_0p999"``."""
    s = f"{tol:.2f}"
    if float(s) != float(tol):
        s = repr(float(tol))
    return "grid_tol_" + s.replace(".", "p")


def _check_tolerances(tolerances) -> tuple[float, ...]:
    tols = tuple(float(t) for t in tolerances)
    for t in tols:
        if not (0.0 <= t <= 1.0):
            raise ValueError(f"tolerance {t} is not in [0, 1]")
    if len({tolerance_name(t) for t in tols}) != len(tols):
        raise ValueError(f"duplicate tolerances {tols}")
    return tols


def _check_convention(convention: str) -> str:
    if convention not in CONVENTIONS:
        raise ValueError(f"convention must be one of {CONVENTIONS}, got {convention!r}")
    return convention


def _check_weights(weights) -> tuple[float, float, float]:
    w = tuple(float(x) for x in weights)
    if len(w) != 3:
        raise ValueError("weights must be (w_cell, w_tol, w_exact)")
    return w


def _chunks(n: int, cells_per_item: int, device):
    limit = _CHUNK_CELLS_CPU if device.type == "cpu" else _CHUNK_CELLS_OTHER
    step = max(1, limit // max(1, cells_per_item))
    for start in range(0, n, step):
        yield start, min(n, start + step)


# --------------------------------------------------------------------------- #
# grid metrics
# --------------------------------------------------------------------------- #
def _tolerances_for_update(tolerances) -> tuple[float, ...]:
    """Tolerances to count: the requested ones plus 0.95 (dense grid objective)."""
    tols = _check_tolerances(tolerances)
    if tolerance_name(0.95) not in {tolerance_name(t) for t in tols}:
        tols = tols + (0.95,)
    return tols


def _grid_count_names(tols: Sequence[float], with_source: bool, reference: bool) -> list[str]:
    names = ["n_total", "n_grids", "n_correct", "n_exact", "n_valid", "n_valid_correct",
             "n_rows", "n_rows_correct", "n_cols", "n_cols_correct"]
    names += ["n_" + tolerance_name(t) for t in tols]
    if with_source:
        names += ["n_tgt_change", "n_pred_change", "n_both_change", "n_change_correct"]
        if reference:
            names += ["sum_ref_copy_rate", "sum_ref_recall", "sum_ref_precision", "sum_ref_f1"]
    return names


def _fits(value: int, dtype) -> bool:
    """Whether ``value`` is representable in the integer ``dtype`` (torch or numpy)."""
    info = np.iinfo(dtype) if isinstance(dtype, np.dtype) else _torch().iinfo(dtype)
    return int(info.min) <= value <= int(info.max)


def _per_grid_count(b, n: int):
    """Number of True cells of a bool tensor per grid (first dimension)."""
    torch = _torch()
    cells = b.numel() // max(n, 1)
    dt = torch.int16 if cells <= 32767 else torch.int32
    return b.reshape(n, -1).to(dt).sum(-1, dtype=dt)


#: Layout of the count list a CPU chunk returns (then one count per tolerance,
#: then n_tgt_change, n_both_change, n_change_correct with ``source``).
_NP_COUNT_KEYS = ("n_grids", "n_correct", "n_exact", "n_valid", "n_wrong",
                  "n_rows", "n_rows_correct", "n_cols", "n_cols_correct")


def _np_grid_counts(rv, rw, cv, cw, gv, gw, exact, tols) -> list:
    """One CPU chunk's counts (Python ints, layout ``_NP_COUNT_KEYS`` + tolerances)
    from numpy arrays: valid / wrong cells per row ``rv, rw`` [n, H] and per column
    ``cv, cw`` [n, W] (None for sequences), per grid ``gv, gw`` [n], and ``exact``
    [n] (nonzero where pred == target everywhere)."""
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
    # same float64 division and comparison as the torch path
    acc = (gv - gw) / np.maximum(gv, 1)
    for tl in tols:
        out.append(int(np.count_nonzero(np.logical_and(acc >= tl, nonempty))))
    return out


def _np_packed_counts(rows, cols, exact, tols) -> list:
    """:func:`_np_grid_counts` from float32 arrays of ``valid + 32 * wrong`` per row
    [B, H] and per column [B, W] (None: not counted) and ``exact`` [B]. Overwrites
    ``rows``."""
    # flags (bool arrays count fast): a valid cell / a wrong cell in the line
    lines = (None,) * 4 if cols is None else (rows > 0, rows >= 32, cols > 0, cols >= 32)
    ones = np.ones(rows.shape[1], dtype=np.float32)
    total = rows @ ones  # valid + 32 * wrong per grid, exact in float32 (< 2 ** 24)
    rw = np.floor(np.multiply(rows, np.float32(1 / 32), out=rows), out=rows)  # exact
    gw = rw @ ones
    gv = (total - 32 * gw).astype(np.int64)
    return _np_grid_counts(*lines, gv, gw.astype(np.int64), exact, tols)


def _grid_update(pred, target, source=None, *, pad_token: int | None = 10,
                 tolerances: Sequence[float] = DEFAULT_TOLERANCES,
                 reference: bool = False, _backend: str | None = None) -> dict:
    """Counts of one batch for :func:`grid_metrics` (all sums, on the input's device).

    ``n_total`` grids in the batch; ``n_grids`` with at least one valid cell;
    ``n_correct`` / ``n_exact`` / ``n_grid_tol_*`` among those; ``n_valid`` /
    ``n_valid_correct`` valid cells; ``n_rows`` / ``n_cols`` rows / columns holding a
    valid cell and ``n_rows_correct`` / ``n_cols_correct`` those without a wrong
    valid cell. With ``source``, over valid cells: ``n_tgt_change`` (tgt!=src),
    ``n_pred_change`` (pred!=src), ``n_both_change`` (both), ``n_change_correct``
    (pred==tgt and tgt!=src); with ``reference=True`` also the sums over grids of the
    reference code's per-grid copy rate, recall, precision and F1 (every cell).

    Inputs are tensors of the same shape on one device (the public functions
    convert and check).

    How it stays close to one pass over memory: the batch is scanned in chunks of
    grids small enough to stay in the core's cache, into preallocated buffers (no
    allocation in the loop), so each input is read from memory once. Per cell there
    are three int64 comparisons (pred == tgt and tgt != src stream the inputs, tgt !=
    pad reads the cached chunk); the rest works on one-byte flags. The per-cell
    value ``valid + 32 * wrong`` is summed over every row with float32
    matrix-vector products and over every column with more (exact: a row or column of
    fewer than 32 cells cannot carry into the next field). Change counts: where
    pred == tgt, pred != src equals tgt != src, so
    ``n_both_change = n_change_correct + |wrong & tgt!=src & pred!=src|``. On the
    CPU, pred is compared with src only at the wrong valid cells where the target
    changes. Those cells are gathered by index while they are fewer than
    1/``_SPARSE_FRACTION`` of a chunk; otherwise one dense comparison runs. The chunk passes run as numpy ufuncs on
    zero-copy views of the tensors. numpy compares int64 faster than torch on the
    CPU and releases the GIL, so chunks run on ``torch.get_num_threads()`` Python
    threads. Each chunk writes its per-row / per-column sums into batch arrays,
    which are counted once at the end. On any other device the chunk passes are
    torch operations on that device, with the bookkeeping on the collected
    per-row / per-grid tensors (``_backend`` forces one: "torch" or "numpy").
    """
    torch = _torch()
    tols = _tolerances_for_update(tolerances)
    device = target.device
    with_source = source is not None
    names = _grid_count_names(tols, with_source, reference)
    fdt = _float_dtype(device)
    i64 = torch.int64
    acc = {n: torch.zeros((), dtype=fdt if n.startswith("sum_") else i64, device=device)
           for n in names}
    B = target.shape[0]
    acc["n_total"] += B
    if B == 0 or target.numel() == 0:
        return acc
    if target.dim() == 2:  # [B, L]: one row per grid, no columns counted
        shp3 = (B, 1, target.shape[1])
        grid3d = False
    else:  # [B, ..., H, W]: fold extra dims into rows
        shp3 = (B, -1, target.shape[-1])
        grid3d = True
    pred, target = pred.reshape(shp3), target.reshape(shp3)
    source = source.reshape(shp3) if with_source else None
    H, W = target.shape[1], target.shape[2]
    cells = H * W
    packed = W < 32 and H < 32 and device.type != "mps"
    step = next(iter(_chunks(B, cells, device)))[1]

    use_numpy = (_backend == "numpy") if _backend is not None else device.type == "cpu"
    if use_numpy:
        pn, tn = pred.numpy(), target.numpy()  # zero-copy views of CPU tensors
        sn = source.numpy() if with_source else None
        flat_ok = with_source and pn.flags.c_contiguous and sn.flags.c_contiguous
        pad_np = (tn.dtype.type(pad_token)
                  if pad_token is not None and _fits(pad_token, tn.dtype) else None)
        bounds = list(_chunks(B, cells, device))
        # numpy releases the GIL inside ufuncs: chunks run on up to
        # torch.get_num_threads() Python threads, each with its own buffers
        n_workers = max(1, min(_torch().get_num_threads(), len(bounds)))
        if packed:
            # per row / column: valid + 32 * wrong; per grid: all of pred == target
            rows_all = np.empty((B, H), dtype=np.float32)
            cols_all = np.empty((B, W), dtype=np.float32) if grid3d else None
            exact_all = np.empty(B, dtype=np.uint8)
        worker_bufs = [_GridBuffers(min(step, B), H, W, None, with_source, packed, reference,
                                    numpy=True) for _ in range(n_workers)]
    else:
        buf = _GridBuffers(min(step, B), H, W, device, with_source, packed, reference)
        pad_fits = pad_token is not None and _fits(pad_token, target.dtype)

    def chunk_torch(a, b):
        """Per-chunk partial results (small tensors) for grids a..b, torch ops."""
        n = b - a
        res = {}
        p, t = pred[a:b], target[a:b]
        s = source[a:b] if with_source else None
        eq = torch.eq(p, t, out=buf.eq[:n])
        if not pad_fits:
            v = buf.v[:n].fill_(True)  # no cell can hold the pad token
        else:
            v = torch.ne(t, pad_token, out=buf.v[:n])
        wrong = torch.gt(v, eq, out=buf.wrong[:n])
        res["exact"] = eq.view(torch.uint8).view(n, -1).amin(-1)
        if packed:
            # valid + 32 * wrong per cell; one matrix-vector product gives both
            # counts of every row (a row has < 32 cells), one more every column
            lo = torch.add(v.view(torch.uint8), wrong.view(torch.uint8), alpha=32,
                           out=buf.lo[:n])
            f = buf.f[:n].copy_(lo)
            res["rows"] = torch.mv(f.view(-1, W), buf.ones_w).view(n, H)
            if grid3d:
                res["cols"] = torch.matmul(buf.ones_h, f)  # [n, W]
        elif grid3d:
            res["rv"], res["rw"] = v.sum(-1), wrong.sum(-1)
            res["cv"], res["cw"] = v.sum(-2), wrong.sum(-2)
        else:
            res["gv"], res["gw"] = _per_grid_count(v, n), _per_grid_count(wrong, n)
        if with_source:
            fl = buf.flags[:, :n]  # [k, n, H, W]: one copy + one sum counts them all
            tc = torch.ne(t, s, out=buf.tc[:n])
            pc = torch.ne(p, s, out=buf.pc[:n])
            tcv = torch.logical_and(tc, v, out=fl[0])
            torch.logical_and(tcv, pc, out=fl[1])
            torch.logical_and(tcv, eq, out=fl[2])
            if reference:
                fl[3].copy_(tc)
                fl[4].copy_(pc)
                torch.logical_and(tc, pc, out=fl[5])
            k = fl.shape[0]
            if cells <= 32767:
                x16 = buf.i16k[:, :n].copy_(fl.view(torch.uint8))
                counts = x16.reshape(k, n, -1).sum(-1, dtype=torch.int16)  # [k, n]
            else:
                counts = fl.reshape(k, n, -1).sum(-1)
            counts = counts.to(torch.int64)
            res["chg"] = counts[:3].sum(1)  # n_tc, n_both, n_cc
            if reference:
                res["ref"] = counts[3:]  # per grid: tc, pc, both (every cell)
        return res

    def numpy_worker(nb, todo, parts):
        """Chunks taken from the shared iterator ``todo`` (``next`` is atomic under
        the GIL) until none is left, with the worker's own buffers ``nb``."""
        for i in todo:
            parts[i] = _chunk_numpy(*bounds[i], nb)

    def _chunk_numpy(a, b, nb):
        """The same partial results with numpy ufuncs on views of CPU tensors."""
        n = b - a
        res = {}
        p, t = pn[a:b], tn[a:b]
        # the int64 passes first, in an order that reads each input from memory
        # once (the chunk of t stays in cache for the second and third pass)
        eq = np.equal(p, t, out=nb.eq[:n])
        if with_source:
            tc = np.not_equal(t, sn[a:b], out=nb.tc[:n])
        v = nb.v[:n]
        if pad_np is None:
            v.fill(True)
        else:
            np.not_equal(t, pad_np, out=v)
        wrong = np.greater(v, eq, out=nb.wrong[:n])
        if packed:
            # valid + 32 * wrong per cell (bit shifts on uint8 are slow in numpy;
            # a multiply and an add are not); float32 matrix-vector products sum
            # it over every row and every column (< 32 cells: fields cannot carry);
            # the results go straight into the batch arrays (counted at the end)
            np.min(eq.reshape(n, -1).view(np.uint8), axis=1, out=exact_all[a:b])
            lo = np.multiply(wrong.view(np.uint8), _U8_32, out=nb.lo[:n])
            np.add(lo, v.view(np.uint8), out=lo)
            f = nb.f[:n]
            np.copyto(f, lo)
            # per-grid products ([n, H, W] @ [W]): each small enough that OpenBLAS
            # does not start its own threads (those fight the chunk workers)
            np.matmul(f, nb.ones_w, out=rows_all[a:b])
            if grid3d:
                np.matmul(nb.ones_h, f, out=cols_all[a:b])  # [n, W]
        else:
            exact = eq.reshape(n, -1).view(np.uint8).min(1)
            rv = rw = cv = cw = None
            if grid3d:
                rv, rw = np.count_nonzero(v, axis=2), np.count_nonzero(wrong, axis=2)
                cv, cw = np.count_nonzero(v, axis=1), np.count_nonzero(wrong, axis=1)
                gv, gw = rv.sum(1), rw.sum(1)
            else:
                gv = np.count_nonzero(v.reshape(n, -1), axis=1)
                gw = np.count_nonzero(wrong.reshape(n, -1), axis=1)
            res["c"] = _np_grid_counts(rv, rw, cv, cw, gv, gw, exact, tols)
        if with_source:
            s = sn[a:b]
            pc = None
            if reference:
                # the reference code's per-grid counts over every cell
                fl = nb.flags[:, :n]
                np.copyto(fl[0], tc)
                pc = np.not_equal(p, s, out=fl[1])
                np.logical_and(tc, pc, out=fl[2])
                if cells <= 32767:
                    x16 = nb.i16k[:, :n]
                    np.copyto(x16, fl.view(np.uint8))
                    ref = x16.reshape(3, n, -1).sum(-1, dtype=np.int16)
                else:
                    ref = np.count_nonzero(fl.reshape(3, n, -1), axis=-1)
                res["ref"] = torch.from_numpy(ref)
            # valid cells: n_tc = |tgt!=src|; of those, the wrong ones (tw) are
            # the only cells where pred!=src can differ from tgt!=src (where
            # pred == tgt they agree), so only they need pred compared with src
            n_tc = np.count_nonzero(np.logical_and(tc, v, out=nb.tcv[:n]))
            tw = np.logical_and(tc, wrong, out=tc)
            if pc is None and flat_ok and nb.sparse:
                # gathered by index (flatnonzero counts them too); the next chunk
                # of this worker stays sparse while they are few
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

    if use_numpy:
        parts = [None] * len(bounds)
        todo = iter(range(len(bounds)))
        if n_workers > 1:
            with ThreadPoolExecutor(max_workers=n_workers - 1) as ex:
                futures = [ex.submit(numpy_worker, nb, todo, parts) for nb in worker_bufs[1:]]
                numpy_worker(worker_bufs[0], todo, parts)
                for fut in futures:
                    fut.result()
        else:
            numpy_worker(worker_bufs[0], todo, parts)
    else:
        parts = [chunk_torch(a, b) for a, b in _chunks(B, cells, device)]

    if use_numpy:
        if packed:  # counted once on the per-row / per-column / per-grid arrays
            tot = _np_packed_counts(rows_all, cols_all, exact_all, tols)
        else:  # each chunk reduced itself to counts
            tot = [sum(r["c"][j] for r in parts) for j in range(len(parts[0]["c"]))]
        for j, key in enumerate(_NP_COUNT_KEYS):
            if key in acc:
                acc[key] += tot[j]
        acc["n_valid_correct"] += tot[3] - tot[4]
        for k, tl in enumerate(tols):
            acc["n_" + tolerance_name(tl)] += tot[len(_NP_COUNT_KEYS) + k]
        if with_source:
            n_wrong = tot[4]
            n_tc, n_both, n_cc = (sum(r["chg"][j] for r in parts) for j in range(3))
    else:
        def cat(key):
            return torch.cat([r[key] for r in parts])

        # -- bookkeeping on the small per-row / per-grid tensors
        def unpack(x):
            # float32 valid + 32 * wrong (exact small integers) -> (valid, wrong);
            # float arithmetic is vectorised where int64 bit operations are not
            w = torch.floor(x * (1.0 / 32))
            return x - 32 * w, w

        if packed:
            rv, rw = unpack(cat("rows"))  # [B, H]
        elif grid3d:
            rv, rw = cat("rv").to(i64), cat("rw").to(i64)
        if grid3d:
            if packed:
                cv, cw = unpack(cat("cols"))  # [B, W]
            else:
                cv, cw = cat("cv").to(i64), cat("cw").to(i64)
            has_row = rv > 0
            has_col = cv > 0
            acc["n_rows"] += has_row.sum()
            acc["n_rows_correct"] += (has_row & (rw == 0)).sum()
            acc["n_cols"] += has_col.sum()
            acc["n_cols_correct"] += (has_col & (cw == 0)).sum()
        if packed or grid3d:
            g_valid = rv.sum(-1).to(i64)
            g_wrong = rw.sum(-1).to(i64)
        else:
            g_valid = cat("gv").to(i64)
            g_wrong = cat("gw").to(i64)
        nonempty = g_valid > 0
        acc["n_grids"] += nonempty.sum()
        acc["n_valid"] += g_valid.sum()
        acc["n_valid_correct"] += g_valid.sum() - g_wrong.sum()
        acc["n_correct"] += (nonempty & (g_wrong == 0)).sum()
        acc["n_exact"] += (nonempty & (cat("exact") > 0)).sum()
        g_acc = (g_valid - g_wrong).to(fdt) / g_valid.clamp_min(1).to(fdt)
        tol_t = torch.tensor(tols, dtype=fdt, device=device)
        tol_counts = ((g_acc[:, None] >= tol_t[None, :]) & nonempty[:, None]).sum(0)
        for k, tl in enumerate(tols):
            acc["n_" + tolerance_name(tl)] += tol_counts[k]
        if with_source:
            chg = torch.stack([r["chg"] for r in parts]).sum(0)
            n_tc, n_both, n_cc = chg[0], chg[1], chg[2]
            n_wrong = g_wrong.sum()
    if with_source:
        acc["n_tgt_change"] += n_tc
        acc["n_both_change"] += n_both
        acc["n_change_correct"] += n_cc
        # valid cells with pred != src: where tgt != src, the n_both cells; where
        # tgt == src, exactly the wrong cells, n_wrong - (n_tc - n_cc) of them
        acc["n_pred_change"] += n_both + n_wrong - n_tc + n_cc
        if reference:
            # the reference code: per grid, over every cell (padding included)
            flags = torch.cat([r["ref"] for r in parts], dim=1).to(fdt)  # [3, B]
            tc_g, pc_g, both_g = flags[0], flags[1], flags[2]
            one = torch.ones((), dtype=fdt, device=device)
            rec = torch.where(tc_g > 0, both_g / tc_g.clamp_min(1), one)
            prec = torch.where(pc_g > 0, both_g / pc_g.clamp_min(1), one)
            f1 = 2.0 * prec * rec / (prec + rec + 1e-8)
            acc["sum_ref_copy_rate"] += ((cells - pc_g) / cells).sum()
            acc["sum_ref_recall"] += rec.sum()
            acc["sum_ref_precision"] += prec.sum()
            acc["sum_ref_f1"] += f1.sum()
    return acc


class _GridBuffers:
    """Work buffers for one chunk of ``n`` grids of ``H x W`` (reused across chunks),
    torch tensors on ``device`` or, with ``numpy=True``, numpy arrays."""

    def __init__(self, n, H, W, device, with_source, packed, reference, numpy=False):
        torch = _torch()
        shape = (n, H, W)
        if numpy:
            def new(dt, shp=shape):
                return np.empty(shp, dtype=dt)
            b8, u8, i16, f32 = np.bool_, np.uint8, np.int16, np.float32
        else:
            def new(dt, shp=shape):
                return torch.empty(shp, dtype=dt, device=device)
            b8, u8, i16, f32 = torch.bool, torch.uint8, torch.int16, torch.float32
        self.eq, self.v, self.wrong = new(b8), new(b8), new(b8)
        self.sparse = True  # CPU: whether the last chunk had few wrong changed cells
        if with_source and numpy:
            self.tc, self.pc, self.tcv = new(b8), new(b8), new(b8)
            if reference:
                self.flags = new(b8, (3,) + shape)  # tc, pc, both over every cell
                self.i16k = new(i16, (3,) + shape)
        elif with_source:
            self.tc, self.pc = new(b8), new(b8)
            k = 6 if reference else 3
            self.flags = new(b8, (k,) + shape)
            self.i16k = new(i16, (k,) + shape)
        if packed:
            self.lo = new(u8)
            self.f = new(f32)
            if numpy:
                self.ones_w = np.ones(W, dtype=np.float32)
                self.ones_h = np.ones(H, dtype=np.float32)
            else:
                self.ones_w = torch.ones(W, dtype=torch.float32, device=device)
                self.ones_h = torch.ones(H, dtype=torch.float32, device=device)


def _grid_compute(counts: Mapping[str, Any], *, tolerances=DEFAULT_TOLERANCES,
                  weights=DEFAULT_WEIGHTS, convention: str = "arcnb") -> dict:
    """Ratios of :func:`grid_metrics` from the counts of :func:`_grid_update`."""
    torch = _torch()
    convention = _check_convention(convention)
    tols = _check_tolerances(tolerances)
    w_cell, w_tol, w_exact = _check_weights(weights)
    ref = convention == "reference"
    grids = counts["n_total"] if ref else counts["n_grids"]
    out = {
        "grid_accuracy": _ratio(counts["n_correct"], grids),
        "exact_match": _ratio(counts["n_exact"], grids),
        "cell_accuracy": _ratio(counts["n_valid_correct"], counts["n_valid"]),
    }
    for tl in tols:
        out[tolerance_name(tl)] = _ratio(counts["n_" + tolerance_name(tl)], grids)
    out["row_all_correct_rate"] = _ratio(counts["n_rows_correct"], counts["n_rows"])
    out["col_all_correct_rate"] = _ratio(counts["n_cols_correct"], counts["n_cols"])
    tol95 = _ratio(counts["n_" + tolerance_name(0.95)], grids)
    terms = [(w_cell, out["cell_accuracy"]), (w_tol, tol95), (w_exact, out["grid_accuracy"])]
    dense = torch.zeros_like(out["cell_accuracy"])
    for w, m in terms:
        if w != 0.0:  # a zero weight drops its term (0 * NaN would poison the sum)
            dense = dense + w * m
    out["dense_grid_objective"] = dense
    out["n_grids"] = grids.to(out["cell_accuracy"].dtype)
    if "n_tgt_change" in counts:
        if ref:
            if "sum_ref_recall" not in counts:
                raise ValueError("counts lack the reference change sums (update with reference=True)")
            n = counts["n_total"]
            out["change_recall"] = _ratio(counts["sum_ref_recall"], n)
            out["change_precision"] = _ratio(counts["sum_ref_precision"], n)
            out["transformation_f1"] = _ratio(counts["sum_ref_f1"], n)
            out["copy_rate"] = _ratio(counts["sum_ref_copy_rate"], n)
        else:
            rec = _ratio(counts["n_both_change"], counts["n_tgt_change"])
            prec = _ratio(counts["n_both_change"], counts["n_pred_change"])
            s = prec + rec
            f1 = torch.where(s > 0, 2 * prec * rec / torch.where(s > 0, s, torch.ones_like(s)),
                             torch.where(torch.isnan(s), s, torch.zeros_like(s)))
            out["change_recall"] = rec
            out["change_precision"] = prec
            out["transformation_f1"] = f1
            out["copy_rate"] = _ratio(counts["n_valid"] - counts["n_pred_change"], counts["n_valid"])
        # no counterpart in the reference code: pooled over valid cells in both
        out["change_accuracy"] = _ratio(counts["n_change_correct"], counts["n_tgt_change"])
    return {k: _out(v) for k, v in out.items()}


def _prepare_grid_inputs(pred, target, source, pad_token):
    pad_token = check_pad_token(pad_token)
    device = _first_device(pred, target, source)
    pred = _as_tensor(pred, "pred", device)
    target = _as_tensor(target, "target", device)
    _check_batch(target, "target")
    _check_same_shape(pred, target, "pred", "target")
    if source is not None:
        source = _as_tensor(source, "source", device)
        _check_same_shape(source, target, "source", "target")
    return pred, target, source, pad_token


def grid_metrics(pred, target, *, pad_token: int | None = 10, source=None,
                 tolerances: Sequence[float] = DEFAULT_TOLERANCES,
                 weights: Sequence[float] = DEFAULT_WEIGHTS,
                 convention: str = "arcnb") -> dict:
    """Grid, cell and (given ``source``) change metrics of a padded batch (seed 000).

    ``pred``, ``target`` (and ``source``) are ``[B, H, W]`` (or ``[B, L]``) integer
    batches padded with ``pad_token``. *Valid* cells: ``target != pad_token``. A grid
    whose target is all padding is not a grid: with ``convention="arcnb"`` it is left
    out of every denominator.

    * ``grid_accuracy`` = #grids whose valid cells are all correct / #grids (padding
      positions are not checked);
    * ``exact_match`` = #grids with ``pred == target`` at every position, padding
      included / #grids (a prediction of the wrong shape fails here);
    * ``cell_accuracy`` = correct valid cells / valid cells, summed over the batch;
    * ``grid_tol_0p90`` etc. = #grids whose own valid-cell accuracy >= tolerance / #grids;
    * ``row_all_correct_rate`` / ``col_all_correct_rate`` = rows / columns without a
      wrong valid cell / rows / columns holding a valid cell (NaN for ``[B, L]``);
    * ``dense_grid_objective`` = w_cell*cell_accuracy + w_tol*grid_tol_0p95 +
      w_exact*grid_accuracy with ``weights=(w_cell, w_tol, w_exact)`` (a zero weight
      drops its term);
    * ``n_grids``: the grid denominator.

    With ``source`` (the input grids, same padding), over valid cells summed over the
    batch: ``change_recall`` = |pred!=src & tgt!=src| / |tgt!=src|;
    ``change_precision`` = |pred!=src & tgt!=src| / |pred!=src|;
    ``transformation_f1`` = 2PR/(P+R) (0 when both are 0); ``copy_rate`` =
    |pred==src| / |valid|; ``change_accuracy`` = |pred==tgt & tgt!=src| / |tgt!=src|.

    ``convention="reference"`` reproduces the ARC Taxonomy reproduction code: a grid
    whose target is all padding counts as wrong and stays in the grid denominators
    (grid_accuracy, exact_match, grid_tol_*, n_grids = B); change_recall,
    change_precision, transformation_f1 and copy_rate are computed per grid over
    every cell, padding included, then averaged over the B grids, with recall 1.0 for
    a grid without target changes, precision 1.0 for a grid without predicted
    changes and F1 = 2PR/(P+R+1e-8). ``change_accuracy`` has no reference
    counterpart and stays pooled over valid cells.

    Empty denominators give NaN. Results are 0-dim float32 tensors on the input's
    device.

    >>> import torch
    >>> m = grid_metrics(torch.tensor([[[1, 2], [3, 4]]]), torch.tensor([[[1, 2], [3, 5]]]))
    >>> float(m["grid_accuracy"]), float(m["cell_accuracy"])
    (0.0, 0.75)
    """
    tolerances = _check_tolerances(tolerances)
    convention = _check_convention(convention)
    weights = _check_weights(weights)
    pred, target, source, pad_token = _prepare_grid_inputs(pred, target, source, pad_token)
    counts = _grid_update(pred, target, source, pad_token=pad_token, tolerances=tolerances,
                          reference=convention == "reference")
    return _grid_compute(counts, tolerances=tolerances, weights=weights, convention=convention)


# --------------------------------------------------------------------------- #
# reconstruction metrics and colour confusion
# --------------------------------------------------------------------------- #
_N_COLORS = 10
_PRED_COLS = 12  # predicted 0-9, 10 = padding, 11 = any other value


def _confusion_counts(pred, target, pad_token):
    """``[10, 12]`` counts of (target colour, predicted code) over valid cells.

    Predicted code: the colour 0-9, 10 for ``pad_token``, 11 for any other value.
    Raises ValueError if a valid target cell is not a colour 0-9 (one scalar sync).
    """
    torch = _torch()
    device = target.device
    if pad_token is None:
        v = None
        n_valid = torch.tensor(target.numel(), device=device)
    else:
        v = target != pad_token
        n_valid = v.sum()
    t_colour = (target >= 0) & (target <= 9)
    bad_t = (v & ~t_colour) if v is not None else ~t_colour
    if bool(bad_t.any()):
        raise ValueError("target holds a value that is neither a colour 0-9 nor pad_token")
    p_colour = (pred >= 0) & (pred <= 9)
    code = torch.where(p_colour, pred.long(), torch.full((), 11, device=device, dtype=torch.long))
    if pad_token is not None:
        code = torch.where(pred == pad_token, torch.full((), 10, device=device, dtype=torch.long), code)
    idx = target.long().clamp(0, 9) * _PRED_COLS + code
    dump = _N_COLORS * _PRED_COLS
    if v is not None:
        idx = torch.where(v, idx, torch.full((), dump, device=device, dtype=torch.long))
    counts = torch.bincount(idx.reshape(-1), minlength=dump + 1)[:dump]
    del n_valid
    return counts.reshape(_N_COLORS, _PRED_COLS)


def _reconstruction_update(pred, target, *, pad_token=None) -> dict:
    """Counts for :func:`reconstruction_metrics`: the ``[10, 12]`` confusion counts,
    ``n_grids`` (grids with a valid cell) and ``n_perfect`` (those whose valid cells
    are all correct)."""
    torch = _torch()
    conf = _confusion_counts(pred, target, pad_token)
    B = target.shape[0]
    if B == 0:
        z = torch.zeros((), dtype=torch.int64, device=target.device)
        return {"confusion": conf, "n_grids": z, "n_perfect": z.clone()}
    eq = pred == target
    if pad_token is None:
        v = torch.ones_like(eq)
    else:
        v = target != pad_token
    g_valid = v.reshape(B, -1).sum(-1)
    g_wrong = (v > eq).reshape(B, -1).sum(-1)
    nonempty = g_valid > 0
    return {"confusion": conf, "n_grids": nonempty.sum(),
            "n_perfect": (nonempty & (g_wrong == 0)).sum()}


def _reconstruction_compute(counts: Mapping[str, Any], *, background: int | None = 0) -> dict:
    torch = _torch()
    conf = counts["confusion"]
    diag = torch.diagonal(conf[:, :_N_COLORS])
    per_colour_total = conf.sum(-1)
    per_colour = _ratio(diag, per_colour_total)
    present = per_colour_total > 0
    n_present = present.sum()
    balanced = _ratio(torch.where(present, per_colour, torch.zeros_like(per_colour)).sum(), n_present)
    obj_mask = torch.ones(_N_COLORS, dtype=torch.bool, device=conf.device)
    if background is not None:
        obj_mask[background] = False
    out = {
        "pixel_accuracy": _ratio(diag.sum(), per_colour_total.sum()),
        "perfect_recon_rate": _ratio(counts["n_perfect"], counts["n_grids"]),
        "per_color_accuracy": per_colour,
        "balanced_accuracy": balanced,
        "object_accuracy": _ratio(diag[obj_mask].sum(), per_colour_total[obj_mask].sum()),
        "n_grids": counts["n_grids"],
    }
    return {k: _out(v) for k, v in out.items()}


def _check_background(background):
    if background is None:
        return None
    if isinstance(background, bool) or not isinstance(background, (int, np.integer)) \
            or not 0 <= int(background) <= 9:
        raise ValueError(f"background must be a colour 0-9 or None, got {background!r}")
    return int(background)


def reconstruction_metrics(pred, target, *, background: int | None = 0,
                           pad_token: int | None = None) -> dict:
    """Reconstruction metrics of a batch of grids (seed 002).

    Over valid cells (all cells when ``pad_token=None``), summed over the batch:

    * ``pixel_accuracy`` = correct cells / cells;
    * ``perfect_recon_rate`` = grids whose valid cells are all correct / grids with a
      valid cell;
    * ``per_color_accuracy``: tensor of 10; for colour c, cells with target c
      predicted c / cells with target c (NaN for a colour absent from the target);
    * ``balanced_accuracy`` = mean of ``per_color_accuracy`` over present colours;
    * ``object_accuracy`` = correct cells / cells, over cells whose target is not
      ``background`` (None: every colour counts as object);
    * ``n_grids``: grids with a valid cell.

    A predicted value that is neither a colour nor padding is simply wrong. A valid
    target cell outside 0-9 raises ValueError.

    >>> import torch
    >>> m = reconstruction_metrics(torch.tensor([[[0, 1], [1, 1]]]), torch.tensor([[[0, 1], [2, 1]]]))
    >>> float(m["pixel_accuracy"]), float(m["balanced_accuracy"])
    (0.75, 0.6666666865348816)
    """
    background = _check_background(background)
    pad_token = check_pad_token(pad_token)
    device = _first_device(pred, target)
    pred = _as_tensor(pred, "pred", device)
    target = _as_tensor(target, "target", device)
    _check_batch(target, "target")
    _check_same_shape(pred, target, "pred", "target")
    counts = _reconstruction_update(pred, target, pad_token=pad_token)
    return _reconstruction_compute(counts, background=background)


def color_confusion(pred, target, *, pad_token: int | None = None):
    """Confusion counts of colours over valid cells: rows = true colour 0-9,
    columns = predicted colour 0-9, plus an 11th column (index 10) counting cells
    predicted as padding when ``pad_token`` is given. Returns an int64 tensor
    ``[10, 10]`` (``pad_token=None``) or ``[10, 11]`` on the input's device.

    Accepts a single grid ``[H, W]`` or a batch of any shape. Raises ValueError for a
    valid target cell outside 0-9 or a prediction that is neither a colour nor the
    pad token.

    >>> import torch
    >>> color_confusion(torch.tensor([[0, 1]]), torch.tensor([[0, 2]]))[2, 1].item()
    1
    """
    pad_token = check_pad_token(pad_token)
    device = _first_device(pred, target)
    pred = _as_tensor(pred, "pred", device)
    target = _as_tensor(target, "target", device)
    _check_same_shape(pred, target, "pred", "target")
    conf = _confusion_counts(pred, target, pad_token)
    if bool(conf[:, 11].sum() > 0):
        raise ValueError(
            "pred holds a value that is neither a colour 0-9 nor pad_token "
            f"(pad_token={pad_token}); pass the pad token your model predicts"
        )
    if pad_token is None:
        return conf[:, :_N_COLORS].contiguous()
    return conf[:, :_N_COLORS + 1].contiguous()


# --------------------------------------------------------------------------- #
# latent diagnostics
# --------------------------------------------------------------------------- #
def _latent_update(mu, logvar) -> dict:
    """Sums over samples for :func:`latent_diagnostics` (per dimension)."""
    torch = _torch()
    fdt = _float_dtype(mu.device)
    mu = mu.to(fdt)
    logvar = logvar.to(fdt)
    var = logvar.exp()
    kl = -0.5 * (1 + logvar - mu.pow(2) - var)
    return {"n": torch.tensor(mu.shape[0], device=mu.device), "sum_kl": kl.sum(0),
            "sum_mu": mu.sum(0), "sum_mu2": mu.pow(2).sum(0), "sum_var": var.sum(0)}


def _latent_compute(counts, *, active_threshold=ACTIVE_DIM_THRESHOLD) -> dict:
    torch = _torch()
    n = counts["n"]
    kl_per_dim = _ratio(counts["sum_kl"], n.expand_as(counts["sum_kl"]))
    mean_mu = _ratio(counts["sum_mu"], n.expand_as(counts["sum_mu"]))
    var_mu = (_ratio(counts["sum_mu2"], n.expand_as(counts["sum_mu2"])) - mean_mu ** 2).clamp_min(0)
    mean_var = _ratio(counts["sum_var"], n.expand_as(counts["sum_var"]))
    active = var_mu > active_threshold
    out = {
        "kl_per_dim": kl_per_dim,
        "mean_kl_per_dim": kl_per_dim.mean(),
        "kl_total": kl_per_dim.sum(),
        "n_active_dims": torch.where(n > 0, active.sum().to(kl_per_dim.dtype),
                                     torch.full_like(kl_per_dim.sum(), math.nan)),
        "n_dims": torch.tensor(float(kl_per_dim.shape[0]), device=kl_per_dim.device),
        "latent_std": torch.sqrt(var_mu + mean_var).mean(),
        "mu_variance_per_dim": var_mu,
    }
    return {k: _out(v) for k, v in out.items()}


def latent_diagnostics(mu, logvar, *, active_threshold: float = ACTIVE_DIM_THRESHOLD) -> dict:
    """Diagnostics of a diagonal-Gaussian latent space (seed 002's report).

    ``mu`` and ``logvar``: ``[N, D]`` posterior means and log-variances.

    * ``kl_per_dim`` (tensor of D) = mean over samples of
      ``-0.5 * (1 + logvar - mu**2 - exp(logvar))``, the KL to N(0, 1) of each dimension;
    * ``mean_kl_per_dim`` = mean of ``kl_per_dim`` (seed 002's "mean KL divergence",
      collapse below about 0.05); ``kl_total`` = its sum (KL per sample);
    * ``mu_variance_per_dim`` = variance over samples of ``mu`` (population, /N);
    * ``n_active_dims`` = dimensions with ``mu_variance_per_dim > active_threshold``
      (default 0.01, the activity criterion of Burda et al. 2016); ``n_dims`` = D;
    * ``latent_std`` = mean over dimensions of the aggregate posterior standard
      deviation ``sqrt(Var(mu) + mean(exp(logvar)))`` (about 1 when the aggregate
      posterior matches N(0, 1)).

    NaN when ``N == 0``.

    >>> import torch
    >>> m = latent_diagnostics(torch.zeros(4, 3), torch.zeros(4, 3))
    >>> float(m["mean_kl_per_dim"]), float(m["n_active_dims"]), float(m["latent_std"])
    (0.0, 0.0, 1.0)
    """
    torch = _torch()
    device = _first_device(mu, logvar)
    mu = _as_tensor(mu, "mu", device, integer=False).to(_float_dtype(device))
    logvar = _as_tensor(logvar, "logvar", device, integer=False).to(_float_dtype(device))
    if mu.dim() != 2:
        raise ValueError(f"mu has shape {tuple(mu.shape)}; expected [N, D]")
    _check_same_shape(mu, logvar, "mu", "logvar")
    del torch
    return _latent_compute(_latent_update(mu, logvar), active_threshold=active_threshold)


# --------------------------------------------------------------------------- #
# token accuracy
# --------------------------------------------------------------------------- #
_REQUIRED = object()


def _token_prepare(logits_or_pred, target, ignore_index):
    torch = _torch()
    if ignore_index is not None and (isinstance(ignore_index, bool)
                                     or not isinstance(ignore_index, (int, np.integer))):
        raise ValueError(f"ignore_index must be an int or None, got {ignore_index!r}")
    device = _first_device(logits_or_pred, target)
    target = _as_tensor(target, "target", device)
    x = _as_tensor(logits_or_pred, "logits_or_pred", device, integer=False)
    if x.dim() == target.dim() + 1 and tuple(x.shape[:-1]) == tuple(target.shape):
        if not x.is_floating_point():
            raise ValueError("logits_or_pred has one more dimension than target but is not "
                             "floating point; expected logits [..., V]")
        pred = x.argmax(-1)
    elif tuple(x.shape) == tuple(target.shape):
        if x.is_floating_point() or x.dtype == torch.bool or x.is_complex():
            raise ValueError(
                "logits_or_pred has the shape of target but is not integer: pass "
                "predictions as integers, or logits with a last class dimension"
            )
        pred = x
    else:
        raise ValueError(
            f"logits_or_pred has shape {tuple(x.shape)}; expected {tuple(target.shape)} "
            f"(predictions) or {tuple(target.shape)} + (V,) (logits)"
        )
    return pred, target


def _token_update(pred, target, *, ignore_index) -> dict:
    """Counts for :func:`token_accuracy`: valid tokens, correct valid tokens, and
    sequences (first dimension) with a valid token / with all valid tokens correct."""
    torch = _torch()
    eq = pred == target
    v = torch.ones_like(eq) if ignore_index is None else target != ignore_index
    out = {"n_tokens": v.sum(), "n_correct": (eq & v).sum()}
    if target.dim() >= 2 and target.shape[0] > 0:
        B = target.shape[0]
        s_valid = v.reshape(B, -1).sum(-1)
        s_wrong = (v > eq).reshape(B, -1).sum(-1)
        out["n_sequences"] = (s_valid > 0).sum()
        out["n_sequences_correct"] = ((s_valid > 0) & (s_wrong == 0)).sum()
    else:
        z = torch.zeros((), dtype=torch.int64, device=target.device)
        out["n_sequences"] = z
        out["n_sequences_correct"] = z.clone()
    return out


def _token_compute(counts) -> dict:
    out = {
        "token_accuracy": _ratio(counts["n_correct"], counts["n_tokens"]),
        "sequence_accuracy": _ratio(counts["n_sequences_correct"], counts["n_sequences"]),
        "n_tokens": counts["n_tokens"],
    }
    return {k: _out(v) for k, v in out.items()}


def token_accuracy(logits_or_pred, target, *, ignore_index=_REQUIRED) -> dict:
    """Token accuracy with an explicit ignore index (seed 004, corrected).

    ``ignore_index`` is required (pass ``None`` to count every position); it is never
    guessed from the data: seed 004's rule "targets <= 10 mean 0 is padding" drops
    every real 0 (black in ARC). ``logits_or_pred`` is either logits with a last class
    dimension (``target.shape + (V,)``, floating point; argmax over the last
    dimension) or integer predictions of the target's shape.

    * ``token_accuracy`` = |pred == target & target != ignore_index| /
      |target != ignore_index| (NaN when nothing is valid, never 0);
    * ``sequence_accuracy`` = sequences (first dimension) whose valid tokens are all
      correct / sequences with a valid token (NaN for a 1-D target);
    * ``n_tokens``: valid tokens.

    >>> import torch
    >>> float(token_accuracy(torch.tensor([[0, 3, 0]]), torch.tensor([[0, 3, -100]]),
    ...                      ignore_index=-100)["token_accuracy"])
    1.0
    """
    if ignore_index is _REQUIRED:
        raise TypeError("token_accuracy() needs ignore_index= (an int, or None for no "
                        "ignored positions); it is never guessed from the data")
    pred, target = _token_prepare(logits_or_pred, target, ignore_index)
    return _token_compute(_token_update(pred, target, ignore_index=ignore_index))
