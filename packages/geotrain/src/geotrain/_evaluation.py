"""Accuracy during training: greedy answers to held-out PA problems, executed with geodsl.

Every ``eval.steps`` optimizer steps (and after the last), each held-out record's prompt is answered
greedily, the reasoning part of the answer is executed as the record's trace type (programs on
geodsl's executor, PAL scripts in a geodsl sandbox) and compared with the stored answer. Logged:
``eval_accuracy`` (correct / records), ``eval_executed`` (answers that ran to a value / records).
Every process evaluates the same records (so ZeRO-3 and FSDP, which need all ranks in each forward,
work); this costs duplicate work on many GPUs, so keep the held-out set small.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import torch
import transformers

from geotrain._collate import chat_prompt, load_images
from geotrain._config import EvalSettings
from geotrain._data import PARecord, load_pa_records, pa_example
from geotrain._score import score

__all__ = ("AccuracyCallback",)


class AccuracyCallback(transformers.TrainerCallback):
    """Logs ``eval_accuracy`` and ``eval_executed`` through the trainer it is bound to."""

    def __init__(self, settings: EvalSettings, processor: Any) -> None:
        """Read the held-out records.

        Args:
            settings: What to evaluate and how often.
            processor: The model's processor.
        """
        records = load_pa_records(settings.data.path)
        self.records: list[PARecord] = records[: settings.limit] if settings.limit else records
        self.folder = Path(settings.data.path).parent
        self.settings = settings
        self.processor = processor
        self.trainer: Any = None
        self._last = -1

    def _answer(self, model: Any, record: PARecord) -> str | None:
        ex = pa_example(record, self.folder)
        images = load_images(ex)
        prompt = chat_prompt(self.processor, ex)
        enc = (
            self.processor(text=[prompt], images=images, return_tensors="pt")
            if images
            else self.processor(text=[prompt], return_tensors="pt")
        )
        enc = enc.to(next(model.parameters()).device)
        out = model.generate(**enc, max_new_tokens=self.settings.max_new_tokens, do_sample=False)
        new = out[0, enc["input_ids"].shape[1] :].tolist()
        eos = model.generation_config.eos_token_id
        stops = set(eos if isinstance(eos, list) else [eos])
        if len(new) >= self.settings.max_new_tokens and not stops & set(new):
            return None  # cut off: counts as wrong
        return self.processor.tokenizer.decode(new, skip_special_tokens=True)

    def evaluate(self, model: Any) -> dict[str, float]:
        """Answer every held-out record greedily and score the answers."""
        from geodsl.sandbox import Sandbox, SandboxLimits

        needs_sandbox = any(r.trace_type in ("pal", "cot_pal") for r in self.records)
        limits = SandboxLimits(
            wall_seconds=self.settings.sandbox_timeout, cpu_seconds=self.settings.sandbox_timeout
        )
        executed = correct = 0
        was_training = model.training
        model.eval()
        with contextlib.ExitStack() as stack:
            sandbox = stack.enter_context(contextlib.closing(Sandbox(1, limits))) if needs_sandbox else None
            with torch.no_grad():
                for record in self.records:
                    text = self._answer(model, record)
                    if text is None:
                        continue
                    ran, ok = score(text, record.trace_type, record.answer, sandbox=sandbox,
                                    tolerance=self.settings.tolerance)  # fmt: skip
                    executed += ran
                    correct += ok
        model.train(was_training)
        n = len(self.records)
        return {"eval_accuracy": correct / n, "eval_executed": executed / n}

    def _run(self, step: int) -> None:
        if self.trainer is None or step == self._last:
            return
        self._last = step
        self.trainer.log(self.evaluate(self.trainer.model))

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Evaluate every ``steps`` optimizer steps."""
        if state.global_step % self.settings.steps == 0:
            self._run(state.global_step)

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Evaluate after the last step (unless that step was just evaluated)."""
        self._run(state.global_step)
