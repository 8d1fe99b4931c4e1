"""The algebraic system: exact elimination, angle and ratio chasing fed back to deduction, traced proofs."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from geosynth import (
    EqualRatios,
    deduce,
    format_proof,
    load_problems,
    parse_problem,
    proof_steps,
    realise,
    solve_one,
)
from geosynth.engine import ANGLE_RULE, RATIO_RULE, LinearSystem
from geosynth.engine.algebra import chasing
from geosynth.engine.algebra.chasing import bisector_rows, build_systems, is_bisector, log_of
from geosynth.engine.algebra.elimination import difference, divide
from geosynth.engine.algebra.transversals import points_on_lines
from geosynth.engine.proofs.replay import premise_store

F = Fraction


def test_elimination_reads_off_equalities_with_their_sources() -> None:
    system = LinearSystem(frozenset({"deg"}))
    assert system.add({"x": F(1), "y": F(-1), "deg": F(-30)}, source=0)  # x - y = 30
    assert system.add({"y": F(1), "z": F(-1)}, source=1)  # y = z
    assert system.add({"w": F(1), "u": F(1)}, source=2)  # unrelated
    reduced = system.reduce({"x": F(1), "z": F(-1)})
    assert reduced.expr == {"deg": F(30)} and reduced.sources == {0, 1}
    assert not system.add({"x": F(1), "z": F(-1), "deg": F(-30)}, source=3)  # implied
    assert not system.add({"x": F(1), "z": F(-1)}, source=4)  # contradicts: ignored, recorded
    assert system.inconsistent == [4] and system.rank == 3
    # Units are constants: never a pivot, so a free variable stays free.
    assert system.reduce({"deg": F(1)}).expr == {"deg": F(1)}


def test_elimination_stays_exact_when_pivots_are_not_one() -> None:
    # 3x + 2y = 1 and 2x - 5y = 0 (int and Fraction coefficients mixed): x = 5/19, y = 2/19, exactly.
    system = LinearSystem(frozenset({"one"}))
    system.add({"x": 3, "y": F(2), "one": -1}, source=0)
    system.add({"x": F(2), "y": -5}, source=1)
    x, y = system.reduce({"x": 1}).expr, system.reduce({"y": F(1)}).expr
    assert x == {"one": F(5, 19)} and y == {"one": F(2, 19)}
    assert all(isinstance(c, int | F) for c in (*x.values(), *y.values()))  # never a float
    # A whole coefficient comes back as an int, equal to and hashing like the Fraction.
    whole = system.reduce({"x": 19, "y": F(-19, 2)}).expr
    assert whole == {"one": 4} and type(whole["one"]) is int and hash(whole["one"]) == hash(F(4))
    assert divide(1, 3) == F(1, 3) and divide(F(6), 3) == 2 and type(divide(F(6), 3)) is int


def test_reducing_a_difference_is_the_difference_of_the_reduced_forms() -> None:
    # The triangle and angle searches reduce each variable once and subtract: the forms and the rows
    # they rest on must be those of reducing the difference itself.
    rng = np.random.default_rng(3)
    names = [f"v{i}" for i in range(8)]
    system = LinearSystem(frozenset({"deg"}))
    for source in range(6):
        chosen = rng.choice(8, size=3, replace=False)
        expr = {names[int(i)]: F(int(rng.integers(-3, 4)) or 1, int(rng.integers(1, 4))) for i in chosen}
        system.add({**expr, "deg": F(int(rng.integers(-90, 90)))}, source)
    for x in names:
        for y in names:
            if x == y:
                continue
            whole = system.reduce({x: 1, y: -1})
            parts = difference(system.reduce({x: 1}), system.reduce({y: 1}))
            assert parts.expr == whole.expr and parts.sources == whole.sources


def test_logarithms_of_rationals_are_exact_over_primes() -> None:
    assert log_of(F(12, 5)) == {("log", 2): 2, ("log", 3): 1, ("log", 5): -1}
    assert log_of(F(1)) == {}
    assert log_of(F(1009)) == {("log", 1009): 1}


MIDLINES = "a b c = triangle a b c; d = midpoint d a b; e = midpoint e a c; f = midpoint f b c ? eqangle d e d f c b c a"


ROTATED = "a b c = triangle a b c; d = on_tline d a a b; e = on_tline e a a c ? eqangle a d a e a b a c"


def test_angle_chasing_proves_what_the_store_alone_cannot() -> None:
    problem = parse_problem(ROTATED)  # both arms turned by 90 degrees: the angle is unchanged
    diagram = realise(problem, np.random.default_rng(0), 50, check_goal=True)
    assert not deduce(problem, diagram, rules=(), algebra=False).proved
    result = deduce(problem, diagram, rules=())
    assert result.proved
    steps = proof_steps(problem, result)
    assert steps[-1].fact == problem.goal and steps[-1].rule == ANGLE_RULE
    used = [s for s in steps if s.rule == "given"]
    assert len(used) == 2 and {type(s.fact).__name__ for s in used} == {"Perpendicular"}


def test_ratio_chasing_proves_a_ratio_goal() -> None:
    problem = parse_problem(
        "a b c = triangle a b c; d = midpoint d a b; e = midpoint e a c ? eqratio a d a b a e a c"
    )
    diagram = realise(problem, np.random.default_rng(1), 50, check_goal=True)
    assert not deduce(problem, diagram, algebra=False).proved
    result = deduce(problem, diagram)
    assert result.proved
    last = result.derivations[-1]
    assert last.rule == RATIO_RULE and isinstance(last.fact, EqualRatios)
    assert len(last.premises) == 2  # the two midpoints


def test_parallel_cuts_give_proportional_segments() -> None:
    line = "a b c = triangle a b c; d = on_line d a b; e = on_pline e d b c, on_line e a c ? eqratio a d a b a e a c"
    problem = parse_problem(line)
    diagram = realise(problem, np.random.default_rng(0), 50, check_goal=True)
    assert not deduce(problem, diagram, rules=(), algebra=False).proved
    result = deduce(problem, diagram, rules=())  # no similarity rule: the parallel cut alone
    assert result.proved
    steps = proof_steps(problem, result)
    assert steps[-1].rule == RATIO_RULE
    assert "para b c d e" in format_proof(steps)


def test_angle_bisector_divides_the_opposite_side_in_ratio() -> None:
    problem = parse_problem(
        "a b c = triangle a b c; d = angle_bisector d b a c, on_line d b c ? eqratio d b d c a b a c"
    )
    diagram = realise(problem, np.random.default_rng(0), 50, check_goal=True)
    assert not deduce(problem, diagram, algebra=False).proved
    assert deduce(problem, diagram).proved


def test_bisector_rows_skip_only_rows_that_cannot_be_bisectors(monkeypatch: pytest.MonkeyPatch) -> None:
    # an internal bisector a d and an external one a e of the angle at a, both feet on b c
    problem = parse_problem(
        "a b c = triangle a b c; d = angle_bisector d b a c, on_line d b c; "
        "e = on_tline e a a d, on_line e b c ? eqratio e b e c a b a c"
    )
    diagram = realise(problem, np.random.default_rng(0), 50, check_goal=True)
    deduction = deduce(problem, diagram)
    assert deduction.proved
    facts = [*deduction.givens, *(d.fact for d in deduction.derivations)]
    points = sorted(diagram.points)
    coords = {k: np.array(v) for k, v in diagram.points.items()}

    def rows() -> tuple[int, set[tuple[str, str, str, str]]]:
        angles, _ = build_systems(premise_store(points, facts), coords, list(facts))
        found = list(bisector_rows(angles, points_on_lines(angles.store)))
        units = angles.system.units
        return len(found), {row[:4] for row in found if is_bisector(row[4], units)}

    kept, bisecting = rows()
    monkeypatch.setattr(chasing, "BISECTOR_SLACK", 180.0)  # reduce every row
    every, unfiltered = rows()
    assert bisecting == unfiltered
    assert {(a, d) for a, _, _, d in bisecting} >= {("a", "d"), ("a", "e")}
    assert kept < every


def test_false_goal_stays_unproved_with_algebra() -> None:
    problem = parse_problem("a b c = triangle a b c; d = midpoint d a b; e = midpoint e a c ? perp d e a b")
    diagram = realise(problem, np.random.default_rng(0), 50)
    assert not deduce(problem, diagram).proved


def test_proof_is_post_order_from_givens_to_the_goal() -> None:
    problem = parse_problem(MIDLINES)
    result, deduction = solve_one(problem, seed=3)
    steps = proof_steps(problem, deduction)
    assert result.solved and result.steps == len(steps)
    assert steps[-1].fact == problem.goal
    for step in steps:
        assert all(p < step.number for p in step.premises)
        assert (step.rule == "given") == (not step.premises)
    text = format_proof(steps)
    assert text.splitlines()[-1].startswith(f"{len(steps)}. eqangle") and "angle chasing from" in text


@pytest.mark.parametrize("index", [6, 13, 16])
def test_jgex_problems_needing_algebra_are_proved_soundly_and_name_free(data_dir: Path, index: int) -> None:
    problem = load_problems(data_dir / "jgex_sample.txt")[index]
    diagram = realise(problem, np.random.default_rng(index), 50, check_goal=True)
    result = deduce(problem, diagram)
    assert result.proved, problem.name
    other = realise(problem, np.random.default_rng(index + 700), 100, check_goal=True)
    assert all(other.holds(d.fact) for d in result.derivations)
    mapping = {p: f"q{(11 * i) % 37}" for i, p in enumerate(problem.points)}
    renamed = problem.renamed(mapping)
    again = deduce(renamed, realise(renamed, np.random.default_rng(index), 50, check_goal=True))
    assert again.proved
