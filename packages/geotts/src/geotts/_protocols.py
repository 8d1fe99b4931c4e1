"""The pluggable pieces: a sampler (generation backend), an answer extractor and a step scorer (PRM)."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Hashable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Literal, Protocol, Self, TypeAlias, runtime_checkable

from pydantic import Field, model_validator

from geotts._models import Completion, GenerationRequest, GeoTTSModel, Problem
from geotts.errors import StrategyConfigError

__all__ = (
    "AGGREGATIONS",
    "UNSCORED",
    "Aggregation",
    "AnswerExtractor",
    "Sampler",
    "StepJudgement",
    "StepScoreRequest",
    "StepScorer",
)

Aggregation: TypeAlias = Literal["mean", "min", "max"]
"""How the step scores of a solution combine into its score (GM-PRM, section 4.3, compares the three)."""

AGGREGATIONS: Mapping[Aggregation, Callable[[Sequence[float]], float]] = {
    "mean": statistics.fmean,
    "min": min,
    "max": max,
}
"""The aggregations by name."""

UNSCORED = 0.5
"""The score of a judged step the scorer could not score (an unreadable verdict, no log-probs): a
judged step always counts, and 0.5 says nothing either way. A solution with no steps counts as one
such step."""


@runtime_checkable
class Sampler(Protocol):
    """A generation backend: a batch of requests in, ranked candidates per request out.

    ``generate`` returns one list per request, in request order, each with exactly ``request.n``
    candidates ranked best first (beam order for beam search, generation order for sampling).
    """

    def generate(self, requests: Sequence[GenerationRequest]) -> list[list[Completion]]:
        """Generate candidates for every request."""
        ...


class AnswerExtractor(Protocol):
    """Maps a candidate to a hashable answer, or None when it yields none (a failed execution: no vote).

    The extractor is told which problem the candidate answers, so one extractor serves a whole
    batch of problems even when reading an answer needs per-problem data (``problem.metadata``).
    """

    def __call__(self, completion: Completion, trace_type: str | None, problem: Problem) -> Hashable | None:
        """Extract the answer of ``completion``, generated for ``trace_type`` while solving ``problem``."""
        ...


class StepScoreRequest(GeoTTSModel):
    """A solution, split into steps, to be judged step by step."""

    question: str
    """The problem statement."""
    images: tuple[bytes | Path, ...] = ()
    """The problem's images."""
    steps: tuple[str, ...]
    """The solution's steps in order."""


class StepJudgement(GeoTTSModel):
    """A step scorer's verdict on one solution."""

    scores: tuple[Annotated[float, Field(ge=0.0, le=1.0)], ...]
    """Probability that each judged step is correct, for the steps up to and including the first
    wrong one (the scorer stops there); a judged step without a score is reported as :data:`UNSCORED`."""
    first_wrong: Annotated[int, Field(ge=0)] | None = None
    """Index of the first wrong step, or None when every step passed."""
    correction: str | None = None
    """A corrected version of the first wrong step, when the scorer can write one (a ``Step k:`` label
    is optional: the refined round writes it in the solution's own layout)."""

    @model_validator(mode="after")
    def _check(self) -> Self:
        if not self.scores:
            raise StrategyConfigError("StepJudgement.scores is empty; judge at least one step")
        if self.first_wrong is not None and self.first_wrong != len(self.scores) - 1:
            raise StrategyConfigError(
                f"StepJudgement.first_wrong={self.first_wrong} must be the last judged step "
                f"({len(self.scores)} scores given): steps after the first wrong one are not judged"
            )
        if self.first_wrong is None and self.correction is not None:
            raise StrategyConfigError("StepJudgement.correction given but no step is marked wrong")
        return self

    @property
    def all_correct(self) -> bool:
        """True when no step was judged wrong."""
        return self.first_wrong is None

    @property
    def mean_score(self) -> float:
        """Mean of the step scores (the solution score GM-PRM, section 3.3, selects by)."""
        return self.aggregate("mean")

    def aggregate(self, how: Aggregation = "mean") -> float:
        """The solution's score: the mean, min or max of its judged steps' scores.

        Raises:
            StrategyConfigError: ``how`` is not one of mean, min, max.
        """
        if how not in AGGREGATIONS:
            raise StrategyConfigError(f"unknown aggregation {how!r}; use one of {', '.join(AGGREGATIONS)}")
        return AGGREGATIONS[how](self.scores)


@runtime_checkable
class StepScorer(Protocol):
    """A process reward model: judges every solution of a batch step by step (geoprm implements it)."""

    def score(self, requests: Sequence[StepScoreRequest]) -> list[StepJudgement]:
        """Judge each request's steps; one judgement per request, in order."""
        ...
