"""The model families geotrain trains, and tiny random models of them (built by geotts.testing).

The builder itself lives in :func:`geotts.testing.tiny_qwen_vl` (one builder for the workspace);
:func:`build_tiny_model` keeps geotrain's spelling and error types. The image-only processor
classes come from the geotts transformers backend.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from geotrain._config import Family
from geotrain._deps import require_train
from geotrain.errors import ConfigError, MissingExtraError

__all__ = ("FAMILY_CLASSES", "build_tiny_model", "image_only_processor_class")

#: Per family: (config class, model class, processor class, video-processor class, patch size).
FAMILY_CLASSES: dict[Family, tuple[str, str, str, str, int]] = {
    "qwen2_vl": ("Qwen2VLConfig", "Qwen2VLForConditionalGeneration", "Qwen2VLProcessor", "Qwen2VLVideoProcessor", 14),
    "qwen2_5_vl": ("Qwen2_5_VLConfig", "Qwen2_5_VLForConditionalGeneration", "Qwen2_5_VLProcessor",
                   "Qwen2VLVideoProcessor", 14),
    "qwen3_vl": ("Qwen3VLConfig", "Qwen3VLForConditionalGeneration", "Qwen3VLProcessor", "Qwen3VLVideoProcessor", 16),
}  # fmt: skip


def image_only_processor_class(family: Family) -> Any:
    """The stock processor class of ``family`` minus its video processor (usable without torchvision).

    Args:
        family: A vision family (a key of :data:`FAMILY_CLASSES`).

    Returns:
        A subclass of the family's processor class with the same class name.

    Raises:
        ConfigError: for a family without a processor (``causal_lm`` uses its tokenizer).
    """
    from geotts.backends.transformers import image_only_processor_class as image_only

    if family not in FAMILY_CLASSES:
        raise ConfigError(
            f"family {family!r} has no image processor; vision families: {sorted(FAMILY_CLASSES)}"
        )
    require_train("transformers")
    return image_only(family)


def build_tiny_model(family: Family, out: str | Path, *, seed: int = 0) -> Path:
    """Build and save a tiny, randomly initialised model of ``family`` and its offline processor.

    A thin wrapper of :func:`geotts.testing.tiny_qwen_vl`: about 200k-250k parameters, built in well
    under a second; the folder loads with :func:`geotrain.load_model_and_processor` and with the
    geotts transformers backend. ``causal_lm`` builds a text-only Qwen2 causal LM with its tokenizer.

    Args:
        family: ``qwen2_vl``, ``qwen2_5_vl``, ``qwen3_vl`` or ``causal_lm``.
        out: Folder to write (created if missing).
        seed: Weight initialisation seed.

    Returns:
        The folder.

    Raises:
        ConfigError: for an unknown family.
        MissingExtraError: when the ``train`` extra is not installed.
    """
    from geotts import MissingExtraError as GeoTTSMissingExtra
    from geotts.testing import TINY_KINDS, tiny_qwen_vl

    if family not in TINY_KINDS:
        raise ConfigError(f"family {family!r} has no tiny builder; choose one of {sorted(TINY_KINDS)}")
    try:
        return tiny_qwen_vl(out, kind=family, seed=seed)
    except GeoTTSMissingExtra as exc:
        raise MissingExtraError(
            f'build_tiny_model needs the train extra: pip install "geotrain[train]" ({exc})'
        ) from exc
