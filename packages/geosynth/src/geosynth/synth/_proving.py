"""Proving problems: pick a derived fact of a sampled figure as the goal, keep only what its proof needs.

The engine runs to closure on the figure (no goal); derived facts of the configured predicate types are
candidates. A chosen fact's proof is traced back to the givens, the figure is cut down to the clauses the
proof's points need, and the cut-down problem is solved again from its own text (:func:`check_proving`):
only a problem the engine proves there, whose goal holds on the emitted diagram, is emitted.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from geosynth.engine import (
    CongruentTriangles,
    Deduction,
    Diagram,
    EqualLineAngles,
    ProofStep,
    Relation,
    SimilarTriangles,
    holds,
    parse_problem,
    proof_steps,
    relation_text,
)
from geosynth.synth._config import SynthConfig
from geosynth.synth._sample import Figure
from geosynth.synth._trace import derived_count, prune, run_engine, trace_steps
from geosynth.synth.errors import SynthError


def goal_type(fact: Relation) -> str:
    """The goal type of a fact: its predicate without the orientation suffix (``simtri2`` -> ``simtri``)."""
    return relation_text(fact).split()[0].rstrip("2*")


@dataclass(frozen=True)
class ProvingProblem:
    """A proving problem the engine re-solved from its own statement."""

    text: str
    """The problem line with its goal (``... ? para d e b c``)."""
    goal: str
    """The goal as a relation text."""
    goal_type: str
    """The goal's predicate (``para``)."""
    diagram: Diagram
    """Coordinates of its points."""
    steps: tuple[ProofStep, ...]
    """The engine's proof, from the givens to the goal."""


def check_proving(text: str, diagram: Diagram, config: SynthConfig) -> tuple[ProofStep, ...] | None:
    """Solve a proving problem from its text on its diagram; its proof, or ``None`` if unproved.

    The goal must also hold numerically on the diagram, and the proof must have at least
    ``config.min_proof_steps`` derived steps.
    """
    problem = parse_problem(text)
    if problem.goal is None or not holds(problem.goal, diagram.coords()):
        return None
    deduction = run_engine(problem, diagram, config)
    if deduction is None or not deduction.proved:
        return None
    steps = tuple(proof_steps(problem, deduction))
    return steps if derived_count(steps) >= config.min_proof_steps else None


def trivial(fact: Relation) -> bool:
    """Goals that say nothing interesting.

    A triangle pair over one point set (an isosceles triangle matched with its own mirror image); an
    angle equality with a line paired with itself on one side (a zero angle: a collinearity in disguise)
    or with the same two lines on both sides, swapped (``∠(l, m) = ∠(m, l)``: a perpendicularity in
    disguise).
    """
    p = fact.points
    if isinstance(fact, SimilarTriangles | CongruentTriangles):
        return set(p[:3]) == set(p[3:])
    if isinstance(fact, EqualLineAngles):
        first = {frozenset(p[0:2]), frozenset(p[2:4])}
        second = {frozenset(p[4:6]), frozenset(p[6:8])}
        return len(first) == 1 or len(second) == 1 or first == second
    return False


def _candidates(deduction: Deduction, config: SynthConfig) -> dict[str, list[Relation]]:
    weights = config.goals.get("proving", {})
    givens = set(deduction.givens)
    out: dict[str, list[Relation]] = {}
    for derivation in deduction.derivations:
        fact = derivation.fact
        kind = goal_type(fact)
        if (
            weights.get(kind, 0) > 0
            and not trivial(fact)
            and fact not in givens
            and fact not in out.get(kind, [])
        ):
            out.setdefault(kind, []).append(fact)
    return out


def make_proving(figure: Figure, config: SynthConfig, rng: random.Random) -> ProvingProblem | None:
    """A proving problem from a figure, or ``None`` when no candidate goal survives the checks.

    Args:
        figure: The sampled constructions and diagram.
        config: Goal weights, search bounds, tries.
        rng: Chooses the goal type (by weight) and the fact.
    """
    deduction = run_engine(figure.problem, figure.diagram, config)
    if deduction is None:
        return None
    candidates = _candidates(deduction, config)
    weights = config.goals.get("proving", {})
    for _ in range(config.goal_tries):
        if not candidates:
            return None
        kinds = sorted(candidates)
        kind = rng.choices(kinds, weights=[weights[k] for k in kinds], k=1)[0]
        fact = candidates[kind].pop(rng.randrange(len(candidates[kind])))
        if not candidates[kind]:
            del candidates[kind]
        steps = trace_steps(deduction, [fact])
        if derived_count(steps) < config.min_proof_steps:
            continue
        points = {p for step in steps for p in step.fact.points}
        problem, diagram, _mapping = prune(figure.problem, figure.diagram, points, fact)
        if problem.goal is None:
            raise SynthError(f"pruning the figure for {relation_text(fact)} lost the goal")
        text = problem.text()
        checked = check_proving(text, diagram, config)
        if checked is None:
            continue
        goal = relation_text(problem.goal)
        return ProvingProblem(text=text, goal=goal, goal_type=kind, diagram=diagram, steps=checked)
    return None
