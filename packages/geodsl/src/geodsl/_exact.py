"""The exact executor: sympy expressions, exact pi, ``sympy.solve`` with the same root rule."""

from __future__ import annotations

import cmath
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import mpmath
import sympy

from geodsl._bind import bind_operand, check_bindings
from geodsl._numeric import choose_root, solve_1d
from geodsl._power import PowerLib, power_roots
from geodsl._result import Execution, Solved, StepTrace
from geodsl.ast import Operand, Program, Step
from geodsl.errors import (
    AmbiguousError,
    ExecutionError,
    GeoDSLError,
    InconsistentError,
    NoAnswerError,
    NonRealError,
    UnsolvableError,
)
from geodsl.ops import OPERATORS

__all__ = ("SYMPY_MATH", "execute_exact")

_TRIG = (sympy.sin, sympy.cos, sympy.tan)


class _SympyMath:
    """:class:`geodsl.ops.MathLib` over sympy expressions with exact pi."""

    pi = sympy.pi

    def sin_deg(self, x: Any) -> Any:
        return sympy.sin(x * sympy.pi / 180)

    def cos_deg(self, x: Any) -> Any:
        return sympy.cos(x * sympy.pi / 180)

    def tan_deg(self, x: Any) -> Any:
        return sympy.tan(x * sympy.pi / 180)

    def power(self, x: Any, e: Any) -> Any:
        return sympy.Pow(x, e)


SYMPY_MATH = _SympyMath()
"""The sympy implementation used by the exact executor and the PAL translation."""


class _SympyPower:
    """:class:`geodsl._power.PowerLib` over sympy numbers: exact products of powers."""

    zero = sympy.Integer(0)

    def sign(self, x: Any) -> int | None:
        value = sympy.sympify(x)
        if value.is_zero:
            return 0
        if value.is_positive:
            return 1
        if value.is_negative:
            return -1
        return None

    def is_integer(self, e: Any) -> bool | None:
        value = sympy.sympify(e)
        if value.is_Float:
            return float(value).is_integer()
        return value.is_integer

    def is_even(self, e: Any) -> bool:
        value = sympy.sympify(e)
        return float(value) % 2.0 == 0.0 if value.is_Float else bool(value.is_even)

    def monomial(self, terms: Sequence[tuple[Any, Any]]) -> Any:
        return sympy.Mul(*(sympy.Pow(sympy.Abs(x), k) for x, k in terms))

    def log(self, x: Any) -> Any:
        return sympy.log(x)


_SYMPY_POWER: PowerLib = _SympyPower()


@dataclass(frozen=True)
class _Equation:
    index: int
    step: Step
    expr: sympy.Expr
    operands: tuple[sympy.Expr, ...]

    @property
    def what(self) -> str:
        return f"step {self.index} ({self.step.op} {' '.join(o.token for o in self.step.operands)})"


def _subs(expr: sympy.Expr, env: dict[sympy.Symbol, sympy.Expr]) -> sympy.Expr:
    return cast(sympy.Expr, expr.xreplace(env))


def _numerator(expr: sympy.Expr) -> sympy.Expr:
    together = cast(sympy.Expr, sympy.together(expr))
    return together.as_numer_denom()[0]


def _polynomial(expr: sympy.Expr, syms: Sequence[sympy.Symbol], max_degree: int = 4) -> bool:
    """Polynomial of low degree in ``syms`` once denominators are cleared (sympy.solve is quick on these)."""
    numerator = _numerator(expr)
    if not numerator.is_polynomial(*syms):
        return False
    return all(sympy.Poly(numerator, s).degree() <= max_degree for s in syms)


def _magnitude(value: sympy.Expr) -> float:
    return 1.0 if value.free_symbols else abs(complex(sympy.N(value)))


def _text(value: sympy.Expr) -> str:
    """The exact form as text; 30 digits when it is a rational of thousands of digits ((41/40)^360)."""
    try:
        return str(value)
    except ValueError:  # Python's limit on converting huge integers to text
        return str(sympy.N(value, 30))


def _real_value(r: sympy.Expr) -> float | None:
    try:
        value = complex(sympy.N(r, 30))
    except (TypeError, ValueError):  # symbolic or undefined (zoo, nan)
        return None
    if not cmath.isfinite(value) or abs(value.imag) > 1e-9 * max(1.0, abs(value.real)):
        return None
    return value.real


