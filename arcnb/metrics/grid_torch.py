"""The torch kernel of the grid family: one pass of torch operations on the input's device.

Implements the contract of :mod:`arcnb.metrics.grid_kernel` on torch tensors of any
integer dtype (read as they are) and any device; nothing leaves the device and no
operation waits for it. :func:`arcnb.metrics.grid.grid_update` uses it for every
device but the CPU, and on the CPU under ``torch.compile`` (it has no graph break:
no ``.item()``, no data-dependent Python branch, no bool-to-integer ``view``).

How a batch becomes counts in about twenty operations whatever its size:

1. *Classes.* Every cell falls in one class of the four comparisons pred == tgt,
   tgt != pad (valid), tgt != src, pred != src: ``c1`` padding predicted wrong,
   ``c2`` / ``c3`` valid and right (target unchanged / changed), ``c4`` / ``c5`` /
   ``c6`` valid and wrong (target unchanged / changed and pred == src / changed and
   pred != src); without ``source`` only ``c1``, right and wrong. A padding cell
   predicted right is in no class. Five ``torch.where`` give each cell the value
   ``2 ** (F * k)`` of its class ``k`` (``F`` bits a field): one int64 holds six
   class counts side by side.
2. *Lines and grids.* One sum per row and one per column add those values: each field
   counts its class, and no field carries into the next (a grid has fewer than
   ``2 ** F`` cells). A line holds a valid cell when its sum reaches the first valid
   class's value, a wrong cell when it reaches the first wrong class's: one
   comparison with per-position thresholds counts both, rows and columns at once.
   The rows' sums add up to the grid's.
3. *Grids.* Two bit operations unpack a grid's class counts; one matrix product (its
   bias a 1 for every grid, which counts them) turns them into the per-grid quantities
   (valid cells, right valid cells, ...); one
   division gives each grid's accuracy (NaN for a grid without a valid cell) and one
   comparison with the thresholds (0 for "is a grid", 1 for "all right", the
   tolerances, 1 on another ratio for "exact") gives the per-grid flags.
4. One concatenation and one sum over the batch give the raw count vector; its
   layout (:class:`Layout`) says how the counts of the contract follow from it (a
   linear map, applied by :func:`arcnb.metrics.grid` together with the ratios).

A field has 10 bits up to 1,023 cells a grid (30x30 is 900), 21 bits (three fields,
without ``source``) up to 2 ** 21 - 1 cells; larger grids take the *wide* path: a
one-hot of the class index summed per line (more memory, same results). Nothing
depends on the exact batch or grid size (only on those ranges), so under
``torch.compile`` new sizes need no new compilation once the sizes are dynamic.
Batches of more than :data:`arcnb.metrics.grid_kernel.TORCH_CHUNK_CELLS` cells are
counted in chunks whose count vectors are added (eagerly; compiled code fuses them).
"""
from __future__ import annotations

from dataclasses import dataclass

from . import grid_kernel as K
from ._tensors import _constant, _fits, _float_dtype, _torch

# a threshold no line sum reaches (sums stay below 2 ** 63 - 2 ** 62)
_NEVER = 1 << 62


@dataclass(frozen=True, eq=False)
class Layout:
    """What the rows of a raw count vector are.

    ``rows``: the names of the vector's entries, in order. ``counts``: for every count
    of the contract (``n_tol`` as ``n_tol_<i>``, the reference sums as
    ``sum_ref_*``) a tuple of ``(row name, coefficient)`` pairs: the count is that
    linear combination of the vector's entries. One object per layout (made once and
    kept), compared and hashed by identity: constants are cached under it."""

    rows: tuple
    counts: tuple  # ((count name, ((row, coef), ...)), ...)
    #: the tolerances ``n_tol_<i>`` counts, in order (empty: counts by their own names)
    tols: tuple = ()

    def matrix(self, names) -> tuple:
        """The matrix (tuple of rows) mapping the vector to the counts ``names``."""
        index = {r: i for i, r in enumerate(self.rows)}
        by_name = dict(self.counts)
        out = []
        for n in names:
            row = [0.0] * len(self.rows)
            for r, c in by_name[n]:
                row[index[r]] += c
            out.append(tuple(row))
        return tuple(out)


