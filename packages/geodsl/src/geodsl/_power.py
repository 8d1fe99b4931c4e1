"""Closed-form inversion of a power step ``(a / b)^e = c / d`` for one unknown slot.

The step's residual is ``a^e * d - b^e * c`` (see :class:`geodsl.ops.PowerForm`). The sign and
parity rules that decide which real roots exist are written once here; the magnitudes come
from a small :class:`PowerLib`: with floats they are computed from logarithms, so no power
of an operand is ever formed (``27^360`` overflows a float while ``27 * 11^(1/360)`` does
not), and with sympy they are exact products of powers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol

from geodsl.ops import PowerForm

__all__ = ("FLOAT_POWER", "PowerLib", "power_holds", "power_roots")

_LOG_TOLERANCE = 1e-6
"""Relative error per unit of exponent that :func:`power_holds` accepts between the two sides."""


class PowerLib(Protocol):
    """The number system a power step is inverted in (floats or sympy numbers)."""

    zero: Any

    def sign(self, x: Any) -> int | None:
        """-1, 0 or 1; ``None`` when the sign cannot be decided."""
        ...

    def is_integer(self, e: Any) -> bool | None:
        """Whether an exponent is a whole number; ``None`` when that cannot be decided."""
        ...

    def is_even(self, e: Any) -> bool:
        """Whether a whole-number exponent is even."""
        ...

    def monomial(self, terms: Sequence[tuple[Any, Any]]) -> Any:
        """The product of ``|x|^k`` over ``(x, k)``, every ``x`` non-zero."""
        ...

    def log(self, x: Any) -> Any:
        """Natural logarithm of a positive number."""
        ...


def _power_sign(sign: int, e: Any, integer: bool, lib: PowerLib) -> int | None:
    """The sign of ``x^e`` from the sign of ``x``; ``None`` where ``x^e`` is not a real number."""
    if lib.sign(e) == 0 or sign > 0:
        return 1
    if sign == 0:
        return 0 if lib.sign(e) == 1 else None
    if not integer:
        return None
    return 1 if lib.is_even(e) else -1


def _signs(lib: PowerLib, *xs: Any) -> list[int] | None:
    """The signs of ``xs``; ``None`` when one cannot be decided."""
    out: list[int] = []
    for x in xs:
        sign = lib.sign(x)
        if sign is None:
            return None
        out.append(sign)
    return out


def _base_roots(
    e: Any, integer: bool, own_coef: Any, other_base: Any, other_coef: Any, lib: PowerLib
) -> list[Any] | None:
    """Real roots ``x`` of ``x^e * own_coef = other_base^e * other_coef``."""
    signs = _signs(lib, e, own_coef, other_base, other_coef)
    if signs is None:
        return None
    s_e, s_own, s_base, s_coef = signs
    if s_e == 0 or s_own == 0:
        return None  # the residual does not depend on x: the general solver says which way
    right = _power_sign(s_base, e, integer, lib)
    if right is None:
        return []  # other_base^e is not real
    if right == 0 or s_coef == 0:
        return [lib.zero] if s_e > 0 else []  # x^e = 0
    magnitude = lib.monomial([(other_base, 1), (other_coef, 1 / e), (own_coef, -1 / e)])
    positive = right * s_coef * s_own > 0
    if integer and not lib.is_even(e):
        return [magnitude if positive else -magnitude]
    if not positive:
        return []  # an even or fractional power is never negative
    return [magnitude, -magnitude] if integer else [magnitude]


def _coefficient_roots(
    e: Any, integer: bool, own_base: Any, other_base: Any, other_coef: Any, lib: PowerLib
) -> list[Any] | None:
    """The root ``y`` of ``own_base^e * y = other_base^e * other_coef``."""
    signs = _signs(lib, own_base, other_base, other_coef)
    if signs is None:
        return None
    s_own, s_base, s_coef = signs
    own = _power_sign(s_own, e, integer, lib)
    right = _power_sign(s_base, e, integer, lib)
    if own is None or right is None:
        return []  # a power of a negative number or of zero that is not real
    if own == 0:
        return None  # the residual does not depend on y
    if right == 0 or s_coef == 0:
        return [lib.zero]
    magnitude = lib.monomial([(other_base, e), (other_coef, 1), (own_base, -e)])
    return [magnitude if own * right * s_coef > 0 else -magnitude]


def _exponent_roots(n: Any, d: Any, p: Any, q: Any, lib: PowerLib) -> list[Any] | None:
    """The root ``e`` of ``n^e * q = d^e * p`` when both bases and ``p / q`` are positive."""
    if lib.sign(n) != 1 or lib.sign(d) != 1 or lib.sign(n - d) in (0, None):
        return None
    s_p, s_q = lib.sign(p), lib.sign(q)
    if s_p in (0, None) or s_p != s_q:
        return None
    sign = -1 if s_p == -1 else 1
    return [(lib.log(sign * p) - lib.log(sign * q)) / (lib.log(n) - lib.log(d))]


def power_roots(form: PowerForm, slot: int, values: Sequence[Any], lib: PowerLib) -> list[Any] | None:
    """The real values of operand ``slot`` that make ``(a / b)^e = c / d`` hold.

    ``values`` holds the other operands' values (the entry at ``slot`` is ignored). Returns
    ``None`` when no closed form applies (the residual does not depend on the slot, a sign
    cannot be decided, or an exponent with a non-positive base): the caller then solves the
    residual itself. An empty list means there is no real solution.
    """
    n, d, e, p = (values[form.num], values[form.den], values[form.exponent], values[form.rhs_num])
    q = values[form.rhs_den] if form.rhs_den is not None else 1
    if slot == form.exponent:
        return _exponent_roots(n, d, p, q, lib)
    integer = lib.is_integer(e)
    if integer is None:
        return None
    if slot == form.num:
        return _base_roots(e, integer, q, d, p, lib)
    if slot == form.den:
        return _base_roots(e, integer, p, n, q, lib)
    if slot == form.rhs_num:
        return _coefficient_roots(e, integer, d, n, q, lib)
    return _coefficient_roots(e, integer, n, d, p, lib)


class _FloatPower:
    """:class:`PowerLib` over floats: magnitudes through logarithms."""

    zero = 0.0

    def sign(self, x: Any) -> int | None:
        if math.isnan(x):
            return None
        return 1 if x > 0 else -1 if x < 0 else 0

    def is_integer(self, e: Any) -> bool | None:
        return float(e).is_integer()

    def is_even(self, e: Any) -> bool:
        return float(e) % 2.0 == 0.0

    def monomial(self, terms: Sequence[tuple[Any, Any]]) -> Any:
        log = math.fsum(k * math.log(abs(x)) for x, k in terms if k != 0)
        if log > 709.0:
            raise OverflowError("the solution is too large for a float")
        return math.exp(log)

    def log(self, x: Any) -> Any:
        return math.log(x)


FLOAT_POWER: PowerLib = _FloatPower()
"""The float implementation used by the numeric executor."""


def _side(base: float, e: float, coef: float) -> tuple[int, float] | None:
    """Sign and log-magnitude of ``base^e * coef`` (``None`` when it is not a real number)."""
    integer = e.is_integer()
    sign = _power_sign(FLOAT_POWER.sign(base) or 0, e, integer, FLOAT_POWER)
    if sign is None:
        return None
    total = sign * (FLOAT_POWER.sign(coef) or 0)
    if total == 0:
        return 0, -math.inf
    return total, (e * math.log(abs(base)) if e != 0 else 0.0) + math.log(abs(coef))


def power_holds(form: PowerForm, values: Sequence[float]) -> bool:
    """Whether known float operands satisfy ``a^e * d = b^e * c``, compared in log space."""
    n, d, e, p = (values[form.num], values[form.den], values[form.exponent], values[form.rhs_num])
    q = values[form.rhs_den] if form.rhs_den is not None else 1.0
    left, right = _side(n, e, q), _side(d, e, p)
    if left is None or right is None or left[0] != right[0]:
        return False
    if left[0] == 0:
        return True
    return abs(left[1] - right[1]) <= _LOG_TOLERANCE * max(1.0, abs(e))