def _angle_period(expr: sympy.Expr, u: sympy.Symbol) -> int | None:
    """360 (or 180 when only tan is involved) if ``expr`` repeats with that period in ``u``, else ``None``.

    ``u`` must sit only inside trig functions, with arguments that turn a whole number of
    times per period: ``sin(x/2)`` or ``x - sin(x)`` do not repeat every 360 degrees.
    """
    funcs = {type(a) for a in expr.atoms(*_TRIG) if u in a.free_symbols}
    if not funcs:
        return None
    period = 180 if funcs == {sympy.tan} else 360
    shifted = sympy.expand(expr.xreplace({u: u + period}))
    return period if sympy.expand(shifted - sympy.expand(expr)) == 0 else None


def _hopeless_for_solve(expr: sympy.Expr, u: sympy.Symbol) -> bool:
    """Whether ``u`` sits in a trig function non-linearly, or both inside and outside one.

    sympy.solve spends seconds on these before giving up (tan(pi/n), b - sin(b)).
    """
    trig = [a for a in expr.atoms(*_TRIG) if u in a.free_symbols]
    if not trig:
        return False
    if any(sympy.diff(a.args[0], u).has(u) for a in trig):
        return True
    return expr.xreplace({a: sympy.Dummy() for a in trig}).has(u)


def _pick(roots: list[sympy.Expr], what: str, period: int | None) -> sympy.Expr:
    real: list[tuple[float, sympy.Expr]] = []
    for r in roots:
        value = _real_value(r)
        if value is None:
            continue
        if period is not None:
            turns = math.floor(value / period)
            r, value = sympy.nsimplify(r - turns * period) if turns else r, value - turns * period
        real.append((value, r))
    if not real and roots:
        raise NonRealError(f"{what} has only complex solutions")
    chosen = choose_root([v for v, _ in real], what)
    return next(r for v, r in real if v == chosen)


def _inverse_angles(fn: str, t: sympy.Expr) -> list[sympy.Expr]:
    """The two angles in degrees per turn with ``fn(angle) = t``."""
    deg = 180 / sympy.pi
    if fn == "sin":
        return [sympy.asin(t) * deg, 180 - sympy.asin(t) * deg]
    if fn == "cos":
        return [sympy.acos(t) * deg, 360 - sympy.acos(t) * deg]
    return [sympy.atan(t) * deg, 180 + sympy.atan(t) * deg]


def _operand_roots(
    operand: sympy.Expr, u: sympy.Symbol, targets: Sequence[sympy.Expr]
) -> list[sympy.Expr] | None:
    """The values of ``u`` that give ``operand`` one of the ``targets`` (``None``: not in closed form)."""
    if operand == u:
        return list(targets)
    roots: list[sympy.Expr] = []
    for target in targets:
        equation = operand - target
        if not _sympy_can_solve(equation, u):
            return None
        roots.extend(sympy.solve(equation, u, check=False, simplify=False))
    return roots


def _one_turn(angle: sympy.Expr) -> sympy.Expr:
    """The same angle in [0, 360) degrees."""
    value = _real_value(angle)
    turns = math.floor(value / 360) if value is not None else 0
    return angle - 360 * turns if turns else angle


def _trig_closed_form(
    eq: _Equation, u: sympy.Symbol, env: dict[sympy.Symbol, sympy.Expr]
) -> tuple[list[sympy.Expr], int | None] | None:
    """Roots from the registry's inversion when ``u`` sits in exactly one angle operand.

    The angle operand takes its solutions in [0, 360); when the operand is an expression in
    ``u`` (``2x+10``), ``u`` follows from each of those angles. Returns the roots and the
    period to reduce them by (only for a bare angle).
    """
    spec = OPERATORS[eq.step.op]
    slots = [k for k, v in enumerate(eq.operands) if u in v.free_symbols]
    if len(slots) != 1 or slots[0] not in spec.trig_inverse:
        return None
    slot = slots[0]
    values = [sympy.nan if k == slot else _subs(v, env) for k, v in enumerate(eq.operands)]
    fn, target = spec.trig_inverse[slot](values, SYMPY_MATH)
    target = sympy.nsimplify(target) if isinstance(target, sympy.Float) else target
    value = _real_value(target)
    if value is None or (fn != "tan" and abs(value) > 1 + 1e-12):
        raise NonRealError(f"{eq.what}: {fn} of an angle cannot be {target}")
    operand = _subs(eq.operands[slot], env)
    angles = _inverse_angles(fn, target)
    if operand == u:
        return angles, 360
    roots = _operand_roots(operand, u, [_one_turn(a) for a in angles])
    return None if roots is None else (roots, None)


