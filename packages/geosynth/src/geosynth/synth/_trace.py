"""Tracing solutions back to the constructions they need, and cutting a figure down to them.

A derived fact's proof (the engine's derivation walked to the givens) names points; the clauses that
create those points, closed under the points their constructions use, are the minimal construction set
the paper keeps. Everything else is dropped and the remaining points are renamed ``a, b, c...`` in order.
"""

from __future__ import annotations

import string
import time
from collections.abc import Iterable, Sequence

from geosynth.engine import (
    DIAGRAM,
    GIVEN,
    SAME_CLASSES,
    SAME_SEGMENT,
    Clause,
    Deduction,
    Diagram,
    Problem,
    ProofStep,
    Relation,
    Tracer,
    deduce,
    default_definitions,
)
from geosynth.errors import GeoSynthError
from geosynth.synth._config import SynthConfig


def run_engine(problem: Problem, diagram: Diagram, config: SynthConfig) -> Deduction | None:
    """The engine's search on one diagram, bounded by rounds; ``None`` on an engine error or past the clock.

    An engine error on one figure (a degenerate instance the engine does not handle) discards that figure
    rather than the whole batch. So does a search still running at ``config.time_limit`` seconds: the
    clock only guards against the rare figure whose closure explodes, and because a search that reaches it
    is dropped, never cut short and used, only such figures can make the output depend on the machine.
    """
    start = time.perf_counter()
    try:
        deduction = deduce(problem, diagram, max_rounds=config.max_rounds, time_limit=config.time_limit)
    except GeoSynthError:
        return None
    if config.time_limit is not None and time.perf_counter() - start >= config.time_limit:
        return None
    return deduction


def trace_steps(deduction: Deduction, roots: Sequence[Relation], *, minimal: bool = False) -> list[ProofStep]:
    """The derivations of several facts in post-order, numbered from 1 (shared steps appear once).

    Args:
        deduction: A finished search (its derivations and diagram).
        roots: Facts the search holds (derived or given), in the order their proofs should appear.
        minimal: Minimise the premises of chased steps (the engine's L0 support; slower).

    Returns:
        The steps, each after the steps it uses; the roots are among them.
    """
    tracer = Tracer(deduction, "l0" if minimal else None)
    numbers: dict[Relation, int] = {}
    steps: list[ProofStep] = []
    for root in roots:
        stack: list[tuple[Relation, bool]] = [(root, False)]
        on_path: set[Relation] = set()
        while stack:
            fact, expanded = stack.pop()
            if fact in numbers:
                continue
            derivation = tracer.explain(fact)
            premises = () if derivation is None else derivation.premises
            if not expanded:
                on_path.add(fact)
                stack.append((fact, True))
                stack.extend((p, False) for p in reversed(premises) if p not in numbers and p not in on_path)
                continue
            numbers[fact] = len(steps) + 1
            rule = GIVEN if derivation is None else derivation.rule
            refs = tuple(dict.fromkeys(numbers[p] for p in premises if p in numbers and p != fact))
            steps.append(
                ProofStep.model_validate(
                    {"number": numbers[fact], "fact": fact, "rule": rule, "premises": refs}
                )
            )
    return steps


BOOKKEEPING = (GIVEN, DIAGRAM, SAME_CLASSES, SAME_SEGMENT)
"""Step rules that are not reasoning: givens, side conditions, points on one known line or circle."""


def derived_count(steps: Sequence[ProofStep]) -> int:
    """Steps that are reasoning (a rule or the algebra), not givens or bookkeeping."""
    return sum(1 for s in steps if s.rule not in BOOKKEEPING)


def needed_clauses(problem: Problem, points: Iterable[str]) -> tuple[Clause, ...]:
    """The clauses creating ``points``, closed under the existing points their constructions use."""
    defs = default_definitions()
    creator = {p: i for i, clause in enumerate(problem.clauses) for p in clause.points}
    keep: set[int] = set()
    todo = [creator[p] for p in points if p in creator]
    while todo:
        index = todo.pop()
        if index in keep:
            continue
        keep.add(index)
        for call in problem.clauses[index].constructions:
            definition = defs[call.name]
            binding = dict(zip(definition.args, call.args, strict=True))
            todo.extend(creator[binding[name]] for name in definition.inputs if binding[name] in creator)
    return tuple(c for i, c in enumerate(problem.clauses) if i in keep)


def prune(
    problem: Problem, diagram: Diagram, points: Iterable[str], goal: Relation | None
) -> tuple[Problem, Diagram, dict[str, str]]:
    """The problem cut down to the clauses ``points`` need, renamed ``a, b, c...`` in creation order.

    Returns:
        The renamed problem (with ``goal`` renamed too), the diagram restricted to its points, and the
        renaming (old name to new name).
    """
    clauses = needed_clauses(problem, points)
    kept = Problem.model_validate({"name": problem.name, "clauses": clauses, "goal": goal})
    mapping = dict(zip(kept.points, string.ascii_lowercase, strict=False))
    renamed = kept.renamed(mapping)
    coords = {mapping[p]: diagram.points[p] for p in kept.points}
    return renamed, Diagram(points=coords, attempts=diagram.attempts), mapping
