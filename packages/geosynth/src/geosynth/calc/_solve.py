"""Solving calculation problems: run the rules, alternate linear elimination and one-unknown solving, trace.

:func:`solve_calc` solves one problem in-process; :func:`solve_calc_all` runs many, each in a worker
process killed at a hard timeout, yielding :class:`geosynth.engine.SolveResult` in input order.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from multiprocessing.connection import Connection

import sympy

from geosynth.calc._algebra import linear_form, to_sympy
from geosynth.calc._dynamic import DYNAMIC_RULES, relation_goal
from geosynth.calc._engine import Engine, EqRecord
from geosynth.calc._figure import Figure
from geosynth.calc._model import CalcProblem, CalcSolution, CalcStep, Equation, Op
from geosynth.calc._rules import STATIC_RULES, Derived
from geosynth.calc._shape_rules import SHAPE_RULES
from geosynth.engine import Angle, Area, Length, Parallel, Perpendicular, SolveResult, run_isolated
from geosynth.errors import GeoSynthError

_ROUNDS = 60
"""At most this many alternations of nonlinear solving and dynamic rules."""


def _given(engine: Engine, problem: CalcProblem) -> None:
    fig = engine.fig
    for cond in problem.conditions:
        if isinstance(cond, Equation):
            node = cond.expr
            if isinstance(node, Op) and node.op == "-" and len(node.args) == 2:
                lhs, rhs = to_sympy(node.args[0], fig), to_sympy(node.args[1], fig)
            else:
                lhs, rhs = to_sympy(node, fig), sympy.Integer(0)
            engine.add(Derived(*_in_degrees(fig, lhs, rhs), "given"))


def _in_degrees(fig: Figure, lhs: sympy.Expr, rhs: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr]:
    """A linear given about angles rewritten in degrees (``∠ABC = 50`` rather than ``π∠ABC/180 = 5π/18``)."""
    symbols = (lhs - rhs).free_symbols
    if not any(fig.kinds.get(s) == "angle" for s in symbols if isinstance(s, sympy.Symbol)):
        return lhs, rhs
    if linear_form(lhs - rhs) is None or (lhs - rhs).has(sympy.sin, sympy.cos, sympy.tan):
        return lhs, rhs
    scale = 180 / sympy.pi
    return sympy.expand(lhs * scale), sympy.expand(rhs * scale)


def _goal_expr(problem: CalcProblem, fig: Figure) -> sympy.Expr:
    goal = problem.goal
    if isinstance(goal, Angle):
        return fig.angle(*goal.points)  # degrees
    return to_sympy(goal, fig)


def _run(engine: Engine, goal: sympy.Expr, deadline: float | None) -> tuple[float, frozenset[int]] | None:
    dynamic_at = -1
    for _ in range(_ROUNDS):
        found = engine.value(goal)
        if found is not None:
            return found
        if deadline is not None and time.perf_counter() > deadline:
            return None
        if engine.step():
            continue
        if dynamic_at != len(engine.eqs):
            dynamic_at = len(engine.eqs)
            if any(engine.add_all(rule(engine)) for _, rule in DYNAMIC_RULES):
                continue
        if engine.pair_step():
            continue
        if not engine.guess():
            break
    return engine.value(goal)


def solve_calc(problem: CalcProblem, time_limit: float | None = None) -> CalcSolution:
    """Solve one calculation problem.

    Args:
        problem: The problem.
        time_limit: Seconds after which the solver stops and reports what it has (``None``: no limit).

    Returns:
        The answer (degrees for an angle goal; 1.0 for a confirmed relation goal; ``None`` when not found)
        and the traced steps that give it.
    """
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    fig = Figure(problem)
    engine = Engine(fig, deadline)
    _given(engine, problem)
    for _, rule in (*STATIC_RULES, *SHAPE_RULES):
        engine.add_all(rule(fig))
    if isinstance(problem.goal, Parallel | Perpendicular):
        confirmed = relation_goal(engine, problem.goal)
        if confirmed is None:
            return CalcSolution(answer=None)
        steps = _trace(engine, confirmed, "the relation holds", 1.0, ())
        return CalcSolution(answer=1.0, steps=steps)
    goal = _goal_expr(problem, fig)
    found = _run(engine, goal, deadline)
    if found is None:
        return CalcSolution(answer=None)
    value, sources = found
    if isinstance(problem.goal, Length | Area) and value <= 1e-9:
        return CalcSolution(answer=None)  # contradictory givens collapsed a length
    if isinstance(problem.goal, Angle) and not -1e-9 <= value <= 180 + 1e-9:
        return CalcSolution(answer=None)  # contradictory givens (or figure) put an angle beyond 180°
    statement = f"{format_expr(goal)} = {_number(value)}"
    names = tuple(sorted(str(s) for s in goal.free_symbols))
    return CalcSolution(answer=value, steps=_trace(engine, sources, statement, value, names))


def _trace(
    engine: Engine, sources: frozenset[int], statement: str, value: float, names: tuple[str, ...]
) -> tuple[CalcStep, ...]:
    numbers: dict[int, int] = {}
    steps: list[CalcStep] = []
    stack: list[tuple[int, bool]] = [(s, False) for s in sorted(sources, reverse=True)]
    while stack:
        eq_id, expanded = stack.pop()
        if eq_id in numbers:
            continue
        record = engine.eqs[eq_id]
        if not expanded:
            stack.append((eq_id, True))
            stack.extend((p, False) for p in reversed(record.premises) if p not in numbers)
            continue
        numbers[eq_id] = len(steps) + 1
        steps.append(
            _step(record, numbers[eq_id], tuple(numbers[p] for p in record.premises if p in numbers))
        )
    goal = CalcStep(
        number=len(steps) + 1,
        rule="goal",
        statement=statement,
        quantities=names,
        value=value,
        premises=tuple(sorted(numbers[s] for s in sources)),
    )
    return (*steps, goal)


def _step(record: EqRecord, number: int, premises: tuple[int, ...]) -> CalcStep:
    if record.lhs is None or record.rhs is None:
        return CalcStep(
            number=number, rule=record.rule, statement=record.text, quantities=(), premises=premises
        )
    names = sorted(str(s) for s in (record.lhs - record.rhs).free_symbols)
    angles = all(n.startswith("∠") for n in names) and names
    statement = f"{format_expr(record.lhs)} = {format_expr(record.rhs)}{'°' if angles and record.rhs.is_number else ''}"
    return CalcStep(
        number=number,
        rule=record.rule,
        statement=statement,
        quantities=tuple(names),
        value=record.value,
        premises=premises,
    )


_DEG_ARG = re.compile(r"pi\*(∠\w+)/180")


def format_expr(expr: sympy.Expr) -> str:
    """A readable form: ``^`` for powers, ``·`` for products, degrees inside trig functions."""
    text = sympy.sstr(expr)
    text = _DEG_ARG.sub(r"\1", text).replace("**", "^").replace("*", "·")
    return text


def _number(value: float) -> str:
    return f"{value:.6g}"


def _worker(problem: CalcProblem, time_limit: float, conn: Connection) -> None:
    start = time.perf_counter()
    try:
        solution = solve_calc(problem, time_limit)
        result = SolveResult(
            name=problem.id,
            solved=solution.answer is not None,
            answer=solution.answer,
            seconds=time.perf_counter() - start,
            steps=len(solution.steps),
        )
    except (GeoSynthError, ArithmeticError, ValueError, TypeError, RecursionError) as err:
        message = f"{type(err).__name__}: {err}".splitlines()[0][:300]
        result = SolveResult(
            name=problem.id, solved=False, seconds=time.perf_counter() - start, steps=0, error=message
        )
    conn.send(result.model_dump_json())
    conn.close()


def solve_calc_all(
    problems: Sequence[CalcProblem], timeout: float = 60.0, jobs: int = 1
) -> Iterator[SolveResult]:
    """Solve each problem in a worker process killed at ``timeout`` seconds; results in input order.

    Args:
        problems: The problems.
        timeout: Hard per-problem limit in seconds (the solver itself stops at 90 % of it).
        jobs: Worker processes at once.

    Yields:
        One :class:`SolveResult` per problem (``name`` is the problem id), in input order.
    """
    return run_isolated(problems, [p.id for p in problems], _worker, timeout, jobs)
