"""Auxiliary-construction data: split a solved problem into (problem without helpers, helper clauses).

A goal statement needs only some of a problem's points: the goal's own points and, through the
clauses, every point those were built from. Any other clause is not needed to *state* the goal; when
the proof still uses facts about its points, it is an auxiliary construction (the definition of
AlphaGeometry and Euclid-Omni: the traced proof uses it). :func:`split_auxiliary` removes such clauses,
confirms that the engine proves the goal with them added back, and records whether the engine also
proves the reduced problem on its own; in strict mode such pairs are dropped, keeping only
constructions the engine cannot do without. :func:`generate_aux_examples` makes pairs from random
construction sequences, and :func:`aux_examples_from` does the same for a problem and deduction some
other generator produced.
"""

from __future__ import annotations

import itertools
import random
import string
from collections.abc import Callable, Iterator, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from geosynth.engine import (
    Clause,
    Collinear,
    Concyclic,
    CongruentTriangles,
    ConstructionDef,
    Deduction,
    Diagram,
    EqualLength,
    EqualLineAngles,
    Midpoint,
    Parallel,
    Perpendicular,
    Problem,
    ProofStep,
    Relation,
    SimilarTriangles,
    deduce,
    default_definitions,
    parse_clause,
    parse_problem,
    proof_steps,
    realise,
    relation_text,
)
from geosynth.errors import GeoSynthError, ProblemSyntaxError
from geosynth.synth._proving import trivial

_FROZEN = ConfigDict(frozen=True, extra="forbid", strict=True)

GOAL_KINDS: tuple[type[Relation], ...] = (
    Midpoint,
    Collinear,
    Parallel,
    Perpendicular,
    EqualLength,
    EqualLineAngles,
    Concyclic,
    SimilarTriangles,
    CongruentTriangles,
)
"""Relations a synthetic goal may be (the usual olympiad targets)."""


class AuxExample(BaseModel):
    """A problem whose proof needs auxiliary constructions, and those constructions."""

    model_config = _FROZEN
    name: str
    """The source problem's name."""
    problem: str
    """The problem line without the auxiliary clauses (it parses and realises)."""
    auxiliary: tuple[str, ...] = Field(min_length=1)
    """The removed clauses, in construction order (full form); added back, the engine proves the goal."""
    engine_alone: bool = False
    """Whether the engine also proves the reduced problem without them (on the same diagram, within the
    time limit): then the clauses are the ones the engine's proof used, not the only way to the goal.
    Strict mining keeps only examples where this is false."""

    def reduced_problem(self) -> Problem:
        """The problem without the auxiliary clauses."""
        return parse_problem(self.problem, self.name)

    def full_problem(self) -> Problem:
        """The problem with the auxiliary clauses added back after the others."""
        reduced = self.reduced_problem()
        return with_auxiliary(
            reduced, [_parse_after(reduced, self.auxiliary, i) for i in range(len(self.auxiliary))]
        )


def _parse_after(problem: Problem, clauses: Sequence[str], index: int) -> Clause:
    known = set(problem.points)
    defs = default_definitions()
    for text in clauses[:index]:
        known.update(parse_clause(text, known, defs).points)
    return parse_clause(clauses[index], known, defs)


def used_clauses(candidates: Sequence[Clause], steps: Sequence[ProofStep]) -> list[Clause]:
    """The clauses of ``candidates`` a proof needs, in the candidates' order.

    Those whose points its steps mention, and the candidates those are built from.
    """
    mentioned = {p for step in steps for p in step.fact.points}
    used: set[str] = set()
    for clause in reversed(candidates):  # a used clause needs the candidates it is built from
        if mentioned.intersection(clause.points) or used.intersection(clause.points):
            used.update(clause.points)
            used.update(clause_inputs(clause))
    return [c for c in candidates if used.intersection(c.points)]


def clause_inputs(clause: Clause, definitions: dict[str, ConstructionDef] | None = None) -> set[str]:
    """The existing points a clause's constructions use.

    Args:
        clause: A parsed (full-form) clause.
        definitions: Construction definitions; the bundled ones when ``None``.

    Returns:
        The input points of every construction of the clause.
    """
    defs = default_definitions() if definitions is None else definitions
    used: set[str] = set()
    for call in clause.constructions:
        binding = dict(zip(defs[call.name].args, call.args, strict=True))
        used.update(binding[name] for name in defs[call.name].inputs)
    return used


