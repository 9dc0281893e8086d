"""Grid family: :func:`grid_metrics`, its options, its counts and its ratios.

``grid_update`` turns one batch into named counts (sums): it checks the options,
reshapes the batch to ``[B, R, W]``, hands it to one of the two kernels
(:mod:`arcnb.metrics.grid_numpy` on the CPU, :mod:`arcnb.metrics.grid_torch`
elsewhere; their contract is in :mod:`arcnb.metrics.grid_kernel`) and derives the
remaining counts from theirs. ``grid_compute`` turns counts into ratios.
:func:`grid_metrics` is ``compute(update(batch))``;
:class:`arcnb.metrics.streaming.GridMetrics` adds the counts over batches first.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import ParameterError
from ..grids import check_pad_token
from ._tensors import (_as_tensor, _check_batch, _check_same_shape, _constant, _first_device,
                       _float_dtype, _torch)
from .grid_kernel import CELL_KEYS, CHANGE_KEYS
from .grid_numpy import count_numpy
from .grid_torch import Layout
from .grid_torch import count_vector as torch_count_vector

#: ``convention=`` values of :func:`grid_metrics`.
CONVENTIONS = ("arcnb", "reference")
DEFAULT_TOLERANCES = (0.90, 0.95, 0.99)
DEFAULT_WEIGHTS = (0.0, 0.8, 0.2)

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


def tolerance_name(tol: float) -> str:
    """Key of a tolerance accuracy: ``0.95 -> "grid_tol_0p95"``, ``0.999 -> "grid_tol_0p999"``."""
    s = f"{tol:.2f}"
    if float(s) != float(tol):
        s = repr(float(tol))
    return "grid_tol_" + s.replace(".", "p")


def check_tolerances(tolerances) -> tuple[float, ...]:
    """The tolerances as floats, each in [0, 1] and with distinct names."""
    tols = tuple(float(t) for t in tolerances)
    for t in tols:
        if not (0.0 <= t <= 1.0):
            raise ParameterError(f"tolerance {t} is not in [0, 1]")
    if len({tolerance_name(t) for t in tols}) != len(tols):
        raise ParameterError(f"duplicate tolerances {tols}")
    return tols


def check_convention(convention: str) -> str:
    """``convention``, refused unless it is one of ``CONVENTIONS``."""
    if convention not in CONVENTIONS:
        raise ParameterError(f"convention must be one of {CONVENTIONS}, got {convention!r}")
    return convention


def check_weights(weights) -> tuple[float, float, float]:
    """The three weights ``(w_cell, w_tol, w_exact)`` as floats."""
    w = tuple(float(x) for x in weights)
    if len(w) != 3:
        raise ParameterError("weights must be (w_cell, w_tol, w_exact)")
    return w


def tolerances_for_update(tolerances) -> tuple[float, ...]:
    """Tolerances to count: the requested ones plus 0.95 (dense grid objective)."""
    tols = check_tolerances(tolerances)
    if tolerance_name(0.95) not in {tolerance_name(t) for t in tols}:
        tols = tols + (0.95,)
    return tols


def grid_count_names(tols: Sequence[float], with_source: bool, reference: bool) -> list[str]:
    """The names of the counts :func:`grid_update` returns for these options."""
    names = ["n_total", "n_grids", "n_correct", "n_exact", "n_valid", "n_valid_correct",
             "n_rows", "n_rows_correct", "n_cols", "n_cols_correct"]
    names += ["n_" + tolerance_name(t) for t in tols]
    if with_source:
        names += ["n_tgt_change", "n_pred_change", "n_both_change", "n_change_correct"]
        if reference:
            names += ["sum_ref_copy_rate", "sum_ref_recall", "sum_ref_precision", "sum_ref_f1"]
    return names



def _use_numpy(device, backend: str | None) -> bool:
    """Whether the numpy kernel counts: on the CPU, eagerly (``torch.compile`` traces
    the torch kernel), unless ``backend`` ("torch" / "numpy") says otherwise."""
    if backend is not None:
        return backend == "numpy"
    return device.type == "cpu" and not _torch().compiler.is_compiling()


def count_vector(pred, target, source=None, *, pad_token: int | None = 10,
                 tolerances: Sequence[float] = DEFAULT_TOLERANCES,
                 reference: bool = False, _backend: str | None = None):
    """``(vector, layout)``: one batch's counts as a float64 vector on the input's
    device and its :class:`arcnb.metrics.grid_torch.Layout` (how the counts of
    :func:`grid_update` follow from it, linearly). The numpy kernel's vector holds
    the counts themselves; the torch kernel's, the sums its pass makes."""
    torch = _torch()
    tols = tolerances_for_update(tolerances)
    device = target.device
    with_source = source is not None
    B = target.shape[0]
    names = grid_count_names(tols, with_source, reference)
    if B == 0 or target.numel() == 0:
        vec = torch.zeros(len(names), dtype=_float_dtype(device), device=device)
        vec[0] = B  # n_total
        return vec, _identity_layout(tuple(names))
    columns = target.dim() != 2
    # [B, L]: one row per grid, no columns counted; [B, ..., H, W]: extra dims fold
    # into rows ([B, H, W] and, for the torch kernel, [B, L] are used as they are)
    numpy_kernel = _use_numpy(device, _backend)
    if target.dim() > 3 or (numpy_kernel and not columns):
        shp3 = (B, -1, target.shape[-1]) if columns else (B, 1, target.shape[1])
        pred, target = pred.reshape(shp3), target.reshape(shp3)
        source = source.reshape(shp3) if with_source else None
    opts = dict(pad_token=pad_token, tols=tols, columns=columns, reference=reference)
    if not numpy_kernel:
        vec, lay, _ = torch_count_vector(pred, target, source, **opts)
        return vec, lay
    raw = count_numpy(pred.numpy(), target.numpy(),  # zero-copy views
                      source.numpy() if with_source else None,
                      threads=torch.get_num_threads(), **opts)
    values = _numpy_counts(raw, tols, target.shape[1] * target.shape[2], B)
    vec = torch.tensor([float(values[n]) for n in names], dtype=torch.float64)
    return vec, _identity_layout(tuple(names))


