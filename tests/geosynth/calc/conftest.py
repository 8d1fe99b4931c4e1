"""Fixtures of the calculation-solver tests: builders of records in the formal literal language.

Test modules cannot import this file under ``--import-mode=importlib``; they take the :func:`formal`
fixture and import :class:`Formal` and :data:`Node` for their annotations only (``TYPE_CHECKING``).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest

Node = dict[str, Any]
"""One node of a formal record (a quantity, an expression, a relation, or the record itself)."""

Point = tuple[float, float]


def _cross(a: Point, b: Point, p: Point) -> float:
    """Twice the signed area of the triangle ``a b p`` (positive when ``p`` is left of ``a → b``)."""
    return (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])


@dataclass(frozen=True)
class Formal:
    """Builders of formal-literal nodes, the diagram's side facts, and a whole record."""

    @staticmethod
    def length(a: str, b: str) -> Node:
        return {"qty": "length", "points": [a, b]}

    @staticmethod
    def angle(a: str, b: str, c: str) -> Node:
        return {"qty": "angle", "points": [a, b, c]}

    @staticmethod
    def equals(lhs: Node, rhs: Node) -> Node:
        """The equation ``lhs = rhs``, written as the expression ``lhs - rhs``."""
        return {"op": "-", "args": [lhs, rhs]}

    @staticmethod
    def ratio(a: Node, b: Node) -> Node:
        return {"op": "/", "args": [a, b]}

    @staticmethod
    def num(value: float) -> Node:
        return {"num": str(value)}

    @staticmethod
    def degrees(value: float) -> Node:
        """An angle of ``value`` degrees, in radians as the formal language writes it."""
        return {"num": f"{value}/180*pi"}

    @staticmethod
    def sides(coords: dict[str, Point]) -> list[Node]:
        """The diagram's SameSide / OppositeSide facts, read off the coordinates (every line of two points)."""
        facts: list[Node] = []
        for a, b in itertools.combinations(sorted(coords), 2):
            sign = {p: _cross(coords[a], coords[b], coords[p]) for p in coords}
            off = [p for p in sorted(coords) if abs(sign[p]) > 1e-9]
            for p, q in itertools.combinations(off, 2):
                same = sign[p] * sign[q] > 0
                facts.append({"rel": "SameSide" if same else "OppositeSide", "args": [p, q, a, b]})
        return facts

    @staticmethod
    def record(conditions: Sequence[Node], goal: Node, diagram: Sequence[Node] = ()) -> Node:
        """A formal record with these conditions, diagram relations and goal."""
        return {
            "id": "built",
            "conditions": list(conditions),
            "diagrammatic_relations": list(diagram),
            "goal": goal,
        }


@pytest.fixture(scope="session")
def formal() -> Formal:
    """The :class:`Formal` builders."""
    return Formal()