class _Spec:
    """The options of one call that fix the kernel's shapes and constants."""

    def __init__(self, target, source, *, pad_token, tols, columns, reference):
        # [B, H, W] grids, or [B, L] sequences (no rows or columns counted). The sizes
        # stay what torch gives (symbolic under torch.compile with dynamic shapes: no
        # int() of them, so a new size is no new compilation)
        self.B, self.H, self.W = ((target.shape[0], 1, target.shape[1])
                                  if target.dim() == 2 else tuple(target.shape))
        self.cells = self.H * self.W
        self.source = source is not None
        self.reference = bool(reference) and self.source
        self.columns = bool(columns)
        self.tols = tuple(float(t) for t in tols)
        self.has_pad = pad_token is not None and _fits(pad_token, target.dtype)
        self.pad_token = pad_token
        self.n_classes = 6 if self.source else 3
        # first wrong class: c4 with source, the third without
        self.first_wrong = 3 if self.source else 2
        # field width: 10 bits up to 1,023 cells a grid (30x30 is 900), 21 bits (three
        # fields only) up to 2 ** 21 - 1; beyond, the wide path
        self.bits = _field_bits(self.cells, self.n_classes)
        self.packed = self.bits is not None
        self.ref_bits = _field_bits(self.cells, 3)

    def key(self) -> tuple:
        """What the constants depend on (not the sizes)."""
        return (self.source, self.reference, self.columns, self.tols, self.bits, self.packed,
                self.first_wrong)


def _field_bits(cells, n_fields: int):
    """Bits a field for ``n_fields`` fields of counts up to ``cells`` in an int64, from
    two widths (a size range, not a size: no new compilation per size); None: too
    many cells."""
    for bits in (10, 21):
        if n_fields * bits <= 63 and cells < (1 << bits):
            return bits
    return None


# --------------------------------------------------------------------------- #
# the per-grid quantities, their thresholds and the raw vector's layout
# --------------------------------------------------------------------------- #
def _grid_rows(spec: _Spec) -> tuple:
    """``(name, {class: coef}, threshold)`` of each per-grid quantity ``D``: ``one`` (1
    for every grid), then ``gvc``, the numerator of every per-grid ratio
    ``D[1] / D[i]``; a grid's flag ``i`` is ``D[1] / D[i] >= threshold`` (NaN, never a
    flag, where ``D[i]`` is 0)."""
    inf = float("inf")
    if spec.source:
        right, valid = {1: 1, 2: 1}, {k: 1 for k in range(1, 6)}
    else:
        right, valid = {1: 1}, {1: 1, 2: 1}
    rows = [("one", {}, inf),                 # 1 a grid (the bias of the product)
            ("gvc", right, inf),              # valid and right cells
            ("gv", valid, 0.0),               # a flag: the grid has a valid cell
            ("gv_all", valid, 1.0)]           # every valid cell right
    rows += [(f"gv_t{i}", valid, t) for i, t in enumerate(spec.tols)]
    # right valid / (valid + padding predicted wrong) >= 1: pred == target everywhere
    rows.append(("gvx", {**valid, 0: 1}, 1.0))
    if spec.source:
        rows += [("tcv", {2: 1, 4: 1, 5: 1}, inf),   # valid, target changed
                 ("both", {2: 1, 5: 1}, inf),        # ... and pred != source
                 ("cc", {2: 1}, inf)]                # ... and pred == target
    return tuple(rows)


def _line_rows(spec: _Spec) -> tuple:
    return ("rows_valid", "rows_wrong", "cols_valid", "cols_wrong") if spec.columns else ()


_REF_ROWS = ("ref_rec", "ref_prec", "ref_f1", "ref_copy", "ref_tc", "ref_pc", "ref_both")


def layout(spec: _Spec) -> Layout:
    """The layout of the raw vector for these options (one object per options)."""
    lay = _LAYOUTS.get(spec.key())
    if lay is None:
        lay = _LAYOUTS[spec.key()] = _build_layout(spec)
    return lay


