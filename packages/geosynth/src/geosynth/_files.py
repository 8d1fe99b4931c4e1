"""Former home of :func:`geosynth.engine.atomic_write`, kept for ``geo_cli.pipeline``; import it from the engine."""

from __future__ import annotations

from geosynth.engine.files import atomic_write

__all__ = ("atomic_write",)
