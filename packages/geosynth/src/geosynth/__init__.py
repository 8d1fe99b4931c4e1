"""geosynth: the formal plane-geometry engine and the data factories built on it.

The engine and the synthesis pipelines land with their issues; this module
currently exposes the package's error hierarchy only.
"""

from geosynth.errors import GeoSynthError

__all__ = ("GeoSynthError",)
__version__ = "0.1.0"
