"""Pure-Python numeric machinery: compiled value functions, the root rule and 1-D / joint root finding."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache

import sympy

from geodsl.errors import AmbiguousError, InconsistentError, NonRealError
from geodsl.ops import REFERENCE_PI

__all__ = (
    "Env",
    "ValueFn",
    "choose_root",
    "compile_value",
    "solve_1d",
    "trig_angles",
)

Env = Mapping[str, float]
ValueFn = Callable[[Env], float]

_REL_EPS = 1e-9
_PROBE = (0.5, 1.5, 2.5, 3.5, 4.5, 5.5)


def _compile(expr: sympy.Basic) -> ValueFn:
    if isinstance(expr, sympy.Number):
        value = float(expr)
        return lambda env: value
    if expr is sympy.pi:
        return lambda env: REFERENCE_PI
    if isinstance(expr, sympy.Symbol):
        name = expr.name
        return lambda env: env[name]
    parts = [_compile(a) for a in expr.args]
    if isinstance(expr, sympy.Add):
        return lambda env: math.fsum(p(env) for p in parts)
    if isinstance(expr, sympy.Mul):

        def product(env: Env) -> float:
            out = 1.0
            for p in parts:
                out *= p(env)
            return out

        return product
    if isinstance(expr, sympy.Pow):
        base, exponent = parts

        def power(env: Env) -> float:
            b, e = base(env), exponent(env)
            if b < 0 and not float(e).is_integer():
                raise ValueError("fractional power of a negative number")
            return b**e

        return power
    raise TypeError(f"cannot compile {type(expr).__name__} in a value")  # the value reader never builds these


@lru_cache(maxsize=4096)
def compile_value(expr: sympy.Expr) -> tuple[ValueFn, frozenset[str]]:
    """Compile a value expression once into a float function of its unknowns (pi = 3.141593)."""
    names = frozenset(s.name for s in expr.free_symbols if isinstance(s, sympy.Symbol))
    return _compile(expr), names


def choose_root(roots: Sequence[float], what: str) -> float:
    """The root rule: all roots positive -> the smallest, otherwise the largest.

    Raises:
        NonRealError: when there is no real root.
    """
    if not roots:
        raise NonRealError(f"{what} has no real solution")
    if all(r > 0 for r in roots):
        return min(roots)
    return max(roots)


def trig_angles(fn: str, value: float, what: str) -> list[float]:
    """All angles in [0, 360) degrees with ``fn(angle) = value``."""
    if fn == "tan":
        base = math.degrees(math.atan(value)) % 180.0
        return [base, base + 180.0]
    if abs(value) > 1.0:
        if abs(value) > 1.0 + 1e-6:  # pi = 3.141593 makes sin(30) a hair above 1/2
            raise NonRealError(f"{what}: {fn} of an angle cannot be {value:.6g}")
        value = math.copysign(1.0, value)
    if fn == "sin":
        a = math.degrees(math.asin(value))
        cands = {a % 360.0, (180.0 - a) % 360.0}
    else:
        a = math.degrees(math.acos(value))
        cands = {a % 360.0, (360.0 - a) % 360.0}
    return sorted(cands)


def _safe(f: Callable[[float], float], u: float) -> float:
    try:
        y = f(u)
    except (ValueError, ZeroDivisionError, OverflowError):
        return math.nan
    return y if math.isfinite(y) else math.nan


def _poly_roots(f: Callable[[float], float], what: str) -> list[float] | None:
    """Roots of ``f`` when it is a polynomial of degree <= 2 (checked on probe points), else ``None``."""
    ys = [_safe(f, t) for t in _PROBE]
    if any(math.isnan(y) for y in ys):
        return None
    scale = max(1.0, max(abs(y) for y in ys))
    d1 = [ys[k + 1] - ys[k] for k in range(5)]
    d2 = [d1[k + 1] - d1[k] for k in range(4)]
    d3 = [d2[k + 1] - d2[k] for k in range(3)]
    if any(abs(d) > 1e-7 * scale for d in d3):
        return None
    t0, t1 = _PROBE[0], _PROBE[1]
    a = d2[0] / 2.0
    b = d1[0] - a * (t0 + t1)
    c = ys[0] - d1[0] * t0 + a * t0 * t1
    if abs(a) <= _REL_EPS * scale:
        if abs(b) <= _REL_EPS * scale:
            if abs(c) <= 1e-7 * scale:
                raise AmbiguousError(f"{what} holds for every value of the unknown")
            raise InconsistentError(f"{what} has no solution (it reduces to {c:.6g} = 0)")
        return [-c / b]
    disc = b * b - 4.0 * a * c
    if disc < 0:
        if disc < -1e-9 * max(b * b, abs(4.0 * a * c)):
            raise NonRealError(f"{what} has only complex solutions")
        disc = 0.0
    sq = math.sqrt(disc)
    # numerically stable quadratic formula
    q = -0.5 * (b + math.copysign(sq, b))
    roots = {q / a, c / q} if q != 0 else {-b / (2 * a)}
    return sorted(roots)


def _grid() -> list[float]:
    pos = [10.0 ** (k / 40.0) for k in range(-240, 321)]
    return [-x for x in reversed(pos)] + [0.0] + pos


_GRID = _grid()


def _bisect(f: Callable[[float], float], lo: float, hi: float, flo: float) -> float:
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        fm = _safe(f, mid)
        if math.isnan(fm):
            break
        if (fm < 0) == (flo < 0):
            lo, flo = mid, fm
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _scan_roots(f: Callable[[float], float]) -> list[float]:
    roots: list[float] = []
    prev_u, prev_y = _GRID[0], _safe(f, _GRID[0])
    for u in _GRID[1:]:
        y = _safe(f, u)
        if y == 0.0:
            roots.append(u)
        elif not math.isnan(y) and not math.isnan(prev_y) and prev_y != 0.0 and (y < 0) != (prev_y < 0):
            r = _bisect(f, prev_u, u, prev_y)
            fr = _safe(f, r)
            if not math.isnan(fr) and abs(fr) <= 1e-6 * max(1.0, min(abs(y), abs(prev_y))):
                roots.append(r)
        prev_u, prev_y = u, y
    return roots


def solve_1d(f: Callable[[float], float], what: str, *, scan: bool = True) -> list[float]:
    """All real roots found for a function of one unknown.

    Polynomials of degree <= 2 are solved in closed form (detected by finite differences
    on probe points); anything else is scanned on a log-spaced grid over +-[1e-6, 1e8]
    and refined by bisection (unless ``scan`` is false: then non-polynomials give no roots).

    Raises:
        InconsistentError: the equation reduces to a non-zero constant.
        AmbiguousError: the equation holds for every value.
        NonRealError: a quadratic with complex roots.
    """
    roots = _poly_roots(f, what)
    if roots is not None:
        return roots
    return _scan_roots(f) if scan else []