def _power_closed_form(
    eq: _Equation, u: sympy.Symbol, env: dict[sympy.Symbol, sympy.Expr]
) -> list[sympy.Expr] | None:
    """Roots from the power inversion when ``u`` sits in exactly one operand of a power step."""
    form = OPERATORS[eq.step.op].power_forms.get(len(eq.operands))
    slots = [k for k, v in enumerate(eq.operands) if u in v.free_symbols]
    if form is None or len(slots) != 1:
        return None
    values = [sympy.nan if k == slots[0] else _subs(v, env) for k, v in enumerate(eq.operands)]
    targets = power_roots(form, slots[0], values, _SYMPY_POWER)
    if targets is None:
        return None
    return _operand_roots(_subs(eq.operands[slots[0]], env), u, targets)


def _solve_one(
    eq: _Equation, expr: sympy.Expr, u: sympy.Symbol, env: dict[sympy.Symbol, sympy.Expr]
) -> sympy.Expr:
    """Solve one step's equation for its only open unknown ``u`` with the root rule."""
    spec = OPERATORS[eq.step.op]
    slots = [k for k, v in enumerate(eq.operands) if u in v.free_symbols]

    def admissible(v: float) -> bool:
        # a slot's minimum applies to the operand's value (the side count x^2, not x)
        if len(slots) != 1 or slots[0] not in spec.minimums:
            return True
        value = _real_value(_subs(_subs(eq.operands[slots[0]], env), {u: sympy.Float(v, 30)}))
        return value is not None and spec.admissible(slots[0], value)

    def real(roots: list[sympy.Expr]) -> list[sympy.Expr]:
        return [r for r in roots if (v := _real_value(r)) is None or admissible(v)]

    closed = _trig_closed_form(eq, u, env)
    if closed is not None:
        roots, period = closed
        return _pick(real(roots), eq.what, period)
    powers = _power_closed_form(eq, u, env)
    if powers is not None:
        return _pick(real(powers), eq.what, None)
    return _solve_expr(expr, u, eq.what, admissible)


def _sympy_can_solve(expr: sympy.Expr, u: sympy.Symbol) -> bool:
    """Polynomial in ``u`` after clearing denominators, or ``u`` only linearly inside trig functions."""
    if _polynomial(expr, [u]):
        return True
    trig = [a for a in expr.atoms(*_TRIG) if u in a.free_symbols]
    masked = cast(sympy.Expr, expr.xreplace({a: sympy.Dummy() for a in trig}))
    return bool(trig) and not _hopeless_for_solve(expr, u) and _polynomial(masked, [u])


def _solve_expr(
    expr: sympy.Expr, u: sympy.Symbol, what: str, admissible: Callable[[float], bool]
) -> sympy.Expr:
    """Solve ``expr = 0`` for ``u``: sympy for polynomial and plain trig equations, else root finding."""
    expanded = sympy.expand(expr)
    if u not in expanded.free_symbols:
        if expanded == 0:
            raise AmbiguousError(f"{what} holds for every value of {u}")
        raise InconsistentError(f"{what} has no solution")
    period = _angle_period(expr, u)
    roots: list[sympy.Expr] = []
    numerator, denominator = cast(sympy.Expr, sympy.together(expr)).as_numer_denom()
    polynomial = numerator.is_polynomial(u)
    degree = sympy.Poly(numerator, u).degree() if polynomial else 0
    if polynomial and (degree > 4 or (degree > 2 and numerator.atoms(*_TRIG))):
        # no closed form worth writing: the quartic formula over cos(113.4 deg) takes minutes to
        # evaluate, and a degree above 4 has none; 30-digit roots of the numerator instead
        trig = {a: sympy.Float(sympy.N(a, 30), 30) for a in numerator.atoms(*_TRIG)}
        found = _poly_roots(cast(sympy.Expr, numerator.xreplace(trig)), u) or []
        roots = [r for r in found if _real_value(cast(sympy.Expr, denominator.xreplace({u: r}))) != 0]
    elif _sympy_can_solve(expr, u):
        try:
            roots = sympy.solve(expr, u, check=False, simplify=False)
        except NotImplementedError:
            roots = []
    roots = [r for r in roots if (v := _real_value(r)) is None or admissible(v)]
    if roots:
        return _pick(roots, what, period)
    terms = sympy.Add.make_args(expr)
    fn = sympy.lambdify(u, list(terms), "mpmath")

    def f(x: float) -> float:
        # mpmath has no exponent limit (72.7^180 overflows a float); dividing by the size of the
        # terms keeps every root and sign change and makes the value fit a float
        values = fn(mpmath.mpf(x))
        if any(isinstance(v, mpmath.mpc) and v.imag != 0 for v in values):
            return math.nan
        real = [mpmath.re(v) for v in values]
        if not all(mpmath.isfinite(v) for v in real):
            return math.nan
        scale = mpmath.fsum(abs(v) for v in real) if len(real) > 1 else 1
        return float(mpmath.fsum(real) / scale) if scale else 0.0

    found = [x for x in solve_1d(f, what) if admissible(x)]
    if period is not None:
        found = [x % period for x in found]
    return sympy.Float(choose_root(found, what), 15)