def _identity_layout(names: tuple) -> Layout:
    """The layout of a vector holding the counts ``names`` themselves (one object per
    names; plain dicts as caches: ``torch.compile`` traces them without a warning)."""
    lay = _IDENTITY.get(names)
    if lay is None:
        lay = _IDENTITY[names] = Layout(names, tuple((n, ((n, 1.0),)) for n in names))
    return lay


_IDENTITY: dict = {}
_RATIO_CONSTANTS: dict = {}


def grid_update(pred, target, source=None, *, pad_token: int | None = 10,
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
    Counts are 0-dim int64 tensors, the ``sum_*`` float64.

    Inputs are tensors of the same shape on one device (the public functions
    convert and check). The cells are counted by a kernel
    (:mod:`arcnb.metrics.grid_kernel`): the numpy kernel on zero-copy views of CPU
    tensors, on ``torch.get_num_threads()`` threads; the torch kernel on any other
    device and under ``torch.compile`` (``_backend`` forces one: "torch" or "numpy").
    """
    torch = _torch()
    tols = tolerances_for_update(tolerances)
    names = grid_count_names(tols, source is not None, reference)
    vec, lay = count_vector(pred, target, source, pad_token=pad_token, tolerances=tols,
                            reference=reference, _backend=_backend)
    A = _constant(lay.matrix(tuple(_layout_names(names, lay))), vec.dtype, vec.device,
                  ("counts", lay, tuple(names)))
    c = A @ vec
    ints = c.round().to(torch.int64).unbind()
    floats = c.unbind()
    return {n: (floats[i] if n.startswith("sum_") else ints[i]) for i, n in enumerate(names)}


def _layout_names(names, lay: Layout) -> list:
    """Count names as ``lay`` names them (the torch kernel's ``n_grid_tol_0p95`` is
    ``n_tol_<i>``, ``i`` the tolerance's place in ``lay.tols``)."""
    index = {"n_" + tolerance_name(t): f"n_tol_{i}" for i, t in enumerate(lay.tols)}
    return [index.get(n, n) for n in names]


def _numpy_counts(raw: Mapping[str, Any], tols, cells: int, n_total: int) -> dict:
    """The counts of :func:`grid_update` (Python numbers) from the numpy kernel's
    counts ``raw``, deriving the counts the kernels leave out."""
    acc = {key: int(raw[key]) for key in CELL_KEYS}
    acc["n_total"] = n_total
    acc["n_valid_correct"] = acc["n_valid"] - acc["n_wrong"]
    for k, tl in enumerate(tols):
        acc["n_" + tolerance_name(tl)] = int(raw["n_tol"][k])
    if "n_tgt_change" not in raw:
        return acc
    n_tc, n_both, n_cc = (int(raw[k]) for k in CHANGE_KEYS)
    acc["n_tgt_change"], acc["n_both_change"], acc["n_change_correct"] = n_tc, n_both, n_cc
    # valid cells with pred != src: where tgt != src, the n_both cells; where
    # tgt == src, exactly the wrong cells, n_wrong - (n_tc - n_cc) of them
    acc["n_pred_change"] = n_both + acc["n_wrong"] - n_tc + n_cc
    if "ref_per_grid" in raw:
        # the reference code: per grid, over every cell (padding included)
        tc_g, pc_g, both_g = np.asarray(raw["ref_per_grid"], dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            rec = np.where(tc_g > 0, both_g / np.maximum(tc_g, 1), 1.0)
            prec = np.where(pc_g > 0, both_g / np.maximum(pc_g, 1), 1.0)
        f1 = 2.0 * prec * rec / (prec + rec + 1e-8)
        acc["sum_ref_copy_rate"] = float(((cells - pc_g) / cells).sum())
        acc["sum_ref_recall"] = float(rec.sum())
        acc["sum_ref_precision"] = float(prec.sum())
        acc["sum_ref_f1"] = float(f1.sum())
    return acc


def _metric_terms(names: tuple, tols: tuple, weights: tuple, convention: str) -> tuple:
    """``(metric, ((weight, numerator, denominator), ...))`` for every metric of
    :func:`grid_metrics`, in the order of its result; a numerator or denominator is a
    count name (None: the number 1) and a metric is the sum of its terms'
    ``weight * numerator / denominator`` (up to three)."""
    ref = convention == "reference"
    grids = "n_total" if ref else "n_grids"
    out = [("grid_accuracy", ((1.0, "n_correct", grids),)),
           ("exact_match", ((1.0, "n_exact", grids),)),
           ("cell_accuracy", ((1.0, "n_valid_correct", "n_valid"),))]
    out += [(tolerance_name(t), ((1.0, "n_" + tolerance_name(t), grids),)) for t in tols]
    out += [("row_all_correct_rate", ((1.0, "n_rows_correct", "n_rows"),)),
            ("col_all_correct_rate", ((1.0, "n_cols_correct", "n_cols"),))]
    # a zero weight drops its term (0 * NaN would poison the sum)
    dense = [(w, num, den) for w, (num, den) in zip(
        weights, (("n_valid_correct", "n_valid"), ("n_" + tolerance_name(0.95), grids),
                  ("n_correct", grids))) if w != 0.0]
    out += [("dense_grid_objective", tuple(dense) or ((0.0, None, None),)),
            ("n_grids", ((1.0, grids, None),))]
    if "n_tgt_change" in names:
        if ref:
            n = "n_total"
            out += [("change_recall", ((1.0, "sum_ref_recall", n),)),
                    ("change_precision", ((1.0, "sum_ref_precision", n),)),
                    ("transformation_f1", ((1.0, "sum_ref_f1", n),)),
                    ("copy_rate", ((1.0, "sum_ref_copy_rate", n),))]
        else:
            # F1 = 2PR / (P + R) = 2 both / (pred changes + target changes); NaN where
            # P or R is (the two zero-weight terms carry their NaN)
            out += [("change_recall", ((1.0, "n_both_change", "n_tgt_change"),)),
                    ("change_precision", ((1.0, "n_both_change", "n_pred_change"),)),
                    ("transformation_f1", ((2.0, "n_both_change",
                                            ("n_pred_change", "n_tgt_change")),
                                           (0.0, "n_both_change", "n_tgt_change"),
                                           (0.0, "n_both_change", "n_pred_change"))),
                    ("copy_rate", ((1.0, ("n_valid", "-n_pred_change"), "n_valid"),))]
        # no counterpart in the reference code: pooled over valid cells in both
        out.append(("change_accuracy", ((1.0, "n_change_correct", "n_tgt_change"),)))
    return tuple(out)


def _combo(spec, names: tuple) -> list:
    """The coefficients over ``names`` of a count name, a tuple of them (a sum; a
    leading ``-`` subtracts) or None (zero)."""
    row = [0.0] * len(names)
    for item in (() if spec is None else (spec,) if isinstance(spec, str) else spec):
        sign = -1.0 if item.startswith("-") else 1.0
        row[names.index(item.lstrip("-"))] += sign
    return row


def _ratio_constants(lay: Layout, tols: tuple, weights: tuple, convention: str):
    """:func:`_build_ratio_constants`, made once per options."""
    key = (lay, tols, weights, convention)
    out = _RATIO_CONSTANTS.get(key)
    if out is None:
        out = _RATIO_CONSTANTS[key] = _build_ratio_constants(*key)
    return out


def _build_ratio_constants(lay: Layout, tols: tuple, weights: tuple, convention: str):
    """``(metrics, matrix, bias)``: numerators then denominators of every term of every
    metric (``[2 * 3 * n]`` rows, term-major) as a linear map of the raw vector of
    ``lay`` plus ``bias`` (a denominator of 1, a numerator of 0 for a missing term)."""
    names = tuple(n for n, _ in lay.counts)
    change = "n_tgt_change" in names
    count_names = grid_count_names(tolerances_for_update(tols), change,
                                   "sum_ref_recall" in names)
    terms = _metric_terms(tuple(count_names), tols, weights, convention)
    n = len(terms)
    cn = tuple(count_names)
    A = lay.matrix(tuple(_layout_names(cn, lay)))   # counts from the raw vector
    num_rows, den_rows = [], []
    bias_num, bias_den = [], []
    for k in range(3):
        for _, ts in terms:
            w, num, den = ts[k] if k < len(ts) else (0.0, None, None)
            num_rows.append([w * x for x in _combo(num, cn)])
            bias_num.append(0.0)
            den_rows.append(_combo(den, cn))
            bias_den.append(1.0 if den is None else 0.0)
    rows = num_rows + den_rows
    width = len(lay.rows)
    mat = tuple(tuple(sum(r[i] * A[i][j] for i in range(len(cn)) if r[i]) for j in range(width))
                for r in rows)
    return tuple(m for m, _ in terms), mat, tuple(bias_num + bias_den), n


def _ratios(vec, lay: Layout, tols, weights, convention) -> dict:
    """Every metric of :func:`grid_metrics` from a raw count vector: one affine map
    gives every numerator and denominator, one division the ratios (NaN where a
    denominator is 0: a numerator never exceeds its denominator), one sum the
    metrics (float32)."""
    torch = _torch()
    metrics, mat, bias, n = _ratio_constants(lay, tuple(tols), tuple(weights), convention)
    key = ("ratios", lay, tuple(tols), tuple(weights), convention)
    M = _constant(mat, vec.dtype, vec.device, key + ("M",))
    b = _constant(bias, vec.dtype, vec.device, key + ("bias",))
    num, den = torch.addmv(b, M, vec).view(2, 3, n).unbind()
    out = (num / den).sum(0, dtype=torch.float32)
    return dict(zip(metrics, out.unbind()))


def grid_compute(counts: Mapping[str, Any], *, tolerances=DEFAULT_TOLERANCES,
                 weights=DEFAULT_WEIGHTS, convention: str = "arcnb") -> dict:
    """Ratios of :func:`grid_metrics` from the counts of :func:`grid_update` (summed
    over batches by the streaming class)."""
    torch = _torch()
    convention = check_convention(convention)
    tols = check_tolerances(tolerances)
    weights = check_weights(weights)
    change = "n_tgt_change" in counts
    if change and convention == "reference" and "sum_ref_recall" not in counts:
        raise ParameterError("counts lack the reference change sums (update with reference=True)")
    names = [n for n in counts]
    fdt = _float_dtype(torch.as_tensor(counts[names[0]]).device)
    vec = torch.stack([torch.as_tensor(counts[n]).to(fdt) for n in names])
    # the counts name every tolerance they hold; the requested ones must be among them
    missing = {"n_" + tolerance_name(t) for t in tolerances_for_update(tols)} - set(names)
    if missing:
        raise ParameterError(f"counts lack {sorted(missing)} (update with those tolerances)")
    return _ratios(vec, _identity_layout(tuple(names)), tols, weights, convention)


def prepare_grid_inputs(pred, target, source, pad_token):
    """``(pred, target, source, pad_token)`` checked, as tensors on one device."""
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
    """Grid, cell and (given ``source``) change metrics of a padded batch.

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
    batch: ``change_recall`` = ``|pred!=src & tgt!=src| / |tgt!=src|``;
    ``change_precision`` = ``|pred!=src & tgt!=src| / |pred!=src|``;
    ``transformation_f1`` = 2PR/(P+R) (0 when both are 0); ``copy_rate`` =
    ``|pred==src| / |valid|``; ``change_accuracy`` =
    ``|pred==tgt & tgt!=src| / |tgt!=src|``.

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
    tolerances = check_tolerances(tolerances)
    convention = check_convention(convention)
    weights = check_weights(weights)
    pred, target, source, pad_token = prepare_grid_inputs(pred, target, source, pad_token)
    vec, lay = count_vector(pred, target, source, pad_token=pad_token, tolerances=tolerances,
                            reference=convention == "reference")
    return _ratios(vec, lay, tolerances, weights, convention)



def compiled(fn=None, **compile_options):
    """``torch.compile(fn, fullgraph=True, **compile_options)`` of a metric function
    (default :func:`grid_metrics`): the whole call as one compiled graph, for a
    training loop that logs metrics every step.

    ``grid_metrics`` compiles without a graph break on any device (its torch kernel
    has no data-dependent Python branch and never waits for the device); the first
    call compiles (tens of seconds), the first with another batch or grid size once
    more (then the sizes are dynamic), later calls run the compiled kernels. Use it
    where eager ``grid_metrics`` shows in a profile::

        metrics = arcnb.metrics.compiled()            # once
        ...
        self.log_dict(metrics(pred, target, source=inputs))   # every step

    The results are those of ``grid_metrics`` (the tests compare the two)."""
    torch = _torch()
    return torch.compile(grid_metrics if fn is None else fn, fullgraph=True,
                         **compile_options)
