"""Trapezoids in the formal literal language: a cut across both legs in one ratio, isosceles trapezoids."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from geosynth.calc import parse_record, solve_calc

Node = dict[str, Any]


def _length(a: str, b: str) -> Node:
    return {"qty": "length", "points": [a, b]}


def _equals(lhs: Node, rhs: Node) -> Node:
    return {"op": "-", "args": [lhs, rhs]}


def _num(value: float) -> Node:
    return {"num": str(value)}


def _cross(a: tuple[float, float], b: tuple[float, float], p: tuple[float, float]) -> float:
    return (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])


def _sides(coords: dict[str, tuple[float, float]]) -> list[Node]:
    """The diagram's SameSide / OppositeSide facts, read off the coordinates (every line of two points)."""
    facts: list[Node] = []
    for a, b in itertools.combinations(sorted(coords), 2):
        sign = {p: _cross(coords[a], coords[b], coords[p]) for p in coords}
        off = [p for p in sorted(coords) if abs(sign[p]) > 1e-9]
        for p, q in itertools.combinations(off, 2):
            same = sign[p] * sign[q] > 0
            facts.append({"rel": "SameSide" if same else "OppositeSide", "args": [p, q, a, b]})
    return facts


def _cut_record(conditions: list[Node], goal: Node, along: float) -> Node:
    # R S on the long base, V T on the short one; X on leg RV and Y on leg ST, the fraction ``along`` of the way
    coords = {"R": (0.0, 0.0), "S": (6.0, 0.0), "T": (4.5, 3.0), "V": (1.5, 3.0)}
    coords["X"] = (1.5 * along, 3 * along)
    coords["Y"] = (6 - 1.5 * along, 3 * along)
    return {
        "id": "built",
        "conditions": [
            {"rel": "Between", "args": ["X", "R", "V"]},
            {"rel": "Between", "args": ["Y", "S", "T"]},
            {"rel": "Parallel", "args": ["R", "S", "V", "T"]},
            _equals(_length("R", "S"), _num(6)),
            _equals(_length("V", "T"), _num(3)),
            *conditions,
        ],
        "diagrammatic_relations": _sides(coords),
        "goal": goal,
    }


def test_a_cut_in_one_ratio_across_both_legs_is_the_weighted_mean_of_the_bases() -> None:
    record = _cut_record(
        [
            _equals(_length("R", "X"), {"op": "*", "args": [_num(2), _length("X", "V")]}),
            _equals(_length("S", "Y"), {"op": "*", "args": [_num(2), _length("Y", "T")]}),
        ],
        _length("X", "Y"),
        2 / 3,
    )
    solution = solve_calc(parse_record(record), time_limit=30)
    assert solution.answer == pytest.approx(4)  # (1/3)·6 + (2/3)·3
    assert any(step.rule == "parallel cut" for step in solution.steps)


def test_midpoints_found_from_equal_halves_give_the_midsegment() -> None:
    record = _cut_record(
        [_equals(_length("R", "X"), _length("X", "V")), _equals(_length("S", "Y"), _length("Y", "T"))],
        _length("X", "Y"),
        1 / 2,
    )
    assert solve_calc(parse_record(record), time_limit=30).answer == pytest.approx(4.5)


def test_cuts_in_different_ratios_give_nothing() -> None:
    record = _cut_record(
        [
            _equals(_length("R", "X"), {"op": "*", "args": [_num(2), _length("X", "V")]}),
            _equals(_length("S", "Y"), _length("Y", "T")),
        ],
        _length("X", "Y"),
        2 / 3,  # where X lies; Y is drawn at the same height, though the givens put it elsewhere
    )
    assert solve_calc(parse_record(record), time_limit=30).answer is None


def test_a_trapezoid_with_equal_legs_has_equal_base_angles() -> None:
    # ABCD with AB ∥ CD, AB = 14, CD = 8, AD = BC; E the foot of the height from D, ∠ADE = 45°:
    # the base angles at A and B are equal, which fixes AD = 3√2 and the height DE = 3
    record = {
        "id": "built",
        "conditions": [
            _equals(_length("A", "B"), _num(14)),
            _equals(_length("C", "D"), _num(8)),
            _equals({"qty": "angle", "points": ["A", "D", "E"]}, {"num": "45/180*pi"}),
            {"rel": "Between", "args": ["E", "A", "B"]},
            {"rel": "Perpendicular", "args": ["A", "E", "D", "E"]},
            _equals(_length("A", "D"), _length("B", "C")),
            {"rel": "Trapezoid", "args": ["A", "B", "C", "D"]},
        ],
        "diagrammatic_relations": [],
        "goal": {"qty": "area", "points": ["A", "B", "C", "D"]},
    }
    solution = solve_calc(parse_record(record), time_limit=30)
    assert solution.answer == pytest.approx(33)  # (14 + 8) / 2 · 3
    assert any(step.rule == "isosceles trapezoid" for step in solution.steps)
