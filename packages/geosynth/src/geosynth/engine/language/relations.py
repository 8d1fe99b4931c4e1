"""The formal language: relations over named points, each stored in one canonical point order.

Points are the only geometric objects; a relation is a frozen model whose ``points`` are rewritten at
construction into the least of the orderings that mean the same statement (its symmetry group), so two
relations that say the same thing compare and hash equal whatever order they were written in.
Metric relations can be proved; diagrammatic relations are read off a realised diagram and never proved.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, model_validator

from geosynth.errors import RelationError

Points = tuple[str, ...]
Canon = Callable[[Points], Points]


def _distinct(points: Points, count: int | None, name: str, minimum: int = 1) -> None:
    if count is not None and len(points) != count:
        raise RelationError(f"{name} takes {count} points, got {len(points)}: {' '.join(points)}")
    if len(points) < minimum:
        raise RelationError(f"{name} takes at least {minimum} points, got {len(points)}")


def _seg(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def canonical_set(points: Points) -> Points:
    """Sorted distinct points (for relations symmetric in all their points)."""
    return tuple(sorted(set(points)))


def canonical_two_segments(points: Points) -> Points:
    """``a b c d`` as two unordered segments in either order (parallel, perpendicular, equal lengths)."""
    a, b, c, d = points
    first, second = sorted((_seg(a, b), _seg(c, d)))
    return (*first, *second)


FOUR_PAIR_ORDERS = (
    (0, 1, 2, 3),
    (2, 3, 0, 1),
    (1, 0, 3, 2),
    (3, 2, 1, 0),
    (0, 2, 1, 3),
    (1, 3, 0, 2),
    (2, 0, 3, 1),
    (3, 1, 2, 0),
)
"""The eight orderings of ``p1 : p2 = p3 : p4`` that state the same equality."""


_FOUR_PAIR_BY_FIRST = tuple(tuple(o for o in FOUR_PAIR_ORDERS if o[0] == first) for first in range(4))
"""The two orderings of ``FOUR_PAIR_ORDERS`` that start with each pair."""


def canonical_four_pairs(points: Points) -> Points:
    """Least form of ``p1 : p2 = p3 : p4`` over pairs of points (equal line angles, equal ratios).

    The statement is invariant under swapping its two sides, swapping the middle terms, and reversing
    both sides, which generate a group of eight orderings (``FOUR_PAIR_ORDERS``); each pair is itself
    unordered. The least ordering starts with the least pair, so when that pair occurs once only the two
    orderings that start with it are compared.
    """
    p = (
        _seg(points[0], points[1]),
        _seg(points[2], points[3]),
        _seg(points[4], points[5]),
        _seg(points[6], points[7]),
    )
    low = min(p)
    if p.count(low) == 1:
        (_, b1, c1, d1), (_, b2, c2, d2) = _FOUR_PAIR_BY_FIRST[p.index(low)]
        best = (low, *min((p[b1], p[c1], p[d1]), (p[b2], p[c2], p[d2])))
    else:
        best = min(tuple(p[i] for i in order) for order in FOUR_PAIR_ORDERS)
    return (*best[0], *best[1], *best[2], *best[3])


def canonical_angle_pair(points: Points) -> Points:
    """Two undirected vertex angles ``a b c`` (vertex ``b``), each with its arms ordered, in either order."""
    first = _angle(points[0:3])
    second = _angle(points[3:6])
    low, high = sorted((first, second))
    return (*low, *high)


def _angle(points: Sequence[str]) -> tuple[str, str, str]:
    a, b, c = points
    return (a, b, c) if a <= c else (c, b, a)


def canonical_triangle_pair(points: Points) -> Points:
    """Two corresponding triangles: the same permutation applied to both, and the two swapped.

    The least of the twelve orderings: with one triangle first, the least of its six is the one whose
    corresponding vertex pairs are sorted (ties on the first triangle's vertex broken by the second's),
    so two sorts of three pairs give it.
    """
    a0, a1, a2, b0, b1, b2 = points
    (x0, y0), (x1, y1), (x2, y2) = sorted(((a0, b0), (a1, b1), (a2, b2)))
    (u0, v0), (u1, v1), (u2, v2) = sorted(((b0, a0), (b1, a1), (b2, a2)))
    return min((x0, x1, x2, y0, y1, y2), (u0, u1, u2, v0, v1, v2))


def canonical_midpoint(points: Points) -> Points:
    """``m a b``: the midpoint first, then the segment's ends sorted."""
    return (points[0], *_seg(points[1], points[2]))


