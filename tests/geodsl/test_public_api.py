"""geodsl's public surface is pinned: a change to it is a reviewed diff of data/public_api.json."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

SNAPSHOT = json.loads((Path(__file__).parent / "data" / "public_api.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("module_name", sorted(SNAPSHOT))
def test_public_names_match_the_snapshot(module_name: str) -> None:
    module = importlib.import_module(module_name)
    assert sorted(module.__all__) == SNAPSHOT[module_name]
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert not missing, f"{module_name}.__all__ names what the module does not define: {missing}"
