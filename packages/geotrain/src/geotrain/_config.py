"""The run configuration: one frozen model, loaded from YAML (optionally on top of a preset) plus overrides.

Layering is ``preset < file < overrides``: a YAML file may name a ``preset`` whose values it then
overrides, and ``key=value`` overrides (dotted keys for nested fields, values parsed as YAML
scalars) apply last. Presets ship as package data (``geotrain/presets/*.yaml``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from geotrain.errors import ConfigError

__all__ = (
    "DataSource",
    "EvalSettings",
    "Family",
    "LoraSettings",
    "RunConfig",
    "Task",
    "available_presets",
    "load_config",
    "preset",
)

Family = Literal["qwen2_vl", "qwen2_5_vl", "qwen3_vl", "causal_lm"]
"""The model families geotrain trains: three Qwen-VL generations, and text-only causal LMs (``causal_lm``,
e.g. the auxiliary-construction model: formal problem -> constructions)."""
Task = Literal["pa_sft", "prm"]
"""``pa_sft``: perception-augmented SFT on PA records; ``prm``: GM-PRM critique training on geoprm records."""
DataKind = Literal["pa", "prm", "chat"]
"""Record formats: ``pa`` (MTS pipeline PA records), ``prm`` (geoprm ``SFTRecord``), ``chat`` (plain
conversations ending with the assistant target, with or without images)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class DataSource(_Frozen):
    """One JSON Lines file of training records and its weight in the mixture."""

    path: str
    """The JSONL file; image paths in its records are relative to its folder."""
    kind: DataKind = "pa"
    """The record format."""
    weight: Annotated[float, Field(gt=0)] = 1.0
    """Passes over this source per epoch: 1 uses every record once, 2 twice, 0.5 a seeded half."""


class LoraSettings(_Frozen):
    """PEFT LoRA settings (used when ``finetune`` is ``lora``)."""

    r: Annotated[int, Field(ge=1)] = 16
    """Adapter rank."""
    alpha: Annotated[int, Field(ge=1)] = 32
    """Scaling numerator (the update is scaled by alpha / r)."""
    dropout: Annotated[float, Field(ge=0, lt=1)] = 0.05
    """Dropout on the adapter input."""
    target_modules: tuple[str, ...] = (
        "q_proj",
        "k_proj",
        "v_proj",
        "o_proj",
        "gate_proj",
        "up_proj",
        "down_proj",
    )
    """Linear layer names to adapt, matched only inside the language model (never the vision blocks)."""


class EvalSettings(_Frozen):
    """Evaluation during training: greedy decoding on held-out PA records, answers executed with geodsl."""

    data: DataSource
    """The held-out PA records (kind ``pa``)."""
    steps: Annotated[int, Field(ge=1)] = 500
    """Evaluate every this many optimizer steps, and after the last one."""
    limit: Annotated[int, Field(ge=1)] | None = None
    """Evaluate on the first ``limit`` records only (None: all)."""
    max_new_tokens: Annotated[int, Field(ge=1)] = 512
    """Generation length cap; a cut-off answer counts as wrong."""
    tolerance: Annotated[float, Field(ge=0)] = 1e-2
    """Relative (and absolute) tolerance of the answer comparison."""
    sandbox_timeout: Annotated[float, Field(gt=0)] = 10.0
    """Wall-clock and CPU limit per PAL script, seconds."""