def canonical_centre_first(points: Points) -> Points:
    """The centre first, then the remaining points sorted."""
    return (points[0], *sorted(points[1:]))


def canonical_identity(points: Points) -> Points:
    """The points as given (relations with no symmetry)."""
    return points


def canonical_between(points: Points) -> Points:
    """``a b c`` with ``b`` in the middle: the ends sorted."""
    return points if points[0] <= points[2] else (points[2], points[1], points[0])


def canonical_two_ordered_pairs(points: Points) -> Points:
    """Two unordered pairs that keep their places (``p q`` then ``a b``)."""
    return (*_seg(points[0], points[1]), *_seg(points[2], points[3]))


def canonical_by(perms: tuple[tuple[int, ...], ...]) -> Canon:
    """A canonicaliser that picks the least of the given re-orderings of the points."""

    def canon(points: Points) -> Points:
        return min(tuple(points[i] for i in perm) for perm in perms)

    return canon


DIHEDRAL4 = (
    (0, 1, 2, 3),
    (1, 2, 3, 0),
    (2, 3, 0, 1),
    (3, 0, 1, 2),
    (0, 3, 2, 1),
    (3, 2, 1, 0),
    (2, 1, 0, 3),
    (1, 0, 3, 2),
)


class Relation(BaseModel):
    """A statement about named points, stored in canonical point order.

    Subclasses set ``arity`` (``None`` for a variable number of points), ``min_points``, ``distinct``
    (whether all points must differ) and ``canon`` (the canonicaliser), and a literal ``kind`` tag so
    relations serialise as a tagged union.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    points: Points
    """The points, in canonical order."""

    arity: ClassVar[int | None] = None
    min_points: ClassVar[int] = 1
    distinct: ClassVar[bool] = False
    diagrammatic: ClassVar[bool] = False
    canon: ClassVar[Canon] = staticmethod(canonical_set)

    @model_validator(mode="before")
    @classmethod
    def _canonicalise(cls, data: Any) -> Any:
        if not isinstance(data, dict) or "points" not in data:
            return data
        points = tuple(data["points"])
        if not all(isinstance(p, str) and p for p in points):
            raise RelationError(f"{cls.__name__} points must be non-empty names, got {points!r}")
        _distinct(points, cls.arity, cls.__name__, cls.min_points)
        if cls.distinct and len(set(points)) != len(points):
            raise RelationError(f"{cls.__name__} needs distinct points, got {' '.join(points)}")
        cls._check_points(points)
        return cls._normalise({**data, "points": points})

    def __hash__(self) -> int:
        return hash((type(self), tuple(self.__dict__.values())))

    @classmethod
    def _check_points(cls, points: Points) -> None:
        """Reject point tuples that cannot form this relation (beyond count and distinctness)."""

    @classmethod
    def _normalise(cls, data: dict[str, Any]) -> dict[str, Any]:
        """Rewrite validated input into canonical form (points, and any parameter that moves with them)."""
        return {**data, "points": cls.canon(data["points"])}

    @classmethod
    def of(cls, *points: str, **params: Any) -> Self:
        """Build the relation from its points given positionally.

        Args:
            *points: The point names, in any of the orders that mean this relation.
            **params: Further fields (a constant, an orientation).

        Returns:
            The relation in canonical form.
        """
        return cls.model_validate({"points": points, **params})

    def renamed(self, mapping: dict[str, str]) -> Self:
        """The same relation with points renamed (and re-canonicalised).

        Args:
            mapping: Old name to new name; names not in it are kept.

        Returns:
            The renamed relation.
        """
        data = self.model_dump()
        data["points"] = tuple(mapping.get(p, p) for p in self.points)
        return type(self).model_validate(data)


def _segments_nondegenerate(cls_name: str, points: Points) -> None:
    for i in range(0, len(points), 2):
        if points[i] == points[i + 1]:
            raise RelationError(f"{cls_name} has a degenerate pair {points[i]} {points[i + 1]}")


class _SegmentPairs(Relation):
    @classmethod
    def _check_points(cls, points: Points) -> None:
        _segments_nondegenerate(cls.__name__, points)


# --- metric relations -------------------------------------------------------------------------------


class Collinear(Relation):
    """All the points lie on one line."""

    kind: Literal["collinear"] = "collinear"
    min_points = 3
    distinct = True


class Concyclic(Relation):
    """All the points lie on one circle."""

    kind: Literal["concyclic"] = "concyclic"
    min_points = 4
    distinct = True


class Parallel(_SegmentPairs):
    """Line ``a b`` is parallel to line ``c d``."""

    kind: Literal["parallel"] = "parallel"
    arity = 4
    canon = staticmethod(canonical_two_segments)


class Perpendicular(_SegmentPairs):
    """Line ``a b`` is perpendicular to line ``c d``."""

    kind: Literal["perpendicular"] = "perpendicular"
    arity = 4
    canon = staticmethod(canonical_two_segments)


class EqualLength(_SegmentPairs):
    """Segment ``a b`` has the length of segment ``c d`` (AlphaGeometry ``cong``)."""

    kind: Literal["equal_length"] = "equal_length"
    arity = 4
    canon = staticmethod(canonical_two_segments)


class Midpoint(Relation):
    """Point ``m`` is the midpoint of segment ``a b`` (points stored as ``m a b``)."""

    kind: Literal["midpoint"] = "midpoint"
    arity = 3
    distinct = True
    canon = staticmethod(canonical_midpoint)


class CircleThrough(Relation):
    """Point ``o`` is the centre of a circle through the other points (stored as ``o`` then sorted)."""

    kind: Literal["circle_through"] = "circle_through"
    min_points = 3
    distinct = True
    canon = staticmethod(canonical_centre_first)


class EqualAngles(Relation):
    """Undirected vertex angles are equal: angle ``a b c`` (vertex ``b``) equals angle ``d e f``."""

    kind: Literal["equal_angles"] = "equal_angles"
    arity = 6
    canon = staticmethod(canonical_angle_pair)

    @classmethod
    def _check_points(cls, points: Points) -> None:
        for a, b, c in (points[0:3], points[3:6]):
            if b in (a, c):
                raise RelationError(f"EqualAngles has a degenerate angle {a} {b} {c}")


class EqualLineAngles(_SegmentPairs):
    """Directed angle (mod 180 degrees) from line ``a b`` to ``c d`` equals that from ``e f`` to ``g h``.

    This is AlphaGeometry's ``eqangle``, kept as its own relation because it is not a statement about
    undirected angles; a diagram decides which undirected equality (or supplement) it stands for.
    """

    kind: Literal["equal_line_angles"] = "equal_line_angles"
    arity = 8
    canon = staticmethod(canonical_four_pairs)


class EqualRatios(_SegmentPairs):
    """``|a b| / |c d| = |e f| / |g h|``."""

    kind: Literal["equal_ratios"] = "equal_ratios"
    arity = 8
    canon = staticmethod(canonical_four_pairs)


class RatioConstant(_SegmentPairs):
    """``|a b| / |c d|`` equals a rational constant."""

    kind: Literal["ratio_constant"] = "ratio_constant"
    arity = 4
    value: Fraction
    """The ratio."""

    canon = staticmethod(canonical_two_ordered_pairs)

    @classmethod
    def _normalise(cls, data: dict[str, Any]) -> dict[str, Any]:
        # The two segments may only swap together with inverting the value.
        p: Points = data["points"]
        value = data.get("value")
        if not isinstance(value, Fraction) or value <= 0:
            raise RelationError(f"RatioConstant needs a positive Fraction value, got {value!r}")
        if _seg(p[2], p[3]) < _seg(p[0], p[1]):
            p, value = (p[2], p[3], p[0], p[1]), 1 / value
        return {**data, "points": cls.canon(p), "value": value}


class DirectedAngleConstant(Relation):
    """The directed angle from ray ``b a`` to line ``b x`` is ``degrees`` mod 180 (AlphaGeometry ``s_angle``)."""

    kind: Literal["directed_angle_constant"] = "directed_angle_constant"
    arity = 3
    distinct = True
    degrees: Fraction
    """The angle in degrees."""

    canon = staticmethod(canonical_identity)


Orientation = Literal["same", "opposite", "any"]


class _TrianglePair(Relation):
    arity = 6
    canon = staticmethod(canonical_triangle_pair)
    orientation: Orientation = "any"
    """Whether the correspondence keeps orientation (``same``), mirrors it (``opposite``) or either."""

    @classmethod
    def _check_points(cls, points: Points) -> None:
        for tri in (points[0:3], points[3:6]):
            if len(set(tri)) != 3:
                raise RelationError(f"{cls.__name__} has a degenerate triangle {' '.join(tri)}")


class SimilarTriangles(_TrianglePair):
    """Triangle ``a b c`` is similar to ``d e f`` with ``a, b, c`` corresponding to ``d, e, f``."""

    kind: Literal["similar_triangles"] = "similar_triangles"


class CongruentTriangles(_TrianglePair):
    """Triangle ``a b c`` is congruent to ``d e f`` with ``a, b, c`` corresponding to ``d, e, f``."""

    kind: Literal["congruent_triangles"] = "congruent_triangles"


# --- diagrammatic relations (read off a diagram, never proved) ----------------------------------------


class NotCollinear(Relation):
    """The points (three or more) do not all lie on one line."""

    kind: Literal["not_collinear"] = "not_collinear"
    min_points = 3
    distinct = True
    diagrammatic = True


class Between(Relation):
    """Point ``b`` lies strictly between ``a`` and ``c`` on their line (stored as ``a b c``, ``a < c``)."""

    kind: Literal["between"] = "between"
    arity = 3
    distinct = True
    diagrammatic = True
    canon = staticmethod(canonical_between)


class SameSide(Relation):
    """Points ``p q`` lie strictly on the same side of line ``a b`` (stored as ``p q a b``)."""

    kind: Literal["same_side"] = "same_side"
    arity = 4
    distinct = True
    diagrammatic = True
    canon = staticmethod(canonical_two_ordered_pairs)


class OppositeSide(Relation):
    """Points ``p q`` lie strictly on opposite sides of line ``a b`` (stored as ``p q a b``)."""

    kind: Literal["opposite_side"] = "opposite_side"
    arity = 4
    distinct = True
    diagrammatic = True
    canon = staticmethod(canonical_two_ordered_pairs)


class Distinct(Relation):
    """The points are pairwise different (a non-degeneracy condition)."""

    kind: Literal["distinct"] = "distinct"
    min_points = 2
    distinct = True
    diagrammatic = True


class NotParallel(_SegmentPairs):
    """Lines ``a b`` and ``c d`` are not parallel (a non-degeneracy condition)."""

    kind: Literal["not_parallel"] = "not_parallel"
    arity = 4
    diagrammatic = True
    canon = staticmethod(canonical_two_segments)


class NotPerpendicular(_SegmentPairs):
    """Lines ``a b`` and ``c d`` are not perpendicular (a non-degeneracy condition)."""

    kind: Literal["not_perpendicular"] = "not_perpendicular"
    arity = 4
    diagrammatic = True
    canon = staticmethod(canonical_two_segments)
