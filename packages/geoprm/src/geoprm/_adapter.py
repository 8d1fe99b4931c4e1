"""Turning a scored critique into geotts's :class:`~geotts.StepJudgement` (the StepScorer protocol)."""

from __future__ import annotations

from collections.abc import Sequence

from geoprm._parser import ParsedCritique
from geoprm._scores import CritiqueScores
from geoprm._steps import strip_step_label
from geotts import StepJudgement

UNSCORED = 0.5
"""The score given to a step the critique did not score (no readable verdict or no log-probs):
the protocol needs a number for every judged step, and 0.5 claims nothing either way."""


def _correction_for(steps: Sequence[str], index: int, correction: str) -> str:
    body = strip_step_label(correction)
    original = steps[index - 1] if 0 < index <= len(steps) else ""
    labelled = strip_step_label(original) != original.strip()
    return f"Step {index}: {body}" if labelled else body


def to_step_judgement(
    parsed: ParsedCritique, scores: CritiqueScores, steps: Sequence[str], *, unscored: float = UNSCORED
) -> StepJudgement:
    """Express a scored critique as a :class:`~geotts.StepJudgement`.

    The first step judged Incorrect becomes ``first_wrong``, with the correction (given the solution's
    own ``Step k:`` labelling). A critique that cannot vouch for every step (cut off, unreadable
    verdict, fewer steps than the solution) is not reported as all correct: its first step without a
    Correct verdict is marked wrong, with no correction, so refined best-of-N regenerates from the last
    verified step.

    Args:
        parsed: the critique as parsed leniently.
        scores: its step scores, from :func:`geoprm.score_critique`.
        steps: the solution's steps, as the request gave them.
        unscored: the score reported for a step without one.

    Returns:
        The judgement: one score per critiqued step (at least one).
    """
    values = [step.score if step.score is not None else unscored for step in scores.steps]
    if scores.verdict == "has_incorrect":
        first = next(i for i, step in enumerate(scores.steps) if step.judgement == "Incorrect")
        index = scores.steps[first].index
        correction = None if parsed.correction is None else _correction_for(steps, index, parsed.correction)
        return StepJudgement(scores=tuple(values[: first + 1]), first_wrong=first, correction=correction)
    if scores.verdict == "all_correct":
        return StepJudgement(scores=tuple(values))
    first = next((i for i, step in enumerate(scores.steps) if step.judgement != "Correct"), len(values))
    if first == len(values):
        values.append(unscored)  # the critique stopped early: the next step is unverified
    return StepJudgement(scores=tuple(values[: first + 1]), first_wrong=first)