_NROOTS_DEGREE = 24
"""Highest degree solved with ``nroots``; beyond it the coefficients run to thousands of digits."""


def _poly_roots(poly: sympy.Expr, u: sympy.Symbol, *, exact: bool = True) -> list[sympy.Expr] | None:
    """Real roots of a polynomial in ``u``, to 30 digits (``None``: none found).

    Up to degree 2 they are exact unless ``exact`` is false (coefficients that were rounded).
    ``nroots`` works on the coefficients as they are, so ``(x/27)^360 = 11`` needs no float
    that could overflow.
    """
    p = sympy.Poly(poly, u)
    if p.degree() > _NROOTS_DEGREE:
        return None
    if p.degree() == 1 or (exact and p.degree() == 2):
        return list(sympy.solve(p.as_expr(), u, check=False, simplify=False))
    try:
        found = p.nroots(n=30, maxsteps=200)
    except (sympy.polys.polyerrors.PolynomialError, ValueError, ArithmeticError):
        return None
    except Exception as exc:  # mpmath's NoConvergence
        if type(exc).__name__ != "NoConvergence":
            raise
        return None
    return [
        sympy.Float(sympy.re(r), 30)
        for r in found
        if abs(complex(r).imag) <= 1e-20 * max(1.0, abs(complex(r)))
    ]


def _vanishes(exprs: Sequence[sympy.Expr], values: dict[sympy.Symbol, sympy.Expr]) -> bool:
    """Whether every expression is zero (relative to the size of its terms) at ``values``."""
    for expr in exprs:
        value = _real_value(cast(sympy.Expr, expr.xreplace(values)))
        if value is None:
            return False
        terms = sympy.Add.make_args(sympy.expand(expr))
        sizes = (_real_value(cast(sympy.Expr, t.xreplace(values))) for t in terms)
        scale = max([1.0, *(abs(v) for v in sizes if v is not None)])
        if abs(value) > 1e-12 * scale:
            return False
    return True


def _solve_pair(
    exprs: Sequence[sympy.Expr], syms: Sequence[sympy.Symbol]
) -> list[dict[sympy.Symbol, sympy.Expr]]:
    """Every real solution of two polynomial equations in two unknowns, by a resultant.

    ``sympy.solve`` builds a Groebner basis, which takes minutes on 15-digit coefficients or
    a cos(25.7 deg) coefficient; the resultant in one unknown takes milliseconds.
    """
    a, b = syms
    # Irrational coefficients (cos(160.5 deg) is a nest of square roots, pi, sqrt(2)) enter with
    # a 30-digit rational value: the resultant stays exact arithmetic over the rationals (with
    # floats the polynomial division loses track of zero; with the radicals it takes seconds),
    # and the roots are then found to 30 digits.
    polys = [sympy.Poly(_numerator(e), a, b) for e in exprs]
    exact = all(c.is_Rational for poly in polys for c in poly.coeffs())
    p, q = (
        cast(
            sympy.Expr,
            sum(
                (c if c.is_Rational else sympy.nsimplify(sympy.N(c, 30), rational=True)) * a**i * b**j
                for (i, j), c in poly.terms()
            ),
        )
        for poly in polys
    )
    try:
        resultant = sympy.expand(cast(sympy.Expr, sympy.resultant(p, q, b)))
    except sympy.polys.polyerrors.PolynomialError:
        return []
    if resultant == 0 or not resultant.has(a):
        return []  # a common factor (a curve of solutions) or no solution: leave the steps pending
    solutions: list[dict[sympy.Symbol, sympy.Expr]] = []
    for ra in _poly_roots(resultant, a, exact=exact) or []:
        if _real_value(ra) is None:
            continue
        # a radical root substituted back would make nested radicals: 30 digits instead
        at = ra if ra.is_Rational else sympy.Float(sympy.N(ra, 30), 30)
        pa, qa = (cast(sympy.Expr, sympy.expand(x.xreplace({a: at}))) for x in (p, q))
        source = pa if pa.has(b) else qa
        if not source.has(b):
            continue
        for rb in _poly_roots(source, b, exact=exact and at.is_Rational) or []:
            candidate = {a: ra, b: rb}
            if _real_value(rb) is not None and _vanishes(exprs, candidate):
                solutions.append(candidate)
    return solutions


