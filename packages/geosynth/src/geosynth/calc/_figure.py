"""The figure of a calculation problem: lines, order along them, rays, sides, drawn segments, symbols.

There are no coordinates. Lines come from ``Collinear`` (and ``Between``) facts, merged when they share
two points; every other drawn segment is a line of its own. Order along a line comes from ``Between``
facts; it tells which points lie on the same ray from a vertex, so ``∠ABC`` and ``∠A'BC`` are one
quantity when ``A`` and ``A'`` are on the same ray from ``B``. Sides of lines come from the diagram's
``SameSide`` / ``OppositeSide`` facts, indexed by (point pair, line).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator

import sympy

from geosynth.calc._model import (
    CalcProblem,
    Centroid,
    Equation,
    Incenter,
    Op,
    Polygon,
    SimilarPolygons,
    Var,
)
from geosynth.engine import (
    Angle,
    Area,
    Between,
    Collinear,
    CongruentTriangles,
    Length,
    Midpoint,
    OppositeSide,
    Parallel,
    Perpendicular,
    SameSide,
    Shape,
    SimilarTriangles,
)

Pair = frozenset[str]
STRAIGHT = sympy.Integer(180)
ZERO = sympy.Integer(0)


def _pair(a: str, b: str) -> Pair:
    return frozenset((a, b))


def _expr_quantities(node: object) -> Iterator[Length | Angle | Area | Var]:
    if isinstance(node, Length | Angle | Area | Var):
        yield node
    elif isinstance(node, Op):
        for arg in node.args:
            yield from _expr_quantities(arg)


def relation_points(relation: object) -> tuple[str, ...]:
    """The points a condition mentions (in its stored order)."""
    if isinstance(relation, SimilarPolygons):
        return (*relation.first, *relation.second)
    if isinstance(relation, Incenter):
        return (relation.centre, *relation.triangle)
    if isinstance(relation, Centroid):
        return (relation.centre, *relation.triangle, *relation.feet)
    points = getattr(relation, "points", ())
    return tuple(points)


class Figure:
    """Lines, order, rays, sides and the symbols of one problem's quantities."""

    def __init__(self, problem: CalcProblem) -> None:
        """Index the problem's relations and diagram."""
        self.problem = problem
        self.between: set[tuple[str, str, str]] = set()
        self.segments: set[Pair] = set()
        self.lines: list[frozenset[str]] = []
        self._line_of: dict[Pair, int] = {}
        self.sides: dict[tuple[Pair, int], bool] = {}
        self.quadrilaterals: list[tuple[str, ...]] | None = None
        """Convex quadrilaterals of drawn segments (computed on first use by the rules)."""
        self.kinds: dict[sympy.Symbol, str] = {}
        """Symbol to its kind: ``length``, ``angle``, ``area`` or ``var``."""
        self._build()

    # --- construction -----------------------------------------------------------------------------

    def _build(self) -> None:
        collinear: list[set[str]] = []
        for rel in self.problem.conditions:
            if isinstance(rel, Between | Midpoint):
                a, m, b = (
                    (rel.points[1], rel.points[0], rel.points[2]) if isinstance(rel, Midpoint) else rel.points
                )
                self.between.update({(a, m, b), (b, m, a)})
                collinear.append({a, m, b})
            elif isinstance(rel, Collinear):
                collinear.append(set(rel.points))
        self._merge_lines(collinear)
        for rel in self.problem.diagram:  # the diagram only orders points on lines the conditions give
            if isinstance(rel, Between) and self.collinear(*rel.points):
                a, m, b = rel.points
                self.between.update({(a, m, b), (b, m, a)})
        for cond in self.problem.conditions:
            for a, b in self._condition_segments(cond):
                if a != b:
                    self.segments.add(_pair(a, b))
        for q in _expr_quantities(self.problem.goal):
            self._add_quantity_segments(q)
        for line in self.lines:
            self.segments.update(_pair(a, b) for a, b in itertools.combinations(sorted(line), 2))
        for rel in self.problem.diagram:
            if isinstance(rel, SameSide | OppositeSide):
                p, q, a, b = rel.points
                self.sides[(_pair(p, q), self.line_id(a, b))] = isinstance(rel, SameSide)

    def _merge_lines(self, sets: list[set[str]]) -> None:
        merged: list[set[str]] = []
        for group in sets:
            group = set(group)
            keep: list[set[str]] = []
            for line in merged:
                if len(line & group) >= 2:
                    group |= line
                else:
                    keep.append(line)
            merged = [*keep, group]
        for line in merged:
            self._register(frozenset(line))

    def _register(self, line: frozenset[str]) -> int:
        index = len(self.lines)
        self.lines.append(line)
        for a, b in itertools.combinations(sorted(line), 2):
            self._line_of.setdefault(_pair(a, b), index)
        return index

    def _add_quantity_segments(self, q: Length | Angle | Area | Var) -> None:
        if isinstance(q, Area) and len(q.points) == 3:
            self.segments.update(_pair(a, b) for a, b in itertools.combinations(q.points, 2))
        elif isinstance(q, Length):
            self.segments.add(_pair(*q.points))
        elif isinstance(q, Angle):
            a, b, c = q.points
            self.segments.update({_pair(a, b), _pair(b, c)})

    def _condition_segments(self, cond: object) -> Iterator[tuple[str, str]]:
        if isinstance(cond, Equation):
            for q in _expr_quantities(cond.expr):
                if isinstance(q, Length):
                    yield q.points
                elif isinstance(q, Angle):
                    a, b, c = q.points
                    yield from ((a, b), (b, c))
                elif isinstance(q, Area) and len(q.points) == 3:
                    yield from itertools.combinations(q.points, 2)
        elif isinstance(cond, Parallel | Perpendicular):
            p = cond.points
            yield from ((p[0], p[1]), (p[2], p[3]))
        elif isinstance(cond, Shape | Polygon):
            pts = relation_points(cond)
            yield from ((pts[i], pts[(i + 1) % len(pts)]) for i in range(len(pts)))
            if len(pts) == 4:  # the diagonals: their triangles carry the shape's metric facts
                yield from ((pts[0], pts[2]), (pts[1], pts[3]))
        elif isinstance(cond, SimilarTriangles | CongruentTriangles):
            p = cond.points
            for tri in (p[:3], p[3:]):
                yield from itertools.combinations(tri, 2)
        elif isinstance(cond, SimilarPolygons):
            for poly in (cond.first, cond.second):
                yield from ((poly[i], poly[(i + 1) % len(poly)]) for i in range(len(poly)))
        elif isinstance(cond, Midpoint):
            m, a, b = cond.points
            yield from ((m, a), (m, b))
        elif isinstance(cond, Incenter | Centroid):
            yield from itertools.combinations(cond.triangle, 2)

    # --- queries ----------------------------------------------------------------------------------

    def line_id(self, a: str, b: str) -> int:
        """The line through ``a`` and ``b`` (registered on first use when no fact names it)."""
        key = _pair(a, b)
        found = self._line_of.get(key)
        return self._register(key) if found is None else found

    def known_line(self, a: str, b: str) -> int | None:
        """The line through ``a`` and ``b`` if the figure has one, else ``None``."""
        return self._line_of.get(_pair(a, b))

    def on_line(self, line: int) -> frozenset[str]:
        """The named points of a line."""
        return self.lines[line]

    def collinear(self, a: str, b: str, c: str) -> bool:
        """Whether three points lie on one known line."""
        line = self._line_of.get(_pair(a, b))
        return line is not None and c in self.lines[line]

    def is_between(self, a: str, m: str, b: str) -> bool:
        """Whether ``m`` lies strictly between ``a`` and ``b``."""
        return (a, m, b) in self.between

    def same_ray(self, v: str, p: str, q: str) -> bool:
        """Whether ``p`` and ``q`` lie on one ray from ``v`` (all three collinear, ``v`` not between)."""
        return p == q or (self.collinear(v, p, q) and not self.is_between(p, v, q))

    def ray(self, v: str, p: str) -> str:
        """The ray from ``v`` through ``p``, named by its least point."""
        line = self.known_line(v, p)
        if line is None:
            return p
        return min(q for q in self.lines[line] if q != v and self.same_ray(v, p, q))

    def ray_points(self, v: str, p: str) -> list[str]:
        """Every named point of the ray from ``v`` through ``p``."""
        line = self.known_line(v, p)
        if line is None:
            return [p]
        return sorted(q for q in self.lines[line] if q != v and self.same_ray(v, p, q))

    def rays_at(self, v: str) -> list[str]:
        """The rays (by name) leaving ``v`` along drawn segments."""
        return sorted({self.ray(v, p) for s in self.segments if v in s for p in s if p != v})

    def side(self, p: str, q: str, a: str, b: str) -> bool | None:
        """Whether ``p`` and ``q`` are on the same side of line ``a b`` (``None`` when unknown)."""
        line = self.known_line(a, b)
        if line is None:
            return self.sides.get((_pair(p, q), self.line_id(a, b)))
        return self.sides.get((_pair(p, q), line))

    def ray_side(self, v: str, r1: str, r2: str, r3: str) -> bool | None:
        """Whether rays ``v r1`` and ``v r2`` are on the same side of the line of ray ``v r3``."""
        for p in self.ray_points(v, r1):
            for q in self.ray_points(v, r2):
                found = self.side(p, q, v, r3)
                if found is not None:
                    return found
        return None

    def lines_through(self, p: str) -> list[frozenset[str]]:
        """The point sets of every line through ``p``: known lines and drawn segments."""
        found = [line for line in self.lines if p in line and len(line) > 2]
        found.extend(seg for seg in self.segments if p in seg and self.known_line(*seg) is None)
        found.extend(
            self.lines[i]
            for seg in self.segments
            if p in seg
            for i in [self._line_of[seg]]
            if len(self.lines[i]) == 2
        )
        return list(dict.fromkeys(found))

    def drawn(self, a: str, b: str) -> bool:
        """Whether segment ``a b`` is drawn (on a line of the figure or named by a fact)."""
        return _pair(a, b) in self.segments

    def triangles(self) -> list[tuple[str, str, str]]:
        """Every triple of points pairwise joined by drawn segments and not on one line."""
        neighbours: dict[str, set[str]] = {}
        for seg in self.segments:
            a, b = sorted(seg)
            neighbours.setdefault(a, set()).add(b)
            neighbours.setdefault(b, set()).add(a)
        found: list[tuple[str, str, str]] = []
        for a in sorted(neighbours):
            for b in sorted(n for n in neighbours[a] if n > a):
                for c in sorted(n for n in neighbours[a] & neighbours[b] if n > b):
                    if not self.collinear(a, b, c):
                        found.append((a, b, c))
        return found

    # --- symbols ----------------------------------------------------------------------------------

    def _symbol(self, name: str, kind: str) -> sympy.Symbol:
        sym = sympy.Symbol(name, real=True)
        self.kinds[sym] = kind
        return sym

    def length(self, a: str, b: str) -> sympy.Symbol:
        """The symbol of ``|a b|``."""
        x, y = sorted((a, b))
        return self._symbol(f"{x}{y}", "length")

    def angle(self, a: str, b: str, c: str) -> sympy.Expr:
        """The symbol of ``∠abc`` in degrees (0 or 180 when the arms are one ray or opposite rays)."""
        ra, rc = self.ray(b, a), self.ray(b, c)
        if ra == rc:
            return ZERO
        if self.collinear(a, b, c):
            return STRAIGHT
        x, y = sorted((ra, rc))
        return self._symbol(f"∠{x}{b}{y}", "angle")

    def area(self, points: Iterable[str]) -> sympy.Symbol:
        """The symbol of the area of a polygon (vertices in boundary order)."""
        return self._symbol(f"S({''.join(Area.of(*points).points)})", "area")

    def ratio(self, name: str) -> sympy.Symbol:
        """The symbol of a positive scale factor (of a similarity)."""
        return self._symbol(name, "ratio")

    def var(self, name: str) -> sympy.Symbol:
        """The symbol of a free variable."""
        return self._symbol(name, "var")
