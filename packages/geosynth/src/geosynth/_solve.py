"""Solving problems end to end: realise a diagram, deduce, trace the goal back to the givens.

:func:`solve` runs one problem in-process; :func:`solve_all` runs many, each in its own worker process
with a hard timeout, and yields results in input order. :func:`proof_steps` linearises the derivation of
the goal in post-order (every fact after the facts it uses) and :func:`format_proof` prints it.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Iterator, Sequence
from multiprocessing.connection import Connection
from multiprocessing.context import ForkContext, SpawnContext
from multiprocessing.process import BaseProcess

import numpy as np
from pydantic import BaseModel, ConfigDict

from geosynth._chasing import AngleSystem, RatioSystem, build_systems, goal_sources
from geosynth._deductive import KINDS, Deduction, Derivation, deduce
from geosynth._factstore import FactStore
from geosynth._predicates import relation_text
from geosynth._problem import Problem
from geosynth._realise import realise
from geosynth._relations import (
    Between,
    CircleThrough,
    Collinear,
    Concyclic,
    Distinct,
    EqualLength,
    NotCollinear,
    NotParallel,
    NotPerpendicular,
    OppositeSide,
    Relation,
    SameSide,
)
from geosynth._shapes import AnyRelation
from geosynth.errors import GeoSynthError

GIVEN = "given"
"""The rule name of a step that is a fact of the constructions."""
DIAGRAM = "diagram"
"""The rule name of a side condition read off the diagram (non-collinear, not parallel...)."""
DIAGRAMMATIC = (NotCollinear, NotParallel, NotPerpendicular, Distinct, SameSide, OppositeSide, Between)
"""Relations a proof takes from the diagram rather than proves."""
SAME_SEGMENT = "same segment"
"""The rule name of a length equal to itself (a side two triangles share)."""
SAME_CLASSES = "same line or circle"
"""The rule name of a step implied by merged classes (e.g. two collinearities sharing two points)."""


class SolveResult(BaseModel):
    """The outcome of solving one problem (one JSON line of ``geo engine solve``)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)
    name: str
    """The problem's name."""
    solved: bool
    """Whether the goal was derived."""
    answer: float | None = None
    """The numeric answer of a calculation goal; ``None`` for proving problems."""
    seconds: float
    """Wall time spent on the problem (realisation and deduction)."""
    steps: int
    """Steps of the proof of the goal (0 when unsolved)."""
    timed_out: bool = False
    """Whether the worker was stopped at the time limit."""
    error: str | None = None
    """A one-line error (a construction that cannot be realised...), or ``None``."""


class ProofStep(BaseModel):
    """One numbered line of a proof."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)
    number: int
    """The step's number, from 1."""
    fact: AnyRelation
    """What the step establishes."""
    rule: str
    """The rule (``r07``, ``angle chasing``, ``given``...)."""
    premises: tuple[int, ...]
    """Numbers of the earlier steps it uses."""


class _Tracer:
    """Explains facts a proof uses: their own derivation, or how the final state implies them."""

    def __init__(self, deduction: Deduction) -> None:
        self.givens = set(deduction.givens)
        self.first: dict[Relation, Derivation] = {}
        for derivation in deduction.derivations:
            self.first.setdefault(derivation.fact, derivation)
        self.facts: list[Relation] = [*deduction.givens, *(d.fact for d in deduction.derivations)]
        self.diagram = deduction.diagram
        self._systems: tuple[AngleSystem, RatioSystem] | None = None

    def systems(self) -> tuple[AngleSystem, RatioSystem]:
        if self._systems is None:
            assert self.diagram is not None
            store = FactStore(list(self.diagram.points))
            for fact in self.facts:
                kind = KINDS.get(type(fact))
                if kind is not None:
                    kind.apply(store, fact)
            self._systems = build_systems(store, self.diagram.coords(), self.facts)
        return self._systems

    def explain(self, fact: Relation) -> Derivation | None:
        """``None`` for a given; else the derivation to show for the fact."""
        if fact in self.givens:
            return None
        if fact in self.first:
            return self.first[fact]
        if isinstance(fact, DIAGRAMMATIC):
            return Derivation.model_validate({"fact": fact, "rule": DIAGRAM, "premises": ()})
        if isinstance(fact, EqualLength) and fact.points[:2] == fact.points[2:]:
            return Derivation.model_validate({"fact": fact, "rule": SAME_SEGMENT, "premises": ()})
        verdict = None if self.diagram is None else goal_sources(fact, *self.systems())
        if verdict is not None and fact not in (self.facts[i] for i in verdict[1]):
            premises = tuple(self.facts[i] for i in sorted(verdict[1]))
        else:  # implied by merged classes (lines sharing two points, circles sharing three)
            premises = tuple(f for f in self.facts if _shares_class(f, fact))
        derivation = Derivation.model_validate(
            {"fact": fact, "rule": verdict[0] if verdict else SAME_CLASSES, "premises": premises}
        )
        self.first[fact] = derivation
        return derivation


