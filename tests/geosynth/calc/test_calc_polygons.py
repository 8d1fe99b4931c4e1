"""Polygons of drawn segments found from the diagram: angle sums up to eight sides."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pytest

from geosynth.calc import parse_record, solve_calc

if TYPE_CHECKING:
    from .conftest import Formal, Node


def test_a_heptagon_drawn_by_its_angles_has_them_sum_to_900_degrees(formal: Formal) -> None:
    names = "ABCDEFG"
    coords = {p: (math.cos(2 * math.pi * i / 7), math.sin(2 * math.pi * i / 7)) for i, p in enumerate(names)}
    given = [120, 130, 125, 135, 140, 110]
    conditions: list[Node] = []
    for i, p in enumerate(names):
        corner = formal.angle(names[i - 1], p, names[(i + 1) % 7])
        value = formal.degrees(given[i]) if i < 6 else {"op": "*", "args": [{"var": "x"}, {"num": "pi/180"}]}
        conditions.append(formal.equals(corner, value))
    record = formal.record(conditions, {"var": "x"}, formal.sides(coords))
    solution = solve_calc(parse_record(record), time_limit=30)
    assert solution.answer == pytest.approx(900 - sum(given))
    assert any(step.rule == "polygon angle sum" for step in solution.steps)
