"""Trapezoids in the formal literal language: a cut across both legs in one ratio, isosceles trapezoids."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from geosynth.calc import parse_record, solve_calc

if TYPE_CHECKING:
    from .conftest import Formal, Node


def _cut_record(formal: Formal, conditions: list[Node], goal: Node, along: float) -> Node:
    # R S on the long base, V T on the short one; X on leg RV and Y on leg ST, the fraction ``along`` of the way
    coords = {"R": (0.0, 0.0), "S": (6.0, 0.0), "T": (4.5, 3.0), "V": (1.5, 3.0)}
    coords["X"] = (1.5 * along, 3 * along)
    coords["Y"] = (6 - 1.5 * along, 3 * along)
    return formal.record(
        [
            {"rel": "Between", "args": ["X", "R", "V"]},
            {"rel": "Between", "args": ["Y", "S", "T"]},
            {"rel": "Parallel", "args": ["R", "S", "V", "T"]},
            formal.equals(formal.length("R", "S"), formal.num(6)),
            formal.equals(formal.length("V", "T"), formal.num(3)),
            *conditions,
        ],
        goal,
        formal.sides(coords),
    )


def test_a_cut_in_one_ratio_across_both_legs_is_the_weighted_mean_of_the_bases(formal: Formal) -> None:
    record = _cut_record(
        formal,
        [
            formal.equals(
                formal.length("R", "X"), {"op": "*", "args": [formal.num(2), formal.length("X", "V")]}
            ),
            formal.equals(
                formal.length("S", "Y"), {"op": "*", "args": [formal.num(2), formal.length("Y", "T")]}
            ),
        ],
        formal.length("X", "Y"),
        2 / 3,
    )
    solution = solve_calc(parse_record(record), time_limit=30)
    assert solution.answer == pytest.approx(4)  # (1/3)·6 + (2/3)·3
    assert any(step.rule == "parallel cut" for step in solution.steps)


def test_midpoints_found_from_equal_halves_give_the_midsegment(formal: Formal) -> None:
    record = _cut_record(
        formal,
        [
            formal.equals(formal.length("R", "X"), formal.length("X", "V")),
            formal.equals(formal.length("S", "Y"), formal.length("Y", "T")),
        ],
        formal.length("X", "Y"),
        1 / 2,
    )
    assert solve_calc(parse_record(record), time_limit=30).answer == pytest.approx(4.5)


def test_cuts_in_different_ratios_give_nothing(formal: Formal) -> None:
    record = _cut_record(
        formal,
        [
            formal.equals(
                formal.length("R", "X"), {"op": "*", "args": [formal.num(2), formal.length("X", "V")]}
            ),
            formal.equals(formal.length("S", "Y"), formal.length("Y", "T")),
        ],
        formal.length("X", "Y"),
        2 / 3,  # where X lies; Y is drawn at the same height, though the givens put it elsewhere
    )
    assert solve_calc(parse_record(record), time_limit=30).answer is None


def test_a_trapezoid_with_equal_legs_has_equal_base_angles(formal: Formal) -> None:
    # ABCD with AB ∥ CD, AB = 14, CD = 8, AD = BC; E the foot of the height from D, ∠ADE = 45°:
    # the base angles at A and B are equal, which fixes AD = 3√2 and the height DE = 3
    record = formal.record(
        [
            formal.equals(formal.length("A", "B"), formal.num(14)),
            formal.equals(formal.length("C", "D"), formal.num(8)),
            formal.equals(formal.angle("A", "D", "E"), formal.degrees(45)),
            {"rel": "Between", "args": ["E", "A", "B"]},
            {"rel": "Perpendicular", "args": ["A", "E", "D", "E"]},
            formal.equals(formal.length("A", "D"), formal.length("B", "C")),
            {"rel": "Trapezoid", "args": ["A", "B", "C", "D"]},
        ],
        {"qty": "area", "points": ["A", "B", "C", "D"]},
    )
    solution = solve_calc(parse_record(record), time_limit=30)
    assert solution.answer == pytest.approx(33)  # (14 + 8) / 2 · 3
    assert any(step.rule == "isosceles trapezoid" for step in solution.steps)
