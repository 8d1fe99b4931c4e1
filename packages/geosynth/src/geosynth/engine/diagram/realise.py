"""The numeric realiser: coordinates for a problem's points, sampled with an injected RNG.

A problem is first compiled clause by clause (definition arguments bound to problem points, every
precondition, sketch and fact instantiated), so naming errors surface once, before any sampling. Each
attempt then places the clauses in order: preconditions are checked on the existing points, sketches
give points or loci, loci are intersected (or sampled when alone), new points must stay apart from the
existing ones, and every fact of every definition must hold numerically. A failed attempt restarts the
whole diagram; after ``max_attempts`` failures :class:`ConstructionFailed` says where and why.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, ConfigDict

from geosynth.engine.diagram.numeric import SEPARATION, holds
from geosynth.engine.geometry.geometry import (
    Circle,
    Degenerate,
    Line,
    Locus,
    Vec,
    intersect,
    norm,
    sample_on,
    vec,
)
from geosynth.engine.geometry.sketches import SKETCHES
from geosynth.engine.language.definitions import ConstructionDef, Statement, default_definitions
from geosynth.engine.language.predicates import build_relation, relation_text
from geosynth.engine.language.problem import Clause, Problem
from geosynth.engine.language.relations import Relation
from geosynth.errors import (
    ConstructionFailed,
    GeoSynthError,
    ProblemSyntaxError,
    RelationError,
    UnknownConstructionError,
)

MAX_COORDINATE = 1e3
"""Points further out than this (on a unit-scale diagram) make an attempt fail as ill-conditioned."""


class Diagram(BaseModel):
    """Coordinates of every point of a problem."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)
    points: dict[str, tuple[float, float]]
    """Point name to ``(x, y)``, in creation order."""
    attempts: int
    """How many whole-diagram attempts the realiser needed (1 = first try)."""

    def coords(self) -> dict[str, Vec]:
        """The coordinates as numpy vectors."""
        return {name: vec(x, y) for name, (x, y) in self.points.items()}

    def holds(self, relation: Relation) -> bool:
        """Whether a relation holds numerically on this diagram."""
        return holds(relation, self.coords())


@dataclass(frozen=True)
class _SketchCall:
    name: str
    points: tuple[str, ...]
    numbers: tuple[float, ...]


@dataclass(frozen=True)
class _Step:
    """One clause, compiled."""

    text: str
    points: tuple[str, ...]
    positions: dict[str, tuple[float, float]]
    preconditions: tuple[Relation, ...]
    sketches: tuple[tuple[tuple[str, ...], _SketchCall], ...]
    facts: tuple[Relation, ...]


def _instantiate(statement: Statement, binding: dict[str, str], clause: str) -> Relation:
    args = tuple(binding.get(a, a) for a in statement.args)
    try:
        return build_relation(statement.name, args)
    except RelationError as err:
        raise ProblemSyntaxError(f"{statement.name} {' '.join(args)}: {err}", clause=clause) from None


def _sketch_call(statement: Statement, definition: ConstructionDef, binding: dict[str, str]) -> _SketchCall:
    numbers = tuple(float(binding[a]) for a in statement.args if a in definition.params)
    points = tuple(binding[a] for a in statement.args if a not in definition.params)
    return _SketchCall(statement.name, points, numbers)


def _compile_clause(clause: Clause, definitions: dict[str, ConstructionDef]) -> _Step:
    text = clause.text()
    pre: list[Relation] = []
    sketches: list[tuple[tuple[str, ...], _SketchCall]] = []
    facts: list[Relation] = []
    for call in clause.constructions:
        definition = definitions.get(call.name)
        if definition is None:
            raise UnknownConstructionError(call.name, clause=text)
        binding = dict(zip(definition.args, call.args, strict=True))
        pre.extend(_instantiate(s, binding, text) for s in definition.preconditions)
        outputs = tuple(binding[o] for o in definition.outputs)
        sketches.extend((outputs, _sketch_call(s, definition, binding)) for s in definition.sketches)
        facts.extend(_instantiate(s, binding, text) for g in definition.facts for s in g.facts)
    positions = {name: (x, y) for name, x, y in clause.positions}
    return _Step(text, clause.points, positions, tuple(pre), tuple(sketches), tuple(facts))


