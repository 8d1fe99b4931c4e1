"""Random construction sequences mined for auxiliary-construction examples.

A sequence starts from a base figure (a triangle, a quadrangle...) and adds constructions drawn from
:data:`RANDOM_CONSTRUCTIONS` over random existing points, each placed on the growing diagram (a draw
that does not realise is redrawn). The engine runs to closure on the diagram; derived facts become
candidate goals, and :func:`~geosynth.synth._aux.aux_examples_from` keeps those whose proof needs
constructions the goal does not.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Annotated

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from geosynth._deductive import deduce
from geosynth._definitions import default_definitions
from geosynth._problem import Problem, parse_clause, parse_problem
from geosynth._realise import Diagram, realise
from geosynth.errors import GeoSynthError
from geosynth.synth._aux import AuxExample, aux_examples_from, extend_diagram, new_point_name

BASES: tuple[str, ...] = (
    "a b c = triangle a b c",
    "a b c = triangle a b c",
    "a b c = iso_triangle a b c",
    "a b c = r_triangle a b c",
    "a b c d = quadrangle a b c d",
    "a b c d = trapezoid a b c d",
)
"""Base figures (drawn uniformly; the plain triangle twice as often)."""

RANDOM_CONSTRUCTIONS: dict[str, int] = {
    "midpoint": 2,
    "mirror": 2,
    "on_circle": 2,
    "on_line": 2,
    "on_bline": 2,
    "on_dia": 2,
    "foot": 3,
    "circle": 3,
    "orthocenter": 3,
    "incenter": 3,
    "on_tline": 3,
    "on_pline": 3,
    "parallelogram": 3,
    "angle_bisector": 3,
    "intersection_lc": 3,
    "intersection_ll": 4,
}
"""One-point constructions and how many existing points each takes (in short form)."""


class AuxGenConfig(BaseModel):
    """Settings of :func:`generate_aux_examples`."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)
    min_constructions: Annotated[int, Field(ge=1)] = 5
    """Fewest constructions added to the base figure."""
    max_constructions: Annotated[int, Field(ge=1)] = 8
    """Most constructions added to the base figure."""
    closure_time_limit: Annotated[float, Field(gt=0)] = 10.0
    """Seconds of deduction to closure per random sequence."""
    check_time_limit: Annotated[float, Field(gt=0)] = 5.0
    """Seconds of deduction per check of a candidate example."""
    max_goals: Annotated[int, Field(ge=1)] = 4
    """Candidate goals checked per sequence."""
    max_sequences: Annotated[int, Field(ge=1)] | None = None
    """Random sequences tried before stopping (``None``: 50 per requested example)."""

    @model_validator(mode="after")
    def _check(self) -> AuxGenConfig:
        if self.min_constructions > self.max_constructions:
            raise ValueError(
                f"min_constructions={self.min_constructions} exceeds max_constructions={self.max_constructions}"
            )
        return self


def _add_random(
    problem: Problem, diagram: Diagram, rng: random.Random, np_rng: np.random.Generator, tries: int = 12
) -> tuple[Problem, Diagram] | None:
    known = set(problem.points)
    defs = default_definitions()
    names = list(RANDOM_CONSTRUCTIONS)
    for _ in range(tries):
        name = rng.choice(names)
        arity = RANDOM_CONSTRUCTIONS[name]
        if arity > len(known):
            continue
        args = rng.sample(sorted(known), arity)
        new = new_point_name(problem)
        try:
            clause = parse_clause(f"{new} = {name} {' '.join(args)}", known, defs)
            extended = extend_diagram(diagram, clause, np_rng, attempts=5)
        except GeoSynthError:
            continue
        grown = Problem.model_validate(
            {"name": problem.name, "clauses": (*problem.clauses, clause), "goal": None}
        )
        return grown, extended
    return None


def random_sequence(rng: random.Random, config: AuxGenConfig, name: str = "") -> tuple[Problem, Diagram]:
    """A random construction sequence (no goal) and a diagram of it.

    Args:
        rng: Random generator (all choices and the numeric placement derive from it).
        config: Generation settings (how many constructions).
        name: The problem's name.

    Returns:
        The problem and its diagram; fewer constructions than drawn when draws keep failing.
    """
    np_rng = np.random.default_rng(rng.getrandbits(63))
    problem = parse_problem(rng.choice(BASES), name)
    diagram = realise(problem, np_rng)
    for _ in range(rng.randint(config.min_constructions, config.max_constructions)):
        grown = _add_random(problem, diagram, rng, np_rng)
        if grown is None:
            break
        problem, diagram = grown
    return problem, diagram


def generate_aux_examples(n: int, seed: int = 0, config: AuxGenConfig | None = None) -> Iterator[AuxExample]:
    """Yield up to ``n`` auxiliary-construction examples mined from random construction sequences.

    Deterministic for a seed (up to the engine's time limits, which a loaded machine may hit sooner).

    Args:
        n: Examples wanted.
        seed: Seed of every random choice.
        config: Generation settings; the defaults when ``None``.

    Yields:
        Confirmed examples, until ``n`` are found or ``config.max_sequences`` sequences are spent.
    """
    cfg = AuxGenConfig() if config is None else config
    budget = cfg.max_sequences if cfg.max_sequences is not None else 50 * max(1, n)
    found = 0
    for index in range(budget):
        if found >= n:
            return
        rng = random.Random(f"aux:{seed}:{index}")
        try:
            problem, diagram = random_sequence(rng, cfg, name=f"aux-{seed}-{index}")
        except GeoSynthError:
            continue
        closure = deduce(problem, diagram, time_limit=cfg.closure_time_limit)
        examples = aux_examples_from(
            problem, closure, rng=rng, max_goals=cfg.max_goals, seed=index, time_limit=cfg.check_time_limit
        )
        for example in examples[: n - found]:
            found += 1
            yield example
