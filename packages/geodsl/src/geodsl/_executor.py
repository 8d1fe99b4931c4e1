"""The fast numeric executor: pure-Python floats, closed forms first, root finding as a fallback."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import sympy

from geodsl._bind import bind_operand, check_bindings
from geodsl._numeric import Env, ValueFn, choose_root, compile_value, solve_1d, trig_angles
from geodsl._power import FLOAT_POWER, power_holds, power_roots
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
from geodsl.ops import FLOAT_MATH, OPERATORS, OpSpec

__all__ = ("execute_numeric",)

_JOINT_MAX = 3


@dataclass(frozen=True)
class _Equation:
    """One step's equation, compiled: operand value functions and the residual."""

    index: int
    step: Step
    spec: OpSpec
    operands: tuple[tuple[ValueFn, frozenset[str]], ...]
    names: frozenset[str]
    what: str
    """How error messages name this step."""

    def values(self, env: Env) -> list[float]:
        return [fn(env) for fn, _ in self.operands]

    def residual(self, env: Env) -> float:
        residual = self.spec.residual
        if residual is None:
            raise ExecutionError(f"{self.what}: {self.step.op} states no equation")
        return float(residual(self.values(env), FLOAT_MATH))


_PLAIN_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
_NO_NAMES: frozenset[str] = frozenset()


def _constant(value: float) -> ValueFn:
    return lambda env: value


def _compile_operand(operand: Operand, numbers: Sequence[str]) -> tuple[ValueFn, frozenset[str]]:
    # Plain numbers and constants skip sympy entirely; anything else is read and compiled once.
    if operand.kind == "C":
        return _constant(float(operand.constant_text)), _NO_NAMES
    if (
        operand.kind == "N"
        and operand.index < len(numbers)
        and _PLAIN_NUMBER.fullmatch(numbers[operand.index])
    ):
        return _constant(float(numbers[operand.index])), _NO_NAMES
    if operand.is_unknown:
        name = operand.token
        return (lambda env: env[name]), frozenset((name,))
    value = bind_operand(operand, numbers)
    if value.has(sympy.zoo, sympy.nan, sympy.oo, sympy.I):
        kind = "not a real number" if value.has(sympy.I) else "undefined"
        raise NonRealError(f"operand {operand.token}: the value {numbers[operand.index]!r} is {kind}")
    return compile_value(value)


def _roots(eq: _Equation, name: str, env: Env, *, scan: bool = True) -> list[float]:
    """Every admissible root of an equation whose only open unknown is ``name``."""
    local = dict(env)

    def f(x: float) -> float:
        local[name] = x
        return eq.residual(local)

    slots = [k for k, (_, names) in enumerate(eq.operands) if name in names]
    roots: list[float] | None = None
    if len(slots) == 1 and slots[0] in eq.spec.trig_inverse:
        roots = _trig_roots(eq, slots[0], name, local)
    elif len(slots) == 1 and len(eq.operands) in eq.spec.power_forms:
        roots = _power_roots(eq, slots[0], name, local, scan=scan)
    if roots is None:
        roots = solve_1d(f, eq.what, scan=scan)
    if len(slots) == 1 and slots[0] in eq.spec.minimums:
        # a slot's minimum applies to the operand's value (the side count x^2, not x)
        operand_fn, _ = eq.operands[slots[0]]
        roots = [r for r in roots if eq.spec.admissible(slots[0], operand_fn({**env, name: r}))]
    return roots


def _one_unknown(eq: _Equation, name: str, env: Env, *, scan: bool = True) -> float:
    """Solve an equation whose only open unknown is ``name``, with the root rule."""
    return choose_root(_roots(eq, name, env, scan=scan), eq.what)


def _trig_roots(eq: _Equation, slot: int, name: str, local: dict[str, float]) -> list[float] | None:
    local[name] = math.nan
    values = [math.nan if k == slot else fn(local) for k, (fn, _) in enumerate(eq.operands)]
    try:
        fn_name, target = eq.spec.trig_inverse[slot](values, FLOAT_MATH)
    except ZeroDivisionError:
        return None
    angles = trig_angles(fn_name, float(target), eq.what)
    return _operand_roots(eq, slot, name, local, angles, scan=True)


