"""Floating-point plane geometry for the numeric realiser: points, lines, circles and their intersections.

Floats live only here and in the numeric checker; every comparison goes through :data:`TOLERANCE`,
measured on a diagram whose coordinates are of order one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Vec = NDArray[np.float64]

TOLERANCE = 1e-7
"""Absolute tolerance for numeric equalities on a diagram of unit scale."""


class Degenerate(Exception):
    """A numeric construction has no (or no well-conditioned) solution on this sample."""


def vec(x: float, y: float) -> Vec:
    """A point or vector."""
    return np.array([x, y], dtype=np.float64)


def norm(v: Vec) -> float:
    """Euclidean length."""
    return math.hypot(float(v[0]), float(v[1]))


def unit(v: Vec) -> Vec:
    """``v`` scaled to length one.

    Raises:
        Degenerate: ``v`` is (numerically) zero.
    """
    n = norm(v)
    if n < TOLERANCE:
        raise Degenerate("zero-length direction")
    return v / n


def cross(u: Vec, v: Vec) -> float:
    """The z-component of ``u x v``."""
    return float(u[0] * v[1] - u[1] * v[0])


def rotate(v: Vec, radians: float) -> Vec:
    """``v`` rotated counter-clockwise."""
    c, s = math.cos(radians), math.sin(radians)
    return vec(c * float(v[0]) - s * float(v[1]), s * float(v[0]) + c * float(v[1]))


def perp(v: Vec) -> Vec:
    """``v`` rotated by +90 degrees."""
    return vec(-float(v[1]), float(v[0]))


@dataclass(frozen=True, eq=False)
class Line:
    """The line through ``point`` along unit ``direction``; a ray (``t >= 0`` only) when ``ray``."""

    point: Vec
    direction: Vec
    ray: bool = False

    @staticmethod
    def through(a: Vec, b: Vec) -> Line:
        """The line through two points."""
        return Line(a, unit(b - a))

    def contains(self, p: Vec, tol: float = TOLERANCE) -> bool:
        """Whether ``p`` lies on the line (on the ray's side for a ray)."""
        d = p - self.point
        if abs(cross(self.direction, d)) > tol:
            return False
        return not self.ray or float(np.dot(d, self.direction)) > -tol


@dataclass(frozen=True, eq=False)
class Circle:
    """The circle with ``center`` and ``radius``."""

    center: Vec
    radius: float

    def contains(self, p: Vec, tol: float = TOLERANCE) -> bool:
        """Whether ``p`` lies on the circle."""
        return abs(norm(p - self.center) - self.radius) <= tol


Locus = Line | Circle


def foot(p: Vec, line: Line) -> Vec:
    """Orthogonal projection of ``p`` on ``line``."""
    return line.point + line.direction * float(np.dot(p - line.point, line.direction))


def reflect(p: Vec, line: Line) -> Vec:
    """Mirror image of ``p`` in ``line``."""
    return 2 * foot(p, line) - p


def circumcircle(a: Vec, b: Vec, c: Vec) -> Circle:
    """The circle through three points.

    Raises:
        Degenerate: The points are (nearly) collinear.
    """
    d = 2 * cross(b - a, c - a)
    if abs(d) < TOLERANCE:
        raise Degenerate("collinear points have no circumcircle")
    ba, ca = b - a, c - a
    bb, cc = float(np.dot(ba, ba)), float(np.dot(ca, ca))
    center = a + vec(float(ca[1]) * bb - float(ba[1]) * cc, float(ba[0]) * cc - float(ca[0]) * bb) / d
    return Circle(center, norm(center - a))


def _line_line(l1: Line, l2: Line) -> list[Vec]:
    denom = cross(l1.direction, l2.direction)
    if abs(denom) < 1e-9:
        if l1.contains(l2.point, 1e-6) and l2.contains(l1.point, 1e-6):
            raise Degenerate("the two lines coincide (no single common point)")
        raise Degenerate("parallel lines do not meet")
    t = cross(l2.point - l1.point, l2.direction) / denom
    return [l1.point + l1.direction * t]


def _line_circle(line: Line, circle: Circle) -> list[Vec]:
    f = foot(circle.center, line)
    h2 = circle.radius**2 - norm(f - circle.center) ** 2
    if h2 < -TOLERANCE:
        return []
    h = math.sqrt(max(h2, 0.0))
    return [f + line.direction * h, f - line.direction * h]


def _circle_circle(c1: Circle, c2: Circle) -> list[Vec]:
    d = norm(c2.center - c1.center)
    if d < TOLERANCE:
        if abs(c1.radius - c2.radius) < TOLERANCE:
            raise Degenerate("the two circles coincide (no single common point)")
        raise Degenerate("concentric circles do not meet")
    a = (c1.radius**2 - c2.radius**2 + d * d) / (2 * d)
    h2 = c1.radius**2 - a * a
    if h2 < -TOLERANCE:
        return []
    u = (c2.center - c1.center) / d
    base = c1.center + u * a
    h = math.sqrt(max(h2, 0.0))
    return [base + perp(u) * h, base - perp(u) * h]


def intersect(first: Locus, second: Locus) -> list[Vec]:
    """Points common to two loci (rays keep only their own side).

    Raises:
        Degenerate: The loci coincide or are parallel/concentric.
    """
    if isinstance(first, Line):
        found = _line_line(first, second) if isinstance(second, Line) else _line_circle(first, second)
    elif isinstance(second, Line):
        found = _line_circle(second, first)
    else:
        found = _circle_circle(first, second)
    return [p for p in found if first.contains(p, 1e-6) and second.contains(p, 1e-6)]


def sample_on(locus: Locus, rng: np.random.Generator, center: Vec, spread: float) -> Vec:
    """A random point of ``locus`` near ``center`` (within about ``spread`` along a line)."""
    if isinstance(locus, Circle):
        angle = float(rng.uniform(0.0, 2 * math.pi))
        return locus.center + vec(math.cos(angle), math.sin(angle)) * locus.radius
    if locus.ray:
        return locus.point + locus.direction * float(rng.uniform(0.2, 1.2)) * spread
    base = foot(center, locus)
    return base + locus.direction * float(rng.uniform(-1.0, 1.0)) * spread


def directed_line_angle(a: Vec, b: Vec) -> float:
    """Direction of line ``a b`` in radians, in [0, pi)."""
    d = b - a
    return math.atan2(float(d[1]), float(d[0])) % math.pi


def undirected_angle(a: Vec, b: Vec, c: Vec) -> float:
    """The angle ``a b c`` at ``b`` in radians, in [0, pi]."""
    u, v = unit(a - b), unit(c - b)
    return math.atan2(abs(cross(u, v)), float(np.dot(u, v)))
