"""Two processes (torch.distributed, gloo, CPU) each update half of the batches; the
reduced result equals one process over all batches."""
from __future__ import annotations

import json
import math
import os
import socket
import tempfile
import time
from datetime import timedelta

import numpy as np
import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from naive_metrics import naive_grid_metrics, random_batch

WORLD = 2
N_BATCHES = 7  # uneven: rank 0 gets 4 batches, rank 1 gets 3


def _batches():
    rng = np.random.default_rng(123)
    out = []
    for i in range(N_BATCHES):
        p, t, s = random_batch(rng, B=3 + i, size=(6, 5))
        out.append((p, t, s))
    return out


def _results(metrics):
    out = {}
    for name, m in metrics.items():
        for k, v in m.compute().items():
            out[f"{name}/{k}"] = v.double().flatten().tolist()
    return out


def _make_metrics():
    from arcnb.modules import GridMetrics, ReconstructionMetrics, TokenAccuracy

    return {"arcnb": GridMetrics(), "reference": GridMetrics(convention="reference"),
            "recon": ReconstructionMetrics(pad_token=10),
            "token": TokenAccuracy(ignore_index=10)}


def _update(metrics, batch):
    p, t, s = (torch.from_numpy(x) for x in batch)
    metrics["arcnb"].update(p, t, source=s)
    metrics["reference"].update(p, t, source=s)
    metrics["recon"].update(p, t)
    metrics["token"].update(p.flatten(1), t.flatten(1))


def _worker(rank, port, out_path):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=WORLD, timeout=timedelta(seconds=60))
    try:
        metrics = _make_metrics()
        for i, batch in enumerate(_batches()):
            if i % WORLD == rank:
                _update(metrics, batch)
        res = _results(metrics)  # compute() syncs the sum states across processes
        if rank == 0:
            with open(out_path + ".tmp", "w") as f:
                json.dump(res, f)
            os.replace(out_path + ".tmp", out_path)
        dist.barrier()
    finally:
        dist.destroy_process_group()


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _same(a, b):
    if math.isnan(b):
        return math.isnan(a)
    return abs(a - b) <= 1e-6 * max(1.0, abs(b))


def test_two_gloo_processes_reduce_to_the_single_process_result():
    if not dist.is_available() or not dist.is_gloo_available():
        pytest.skip("torch.distributed with gloo is not available")
    with tempfile.TemporaryDirectory() as tmp:
        out_path = os.path.join(tmp, "rank0.json")
        ctx = mp.start_processes(_worker, args=(_free_port(), out_path), nprocs=WORLD,
                                 join=False, start_method="spawn")
        deadline = time.monotonic() + 180
        try:
            while not ctx.join(timeout=1):
                if time.monotonic() > deadline:
                    pytest.fail("distributed workers did not finish within 180 s")
        finally:
            for p in ctx.processes:
                if p.is_alive():
                    p.terminate()
        with open(out_path) as f:
            got = json.load(f)

    single = _make_metrics()
    for batch in _batches():
        _update(single, batch)
    want = _results(single)
    assert set(got) == set(want)
    for k in want:
        assert len(got[k]) == len(want[k]), k
        for a, b in zip(got[k], want[k]):
            assert _same(a, b), (k, a, b)
    # and the one-process result is the naive reference over all batches
    p = np.concatenate([b[0] for b in _batches()])
    t = np.concatenate([b[1] for b in _batches()])
    s = np.concatenate([b[2] for b in _batches()])
    naive = naive_grid_metrics(p, t, s)
    for k, v in naive.items():
        assert _same(got[f"arcnb/{k}"][0], v), k
