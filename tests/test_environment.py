"""environment.yml (conda) and pyproject.toml must list the same packages and bounds."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
# conda-forge names that differ from PyPI's
CONDA_TO_PYPI = {"pytorch": "torch"}


def _split(req: str) -> tuple[str, str]:
    m = re.match(r"^\s*([A-Za-z0-9_.\-]+)\s*(.*)$", req)
    assert m, req
    return m.group(1).lower().replace("_", "-"), m.group(2).replace(" ", "")


def test_environment_matches_pyproject():
    py = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = [r for reqs in py["optional-dependencies"].values() for r in reqs]
    want = dict(_split(r) for r in py["dependencies"] + extras)

    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert "conda-forge" in env["channels"]
    deps = env["dependencies"]
    assert "python=3.11" in deps
    got = {}
    pip_list = None
    for d in deps:
        if isinstance(d, dict):
            pip_list = d["pip"]
            continue
        if d in ("python=3.11", "pip"):
            continue
        name, bound = _split(d)
        got[CONDA_TO_PYPI.get(name, name)] = bound
    assert pip_list is not None, "environment.yml needs a pip: section"
    assert pip_list[-1] == "-e .", "the pip section must end with -e ."
    for r in pip_list[:-1]:
        name, bound = _split(r)
        got[name] = bound
    assert got == want


def test_torch_bound_admits_the_pinned_cpu_build():
    py = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "torch>=2.2" in py["dependencies"]
    assert "torch==2.13.0" in (ROOT / "Makefile").read_text()
