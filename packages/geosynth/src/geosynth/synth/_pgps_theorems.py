"""The theorems a PGPS program step can use on a figure: one operator applied to the figure's quantities.

Each :class:`Theorem` is one step of the 34-operator language with its operands bound to quantities of
a :class:`~geosynth.synth._pgps_figure.PGPSFigure` (or to vocabulary constants), the facts a problem
must state for the step to be justified (a right angle, parallel lines, equal sides, the kind of a
quadrilateral...), the PGPS knowledge type it exercises, and segments it needs drawn (a radius). The
families below propose instances from the figure's structure (its triangles, lines through a vertex,
parallel lines, circles, polygons); every proposal is kept only when the operator's own residual
(``geodsl.OPERATORS``) vanishes at the figure's measures, so a theorem is true of the figure as drawn.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from geodsl import OPERATORS
from geosynth.synth._bridge import _MATH
from geosynth.synth._pgps_figure import TOL, PGPSFigure, Q, Ray

__all__ = ("Fact", "Operand", "Theorem", "theorems")

Fact = tuple[str, ...]
"""A statement a problem makes: ``("perp", "a", "b", "c", "d", "e")`` (AB ⊥ CD at E), ``("para", a, b, c,
d)``, ``("eq", a, b, c, d)`` (AB = CD), ``("eqang", ...)``, ``("sim", a, b, c, d, e, f)``, ``("shape",
kind, *polygon)``, ``("regular", *polygon)``, ``("tangent",)``."""

Operand = Q | str
"""A quantity, or a constant token (``C180``)."""

_CONSTANTS = {
    "C0.5": 0.5,
    "C2": 2.0,
    "C3": 3.0,
    "C4": 4.0,
    "C5": 5.0,
    "C6": 6.0,
    "C8": 8.0,
    "C60": 60.0,
    "C90": 90.0,
    "C180": 180.0,
    "C360": 360.0,
}
_SIDES = {3: "C3", 4: "C4", 5: "C5", 6: "C6", 8: "C8"}


@dataclass(frozen=True)
class Theorem:
    """One operator step over figure quantities, with what it needs stated and drawn."""

    op: str
    args: tuple[Operand, ...]
    kind: str
    """The PGPS knowledge type (``Trigonometry``, ``Inscribed Angle``...)."""
    facts: tuple[Fact, ...] = ()
    draw: tuple[tuple[str, str], ...] = ()
    """Segments the problem must draw besides the figure's own lines (radii, midsegments)."""

    @property
    def quantities(self) -> tuple[Q, ...]:
        """The distinct quantities among the operands."""
        return tuple(dict.fromkeys(a for a in self.args if isinstance(a, Q)))


def _holds(theorem: Theorem, fig: PGPSFigure, values: dict[Q, float]) -> bool:
    spec = OPERATORS[theorem.op]
    numbers: list[float] = []
    for arg in theorem.args:
        if isinstance(arg, str):
            numbers.append(_CONSTANTS[arg])
            continue
        if arg not in values:
            values[arg] = fig.value(arg)
        numbers.append(values[arg])
    if spec.residual is None or not spec.accepts(len(numbers)):
        return False
    if any(v <= 1e-9 for v in numbers):
        return False
    size = max(1.0, *(abs(v) for v in numbers))
    try:
        residual = float(spec.residual(numbers, _MATH))
    except (ValueError, ZeroDivisionError, OverflowError):
        return False
    return math.isfinite(residual) and abs(residual) <= 1e-6 * size * size


def theorems(fig: PGPSFigure) -> list[Theorem]:
    """Every theorem instance the figure offers (each checked numerically), without repeats."""
    values: dict[Q, float] = {}
    seen: set[tuple[str, tuple[Operand, ...]]] = set()
    out: list[Theorem] = []
    for family in FAMILIES:
        for theorem in family(fig):
            key = (theorem.op, theorem.args)
            if key in seen or not _holds(theorem, fig, values):
                continue
            seen.add(key)
            out.append(theorem)
    return out


# --- helpers -----------------------------------------------------------------------------------


def _near(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))


def _ccw(fig: PGPSFigure, pts: tuple[str, ...]) -> tuple[str, ...]:
    """A polygon's vertices counter-clockwise from the least one (one name per polygon)."""
    i = pts.index(min(pts))
    order = pts[i:] + pts[:i]
    signed = sum(
        fig.xy[p][0] * fig.xy[q][1] - fig.xy[q][0] * fig.xy[p][1]
        for p, q in zip(order, (*order[1:], order[0]), strict=True)
    )
    return order if signed > 0 else (order[0], *reversed(order[1:]))


def _poly(fig: PGPSFigure, kind: str, pts: tuple[str, ...]) -> Q:
    return Q(kind, _ccw(fig, pts))


def _perp(fig: PGPSFigure, vertex: str, p: str, q: str) -> Fact:
    """``VP ⊥ VQ on V`` with ray representatives."""
    rp, rq = fig.ray_to(vertex, p), fig.ray_to(vertex, q)
    a = rp.rep if rp else p
    b = rq.rep if rq else q
    return ("perp", vertex, a, vertex, b, vertex)


