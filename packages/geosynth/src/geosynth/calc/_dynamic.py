"""Dynamic rules: equations whose condition is read off the current linear system.

They run when the nonlinear pass makes no progress: isosceles triangles (equal sides ↔ equal base
angles) and trapezoids (equal legs), similar triangles by two equal angles or by an equal angle between
proportional sides, cuts across parallels in one ratio, and the angles of circles found from equal radii.
Their premises are the equations the system combined to establish the condition.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import cast

import sympy

from geosynth.calc._engine import Engine
from geosynth.calc._figure import Figure
from geosynth.calc._model import Polygon
from geosynth.calc._rules import (
    Derived,
    convex_polygons,
    fact_text,
    meet,
    relations,
    transversal_angles,
)
from geosynth.engine import Parallel, Perpendicular, Shape, Trapezoid

_MAX_TRIANGLES = 60
"""Similarity is looked for among at most this many triangles (pairs grow quadratically)."""


def _equal(engine: Engine, x: sympy.Expr, y: sympy.Expr) -> frozenset[int] | None:
    """The equations showing ``x = y``, or ``None`` when the system does not fix it."""
    if x == y:
        return frozenset()
    rx, sx = engine.substitute(x)
    ry, sy = engine.substitute(y)
    diff = sympy.expand(rx - ry)
    if diff == 0 or (diff.is_number and abs(float(diff)) < 1e-9):
        return sx | sy
    return None


def isosceles(engine: Engine) -> Iterator[Derived]:
    """Equal sides from a vertex give equal base angles, and conversely."""
    fig = engine.fig
    for tri in fig.triangles():
        for apex in tri:
            b, c = (p for p in tri if p != apex)
            sides = _equal(engine, fig.length(apex, b), fig.length(apex, c))
            if sides is not None:
                yield Derived(
                    fig.angle(apex, b, c), fig.angle(apex, c, b), "isosceles triangle", tuple(sorted(sides))
                )
            angles = _equal(engine, fig.angle(apex, b, c), fig.angle(apex, c, b))
            if angles is not None:
                yield Derived(
                    fig.length(apex, b), fig.length(apex, c), "isosceles triangle", tuple(sorted(angles))
                )


def _reduced(engine: Engine, expr: sympy.Expr) -> tuple[sympy.Expr, frozenset[int]]:
    return engine.substitute(expr) if not expr.is_number else (expr, frozenset())


def _triangle_parts(
    engine: Engine, tri: tuple[str, ...]
) -> tuple[list[tuple[sympy.Expr, frozenset[int]]], ...]:
    """Reduced angles at each vertex and reduced sides opposite each vertex."""
    fig = engine.fig
    angles = [_reduced(engine, fig.angle(tri[i - 1], tri[i], tri[(i + 1) % 3])) for i in range(3)]
    sides = [_reduced(engine, fig.length(tri[(i + 1) % 3], tri[(i + 2) % 3])) for i in range(3)]
    return angles, sides


def _congruent(angles: list[bool], sides: list[bool], right: list[bool]) -> bool:
    if all(sides):
        return True
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        if angles[i] and sides[j] and sides[k]:  # SAS
            return True
        if right[i] and sides[i] and (sides[j] or sides[k]):  # hypotenuse and a leg
            return True
    return sum(angles) >= 2 and any(sides)  # ASA / AAS


def triangle_pairs(engine: Engine) -> Iterator[Derived]:
    """Congruent triangles (SSS, SAS, ASA, AAS, RHS) give equal parts; two equal angles give similarity."""
    fig = engine.fig
    triangles = fig.triangles()[:_MAX_TRIANGLES]
    parts = {t: _triangle_parts(engine, t) for t in triangles}
    mids: dict[frozenset[str], tuple[str, frozenset[int]]] | None = None
    products = _product_equations(engine)
    for t1, t2 in itertools.combinations(triangles, 2):
        a1, s1 = parts[t1]
        for order in itertools.permutations(range(3)):
            perm = tuple(t2[i] for i in order)
            a2 = [parts[t2][0][i] for i in order]
            s2 = [parts[t2][1][i] for i in order]
            angles = [a1[i][0] == a2[i][0] for i in range(3)]
            sides = [s1[i][0] == s2[i][0] for i in range(3)]
            if sum(angles) == 1 and not any(sides):
                i = angles.index(True)
                ratio = _sas_ratio(engine, t1, perm, i, products)
                if ratio is not None:
                    why = tuple(sorted(a1[i][1] | a2[i][1] | ratio))
                    yield from _similar_angles(engine, t1, perm, why)
                    if mids is None:
                        mids = _midpoints(engine)
                    yield from _proportional_sides(engine, t1, perm, why, mids)
                continue
            if sum(angles) < 2 and sum(angles) + sum(sides) < 3:
                continue
            right = [angles[i] and a1[i][0] == 90 for i in range(3)]
            why = frozenset[int]().union(
                *(a1[i][1] | a2[i][1] for i in range(3) if angles[i]),
                *(s1[i][1] | s2[i][1] for i in range(3) if sides[i]),
            )
            premises = tuple(sorted(why))
            if _congruent(angles, sides, right):
                yield from _equal_parts(engine, t1, perm, premises)
            elif sum(angles) >= 2:
                if mids is None:
                    mids = _midpoints(engine)
                yield from _proportional_sides(engine, t1, perm, premises, mids)


def _product_equations(engine: Engine) -> dict[sympy.Expr, int]:
    """Equations ``a·d = b·c`` among lengths (also written ``a/b = c/d``), by their expanded form."""
    fig = engine.fig
    found: dict[sympy.Expr, int] = {}
    for record in engine.eqs:
        if record.lhs is None or record.rhs is None:
            continue
        diff = record.lhs - record.rhs
        symbols = diff.free_symbols
        if len(symbols) != 4 or any(fig.kinds.get(cast(sympy.Symbol, s)) != "length" for s in symbols):
            continue
        numerator = sympy.expand(sympy.numer(sympy.together(diff)))
        if len(sympy.Add.make_args(numerator)) == 2:
            found.setdefault(numerator, record.id)
            found.setdefault(-numerator, record.id)
    return found


def _sas_ratio(
    engine: Engine, t1: tuple[str, ...], t2: tuple[str, ...], i: int, products: dict[sympy.Expr, int]
) -> frozenset[int] | None:
    """The equations showing the sides about vertex ``i`` proportional (``t1`` to ``t2``), or ``None``.

    Either a given or derived ``a·d = b·c`` (``a/b = c/d``) states it, or the system's values make it hold.
    """
    fig = engine.fig
    j, k = (i + 1) % 3, (i + 2) % 3
    product = sympy.expand(
        fig.length(t1[i], t1[j]) * fig.length(t2[i], t2[k])
        - fig.length(t1[i], t1[k]) * fig.length(t2[i], t2[j])
    )
    if product in products:
        return frozenset({products[product]})
    reduced, sources = engine.substitute(product)
    if sympy.expand(reduced) == 0:
        return sources
    return None


def _similar_angles(
    engine: Engine, t1: tuple[str, ...], t2: tuple[str, ...], why: tuple[int, ...]
) -> Iterator[Derived]:
    fig = engine.fig
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        yield Derived(
            fig.angle(t1[j], t1[i], t1[k]), fig.angle(t2[j], t2[i], t2[k]), "similar triangles", why
        )


def _equal_parts(
    engine: Engine, t1: tuple[str, ...], t2: tuple[str, ...], why: tuple[int, ...]
) -> Iterator[Derived]:
    fig = engine.fig
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        yield Derived(fig.length(t1[j], t1[k]), fig.length(t2[j], t2[k]), "congruent triangles", why)
        yield Derived(
            fig.angle(t1[j], t1[i], t1[k]), fig.angle(t2[j], t2[i], t2[k]), "congruent triangles", why
        )


def _proportional_sides(
    engine: Engine,
    t1: tuple[str, ...],
    t2: tuple[str, ...],
    why: tuple[int, ...],
    mids: dict[frozenset[str], tuple[str, frozenset[int]]],
) -> Iterator[Derived]:
    fig = engine.fig
    sides = [(t1[i], t1[(i + 1) % 3], t2[i], t2[(i + 1) % 3]) for i in range(3)]
    for (a, b, x, y), (c, d, z, w) in itertools.combinations(sides, 2):
        yield Derived(
            fig.length(a, b) * fig.length(z, w), fig.length(c, d) * fig.length(x, y), "similar triangles", why
        )
    for i, (a, b, x, y) in enumerate(sides):
        m, n = mids.get(frozenset((a, b))), mids.get(frozenset((x, y)))
        if m is not None and n is not None:  # corresponding medians scale like the sides
            apex1, apex2 = t1[(i + 2) % 3], t2[(i + 2) % 3]
            premises = tuple(sorted(set(why) | m[1] | n[1]))
            yield Derived(
                fig.length(apex1, m[0]) * fig.length(x, y),
                fig.length(apex2, n[0]) * fig.length(a, b),
                "similar triangles",
                premises,
            )


def circles(engine: Engine) -> Iterator[Derived]:
    """Points at equal known distance from a centre lie on a circle: inscribed angle = half the central."""
    fig = engine.fig
    names = {str(s) for s in fig.kinds}
    points = sorted({p for s in fig.segments for p in s})
    for centre in points:
        groups: dict[sympy.Expr, list[str]] = {}
        for p in points:
            if p != centre and "".join(sorted((centre, p))) in names:
                red, _ = engine.reduced(fig.length(centre, p))
                groups.setdefault(red, []).append(p)
        for radius, on_circle in groups.items():
            if len(on_circle) < 2 or radius == 0:
                continue
            yield from _inscribed(engine, centre, on_circle)
            yield from _power(engine, centre, on_circle)
            yield from _chord_angles(engine, centre, on_circle)


def _inscribed(engine: Engine, centre: str, on_circle: list[str]) -> Iterator[Derived]:
    fig = engine.fig
    radii = _equal(engine, fig.length(centre, on_circle[0]), fig.length(centre, on_circle[1])) or frozenset()
    for sources in [
        _equal(engine, fig.length(centre, on_circle[0]), fig.length(centre, p)) for p in on_circle
    ]:
        radii |= sources or frozenset()
    why = tuple(sorted(radii))
    for a, b in itertools.combinations(on_circle, 2):
        for p in on_circle:
            if p in (a, b):
                continue
            inscribed = fig.angle(a, p, b)
            if fig.collinear(a, centre, b):
                yield Derived(inscribed, sympy.Integer(90), "inscribed angle", why)
                continue
            side = fig.side(p, centre, a, b)
            if side is None:
                continue
            central = fig.angle(a, centre, b)
            rhs = central / 2 if side else 180 - central / 2
            yield Derived(inscribed, rhs, "inscribed angle", why)


def _midpoints(engine: Engine) -> dict[frozenset[str], tuple[str, frozenset[int]]]:
    fig = engine.fig
    found: dict[frozenset[str], tuple[str, frozenset[int]]] = {}
    for a, m, b in sorted(fig.between):
        if a < b:
            same = _equal(engine, fig.length(a, m), fig.length(m, b))
            if same is not None:
                found[frozenset((a, b))] = (m, same)
    return found


def medians(engine: Engine) -> Iterator[Derived]:
    """Midpoints found from equal halves: midsegments, and medians meeting at the centroid (2 : 1)."""
    fig = engine.fig
    mids = _midpoints(engine)
    if len(mids) < 2:
        return
    for tri in fig.triangles():
        feet = {v: mids.get(frozenset(p for p in tri if p != v)) for v in tri}
        for u, w in itertools.combinations(tri, 2):
            fu, fw = feet[u], feet[w]
            if fu is None or fw is None:
                continue
            why = tuple(sorted(fu[1] | fw[1]))
            if fig.drawn(fu[0], fw[0]):
                yield Derived(2 * fig.length(fu[0], fw[0]), fig.length(u, w), "midsegment", why)
            line_u, line_w = fig.known_line(u, fu[0]), fig.known_line(w, fw[0])
            if line_u is None or line_w is None:
                continue
            centre = meet(fig, line_u, line_w)
            if centre is None or centre in tri:
                continue
            for v, foot in ((u, fu[0]), (w, fw[0])):
                yield Derived(fig.length(v, centre), 2 * fig.length(centre, foot), "centroid", why)


def _tangent_points(engine: Engine, centre: str, ring: set[str], e: str) -> list[str]:
    fig = engine.fig
    found: list[str] = []
    for line in fig.lines_through(e):
        hits = sorted(line & ring)
        if len(hits) == 1 and _equal(engine, fig.angle(centre, hits[0], e), sympy.Integer(90)) is not None:
            found.append(hits[0])
    return found


def _power(engine: Engine, centre: str, on_circle: list[str]) -> Iterator[Derived]:
    """Power of a point: ``EA·EB`` is the same for every line through ``E`` meeting the circle twice."""
    fig = engine.fig
    ring = set(on_circle)
    for e in sorted({p for line in fig.lines for p in line} - ring - {centre}):
        chords: list[sympy.Expr] = []
        for line in fig.lines_through(e):
            hits = sorted(line & ring)
            if len(hits) == 2:
                chords.append(fig.length(e, hits[0]) * fig.length(e, hits[1]))
        tangents = _tangent_points(engine, centre, ring, e)
        chords.extend(fig.length(e, t) ** 2 for t in tangents)
        for x, y in itertools.combinations(chords, 2):
            yield Derived(x, y, "power of a point")
        for t, u in itertools.combinations(tangents, 2):
            yield Derived(fig.length(e, t), fig.length(e, u), "tangent segments")


def arc(fig: Figure, centre: str, p: str, q: str, away: str) -> sympy.Expr:
    """The measure of the arc ``p q`` that does not hold the circle point ``away`` (degrees).

    It is the central angle when ``away`` and the centre are on the same side of the chord (the arc is the
    minor one), ``360°`` less it when they are on opposite sides, ``180°`` on a diameter; the minor arc
    when the diagram does not say.
    """
    if fig.collinear(p, centre, q):
        return sympy.Integer(180)
    central = fig.angle(p, centre, q)
    return sympy.Integer(360) - central if fig.side(away, centre, p, q) is False else central


def _chord_angles(engine: Engine, centre: str, on_circle: list[str]) -> Iterator[Derived]:
    """Angle of two chords (half the sum of the arcs) or two secants (half the difference)."""
    fig = engine.fig
    ring = set(on_circle)
    for e in sorted({p for line in fig.lines for p in line} - ring - {centre}):
        chords = [sorted(line & ring) for line in fig.lines_through(e) if len(line & ring) == 2]
        for (a, b), (c, d) in itertools.combinations(chords, 2):
            inside = fig.is_between(a, e, b), fig.is_between(c, e, d)
            if all(inside):
                for p, q, r, t in ((a, c, b, d), (a, d, b, c)):
                    arcs = arc(fig, centre, p, q, r) + arc(fig, centre, r, t, p)
                    yield Derived(fig.angle(p, e, q), arcs / 2, "chord angle")
            elif not any(inside):
                near1, far1 = (a, b) if fig.is_between(e, a, b) else (b, a)
                near2, far2 = (c, d) if fig.is_between(e, c, d) else (d, c)
                arcs = arc(fig, centre, far1, far2, near1) - arc(fig, centre, near1, near2, far1)
                yield Derived(fig.angle(near1, e, near2), arcs / 2, "secant angle")
        for t in _tangent_points(engine, centre, ring, e):
            for a, b in chords:
                if fig.is_between(e, a, b) or fig.is_between(e, b, a):
                    near, far = (a, b) if fig.is_between(e, a, b) else (b, a)
                    arcs = arc(fig, centre, t, far, near) - arc(fig, centre, t, near, far)
                    yield Derived(fig.angle(t, e, near), arcs / 2, "tangent-secant angle")


def angle_bisectors(engine: Engine) -> Iterator[Derived]:
    """A bisector from ``B`` meeting ``AC`` at ``D`` divides it in the ratio of the sides: AD·BC = DC·AB."""
    fig = engine.fig
    for a, d, c in sorted(fig.between):
        if a > c:
            continue
        for b in sorted({p for s in fig.segments if d in s for p in s} - {a, c, d}):
            if fig.collinear(a, b, c) or not (fig.drawn(a, b) and fig.drawn(b, c)):
                continue
            same = _equal(engine, fig.angle(a, b, d), fig.angle(d, b, c))
            if same is not None:
                yield Derived(
                    fig.length(a, d) * fig.length(b, c),
                    fig.length(d, c) * fig.length(a, b),
                    "angle bisector",
                    tuple(sorted(same)),
                )


def kites(engine: Engine) -> Iterator[Derived]:
    """A quadrilateral with two pairs of equal adjacent sides is a kite: area = half the diagonals' product."""
    fig = engine.fig
    for cond in fig.problem.conditions:
        points = tuple(getattr(cond, "points", ()))
        if not isinstance(cond, Polygon | Shape) or len(points) != 4:
            continue
        for i in (0, 1):
            v, w = points[i], points[i + 2]
            left, right = points[i - 1], points[(i + 1) % 4]
            first = _equal(engine, fig.length(v, left), fig.length(v, right))
            second = _equal(engine, fig.length(w, left), fig.length(w, right))
            if first is not None and second is not None:
                why = tuple(sorted(first | second))
                half = sympy.Rational(1, 2) * fig.length(v, w) * fig.length(left, right)
                yield Derived(fig.area(points), half, "kite area", why)
                yield Derived(fig.angle(v, left, w), fig.angle(v, right, w), "kite", why)