def compile_problem(problem: Problem, definitions: dict[str, ConstructionDef] | None = None) -> list[_Step]:
    """Bind every clause of a problem to its definitions (used by :func:`realise`).

    Raises:
        ProblemSyntaxError: A construction's facts cannot be formed from the points it was given.
        UnknownConstructionError: A clause uses a construction missing from ``definitions``.
    """
    defs = default_definitions() if definitions is None else definitions
    return [_compile_clause(clause, defs) for clause in problem.clauses]


def _place_one(
    name: str, found: list[Vec], loci: list[Locus], coords: dict[str, Vec], rng: np.random.Generator
) -> Vec:
    if found:
        return found[0]
    if not loci:
        raise Degenerate(f"nothing places {name}")
    existing = list(coords.values())
    center = np.mean(existing, axis=0) if existing else vec(0.0, 0.0)
    spread = max([1.0] + [norm(p - center) for p in existing])
    if len(loci) == 1:
        return sample_on(loci[0], rng, center, spread)
    candidates = [
        p for p in intersect(loci[0], loci[1]) if all(extra.contains(p, 1e-6) for extra in loci[2:])
    ]
    kinds = " and ".join(_LOCUS_NAMES[type(locus)] for locus in loci)
    if not candidates:
        raise Degenerate(f"the loci of {name} ({kinds}) do not meet")
    fresh = [p for p in candidates if all(norm(p - q) > SEPARATION * spread for q in existing)]
    if not fresh:
        raise Degenerate(f"the loci of {name} ({kinds}) meet only at existing points")
    return fresh[int(rng.integers(len(fresh)))]


_LOCUS_NAMES: dict[type, str] = {Line: "line", Circle: "circle"}
"""How a failure message names each kind of locus."""

NUMERIC_FAILURES = (ArithmeticError, ValueError, np.linalg.LinAlgError)
"""Errors a sketch's arithmetic may raise on an unlucky sample; they fail the attempt like a degenerate one."""


def _sketch(call: _SketchCall, coords: dict[str, Vec], rng: np.random.Generator) -> tuple[Vec | Locus, ...]:
    try:
        return SKETCHES[call.name]([coords[p] for p in call.points], call.numbers, rng)
    except GeoSynthError:
        raise  # a ProblemSyntaxError is a ValueError too, but never a numeric accident
    except NUMERIC_FAILURES as err:
        raise Degenerate(f"sketch {call.name} failed numerically ({type(err).__name__}: {err})") from None


def _place(step: _Step, coords: dict[str, Vec], rng: np.random.Generator) -> dict[str, Vec]:
    points: dict[str, list[Vec]] = {p: [] for p in step.points}
    loci: dict[str, list[Locus]] = {p: [] for p in step.points}
    for outputs, call in step.sketches:
        result = _sketch(call, coords, rng)
        if len(outputs) == 1:
            name = outputs[0]
            for value in result:
                if isinstance(value, np.ndarray):
                    points[name].append(value)
                else:
                    loci[name].append(value)
            continue
        if len(result) != len(outputs):
            raise Degenerate(f"sketch {call.name} gave {len(result)} results for {len(outputs)} points")
        for out, value in zip(outputs, result, strict=True):
            if not isinstance(value, np.ndarray):
                raise Degenerate(f"sketch {call.name} gave a locus for one of several points")
            points[out].append(value)
    placed: dict[str, Vec] = {}
    for name in step.points:
        if name in step.positions:
            placed[name] = vec(*step.positions[name])
        else:
            placed[name] = _place_one(name, points[name], loci[name], {**coords, **placed}, rng)
    return placed


def _check_new(step: _Step, placed: dict[str, Vec], coords: dict[str, Vec]) -> None:
    everything = list(coords.values()) + list(placed.values())
    scale = max([1.0] + [norm(p) for p in everything])
    for name, p in placed.items():
        if not np.all(np.isfinite(p)) or norm(p) > MAX_COORDINATE:
            raise Degenerate(f"{name} is too far away")
        others = [q for n, q in {**coords, **placed}.items() if n != name]
        if any(norm(p - q) <= SEPARATION * scale for q in others):
            raise Degenerate(f"{name} coincides with an existing point")


