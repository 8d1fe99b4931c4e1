"""Errors raised by geotrain."""


class GeoTrainError(Exception):
    """Base class of every error geotrain raises on purpose."""
