"""Training-data construction (GM-PRM, section 3.2): teacher critiques filtered by Monte Carlo labels.

For each solution: a teacher model writes a critique (through any geotts :class:`~geotts.Sampler`, e.g.
an OpenAI-compatible server); a completer continues the solution from each step prefix ``m`` times and
the step is labelled correct when at least one continuation reaches the known answer (hard
estimation); only solutions where the teacher's verdicts and the Monte Carlo labels agree are kept,
the kept solutions are balanced between those with and without an error, and each becomes an SFT
record (image, question and steps -> critique text).

Samplers are geotts's: :class:`geotts.backends.openai` for a teacher behind an OpenAI-compatible server,
:class:`geotts.backends.transformers.TransformersSampler` for a local completer, or test doubles.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import Annotated, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

from geoprm._parser import parse_critique
from geoprm._printer import format_critique
from geoprm._prompts import critic_prompt, critique_prompt, policy_prompt
from geoprm._schema import Critique
from geoprm._sources import VisualPRMRecord, VisualPRMStep, load_visualprm
from geoprm.errors import DataError
from geotts import (
    AnswerExtractor,
    ChatMessage,
    Completion,
    GenerationRequest,
    Problem,
    Sampler,
    SamplingParams,
    format_steps,
    numeric_key,
    split_steps,
)

__all__ = (
    "AnswerKeyFn",
    "BuildResult",
    "BuildStats",
    "DataError",
    "DropReason",
    "MonteCarlo",
    "PRMItem",
    "SFTRecord",
    "VisualPRMRecord",
    "VisualPRMStep",
    "agrees",
    "balance",
    "build_prm_data",
    "load_visualprm",
    "mc_hard_labels",
    "visualprm_items",
    "write_records",
)

AnswerKeyFn = Callable[[Hashable], Hashable]
DropReason = Literal["no_steps", "teacher_unreadable", "teacher_incomplete", "disagree", "balance"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class PRMItem(_Frozen):
    """A policy solution to a problem with a known answer, to be turned into a training sample."""

    id: str
    """A unique identifier (e.g. ``<problem id>/<sample k>``)."""
    question: str
    """The problem text, with the options of a multiple-choice problem."""
    images: tuple[str, ...] = ()
    """Paths of the problem's images."""
    solution: str
    """The policy's solution text, split into steps by :func:`geotts.split_steps`."""
    answer: float | str
    """The known correct answer, compared with the completions' answers through the answer key."""
    source: str = ""
    """Where the problem comes from (e.g. ``geosynth``, ``pgps9k``); carried into the record."""
    choices: tuple[str, ...] | None = None
    """The options of a multiple-choice problem (for the completer's prompt); None for free-form."""
    steps: tuple[str, ...] | None = None
    """The solution already split into steps (as some datasets ship it); None to split ``solution``."""
    mc_labels: tuple[bool, ...] | None = None
    """Hard-estimation labels computed elsewhere (e.g. VisualPRM400K's ``num_mc_correct > 0``), one per
    step; when given, the completer is not asked about this item."""

    @model_validator(mode="after")
    def _labels_match_steps(self) -> Self:
        if self.mc_labels is not None and len(self.mc_labels) != len(self.solution_steps):
            raise ValueError(
                f"item {self.id}: {len(self.mc_labels)} Monte Carlo labels for {len(self.solution_steps)} steps"
            )
        return self

    @property
    def solution_steps(self) -> tuple[str, ...]:
        """The steps: ``steps`` when given, else ``solution`` split by :func:`geotts.split_steps`."""
        return self.steps if self.steps is not None else split_steps(self.solution).steps


class SFTRecord(_Frozen):
    """One supervised fine-tuning example for the reward model: prompt (with images) -> critique text."""

    id: str
    """The item's id."""
    images: tuple[str, ...]
    """Paths of the images shown before the prompt."""
    prompt: str
    """The reward model's input: :func:`geoprm.critic_prompt` with the question and the solution's steps."""
    completion: str
    """The target critique, in the canonical text form."""
    has_error: bool
    """Whether the critique finds an incorrect step."""
    first_error: Annotated[int, Field(ge=1)] | None
    """The number of the first incorrect step, or None."""
    source: str
    """The item's source."""


