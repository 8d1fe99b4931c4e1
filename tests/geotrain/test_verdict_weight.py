"""Critique records: verdict words marked without changing the tokens, and their weight in the loss."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

import geotrain  # noqa: E402
from geoprm import Critique, StepCritique, format_critique  # noqa: E402
from geoprm.data import SFTRecord, write_records  # noqa: E402
from geotrain import DataSource, load_config, load_examples  # noqa: E402
from geotrain._collate import SpanCollator  # noqa: E402


def _critique(k: int) -> Critique:
    good = StepCritique(index=1, intent=f"Add {k} and 4.", image_analysis=f"{k} and 4 are marked.",
                        image_judgement="Correct", logic_analysis="The sum is right.", logic_judgement="Correct",
                        judgement="Correct")  # fmt: skip
    bad = StepCritique(index=2, intent="Halve it.", image_analysis="The figure has no such value.",
                       image_judgement="Incorrect", logic_analysis="The division is right.",
                       logic_judgement="Correct", judgement="Incorrect")  # fmt: skip
    return Critique(steps=(good, bad), correction=f"Multiple {k} 4 V1")


def _records(tmp_path: Path, verdict_first: bool, n: int = 4) -> Path:
    rows = [
        SFTRecord(
            id=f"q{k}",
            images=(),
            prompt=f"Problem {k}.\nStep 1: Add {k} 4\nStep 2: Half V0",
            completion=format_critique(_critique(k), verdict_first=verdict_first),
            has_error=True,
            first_error=2,
            source="test",
        )
        for k in range(3, 3 + n)
    ]
    return write_records(rows, tmp_path / f"prm-{verdict_first}.jsonl")


def _config(model: Path, data: Path, out: Path, **extra: Any) -> geotrain.RunConfig:
    return load_config(None, {
        "task": "prm", "family": "causal_lm", "model_path": str(model), "data": [{"path": str(data), "kind": "prm"}],
        "output_dir": str(out), "max_steps": 4, "learning_rate": 5e-3, "lr_scheduler": "constant",
        "logging_steps": 1, "save_steps": 1000, "use_cpu": True, "per_device_batch_size": 2, **extra,
    })  # fmt: skip


@pytest.mark.parametrize("verdict_first", [False, True])
def test_verdict_tokens_are_marked_and_tokenised_as_in_the_whole_text(
    tmp_path: Path, verdict_first: bool
) -> None:
    model = geotrain.build_tiny_model("causal_lm", tmp_path / "model")
    processor = geotrain.load_model_and_processor(model, "causal_lm")[1]
    examples = load_examples([DataSource(path=str(_records(tmp_path, verdict_first)), kind="prm")], seed=0)
    collate = SpanCollator(processor, max_length=512)
    batch = collate(examples)
    plain = collate([ex.model_copy(update={"verdict_spans": ()}) for ex in examples])
    assert torch.equal(batch["input_ids"], plain["input_ids"])  # cutting at the verdicts changes no token
    assert not plain["verdict_mask"].any()
    for row, ex in enumerate(examples):
        marked = [ex.target[a:b] for a, b in ex.verdict_spans]
        expected = [" Correct"] * 3 + [" Incorrect", " Correct", " Incorrect"]
        if verdict_first:  # per step: the final verdict, then figure and logic
            expected = [" Correct"] * 3 + [" Incorrect", " Incorrect", " Correct"]
        assert marked == expected
        ids = batch["input_ids"][row][batch["verdict_mask"][row]]
        assert processor.decode(ids) == "".join(expected)
        assert not (batch["verdict_mask"][row] & (batch["labels"][row] == -100)).any()


def test_verdict_weight_scales_the_verdict_tokens_in_the_loss(tmp_path: Path) -> None:
    model = geotrain.build_tiny_model("causal_lm", tmp_path / "model")
    data = _records(tmp_path, verdict_first=True)
    trainer = geotrain.build_trainer(_config(model, data, tmp_path / "run", verdict_weight=5.0))
    batch = trainer.data_collator(list(trainer.train_dataset)[:2])
    trainer.model.eval()
    with torch.no_grad():
        logits = trainer.model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        target = batch["labels"][:, 1:]
        valid = target.ne(-100)
        nll = (
            torch.nn.functional.cross_entropy(
                logits[:, :-1].float().transpose(1, 2), target.clamp(min=0), reduction="none"
            )
            * valid
        )
        verdict = batch["verdict_mask"][:, 1:]
        expected = (nll.sum() + 4.0 * nll[verdict].sum()) / valid.sum()
        got = trainer.compute_loss(trainer.model, dict(batch))
        plain = geotrain.build_trainer(_config(model, data, tmp_path / "plain")).compute_loss(
            trainer.model, dict(batch)
        )
    assert verdict.sum() >= 12 and torch.allclose(got, expected, rtol=1e-5)  # 2 records, 6 verdict words each
    assert torch.allclose(plain, nll.sum() / valid.sum(), rtol=1e-5) and got > plain


def test_training_logs_the_verdict_loss(tmp_path: Path) -> None:
    model = geotrain.build_tiny_model("causal_lm", tmp_path / "model")
    cfg = _config(
        model, _records(tmp_path, verdict_first=False), tmp_path / "run", verdict_weight=3.0, max_steps=6
    )
    result = geotrain.train(cfg)
    verdict = result.losses("verdict_loss")
    assert len(verdict) == 6 and verdict[-1] < verdict[0]
    assert not result.losses("perception_loss")  # critiques mark no perception span
