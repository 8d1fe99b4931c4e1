"""Evaluation of best-of-N, refined best-of-N and self-consistency on recorded runs (GM-PRM, section 4).

A recorded problem holds N independently sampled policy solutions and, aligned with them, the
refined-round solutions (candidate i of the refined round continues from the critique of sampled
candidate i), each with its answer, its step scores and its critique's verdict. From that:

* accuracy as N grows (GM-PRM's Figure 4, section 4.3): the policy's mean accuracy (the baseline), best-of-N
  over the first N sampled candidates, refined best-of-N over the first N/2 sampled candidates and
  their N/2 refinements, and self-consistency over the first N sampled candidates;
* Pass@k of the sampled pool against the refined pool of the same size (unbiased estimator);
* the aggregation ablation (mean / min / max step scores) and the results by problem type.

Both best-of-N variants select with geotts's refined best-of-N rule (:func:`geotts.select_solution`,
the rule :class:`geotts.RefinedBestOfN` selects with): the pools differ, not the selection. Tables are Markdown; plots need matplotlib (``geoprm[report]``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Sequence
from pathlib import Path
from typing import Annotated, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from geoprm._prompts import policy_prompt
from geoprm._scores import Verdict
from geoprm.errors import GeoPRMError, MissingExtraError
from geotts import (
    UNSCORED,
    Aggregation,
    AnswerExtractor,
    AnswerKey,
    ChatMessage,
    Completion,
    GenerationRequest,
    Problem,
    Sampler,
    SamplingParams,
    StepJudgement,
    StepScorer,
    judge_solutions,
    numeric_key,
    refined_prefix,
    select_solution,
    self_consistency,
)

__all__ = (
    "AblationRow",
    "CurveRow",
    "EvalCandidate",
    "EvalProblem",
    "EvaluationError",
    "KindRow",
    "PassRow",
    "StepF1",
    "accuracy_curve",
    "aggregation_ablation",
    "by_kind",
    "markdown_table",
    "pass_at_k",
    "plot_accuracy_curve",
    "record_runs",
    "step_f1",
)


class EvaluationError(GeoPRMError, ValueError):
    """Recorded runs that cannot be evaluated as asked (N larger than the pools, inconsistent pools)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class EvalCandidate(_Frozen):
    """One recorded solution with its critique's outcome."""

    answer: float | str | None
    """The extracted answer (None when the solution has none)."""
    step_scores: tuple[Annotated[float, Field(ge=0.0, le=1.0)] | None, ...] = ()
    """The scores of the judged steps, in order, up to and including the first wrong one (the critic
    stops there); None marks a judged step without a score, which counts as ``geotts.UNSCORED``."""
    verdict: Verdict = "undetermined"
    """The critique's verdict on the solution; anything but all_correct makes the last judged step the
    first wrong one."""
    correction: str | None = None
    """The critique's correction of the first wrong step (None: none written)."""
    text: str | None = None
    """The solution as the critic judged it (None: not recorded)."""

    @model_validator(mode="after")
    def _scored_if_correct(self) -> Self:
        if self.verdict == "all_correct" and not self.step_scores:
            raise ValueError("an all_correct candidate needs the scores of its judged steps")
        return self

    @classmethod
    def from_judgement(
        cls, answer: float | str | None, judgement: StepJudgement, text: str | None = None
    ) -> EvalCandidate:
        """The record of a solution with this answer and judgement (``judgement`` round-trips)."""
        verdict: Verdict = "all_correct" if judgement.all_correct else "has_incorrect"
        return cls(
            answer=answer, step_scores=judgement.scores, verdict=verdict, correction=judgement.correction,
            text=text,
        )  # fmt: skip

    @property
    def judgement(self) -> StepJudgement:
        """The recorded outcome as the judgement geotts's rule reads (no steps: one unverified step)."""
        scores = tuple(UNSCORED if s is None else s for s in self.step_scores) or (UNSCORED,)
        wrong = None if self.verdict == "all_correct" else len(scores) - 1
        return StepJudgement(
            scores=scores, first_wrong=wrong, correction=None if wrong is None else self.correction
        )


