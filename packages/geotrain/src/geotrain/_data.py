"""Training records: the PA record format, geoprm's PRM records, and their weighted mixture.

Both formats become :class:`Example` objects: the user turn (images then text), the assistant
target, and the character spans of the target that count as perception (diagram clauses) and
reasoning (the trace), or, in a critique, its verdict words. geotrain reads the MTS pipeline's PA records with its own model (it does not
import geosynth); see docs/geotrain.md for the format.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from geotrain._config import DataSource
from geotrain.errors import DataError

__all__ = (
    "ChatRecord",
    "ContentPart",
    "Example",
    "Message",
    "PARecord",
    "load_examples",
    "load_pa_records",
    "load_source",
    "mix",
    "pa_example",
)

Span = tuple[int, int]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class ContentPart(_Frozen):
    """One part of a chat message: an image placeholder or a text."""

    type: Literal["image", "text"]
    """The part kind."""
    text: str | None = None
    """The text (None for an image placeholder)."""


class Message(_Frozen):
    """One chat turn."""

    role: Literal["system", "user", "assistant"]
    """Who speaks."""
    content: tuple[ContentPart, ...]
    """The parts, in order."""


class PARecord(_Frozen):
    """A perception-augmented training record as written by the MTS pipeline (one JSON line)."""

    id: str
    """Unique record id (``<problem id>:<trace type>``)."""
    problem_id: str
    """The source problem."""
    trace_type: str
    """``program``, ``pal``, ``cot_program`` or ``cot_pal``."""
    images: tuple[str, ...]
    """Image paths, relative to the records file's folder (or absolute)."""
    messages: tuple[Message, ...]
    """The user turn (image placeholders, then question and instruction), then the assistant target."""
    perception_span: Span
    """``[start, end)`` character offsets of the clauses in the target."""
    reasoning_span: Span
    """``[start, end)`` character offsets of the trace in the target."""
    answer: str | float | int
    """The stored answer."""

    @model_validator(mode="after")
    def _check(self) -> PARecord:
        if len(self.messages) < 2 or self.messages[-1].role != "assistant":
            raise ValueError("messages must end with the assistant target after a user turn")
        target = self.target
        (ps, pe), (rs, re) = self.perception_span, self.reasoning_span
        if not 0 <= ps <= pe <= rs <= re <= len(target):
            raise ValueError(
                f"spans {list(self.perception_span)} and {list(self.reasoning_span)} must be ordered, disjoint "
                f"and inside the target ({len(target)} characters)"
            )
        pads = sum(p.type == "image" for m in self.messages for p in m.content)
        if pads != len(self.images):
            raise ValueError(f"{pads} image placeholders but {len(self.images)} image paths")
        return self

    @property
    def target(self) -> str:
        """The assistant text."""
        return "".join(p.text or "" for p in self.messages[-1].content if p.type == "text")


class Example(_Frozen):
    """One training example in geotrain's own terms."""

    id: str
    """The record id."""
    messages: tuple[Message, ...]
    """The prompt turns (everything before the target)."""
    images: tuple[str, ...]
    """Absolute image paths, in placeholder order."""
    target: str
    """The assistant text the loss is computed on."""
    perception_span: Span | None = None
    """Character span of the perception part of the target (None: not marked)."""
    reasoning_span: Span | None = None
    """Character span of the reasoning part of the target (None: not marked)."""
    verdict_spans: tuple[Span, ...] = ()
    """Character spans of the target's verdict words (a critique's decisions; PRM records), whose tokens
    the loss weights by ``RunConfig.verdict_weight``."""


def _resolve(folder: Path, paths: Sequence[str]) -> tuple[str, ...]:
    return tuple(str(p if (p := Path(x)).is_absolute() else folder / p) for x in paths)


def pa_example(rec: PARecord, folder: Path) -> Example:
    """The example of a PA record whose image paths are relative to ``folder``."""
    return Example(
        id=rec.id, messages=rec.messages[:-1], images=_resolve(folder, rec.images), target=rec.target,
        perception_span=rec.perception_span, reasoning_span=rec.reasoning_span,
    )  # fmt: skip


def _from_pa(line: str, folder: Path) -> Example:
    return pa_example(PARecord.model_validate_json(line), folder)


class ChatRecord(_Frozen):
    """A plain conversation ending with the assistant target (synthesis solutions, text-only SFT)."""

    id: str
    """Unique record id."""
    images: tuple[str, ...] = ()
    """Image paths, relative to the records file's folder (or absolute); one per image placeholder."""
    messages: tuple[Message, ...]
    """The prompt turns, then the assistant target."""

    @model_validator(mode="after")
    def _check(self) -> ChatRecord:
        if len(self.messages) < 2 or self.messages[-1].role != "assistant":
            raise ValueError("messages must end with the assistant target after a user turn")
        pads = sum(p.type == "image" for m in self.messages for p in m.content)
        if pads != len(self.images):
            raise ValueError(f"{pads} image placeholders but {len(self.images)} image paths")
        return self


