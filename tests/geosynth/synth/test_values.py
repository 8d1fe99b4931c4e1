"""Exact answers: power products of primes and their text."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from geosynth.synth._values import multiply, power_of, power_text, power_value


@pytest.mark.parametrize(
    ("product", "text"),
    [
        ({}, "1"),
        (power_of(Fraction(6)), "6"),
        (power_of(Fraction(3, 2)), "3/2"),
        ({2: Fraction(1, 2)}, "sqrt(2)"),
        (multiply(power_of(Fraction(5, 2)), {3: Fraction(1, 2)}), "5*sqrt(3)/2"),
        ({2: Fraction(3, 2), 3: Fraction(1, 2)}, "2*sqrt(6)"),
        ({2: Fraction(1), 3: Fraction(1, 3)}, "2*3^(1/3)"),
    ],
)
def test_power_text(product: dict[int, Fraction], text: str) -> None:
    assert power_text(product) == text


def test_power_value_and_multiply_agree_with_floats() -> None:
    product = multiply(power_of(Fraction(10)), {2: Fraction(-1, 2)}, power_of(Fraction(1, 5)))
    assert product == {2: Fraction(1, 2)}
    assert math.isclose(power_value(product), math.sqrt(2))
    assert power_value(power_of(Fraction(12, 7))) == pytest.approx(12 / 7)
