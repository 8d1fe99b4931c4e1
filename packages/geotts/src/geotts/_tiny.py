"""Tiny, randomly initialised Qwen models with offline tokenizers and processors, for tests, demos and CI.

One builder for every family the workspace runs: Qwen2-VL, Qwen2.5-VL, Qwen3-VL and a text-only
Qwen2 causal LM. The tokenizer is a byte-level BPE trained in milliseconds on a small geometry
corpus; the chat templates are the upstream Qwen templates shipped as geotts package data; the
vision processors are the stock classes minus the video processor (which needs torchvision), and
the saved folder records a video-processor entry so stock ``AutoProcessor`` also loads it where
torchvision exists.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any, Literal, get_args

from geotts.backends._common import require
from geotts.errors import StrategyConfigError

__all__ = (
    "QWEN_SPLIT",
    "TINY_KINDS",
    "WHOLE_NUMBER_SPLIT",
    "NumberSplit",
    "TinyKind",
    "chat_template",
    "tiny_qwen_vl",
    "train_tokenizer",
)

TinyKind = Literal["qwen2_vl", "qwen2_5_vl", "qwen3_vl", "causal_lm"]
"""The families :func:`tiny_qwen_vl` builds."""
TINY_KINDS: tuple[TinyKind, ...] = get_args(TinyKind)
"""Every buildable family, in a stable order."""

#: Per vision family: (config class, model class, video-processor class, patch size).
_VISION_CLASSES: dict[str, tuple[str, str, str, int]] = {
    "qwen2_vl": ("Qwen2VLConfig", "Qwen2VLForConditionalGeneration", "Qwen2VLVideoProcessor", 14),
    "qwen2_5_vl": ("Qwen2_5_VLConfig", "Qwen2_5_VLForConditionalGeneration", "Qwen2VLVideoProcessor", 14),
    "qwen3_vl": ("Qwen3VLConfig", "Qwen3VLForConditionalGeneration", "Qwen3VLVideoProcessor", 16),
}
#: Text decoder shared by the families; ``sum(mrope_section)`` must equal head_dim / 2 (= 8).
_TEXT: dict[str, Any] = {
    "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 16,
}  # fmt: skip
_ROPE: dict[str, dict[str, Any]] = {
    "qwen2_vl": {"rope_type": "default", "rope_theta": 1e4, "mrope_section": [2, 3, 3]},
    "qwen2_5_vl": {"rope_type": "default", "rope_theta": 1e4, "mrope_section": [2, 3, 3]},
    "qwen3_vl": {
        "rope_type": "default",
        "rope_theta": 1e4,
        "mrope_section": [4, 2, 2],
        "mrope_interleaved": True,
    },
}
_VISION: dict[str, dict[str, Any]] = {
    "qwen2_vl": {"depth": 2, "embed_dim": 32, "hidden_size": 64, "num_heads": 2, "mlp_ratio": 2, "patch_size": 14,
                 "spatial_merge_size": 2, "temporal_patch_size": 2},
    "qwen2_5_vl": {"depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2, "out_hidden_size": 64,
                   "patch_size": 14, "window_size": 56, "fullatt_block_indexes": [1]},
    "qwen3_vl": {"depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2, "out_hidden_size": 64,
                 "patch_size": 16, "num_position_embeddings": 64, "deepstack_visual_indexes": [0]},
}  # fmt: skip
_SPECIALS = (
    "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>", "<|box_start|>", "<|box_end|>",
    "<|quad_start|>", "<|quad_end|>", "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>",
    "<|video_pad|>",
)  # fmt: skip
_CORPUS = (
    "Diagram relations:\nline A B C\n\\odot O lieson A B\nAB = 12, BC = 5, m \\angle ABC = 30\n\nSolution:\n",
    "Gougu N0 N1 V0 Get V0 Sum Multiple Divide Minus Cos Sin Tan Sqrt Circle_R_Area 0123456789 .,:=+-*/()",
    "Find the length of AB. Start by writing down the relations you read in the diagram. Answer: 6.93",
    "def solve():\n    x = 3 * 4\n    # the tangent is perpendicular to the radius\n    return x / 2\nprint(solve())",
    "Step 1: Let us reason step by step. The answer is \\boxed{7.5}. Correct Incorrect Judgement Critique",
)


def chat_template(kind: TinyKind) -> str:
    """The upstream chat template of a Qwen family (geotts package data).

    Args:
        kind: The model family.

    Returns:
        The Jinja template text.

    Raises:
        StrategyConfigError: for an unknown family.
    """
    _check_kind(kind)
    return (resources.files("geotts") / "templates" / f"{kind}.jinja").read_text(encoding="utf-8")


def _check_kind(kind: str) -> None:
    if kind not in TINY_KINDS:
        raise StrategyConfigError(f"no tiny model of family {kind!r}; choose one of {list(TINY_KINDS)}")


QWEN_SPLIT = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
"""Qwen2's pre-tokenisation pattern (single digits, words with their leading space or punctuation)."""

