"""geoprm trains, judges and evaluates with geotts's step splitter and refined best-of-N rule.

The reward model is trained on critiques of ``PRMItem.solution_steps``; at test time
``geotts.RefinedBestOfN`` (the pipeline's evaluate stage) and ``geoprm.evaluation`` (``geo prm eval``)
ask it about steps and pick a solution from its scores. These tests hold the three to one definition.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import pytest

from geoprm import (
    Critique,
    StepCritique,
    VerdictLogprobs,
    critic_prompt,
    format_critique,
    parse_critique,
    score_critique,
    to_step_judgement,
)
from geoprm.data import PRMItem, build_prm_data
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
    judge_solutions,
    refined_prefix,
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
    prompt = critic_prompt(item.question, item.solution_steps)  # what the critic is trained on
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


LISTED = (
    "Let me read the figure.\n1. AB = 6 from the figure.\n2. The area is 6 + 6 = 12.\n"
    "3. So the area is 12.\nFinal answer: 12"
)


def test_step_k_of_a_training_critique_is_the_step_refinement_rewrites() -> None:
    """The teacher critiques step k of the split; the critic trained on that record, writing the same
    critique at test time, has refined best-of-N rewrite exactly that step of the policy's text."""
    critique = _critique(["Correct", "Incorrect"]).replace("\nx.\n", "\nThe area is 6 * 6 = 36.\n")
    item = PRMItem(
        id="a", question="Find the area.", solution=LISTED, answer=36.0, mc_labels=(True, False, False)
    )

    def teacher(request: GenerationRequest) -> list[Completion]:
        return [Completion(text=critique, num_tokens=50)]

    (record,) = build_prm_data(
        [item], teacher=FunctionSampler(teacher), completer=FunctionSampler(teacher),
        extractor=EXTRACT, rng=random.Random(0), balanced=False,
    ).records  # fmt: skip
    steps = split_steps(LISTED).steps
    assert record.first_error == 2 and f"Step 2: {steps[1]}" in record.prompt
    assert "Final answer" not in record.prompt and "read the figure" not in record.prompt

    parsed = parse_critique(record.completion, strict=False)  # the trained critic says the same
    judgement = to_step_judgement(parsed, score_critique(parsed, [_lp(1, 0.9), _lp(2, 0.2)], num_steps=3))
    assert judgement.first_wrong == record.first_error - 1
    prefix = refined_prefix(LISTED, judgement)
    assert prefix == "Let me read the figure.\n1. AB = 6 from the figure.\n2. The area is 6 * 6 = 36.\n"
    assert split_steps(prefix).steps == (steps[0], "The area is 6 * 6 = 36.")


def test_blocks_are_read_by_position_and_correct_blocks_past_the_solution_judge_nothing() -> None:
    two = "Step 1: AB = 6 from the figure.\nStep 2: The area is 6 * 6 = 36.\nAnswer: 36"

    def judge(blocks: Sequence[str], numbers: Sequence[int] = ()) -> StepJudgement:
        text = _critique(blocks)
        for position, number in enumerate(numbers, start=1):
            text = text.replace(f"[Step {position}]", f"[Step #{number}]")
        parsed = parse_critique(text.replace("[Step #", "[Step "), strict=False)
        written = [s.index for s in parsed.steps]
        logprobs = [_lp(n, p) for n, p in zip(written, (0.9, 0.7, 0.6, 0.2), strict=False)]
        steps = split_steps(two).steps
        return to_step_judgement(parsed, score_critique(parsed, logprobs, num_steps=len(steps)))

    # a third block on a two-step solution: its score is not the solution's
    extra = judge(["Correct", "Correct", "Correct"])
    assert extra.all_correct and extra.scores == pytest.approx((0.9, 0.7))
    # an Incorrect block past the end: the solution stops short, the correction is its next step
    short = judge(["Correct", "Correct", "Correct", "Incorrect"])
    assert short.first_wrong == 2 and short.scores == pytest.approx((0.9, 0.7, 0.2))
    assert short.correction == "x." and select_solution([short, extra]) == 1
    assert (
        refined_prefix(two, short)
        == "Step 1: AB = 6 from the figure.\nStep 2: The area is 6 * 6 = 36.\nStep 3: x.\n"
    )
    # blocks numbered 1, 3: the second block judges the second step, whatever it is called
    skipped = judge(["Correct", "Incorrect"], numbers=(1, 3))
    assert skipped.first_wrong == 1 and skipped.scores == pytest.approx((0.9, 0.7))


def test_a_solution_without_steps_is_one_unverified_step_on_both_paths() -> None:
    (judged,) = judge_solutions(Recorder(), [Problem(id="a", question="q")], [["Answer: 36"]])
    parsed = parse_critique(_critique(["Correct"]), strict=False)
    scores = score_critique(parsed, [_lp(1, 0.9)], num_steps=0)
    assert scores.verdict == "undetermined"
    assert to_step_judgement(parsed, scores) == judged[0] == StepJudgement(scores=(UNSCORED,), first_wrong=0)
