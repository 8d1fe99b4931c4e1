"""Rules from given composite relations: quadrilaterals, polygons, midpoints, correspondences, centres."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import sympy

from geosynth.calc._figure import Figure
from geosynth.calc._model import Centroid, Incenter, Polygon, SimilarPolygons
from geosynth.calc._rules import (
    Derived,
    fact_text,
    feet,
    meet,
    relations,
    triangle_area_equations,
    uses_area,
)
from geosynth.engine import (
    CongruentTriangles,
    EqualLength,
    Kite,
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

_HALF = sympy.Rational(1, 2)
_PARALLELOGRAMS = (Parallelogram, Rectangle, Rhombus, Square)


def _cycle(points: tuple[str, ...]) -> list[tuple[str, str, str]]:
    n = len(points)
    return [(points[i - 1], points[i], points[(i + 1) % n]) for i in range(n)]


def _diagonal_meet(fig: Figure, a: str, b: str, c: str, d: str) -> str | None:
    return meet(fig, fig.line_id(a, c), fig.line_id(b, d))


def parallelogram_facts(fig: Figure) -> Iterator[Derived]:
    """Opposite sides and angles equal, diagonals bisecting (and more for rectangles and rhombi)."""
    for cond in fig.problem.conditions:
        if not isinstance(cond, _PARALLELOGRAMS):
            continue
        a, b, c, d = cond.points
        why = (fact_text(cond),)
        yield Derived(fig.length(a, b), fig.length(c, d), "parallelogram", why)
        yield Derived(fig.length(b, c), fig.length(d, a), "parallelogram", why)
        yield Derived(fig.angle(a, b, c), fig.angle(c, d, a), "parallelogram", why)
        yield Derived(fig.angle(b, c, d), fig.angle(d, a, b), "parallelogram", why)
        yield Derived(fig.angle(a, b, c) + fig.angle(b, c, d), sympy.Integer(180), "parallelogram", why)
        x = _diagonal_meet(fig, a, b, c, d)
        if x is not None:
            yield Derived(fig.length(a, x), fig.length(x, c), "parallelogram", why)
            yield Derived(fig.length(b, x), fig.length(x, d), "parallelogram", why)
        if isinstance(cond, Rectangle | Square):
            yield Derived(fig.length(a, c), fig.length(b, d), "rectangle", why)
            for p, q, r in _cycle(cond.points):
                yield Derived(fig.angle(p, q, r), sympy.Integer(90), "rectangle", why)
        if isinstance(cond, Rhombus | Square):
            yield from _rhombus(fig, (a, b, c, d), x, why)


def _rhombus(
    fig: Figure, pts: tuple[str, str, str, str], x: str | None, why: tuple[str]
) -> Iterator[Derived]:
    a, b, c, d = pts
    for p, q in ((a, b), (b, c), (c, d)):
        yield Derived(fig.length(p, q), fig.length(d, a), "rhombus", why)
    for p, q, r in _cycle(pts):
        yield Derived(fig.angle(p, q, _opposite(pts, q)), fig.angle(_opposite(pts, q), q, r), "rhombus", why)
    if x is not None:
        yield Derived(fig.angle(a, x, b), sympy.Integer(90), "rhombus", why)


def _opposite(pts: tuple[str, ...], q: str) -> str:
    return pts[(pts.index(q) + 2) % 4]


def kite_facts(fig: Figure) -> Iterator[Derived]:
    """A kite's equal sides, its equal angles between unequal sides, perpendicular diagonals."""
    for cond in fig.problem.conditions:
        if isinstance(cond, Kite):
            a, b, c, d = cond.points
            why = (fact_text(cond),)
            yield Derived(fig.length(a, b), fig.length(a, d), "kite", why)
            yield Derived(fig.length(c, b), fig.length(c, d), "kite", why)
            yield Derived(fig.angle(a, b, c), fig.angle(a, d, c), "kite", why)
            x = _diagonal_meet(fig, a, b, c, d)
            if x is not None:
                yield Derived(fig.angle(a, x, b), sympy.Integer(90), "kite", why)


def _polygons(fig: Figure) -> Iterator[tuple[tuple[str, ...], str]]:
    for cond in fig.problem.conditions:
        if isinstance(cond, Shape | Polygon):
            yield cond.points, fact_text(cond)


