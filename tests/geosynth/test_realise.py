from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np
import pytest

from geosynth import (
    Collinear,
    ConstructionFailed,
    Diagram,
    EqualLength,
    Midpoint,
    Parallel,
    Perpendicular,
    UnknownConstructionError,
    default_definitions,
    holds,
    load_problems,
    parse_problem,
    realise,
)
from geosynth.engine.geometry.sketches import SKETCHES

SAMPLES = ("jgex_sample.txt", "imo_sample.txt", "constructions_sample.txt")


@pytest.mark.parametrize("name", SAMPLES)
def test_sample_problems_realise_with_their_goal(data_dir: Path, name: str) -> None:
    for index, problem in enumerate(load_problems(data_dir / name)):
        diagram = realise(problem, np.random.default_rng(index), 50, check_goal=True)
        assert set(diagram.points) == set(problem.points)
        assert problem.goal is not None and diagram.holds(problem.goal)


def test_goal_fails_when_a_point_moves(data_dir: Path) -> None:
    for index, problem in enumerate(load_problems(data_dir / "jgex_sample.txt")):
        assert problem.goal is not None
        coords = realise(problem, np.random.default_rng(index), 50, check_goal=True).coords()
        moved = problem.goal.points[-1]
        # One of two orthogonal nudges must break it (a single one may slide along the goal's locus).
        verdicts = []
        for step in (np.array([1e-3, -2e-3]), np.array([2e-3, 1e-3])):
            nudged = {**coords, moved: coords[moved] + step}
            verdicts.append(holds(problem.goal, nudged))
        assert not all(verdicts), problem.name


def test_construction_facts_hold() -> None:
    problem = parse_problem(
        "a b c = triangle a b c; m = midpoint m b c; h = foot h a b c; d = on_pline d a b c, on_tline d c b c"
    )
    d = realise(problem, np.random.default_rng(3), 20)
    assert d.holds(Midpoint.of("m", "b", "c"))
    assert d.holds(Perpendicular.of("a", "h", "b", "c"))
    assert d.holds(Collinear.of("b", "c", "h"))
    assert d.holds(Parallel.of("a", "d", "b", "c"))
    assert not d.holds(EqualLength.of("a", "b", "a", "c"))


def test_same_seed_same_diagram(data_dir: Path) -> None:
    problem = load_problems(data_dir / "imo_sample.txt")[0]
    first = realise(problem, np.random.default_rng(7), 20)
    assert first == realise(problem, np.random.default_rng(7), 20)
    assert first != realise(problem, np.random.default_rng(8), 20)


def test_impossible_construction_fails_after_the_budget() -> None:
    # Circles about a and b through the midpoint c touch only at c, which already exists.
    problem = parse_problem("a b = segment a b; c = midpoint c a b; d = on_circle d a c, on_circle d b c")
    with pytest.raises(ConstructionFailed, match="after 7 attempts") as info:
        realise(problem, np.random.default_rng(0), 7)
    assert info.value.attempts == 7
    assert info.value.clause == "d = on_circle d a c, on_circle d b c"


@pytest.mark.parametrize(
    ("line", "clause", "reason"),
    [
        # Two different points forced to be one: the second midpoint of a b is the first.
        (
            "a b = segment a b; c = midpoint c a b; d = midpoint d a b",
            "d = midpoint d a b",
            "d coincides with an existing point",
        ),
        # Circles of radius |a b| / 3 about a and about b are disjoint.
        (
            "a b = segment a b; c d = trisegment c d a b; e = on_circle e a c, on_circle e b d",
            "e = on_circle e a c, on_circle e b d",
            "the loci of e (circle and circle) do not meet",
        ),
        # Line a b and the median from c meet only at the midpoint d, which exists already.
        (
            "a b c = triangle a b c; d = midpoint d a b; e = on_line e a b, on_line e c d",
            "e = on_line e a b, on_line e c d",
            "the loci of e (line and line) meet only at existing points",
        ),
        (
            "a b c = triangle a b c; d = on_line d a b, on_line d b a",
            "d = on_line d a b, on_line d b a",
            "lines coincide",
        ),
        (
            "a b c = triangle a b c; d = on_pline d c a b, on_line d a b",
            "d = on_pline d c a b, on_line d a b",
            "parallel lines do not meet",
        ),
        # A precondition that fails on every diagram: the foot from a point of the line itself.
        ("a b = segment a b; c = midpoint c a b; d = foot d c a b", "d = foot d c a b", "precondition ncoll"),
    ],
)
def test_impossible_constructions_name_the_clause_and_why(line: str, clause: str, reason: str) -> None:
    with pytest.raises(ConstructionFailed, match=re.escape(reason)) as info:
        realise(parse_problem(line), np.random.default_rng(0), 5)
    assert info.value.clause == clause
    assert f"at clause {clause!r}" in str(info.value)
    assert "\n" not in str(info.value)


