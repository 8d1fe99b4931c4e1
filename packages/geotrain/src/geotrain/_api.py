"""Entry points that need the ``train`` extra; heavy modules are imported on call, not on import."""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from geotrain._config import Family, RunConfig
from geotrain._deps import require_train
from geotrain._result import TrainResult
from geotrain.errors import ConfigError

__all__ = ("accelerate_config", "accelerate_configs", "build_trainer", "load_model_and_processor", "train")


def _heavy() -> Any:
    for module in ("torch", "transformers", "peft", "accelerate", "PIL"):
        require_train(module)
    from geotrain import _trainer

    return _trainer


def train(
    config: RunConfig, *, resume_from: str | bool | None = None, callbacks: Sequence[Any] = ()
) -> TrainResult:
    """Run one training job (PA-SFT or GM-PRM) and save the final model under ``output_dir/final``.

    Works the same in one process and under ``accelerate launch`` / ``torchrun``.

    Args:
        config: The run configuration.
        resume_from: A checkpoint folder, True for the latest complete checkpoint in ``output_dir``, or None.
        callbacks: Extra ``transformers.TrainerCallback`` objects.

    Returns:
        The output folders, the step count and the log history (joint, perception, reasoning losses).

    Raises:
        DataError: for bad records. ConfigError: for an unusable configuration.
        TrainingError: when resuming without a checkpoint. MissingExtraError: without the ``train`` extra.
    """
    return _heavy().run_training(config, resume_from=resume_from, callbacks=callbacks)


def build_trainer(config: RunConfig, *, callbacks: Sequence[Any] = ()) -> Any:
    """The wired ``SpanLossTrainer`` (a ``transformers.Trainer``) for ``config``, not yet trained.

    Args:
        config: The run configuration.
        callbacks: Extra ``transformers.TrainerCallback`` objects.

    Returns:
        The trainer.
    """
    return _heavy().build_trainer(config, callbacks=callbacks)


def load_model_and_processor(path: str | Path, family: Family | None = None) -> tuple[Any, Any]:
    """Load a Qwen-VL model folder and its processor (image-only where torchvision is missing).

    Args:
        path: Model folder or hub id.
        family: The family (read from the folder's config when None).

    Returns:
        ``(model, processor)``.
    """
    model, processor = _heavy().load_model_and_processor(path, family)
    return model, processor


def accelerate_configs() -> tuple[str, ...]:
    """Names of the shipped ``accelerate`` launch configs (``ddp``, ``zero2``, ``fsdp2``...)."""
    folder = resources.files("geotrain") / "accelerate"
    return tuple(sorted(p.name.removesuffix(".yaml") for p in folder.iterdir() if p.name.endswith(".yaml")))


def accelerate_config(name: str) -> Path:
    """The path of a shipped ``accelerate`` config, for ``accelerate launch --config_file``.

    Args:
        name: A name from :func:`accelerate_configs`.

    Returns:
        The YAML file.

    Raises:
        ConfigError: for an unknown name.
    """
    if name not in accelerate_configs():
        raise ConfigError(f"unknown accelerate config {name!r}; choose one of {list(accelerate_configs())}")
    return Path(str(resources.files("geotrain") / "accelerate" / f"{name}.yaml"))