def _right(fig: PGPSFigure, vertex: str, p: str, q: str) -> bool:
    return abs(fig.degrees(p, vertex, q) - 90.0) <= 1e-6


# --- triangles ---------------------------------------------------------------------------------


def _triangle_sides(fig: PGPSFigure) -> Iterator[Theorem]:
    for a, b, c in fig.triangles():
        area = _poly(fig, "area", (a, b, c))
        angles = {v: fig.angle(x, v, y) for v, x, y in ((a, b, c), (b, a, c), (c, a, b))}
        if any(q is None for q in angles.values()):
            continue
        A, B, C = (angles[v] for v in (a, b, c))
        if A is None or B is None or C is None:  # narrows the types; the check above already skipped these
            continue
        sa, sb, sc = fig.seg(b, c), fig.seg(a, c), fig.seg(a, b)
        yield Theorem("Sum", (A, B, C, "C180"), "Angle Relation in Triangle")
        for (x, ox), (y, oy) in itertools.combinations(((A, sa), (B, sb), (C, sc)), 2):
            yield Theorem("Sin_Law", (x, ox, y, oy), "Trigonometry")
        for angle, opposite, first, second in ((A, sa, sb, sc), (B, sb, sa, sc), (C, sc, sa, sb)):
            yield Theorem("Cos_Law", (opposite, first, second, angle), "Trigonometry")
            yield Theorem("Tria_SAS_Area", (first, angle, second, area), "Perimeter and Area of Triangle")
        yield Theorem("Sum", (sa, sb, sc, _poly(fig, "perim", (a, b, c))), "Perimeter and Area of Triangle")


def _right_triangles(fig: PGPSFigure) -> Iterator[Theorem]:
    for tri in fig.triangles():
        for c in tri:
            a, b = (p for p in tri if p != c)
            if not _right(fig, c, a, b):
                continue
            fact = (_perp(fig, c, a, b),)
            la, lb, hyp = fig.seg(c, b), fig.seg(c, a), fig.seg(a, b)
            angle_a, angle_b = fig.angle(b, a, c), fig.angle(a, b, c)
            if angle_a is None or angle_b is None:
                continue
            yield Theorem("Gougu", (la, lb, hyp), "Pythagorean Theorem", fact)
            yield Theorem("Sum", (angle_a, angle_b, "C90"), "Angle Relation in Triangle", fact)
            yield Theorem(
                "Tria_BH_Area", (la, lb, _poly(fig, "area", tri)), "Perimeter and Area of Triangle", fact
            )
            for angle, opposite, adjacent in ((angle_a, la, lb), (angle_b, lb, la)):
                yield Theorem("Gsin", (opposite, hyp, angle), "Trigonometry", fact)
                yield Theorem("Gcos", (adjacent, hyp, angle), "Trigonometry", fact)
                yield Theorem("Gtan", (opposite, adjacent, angle), "Trigonometry", fact)
                pts = angle.pts
                yield Theorem("Ratio", (opposite, hyp, Q("sin", pts)), "Trigonometry", fact)
                yield Theorem("Ratio", (adjacent, hyp, Q("cos", pts)), "Trigonometry", fact)
                yield Theorem("Ratio", (opposite, adjacent, Q("tan", pts)), "Trigonometry", fact)


def _isosceles(fig: PGPSFigure) -> Iterator[Theorem]:
    for tri in fig.triangles():
        for apex in tri:
            b, c = (p for p in tri if p != apex)
            if not _near(fig.length(apex, b), fig.length(apex, c)):
                continue
            fact: tuple[Fact, ...] = (("eq", apex, b, apex, c),)
            top, left, right = fig.angle(b, apex, c), fig.angle(apex, b, c), fig.angle(apex, c, b)
            if top is None or left is None or right is None:
                continue
            kind = "Isosceles (Equilateral) Triangle"
            yield Theorem("Iso_Tri_Ang", (top, left), kind, fact)
            yield Theorem("Iso_Tri_Ang", (top, right), kind, fact)
            yield Theorem("Equal", (left, right), kind, fact)
            yield Theorem("Equal", (fig.seg(apex, b), fig.seg(apex, c)), kind, fact)


def _altitudes(fig: PGPSFigure) -> Iterator[Theorem]:
    """Base times height: a triangle, and a foot of its apex on the base's line, joined to the apex."""
    for tri in fig.triangles():
        for apex in tri:
            b, c = (p for p in tri if p != apex)
            line = fig.line_of(b, c)
            if line is None:
                continue
            for foot in fig.lines[line]:
                if foot == apex or not fig.joined(apex, foot) or foot in (b, c):
                    continue
                if not _right(fig, foot, apex, b):
                    continue
                fact = (("perp", apex, foot, b, c, foot),)
                yield Theorem(
                    "Tria_BH_Area",
                    (fig.seg(b, c), fig.seg(apex, foot), _poly(fig, "area", tri)),
                    "Perimeter and Area of Triangle",
                    fact,
                )


