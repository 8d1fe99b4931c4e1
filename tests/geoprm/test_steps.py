"""Splitting policy solutions into steps."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from geoprm import SplitStyle, format_steps, split_steps, strip_step_label


@dataclass(frozen=True)
class Case:
    id: str
    solution: str
    steps: tuple[str, ...]
    answer: str | None
    style: SplitStyle
    preamble: str | None = None


CASES = [
    Case(
        "step-labels",
        "Step 1: AB = 6 from the figure.\nStep 2: The area is 6^2 = 36.\nAnswer: 36",
        ("AB = 6 from the figure.", "The area is 6^2 = 36."),
        "36",
        "step_labels",
    ),
    Case(
        "markdown-labels-multiline-and-preamble",
        "Let us solve it.\n\n**Step 1:** Angle ABC = 70 degrees\nbecause AB || CD.\n\n### Step 2. Angle BAC = 40 degrees.\n\n"
        "**Final answer:** **B**",
        ("Angle ABC = 70 degrees\nbecause AB || CD.", "Angle BAC = 40 degrees."),
        "B",
        "step_labels",
        "Let us solve it.",
    ),
    Case(
        "answer-inside-last-step",
        "Step 1: r = 5.\nStep 2: C = 10 pi.\nStep 3: Final answer: 10 pi",
        ("r = 5.", "C = 10 pi."),
        "10 pi",
        "step_labels",
    ),
    Case(
        "numbered-list-ignores-decimals-and-nested-numbers",
        "1. The side is 3.5 cm.\n2. The perimeter is 4 * 3.5 = 14 cm.\n   1) check: 14 / 4 = 3.5\n3. Done.\nAnswer: 14 cm",
        ("The side is 3.5 cm.", "The perimeter is 4 * 3.5 = 14 cm.\n   1) check: 14 / 4 = 3.5", "Done."),
        "14 cm",
        "numbered_list",
    ),
    Case(
        "paragraphs",
        "The triangle is right-angled at C.\n\nSo AB^2 = 9 + 16 = 25.\n\nHence AB = 5.\n\nThe answer is: 5",
        ("The triangle is right-angled at C.", "So AB^2 = 9 + 16 = 25.", "Hence AB = 5."),
        "5",
        "paragraphs",
    ),
    Case("lines", "x = 20\ny = 2x = 40\r\n", ("x = 20", "y = 2x = 40"), None, "lines"),
    Case("single", "  The angle is 30 degrees.  ", ("The angle is 30 degrees.",), None, "single"),
    Case("answer-only", "Answer: 7", (), "7", "empty"),
    Case("empty", "   \n", (), None, "empty"),
]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_split_steps(case: Case) -> None:
    split = split_steps(case.solution)
    assert split.steps == case.steps
    assert split.answer == case.answer
    assert split.style == case.style
    assert split.preamble == case.preamble


def test_last_answer_line_wins() -> None:
    split = split_steps("Step 1: Answer: 3 is a guess.\nStep 2: it is 4.\nAnswer: 4")
    assert split.answer == "4"
    assert split.steps == ("Answer: 3 is a guess.", "it is 4.")


_step_text = st.text(alphabet="abcxyz0123456789 =+*()", min_size=1, max_size=30).map(str.strip).filter(bool)


@given(st.lists(_step_text, min_size=1, max_size=8), st.one_of(st.none(), _step_text))
def test_format_steps_and_split_steps_are_inverse(steps: list[str], answer: str | None) -> None:
    text = format_steps(steps) + (f"\nAnswer: {answer}" if answer is not None else "")
    split = split_steps(text)
    assert split.steps == tuple(steps)
    assert split.answer == answer
    assert split.style == "step_labels"


def test_format_steps_replaces_existing_labels() -> None:
    assert format_steps(["Step 4: x = 2", "y = 3"], start=4) == "Step 4: x = 2\nStep 5: y = 3"
    assert strip_step_label("**Step 2:** The area is 36.") == "The area is 36."
    assert strip_step_label("The area is 36.") == "The area is 36."
