"""Shared fixtures of the geosynth tests: small committed problem files and the optional shared data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parents[2]


def shared_alphageometry() -> Path | None:
    """The AlphaGeometry data folder under GEO_SHARED (default ../shared), or None when absent."""
    base = Path(os.environ.get("GEO_SHARED", ROOT.parent / "shared"))
    folder = base / "data" / "alphageometry"
    return folder if (folder / "jgex_ag_231.txt").is_file() else None


@pytest.fixture
def data_dir() -> Path:
    return DATA


@pytest.fixture
def alphageometry_dir() -> Path:
    """The shared benchmark folder; skips the test when it is missing (a user's clone)."""
    folder = shared_alphageometry()
    if folder is None:
        pytest.skip("shared AlphaGeometry data not found (set GEO_SHARED)")
    return folder
