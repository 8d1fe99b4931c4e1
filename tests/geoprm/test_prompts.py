"""Prompt templates: shipped as package data, rendered with the real problem text."""

from __future__ import annotations

import pytest

from geoprm import (
    PROMPT_VERSION,
    Critique,
    PromptError,
    StepCritique,
    critic_prompt,
    critique_prompt,
    format_critique,
    parse_critique,
    policy_prompt,
)
from geoprm._prompts import PLACEHOLDERS, load_template
from geotts import split_steps

QUESTION = "In the figure, AB = $6 and {x} marks angle ABC. Find the area of square ABCD."


def test_every_template_loads_with_its_declared_placeholders() -> None:
    for name in PLACEHOLDERS:
        template = load_template(name, PROMPT_VERSION)
        assert set(template.get_identifiers()) == PLACEHOLDERS[name]


def test_free_form_policy_prompt_contains_question_verbatim_and_asks_for_steps_and_answer() -> None:
    prompt = policy_prompt(QUESTION)
    assert QUESTION in prompt
    assert '"Step 1:"' in prompt and "Answer:" in prompt
    assert "Options:" not in prompt


def test_multiple_choice_prompt_letters_the_options() -> None:
    prompt = policy_prompt(QUESTION, choices=["12", "24", "36", "48"])
    assert "A. 12\nB. 24\nC. 36\nD. 48" in prompt
    assert "letter" in prompt


@pytest.mark.parametrize(
    ("question", "choices", "needle"),
    [
        ("  ", None, "question is empty"),
        ("Q", [], "needs 1 to 26 options"),
        ("Q", ["a", " "], "option B is empty"),
        ("Q", "ABCD", "not one string"),
    ],
)
def test_bad_policy_inputs_are_rejected(question: str, choices: list[str] | str | None, needle: str) -> None:
    with pytest.raises(PromptError, match=needle):
        policy_prompt(question, choices=choices)


def test_critique_prompt_lists_steps_and_describes_the_parseable_layout() -> None:
    split = split_steps("Step 1: AB = 6.\nStep 2: The area is 12.\nAnswer: 12")
    prompt = critique_prompt(QUESTION, split.steps)
    assert QUESTION in prompt
    assert "Step 1: AB = 6.\nStep 2: The area is 12." in prompt
    for label in (
        "[Step 1]",
        "Step goal:",
        "Figure check:",
        "Figure verdict:",
        "Logic check:",
        "Logic verdict:",
    ):
        assert label in prompt
    assert "Step verdict:" in prompt and "[Correction of step k]" in prompt and "[End]" in prompt
    # a critique written the way the prompt asks is read back by the strict parser
    critique = Critique(
        steps=(
            StepCritique(
                index=1,
                intent="Read AB.",
                image_analysis="AB = 6.",
                image_judgement="Correct",
                logic_analysis="Direct.",
                logic_judgement="Correct",
                judgement="Correct",
            ),
        )
    )
    assert parse_critique(format_critique(critique)) == critique


def test_the_critic_prompt_holds_question_and_steps_without_describing_the_layout() -> None:
    split = split_steps("Step 1: AB = 6.\nStep 2: The area is 12.\nAnswer: 12")
    prompt = critic_prompt(QUESTION, split.steps)
    assert QUESTION in prompt and "Step 1: AB = 6.\nStep 2: The area is 12." in prompt
    assert "Answer: 12" not in prompt
    assert "Figure verdict:" not in prompt and "[End]" not in prompt  # the trained critic knows the layout
    assert len(prompt) < len(critique_prompt(QUESTION, split.steps)) / 3
    with pytest.raises(PromptError, match="no steps"):
        critic_prompt("Q", [])


def test_critique_prompt_rejects_missing_steps_and_unknown_versions() -> None:
    with pytest.raises(PromptError, match="no steps"):
        critique_prompt("Q", [])
    with pytest.raises(PromptError, match="step 2 is empty"):
        critique_prompt("Q", ["a", ""])
    with pytest.raises(PromptError, match="no version 'v999'"):
        policy_prompt("Q", version="v999")
