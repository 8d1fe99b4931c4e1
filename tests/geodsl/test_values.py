"""The reader of N values in the dataset's LaTeX-ish algebra."""

from __future__ import annotations

import pytest
import sympy

from geodsl import ValueSyntaxError, parse_value

x, y, n, c, a, r, s = sympy.symbols("x y n c a r s")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("24", sympy.Integer(24), id="integer"),
        pytest.param("9.4", sympy.Rational(47, 5), id="decimal-is-exact"),
        pytest.param("-3", sympy.Integer(-3), id="negative"),
        pytest.param("x", x, id="letter"),
        pytest.param("3\\sqrt{2}", 3 * sympy.sqrt(2), id="sqrt"),
        pytest.param("\\sqrt[3]{8}", sympy.Integer(2), id="cube-root"),
        pytest.param("\\frac{x}{4}", x / 4, id="frac"),
        pytest.param("6x-7", 6 * x - 7, id="linear"),
        pytest.param("-2x+37", 37 - 2 * x, id="leading-minus"),
        pytest.param("3\\frac{3}{5}", sympy.Rational(18, 5), id="mixed-number"),
        pytest.param("6\\frac{1}{2}", sympy.Rational(13, 2), id="mixed-number-half"),
        pytest.param("2\\frac{x}{3}", 2 * x / 3, id="product-not-mixed"),
        pytest.param("(y-3)\\pi", (y - 3) * sympy.pi, id="pi-product"),
        pytest.param("c^{2}+6", c**2 + 6, id="power"),
        pytest.param("\\frac{1}{2}a+8", a / 2 + 8, id="frac-coefficient"),
        pytest.param("3(n+4)", 3 * n + 12, id="implicit-product"),
        pytest.param("x^{2}-4x", x**2 - 4 * x, id="quadratic"),
        pytest.param("x+\\frac{10}{3}", x + sympy.Rational(10, 3), id="plus-frac"),
        pytest.param("\\frac{10r-4}{2}", 5 * r - 2, id="frac-of-linear"),
        pytest.param("s^{2}-4s", s**2 - 4 * s, id="s-squared"),
        pytest.param("1.5y", sympy.Rational(3, 2) * y, id="decimal-coefficient"),
        pytest.param("2\\cdot x", 2 * x, id="cdot"),
        pytest.param("\\left(x+1\\right)2", 2 * x + 2, id="left-right"),
    ],
)
def test_reads_dataset_forms(text: str, expected: sympy.Expr) -> None:
    assert sympy.simplify(parse_value(text) - expected) == 0


@pytest.mark.parametrize(
    ("text", "column", "words"),
    [
        pytest.param("", 0, ["empty"], id="empty"),
        pytest.param("3x+", 3, ["end of text"], id="dangling-plus"),
        pytest.param("\\frac{1}", 8, ["end of text"], id="frac-one-group"),
        pytest.param("(x+1", 4, ["')'"], id="unclosed-paren"),
        pytest.param("x)", 1, ["trailing"], id="extra-paren"),
        pytest.param("\\foo{2}", 0, ["\\\\foo"], id="unknown-command"),
        pytest.param("3#", 1, ["'#'"], id="bad-character"),
        pytest.param("\\frac{1}{0}", 11, ["division by zero"], id="zero-denominator"),
    ],
)
def test_malformed_values_name_the_value_and_column(text: str, column: int, words: list[str]) -> None:
    with pytest.raises(ValueSyntaxError) as info:
        parse_value(text)
    assert info.value.column == column
    assert info.value.text == text
    assert repr(text) in str(info.value)
    for word in words:
        assert word in str(info.value)
