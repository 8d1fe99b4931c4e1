"""Boundary data: generation requests, candidates and decisions (frozen, strict pydantic models)."""

from __future__ import annotations

import json
from collections.abc import Hashable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    field_serializer,
    field_validator,
    model_validator,
)

from geotts.errors import StrategyConfigError

__all__ = (
    "BeamParams",
    "ChatMessage",
    "Completion",
    "Decision",
    "GenerationRequest",
    "GeoTTSModel",
    "Problem",
    "SamplingParams",
)

#: An extracted answer: anything hashable; ``None`` means the candidate failed (no vote).
Answer = Hashable


class GeoTTSModel(BaseModel):
    """Base of every geotts boundary model: frozen, strict, unknown fields rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, use_attribute_docstrings=True)


class SamplingParams(GeoTTSModel):
    """Parameters of temperature sampling (``temperature=0`` is greedy decoding)."""

    mode: Literal["sample"] = "sample"
    """Discriminator: this object asks for sampled (or greedy) candidates."""
    temperature: Annotated[float, Field(ge=0.0)] = 1.0
    """Softmax temperature; 0 means greedy decoding, which allows only one candidate per request."""
    top_p: Annotated[float, Field(gt=0.0, le=1.0)] = 1.0
    """Nucleus sampling mass."""
    max_tokens: Annotated[int, Field(ge=1)] = 512
    """Most tokens generated per candidate."""
    seed: int | None = None
    """Base seed; MTE and CG-MTE seed candidate j of trace type t from (seed, t, j), so both draw the same ones."""
    stop: tuple[str, ...] = ()
    """Strings that end a candidate (not included in its text)."""


class BeamParams(GeoTTSModel):
    """Parameters of beam search; the request's ``n`` is the beam width and the number of beams returned."""

    mode: Literal["beam"] = "beam"
    """Discriminator: this object asks for beam-search candidates."""
    max_tokens: Annotated[int, Field(ge=1)] = 512
    """Most tokens generated per beam."""
    length_penalty: float = 1.0
    """Exponent of the length normalisation of beam scores (1.0 = mean log-prob per token)."""


class ChatMessage(GeoTTSModel):
    """One chat turn with plain-text content; images travel on the request, not in messages."""

    role: Literal["system", "user", "assistant"]
    """Who speaks."""
    content: str
    """The text of the turn."""


class GenerationRequest(GeoTTSModel):
    """One prompt (chat messages or raw text) and how many ranked candidates to produce for it."""

    messages: tuple[ChatMessage, ...] = ()
    """The conversation; the last message is from the user (images attach to the first user turn)."""
    prompt: str | None = None
    """A raw, already-templated prompt instead of ``messages`` (image placeholders are then the caller's job)."""
    images: tuple[bytes | Path, ...] = ()
    """Encoded images (PNG/JPEG bytes) or paths to image files, shown before the first user text."""
    trace_type: str | None = None
    """Trace type this request asks for (provenance only; the instruction is already in the messages)."""
    n: Annotated[int, Field(ge=1)] = 1
    """Number of candidates (for beam search: the beam width)."""
    params: SamplingParams | BeamParams = Field(default_factory=SamplingParams, discriminator="mode")
    """Decoding parameters."""
    assistant_prefix: str = ""
    """Text the answer must start with; candidates continue it (their text excludes it)."""
    numbers: tuple[str, ...] | None = None
    """The problem's N list (:attr:`Problem.numbers`), for backends that keep program traces grammatical
    (``transformers`` with a program grammar); None when the problem has none."""

    @model_validator(mode="after")
    def _check(self) -> Self:
        if (self.prompt is None) == (not self.messages):
            raise StrategyConfigError(
                "GenerationRequest needs exactly one of messages (chat) or prompt (raw text)"
            )
        if self.messages and self.messages[-1].role != "user":
            raise StrategyConfigError(
                f"GenerationRequest.messages must end with a user message, got {self.messages[-1].role!r}"
            )
        if isinstance(self.params, SamplingParams) and self.params.temperature == 0.0 and self.n > 1:
            raise StrategyConfigError(
                f"greedy decoding (temperature=0) gives one candidate, but n={self.n}; use BeamParams or temperature>0"
            )
        return self


