"""Step scores of a critique and the critique's verdict on the solution.

A step's score is the probability the reward model gives to the word "Correct" against "Incorrect" at
the position where it writes the step's final verdict (GM-PRM, section 3.3):
``P(Correct) / (P(Correct) + P(Incorrect))``. The model wrapper supplies, for each judged step, the
top log-probabilities at that position (from generation, or from a teacher-forced pass over a given
critique); everything here is pure arithmetic on those numbers and the parsed critique. How step
scores make a solution score, and which solution refined best-of-N picks, is geotts's rule
(:meth:`geotts.StepJudgement.aggregate`, :func:`geotts.select_solution`); :func:`geoprm.to_step_judgement`
turns a scored critique into the judgement that rule reads.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Annotated, Literal, Self, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from geoprm._labels import Judgement
from geoprm._parser import ParsedCritique, ParseProblem, parse_critique
from geoprm._printer import format_critique
from geoprm._schema import Critique
from geoprm.errors import ScoringError

Verdict: TypeAlias = Literal["all_correct", "has_incorrect", "undetermined"]
"""What a critique says about a whole solution."""

_LOGPROB_SLACK = 1e-6  # log-probs computed in low precision can exceed 0 by rounding


class JudgementTokens(BaseModel):
    """The token strings that spell the two judgements at a verdict position.

    A tokenizer may split " Incorrect" into several tokens; what matters is the first token of each
    word, and the two first tokens must differ. The model wrapper fills this from its tokenizer.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    correct: Annotated[tuple[str, ...], Field(min_length=1)] = ("Correct", " Correct")
    """Tokens whose probabilities add up to P(Correct)."""
    incorrect: Annotated[tuple[str, ...], Field(min_length=1)] = ("Incorrect", " Incorrect")
    """Tokens whose probabilities add up to P(Incorrect)."""

    @model_validator(mode="after")
    def _disjoint(self) -> Self:
        shared = set(self.correct) & set(self.incorrect)
        if shared:
            raise ValueError(f"tokens {sorted(shared)} cannot stand for both Correct and Incorrect")
        return self


DEFAULT_TOKENS = JudgementTokens()
"""The judgement tokens of a tokenizer that keeps " Correct" and " Incorrect" whole."""


class VerdictLogprobs(BaseModel):
    """The top log-probabilities at one step's final-verdict position."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    step: Annotated[int, Field(ge=1)]
    """The step number the verdict belongs to (as the critique numbers it)."""
    top_logprobs: dict[str, float]
    """Token string -> natural-log probability, for the most likely tokens at that position."""

    @field_validator("top_logprobs")
    @classmethod
    def _probabilities(cls, value: dict[str, float]) -> dict[str, float]:
        for token, logprob in value.items():
            if math.isnan(logprob) or logprob > _LOGPROB_SLACK:
                raise ValueError(f"log-prob of token {token!r} is {logprob}; it must be <= 0")
        return value


class StepScore(BaseModel):
    """The score of one critiqued step, or the reason it has none."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    index: int
    """The step number, as the critique gives it."""
    judgement: Judgement | None
    """The final verdict the critique states (or infers), None when unreadable."""
    score: Annotated[float, Field(ge=0.0, le=1.0)] | None
    """P(Correct) / (P(Correct) + P(Incorrect)) at the verdict, or None."""
    reason: str | None
    """Why there is no score; None exactly when there is one."""

    @model_validator(mode="after")
    def _reason_iff_unscored(self) -> Self:
        if (self.score is None) == (self.reason is None):
            raise ValueError("a step score has either a score or a reason for having none, not both")
        return self


class CritiqueScores(BaseModel):
    """Step scores of one critique, with the critique's verdict on the whole solution."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    steps: tuple[StepScore, ...]
    """One entry per critiqued step, in order."""
    verdict: Verdict
    """all_correct: every step of the solution was judged Correct in a complete critique;
    has_incorrect: some step was judged Incorrect; undetermined: neither can be told."""
    verdict_reason: str | None
    """Why the verdict is undetermined; None otherwise."""
    problems: tuple[ParseProblem, ...]
    """The problems the lenient parser met in the critique text."""
    num_steps: Annotated[int, Field(ge=0)] | None = None
    """The number of steps of the judged solution, when known. The critique's i-th block judges the
    solution's i-th step (its position, not the number the critic writes); what blocks past the last
    step count for is :func:`geoprm.to_step_judgement`'s rule."""

    @model_validator(mode="after")
    def _incorrect_step_if_has_incorrect(self) -> Self:
        if self.verdict == "has_incorrect" and all(step.judgement != "Incorrect" for step in self.steps):
            raise ValueError("a has_incorrect verdict needs a step judged Incorrect")
        return self


