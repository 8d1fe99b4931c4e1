"""Test doubles and fixtures for code built on geotts.

* :class:`ScriptedSampler` replays ranked texts per prompt, honouring sampling and beam semantics;
* :class:`FunctionSampler` wraps a Python function;
* :func:`tiny_qwen_vl` builds a tiny, randomly initialised Qwen-VL model and processor offline
  (needs the ``transformers`` extra) so backends, PRMs and trainers can be tested on CPU.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from geotts._models import BeamParams, Completion, GenerationRequest
from geotts.errors import BackendError, MissingExtraError

__all__ = ("FunctionSampler", "ScriptedSampler", "tiny_qwen_vl")


def _tokens(text: str) -> int:
    return len(text.split()) + 1  # whitespace words plus the end-of-sequence token


class ScriptedSampler:
    """A sampler that replays, for each prompt, the ranked texts ``script(request)`` returns.

    Sampling requests consume the list: each call continues where the previous call for the same
    prompt stopped (so incremental sampling gets fresh candidates). Beam requests of width w return
    the first w texts every time (so width-d beams are prefixes of width-D beams, which real beam
    search does not guarantee). Each candidate counts one token per word plus one.
    """

    __test__ = False

    def __init__(self, script: Callable[[GenerationRequest], Sequence[str]]) -> None:
        self.script = script
        self.calls: list[list[GenerationRequest]] = []
        self._cursor: dict[str, int] = {}

    def generate(self, requests: Sequence[GenerationRequest]) -> list[list[Completion]]:
        """Return the scripted candidates of every request."""
        self.calls.append(list(requests))
        out: list[list[Completion]] = []
        for req in requests:
            texts = list(self.script(req))
            if isinstance(req.params, BeamParams):
                start = 0
            else:
                key = req.model_dump_json(include={"messages", "prompt", "trace_type", "assistant_prefix"})
                start = self._cursor.get(key, 0)
                self._cursor[key] = start + req.n
            chosen = texts[start : start + req.n]
            if len(chosen) < req.n:
                raise BackendError(
                    f"script has {len(texts)} texts for this prompt; asked for {start + req.n}"
                )
            out.append(
                [
                    Completion(text=t, num_tokens=_tokens(t), cumulative_logprob=-float(i + 1))
                    for i, t in enumerate(chosen)
                ]
            )
        return out

    @property
    def generated(self) -> int:
        """Candidates produced so far."""
        return sum(r.n for call in self.calls for r in call)


class FunctionSampler:
    """A sampler that calls ``fn(request)`` for every request; records the batches it received."""

    __test__ = False

    def __init__(self, fn: Callable[[GenerationRequest], list[Completion]]) -> None:
        self.fn = fn
        self.calls: list[list[GenerationRequest]] = []

    def generate(self, requests: Sequence[GenerationRequest]) -> list[list[Completion]]:
        """Apply the function to every request."""
        self.calls.append(list(requests))
        return [self.fn(r) for r in requests]


_CHAT_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and message['role'] != 'system' %}<|im_start|>system\n"
    "You are a helpful assistant.<|im_end|>\n{% endif %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n"
    "{% else %}{% for content in message['content'] %}{% if content['type'] == 'image' %}"
    "<|vision_start|><|image_pad|><|vision_end|>{% elif 'text' in content %}{{ content['text'] }}{% endif %}"
    "{% endfor %}<|im_end|>\n{% endif %}{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
_SPECIALS = (
    "<|im_start|>",
    "<|im_end|>",
    "<|object_ref_start|>",
    "<|object_ref_end|>",
    "<|box_start|>",
    "<|box_end|>",
    "<|quad_start|>",
    "<|quad_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
)
_CORPUS = (
    "Find the length of AB. The angle ABC is 30 degrees and BC = 12. Answer: 6.93",
    "Gougu N0 N1 V0 Get V0 Sum Multiple Divide Minus Cos Sin Tan Sqrt Circle_R_Area 0123456789 .,:=+-*/()",
    "def solve():\n    x = 3 * 4\n    return x / 2\nStep 1: Let us reason step by step. The answer is 7.5",
)


def _tokenizer() -> Any:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import Qwen2Tokenizer

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=320, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(list(_CORPUS) * 20, trainer)
    model = json.loads(tok.to_str())["model"]
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]]
    tokenizer_cls: Any = Qwen2Tokenizer
    return tokenizer_cls(
        vocab=model["vocab"],
        merges=merges,
        unk_token=None,
        bos_token=None,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        extra_special_tokens=list(_SPECIALS),
    )


#: Tiny text decoder shared by both kinds; ``sum(mrope_section)`` must equal head_dim / 2 (= 8).
_TEXT: dict[str, Any] = {
    "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2, "rope_parameters": {"rope_type": "default", "rope_theta": 1e4, "mrope_section": [2, 3, 3]},
}  # fmt: skip
#: Tiny vision towers per kind: (config class, model class, vision config).
_KINDS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "qwen2_vl": ("Qwen2VLConfig", "Qwen2VLForConditionalGeneration", {
        "depth": 2, "embed_dim": 32, "hidden_size": 64, "num_heads": 2, "mlp_ratio": 2, "patch_size": 14,
        "spatial_merge_size": 2, "temporal_patch_size": 2}),
    "qwen2_5_vl": ("Qwen2_5_VLConfig", "Qwen2_5_VLForConditionalGeneration", {
        "depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2, "out_hidden_size": 64, "patch_size": 14,
        "window_size": 56, "fullatt_block_indexes": [1]}),
}  # fmt: skip
_IDS = ("<|image_pad|>", "<|video_pad|>", "<|vision_start|>", "<|vision_end|>", "<|im_end|>", "<|endoftext|>")


def _save_processor(out: Path, kind: Literal["qwen2_vl", "qwen2_5_vl"], tok: Any) -> None:
    import transformers

    from geotts.backends.transformers import image_only_processor_class

    images = transformers.Qwen2VLImageProcessorPil(
        patch_size=14, merge_size=2, temporal_patch_size=2, min_pixels=28 * 28, max_pixels=28 * 28 * 16
    )
    image_only_processor_class(kind)(
        image_processor=images, tokenizer=tok, chat_template=_CHAT_TEMPLATE
    ).save_pretrained(out)
    # With a video-processor entry the same folder also loads with stock AutoProcessor where torchvision exists.
    cfg_path = out / "processor_config.json"
    saved = json.loads(cfg_path.read_text(encoding="utf-8"))
    saved["video_processor"] = {
        "video_processor_type": "Qwen2VLVideoProcessor", "patch_size": 14, "merge_size": 2, "temporal_patch_size": 2,
    }  # fmt: skip
    cfg_path.write_text(json.dumps(saved, indent=2), encoding="utf-8")


def tiny_qwen_vl(
    path: str | Path, *, kind: Literal["qwen2_vl", "qwen2_5_vl"] = "qwen2_vl", seed: int = 0
) -> Path:
    """Build and save a tiny, randomly initialised Qwen2-VL (or Qwen2.5-VL) model with its processor, offline.

    The folder loads with :class:`geotts.backends.transformers.TransformersSampler` (and with stock
    ``AutoProcessor`` where torchvision is installed). About 200k parameters; builds in under a second.

    Args:
        path: Folder to write (created if missing).
        kind: ``qwen2_vl`` or ``qwen2_5_vl``.
        seed: Weight initialisation seed.

    Returns:
        The folder.

    Raises:
        MissingExtraError: when torch or transformers is not installed.
    """
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise MissingExtraError(
            'tiny_qwen_vl needs torch and transformers: pip install "geotts[transformers]"'
        ) from exc
    out = Path(path)
    tok = _tokenizer()
    ids = {name: tok.convert_tokens_to_ids(name) for name in _IDS}
    text = {**_TEXT, "vocab_size": -(-len(tok) // 64) * 64, "eos_token_id": ids["<|im_end|>"],
            "pad_token_id": ids["<|endoftext|>"], "bos_token_id": ids["<|endoftext|>"]}  # fmt: skip
    cfg_name, model_name, vision = _KINDS[kind]
    config = getattr(transformers, cfg_name)(
        text_config=text, vision_config=vision, image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"],
    )  # fmt: skip
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = getattr(transformers, model_name)(config)
    model.generation_config.eos_token_id = [ids["<|im_end|>"], ids["<|endoftext|>"]]
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    model.save_pretrained(out)
    _save_processor(out, kind, tok)
    return out
