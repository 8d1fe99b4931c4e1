"""Tiny, randomly initialised Qwen-VL models with offline processors, for tests, demos and CI.

Covers the three families geotrain trains (Qwen2-VL, Qwen2.5-VL, Qwen3-VL). The tokenizer is a
byte-level BPE trained in milliseconds on a small geometry corpus; the chat templates are the
upstream Qwen-VL templates shipped as package data; the processors are the stock classes minus the
video processor (which needs torchvision), and the saved folder records a video-processor entry so
stock ``AutoProcessor`` also loads it where torchvision exists.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from geotrain._config import Family
from geotrain._deps import require_train
from geotrain.errors import ConfigError

__all__ = ("FAMILY_CLASSES", "build_tiny_model", "chat_template", "image_only_processor_class")

#: Per family: (config class, model class, processor class, video-processor class, patch size).
FAMILY_CLASSES: dict[Family, tuple[str, str, str, str, int]] = {
    "qwen2_vl": ("Qwen2VLConfig", "Qwen2VLForConditionalGeneration", "Qwen2VLProcessor", "Qwen2VLVideoProcessor", 14),
    "qwen2_5_vl": ("Qwen2_5_VLConfig", "Qwen2_5_VLForConditionalGeneration", "Qwen2_5_VLProcessor",
                   "Qwen2VLVideoProcessor", 14),
    "qwen3_vl": ("Qwen3VLConfig", "Qwen3VLForConditionalGeneration", "Qwen3VLProcessor", "Qwen3VLVideoProcessor", 16),
}  # fmt: skip

#: Text decoder shared by the families; ``sum(mrope_section)`` must equal head_dim / 2 (= 8).
_TEXT: dict[str, Any] = {
    "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 16,
}  # fmt: skip
_ROPE: dict[Family, dict[str, Any]] = {
    "qwen2_vl": {"rope_type": "default", "rope_theta": 1e4, "mrope_section": [2, 3, 3]},
    "qwen2_5_vl": {"rope_type": "default", "rope_theta": 1e4, "mrope_section": [2, 3, 3]},
    "qwen3_vl": {
        "rope_type": "default",
        "rope_theta": 1e4,
        "mrope_section": [4, 2, 2],
        "mrope_interleaved": True,
    },
}
_VISION: dict[Family, dict[str, Any]] = {
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


def chat_template(family: Family) -> str:
    """The upstream chat template of a Qwen-VL family (package data).

    Args:
        family: The model family.

    Returns:
        The Jinja template text.
    """
    return (resources.files("geotrain") / "templates" / f"{family}.jinja").read_text(encoding="utf-8")


def image_only_processor_class(family: Family) -> Any:
    """The stock processor class of ``family`` minus its video processor (usable without torchvision).

    Qwen-VL processors read their sub-processors from ``__init__``'s signature, so dropping the
    ``video_processor`` argument makes an image + text processor that loads and saves the same folder.

    Args:
        family: The model family.

    Returns:
        A subclass of the family's processor class with the same class name.
    """
    transformers = require_train("transformers")
    base: Any = getattr(transformers, FAMILY_CLASSES[family][2])

    def __init__(
        self: Any, image_processor: Any = None, tokenizer: Any = None, chat_template: Any = None, **kw: Any
    ) -> None:
        base.__init__(self, image_processor, tokenizer, None, chat_template=chat_template, **kw)

    return type(base.__name__, (base,), {"__init__": __init__})


def _tokenizer() -> Any:
    require_train("tokenizers")
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    transformers = require_train("transformers")
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=360, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(list(_CORPUS) * 20, trainer)
    model = json.loads(tok.to_str())["model"]
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]]
    return transformers.Qwen2Tokenizer(
        vocab=model["vocab"], merges=merges, unk_token=None, bos_token=None, eos_token="<|im_end|>",
        pad_token="<|endoftext|>", extra_special_tokens=list(_SPECIALS),
    )  # fmt: skip


def _save_processor(out: Path, family: Family, tok: Any) -> None:
    transformers = require_train("transformers")
    patch = FAMILY_CLASSES[family][4]
    images = transformers.Qwen2VLImageProcessorPil(
        patch_size=patch, merge_size=2, temporal_patch_size=2,
        min_pixels=(2 * patch) ** 2, max_pixels=(2 * patch) ** 2 * 16,
    )  # fmt: skip
    processor = image_only_processor_class(family)(
        image_processor=images, tokenizer=tok, chat_template=chat_template(family)
    )
    processor.save_pretrained(out)
    cfg_path = out / "processor_config.json"
    saved = json.loads(cfg_path.read_text(encoding="utf-8"))
    saved["video_processor"] = {
        "video_processor_type": FAMILY_CLASSES[family][3], "patch_size": patch, "merge_size": 2,
        "temporal_patch_size": 2,
    }  # fmt: skip
    cfg_path.write_text(json.dumps(saved, indent=2), encoding="utf-8")


def _build_causal_lm(folder: Path, seed: int) -> Path:
    """A tiny text-only Qwen2 causal LM with the Qwen2.5 chat template."""
    torch = require_train("torch")
    transformers = require_train("transformers")
    tok = _tokenizer()
    tok.chat_template = chat_template("causal_lm")
    end, pad = int(tok.convert_tokens_to_ids("<|im_end|>")), int(tok.convert_tokens_to_ids("<|endoftext|>"))
    config = transformers.Qwen2Config(
        **{k: v for k, v in _TEXT.items() if k != "head_dim"}, vocab_size=-(-len(tok) // 64) * 64,
        eos_token_id=end, pad_token_id=pad, bos_token_id=pad, tie_word_embeddings=False,
    )  # fmt: skip
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = transformers.Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = [end, pad]
    model.generation_config.pad_token_id = pad
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def build_tiny_model(family: Family, out: str | Path, *, seed: int = 0) -> Path:
    """Build and save a tiny, randomly initialised Qwen-VL model and its offline processor.

    About 200k-250k parameters; builds in well under a second. The folder loads with
    :func:`geotrain.load_model_and_processor` and with the geotts transformers backend.
    ``causal_lm`` builds a text-only Qwen2 causal LM with its tokenizer instead.

    Args:
        family: ``qwen2_vl``, ``qwen2_5_vl``, ``qwen3_vl`` or ``causal_lm``.
        out: Folder to write (created if missing).
        seed: Weight initialisation seed.

    Returns:
        The folder.

    Raises:
        ConfigError: for an unknown family.
        MissingExtraError: when the ``train`` extra is not installed.
    """
    if family == "causal_lm":
        return _build_causal_lm(Path(out), seed)
    if family not in FAMILY_CLASSES:
        raise ConfigError(f"family {family!r} has no tiny builder; choose one of {sorted(FAMILY_CLASSES)}")
    torch = require_train("torch")
    transformers = require_train("transformers")
    folder = Path(out)
    tok = _tokenizer()
    ids = {name: int(tok.convert_tokens_to_ids(name)) for name in (*_SPECIALS, "<|endoftext|>")}
    text = {**_TEXT, "rope_parameters": _ROPE[family], "vocab_size": -(-len(tok) // 64) * 64,
            "eos_token_id": ids["<|im_end|>"], "pad_token_id": ids["<|endoftext|>"],
            "bos_token_id": ids["<|endoftext|>"]}  # fmt: skip
    cfg_name, model_name, *_ = FAMILY_CLASSES[family]
    config = getattr(transformers, cfg_name)(
        text_config=text, vision_config=_VISION[family], image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"], vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    )  # fmt: skip
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = getattr(transformers, model_name)(config)
    model.generation_config.eos_token_id = [ids["<|im_end|>"], ids["<|endoftext|>"]]
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    model.save_pretrained(folder)
    _save_processor(folder, family, tok)
    return folder
