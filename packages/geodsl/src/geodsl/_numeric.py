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

_REL_EPS = 1e-13
"""A fitted coefficient below this share of the probes' largest value is rounding noise (about
20 float epsilons): V0 = 3e9 has slope 1 next to a constant of 3e9 (1e-9 called that no slope)."""
_PROBE = (0.5, 1.5, 2.5, 3.5, 4.5, 5.5)
_FAR = (-4.7, 23.3, 611.0, 1.9e4)
"""Points away from the probes where a fitted quadratic must still match the function.

A term such as ``60 x^4`` beside a constant of ``9e10`` hides in the probes' rounding but not
at ``x = 611``."""


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


def _poly_roots(f: Callable[[float], float], what: str, *, rescaled: bool = False) -> list[float] | None:
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
    if not _matches_far(f, a, b, c, scale):
        return None
    # The fit's constant term is off by rounding noise, and the root rule tells a root at zero
    # (x * (x - 8): not positive) from one at 1e-14 (positive): take f(0) itself, or where f is
    # undefined at 0 and the fitted constant is noise, a root at 0 that is then dropped.
    at_zero = _safe(f, 0.0)
    if not math.isnan(at_zero):
        if abs(at_zero - c) <= 1e-9 * scale:
            c = at_zero
    elif abs(c) <= 1e-12 * scale:
        c = 0.0
    if abs(a) <= _REL_EPS * scale:
        if abs(b) <= _REL_EPS * scale:
            if abs(c) <= 1e-7 * scale:
                raise AmbiguousError(f"{what} holds for every value of the unknown")
            if not rescaled and abs(c) > 1.0 and abs(_safe(f, abs(c)) - c) > 1e-9 * abs(c):
                # constant on the probes only because the unknown is tiny next to the constant
                # (V0 = 1.5e24): probe again on the constant's scale
                size = abs(c)
                found = _poly_roots(lambda s: f(size * s), what, rescaled=True)
                if found is not None:
                    return _defined(f, [size * r for r in found])
            raise InconsistentError(f"{what} has no solution (it reduces to {c:.6g} = 0)")
        return _defined(f, [-c / b])
    if abs(b) <= 0.1 * _REL_EPS * scale:
        b = 0.0  # rounding noise, which would shift roots much smaller than the probes (x^2 = c)
    disc = b * b - 4.0 * a * c
    if disc < 0:
        if disc < -1e-9 * max(b * b, abs(4.0 * a * c)):
            raise NonRealError(f"{what} has only complex solutions")
        disc = 0.0
    sq = math.sqrt(disc)
    # numerically stable quadratic formula
    q = -0.5 * (b + math.copysign(sq, b))
    roots = {q / a, c / q} if q != 0 else {-b / (2 * a)}
    return _defined(f, sorted(roots))


def _defined(f: Callable[[float], float], roots: list[float]) -> list[float]:
    """The roots where ``f`` is defined.

    A polynomial fitted to a residual that is undefined at 0 (``0.5 - V1 / V0^2`` with
    ``V1 = 2 V0``) has a root there that the residual does not.
    """
    return [r for r in roots if not math.isnan(_safe(f, r))]


def _matches_far(f: Callable[[float], float], a: float, b: float, c: float, scale: float) -> bool:
    """Whether ``a x^2 + b x + c`` (fitted on the probes) still gives ``f`` at the far points."""
    for t in _FAR:
        y = _safe(f, t)
        if math.isnan(y):
            return False  # a polynomial is defined everywhere
        if abs(y - ((a * t + b) * t + c)) > 1e-9 * (scale * (1.0 + t * t) + abs(y)):
            return False
    return True


def _grid() -> list[float]:
    pos = [10.0 ** (k / 40.0) for k in range(-240, 321)]
    return [-x for x in reversed(pos)] + [0.0] + pos


_GRID = _grid()


def _bisect(f: Callable[[float], float], lo: float, hi: float, flo: float) -> tuple[float, float]:
    """Narrow a sign change of ``f`` on ``[lo, hi]`` (``flo`` has the sign at ``lo``) to adjacent floats."""
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
    return lo, hi


def _root_in(
    f: Callable[[float], float], lo: float, hi: float, flo: float, ends: Sequence[float]
) -> float | None:
    """The root inside a sign change, or ``None`` when it is a pole or a jump.

    At a root the residual is tiny on both sides of the narrowed bracket (next to the values
    at the grid points ``ends``); at a pole it is huge, and at a jump (a coefficient that
    becomes zero below some size) one side stays large.
    """
    a, b = _bisect(f, lo, hi, flo)
    fa, fb = _safe(f, a), _safe(f, b)
    if math.isnan(fa) or math.isnan(fb):
        return None
    tolerance = 1e-6 * max(1.0, *(abs(y) for y in ends))
    return 0.5 * (a + b) if max(abs(fa), abs(fb)) <= tolerance else None


_MAX_DIPS = 8
_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


