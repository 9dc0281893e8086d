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

from ..errors import ParameterError
from ..grids import check_pad_token
from ._tensors import (_as_tensor, _check_batch, _check_same_shape, _first_device,
                       _float_dtype, _out, _ratio, _torch)
from .grid_kernel import CELL_KEYS, CHANGE_KEYS
from .grid_numpy import count_numpy
from .grid_torch import count_torch

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

    Inputs are tensors of the same shape on one device (the public functions
    convert and check). The cells are counted by a kernel
    (:mod:`arcnb.metrics.grid_kernel`): the numpy kernel on zero-copy views of CPU
    tensors, on ``torch.get_num_threads()`` threads; the torch kernel on any other
    device (``_backend`` forces one: "torch" or "numpy").
    """
    torch = _torch()
    tols = tolerances_for_update(tolerances)
    device = target.device
    with_source = source is not None
    names = grid_count_names(tols, with_source, reference)
    fdt = _float_dtype(device)
    B = target.shape[0]
    if B == 0 or target.numel() == 0:
        acc = {n: torch.zeros((), dtype=fdt if n.startswith("sum_") else torch.int64,
                              device=device) for n in names}
        acc["n_total"] += B
        return acc
    columns = target.dim() != 2
    # [B, L]: one row per grid, no columns counted; [B, ..., H, W]: extra dims fold
    # into rows
    shp3 = (B, -1, target.shape[-1]) if columns else (B, 1, target.shape[1])
    pred, target = pred.reshape(shp3), target.reshape(shp3)
    source = source.reshape(shp3) if with_source else None
    opts = dict(pad_token=pad_token, tols=tols, columns=columns, reference=reference)
    use_numpy = (_backend == "numpy") if _backend is not None else device.type == "cpu"
    if use_numpy:
        raw = count_numpy(pred.numpy(), target.numpy(),  # zero-copy views
                          source.numpy() if with_source else None,
                          threads=torch.get_num_threads(), **opts)
    else:
        raw = count_torch(pred, target, source, **opts)
    acc = _kernel_counts(raw, tols, target.shape[1] * target.shape[2], B, device, fdt)
    return {n: acc[n] for n in names}


def _kernel_counts(raw: Mapping[str, Any], tols, cells: int, n_total: int, device,
                   fdt) -> dict:
    """The counts of :func:`grid_update` from a kernel's counts ``raw``, deriving the
    counts the kernels leave out: int64 (``sum_*``: ``fdt``) 0-dim tensors on
    ``device``, made without a host-device copy (a kernel's tensors are used as they
    are; a number becomes a filled tensor)."""
    torch = _torch()

    def count(x):
        if isinstance(x, torch.Tensor):
            return x.to(torch.int64)
        return torch.full((), int(x), dtype=torch.int64, device=device)

    acc = {key: count(raw[key]) for key in CELL_KEYS}
    acc["n_total"] = count(n_total)
    acc["n_valid_correct"] = acc["n_valid"] - acc["n_wrong"]
    for k, tl in enumerate(tols):
        acc["n_" + tolerance_name(tl)] = count(raw["n_tol"][k])
    if "n_tgt_change" not in raw:
        return acc
    n_tc, n_both, n_cc = (count(raw[k]) for k in CHANGE_KEYS)
    acc["n_tgt_change"], acc["n_both_change"], acc["n_change_correct"] = n_tc, n_both, n_cc
    # valid cells with pred != src: where tgt != src, the n_both cells; where
    # tgt == src, exactly the wrong cells, n_wrong - (n_tc - n_cc) of them
    acc["n_pred_change"] = n_both + acc["n_wrong"] - n_tc + n_cc
    if "ref_per_grid" in raw:
        # the reference code: per grid, over every cell (padding included)
        flags = torch.as_tensor(raw["ref_per_grid"], device=device).to(fdt)  # [3, B]
        tc_g, pc_g, both_g = flags[0], flags[1], flags[2]
        one = torch.ones((), dtype=fdt, device=device)
        rec = torch.where(tc_g > 0, both_g / tc_g.clamp_min(1), one)
        prec = torch.where(pc_g > 0, both_g / pc_g.clamp_min(1), one)
        f1 = 2.0 * prec * rec / (prec + rec + 1e-8)
        acc["sum_ref_copy_rate"] = ((cells - pc_g) / cells).sum()
        acc["sum_ref_recall"] = rec.sum()
        acc["sum_ref_precision"] = prec.sum()
        acc["sum_ref_f1"] = f1.sum()
    return acc


def grid_compute(counts: Mapping[str, Any], *, tolerances=DEFAULT_TOLERANCES,
                 weights=DEFAULT_WEIGHTS, convention: str = "arcnb") -> dict:
    """Ratios of :func:`grid_metrics` from the counts of :func:`grid_update`.

    Every ratio is taken at once on stacked numerators and denominators (a handful of
    tensor operations whatever the number of metrics: on a GPU each operation is a
    kernel launch, and a training loop calls this every step)."""
    torch = _torch()
    convention = check_convention(convention)
    tols = check_tolerances(tolerances)
    w_cell, w_tol, w_exact = check_weights(weights)
    ref = convention == "reference"
    change = "n_tgt_change" in counts
    if change and ref and "sum_ref_recall" not in counts:
        raise ParameterError("counts lack the reference change sums (update with reference=True)")
    grids = counts["n_total"] if ref else counts["n_grids"]
    # (metric, numerator, denominator): the ratios before the dense objective in the
    # order of the result, the 0.95 tolerance the objective uses, the change ratios
    head = [("grid_accuracy", counts["n_correct"], grids),
            ("exact_match", counts["n_exact"], grids),
            ("cell_accuracy", counts["n_valid_correct"], counts["n_valid"])]
    head += [(tolerance_name(tl), counts["n_" + tolerance_name(tl)], grids) for tl in tols]
    head += [("row_all_correct_rate", counts["n_rows_correct"], counts["n_rows"]),
             ("col_all_correct_rate", counts["n_cols_correct"], counts["n_cols"])]
    pairs = head + [("tol95", counts["n_" + tolerance_name(0.95)], grids)]
    if change:
        if ref:
            n = counts["n_total"]
            pairs += [("change_recall", counts["sum_ref_recall"], n),
                      ("change_precision", counts["sum_ref_precision"], n),
                      ("transformation_f1", counts["sum_ref_f1"], n),
                      ("copy_rate", counts["sum_ref_copy_rate"], n)]
        else:
            pairs += [("change_recall", counts["n_both_change"], counts["n_tgt_change"]),
                      ("change_precision", counts["n_both_change"], counts["n_pred_change"]),
                      ("copy_rate", counts["n_valid"] - counts["n_pred_change"],
                       counts["n_valid"])]
        # no counterpart in the reference code: pooled over valid cells in both
        pairs.append(("change_accuracy", counts["n_change_correct"], counts["n_tgt_change"]))
    r = dict(zip([k for k, _, _ in pairs],
                 _ratio(torch.stack([a for _, a, _ in pairs]),
                        torch.stack([b for _, _, b in pairs])).unbind()))
    terms = [(w_cell, r["cell_accuracy"]), (w_tol, r.pop("tol95")),
             (w_exact, r["grid_accuracy"])]
    dense = torch.zeros_like(r["cell_accuracy"])
    for w, m in terms:
        if w != 0.0:  # a zero weight drops its term (0 * NaN would poison the sum)
            dense = dense + w * m
    out = {k: r[k] for k, _, _ in head}
    out["dense_grid_objective"] = dense
    out["n_grids"] = grids.to(dense.dtype)
    if change:
        rec, prec = r["change_recall"], r["change_precision"]
        if not ref:
            s = prec + rec
            r["transformation_f1"] = torch.where(
                s > 0, 2 * prec * rec / torch.where(s > 0, s, torch.ones_like(s)),
                torch.where(torch.isnan(s), s, torch.zeros_like(s)))
        for k in ("change_recall", "change_precision", "transformation_f1", "copy_rate",
                  "change_accuracy"):
            out[k] = r[k]
    # the final form: float32 on the input's device, one conversion for all
    return dict(zip(out, _out(torch.stack(list(out.values()))).unbind()))


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
    counts = grid_update(pred, target, source, pad_token=pad_token, tolerances=tolerances,
                         reference=convention == "reference")
    return grid_compute(counts, tolerances=tolerances, weights=weights, convention=convention)

