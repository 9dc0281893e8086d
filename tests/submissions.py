"""Synthetic submissions over a real dataset, shared by the tests."""
from __future__ import annotations

import numpy as np


def synthetic_submission(ds, kind: str, seed: int = 0, *, p_first: float = 0.3,
                         p_second: float = 0.5, second_wrong: str = "zeros") -> dict:
    """An ARC Prize submission for every test input of ``ds``.

    ``kind``: ``"truth"`` (both attempts right), ``"copy"`` (both attempts copy the
    input) or ``"mixed"``: per output, with u ~ U(0, 1) from ``seed``, attempt 1 is the
    truth when u < ``p_first`` (else the input) and attempt 2 when u < ``p_second``
    (else zeros of the truth's shape, or the input with ``second_wrong="input"``).
    """
    rng = np.random.default_rng(seed)
    sub = {}
    for t in ds:
        rows = []
        for p in t.test:
            if kind == "truth":
                a1 = a2 = p.output
            elif kind == "copy":
                a1 = a2 = p.input
            else:
                u = rng.random()
                a1 = p.output if u < p_first else p.input
                wrong = np.zeros_like(p.output) if second_wrong == "zeros" else p.input
                a2 = p.output if u < p_second else wrong
            rows.append({"attempt_1": a1.tolist(), "attempt_2": a2.tolist()})
        sub[t.id] = rows
    return sub
