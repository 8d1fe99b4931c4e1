r"""A synthesized figure as PGPS problems see it: drawn lines, circles, and the quantities they show.

A PGPS problem talks about what its diagram draws: lines through named points (``line A B C``),
circles with the points on them (``\\odot O lieson A B C``), and the lengths, angles, arcs and areas of
those. :class:`PGPSFigure` reads that from a problem's constructions (the same drawing table the
renderer uses, so the text and the picture agree) and its realised coordinates, scaled so that the
given segment has the given length. Quantities are :class:`Q` keys whose values the figure measures.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from geosynth.engine import Diagram, Problem
from geosynth.synth._render import _collect, _merge_collinear
from geosynth.synth.errors import SynthError

__all__ = ("Circle", "PGPSFigure", "Q", "Ray", "pgps_figure")

_Pt = tuple[float, float]
TOL = 1e-7
"""Relative tolerance of the figure's numeric tests (coordinates come from exact constructions)."""


@dataclass(frozen=True, order=True)
class Q:
    """A quantity of the figure: its kind and the points that name it (canonical order).

    Kinds: ``seg`` (p q), ``ang`` (a vertex c, rays named by their nearest points), ``arc`` (o a b: the
    minor arc ab of the circle centred at o), ``area`` (a polygon), ``perim`` (a polygon), ``asum``
    (a polygon's interior angle sum), ``carea``/``circ`` (the circle centred at o: area, circumference),
    ``sector``/``arclen``/``segarea`` (o a b: sector area, arc length, circular-segment area of the
    minor arc), ``sin``/``cos``/``tan`` (a vertex c: a trigonometric ratio of an angle).
    """

    kind: str
    pts: tuple[str, ...]


@dataclass(frozen=True)
class Circle:
    """A drawn circle: its centre (a named point or ``None``), the named points on it, its geometry."""

    centre: str | None
    points: tuple[str, ...]
    x: float
    y: float
    r: float


@dataclass(frozen=True)
class Ray:
    """A ray from a vertex along a drawn line: the named points on it, nearest first."""

    vertex: str
    points: tuple[str, ...]
    line: int

    @property
    def rep(self) -> str:
        """The point that names the ray (the nearest one)."""
        return self.points[0]


def _dist(p: _Pt, q: _Pt) -> float:
    return math.hypot(p[0] - q[0], p[1] - q[1])


def _shoelace(pts: list[_Pt]) -> float:
    total = 0.0
    for (x0, y0), (x1, y1) in itertools.pairwise([*pts, pts[0]]):
        total += x0 * y1 - x1 * y0
    return total / 2


