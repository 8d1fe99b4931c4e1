"""Step scores, solution scores and the refined best-of-N decision rule.

A step's score is the probability the reward model gives to the word "Correct" against "Incorrect" at
the position where it writes the step's final verdict (GM-PRM, section 3.3):
``P(Correct) / (P(Correct) + P(Incorrect))``. The model wrapper supplies, for each judged step, the
top log-probabilities at that position (from generation, or from a teacher-forced pass over a given
critique); everything here is pure arithmetic on those numbers and the parsed critique.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Literal, Self, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from geoprm._labels import Judgement
from geoprm._parser import ParsedCritique, ParseProblem, parse_critique
from geoprm._printer import format_critique
from geoprm._schema import Critique
from geoprm.errors import ScoringError

Aggregation: TypeAlias = Literal["mean", "min", "max"]
"""How step scores combine into a solution score."""

Verdict: TypeAlias = Literal["all_correct", "has_incorrect", "undetermined"]
"""What a critique says about a whole solution."""

AGGREGATIONS: Mapping[Aggregation, Callable[[Sequence[float]], float]] = {
    "mean": statistics.fmean,
    "min": min,
    "max": max,
}

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

    def solution_score(self, how: Aggregation = "mean") -> float | None:
        """The solution's score: the mean, min or max of the scored steps; None when none is scored."""
        return solution_score([step.score for step in self.steps], how)


def solution_score(scores: Sequence[float | None], how: Aggregation = "mean") -> float | None:
    """Combine step scores into a solution score, skipping unscored steps.

    Args:
        scores: the step scores; None marks a step without a score.
        how: ``"mean"``, ``"min"`` or ``"max"``.

    Returns:
        The combined score, or None when no step has a score.

    Raises:
        ScoringError: ``how`` is not a known aggregation.
    """
    if how not in AGGREGATIONS:
        raise ScoringError(f"unknown aggregation {how!r}; use one of {', '.join(AGGREGATIONS)}")
    present = [score for score in scores if score is not None]
    return AGGREGATIONS[how](present) if present else None


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
            covers fewer steps is then undetermined rather than all_correct.

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
    return CritiqueScores(steps=steps, verdict=verdict, verdict_reason=reason, problems=parsed.problems)


class Selection(BaseModel):
    """The candidate refined best-of-N picks."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    index: int
    """Position of the chosen candidate in the input."""
    score: float | None
    """Its solution score, or None when no candidate could be scored."""
    pool: Literal["all_correct", "all", "unscored"]
    """all_correct: chosen among the candidates judged correct at every step; all: no scored candidate
    was judged all correct, so chosen among all scored candidates; unscored: no candidate had a score,
    so the first one is returned."""


def _best(scored: Sequence[tuple[int, float]]) -> tuple[int, float]:
    best = scored[0]
    for candidate in scored[1:]:
        if candidate[1] > best[1]:
            best = candidate
    return best


def select_refined_bon(candidates: Sequence[CritiqueScores], *, how: Aggregation = "mean") -> Selection:
    """The decision rule of refined best-of-N (GM-PRM, section 3.3).

    Among the candidates whose critique judges every step Correct, pick the highest solution score; if
    there is none, pick the highest solution score among all candidates. Ties go to the earliest
    candidate. Candidates with no scored step are never preferred over scored ones.

    Args:
        candidates: the scored critiques of the N candidate solutions, in candidate order.
        how: how step scores combine (GM-PRM, section 3.3, uses the mean).

    Returns:
        The chosen candidate's position, score and the pool it was chosen from.

    Raises:
        ScoringError: there are no candidates.
    """
    if not candidates:
        raise ScoringError("refined best-of-N needs at least one candidate")
    return choose([(candidate.solution_score(how), candidate.verdict) for candidate in candidates])


def choose(candidates: Sequence[tuple[float | None, Verdict]]) -> Selection:
    """The refined best-of-N rule on (solution score, verdict) pairs; see :func:`select_refined_bon`."""
    if not candidates:
        raise ScoringError("refined best-of-N needs at least one candidate")
    scored = [
        (position, value, verdict)
        for position, (value, verdict) in enumerate(candidates)
        if value is not None
    ]
    correct = [(position, value) for position, value, verdict in scored if verdict == "all_correct"]
    if correct:
        index, value = _best(correct)
        return Selection(index=index, score=value, pool="all_correct")
    if scored:
        index, value = _best([(position, value) for position, value, _ in scored])
        return Selection(index=index, score=value, pool="all")
    return Selection(index=0, score=None, pool="unscored")
