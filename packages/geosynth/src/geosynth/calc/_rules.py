"""Static rules: equations that follow from the figure alone (lines, rays, sides, given relations).

Each rule is a generator of :class:`Derived` equations; :data:`STATIC_RULES` is the table the solver runs
once. Angles are symbols in degrees; a premise is a given relation's text (a fact) or an equation id.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import sympy

from geosynth.calc._figure import Figure, relation_points
from geosynth.calc._model import Centroid, Equation, Incenter, Op, Polygon, SimilarPolygons, Var
from geosynth.engine import (
    Angle,
    Area,
    CongruentTriangles,
    EqualLength,
    Kite,
    Length,
    Midpoint,
    Parallel,
    Parallelogram,
    Perpendicular,
    Rectangle,
    Rhombus,
    Shape,
    SimilarTriangles,
    Square,
    Trapezoid,
)

Premise = int | str
"""An equation id (int) or a given relation's text (str)."""


@dataclass(frozen=True)
class Derived:
    """``lhs = rhs`` produced by ``rule`` from ``premises``."""

    lhs: sympy.Expr
    rhs: sympy.Expr
    rule: str
    premises: tuple[Premise, ...] = ()


_HALF = sympy.Rational(1, 2)
_DEG = sympy.pi / 180
_TEXT: dict[type, Callable[[tuple[str, ...]], str]] = {
    Parallel: lambda p: f"{p[0]}{p[1]} ∥ {p[2]}{p[3]}",
    Perpendicular: lambda p: f"{p[0]}{p[1]} ⊥ {p[2]}{p[3]}",
    Midpoint: lambda p: f"{p[0]} is the midpoint of {p[1]}{p[2]}",
    SimilarTriangles: lambda p: f"△{''.join(p[:3])} ∼ △{''.join(p[3:])}",
    CongruentTriangles: lambda p: f"△{''.join(p[:3])} ≅ △{''.join(p[3:])}",
    EqualLength: lambda p: f"{p[0]}{p[1]} = {p[2]}{p[3]}",
}


def fact_text(relation: object) -> str:
    """A given relation as a short readable line (``AB ∥ CD``, ``parallelogram ABCD``...)."""
    points = relation_points(relation)
    text = _TEXT.get(type(relation))
    if text is not None:
        return text(points)
    if isinstance(relation, SimilarPolygons):
        return f"{''.join(relation.first)} ∼ {''.join(relation.second)}"
    if isinstance(relation, Incenter):
        return f"{relation.centre} is the incentre of △{''.join(relation.triangle)}"
    if isinstance(relation, Centroid):
        return f"{relation.centre} is the centroid of △{''.join(relation.triangle)}"
    name = "polygon" if isinstance(relation, Polygon) else type(relation).__name__.lower()
    return f"{name} {''.join(points)}"


def sin_deg(x: sympy.Expr) -> sympy.Expr:
    """``sin`` of an angle in degrees."""
    return sympy.sin(x * _DEG)


def cos_deg(x: sympy.Expr) -> sympy.Expr:
    """``cos`` of an angle in degrees."""
    return sympy.cos(x * _DEG)


# --- relation gathering (given and implied by shapes) -------------------------------------------------


def relations(fig: Figure, kind: type) -> list[tuple[tuple[str, ...], str]]:
    """Given relations of a kind (also from shape expansions) as (points, fact text)."""
    found: list[tuple[tuple[str, ...], str]] = []
    for cond in fig.problem.conditions:
        if isinstance(cond, kind):
            found.append((relation_points(cond), fact_text(cond)))
        elif isinstance(cond, Shape):
            found.extend((r.points, fact_text(cond)) for r in cond.expand() if isinstance(r, kind))
    return found


def meet(fig: Figure, l1: int, l2: int) -> str | None:
    common = fig.on_line(l1) & fig.on_line(l2)
    return next(iter(common)) if len(common) == 1 else None