class PGPSFigure:
    """Drawn lines and circles of a figure, and the measure of every quantity it names."""

    def __init__(self, xy: Mapping[str, _Pt], lines: list[tuple[str, ...]], circles: list[Circle]) -> None:
        """Build from coordinates (already in the problem's length unit), drawn lines and circles."""
        self.xy = dict(xy)
        self.lines = tuple(lines)
        self.circles = tuple(circles)
        self.span = max(
            max(p[0] for p in xy.values()) - min(p[0] for p in xy.values()),
            max(p[1] for p in xy.values()) - min(p[1] for p in xy.values()),
            1e-9,
        )
        self._pair_line: dict[frozenset[str], int] = {}
        for index, line in enumerate(self.lines):
            for p, q in itertools.combinations(line, 2):
                self._pair_line.setdefault(frozenset((p, q)), index)
        self._rays: dict[str, list[Ray]] = {p: self._rays_at(p) for p in self.xy}

    # --- structure -------------------------------------------------------------------------------

    def joined(self, p: str, q: str) -> bool:
        """Whether a drawn line passes through both points."""
        return frozenset((p, q)) in self._pair_line

    def line_of(self, p: str, q: str) -> int | None:
        """The index of the drawn line through both points."""
        return self._pair_line.get(frozenset((p, q)))

    def _rays_at(self, vertex: str) -> list[Ray]:
        out: list[Ray] = []
        for index, line in enumerate(self.lines):
            if vertex not in line:
                continue
            at = line.index(vertex)
            if at > 0:
                out.append(Ray(vertex, tuple(reversed(line[:at])), index))
            if at < len(line) - 1:
                out.append(Ray(vertex, line[at + 1 :], index))
        return out

    def rays(self, vertex: str) -> list[Ray]:
        """The rays leaving a point along drawn lines."""
        return self._rays[vertex]

    def ray_to(self, vertex: str, point: str) -> Ray | None:
        """The ray from ``vertex`` that passes through ``point``."""
        return next((r for r in self._rays[vertex] if point in r.points), None)

    def triangles(self) -> Iterator[tuple[str, str, str]]:
        """Triples of points joined pairwise by drawn lines and not collinear."""
        for a, b, c in itertools.combinations(sorted(self.xy), 3):
            if self.joined(a, b) and self.joined(b, c) and self.joined(a, c) and not self.collinear(a, b, c):
                yield a, b, c

    def collinear(self, a: str, b: str, c: str) -> bool:
        """Whether three points are (numerically) collinear."""
        pa, pb, pc = self.xy[a], self.xy[b], self.xy[c]
        cross = (pb[0] - pa[0]) * (pc[1] - pa[1]) - (pb[1] - pa[1]) * (pc[0] - pa[0])
        return abs(cross) <= TOL * self.span * self.span

    def polygons(self, sides: int) -> Iterator[tuple[str, ...]]:
        """Convex polygons with ``sides`` vertices whose sides are drawn and whose vertices are corners.

        Each polygon once, in counter-clockwise order from its least vertex.
        """
        seen: set[tuple[str, ...]] = set()
        for combo in itertools.combinations(sorted(self.xy), sides):
            centre = (
                sum(self.xy[p][0] for p in combo) / sides,
                sum(self.xy[p][1] for p in combo) / sides,
            )
            order = sorted(
                combo, key=lambda p: math.atan2(self.xy[p][1] - centre[1], self.xy[p][0] - centre[0])
            )
            start = order.index(min(order))
            order = order[start:] + order[:start]
            key = tuple(order)
            if key in seen or not self._convex_cycle(order):
                continue
            seen.add(key)
            yield key

    def _convex_cycle(self, order: list[str]) -> bool:
        n = len(order)
        for i in range(n):
            a, b, c = order[i - 1], order[i], order[(i + 1) % n]
            if not self.joined(b, c) or self.collinear(a, b, c):
                return False
            pa, pb, pc = self.xy[a], self.xy[b], self.xy[c]
            cross = (pb[0] - pa[0]) * (pc[1] - pb[1]) - (pb[1] - pa[1]) * (pc[0] - pb[0])
            if cross <= 0:
                return False
        return True

    def circle_of(self, centre: str) -> Circle | None:
        """The drawn circle centred at a named point."""
        return next((c for c in self.circles if c.centre == centre), None)

    # --- quantities ------------------------------------------------------------------------------

    def seg(self, p: str, q: str) -> Q:
        """The segment ``p q``."""
        return Q("seg", (p, q) if p < q else (q, p))

    def angle(self, a: str, b: str, c: str) -> Q | None:
        """The angle at ``b`` between the drawn rays through ``a`` and ``c`` (``None``: no such angle)."""
        ra, rc = self.ray_to(b, a), self.ray_to(b, c)
        if ra is None or rc is None or ra.line == rc.line:
            return None
        x, y = sorted((ra.rep, rc.rep))
        return Q("ang", (x, b, y))

    def angle_of_rays(self, first: Ray, second: Ray) -> Q | None:
        """The angle between two rays from one vertex (``None`` when they lie on one line)."""
        if first.line == second.line:
            return None
        x, y = sorted((first.rep, second.rep))
        return Q("ang", (x, first.vertex, y))

    def degrees(self, a: str, b: str, c: str) -> float:
        """The angle ``a b c`` in degrees, in [0, 180]."""
        pa, pb, pc = self.xy[a], self.xy[b], self.xy[c]
        u, v = (pa[0] - pb[0], pa[1] - pb[1]), (pc[0] - pb[0], pc[1] - pb[1])
        return math.degrees(math.atan2(abs(u[0] * v[1] - u[1] * v[0]), u[0] * v[0] + u[1] * v[1]))

    def length(self, p: str, q: str) -> float:
        """The distance between two points."""
        return _dist(self.xy[p], self.xy[q])

    def value(self, q: Q) -> float:
        """The measure of a quantity (degrees for angles and arcs).

        Raises:
            SynthError: The quantity's kind is unknown or its circle is not drawn.
        """
        kind, pts = q.kind, q.pts
        if kind == "seg":
            return self.length(*pts)
        if kind in ("ang", "arc"):
            return self.degrees(*pts) if kind == "ang" else self.degrees(pts[1], pts[0], pts[2])
        if kind in ("sin", "cos", "tan"):
            return float(getattr(math, kind)(math.radians(self.degrees(*pts))))
        if kind in ("area", "perim", "asum"):
            return self._polygon_value(kind, pts)
        return self._circle_value(kind, pts)

    def _polygon_value(self, kind: str, pts: tuple[str, ...]) -> float:
        if kind == "area":
            return abs(_shoelace([self.xy[p] for p in pts]))
        if kind == "perim":
            return sum(self.length(p, q) for p, q in itertools.pairwise([*pts, pts[0]]))
        return 180.0 * (len(pts) - 2)

    def _circle_value(self, kind: str, pts: tuple[str, ...]) -> float:
        circle = self.circle_of(pts[0])
        if circle is None:
            raise SynthError(f"quantity {kind} {' '.join(pts)}: no drawn circle is centred at {pts[0]}")
        r = circle.r
        if kind == "carea":
            return math.pi * r * r
        if kind == "circ":
            return 2 * math.pi * r
        theta = self.degrees(pts[1], pts[0], pts[2])
        if kind == "sector":
            return math.pi * r * r * theta / 360
        if kind == "arclen":
            return 2 * math.pi * r * theta / 360
        if kind == "segarea":
            return math.pi * r * r * theta / 360 - r * r * math.sin(math.radians(theta)) / 2
        raise SynthError(f"unknown quantity kind {kind!r}")


