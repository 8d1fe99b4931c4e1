"""Refined best-of-N (GM-PRM, section 3.3): a step scorer judges, corrects, and the policy continues."""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Sequence
from typing import Annotated, Self

from pydantic import Field, model_validator

from geotts._live import _Cost, _generate, _request, _seeded, _unique_ids
from geotts._models import Completion, Decision, GenerationRequest, GeoTTSModel, Problem, SamplingParams
from geotts._protocols import AnswerExtractor, Sampler, StepJudgement, StepScorer, StepScoreRequest
from geotts.errors import BackendError, StrategyConfigError

__all__ = ("BestOfNDecision", "RefinedBestOfN", "RefinedBestOfNConfig", "split_steps")

_STEP_BREAK = re.compile(r"\n\s*\n|\n(?=\s*Step\s*\d+\s*[:.])", re.IGNORECASE)


def split_steps(text: str) -> list[str]:
    """Default step splitter: blank lines or lines starting with ``Step k:``; single lines as a last resort."""
    parts = [p.strip() for p in _STEP_BREAK.split(text) if p.strip()]
    if len(parts) <= 1:
        parts = [line.strip() for line in text.splitlines() if line.strip()]
    return parts or [text.strip()]


class RefinedBestOfNConfig(GeoTTSModel):
    """Settings of refined best-of-N."""

    n: Annotated[int, Field(ge=2)] = 8
    """Total solutions per problem: N/2 first, then N/2 refined or resampled; must be even."""
    params: SamplingParams = Field(default_factory=lambda: SamplingParams(temperature=0.7, seed=0))
    """Sampling parameters of the policy (the i-th second-round call uses ``seed + 1 + i``)."""
    instruction: str = "{question}"
    """Prompt template; ``{question}`` is replaced by the problem's question."""
    step_separator: str = "\n\n"
    """Joins the verified steps and the corrected step into the prefix the policy continues."""

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.n % 2:
            raise StrategyConfigError(
                f"refined best-of-N needs an even n (N/2 first, N/2 refined), got {self.n}"
            )
        if self.params.temperature == 0.0:
            raise StrategyConfigError(
                "refined best-of-N samples N/2 solutions at once; temperature must be above 0"
            )
        if "{question}" not in self.instruction:
            raise StrategyConfigError(f"instruction has no '{{question}}' placeholder: {self.instruction!r}")
        return self


class BestOfNDecision(Decision):
    """A best-of-N decision, with the chosen solution and its step verdict."""

    solution: str
    """Full text of the selected solution (verified prefix included for refined ones)."""
    mean_score: float
    """Mean step score of the selected solution."""
    all_correct: bool
    """Whether every step of the selected solution was judged correct."""


def _select(judgements: Sequence[StepJudgement]) -> int:
    """Best mean step score among all-correct solutions, else among all; ties go to the earliest."""
    pool = [i for i, j in enumerate(judgements) if j.all_correct] or list(range(len(judgements)))
    return max(pool, key=lambda i: (judgements[i].mean_score, -i))


class RefinedBestOfN:
    """Refined best-of-N with a :class:`~geotts.StepScorer` and a :class:`~geotts.Sampler` policy."""

    name = "refined_best_of_n"

    def __init__(
        self,
        scorer: StepScorer,
        config: RefinedBestOfNConfig | None = None,
        *,
        splitter: Callable[[str], list[str]] = split_steps,
    ) -> None:
        self.scorer = scorer
        self.config = config or RefinedBestOfNConfig()
        self.splitter = splitter

    def _judge(
        self, problems: Sequence[Problem], texts: Sequence[Sequence[str]]
    ) -> list[list[StepJudgement]]:
        reqs = [
            StepScoreRequest(question=p.question, images=p.images, steps=tuple(self.splitter(t) or [t]))
            for p, ts in zip(problems, texts, strict=True)
            for t in ts
        ]
        flat = self.scorer.score(reqs)
        if len(flat) != len(reqs):
            raise BackendError(f"step scorer returned {len(flat)} judgements for {len(reqs)} solutions")
        it = iter(flat)
        return [[next(it) for _ in ts] for ts in texts]

    def _second_round(
        self, problem: Problem, index: int, text: str, judgement: StepJudgement
    ) -> GenerationRequest:
        cfg = self.config
        # One seed per second-round candidate, so resampled solutions of one problem differ.
        base = _request(problem, cfg.instruction, None, 1, _seeded(cfg.params, 1 + index))
        if judgement.first_wrong is None:
            return base  # every step passed: a fresh solution from the same prompt
        steps = self.splitter(text)[: judgement.first_wrong]
        if judgement.correction is not None:
            steps.append(judgement.correction)
        prefix = cfg.step_separator.join(steps) + (cfg.step_separator if steps else "")
        return base.model_copy(update={"assistant_prefix": prefix})

    def run(
        self, sampler: Sampler, problems: Sequence[Problem], extractor: AnswerExtractor
    ) -> list[BestOfNDecision]:
        """Generate, judge, refine and select; one decision per problem, in order."""
        _unique_ids(problems)
        cfg, half = self.config, self.config.n // 2
        first = _generate(sampler, [_request(p, cfg.instruction, None, half, cfg.params) for p in problems])
        costs = [_Cost() for _ in problems]
        for cost, comps in zip(costs, first, strict=True):
            cost.add(comps)
        texts1 = [[c.text for c in comps] for comps in first]
        judged1 = self._judge(problems, texts1)
        reqs = [
            self._second_round(p, i, t, j)
            for p, ts, js in zip(problems, texts1, judged1, strict=True)
            for i, (t, j) in enumerate(zip(ts, js, strict=True))
        ]
        flat2 = iter(_generate(sampler, reqs))
        req_it = iter(reqs)
        texts2: list[list[str]] = []
        second: list[list[Completion]] = []
        for cost in costs:
            comps = [next(flat2)[0] for _ in range(half)]
            cost.add(comps)
            second.append(comps)
            texts2.append([next(req_it).assistant_prefix + c.text for c in comps])
        judged2 = self._judge(problems, texts2)
        out: list[BestOfNDecision] = []
        for i, cost in enumerate(costs):
            texts, judged, comps = texts1[i] + texts2[i], judged1[i] + judged2[i], first[i] + second[i]
            best = _select(judged)
            answers: tuple[Hashable | None, ...] = tuple(
                extractor(c.model_copy(update={"text": t}), None, problems[i])
                for c, t in zip(comps, texts, strict=True)
            )
            out.append(
                BestOfNDecision(
                    answer=answers[best],
                    depth=2,
                    samples=cfg.n,
                    generated=cost.generated,
                    tokens=cost.tokens,
                    fallback=not judged[best].all_correct,
                    strategy=self.name,
                    pool=(("solutions", answers),),
                    solution=texts[best],
                    mean_score=judged[best].mean_score,
                    all_correct=judged[best].all_correct,
                )
            )
        return out