def test_a_sketch_that_fails_numerically_fails_the_attempt(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(points: object, numbers: object, rng: object) -> tuple[()]:
        raise ZeroDivisionError("float division by zero")

    monkeypatch.setitem(SKETCHES, "midp", broken)
    with pytest.raises(ConstructionFailed, match="sketch midp failed numerically") as info:
        realise(parse_problem("a b = segment a b; c = midpoint c a b"), np.random.default_rng(0), 3)
    assert info.value.clause == "c = midpoint c a b"


def test_a_construction_missing_from_the_definitions_is_named() -> None:
    problem = parse_problem("a b = segment a b; c = midpoint c a b")
    definitions = {k: v for k, v in default_definitions().items() if k != "midpoint"}
    with pytest.raises(UnknownConstructionError, match="'midpoint'") as info:
        realise(problem, np.random.default_rng(0), 3, definitions=definitions)
    assert info.value.clause == "c = midpoint c a b"


def test_goal_that_never_holds_exhausts_attempts() -> None:
    problem = parse_problem("a b c = triangle a b c; m = midpoint m a b ? perp a b c m")
    with pytest.raises(ConstructionFailed, match="goal perp") as info:
        realise(problem, np.random.default_rng(0), 5, check_goal=True)
    assert info.value.attempts == 5
    assert realise(problem, np.random.default_rng(0), 5).attempts == 1


def test_attempt_budget_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_attempts"):
        realise(parse_problem("a b = segment a b"), np.random.default_rng(0), 0)


def test_positions_are_used() -> None:
    problem = parse_problem("a@1_2 b@3_-1 = segment a b; c = midpoint c a b")
    d = realise(problem, np.random.default_rng(0), 3)
    assert d.points["a"] == (1.0, 2.0)
    assert d.points["c"] == pytest.approx((2.0, 0.5))


def test_renaming_points_keeps_the_diagram(data_dir: Path) -> None:
    rnd = random.Random(5)
    for index, problem in enumerate(load_problems(data_dir / "constructions_sample.txt")):
        names = list(problem.points)
        shuffled = names[:]
        rnd.shuffle(shuffled)
        mapping = {old: f"q{new}" for old, new in zip(names, shuffled, strict=True)}
        renamed = problem.renamed(mapping)
        d1 = realise(problem, np.random.default_rng(index), 50, check_goal=True)
        d2 = realise(renamed, np.random.default_rng(index), 50, check_goal=True)
        assert d2.points == {mapping[k]: v for k, v in d1.points.items()}


def test_diagram_round_trips_through_json() -> None:
    d = realise(parse_problem("a b c = triangle a b c"), np.random.default_rng(1), 3)
    assert Diagram.model_validate_json(d.model_dump_json()) == d


@pytest.mark.slow
@pytest.mark.parametrize("name", ["jgex_ag_231.txt", "imo_ag_30.txt"])
def test_every_benchmark_problem_realises_with_its_goal(alphageometry_dir: Path, name: str) -> None:
    problems = load_problems(alphageometry_dir / name)
    failed = []
    for index, problem in enumerate(problems):
        try:
            diagram = realise(problem, np.random.default_rng(index), 100, check_goal=True)
        except ConstructionFailed as err:
            failed.append(f"{problem.name}: {err}")
            continue
        assert problem.goal is not None and diagram.holds(problem.goal)
    assert not failed
