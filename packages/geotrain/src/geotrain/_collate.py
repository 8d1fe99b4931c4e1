"""Tokenisation and batching: the model's chat template, labels on the assistant turn, span masks.

Each example is rendered with the processor's chat template twice: the prompt (user turn plus the
generation prompt) and the whole conversation; the latter must extend the former by exactly the
target plus a template suffix (``<|im_end|>`` and a newline for Qwen). The prompt goes through the processor
(which expands image placeholders into the image's patch tokens); the target is tokenised piece by
piece at the span boundaries, so every target token belongs to exactly one piece and the perception,
reasoning and verdict masks cover exactly the clause, trace and verdict text. Labels are the target and suffix tokens.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from PIL import Image

from geotrain._data import Example
from geotrain.errors import DataError

__all__ = ("Encoded", "SpanCollator", "chat_prompt", "encode", "load_images")

IGNORE = -100
NONE, PERCEPTION, REASONING, OTHER, SUFFIX, VERDICT = 0, 1, 2, 3, 4, 5


@dataclass(frozen=True)
class Encoded:
    """One tokenised example."""

    input_ids: list[int]
    labels: list[int]
    span: list[int]
    """Per token: 0 (prompt), 1 (perception), 2 (reasoning), 3 (target outside the spans), 4 (template
    suffix), 5 (a verdict word)."""
    extras: dict[str, Any]
    """Processor outputs besides the ids: pixel values, image grid, per-token modality ids."""


def _content(parts: Sequence[Any]) -> str | list[dict[str, Any]]:
    """A turn's content: a plain string when it has no image (text-only templates need one)."""
    if all(p.type == "text" for p in parts):
        return "".join(p.text or "" for p in parts)
    return [{"type": "image"} if p.type == "image" else {"type": "text", "text": p.text} for p in parts]


def _chat(messages: Sequence[Any]) -> list[dict[str, Any]]:
    return [{"role": m.role, "content": _content(m.content)} for m in messages]


def _pieces(ex: Example) -> list[tuple[str, int]]:
    """The target cut at the span boundaries, each piece tagged with its span."""
    cuts = {0, len(ex.target)}
    tags: list[tuple[tuple[int, int], int]] = [
        (span, VERDICT) for span in ex.verdict_spans
    ]  # first: they win
    for span, tag in ((ex.perception_span, PERCEPTION), (ex.reasoning_span, REASONING)):
        if span is not None:
            tags.append((span, tag))
    for span, _ in tags:
        cuts.update(span)
    points = sorted(cuts)
    out: list[tuple[str, int]] = []
    for start, end in itertools.pairwise(points):
        if start == end:
            continue
        tag = next((t for (s, e), t in tags if s <= start and end <= e), OTHER)
        out.append((ex.target[start:end], tag))
    return out


def chat_prompt(processor: Any, ex: Example) -> str:
    """The example's prompt turns rendered with the model's chat template, ending with the generation prompt."""
    return str(processor.apply_chat_template(_chat(ex.messages), tokenize=False, add_generation_prompt=True))


def _render(processor: Any, ex: Example) -> tuple[str, str]:
    chat = _chat(ex.messages)
    prompt = chat_prompt(processor, ex)
    answer = {"role": "assistant", "content": ex.target}
    full = str(processor.apply_chat_template([*chat, answer], tokenize=False))
    if not full.startswith(prompt + ex.target):
        raise DataError(
            f"record {ex.id}: the chat template does not render the target right after the prompt"
        )
    return prompt, full[len(prompt) + len(ex.target) :]


def load_images(ex: Example) -> list[Any]:
    """The example's images as RGB PIL images."""
    out: list[Any] = []
    for path in ex.images:
        try:
            with Image.open(path) as im:
                out.append(im.convert("RGB"))
        except OSError as exc:
            raise DataError(f"record {ex.id}: cannot read image {path}: {exc}") from exc
    return out


