"""Turning a scored critique into geotts's :class:`~geotts.StepJudgement` (the StepScorer protocol)."""

from __future__ import annotations

from geoprm._parser import ParsedCritique
from geoprm._scores import CritiqueScores
from geotts import UNSCORED, StepJudgement


def to_step_judgement(parsed: ParsedCritique, scores: CritiqueScores) -> StepJudgement:
    """Express a scored critique as a :class:`~geotts.StepJudgement`, the input of geotts's rule.

    The judged steps run up to and including the first step judged Incorrect, which becomes
    ``first_wrong``, with the critique's correction; steps the critique judges after it do not count
    (the critic is asked to stop there, as in GM-PRM, section 3.3). A critique that cannot vouch for
    every step (cut off, unreadable verdict, fewer steps than the solution) is not reported as all
    correct: its first step without a Correct verdict is marked wrong, with no correction, so refined
    best-of-N regenerates from the last verified step. A step without a score counts as
    :data:`geotts.UNSCORED`.

    Args:
        parsed: the critique as parsed leniently.
        scores: its step scores, from :func:`geoprm.score_critique`.

    Returns:
        The judgement: one score per judged step (at least one).
    """
    values = [step.score if step.score is not None else UNSCORED for step in scores.steps]
    if scores.verdict == "has_incorrect":
        first = next(i for i, step in enumerate(scores.steps) if step.judgement == "Incorrect")
        correction = (parsed.correction or "").strip() or None
        return StepJudgement(scores=tuple(values[: first + 1]), first_wrong=first, correction=correction)
    if scores.verdict == "all_correct":
        return StepJudgement(scores=tuple(values))
    first = next((i for i, step in enumerate(scores.steps) if step.judgement != "Correct"), len(values))
    if first == len(values):
        values.append(UNSCORED)  # the critique stopped early: the next step is unverified
    return StepJudgement(scores=tuple(values[: first + 1]), first_wrong=first)
