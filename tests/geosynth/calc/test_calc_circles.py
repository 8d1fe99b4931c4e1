"""Circles in the formal literal language: arcs beyond 180° read off the diagram, angles beyond 180° refused."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pytest

from geosynth.calc import parse_record, solve_calc
from geosynth.calc._dynamic import arc
from geosynth.calc._figure import Figure

if TYPE_CHECKING:
    from .conftest import Formal, Node


def _on_circle(degrees: float) -> tuple[float, float]:
    return math.cos(math.radians(degrees)), math.sin(math.radians(degrees))


def _tangent_secant(formal: Formal) -> Node:
    """Centre O, tangent at T meeting the secant F-N-E at E; the arc TF away from N is 210°."""
    t, n, f = _on_circle(0), _on_circle(20), _on_circle(150)
    slope = (f[1] - n[1]) / (f[0] - n[0])
    coords = {"O": (0.0, 0.0), "T": t, "N": n, "F": f, "E": (1.0, n[1] + slope * (1 - n[0]))}
    radius = {"var": "radius_O"}
    return formal.record(
        [
            {"rel": "Between", "args": ["N", "E", "F"]},
            *(formal.equals(formal.length("O", p), radius) for p in "TNF"),
            formal.equals(formal.angle("O", "T", "E"), {"num": "pi/2"}),
            formal.equals(formal.angle("T", "O", "N"), formal.degrees(20)),
            formal.equals(formal.angle("T", "E", "N"), formal.degrees(95)),  # (210° − 20°) / 2
        ],
        formal.angle("T", "O", "F"),
        formal.sides(coords),
    )


def test_an_arc_away_from_a_point_on_the_far_side_of_its_chord_is_the_major_arc(formal: Formal) -> None:
    problem = parse_record(_tangent_secant(formal))
    fig = Figure(problem)
    assert arc(fig, "O", "T", "F", "N") == 360 - fig.angle("T", "O", "F")
    assert arc(fig, "O", "T", "N", "F") == fig.angle("T", "O", "N")


def test_a_tangent_and_a_secant_with_a_major_arc_give_the_central_angle(formal: Formal) -> None:
    solution = solve_calc(parse_record(_tangent_secant(formal)), time_limit=30)
    assert solution.answer == pytest.approx(150)


def test_a_goal_angle_beyond_180_degrees_is_left_unanswered(formal: Formal) -> None:
    # three rays from O spread round it (the diagram says so), yet the givens leave ∠AOC = 290°
    coords = {"O": (0.0, 0.0), "A": _on_circle(90), "B": _on_circle(210), "C": _on_circle(330)}
    record = formal.record(
        [
            formal.equals(formal.angle("A", "O", "B"), formal.degrees(30)),
            formal.equals(formal.angle("B", "O", "C"), formal.degrees(40)),
        ],
        formal.angle("A", "O", "C"),
        formal.sides(coords),
    )
    assert solve_calc(parse_record(record), time_limit=30).answer is None
