"""The program search as a model (``arcnb evaluate --checkpoint program-search``)."""
from __future__ import annotations

import numpy as np

from ..data import Pair, Task
from ..grids import PAD_TOKEN, crop_padding
from .search import solve_task

__all__ = ["program_search_model"]


def program_search_model(**config):
    """The program search as a model for :func:`arcnb.models.load_model` (registered as
    ``"program-search"``): a ``torch.nn.Module`` that reads the demonstrations and
    returns the one-hot logits of attempt 1 (``config``: :func:`search_task`'s
    keywords). Its ``solve(task, attempts=2)`` gives all the attempts of a task."""
    return _model_class()(**config)


_MODEL_CLASS = None


def _model_class():
    global _MODEL_CLASS
    if _MODEL_CLASS is not None:
        return _MODEL_CLASS
    import torch
    from torch import nn

    class ProgramSearch(nn.Module):
        """The program search behind the logits interface (see
        :func:`program_search_model`)."""

        reads_demonstrations = True

        def __init__(self, **search):
            super().__init__()
            self.search = dict(search)

        def solve(self, task: Task, attempts: int = 2) -> list[list[np.ndarray]]:
            """Attempts for each test input of ``task`` (as :func:`solve_task`)."""
            return solve_task(task, attempts=attempts, **self.search)[0]

        def forward(self, inputs, demo_inputs, demo_outputs, demo_mask):
            B, H, W = inputs.shape
            onehot = np.zeros((B, PAD_TOKEN + 1, H, W), dtype=np.float32)
            onehot[:, PAD_TOKEN] = 1.0
            x, di, do = (t.detach().cpu().numpy() for t in (inputs, demo_inputs, demo_outputs))
            mask = demo_mask.detach().cpu().numpy()
            for b in range(B):
                train = tuple(Pair(crop_padding(di[b, j], pad_token=PAD_TOKEN).astype(np.int8),
                                   crop_padding(do[b, j], pad_token=PAD_TOKEN).astype(np.int8))
                              for j in range(mask.shape[1]) if mask[b, j])
                test_in = crop_padding(x[b], pad_token=PAD_TOKEN).astype(np.int8)
                task = Task(f"item-{b}", train, (Pair(test_in, None),))
                g = self.solve(task, attempts=1)[0][0].astype(np.int64)
                h, w = g.shape
                onehot[b, PAD_TOKEN, :h, :w] = 0.0
                rows, cols = np.indices((h, w))
                onehot[b, g, rows, cols] = 1.0
            return torch.from_numpy(onehot * 20.0).to(inputs.device)  # confident one-hot

    _MODEL_CLASS = ProgramSearch
    return ProgramSearch