class EvalProblem(_Frozen):
    """One problem's recorded pools."""

    id: str
    """The problem's id (an integer id in a JSON file reads as its decimal text)."""
    kind: str = "other"
    """The problem type (e.g. ``plane_geometry``, ``functions``, ``other``)."""
    answer: float | str
    """The correct answer."""
    sampled: Annotated[tuple[EvalCandidate, ...], Field(min_length=1)]
    """Independent policy samples, in sampling order."""
    refined: tuple[EvalCandidate, ...] = ()
    """Refined-round solutions; ``refined[i]`` was generated from the critique of ``sampled[i]``."""

    @field_validator("id", mode="before")
    @classmethod
    def _integer_id(cls, value: object) -> object:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @model_validator(mode="after")
    def _aligned(self) -> Self:
        if len(self.refined) > len(self.sampled):
            raise ValueError(
                f"problem {self.id}: {len(self.refined)} refined but {len(self.sampled)} sampled"
            )
        return self


class CurveRow(_Frozen):
    """Accuracies at one N."""

    n: int
    """The number of candidates."""
    policy: float
    """Mean accuracy of single samples (the baseline)."""
    bon: float
    """Best-of-N over the first N samples."""
    refined_bon: float | None
    """Refined best-of-N over N/2 samples and their refinements (None when N is odd or too large)."""
    self_consistency: float
    """Majority vote over the first N samples."""


class PassRow(_Frozen):
    """Pass@k of the two pools of size N."""

    k: int
    """How many candidates may be tried."""
    sampled: float
    """Pass@k of N independent samples."""
    refined: float
    """Pass@k of the refined pool (N/2 samples and their N/2 refinements)."""


class AblationRow(_Frozen):
    """Refined best-of-N accuracy with one aggregation of step scores."""

    how: Aggregation
    """The aggregation."""
    bon: float
    """Best-of-N accuracy."""
    refined_bon: float
    """Refined best-of-N accuracy."""


class KindRow(_Frozen):
    """Results on one problem type."""

    kind: str
    """The problem type."""
    problems: int
    """How many problems have it."""
    policy: float
    """Mean accuracy of single samples."""
    refined_bon: float
    """Refined best-of-N accuracy."""
    improvement: float
    """Refined best-of-N minus the baseline, in points of accuracy."""


def _right(candidate: EvalCandidate, gold: float | str, key: AnswerKey) -> bool:
    return candidate.answer is not None and key(candidate.answer) == key(gold)


def _pick(pool: Sequence[EvalCandidate], how: Aggregation, skip_unanswered: bool) -> EvalCandidate:
    answered = [c.answer is not None for c in pool] if skip_unanswered else None
    return pool[select_solution([c.judgement for c in pool], how, answered)]


def _refined_pool(problem: EvalProblem, n: int) -> list[EvalCandidate] | None:
    half = n // 2
    if n % 2 or half > len(problem.refined):
        return None
    return [*problem.sampled[:half], *problem.refined[:half]]


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _check(problems: Sequence[EvalProblem], n: int) -> None:
    if not problems:
        raise EvaluationError("no problems to evaluate")
    short = [p.id for p in problems if len(p.sampled) < n]
    if n < 1 or short:
        raise EvaluationError(f"N={n} needs N sampled candidates per problem; too few in {short[:5]}")


def accuracy_curve(
    problems: Sequence[EvalProblem],
    ns: Sequence[int],
    *,
    how: Aggregation = "mean",
    key: AnswerKey = numeric_key,
    skip_unanswered: bool = False,
) -> list[CurveRow]:
    """Accuracy of each strategy as N grows.

    Args:
        problems: the recorded problems.
        ns: the values of N.
        how: the aggregation of step scores.
        key: the answer comparison key.
        skip_unanswered: both best-of-N variants leave candidates without an answer out of the
            choice unless none has one (``geotts.RefinedBestOfNConfig.skip_unanswered``); the
            default is GM-PRM's rule.

    Returns:
        One row per N.

    Raises:
        EvaluationError: no problems, or some N exceeds a problem's sampled pool.
    """
    rows: list[CurveRow] = []
    for n in ns:
        _check(problems, n)
        pools = [_refined_pool(p, n) for p in problems]
        refined = None
        if all(pool is not None for pool in pools):
            refined = _mean(
                [
                    float(_right(_pick(pool, how, skip_unanswered), p.answer, key))
                    for p, pool in zip(problems, pools, strict=True)
                    if pool
                ]
            )
        rows.append(
            CurveRow(
                n=n,
                policy=_mean(
                    [_mean([float(_right(c, p.answer, key)) for c in p.sampled[:n]]) for p in problems]
                ),
                bon=_mean(
                    [
                        float(_right(_pick(p.sampled[:n], how, skip_unanswered), p.answer, key))
                        for p in problems
                    ]
                ),
                refined_bon=refined,
                self_consistency=_mean([float(_sc_right(p, n, key)) for p in problems]),
            )
        )
    return rows


