"""geotrain: perception-augmented SFT and GM-PRM training for Qwen-VL-family models, CPU to many GPUs.

``import geotrain`` is light (no torch); training entry points import the ``train`` extra on call.
"""

from __future__ import annotations

from geotrain._api import (
    accelerate_config,
    accelerate_configs,
    build_trainer,
    load_model_and_processor,
    train,
)
from geotrain._checkpoints import latest_checkpoint
from geotrain._config import (
    DataSource,
    EvalSettings,
    Family,
    LoraSettings,
    RunConfig,
    Task,
    available_presets,
    load_config,
    preset,
)
from geotrain._data import Example, PARecord, load_examples
from geotrain._export import export_model
from geotrain._result import TrainResult
from geotrain._scratch import ScratchModel, build_scratch_model, corpus_texts
from geotrain._tiny import build_tiny_model
from geotrain.errors import ConfigError, DataError, GeoTrainError, MissingExtraError, TrainingError

__all__ = (
    "ConfigError",
    "DataError",
    "DataSource",
    "EvalSettings",
    "Example",
    "Family",
    "GeoTrainError",
    "LoraSettings",
    "MissingExtraError",
    "PARecord",
    "RunConfig",
    "ScratchModel",
    "Task",
    "TrainResult",
    "TrainingError",
    "accelerate_config",
    "accelerate_configs",
    "available_presets",
    "build_scratch_model",
    "build_tiny_model",
    "build_trainer",
    "corpus_texts",
    "export_model",
    "latest_checkpoint",
    "load_config",
    "load_examples",
    "load_model_and_processor",
    "preset",
    "train",
)
__version__ = "0.1.0"