class BuildStats(_Frozen):
    """What happened to the items, for the agreement and balance report."""

    items: int
    """Items given."""
    dropped: dict[str, int]
    """Items dropped, by reason: no_steps, teacher_unreadable (no valid critique), teacher_incomplete
    (an all-correct critique that skips steps), disagree (teacher and Monte Carlo labels differ),
    balance (removed to balance solutions with and without errors)."""
    judged: int
    """Items with a usable teacher critique and Monte Carlo labels."""
    agreed: int
    """Judged items where the teacher and the Monte Carlo labels agree."""
    with_error: int
    """Records whose critique finds an error."""
    without_error: int
    """Records whose critique finds none."""
    completions: int
    """Completer candidates generated for the Monte Carlo labels."""

    @property
    def agreement(self) -> float | None:
        """The share of judged items on which teacher and Monte Carlo agree (None when none was judged)."""
        return self.agreed / self.judged if self.judged else None


class BuildResult(_Frozen):
    """The records and the statistics of one data-construction run."""

    records: tuple[SFTRecord, ...]
    """The kept records, in item order."""
    stats: BuildStats
    """Counts for the report."""
    drops: dict[str, DropReason]
    """Why each dropped item was dropped, by item id."""


def agrees(critique: Critique, labels: Sequence[bool]) -> bool:
    """Whether a teacher critique and Monte Carlo labels agree on every step the critique judges.

    Args:
        critique: the teacher's critique.
        labels: one hard-estimation label per solution step (True: the step can still reach the answer).

    Returns:
        True when each judged step's verdict matches its label and, for an all-correct critique, every
        step of the solution is judged and labelled correct.
    """
    if len(critique.steps) > len(labels):
        return False
    judged = all((step.judgement == "Correct") == labels[step.index - 1] for step in critique.steps)
    if critique.has_error:
        return judged
    return judged and len(critique.steps) == len(labels)


def balance(with_error: Sequence[str], without_error: Sequence[str], rng: random.Random) -> set[str]:
    """Ids to keep so that solutions with and without an error are equally many (the larger side is sampled).

    Args:
        with_error: ids of samples whose critique finds an error.
        without_error: ids of samples whose critique finds none.
        rng: the random source used to pick the kept ids of the larger side.

    Returns:
        The ids to keep.
    """
    size = min(len(with_error), len(without_error))
    return set(rng.sample(list(with_error), size)) | set(rng.sample(list(without_error), size))


def write_records(records: Sequence[SFTRecord], path: str | Path) -> Path:
    """Write records as JSON Lines (sorted keys, one record per line), the format the PRM trainer reads.

    Args:
        records: the records.
        path: the output file (its folder must exist).

    Returns:
        The path written.
    """
    out = Path(path)
    lines = [
        json.dumps(record.model_dump(mode="json"), sort_keys=True, ensure_ascii=False) for record in records
    ]
    out.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return out


def _user(text: str) -> tuple[ChatMessage, ...]:
    return (ChatMessage(role="user", content=text),)


def _generate(sampler: Sampler, requests: Sequence[GenerationRequest], what: str) -> list[list[Completion]]:
    if not requests:
        return []
    outputs = sampler.generate(requests)
    if len(outputs) != len(requests) or any(len(o) != r.n for o, r in zip(outputs, requests, strict=False)):
        raise DataError(f"the {what} returned a wrong number of candidates for {len(requests)} requests")
    return outputs


class MonteCarlo(_Frozen):
    """Settings of Monte Carlo hard estimation."""

    completions: Annotated[int, Field(ge=1)] = 8
    """m: continuations sampled from each step prefix."""
    params: SamplingParams = Field(default_factory=lambda: SamplingParams(temperature=0.7, seed=0))
    """Sampling parameters of the completer (temperature must be above 0 when m > 1)."""


def _policy_turn(item: PRMItem) -> str:
    return policy_prompt(item.question, choices=item.choices)


def _step_prefix(steps: Sequence[str]) -> str:
    return format_steps(steps) + "\n"


def _prefix_request(
    item: PRMItem,
    steps: Sequence[str],
    upto: int,
    mc: MonteCarlo,
    prompt: Callable[[PRMItem], str],
    prefix: Callable[[Sequence[str]], str],
) -> GenerationRequest:
    return GenerationRequest(
        messages=_user(prompt(item)),
        images=tuple(Path(image) for image in item.images),
        n=mc.completions,
        params=mc.params,
        assistant_prefix=prefix(steps[:upto]),
    )