def _geometric_means(fig: PGPSFigure) -> Iterator[Theorem]:
    """A right triangle and the altitude to its hypotenuse."""
    for tri in fig.triangles():
        for c in tri:
            a, b = (p for p in tri if p != c)
            line = fig.line_of(a, b)
            if line is None or not _right(fig, c, a, b):
                continue
            for d in fig.lines[line]:
                if d in (a, b) or not fig.joined(c, d) or not _right(fig, d, c, a):
                    continue
                facts = (_perp(fig, c, a, b), ("perp", c, d, a, b, d))
                kind = "Geometric Mean"
                yield Theorem("Geo_Mean", (fig.seg(a, d), fig.seg(d, b), fig.seg(c, d)), kind, facts)
                yield Theorem("Geo_Mean", (fig.seg(a, d), fig.seg(a, b), fig.seg(a, c)), kind, facts)
                yield Theorem("Geo_Mean", (fig.seg(b, d), fig.seg(a, b), fig.seg(b, c)), kind, facts)


def _bisectors(fig: PGPSFigure) -> Iterator[Theorem]:
    for tri in fig.triangles():
        for a in tri:
            b, c = (p for p in tri if p != a)
            line = fig.line_of(b, c)
            if line is None:
                continue
            for d in fig.lines[line]:
                if d in (b, c) or not fig.joined(a, d):
                    continue
                first, second = fig.angle(b, a, d), fig.angle(d, a, c)
                if first is None or second is None or not _near(fig.value(first), fig.value(second)):
                    continue
                fact: tuple[Fact, ...] = (("eqang", *first.pts, *second.pts),)
                yield Theorem(
                    "Proportion",
                    (fig.seg(a, b), fig.seg(a, c), fig.seg(b, d), fig.seg(d, c)),
                    "Angle Bisector of Triangle",
                    fact,
                )


# --- angles at a point, segments on a line ------------------------------------------------------


def _opposite(fig: PGPSFigure, ray: Ray) -> Ray | None:
    return next((r for r in fig.rays(ray.vertex) if r.line == ray.line and r != ray), None)


def _angles_at_points(fig: PGPSFigure) -> Iterator[Theorem]:
    for vertex in fig.xy:
        rays = fig.rays(vertex)
        for first, second in itertools.permutations(rays, 2):
            if first.line == second.line:
                continue
            angle = fig.angle_of_rays(first, second)
            other = _opposite(fig, first)
            if angle is None or other is None:
                continue
            supplement = fig.angle_of_rays(second, other)
            if supplement is not None:
                yield Theorem("Sum", (angle, supplement, "C180"), "Angle")
            back = _opposite(fig, second)
            vertical = None if back is None else fig.angle_of_rays(other, back)
            if vertical is not None:
                yield Theorem("Equal", (angle, vertical), "Angle")
        yield from _angle_addition(fig, vertex, rays)


def _angle_addition(fig: PGPSFigure, vertex: str, rays: list[Ray]) -> Iterator[Theorem]:
    for first, middle, last in itertools.permutations(rays, 3):
        if len({first.line, middle.line, last.line}) < 3 or first.rep > last.rep:
            continue
        whole, left, right = (
            fig.angle_of_rays(first, last),
            fig.angle_of_rays(first, middle),
            fig.angle_of_rays(middle, last),
        )
        if whole is None or left is None or right is None:
            continue
        if not _near(fig.value(left) + fig.value(right), fig.value(whole)):
            continue
        yield Theorem("Sum", (left, right, whole), "Angle")
        if _right(fig, vertex, first.rep, last.rep):
            fact = (_perp(fig, vertex, first.rep, last.rep),)
            yield Theorem("Sum", (left, right, "C90"), "Angle", fact)


def _segments(fig: PGPSFigure) -> Iterator[Theorem]:
    for line in fig.lines:
        for p, q, r in itertools.combinations(line, 3):
            yield Theorem("Sum", (fig.seg(p, q), fig.seg(q, r), fig.seg(p, r)), "Line Segment")
            if _near(fig.length(p, q), fig.length(q, r)):
                yield from _midpoint(fig, p, q, r)


def _midpoint(fig: PGPSFigure, p: str, m: str, r: str) -> Iterator[Theorem]:
    """``m`` is the midpoint of ``p r``: a median when a vertex is joined to it, a bisector when at a right angle."""
    fact: tuple[Fact, ...] = (("eq", p, m, m, r),)
    apexes = [x for x in fig.xy if fig.joined(x, m) and not fig.collinear(x, p, r)]
    kind = (
        "Median of Triangle" if any(fig.joined(x, p) and fig.joined(x, r) for x in apexes) else "Line Segment"
    )
    yield Theorem("Multiple", (fig.seg(p, m), "C2", fig.seg(p, r)), kind, fact)
    yield Theorem("Equal", (fig.seg(p, m), fig.seg(m, r)), kind, fact)
    for x in apexes:
        if _right(fig, m, x, p):
            facts = (*fact, ("perp", x, m, p, r, m))
            kind = "Perpendicular Bisector of Triangle"
            yield Theorem("Equal", (fig.seg(x, p), fig.seg(x, r)), kind, facts)
            yield Theorem("Gougu", (fig.seg(p, m), fig.seg(x, m), fig.seg(x, p)), kind, facts)


