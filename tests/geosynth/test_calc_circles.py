"""Circles in the formal literal language: arcs beyond 180° read off the diagram, angles beyond 180° refused."""

from __future__ import annotations

import itertools
import math
from typing import Any

import pytest

from geosynth.calc import parse_record, solve_calc
from geosynth.calc._dynamic import arc
from geosynth.calc._figure import Figure

Node = dict[str, Any]


def _length(a: str, b: str) -> Node:
    return {"qty": "length", "points": [a, b]}


def _angle(a: str, b: str, c: str) -> Node:
    return {"qty": "angle", "points": [a, b, c]}


def _equals(lhs: Node, rhs: Node) -> Node:
    return {"op": "-", "args": [lhs, rhs]}


def _degrees(value: float) -> Node:
    return {"num": f"{value}/180*pi"}


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


def _on_circle(degrees: float) -> tuple[float, float]:
    return math.cos(math.radians(degrees)), math.sin(math.radians(degrees))


def _tangent_secant() -> Node:
    """Centre O, tangent at T meeting the secant F-N-E at E; the arc TF away from N is 210°."""
    t, n, f = _on_circle(0), _on_circle(20), _on_circle(150)
    slope = (f[1] - n[1]) / (f[0] - n[0])
    coords = {"O": (0.0, 0.0), "T": t, "N": n, "F": f, "E": (1.0, n[1] + slope * (1 - n[0]))}
    radius = {"var": "radius_O"}
    return {
        "id": "built",
        "conditions": [
            {"rel": "Between", "args": ["N", "E", "F"]},
            *(_equals(_length("O", p), radius) for p in "TNF"),
            _equals(_angle("O", "T", "E"), {"num": "pi/2"}),
            _equals(_angle("T", "O", "N"), _degrees(20)),
            _equals(_angle("T", "E", "N"), _degrees(95)),  # (210° − 20°) / 2
        ],
        "diagrammatic_relations": _sides(coords),
        "goal": _angle("T", "O", "F"),
    }


def test_an_arc_away_from_a_point_on_the_far_side_of_its_chord_is_the_major_arc() -> None:
    problem = parse_record(_tangent_secant())
    fig = Figure(problem)
    assert arc(fig, "O", "T", "F", "N") == 360 - fig.angle("T", "O", "F")
    assert arc(fig, "O", "T", "N", "F") == fig.angle("T", "O", "N")


def test_a_tangent_and_a_secant_with_a_major_arc_give_the_central_angle() -> None:
    solution = solve_calc(parse_record(_tangent_secant()), time_limit=30)
    assert solution.answer == pytest.approx(150)


def test_a_goal_angle_beyond_180_degrees_is_left_unanswered() -> None:
    # three rays from O spread round it (the diagram says so), yet the givens leave ∠AOC = 290°
    coords = {"O": (0.0, 0.0), "A": _on_circle(90), "B": _on_circle(210), "C": _on_circle(330)}
    record = {
        "id": "built",
        "conditions": [
            _equals(_angle("A", "O", "B"), _degrees(30)),
            _equals(_angle("B", "O", "C"), _degrees(40)),
        ],
        "diagrammatic_relations": _sides(coords),
        "goal": _angle("A", "O", "C"),
    }
    assert solve_calc(parse_record(record), time_limit=30).answer is None
