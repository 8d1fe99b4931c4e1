"""The refined best-of-N rule (GM-PRM, section 3.3): judged steps, aggregation, selection."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from geotts import (
    UNSCORED,
    BackendError,
    Problem,
    StepJudgement,
    StepScoreRequest,
    StrategyConfigError,
    judge_solutions,
    select_solution,
)


def J(*scores: float, wrong: bool = False) -> StepJudgement:
    return StepJudgement(scores=scores, first_wrong=len(scores) - 1 if wrong else None)


def test_a_solution_score_aggregates_its_judged_steps() -> None:
    judgement = J(0.9, 0.5, 0.25, wrong=True)
    assert judgement.aggregate() == pytest.approx(0.55) == judgement.mean_score
    assert judgement.aggregate("min") == 0.25 and judgement.aggregate("max") == 0.9
    with pytest.raises(StrategyConfigError, match="unknown aggregation 'median'; use one of mean, min, max"):
        judgement.aggregate("median")  # type: ignore[arg-type]


def test_steps_after_the_first_wrong_one_are_not_judged() -> None:
    with pytest.raises(ValidationError, match="first_wrong=1 must be the last judged step"):
        StepJudgement(scores=(0.9, 0.1, 0.9), first_wrong=1)
    with pytest.raises(ValidationError, match="scores is empty"):
        StepJudgement(scores=())
    with pytest.raises(ValidationError, match="no step is marked wrong"):
        StepJudgement(scores=(0.9,), correction="x")


def test_all_correct_solutions_win_over_higher_scores() -> None:
    judgements = [J(0.99, 0.98, wrong=True), J(0.6, 0.7), J(0.9, 0.5), J(0.95, wrong=True)]
    assert select_solution(judgements) == 2  # 0.7 beats 0.65 among the all-correct ones
    assert select_solution(judgements, "min") == 1  # min: 0.6 beats 0.5


def test_without_an_all_correct_solution_the_best_score_overall_wins_and_ties_go_first() -> None:
    judgements = [J(0.2, 0.4, wrong=True), J(0.5, UNSCORED, wrong=True), J(0.5, wrong=True)]
    assert select_solution(judgements) == 1
    with pytest.raises(StrategyConfigError, match="at least one candidate"):
        select_solution([])


def test_skipping_unanswered_candidates_leaves_them_out_unless_none_has_an_answer() -> None:
    judgements = [J(0.9, 0.95), J(0.6, 0.7), J(0.99, wrong=True)]
    assert select_solution(judgements) == 0  # GM-PRM's rule: the best all-correct one
    assert select_solution(judgements, answered=[False, True, True]) == 1  # it has no answer: skipped
    assert select_solution(judgements, answered=[False, False, True]) == 2  # the only answered one, flagged
    assert select_solution(judgements, answered=[False, False, False]) == 0  # none answered: the paper's rule
    with pytest.raises(StrategyConfigError, match="answered has 2 flags for 3 candidates"):
        select_solution(judgements, answered=[True, True])


_judgements = st.lists(st.floats(0.0, 1.0), min_size=1, max_size=4).flatmap(
    lambda scores: st.builds(J, *map(st.just, scores), wrong=st.booleans())
)


@given(st.lists(_judgements, min_size=1, max_size=8), st.sampled_from(["mean", "min", "max"]))
def test_selection_matches_its_definition(judgements: list[StepJudgement], how: str) -> None:
    chosen = select_solution(judgements, how)  # type: ignore[arg-type]
    scores = [j.aggregate(how) for j in judgements]  # type: ignore[arg-type]
    pool = [i for i, j in enumerate(judgements) if j.all_correct] or list(range(len(judgements)))
    best = max(scores[i] for i in pool)
    assert chosen == min(i for i in pool if scores[i] == best)


class CountingScorer:
    """Scores every step 0.8; records what it was asked."""

    def __init__(self, extra: int = 0) -> None:
        self.seen: list[tuple[str, ...]] = []
        self.extra = extra

    def score(self, requests: Sequence[StepScoreRequest]) -> list[StepJudgement]:
        self.seen.extend(r.steps for r in requests)
        return [StepJudgement(scores=(0.8,) * len(r.steps)) for r in requests] + [J(0.1)] * self.extra


def test_solutions_are_judged_on_split_steps_and_one_without_steps_is_one_unverified_step() -> None:
    scorer = CountingScorer()
    problems = [Problem(id="a", question="q"), Problem(id="b", question="r")]
    solutions = [["Step 1: x = 2\nStep 2: y = 4\nAnswer: 4", "Answer: 4"], ["  \n", "x = 1"]]
    judged = judge_solutions(scorer, problems, solutions)
    assert scorer.seen == [("x = 2", "y = 4"), ("x = 1",)]  # labels and the Answer: line are not steps
    assert judged[0][0] == J(0.8, 0.8) and judged[1][1] == J(0.8)
    assert judged[0][1] == judged[1][0] == StepJudgement(scores=(UNSCORED,), first_wrong=0)
    assert judge_solutions(CountingScorer(), [problems[0]], [["", "Answer: 1"]]) == [[J(0.5, wrong=True)] * 2]
    with pytest.raises(BackendError, match="returned 3 judgements for 2 solutions"):
        judge_solutions(CountingScorer(extra=1), problems, [["a"], ["b"]])
