"""The exact executor: sympy expressions, exact pi, ``sympy.solve`` with the same root rule."""

from __future__ import annotations

import cmath
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import sympy

from geodsl._bind import bind_operand, check_bindings
from geodsl._numeric import choose_root, solve_1d
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


def _real_value(r: sympy.Expr) -> float | None:
    try:
        value = complex(sympy.N(r, 30))
    except (TypeError, ValueError):  # symbolic or undefined (zoo, nan)
        return None
    if not cmath.isfinite(value) or abs(value.imag) > 1e-9 * max(1.0, abs(value.real)):
        return None
    return value.real


def _angle_period(expr: sympy.Expr, u: sympy.Symbol) -> int | None:
    """360 (or 180 when only tan is involved) if ``u`` sits inside a trig function, else ``None``."""
    funcs = {type(a) for a in expr.atoms(*_TRIG) if u in a.free_symbols}
    if not funcs:
        return None
    return 180 if funcs == {sympy.tan} else 360


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


def _trig_closed_form(
    eq: _Equation, u: sympy.Symbol, env: dict[sympy.Symbol, sympy.Expr]
) -> list[sympy.Expr] | None:
    """Angles from the registry's inversion when ``u`` is exactly one angle operand and nowhere else."""
    spec = OPERATORS[eq.step.op]
    slots = [k for k, v in enumerate(eq.operands) if u in v.free_symbols]
    if len(slots) != 1 or slots[0] not in spec.trig_inverse or eq.operands[slots[0]] != u:
        return None
    values = [sympy.nan if k == slots[0] else _subs(v, env) for k, v in enumerate(eq.operands)]
    fn, target = spec.trig_inverse[slots[0]](values, SYMPY_MATH)
    target = sympy.nsimplify(target) if isinstance(target, sympy.Float) else target
    value = _real_value(target)
    if value is None or (fn != "tan" and abs(value) > 1 + 1e-12):
        raise NonRealError(f"{eq.what}: {fn} of an angle cannot be {target}")
    return _inverse_angles(fn, target)


def _solve_one(
    eq: _Equation, expr: sympy.Expr, u: sympy.Symbol, env: dict[sympy.Symbol, sympy.Expr]
) -> sympy.Expr:
    """Solve one step's equation for its only open unknown ``u`` with the root rule."""
    closed = _trig_closed_form(eq, u, env)
    if closed is not None:
        return _pick(closed, eq.what, 360)
    slot = next((k for k, o in enumerate(eq.step.operands) if o.token == u.name), None)
    spec = OPERATORS[eq.step.op]
    return _solve_expr(expr, u, eq.what, lambda v: slot is None or spec.admissible(slot, v))


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
    if _sympy_can_solve(expr, u):
        try:
            roots = sympy.solve(expr, u, check=False, simplify=False)
        except NotImplementedError:
            roots = []
    roots = [r for r in roots if (v := _real_value(r)) is None or admissible(v)]
    if roots:
        return _pick(roots, what, period)
    fn = sympy.lambdify(u, expr, "math")

    def f(x: float) -> float:
        y = complex(fn(x))
        return y.real if y.imag == 0 else math.nan

    found = [x for x in solve_1d(f, what) if admissible(x)]
    if period is not None:
        found = [x % period for x in found]
    return sympy.Float(choose_root(found, what), 15)


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
        return [
            Solved(name=s.name, value=float(sympy.N(v)), exact=str(v), steps=steps)
            for s, v in sorted(values.items(), key=lambda kv: kv[0].name)
        ]

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
                try:
                    solutions: list[dict[sympy.Symbol, sympy.Expr]] = sympy.solve(
                        exprs, syms, dict=True, check=False, simplify=False
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
                first = _pick([s[syms[0]] for s in complete], what, None)
                chosen = next(s for s in complete if s[syms[0]] == first)
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
            traces.append(
                StepTrace(
                    index=index,
                    op=step.op,
                    value=float(sympy.N(answer)),
                    open_unknowns=machine.open_unknowns(),
                )
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
    return Execution(answer=value, exact=str(answer), mode="exact", steps=tuple(traces))