def _linear_pick(
    exprs: list[sympy.Expr], remaining: list[sympy.Symbol]
) -> tuple[int, sympy.Symbol, sympy.Expr] | None:
    # V's sit last in ``remaining``: eliminate them first so the root rule lands on a letter.
    for sym in reversed(remaining):
        for i, e in enumerate(exprs):
            numerator = _numerator(e)
            if not numerator.has(sym) or not numerator.is_polynomial(sym):
                continue
            poly = sympy.Poly(numerator, sym)
            if poly.degree() == 1:
                c1, c0 = poly.all_coeffs()
                return i, sym, -c0 / c1
    return None


def _joint_by_substitution(
    exprs: list[sympy.Expr], syms: list[sympy.Symbol], what: str
) -> dict[sympy.Symbol, sympy.Expr] | None:
    """Eliminate unknowns that an equation gives linearly, solve the last one with the root rule."""
    remaining = list(syms)
    back: list[tuple[sympy.Symbol, sympy.Expr]] = []
    while len(remaining) > 1:
        found = _linear_pick(exprs, remaining)
        if found is None:
            return None
        i, sym, value = found
        back.append((sym, value))
        remaining.remove(sym)
        exprs = [cast(sympy.Expr, e.xreplace({sym: value})) for k, e in enumerate(exprs) if k != i]
    values = {remaining[0]: _solve_expr(exprs[0], remaining[0], what, lambda v: True)}
    for sym, value in reversed(back):
        values[sym] = sympy.nsimplify(v) if (v := cast(sympy.Expr, value.xreplace(values))).is_Float else v
    if any(_real_value(v) is None for v in values.values()):
        return None
    return values


