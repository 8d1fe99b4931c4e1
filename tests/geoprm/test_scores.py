"""Step scores from verdict log-probs and the critique's verdict (the selection rule is geotts's)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from geoprm import (
    Critique,
    JudgementTokens,
    ScoringError,
    StepCritique,
    VerdictLogprobs,
    format_critique,
    parse_critique,
    score_critique,
    step_score,
    to_step_judgement,
)


def _critique(judgements: list[str]) -> Critique:
    steps = []
    for index, final in enumerate(judgements, start=1):
        steps.append(
            StepCritique(
                index=index,
                intent=f"Do part {index}.",
                image_analysis="Matches the figure.",
                image_judgement="Correct",
                logic_analysis="Checked." if final == "Correct" else "Wrong sum.",
                logic_judgement="Correct" if final == "Correct" else "Incorrect",
                judgement="Correct" if final == "Correct" else "Incorrect",
            )
        )
    has_error = judgements[-1] == "Incorrect"
    return Critique(steps=tuple(steps), correction="Fixed step." if has_error else None)


def _lp(step: int, p_correct: float, p_incorrect: float, **others: float) -> VerdictLogprobs:
    top = {" Correct": math.log(p_correct), " Incorrect": math.log(p_incorrect)}
    top.update({token: math.log(p) for token, p in others.items()})
    return VerdictLogprobs(step=step, top_logprobs=top)


def test_step_score_is_the_normalised_probability_of_correct() -> None:
    assert step_score(
        {" Correct": math.log(0.6), " Incorrect": math.log(0.2), " The": math.log(0.2)}
    ) == pytest.approx(0.75)
    # both spellings of a judgement add up
    both = {"Correct": math.log(0.1), " Correct": math.log(0.3), " Incorrect": math.log(0.4)}
    assert step_score(both) == pytest.approx(0.5)
    # a judgement absent from the top log-probs counts as probability zero
    assert step_score({" Correct": -0.1, " maybe": -3.0}) == 1.0
    assert step_score({" Incorrect": -0.1}) == 0.0
    assert step_score({" maybe": -0.1}) is None
    assert step_score({" Correct": -math.inf, " Incorrect": -math.inf}) is None


def test_custom_judgement_tokens_for_a_tokenizer_that_splits_incorrect() -> None:
    tokens = JudgementTokens(correct=(" Correct",), incorrect=(" In",))
    assert step_score({" Correct": math.log(0.2), " In": math.log(0.6)}, tokens) == pytest.approx(0.25)
    with pytest.raises(ValidationError, match="both Correct and Incorrect"):
        JudgementTokens(correct=(" C",), incorrect=(" C",))


def test_verdict_logprobs_reject_probabilities_above_one_and_nan() -> None:
    with pytest.raises(ValidationError, match="must be <= 0"):
        VerdictLogprobs(step=1, top_logprobs={" Correct": 0.5})
    with pytest.raises(ValidationError, match="must be <= 0"):
        VerdictLogprobs(step=1, top_logprobs={" Correct": math.nan})


def test_score_critique_scores_each_step_and_keeps_the_verdict() -> None:
    critique = _critique(["Correct", "Correct", "Incorrect"])
    scores = score_critique(critique, [_lp(1, 0.9, 0.1), _lp(2, 0.5, 0.5), _lp(3, 0.2, 0.6)])
    assert [step.score for step in scores.steps] == pytest.approx([0.9, 0.5, 0.25])
    assert [step.judgement for step in scores.steps] == ["Correct", "Correct", "Incorrect"]
    assert scores.verdict == "has_incorrect" and scores.verdict_reason is None
    judgement = to_step_judgement(parse_critique(format_critique(critique), strict=False), scores)
    assert judgement.aggregate("mean") == pytest.approx(0.55)
    assert judgement.aggregate("min") == pytest.approx(0.25)
    assert judgement.aggregate("max") == pytest.approx(0.9)


def test_text_parsed_and_critique_inputs_score_the_same() -> None:
    critique = _critique(["Correct", "Incorrect"])
    logprobs = [_lp(1, 0.7, 0.3), _lp(2, 0.1, 0.9)]
    text = format_critique(critique)
    expected = score_critique(critique, logprobs)
    assert score_critique(text, logprobs) == expected
    assert score_critique(parse_critique(text, strict=False), logprobs) == expected


def test_truncated_critique_leaves_cut_steps_unscored_with_a_reason() -> None:
    text = format_critique(_critique(["Correct", "Correct", "Correct"]))
    cut = text[: text.index("Logic check", text.index("[Step 3]"))]
    scores = score_critique(cut, [_lp(1, 0.8, 0.2), _lp(2, 0.6, 0.4)])
    assert [step.score for step in scores.steps] == pytest.approx([0.8, 0.6, None])
    reason = scores.steps[2].reason
    assert reason is not None and "no readable final verdict" in reason
    assert scores.verdict == "undetermined"
    assert scores.verdict_reason is not None and "verdict is unreadable" in scores.verdict_reason
    # as a judgement: the unreadable step 3 is the first unverified one and counts 0.5
    judgement = to_step_judgement(parse_critique(cut, strict=False), scores)
    assert judgement.scores == pytest.approx((0.8, 0.6, 0.5)) and judgement.first_wrong == 2
    assert any(problem.kind == "truncated" for problem in scores.problems)


def test_reasons_for_unscored_steps() -> None:
    text = format_critique(_critique(["Correct", "Incorrect"])).replace("Step verdict: Incorrect\n", "")
    scores = score_critique(text, [_lp(1, 0.8, 0.2)])
    assert scores.steps[1].judgement == "Incorrect" and scores.steps[1].score is None
    assert "not written" in (scores.steps[1].reason or "")
    no_tokens = score_critique(_critique(["Correct"]), [VerdictLogprobs(step=1, top_logprobs={" Yes": -0.1})])
    assert "neither judgement token" in (no_tokens.steps[0].reason or "")
    missing = score_critique(_critique(["Correct"]), [])
    assert "no log-probs" in (missing.steps[0].reason or "")
    duplicated = format_critique(_critique(["Correct", "Correct"])).replace("[Step 2]", "[Step 1]")
    dup_scores = score_critique(duplicated, [_lp(1, 0.5, 0.5)])
    assert all("more than once" in (step.reason or "") for step in dup_scores.steps)


def test_all_correct_needs_a_complete_critique_covering_the_solution() -> None:
    complete = _critique(["Correct", "Correct"])
    assert score_critique(complete, []).verdict == "all_correct"
    short = score_critique(complete, [], num_steps=3)
    assert short.verdict == "undetermined"
    assert short.verdict_reason == "the critique judges 2 of the solution's 3 steps"
    unfinished = format_critique(complete).replace("[End]\n", "")
    assert score_critique(unfinished, []).verdict == "undetermined"


def test_inconsistent_logprob_inputs_raise() -> None:
    critique = _critique(["Correct"])
    with pytest.raises(ScoringError, match="twice for step 1"):
        score_critique(critique, [_lp(1, 0.5, 0.5), _lp(1, 0.5, 0.5)])
    with pytest.raises(ScoringError, match=r"steps \[4\]"):
        score_critique(critique, [_lp(4, 0.5, 0.5)])


@given(st.text(max_size=400), st.lists(st.floats(max_value=0.0, allow_nan=False), max_size=6))
def test_scoring_any_text_never_raises_and_stays_in_range(text: str, logprobs: list[float]) -> None:
    parsed = parse_critique(text, strict=False)
    steps = sorted({step.index for step in parsed.steps if step.index >= 1})
    entries = [
        VerdictLogprobs(step=index, top_logprobs={" Correct": lp, " Incorrect": lp - 1.0})
        for index, lp in zip(steps, logprobs, strict=False)
    ]
    scores = score_critique(parsed, entries)
    for step in scores.steps:
        assert (step.score is None) != (step.reason is None)
        assert step.score is None or 0.0 <= step.score <= 1.0
