"""Models trained from scratch: a small text-only Qwen2/Qwen3 decoder and a tokenizer trained on its corpus.

Where no pretrained weights can be had (an offline machine) or a result needs a model that learned only
from geo's own data, :func:`build_scratch_model` writes a randomly initialised Qwen-family causal LM
whose byte-level BPE tokenizer is trained on the training texts themselves (digits stay single tokens, so
numbers are read digit by digit, unless ``numbers`` is ``whole``). The folder is an ordinary model folder: geotrain trains it as the
``causal_lm`` family, and the geotts transformers backend loads it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from geotrain._config import DataSource
from geotrain._deps import require_train
from geotrain.errors import ConfigError, MissingExtraError

__all__ = ("ScratchModel", "build_scratch_model", "corpus_texts")


class ScratchModel(BaseModel):
    """The shape of a from-scratch decoder (the defaults: about 2.8M parameters with a 1,024-token vocabulary)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    architecture: Literal["qwen2", "qwen3"] = "qwen2"
    """``qwen2`` (``Qwen2ForCausalLM``) or ``qwen3`` (``Qwen3ForCausalLM``, with q/k normalisation)."""
    hidden_size: Annotated[int, Field(ge=8)] = 192
    """Width of the residual stream."""
    num_layers: Annotated[int, Field(ge=1)] = 6
    """Decoder layers."""
    num_heads: Annotated[int, Field(ge=1)] = 6
    """Query heads (``hidden_size`` must be a multiple)."""
    num_kv_heads: Annotated[int, Field(ge=1)] = 2
    """Key/value heads (grouped-query attention; must divide ``num_heads``)."""
    intermediate_size: Annotated[int, Field(ge=8)] = 576
    """Width of the SwiGLU feed-forward layer."""
    vocab_size: Annotated[int, Field(ge=300)] = 1024
    """Target size of the learnt BPE vocabulary (the 256 bytes and ``<|endoftext|>`` included); Qwen's 13
    chat and vision special tokens come on top, and the embedding has that total rounded up to 64 rows
    (1,024 gives 1,037 tokens and 1,088 rows on a corpus large enough to learn every merge)."""
    max_position_embeddings: Annotated[int, Field(ge=64)] = 1024
    """Longest sequence the rotary embedding is set up for."""
    tie_word_embeddings: bool = True
    """Share the input embedding and the output layer (saves vocabulary x width parameters)."""
    numbers: Literal["digits", "whole"] = "digits"
    """How the tokenizer cuts numbers: ``digits`` (Qwen2's, one token per digit) or ``whole`` (merges inside
    each number, so the corpus's frequent numbers are single tokens that the model copies from the prompt
    in one step; geotts's ``NumberSplit``)."""

    @model_validator(mode="after")
    def _check(self) -> ScratchModel:
        if self.hidden_size % self.num_heads:
            raise ValueError(
                f"hidden_size {self.hidden_size} is not a multiple of num_heads {self.num_heads}"
            )
        if self.num_heads % self.num_kv_heads:
            raise ValueError(f"num_kv_heads {self.num_kv_heads} does not divide num_heads {self.num_heads}")
        return self


def corpus_texts(sources: Sequence[DataSource]) -> list[str]:
    """Every text a model trained on ``sources`` reads or writes: the prompt turns and the targets.

    Args:
        sources: The training sources.

    Returns:
        The texts, one per message part and one per target.

    Raises:
        DataError: for a missing or malformed source.
    """
    from geotrain._data import load_source

    out: list[str] = []
    for source in sources:
        for ex in load_source(source):
            out.extend(p.text for m in ex.messages for p in m.content if p.text)
            out.append(ex.target)
    return out


def build_scratch_model(spec: ScratchModel, texts: Iterable[str], out: str | Path, *, seed: int = 0) -> Path:
    """Train a tokenizer on ``texts``, build a random decoder of shape ``spec`` and save both to ``out``.

    Args:
        spec: The model shape.
        texts: The tokenizer's training texts (the training corpus, never test problems).
        out: Folder to write (created if missing).
        seed: Weight initialisation seed.

    Returns:
        The folder (``config.json``, ``model.safetensors``, the tokenizer with its chat template).

    Raises:
        ConfigError: when ``texts`` is empty.
        MissingExtraError: without the ``train`` extra.
    """
    from geotts import MissingExtraError as GeoTTSMissingExtra
    from geotts.backends.transformers import VOCAB_DIGEST_KEY, vocab_digest
    from geotts.testing import chat_template, train_tokenizer

    corpus = list(texts)
    if not corpus:
        raise ConfigError("build_scratch_model: the tokenizer corpus is empty")
    transformers = require_train("transformers")
    torch = require_train("torch")
    try:
        tok: Any = train_tokenizer(corpus, spec.vocab_size, numbers=spec.numbers)
    except GeoTTSMissingExtra as exc:
        raise MissingExtraError(
            f'build_scratch_model needs the train extra: pip install "geotrain[train]" ({exc})'
        ) from exc
    tok.chat_template = chat_template("causal_lm")
    end, pad = int(tok.convert_tokens_to_ids("<|im_end|>")), int(tok.convert_tokens_to_ids("<|endoftext|>"))
    config_class, model_class = {
        "qwen2": ("Qwen2Config", "Qwen2ForCausalLM"),
        "qwen3": ("Qwen3Config", "Qwen3ForCausalLM"),
    }[spec.architecture]
    config = getattr(transformers, config_class)(
        vocab_size=-(-len(tok) // 64) * 64, hidden_size=spec.hidden_size, intermediate_size=spec.intermediate_size,
        num_hidden_layers=spec.num_layers, num_attention_heads=spec.num_heads, num_key_value_heads=spec.num_kv_heads,
        head_dim=spec.hidden_size // spec.num_heads, max_position_embeddings=spec.max_position_embeddings,
        tie_word_embeddings=spec.tie_word_embeddings, eos_token_id=end, pad_token_id=pad, bos_token_id=pad,
    )  # fmt: skip
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = getattr(transformers, model_class)(config)
    # The vocabulary's digest travels with the model, so that a folder whose tokenizer was swapped is refused
    # when it is loaded (geotts's check_tokenizer), not decoded into nonsense.
    setattr(model.config, VOCAB_DIGEST_KEY, vocab_digest(tok))
    model.generation_config.eos_token_id = [end, pad]
    model.generation_config.pad_token_id = pad
    folder = Path(out)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder
