"""Algebra for the calculation solver: expression trees to sympy, linear forms, one-unknown roots."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Hashable
from fractions import Fraction

import sympy
from sympy.parsing.sympy_parser import parse_expr

from geosynth.calc._errors import CalcFormatError
from geosynth.calc._figure import Figure
from geosynth.calc._model import Const, Num, Op, Var
from geosynth.engine import Angle, Area, Length

ONE = "1"
"""The unit of constants in the linear system."""

_NUM_TEXT = re.compile(r"^([0-9.+\-*/() ^]|pi|sqrt)+$")
_DEG = sympy.pi / 180

_OPS: dict[str, Callable[[list[sympy.Expr]], sympy.Expr]] = {
    "+": lambda a: sympy.Add(*a),
    "-": lambda a: -a[0] if len(a) == 1 else a[0] - a[1],
    "*": lambda a: sympy.Mul(*a),
    "/": lambda a: a[0] / a[1],
    "^": lambda a: a[0] ** a[1],
    "sqrt": lambda a: sympy.sqrt(a[0]),
    "sin": lambda a: sympy.sin(a[0]),
    "cos": lambda a: sympy.cos(a[0]),
    "tan": lambda a: sympy.tan(a[0]),
}
"""Operator name to its sympy meaning (angles are radians inside expressions)."""


def number(text: str) -> sympy.Expr:
    """A numeric constant such as ``"50/180*pi"`` or ``"16.5"`` as an exact sympy number.

    Raises:
        CalcFormatError: The text is not a plain numeric expression.
    """
    if not _NUM_TEXT.match(text):
        raise CalcFormatError(f"not a numeric constant: {text!r}", record="?", field="num")
    value = parse_expr(
        text.replace("^", "**"), local_dict={"pi": sympy.pi, "sqrt": sympy.sqrt}, evaluate=True
    )
    value = sympy.nsimplify(value, rational=True) if value.has(sympy.Float) else value
    if not isinstance(value, sympy.Expr) or not value.is_number:
        raise CalcFormatError(f"not a numeric constant: {text!r}", record="?", field="num")
    return value


def to_sympy(node: object, fig: Figure) -> sympy.Expr:
    """An expression tree as sympy: angles become ``symbol * pi / 180`` (the tree's radians)."""
    if isinstance(node, Op):
        return _OPS[node.op]([to_sympy(a, fig) for a in node.args])
    if isinstance(node, Length):
        return fig.length(*node.points)
    if isinstance(node, Angle):
        return fig.angle(*node.points) * _DEG
    if isinstance(node, Area):
        return fig.area(node.points)
    if isinstance(node, Var):
        return fig.var(node.name)
    if isinstance(node, Num):
        return number(node.text)
    if isinstance(node, Const):
        return sympy.pi
    raise TypeError(f"not an expression node: {node!r}")


def _fraction(value: sympy.Expr) -> Fraction | None:
    if isinstance(value, sympy.Rational):
        return Fraction(int(value.p), int(value.q))
    if not value.is_number:
        return None
    number_ = complex(value)
    if abs(number_.imag) > 1e-12 or not math.isfinite(number_.real):
        return None
    return Fraction(number_.real).limit_denominator(10**12)


def linear_form(expr: sympy.Expr) -> dict[Hashable, Fraction] | None:
    """``expr`` (``= 0``) as a linear combination over its symbols and :data:`ONE`, or ``None``.

    An empty dict means the equation is trivial (its unknowns cancel up to rounding).

    The form is scaled so a common irrational factor (``pi / 180``) cancels; coefficients are exact when
    they are rational, else the nearest fraction of their float value.
    """
    symbols = sorted(expr.free_symbols, key=str)
    coeffs: dict[Hashable, sympy.Expr] = {}
    mass: dict[Hashable, float] = {}
    for term in sympy.Add.make_args(sympy.expand(expr)):
        indep, dep = term.as_independent(*symbols, as_Add=False)
        if dep == 1:
            key: Hashable = ONE
        elif isinstance(dep, sympy.Symbol):
            key = dep
        else:
            return None
        coeffs[key] = coeffs.get(key, sympy.Integer(0)) + indep
        size = _magnitude(indep)
        if size is None:
            return None
        mass[key] = mass.get(key, 0.0) + size
    floats = {k: _magnitude(c) for k, c in coeffs.items()}
    live = [s for s in symbols if s in coeffs and (floats[s] or 0.0) > 1e-9 * max(mass[s], 1.0)]
    if not live:
        return {} if all((floats[k] or 0.0) <= 1e-9 * max(mass[k], 1.0) for k in coeffs) else None
    lead = coeffs[live[0]]
    out: dict[Hashable, Fraction] = {}
    for key, coef in coeffs.items():
        if key != ONE and key not in live:
            continue
        ratio = coef / lead
        value = _fraction(ratio if ratio.is_Rational else sympy.simplify(ratio))
        if value is None:
            return None
        if value:
            out[key] = value
    return out


def _magnitude(value: sympy.Expr) -> float | None:
    try:
        return abs(complex(value))
    except TypeError:
        return None


def real_roots(expr: sympy.Expr, var: sympy.Symbol, low: float, high: float) -> list[float]:
    """The real roots of ``expr = 0`` in the open interval (low, high), numerically."""
    numerator = sympy.numer(sympy.together(expr))
    if numerator.is_polynomial(var):
        poly = sympy.Poly(sympy.expand(numerator), var)
        if poly.degree() <= 0:
            return []
        candidates = [complex(r) for r in poly.nroots(n=15, maxsteps=200)]
        roots = [c.real for c in candidates if abs(c.imag) < 1e-7 * max(1.0, abs(c.real))]
    else:
        roots = _scan_roots(expr, var, low, high)
    found: list[float] = []
    for r in sorted(roots):
        if low < r < high and not (found and abs(r - found[-1]) <= 1e-9 * max(1.0, abs(r))):
            found.append(r)
    return found


_SCAN_LIMIT = 16
"""Scanning stops after this many roots (the caller rejects such equations anyway)."""


def _scan_roots(expr: sympy.Expr, var: sympy.Symbol, low: float, high: float) -> list[float]:
    func = sympy.lambdify(var, expr, modules="math")

    def value(x: float) -> float | None:
        try:
            y = complex(func(x))
        except (ValueError, ZeroDivisionError, OverflowError, TypeError):
            return None
        return y.real if abs(y.imag) < 1e-12 and math.isfinite(y.real) else None

    lo, hi = max(low, -1e4), min(high, 1e4)
    samples = 4000
    grid = [lo + (hi - lo) * (i + 0.5) / samples for i in range(samples)]
    roots: list[float] = []
    prev: tuple[float, float] | None = None
    for x in grid:
        y = value(x)
        if y is None:
            prev = None
            continue
        if y == 0:
            roots.append(x)
        elif prev is not None and (prev[1] < 0) != (y < 0):
            root = _bisect(value, prev[0], x)
            if root is not None:
                roots.append(root)
                if len(roots) > _SCAN_LIMIT:
                    break
        prev = (x, y)
    return roots


def _bisect(value: Callable[[float], float | None], a: float, b: float) -> float | None:
    fa = value(a)
    if fa is None:
        return None
    for _ in range(80):
        mid = (a + b) / 2
        fm = value(mid)
        if fm is None:
            return None
        if (fm < 0) == (fa < 0):
            a, fa = mid, fm
        else:
            b = mid
    scale = max(1.0, abs(fa))
    final = value((a + b) / 2)
    return (a + b) / 2 if final is not None and abs(final) < 1e-6 * scale else None