class RunConfig(_Frozen):
    """Everything one training run needs; converted to ``transformers.TrainingArguments`` in one place."""

    task: Task = "pa_sft"
    """What is trained."""
    family: Family
    """The model family (selects the processor class and the vision-tower location)."""
    model_path: str
    """Folder (or hub id) of the base model and its processor."""
    data: Annotated[tuple[DataSource, ...], Field(min_length=1)]
    """The training sources and their mixture weights."""
    output_dir: str
    """Folder for checkpoints, logs and the final model."""
    token_budget: Annotated[int, Field(ge=1)] | None = None
    """Cap on the mixture's target tokens per epoch (records are kept in seeded order until the
    budget is reached), to compare mixtures at a matched budget; None keeps every record."""
    finetune: Literal["full", "lora"] = "full"
    """Full fine-tuning or LoRA adapters on the language model."""
    lora: LoraSettings = LoraSettings()
    """LoRA settings."""
    freeze_vision: bool = False
    """Freeze the vision tower (and its merger into the language model)."""
    max_length: Annotated[int, Field(ge=16)] = 1024
    """Longest tokenised example (prompt with image tokens + target); longer targets are truncated."""
    epochs: Annotated[float, Field(gt=0)] = 1.0
    """Training epochs."""
    max_steps: int = -1
    """Optimizer steps to run; a positive value overrides ``epochs``."""
    learning_rate: Annotated[float, Field(gt=0)] = 2e-5
    """Peak learning rate."""
    lr_scheduler: Literal["cosine", "linear", "constant", "constant_with_warmup"] = "cosine"
    """Decay after warmup."""
    warmup_ratio: Annotated[float, Field(ge=0, lt=1)] = 0.0
    """Share of the steps spent in linear warmup."""
    weight_decay: Annotated[float, Field(ge=0)] = 0.0
    """AdamW weight decay."""
    per_device_batch_size: Annotated[int, Field(ge=1)] = 1
    """Examples per device per micro-step."""
    gradient_accumulation_steps: Annotated[int, Field(ge=1)] = 1
    """Micro-steps per optimizer step (ignored when ``effective_batch_size`` is set)."""
    effective_batch_size: Annotated[int, Field(ge=1)] | None = None
    """Examples per optimizer step over all devices; when set, the accumulation is derived from it,
    the per-device batch and the number of processes (it must divide evenly)."""
    precision: Literal["fp32", "bf16", "fp16"] = "fp32"
    """Training precision (bf16/fp16 are mixed-precision autocast and need a GPU)."""
    verdict_weight: Annotated[float, Field(gt=0)] = 1.0
    """Weight of a verdict token's loss relative to the target's other tokens (critique records mark
    their verdict words); 1.0 is the plain token mean. The loss stays normalised by the token count."""
    group_by_length: bool = False
    """Batch examples of similar length together (seeded shuffles of 50-batch groups, each sorted by
    length): less padding when short and long traces mix, the same examples per epoch."""
    gradient_checkpointing: bool = False
    """Recompute activations in the backward pass to save memory."""
    seed: int = 0
    """Seed of weights' dropout, data order and mixture sampling."""
    logging_steps: Annotated[int, Field(ge=1)] = 10
    """Log losses (joint, perception, reasoning) every this many optimizer steps."""
    save_steps: Annotated[int, Field(ge=1)] = 500
    """Write a checkpoint every this many optimizer steps."""
    save_total_limit: Annotated[int, Field(ge=1)] | None = None
    """Keep at most this many checkpoints (None keeps all)."""
    use_cpu: bool = False
    """Train on CPU even when a GPU is present."""
    eval: EvalSettings | None = None
    """Accuracy evaluation during training (logged as ``eval_accuracy`` and ``eval_executed``)."""
    report_to: tuple[str, ...] = ()
    """Experiment trackers (``tensorboard``, ``wandb``...); none by default."""

    @model_validator(mode="after")
    def _check(self) -> RunConfig:
        if self.precision != "fp32" and self.use_cpu:
            raise ValueError(f"precision {self.precision!r} needs a GPU; use fp32 with use_cpu")
        if self.task == "prm" and any(s.kind != "prm" for s in self.data):
            raise ValueError("task 'prm' trains on geoprm records only (data kind 'prm')")
        if self.verdict_weight != 1.0 and self.task != "prm":
            raise ValueError("verdict_weight weights the verdicts of critiques: it needs task 'prm'")
        if self.family == "causal_lm" and self.freeze_vision:
            raise ValueError("freeze_vision needs a vision model; family 'causal_lm' is text-only")
        if self.eval is not None and self.eval.data.kind != "pa":
            raise ValueError(
                "eval.data must hold PA records (kind 'pa'): their answers are executed with geodsl"
            )
        return self

    def accumulation(self, world_size: int) -> int:
        """The gradient accumulation steps for ``world_size`` processes.

        Args:
            world_size: Number of data-parallel processes.

        Returns:
            ``effective_batch_size / (per_device_batch_size * world_size)`` when an effective batch is
            set, else ``gradient_accumulation_steps``.

        Raises:
            ConfigError: when the effective batch does not divide evenly.
        """
        if self.effective_batch_size is None:
            return self.gradient_accumulation_steps
        per_step = self.per_device_batch_size * world_size
        if self.effective_batch_size % per_step:
            raise ConfigError(
                f"effective_batch_size {self.effective_batch_size} is not a multiple of per_device_batch_size "
                f"{self.per_device_batch_size} x {world_size} processes"
            )
        return self.effective_batch_size // per_step


