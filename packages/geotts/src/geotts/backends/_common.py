"""Helpers shared by the backends: extra guards and image loading."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import Any

from geotts.errors import BackendError, MissingExtraError

__all__ = ("image_bytes", "pil_image", "require")


def require(module: str, extra: str) -> ModuleType:
    """Import ``module`` or raise :class:`MissingExtraError` naming the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(
            f'{module} is not installed; install it with: pip install "geotts[{extra}]"'
        ) from exc


def image_bytes(image: bytes | Path) -> bytes:
    """The encoded bytes of an image given as bytes or a path."""
    if isinstance(image, bytes):
        return image
    try:
        return image.read_bytes()
    except OSError as exc:
        raise BackendError(f"cannot read image {str(image)!r}: {exc.strerror}") from exc


def image_mime(data: bytes) -> str | None:
    """MIME type of encoded image bytes from their magic number: PNG, JPEG, GIF or WebP; None for anything else."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    table = ((b"\x89PNG", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF8", "image/gif"))
    return next((mime for magic, mime in table if data.startswith(magic)), None)


def pil_image(image: bytes | Path, *, extra: str = "transformers") -> Any:
    """Decode an image into an RGB PIL image (needs pillow, which the ``extra`` brings)."""
    import io

    pil = require("PIL.Image", extra)
    try:
        return pil.open(io.BytesIO(image_bytes(image))).convert("RGB")
    except (OSError, ValueError) as exc:
        raise BackendError(f"cannot decode image ({len(image_bytes(image))} bytes): {exc}") from exc


def chat_dicts(messages: Any, n_images: int) -> list[dict[str, Any]]:
    """Chat messages as template dicts, the images as ``{"type": "image"}`` parts of the first user turn.

    Without images every turn's content is a plain string, which text-only chat templates (causal
    LMs) require and multimodal templates render the same as a single text part.
    """
    out: list[dict[str, Any]] = []
    placed = n_images == 0
    for m in messages:
        if m.role == "user" and not placed:
            parts: list[dict[str, Any]] = [{"type": "image"} for _ in range(n_images)]
            parts.append({"type": "text", "text": m.content})
            out.append({"role": m.role, "content": parts})
            placed = True
        else:
            out.append({"role": m.role, "content": m.content})
    return out
