"""geotrain: fine-tuning of Qwen-VL-family models (perception-augmented SFT, PRM training).

The trainers land with their issue; this module currently exposes the
package's error hierarchy only.
"""

from geotrain.errors import GeoTrainError

__all__ = ("GeoTrainError",)
__version__ = "0.1.0"