def _attempt(steps: list[_Step], rng: np.random.Generator) -> tuple[dict[str, Vec], str, str]:
    """One whole-diagram attempt: the coordinates, or the failing clause and the reason."""
    coords: dict[str, Vec] = {}
    for step in steps:
        try:
            for rel in step.preconditions:
                if not holds(rel, coords):
                    raise Degenerate(f"precondition {relation_text(rel)} fails")
            placed = _place(step, coords, rng)
            _check_new(step, placed, coords)
            coords.update(placed)
            for rel in step.facts:
                if not holds(rel, coords):
                    raise Degenerate(f"fact {relation_text(rel)} fails")
        except Degenerate as err:
            return coords, step.text, str(err)
    return coords, "", ""


def realise(
    problem: Problem,
    rng: np.random.Generator,
    max_attempts: int = 100,
    *,
    check_goal: bool = False,
    definitions: dict[str, ConstructionDef] | None = None,
) -> Diagram:
    """Sample coordinates for every point of a problem.

    Args:
        problem: The problem to draw.
        rng: The random generator (the only source of randomness).
        max_attempts: Whole-diagram attempts before giving up (at least 1).
        check_goal: Also require the goal to hold numerically (retrying otherwise).
        definitions: Construction definitions; the bundled ones when ``None``.

    Returns:
        The diagram.

    Raises:
        ConstructionFailed: No attempt produced a valid diagram; names the last failing clause.
        ProblemSyntaxError: A construction's facts cannot be formed from its points.
        ValueError: ``max_attempts`` is below 1.
    """
    if max_attempts < 1:
        raise ValueError(f"max_attempts must be at least 1, got {max_attempts}")
    steps = compile_problem(problem, definitions)
    clause, reason = "", ""
    for attempt in range(1, max_attempts + 1):
        coords, clause, reason = _attempt(steps, rng)
        if not reason and check_goal and problem.goal is not None and not holds(problem.goal, coords):
            clause, reason = "", f"goal {relation_text(problem.goal)} does not hold"
        if not reason:
            points = {name: (float(p[0]), float(p[1])) for name, p in coords.items()}
            return Diagram(points=points, attempts=attempt)
    raise ConstructionFailed(attempts=max_attempts, clause=clause, reason=reason)


def extend_diagram(
    diagram: Diagram,
    clause: Clause,
    rng: np.random.Generator,
    *,
    attempts: int = 20,
    definitions: dict[str, ConstructionDef] | None = None,
) -> Diagram:
    """Place one more clause on an existing diagram, keeping every existing point where it is.

    Args:
        diagram: The diagram of the problem so far.
        clause: A clause over the diagram's points.
        rng: Random generator (used by constructions with a free parameter).
        attempts: Placements tried before giving up.
        definitions: Construction definitions; the bundled ones when ``None``.

    Returns:
        The diagram with the clause's points added.

    Raises:
        ConstructionFailed: A precondition fails on the diagram, or no placement satisfies the clause.
    """
    step = _compile_clause(clause, default_definitions() if definitions is None else definitions)
    coords = diagram.coords()
    for rel in step.preconditions:
        if not holds(rel, coords):
            raise ConstructionFailed(
                attempts=1, clause=step.text, reason=f"precondition {relation_text(rel)} fails"
            )
    reason = ""
    for _ in range(max(1, attempts)):
        try:
            placed = _place(step, coords, rng)
            _check_new(step, placed, coords)
            merged = {**coords, **placed}
            if bad := next((r for r in step.facts if not holds(r, merged)), None):
                raise Degenerate(f"fact {relation_text(bad)} fails")
        except Degenerate as err:
            reason = str(err)
            continue
        points = {**diagram.points, **{n: (float(p[0]), float(p[1])) for n, p in placed.items()}}
        return Diagram(points=points, attempts=diagram.attempts)
    raise ConstructionFailed(attempts=max(1, attempts), clause=step.text, reason=reason)