def encode(processor: Any, ex: Example, max_length: int) -> Encoded:
    """Tokenise one example with labels on the assistant turn and per-token span tags.

    Args:
        processor: The model's processor (or a tokenizer for text-only models).
        ex: The example.
        max_length: Longest sequence; the target (never the prompt) is truncated to fit.

    Returns:
        The encoding.

    Raises:
        DataError: when the template does not fit the example, an image is unreadable or the prompt
            alone exceeds ``max_length``.
    """
    tok: Any = getattr(processor, "tokenizer", processor)
    prompt, suffix = _render(processor, ex)
    images = load_images(ex)
    enc = (
        processor(text=[prompt], images=images, return_tensors="pt")
        if images
        else processor(text=[prompt], return_tensors="pt")
    )
    prompt_ids: list[int] = enc["input_ids"][0].tolist()
    if len(prompt_ids) >= max_length:
        raise DataError(
            f"record {ex.id}: the prompt has {len(prompt_ids)} tokens, max_length is {max_length}"
        )
    ids, span = list(prompt_ids), [NONE] * len(prompt_ids)
    for text, tag in [*_pieces(ex), (suffix, SUFFIX)]:
        piece: list[int] = tok(text, add_special_tokens=False)["input_ids"]
        ids += piece
        span += [tag] * len(piece)
    ids, span = ids[:max_length], span[:max_length]
    labels = [t if s != NONE else IGNORE for t, s in zip(ids, span, strict=True)]
    extras = {k: v for k, v in enc.items() if k not in ("input_ids", "attention_mask")}
    return Encoded(input_ids=ids, labels=labels, span=span, extras=extras)


class SpanCollator:
    """Batch collator: encodes examples on the fly and pads them on the right.

    Produces ``input_ids``, ``attention_mask``, ``labels``, ``perception_mask``, ``reasoning_mask``,
    ``verdict_mask`` and the processor's image tensors (``pixel_values``, ``image_grid_thw``, ``mm_token_type_ids``).
    """

    def __init__(self, processor: Any, max_length: int) -> None:
        """Bind the processor.

        Args:
            processor: The model's processor.
            max_length: Longest sequence.
        """
        self.processor = processor
        self.max_length = max_length
        tok: Any = getattr(processor, "tokenizer", processor)
        self.pad_id = int(tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id)

    def __call__(self, examples: Sequence[Example]) -> dict[str, Any]:
        """Encode and pad a batch."""
        encoded = [encode(self.processor, ex, self.max_length) for ex in examples]
        width = max(len(e.input_ids) for e in encoded)

        def pad(rows: list[list[int]], value: int) -> torch.Tensor:
            return torch.tensor([r + [value] * (width - len(r)) for r in rows], dtype=torch.long)

        batch: dict[str, Any] = {
            "input_ids": pad([e.input_ids for e in encoded], self.pad_id),
            "attention_mask": pad([[1] * len(e.input_ids) for e in encoded], 0),
            "labels": pad([e.labels for e in encoded], IGNORE),
        }
        spans = pad([e.span for e in encoded], NONE)
        batch["perception_mask"] = spans == PERCEPTION
        batch["reasoning_mask"] = spans == REASONING
        batch["verdict_mask"] = spans == VERDICT
        if any("mm_token_type_ids" in e.extras for e in encoded):
            rows = [
                e.extras["mm_token_type_ids"][0].tolist() if "mm_token_type_ids" in e.extras else []
                for e in encoded
            ]
            batch["mm_token_type_ids"] = pad([r + [0] * (len(e.input_ids) - len(r)) for r, e in zip(rows, encoded,
                                              strict=True)], 0)  # fmt: skip
        for key in ("pixel_values", "image_grid_thw"):
            parts = [e.extras[key] for e in encoded if key in e.extras]
            if parts:
                batch[key] = torch.cat(parts, dim=0)
        return batch