WHOLE_NUMBER_SPLIT = QWEN_SPLIT.replace(r"|\p{N}|", r"|\p{N}+(?:\.\p{N}+)?|", 1)
"""Qwen2's pattern with each number (``105``, ``27.9``) one piece instead of one piece per digit: the merges
learnt on it make the corpus's frequent numbers single tokens, and a rarer number a few pieces of itself."""

NumberSplit = Literal["digits", "whole"]
"""How a learnt tokenizer cuts numbers: ``digits`` (Qwen2's, one token per digit) or ``whole`` (merges inside
each number, so frequent numbers are one token and a model copies them from the prompt in one step)."""


def train_tokenizer(
    texts: Iterable[str], vocab_size: int, *, qwen_split: bool = True, numbers: NumberSplit = "digits"
) -> Any:
    """Train a byte-level BPE on ``texts`` and wrap it as a tokenizer with the Qwen special tokens.

    With ``numbers="digits"`` pre-tokenisation is Qwen2's (every digit is its own token, so numbers are
    spelled digit by digit), so the merges learnt here are the ones the Qwen2 tokenizer applies. With
    ``numbers="whole"`` each number is one piece (:data:`WHOLE_NUMBER_SPLIT`) and the tokenizer carries
    that pre-tokenisation itself. Decoding round-trips every text either way.

    Args:
        texts: The training texts.
        vocab_size: Target vocabulary size (byte alphabet and special tokens included).
        qwen_split: Learn the merges on Qwen2's pre-tokenisation (True), or on GPT-2's byte-level split
            (False: what the tiny test models use; the Qwen2 tokenizer then never applies multi-digit merges).
        numbers: How numbers are cut (:data:`NumberSplit`); ``whole`` needs ``qwen_split``.

    Returns:
        A ``transformers.Qwen2Tokenizer`` for ``digits``; for ``whole`` a fast tokenizer whose saved
        ``tokenizer.json`` holds the number-keeping split (end of turn ``<|im_end|>``, padding
        ``<|endoftext|>`` in both).

    Raises:
        MissingExtraError: when tokenizers or transformers is not installed.
    """
    require("tokenizers", "transformers")
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

    transformers = require("transformers", "transformers")
    if numbers not in ("digits", "whole"):
        raise StrategyConfigError(f"numbers {numbers!r}: choose 'digits' or 'whole'")
    if numbers == "whole" and not qwen_split:
        raise StrategyConfigError("numbers 'whole' needs qwen_split: it changes Qwen2's pre-tokenisation")
    tok = Tokenizer(models.BPE())
    pattern = WHOLE_NUMBER_SPLIT if numbers == "whole" else QWEN_SPLIT
    split = [pre_tokenizers.Split(Regex(pattern), behavior="isolated")] if qwen_split else []
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [*split, pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=not qwen_split)]
    )
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(texts, trainer)
    if numbers == "whole":
        tok.decoder = decoders.ByteLevel()
        return transformers.PreTrainedTokenizerFast(
            tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
            extra_special_tokens=list(_SPECIALS),
        )  # fmt: skip
    model = json.loads(tok.to_str())["model"]
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]]
    return transformers.Qwen2Tokenizer(
        vocab=model["vocab"], merges=merges, unk_token=None, bos_token=None, eos_token="<|im_end|>",
        pad_token="<|endoftext|>", extra_special_tokens=list(_SPECIALS),
    )  # fmt: skip


def _tokenizer() -> Any:
    return train_tokenizer(list(_CORPUS) * 20, 360, qwen_split=False)


