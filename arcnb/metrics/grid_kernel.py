"""The contract between :func:`arcnb.metrics.grid.grid_update` and its two kernels.

A *kernel* turns one padded batch into the raw counts of the grid family. There are
two implementations of the same contract, each readable alone:

* :func:`arcnb.metrics.grid_numpy.count_numpy`: the CPU kernel (numpy ufuncs on
  zero-copy views, cache-sized chunks, chunks on several threads);
* :func:`arcnb.metrics.grid_torch.count_torch`: torch operations on any device, one
  pass (used for every non-CPU device, under ``torch.compile``, and on the CPU when
  forced).

``tests/test_metrics_grid_kernel.py`` runs both on the same inputs and asserts identical
counts.

Inputs
    ``pred``, ``target`` and ``source`` (or None): integer arrays of one shape
    ``[B, R, W]`` with ``B >= 1`` and ``R * W >= 1`` (numpy arrays for the numpy
    kernel, torch tensors on one device for the torch kernel). ``[B, H, W]`` grids
    come as they are; ``[B, L]`` sequences as ``[B, 1, L]``; extra dimensions are
    folded into ``R``. Keyword arguments: ``pad_token`` (an int, or None for no
    padding; a pad token that the dtype cannot hold matches no cell), ``tols`` (a
    tuple of tolerances in [0, 1]), ``columns`` (False for sequences: no row or column
    counts) and ``reference`` (also return the per-grid counts of the reference
    convention; only with ``source``).

    A cell is *valid* when its target is not ``pad_token`` (every cell when
    ``pad_token`` is None); it is *wrong* when it is valid and ``pred != target``.

Output: a dict of counts (Python ints or 0-dim integer tensors on the input's device)
    * ``n_grids``: grids with at least one valid cell; among those, ``n_correct``
      (no wrong cell) and ``n_exact`` (``pred == target`` at every position, padding
      included);
    * ``n_valid`` / ``n_wrong``: valid cells / wrong cells;
    * ``n_rows`` / ``n_cols``: rows / columns (of ``R x W``) holding a valid cell, and
      ``n_rows_correct`` / ``n_cols_correct``: those without a wrong cell (all four
      0 when ``columns`` is False);
    * ``n_tol``: a sequence of one count per tolerance of ``tols``, in order: grids
      with a valid cell whose accuracy ``(valid - wrong) / valid`` (float64) is
      ``>= tol``;
    * with ``source``, over valid cells: ``n_tgt_change`` (target != source),
      ``n_both_change`` (target != source and pred != source) and
      ``n_change_correct`` (target != source and pred == target);
    * with ``source`` and ``reference``: ``ref_per_grid``, an integer array ``[3, B]``
      (numpy array or tensor on the input's device) holding per grid, over every cell
      (padding included), the counts of target != source, pred != source, and both.

Everything else (``n_valid_correct``, ``n_pred_change``, the reference convention's
per-grid ratios, the ratios of :func:`arcnb.metrics.grid_metrics`) is derived from
these counts in :mod:`arcnb.metrics.grid`, once, for both kernels.

The numpy kernel scans the batch in chunks of grids (:func:`chunks`) small enough
that the passes over a chunk stay in the core's cache (each input is read from memory
once); grids whose rows and columns are shorter than :data:`PACK_LIMIT` take its
*packed* path (the per-cell value ``valid + 32 * wrong`` summed over every row and
every column with float32 matrix-vector products). The torch kernel makes one pass
over the whole batch (chunks only past :data:`TORCH_CHUNK_CELLS` cells): class-packed
sums, described in :mod:`arcnb.metrics.grid_torch`; its
:func:`~arcnb.metrics.grid_torch.count_vector` gives the counts as one vector, which
:func:`arcnb.metrics.grid.grid_metrics` turns into every ratio at once.
"""
from __future__ import annotations

# Cells per chunk of the numpy kernel: small, so that the passes over a chunk stay in
# cache (each input is read from memory once).
_CHUNK_CELLS_CPU = 1 << 17
#: Cells per chunk of the torch kernel (:mod:`arcnb.metrics.grid_torch`): the whole
#: batch in one pass up to this many cells (about 40 bytes of work memory per cell).
TORCH_CHUNK_CELLS = 1 << 27

#: Rows and columns shorter than this take the packed path (``valid + 32 * wrong``).
PACK_LIMIT = 32

#: The count keys every kernel returns (plus ``n_tol``, and the change keys with
#: ``source``, ``ref_per_grid`` with ``reference``).
CELL_KEYS = ("n_grids", "n_correct", "n_exact", "n_valid", "n_wrong",
             "n_rows", "n_rows_correct", "n_cols", "n_cols_correct")
CHANGE_KEYS = ("n_tgt_change", "n_both_change", "n_change_correct")


def chunk_grids(cells_per_item: int, device_type: str) -> int:
    """Grids per chunk for grids of ``cells_per_item`` cells on ``device_type``."""
    limit = _CHUNK_CELLS_CPU if device_type == "cpu" else TORCH_CHUNK_CELLS
    return max(1, limit // max(1, cells_per_item))


def chunks(n: int, cells_per_item: int, device_type: str):
    """``(start, stop)`` bounds of the chunks of a batch of ``n`` grids."""
    step = chunk_grids(cells_per_item, device_type)
    for start in range(0, n, step):
        yield start, min(n, start + step)
