"""Polygons of drawn segments found from the diagram: angle sums up to eight sides."""

from __future__ import annotations

import itertools
import math
from typing import Any

import pytest

from geosynth.calc import parse_record, solve_calc

Node = dict[str, Any]


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


def test_a_heptagon_drawn_by_its_angles_has_them_sum_to_900_degrees() -> None:
    names = "ABCDEFG"
    coords = {p: (math.cos(2 * math.pi * i / 7), math.sin(2 * math.pi * i / 7)) for i, p in enumerate(names)}
    given = [120, 130, 125, 135, 140, 110]
    conditions: list[Node] = []
    for i, p in enumerate(names):
        corner = {"qty": "angle", "points": [names[i - 1], p, names[(i + 1) % 7]]}
        value = (
            {"num": f"{given[i]}/180*pi"} if i < 6 else {"op": "*", "args": [{"var": "x"}, {"num": "pi/180"}]}
        )
        conditions.append({"op": "-", "args": [corner, value]})
    record = {
        "id": "built",
        "conditions": conditions,
        "diagrammatic_relations": _sides(coords),
        "goal": {"var": "x"},
    }
    solution = solve_calc(parse_record(record), time_limit=30)
    assert solution.answer == pytest.approx(900 - sum(given))
    assert any(step.rule == "polygon angle sum" for step in solution.steps)