def _operand_roots(
    eq: _Equation, slot: int, name: str, local: dict[str, float], targets: Sequence[float], *, scan: bool
) -> list[float]:
    """The values of ``name`` that give operand ``slot`` one of the ``targets``."""
    operand_fn, _ = eq.operands[slot]
    if eq.step.operands[slot].token == name:
        return list(targets)
    roots: list[float] = []
    for target in targets:

        def g(x: float, target: float = target) -> float:
            local[name] = x
            return operand_fn(local) - target

        try:
            roots.extend(solve_1d(g, eq.what, scan=scan))
        except (InconsistentError, NonRealError):
            continue  # x^2 = -3: this target gives no real value; the others may
    return roots


def _power_roots(
    eq: _Equation, slot: int, name: str, local: dict[str, float], *, scan: bool
) -> list[float] | None:
    local[name] = math.nan
    values = [math.nan if k == slot else fn(local) for k, (fn, _) in enumerate(eq.operands)]
    targets = power_roots(eq.spec.power_forms[len(values)], slot, values, FLOAT_POWER)
    if targets is None:
        return None
    return _operand_roots(eq, slot, name, local, targets, scan=scan)


def _joint(eqs: Sequence[_Equation], unknowns: Sequence[str], env: Env) -> dict[str, float]:
    """Solve ``len(eqs)`` equations in as many unknowns by elimination.

    The outer unknown is found by 1-D root finding on one equation, after solving the
    others for the remaining unknowns at each trial value. Two unknowns follow every
    solution of the inner equation, so the root rule sees all of the system's solutions
    for the outer one; each way of nesting is tried in closed form, then with a scan.
    Three unknowns nest with the root rule at each level, in closed form only (a scan
    over nested scans would cost seconds).
    """
    if len(unknowns) != 2:
        return _eliminate(eqs, unknowns, env, scan=False)
    last_error: GeoDSLError | None = None
    plans = _plans(eqs, unknowns, env)
    # plans of one rank put the root rule on the same unknown and see the same solutions:
    # all of them in closed form first, then with a scan
    for _, group in itertools.groupby(plans, key=lambda ranked: ranked[0]):
        ranked = [plan for _, plan in group]
        for scan in (False, True):
            for plan in ranked:
                try:
                    return _pair(*plan, env, scan=scan)
                except AmbiguousError:
                    raise
                except GeoDSLError as exc:
                    last_error = exc
    raise AmbiguousError(
        f"cannot solve steps {[e.index for e in eqs]} jointly for {', '.join(unknowns)}"
    ) from last_error


_BRANCHES = 2
"""Solutions of an inner equation followed in a joint solve (closed forms give at most two)."""


def _pair(
    outer: str,
    outer_eq: _Equation,
    inner_eqs: list[_Equation],
    inner_unknowns: list[str],
    env: Env,
    *,
    scan: bool,
) -> dict[str, float]:
    """Two equations in two unknowns: every (outer, inner) solution, then the root rule on the outer one."""
    (inner_eq,), (inner,) = inner_eqs, inner_unknowns
    local = dict(env)

    def inner_roots(x: float) -> list[float]:
        local[outer] = x
        return sorted(set(_roots(inner_eq, inner, local, scan=False)))

    found: list[tuple[float, float]] = []
    for branch in range(_BRANCHES):

        def h(x: float, branch: int = branch) -> float:
            try:
                roots = inner_roots(x)
            except GeoDSLError:
                return math.nan
            if branch >= len(roots):
                return math.nan
            return outer_eq.residual({**local, inner: roots[branch]})

        try:
            xs = solve_1d(h, outer_eq.what, scan=scan)
        except (InconsistentError, NonRealError):
            continue  # no solution on this branch
        for x in xs:
            roots = inner_roots(x)
            if branch < len(roots):
                found.append((x, roots[branch]))
    x = choose_root([x for x, _ in found], outer_eq.what)
    y = choose_root([y for fx, y in found if fx == x], inner_eq.what)
    return {outer: x, inner: y}


def _linear_in(eq: _Equation, name: str, unknowns: Sequence[str], env: Env) -> bool:
    """Whether ``eq`` is linear in ``name`` (tried with the other unknowns at fixed trial values)."""
    local = dict(env)
    local.update({u: 1.3 + 0.17 * k for k, u in enumerate(unknowns)})
    ys: list[float] = []
    for x in (0.7, 1.9, 3.1):
        local[name] = x
        try:
            ys.append(eq.residual(local))
        except (ArithmeticError, ValueError):
            return False
    if not all(math.isfinite(y) for y in ys) or ys[0] == ys[1]:
        return False
    return abs(ys[0] - 2 * ys[1] + ys[2]) <= 1e-9 * max(abs(y) for y in ys)


