"""From directed line angles to undirected vertex angles, and numeric values of quantities.

AlphaGeometry's ``eqangle`` equates directed angles between lines, modulo 180 degrees. The formal
language works with undirected angles in [0, 180]. When each side of an ``eqangle`` is a pair of lines
through a common point, a diagram decides which undirected statement it is: the two vertex angles are
equal when both turn the same way, and supplementary when they turn opposite ways.
"""

from __future__ import annotations

import math
from fractions import Fraction

from geosynth.engine.diagram.numeric import EQUAL_TOL, SEPARATION, Coords, signed_side
from geosynth.engine.diagram.realise import Diagram
from geosynth.engine.geometry.geometry import Vec, cross, norm, undirected_angle
from geosynth.engine.language.quantities import Angle, Area, Length, LinearEquation, Term, Variable
from geosynth.engine.language.relations import FOUR_PAIR_ORDERS, EqualLineAngles
from geosynth.errors import RelationError


def quantity_value(quantity: Length | Angle | Area | Variable, coords: Coords) -> float:
    """The numeric value of a quantity: a length, an angle in degrees, or an (unsigned) area.

    Raises:
        RelationError: A free variable has no value on a diagram.
    """
    if isinstance(quantity, Variable):
        raise RelationError(f"variable {quantity.name!r} has no value on a diagram")
    pts = [coords[p] for p in quantity.points]
    if isinstance(quantity, Length):
        return norm(pts[0] - pts[1])
    if isinstance(quantity, Angle):
        return math.degrees(undirected_angle(pts[0], pts[1], pts[2]))
    return abs(sum(cross(pts[i], pts[(i + 1) % len(pts)]) for i in range(len(pts)))) / 2


def equation_holds(equation: LinearEquation, coords: Coords) -> bool:
    """Whether a linear equation over quantities holds numerically (relative tolerance)."""
    values = [float(t.coefficient) * quantity_value(t.quantity, coords) for t in equation.terms]
    scale = max([abs(v) for v in values] + [abs(float(equation.constant)), 1.0])
    return abs(sum(values) - float(equation.constant)) <= EQUAL_TOL * scale


def _vertex_angle(
    first: tuple[str, str], second: tuple[str, str], coords: Coords
) -> tuple[Angle, int] | None:
    common = set(first) & set(second)
    if len(common) != 1:
        return None
    vertex = common.pop()
    a = first[0] if first[1] == vertex else first[1]
    b = second[0] if second[1] == vertex else second[1]
    side = signed_side(coords[b], coords[vertex], coords[a])
    if abs(side) <= SEPARATION:
        return None  # a straight or zero angle: no turning direction to compare
    return Angle.of(a, vertex, b), 1 if side > 0 else -1


def undirected_equation(relation: EqualLineAngles, diagram: Diagram) -> LinearEquation | None:
    """The undirected-angle equation an ``eqangle`` stands for on a diagram.

    Args:
        relation: ``eqangle`` with each side a pair of lines through a common point (``a b a c``).
        diagram: A diagram on which the relation holds.

    Returns:
        ``angle1 - angle2 = 0`` or ``angle1 + angle2 = 180`` (degrees), or ``None`` when a side's lines
        share no single point, an angle is straight or zero, or the relation does not hold here.
    """
    coords: dict[str, Vec] = diagram.coords()
    lines = [(relation.points[i], relation.points[i + 1]) for i in range(0, 8, 2)]
    # Any of the eight equivalent forms may be the one whose sides each meet at a point.
    for order in FOUR_PAIR_ORDERS:
        l1, l2, l3, l4 = (lines[i] for i in order)
        first, second = _vertex_angle(l1, l2, coords), _vertex_angle(l3, l4, coords)
        if first is not None and second is not None:
            return _equation(first, second, coords)
    return None


def _equation(first: tuple[Angle, int], second: tuple[Angle, int], coords: Coords) -> LinearEquation | None:
    (angle1, turn1), (angle2, turn2) = first, second
    one = Fraction(1)
    if turn1 == turn2:
        if angle1 == angle2:
            return None
        terms = (Term(coefficient=one, quantity=angle1), Term(coefficient=-one, quantity=angle2))
        equation = LinearEquation(terms=terms, constant=Fraction(0))
    else:
        terms = (Term(coefficient=one, quantity=angle1), Term(coefficient=one, quantity=angle2))
        equation = LinearEquation(terms=terms, constant=Fraction(180))
    return equation if equation_holds(equation, coords) else None
