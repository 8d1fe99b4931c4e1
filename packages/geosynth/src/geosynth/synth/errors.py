"""Errors of the synthesis package (all derive from :class:`geosynth.errors.GeoSynthError`)."""

from __future__ import annotations

from geosynth.errors import GeoSynthError


class SynthError(GeoSynthError):
    """Base class of every error the synthesis code raises on purpose."""


class SynthConfigError(SynthError, ValueError):
    """A synthesis configuration (YAML file or mapping) is malformed; the message names the field."""


class SynthUnavailableError(SynthError):
    """An optional part of the pipeline (a sibling module or an extra) is not installed."""


class GenerationFailed(SynthError):
    """No problem could be synthesized for one record index within the configured number of tries."""


class DatasetError(SynthError):
    """A dataset folder is missing, incomplete or was written with another configuration."""


class StepLabelError(SynthError, ValueError):
    """A program cannot be labelled on a figure (no figure, a program that does not parse, a bad step index)."""
