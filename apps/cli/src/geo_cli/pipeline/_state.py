"""Stage state on disk: input keys, atomic writes, and what ``status`` reads.

Each stage writes into ``<workdir>/<stage>/``. Its ``stage.json`` holds the key the outputs were
made for and whether the stage finished (``done``) or was started and not finished (``running``: a
crash or Ctrl-C). A stage is skipped when its ``stage.json`` says ``done`` with the current key;
a ``running`` state with the current key is resumed in place (the stage keeps its partial work);
any other state is wiped and the stage starts over.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

__all__ = ("StageState", "atomic_write_text", "done_lines", "read_state", "stable_hash", "write_state")

STATE_FILE = "stage.json"


def stable_hash(value: Any) -> str:
    """SHA-256 of ``value`` as canonical JSON (sorted keys, no whitespace), hex."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_digest(path: Path) -> str:
    """SHA-256 of a file's bytes, hex."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` with the workspace's one atomic writer (``geosynth.engine``)."""
    from geosynth.engine import atomic_write

    atomic_write(path, text.encode("utf-8"))


def done_lines(path: Path) -> list[dict[str, Any]]:
    """The complete JSON lines of an earlier run; a torn last line (a crash mid-write) is dropped, the file fixed."""
    if not path.is_file():
        return []
    rows: list[dict[str, Any]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            break
    atomic_write_text(path, "".join(json.dumps(r) + "\n" for r in rows))
    return rows


class StageState(BaseModel):
    """The content of a stage's ``stage.json``."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    key: str
    """The input key the outputs belong to."""
    status: Literal["running", "done"]
    """``running``: started and not finished; ``done``: finished."""
    inputs: dict[str, Any]
    """What the key was hashed from (settings, upstream keys, code versions)."""
    summary: dict[str, Any] = {}
    """What the stage reported when it finished."""
    seconds: float = 0.0
    """Wall-clock seconds of the run that finished it (all attempts together)."""
    attempts: int = 1
    """Runs that worked on these outputs (more than 1 after a resume)."""


def read_state(folder: Path) -> StageState | None:
    """The state in ``folder``, or None when there is none (or it is unreadable)."""
    path = folder / STATE_FILE
    try:
        return StageState.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_state(folder: Path, state: StageState) -> None:
    """Write ``state`` atomically into ``folder``."""
    atomic_write_text(folder / STATE_FILE, state.model_dump_json(indent=2))


def reset_folder(folder: Path) -> None:
    """Delete ``folder`` and everything in it, then create it empty."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