def _problem(item: PRMItem) -> Problem:
    """The item as the geotts problem its answer extractor is told about (source and choices as metadata)."""
    metadata: dict[str, JsonValue] = {"source": item.source}
    if item.choices is not None:
        choices: list[JsonValue] = list(item.choices)
        metadata["choices"] = choices
    return Problem(
        id=item.id,
        question=item.question,
        images=tuple(Path(image) for image in item.images),
        metadata=metadata,
    )


def mc_hard_labels(
    items: Sequence[tuple[PRMItem, Sequence[str]]],
    completer: Sampler,
    extractor: AnswerExtractor,
    *,
    settings: MonteCarlo | None = None,
    key: AnswerKeyFn = numeric_key,
    prompt: Callable[[PRMItem], str] = _policy_turn,
    prefix: Callable[[Sequence[str]], str] = _step_prefix,
) -> list[tuple[bool, ...]]:
    """Label every step of every solution by hard estimation (one batched completer call).

    Step i is labelled correct when at least one of ``m`` continuations of steps 1..i reaches the
    item's answer (compared through ``key``; the extractor sees the prefix and the continuation, and
    the item as a :class:`geotts.Problem` whose metadata holds its ``source`` and ``choices``).

    Args:
        items: each item with its solution's steps.
        completer: the sampler that continues solutions.
        extractor: maps a completed solution to its answer (None when it has none).
        settings: m and the sampling parameters.
        key: the comparison key of answers (default: geotts's ``numeric_key``, numbers to 3 decimals).
        prompt: the completer's user turn for an item (default :func:`geoprm.policy_prompt` of its question
            and choices; a policy trained on another prompt is asked with its own).
        prefix: the assistant text a continuation starts from, given the first i steps (default: the
            steps as ``Step k:`` lines, :func:`geotts.format_steps`, and a line break).

    Returns:
        One tuple of labels per item, one label per step.

    Raises:
        DataError: the completer returned the wrong number of candidates.
    """
    mc = settings or MonteCarlo()
    requests = [
        _prefix_request(item, steps, i, mc, prompt, prefix)
        for item, steps in items
        for i in range(1, len(steps) + 1)
    ]
    outputs = iter(_generate(completer, requests, "completer"))
    prefixes = iter(requests)
    labels: list[tuple[bool, ...]] = []
    for item, steps in items:
        gold, problem = key(item.answer), _problem(item)
        item_labels: list[bool] = []
        for _ in steps:
            start = next(prefixes).assistant_prefix
            answers = (
                extractor(c.model_copy(update={"text": start + c.text}), None, problem) for c in next(outputs)
            )
            item_labels.append(any(a is not None and key(a) == gold for a in answers))
        labels.append(tuple(item_labels))
    return labels


def _teacher_critiques(
    items: Sequence[tuple[PRMItem, Sequence[str]]], teacher: Sampler, params: SamplingParams
) -> list[Critique | None]:
    requests = [
        GenerationRequest(
            messages=_user(critique_prompt(item.question, steps)),
            images=tuple(Path(image) for image in item.images),
            params=params,
        )
        for item, steps in items
    ]
    critiques: list[Critique | None] = []
    for (_, steps), (completion,) in zip(items, _generate(teacher, requests, "teacher"), strict=True):
        parsed = parse_critique(completion.text, strict=False)
        critique = parsed.critique
        critiques.append(critique if critique is not None and len(critique.steps) <= len(steps) else None)
    return critiques


def _record(item: PRMItem, steps: Sequence[str], critique: Critique) -> SFTRecord:
    return SFTRecord(
        id=item.id,
        images=item.images,
        prompt=critic_prompt(item.question, steps),
        completion=format_critique(critique),
        has_error=critique.has_error,
        first_error=critique.first_error,
        source=item.source,
    )


