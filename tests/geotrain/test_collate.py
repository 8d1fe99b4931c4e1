"""Collator: labels on the assistant turn only; perception/reasoning masks cover exactly the clause and trace text."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from geotrain import DataError, DataSource, load_examples  # noqa: E402
from geotrain._collate import SpanCollator  # noqa: E402
from geotrain._trainer import load_processor  # noqa: E402

FAMILIES = ("qwen2_vl", "qwen2_5_vl", "qwen3_vl")


@pytest.mark.parametrize("family", FAMILIES)
def test_masks_cover_exactly_the_spans(
    family: str, tiny: Callable[[str], Path], write_pa: Callable[[int], Path]
) -> None:
    processor = load_processor(tiny(family), family)  # type: ignore[arg-type]
    tok: Any = processor.tokenizer
    examples = load_examples([DataSource(path=str(write_pa(3)))], seed=0)
    batch = SpanCollator(processor, max_length=512)(examples)
    assert batch["pixel_values"].shape[0] > 0 and batch["image_grid_thw"].shape == (3, 3)
    for row, ex in enumerate(examples):
        ids = batch["input_ids"][row][batch["attention_mask"][row].bool()]
        labels = batch["labels"][row][batch["attention_mask"][row].bool()]
        perception = batch["perception_mask"][row][: len(ids)]
        reasoning = batch["reasoning_mask"][row][: len(ids)]
        (ps, pe), (rs, re) = ex.perception_span, ex.reasoning_span  # type: ignore[misc]
        assert tok.decode(ids[perception]) == ex.target[ps:pe]
        assert tok.decode(ids[reasoning]) == ex.target[rs:re]
        assert tok.decode(labels[labels != -100]) == ex.target + "<|im_end|>\n"
        first = int((labels != -100).nonzero()[0])
        chat = [
            {
                "role": "user",
                "content": [{"type": "image"}, {"type": "text", "text": ex.messages[0].content[1].text}],
            }
        ]
        prompt = processor.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
        from PIL import Image

        expected = processor(
            text=[prompt], images=[Image.open(ex.images[0]).convert("RGB")], return_tensors="pt"
        )
        assert ids[:first].tolist() == expected["input_ids"][0].tolist()  # the prompt, image pads expanded
        assert not (perception & reasoning).any() and not perception[:first].any()
    pad = batch["attention_mask"] == 0
    assert (batch["labels"][pad] == -100).all() and not batch["perception_mask"][pad].any()


def test_truncation_cuts_the_target_never_the_prompt(
    tiny: Callable[[str], Path], write_pa: Callable[[int], Path]
) -> None:
    processor = load_processor(tiny("qwen2_vl"), "qwen2_vl")
    (ex,) = load_examples([DataSource(path=str(write_pa(1)))], seed=0)
    full = SpanCollator(processor, max_length=512)([ex])["input_ids"].shape[1]
    short = SpanCollator(processor, max_length=full - 10)([ex])
    assert short["input_ids"].shape[1] == full - 10 and short["reasoning_mask"].sum() > 0
    with pytest.raises(DataError, match=r"prompt has \d+ tokens, max_length is 20"):
        SpanCollator(processor, max_length=20)([ex])


def test_unreadable_image_names_the_record(
    tiny: Callable[[str], Path], write_pa: Callable[[int], Path]
) -> None:
    path = write_pa(1)
    (path.parent / "images" / "d0.png").write_bytes(b"not a png")
    (ex,) = load_examples([DataSource(path=str(path))], seed=0)
    with pytest.raises(DataError, match="record p0:program: cannot read image"):
        SpanCollator(load_processor(tiny("qwen2_vl"), "qwen2_vl"), max_length=512)([ex])
