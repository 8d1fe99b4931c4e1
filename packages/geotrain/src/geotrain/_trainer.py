"""The trainer: the joint NLL of the assistant turn as loss, perception and reasoning NLLs logged apart.

Why the plain ``Trainer`` and not TRL's ``SFTTrainer``: our collator does the part SFTTrainer adds
(chat rendering, assistant-only labels) and must also emit per-token span masks, which SFTTrainer's
vision collator does not; SFTTrainer's dataset preparation would be bypassed anyway. The ``Trainer``
gives the rest unchanged: checkpointing with optimizer/RNG state (exact resume), ``accelerate``
launches (DDP, DeepSpeed, FSDP2), PEFT models, token-count loss normalisation across accumulation
steps and processes.

This module imports torch and transformers at import time; the package facade imports it lazily.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
import transformers
from torch.nn import functional as F
from torch.utils.data import Dataset

from geotrain._checkpoints import latest_checkpoint
from geotrain._collate import SpanCollator
from geotrain._config import Family, LoraSettings, RunConfig
from geotrain._data import Example, budget, load_examples
from geotrain._deps import quiet_peft
from geotrain._evaluation import AccuracyCallback
from geotrain._result import TrainResult
from geotrain._tiny import FAMILY_CLASSES, image_only_processor_class
from geotrain.errors import ConfigError, TrainingError

__all__ = (
    "SpanLossTrainer",
    "apply_lora",
    "build_trainer",
    "freeze_vision",
    "load_model_and_processor",
    "lora_target_regex",
    "run_training",
    "to_training_arguments",
)

VISION_MODULE = "model.visual"
"""Where the vision tower (with its merger) lives in every supported family."""


class ExampleDataset(Dataset[Example]):
    """A list of examples as a map-style dataset (the collator tokenises)."""

    def __init__(self, examples: Sequence[Example]) -> None:
        self.examples = list(examples)

    def lengths(self) -> list[int]:
        """Characters of each example's prompt and target (a proxy of its token count)."""
        return [
            len(ex.target) + sum(len(p.text or "") for m in ex.messages for p in m.content)
            for ex in self.examples
        ]

    def __len__(self) -> int:
        return len(self.examples)

    def __getitem__(self, index: int) -> Example:
        return self.examples[index]


class LengthGroupedSampler(torch.utils.data.Sampler[int]):
    """Seeded order in which each run of ``50 x batch`` examples is sorted longest first.

    The order of epoch ``e`` depends only on ``(seed, e)``, so a resumed run sees the same batches.
    """

    def __init__(self, lengths: Sequence[int], batch_size: int, seed: int) -> None:
        self.lengths, self.group, self.seed, self.epoch = list(lengths), 50 * batch_size, seed, 0

    def set_epoch(self, epoch: int) -> None:
        """Select the epoch whose order is yielded next."""
        self.epoch = int(epoch)

    def __len__(self) -> int:
        return len(self.lengths)

    def __iter__(self) -> Any:
        import random

        order = list(range(len(self.lengths)))
        random.Random(self.seed * 100_003 + self.epoch).shuffle(order)
        for start in range(0, len(order), self.group):
            yield from sorted(order[start : start + self.group], key=lambda i: -self.lengths[i])


def load_processor(path: str | Path, family: Family) -> Any:
    """The processor of a model folder: ``AutoProcessor``, or the image-only class without torchvision.

    Text-only causal LMs (``causal_lm``) get their tokenizer.
    """
    if (
        family == "causal_lm"
    ):  # geotts's loader: a tokenizer saved with its own pre-tokenisation loads as saved
        from geotts.backends.transformers import load_processor as load_tokenizer

        return load_tokenizer(path)
    try:
        return transformers.AutoProcessor.from_pretrained(path)
    except (OSError, ImportError, AttributeError, ValueError):
        return image_only_processor_class(family).from_pretrained(path)


def family_of(path: str | Path) -> Family:
    """The family of a saved model folder, from its ``config.json`` model type."""
    config = transformers.AutoConfig.from_pretrained(path)
    for family in FAMILY_CLASSES:
        if family == config.model_type:
            return family
    if type(config) in transformers.AutoModelForCausalLM._model_mapping:
        return "causal_lm"
    raise ConfigError(
        f"model at {path} has type {config.model_type!r}; geotrain trains {sorted(FAMILY_CLASSES)} and causal LMs"
    )


