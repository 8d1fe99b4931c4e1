"""The geotts error hierarchy."""

from __future__ import annotations


class GeoTTSError(Exception):
    """Base class of every error geotts raises on purpose."""


class StrategyConfigError(GeoTTSError, ValueError):
    """A strategy or aggregator configured with values that cannot work."""


class BackendError(GeoTTSError, RuntimeError):
    """A generation backend that failed to produce candidates."""


class MissingExtraError(GeoTTSError, ImportError):
    """An optional dependency is missing; the message names the extra to install."""
