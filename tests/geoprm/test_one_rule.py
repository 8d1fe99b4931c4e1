"""geoprm trains, judges and evaluates with geotts's step splitter and refined best-of-N rule.

The reward model is trained on critiques of ``PRMItem.solution_steps``; at test time
``geotts.RefinedBestOfN`` (the pipeline's evaluate stage) and ``geoprm.evaluation`` (``geo prm eval``)
ask it about steps and pick a solution from its scores. These tests hold the three to one definition.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest

from geoprm import (
    Critique,
    StepCritique,
    VerdictLogprobs,
    critique_prompt,
    format_critique,
    parse_critique,
    score_critique,
    to_step_judgement,
)
from geoprm.data import PRMItem
from geoprm.evaluation import EvalCandidate, EvalProblem, accuracy_curve, record_runs
from geotts import (
    UNSCORED,
    Completion,
    GenerationRequest,
    LastNumberExtractor,
    Problem,
    RefinedBestOfN,
    RefinedBestOfNConfig,
    SamplingParams,
    StepJudgement,
    StepScoreRequest,
    select_solution,
    split_steps,
)
from geotts.testing import FunctionSampler

SOLUTION = (
    "Let me read the figure.\nStep 1: AB = 6 from the figure.\nStep 2: The area is 6 * 6 = 36.\nAnswer: 36"
)
STEPS = ("AB = 6 from the figure.", "The area is 6 * 6 = 36.")
EXTRACT = LastNumberExtractor(marker="Answer:")


class Recorder:
    """Judges every step correct (0.9) and records the steps it was shown."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, ...]] = []

    def score(self, requests: Sequence[StepScoreRequest]) -> list[StepJudgement]:
        self.seen.extend(r.steps for r in requests)
        return [StepJudgement(scores=(0.9,) * len(r.steps)) for r in requests]


def test_training_judging_and_evaluation_see_the_same_steps_without_labels_or_the_answer_line() -> None:
    item = PRMItem(id="a", question="Find the area.", solution=SOLUTION, answer=36.0)
    assert item.solution_steps == STEPS == split_steps(SOLUTION).steps
    assert split_steps(SOLUTION).answer == "36"
    prompt = critique_prompt(item.question, item.solution_steps)  # what the critic is trained on
    assert "Step 2: The area is 6 * 6 = 36." in prompt and "Answer: 36" not in prompt

    def policy(request: GenerationRequest) -> list[Completion]:
        return [Completion(text=SOLUTION, num_tokens=5)] * request.n

    problems = [Problem(id="a", question=item.question)]
    judged_live = Recorder()
    RefinedBestOfN(judged_live, RefinedBestOfNConfig(n=2)).run(FunctionSampler(policy), problems, EXTRACT)
    judged_eval = Recorder()
    record_runs(problems, [36.0], policy=FunctionSampler(policy), scorer=judged_eval, extractor=EXTRACT, n=2,
                params=SamplingParams(temperature=0.7, seed=0))  # fmt: skip
    assert judged_live.seen == [STEPS, STEPS] and judged_eval.seen == [STEPS] * 3


def _critique(judgements: Sequence[str]) -> str:
    """A critique with these step verdicts; one that goes on after an Incorrect step is edited text (the
    schema refuses it, a model may still write it)."""
    steps = tuple(
        StepCritique(
            index=i,
            intent="Do it.",
            image_analysis="Matches.",
            image_judgement="Correct",
            logic_analysis="Checked.",
            logic_judgement="Correct",
            judgement="Correct",
        )
        for i in range(1, len(judgements) + 1)
    )
    wrong = judgements.index("Incorrect") + 1 if "Incorrect" in judgements else None
    last = wrong == len(judgements)
    text = format_critique(Critique(steps=steps, correction=None))
    if wrong is None:
        return text
    head, tail = text.split(f"[Step {wrong}]")
    block, rest = tail.split("\n\n", 1) if not last else (tail, "")
    block = block.replace("Logic verdict: Correct", "Logic verdict: Incorrect")
    block = block.replace("Step verdict: Correct", "Step verdict: Incorrect")
    return f"{head}[Step {wrong}]{block}\n\n{rest}".replace(
        "[End]", f"[Correction of step {wrong}]\nx.\n\n[End]"
    )


def _lp(step: int, p: float) -> VerdictLogprobs:
    return VerdictLogprobs(step=step, top_logprobs={" Correct": math.log(p), " Incorrect": math.log(1 - p)})


# Each solution's critique and verdict log-probs, chosen so that the two old rules disagree.
CASES = {
    # all correct, step 2's verdict has no log-probs: it counts 0.5 -> mean 0.725 (skipping it: 0.95)
    "unscored": (["Correct", "Correct"], [_lp(1, 0.95)], 2),
    "scored": (["Correct", "Correct"], [_lp(1, 0.8), _lp(2, 0.8)], 2),
    # the critic went on after the wrong step 2: step 3 does not count -> mean 0.6 (with it: 0.73)
    "went_on": (["Correct", "Incorrect", "Correct"], [_lp(1, 0.9), _lp(2, 0.3), _lp(3, 0.99)], 3),
    "stopped": (["Incorrect"], [_lp(1, 0.62)], 3),
}


def _judged(name: str) -> tuple[StepJudgement, EvalCandidate]:
    verdicts, logprobs, num_steps = CASES[name]
    parsed = parse_critique(_critique(verdicts), strict=False)
    scores = score_critique(parsed, logprobs, num_steps=num_steps)
    # as a recorder that keeps the critique's own step scores writes it (None: unscored)
    recorded = EvalCandidate(
        answer=None, step_scores=tuple(s.score for s in scores.steps), verdict=scores.verdict
    )
    return to_step_judgement(parsed, scores), recorded


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_scored_critique_has_one_judgement_live_and_recorded(name: str) -> None:
    live, recorded = _judged(name)
    assert (
        EvalCandidate.from_judgement(None, live).judgement.model_copy(update={"correction": live.correction})
        == live
    )
    if name != "went_on":  # a recorder writing the critique's own scores (None included) gives the same
        assert (recorded.judgement.scores, recorded.judgement.first_wrong) == (live.scores, live.first_wrong)


@pytest.mark.parametrize(
    ("first", "second", "means"),
    [("unscored", "scored", (0.725, 0.8)), ("went_on", "stopped", (0.6, 0.62))],
)
def test_best_of_n_in_geoprm_picks_what_refined_best_of_n_in_geotts_picks(
    first: str, second: str, means: tuple[float, float]
) -> None:
    (live_a, recorded_a), (live_b, recorded_b) = _judged(first), _judged(second)
    assert (live_a.aggregate(), live_b.aggregate()) == pytest.approx(means)
    assert select_solution([live_a, live_b]) == 1  # geotts: the second solution
    pool = (EvalCandidate.from_judgement(1.0, live_a), EvalCandidate.from_judgement(2.0, live_b))
    (row,) = accuracy_curve([EvalProblem(id="p", answer=2.0, sampled=pool)], [2])
    assert row.bon == 1.0  # geoprm's evaluation: the second solution too
    if first == "unscored":  # recorded with the critique's own scores, the unscored step counts 0.5 as well
        recorded = (
            recorded_a.model_copy(update={"answer": 1.0}),
            recorded_b.model_copy(update={"answer": 2.0}),
        )
        (row,) = accuracy_curve([EvalProblem(id="p", answer=2.0, sampled=recorded)], [2])
        assert row.bon == 1.0
        assert UNSCORED in live_a.scores
