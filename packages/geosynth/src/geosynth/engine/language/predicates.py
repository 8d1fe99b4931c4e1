"""AlphaGeometry predicate names, as one table mapping each name to the relation it denotes.

Parsing (``coll a b c`` to :class:`Collinear`) and printing (the reverse) both go through the table, so
adding a predicate is one row. Numeric arguments (an angle, a ratio) follow the points.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from geosynth.engine.language.relations import (
    Between,
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
    Orientation,
    Parallel,
    Perpendicular,
    RatioConstant,
    Relation,
    SameSide,
    SimilarTriangles,
)
from geosynth.errors import RelationError


@dataclass(frozen=True)
class Predicate:
    """How one predicate name reads its arguments."""

    name: str
    """The predicate as written."""
    points: int | None
    """How many point arguments (``None``: any number, at least ``minimum``)."""
    numbers: int
    """How many numeric arguments follow the points."""
    build: Callable[[tuple[str, ...], tuple[Fraction, ...]], Relation]
    """Builds the relation from the points and numbers."""
    minimum: int = 0
    """Least number of points when ``points`` is ``None``."""


def _plain(cls: type[Relation]) -> Callable[[tuple[str, ...], tuple[Fraction, ...]], Relation]:
    return lambda pts, nums: cls.of(*pts)


def _triangles(
    cls: type[SimilarTriangles] | type[CongruentTriangles], orientation: Orientation
) -> Callable[[tuple[str, ...], tuple[Fraction, ...]], Relation]:
    return lambda pts, nums: cls.of(*pts, orientation=orientation)


def _ratio(pts: tuple[str, ...], nums: tuple[Fraction, ...]) -> Relation:
    return RatioConstant.of(*pts, value=nums[0] / nums[1])


def _sangle(pts: tuple[str, ...], nums: tuple[Fraction, ...]) -> Relation:
    return DirectedAngleConstant.of(*pts, degrees=nums[0])


_ROWS = (
    Predicate("coll", None, 0, _plain(Collinear), 3),
    Predicate("cyclic", None, 0, _plain(Concyclic), 4),
    Predicate("circle", None, 0, _plain(CircleThrough), 3),
    Predicate("para", 4, 0, _plain(Parallel)),
    Predicate("perp", 4, 0, _plain(Perpendicular)),
    Predicate("cong", 4, 0, _plain(EqualLength)),
    Predicate("midp", 3, 0, _plain(Midpoint)),
    Predicate("eqangle", 8, 0, _plain(EqualLineAngles)),
    Predicate("eqangle6", 8, 0, _plain(EqualLineAngles)),
    Predicate("eqratio", 8, 0, _plain(EqualRatios)),
    Predicate("eqratio6", 8, 0, _plain(EqualRatios)),
    Predicate("simtri", 6, 0, _triangles(SimilarTriangles, "same")),
    Predicate("simtri2", 6, 0, _triangles(SimilarTriangles, "opposite")),
    Predicate("simtri*", 6, 0, _triangles(SimilarTriangles, "any")),
    Predicate("contri", 6, 0, _triangles(CongruentTriangles, "same")),
    Predicate("contri2", 6, 0, _triangles(CongruentTriangles, "opposite")),
    Predicate("contri*", 6, 0, _triangles(CongruentTriangles, "any")),
    Predicate("rconst", 4, 2, _ratio),
    Predicate("s_angle", 3, 1, _sangle),
    Predicate("eqangle3", 6, 0, _plain(EqualAngles)),
    Predicate("ncoll", None, 0, _plain(NotCollinear), 3),
    Predicate("diff", None, 0, _plain(Distinct), 2),
    Predicate("npara", 4, 0, _plain(NotParallel)),
    Predicate("nperp", 4, 0, _plain(NotPerpendicular)),
    Predicate("between", 3, 0, _plain(Between)),
    Predicate("sameside2", 4, 0, _plain(SameSide)),
    Predicate("oppside", 4, 0, _plain(OppositeSide)),
)

PREDICATES: dict[str, Predicate] = {row.name: row for row in _ROWS}
"""Every predicate name the problem format and the definitions may use.

``eqangle3`` here is our undirected vertex-angle equality ``a b c = d e f``; AlphaGeometry uses the name
only for a construction, never as a predicate in problems, so the names cannot clash.
"""

_PRINT_NAME: dict[tuple[type[Relation], str], str] = {
    (Collinear, ""): "coll",
    (Concyclic, ""): "cyclic",
    (CircleThrough, ""): "circle",
    (Parallel, ""): "para",
    (Perpendicular, ""): "perp",
    (EqualLength, ""): "cong",
    (Midpoint, ""): "midp",
    (EqualLineAngles, ""): "eqangle",
    (EqualRatios, ""): "eqratio",
    (SimilarTriangles, "same"): "simtri",
    (SimilarTriangles, "opposite"): "simtri2",
    (SimilarTriangles, "any"): "simtri*",
    (CongruentTriangles, "same"): "contri",
    (CongruentTriangles, "opposite"): "contri2",
    (CongruentTriangles, "any"): "contri*",
    (RatioConstant, ""): "rconst",
    (DirectedAngleConstant, ""): "s_angle",
    (EqualAngles, ""): "eqangle3",
    (NotCollinear, ""): "ncoll",
    (Distinct, ""): "diff",
    (NotParallel, ""): "npara",
    (NotPerpendicular, ""): "nperp",
    (Between, ""): "between",
    (SameSide, ""): "sameside2",
    (OppositeSide, ""): "oppside",
}


def _number(token: str) -> Fraction:
    try:
        return Fraction(token)
    except (ValueError, ZeroDivisionError):
        raise RelationError(f"expected a number, got {token!r}") from None


def build_relation(name: str, args: tuple[str, ...]) -> Relation:
    """Build the relation a predicate statement denotes.

    Args:
        name: A predicate name from :data:`PREDICATES`.
        args: Point names, then the predicate's numeric arguments.

    Returns:
        The canonical relation.

    Raises:
        RelationError: Unknown name, wrong argument count, or a relation that cannot hold of the points.
    """
    row = PREDICATES.get(name)
    if row is None:
        raise RelationError(f"unknown predicate {name!r}")
    split = len(args) - row.numbers
    pts, nums = args[:split], tuple(_number(t) for t in args[split:])
    if split < 0 or (row.points is not None and len(pts) != row.points) or len(pts) < row.minimum:
        want = row.points if row.points is not None else f"at least {row.minimum}"
        raise RelationError(
            f"{name} takes {want} points and {row.numbers} numbers, got {len(args)} arguments"
        )
    return row.build(pts, nums)


def relation_text(relation: Relation) -> str:
    """The relation as a predicate statement (``coll a b c``).

    Raises:
        RelationError: The relation has no predicate name (a composite shape).
    """
    orientation = getattr(relation, "orientation", "")
    name = _PRINT_NAME.get((type(relation), orientation))
    if name is None:
        raise RelationError(f"{type(relation).__name__} has no predicate form; expand it first")
    extra: tuple[str, ...] = ()
    if isinstance(relation, RatioConstant):
        extra = (str(relation.value.numerator), str(relation.value.denominator))
    elif isinstance(relation, DirectedAngleConstant):
        extra = (str(relation.degrees),)
    return " ".join((name, *relation.points, *extra))