def _sc_right(problem: EvalProblem, n: int, key: AnswerKey) -> bool:
    answers: list[Hashable | None] = [c.answer for c in problem.sampled[:n]]
    winner = self_consistency(answers, key=key).answer
    return winner is not None and key(winner) == key(problem.answer)


def _pass(n: int, c: int, k: int) -> float:
    """The unbiased Pass@k estimate from n tries with c successes: 1 - C(n - c, k) / C(n, k)."""
    return 1.0 if n - c < k else 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_at_k(
    problems: Sequence[EvalProblem], n: int, ks: Sequence[int], *, key: AnswerKey = numeric_key
) -> list[PassRow]:
    """Pass@k of the sampled pool and the refined pool, both of size N.

    Args:
        problems: the recorded problems (each with at least N samples and N/2 refinements).
        n: the pool size (even).
        ks: the values of k (1 <= k <= N).
        key: the answer comparison key.

    Returns:
        One row per k.

    Raises:
        EvaluationError: the pools are too small, N is odd, or some k is out of range.
    """
    _check(problems, n)
    pools = [_refined_pool(p, n) for p in problems]
    if any(pool is None for pool in pools):
        raise EvaluationError(f"Pass@k at N={n} needs an even N and N/2 refined candidates per problem")
    bad = [k for k in ks if not 1 <= k <= n]
    if bad:
        raise EvaluationError(f"k must be between 1 and N={n}; got {bad}")
    rows: list[PassRow] = []
    for k in ks:
        sampled = [_pass(n, sum(_right(c, p.answer, key) for c in p.sampled[:n]), k) for p in problems]
        refined = [
            _pass(n, sum(_right(c, p.answer, key) for c in pool or ()), k)
            for p, pool in zip(problems, pools, strict=True)
        ]
        rows.append(PassRow(k=k, sampled=_mean(sampled), refined=_mean(refined)))
    return rows


def aggregation_ablation(
    problems: Sequence[EvalProblem], n: int, *, key: AnswerKey = numeric_key
) -> list[AblationRow]:
    """Best-of-N and refined best-of-N accuracy at N with mean, min and max step-score aggregation.

    Raises:
        EvaluationError: the pools are too small for N.
    """
    rows: list[AblationRow] = []
    for how in ("mean", "min", "max"):
        (row,) = accuracy_curve(problems, [n], how=how, key=key)
        if row.refined_bon is None:
            raise EvaluationError(
                f"refined best-of-N at N={n} needs an even N and N/2 refined candidates per problem"
            )
        rows.append(AblationRow(how=how, bon=row.bon, refined_bon=row.refined_bon))
    return rows


def by_kind(problems: Sequence[EvalProblem], n: int, *, key: AnswerKey = numeric_key) -> list[KindRow]:
    """Baseline and refined best-of-N accuracy at N for each problem type (types in first-seen order).

    Raises:
        EvaluationError: the pools are too small for N.
    """
    kinds = list(dict.fromkeys(p.kind for p in problems))
    rows: list[KindRow] = []
    for kind in kinds:
        group = [p for p in problems if p.kind == kind]
        (row,) = accuracy_curve(group, [n], key=key)
        if row.refined_bon is None:
            raise EvaluationError(
                f"refined best-of-N at N={n} needs an even N and N/2 refined candidates per problem"
            )
        rows.append(
            KindRow(
                kind=kind,
                problems=len(group),
                policy=row.policy,
                refined_bon=row.refined_bon,
                improvement=100.0 * (row.refined_bon - row.policy),
            )
        )
    return rows


class StepF1(_Frozen):
    """How a critic's step verdicts agree with exact step labels (the VisualProcessBench measure)."""

    solutions: int
    """Solutions judged."""
    steps: int
    """Steps compared: each solution's steps up to and including its first wrong one (all when none is)."""
    correct_as_correct: int
    """Correct steps the critic passed."""
    correct_as_incorrect: int
    """Correct steps the critic flagged (at or after its first Incorrect verdict)."""
    incorrect_as_correct: int
    """Wrong steps the critic passed."""
    incorrect_as_incorrect: int
    """Wrong steps the critic flagged."""
    f1_correct: float
    """F1 of the class "correct step"."""
    f1_incorrect: float
    """F1 of the class "wrong step"."""
    macro_f1: float
    """The mean of the two: the step F1 VisualProcessBench reports."""
    with_error: int
    """Solutions with a wrong step."""
    first_wrong_found: int
    """Of those, how many the critic flags first at exactly their first wrong step."""
    without_error: int
    """Solutions whose every step is correct."""
    all_correct_found: int
    """Of those, how many the critic passes at every step."""


