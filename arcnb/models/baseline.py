"""Two small models: copy-the-input and the demo network, a demonstration-conditioned
conv net.

``DemoConvNet`` (the *demo network*, builder ``demo-conv``; the *bundled checkpoint*,
:data:`arcnb.models.BUNDLED_CHECKPOINT`, is a copy of it trained by
``scripts/train_baseline.py``; the *reference baselines* are :mod:`arcnb.baselines`) reads
the task's demonstrations through two vectorised statistics and then applies a few
3x3 convolutions on the 30x30 canvas:

* a colour map ``M[b, i, o]``: over the demonstrations whose output has the input's
  shape, the fraction of cells of input colour ``i`` whose output colour is ``o``
  (rows with no cells are 0). Each test cell of colour ``i`` gets ``M[b, i, :]``
  as 10 feature channels;
* the colour histogram of the demonstration outputs (10 channels, broadcast) and the
  fraction of demonstrations whose output keeps the input's shape (1 channel).

With the one-hot test input (11 channels incl. padding) that is 32 channels into a
residual stack of dilated 3x3 convolutions, then a 1x1 convolution to 11 logits.
The output has the input's shape whenever the pad class wins outside it (it learns
to): it can only solve tasks whose output keeps the input's shape.
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from ..grids import PAD_TOKEN

__all__ = ["CopyInput", "DemoConvNet", "demo_features"]


class CopyInput(nn.Module):
    """Predicts the test input unchanged (logits: a one-hot of the input, pad incl.)."""

    reads_demonstrations = False

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        return F.one_hot(inputs.long().clamp(0, PAD_TOKEN), 11).permute(0, 3, 1, 2).float()


def _extent(grids: torch.Tensor):
    """Height and width of padded grids ``[..., H, W]`` (pad 10): last non-pad row/col + 1."""
    valid = grids != PAD_TOKEN
    H, W = grids.shape[-2:]
    ar_h = torch.arange(1, H + 1, device=grids.device)
    ar_w = torch.arange(1, W + 1, device=grids.device)
    h = torch.where(valid.any(-1), ar_h, 0).max(-1).values
    w = torch.where(valid.any(-2), ar_w, 0).max(-1).values
    return h, w


def demo_features(inputs, demo_inputs, demo_outputs, demo_mask) -> torch.Tensor:
    """The 32 feature channels of :class:`DemoConvNet` (see the module docstring).

    Shapes: ``inputs [B, H, W]``, ``demo_* [B, N, H, W]``, ``demo_mask [B, N]`` ->
    ``[B, 32, H, W]`` float.
    """
    inputs = inputs.long()
    demo_inputs = demo_inputs.long()
    demo_outputs = demo_outputs.long()
    hi, wi = _extent(demo_inputs)
    ho, wo = _extent(demo_outputs)
    same = (hi == ho) & (wi == wo) & demo_mask.bool()  # [B, N]
    B, N = demo_mask.shape
    dev = inputs.device
    b_idx = torch.arange(B, device=dev)[:, None, None, None]
    # colour co-occurrence counts[b, i, o] over same-shape demos (pad pairs dropped)
    di = demo_inputs.clamp(0, PAD_TOKEN)
    do = demo_outputs.clamp(0, PAD_TOKEN)
    flat = (b_idx * 121 + di * 11 + do).reshape(-1)
    wgt = same[:, :, None, None].expand_as(di).reshape(-1).float()
    counts = torch.zeros(B * 121, device=dev).index_add_(0, flat, wgt).view(B, 11, 11)
    counts = counts[:, :10, :10]
    cmap = counts / counts.sum(-1, keepdim=True).clamp(min=1.0)
    cmap = torch.cat([cmap, torch.zeros(B, 1, 10, device=dev)], dim=1)  # pad row -> 0
    x = inputs.clamp(0, PAD_TOKEN)
    mapped = cmap[torch.arange(B, device=dev)[:, None, None], x].permute(0, 3, 1, 2)  # [B,10,H,W]
    # colour histogram of the demonstration outputs
    flat_o = (b_idx * 11 + do).reshape(-1)
    wm = demo_mask[:, :, None, None].expand_as(do).reshape(-1).float()
    hist = torch.zeros(B * 11, device=dev).index_add_(0, flat_o, wm).view(B, 11)[:, :10]
    hist = hist / hist.sum(-1, keepdim=True).clamp(min=1.0)
    frac_same = same.float().sum(1) / demo_mask.float().sum(1).clamp(min=1.0)  # [B]
    H, W = inputs.shape[-2:]
    glob = torch.cat([hist, frac_same[:, None]], dim=1)[:, :, None, None].expand(B, 11, H, W)
    x_oh = F.one_hot(x, 11).permute(0, 3, 1, 2).float()
    return torch.cat([x_oh, mapped.float(), glob], dim=1)


class _Block(nn.Module):
    def __init__(self, ch: int, dilation: int):
        super().__init__()
        self.conv1 = nn.Conv2d(ch, ch, 3, padding=dilation, dilation=dilation)
        self.conv2 = nn.Conv2d(ch, ch, 3, padding=1)

    def forward(self, x):
        return x + self.conv2(F.relu(self.conv1(F.relu(x))))


class DemoConvNet(nn.Module):
    """Small demonstration-conditioned conv net (the bundled baseline).

    ``hidden`` channels, ``blocks`` residual blocks with dilations cycling 1, 2, 4.
    With ``prior=True`` the logits also get ``prior_weight * p`` (a learnt scalar,
    initialised to 4), where ``p`` is the demonstrations' colour map for the cell's
    colour (the one-hot input colour when the demonstrations never show that colour)
    plus the pad channel: the net starts from "recolour as the demonstrations do" and
    learns corrections.
    """

    reads_demonstrations = True

    def __init__(self, hidden: int = 32, blocks: int = 3, prior: bool = False):
        super().__init__()
        self.hidden = int(hidden)
        self.blocks = int(blocks)
        self.prior = bool(prior)
        self.stem = nn.Conv2d(32, self.hidden, 3, padding=1)
        self.body = nn.Sequential(*[_Block(self.hidden, (1, 2, 4)[i % 3])
                                    for i in range(self.blocks)])
        self.head = nn.Conv2d(self.hidden, 11, 1)
        if self.prior:
            self.prior_weight = nn.Parameter(torch.tensor(4.0))

    def forward(self, inputs, demo_inputs, demo_outputs, demo_mask):
        x = demo_features(inputs, demo_inputs, demo_outputs, demo_mask)
        out = self.head(F.relu(self.body(self.stem(x))))
        if self.prior:
            mapped = x[:, 11:21]
            seen = mapped.sum(1, keepdim=True) > 0
            prior = torch.where(seen, mapped, x[:, :10])
            out = out + self.prior_weight * torch.cat([prior, x[:, 10:11]], dim=1)
        return out
