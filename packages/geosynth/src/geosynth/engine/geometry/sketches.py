"""Numeric sketches: how each construction places its new points, as one table keyed by sketch name.

A sketch receives the coordinates of its point arguments, its numeric arguments and an injected RNG,
and returns either a locus (line, ray, circle) for a single new point (several loci are intersected by
the realiser) or the new points themselves, in the order the definition lists its outputs. The
meaning of each sketch follows the facts its definitions state in ``defs.txt``; the realiser checks
those facts on every result, so a sketch that drifts from its definition fails loudly.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from geosynth.engine.geometry.geometry import (
    Circle,
    Degenerate,
    Line,
    Locus,
    Vec,
    circumcircle,
    cross,
    foot,
    intersect,
    norm,
    perp,
    reflect,
    rotate,
    unit,
    vec,
)

SketchResult = tuple[Vec | Locus, ...]
Sketch = Callable[[Sequence[Vec], Sequence[float], np.random.Generator], SketchResult]


def _rand(rng: np.random.Generator) -> Vec:
    radius = math.sqrt(float(rng.uniform(0.0, 1.0)))
    angle = float(rng.uniform(0.0, 2 * math.pi))
    return vec(radius * math.cos(angle), radius * math.sin(angle))


def _randn(count: int) -> Sketch:
    def sketch(p: Sequence[Vec], n: Sequence[float], rng: np.random.Generator) -> SketchResult:
        return tuple(_rand(rng) for _ in range(count))

    return sketch


def _signed(rng: np.random.Generator, low: float, high: float) -> float:
    return float(rng.uniform(low, high)) * (1.0 if rng.uniform() < 0.5 else -1.0)


def _bisector_dir(a: Vec, b: Vec, c: Vec) -> Vec:
    return unit(unit(a - b) + unit(c - b))


def _incenter(*p: Vec) -> Vec:
    a, b, c = p
    la, lb, lc = norm(b - c), norm(c - a), norm(a - b)
    return (a * la + b * lb + c * lc) / (la + lb + lc)


def _excenter(*p: Vec) -> Vec:
    """Excentre opposite ``a``."""
    a, b, c = p
    la, lb, lc = norm(b - c), norm(c - a), norm(a - b)
    return (-a * la + b * lb + c * lc) / (-la + lb + lc)


def _feet(i: Vec, a: Vec, b: Vec, c: Vec) -> tuple[Vec, Vec, Vec]:
    return foot(i, Line.through(b, c)), foot(i, Line.through(c, a)), foot(i, Line.through(a, b))


def _inscribed_circle(a: Vec, b: Vec, angle: float, test: Callable[[Vec], bool]) -> Circle:
    """Circle through ``a b`` on which ``a b`` subtends the directed line angle ``angle``."""
    s = math.sin(angle)
    if abs(s) < 1e-6:
        raise Degenerate("a zero inscribed angle gives a line, not a circle")
    mid, half = (a + b) / 2, norm(b - a) / 2
    for sign in (1.0, -1.0):
        center = mid + perp(unit(b - a)) * sign * half * math.cos(angle) / s
        circle = Circle(center, norm(center - a))
        probe = center + rotate(a - center, 1.0)
        if test(probe):
            return circle
    raise Degenerate("no circle realises the inscribed angle")


def _line_dir(p: Vec, q: Vec) -> float:
    d = q - p
    return math.atan2(float(d[1]), float(d[0]))


def _aline2(p: Sequence[Vec], n: Sequence[float], rng: np.random.Generator) -> SketchResult:
    # aline2 e d c b a: locus of x with angle(x a, x b) == angle(d c, d e) as directed line angles.
    e, d, c, b, a = p
    target = _line_dir(d, e) - _line_dir(d, c)
    return (
        _inscribed_circle(a, b, target, lambda x: _same_mod_pi(_line_dir(x, b) - _line_dir(x, a), target)),
    )


def _eqangle3(p: Sequence[Vec], n: Sequence[float], rng: np.random.Generator) -> SketchResult:
    # eqangle3 a b d e f: locus of x with angle(x a, x b) == angle(d e, d f).
    a, b, d, e, f = p
    target = _line_dir(d, f) - _line_dir(d, e)
    return (
        _inscribed_circle(a, b, target, lambda x: _same_mod_pi(_line_dir(x, b) - _line_dir(x, a), target)),
    )


def _same_mod_pi(x: float, y: float) -> bool:
    r = (x - y) % math.pi
    return min(r, math.pi - r) < 1e-7


def _aline(p: Sequence[Vec], n: Sequence[float], rng: np.random.Generator) -> SketchResult:
    # aline e d c b a: line a x with angle(a x, a b) == angle(d c, d e).
    e, d, c, b, a = p
    theta = _line_dir(a, b) - (_line_dir(d, e) - _line_dir(d, c))
    return (Line(a, vec(math.cos(theta), math.sin(theta))),)


def _eqangle2(p: Sequence[Vec], n: Sequence[float], rng: np.random.Generator) -> SketchResult:
    # x with angle(a b, a x) == angle(c x, c b): pick the common angle at random.
    a, b, c = p
    phi = _signed(rng, 0.2, 1.2)
    la = Line(a, rotate(unit(b - a), phi))
    lc = Line(c, rotate(unit(b - c), -phi))
    return tuple(intersect(la, lc))


def _s_angle(p: Sequence[Vec], n: Sequence[float], rng: np.random.Generator) -> SketchResult:
    a, b = p
    return (Line(b, rotate(unit(a - b), math.radians(n[0]))),)


def _tangent(p: Sequence[Vec], n: Sequence[float], rng: np.random.Generator) -> SketchResult:
    a, o, b = p
    found = intersect(Circle(o, norm(b - o)), Circle((a + o) / 2, norm(a - o) / 2))
    if len(found) != 2:
        raise Degenerate("point inside the circle has no tangent")
    return (found[0], found[1])


def _common_tangents(o: Vec, r1: float, w: Vec, r2: float) -> list[tuple[Vec, Vec]]:
    d_vec = w - o
    d = norm(d_vec)
    delta = (r1 - r2) / d
    if d < 1e-6 or abs(delta) >= 1:
        raise Degenerate("circles have no common external tangent")
    u, v = d_vec / d, perp(d_vec / d)
    h = math.sqrt(1 - delta * delta)
    # Unit normals n with n.(w - o) = r1 - r2; tangent points o + r1 n and w + r2 n.
    return [(o + (u * delta + v * s * h) * r1, w + (u * delta + v * s * h) * r2) for s in (1.0, -1.0)]


def _cc_tangent0(p: Sequence[Vec], n: Sequence[float], rng: np.random.Generator) -> SketchResult:
    o, a, w, b = p
    return _common_tangents(o, norm(a - o), w, norm(b - w))[0]


def _cc_tangent(p: Sequence[Vec], n: Sequence[float], rng: np.random.Generator) -> SketchResult:
    o, a, w, b = p
    (x, y), (z, i) = _common_tangents(o, norm(a - o), w, norm(b - w))
    return (x, y, z, i)


def _2l1c(p: Sequence[Vec], n: Sequence[float], rng: np.random.Generator) -> SketchResult:
    # Circle tangent to lines c a and c b and internally tangent to circle (o, |o a|).
    a, b, c, o = p
    big = norm(a - o)
    options: list[tuple[Vec, float]] = []
    for direction in (_bisector_dir(a, c, b), perp(_bisector_dir(a, c, b))):
        for u in (direction, -direction):
            s = abs(cross(u, unit(a - c)))
            oc = o - c
            qa, qb, qc = 1 - s * s, -2 * (float(np.dot(u, oc)) - big * s), float(np.dot(oc, oc)) - big * big
            disc = qb * qb - 4 * qa * qc
            if qa < 1e-9 or disc < 0:
                continue
            for t in ((-qb + math.sqrt(disc)) / (2 * qa), (-qb - math.sqrt(disc)) / (2 * qa)):
                if t > 1e-6 and t * s < big:
                    options.append((c + u * t, t * s))
    if not options:
        raise Degenerate("no circle tangent to both lines and the circle")
    i, _ = options[int(rng.integers(len(options)))]
    x, y = foot(i, Line.through(c, a)), foot(i, Line.through(c, b))
    z = o + unit(i - o) * big
    return (x, y, z, i)


def _e5128(p: Sequence[Vec], n: Sequence[float], rng: np.random.Generator) -> SketchResult:
    a, b, c, d = p
    y = (a + b) / 2
    found = [q for q in intersect(Line.through(d, y), Circle(c, norm(b - c))) if norm(q - d) > 1e-6]
    if not found:
        raise Degenerate("line meets the circle only at d")
    return (found[0], y)


def _3peq(p: Sequence[Vec], n: Sequence[float], rng: np.random.Generator) -> SketchResult:
    a, b, c = p
    z = b + (c - b) * float(rng.uniform(-0.5, 1.5))
    # x = a + s (b - a), y = a + t (c - a) with x + y = 2 z.
    m = np.array([[b[0] - a[0], c[0] - a[0]], [b[1] - a[1], c[1] - a[1]]], dtype=np.float64)
    if abs(float(np.linalg.det(m))) < 1e-9:
        raise Degenerate("degenerate triangle")
    s, t = np.linalg.solve(m, 2 * z - 2 * a)
    return (a + (b - a) * float(s), a + (c - a) * float(t), z)


def _trisect(p: Sequence[Vec], n: Sequence[float], rng: np.random.Generator) -> SketchResult:
    a, b, c = p
    t1, t2 = _line_dir(b, a), _line_dir(b, c)
    delta = (t2 - t1 + math.pi) % (2 * math.pi) - math.pi
    ac = Line.through(a, c)
    x = intersect(Line(b, vec(math.cos(t1 + delta / 3), math.sin(t1 + delta / 3))), ac)
    y = intersect(Line(b, vec(math.cos(t1 + 2 * delta / 3), math.sin(t1 + 2 * delta / 3))), ac)
    return (x[0], y[0])


def _point(fn: Callable[[Sequence[Vec]], Vec]) -> Sketch:
    def sketch(p: Sequence[Vec], n: Sequence[float], rng: np.random.Generator) -> SketchResult:
        return (fn(p),)

    return sketch


def _shape(fn: Callable[[Vec, Vec, np.random.Generator], tuple[Vec, ...]]) -> Sketch:
    """A fresh shape built on a random base ``a b``, mirrored half of the time (both orientations occur)."""

    def sketch(p: Sequence[Vec], n: Sequence[float], rng: np.random.Generator) -> SketchResult:
        a, b = _rand(rng), _rand(rng)
        points = (a, b, *fn(a, b, rng))
        if rng.uniform() < 0.5:
            return tuple(vec(float(q[0]), -float(q[1])) for q in points)
        return points

    return sketch


def _amirror(a: Vec, b: Vec, c: Vec) -> Line:
    return Line(b, unit(reflect(a, Line.through(b, c)) - b))


def _centroid(a: Vec, b: Vec, c: Vec) -> tuple[Vec, ...]:
    return ((b + c) / 2, (c + a) / 2, (a + b) / 2, (a + b + c) / 3)


def _ninepoints(a: Vec, b: Vec, c: Vec) -> tuple[Vec, ...]:
    x, y, z = (b + c) / 2, (c + a) / 2, (a + b) / 2
    return (x, y, z, circumcircle(x, y, z).center)


def _multi(fn: Callable[[Sequence[Vec]], tuple[Vec, ...]]) -> Sketch:
    def sketch(p: Sequence[Vec], n: Sequence[float], rng: np.random.Generator) -> SketchResult:
        return fn(p)

    return sketch


def _locus(fn: Callable[[Sequence[Vec]], Locus]) -> Sketch:
    def sketch(p: Sequence[Vec], n: Sequence[float], rng: np.random.Generator) -> SketchResult:
        return (fn(p),)

    return sketch


def _eq_trapezoid(a: Vec, b: Vec, rng: np.random.Generator) -> tuple[Vec, ...]:
    c = _rand(rng)
    return (c, reflect(c, Line((a + b) / 2, perp(unit(b - a)))))


def _acute(a: Vec, b: Vec, rng: np.random.Generator) -> tuple[Vec, ...]:
    """A third vertex making ``a b c`` acute: its foot inside ``a b``, itself outside the circle on ``a b``."""
    t = float(rng.uniform(0.2, 0.8))
    lowest = math.sqrt(t * (1 - t))  # the height at which the angle at c is right
    return (a + (b - a) * t + perp(b - a) * lowest * float(rng.uniform(1.15, 2.5)),)


def _between(p: Sequence[Vec], n: Sequence[float], rng: np.random.Generator) -> SketchResult:
    # between c a b: a segment a b and a point c inside it, returned in the order c, a, b
    a, b = _rand(rng), _rand(rng)
    return (a + (b - a) * float(rng.uniform(0.2, 0.8)), a, b)


def _apollonius(p: Sequence[Vec], n: Sequence[float], rng: np.random.Generator) -> SketchResult:
    # eqratio6 a c e f g h: the points x with x a / x c = e f / g h
    a, c, e, f, g, h = p
    ratio = norm(f - e) / norm(h - g)
    if abs(ratio - 1.0) < 1e-9:
        return (Line((a + c) / 2, perp(unit(c - a))),)
    inner, outer = (a + c * ratio) / (1 + ratio), (a - c * ratio) / (1 - ratio)
    return (Circle((inner + outer) / 2, norm(outer - inner) / 2),)


SKETCHES: dict[str, Sketch] = {
    "free": _randn(1),
    "segment": _randn(2),
    "triangle": _randn(3),
    "acute_triangle": _shape(_acute),
    "between": _between,
    "between_bound": lambda p, n, rng: (p[0] + (p[1] - p[0]) * float(rng.uniform(0.2, 0.8)),),
    "quadrangle": _randn(4),
    "pentagon": _randn(5),
    "isos": _shape(lambda a, b, r: (a + rotate(b - a, _signed(r, 0.4, 2.7)),)),
    "r_triangle": _shape(lambda a, b, r: (a + perp(b - a) * _signed(r, 0.4, 2.0),)),
    "risos": _shape(lambda a, b, r: (a + perp(b - a),)),
    "ieq_triangle": _shape(lambda a, b, r: (a + rotate(b - a, math.pi / 3),)),
    "triangle12": _shape(lambda a, b, r: (a + rotate(b - a, float(r.uniform(0, 2 * math.pi))) * 2,)),
    "eq_quadrangle": _shape(lambda a, b, r: (c := _rand(r), a + rotate(c - b, float(r.uniform(0.3, 6.0))))),
    "eqdia_quadrangle": _shape(
        lambda a, b, r: (c := _rand(r), b + rotate(c - a, float(r.uniform(0.3, 6.0))))
    ),
    "eq_trapezoid": _shape(_eq_trapezoid),
    "trapezoid": _shape(lambda a, b, r: (c := _rand(r), c + (a - b) * float(r.uniform(0.3, 1.5)))),
    "r_trapezoid": _shape(
        lambda a, b, r: (
            (d := a + perp(b - a) * _signed(r, 0.4, 1.5)) + (b - a) * float(r.uniform(0.3, 1.5)),
            d,
        )
    ),
    "rectangle": _shape(lambda a, b, r: (c := b + perp(b - a) * _signed(r, 0.4, 1.5), a + c - b)),
    "isquare": _shape(lambda a, b, r: (c := b + perp(b - a), a + c - b)),
    "square": _multi(lambda p: (x := p[1] + perp(p[1] - p[0]), p[0] + x - p[1])),
    "rotatep90": _point(lambda p: p[0] + perp(p[1] - p[0])),
    "rotaten90": _point(lambda p: p[0] - perp(p[1] - p[0])),
    "midp": _point(lambda p: (p[0] + p[1]) / 2),
    "pmirror": _point(lambda p: 2 * p[1] - p[0]),
    "reflect": _point(lambda p: reflect(p[0], Line.through(p[1], p[2]))),
    "shift": _point(lambda p: p[2] + p[1] - p[0]),
    "iso_trapezoid2": _point(lambda p: reflect(p[2], Line((p[0] + p[1]) / 2, perp(unit(p[1] - p[0]))))),
    "eqratio6": _apollonius,
    "eqangle2": _eqangle2,
    "line": _locus(lambda p: Line.through(p[0], p[1])),
    "on_opline": _locus(lambda p: Line(p[0], unit(p[0] - p[1]), ray=True)),
    "tline": _locus(lambda p: Line(p[0], perp(unit(p[2] - p[1])))),
    "pline": _locus(lambda p: Line(p[0], unit(p[2] - p[1]))),
    "bline": _locus(lambda p: Line((p[0] + p[1]) / 2, perp(unit(p[1] - p[0])))),
    "circle": _locus(lambda p: Circle(p[0], norm(p[2] - p[1]))),
    "dia": _locus(lambda p: Circle((p[0] + p[1]) / 2, norm(p[1] - p[0]) / 2)),
    "cyclic": _locus(lambda p: circumcircle(p[0], p[1], p[2])),
    "bisect": _locus(lambda p: Line(p[1], _bisector_dir(p[0], p[1], p[2]))),
    "exbisect": _locus(lambda p: Line(p[1], perp(_bisector_dir(p[0], p[1], p[2])))),
    "amirror": _locus(lambda p: _amirror(p[0], p[1], p[2])),
    "aline": _aline,
    "aline2": _aline2,
    "eqangle3": _eqangle3,
    "s_angle": _s_angle,
    "tangent": _tangent,
    "cc_tangent0": _cc_tangent0,
    "cc_tangent": _cc_tangent,
    "centroid": _multi(lambda p: _centroid(p[0], p[1], p[2])),
    "ninepoints": _multi(lambda p: _ninepoints(p[0], p[1], p[2])),
    "incenter2": _multi(lambda p: (*_feet(i := _incenter(*p), *p), i)),
    "excenter2": _multi(lambda p: (*_feet(i := _excenter(*p), *p), i)),
    "2l1c": _2l1c,
    "e5128": _e5128,
    "3peq": _3peq,
    "trisect": _trisect,
    "trisegment": _multi(lambda p: (p[0] + (p[1] - p[0]) / 3, p[0] + (p[1] - p[0]) * 2 / 3)),
}
"""Every sketch name used in ``defs.txt``, mapped to its numeric realisation."""
