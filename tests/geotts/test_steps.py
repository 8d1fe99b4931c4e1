"""Splitting policy solutions into steps (the one splitter: training data and refined best-of-N use it)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from geotts import SplitStyle, StepJudgement, format_steps, refined_prefix, split_steps, strip_step_label


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


# --- the text the policy continues from (refined best-of-N's second round) ----------------------------


@pytest.mark.parametrize(
    ("solution", "first_wrong", "correction", "prefix"),
    [
        # labelled steps: verified steps as written, the correction gets the wrong step's own label
        ("Step 1: a\nStep 2: b\nStep 3: c\nAnswer: 3", 1, "Step 2: B", "Step 1: a\nStep 2: B\n"),
        ("Step 1: a\n\nStep 2: b\n\nAnswer: 3", 1, "B", "Step 1: a\n\nStep 2: B\n\n"),
        ("Intro.\n**Step 1:** a\n**Step 2:** b", 0, "A", "Intro.\n**Step 1:** A\n"),
        ("Step 1:\nlong a\nStep 2: b", 1, "B", "Step 1:\nlong a\nStep 2: B\n"),
        # numbered list, paragraphs, lines: the same layout
        ("1. a\n2. b\n3. c", 2, "C", "1. a\n2. b\n3. C\n"),
        ("a\n\nb\n\nc\n\nAnswer: 2", 1, "B", "a\n\nB\n\n"),
        ("a\nb\nc", 2, "C", "a\nb\nC\n"),
        # CRLF line ends are kept as written
        ("Step 1: a\r\nStep 2: b\r\nAnswer: 1", 1, "B", "Step 1: a\r\nStep 2: B\r\n"),
        # no correction: stop after the verified steps; nothing verified and nothing to add: ""
        ("Step 1: a\nStep 2: b", 1, None, "Step 1: a\n"),
        ("Step 1: a\nStep 2: b", 0, None, ""),
        ("Step 1: a\nStep 2: b", 0, "   ", ""),
        # a scorer that judged past the last step keeps every step; no steps at all: just the correction
        ("Step 1: a\nAnswer: 1", 1, "b", "Step 1: a\nStep 2: b\n"),
        ("Answer: 7", 0, "x = 7", "x = 7\n"),
    ],
)
def test_refined_prefix_keeps_the_solutions_layout(
    solution: str, first_wrong: int, correction: str | None, prefix: str
) -> None:
    judgement = StepJudgement(
        scores=(0.5,) * (first_wrong + 1), first_wrong=first_wrong, correction=correction
    )
    assert refined_prefix(solution, judgement) == prefix


def test_refined_prefix_of_an_all_correct_solution_is_empty() -> None:
    assert refined_prefix("Step 1: a\nAnswer: 1", StepJudgement(scores=(0.9,))) == ""


@given(st.lists(_step_text, min_size=2, max_size=6), st.data())
def test_the_prefix_splits_back_into_the_verified_steps_and_the_correction(
    steps: list[str], data: st.DataObject
) -> None:
    wrong = data.draw(st.integers(min_value=0, max_value=len(steps) - 1))
    judgement = StepJudgement(scores=(0.5,) * (wrong + 1), first_wrong=wrong, correction="fixed step")
    prefix = refined_prefix(format_steps(steps) + "\nAnswer: 1", judgement)
    assert split_steps(prefix).steps == (*steps[:wrong], "fixed step")
