"""Numeric truth of relations on coordinates, one checker per relation class (a table, not a chain).

Every equality is tested on scale-free quantities (sines and cosines of angles between unit vectors,
relative length differences) against :data:`geosynth.engine.geometry.geometry.TOLERANCE`-derived bounds, so the verdict
does not depend on where the diagram sits or how large it is.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import cast

import numpy as np

from geosynth.engine.geometry.geometry import (
    Degenerate,
    Vec,
    circumcircle,
    cross,
    directed_line_angle,
    norm,
    undirected_angle,
    unit,
)
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
    Parallel,
    Perpendicular,
    RatioConstant,
    Relation,
    SameSide,
    SimilarTriangles,
)
from geosynth.engine.language.shapes import Shape

EQUAL_TOL = 1e-6
"""Bound on scale-free differences for a metric equality to count as holding."""
SEPARATION = 1e-4
"""Least scale-free margin for a non-degeneracy or side condition (points apart, lines not parallel)."""

Coords = Mapping[str, Vec]


def _dir(c: Coords, a: str, b: str) -> Vec:
    return unit(c[b] - c[a])


def _scale(c: Coords, names: tuple[str, ...]) -> float:
    pts = [c[n] for n in names]
    return max([norm(p - q) for p in pts for q in pts] + [1e-12])


def _collinear3(p: Vec, q: Vec, r: Vec, tol: float) -> bool:
    scale = max(norm(q - p), norm(r - p), norm(r - q), 1e-12)
    return abs(cross(q - p, r - p)) / (scale * scale) <= tol


def _collinear(rel: Relation, c: Coords) -> bool:
    p = [c[n] for n in rel.points]
    return all(_collinear3(p[0], p[1], r, EQUAL_TOL) for r in p[2:])


def _not_collinear(rel: Relation, c: Coords) -> bool:
    p = [c[n] for n in rel.points]
    return any(abs(signed_side(r, p[0], p[1])) > SEPARATION for r in p[2:])


def _sin_between(rel: Relation, c: Coords) -> float:
    a, b, x, y = rel.points
    return abs(cross(_dir(c, a, b), _dir(c, x, y)))


def _cos_between(rel: Relation, c: Coords) -> float:
    a, b, x, y = rel.points
    return abs(float(np.dot(_dir(c, a, b), _dir(c, x, y))))


def _lengths_equal(x: float, y: float) -> bool:
    return abs(x - y) <= EQUAL_TOL * max(x, y, 1e-12)


def _dist(c: Coords, a: str, b: str) -> float:
    return norm(c[a] - c[b])


def _equal_length(rel: Relation, c: Coords) -> bool:
    a, b, x, y = rel.points
    return _lengths_equal(_dist(c, a, b), _dist(c, x, y))


def _midpoint(rel: Relation, c: Coords) -> bool:
    m, a, b = rel.points
    return norm(c[m] - (c[a] + c[b]) / 2) <= EQUAL_TOL * _scale(c, rel.points)


def _concyclic(rel: Relation, c: Coords) -> bool:
    p = [c[n] for n in rel.points]
    if _collinear3(p[0], p[1], p[2], EQUAL_TOL):
        return False
    circle = circumcircle(p[0], p[1], p[2])
    return all(_lengths_equal(norm(q - circle.center), circle.radius) for q in p[3:])


def _circle_through(rel: Relation, c: Coords) -> bool:
    o, *rest = rel.points
    radii = [_dist(c, o, p) for p in rest]
    return all(_lengths_equal(r, radii[0]) for r in radii)


def _same_mod_pi(x: float, y: float) -> bool:
    r = (x - y) % math.pi
    return min(r, math.pi - r) <= EQUAL_TOL


def _line_angle(c: Coords, a: str, b: str, x: str, y: str) -> float:
    return directed_line_angle(c[x], c[y]) - directed_line_angle(c[a], c[b])


def _equal_line_angles(rel: Relation, c: Coords) -> bool:
    p = rel.points
    return _same_mod_pi(_line_angle(c, *p[0:4]), _line_angle(c, *p[4:8]))


def _equal_angles(rel: Relation, c: Coords) -> bool:
    a, b, x, d, e, f = rel.points
    return abs(undirected_angle(c[a], c[b], c[x]) - undirected_angle(c[d], c[e], c[f])) <= EQUAL_TOL


def _equal_ratios(rel: Relation, c: Coords) -> bool:
    p = rel.points
    d = [_dist(c, p[i], p[i + 1]) for i in range(0, 8, 2)]
    return _lengths_equal(d[0] * d[3], d[1] * d[2])


def _ratio_constant(rel: Relation, c: Coords) -> bool:
    ratio = cast(RatioConstant, rel)  # _CHECKS dispatches on the exact type
    a, b, x, y = ratio.points
    return _lengths_equal(_dist(c, a, b), float(ratio.value) * _dist(c, x, y))


def _directed_angle(rel: Relation, c: Coords) -> bool:
    angle = cast(DirectedAngleConstant, rel)  # _CHECKS dispatches on the exact type
    a, b, x = angle.points
    return _same_mod_pi(_line_angle(c, b, a, b, x), math.radians(float(angle.degrees)))


def _orientation_ok(rel: SimilarTriangles | CongruentTriangles, c: Coords) -> bool:
    p = [c[n] for n in rel.points]
    s1, s2 = cross(p[1] - p[0], p[2] - p[0]), cross(p[4] - p[3], p[5] - p[3])
    if rel.orientation == "same":
        return s1 * s2 > 0
    return s1 * s2 < 0 if rel.orientation == "opposite" else True


def _sides(c: Coords, tri: tuple[str, ...]) -> list[float]:
    return [_dist(c, tri[0], tri[1]), _dist(c, tri[1], tri[2]), _dist(c, tri[2], tri[0])]


def _nondegenerate(c: Coords, tri: tuple[str, ...]) -> bool:
    return abs(signed_side(c[tri[0]], c[tri[1]], c[tri[2]])) > SEPARATION


def _similar(rel: Relation, c: Coords) -> bool:
    similar = cast(SimilarTriangles, rel)  # _CHECKS dispatches on the exact type
    s, t = _sides(c, similar.points[0:3]), _sides(c, similar.points[3:6])
    ok = all(_lengths_equal(s[i] * t[j], s[j] * t[i]) for i, j in ((0, 1), (1, 2)))
    return ok and _nondegenerate(c, similar.points[0:3]) and _orientation_ok(similar, c)


def _congruent(rel: Relation, c: Coords) -> bool:
    congruent = cast(CongruentTriangles, rel)  # _CHECKS dispatches on the exact type
    s, t = _sides(c, congruent.points[0:3]), _sides(c, congruent.points[3:6])
    ok = all(_lengths_equal(x, y) for x, y in zip(s, t, strict=True))
    return ok and _nondegenerate(c, congruent.points[0:3]) and _orientation_ok(congruent, c)


def signed_side(p: Vec, a: Vec, b: Vec) -> float:
    """Twice the signed area of triangle ``a b p`` over its longest side squared.

    Positive when ``p`` is left of ``a -> b``; symmetric in the three points up to sign, so a triple's
    collinearity verdict does not depend on which two points span the line. Within
    :data:`SEPARATION` of zero counts as on the line.
    """
    scale = max(norm(b - a), norm(p - a), norm(p - b), 1e-12)
    return cross(b - a, p - a) / (scale * scale)


def _side(c: Coords, p: str, a: str, b: str) -> float:
    return signed_side(c[p], c[a], c[b])


def _same_side(rel: Relation, c: Coords) -> bool:
    p, q, a, b = rel.points
    sp, sq = _side(c, p, a, b), _side(c, q, a, b)
    return sp * sq > 0 and min(abs(sp), abs(sq)) > SEPARATION


def _opposite_side(rel: Relation, c: Coords) -> bool:
    p, q, a, b = rel.points
    sp, sq = _side(c, p, a, b), _side(c, q, a, b)
    return sp * sq < 0 and min(abs(sp), abs(sq)) > SEPARATION


def _between(rel: Relation, c: Coords) -> bool:
    a, b, x = rel.points
    if abs(signed_side(c[b], c[a], c[x])) > SEPARATION:
        return False
    ab, xb = c[a] - c[b], c[x] - c[b]
    return float(np.dot(ab, xb)) < 0 and min(norm(ab), norm(xb)) > SEPARATION * _scale(c, rel.points)


def _distinct(rel: Relation, c: Coords) -> bool:
    scale = max(_scale(c, rel.points), 1.0)
    pts = rel.points
    return all(_dist(c, p, q) > SEPARATION * scale for i, p in enumerate(pts) for q in pts[i + 1 :])


def _shape(rel: Shape, c: Coords) -> bool:
    return all(holds(part, c) for part in rel.expand())


_CHECKS: dict[type[Relation], Callable[[Relation, Coords], bool]] = {
    Collinear: _collinear,
    Concyclic: _concyclic,
    CircleThrough: _circle_through,
    Parallel: lambda r, c: _sin_between(r, c) <= EQUAL_TOL,
    Perpendicular: lambda r, c: _cos_between(r, c) <= EQUAL_TOL,
    EqualLength: _equal_length,
    Midpoint: _midpoint,
    EqualLineAngles: _equal_line_angles,
    EqualAngles: _equal_angles,
    EqualRatios: _equal_ratios,
    RatioConstant: _ratio_constant,
    DirectedAngleConstant: _directed_angle,
    SimilarTriangles: _similar,
    CongruentTriangles: _congruent,
    NotCollinear: _not_collinear,
    Between: _between,
    SameSide: _same_side,
    OppositeSide: _opposite_side,
    Distinct: _distinct,
    NotParallel: lambda r, c: _sin_between(r, c) > SEPARATION,
    NotPerpendicular: lambda r, c: _cos_between(r, c) > SEPARATION,
}


def holds(relation: Relation, coords: Coords) -> bool:
    """Whether a relation holds numerically at the given coordinates.

    Args:
        relation: Any relation of the formal language (composite shapes are checked by expansion).
        coords: Coordinates of (at least) the relation's points.

    Returns:
        ``True`` when it holds within tolerance; ``False`` otherwise, including when the points are
        too close together for the relation's directions to be defined.

    Raises:
        KeyError: A point of the relation has no coordinates.
    """
    if isinstance(relation, Shape):
        return _shape(relation, coords)
    missing = [p for p in relation.points if p not in coords]
    if missing:
        raise KeyError(f"no coordinates for {' '.join(missing)}")
    try:
        return _CHECKS[type(relation)](relation, coords)
    except (Degenerate, ZeroDivisionError):  # an undefined direction means "does not hold"
        return False