def load_model_and_processor(
    path: str | Path, family: Family | None = None, *, dtype: str = "float32"
) -> Any:
    """Load a Qwen-VL model and its processor.

    Args:
        path: Model folder or hub id.
        family: The family (read from the folder's config when None).
        dtype: Torch dtype name of the weights.

    Returns:
        ``(model, processor)``.
    """
    fam = family or family_of(path)
    auto = (
        transformers.AutoModelForCausalLM if fam == "causal_lm" else transformers.AutoModelForImageTextToText
    )
    model = auto.from_pretrained(path, dtype=getattr(torch, dtype))
    return model, load_processor(path, fam)


def freeze_vision(model: Any) -> int:
    """Freeze the vision tower (``model.visual``, including its merger).

    Args:
        model: A Qwen-VL ``*ForConditionalGeneration``.

    Returns:
        The number of parameters frozen.
    """
    try:
        visual = model.get_submodule(VISION_MODULE)
    except AttributeError as exc:
        raise ConfigError(f"model has no vision tower at {VISION_MODULE!r}; cannot freeze it") from exc
    count = 0
    for param in visual.parameters():
        param.requires_grad_(False)
        count += param.numel()
    return count


def lora_target_regex(modules: Sequence[str], family: Family = "qwen2_vl") -> str:
    """A PEFT ``target_modules`` regex matching ``modules`` inside the language model only.

    Vision-language families anchor on ``language_model`` so the vision blocks are never adapted;
    a text-only causal LM has only a language model.
    """
    scope = ".*" if family == "causal_lm" else ".*language_model.*"
    return rf"{scope}\.({'|'.join(modules)})$"


def apply_lora(model: Any, settings: LoraSettings, family: Family = "qwen2_vl") -> Any:
    """Wrap ``model`` with LoRA adapters on the language model's linear layers.

    Args:
        model: The base model.
        settings: Rank, alpha, dropout, target module names.
        family: The model family (decides how the language model is located).

    Returns:
        The PEFT model (only the adapters are trainable).
    """
    import peft

    config = peft.LoraConfig(
        r=settings.r, lora_alpha=settings.alpha, lora_dropout=settings.dropout,
        target_modules=lora_target_regex(settings.target_modules, family), task_type="CAUSAL_LM",
    )  # fmt: skip
    with quiet_peft():
        return peft.get_peft_model(model, config)


def _world_size() -> int:
    return int(os.environ.get("WORLD_SIZE", "1"))


def _may_leave_parameters_unused(config: RunConfig) -> bool:
    """Whether a step can leave trainable parameters without a gradient (DDP must then search for them).

    A vision-language model trained in full has a trainable vision tower that text-only batches skip; a
    text-only causal LM, a frozen tower or LoRA adapters use every trainable parameter in every step, and
    the search would only cost an extra pass over the autograd graph per step.
    """
    return config.family != "causal_lm" and not config.freeze_vision and config.finetune == "full"


def to_training_arguments(config: RunConfig) -> Any:
    """The one conversion from :class:`RunConfig` to ``transformers.TrainingArguments``."""
    return transformers.TrainingArguments(
        output_dir=config.output_dir, num_train_epochs=config.epochs, max_steps=config.max_steps,
        learning_rate=config.learning_rate, lr_scheduler_type=config.lr_scheduler, warmup_steps=config.warmup_ratio,
        weight_decay=config.weight_decay, per_device_train_batch_size=config.per_device_batch_size,
        gradient_accumulation_steps=config.accumulation(_world_size()), bf16=config.precision == "bf16",
        fp16=config.precision == "fp16", activation_checkpointing=config.gradient_checkpointing, seed=config.seed,
        data_seed=config.seed, logging_steps=config.logging_steps, save_strategy="steps", save_steps=config.save_steps,
        save_total_limit=config.save_total_limit, report_to=list(config.report_to) or "none", use_cpu=config.use_cpu,
        remove_unused_columns=False, dataloader_num_workers=0, average_tokens_across_devices=True,
        ddp_find_unused_parameters=_may_leave_parameters_unused(config),
    )  # fmt: skip