def polygon_angle_sum(fig: Figure) -> Iterator[Derived]:
    """The interior angles of a (convex) polygon sum to (n − 2)·180°."""
    for points, label in _polygons(fig):
        if len(points) >= 4:
            total = sympy.Add(*(fig.angle(p, q, r) for p, q, r in _cycle(points)))
            yield Derived(total, sympy.Integer(180 * (len(points) - 2)), "polygon angle sum", (label,))


def polygon_areas(fig: Figure) -> Iterator[Derived]:
    """Areas of shapes: fan triangulation, rectangle, diagonals, base times height, trapezoid."""
    if not uses_area(fig):
        return
    perps = relations(fig, Perpendicular)
    for points, label in _polygons(fig):
        if len(points) < 4:
            continue
        why = (label,)
        whole = fig.area(points)
        fan = [(points[0], points[i], points[i + 1]) for i in range(1, len(points) - 1)]
        yield Derived(whole, sympy.Add(*(fig.area(t) for t in fan)), "polygon area", why)
        for tri in fan:
            yield from triangle_area_equations(fig, tri)
        cond = next(c for c in fig.problem.conditions if getattr(c, "points", None) == points)
        yield from _shape_area(fig, cond, points, whole, why, perps)


def _shape_area(
    fig: Figure,
    cond: object,
    points: tuple[str, ...],
    whole: sympy.Expr,
    why: tuple[str],
    perps: list[tuple[tuple[str, ...], str]],
) -> Iterator[Derived]:
    a, b, c, d = points[:4]
    if isinstance(cond, Rectangle | Square):
        yield Derived(whole, fig.length(a, b) * fig.length(b, c), "polygon area", why)
    if isinstance(cond, Rhombus | Square | Kite):
        yield Derived(whole, _HALF * fig.length(a, c) * fig.length(b, d), "polygon area", why)
    sides: list[tuple[str, str, str, str]] = []
    if isinstance(cond, _PARALLELOGRAMS):
        sides = [(a, b, c, d), (b, c, d, a)]
    elif isinstance(cond, Trapezoid):
        sides = [(a, b, c, d)]
    for p, q, r, s in sides:
        for top, base in (((p, q), (r, s)), ((r, s), (p, q))):
            for apex in sorted(fig.on_line(fig.line_id(*top))):
                for foot, label in feet(fig, apex, fig.line_id(*base), perps):
                    height = fig.length(apex, foot)
                    if isinstance(cond, Trapezoid):
                        rhs = _HALF * (fig.length(p, q) + fig.length(r, s)) * height
                    else:
                        rhs = fig.length(*base) * height
                    yield Derived(whole, rhs, "polygon area", (*why, label))


def midpoints(fig: Figure) -> Iterator[Derived]:
    """A midpoint halves its segment; two midpoints of a triangle's sides give a midsegment."""
    mids = [(c.points, fact_text(c)) for c in fig.problem.conditions if isinstance(c, Midpoint)]
    for (m, a, b), label in mids:
        yield Derived(fig.length(a, m), fig.length(m, b), "midpoint", (label,))
    for ((m, a, b), l1), ((n, c, d), l2) in itertools.combinations(mids, 2):
        common = {a, b} & {c, d}
        if len(common) == 1 and fig.drawn(m, n):
            apex = common.pop()
            p, q = ({a, b} - {apex}).pop(), ({c, d} - {apex}).pop()
            yield Derived(2 * fig.length(m, n), fig.length(p, q), "midsegment", (l1, l2))


def trapezoid_midsegments(fig: Figure) -> Iterator[Derived]:
    """Midpoints of the two legs between parallel lines: the midsegment is the mean of the bases."""
    mids = {
        frozenset(c.points[1:]): (c.points[0], fact_text(c))
        for c in fig.problem.conditions
        if isinstance(c, Midpoint)
    }
    for points, label in relations(fig, Parallel):
        l1, l2 = fig.line_id(points[0], points[1]), fig.line_id(points[2], points[3])
        on1, on2 = sorted(fig.on_line(l1) - fig.on_line(l2)), sorted(fig.on_line(l2) - fig.on_line(l1))
        for (p1, p2), (q1, q2) in itertools.product(
            itertools.combinations(on1, 2), itertools.permutations(on2, 2)
        ):
            m, n = mids.get(frozenset((p1, q1))), mids.get(frozenset((p2, q2)))
            if m is not None and n is not None:
                bases = fig.length(p1, p2) + fig.length(q1, q2)
                yield Derived(2 * fig.length(m[0], n[0]), bases, "trapezoid midsegment", (label, m[1], n[1]))