def parallelograms(engine: Engine) -> Iterator[Derived]:
    """A convex quadrilateral with both pairs of opposite angles equal is a parallelogram."""
    fig = engine.fig
    if fig.quadrilaterals is None:
        fig.quadrilaterals = list(convex_polygons(fig, 4))
    for a, b, c, d in fig.quadrilaterals:
        first = _equal(engine, fig.angle(d, a, b), fig.angle(b, c, d))
        second = _equal(engine, fig.angle(a, b, c), fig.angle(c, d, a))
        if first is not None and second is not None:
            why = tuple(sorted(first | second))
            yield Derived(fig.length(a, b), fig.length(c, d), "parallelogram", why)
            yield Derived(fig.length(b, c), fig.length(d, a), "parallelogram", why)


def _fraction_along(engine: Engine, a: str, m: str, b: str) -> tuple[sympy.Expr, frozenset[int]]:
    """``am / ab`` for ``m`` between ``a`` and ``b``, from the system's reduced lengths."""
    fig = engine.fig
    near, s1 = engine.substitute(fig.length(a, m))
    rest, s2 = engine.substitute(fig.length(m, b))
    return sympy.cancel(near / (near + rest)), s1 | s2


def parallel_cuts(engine: Engine) -> Iterator[Derived]:
    """A segment across two parallels cutting both legs in one ratio: it is the weighted mean of the bases.

    ``RS ∥ VT`` (R, S on one line, V, T on the other; S and T on one side of RV, R and V on one side of ST,
    so the legs RV and ST do not cross), X on RV and Y on ST with ``RX : RV = SY : ST = t``: as vectors
    ``XY = (1 − t)·RS + t·VT`` with RS and VT pointing the same way, so ``XY = (1 − t)·RS + t·VT`` (a
    trapezoid's midsegment at ``t = ½``). When ``t`` is not a number it is written ``XY·RV = XV·RS + RX·VT``.
    """
    fig = engine.fig
    for points, label in relations(fig, Parallel):
        l1, l2 = fig.line_id(points[0], points[1]), fig.line_id(points[2], points[3])
        on1, on2 = sorted(fig.on_line(l1) - fig.on_line(l2)), sorted(fig.on_line(l2) - fig.on_line(l1))
        for (r, s), (v, t) in itertools.product(
            itertools.combinations(on1, 2), itertools.permutations(on2, 2)
        ):
            if fig.side(s, t, r, v) is not True or fig.side(r, v, s, t) is not True:
                continue
            xs = [x for x in sorted(fig.on_line(fig.line_id(r, v))) if fig.is_between(r, x, v)]
            ys = [y for y in sorted(fig.on_line(fig.line_id(s, t))) if fig.is_between(s, y, t)]
            for x, y in itertools.product(xs, ys):
                if x == y or not fig.drawn(x, y):
                    continue
                first, why1 = _fraction_along(engine, r, x, v)
                second, why2 = _fraction_along(engine, s, y, t)
                if sympy.cancel(first - second) != 0:
                    continue
                why = (engine.fact(label), *sorted(why1 | why2))
                if first.is_number:
                    mean = (1 - first) * fig.length(r, s) + first * fig.length(v, t)
                    yield Derived(fig.length(x, y), mean, "parallel cut", why)
                else:
                    whole = fig.length(r, x) + fig.length(x, v)
                    mean = fig.length(x, v) * fig.length(r, s) + fig.length(r, x) * fig.length(v, t)
                    yield Derived(fig.length(x, y) * whole, mean, "parallel cut", why)