class _Machine:
    def __init__(self, numbers: Sequence[str]) -> None:
        self.numbers = numbers
        self.env: dict[sympy.Symbol, sympy.Expr] = {}
        self.pending: list[_Equation] = []

    def open_symbols(self, eq: _Equation) -> list[sympy.Symbol]:
        syms = [s for s in eq.expr.free_symbols if isinstance(s, sympy.Symbol) and s not in self.env]
        return sorted(syms, key=lambda s: (s.name[0] == "V", s.name))

    def add(self, index: int, step: Step) -> list[Solved]:
        residual = OPERATORS[step.op].residual
        if residual is None:
            raise ExecutionError(f"step {index} ({step.op}) states no equation")
        values = [bind_operand(o, self.numbers) for o in step.operands]
        expr = sympy.sympify(residual(values, SYMPY_MATH))
        self.pending.append(_Equation(index, step, expr, tuple(values)))
        solved: list[Solved] = []
        while True:
            found = self._solve_single()
            if found is None:
                found = self._solve_joint()
            if found is None:
                return solved
            solved.extend(found)

    def _record(self, values: dict[sympy.Symbol, sympy.Expr], steps: tuple[int, ...]) -> list[Solved]:
        self.env.update(values)
        solved: list[Solved] = []
        for s, v in sorted(values.items(), key=lambda kv: kv[0].name):
            # a cubic's real root is written with complex parts that cancel: float(N(v)) would refuse it
            value = _real_value(v)
            if value is None:
                raise NonRealError(f"steps {list(steps)}: {s.name} = {v} is not real")
            solved.append(Solved(name=s.name, value=value, exact=_text(v), steps=steps))
        return solved

    def _solve_single(self) -> list[Solved] | None:
        for eq in self.pending:
            syms = self.open_symbols(eq)
            if len(syms) > 1:
                continue
            self.pending.remove(eq)
            expr = _subs(eq.expr, self.env)
            if not syms:
                value = _real_value(expr)
                scale = max([1.0, *(_magnitude(_subs(v, self.env)) for v in eq.operands)])
                if value is None or abs(value) > 1e-6 * scale**3:
                    raise InconsistentError(f"{eq.what} contradicts the values already known")
                return []
            try:
                root = _solve_one(eq, expr, syms[0], self.env)
            except AmbiguousError:
                return []
            return self._record({syms[0]: root}, (eq.index,))
        return None

    def _solve_joint(self) -> list[Solved] | None:
        for size in range(2, min(3, len(self.pending)) + 1):
            for group in itertools.combinations(self.pending, size):
                syms = sorted(
                    {s for e in group for s in self.open_symbols(e)}, key=lambda s: (s.name[0] == "V", s.name)
                )
                if len(syms) != size:
                    continue
                exprs = [_subs(e.expr, self.env) for e in group]
                what = ", ".join(e.what for e in group)
                direct = _joint_by_substitution(exprs, syms, what)
                if direct is not None:
                    for e in group:
                        self.pending.remove(e)
                    return self._record(direct, tuple(e.index for e in group))
                if not all(_polynomial(x, syms) for x in exprs):
                    continue  # sympy can take minutes on mixed trig systems; leave them pending
                # sin/cos/tan of a known angle as a coefficient makes sympy.solve take minutes on a
                # system (cos(25.7 deg) is algebraic of high degree): pairs go by a resultant, larger
                # systems are solved with its 30-digit value
                solutions: list[dict[sympy.Symbol, sympy.Expr]]
                if size == 2:
                    solutions = _solve_pair(exprs, syms)
                else:
                    trig = {a: sympy.Float(sympy.N(a, 30), 30) for x in exprs for a in x.atoms(*_TRIG)}
                    try:
                        solutions = sympy.solve(
                            [x.xreplace(trig) for x in exprs], syms, dict=True, check=False, simplify=False
                        )
                    except NotImplementedError:
                        continue
                complete = [
                    s
                    for s in solutions
                    if all(k in s and not s[k].free_symbols for k in syms)
                    and all(_real_value(s[k]) is not None for k in syms)
                ]
                if not complete:
                    continue
                # the root rule on the first unknown; where solutions share it, on the next one
                for sym in syms:
                    best = _pick([s[sym] for s in complete], what, None)
                    complete = [s for s in complete if s[sym] == best]
                chosen = complete[0]
                for e in group:
                    self.pending.remove(e)
                return self._record({k: chosen[k] for k in syms}, tuple(e.index for e in group))
        return None

    def get(self, index: int, operand: Operand) -> sympy.Expr:
        value = _subs(bind_operand(operand, self.numbers), self.env)
        missing = sorted(s.name for s in value.free_symbols if isinstance(s, sympy.Symbol))
        if not missing:
            return value
        where = f"step {index} (Get {operand.token})"
        pending_names = {
            s.name for e in self.pending for s in e.expr.free_symbols if isinstance(s, sympy.Symbol)
        }
        stuck = [m for m in missing if m in pending_names]
        if stuck:
            raise AmbiguousError(
                f"{where}: {', '.join(stuck)} not determined: the pending steps have more "
                "unknowns than equations"
            )
        raise UnsolvableError(f"{where}: {', '.join(missing)} is never determined by the program")

    def open_unknowns(self) -> tuple[str, ...]:
        return tuple(sorted({s.name for e in self.pending for s in self.open_symbols(e)}))


def execute_exact(program: Program, numbers: Sequence[str]) -> Execution:
    """Run a program with sympy (exact numbers, exact pi, degrees); see :func:`geodsl.execute`."""
    check_bindings(program, numbers)
    machine = _Machine(numbers)
    traces: list[StepTrace] = []
    answer: sympy.Expr | None = None
    for index, step in enumerate(program.steps):
        if step.op == "Get":
            answer = machine.get(index, step.operands[0])
            value = _real_value(answer)
            if value is None:
                raise NonRealError(f"step {index} (Get {step.operands[0].token}): {answer} is not real")
            traces.append(
                StepTrace(index=index, op=step.op, value=value, open_unknowns=machine.open_unknowns())
            )
            continue
        try:
            solved = machine.add(index, step)
        except GeoDSLError:
            raise
        except (ArithmeticError, ValueError, TypeError, NotImplementedError) as exc:
            # sympy signals many dead ends this way (complex comparisons, overflow, undefined values)
            raise ExecutionError(f"step {index} ({step.op}): sympy could not solve it: {exc}") from exc
        traces.append(
            StepTrace(index=index, op=step.op, solved=tuple(solved), open_unknowns=machine.open_unknowns())
        )
    if answer is None:
        raise NoAnswerError("the program has no Get step, so it produces no answer")
    value = _real_value(answer)
    if value is None:
        raise NonRealError(f"the answer {answer} is not real")
    return Execution(answer=value, exact=_text(answer), mode="exact", steps=tuple(traces))
