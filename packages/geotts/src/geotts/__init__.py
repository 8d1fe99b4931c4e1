"""geotts: test-time scaling for any solver."""

from geotts.errors import BackendError, GeoTTSError, MissingExtraError, StrategyConfigError

__all__ = ("BackendError", "GeoTTSError", "MissingExtraError", "StrategyConfigError")
__version__ = "0.1.0"
