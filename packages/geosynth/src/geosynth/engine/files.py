"""Atomic file writes shared by the dataset writer, MTS and auxiliary-data mining."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the whole new one, never a part.

    The bytes go to a temporary file in the same folder (created if missing), which then replaces
    ``path`` in one rename. The file is readable by everyone (``0644``), as outputs are meant to be shared.

    Raises:
        OSError: The folder cannot be created or written.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.chmod(temp, 0o644)  # mkstemp creates 0600
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
