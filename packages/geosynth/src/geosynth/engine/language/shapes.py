"""Composite shapes: relations defined by their expansion into metric relations.

A shape names its vertices in boundary order; its canonical form is the least re-ordering among those
that describe the same shape (e.g. any rotation or reflection of a parallelogram's vertex cycle).
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from geosynth.engine.language.relations import (
    DIHEDRAL4,
    Between,
    Canon,
    CircleThrough,
    Collinear,
    Concyclic,
    CongruentTriangles,
    DirectedAngleConstant,
    Distinct,
    EqualAngles,
    EqualLength,
    EqualLineAngles,
    EqualRatios,
    Midpoint,
    NotCollinear,
    NotParallel,
    NotPerpendicular,
    OppositeSide,
    Parallel,
    Perpendicular,
    RatioConstant,
    Relation,
    SameSide,
    SimilarTriangles,
    canonical_by,
)

Expansion = tuple[tuple[type[Relation], tuple[int, ...]], ...]
"""Relations of a shape as (relation class, vertex indices) pairs."""

_TRAPEZOID_SYMMETRY = ((0, 1, 2, 3), (1, 0, 3, 2), (2, 3, 0, 1), (3, 2, 1, 0))
_KITE_SYMMETRY = ((0, 1, 2, 3), (0, 3, 2, 1), (2, 1, 0, 3), (2, 3, 0, 1))
_ISOSCELES_SYMMETRY = ((0, 1, 2), (0, 2, 1))
_ALL3 = ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0))
_RIGHT_SYMMETRY = ((0, 1, 2), (0, 2, 1))

_PARALLELOGRAM: Expansion = ((Parallel, (0, 1, 2, 3)), (Parallel, (0, 3, 1, 2)))


class Shape(Relation):
    """A composite relation; ``expand`` gives the metric relations that define it."""

    distinct = True
    expansion: ClassVar[Expansion] = ()

    def expand(self) -> tuple[Relation, ...]:
        """The metric relations this shape stands for, over its own points.

        Returns:
            The defining relations, each canonical.
        """
        return tuple(cls.of(*(self.points[i] for i in idx)) for cls, idx in self.expansion)


def _shape_canon(perms: tuple[tuple[int, ...], ...]) -> Canon:
    return canonical_by(perms)


class Parallelogram(Shape):
    """``a b c d`` with ``a b || c d`` and ``a d || b c``."""

    kind: Literal["parallelogram"] = "parallelogram"
    arity = 4
    canon = staticmethod(_shape_canon(DIHEDRAL4))
    expansion = _PARALLELOGRAM


class Rectangle(Shape):
    """A parallelogram with a right angle at ``b``."""

    kind: Literal["rectangle"] = "rectangle"
    arity = 4
    canon = staticmethod(_shape_canon(DIHEDRAL4))
    expansion = (*_PARALLELOGRAM, (Perpendicular, (0, 1, 1, 2)))


class Rhombus(Shape):
    """A parallelogram with ``|a b| = |b c|``."""

    kind: Literal["rhombus"] = "rhombus"
    arity = 4
    canon = staticmethod(_shape_canon(DIHEDRAL4))
    expansion = (*_PARALLELOGRAM, (EqualLength, (0, 1, 1, 2)))


class Square(Shape):
    """A rectangle that is also a rhombus."""

    kind: Literal["square"] = "square"
    arity = 4
    canon = staticmethod(_shape_canon(DIHEDRAL4))
    expansion = (*_PARALLELOGRAM, (Perpendicular, (0, 1, 1, 2)), (EqualLength, (0, 1, 1, 2)))


class Trapezoid(Shape):
    """``a b c d`` with ``a b || c d``."""

    kind: Literal["trapezoid"] = "trapezoid"
    arity = 4
    canon = staticmethod(_shape_canon(_TRAPEZOID_SYMMETRY))
    expansion = ((Parallel, (0, 1, 2, 3)),)


class IsoscelesTrapezoid(Shape):
    """A trapezoid ``a b c d`` (``a b || c d``) with equal legs ``|a d| = |b c|``."""

    kind: Literal["isosceles_trapezoid"] = "isosceles_trapezoid"
    arity = 4
    canon = staticmethod(_shape_canon(_TRAPEZOID_SYMMETRY))
    expansion = ((Parallel, (0, 1, 2, 3)), (EqualLength, (0, 3, 1, 2)))


class Kite(Shape):
    """``a b c d`` with ``|a b| = |a d|`` and ``|c b| = |c d|``."""

    kind: Literal["kite"] = "kite"
    arity = 4
    canon = staticmethod(_shape_canon(_KITE_SYMMETRY))
    expansion = ((EqualLength, (0, 1, 0, 3)), (EqualLength, (2, 1, 2, 3)))


class IsoscelesTriangle(Shape):
    """Triangle ``a b c`` with apex ``a``: ``|a b| = |a c|``."""

    kind: Literal["isosceles_triangle"] = "isosceles_triangle"
    arity = 3
    canon = staticmethod(_shape_canon(_ISOSCELES_SYMMETRY))
    expansion = ((EqualLength, (0, 1, 0, 2)),)


class EquilateralTriangle(Shape):
    """Triangle ``a b c`` with all sides equal."""

    kind: Literal["equilateral_triangle"] = "equilateral_triangle"
    arity = 3
    canon = staticmethod(_shape_canon(_ALL3))
    expansion = ((EqualLength, (0, 1, 1, 2)), (EqualLength, (1, 2, 2, 0)))


class RightTriangle(Shape):
    """Triangle ``a b c`` with the right angle at ``a``."""

    kind: Literal["right_triangle"] = "right_triangle"
    arity = 3
    canon = staticmethod(_shape_canon(_RIGHT_SYMMETRY))
    expansion = ((Perpendicular, (0, 1, 0, 2)),)


AnyRelation = Annotated[
    Collinear
    | Concyclic
    | CircleThrough
    | Parallel
    | Perpendicular
    | EqualLength
    | Midpoint
    | EqualAngles
    | EqualLineAngles
    | EqualRatios
    | RatioConstant
    | DirectedAngleConstant
    | SimilarTriangles
    | CongruentTriangles
    | NotCollinear
    | Between
    | SameSide
    | OppositeSide
    | Distinct
    | NotParallel
    | NotPerpendicular
    | Parallelogram
    | Rectangle
    | Rhombus
    | Square
    | Trapezoid
    | IsoscelesTrapezoid
    | Kite
    | IsoscelesTriangle
    | EquilateralTriangle
    | RightTriangle,
    Field(discriminator="kind"),
]
"""Any relation of the formal language, tagged by ``kind`` (for fields that hold one and for JSON)."""