def goal_points(problem: Problem) -> set[str]:
    """The points the goal statement needs: its own points and, through the clauses, their inputs.

    Raises:
        ProblemSyntaxError: The problem has no goal.
    """
    if problem.goal is None:
        raise ProblemSyntaxError("the problem has no goal, so no point is needed", clause=problem.text())
    needed = set(problem.goal.points)
    for clause in reversed(problem.clauses):  # inputs always come from earlier clauses
        if needed.intersection(clause.points):
            needed.update(clause.points)
            needed.update(clause_inputs(clause))
    return needed


def with_auxiliary(problem: Problem, clauses: Sequence[Clause]) -> Problem:
    """The problem with ``clauses`` appended after its own clauses (the goal kept).

    Raises:
        ProblemSyntaxError: A clause reuses a point or uses one that does not exist yet.
    """
    body = "; ".join([problem.text().partition(" ? ")[0], *(c.text() for c in clauses)])
    goal = "" if problem.goal is None else f" ? {relation_text(problem.goal)}"
    return parse_problem(body + goal, problem.name)


def restrict(diagram: Diagram, problem: Problem) -> Diagram:
    """The diagram's coordinates of ``problem``'s points only (a diagram of a sub-problem)."""
    return Diagram(points={p: diagram.points[p] for p in problem.points}, attempts=diagram.attempts)


def _proves(problem: Problem, diagram: Diagram, time_limit: float) -> bool:
    return deduce(problem, diagram, time_limit=time_limit).proved


def split_auxiliary(
    problem: Problem,
    steps: Sequence[ProofStep],
    *,
    seed: int = 0,
    time_limit: float = 10.0,
    strict: bool = False,
) -> AuxExample | None:
    """Split a solved problem into the problem its goal needs and the auxiliary clauses its proof uses.

    Clauses whose points the goal does not need (see :func:`goal_points`) are removed; those whose
    points some proof step mentions (with the clauses they are built from) are the auxiliary
    constructions. The pair is kept only when the reduced problem realises on its own and the engine
    proves the goal with the clauses added back (on one seeded diagram of the whole problem). The engine
    then runs on the reduced problem (the same points of that diagram, within ``time_limit``):
    :attr:`AuxExample.engine_alone` records whether it succeeds, and ``strict`` drops such pairs.

    Args:
        problem: A problem with a goal.
        steps: A proof of its goal (:func:`geosynth.proof_steps`).
        seed: Seed of the diagram realisations.
        time_limit: Seconds of deduction allowed for each of the two checks.
        strict: Keep only pairs whose reduced problem the engine fails on.

    Returns:
        The example, or ``None`` when the proof uses no point outside the goal's needs, a check fails, or
        (``strict``) the engine proves the reduced problem alone.

    Raises:
        ProblemSyntaxError: The problem has no goal.
    """
    needed = goal_points(problem)
    kept = [c for c in problem.clauses if needed.intersection(c.points)]
    extra = [c for c in problem.clauses if not needed.intersection(c.points)]
    auxiliary = used_clauses(extra, steps)
    if not auxiliary:
        return None
    goal = "" if problem.goal is None else f" ? {relation_text(problem.goal)}"
    reduced = parse_problem("; ".join(c.text() for c in kept) + goal, problem.name)
    full = with_auxiliary(reduced, auxiliary)
    try:
        realise(reduced, np.random.default_rng(seed), check_goal=True)
        diagram = realise(full, np.random.default_rng(seed), check_goal=True)
    except GeoSynthError:
        return None
    if not _proves(full, diagram, time_limit):
        return None
    alone = _proves(reduced, restrict(diagram, reduced), time_limit)
    if strict and alone:
        return None
    return AuxExample(
        name=problem.name,
        problem=reduced.text(),
        auxiliary=tuple(c.text() for c in auxiliary),
        engine_alone=alone,
    )