def step_score(logprobs: Mapping[str, float], tokens: JudgementTokens | None = None) -> float | None:
    """P(Correct) / (P(Correct) + P(Incorrect)) from the top log-probs at a verdict position.

    A judgement token missing from the top log-probs counts as probability 0.

    Args:
        logprobs: token -> log-prob at the verdict position.
        tokens: which tokens spell each judgement; the default is :class:`JudgementTokens`'s.

    Returns:
        The score, or None when neither judgement's tokens are among the log-probs.
    """
    tokens = tokens or DEFAULT_TOKENS
    correct = sum(math.exp(logprobs[token]) for token in tokens.correct if token in logprobs)
    incorrect = sum(math.exp(logprobs[token]) for token in tokens.incorrect if token in logprobs)
    if correct + incorrect <= 0.0:
        return None
    return min(1.0, correct / (correct + incorrect))


def _score_one(
    step_index: int,
    judgement: Judgement | None,
    inferred: bool,
    duplicated: bool,
    entry: VerdictLogprobs | None,
    tokens: JudgementTokens,
) -> StepScore:
    reason: str | None = None
    score: float | None = None
    if judgement is None:
        reason = f"step {step_index} has no readable final verdict"
    elif inferred:
        reason = f"step {step_index}'s final verdict was not written (inferred {judgement} from the other verdicts)"
    elif duplicated:
        reason = f"step number {step_index} appears more than once in the critique"
    elif entry is None:
        reason = f"no log-probs were given for step {step_index}'s verdict"
    else:
        score = step_score(entry.top_logprobs, tokens)
        if score is None:
            reason = f"neither judgement token is among the top log-probs at step {step_index}'s verdict"
    return StepScore(index=step_index, judgement=judgement, score=score, reason=reason)


def _verdict(parsed: ParsedCritique, num_steps: int | None) -> tuple[Verdict, str | None]:
    judgements = parsed.judgements
    if num_steps == 0:
        return "undetermined", "the solution has no step to judge"
    if "Incorrect" in judgements:
        return "has_incorrect", None
    if not parsed.steps:
        return "undetermined", "the critique has no step"
    if None in judgements:
        return "undetermined", "some step's verdict is unreadable"
    if not parsed.complete:
        return "undetermined", "the critique is cut off (no end marker)"
    if [step.index for step in parsed.steps] != list(range(1, len(parsed.steps) + 1)):
        return "undetermined", "the critique's steps are not numbered 1..k"
    if num_steps is not None and len(parsed.steps) < num_steps:
        return "undetermined", f"the critique judges {len(parsed.steps)} of the solution's {num_steps} steps"
    return "all_correct", None


def score_critique(
    critique: str | ParsedCritique | Critique,
    logprobs: Sequence[VerdictLogprobs],
    *,
    tokens: JudgementTokens | None = None,
    num_steps: int | None = None,
) -> CritiqueScores:
    """Score every step of a critique from the log-probs at its final verdicts.

    A truncated or malformed critique never raises: steps whose verdict cannot be read (or was not
    written, or has no log-probs) get no score and the reason is kept.

    Args:
        critique: the critique text (parsed leniently), a parsed critique, or a critique.
        logprobs: the top log-probs at each step's verdict, keyed by step number.
        tokens: which tokens spell each judgement; the default is :class:`JudgementTokens`'s.
        num_steps: the number of steps of the judged solution, when known; an all-Correct critique that
            covers fewer steps is then undetermined rather than all_correct, and a solution with no
            step is undetermined.

    Returns:
        The step scores and the verdict on the solution.

    Raises:
        ScoringError: two log-prob entries name the same step, or an entry names a step the critique
            does not contain (the caller's positions do not match the critique).
    """
    if isinstance(critique, str):
        parsed = parse_critique(critique, strict=False)
    elif isinstance(critique, Critique):
        parsed = parse_critique(format_critique(critique), strict=False)
    else:
        parsed = critique
    tokens = tokens or DEFAULT_TOKENS
    by_step: dict[int, VerdictLogprobs] = {}
    for entry in logprobs:
        if entry.step in by_step:
            raise ScoringError(f"log-probs are given twice for step {entry.step}")
        by_step[entry.step] = entry
    counts = Counter(step.index for step in parsed.steps)
    unknown = sorted(set(by_step) - set(counts))
    if unknown:
        raise ScoringError(f"log-probs are given for steps {unknown}, which the critique does not contain")
    steps = tuple(
        _score_one(
            step.index,
            step.judgement,
            step.judgement_inferred,
            counts[step.index] > 1,
            by_step.get(step.index),
            tokens,
        )
        for step in parsed.steps
    )
    verdict, reason = _verdict(parsed, num_steps)
    return CritiqueScores(
        steps=steps, verdict=verdict, verdict_reason=reason, problems=parsed.problems, num_steps=num_steps
    )