def _save_processor(out: Path, kind: TinyKind, tok: Any) -> None:
    from geotts.backends.transformers import image_only_processor_class

    transformers = require("transformers", "transformers")
    patch = _VISION_CLASSES[kind][3]
    images = transformers.Qwen2VLImageProcessorPil(
        patch_size=patch, merge_size=2, temporal_patch_size=2,
        min_pixels=(2 * patch) ** 2, max_pixels=(2 * patch) ** 2 * 16,
    )  # fmt: skip
    processor = image_only_processor_class(kind)(
        image_processor=images, tokenizer=tok, chat_template=chat_template(kind)
    )
    processor.save_pretrained(out)
    # With a video-processor entry the same folder also loads with stock AutoProcessor where torchvision exists.
    cfg_path = out / "processor_config.json"
    saved = json.loads(cfg_path.read_text(encoding="utf-8"))
    saved["video_processor"] = {
        "video_processor_type": _VISION_CLASSES[kind][2], "patch_size": patch, "merge_size": 2,
        "temporal_patch_size": 2,
    }  # fmt: skip
    cfg_path.write_text(json.dumps(saved, indent=2), encoding="utf-8")


def _build(config: Any, model_name: str, seed: int, ids: tuple[int, int]) -> Any:
    """Instantiate ``model_name`` from ``config`` with seeded weights; ``ids`` = (end of turn, padding)."""
    torch = require("torch", "transformers")
    transformers = require("transformers", "transformers")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = getattr(transformers, model_name)(config)
    model.generation_config.eos_token_id = list(ids)
    model.generation_config.pad_token_id = ids[1]
    return model


def tiny_qwen_vl(path: str | Path, *, kind: TinyKind = "qwen2_vl", seed: int = 0) -> Path:
    """Build and save a tiny, randomly initialised Qwen model with its tokenizer or processor, offline.

    ``qwen2_vl``, ``qwen2_5_vl`` and ``qwen3_vl`` build an image-text-to-text model with an
    image-only processor; ``causal_lm`` builds a text-only Qwen2 causal LM with its tokenizer. Every
    folder loads with :class:`geotts.backends.transformers.TransformersSampler` (vision folders also
    with stock ``AutoProcessor`` where torchvision is installed). About 200k-250k parameters; builds
    in well under a second.

    Args:
        path: Folder to write (created if missing).
        kind: ``qwen2_vl``, ``qwen2_5_vl``, ``qwen3_vl`` or ``causal_lm``.
        seed: Weight initialisation seed.

    Returns:
        The folder.

    Raises:
        StrategyConfigError: for an unknown family.
        MissingExtraError: when torch or transformers is not installed.
    """
    _check_kind(kind)
    transformers = require("transformers", "transformers")
    require("torch", "transformers")
    out = Path(path)
    tok = _tokenizer()
    end, pad = int(tok.convert_tokens_to_ids("<|im_end|>")), int(tok.convert_tokens_to_ids("<|endoftext|>"))
    vocab_size = -(-len(tok) // 64) * 64
    if kind == "causal_lm":
        tok.chat_template = chat_template(kind)
        config = transformers.Qwen2Config(
            **{k: v for k, v in _TEXT.items() if k != "head_dim"}, vocab_size=vocab_size,
            eos_token_id=end, pad_token_id=pad, bos_token_id=pad, tie_word_embeddings=False,
        )  # fmt: skip
        _build(config, "Qwen2ForCausalLM", seed, (end, pad)).save_pretrained(out)
        tok.save_pretrained(out)
        return out
    ids = {name: int(tok.convert_tokens_to_ids(name)) for name in _SPECIALS}
    text = {**_TEXT, "rope_parameters": _ROPE[kind], "vocab_size": vocab_size, "eos_token_id": end,
            "pad_token_id": pad, "bos_token_id": pad}  # fmt: skip
    cfg_name, model_name, *_ = _VISION_CLASSES[kind]
    config = getattr(transformers, cfg_name)(
        text_config=text, vision_config=_VISION[kind], image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"], vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    )  # fmt: skip
    _build(config, model_name, seed, (end, pad)).save_pretrained(out)
    _save_processor(out, kind, tok)
    return out
