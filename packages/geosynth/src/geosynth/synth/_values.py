"""Exact values of calculation answers: rationals times rational powers of primes, and their text.

The engine's ratio system writes a constant log-length over the units ``log p``; the value itself is
``prod p ** e`` with rational exponents. Angles are rational degrees.
"""

from __future__ import annotations

import math
from fractions import Fraction

from geosynth.engine import factor

PowerProduct = dict[int, Fraction]
"""``prod p ** e`` as prime to rational exponent (zero exponents are not stored)."""


def power_of(value: Fraction) -> PowerProduct:
    """A positive rational as a power product."""
    out: PowerProduct = {p: Fraction(e) for p, e in factor(value.numerator).items()}
    for p, e in factor(value.denominator).items():
        out[p] = out.get(p, Fraction(0)) - e
    return {p: e for p, e in out.items() if e}


def multiply(*factors: PowerProduct) -> PowerProduct:
    """The product of power products."""
    out: PowerProduct = {}
    for item in factors:
        for p, e in item.items():
            out[p] = out.get(p, Fraction(0)) + e
    return {p: e for p, e in sorted(out.items()) if e}


def power_value(product: PowerProduct) -> float:
    """The float value of a power product."""
    return math.prod(p ** float(e) for p, e in product.items())


def _split(product: PowerProduct) -> tuple[Fraction, dict[int, Fraction]]:
    rational = Fraction(1)
    radical: dict[int, Fraction] = {}
    for p, e in sorted(product.items()):
        whole = math.floor(e)
        rational *= Fraction(p) ** whole
        if e - whole:
            radical[p] = e - whole
    return rational, radical


def power_text(product: PowerProduct) -> str:
    """Exact text: ``6``, ``3/2``, ``5*sqrt(3)/2``, ``2*3^(1/3)``."""
    rational, radical = _split(product)
    if not radical:
        return str(rational)
    if all(e == Fraction(1, 2) for e in radical.values()):
        roots = [f"sqrt({math.prod(radical)})"]
    else:
        roots = [f"{p}^({e})" for p, e in radical.items()]
    head = [] if rational.numerator == 1 else [str(rational.numerator)]
    body = "*".join([*head, *roots])
    return body if rational.denominator == 1 else f"{body}/{rational.denominator}"


def degrees_text(value: Fraction) -> str:
    """An angle in degrees: ``40`` or ``45/2``."""
    return str(value)