def _from_chat(line: str, folder: Path) -> Example:
    rec = ChatRecord.model_validate_json(line)
    target = "".join(p.text or "" for p in rec.messages[-1].content if p.type == "text")
    return Example(id=rec.id, messages=rec.messages[:-1], images=_resolve(folder, rec.images), target=target)


def _from_prm(line: str, folder: Path) -> Example:
    from geoprm import parse_critique
    from geoprm.data import SFTRecord

    rec = SFTRecord.model_validate(json.loads(line), strict=False)
    parts = (*(ContentPart(type="image") for _ in rec.images), ContentPart(type="text", text=rec.prompt))
    text = rec.completion
    words = (span for step in parse_critique(text, strict=False).steps for span in step.verdict_spans)
    # With the space before it, a verdict word is one pre-token of a byte-level BPE: cutting the target
    # there leaves its tokens as they are when the text is tokenised whole.
    verdicts = tuple(
        (start - 1 if start > 0 and text[start - 1] == " " else start, end) for start, end in words
    )
    return Example(
        id=rec.id, messages=(Message(role="user", content=parts),), images=_resolve(folder, rec.images),
        target=rec.completion, verdict_spans=verdicts,
    )  # fmt: skip


_READERS = {"pa": _from_pa, "prm": _from_prm, "chat": _from_chat}


def load_pa_records(path: str | Path) -> list[PARecord]:
    """Read a PA records file (for evaluation, which needs the trace types and answers).

    Args:
        path: The JSONL file.

    Returns:
        The records, in file order.

    Raises:
        DataError: when the file is missing, empty or has a malformed line (naming file and line).
    """
    file = Path(path)
    if not file.is_file():
        raise DataError(f"data source {file} does not exist")
    out: list[PARecord] = []
    for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                out.append(PARecord.model_validate_json(line))
            except ValidationError as exc:
                raise DataError(f"{file}:{number}: not a valid pa record: {exc}") from exc
    if not out:
        raise DataError(f"data source {file} has no records")
    return out


def load_source(source: DataSource) -> list[Example]:
    """Read every record of one source.

    Args:
        source: The JSONL file and its record kind.

    Returns:
        The examples, in file order.

    Raises:
        DataError: when the file is missing or empty, or a line is malformed (naming file and line).
    """
    path = Path(source.path)
    if not path.is_file():
        raise DataError(f"data source {path} does not exist")
    reader = _READERS[source.kind]
    out: list[Example] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append(reader(line, path.parent))
        except (ValidationError, ValueError) as exc:
            raise DataError(f"{path}:{number}: not a valid {source.kind} record: {exc}") from exc
    if not out:
        raise DataError(f"data source {path} has no records")
    return out


def mix(sources: Sequence[tuple[DataSource, Sequence[Example]]], seed: int) -> list[Example]:
    """The weighted mixture: each source repeated ``floor(weight)`` times plus a seeded fraction.

    Args:
        sources: Each source with its examples.
        seed: Seed of the fractional sampling.

    Returns:
        The mixed examples (source order; the trainer shuffles).
    """
    rng = random.Random(seed)
    out: list[Example] = []
    for source, examples in sources:
        whole, frac = divmod(source.weight, 1.0)
        out.extend(list(examples) * int(whole))
        out.extend(rng.sample(list(examples), round(frac * len(examples))))
    return out


def load_examples(sources: Sequence[DataSource], seed: int) -> list[Example]:
    """Read and mix every source.

    Args:
        sources: The data sources.
        seed: Mixture seed.

    Returns:
        The mixture.

    Raises:
        DataError: for a bad source, or when the mixture is empty.
    """
    mixture = mix([(s, load_source(s)) for s in sources], seed)
    if not mixture:
        raise DataError("the data mixture is empty (weights too small for the sources' sizes)")
    return mixture


def budget(
    examples: Sequence[Example], count_tokens: Callable[[str], int], limit: int, seed: int
) -> list[Example]:
    """Keep examples in seeded random order until their target tokens would exceed ``limit``.

    Args:
        examples: The mixture.
        count_tokens: ``str -> int``, the tokenizer's target length.
        limit: The token budget.
        seed: Order seed.

    Returns:
        The kept examples (at least one).
    """
    order = list(examples)
    random.Random(seed).shuffle(order)
    kept: list[Example] = []
    used = 0
    for ex in order:
        n = int(count_tokens(ex.target))
        if kept and used + n > limit:
            break
        kept.append(ex)
        used += n
    return kept