def _midsegments(fig: PGPSFigure) -> Iterator[Theorem]:
    """The segment joining the midpoints of two sides of a triangle is half the third side."""
    for a, b, c in fig.triangles():
        for apex, x, y in ((a, b, c), (b, a, c), (c, a, b)):
            m = _midpoint_on(fig, apex, x)
            n = _midpoint_on(fig, apex, y)
            if m is None or n is None:
                continue
            facts: tuple[Fact, ...] = (("eq", apex, m, m, x), ("eq", apex, n, n, y))
            draw = () if fig.joined(m, n) else ((m, n),)
            yield Theorem(
                "Multiple",
                (fig.seg(m, n), "C2", fig.seg(x, y)),
                "Midsegment of Triangle",
                facts,
                draw,
            )


def _midpoint_on(fig: PGPSFigure, p: str, q: str) -> str | None:
    line = fig.line_of(p, q)
    if line is None:
        return None
    mid = ((fig.xy[p][0] + fig.xy[q][0]) / 2, (fig.xy[p][1] + fig.xy[q][1]) / 2)
    tol = TOL * fig.span * 10
    return next(
        (m for m in fig.lines[line] if math.hypot(fig.xy[m][0] - mid[0], fig.xy[m][1] - mid[1]) <= tol), None
    )


# --- parallel lines ----------------------------------------------------------------------------


def _parallel_pairs(fig: PGPSFigure) -> Iterator[tuple[int, int]]:
    for i, j in itertools.combinations(range(len(fig.lines)), 2):
        li, lj = fig.lines[i], fig.lines[j]
        if set(li) & set(lj):
            continue
        (p, q), (r, s) = (fig.xy[li[0]], fig.xy[li[-1]]), (fig.xy[lj[0]], fig.xy[lj[-1]])
        u, v = (q[0] - p[0], q[1] - p[1]), (s[0] - r[0], s[1] - r[1])
        if abs(u[0] * v[1] - u[1] * v[0]) <= 1e-7 * math.hypot(*u) * math.hypot(*v):
            yield i, j


def _parallel_angles(fig: PGPSFigure) -> Iterator[Theorem]:
    for i, j in _parallel_pairs(fig):
        li, lj = fig.lines[i], fig.lines[j]
        fact: tuple[Fact, ...] = (("para", li[0], li[-1], lj[0], lj[-1]),)
        for p in li:
            for q in lj:
                if fig.line_of(p, q) is None:
                    continue
                at_p = _angles_with(fig, p, i, q)
                at_q = _angles_with(fig, q, j, p)
                for first, second in itertools.product(at_p, at_q):
                    a, b = fig.value(first), fig.value(second)
                    if _near(a, b):
                        yield Theorem("Equal", (first, second), "Parallel Lines", fact)
                    elif _near(a + b, 180.0):
                        yield Theorem("Sum", (first, second, "C180"), "Parallel Lines", fact)
        yield from _thales(fig, li, lj, fact)


def _angles_with(fig: PGPSFigure, vertex: str, line: int, toward: str) -> list[Q]:
    """Angles at ``vertex`` between the parallel ``line`` and the transversal through ``toward``."""
    transversal = fig.ray_to(vertex, toward)
    if transversal is None:
        return []
    rays = [transversal]
    if (back := _opposite(fig, transversal)) is not None:
        rays.append(back)
    along = [r for r in fig.rays(vertex) if r.line == line]
    return [q for t in rays for r in along if (q := fig.angle_of_rays(r, t)) is not None]


def _thales(
    fig: PGPSFigure, near: tuple[str, ...], far: tuple[str, ...], fact: tuple[Fact, ...]
) -> Iterator[Theorem]:
    """Two parallels cut by two lines through a common point: proportional segments."""
    for apex in fig.xy:
        if apex in near or apex in far:
            continue
        hits: list[tuple[str, str]] = []
        for d in near:
            for b in far:
                if fig.line_of(apex, d) is not None and fig.line_of(apex, d) == fig.line_of(apex, b):
                    hits.append((d, b))
        for (d, b), (e, c) in itertools.combinations(hits, 2):
            if fig.line_of(apex, d) == fig.line_of(apex, e):
                continue
            kind = "Similarity in Parallel Line"
            ad, ab, ae, ac = fig.seg(apex, d), fig.seg(apex, b), fig.seg(apex, e), fig.seg(apex, c)
            yield Theorem("Proportion", (ad, ab, ae, ac), kind, fact)
            yield Theorem("Proportion", (ad, fig.seg(d, b), ae, fig.seg(e, c)), kind, fact)
            if fig.joined(d, e) and fig.joined(b, c):
                yield Theorem("Proportion", (ad, ab, fig.seg(d, e), fig.seg(b, c)), kind, fact)