def _f1(hit: int, missed: int, false: int) -> float:
    return 2 * hit / (2 * hit + missed + false) if hit else 0.0


def step_f1(pairs: Iterable[tuple[Sequence[bool], StepJudgement]]) -> StepF1:
    """Compare a critic's judgements with exact step labels.

    A critic's judgement (geotts's :class:`~geotts.StepJudgement`, as refined best-of-N reads it) passes
    the steps before its ``first_wrong`` and flags that step and every later one: a step built on a
    flagged step is not vouched for. The labels are compared up to and including the first wrong step
    (GM-PRM's view: later steps are never judged), so every solution counts the same steps whatever the
    critic says.

    Args:
        pairs: one (labels, judgement) pair per solution; labels say, step by step, whether it is correct.

    Returns:
        The confusion counts and the F1 of each class and their mean.

    Raises:
        EvaluationError: a solution has no labels.
    """
    cc = ci = ic = ii = solutions = with_error = found = without = passed = 0
    for labels, judgement in pairs:
        if not labels:
            raise EvaluationError("a solution without step labels cannot be compared")
        solutions += 1
        first = next((i for i, ok in enumerate(labels) if not ok), None)
        judged = labels if first is None else labels[: first + 1]
        flagged = judgement.first_wrong
        for position, ok in enumerate(judged):
            passes = flagged is None or position < flagged
            cc += ok and passes
            ci += ok and not passes
            ic += not ok and passes
            ii += not ok and not passes
        if first is None:
            without += 1
            passed += flagged is None or flagged >= len(labels)
        else:
            with_error += 1
            found += flagged == first
    f1_correct, f1_incorrect = _f1(cc, ci, ic), _f1(ii, ic, ci)
    return StepF1(
        solutions=solutions, steps=cc + ci + ic + ii, correct_as_correct=cc, correct_as_incorrect=ci,
        incorrect_as_correct=ic, incorrect_as_incorrect=ii, f1_correct=f1_correct, f1_incorrect=f1_incorrect,
        macro_f1=(f1_correct + f1_incorrect) / 2, with_error=with_error, first_wrong_found=found,
        without_error=without, all_correct_found=passed,
    )  # fmt: skip


