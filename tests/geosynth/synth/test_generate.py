"""The generator: every record is re-solved by the engine; the same seed gives the same records."""

from __future__ import annotations

import math

import pytest

from geosynth.engine import Diagram, holds, parse_problem
from geosynth.synth import (
    SynthConfig,
    SynthRecord,
    check_record,
    generate,
    generate_one,
    load_config,
    record_seed,
)

CONFIG = load_config().model_copy(update={"time_limit": None})  # rounds only: no clock, so runs compare


def _diagram(record: SynthRecord) -> Diagram:
    return Diagram(points={p.name: (p.x, p.y) for p in record.points}, attempts=1)


@pytest.fixture(scope="module")
def proving() -> list[SynthRecord]:
    return list(generate(CONFIG, 3, seed=11, task="proving"))


@pytest.fixture(scope="module")
def calculation() -> list[SynthRecord]:
    return list(generate(CONFIG, 3, seed=11, task="calculation"))


def test_proving_records_are_reparsed_proved_and_hold_on_their_diagram(proving: list[SynthRecord]) -> None:
    assert [r.index for r in proving] == [0, 1, 2]
    for record in proving:
        problem = parse_problem(record.problem)
        assert problem.goal is not None and record.problem.endswith(f"? {record.goal}")
        assert holds(problem.goal, _diagram(record).coords())
        assert set(problem.points) == {p.name for p in record.points}
        assert record.goal_type in CONFIG.goals["proving"]
        assert record.answer is None and record.n_steps == len(record.solution) > 0
        assert record.solution[-1].split(". ", 1)[1].startswith(record.goal)
        assert check_record(record, CONFIG)


def test_calculation_answers_match_the_diagram(calculation: list[SynthRecord]) -> None:
    for record in calculation:
        assert check_record(record, CONFIG)
        coords = _diagram(record).coords()
        _, p, q, _, given = record.givens[0].split()
        unit = float(given) / math.dist(coords[p], coords[q])
        kind, *names = record.goal.split()
        assert record.answer_value is not None
        if kind == "length":
            assert math.isclose(math.dist(coords[names[0]], coords[names[1]]) * unit, record.answer_value)
        elif kind == "area":
            a, b, c = (coords[x] for x in names)
            area = abs((b[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (b[1] - a[1])) / 2
            assert math.isclose(area * unit**2, record.answer_value)
        else:
            assert kind in ("angle", "var")
            assert 0 < record.answer_value < 180 or kind == "var"


def test_a_wrong_answer_or_a_moved_goal_point_fails_the_check(
    proving: list[SynthRecord], calculation: list[SynthRecord]
) -> None:
    record = calculation[0]
    assert not check_record(record.model_copy(update={"answer": f"{record.answer}+1"}), CONFIG)
    record = proving[0]
    target = record.goal.split()[1]
    moved = tuple(p.model_copy(update={"x": p.x + 0.05}) if p.name == target else p for p in record.points)
    assert not check_record(record.model_copy(update={"points": moved}), CONFIG)


def test_same_seed_same_records_and_other_seed_differs(proving: list[SynthRecord]) -> None:
    assert generate_one(CONFIG, "proving", 11, 2) == proving[2]
    assert generate_one(CONFIG, "proving", 12, 2).problem != proving[2].problem


def test_record_seeds_depend_on_index_seed_and_task() -> None:
    seeds = {record_seed(0, i, "proving") for i in range(100)}
    assert len(seeds) == 100
    assert (
        record_seed(0, 5, "proving") != record_seed(0, 5, "calculation") != record_seed(1, 5, "calculation")
    )


def test_goal_weights_restrict_the_goal_types() -> None:
    only = CONFIG.model_copy(
        update={"goals": {"proving": {"perp": 1.0, "para": 1.0}, "calculation": {"length": 1.0}}}
    )
    assert generate_one(only, "proving", 3, 0).goal_type in {"perp", "para"}
    assert generate_one(only, "calculation", 3, 0).goal_type == "length"


def test_negative_count_is_rejected() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        list(generate(CONFIG, -1, seed=0))


def test_config_is_a_frozen_model() -> None:
    assert isinstance(CONFIG, SynthConfig)
    with pytest.raises(ValueError):
        CONFIG.max_points = 3


def test_calculation_questions_state_the_given_quantities(calculation: list[SynthRecord]) -> None:
    for record in calculation:
        if record.question is None:
            continue  # the text module is not installed
        _, p, q, _, length = record.givens[0].split()
        assert f"{p.upper()}{q.upper()} = {length}" in record.question


def test_given_sentence_and_its_place() -> None:
    from geosynth.synth._generate import _with_givens

    givens = ("length a b = 6", "angle a b c = x + 15")
    assert _with_givens("Let ABC be a triangle. Find x.", givens) == (
        "Let ABC be a triangle. Given AB = 6 and ∠ABC = x + 15°. Find x."
    )
    assert _with_givens("Find x.", givens[:1]) == "Given AB = 6. Find x."


def test_auxiliary_split_fields_are_consistent_when_asked_for() -> None:
    config = CONFIG.model_copy(update={"aux_split": True, "require_aux": False, "aux_time_limit": 5.0})
    record = generate_one(config, "proving", 11, 0)
    if record.aux_problem is None:
        assert record.aux_clauses is None
    else:
        assert record.aux_clauses and parse_problem(record.aux_problem).goal is not None
    assert record.problem == generate_one(CONFIG, "proving", 11, 0).problem


@pytest.mark.parametrize("strict", [False, True])
def test_the_auxiliary_split_fills_the_record_fields(strict: bool) -> None:
    import numpy as np

    from geosynth import proof_steps, realise, solve_one
    from geosynth.synth._generate import _aux_split
    from geosynth.synth._proving import ProvingProblem

    # JGEX L058-9 with the foot f that its proof needs (the engine fails without it)
    text = (
        "a b = segment a b; c = on_bline c a b; d = on_tline d b a b; e = intersection_lt e c d a a b; "
        "f = foot f d a e ? cong e c c d"
    )
    problem = parse_problem(text)
    result, deduction = solve_one(problem, time_limit=20)
    assert result.solved
    made = ProvingProblem(
        text=text, goal="cong e c c d", goal_type="cong",
        diagram=realise(problem, np.random.default_rng(0)), steps=tuple(proof_steps(problem, deduction)),
    )  # fmt: skip
    config = CONFIG.model_copy(update={"aux_split": True, "aux_strict": strict, "aux_time_limit": 10.0})
    fields = _aux_split(made, {"seed": 0}, config)
    assert fields is not None
    assert fields["aux_clauses"] == ("f = foot f d a e",) and fields["aux_engine_alone"] is False
    reduced = parse_problem(fields["aux_problem"])
    assert "f" not in reduced.points and reduced.goal == problem.goal
    assert _aux_split(made, {"seed": 0}, CONFIG) == {}  # no split asked for


def test_trivial_goals_are_recognised() -> None:
    from geosynth.engine import build_relation
    from geosynth.synth._proving import trivial

    assert trivial(build_relation("eqangle", tuple("abdedeab")))  # ∠(AB, DE) = ∠(DE, AB): a perp
    assert trivial(build_relation("eqangle", tuple("afbfefef")))  # a zero angle on one side
    assert trivial(build_relation("contri2", tuple("abcacb")))  # an isosceles triangle and its mirror
    assert not trivial(build_relation("eqangle", tuple("abacdedf")))
    assert not trivial(build_relation("simtri", tuple("abcdef")))