def _median_pairs(
    fig: Figure, first: tuple[str, ...], second: tuple[str, ...]
) -> Iterator[tuple[str, str, str, str]]:
    mids = {frozenset(c.points[1:]): c.points[0] for c in fig.problem.conditions if isinstance(c, Midpoint)}
    for i in range(3):
        m = mids.get(frozenset((first[i], first[(i + 1) % 3])))
        n = mids.get(frozenset((second[i], second[(i + 1) % 3])))
        if m is not None and n is not None:
            yield first[(i + 2) % 3], m, second[(i + 2) % 3], n


def correspondences(fig: Figure) -> Iterator[Derived]:
    """Similar and congruent triangles and polygons: equal angles, proportional (or equal) sides."""
    for index, cond in enumerate(fig.problem.conditions):
        if isinstance(cond, SimilarTriangles | CongruentTriangles):
            first, second = cond.points[:3], cond.points[3:]
        elif isinstance(cond, SimilarPolygons):
            first, second = cond.first, cond.second
        else:
            continue
        why = (fact_text(cond),)
        rule = "congruent triangles" if isinstance(cond, CongruentTriangles) else "similar figures"
        scale = sympy.Integer(1) if rule == "congruent triangles" else fig.ratio(f"k{index}")
        for (p, q, r), (s, t, u) in zip(_cycle(first), _cycle(second), strict=True):
            yield Derived(fig.angle(p, q, r), fig.angle(s, t, u), rule, why)
            yield Derived(fig.length(t, u), scale * fig.length(q, r), rule, why)
        if uses_area(fig):
            yield Derived(fig.area(second), scale**2 * fig.area(first), rule, why)
        for i, j in itertools.combinations(range(len(first)), 2):
            if len(first) > 3 and (j - i) % len(first) not in (1, len(first) - 1):  # diagonals scale too
                yield Derived(
                    fig.length(second[i], second[j]), scale * fig.length(first[i], first[j]), rule, why
                )
        if len(first) == 3:
            for v, m, w, n in _median_pairs(fig, first, second):
                yield Derived(fig.length(w, n), scale * fig.length(v, m), rule, why)


def centres(fig: Figure) -> Iterator[Derived]:
    """Incentre: bisected angles and equal distances to the sides; centroid: medians cut 2 : 1."""
    perps = relations(fig, Perpendicular)
    for cond in fig.problem.conditions:
        why = (fact_text(cond),)
        if isinstance(cond, Incenter):
            q, tri = cond.centre, cond.triangle
            for v in tri:
                b, c = (p for p in tri if p != v)
                yield Derived(fig.angle(q, v, b), fig.angle(q, v, c), "incenter", why)
            radii = [
                fig.length(q, foot)
                for u, w in itertools.combinations(tri, 2)
                for foot, _ in itertools.islice(feet(fig, q, fig.line_id(u, w), perps), 1)
            ]
            yield from (Derived(r, radii[0], "incenter", why) for r in radii[1:])
        elif isinstance(cond, Centroid):
            q, tri = cond.centre, cond.triangle
            for foot in cond.feet:
                for v in tri:
                    others = [p for p in tri if p != v]
                    if fig.collinear(v, q, foot) and fig.collinear(others[0], foot, others[1]):
                        yield Derived(fig.length(v, q), 2 * fig.length(q, foot), "centroid", why)
                        yield Derived(
                            fig.length(others[0], foot), fig.length(foot, others[1]), "centroid", why
                        )


def equal_lengths(fig: Figure) -> Iterator[Derived]:
    """Equal sides of shapes not covered elsewhere (from shape expansions)."""
    for cond in fig.problem.conditions:
        if isinstance(cond, Shape) and not isinstance(cond, (*_PARALLELOGRAMS, Kite)):
            for rel in cond.expand():
                if isinstance(rel, EqualLength):
                    p = rel.points
                    yield Derived(fig.length(p[0], p[1]), fig.length(p[2], p[3]), "shape", (fact_text(cond),))


SHAPE_RULES: tuple[tuple[str, Callable[[Figure], Iterator[Derived]]], ...] = (
    ("parallelogram", parallelogram_facts),
    ("kite", kite_facts),
    ("polygon angle sum", polygon_angle_sum),
    ("polygon area", polygon_areas),
    ("midpoint", midpoints),
    ("correspondence", correspondences),
    ("trapezoid midsegment", trapezoid_midsegments),
    ("centres", centres),
    ("shape sides", equal_lengths),
)
"""Rules from given composite relations (name, generator)."""
