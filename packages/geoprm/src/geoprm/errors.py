"""Errors raised by geoprm."""


class GeoPRMError(Exception):
    """Base class of every error geoprm raises on purpose."""