def isosceles_trapezoids(engine: Engine) -> Iterator[Derived]:
    """A trapezoid (exactly one pair of parallel sides) with equal legs: equal base angles and diagonals."""
    fig = engine.fig
    for cond in fig.problem.conditions:
        if not isinstance(cond, Trapezoid):
            continue
        a, b, c, d = cond.points  # a b ∥ c d; the legs are d a and b c
        legs = _equal(engine, fig.length(a, d), fig.length(b, c))
        if legs is None:
            continue
        why = (engine.fact(fact_text(cond)), *sorted(legs))
        yield Derived(fig.angle(d, a, b), fig.angle(a, b, c), "isosceles trapezoid", why)
        yield Derived(fig.angle(a, d, c), fig.angle(b, c, d), "isosceles trapezoid", why)
        yield Derived(fig.length(a, c), fig.length(b, d), "isosceles trapezoid", why)


DYNAMIC_RULES: tuple[tuple[str, Callable[[Engine], Iterator[Derived]]], ...] = (
    ("isosceles triangle", isosceles),
    ("circle", circles),
    ("medians", medians),
    ("kite", kites),
    ("parallelogram", parallelograms),
    ("angle bisector", angle_bisectors),
    ("parallel cut", parallel_cuts),
    ("isosceles trapezoid", isosceles_trapezoids),
    ("triangle pairs", triangle_pairs),
)
"""Rules run on the current system when nothing else progresses (name, generator)."""


def relation_goal(engine: Engine, goal: Parallel | Perpendicular) -> frozenset[int] | None:
    """The equations (or given facts) that confirm a parallel / perpendicular goal, else ``None``."""
    fig = engine.fig
    for _ in range(20):
        if not engine.step():
            break
    kind = Parallel if isinstance(goal, Parallel) else Perpendicular
    for points, label in relations(fig, kind):
        if kind.of(*points) == goal:
            return frozenset({engine.fact(label)})
    l1, l2 = fig.line_id(*goal.points[:2]), fig.line_id(*goal.points[2:])
    if kind is Perpendicular:
        x = meet(fig, l1, l2)
        if x is None:
            return None
        p, q = next(iter(fig.on_line(l1) - {x})), next(iter(fig.on_line(l2) - {x}))
        return _equal(engine, fig.angle(p, x, q), sympy.Integer(90))
    for left, right, same in transversal_angles(fig, l1, l2):
        if not same:  # alternate angles
            found = _equal(engine, left, right)
            if found is not None:
                return found
    return None