def _shares_class(known: Relation, fact: Relation) -> bool:
    common = len(set(known.points) & set(fact.points))
    if isinstance(known, Collinear):
        return common >= 3  # it puts two of the fact's segments on one line
    return isinstance(known, Concyclic | CircleThrough) and type(known) is type(fact) and common >= 3


def proof_steps(problem: Problem, deduction: Deduction) -> list[ProofStep]:
    """The derivation of the goal in post-order, from the givens it uses to the goal (empty if unproved)."""
    goal = problem.goal
    if goal is None or not deduction.proved:
        return []
    tracer = _Tracer(deduction)
    numbers: dict[Relation, int] = {}
    steps: list[ProofStep] = []
    stack: list[tuple[Relation, bool]] = [(goal, False)]
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
        refs = tuple(dict.fromkeys(numbers[p] for p in premises if p in numbers))
        steps.append(
            ProofStep.model_validate({"number": numbers[fact], "fact": fact, "rule": rule, "premises": refs})
        )
    return steps


def format_proof(steps: Sequence[ProofStep]) -> str:
    """A proof as numbered lines: ``3. para a b c d  [r07 from 1, 2]``."""
    lines: list[str] = []
    for step in steps:
        source = step.rule if not step.premises else f"{step.rule} from {', '.join(map(str, step.premises))}"
        lines.append(f"{step.number}. {relation_text(step.fact)}  [{source}]")
    return "\n".join(lines)


def solve(
    problem: Problem, seed: int = 0, time_limit: float | None = None, attempts: int = 100
) -> tuple[SolveResult, Deduction]:
    """Realise one diagram (goal checked, seeded) and run the engine on it.

    Raises:
        ConstructionFailed: No diagram of the problem could be realised.
    """
    start = time.perf_counter()
    diagram = realise(problem, np.random.default_rng(seed), attempts, check_goal=problem.goal is not None)
    deduction = deduce(problem, diagram, time_limit=time_limit)
    steps = len(proof_steps(problem, deduction))
    result = SolveResult(
        name=problem.name, solved=deduction.proved, seconds=time.perf_counter() - start, steps=steps
    )
    return result, deduction


def _worker(problem: Problem, seed: int, time_limit: float, conn: Connection) -> None:
    try:
        result, _ = solve(problem, seed, time_limit)
    except GeoSynthError as err:
        result = SolveResult(name=problem.name, solved=False, seconds=0.0, steps=0, error=str(err))
    conn.send(result.model_dump_json())
    conn.close()


def solve_all(
    problems: Sequence[Problem], timeout: float = 60.0, jobs: int = 1, seed: int = 0
) -> Iterator[SolveResult]:
    """Solve each problem in a worker process killed at ``timeout`` seconds; results in input order."""
    context: ForkContext | SpawnContext = (
        multiprocessing.get_context("fork")
        if "fork" in multiprocessing.get_all_start_methods()
        else multiprocessing.get_context("spawn")
    )
    running: dict[int, tuple[BaseProcess, Connection, float]] = {}
    done: dict[int, SolveResult] = {}
    queue = list(range(len(problems)))[::-1]
    emitted = 0
    while emitted < len(problems):
        while queue and len(running) < max(1, jobs):
            index = queue.pop()
            receive, send = context.Pipe(duplex=False)
            process = context.Process(target=_worker, args=(problems[index], seed, timeout * 0.9, send))
            process.start()
            send.close()
            running[index] = (process, receive, time.perf_counter())
        for index, (process, receive, began) in list(running.items()):
            elapsed = time.perf_counter() - began
            if receive.poll(0.02):
                try:
                    done[index] = SolveResult.model_validate_json(receive.recv())
                except EOFError:
                    done[index] = _failed(problems[index], elapsed, "worker died")
            elif not process.is_alive() and not receive.poll(0):
                done[index] = _failed(problems[index], elapsed, f"worker exited with {process.exitcode}")
            elif elapsed > timeout:
                process.kill()
                done[index] = SolveResult(
                    name=problems[index].name, solved=False, seconds=elapsed, steps=0, timed_out=True
                )
            else:
                continue
            process.join()
            receive.close()
            del running[index]
        while emitted in done:
            yield done.pop(emitted)
            emitted += 1


def _failed(problem: Problem, seconds: float, why: str) -> SolveResult:
    return SolveResult(name=problem.name, solved=False, seconds=seconds, steps=0, error=why)