def transversal_angles(fig: Figure, l1: int, l2: int) -> Iterator[tuple[sympy.Expr, sympy.Expr, bool]]:
    """The angle pairs a transversal makes with lines ``l1`` and ``l2`` (parallel or to be shown so).

    For every line meeting ``l1`` at ``p`` and ``l2`` at ``q`` (``p != q``) and points ``a`` on ``l1``,
    ``b`` on ``l2`` whose sides of ``p q`` the diagram decides: ``(∠apq, ∠pqb, same side)``. With
    ``l1 ∥ l2`` the pair is co-interior (sums to 180°) on the same side and alternate (equal) otherwise.
    """
    for line in range(len(fig.lines)):
        p, q = meet(fig, line, l1), meet(fig, line, l2)
        if p is None or q is None or p == q:
            continue
        for a in sorted(fig.on_line(l1) - {p}):
            for b in sorted(fig.on_line(l2) - {q}):
                same = fig.side(a, b, p, q)
                if same is not None:
                    yield fig.angle(a, p, q), fig.angle(p, q, b), same


# --- rules ---------------------------------------------------------------------------------------------


def angles_at_vertices(fig: Figure) -> Iterator[Derived]:
    """Straight angles (rays opposite) and angle addition (a ray inside an angle, by the diagram's sides)."""
    for v in sorted({p for s in fig.segments for p in s}):
        rays = fig.rays_at(v)
        for r1, r3 in itertools.combinations(rays, 2):
            opposite = fig.collinear(r1, v, r3)
            whole = fig.angle(r1, v, r3)
            for r2 in rays:
                if r2 in (r1, r3) or fig.collinear(r1, v, r2) or fig.collinear(r3, v, r2):
                    continue
                if opposite:
                    rule = "straight angle"
                elif fig.ray_side(v, r2, r1, r3) and fig.ray_side(v, r2, r3, r1):
                    rule = "angle addition"
                else:
                    continue
                yield Derived(fig.angle(r1, v, r2) + fig.angle(r2, v, r3), whole, rule)


def _inside(fig: Figure, v: str, x: str, y: str, z: str) -> bool | None:
    """Whether ray ``v x`` lies inside angle ``y v z`` (``None`` when the diagram does not say)."""
    first, second = fig.ray_side(v, x, y, z), fig.ray_side(v, x, z, y)
    if first is None or second is None:
        return None
    return first and second


def full_angle(fig: Figure) -> Iterator[Derived]:
    """Three rays from a point, none inside the angle of the other two: their angles sum to 360°."""
    for v in sorted({p for s in fig.segments for p in s}):
        rays = fig.rays_at(v)
        for a, b, c in itertools.combinations(rays, 3):
            if fig.collinear(a, v, b) or fig.collinear(b, v, c) or fig.collinear(a, v, c):
                continue
            spread = [_inside(fig, v, a, b, c), _inside(fig, v, b, a, c), _inside(fig, v, c, a, b)]
            if all(s is False for s in spread):
                total = fig.angle(a, v, b) + fig.angle(b, v, c) + fig.angle(a, v, c)
                yield Derived(total, sympy.Integer(360), "angles around a point")


def segment_addition(fig: Figure) -> Iterator[Derived]:
    """``AM + MB = AB`` for ``M`` between ``A`` and ``B``."""
    for a, m, b in sorted(fig.between):
        if a < b:
            yield Derived(fig.length(a, m) + fig.length(m, b), fig.length(a, b), "segment addition")


def triangle_angle_sum(fig: Figure) -> Iterator[Derived]:
    """The angles of every triangle sum to 180°."""
    for a, b, c in fig.triangles():
        yield Derived(
            fig.angle(b, a, c) + fig.angle(a, b, c) + fig.angle(a, c, b),
            sympy.Integer(180),
            "triangle angle sum",
        )


def triangle_laws(fig: Figure) -> Iterator[Derived]:
    """Law of cosines (Pythagoras at a right angle) and law of sines on every triangle."""
    for tri in fig.triangles():
        yield from triangle_law_equations(fig, tri)


