"""Training on tiny models: loss falls, the right parameters move, LoRA round trip, exact resume, export."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("peft")

import geotrain  # noqa: E402
from geotrain import RunConfig, TrainingError, load_config  # noqa: E402

FAMILIES = ("qwen2_vl", "qwen2_5_vl", "qwen3_vl")
GPU = pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA GPU (bf16 / DeepSpeed / FSDP2 paths)"
)


def _config(model: Path, data: Path, out: Path, **extra: Any) -> RunConfig:
    values: dict[str, Any] = {
        "family": transformers.AutoConfig.from_pretrained(model).model_type, "model_path": str(model),
        "data": [{"path": str(data)}], "output_dir": str(out), "max_steps": 6, "learning_rate": 5e-3,
        "lr_scheduler": "constant", "logging_steps": 1, "save_steps": 1000, "use_cpu": True,
        "per_device_batch_size": 2, **extra,
    }  # fmt: skip
    return load_config(None, values)


def _losses(history: list[dict[str, Any]], key: str = "loss") -> list[float]:
    return [float(e[key]) for e in history if key in e]


@pytest.mark.parametrize("family", FAMILIES)
def test_full_finetune_with_frozen_vision(
    family: str, tiny: Callable[[str], Path], write_pa: Callable[[int], Path], tmp_path: Path
) -> None:
    trainer = geotrain.build_trainer(_config(tiny(family), write_pa(4), tmp_path, freeze_vision=True))
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    trainer.train()
    history = trainer.state.log_history
    losses = _losses(history)
    assert len(losses) == 6 and sum(losses[-2:]) < sum(losses[:2])
    perception, reasoning = _losses(history, "perception_loss"), _losses(history, "reasoning_loss")
    assert len(perception) == len(reasoning) == 6 and perception != reasoning
    assert perception[-1] < perception[0] and reasoning[-1] < reasoning[0]
    vision = {n for n in before if ".visual." in n}
    assert vision, "the vision tower was not found"
    for name, param in trainer.model.named_parameters():
        if name in vision:
            assert not param.requires_grad and torch.equal(param, before[name]), name
        else:
            assert param.requires_grad and not torch.equal(param, before[name]), f"{name} did not change"


@pytest.mark.filterwarnings("ignore:.*is_gradient_checkpointing:FutureWarning")
def test_lora_adapters_save_reload_and_merge(
    tiny: Callable[[str], Path], write_pa: Callable[[int], Path], tmp_path: Path
) -> None:
    import peft

    model_dir = tiny("qwen2_5_vl")
    cfg = _config(model_dir, write_pa(4), tmp_path / "run", finetune="lora", lora={"r": 4, "alpha": 8}, max_steps=4,
                  learning_rate=2e-2)  # fmt: skip
    trainer = geotrain.build_trainer(cfg)
    trainable = {n for n, p in trainer.model.named_parameters() if p.requires_grad}
    assert trainable and all("lora_" in n and "language_model" in n for n in trainable)
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters() if p.requires_grad}
    trainer.train()
    assert all(not torch.equal(p, before[n]) for n, p in trainer.model.named_parameters() if p.requires_grad)
    final = tmp_path / "run" / "final"
    trainer.save_model(str(final))
    assert (final / "adapter_config.json").is_file() and (final / "adapter_model.safetensors").is_file()

    batch = trainer.data_collator(list(trainer.train_dataset)[:2])
    inputs = {k: v for k, v in batch.items() if k not in ("labels", "perception_mask", "reasoning_mask")}
    trainer.model.eval()
    with torch.no_grad():
        trained = trainer.model(**inputs).logits
        base = transformers.AutoModelForImageTextToText.from_pretrained(model_dir)
        base_logits = base(**inputs).logits
        reloaded = peft.PeftModel.from_pretrained(base, str(final)).eval()(**inputs).logits
        merged_dir = geotrain.export_model(final, tmp_path / "merged")
        merged = transformers.AutoModelForImageTextToText.from_pretrained(merged_dir).eval()
        merged_logits = merged(**inputs).logits
    assert not any("lora" in n for n, _ in merged.named_parameters())
    assert torch.allclose(reloaded, trained, atol=1e-5)
    assert torch.allclose(merged_logits, trained, atol=1e-4)
    assert not torch.allclose(base_logits, trained, atol=1e-3)


class _Crash(transformers.TrainerCallback):
    """Kills the run (raises) when step ``at`` is about to start, after its checkpoint was written."""

    def __init__(self, at: int) -> None:
        self.at = at

    def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if state.global_step == self.at:
            raise KeyboardInterrupt("simulated kill")


def test_resume_after_kill_matches_uninterrupted_run(
    tiny: Callable[[str], Path], write_pa: Callable[[int], Path], tmp_path: Path
) -> None:
    model, data = tiny("qwen2_vl"), write_pa(6)
    extra: dict[str, Any] = {"max_steps": 5, "save_steps": 2, "lr_scheduler": "cosine", "warmup_ratio": 0.2,
                             "learning_rate": 1e-2}  # fmt: skip
    straight = geotrain.train(_config(model, data, tmp_path / "a", **extra))
    killed = _config(model, data, tmp_path / "b", **extra)
    with pytest.raises(KeyboardInterrupt):
        geotrain.train(killed, callbacks=[_Crash(at=3)])
    assert sorted(p.name for p in (tmp_path / "b").glob("checkpoint-*")) == ["checkpoint-2"]
    # a save cut short (no trainer_state.json yet) is passed over: the run resumes from checkpoint-2
    shutil.copytree(tmp_path / "b" / "checkpoint-2", tmp_path / "b" / "checkpoint-4")
    (tmp_path / "b" / "checkpoint-4" / "trainer_state.json").unlink()
    assert geotrain.latest_checkpoint(tmp_path / "b") == tmp_path / "b" / "checkpoint-2"
    resumed = geotrain.train(killed, resume_from=True)
    expected = {int(e["step"]): e["loss"] for e in straight.log_history if "loss" in e}
    got = {int(e["step"]): e["loss"] for e in resumed.log_history if "loss" in e}
    assert got[3] == pytest.approx(expected[3], abs=1e-6)
    assert [got[s] for s in (4, 5)] == pytest.approx([expected[s] for s in (4, 5)], abs=1e-5)
    with pytest.raises(TrainingError, match="no complete checkpoint"):
        geotrain.train(_config(model, data, tmp_path / "c"), resume_from=True)


def test_export_answers_through_geotts_backend_and_cg_mte(
    tiny: Callable[[str], Path], write_pa: Callable[[int], Path], tmp_path: Path
) -> None:
    from geotts import (
        CGMTEConfig,
        ConsensusEnsemble,
        LastNumberExtractor,
        Problem,
        SamplingParams,
        run_strategy,
    )
    from geotts.backends.transformers import TransformersSampler

    data = write_pa(4)
    result = geotrain.train(
        _config(tiny("qwen2_5_vl"), data, tmp_path / "run", max_steps=3, freeze_vision=True)
    )
    assert result.global_step == 3 and (Path(result.output_dir) / "geotrain_config.json").is_file()
    out = geotrain.export_model(result.final_dir, tmp_path / "export")
    sampler = TransformersSampler.from_pretrained(out)
    image = data.parent / "images" / "d0.png"
    problem = Problem(id="p0", question="Find the length of AB.", images=(image,))
    config = CGMTEConfig(depth=2, params=SamplingParams(temperature=1.0, max_tokens=12, seed=0))
    (decision,) = run_strategy(ConsensusEnsemble(config), sampler, [problem], LastNumberExtractor())
    assert 1 <= decision.depth <= 2 and decision.samples >= 4  # four trace types were sampled and voted on


def test_token_budget_trims_the_mixture(
    tiny: Callable[[str], Path], write_pa: Callable[[int], Path], tmp_path: Path
) -> None:
    model, data = tiny("qwen2_vl"), write_pa(8)
    full = geotrain.build_trainer(_config(model, data, tmp_path / "a"))
    tok = full.processing_class.tokenizer
    sizes = sorted(len(tok(e.target, add_special_tokens=False)["input_ids"]) for e in full.train_dataset)
    budgeted = geotrain.build_trainer(_config(model, data, tmp_path / "b", token_budget=sum(sizes[:3])))
    kept = list(budgeted.train_dataset)
    assert len(full.train_dataset) == 8 and 1 <= len(kept) <= 3
    assert sum(len(tok(e.target, add_special_tokens=False)["input_ids"]) for e in kept) <= sum(sizes[:3])


def test_export_rejects_a_folder_without_a_model(tmp_path: Path) -> None:
    with pytest.raises(TrainingError, match="neither a model"):
        geotrain.export_model(tmp_path, tmp_path / "out")


@GPU
def test_bf16_training_on_gpu(
    tiny: Callable[[str], Path], write_pa: Callable[[int], Path], tmp_path: Path
) -> None:
    cfg = _config(
        tiny("qwen2_5_vl"), write_pa(4), tmp_path, precision="bf16", use_cpu=False, freeze_vision=True
    )
    result = geotrain.train(cfg)
    losses = result.losses()
    assert sum(losses[-2:]) < sum(losses[:2])


def test_accuracy_is_evaluated_during_training(
    tiny: Callable[[str], Path], write_pa: Callable[[int], Path], tmp_path: Path
) -> None:
    held_out = write_pa(2)
    settings = {"data": {"path": str(held_out)}, "steps": 2, "max_new_tokens": 8}
    result = geotrain.train(_config(tiny("qwen2_vl"), write_pa(4), tmp_path, max_steps=3, eval=settings))
    evals = [e for e in result.log_history if "eval_accuracy" in e]
    assert [int(e["step"]) for e in evals] == [2, 3]  # every 2 steps, and after the last
    assert all(0.0 <= e["eval_accuracy"] <= e["eval_executed"] <= 1.0 for e in evals)


@pytest.mark.filterwarnings("ignore:.*is_gradient_checkpointing:FutureWarning")
def test_text_only_causal_lm_on_chat_records(tmp_path: Path) -> None:
    import json

    from geotts import ChatMessage, GenerationRequest, SamplingParams
    from geotts.backends.transformers import TransformersSampler

    model = geotrain.build_tiny_model("causal_lm", tmp_path / "model")
    rows = [
        {"id": f"c{i}", "messages": [
            {"role": "user", "content": [{"type": "text", "text": f"triangle A B C; AB = {i + 3}. Constructions?"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "construct D: midpoint A B"}]}]}
        for i in range(4)
    ]  # fmt: skip
    data = tmp_path / "chat.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    cfg = load_config(None, {
        "family": "causal_lm", "model_path": str(model), "data": [{"path": str(data), "kind": "chat"}],
        "output_dir": str(tmp_path / "run"), "max_steps": 5, "learning_rate": 5e-3, "logging_steps": 1,
        "use_cpu": True, "per_device_batch_size": 2, "finetune": "lora",
    })  # fmt: skip
    trainer = geotrain.build_trainer(cfg)
    batch = trainer.data_collator(list(trainer.train_dataset)[:1])
    labels = batch["labels"][0]
    assert trainer.processing_class.decode(labels[labels != -100]) == "construct D: midpoint A B<|im_end|>\n"
    assert not batch["perception_mask"].any() and "pixel_values" not in batch
    result = geotrain.train(cfg)
    losses = result.losses()
    assert sum(losses[-2:]) < sum(losses[:2])
    out = geotrain.export_model(result.final_dir, tmp_path / "export")
    sampler = TransformersSampler.from_pretrained(out)
    question = "triangle A B C; AB = 4. Constructions?"
    greedy = SamplingParams(temperature=0.0, max_tokens=6)
    # geotts sends image-less chat content as a plain string, which the text-only template renders
    request = GenerationRequest(messages=(ChatMessage(role="user", content=question),), params=greedy)
    ((completion,),) = sampler.generate([request])
    assert completion.num_tokens is not None and completion.num_tokens >= 1
    chat = [{"role": "user", "content": question}]
    prompt = sampler.tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
    assert sampler.generate([GenerationRequest(prompt=prompt, params=greedy)]) == [[completion]]