_LAYOUTS: dict = {}


def _build_layout(spec: _Spec) -> Layout:
    grid = [name for name, _, _ in _grid_rows(spec)]
    rows = tuple(grid) + tuple("flag_" + n for n in grid) + _line_rows(spec)
    if spec.reference:
        rows += _REF_ROWS
    c = {"n_total": (("one", 1.0),),
         "n_grids": (("flag_gv", 1.0),),
         "n_correct": (("flag_gv_all", 1.0),),
         "n_exact": (("flag_gvx", 1.0),),
         "n_valid": (("gv", 1.0),),
         "n_valid_correct": (("gvc", 1.0),),
         "n_wrong": (("gv", 1.0), ("gvc", -1.0))}
    if spec.columns:
        for ln in ("rows", "cols"):
            c[f"n_{ln}"] = ((f"{ln}_valid", 1.0),)
            c[f"n_{ln}_correct"] = ((f"{ln}_valid", 1.0), (f"{ln}_wrong", -1.0))
    else:
        for key in ("n_rows", "n_rows_correct", "n_cols", "n_cols_correct"):
            c[key] = ()
    for i in range(len(spec.tols)):
        c[f"n_tol_{i}"] = ((f"flag_gv_t{i}", 1.0),)
    if spec.source:
        c["n_tgt_change"] = (("tcv", 1.0),)
        c["n_both_change"] = (("both", 1.0),)
        c["n_change_correct"] = (("cc", 1.0),)
        # valid cells with pred != src: the changed ones pred moved (both), plus the
        # wrong cells where the target kept the source's value (wrong - (tcv - cc))
        c["n_pred_change"] = (("both", 1.0), ("gv", 1.0), ("gvc", -1.0), ("tcv", -1.0),
                              ("cc", 1.0))
    if spec.reference:
        c["sum_ref_recall"] = (("ref_rec", 1.0),)
        c["sum_ref_precision"] = (("ref_prec", 1.0),)
        c["sum_ref_f1"] = (("ref_f1", 1.0),)
        c["sum_ref_copy_rate"] = (("ref_copy", 1.0),)
    return Layout(rows, tuple(c.items()), spec.tols)


def _grid_constants(spec: _Spec, device):
    """``M`` (per-grid quantities from class counts, float64 ``[k, C]``), its bias (``[k,
    1]``: 1 in row ``one``), the flag thresholds (``[k, 1]``) and the field shifts
    (``[C, 1]``)."""
    rows = _grid_rows(spec)
    m = tuple(tuple(float(coefs.get(k, 0)) for k in range(spec.n_classes))
              for _, coefs, _ in rows)
    bias = tuple((1.0 if name == "one" else 0.0,) for name, _, _ in rows)
    thr = tuple((t,) for _, _, t in rows)
    torch = _torch()
    key = ("grid",) + spec.key()
    fdt = _float_dtype(device)  # float64 (exact counts) but on mps, which lacks it
    M = _constant(m, fdt, device, key + ("M",))
    T = _constant(thr, fdt, device, key + ("thr",))
    bias = _constant(bias, fdt, device, key + ("bias",))
    S = (_constant(tuple((spec.bits * k,) for k in range(spec.n_classes)), torch.int64,
                   device, key + ("shift",)) if spec.packed else None)
    return M, bias, T, S


def _line_thresholds(spec: _Spec, device):
    """``[4, 1, H + W]`` int64 thresholds on the row sums then the column sums (packed
    path): rows holding a valid cell, a wrong cell, then columns."""
    torch = _torch()
    F = spec.bits
    valid, wrong = 1 << F, 1 << (F * spec.first_wrong)
    on_rows = ((valid,), (wrong,), (_NEVER,), (_NEVER,))
    on_cols = ((_NEVER,), (_NEVER,), (valid,), (wrong,))
    if torch.compiler.is_compiling():  # any H and W: no new compilation per size
        r, c = (_constant(tuple((x,) for x in v), torch.int64, device, None)
                for v in (on_rows, on_cols))
        return torch.cat([r.expand(4, 1, spec.H), c.expand(4, 1, spec.W)], -1)
    data = tuple(((v[0],) * spec.H + (w[0],) * spec.W,) for v, w in zip(on_rows, on_cols))
    return _constant(data, torch.int64, device, ("lines", spec.H, spec.W) + spec.key())


