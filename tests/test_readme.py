"""The README's Python examples run and print what the README says they print."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def _expected_lines(block: str) -> list[str]:
    """The ``# value`` comments after print(...) calls (up to a ``:`` that starts an explanation)."""
    return [
        m.group(1).split(":")[0].strip() for m in re.finditer(r"^print\(.*\)\s+# (.+)$", block, flags=re.M)
    ]


def test_readme_has_python_examples() -> None:
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs(block: str) -> None:
    out = subprocess.run(
        [sys.executable, "-c", block], capture_output=True, text=True, timeout=120, check=True
    )
    printed = out.stdout.splitlines()
    for expected in _expected_lines(block):
        assert expected in printed, (expected, printed)