SPAN_LOSSES = ("perception", "reasoning", "verdict")
"""The target spans whose mean NLL is logged (``<name>_loss``); the collator's ``<name>_mask`` marks them."""


class SpanLossTrainer(transformers.Trainer):
    """``Trainer`` with the joint assistant-turn NLL as loss and per-span NLLs in the logs.

    Logged keys besides ``loss``: ``perception_loss``, ``reasoning_loss`` and ``verdict_loss`` (mean NLL
    per token of each span since the last log, over all processes) when the data marks spans. With a
    ``verdict_weight`` other than 1, a verdict token's NLL counts that many times in the loss.
    """

    def __init__(
        self, *args: Any, group_by_length: bool = False, verdict_weight: float = 1.0, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.group_by_length = group_by_length
        self.verdict_weight = verdict_weight
        self.model_accepts_loss_kwargs = True  # count label tokens over accumulation steps and processes
        self._span_sums = torch.zeros(2 * len(SPAN_LOSSES), dtype=torch.float64)  # per span: nll, count

    def _get_train_sampler(self, train_dataset: Any = None) -> Any:
        dataset = self.train_dataset if train_dataset is None else train_dataset
        if not self.group_by_length or not isinstance(dataset, ExampleDataset):
            return super()._get_train_sampler(train_dataset)
        batch = self.args.train_batch_size * self.args.gradient_accumulation_steps
        return LengthGroupedSampler(dataset.lengths(), batch, self.args.seed)

    def compute_loss(
        self, model: Any, inputs: dict[str, Any], return_outputs: bool = False, num_items_in_batch: Any = None
    ) -> Any:
        """Summed token NLL of the labels over the accumulated batch's label-token count."""
        labels = inputs.pop("labels")
        masks = tuple(inputs.pop(f"{name}_mask") for name in SPAN_LOSSES)
        outputs = model(**inputs)
        target = labels[:, 1:]
        valid = target.ne(-100)
        logits = outputs.logits[:, :-1].float()
        nll = F.cross_entropy(logits.transpose(1, 2), target.clamp(min=0), reduction="none") * valid
        if self.verdict_weight != 1.0:
            verdict = masks[SPAN_LOSSES.index("verdict")][:, 1:]
            total = (nll * (1.0 + (self.verdict_weight - 1.0) * verdict)).sum()
        else:
            total = nll.sum()
        if num_items_in_batch is None:
            loss = total / valid.sum().clamp(min=1)
        else:
            loss = total / num_items_in_batch
            if self.args.average_tokens_across_devices and self.accelerator.num_processes > 1:
                loss = loss * self.accelerator.num_processes  # DDP averages gradients over processes
        if model.training:
            with torch.no_grad():
                for i, mask in enumerate(masks):
                    picked = mask[:, 1:] & valid
                    self._span_sums[2 * i] += float(nll[picked].sum())
                    self._span_sums[2 * i + 1] += float(picked.sum())
        return (loss, outputs) if return_outputs else loss

    def _load_from_checkpoint(self, resume_from_checkpoint: str, model: Any = None) -> None:
        """Reload full weights through ``from_pretrained``, which maps the saved key names back.

        transformers 5 saves Qwen-VL weights under their legacy names (``visual.*``, ``model.layers.*``);
        the stock ``Trainer`` loads them with a plain ``load_state_dict`` that matches no key and
        silently resumes from the initial weights. Adapters, FSDP and DeepSpeed checkpoints take the
        stock path.
        """
        target: Any = self.model if model is None else model
        folder = Path(resume_from_checkpoint)
        full = (folder / "model.safetensors").is_file() or (folder / "model.safetensors.index.json").is_file()
        if not full or self.is_fsdp_enabled or self.is_deepspeed_enabled or hasattr(target, "peft_config"):
            super()._load_from_checkpoint(resume_from_checkpoint, model)
            return
        saved = type(target).from_pretrained(folder, dtype=next(target.parameters()).dtype)
        target.load_state_dict(saved.state_dict(), strict=True)

    def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
        """Add the per-span losses (perception, reasoning, verdict) to every training-loss log."""
        if "loss" in logs:
            sums = self._span_sums.to(self.args.device)
            if self.accelerator.num_processes > 1:
                sums = self.accelerator.reduce(sums, reduction="sum")
            for i, name in enumerate(SPAN_LOSSES):
                nll, count = sums[2 * i], sums[2 * i + 1]
                if float(count) > 0:
                    logs[f"{name}_loss"] = round(float(nll) / float(count), 4)
            self._span_sums.zero_()
        super().log(logs, start_time)


def _model(config: RunConfig) -> tuple[Any, Any]:
    model, processor = load_model_and_processor(config.model_path, config.family)
    if config.freeze_vision:
        freeze_vision(model)
    if config.gradient_checkpointing:
        model.config.use_cache = False
    if config.finetune == "lora":
        model = apply_lora(model, config.lora, config.family)
    return model, processor


def _dataset(config: RunConfig, processor: Any) -> ExampleDataset:
    examples = load_examples(config.data, config.seed)
    if config.token_budget is not None:
        tok: Any = getattr(processor, "tokenizer", processor)

        def count(text: str) -> int:
            return len(tok(text, add_special_tokens=False)["input_ids"])

        examples = budget(examples, count, config.token_budget, config.seed)
    return ExampleDataset(examples)


def build_trainer(config: RunConfig, *, callbacks: Sequence[Any] = ()) -> SpanLossTrainer:
    """Wire model, processor, data and collator into a trainer (nothing is trained yet).

    Args:
        config: The run configuration.
        callbacks: Extra ``transformers.TrainerCallback`` objects.

    Returns:
        The trainer; ``trainer.train()`` runs it.
    """
    transformers.set_seed(config.seed)
    model, processor = _model(config)
    dataset = _dataset(config, processor)
    accuracy = None if config.eval is None else AccuracyCallback(config.eval, processor)
    trainer = SpanLossTrainer(
        model=model, args=to_training_arguments(config), train_dataset=dataset,
        data_collator=SpanCollator(processor, config.max_length), processing_class=processor,
        callbacks=[*callbacks, *([accuracy] if accuracy else [])], group_by_length=config.group_by_length,
        verdict_weight=config.verdict_weight,
    )  # fmt: skip
    if accuracy is not None:
        accuracy.trainer = trainer
    return trainer


def add_video_entry(folder: Path, family: Family) -> None:
    """Record the family's video processor in ``processor_config.json`` (for stock ``AutoProcessor``)."""
    path = folder / "processor_config.json"
    if family == "causal_lm" or not path.is_file():
        return
    saved = json.loads(path.read_text(encoding="utf-8"))
    if "video_processor" not in saved:
        patch = FAMILY_CLASSES[family][4]
        saved["video_processor"] = {"video_processor_type": FAMILY_CLASSES[family][3], "patch_size": patch,
                                    "merge_size": 2, "temporal_patch_size": 2}  # fmt: skip
        path.write_text(json.dumps(saved, indent=2), encoding="utf-8")


def run_training(
    config: RunConfig, *, resume_from: str | bool | None = None, callbacks: Sequence[Any] = ()
) -> TrainResult:
    """Train, then save the final model (or adapter) and processor under ``output_dir/final``.

    Args:
        config: The run configuration.
        resume_from: A checkpoint folder, True for the latest complete checkpoint in ``output_dir``, or None.
        callbacks: Extra ``transformers.TrainerCallback`` objects.

    Returns:
        Where things were written, the step count and the log history.
    """
    trainer = build_trainer(config, callbacks=callbacks)
    out = Path(config.output_dir)
    if resume_from is True:
        latest = latest_checkpoint(out, trainer.args.world_size)
        if latest is None:
            raise TrainingError(f"cannot resume: no complete checkpoint-* folder in {out}")
        resume_from = str(latest)
    trainer.train(resume_from_checkpoint=resume_from)
    final = out / "final"
    trainer.save_model(str(final))
    if trainer.is_world_process_zero():
        add_video_entry(final, config.family)
        (out / "geotrain_config.json").write_text(config.model_dump_json(indent=2), encoding="utf-8")
    return TrainResult.model_validate(
        {"output_dir": str(out), "final_dir": str(final), "global_step": trainer.state.global_step,
         "log_history": [_floats(x) for x in trainer.state.log_history]}, strict=False,
    )  # fmt: skip


def _floats(entry: dict[str, Any]) -> dict[str, float]:
    return {k: float(v) for k, v in entry.items() if isinstance(v, int | float)}
