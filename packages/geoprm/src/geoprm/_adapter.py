"""Turning a scored critique into geotts's :class:`~geotts.StepJudgement` (the StepScorer protocol)."""

from __future__ import annotations

from geoprm._parser import ParsedCritique
from geoprm._scores import CritiqueScores, StepScore
from geotts import UNSCORED, StepJudgement


def _value(step: StepScore) -> float:
    return step.score if step.score is not None else UNSCORED


def to_step_judgement(parsed: ParsedCritique, scores: CritiqueScores) -> StepJudgement:
    """Express a scored critique as a :class:`~geotts.StepJudgement`, the input of geotts's rule.

    The critique's blocks are read in order: the i-th judges the solution's i-th step (as
    :func:`geotts.split_steps` cuts it, the split the training critiques are numbered by), whatever
    number the critic writes on it. The judged steps run up to and including the first step judged
    Incorrect, which becomes ``first_wrong``, with the critique's correction; steps the critique
    judges after it do not count (the critic is asked to stop there, as in GM-PRM, section 3.3).

    When the solution's step count is known (``scores.num_steps``), a Correct block past its last
    step judges nothing and is dropped. An Incorrect block past it says the solution stops short: it
    becomes the step after the last (``first_wrong`` = the step count), with its score and the
    correction, so refined best-of-N continues the whole solution with the correction as its next step.

    A critique that cannot vouch for every step (cut off, unreadable verdict, fewer steps than the
    solution) is not reported as all correct: its first step without a Correct verdict is marked
    wrong, with no correction, so refined best-of-N regenerates from the last verified step. A step
    without a score counts as :data:`geotts.UNSCORED`.

    Args:
        parsed: the critique as parsed leniently.
        scores: its step scores, from :func:`geoprm.score_critique`.

    Returns:
        The judgement: one score per judged step (at least one).
    """
    if scores.verdict == "has_incorrect":
        first = next(i for i, step in enumerate(scores.steps) if step.judgement == "Incorrect")
        verified = scores.steps[:first][: scores.num_steps]  # Correct blocks past the last step judge none
        correction = (parsed.correction or "").strip() or None
        values = (*(_value(step) for step in verified), _value(scores.steps[first]))
        return StepJudgement(scores=values, first_wrong=len(verified), correction=correction)
    judged = scores.steps[: scores.num_steps]
    values = [_value(step) for step in judged]
    if scores.verdict == "all_correct":
        return StepJudgement(scores=tuple(values))
    first = next((i for i, step in enumerate(judged) if step.judgement != "Correct"), len(values))
    if first == len(values):
        values.append(UNSCORED)  # the critique stopped early: the next step is unverified
    return StepJudgement(scores=tuple(values[: first + 1]), first_wrong=first)