def triangle_law_equations(fig: Figure, tri: tuple[str, str, str]) -> Iterator[Derived]:
    """The law of cosines at each vertex and the law of sines for each pair of vertices."""
    for a, b, c in itertools.permutations(tri):
        if b < c:
            ab, ac, bc = fig.length(a, b), fig.length(a, c), fig.length(b, c)
            yield Derived(bc**2, ab**2 + ac**2 - 2 * ab * ac * cos_deg(fig.angle(b, a, c)), "law of cosines")
    for a, b in itertools.combinations(tri, 2):
        c = next(p for p in tri if p not in (a, b))
        yield Derived(
            fig.length(b, c) * sin_deg(fig.angle(a, b, c)),
            fig.length(a, c) * sin_deg(fig.angle(b, a, c)),
            "law of sines",
        )


def triangle_area_equations(fig: Figure, tri: tuple[str, str, str]) -> Iterator[Derived]:
    """``S = ½·ab·sin C`` at each vertex."""
    for a, b, c in ((tri[0], tri[1], tri[2]), (tri[1], tri[2], tri[0]), (tri[2], tri[0], tri[1])):
        yield Derived(
            fig.area(tri),
            _HALF * fig.length(a, b) * fig.length(b, c) * sin_deg(fig.angle(a, b, c)),
            "triangle area",
        )


def uses_area(fig: Figure) -> bool:
    return any(s.name.startswith("S(") for s in fig.kinds) or "area" in fig.problem.model_dump_json()


def triangle_areas(fig: Figure) -> Iterator[Derived]:
    """Triangle areas from two sides and the included angle, and from a base and its height."""
    if not uses_area(fig):
        return
    perps = relations(fig, Perpendicular)
    for tri in fig.triangles():
        yield from triangle_area_equations(fig, tri)
        for apex in tri:
            b, c = (p for p in tri if p != apex)
            for foot, label in feet(fig, apex, fig.line_id(b, c), perps):
                yield Derived(
                    fig.area(tri),
                    _HALF * fig.length(b, c) * fig.length(apex, foot),
                    "triangle area",
                    (label,),
                )


def feet(
    fig: Figure, apex: str, base: int, perps: list[tuple[tuple[str, ...], str]]
) -> Iterator[tuple[str, str]]:
    """Points ``F`` on line ``base`` with ``apex F`` perpendicular to it (by a given relation)."""
    for points, label in perps:
        lines = (fig.line_id(points[0], points[1]), fig.line_id(points[2], points[3]))
        for height, other in (lines, lines[::-1]):
            if other == base and apex in fig.on_line(height):
                foot = meet(fig, height, base)
                if foot is not None and foot != apex:
                    yield foot, label


def perpendicular_angles(fig: Figure) -> Iterator[Derived]:
    """Every angle between the rays of two perpendicular lines at their meeting point is 90°."""
    for points, label in relations(fig, Perpendicular):
        l1, l2 = fig.line_id(points[0], points[1]), fig.line_id(points[2], points[3])
        x = meet(fig, l1, l2)
        if x is None:
            continue
        for p in sorted(fig.on_line(l1) - {x}):
            for q in sorted(fig.on_line(l2) - {x}):
                yield Derived(fig.angle(p, x, q), sympy.Integer(90), "perpendicular", (label,))


def parallel_angles(fig: Figure) -> Iterator[Derived]:
    """A transversal of two parallel lines: alternate angles equal, co-interior angles sum to 180°."""
    for points, label in relations(fig, Parallel):
        l1, l2 = fig.line_id(points[0], points[1]), fig.line_id(points[2], points[3])
        if l1 == l2:
            continue
        for left, right, same in transversal_angles(fig, l1, l2):
            if same:
                yield Derived(left + right, sympy.Integer(180), "parallel lines", (label,))
            else:
                yield Derived(left, right, "parallel lines", (label,))


def _between_parallels(fig: Figure, b: str, l1: int, l2: int) -> bool:
    on1, on2 = sorted(fig.on_line(l1)), sorted(fig.on_line(l2))
    return fig.side(b, on2[0], on1[0], on1[1]) is True and fig.side(b, on1[0], on2[0], on2[1]) is True


