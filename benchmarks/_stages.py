"""Per-stage timing for the evaluate and sweep benchmarks: what arcnb does around the model.

``Stages(device).patch()`` wraps the functions of each stage where arcnb calls them
(module attributes; restored by ``restore()``); every call adds its *self* time (its
own time less that of the wrapped calls inside it) to its stage, so the stages add up
to the time spent in them without double counting. On CUDA each wrapped call waits for
the device before and after (``torch.cuda.synchronize``): the GPU's work is charged to
the stage that queued it. ``report(total)`` prints each stage, its share of ``total``
and the rest (``other``: what no stage covers).
"""
from __future__ import annotations

import time
from collections import defaultdict

#: (stage, module, attribute): where each stage's function is looked up when called.
STAGES = (
    ("model forward", "arcnb.models.interface", "ModelAdapter._call"),
    ("pad inputs", "arcnb.evaluate", "pad_batch"),
    ("pad demonstrations", "arcnb.evaluate", "pad_demonstrations"),
    ("decode + crop", "arcnb.evaluate", "decode_logits"),
    ("views (apply, invert)", "arcnb.augment", "View.apply"),
    ("views (apply, invert)", "arcnb.augment", "View.invert"),
    ("vote", "arcnb.evaluate", "vote"),
    ("records (draws, JSON)", "arcnb.evaluate", "_records"),
    ("journal", "arcnb.journal", "Journal.append"),
    ("load model", "arcnb.evaluate", "load_model"),
    ("load dataset", "arcnb.evaluate", "load_dataset"),
    ("run parameters (hashes)", "arcnb.evaluate", "_parameters"),
    ("score", "arcnb.evaluate", "score"),
    ("write run", "arcnb.evaluate", "_write_results"),
    ("sweep: plan (checkpoint hashes)", "arcnb.sweep.run", "plan"),
    ("sweep: tables", "arcnb.sweep.tables", "Sweep.from_runs"),
    ("sweep: write", "arcnb.sweep.tables", "Sweep.write"),
)


class Stages:
    def __init__(self, device: str = "cpu"):
        self.self_s: dict = defaultdict(float)
        self.calls: dict = defaultdict(int)
        self._stack: list = []
        self._saved: list = []
        self._sync = _sync_fn(device)

    def _wrap(self, stage: str, fn):
        def timed(*args, **kwargs):
            self._stack.append(0.0)
            self._sync()
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self._sync()
                dt = time.perf_counter() - t0
                inner = self._stack.pop()
                self.self_s[stage] += dt - inner
                self.calls[stage] += 1
                if self._stack:
                    self._stack[-1] += dt

        timed.__wrapped__ = fn
        return timed

    def patch(self, stages=STAGES) -> "Stages":
        import importlib

        for stage, module, attr in stages:
            owner = importlib.import_module(module)
            *path, name = attr.split(".")
            for p in path:
                owner = getattr(owner, p)
            fn = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
            self._saved.append((owner, name, fn))
            if isinstance(fn, (classmethod, staticmethod)):
                setattr(owner, name, type(fn)(self._wrap(stage, fn.__func__)))
            else:
                setattr(owner, name, self._wrap(stage, fn))
        return self

    def restore(self) -> None:
        for owner, name, fn in reversed(self._saved):
            setattr(owner, name, fn)
        self._saved.clear()

    def reset(self) -> None:
        self.self_s.clear()
        self.calls.clear()

    def table(self, total: float) -> list:
        """``[(stage, seconds, share of total)]``, largest first, then ``other``."""
        rows = sorted(self.self_s.items(), key=lambda kv: -kv[1])
        rest = total - sum(self.self_s.values())
        return [(k, v, v / total) for k, v in rows] + [("other (not in a stage)", rest,
                                                        rest / total)]

    def report(self, total: float, title: str) -> None:
        print(f"  {title}: {total:.3f} s")
        for stage, s, share in self.table(total):
            print(f"    {stage:<34} {s * 1e3:9.1f} ms {100 * share:6.1f} %")


def _sync_fn(device: str):
    if str(device).startswith("cuda"):
        import torch

        return torch.cuda.synchronize
    return lambda: None