def available_presets() -> tuple[str, ...]:
    """Names of the shipped presets (``pa_sft_2b``, ``gm_prm``, ...)."""
    folder = resources.files("geotrain") / "presets"
    return tuple(sorted(p.name.removesuffix(".yaml") for p in folder.iterdir() if p.name.endswith(".yaml")))


def _yaml(text: str, where: str) -> Any:
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{where}: not valid YAML: {exc}") from exc


def preset(name: str) -> dict[str, Any]:
    """The values of a shipped preset (a partial configuration).

    Args:
        name: A name from :func:`available_presets`.

    Returns:
        The preset's fields as a plain mapping.

    Raises:
        ConfigError: when there is no such preset.
    """
    if name not in available_presets():
        raise ConfigError(f"unknown preset {name!r}; choose one of {list(available_presets())}")
    text = (resources.files("geotrain") / "presets" / f"{name}.yaml").read_text(encoding="utf-8")
    values = _yaml(text, f"preset {name}")
    return dict(values)


def _set(tree: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, leaf = dotted.split(".")
    node = tree
    for key in parents:
        child = node.get(key)
        if not isinstance(child, dict):
            child = {}
            node[key] = child
        node = child
    node[leaf] = value


def _parse_override(item: str) -> tuple[str, Any]:
    key, sep, raw = item.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"override {item!r} is not of the form key=value")
    value = _yaml(raw, f"override {item!r}") if raw.strip() else None
    return key.strip(), value


def load_config(
    path: str | Path | None = None,
    overrides: Sequence[str] | Mapping[str, Any] = (),
    *,
    base_preset: str | None = None,
) -> RunConfig:
    """Load a run configuration: preset, then YAML file, then overrides.

    Args:
        path: A YAML file (may name a ``preset``); None to build from the preset and overrides alone.
        overrides: ``key=value`` strings (dotted keys, YAML-parsed values) or a mapping of dotted keys.
        base_preset: A preset to start from when the file does not name one.

    Returns:
        The validated configuration.

    Raises:
        ConfigError: for a missing or malformed file, an unknown preset or an invalid field, naming it.
    """
    values: dict[str, Any] = {}
    if path is not None:
        file = Path(path)
        if not file.is_file():
            raise ConfigError(f"config file {file} does not exist")
        loaded = _yaml(file.read_text(encoding="utf-8"), str(file)) or {}
        if not isinstance(loaded, dict):
            raise ConfigError(f"{file}: the top level must be a mapping of fields")
        values = {str(k): v for k, v in loaded.items()}
    name = values.pop("preset", None) or base_preset
    merged: dict[str, Any] = {**(preset(str(name)) if name else {}), **values}
    pairs = overrides.items() if isinstance(overrides, Mapping) else map(_parse_override, overrides)
    for key, value in pairs:
        _set(merged, key, value)
    try:
        return RunConfig.model_validate(merged, strict=False)
    except ValidationError as exc:
        where = f"config {path}" if path is not None else "config"
        raise ConfigError(f"{where} is invalid: {exc}") from exc