def parallel_zigzag(fig: Figure) -> Iterator[Derived]:
    """A vertex ``B`` between parallel lines: ∠ABC = ∠BAP + ∠BCQ (a parallel through ``B`` splits it)."""
    for points, label in relations(fig, Parallel):
        l1, l2 = fig.line_id(points[0], points[1]), fig.line_id(points[2], points[3])
        if l1 == l2 or len(fig.on_line(l1)) < 2 or len(fig.on_line(l2)) < 2:
            continue
        inside = fig.on_line(l1) | fig.on_line(l2)
        for b in sorted({p for seg in fig.segments for p in seg} - inside):
            if not _between_parallels(fig, b, l1, l2):
                continue
            for a in sorted(p for p in fig.on_line(l1) if fig.drawn(b, p)):
                for c in sorted(p for p in fig.on_line(l2) if fig.drawn(b, p)):
                    pick = next(
                        (
                            (p, q)
                            for p in sorted(fig.on_line(l1) - {a})
                            for q in sorted(fig.on_line(l2) - {c})
                            if fig.side(p, q, a, c) and fig.side(p, b, a, c)
                        ),
                        None,
                    )
                    if pick is not None:
                        whole = fig.angle(a, b, c)
                        parts = fig.angle(b, a, pick[0]) + fig.angle(b, c, pick[1])
                        yield Derived(whole, parts, "parallel lines", (label,))


_MAX_SIDES = 8
"""Convex polygons of drawn segments are looked for up to this many sides."""


def convex_polygons(fig: Figure, most: int = _MAX_SIDES) -> Iterator[tuple[str, ...]]:
    """Cycles of drawn segments, no three consecutive vertices collinear, convex by the diagram's sides."""
    neighbours: dict[str, list[str]] = {}
    for seg in fig.segments:
        a, b = sorted(seg)
        neighbours.setdefault(a, []).append(b)
        neighbours.setdefault(b, []).append(a)

    def ok(path: list[str], nxt: str) -> bool:
        last = path[-1]
        if nxt in path or (len(path) >= 2 and fig.collinear(path[-2], last, nxt)):
            return False
        before = path[:-1]
        if any(fig.side(p, q, last, nxt) is not True for p, q in itertools.pairwise(before)):
            return False
        for i in range(len(path) - 1):
            ref = path[i - 1] if i > 0 else path[i + 2] if i + 2 < len(path) else None
            if ref is not None and fig.side(nxt, ref, path[i], path[i + 1]) is not True:
                return False
        return True

    def grow(path: list[str]) -> Iterator[tuple[str, ...]]:
        for nxt in sorted(neighbours[path[-1]]):
            if nxt == path[0] and len(path) >= 4 and path[1] < path[-1]:
                if not fig.collinear(path[-1], path[0], path[1]) and _convex(fig, path):
                    yield tuple(path)
            elif nxt > path[0] and len(path) < most and ok(path, nxt):
                yield from grow([*path, nxt])

    for start in sorted(neighbours):
        yield from grow([start])


def _convex(fig: Figure, poly: list[str]) -> bool:
    n = len(poly)
    for i in range(n):
        a, b = poly[i], poly[(i + 1) % n]
        others = [poly[(i + k) % n] for k in range(2, n)]
        if any(fig.side(p, q, a, b) is not True for p, q in itertools.pairwise(others)):
            return False
    return True


def polygon_angle_sums(fig: Figure) -> Iterator[Derived]:
    """The angles of a convex polygon of drawn segments (four sides or more) sum to (n − 2)·180°."""
    for poly in convex_polygons(fig):
        n = len(poly)
        total = sympy.Add(*(fig.angle(poly[i - 1], poly[i], poly[(i + 1) % n]) for i in range(n)))
        yield Derived(total, sympy.Integer(180 * (n - 2)), "polygon angle sum")


_ANGLE_NAME = re.compile(r"^angle_([A-Z][A-Za-z0-9']*)$")
"""A variable named after a vertex (``angle_H``): the measure of the angle at that point, in radians."""


