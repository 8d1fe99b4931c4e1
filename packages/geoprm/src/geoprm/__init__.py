"""geoprm: the generative multimodal process reward model.

The critique schema, scoring and model wrapper land with their issue; this
module currently exposes the package's error hierarchy only.
"""

from geoprm.errors import GeoPRMError

__all__ = ("GeoPRMError",)
__version__ = "0.1.0"
