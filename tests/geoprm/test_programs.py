"""geoprm.programs: a one-line program trace judged one operator per step, and mapped back for refinement."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from geodsl.ops import OPERATORS
from geoprm.programs import ProgramLayout, ProgramLayoutSampler
from geotts import (
    Completion,
    GenerationRequest,
    Problem,
    RefinedBestOfN,
    RefinedBestOfNConfig,
    StepJudgement,
    StepScoreRequest,
    judge_solutions,
    refined_prefix,
    split_steps,
)
from geotts.testing import FunctionSampler

LAYOUT = ProgramLayout(OPERATORS)
POLICY_TEXT = "Solution:\nSum 105 V0 180 Sum y 105 V0 Get y"


def test_a_one_line_program_becomes_one_step_per_operator_that_split_steps_cuts_the_same_way() -> None:
    rendered = LAYOUT.render(POLICY_TEXT)
    assert rendered == "Solution:\nStep 1: Sum 105 V0 180\nStep 2: Sum y 105 V0\nStep 3: Get y"
    split = split_steps(rendered)
    assert split.steps == LAYOUT.steps(POLICY_TEXT) == ("Sum 105 V0 180", "Sum y 105 V0", "Get y")
    assert split.preamble == "Solution:"  # the header is not judged
    assert LAYOUT.one_line(rendered) == POLICY_TEXT


def test_tokens_before_the_first_operator_are_a_step_of_their_own() -> None:
    assert LAYOUT.split("105 y Sum 105 y 180 Get y") == ("105 y", "Sum 105 y 180", "Get y")
    assert LAYOUT.render("no program here") == "Step 1: no program here"
    assert LAYOUT.render("Solution:\n") == "Solution:\n"  # nothing to lay out: the text as it is


def test_a_refined_prefix_reads_back_as_the_program_the_policy_continues() -> None:
    judgement = StepJudgement(scores=(0.9, 0.2), first_wrong=1, correction="Sum 105 y 180")
    prefix = refined_prefix(LAYOUT.render(POLICY_TEXT), judgement)
    assert prefix == "Solution:\nStep 1: Sum 105 V0 180\nStep 2: Sum 105 y 180\n"
    assert LAYOUT.one_line(prefix) == "Solution:\nSum 105 V0 180 Sum 105 y 180"
    nothing_verified = refined_prefix(LAYOUT.render(POLICY_TEXT), StepJudgement(scores=(0.1,), first_wrong=0))
    assert LAYOUT.one_line(nothing_verified) == "Solution:\n"  # the policy starts its program afresh


def test_operator_names_must_be_single_tokens() -> None:
    with pytest.raises(ValueError, match="without whitespace"):
        ProgramLayout(["Sum", "Two words"])
    with pytest.raises(ValueError, match="non-empty"):
        ProgramLayout([])


_OPS = sorted(OPERATORS)
_TOKENS = st.one_of(
    st.sampled_from(_OPS),
    st.from_regex(r"[0-9]{1,3}|V[0-9]|[a-z]", fullmatch=True),
)


@given(st.lists(_TOKENS, min_size=1, max_size=12), st.booleans())
def test_rendering_and_reading_back_keep_every_token(tokens: list[str], header: bool) -> None:
    text = ("Solution:\n" if header else "") + " ".join(tokens)
    rendered = LAYOUT.render(text)
    assert LAYOUT.one_line(rendered) == text
    steps = split_steps(rendered).steps
    assert steps == LAYOUT.split(" ".join(tokens))
    assert " ".join(steps).split() == tokens


class _Critic:
    """Flags the first step that uses the wrong constant 190 and corrects it; records what it saw."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, ...]] = []

    def score(self, requests: Sequence[StepScoreRequest]) -> list[StepJudgement]:
        out: list[StepJudgement] = []
        for request in requests:
            self.seen.append(request.steps)
            wrong = next((i for i, s in enumerate(request.steps) if "190" in s), None)
            if wrong is None:
                out.append(StepJudgement(scores=(0.9,) * len(request.steps)))
            else:
                fixed = request.steps[wrong].replace("190", "180")
                out.append(StepJudgement(scores=(0.9,) * wrong + (0.1,), first_wrong=wrong, correction=fixed))
        return out


def test_refined_best_of_n_runs_a_one_line_policy_through_the_layout() -> None:
    sent: list[GenerationRequest] = []

    def policy(request: GenerationRequest) -> list[Completion]:
        sent.append(request)
        if request.assistant_prefix:  # the policy continues its own one-line program
            return [Completion(text=" Get y", num_tokens=2)] * request.n
        return [Completion(text="Solution:\nSum 105 y 190 Get y", num_tokens=6)] * request.n

    def extract(completion: Completion, trace_type: str | None, problem: Problem) -> float | None:
        assert "Step" not in completion.text  # answers are read from the policy's own form
        return 75.0 if "Sum 105 y 180 Get y" in completion.text else 85.0

    critic = _Critic()
    sampler = ProgramLayoutSampler(FunctionSampler(policy), LAYOUT)
    problems = [Problem(id="p", question="Find y.")]
    (decision,) = RefinedBestOfN(critic, RefinedBestOfNConfig(n=2)).run(
        sampler, problems, LAYOUT.extractor(extract)
    )
    assert sent[1].assistant_prefix == "Solution:\nSum 105 y 180"  # the correction, in one-line form
    assert critic.seen[0] == ("Sum 105 y 190", "Get y")
    assert critic.seen[1] == ("Sum 105 y 180", "Get y")
    assert decision.answer == 75.0
    assert decision.solution == "Solution:\nStep 1: Sum 105 y 180\nStep 2: Get y"
    assert judge_solutions(critic, problems, [[decision.solution]])[0][0].all_correct


def test_a_continuation_that_extends_the_last_token_is_kept_as_written() -> None:
    def policy(request: GenerationRequest) -> list[Completion]:
        return [Completion(text="0 Get y", num_tokens=3)] * request.n

    sampler = ProgramLayoutSampler(FunctionSampler(policy), LAYOUT)
    prefix = "Solution:\nStep 1: Sum 105 y 18\n"
    (comps,) = sampler.generate([GenerationRequest(prompt="p", assistant_prefix=prefix)])
    assert comps[0].text == "0 Get y"  # the rendered whole does not start with the prefix
    assert LAYOUT.one_line(prefix + comps[0].text) == "Solution:\nSum 105 y 18 0 Get y"
