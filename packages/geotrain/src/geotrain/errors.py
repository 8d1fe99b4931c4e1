"""Errors raised by geotrain, by phase: configuration, data, missing extras, training."""

from __future__ import annotations

__all__ = ("ConfigError", "DataError", "GeoTrainError", "MissingExtraError", "TrainingError")


class GeoTrainError(Exception):
    """Base class of every error geotrain raises on purpose."""


class ConfigError(GeoTrainError, ValueError):
    """A run configuration (YAML file, preset or override) is invalid."""


class DataError(GeoTrainError, ValueError):
    """A training record is malformed, or a data source is missing or empty."""


class MissingExtraError(GeoTrainError, ImportError):
    """An optional dependency (the ``train`` or ``deepspeed`` extra) is not installed."""


class TrainingError(GeoTrainError, RuntimeError):
    """Training, checkpointing or export failed at run time."""
