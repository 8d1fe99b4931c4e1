"""Synthesized calculation problems as :class:`geosynth.calc.CalcProblem` (Geometry3K style), and a cross-check.

The construction facts become conditions (relations the calculation model has, equal lengths and equal
angles as equations, ``s_angle`` parameters as angle equations read with the diagram's orientation), the
given length and variable equation become equations, the diagram's relations are read off the figure,
and the goal is the quantity. :func:`calc_crosscheck` solves that problem with the calculation solver
(``geosynth.calc.solve_calc``), an engine independent of the one that chose the answer.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from geosynth.engine import (
    Angle,
    Area,
    CircleThrough,
    Collinear,
    CongruentTriangles,
    Diagram,
    DirectedAngleConstant,
    EqualLength,
    EqualLineAngles,
    Length,
    Midpoint,
    Parallel,
    Perpendicular,
    Problem,
    Relation,
    SimilarTriangles,
    compile_problem,
    diagrammatic_relations,
    undirected_equation,
)

DIRECT = (Collinear, Perpendicular, Parallel, Midpoint, SimilarTriangles, CongruentTriangles)
"""Construction facts the calculation model takes as they are."""


def _calc() -> Any:
    import geosynth.calc as calc

    return calc


def _minus(left: Any, right: Any) -> Any:
    calc = _calc()
    return calc.Equation(expr=calc.Op(op="-", args=(left, right)))


def _radians(degrees: Fraction | str) -> Any:
    return _calc().Num(text=f"{degrees}/180*pi")


def _angle_equation(fact: EqualLineAngles, diagram: Diagram) -> list[Any]:
    calc = _calc()
    equation = undirected_equation(fact, diagram)
    if equation is None:
        return []
    total: Any = None
    for term in equation.terms:
        part = calc.Op(op="*", args=(calc.Num(text=str(term.coefficient)), term.quantity))
        total = part if total is None else calc.Op(op="+", args=(total, part))
    return [_minus(total, _radians(equation.constant))]


def _fixed_angle(fact: DirectedAngleConstant, diagram: Diagram) -> list[Any]:
    a, b, x = fact.points
    coords = diagram.coords()
    u, v = coords[a] - coords[b], coords[x] - coords[b]
    measured = math.degrees(math.atan2(abs(float(u[0] * v[1] - u[1] * v[0])), float(u @ v)))
    directed = fact.degrees % 180
    value = (
        directed
        if abs(float(directed) - measured) < abs(float(180 - directed) - measured)
        else 180 - directed
    )
    return [_minus(Angle.of(a, b, x), _radians(value))]


def _conditions(fact: Relation, diagram: Diagram) -> list[Any]:
    if isinstance(fact, DIRECT):
        return [fact]
    if isinstance(fact, EqualLength):
        a, b, c, d = fact.points
        return [_minus(Length.of(a, b), Length.of(c, d))]
    if isinstance(fact, CircleThrough):
        o, first, *rest = fact.points
        return [_minus(Length.of(o, first), Length.of(o, p)) for p in rest]
    if isinstance(fact, EqualLineAngles):
        return _angle_equation(fact, diagram)
    if isinstance(fact, DirectedAngleConstant):
        return _fixed_angle(fact, diagram)
    return []  # concyclicity and ratios: the calculation model has no such condition


def to_calc_problem(
    record_id: str, problem: Problem, diagram: Diagram, givens: tuple[str, ...], goal: str
) -> Any:
    """The :class:`geosynth.calc.CalcProblem` of a synthesized calculation problem.

    Args:
        record_id: The record's id (the calc problem's id).
        problem: The constructions.
        diagram: Their coordinates (angle orientation, diagrammatic relations).
        givens: ``length p q = L`` and, for a variable goal, ``angle a b c = x + k``.
        goal: ``angle a b c``, ``length a b``, ``area a b c`` or ``var x``.
    """
    calc = _calc()
    conditions: list[Any] = []
    for step in compile_problem(problem):
        for fact in step.facts:
            conditions.extend(c for c in _conditions(fact, diagram) if c not in conditions)
    _, p, q, _, length = givens[0].split()
    conditions.append(_minus(Length.of(p, q), calc.Num(text=length)))
    kind, *names = goal.split()
    if kind == "var":
        tokens = givens[1].split()
        shifted = calc.Op(op=tokens[6], args=(calc.Var(name="x"), calc.Num(text=tokens[7])))
        scaled = calc.Op(
            op="*", args=(shifted, calc.Op(op="/", args=(calc.Const(name="pi"), calc.Num(text="180"))))
        )
        conditions.append(_minus(Angle.of(*tokens[1:4]), scaled))
    target = {
        "angle": lambda: Angle.of(*names),
        "length": lambda: Length.of(*names),
        "area": lambda: Area.of(*names),
    }
    goal_expr = calc.Var(name="x") if kind == "var" else target[kind]()
    return calc.CalcProblem(
        id=record_id,
        conditions=tuple(conditions),
        diagram=tuple(diagrammatic_relations(diagram)),
        goal=goal_expr,
    )


def calc_crosscheck(
    record_id: str, problem: Problem, diagram: Diagram, givens: tuple[str, ...], goal: str, time_limit: float
) -> tuple[float | None, Any, Any]:
    """Solve the problem with the calculation solver: its answer (``None`` if it finds none).

    Returns:
        The answer, the calc problem and the solution.
    """
    calc_problem = to_calc_problem(record_id, problem, diagram, givens, goal)
    solution = _calc().solve_calc(calc_problem, time_limit=time_limit)
    return solution.answer, calc_problem, solution
