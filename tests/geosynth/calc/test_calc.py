"""The calculation solver on committed formal Geometry3K records and on problems built in code."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import sympy

from geosynth.calc import (
    CalcFormatError,
    CalcProblem,
    Equation,
    Num,
    Op,
    dump_problem,
    is_calc_source,
    load_calc_problems,
    parse_record,
    solve_calc,
    solve_calc_all,
)
from geosynth.engine import Angle, Between, Length, Perpendicular, SolveResult

DATA = Path(__file__).resolve().parents[1] / "data" / "g3k"
FAST = ["2401", "2402", "2410", "2426", "2430", "2463", "2523", "2532", "2616", "2704"]
SLOW = [
    "2412",
    "2415",
    "2461",
    "2471",
    "2473",
    "2496",
    "2594",
    "2623",
    "2632",
    "2695",
    "2736",
    "2871",
    "2406",
]


def _load(record_id: str) -> CalcProblem:
    return load_calc_problems(DATA / f"{record_id}.json")[0]


def _truth(problem: CalcProblem) -> float:
    assert problem.answer is not None
    value = float(sympy.N(sympy.sympify(problem.answer)))
    return math.degrees(value) if isinstance(problem.goal, Angle) else value


def _check_answer(record_id: str) -> None:
    problem = _load(record_id)
    solution = solve_calc(problem, time_limit=60)
    assert solution.answer is not None, f"{record_id} unanswered"
    assert solution.answer == pytest.approx(_truth(problem), rel=0.02)


@pytest.mark.parametrize("record_id", FAST)
def test_answers_match_ground_truth(record_id: str) -> None:
    _check_answer(record_id)


@pytest.mark.slow
@pytest.mark.parametrize("record_id", SLOW)
def test_more_answers_match_ground_truth(record_id: str) -> None:
    _check_answer(record_id)


def test_every_fixture_round_trips_through_our_format(tmp_path: Path) -> None:
    problems = load_calc_problems(DATA)
    assert len(problems) == len(list(DATA.glob("*.json")))
    for problem in problems:
        assert parse_record(json.loads(dump_problem(problem))) == problem
    jsonl = tmp_path / "all.jsonl"
    jsonl.write_text("".join(dump_problem(p) + "\n" for p in problems), encoding="utf-8")
    assert load_calc_problems(jsonl) == problems
    assert is_calc_source(jsonl) and is_calc_source(DATA) and is_calc_source(DATA / "2401.json")
    assert not is_calc_source(tmp_path / "missing.json")


def test_geometry3k_between_puts_the_first_point_in_the_middle() -> None:
    problem = _load("2401")  # Between(D, A, C): D lies between A and C
    betweens = [c.points for c in problem.conditions if isinstance(c, Between)]
    assert betweens == [("A", "D", "C")]


def test_malformed_records_name_the_record_and_field(tmp_path: Path) -> None:
    record = json.loads((DATA / "2401.json").read_text(encoding="utf-8"))
    record["conditions"][1] = {"rel": "Frobnicate", "args": ["A", "B"]}
    with pytest.raises(CalcFormatError, match=r"record 2401: field 'conditions\[1\]': unknown relation"):
        parse_record(record)
    record = json.loads((DATA / "2401.json").read_text(encoding="utf-8"))
    record["goal"] = {"qty": "length", "points": ["A", "A"]}
    with pytest.raises(CalcFormatError, match=r"record 2401: field 'goal'"):
        parse_record(record)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "x", "conditions": [], "goal": {"kind": "nope"}}\n', encoding="utf-8")
    with pytest.raises(CalcFormatError, match="record x: field 'goal'"):
        load_calc_problems(broken)
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("{not json", encoding="utf-8")
    with pytest.raises(CalcFormatError, match=r"record bad\.json: field 'record': invalid JSON"):
        load_calc_problems(bad_json)


def _renamed_record(record_id: str, mapping: dict[str, str]) -> CalcProblem:
    """The Geometry3K record with its points renamed (points and args lists rewritten)."""

    def walk(node: object) -> object:
        if isinstance(node, dict):
            return {
                k: [mapping.get(p, p) for p in v] if k in ("points", "args") and _names(v) else walk(v)
                for k, v in node.items()
            }
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    record = walk(json.loads((DATA / f"{record_id}.json").read_text(encoding="utf-8")))
    return parse_record(record)


def _names(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


@pytest.mark.parametrize("record_id", ["2402", "2430"])
def test_renaming_points_keeps_the_answer(record_id: str) -> None:
    problem = _load(record_id)
    names = sorted({p for c in problem.conditions for p in getattr(c, "points", ())})
    mapping = {p: f"P{len(names) - i:02d}" for i, p in enumerate(names)}  # reverses the alphabetical order
    renamed = _renamed_record(record_id, mapping)
    assert renamed != problem
    before = solve_calc(problem, time_limit=60).answer
    after = solve_calc(renamed, time_limit=60).answer
    assert before is not None and after == pytest.approx(before, rel=1e-6)


def test_steps_are_traced_in_post_order() -> None:
    solution = solve_calc(_load("2463"), time_limit=60)
    assert solution.steps, "no steps"
    for index, step in enumerate(solution.steps, 1):
        assert step.number == index
        assert all(p < step.number for p in step.premises)
    goal = solution.steps[-1]
    assert goal.rule == "goal" and goal.value == pytest.approx(solution.answer)
    rules = {s.rule for s in solution.steps}
    assert "given" in rules and "similar triangles" in rules
    used = {p for s in solution.steps for p in s.premises}
    assert all(s.number in used for s in solution.steps[:-1])  # only steps the goal needs


def _right_triangle(goal: Length | Angle) -> CalcProblem:
    return CalcProblem(
        id="built",
        conditions=(
            Equation(expr=Op(op="-", args=(Length.of("A", "B"), Num(text="3")))),
            Equation(expr=Op(op="-", args=(Length.of("B", "C"), Num(text="4")))),
            Perpendicular.of("A", "B", "B", "C"),
        ),
        goal=goal,
    )


def test_a_problem_built_in_code_is_solved_with_pythagoras() -> None:
    solution = solve_calc(_right_triangle(Length.of("A", "C")))
    assert solution.answer == pytest.approx(5.0)
    assert solution.steps[-1].statement == "AC = 5"
    assert any(s.statement == "∠ABC = 90°" for s in solution.steps)


def test_angle_goals_are_answered_in_degrees() -> None:
    solution = solve_calc(_right_triangle(Angle.of("B", "A", "C")))
    assert solution.answer == pytest.approx(math.degrees(math.atan2(4, 3)))


def test_an_unsolvable_goal_has_no_answer_and_no_steps() -> None:
    problem = _right_triangle(Length.of("C", "D"))
    solution = solve_calc(problem)
    assert solution.answer is None and solution.steps == ()


def test_solve_calc_all_reports_results_in_order() -> None:
    problems = [_load("2401"), _right_triangle(Length.of("A", "C"))]
    results = list(solve_calc_all(problems, timeout=60, jobs=2))
    assert [r.name for r in results] == ["2401", "built"]
    assert all(isinstance(r, SolveResult) and r.solved for r in results)
    assert results[0].answer == pytest.approx(60) and results[1].steps >= 2
