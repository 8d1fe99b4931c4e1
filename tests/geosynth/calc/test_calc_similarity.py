"""Similar triangles by SAS: an equal angle between proportional sides, the ratio given as a formal equation."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from geosynth.calc import parse_record, solve_calc

if TYPE_CHECKING:
    from .conftest import Formal, Node


def _crossing(formal: Formal, extra: list[Node]) -> Node:
    """H-J-X and I-J-Y cross at J; ∠JXY = 50°; the goal ∠JIH (its segment HI drawn by the goal)."""
    return formal.record(
        [
            {"rel": "Between", "args": ["J", "H", "X"]},
            {"rel": "Between", "args": ["J", "I", "Y"]},
            formal.equals(formal.angle("J", "X", "Y"), formal.degrees(50)),
            *extra,
        ],
        formal.angle("J", "I", "H"),
    )


def test_proportional_sides_about_vertical_angles_give_similar_triangles(formal: Formal) -> None:
    # IJ / XJ = HJ / YJ, so △JIH ∼ △JXY (SAS) and ∠JIH = ∠JXY
    ratio = formal.equals(
        formal.ratio(formal.length("I", "J"), formal.length("J", "X")),
        formal.ratio(formal.length("H", "J"), formal.length("J", "Y")),
    )
    solution = solve_calc(parse_record(_crossing(formal, [ratio])), time_limit=30)
    assert solution.answer == pytest.approx(50)
    assert any(step.rule == "similar triangles" for step in solution.steps)


def test_known_sides_in_proportion_give_similar_triangles(formal: Formal) -> None:
    sides = [
        formal.equals(formal.length("I", "J"), formal.num(2)),
        formal.equals(formal.length("J", "X"), formal.num(3)),
        formal.equals(formal.length("H", "J"), formal.num(4)),
        formal.equals(formal.length("J", "Y"), formal.num(6)),
    ]
    solution = solve_calc(parse_record(_crossing(formal, sides)), time_limit=30)
    assert solution.answer == pytest.approx(50)


def test_one_equal_angle_without_proportional_sides_proves_nothing(formal: Formal) -> None:
    assert solve_calc(parse_record(_crossing(formal, [])), time_limit=30).answer is None