def _lines(segments: list[tuple[_Pt, _Pt]], xy: Mapping[str, _Pt], tol: float) -> list[tuple[str, ...]]:
    """Named points on each drawn (merged) segment, in order along it; segments with fewer than two dropped."""
    out: list[tuple[str, ...]] = []
    for p, q in _merge_collinear(segments, tol):
        length = _dist(p, q)
        u = ((q[0] - p[0]) / length, (q[1] - p[1]) / length)
        on: list[tuple[float, str]] = []
        for name, pt in xy.items():
            d = (pt[0] - p[0], pt[1] - p[1])
            t = d[0] * u[0] + d[1] * u[1]
            if abs(d[0] * u[1] - d[1] * u[0]) <= tol and -tol <= t <= length + tol:
                on.append((t, name))
        names = tuple(name for _, name in sorted(on))
        if len(names) >= 2 and names not in out:
            out.append(names)
    return out


def _circles(specs: list[tuple[str, ...]], xy: Mapping[str, _Pt], tol: float, span: float) -> list[Circle]:
    out: list[Circle] = []
    for names in specs:
        if len(names) == 2:
            x, y = xy[names[0]]
            r = _dist(xy[names[0]], xy[names[1]])
        else:
            found = _circumcircle(xy[names[0]], xy[names[1]], xy[names[2]])
            if found is None:
                continue
            x, y, r = found
        if r > 3 * span:
            continue
        centre = next((n for n, p in xy.items() if _dist(p, (x, y)) <= tol), None)
        on = [n for n, p in xy.items() if abs(_dist(p, (x, y)) - r) <= tol]
        on.sort(key=lambda n: math.atan2(xy[n][1] - y, xy[n][0] - x))
        circle = Circle(centre, tuple(on), x, y, r)
        if all(abs(c.x - x) > tol or abs(c.y - y) > tol or abs(c.r - r) > tol for c in out):
            out.append(circle)
    return out


def _circumcircle(a: _Pt, b: _Pt, c: _Pt) -> tuple[float, float, float] | None:
    d = 2 * (a[0] * (b[1] - c[1]) + b[0] * (c[1] - a[1]) + c[0] * (a[1] - b[1]))
    if abs(d) < 1e-12:
        return None
    sa, sb, sc = a[0] ** 2 + a[1] ** 2, b[0] ** 2 + b[1] ** 2, c[0] ** 2 + c[1] ** 2
    x = (sa * (b[1] - c[1]) + sb * (c[1] - a[1]) + sc * (a[1] - b[1])) / d
    y = (sa * (c[0] - b[0]) + sb * (a[0] - c[0]) + sc * (b[0] - a[0])) / d
    return (x, y, _dist((x, y), a))


def pgps_figure(problem: Problem, diagram: Diagram, scale: tuple[str, str], length: float) -> PGPSFigure:
    """The PGPS view of a problem's figure, in the unit where segment ``scale`` has length ``length``.

    Args:
        problem: The construction clauses (what is drawn comes from the renderer's drawing table).
        diagram: Coordinates of every point.
        scale: The segment whose length is given.
        length: Its length.

    Raises:
        SynthError: A point has no coordinates or the scale segment is degenerate.
        RenderError: A construction has no drawing.
    """
    if missing := [p for p in problem.points if p not in diagram.points]:
        raise SynthError(f"the diagram has no coordinates for {' '.join(missing)}")
    raw = {p: diagram.points[p] for p in problem.points}
    unit = _dist(raw[scale[0]], raw[scale[1]])
    if unit <= 0:
        raise SynthError(f"scale segment {' '.join(scale)} has length zero")
    k = length / unit
    xy = {p: (x * k, y * k) for p, (x, y) in raw.items()}
    span = max(max(p[0] for p in xy.values()) - min(p[0] for p in xy.values()), 1e-9)
    span = max(span, max(p[1] for p in xy.values()) - min(p[1] for p in xy.values()))
    tol = TOL * span
    scene = _collect(problem, None)
    segments = [(xy[a], xy[b]) for a, b in scene.segments]
    return PGPSFigure(xy, _lines(segments, xy, tol), _circles(list(scene.circles), xy, 10 * tol, span))
