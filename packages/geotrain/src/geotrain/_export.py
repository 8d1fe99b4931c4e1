"""Export: merge LoRA adapters (if any) into the base weights and write a self-contained model folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from geotrain._deps import quiet_peft, require_train
from geotrain.errors import TrainingError

__all__ = ("export_model",)

_PROCESSOR_FILES = (
    "processor_config.json", "preprocessor_config.json", "tokenizer.json", "tokenizer_config.json",
    "chat_template.jinja", "chat_template.json", "special_tokens_map.json", "vocab.json", "merges.txt",
)  # fmt: skip


def _base_of(source: Path, base_model: str | None) -> str:
    if base_model is not None:
        return base_model
    config = json.loads((source / "adapter_config.json").read_text(encoding="utf-8"))
    base = config.get("base_model_name_or_path")
    if not base:
        raise TrainingError(f"{source}/adapter_config.json names no base model; pass base_model")
    return str(base)


def _auto(path: str | Path) -> Any:
    from geotrain._trainer import family_of

    transformers = require_train("transformers")
    if family_of(path) == "causal_lm":
        return transformers.AutoModelForCausalLM
    return transformers.AutoModelForImageTextToText


def _load(source: Path, base_model: str | None) -> Any:
    if (source / "adapter_config.json").is_file():
        peft = require_train("peft")
        base_path = _base_of(source, base_model)
        base = _auto(base_path).from_pretrained(base_path)
        with quiet_peft():
            return peft.PeftModel.from_pretrained(base, str(source)).merge_and_unload()
    if (source / "config.json").is_file():
        return _auto(source).from_pretrained(source)
    raise TrainingError(
        f"{source} holds neither a model (config.json) nor a LoRA adapter (adapter_config.json)"
    )


def export_model(source: str | Path, out: str | Path, *, base_model: str | None = None) -> Path:
    """Write a merged, self-contained model folder (weights + processor) from a run's output.

    The folder loads with ``AutoModelForImageTextToText`` and the geotts transformers backend; its
    ``processor_config.json`` records the video processor too, so stock ``AutoProcessor`` (and vLLM)
    load it where torchvision is installed.

    Args:
        source: A final or checkpoint folder: full weights, or a LoRA adapter.
        out: The folder to write.
        base_model: The adapter's base model (default: the one its ``adapter_config.json`` names).

    Returns:
        The written folder.

    Raises:
        TrainingError: when ``source`` is not a model or adapter folder.
        MissingExtraError: without the ``train`` extra.
    """
    from geotrain._trainer import add_video_entry, family_of

    src, dst = Path(source), Path(out)
    if not src.is_dir():
        raise TrainingError(f"export source {src} is not a folder")
    model = _load(src, base_model)
    dst.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(dst)
    copied = [name for name in _PROCESSOR_FILES if (src / name).is_file()]
    if not copied:
        raise TrainingError(f"{src} has no processor files to export")
    for name in copied:
        shutil.copy2(src / name, dst / name)
    add_video_entry(dst, family_of(dst))
    return dst
