"""Refined best-of-N (GM-PRM, section 3.3): a step scorer judges, corrects, and the policy continues.

The rule, defined here once (geoprm's evaluation uses it too):

* a solution is judged on the steps :func:`~geotts.split_steps` gives (labels and the final
  ``Answer:`` line taken out); a solution with no steps is not sent to the scorer and counts as one
  unverified step (:data:`~geotts.UNSCORED`, not all correct);
* its score aggregates the scores of the judged steps, up to and including the first wrong one
  (mean by default; min and max for the ablation), a judged step without a score counting as
  :data:`~geotts.UNSCORED`;
* the chosen solution has the best score among those judged correct at every step, else the best
  score among all; ties go to the earliest; with ``skip_unanswered`` (not the paper's rule, off by
  default) solutions without an extracted answer leave the pool first, unless none has one;
* the second round continues each first-round solution from its verified steps plus the corrected
  first wrong step, in the solution's own layout, or samples afresh when every step passed.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Annotated, Self

from pydantic import Field, model_validator

from geotts._live import _Cost, _generate, _request, _unique_ids
from geotts._models import Completion, Decision, GenerationRequest, GeoTTSModel, Problem, SamplingParams
from geotts._protocols import (
    UNSCORED,
    Aggregation,
    AnswerExtractor,
    Sampler,
    StepJudgement,
    StepScorer,
    StepScoreRequest,
)
from geotts._steps import continuation, split_steps
from geotts.errors import BackendError, StrategyConfigError

__all__ = (
    "BestOfNDecision",
    "RefinedBestOfN",
    "RefinedBestOfNConfig",
    "judge_solutions",
    "refined_prefix",
    "select_solution",
)

_NO_STEPS = StepJudgement(scores=(UNSCORED,), first_wrong=0)


def judge_solutions(
    scorer: StepScorer, problems: Sequence[Problem], solutions: Sequence[Sequence[str]]
) -> list[list[StepJudgement]]:
    """Judge every solution of every problem in one scorer call, split by :func:`~geotts.split_steps`.

    A solution with no steps (empty, or only an answer line) is not sent to the scorer: it is judged
    as one unverified step (:data:`~geotts.UNSCORED`, first step wrong, no correction).

    Args:
        scorer: the step scorer.
        problems: the problems, in order.
        solutions: the solution texts of each problem.

    Returns:
        The judgements, shaped like ``solutions``.

    Raises:
        BackendError: the scorer returned a different number of judgements than it was asked for.
    """
    steps = [[split_steps(text).steps for text in texts] for texts in solutions]
    requests = [
        StepScoreRequest(question=problem.question, images=problem.images, steps=solution)
        for problem, solutions_steps in zip(problems, steps, strict=True)
        for solution in solutions_steps
        if solution
    ]
    flat = scorer.score(requests) if requests else []
    if len(flat) != len(requests):
        raise BackendError(f"step scorer returned {len(flat)} judgements for {len(requests)} solutions")
    it = iter(flat)
    return [[next(it) if solution else _NO_STEPS for solution in row] for row in steps]


def select_solution(
    judgements: Sequence[StepJudgement], how: Aggregation = "mean", answered: Sequence[bool] | None = None
) -> int:
    """The refined best-of-N choice (GM-PRM, section 3.3): the position of the chosen solution.

    The best :meth:`~geotts.StepJudgement.aggregate` score among the solutions judged correct at
    every step, or among all when none is; ties go to the earliest.

    Args:
        judgements: the step judgements of the candidates.
        how: the aggregation of step scores.
        answered: per candidate, whether an answer was extracted from it. When given, candidates
            without one are left out first (unless none has one), as self-consistency leaves out
            votes without an answer; ``None`` keeps the paper's rule.

    Raises:
        StrategyConfigError: there are no judgements, ``how`` is unknown, or ``answered`` has
            another length than ``judgements``.
    """
    if not judgements:
        raise StrategyConfigError("refined best-of-N needs at least one candidate")
    if answered is not None and len(answered) != len(judgements):
        raise StrategyConfigError(f"answered has {len(answered)} flags for {len(judgements)} candidates")
    scores = [j.aggregate(how) for j in judgements]
    every = [i for i in range(len(judgements)) if answered is None or answered[i]] or list(
        range(len(judgements))
    )
    pool = [i for i in every if judgements[i].all_correct] or every
    return max(pool, key=lambda i: (scores[i], -i))


def refined_prefix(solution: str, judgement: StepJudgement) -> str:
    """The text the policy continues from in the second round ("" when every step passed).

    The solution's own text up to its first wrong step (preamble and verified steps, as written),
    then the correction, labelled the way the solution labels its steps, and the separator the
    solution puts between steps. Without a correction it ends after the verified steps.
    """
    if judgement.first_wrong is None:
        return ""
    return continuation(solution, judgement.first_wrong, judgement.correction)


class RefinedBestOfNConfig(GeoTTSModel):
    """Settings of refined best-of-N."""

    n: Annotated[int, Field(ge=2)] = 8
    """Total solutions per problem: N/2 first, then N/2 refined or resampled; must be even."""
    params: SamplingParams = Field(default_factory=lambda: SamplingParams(temperature=0.7, seed=0))
    """Sampling parameters of the policy (the i-th second-round call uses ``seed + 1 + i``)."""
    instruction: str = "{question}"
    """Prompt template; ``{question}`` is replaced by the problem's question."""
    aggregation: Aggregation = "mean"
    """How step scores combine into the solution score that selects (GM-PRM uses the mean)."""
    skip_unanswered: bool = False
    """Leave solutions without an extracted answer out of the choice (unless none has one), as
    self-consistency leaves out their votes; GM-PRM's rule (the default) keeps them."""

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
    score: float
    """Score of the selected solution (its step scores combined by the configured aggregation)."""
    mean_score: float
    """Mean step score of the selected solution."""
    all_correct: bool
    """Whether every step of the selected solution was judged correct."""


