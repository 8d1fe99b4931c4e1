"""The fast numeric executor: pure-Python floats, closed forms first, root finding as a fallback."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from geodsl._bind import bind_operand, check_bindings
from geodsl._numeric import Env, ValueFn, choose_root, compile_value, solve_1d, trig_angles
from geodsl._result import Execution, Solved, StepTrace
from geodsl.ast import Operand, Program, Step
from geodsl.errors import (
    AmbiguousError,
    ExecutionError,
    GeoDSLError,
    InconsistentError,
    NoAnswerError,
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
    return compile_value(bind_operand(operand, numbers))


def _one_unknown(eq: _Equation, name: str, env: Env, *, scan: bool = True) -> float:
    """Solve an equation whose only open unknown is ``name``."""
    local = dict(env)

    def f(x: float) -> float:
        local[name] = x
        return eq.residual(local)

    slots = [k for k, (_, names) in enumerate(eq.operands) if name in names]
    roots: list[float] | None = None
    if len(slots) == 1 and slots[0] in eq.spec.trig_inverse:
        roots = _trig_roots(eq, slots[0], name, local)
    if roots is None:
        roots = solve_1d(f, eq.what, scan=scan)
    if len(slots) == 1:
        roots = [r for r in roots if eq.spec.admissible(slots[0], r)]
    return choose_root(roots, eq.what)


def _trig_roots(eq: _Equation, slot: int, name: str, local: dict[str, float]) -> list[float] | None:
    local[name] = math.nan
    values = [math.nan if k == slot else fn(local) for k, (fn, _) in enumerate(eq.operands)]
    try:
        fn_name, target = eq.spec.trig_inverse[slot](values, FLOAT_MATH)
    except ZeroDivisionError:
        return None
    angles = trig_angles(fn_name, float(target), eq.what)
    operand_fn, _ = eq.operands[slot]
    if eq.step.operands[slot].token == name:
        return angles
    roots: list[float] = []
    for theta in angles:

        def g(x: float, theta: float = theta) -> float:
            local[name] = x
            return operand_fn(local) - theta

        roots.extend(solve_1d(g, eq.what))
    return roots


def _joint(eqs: Sequence[_Equation], unknowns: Sequence[str], env: Env) -> dict[str, float]:
    """Solve ``len(eqs)`` equations in as many unknowns by nested elimination.

    The outer unknown is found by 1-D root finding on one equation, after solving the
    others for the remaining unknowns at each trial value. A first pass accepts only
    closed-form (polynomial) solutions at every level, which is fast and covers nearly
    all programs; for two unknowns a second pass allows scanning for the outer one.
    """
    try:
        return _eliminate(eqs, unknowns, env, scan=False)
    except GeoDSLError:
        if (
            len(unknowns) > 2
        ):  # a scan over nested scans would cost seconds; three-way systems must be closed-form
            raise
        return _eliminate(eqs, unknowns, env, scan=True)


def _eliminate(
    eqs: Sequence[_Equation], unknowns: Sequence[str], env: Env, *, scan: bool
) -> dict[str, float]:
    if len(unknowns) == 1:
        return {unknowns[0]: _one_unknown(eqs[0], unknowns[0], env, scan=scan)}
    last_error: GeoDSLError | None = None
    for outer in unknowns:
        inner_unknowns = [u for u in unknowns if u != outer]
        # keep the equation with the most unknowns outside, so the inner ones stay simple
        for outer_eq in sorted(
            (e for e in eqs if outer in e.names), key=lambda e: -len(e.names - env.keys())
        ):
            inner_eqs = [e for e in eqs if e is not outer_eq]
            if not all(e.names & set(inner_unknowns) for e in inner_eqs):
                continue
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
        scale = max([1.0, *(abs(v) for v in values)])
        if abs(eq.residual(self.env)) > 1e-6 * scale**3:
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
        if not missing:
            return float(fn(self.env))
        where = f"step {index} (Get {operand.token})"
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