def aux_examples_from(
    problem: Problem,
    deduction: Deduction,
    *,
    rng: random.Random,
    max_goals: int = 8,
    seed: int = 0,
    time_limit: float = 5.0,
    strict: bool = False,
) -> list[AuxExample]:
    """Auxiliary-construction examples from a goal-free problem and the deduction closure of its diagram.

    Derived facts of the kinds in :data:`GOAL_KINDS` (not givens, not trivial: see
    :func:`~geosynth.synth._proving.trivial`) are tried as goals in random order (at most
    ``max_goals`` that have a proof using a point the goal does not need); each becomes an example
    when :func:`split_auxiliary` confirms it. This is the entry point a problem generator calls.

    Args:
        problem: The construction sequence (its goal is ignored).
        deduction: ``deduce`` run to closure on one diagram of it (goal ``None``).
        rng: Random generator choosing the goals.
        max_goals: Candidate goals checked by the engine, at most.
        seed: Seed of the checks' diagrams.
        time_limit: Seconds of deduction per check.
        strict: Keep only examples whose reduced problem the engine fails on (see :func:`split_auxiliary`).

    Returns:
        The confirmed examples (possibly none).
    """
    givens = set(deduction.givens)
    facts = list(
        dict.fromkeys(
            d.fact
            for d in deduction.derivations
            if isinstance(d.fact, GOAL_KINDS) and not trivial(d.fact) and d.fact not in givens
        )
    )
    rng.shuffle(facts)
    examples: list[AuxExample] = []
    tried = 0
    closed = deduction.model_copy(update={"proved": True})
    for fact in facts:
        if tried >= max_goals:
            break
        posed = Problem.model_validate({"name": problem.name, "clauses": problem.clauses, "goal": fact})
        steps = proof_steps(posed, closed)
        needed = goal_points(posed)
        if not any(p not in needed for step in steps for p in step.fact.points):
            continue  # the proof stays inside the goal's own construction
        tried += 1
        example = split_auxiliary(posed, steps, seed=seed, time_limit=time_limit, strict=strict)
        if example is not None:
            examples.append(example)
    return examples


STANDARD_KINDS: tuple[str, ...] = ("midpoint", "foot", "circle", "mirror", "parallelogram")
"""Constructions :func:`standard_constructions` enumerates: midpoint, foot of a perpendicular,
circumcentre, reflection of a point through a point, and the fourth vertex of a parallelogram (the
point where the parallels through two vertices meet)."""

_ENUMERATORS: dict[str, Callable[[list[str]], Iterator[tuple[str, ...]]]] = {
    "midpoint": lambda pts: itertools.combinations(pts, 2),
    "foot": lambda pts: (
        (a, b, c) for a in pts for b, c in itertools.combinations([p for p in pts if p != a], 2)
    ),
    "circle": lambda pts: itertools.combinations(pts, 3),
    "mirror": lambda pts: itertools.permutations(pts, 2),
    "parallelogram": lambda pts: (
        (a, b, c) for b in pts for a, c in itertools.combinations([p for p in pts if p != b], 2)
    ),
}
"""Per construction, its distinct argument tuples over a list of points (symmetric duplicates left out)."""


def new_point_names(problem: Problem, count: int) -> list[str]:
    """The first ``count`` of ``a..z``, then ``a1..z9``, that the problem does not use.

    Raises:
        GeoSynthError: Fewer than ``count`` names are free.
    """
    known = set(problem.points)
    alphabet = (*string.ascii_lowercase, *(f"{c}{i}" for i in range(1, 10) for c in string.ascii_lowercase))
    free = [name for name in alphabet if name not in known][:count]
    if len(free) < count:
        raise GeoSynthError(f"no free point name left in problem {problem.name!r}")
    return free


def new_point_name(problem: Problem) -> str:
    """The first of ``a..z``, then ``a1..z9``, that the problem does not use."""
    return new_point_names(problem, 1)[0]


def standard_constructions(problem: Problem, kinds: Sequence[str] = STANDARD_KINDS) -> list[str]:
    """Every one-point construction of the given kinds over the problem's points, as clause texts.

    Candidates whose inputs include more of the goal's points come first (a stable order otherwise:
    kinds in the given order, argument tuples in point order). Degenerate candidates are kept; they
    fail when placed on a diagram.

    Args:
        problem: The problem.
        kinds: Keys of the enumeration table (default :data:`STANDARD_KINDS`).

    Returns:
        Full-form clause texts such as ``"e = midpoint e a b"``.

    Raises:
        GeoSynthError: An unknown kind.
    """
    if unknown := [k for k in kinds if k not in _ENUMERATORS]:
        raise GeoSynthError(f"cannot enumerate {', '.join(unknown)}; known: {', '.join(_ENUMERATORS)}")
    new = new_point_name(problem)
    goal = set() if problem.goal is None else set(problem.goal.points)
    pts = list(problem.points)
    out: list[tuple[int, str]] = []
    defs = default_definitions()
    for kind in kinds:
        outputs = defs[kind].outputs
        for args in _ENUMERATORS[kind](pts):
            given = iter(args)
            full = [new if a in outputs else next(given) for a in defs[kind].args]
            out.append((-len(goal.intersection(args)), f"{new} = {kind} {' '.join(full)}"))
    return [text for _, text in sorted(out, key=lambda item: item[0])]
