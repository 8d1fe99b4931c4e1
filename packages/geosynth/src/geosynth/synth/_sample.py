"""Sampling a figure: a start rule, then construction rules applied to random existing points.

Each rule is a clause template (see :mod:`geosynth.synth._config`); the filled clause is validated by the
engine's clause parser and the whole figure is realised again after every clause, so a clause whose
preconditions fail (or that cannot be placed) is dropped and another rule is tried. Every choice comes from
the two injected generators, so a seed fixes the figure.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass

import numpy as np

from geosynth.engine import (
    Clause,
    Diagram,
    Problem,
    default_definitions,
    parse_clause,
    parse_problem,
    realise,
)
from geosynth.errors import ConstructionFailed, ProblemSyntaxError
from geosynth.synth._config import PARAM_SLOTS, RuleSpec, SynthConfig, Task

RULE_TRIES = 8
"""Rules tried for one extension step before the figure stops growing."""


@dataclass(frozen=True)
class Figure:
    """A sampled construction sequence with a diagram."""

    problem: Problem
    """The constructions (no goal)."""
    diagram: Diagram
    """Coordinates of every point."""
    scale: tuple[str, str] | None
    """Calculation figures: the segment whose length is given."""
    length: int | None
    """Calculation figures: that length."""


def _weighted(rules: tuple[RuleSpec, ...], rng: random.Random) -> RuleSpec:
    return rng.choices(rules, weights=[r.weight for r in rules], k=1)[0]


def _params(config: SynthConfig, rng: random.Random) -> dict[str, str]:
    first = rng.choice(config.angles)
    second = rng.choice([a for a in config.angles if a + first < 170] or [config.angles[0]])
    return dict(zip(PARAM_SLOTS, (str(first), str(second)), strict=True))


def _realise(problem: Problem, config: SynthConfig, rng: np.random.Generator) -> Diagram | None:
    try:
        return realise(problem, rng, config.realise_attempts)
    except ConstructionFailed:
        return None


def _fill(rule: RuleSpec, points: tuple[str, ...], config: SynthConfig, rng: random.Random) -> str | None:
    existing = rule.existing_slots
    if len(existing) > len(points):
        return None
    fresh = [p for p in string.ascii_lowercase if p not in points]
    mapping = dict(zip(rule.new_slots, fresh, strict=False))
    mapping.update(zip(existing, rng.sample(points, len(existing)), strict=True))
    mapping.update(_params(config, rng))
    return rule.clause.format(**mapping)


def _extend(
    problem: Problem,
    diagram: Diagram,
    config: SynthConfig,
    task: Task,
    rng: random.Random,
    nprng: np.random.Generator,
) -> tuple[Problem, Diagram] | None:
    rules = config.extend_rules(task)
    defs = default_definitions()
    for _ in range(RULE_TRIES):
        rule = _weighted(rules, rng)
        if len(problem.points) + len(rule.new_slots) > config.max_points:
            continue
        text = _fill(rule, problem.points, config, rng)
        if text is None:
            continue
        try:
            clause: Clause = parse_clause(text, set(problem.points), defs)
        except ProblemSyntaxError:
            continue
        grown = problem.model_copy(update={"clauses": (*problem.clauses, clause)})
        drawn = _realise(grown, config, nprng)
        if drawn is not None:
            return grown, drawn
    return None


def sample_figure(
    config: SynthConfig, task: Task, rng: random.Random, nprng: np.random.Generator
) -> Figure | None:
    """Sample a start rule and extend it with ``min..max_constructions`` rules.

    Args:
        config: The generator configuration.
        task: ``proving`` (free points allowed) or ``calculation`` (determined rules only).
        rng: Discrete choices (rules, points, parameters).
        nprng: Coordinates (the realiser's generator).

    Returns:
        The figure, or ``None`` when the start could not be realised or too few rules applied.
    """
    start = _weighted(config.start_rules(task), rng)
    line = start.clause.format(**_params(config, rng))
    problem = parse_problem(line)
    diagram = _realise(problem, config, nprng)
    if diagram is None:
        return None
    target = rng.randint(config.min_constructions, config.max_constructions)
    for _ in range(target):
        grown = _extend(problem, diagram, config, task, rng, nprng)
        if grown is None:
            break
        problem, diagram = grown
    if len(problem.clauses) - line.count(";") - 1 < config.min_constructions:
        return None
    scale = (start.scale[0], start.scale[1]) if start.scale else None
    length = rng.choice(config.lengths) if scale else None
    return Figure(problem=problem, diagram=diagram, scale=scale, length=length)