def _similar(fig: PGPSFigure) -> Iterator[Theorem]:
    """Triangles with equal angles (stated as similar or congruent): corresponding sides."""
    tris = list(fig.triangles())
    for t1, t2 in itertools.combinations(tris, 2):
        if len(set(t1) & set(t2)) > 1:
            continue
        for perm in itertools.permutations(t2):
            angles1 = [fig.degrees(t1[i - 1], t1[i], t1[(i + 1) % 3]) for i in range(3)]
            angles2 = [fig.degrees(perm[i - 1], perm[i], perm[(i + 1) % 3]) for i in range(3)]
            if not all(_near(x, y) for x, y in zip(angles1, angles2, strict=True)):
                continue
            sides1 = [fig.seg(t1[i], t1[(i + 1) % 3]) for i in range(3)]
            sides2 = [fig.seg(perm[i], perm[(i + 1) % 3]) for i in range(3)]
            if _near(fig.value(sides1[0]), fig.value(sides2[0])):
                fact: tuple[Fact, ...] = (("cong", *t1, *perm),)
                for s1, s2 in zip(sides1, sides2, strict=True):
                    yield Theorem("Equal", (s1, s2), "Polygon Congruence", fact)
            else:
                fact = (("sim", *t1, *perm),)
                for i, k in itertools.combinations(range(3), 2):
                    yield Theorem(
                        "Proportion", (sides1[i], sides2[i], sides1[k], sides2[k]), "Polygon Similarity", fact
                    )
            break


# --- circles -----------------------------------------------------------------------------------


def _arc(o: str, p: str, q: str) -> Q:
    x, y = sorted((p, q))
    return Q("arc", (o, x, y))


def _circle_measures(fig: PGPSFigure) -> Iterator[Theorem]:
    kind = "Circumference and Area of Circle"
    for circle in fig.circles:
        o = circle.centre
        if o is None:
            continue
        area, circumference = Q("carea", (o,)), Q("circ", (o,))
        for p in circle.points:
            radius = fig.seg(o, p)
            draw = () if fig.joined(o, p) else ((o, p),)
            yield Theorem("Circle_R_Area", (radius, area), kind, (), draw)
            yield Theorem("Circle_R_Circum", (radius, circumference), kind, (), draw)
            for q in circle.points:
                if q <= p:
                    continue
                both = draw + (() if fig.joined(o, q) else ((o, q),))
                yield Theorem("Equal", (fig.seg(o, p), fig.seg(o, q)), "Circle Chord", (), both)
                if fig.degrees(p, o, q) >= 179.0:
                    continue
                arc = _arc(o, p, q)
                yield Theorem("Circle_R_Area", (radius, arc, Q("sector", arc.pts)), kind, (), both)
                yield Theorem("Circle_R_Circum", (radius, arc, Q("arclen", arc.pts)), kind, (), both)
                yield Theorem("ArcSeg_Area", (radius, arc, Q("segarea", arc.pts)), kind, (), both)
        yield from _diameters(fig, o, circle.points)


def _diameters(fig: PGPSFigure, o: str, points: tuple[str, ...]) -> Iterator[Theorem]:
    kind = "Circumference and Area of Circle"
    area, circumference = Q("carea", (o,)), Q("circ", (o,))
    for p, q in itertools.combinations(points, 2):
        line = fig.line_of(p, q)
        if line is None or o not in fig.lines[line]:
            continue
        diameter = fig.seg(p, q)
        yield Theorem("Circle_D_Area", (diameter, area), kind)
        yield Theorem("Circle_D_Circum", (diameter, circumference), kind)
        yield Theorem("Multiple", (fig.seg(o, p), "C2", diameter), "Circle Chord")
        yield Theorem("Multiple", (fig.seg(o, q), "C2", diameter), "Circle Chord")
        for s in points:
            if s in (p, q) or fig.degrees(p, o, s) >= 179.0:
                continue
            arc = _arc(o, p, s)
            yield Theorem("Circle_D_Circum", (diameter, arc, Q("arclen", arc.pts)), kind)


def _arcs(fig: PGPSFigure) -> Iterator[Theorem]:
    for circle in fig.circles:
        o = circle.centre
        if o is None:
            continue
        for p, q in itertools.combinations(circle.points, 2):
            central = fig.angle(p, o, q)
            if central is not None and fig.degrees(p, o, q) < 179.0:
                yield Theorem("Equal", (central, _arc(o, p, q)), "Arc Angle")
        for p, q, s in itertools.permutations(circle.points, 3):
            if p < s and all(fig.degrees(x, o, y) < 179.0 for x, y in ((p, q), (q, s), (p, s))):
                yield Theorem("Sum", (_arc(o, p, q), _arc(o, q, s), _arc(o, p, s)), "Arc Angle")
        yield from _inscribed(fig, o, circle.points)


