"""The command line as the tests run it, and the one check of how it refuses bad input."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_arcnb(*args, cwd=ROOT, timeout=600, env: dict | None = None
              ) -> subprocess.CompletedProcess:
    """``python -m arcnb ARGS`` in a real subprocess (``env`` is added to this
    process's environment)."""
    return subprocess.run([sys.executable, "-m", "arcnb", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, timeout=timeout,
                          env=None if env is None else {**os.environ, **env})


def one_line_refusal(code, err: str, *needles) -> str:
    """Bad input was answered as arcnb promises: exit status 2 and one line on stderr,
    no traceback, holding every one of ``needles``. Returns that line."""
    assert code == 2, (code, err[-3000:])
    lines = err.strip().splitlines()
    assert len(lines) == 1, err[-3000:]
    assert "Traceback" not in err
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]