_Plan = tuple[str, _Equation, list[_Equation], list[str]]
"""A way to nest an elimination: outer unknown, outer equation, inner equations, inner unknowns."""


def _plans(eqs: Sequence[_Equation], unknowns: Sequence[str], env: Env) -> list[tuple[int, _Plan]]:
    """The ways to nest the elimination, ranked (lower first).

    The equation with the most unknowns stays outside, so the inner ones stay simple. With two
    unknowns, an inner equation that gives its unknown linearly goes first, the second unknown
    before the first, as the exact executor and the reference eliminate: ``x * y = 10`` gives
    ``y = 10 / x`` and the root rule then looks at every solution for ``x``.
    """
    plans: list[_Plan] = []
    for outer in unknowns:
        inner_unknowns = [u for u in unknowns if u != outer]
        for outer_eq in sorted(
            (e for e in eqs if outer in e.names), key=lambda e: -len(e.names - env.keys())
        ):
            inner_eqs = [e for e in eqs if e is not outer_eq]
            if all(e.names & set(inner_unknowns) for e in inner_eqs):
                plans.append((outer, outer_eq, inner_eqs, inner_unknowns))
    if len(unknowns) != 2:
        return [(0, plan) for plan in plans]

    def rank(plan: _Plan) -> int:
        outer, _, inner_eqs, inner_unknowns = plan
        first = outer == unknowns[0]
        if not _linear_in(inner_eqs[0], inner_unknowns[0], unknowns, env):
            return 2 if first else 3
        return 0 if first else 1

    return sorted(((rank(plan), plan) for plan in plans), key=lambda ranked: ranked[0])


def _eliminate(
    eqs: Sequence[_Equation], unknowns: Sequence[str], env: Env, *, scan: bool
) -> dict[str, float]:
    if len(unknowns) == 1:
        return {unknowns[0]: _one_unknown(eqs[0], unknowns[0], env, scan=scan)}
    last_error: GeoDSLError | None = None
    for _, (outer, outer_eq, inner_eqs, inner_unknowns) in _plans(eqs, unknowns, env):
        local = dict(env)

        def h(
            x: float,
            outer: str = outer,
            outer_eq: _Equation = outer_eq,
            inner_eqs: list[_Equation] = inner_eqs,
            inner_unknowns: list[str] = inner_unknowns,
            local: dict[str, float] = local,
        ) -> float:
            local[outer] = x
            try:
                inner = _eliminate(inner_eqs, inner_unknowns, local, scan=False)
            except GeoDSLError:
                return math.nan
            return outer_eq.residual({**local, **inner})

        try:
            x = choose_root(solve_1d(h, outer_eq.what, scan=scan), outer_eq.what)
            local[outer] = x
            return {outer: x, **_eliminate(inner_eqs, inner_unknowns, local, scan=False)}
        except GeoDSLError as exc:
            last_error = exc
    raise AmbiguousError(
        f"cannot solve steps {[e.index for e in eqs]} jointly for {', '.join(unknowns)}"
    ) from last_error


def _elimination_order(name: str) -> tuple[bool, str]:
    # Letters are solved for first and V's are eliminated in terms of them, as the reference does;
    # this decides which unknown the root rule applies to in a joint solve.
    return (name[0] == "V", name)