def _expr_nodes(node: object) -> Iterator[object]:
    yield node
    if isinstance(node, Op):
        for arg in node.args:
            yield from _expr_nodes(arg)


def _bound_vars(fig: Figure) -> set[str]:
    """Variables that a given equation already ties to a quantity of the figure."""
    bound: set[str] = set()
    for cond in fig.problem.conditions:
        if isinstance(cond, Equation):
            nodes = list(_expr_nodes(cond.expr))
            if any(isinstance(n, Length | Angle | Area) for n in nodes):
                bound.update(n.name for n in nodes if isinstance(n, Var))
    return bound


def _opposite_rays(fig: Figure, v: str, r1: str, r2: str) -> bool:
    return r1 != r2 and fig.collinear(r1, v, r2) and not fig.same_ray(v, r1, r2)


def _vertical(fig: Figure, v: str, first: tuple[str, str], second: tuple[str, str]) -> bool:
    """Whether two angles at ``v`` (ray pairs) are the same angle or vertical angles."""
    if set(first) == set(second):
        return True
    (a, b), (c, d) = first, second
    return (_opposite_rays(fig, v, a, c) and _opposite_rays(fig, v, b, d)) or (
        _opposite_rays(fig, v, a, d) and _opposite_rays(fig, v, b, c)
    )


def angle_at(fig: Figure, v: str) -> tuple[str, str, str] | None:
    """The angle "at ``v``" when the figure makes it unambiguous, as points ``(a, v, c)``.

    That is the only angle between two rays from ``v`` when just two rays leave it (not a straight line);
    otherwise the angle of every triangle of drawn segments with a vertex at ``v``, when those angles are
    all one angle or its vertical angle (two lines crossing at ``v``).
    """
    rays = fig.rays_at(v)
    pairs = [(a, b) for a, b in itertools.combinations(rays, 2) if not fig.collinear(a, v, b)]
    if len(rays) == 2 and len(pairs) == 1:
        return pairs[0][0], v, pairs[0][1]
    found: list[tuple[str, str]] = []
    for tri in fig.triangles():
        if v in tri:
            b, c = (p for p in tri if p != v)
            found.append((fig.ray(v, b), fig.ray(v, c)))
    if not found or any(not _vertical(fig, v, found[0], other) for other in found[1:]):
        return None
    return found[0][0], v, found[0][1]


def angle_names(fig: Figure) -> Iterator[Derived]:
    """``angle_H`` (a variable no given ties to the figure) is the angle at ``H``, in radians."""
    points = {p for s in fig.segments for p in s}
    bound = _bound_vars(fig)
    nodes = [n for c in fig.problem.conditions if isinstance(c, Equation) for n in _expr_nodes(c.expr)]
    names = {n.name for n in (*nodes, *_expr_nodes(fig.problem.goal)) if isinstance(n, Var)}
    for name in sorted(names - bound):
        match = _ANGLE_NAME.match(name)
        if match is None or match.group(1) not in points:
            continue
        found = angle_at(fig, match.group(1))
        if found is not None:
            yield Derived(fig.var(name), fig.angle(*found) * _DEG, "angle name")


STATIC_RULES: tuple[tuple[str, Callable[[Figure], Iterator[Derived]]], ...] = (
    ("angles at a vertex", angles_at_vertices),
    ("segment addition", segment_addition),
    ("angles around a point", full_angle),
    ("triangle angle sum", triangle_angle_sum),
    ("polygon angle sum", polygon_angle_sums),
    ("perpendicular", perpendicular_angles),
    ("parallel lines", parallel_angles),
    ("parallel zigzag", parallel_zigzag),
    ("triangle laws", triangle_laws),
    ("triangle area", triangle_areas),
    ("angle name", angle_names),
)
"""The figure rules (name, generator); the shape and correspondence rules live in ``_shape_rules``."""

SHAPE_KINDS = (Parallelogram, Rectangle, Rhombus, Square, Trapezoid, Kite)