def markdown_table(rows: Sequence[BaseModel], *, digits: int = 3) -> str:
    """Render rows of one model type as a Markdown table (floats rounded, None as a dash).

    Raises:
        EvaluationError: there are no rows.
    """
    if not rows:
        raise EvaluationError("no rows to render")
    fields = list(type(rows[0]).model_fields)

    def cell(value: object) -> str:
        if value is None:
            return "-"
        return f"{value:.{digits}f}" if isinstance(value, float) else str(value)

    lines = ["| " + " | ".join(fields) + " |", "|" + "---|" * len(fields)]
    lines += ["| " + " | ".join(cell(getattr(row, f)) for f in fields) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def plot_accuracy_curve(rows: Sequence[CurveRow], path: str | Path, *, title: str = "Accuracy vs N") -> Path:
    """Plot accuracy against N for every strategy into a PNG file.

    Args:
        rows: the rows of :func:`accuracy_curve`.
        path: the PNG file to write.
        title: the plot's title.

    Returns:
        The path written.

    Raises:
        MissingExtraError: matplotlib is not installed.
        EvaluationError: there are no rows.
    """
    if not rows:
        raise EvaluationError("no rows to plot")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise MissingExtraError('plots need matplotlib: pip install "geoprm[report]"') from error
    figure, axes = plt.subplots(figsize=(6, 4))
    ns = [row.n for row in rows]
    series = {
        "policy (mean of samples)": [row.policy for row in rows],
        "best-of-N": [row.bon for row in rows],
        "self-consistency": [row.self_consistency for row in rows],
    }
    for label, values in series.items():
        axes.plot(ns, values, marker="o", label=label)
    refined = [(row.n, row.refined_bon) for row in rows if row.refined_bon is not None]
    if refined:
        axes.plot([n for n, _ in refined], [v for _, v in refined], marker="s", label="refined best-of-N")
    axes.set_xlabel("N (candidates per problem)")
    axes.set_ylabel("accuracy")
    axes.set_title(title)
    axes.set_xticks(ns)
    axes.grid(alpha=0.3)
    axes.legend()
    out = Path(path)
    figure.tight_layout()
    figure.savefig(out, dpi=120)
    plt.close(figure)
    return out


def _answer(extractor: AnswerExtractor, text: str, problem: Problem) -> float | str | None:
    value = extractor(Completion(text=text, num_tokens=None), None, problem)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return str(value)


def _candidate(
    extractor: AnswerExtractor, text: str, judgement: StepJudgement, problem: Problem
) -> EvalCandidate:
    return EvalCandidate.from_judgement(_answer(extractor, text, problem), judgement, text)


def _refine_request(
    problem: Problem,
    text: str,
    judgement: StepJudgement,
    params: SamplingParams,
    prompt: Callable[[str], str],
) -> GenerationRequest:
    return GenerationRequest(
        messages=(ChatMessage(role="user", content=prompt(problem.question)),),
        images=problem.images,
        params=params,
        assistant_prefix=refined_prefix(text, judgement),
    )


def record_runs(
    problems: Sequence[Problem],
    answers: Sequence[float | str],
    *,
    policy: Sampler,
    scorer: StepScorer,
    extractor: AnswerExtractor,
    n: int,
    params: SamplingParams,
    kinds: Sequence[str] | None = None,
    prompt: Callable[[str], str] = policy_prompt,
) -> list[EvalProblem]:
    """Run the policy and the reward model live and record the pools :func:`accuracy_curve` reads.

    N solutions are sampled per problem and judged; the first N/2 are refined as in refined
    best-of-N (the policy continues from :func:`geotts.refined_prefix`, or samples afresh
    when every step passed) and judged again.

    Args:
        problems: the problems (free-form; the policy prompt is :func:`geoprm.policy_prompt`).
        answers: the correct answer of each problem.
        policy: the policy sampler.
        scorer: the step scorer (e.g. :class:`geoprm.backends.transformers.TransformersCritic`).
        extractor: maps a full solution to its answer (told the problem it solves).
        n: samples per problem (even, at least 2).
        params: the policy's sampling parameters (temperature above 0); refinements use ``seed + 1``.
        kinds: the problem type of each problem (``other`` when None).
        prompt: the policy's user turn for a problem's question (default :func:`geoprm.policy_prompt`;
            the identity when the question already is the prompt the policy was trained on). The critic
            always reads the question itself.

    Returns:
        One recorded problem per problem, in order; every candidate keeps its text.

    Raises:
        EvaluationError: n is odd or below 2, or the lengths of the inputs differ.
    """
    if n < 2 or n % 2:
        raise EvaluationError(f"record_runs needs an even n >= 2, got {n}")
    kinds = kinds if kinds is not None else ["other"] * len(problems)
    if not len(problems) == len(answers) == len(kinds):
        raise EvaluationError(
            f"{len(problems)} problems, {len(answers)} answers and {len(kinds)} kinds: give one of each"
        )
    first_requests = [
        GenerationRequest(
            messages=(ChatMessage(role="user", content=prompt(p.question)),),
            images=p.images,
            n=n,
            params=params,
        )
        for p in problems
    ]
    first = [[c.text for c in comps] for comps in policy.generate(first_requests)]
    judged = judge_solutions(scorer, problems, first)
    second_params = params.model_copy(update={"seed": None if params.seed is None else params.seed + 1})
    requests = [
        _refine_request(p, t, j, second_params, prompt)
        for p, ts, js in zip(problems, first, judged, strict=True)
        for t, j in zip(ts[: n // 2], js[: n // 2], strict=True)
    ]
    outputs = iter(policy.generate(requests))
    prefixes = iter(r.assistant_prefix for r in requests)
    second = [[next(prefixes) + next(outputs)[0].text for _ in range(n // 2)] for _ in problems]
    rejudged = judge_solutions(scorer, problems, second)
    return [
        EvalProblem(
            id=p.id,
            kind=kind,
            answer=gold,
            sampled=tuple(_candidate(extractor, t, j, p) for t, j in zip(ts, js, strict=True)),
            refined=tuple(_candidate(extractor, t, j, p) for t, j in zip(rs, rjs, strict=True)),
        )
        for p, gold, kind, ts, js, rs, rjs in zip(
            problems, answers, kinds, first, judged, second, rejudged, strict=True
        )
    ]
