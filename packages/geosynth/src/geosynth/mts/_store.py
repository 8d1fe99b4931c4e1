"""Atomic, resumable storage of stage shards and final outputs.

Every stage processes the dataset shard by shard. A finished shard is one JSON Lines file under
``<out>/work/<stage>/``, written to a temporary name and renamed, so a file that exists is complete.
Its name carries the shard index and a key hashed from everything its content depends on (input
file hash, the result-changing configuration, the code and prompt versions, the upstream shard's
key); a rerun with the same key reads the file instead of recomputing it, a rerun with another key
computes a new file. Output files are written the same way, with sorted keys and no timestamps, so
the same input and configuration give byte-identical outputs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from geosynth.engine import atomic_write
from geosynth.mts.errors import MTSOutputError

__all__ = ("ShardStore", "dump_line", "read_jsonl", "stable_hash", "write_json", "write_jsonl", "write_text")


def stable_hash(value: Any) -> str:
    """SHA-256 of the canonical JSON form of ``value`` (sorted keys, no whitespace)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def dump_line(row: Mapping[str, Any]) -> str:
    """One JSON Lines line: sorted keys, UTF-8 kept, no trailing spaces."""
    return json.dumps(row, sort_keys=True, ensure_ascii=False, separators=(", ", ": "))


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (temporary file in the same folder, then rename).

    Raises:
        MTSOutputError: the folder cannot be created or written.
    """
    try:
        atomic_write(path, text.encode("utf-8"))
    except OSError as exc:
        raise MTSOutputError(f"cannot write {str(path)!r}: {exc.strerror or exc}") from exc


def write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> int:
    """Write rows as JSON Lines atomically; returns the row count."""
    lines = [dump_line(row) for row in rows]
    write_text(path, "".join(line + "\n" for line in lines))
    return len(lines)


def write_json(path: Path, value: Any) -> None:
    """Write a JSON document atomically (sorted keys, two-space indent, final newline)."""
    write_text(path, json.dumps(value, sort_keys=True, ensure_ascii=False, indent=2) + "\n")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Read a JSON Lines file written by :func:`write_jsonl`."""
    with path.open(encoding="utf-8") as stream:
        return [json.loads(line) for line in stream if line.strip()]


class ShardStore:
    """Finished stage shards of one output folder, addressed by (stage, shard index, key)."""

    def __init__(self, root: Path) -> None:
        self.root = root / "work"
        self._used: dict[str, set[str]] = {}

    def _path(self, stage: str, index: int, key: str) -> Path:
        return self.root / stage / f"{index:05d}-{key[:20]}.jsonl"

    def load(self, stage: str, index: int, key: str) -> list[dict[str, Any]] | None:
        """The rows of a finished shard, or None when it has not been computed with this key."""
        path = self._path(stage, index, key)
        self._used.setdefault(stage, set()).add(path.name)
        if not path.is_file():
            return None
        try:
            return read_jsonl(path)
        except (OSError, ValueError):  # damaged by hand: recompute it
            return None

    def save(self, stage: str, index: int, key: str, rows: Sequence[Mapping[str, Any]]) -> None:
        """Store a finished shard atomically."""
        path = self._path(stage, index, key)
        self._used.setdefault(stage, set()).add(path.name)
        write_jsonl(path, rows)

    def prune(self) -> int:
        """Delete shard files of earlier configurations that this run did not use; returns how many."""
        removed = 0
        for stage, names in self._used.items():
            folder = self.root / stage
            for path in folder.glob("*.jsonl"):
                if path.name not in names:
                    path.unlink(missing_ok=True)
                    removed += 1
            for tmp in folder.glob(".*.tmp"):
                tmp.unlink(missing_ok=True)
        return removed