def _inscribed(fig: PGPSFigure, o: str, points: tuple[str, ...]) -> Iterator[Theorem]:
    for p, q in itertools.combinations(points, 2):
        if fig.degrees(p, o, q) >= 179.0:
            continue
        arc = _arc(o, p, q)
        for c in points:
            angle = None if c in (p, q) else fig.angle(p, c, q)
            if angle is not None:
                yield Theorem("Multiple", (angle, "C2", arc), "Inscribed Angle")


def _chords(fig: PGPSFigure) -> Iterator[Theorem]:
    """Two chords meeting inside a circle: the angle and the products of their parts."""
    for circle in fig.circles:
        o, on = circle.centre, set(circle.points)
        if o is None:
            continue
        chords = [line for line in fig.lines if len(on & set(line)) >= 2]
        for first, second in itertools.combinations(chords, 2):
            meet = set(first) & set(second)
            if len(meet) != 1:
                continue
            e = meet.pop()
            if e in on or math.hypot(fig.xy[e][0] - circle.x, fig.xy[e][1] - circle.y) >= circle.r:
                continue
            ends1 = [p for p in first if p in on]
            ends2 = [p for p in second if p in on]
            if len(ends1) != 2 or len(ends2) != 2:
                continue
            (p, r), (q, s) = ends1, ends2
            yield Theorem(
                "Proportion", (fig.seg(e, p), fig.seg(e, q), fig.seg(e, s), fig.seg(e, r)), "Circle Chord"
            )
            for x, y, z, w in ((p, q, r, s), (p, s, r, q)):
                angle = fig.angle(x, e, y)
                if angle is not None:
                    yield Theorem("Chord2_Ang", (angle, _arc(o, x, y), _arc(o, z, w)), "Secant Angle")


def _tangents(fig: PGPSFigure) -> Iterator[Theorem]:
    """Lines touching a circle at a named point: radius ⊥ tangent, the outside angle, tangent lengths."""
    for circle in fig.circles:
        o = circle.centre
        if o is None:
            continue
        touching: list[tuple[str, str]] = []
        for t in circle.points:
            for ray in fig.rays(t):
                a = ray.points[-1]
                if a not in circle.points and _right(fig, t, o, a):
                    touching.append((t, a))
        fact: tuple[Fact, ...] = (("tangent",),)
        for t, a in touching:
            draw = () if fig.joined(o, t) else ((o, t),)
            yield Theorem("Gougu", (fig.seg(o, t), fig.seg(t, a), fig.seg(o, a)), "Tangent", fact, draw)
            yield from _outside_angles(fig, o, circle.points, t, a, fact)
        for (t1, a1), (t2, a2) in itertools.combinations(touching, 2):
            if a1 == a2 and t1 != t2:
                yield Theorem("Equal", (fig.seg(a1, t1), fig.seg(a2, t2)), "Tangent", fact)


def _outside_angles(
    fig: PGPSFigure, o: str, points: tuple[str, ...], t: str, a: str, fact: tuple[Fact, ...]
) -> Iterator[Theorem]:
    for ray in fig.rays(a):
        hits = [p for p in ray.points if p in points and p != t]
        angle = fig.angle(t, a, hits[0]) if hits else None
        if angle is None:
            continue
        if len(hits) == 1 and fig.joined(a, hits[0]) and ray.points[-1] == hits[0]:
            if _right(fig, hits[0], o, a):  # a second tangent: the angle and the arc between the touch points
                yield Theorem("Sum", (angle, _arc(o, t, hits[0]), "C180"), "Tangent", fact)
            continue
        if len(hits) >= 2:
            near, far = hits[0], hits[1]
            yield Theorem("TanSec_Ang", (angle, _arc(o, t, near), _arc(o, t, far)), "Secant Angle", fact)
            yield Theorem(
                "Geo_Mean", (fig.seg(a, near), fig.seg(a, far), fig.seg(a, t)), "Secant Segment", fact
            )


# --- polygons ----------------------------------------------------------------------------------


def _angle_list(fig: PGPSFigure, poly: tuple[str, ...]) -> list[Q] | None:
    out: list[Q] = []
    for i, v in enumerate(poly):
        q = fig.angle(poly[i - 1], v, poly[(i + 1) % len(poly)])
        if q is None:
            return None
        out.append(q)
    return out


def _shape(fig: PGPSFigure, quad: tuple[str, ...]) -> str | None:
    a, b, c, d = quad
    sides = [fig.length(a, b), fig.length(b, c), fig.length(c, d), fig.length(d, a)]
    para1 = _near(fig.degrees(b, a, d) + fig.degrees(a, b, c), 180.0)
    para2 = _near(fig.degrees(a, b, c) + fig.degrees(b, c, d), 180.0)
    if para1 and para2:
        right = _right(fig, b, a, c)
        equal = _near(sides[0], sides[1])
        if right:
            return "square" if equal else "rectangle"
        return "rhombus" if equal else "parallelogram"
    if para1 or para2:
        return "trapezoid"
    if (_near(sides[0], sides[1]) and _near(sides[2], sides[3])) or (
        _near(sides[1], sides[2]) and _near(sides[3], sides[0])
    ):
        return "kite"
    return None