class _Machine:
    """Execution state: known values and equations still waiting for enough information."""

    def __init__(self, program: Program, numbers: Sequence[str]) -> None:
        self.program = program
        self.numbers = numbers
        self.env: dict[str, float] = {}
        self.pending: list[_Equation] = []
        self.mentioned: set[str] = set()

    def open_names(self, eq: _Equation) -> list[str]:
        return sorted(eq.names - self.env.keys())

    def add(self, index: int, step: Step) -> list[Solved]:
        spec = OPERATORS[step.op]
        operands = tuple(_compile_operand(o, self.numbers) for o in step.operands)
        names = frozenset().union(*(n for _, n in operands))
        self.mentioned |= names
        what = f"step {index} ({step.op} {' '.join(o.token for o in step.operands)})"
        self.pending.append(_Equation(index, step, spec, operands, names, what))
        return self.propagate()

    def _check_known(self, eq: _Equation) -> None:
        values = eq.values(self.env)
        try:
            residual = eq.residual(self.env)
        except OverflowError:
            residual = math.inf
        if not math.isfinite(residual):
            form = eq.spec.power_forms.get(len(values))
            if form is None:
                raise ExecutionError(f"{eq.what} cannot be checked: its values overflow a float")
            holds = power_holds(form, values)  # a^e * d = b^e * c compared as logarithms
        else:
            scale = max([1.0, *(abs(v) for v in values)])
            holds = abs(residual) <= 1e-6 * scale * scale * scale
        if not holds:
            raise InconsistentError(f"{eq.what} contradicts the values already known")

    def _solve_single(self) -> list[Solved] | None:
        for eq in self.pending:
            open_names = self.open_names(eq)
            if len(open_names) > 1:
                continue
            self.pending.remove(eq)
            if not open_names:
                self._check_known(eq)
                return []
            try:
                value = _one_unknown(eq, open_names[0], self.env)
            except AmbiguousError:
                return []  # the equation holds for every value: it carries no information
            self.env[open_names[0]] = value
            return [Solved(name=open_names[0], value=value, steps=(eq.index,))]
        return None

    def _solve_joint(self) -> list[Solved] | None:
        for size in range(2, min(_JOINT_MAX, len(self.pending)) + 1):
            for group in itertools.combinations(self.pending, size):
                names = sorted(set().union(*(self.open_names(e) for e in group)), key=_elimination_order)
                if len(names) != size:
                    continue
                try:
                    values = _joint(group, names, self.env)
                except AmbiguousError:
                    continue
                for e in group:
                    self.pending.remove(e)
                self.env.update(values)
                indices = tuple(e.index for e in group)
                return [Solved(name=n, value=v, steps=indices) for n, v in sorted(values.items())]
        return None

    def propagate(self) -> list[Solved]:
        solved: list[Solved] = []
        while True:
            found = self._solve_single()
            if found is None:
                found = self._solve_joint()
            if found is None:
                return solved
            solved.extend(found)

    def get(self, index: int, operand: Operand) -> float:
        fn, names = _compile_operand(operand, self.numbers)
        missing = sorted(names - self.env.keys())
        where = f"step {index} (Get {operand.token})"
        if not missing:
            try:
                value = float(fn(self.env))
            except (OverflowError, ValueError, ZeroDivisionError) as exc:
                raise ExecutionError(f"{where}: arithmetic failure: {exc}") from exc
            if not math.isfinite(value):
                raise ExecutionError(f"{where}: the value is undefined")
            return value
        stuck = [m for m in missing if any(m in e.names for e in self.pending)]
        if stuck:
            raise AmbiguousError(
                f"{where}: {', '.join(stuck)} not determined: the pending steps have more "
                "unknowns than equations"
            )
        raise UnsolvableError(f"{where}: {', '.join(missing)} is never determined by the program")

    def open_unknowns(self) -> tuple[str, ...]:
        return tuple(sorted(set().union(*(self.open_names(e) for e in self.pending))))


def execute_numeric(program: Program, numbers: Sequence[str]) -> Execution:
    """Run a program with floats (pi = 3.141593, angles in degrees); see :func:`geodsl.execute`."""
    check_bindings(program, numbers)
    machine = _Machine(program, numbers)
    traces: list[StepTrace] = []
    answer: float | None = None
    for index, step in enumerate(program.steps):
        if step.op == "Get":
            answer = machine.get(index, step.operands[0])
            traces.append(
                StepTrace(index=index, op=step.op, value=answer, open_unknowns=machine.open_unknowns())
            )
            continue
        try:
            solved = machine.add(index, step)
        except GeoDSLError:
            raise
        except (OverflowError, ValueError, ZeroDivisionError) as exc:
            raise ExecutionError(f"step {index} ({step.op}): arithmetic failure: {exc}") from exc
        traces.append(
            StepTrace(index=index, op=step.op, solved=tuple(solved), open_unknowns=machine.open_unknowns())
        )
    if answer is None:
        raise NoAnswerError("the program has no Get step, so it produces no answer")
    return Execution(answer=answer, mode="numeric", steps=tuple(traces))
