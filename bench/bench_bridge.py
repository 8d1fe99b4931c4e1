"""How many traced calculation solutions become verified PGPS programs (the bridge of geosynth.synth).

Usage: ``uv run python bench/bench_bridge.py [--time-limit 20] [--jobs 1] [--limit N] [--ids 2401,2402]
[--joint-max K] [--examples 5] [--synth DATASET]``.

Loads the formal Geometry3K records (GEO_SHARED, default ../shared; exits 0 with a note when missing),
solves each with ``geosynth.calc.solve_calc`` (``--time-limit`` seconds, cooperative) in worker processes,
and passes every answered solution to ``bridge_program``. Prints: records loaded, answered, answered
within 2 % of the truth, bridged (a program the geodsl executor runs to the engine's answer), the bridge
rate over answered and over correct solutions, the reasons for the rest by kind, the operators used, and a
few example programs. ``--joint-max`` raises the geodsl executor's joint-solve size (3 by default) inside
the workers, to show how many more programs a larger joint solve would run (a what-if, not the default).

``--synth DATASET`` measures generated calculation records instead (``geo synth generate`` JSONL): each
record's constructions become calc conditions (their definitions' facts: collinear, perpendicular,
parallel, midpoint, equal lengths and angles, fixed angles and ratios), its givens equations, its figure
the diagrammatic relations; "correct" then means the calc solver reproduces the record's checked answer.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import multiprocessing
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import sympy

from geodsl import OPERATORS
from geosynth import diagrammatic_relations, parse_problem, undirected_equation
from geosynth.calc import (
    CalcFormatError,
    CalcProblem,
    Const,
    Equation,
    Expr,
    Num,
    Op,
    Var,
    load_calc_problems,
    solve_calc,
)
from geosynth.engine import (
    Angle,
    Area,
    Between,
    CircleThrough,
    Collinear,
    Diagram,
    DirectedAngleConstant,
    EqualAngles,
    EqualLength,
    EqualLineAngles,
    Length,
    Midpoint,
    NotCollinear,
    OppositeSide,
    Parallel,
    Perpendicular,
    RatioConstant,
    Relation,
    SameSide,
    compile_problem,
)
from geosynth.synth import bridge_program

ROOT = Path(__file__).resolve().parents[1]


def _truth(problem: CalcProblem) -> float | None:
    if problem.answer is None or problem.answer.strip() == "True":
        return None
    try:
        value = float(sympy.N(sympy.sympify(problem.answer)))
    except (sympy.SympifyError, TypeError, ValueError):
        return None
    return math.degrees(value) if isinstance(problem.goal, Angle) else value


def _load(folder: Path, ids: set[str] | None, limit: int | None) -> tuple[list[CalcProblem], int]:
    problems: list[CalcProblem] = []
    failed = 0
    for path in sorted(folder.glob("*.json")):
        if ids is not None and path.stem not in ids:
            continue
        try:
            problems.extend(load_calc_problems(path))
        except CalcFormatError:
            failed += 1
        if limit is not None and len(problems) >= limit:
            break
    return problems, failed


# --- generated calculation records (geosynth.synth) as CalcProblems -------------------------------------------------


def _minus(left: Expr, right: Expr) -> Equation:
    return Equation(expr=Op(op="-", args=(left, right)))


def _degrees(value: Expr) -> Expr:
    """An angle value given in degrees, as the radians calc expressions use."""
    return Op(op="*", args=(value, Op(op="/", args=(Const(name="pi"), Num(text="180")))))


def _fact_conditions(fact: Relation, diagram: Diagram) -> list[Any]:
    """Calc conditions for one construction fact (an empty list for facts calc has no form of)."""
    pts = fact.points
    if isinstance(fact, Collinear | Perpendicular | Parallel | Midpoint):
        return [fact]
    if isinstance(fact, EqualLength):
        return [_minus(Length.of(pts[0], pts[1]), Length.of(pts[2], pts[3]))]
    if isinstance(fact, CircleThrough):
        return [_minus(Length.of(pts[0], pts[1]), Length.of(pts[0], p)) for p in pts[2:]]
    if isinstance(fact, EqualAngles):
        return [_minus(Angle.of(*pts[:3]), Angle.of(*pts[3:]))]
    if isinstance(fact, RatioConstant):
        scaled = (Op(op="*", args=(Num(text=str(fact.value.denominator)), Length.of(pts[0], pts[1]))),)
        return [
            _minus(
                scaled[0], Op(op="*", args=(Num(text=str(fact.value.numerator)), Length.of(pts[2], pts[3])))
            )
        ]
    if isinstance(fact, DirectedAngleConstant):
        measured = math.degrees(
            math.acos(max(-1.0, min(1.0, float(_cosine(diagram, pts[0], pts[1], pts[2])))))
        )
        value = (
            float(fact.degrees) if abs(measured - float(fact.degrees)) < 1e-6 else 180 - float(fact.degrees)
        )
        return [_minus(Angle.of(*pts[:3]), _degrees(Num(text=f"{value:g}")))]
    if isinstance(fact, EqualLineAngles):
        equation = undirected_equation(fact, diagram)
        if equation is None:
            return []
        terms: list[Expr] = [
            Op(op="*", args=(Num(text=str(t.coefficient)), Angle.of(*t.quantity.points)))  # type: ignore[union-attr]
            for t in equation.terms
        ]
        total = terms[0] if len(terms) == 1 else Op(op="+", args=tuple(terms))
        return [_minus(total, _degrees(Num(text=str(equation.constant))))]
    return []


def _cosine(diagram: Diagram, a: str, b: str, c: str) -> float:
    coords = diagram.coords()
    u, v = coords[a] - coords[b], coords[c] - coords[b]
    return float(u @ v) / float((u @ u) ** 0.5 * (v @ v) ** 0.5)


def _given_condition(given: str) -> Equation:
    left, value = (part.strip() for part in given.split("="))
    kind, *names = left.split()
    points = [n.upper() for n in names]
    match = re.fullmatch(r"([a-z])\s*([+-])\s*(\d+(?:\.\d+)?)", value)
    if match:
        offset = Op(
            op="+" if match.group(2) == "+" else "-",
            args=(Var(name=match.group(1)), Num(text=match.group(3))),
        )
        amount: Expr = offset
    else:
        amount = Num(text=value)
    if kind == "angle":
        return _minus(Angle.of(*points), _degrees(amount))
    if kind == "length":
        return _minus(Length.of(*points), amount)
    raise ValueError(f"given {given!r} has no calc form")


def synth_calc_problem(record: dict[str, Any]) -> CalcProblem:
    """A generated calculation record (geosynth.synth JSONL) as a CalcProblem over capitalised point names."""
    problem = parse_problem(record["problem"])
    upper = {p: p.upper() for p in problem.points}
    problem = problem.renamed(upper)
    diagram = Diagram(points={upper[r["name"]]: (r["x"], r["y"]) for r in record["points"]}, attempts=1)
    conditions: list[Any] = []
    for step in compile_problem(problem):
        for fact in step.facts:
            conditions.extend(_fact_conditions(fact, diagram))
    conditions.extend(_given_condition(g) for g in record["givens"])
    kind, *names = record["goal"].split()
    goals: dict[str, Any] = {"length": Length, "angle": Angle, "area": Area}
    goal = Var(name=names[0]) if kind == "var" else goals[kind].of(*(n.upper() for n in names))
    relations = [
        r
        for r in diagrammatic_relations(diagram)
        if isinstance(r, SameSide | OppositeSide | NotCollinear | Between)
    ]
    value = float(record["answer_value"])
    truth = math.radians(value) if kind == "angle" else value  # calc ground truths keep angles in radians
    return CalcProblem(
        id=record["id"], conditions=tuple(conditions), diagram=tuple(relations), goal=goal, answer=repr(truth)
    )


def _load_synth(source: Path, limit: int | None) -> list[CalcProblem]:
    files = sorted(source.glob("**/*.jsonl")) if source.is_dir() else [source]
    records = [
        json.loads(line) for f in files for line in f.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    records = [r for r in records if r.get("task") == "calculation"][:limit]
    return [synth_calc_problem(r) for r in records]


def _work(args: tuple[CalcProblem, float, int | None]) -> tuple[str, bool, bool, str | None, str | None]:
    """(id, answered, correct, program, reason) for one problem."""
    problem, time_limit, joint_max = args
    if joint_max is not None:
        import geodsl._executor as executor

        executor._JOINT_MAX = joint_max
    try:
        solution = solve_calc(problem, time_limit=time_limit)
    except Exception as err:  # a benchmark records every failure and goes on
        return problem.id, False, False, None, f"solver error {type(err).__name__}"
    if solution.answer is None:
        return problem.id, False, False, None, None
    expected = _truth(problem)
    correct = expected is not None and abs(solution.answer - expected) <= max(0.02 * abs(expected), 1e-6)
    outcome = bridge_program(problem, solution)
    program = None if outcome.program is None else outcome.program.program
    return problem.id, True, correct, program, outcome.reason


_KINDS = (
    ("executor: joint solve too large", re.compile(r"more unknowns than equations")),
    ("no operator for a step", re.compile(r"no operator expresses")),
    ("constant not given", re.compile(r"neither given nor a vocabulary")),
    ("program gives another value", re.compile(r"the program gives")),
    ("goal quantity undetermined", re.compile(r"which no step determines")),
)


def _kind(reason: str) -> str:
    return next(
        (name for name, pattern in _KINDS if pattern.search(reason)), "other: " + reason.split(":")[-1][:60]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=20.0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--ids", default=None)
    parser.add_argument("--joint-max", type=int, default=None)
    parser.add_argument("--examples", type=int, default=5)
    parser.add_argument(
        "--synth", type=Path, default=None, help="generated records (a dataset folder or JSONL)"
    )
    args = parser.parse_args()
    if args.synth is not None:
        problems, unreadable = _load_synth(args.synth, args.limit), 0
    else:
        shared = Path(os.environ.get("GEO_SHARED", ROOT.parent / "shared"))
        folder = shared / "data" / "geometry3k_formal"
        if not folder.is_dir():
            print(f"no formal Geometry3K data at {folder} (set GEO_SHARED); nothing to measure")
            return 0
        ids = None if args.ids is None else set(args.ids.split(","))
        problems, unreadable = _load(folder, ids, args.limit)
    start = time.perf_counter()
    context = multiprocessing.get_context("fork")
    with context.Pool(max(1, args.jobs), maxtasksperchild=25) as pool:
        results = list(pool.imap(_work, [(p, args.time_limit, args.joint_max) for p in problems]))
    wall = time.perf_counter() - start
    answered = [r for r in results if r[1]]
    correct = [r for r in answered if r[2]]
    bridged = [r for r in answered if r[3] is not None]
    bridged_correct = [r for r in correct if r[3] is not None]
    print(f"records: {len(problems)} loaded ({unreadable} unreadable), wall {wall:.0f} s, jobs {args.jobs}")
    print(f"answered: {len(answered)}; within 2% of the truth: {len(correct)}")
    print(f"bridged: {len(bridged)} = {len(bridged) / max(1, len(answered)):.1%} of answered")
    print(
        f"bridged among correct: {len(bridged_correct)} = {len(bridged_correct) / max(1, len(correct)):.1%}"
    )
    reasons = collections.Counter(_kind(r[4]) for r in answered if r[3] is None and r[4] is not None)
    print("not bridged, by reason:")
    for kind, count in reasons.most_common():
        print(f"  {count:4d}  {kind}")
    operators = collections.Counter(t for r in bridged for t in (r[3] or "").split() if t in OPERATORS)
    print("operators in bridged programs:", ", ".join(f"{k} {v}" for k, v in operators.most_common()))
    for pid, _, _, program, _ in bridged[: args.examples]:
        print(f"  e.g. {pid}: {program}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
