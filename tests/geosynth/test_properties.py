"""Property tests over randomly generated problems built from the bundled definitions."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from geosynth import (
    ConstructionFailed,
    Problem,
    ProblemSyntaxError,
    default_definitions,
    diagrammatic_relations,
    format_problem,
    holds,
    parse_problem,
    realise,
)

DEFS = default_definitions()
# Constructions that create points from nothing start a problem; the others extend it.
STARTERS = sorted(name for name, d in DEFS.items() if not d.inputs)
EXTENDERS = sorted(name for name, d in DEFS.items() if d.inputs)


@st.composite
def problems(draw: st.DrawFn) -> str:
    counter = iter(range(1000))
    start = DEFS[draw(st.sampled_from(STARTERS))]
    names = [f"p{next(counter)}" for _ in start.outputs]
    clauses = [f"{' '.join(names)} = {start.name} {' '.join(names)}"]
    for _ in range(draw(st.integers(1, 4))):
        definition = DEFS[draw(st.sampled_from(EXTENDERS))]
        if len(definition.inputs) > len(names):
            continue
        inputs = draw(st.permutations(names))[: len(definition.inputs)]
        new = [f"p{next(counter)}" for _ in definition.outputs]
        binding = dict(zip(definition.inputs, inputs, strict=True)) | dict(
            zip(definition.outputs, new, strict=True)
        )
        binding |= {p: str(draw(st.sampled_from([15, 30, 45, 60, 75]))) for p in definition.params}
        args = " ".join(binding[a] for a in definition.args)
        clauses.append(f"{' '.join(new)} = {definition.name} {args}")
        names.extend(new)
    return "; ".join(clauses)


@given(problems())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_generated_problems_round_trip(line: str) -> None:
    problem = parse_problem(line)
    assert parse_problem(format_problem(problem)) == problem
    assert Problem.model_validate_json(problem.model_dump_json()) == problem


@given(problems(), st.integers(0, 2**32 - 1))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_realiser_either_draws_or_fails_cleanly(line: str, seed: int) -> None:
    problem = parse_problem(line)
    try:
        diagram = realise(problem, np.random.default_rng(seed), 10)
    except ConstructionFailed as err:
        assert err.attempts == 10
        return
    except ProblemSyntaxError as err:  # a construction given repeated points cannot state its facts
        assert err.clause in line
        return
    coords = diagram.coords()
    assert list(coords) == list(problem.points)
    assert all(holds(r, coords) for r in diagrammatic_relations(diagram, sides=False))
