"""Answer parsing, extraction from free text, tolerant comparison, choices and voting keys."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from geodsl.answers import (
    answer_from_output,
    answer_key,
    answers_match,
    extract_final_answer,
    match_choice,
    parse_answer,
)
from geodsl.errors import AnswerParseError

SQRT3 = math.sqrt(3)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("12", 12.0),
        ("-3.5", -3.5),
        (".5", 0.5),
        ("1,234.5", 1234.5),
        ("3/4", 0.75),
        ("\\frac{3}{4}", 0.75),
        ("\\dfrac{3}{4}", 0.75),
        ("\\frac34", 0.75),
        ("-\\frac{1}{2}", -0.5),
        ("2\\sqrt{3}", 2 * SQRT3),
        ("sqrt(3)", SQRT3),
        ("√3", SQRT3),
        ("2√(3)", 2 * SQRT3),
        ("\\sqrt[3]{8}", 2.0),
        ("4\\pi", 4 * math.pi),
        ("4π", 4 * math.pi),
        ("4*pi", 4 * math.pi),
        ("\\frac{25\\pi}{2}", 12.5 * math.pi),
        ("12 + 4\\sqrt{3}", 12 + 4 * SQRT3),
        ("\\frac{\\sqrt{3}}{2}", SQRT3 / 2),
        ("3\\frac{1}{2}", 3.5),
        ("2^{3}", 8.0),
        ("3 \\times 10^2", 300.0),
        ("60^\\circ", 60.0),
        ("60^{\\circ}", 60.0),
        ("60°", 60.0),
        ("12 cm", 12.0),
        ("24 \\text{ units}^2", 24.0),
        ("48 square units", 48.0),
        ("7.5 ft^{2}", 7.5),
        ("\\boxed{2\\sqrt{3}}", 2 * SQRT3),
        ("$\\boxed{\\frac{9}{2}}$", 4.5),
        ("x = 14", 14.0),
        ("m \\angle ABC = 45^\\circ.", 45.0),
        ("\\approx 3.14", 3.14),
        ("1.2e3", 1200.0),
        ("\u22123\u221a2", -3 * math.sqrt(2)),
    ],
)
def test_parse_answer_reads_common_forms(text: str, value: float) -> None:
    assert parse_answer(text) == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "no number"),
        ("hello", "cannot read"),
        ("x + 2", "cannot read"),
        ("1/0", "cannot evaluate"),
        ("\\sqrt{-4}", "negative"),
        ("(2 + 3", "expected \\)"),
        ("2 3", "unexpected"),
        ("10^400", "cannot evaluate"),
    ],
)
def test_parse_answer_rejects_non_numbers_naming_the_text(text: str, problem: str) -> None:
    with pytest.raises(AnswerParseError, match=problem) as info:
        parse_answer(text)
    assert repr(text) in str(info.value)


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12))
def test_parse_answer_round_trips_printed_floats(value: float) -> None:
    assert parse_answer(repr(value)) == value
    assert parse_answer(f"{value:.3f}") == pytest.approx(round(value, 3), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("First 3 + 4 = 7, so the area is \\boxed{14}. Then 99.", "14"),
        ("We get x = 5 and y = 7.\nAnswer: 12.5 cm.", "12.5 cm"),
        ("Thus the answer is $4\\sqrt{3}$. Done.", "$4\\sqrt{3}$"),
        ("The final answer is: **\\frac{3}{4}**", "\\frac{3}{4}"),
        ("Adding 30 and 45 gives 75 degrees", "75"),
        ("The total is 1,250 square feet", "1,250"),
        ("No numbers here.", None),
    ],
)
def test_extract_final_answer(text: str, expected: str | None) -> None:
    assert extract_final_answer(text) == expected


def test_extracted_answers_parse() -> None:
    found = extract_final_answer("so the answer is 12 + 4\\sqrt{3} units.")
    assert found is not None
    assert parse_answer(found) == pytest.approx(12 + 4 * SQRT3)


@pytest.mark.parametrize(
    ("stdout", "value"),
    [
        ("1.491\n", 1.491),
        ("debug 3\nsolutions [2, 5]\n12.000\n", 12.0),
        ("x = 4*sqrt(3)\n", 4 * SQRT3),
        ("[2.000, -2.000]\n", -2.0),
        ("the value is 7 units, done\n\n", 7.0),
        ("no digits\n", None),
        ("", None),
    ],
)
def test_answer_from_output(stdout: str, value: float | None) -> None:
    result = answer_from_output(stdout)
    assert result == (None if value is None else pytest.approx(value))


def test_answers_match_uses_relative_tolerance() -> None:
    assert answers_match(100.0, 100.09)
    assert not answers_match(100.0, 100.2)
    assert answers_match("2\\sqrt{3}", 3.464)
    assert answers_match(1e6, 1e6 + 900)
    assert not answers_match(1e6, 1e6 + 1100)


def test_answers_match_near_zero_uses_absolute_tolerance() -> None:
    assert answers_match(0.0, 0.0004)
    assert answers_match(0, "0.000")
    assert not answers_match(0.0, 0.001)
    assert answers_match(0.0, 0.001, abs_tol=1e-2)


def test_answers_match_rejects_non_finite_and_bad_input() -> None:
    assert not answers_match(math.nan, math.nan)
    assert not answers_match(math.inf, math.inf)
    with pytest.raises(AnswerParseError):
        answers_match("twelve", 12.0)


def test_match_choice_picks_the_nearest_matching_choice() -> None:
    assert match_choice(33.94, [25.0, 30.0, 33.941125496954285, 40.0]) == 2
    assert match_choice(10.004, [10.0, 10.008], rel_tol=1e-3) == 0
    assert match_choice(10.007, [10.0, 10.008], rel_tol=1e-3) == 1
    assert match_choice(38.0, [38.0, 38.0, 76.0, 152.0]) == 0
    assert match_choice("\\frac{9}{2}", ["4.5", "5", "6", "7"]) == 0
    assert match_choice(12.0, [1.0, 2.0, 3.0, 4.0]) is None
    assert match_choice(1.0, []) is None


def test_answer_key_groups_equal_answers() -> None:
    assert answer_key(12.5) == "12.500"
    assert answer_key("25/2") == answer_key(12.5004)
    assert answer_key(-0.0001) == "0.000"
    assert answer_key(2.0, decimals=0) == "2"
    assert len({answer_key(v) for v in (1.2345, 1.2346, 1.23449)}) == 2
    with pytest.raises(AnswerParseError, match="not finite"):
        answer_key(math.inf)
