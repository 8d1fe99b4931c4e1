"""Formal records whose goal names an angle by its vertex (``angle_H``): the angle at that point, in radians."""

from __future__ import annotations

import math
from typing import Any

import pytest

from geosynth.calc import parse_record, solve_calc

Node = dict[str, Any]


def _angle(a: str, b: str, c: str) -> Node:
    return {"qty": "angle", "points": [a, b, c]}


def _equals(lhs: Node, rhs: Node) -> Node:
    return {"op": "-", "args": [lhs, rhs]}


def _degrees(value: float) -> Node:
    return {"num": f"{value}/180*pi"}


def _record(conditions: list[Node], goal: Node) -> Node:
    return {"id": "built", "conditions": conditions, "diagrammatic_relations": [], "goal": goal}


def test_a_vertex_with_two_rays_names_its_one_angle() -> None:
    record = _record(
        [_equals(_angle("B", "A", "C"), _degrees(50)), _equals(_angle("A", "B", "C"), _degrees(60))],
        {"var": "angle_C"},
    )
    solution = solve_calc(parse_record(record), time_limit=30)
    assert solution.answer == pytest.approx(math.radians(70))
    assert any(step.rule == "angle name" for step in solution.steps)


def test_two_crossing_lines_name_the_angle_of_their_triangles() -> None:
    # A-E-C and B-E-D cross at E; the triangles ABE and CDE have vertical angles at E
    conditions = [
        {"rel": "Between", "args": ["E", "A", "C"]},
        {"rel": "Between", "args": ["E", "B", "D"]},
        _equals(_angle("E", "A", "B"), _degrees(40)),
        _equals(_angle("A", "B", "E"), _degrees(65)),
        _equals(_angle("E", "C", "D"), _degrees(45)),
    ]
    solution = solve_calc(parse_record(_record(conditions, {"var": "angle_E"})), time_limit=30)
    assert solution.answer == pytest.approx(math.radians(75))


def test_a_vertex_with_different_triangle_angles_names_nothing() -> None:
    # three rays from B: the triangles ABD and DBC have different angles at B
    conditions = [
        {"rel": "Between", "args": ["D", "A", "C"]},
        _equals(_angle("B", "A", "D"), _degrees(50)),
        _equals(_angle("B", "C", "D"), _degrees(60)),
        _equals(_angle("A", "D", "B"), _degrees(80)),
    ]
    solution = solve_calc(parse_record(_record(conditions, {"var": "angle_B"})), time_limit=30)
    assert solution.answer is None


def test_a_variable_a_given_ties_to_the_figure_keeps_that_meaning() -> None:
    # angle_C is stated to be ∠BAC here, so it is not read as the angle at C
    conditions = [
        _equals(_angle("B", "A", "C"), {"var": "angle_C"}),
        _equals(_angle("B", "A", "C"), _degrees(50)),
        _equals(_angle("A", "B", "C"), _degrees(60)),
    ]
    solution = solve_calc(parse_record(_record(conditions, {"var": "angle_C"})), time_limit=30)
    assert solution.answer == pytest.approx(math.radians(50))
    assert all(step.rule != "angle name" for step in solution.steps)
