"""Formal records whose goal names an angle by its vertex (``angle_H``): the angle at that point, in radians."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pytest

from geosynth.calc import parse_record, solve_calc

if TYPE_CHECKING:
    from .conftest import Formal


def test_a_vertex_with_two_rays_names_its_one_angle(formal: Formal) -> None:
    record = formal.record(
        [
            formal.equals(formal.angle("B", "A", "C"), formal.degrees(50)),
            formal.equals(formal.angle("A", "B", "C"), formal.degrees(60)),
        ],
        {"var": "angle_C"},
    )
    solution = solve_calc(parse_record(record), time_limit=30)
    assert solution.answer == pytest.approx(math.radians(70))
    assert any(step.rule == "angle name" for step in solution.steps)


def test_two_crossing_lines_name_the_angle_of_their_triangles(formal: Formal) -> None:
    # A-E-C and B-E-D cross at E; the triangles ABE and CDE have vertical angles at E
    conditions = [
        {"rel": "Between", "args": ["E", "A", "C"]},
        {"rel": "Between", "args": ["E", "B", "D"]},
        formal.equals(formal.angle("E", "A", "B"), formal.degrees(40)),
        formal.equals(formal.angle("A", "B", "E"), formal.degrees(65)),
        formal.equals(formal.angle("E", "C", "D"), formal.degrees(45)),
    ]
    solution = solve_calc(parse_record(formal.record(conditions, {"var": "angle_E"})), time_limit=30)
    assert solution.answer == pytest.approx(math.radians(75))


def test_a_vertex_with_different_triangle_angles_names_nothing(formal: Formal) -> None:
    # three rays from B: the triangles ABD and DBC have different angles at B
    conditions = [
        {"rel": "Between", "args": ["D", "A", "C"]},
        formal.equals(formal.angle("B", "A", "D"), formal.degrees(50)),
        formal.equals(formal.angle("B", "C", "D"), formal.degrees(60)),
        formal.equals(formal.angle("A", "D", "B"), formal.degrees(80)),
    ]
    solution = solve_calc(parse_record(formal.record(conditions, {"var": "angle_B"})), time_limit=30)
    assert solution.answer is None


def test_a_variable_a_given_ties_to_the_figure_keeps_that_meaning(formal: Formal) -> None:
    # angle_C is stated to be ∠BAC here, so it is not read as the angle at C
    conditions = [
        formal.equals(formal.angle("B", "A", "C"), {"var": "angle_C"}),
        formal.equals(formal.angle("B", "A", "C"), formal.degrees(50)),
        formal.equals(formal.angle("A", "B", "C"), formal.degrees(60)),
    ]
    solution = solve_calc(parse_record(formal.record(conditions, {"var": "angle_C"})), time_limit=30)
    assert solution.answer == pytest.approx(math.radians(50))
    assert all(step.rule != "angle name" for step in solution.steps)