_SHAPE_KIND = {
    "square": "Rhombus and Square",
    "rhombus": "Rhombus and Square",
    "rectangle": "Rectangle",
    "parallelogram": "Parallelogram",
    "trapezoid": "Trapezoid and Kite",
    "kite": "Trapezoid and Kite",
}


def _quadrilaterals(fig: PGPSFigure) -> Iterator[Theorem]:
    for quad in fig.polygons(4):
        angles = _angle_list(fig, quad)
        if angles is None:
            continue
        shape = _shape(fig, quad)
        facts: tuple[Fact, ...] = () if shape is None else (("shape", shape, *quad),)
        kind = _SHAPE_KIND.get(shape or "", "Polygon Angle")
        yield Theorem("Sum", (*angles, "C360"), kind, facts)
        if shape is not None:
            yield from _quad_measures(fig, quad, shape, facts)


def _quad_measures(
    fig: PGPSFigure, quad: tuple[str, ...], shape: str, facts: tuple[Fact, ...]
) -> Iterator[Theorem]:
    a, b, c, d = quad
    area, perim = _poly(fig, "area", quad), _poly(fig, "perim", quad)
    ab, bc, cd, da = fig.seg(a, b), fig.seg(b, c), fig.seg(c, d), fig.seg(d, a)
    measure = "Perimeter and Area of Quadrangle"
    kind = _SHAPE_KIND[shape]
    pairs = ((ab, bc), (bc, cd), (cd, da), (da, ab))
    if shape in ("parallelogram", "rectangle", "rhombus", "square"):
        for first, second in pairs:
            yield Theorem("PRK_Perim", (first, second, perim), measure, facts)
        yield Theorem("Equal", (ab, cd), kind, facts)
        yield Theorem("Equal", (bc, da), kind, facts)
        angles = _angle_list(fig, quad) or []
        for i in range(4):
            yield Theorem("Sum", (angles[i], angles[(i + 1) % 4], "C180"), kind, facts)
            yield Theorem("Equal", (angles[i], angles[(i + 2) % 4]), kind, facts)
        yield from _heights(fig, quad, facts)
    if shape in ("rhombus", "square"):
        for first, second in pairs:
            yield Theorem("Equal", (first, second), kind, facts)
    if shape in ("rectangle", "square"):
        for first, second in pairs:
            yield Theorem("Rect_Area", (first, second, area), measure, facts)
        if fig.joined(a, c):
            yield Theorem("Gougu", (ab, bc, fig.seg(a, c)), kind, facts)
    if shape == "square":
        for side in (ab, bc, cd, da):
            yield Theorem("RNgon_B_Area", ("C4", side, area), measure, facts)
            yield Theorem("Multiple", (side, "C4", perim), measure, facts)
    if shape in ("rhombus", "square", "kite"):
        yield from _diagonals(fig, quad, shape, facts)
    if shape == "trapezoid":
        yield from _trapezoid(fig, quad, facts)


def _height(fig: PGPSFigure, vertex: str, foot: str, p: str, q: str) -> bool:
    """Whether ``vertex foot`` is drawn and perpendicular to line ``p q`` at ``foot`` (which may be p or q)."""
    if foot == vertex or not fig.joined(vertex, foot):
        return False
    return _right(fig, foot, vertex, q if foot == p else p)


def _heights(fig: PGPSFigure, quad: tuple[str, ...], facts: tuple[Fact, ...]) -> Iterator[Theorem]:
    """Parallelogram area: a side and the perpendicular from a vertex of the opposite side to its line."""
    for i in range(4):
        p, q = quad[i], quad[(i + 1) % 4]
        line = fig.line_of(p, q)
        if line is None:
            continue
        for vertex in (quad[(i + 2) % 4], quad[(i + 3) % 4]):
            for foot in fig.lines[line]:
                if not _height(fig, vertex, foot, p, q):
                    continue
                fact = (*facts, ("perp", vertex, foot, p, q, foot))
                yield Theorem(
                    "Para_Area",
                    (fig.seg(p, q), fig.seg(vertex, foot), _poly(fig, "area", quad)),
                    "Perimeter and Area of Quadrangle",
                    fact,
                )


def _diagonals(
    fig: PGPSFigure, quad: tuple[str, ...], shape: str, facts: tuple[Fact, ...]
) -> Iterator[Theorem]:
    a, b, c, d = quad
    if not (fig.joined(a, c) and fig.joined(b, d)):
        return
    measure = "Perimeter and Area of Quadrangle"
    ac, bd = fig.seg(a, c), fig.seg(b, d)
    area = _poly(fig, "area", quad)
    yield Theorem("Kite_Area", (ac, bd, area), measure, facts)
    line1, line2 = fig.line_of(a, c), fig.line_of(b, d)
    centre = None if line1 is None or line2 is None else set(fig.lines[line1]) & set(fig.lines[line2])
    if shape == "kite" or not centre:
        return
    e = centre.pop()
    ae, be = fig.seg(a, e), fig.seg(b, e)
    yield Theorem("Rhom_Area", (ae, be, area), measure, facts)
    yield Theorem("Gougu", (ae, be, fig.seg(a, b)), "Rhombus and Square", facts)
    yield Theorem("Multiple", (ae, "C2", ac), "Rhombus and Square", facts)


