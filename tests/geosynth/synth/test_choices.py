from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from geodsl import extract_final_answer, parse_answer
from geosynth.synth._choices import CHOICE_KINDS, ChoiceError, boxed, display, multiple_choice

POSITIVE = ("length", "area", "perimeter", "ratio")


def _check(options: tuple[str, ...], index: int, answer: float, kind: str, n: int) -> None:
    assert len(options) == n
    assert len(set(options)) == n  # distinct after rounding to the display precision
    assert options[index] == display(answer, kind)
    assert sum(option == display(answer, kind) for option in options) == 1  # exactly one correct
    values = [float(o) for o in options]
    row = CHOICE_KINDS[kind]
    assert all(row.lower < v < row.upper for v in values)
    if kind in POSITIVE:
        assert all(answer / 3.05 <= v <= answer * 3.05 for v in values)  # similar scale (display rounding)


@given(st.floats(min_value=0.5, max_value=179.5), st.integers(min_value=0, max_value=10_000))
@settings(max_examples=200, deadline=None)
def test_angle_options_stay_between_0_and_180(answer: float, seed: int) -> None:
    options, index = multiple_choice(answer, kind="angle", rng=random.Random(seed))
    _check(options, index, answer, "angle", 4)


@given(
    st.sampled_from(POSITIVE),
    st.floats(min_value=0.05, max_value=1e4),
    st.integers(min_value=0, max_value=10_000),
    st.integers(min_value=2, max_value=6),
)
@settings(max_examples=200, deadline=None)
def test_positive_kinds_keep_scale_and_sign(kind: str, answer: float, seed: int, n: int) -> None:
    options, index = multiple_choice(answer, kind=kind, rng=random.Random(seed), n=n)
    _check(options, index, answer, kind, n)


@given(st.floats(min_value=-500, max_value=500), st.integers(min_value=0, max_value=10_000))
@settings(max_examples=100, deadline=None)
def test_variables_may_be_negative_or_zero(answer: float, seed: int) -> None:
    options, index = multiple_choice(answer, kind="var", rng=random.Random(seed))
    _check(options, index, answer, "var", 4)


def test_distractors_include_classic_mistakes_and_the_position_varies() -> None:
    seen_positions = set()
    mistakes = set()
    for seed in range(40):
        options, index = multiple_choice(40.0, kind="angle", rng=random.Random(seed))
        seen_positions.add(index)
        mistakes |= set(options) - {"40"}
    assert seen_positions == {0, 1, 2, 3}
    assert {"140", "50", "20", "80"} <= mistakes  # supplement, complement, half, double


def test_same_rng_state_same_options() -> None:
    assert multiple_choice(3.4641, kind="length", rng=random.Random(9)) == multiple_choice(
        3.4641, kind="length", rng=random.Random(9)
    )


@pytest.mark.parametrize(
    ("answer", "kind", "message"),
    [
        (200.0, "angle", "outside"),
        (0.0, "angle", "outside"),
        (-1.0, "length", "outside"),
        (0.001, "length", "display precision"),
        (float("nan"), "length", "outside"),
        (3.0, "volume", "unknown answer kind"),
    ],
)
def test_invalid_answers_are_refused(answer: float, kind: str, message: str) -> None:
    with pytest.raises(ChoiceError, match=message):
        multiple_choice(answer, kind=kind, rng=random.Random(0))


def test_too_few_options_is_refused() -> None:
    with pytest.raises(ChoiceError, match="at least 2"):
        multiple_choice(10.0, kind="length", rng=random.Random(0), n=1)


def test_boxed_answers_use_the_display_precision_and_are_readable_back() -> None:
    assert boxed(40.0, "angle") == r"\boxed{40}"
    assert boxed(36.87, "angle") == r"\boxed{36.9}"
    assert boxed(2 * 3**0.5, "length") == r"\boxed{3.46}"
    assert boxed(-3.0, "var") == r"\boxed{-3}"
    assert display(-0.0001, "var") == "0"
    text = f"So the answer is {boxed(12.5, 'area')}."
    extracted = extract_final_answer(text)
    assert extracted is not None and parse_answer(extracted) == pytest.approx(12.5)
