"""The workspace's one atomic writer: readers see the old file or the whole new one, and outputs are shared."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from geo_cli.pipeline._state import atomic_write_text
from geosynth.engine import atomic_write


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_atomic_write_replaces_the_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "out" / "data.jsonl"  # the folder is created
    atomic_write(target, b"old\n")
    atomic_write(target, b"new\n")
    assert target.read_bytes() == b"new\n"
    assert _mode(target) == 0o644  # readable by everyone, not mkstemp's 0600
    assert sorted(p.name for p in target.parent.iterdir()) == ["data.jsonl"]


def test_a_failed_write_keeps_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "data.jsonl"
    atomic_write(target, b"old\n")
    with pytest.raises(TypeError):
        atomic_write(target, "not bytes")  # type: ignore[arg-type]
    assert target.read_bytes() == b"old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.jsonl"]


def test_pipeline_outputs_are_written_the_same_way(tmp_path: Path) -> None:
    target = tmp_path / "results.json"
    atomic_write_text(target, '{"accuracy": 0.5}\n')
    assert target.read_text(encoding="utf-8") == '{"accuracy": 0.5}\n'
    assert _mode(target) == 0o644