def _trapezoid(fig: PGPSFigure, quad: tuple[str, ...], facts: tuple[Fact, ...]) -> Iterator[Theorem]:
    area = _poly(fig, "area", quad)
    a, b, c, d = quad
    if not _near(fig.degrees(b, a, d) + fig.degrees(a, b, c), 180.0):
        a, b, c, d = b, c, d, a  # the bases were AB and CD: renamed so that they are AD and BC
    top, bottom = fig.seg(a, d), fig.seg(b, c)
    kind = "Trapezoid and Kite"
    for i, (p, q) in enumerate(((a, d), (b, c))):
        line = fig.line_of(p, q)
        if line is None:
            continue
        for vertex in (b, c) if i == 0 else (a, d):
            for foot in fig.lines[line]:
                if not _height(fig, vertex, foot, p, q):
                    continue
                fact = (*facts, ("perp", vertex, foot, p, q, foot))
                height = fig.seg(vertex, foot)
                yield Theorem(
                    "Trap_Area", (top, bottom, height, area), "Perimeter and Area of Quadrangle", fact
                )
    m, n = _midpoint_on(fig, a, b), _midpoint_on(fig, d, c)
    if m is not None and n is not None:
        fact = (*facts, ("eq", a, m, m, b), ("eq", d, n, n, c))
        draw = () if fig.joined(m, n) else ((m, n),)
        yield Theorem("Median", (top, fig.seg(m, n), bottom), kind, fact, draw)


def _regular_polygons(fig: PGPSFigure) -> Iterator[Theorem]:
    for sides in (3, 4, 5, 6, 8):
        for poly in fig.polygons(sides) if sides > 3 else (_ccw(fig, t) for t in fig.triangles()):
            lengths = [fig.length(poly[i], poly[(i + 1) % sides]) for i in range(sides)]
            if not all(_near(x, lengths[0]) for x in lengths):
                continue
            angles = [fig.degrees(poly[i - 1], poly[i], poly[(i + 1) % sides]) for i in range(sides)]
            if not all(_near(x, angles[0]) for x in angles):
                continue
            yield from _regular(fig, poly, _SIDES[sides])


def _regular(fig: PGPSFigure, poly: tuple[str, ...], count: str) -> Iterator[Theorem]:
    fact: tuple[Fact, ...] = (("regular", *poly),)
    kind = "Perimeter and Area of Polygon"
    area = _poly(fig, "area", poly)
    sides = [fig.seg(poly[i], poly[(i + 1) % len(poly)]) for i in range(len(poly))]
    for side in sides:
        yield Theorem("RNgon_B_Area", (count, side, area), kind, fact)
        yield Theorem("Multiple", (side, count, _poly(fig, "perim", poly)), kind, fact)
    for first, second in itertools.pairwise(sides):
        yield Theorem("Equal", (first, second), kind, fact)
    for circle in fig.circles:
        o = circle.centre
        if o is None or not set(poly) <= set(circle.points):
            continue
        draw = () if fig.joined(o, poly[0]) else ((o, poly[0]),)
        yield Theorem("RNgon_L_Area", (count, fig.seg(o, poly[0]), area), kind, fact, draw)
        for i in range(len(poly)):
            m = _midpoint_on(fig, poly[i], poly[(i + 1) % len(poly)])
            if m is not None:
                draw = () if fig.joined(o, m) else ((o, m),)
                yield Theorem("RNgon_H_Area", (count, fig.seg(o, m), area), kind, fact, draw)
                break


def _polygon_angles(fig: PGPSFigure) -> Iterator[Theorem]:
    for sides in (5, 6, 8):
        for poly in fig.polygons(sides):
            angles = _angle_list(fig, poly)
            if angles is None:
                continue
            total = _poly(fig, "asum", poly)
            yield Theorem("Ngon_Angsum", (_SIDES[sides], total), "Polygon Angle")
            yield Theorem("Sum", (*angles, total), "Polygon Angle")


FAMILIES: tuple[Callable[[PGPSFigure], Iterable[Theorem]], ...] = (
    _triangle_sides,
    _right_triangles,
    _isosceles,
    _altitudes,
    _geometric_means,
    _bisectors,
    _angles_at_points,
    _segments,
    _midsegments,
    _parallel_angles,
    _similar,
    _circle_measures,
    _arcs,
    _chords,
    _tangents,
    _quadrilaterals,
    _regular_polygons,
    _polygon_angles,
)
"""Where theorem instances come from, in order (an instance proposed twice is kept once, first kind wins)."""
