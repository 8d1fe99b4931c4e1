"""Errors raised by geosynth."""


class GeoSynthError(Exception):
    """Base class of every error geosynth raises on purpose."""
