"""Minimal supports of chased facts: L0 (MILP) and L1 (LP) in SCIP, verified exactly, used in proofs."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from geosynth import (
    Collinear,
    EqualLineAngles,
    Parallel,
    deduce,
    load_problems,
    parse_problem,
    realise,
    relation_text,
    solve_one,
)
from geosynth.engine import ANGLE_RULE, DEG, proof_data, replay, trace_proof
from geosynth.engine.proofs.support import (
    EXACT_FACTS,
    METHODS,
    Row,
    class_premises,
    implies,
    minimal_support,
    solve_support,
)

F = Fraction


def _row(sources: set[int], **terms: int) -> Row:
    return Row({name: F(value) for name, value in terms.items()}, frozenset(sources))


# x = y (0), y = z (1): two facts; x = a, a = b, b = z (2, 3, 4): three; x + q = 0 (5): a distractor.
CHAIN = [
    _row({0}, x=1, y=-1),
    _row({1}, y=1, z=-1),
    _row({2}, x=1, a=-1),
    _row({3}, a=1, b=-1),
    _row({4}, b=1, z=-1),
    _row({5}, x=1, q=1),
]


@pytest.mark.parametrize("method", METHODS)
def test_the_shortest_combination_is_found_and_verified(method: str) -> None:
    support = minimal_support([{"x": F(1), "z": F(-1)}], CHAIN, frozenset(), None, method)  # type: ignore[arg-type]
    assert support.sources == {0, 1} and support.verified and support.minimised


def test_l0_counts_facts_not_rows() -> None:
    # Fact 7 gives two rows (a midpoint gives two equations), fact 8 one row: one fact beats two.
    rows = [_row({7}, x=1, y=-1), _row({7}, y=1, z=-1), _row({8}, x=1, w=-1), _row({9}, w=1, z=-1)]
    support = minimal_support([{"x": F(1), "z": F(-1)}], rows, frozenset(), None, "l0")
    assert support.sources == {7}


def test_a_row_needing_several_facts_costs_all_of_them() -> None:
    # Row A needs facts {1, 2, 3} (a parallel cut and its two collinearities); rows B and C one each.
    rows = [_row({1, 2, 3}, x=1, z=-1), _row({4}, x=1, y=-1), _row({5}, y=1, z=-1)]
    support = minimal_support([{"x": F(1), "z": F(-1)}], rows, frozenset(), None, "l0")
    assert support.sources == {4, 5}


def test_angle_constants_count_modulo_180_and_ratio_constants_exactly() -> None:
    units = frozenset({DEG})
    # x - y = 90 and y - z = 90 give x - z = 180: the lifted target; row 2 (x - z = 30) does not.
    rows = [_row({0}, x=1, y=-1, deg=-90), _row({1}, y=1, z=-1, deg=-90), _row({2}, x=1, z=-1, deg=-30)]
    support = minimal_support([{"x": F(1), "z": F(-1), DEG: F(-180)}], rows, units, F(180), "l0")
    assert support.verified and support.sources == {0, 1}
    # Read modulo 180, x - z = 180 is x - z = 0.
    assert implies([{"x": F(1), "z": F(-1)}], rows[:2], units, F(180))
    assert not implies([{"x": F(1), "z": F(-1)}], rows[2:], units, F(180))
    # log|ab| - log|cd| = log 2 is not log|ab| = log|cd|.
    log2 = ("log", 2)
    ratio = [Row({"ab": F(1), "cd": F(-1), log2: F(-1)}, frozenset({0}))]
    assert not implies([{"ab": F(1), "cd": F(-1)}], ratio, {log2}, None)
    assert implies([{"ab": F(1), "cd": F(-1), log2: F(-1)}], ratio, {log2}, None)


def test_small_candidate_sets_get_the_solvers_optimum_without_it() -> None:
    # Random chains over five symbols: the subset search (up to EXACT_FACTS facts) keeps as few facts as
    # SCIP's MILP does, and one fact more than that limit still goes to SCIP and verifies.
    rng = np.random.default_rng(7)
    symbols = ["s0", "s1", "s2", "s3", "s4"]
    compared = 0
    for _ in range(40):
        count = int(rng.integers(2, EXACT_FACTS + 1))
        rows = []
        for fact in range(count):
            a, b = rng.choice(len(symbols), size=2, replace=False)
            needs = {fact, fact + 1} if rng.random() < 0.2 else {fact}  # some rows need two facts
            rows.append(_row(needs, **{symbols[a]: 1, symbols[b]: -1}))
        target: list[Mapping[Hashable, Fraction]] = [{"s0": F(1), "s1": F(-1)}]
        exact = minimal_support(target, rows, frozenset(), None, "l0")
        if not exact.verified:
            continue
        solver = solve_support(target, rows, "l0")
        assert solver is not None and len(exact.sources) == len(solver)
        assert implies(target, [r for r in rows if r.sources <= exact.sources], frozenset(), None)
        compared += 1
    assert compared >= 10
    wide = [*CHAIN, *(_row({10 + k}, x=1, q=k) for k in range(EXACT_FACTS))]
    assert minimal_support([{"x": F(1), "z": F(-1)}], wide, frozenset(), None, "l0").sources == {0, 1}


def test_a_target_the_rows_do_not_imply_falls_back_to_every_candidate() -> None:
    support = minimal_support([{"x": F(1), "q": F(-1)}], CHAIN[:2], frozenset(), None, "l0")
    assert not support.verified and not support.minimised and support.sources == {0, 1}


def test_collinearities_joining_the_lines_a_step_names_are_added() -> None:
    # a d ∥ c e and c e ∥ b f, with a, b, d and b, d, f on one line through two collinearities.
    related = [Parallel.of("a", "d", "c", "e"), Parallel.of("c", "e", "b", "f")]
    pool = [Collinear.of("a", "b", "d"), Collinear.of("x", "y", "z"), Collinear.of("b", "d", "f")]
    goal = Parallel.of("a", "b", "d", "f")  # names the line by two more pairs
    added = class_premises([goal, *related], pool)
    assert sorted(map(relation_text, added)) == ["coll a b d", "coll b d f"]
    assert class_premises([EqualLineAngles.of("a", "b", "c", "d", "e", "f", "g", "h")], pool) == []


def test_minimised_proofs_need_no_more_premises_and_still_replay(data_dir: Path) -> None:
    problems = load_problems(data_dir / "jgex_sample.txt")[:3]
    problems.append(
        parse_problem(
            "a b c = triangle a b c; d = on_tline d a a b; e = on_tline e a a c ? eqangle a d a e a b a c"
        )
    )
    chased = 0
    for problem in problems:
        _, deduction = solve_one(problem, time_limit=30, support=None)
        assert deduction.proved, problem.name
        for method in METHODS:
            traced = trace_proof(problem, deduction, method)
            assert all(r.after <= r.before for r in traced.supports)
            chased += len(traced.supports)
            assert replay(proof_data(problem, traced.steps)).ok, (problem.name, method)
    assert chased > 0
    # Without rules, the rotated angle is pure angle chasing from exactly its two perpendicular givens.
    rotated = problems[-1]
    deduction = deduce(rotated, realise(rotated, np.random.default_rng(0), 50, check_goal=True), rules=())
    last = trace_proof(rotated, deduction, "l0").steps[-1]
    assert last.rule == ANGLE_RULE and len(last.premises) == 2
