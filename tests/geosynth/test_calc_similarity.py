"""Similar triangles by SAS: an equal angle between proportional sides, the ratio given as a formal equation."""

from __future__ import annotations

from typing import Any

import pytest

from geosynth.calc import parse_record, solve_calc

Node = dict[str, Any]


def _length(a: str, b: str) -> Node:
    return {"qty": "length", "points": [a, b]}


def _angle(a: str, b: str, c: str) -> Node:
    return {"qty": "angle", "points": [a, b, c]}


def _equals(lhs: Node, rhs: Node) -> Node:
    return {"op": "-", "args": [lhs, rhs]}


def _ratio(a: Node, b: Node) -> Node:
    return {"op": "/", "args": [a, b]}


def _crossing(extra: list[Node]) -> Node:
    """H-J-X and I-J-Y cross at J; ∠JXY = 50°; the goal ∠JIH (its segment HI drawn by the goal)."""
    return {
        "id": "built",
        "conditions": [
            {"rel": "Between", "args": ["J", "H", "X"]},
            {"rel": "Between", "args": ["J", "I", "Y"]},
            _equals(_angle("J", "X", "Y"), {"num": "50/180*pi"}),
            *extra,
        ],
        "diagrammatic_relations": [],
        "goal": _angle("J", "I", "H"),
    }


def test_proportional_sides_about_vertical_angles_give_similar_triangles() -> None:
    # IJ / XJ = HJ / YJ, so △JIH ∼ △JXY (SAS) and ∠JIH = ∠JXY
    ratio = _equals(
        _ratio(_length("I", "J"), _length("J", "X")), _ratio(_length("H", "J"), _length("J", "Y"))
    )
    solution = solve_calc(parse_record(_crossing([ratio])), time_limit=30)
    assert solution.answer == pytest.approx(50)
    assert any(step.rule == "similar triangles" for step in solution.steps)


def test_known_sides_in_proportion_give_similar_triangles() -> None:
    sides = [
        _equals(_length("I", "J"), {"num": "2"}),
        _equals(_length("J", "X"), {"num": "3"}),
        _equals(_length("H", "J"), {"num": "4"}),
        _equals(_length("J", "Y"), {"num": "6"}),
    ]
    solution = solve_calc(parse_record(_crossing(sides)), time_limit=30)
    assert solution.answer == pytest.approx(50)


def test_one_equal_angle_without_proportional_sides_proves_nothing() -> None:
    assert solve_calc(parse_record(_crossing([])), time_limit=30).answer is None