def build_prm_data(
    items: Sequence[PRMItem],
    *,
    teacher: Sampler,
    completer: Sampler,
    extractor: AnswerExtractor,
    rng: random.Random,
    monte_carlo: MonteCarlo | None = None,
    teacher_params: SamplingParams | None = None,
    key: AnswerKeyFn = numeric_key,
    balanced: bool = True,
) -> BuildResult:
    """Turn policy solutions into reward-model SFT records: teacher critiques kept where Monte Carlo agrees.

    The teacher must write a critique the lenient parser validates (form problems are tolerated, a
    broken structure is not). Monte Carlo labels are computed only for the steps the critique judges.

    Args:
        items: the solutions, with their problems' known answers.
        teacher: the sampler that writes critiques (one greedy candidate per item).
        completer: the sampler that continues step prefixes.
        extractor: maps a completed solution to its answer.
        rng: the random source for balancing.
        monte_carlo: m and the completer's sampling parameters.
        teacher_params: the teacher's decoding parameters (default: greedy, 2048 tokens).
        key: the comparison key of answers (default: geotts's ``numeric_key``).
        balanced: keep as many solutions with an error as without (the larger side is sampled).

    Returns:
        The records and the statistics.

    Raises:
        DataError: two items share an id, or a sampler returned the wrong number of candidates.
    """
    ids = [item.id for item in items]
    if len(set(ids)) != len(ids):
        raise DataError(f"item ids must be unique; repeated: {sorted({i for i in ids if ids.count(i) > 1})}")
    drops: dict[str, DropReason] = {}
    split: list[tuple[PRMItem, tuple[str, ...]]] = []
    for item in items:
        steps = item.solution_steps
        if steps:
            split.append((item, steps))
        else:
            drops[item.id] = "no_steps"
    params = teacher_params or SamplingParams(temperature=0.0, max_tokens=2048)
    usable: list[tuple[PRMItem, tuple[str, ...], Critique]] = []
    for (item, steps), critique in zip(split, _teacher_critiques(split, teacher, params), strict=True):
        if critique is None:
            drops[item.id] = "teacher_unreadable"
        elif not critique.has_error and len(critique.steps) != len(steps):
            drops[item.id] = "teacher_incomplete"
        else:
            usable.append((item, steps, critique))
    mc = monte_carlo or MonteCarlo()
    judged = [
        (item, steps[: len(critique.steps)]) for item, steps, critique in usable if item.mc_labels is None
    ]
    computed = iter(mc_hard_labels(judged, completer, extractor, settings=mc, key=key))
    labels = [
        item.mc_labels[: len(critique.steps)] if item.mc_labels is not None else next(computed)
        for item, _, critique in usable
    ]
    agreed = [(i, s, c) for (i, s, c), lab in zip(usable, labels, strict=True) if agrees(c, lab)]
    drops.update(
        {i.id: "disagree" for (i, _, c), lab in zip(usable, labels, strict=True) if not agrees(c, lab)}
    )
    if balanced:
        keep = balance(
            [i.id for i, _, c in agreed if c.has_error], [i.id for i, _, c in agreed if not c.has_error], rng
        )
        drops.update({i.id: "balance" for i, _, _ in agreed if i.id not in keep})
        agreed = [entry for entry in agreed if entry[0].id in keep]
    records = tuple(_record(item, steps, critique) for item, steps, critique in agreed)
    reasons = ("no_steps", "teacher_unreadable", "teacher_incomplete", "disagree", "balance")
    stats = BuildStats(
        items=len(items),
        dropped={reason: sum(1 for r in drops.values() if r == reason) for reason in reasons},
        judged=len(usable),
        agreed=len(usable) - sum(1 for r in drops.values() if r == "disagree"),
        with_error=sum(1 for r in records if r.has_error),
        without_error=sum(1 for r in records if not r.has_error),
        completions=sum(len(steps) for _, steps in judged) * mc.completions,
    )
    return BuildResult(records=records, stats=stats, drops=drops)


def visualprm_items(records: Sequence[VisualPRMRecord], *, source: str = "visualprm400k") -> list[PRMItem]:
    """Turn VisualPRM400K records into items whose Monte Carlo labels come from the records.

    Args:
        records: records from :func:`load_visualprm`.
        source: the source name carried into the SFT records.

    Returns:
        One item per record: the record's steps, their hard labels, the reference answer.
    """
    return [
        PRMItem(
            id=record.id,
            question=record.question,
            images=record.images,
            solution=record.response,
            answer=record.answer,
            source=source,
            steps=tuple(step.step for step in record.steps),
            mc_labels=tuple(step.hard_label for step in record.steps),
        )
        for record in records
    ]
