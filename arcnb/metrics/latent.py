"""Latent family: :func:`latent_diagnostics` of a diagonal-Gaussian latent space.

Its counts are per-dimension sums over samples;
:class:`arcnb.metrics.streaming.LatentDiagnostics` keeps them as states.
"""
from __future__ import annotations

import math

from ._tensors import (_as_tensor, _check_same_shape, _first_device, _float_dtype, _out,
                       _ratio, _torch)
from ..errors import TensorError

#: A latent dimension is *active* when the variance over samples of its posterior
#: mean exceeds this value (Burda et al. 2016, "Importance Weighted Autoencoders").
ACTIVE_DIM_THRESHOLD = 0.01


def latent_update(mu, logvar) -> dict:
    """Sums over samples for :func:`latent_diagnostics` (per dimension)."""
    torch = _torch()
    fdt = _float_dtype(mu.device)
    mu = mu.to(fdt)
    logvar = logvar.to(fdt)
    var = logvar.exp()
    kl = -0.5 * (1 + logvar - mu.pow(2) - var)
    return {"n": torch.full((), mu.shape[0], dtype=torch.int64, device=mu.device),
            "sum_kl": kl.sum(0),
            "sum_mu": mu.sum(0), "sum_mu2": mu.pow(2).sum(0), "sum_var": var.sum(0)}


def latent_compute(counts, *, active_threshold=ACTIVE_DIM_THRESHOLD) -> dict:
    """The diagnostics of :func:`latent_diagnostics` from the sums of :func:`latent_update`."""
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
        "n_dims": torch.full((), float(kl_per_dim.shape[0]), device=kl_per_dim.device),
        "latent_std": torch.sqrt(var_mu + mean_var).mean(),
        "mu_variance_per_dim": var_mu,
    }
    return {k: _out(v) for k, v in out.items()}


def latent_diagnostics(mu, logvar, *, active_threshold: float = ACTIVE_DIM_THRESHOLD) -> dict:
    """Diagnostics of a diagonal-Gaussian latent space (of a VAE-style model).

    ``mu`` and ``logvar``: ``[N, D]`` posterior means and log-variances.

    * ``kl_per_dim`` (tensor of D) = mean over samples of
      ``-0.5 * (1 + logvar - mu**2 - exp(logvar))``, the KL to N(0, 1) of each dimension;
    * ``mean_kl_per_dim`` = mean of ``kl_per_dim`` (the usual "mean KL divergence",
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
        raise TensorError(f"mu has shape {tuple(mu.shape)}; expected [N, D]")
    _check_same_shape(mu, logvar, "mu", "logvar")
    del torch
    return latent_compute(latent_update(mu, logvar), active_threshold=active_threshold)
