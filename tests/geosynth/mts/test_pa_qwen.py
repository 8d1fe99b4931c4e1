"""PA records through a real Qwen2-VL processor's chat template (a tiny one, built offline)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from geosynth.mts import MTSConfig, run_mts


@pytest.mark.slow
def test_a_qwen_vl_processor_renders_pa_records_and_the_spans_map_to_tokens(
    tmp_path: Path, mini_dataset: Path
) -> None:
    testing = pytest.importorskip("geotts.testing")
    pytest.importorskip("transformers")
    pytest.importorskip("torch")
    from geotts.backends.transformers import _load_processor

    processor = _load_processor(testing.tiny_qwen_vl(tmp_path / "tiny"))
    run_mts(mini_dataset, tmp_path / "out", MTSConfig(mixtures=False))
    record = json.loads((tmp_path / "out" / "pa" / "pal.jsonl").read_text().splitlines()[0])
    text = processor.apply_chat_template(record["messages"], tokenize=False)
    assert text.count("<|vision_start|><|image_pad|><|vision_end|>") == 1
    target = record["messages"][1]["content"][0]["text"]
    assert f"<|im_start|>assistant\n{target}<|im_end|>" in text
    assert record["messages"][0]["content"][1]["text"] in text
    enc = processor.tokenizer(target, return_offsets_mapping=True, add_special_tokens=False)
    start = record["reasoning_span"][0]
    perception = [i for i, (a, _) in enumerate(enc["offset_mapping"]) if a < start]
    reasoning = [i for i, (a, _) in enumerate(enc["offset_mapping"]) if a >= start]
    assert perception and reasoning and perception[-1] + 1 == reasoning[0]
    assert processor.tokenizer.decode(enc["input_ids"][reasoning[0] :]).startswith("Solution:")
    assert processor.tokenizer.decode(enc["input_ids"][: reasoning[0]]).startswith("Diagram relations:")


@pytest.mark.slow
def test_the_cot_stages_run_on_a_local_transformers_model(tmp_path: Path, mini_dataset: Path) -> None:
    """A tiny random model writes nonsense: every rewrite is rejected, after three CoT-PAL passes."""
    testing = pytest.importorskip("geotts.testing")
    pytest.importorskip("transformers")
    from geosynth.mts import LLMConfig

    records = json.loads(mini_dataset.read_text())
    two = tmp_path / "two.json"
    two.write_text(json.dumps({k: records[k] for k in ("prob_13", "prob_27")}))
    model = testing.tiny_qwen_vl(tmp_path / "tiny")
    llm = LLMConfig(backend="transformers", model=str(model), max_tokens=16)
    run = run_mts(two, tmp_path / "out", MTSConfig(mixtures=False, llm=llm))
    assert run.stats.traces == {"program": 2, "pal": 2, "cot_program": 0, "cot_pal": 0}
    assert run.stats.drops == {"cot_pal_failed": 2, "cot_program_mismatch": 2}
    drops = [json.loads(line) for line in (tmp_path / "out" / "drops.jsonl").read_text().splitlines()]
    assert all("3 passes" in d["detail"] for d in drops if d["reason"] == "cot_pal_failed")