class Completion(GeoTTSModel):
    """One generated candidate."""

    text: str
    """Generated text (without the request's ``assistant_prefix`` and without stop strings)."""
    num_tokens: Annotated[int, Field(ge=0)] | None
    """Tokens the backend generated for this candidate (None when the backend did not say)."""
    cumulative_logprob: float | None = None
    """Sum of the log-probabilities of the generated tokens (None when unavailable)."""
    finish_reason: Literal["stop", "length", "other"] = "stop"
    """Why generation ended: an end-of-sequence token or stop string, the token limit, or anything else."""


_NO_METADATA: Mapping[str, JsonValue] = MappingProxyType({})


class Problem(GeoTTSModel):
    """A problem to solve: a question, optional images and free-form metadata answer extractors can read."""

    id: str
    """Identifier carried into decisions."""
    question: str
    """The question text; trace instructions are formatted around it."""
    images: tuple[bytes | Path, ...] = ()
    """Images shown with the question."""
    system: str | None = None
    """Optional system prompt."""
    metadata: Mapping[str, JsonValue] = Field(default_factory=lambda: _NO_METADATA, validate_default=True)
    """Free-form JSON data about the problem (read-only), e.g. the number list a symbolic program trace
    refers to; strategies pass the problem to the answer extractor, which may read it."""

    @field_validator("metadata", mode="after")
    @classmethod
    def _read_only(cls, value: Mapping[str, JsonValue]) -> Mapping[str, JsonValue]:
        return MappingProxyType(dict(value))

    @field_serializer("metadata")
    def _plain(self, value: Mapping[str, JsonValue]) -> dict[str, JsonValue]:
        return dict(value)

    @property
    def numbers(self) -> tuple[str, ...] | None:
        """The N list a symbolic program trace refers to (``metadata["numbers"]``); None when absent.

        Raises:
            StrategyConfigError: ``metadata["numbers"]`` is not a list of strings.
        """
        value = self.metadata.get("numbers")
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise StrategyConfigError(f"problem {self.id!r}: metadata 'numbers' must be a list of strings")
        return tuple(v for v in value if isinstance(v, str))

    def __hash__(self) -> int:
        """Hash of every field (the metadata through its canonical JSON)."""
        meta = json.dumps(dict(self.metadata), sort_keys=True, default=str)
        return hash((self.id, self.question, self.images, self.system, meta))


class Decision(GeoTTSModel):
    """What an aggregator decided, and what it cost."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    answer: Answer | None
    """The chosen answer (None when every counted candidate failed)."""
    depth: Annotated[int, Field(ge=0)]
    """Depth reached: candidates read per trace type (per group for split baselines)."""
    samples: Annotated[int, Field(ge=0)]
    """Candidates counted by the strategy's cost model (the paper's ASN contribution)."""
    generated: Annotated[int, Field(ge=0)]
    """Candidates a backend actually generated (equals ``samples`` for recorded pools)."""
    tokens: Annotated[int, Field(ge=0)] | None = None
    """Tokens actually generated for this decision (None for recorded pools or when a backend did not say)."""
    fallback: bool = False
    """True when no consensus was found and the fallback rule chose the answer."""
    strategy: str
    """Name of the strategy that decided."""
    pool: tuple[tuple[str, tuple[Answer | None, ...]], ...] = ()
    """The answers read, per trace type (or group), in rank order: provenance for reports."""

    def to_json(self, id: str | None = None) -> dict[str, object]:
        """The decision as the JSON object written by the CLI (``answer`` must be JSON-representable)."""
        out: dict[str, object] = {}
        if id is not None:
            out["id"] = id
        out.update(answer=self.answer, depth=self.depth, samples=self.samples)
        if self.generated != self.samples:
            out["generated"] = self.generated
        if self.tokens is not None:
            out["tokens"] = self.tokens
        if self.fallback:
            out["fallback"] = True
        return out