# --------------------------------------------------------------------------- #
# the pass
# --------------------------------------------------------------------------- #
def _class_tree(spec: _Spec, ne, v, tc, pc, values):
    """Each cell's value ``values[k]`` for its class ``k`` (``values[0]`` must be 1:
    padding predicted wrong takes the value of ``ne``; padding predicted right 0).
    The values are cached 0-dim int64 tensors on the device (a Python number in
    ``torch.where`` costs an operation making it a tensor, on every call)."""
    torch = _torch()
    leaves = [_constant(x, torch.int64, ne.device, ("leaf", x)) for x in values]
    if spec.source:
        x = torch.where(tc, torch.where(ne, torch.where(pc, leaves[5], leaves[4]), leaves[2]),
                        torch.where(ne, leaves[3], leaves[1]))
    else:
        x = torch.where(ne, leaves[2], leaves[1])
    return torch.where(v, x, ne) if v is not None else x


def _flags(spec: _Spec, pred, target, source):
    """The four comparisons (``v`` None when every cell is valid)."""
    ne = pred != target
    v = (target != spec.pad_token) if spec.has_pad else None
    tc = pc = None
    if spec.source:
        tc = target != source
        pc = pred != source
    return ne, v, tc, pc


def _packed_counts(spec: _Spec, ne, v, tc, pc):
    """Packed path: class counts per grid ``U`` ``[C, B]`` and line counts ``[n, B]``."""
    torch = _torch()
    F = spec.bits
    val = _class_tree(spec, ne, v, tc, pc, [1 << (F * k) for k in range(spec.n_classes)])
    line_counts = None
    if spec.columns:
        rows = val.sum(-1)                                # [B, H]
        grid = rows.sum(-1)                               # [B]
        lines = torch.cat([rows, val.sum(-2)], -1)        # [B, H + W]
        line_counts = (lines >= _line_thresholds(spec, val.device)).sum(-1)   # [4, B]
    else:  # [B, L]: no lines
        grid = val.sum(-1)
    shift = _grid_constants(spec, val.device)[3]
    classes = (grid >> shift) & ((1 << F) - 1)            # [C, B]
    return classes, line_counts


def _wide_counts(spec: _Spec, ne, v, tc, pc):
    """Wide path (grids of ``2 ** F`` cells or more): the same counts from a one-hot of
    each cell's class index."""
    torch = _torch()
    C = spec.n_classes
    k = _class_tree(spec, ne, v, tc, pc, list(range(1, C + 1)))   # 0: no class
    idx = torch.arange(1, C + 1, device=k.device).view((C,) + (1,) * k.dim())
    onehot = k == idx                                     # [C, B, H, W] or [C, B, L]
    rows = onehot.sum(-1)                                 # [C, B, H] or [C, B]
    classes = rows.sum(-1) if spec.columns else rows      # [C, B]
    parts = []
    if spec.columns:
        for lines in (rows, onehot.sum(-2)):
            parts += [(lines[1:].sum(0) > 0).sum(-1),
                      (lines[spec.first_wrong:].sum(0) > 0).sum(-1)]
    return classes, (torch.stack(parts) if parts else None)


def _ref_counts(spec: _Spec, tc, pc):
    """``[tc, pc, both]`` per grid over every cell (the reference convention), ``[3, B]``:
    one packed sum, as for the classes."""
    torch = _torch()
    dims = tuple(range(1, tc.dim()))
    if spec.ref_bits is None:
        return torch.stack([tc.sum(dims), pc.sum(dims), (tc & pc).sum(dims)])
    F = spec.ref_bits
    one, two = (_constant(x, torch.int64, tc.device, ("leaf", x))
                for x in (1 + (1 << F) + (1 << 2 * F), 1 << F))
    val = torch.where(pc, torch.where(tc, one, two), tc)
    shift = _constant(((0,), (F,), (2 * F,)), torch.int64, val.device, ("ref", F))
    return (val.sum(dims) >> shift) & ((1 << F) - 1)


def _ref_rows(ref, cells):
    """Per grid: the reference code's recall, precision and F1 (1 for an empty
    denominator, F1 = 2PR / (P + R + 1e-8)), copy rate ((cells - pc) / cells), then tc,
    pc, both; ``[7, B]``."""
    torch = _torch()
    r = ref.to(_float_dtype(ref.device))
    rp = torch.nan_to_num(r[2] / r[:2], nan=1.0)          # both / tc, both / pc
    f1 = 2.0 * rp.prod(0) / (rp.sum(0) + 1e-8)
    copy = (cells - r[1]) / cells
    return torch.cat([rp, f1[None], copy[None], r])


def count_vector(pred, target, source=None, *, pad_token, tols, columns: bool,
                 reference: bool):
    """``(vector, layout, ref_per_grid)``: the raw count vector (float64 ``[K]``, float32
    on mps, on the
    input's device, exact integers but for the reference sums), its
    :class:`Layout`, and with ``reference`` the ``[3, B]`` per-grid counts of the
    contract (else None)."""
    torch = _torch()
    if not columns and target.dim() == 3:  # [B, 1, L] sequences as [B, L]
        pred, target = pred.flatten(1), target.flatten(1)
        source = None if source is None else source.flatten(1)
    spec = _Spec(target, source, pad_token=pad_token, tols=tols, columns=columns,
                 reference=reference)
    step = max(1, K.TORCH_CHUNK_CELLS // max(1, spec.cells))
    if torch.compiler.is_compiling() or spec.B <= step:  # compiled code fuses the pass
        vec, ref = _chunk_vector(spec, pred, target, source)
    else:  # a batch larger than the work buffers allow: chunks, their vectors added
        parts = [_chunk_vector(spec, pred[a:a + step], target[a:a + step],
                               None if source is None else source[a:a + step])
                 for a in range(0, spec.B, step)]
        vec = torch.stack([p[0] for p in parts]).sum(0)
        ref = torch.cat([p[1] for p in parts], 1) if spec.reference else None
    return vec, layout(spec), ref


def _chunk_vector(spec: _Spec, pred, target, source):
    torch = _torch()
    ne, v, tc, pc = _flags(spec, pred, target, source)
    counts = _packed_counts if spec.packed else _wide_counts
    classes, line_counts = counts(spec, ne, v, tc, pc)
    M, bias, thr, _ = _grid_constants(spec, target.device)
    per_grid = torch.addmm(bias, M, classes.to(M.dtype))  # [k, B]
    flags = per_grid[1] / per_grid >= thr                 # [k, B]
    parts = [per_grid, flags] + ([] if line_counts is None else [line_counts])
    ref = None
    if spec.reference:
        ref = _ref_counts(spec, tc, pc)
        parts.append(_ref_rows(ref, spec.cells))
    return torch.cat(parts).sum(1), ref


def count_torch(pred, target, source=None, *, pad_token, tols, columns: bool,
                reference: bool) -> dict:
    """Counts of one batch (contract: :mod:`arcnb.metrics.grid_kernel`) from torch
    tensors ``[B, R, W]`` on one device; the counts are 0-dim int64 tensors there."""
    torch = _torch()
    vec, lay, ref = count_vector(pred, target, source, pad_token=pad_token, tols=tols,
                                 columns=columns, reference=reference)
    names = list(K.CELL_KEYS) + [f"n_tol_{i}" for i in range(len(tols))]
    if source is not None:
        names += list(K.CHANGE_KEYS)
    A = _constant(lay.matrix(tuple(names)), vec.dtype, vec.device, ("contract", lay))
    vals = (A @ vec).round().to(torch.int64).unbind()
    out = dict(zip(names, vals))
    out["n_tol"] = [out.pop(f"n_tol_{i}") for i in range(len(tols))]
    if ref is not None:
        out["ref_per_grid"] = ref
    return out