class RefinedBestOfN:
    """Refined best-of-N with a :class:`~geotts.StepScorer` and a :class:`~geotts.Sampler` policy."""

    name = "refined_best_of_n"

    def __init__(self, scorer: StepScorer, config: RefinedBestOfNConfig | None = None) -> None:
        self.scorer = scorer
        self.config = config or RefinedBestOfNConfig()

    def _second_round(
        self, problem: Problem, index: int, text: str, judgement: StepJudgement
    ) -> GenerationRequest:
        cfg = self.config
        # One seed per second-round candidate, so resampled solutions of one problem differ.
        p = (
            cfg.params
            if cfg.params.seed is None
            else cfg.params.model_copy(update={"seed": cfg.params.seed + 1 + index})
        )
        base = _request(problem, cfg.instruction, None, 1, p)
        # every step passed: a fresh solution from the same prompt (the prefix is then "")
        return base.model_copy(update={"assistant_prefix": refined_prefix(text, judgement)})

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
        judged1 = judge_solutions(self.scorer, problems, texts1)
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
        judged2 = judge_solutions(self.scorer, problems, texts2)
        out: list[BestOfNDecision] = []
        for i, cost in enumerate(costs):
            texts, judged, comps = texts1[i] + texts2[i], judged1[i] + judged2[i], first[i] + second[i]
            answers: tuple[Hashable | None, ...] = tuple(
                extractor(c.model_copy(update={"text": t}), None, problems[i])
                for c, t in zip(comps, texts, strict=True)
            )
            answered = [a is not None for a in answers] if cfg.skip_unanswered else None
            best = select_solution(judged, cfg.aggregation, answered)
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
                    score=judged[best].aggregate(cfg.aggregation),
                    mean_score=judged[best].mean_score,
                    all_correct=judged[best].all_correct,
                )
            )
        return out
