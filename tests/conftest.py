"""Shared test fixtures."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """``../shared`` beside the checkout; tests that need it skip when it is absent."""
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent (it exists beside the project only in the "
                    "developers' and CI's checkouts)")
    return SHARED


@pytest.fixture(scope="session")
def arc1_eval():
    from arcnb.data import load_dataset

    return load_dataset("arc-agi-1:evaluation")


@pytest.fixture(scope="session")
def arc2_eval():
    from arcnb.data import load_dataset

    return load_dataset("arc-agi-2:evaluation")