def _dip(f: Callable[[float], float], lo: float, hi: float, sign: float) -> tuple[float, float]:
    """Golden-section search for the lowest point of ``sign * f`` on ``[lo, hi]``."""
    a, b = lo, hi
    c, d = b - _GOLDEN * (b - a), a + _GOLDEN * (b - a)
    fc, fd = sign * _safe(f, c), sign * _safe(f, d)
    for _ in range(80):
        if math.isnan(fc) or math.isnan(fd):
            return c, math.nan
        if fc < 0 or fd < 0:
            break
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - _GOLDEN * (b - a)
            fc = sign * _safe(f, c)
        else:
            a, c, fc = c, d, fd
            d = a + _GOLDEN * (b - a)
            fd = sign * _safe(f, d)
    return (c, fc) if fc < fd else (d, fd)


_MAX_EDGES = 8


def _edge_roots(f: Callable[[float], float], ys: list[float]) -> list[float]:
    """Roots between a grid point and the edge of the function's domain (sqrt(363^2 - x^2) at 360).

    Where the function stops being defined between two grid points, the edge is found by
    bisection and the sign just inside it compared with the grid point's.
    """
    roots: list[float] = []
    edges = [k for k in range(1, len(_GRID)) if math.isnan(ys[k - 1]) != math.isnan(ys[k])]
    for k in edges[:_MAX_EDGES]:
        inside, outside = (k - 1, k) if math.isnan(ys[k]) else (k, k - 1)
        u, y = _GRID[inside], ys[inside]
        if y == 0.0:
            continue
        lo, hi = u, _GRID[outside]
        for _ in range(100):
            mid = 0.5 * (lo + hi)
            if mid in (lo, hi):
                break
            if math.isnan(_safe(f, mid)):
                hi = mid
            else:
                lo = mid
        edge = _safe(f, lo)
        if edge == 0.0:
            roots.append(lo)
        elif not math.isnan(edge) and (edge < 0) != (y < 0):
            r = _root_in(f, u, lo, y, (y, edge))
            if r is not None:
                roots.append(r)
    return roots


def _scan_roots(f: Callable[[float], float], what: str) -> list[float]:
    roots: list[float] = []
    ys = [_safe(f, u) for u in _GRID]
    finite = [y for y in ys if not math.isnan(y)]
    if finite and 2 * sum(y == 0.0 for y in finite) > len(finite):
        # zero wherever it is defined: (37.34 / 37.34)^e = 1 holds for every e (and overflows far out)
        raise AmbiguousError(f"{what} holds for every value of the unknown")
    roots.extend(_edge_roots(f, ys))
    for k in range(1, len(_GRID)):
        prev_u, u, prev_y, y = _GRID[k - 1], _GRID[k], ys[k - 1], ys[k]
        if y == 0.0:
            roots.append(u)
        elif not math.isnan(y) and not math.isnan(prev_y) and prev_y != 0.0 and (y < 0) != (prev_y < 0):
            r = _root_in(f, prev_u, u, prev_y, (y, prev_y))
            if r is not None:
                roots.append(r)
    # Two roots closer than one grid step (1.06x) leave no sign change on the grid, only a dip
    # of |f|: search the deepest dips for a crossing.
    dips: list[tuple[float, int]] = []
    for k in range(1, len(_GRID) - 1):
        a, y, b = ys[k - 1], ys[k], ys[k + 1]
        if math.isnan(a) or math.isnan(b) or math.isnan(y) or y == 0.0:
            continue
        if (a < 0) == (y < 0) == (b < 0) and abs(y) < abs(a) and abs(y) <= abs(b):
            dips.append((abs(y) / min(abs(a), abs(b)), k))
    for _, k in sorted(dips)[:_MAX_DIPS]:
        lo, hi, y = _GRID[k - 1], _GRID[k + 1], ys[k]
        ends = (ys[k - 1], ys[k + 1])
        m, fm = _dip(f, lo, hi, math.copysign(1.0, y))
        if math.isnan(fm) or fm >= 0:
            continue
        for r in (_root_in(f, lo, m, ys[k - 1], ends), _root_in(f, m, hi, -ys[k + 1], ends)):
            if r is not None:
                roots.append(r)
    return roots


def solve_1d(f: Callable[[float], float], what: str, *, scan: bool = True) -> list[float]:
    """All real roots found for a function of one unknown.

    Polynomials of degree <= 2 are solved in closed form (detected by finite differences
    on probe points and confirmed at points far from them); anything else is scanned on a log-spaced grid over +-[1e-6, 1e8]
    and refined by bisection (unless ``scan`` is false: then non-polynomials give no roots).

    Raises:
        InconsistentError: the equation reduces to a non-zero constant.
        AmbiguousError: the equation holds for every value.
        NonRealError: a quadratic with complex roots.
    """
    roots = _poly_roots(f, what)
    if roots is not None:
        return roots
    return _scan_roots(f, what) if scan else []
