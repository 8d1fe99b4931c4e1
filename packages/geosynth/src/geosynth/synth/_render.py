"""Diagram rendering: what each construction draws (a data table), a label layout, PNG and SVG output.

``templates/drawing.yaml`` says, per construction of ``rules/defs.txt``, which segments, circles and
right-angle marks its clause contributes, in the definition's own argument names. :func:`diagram_layout`
binds those to a problem's points, maps the realised coordinates to inches on the page, merges collinear
segments, and places every point's label where it clears the figure (its incident segments, circles,
other points and labels already placed). :func:`render_diagram` draws the layout with matplotlib, which is
imported only there (the ``render`` extra), on the Agg canvas, with fixed metadata so a seed gives the
same bytes every time.
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import random
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict

from geosynth.engine import ConstructionDef, Diagram, Problem, default_definitions, relation_text
from geosynth.errors import GeoSynthError
from geosynth.synth._text import point_label
from geosynth.synth.errors import SynthUnavailableError

__all__ = (
    "DrawSpec",
    "LabelBox",
    "Layout",
    "RenderError",
    "diagram_layout",
    "drawing_table",
    "render_diagram",
)

FORMATS = ("png", "svg")
"""Output formats :func:`render_diagram` writes."""
DPI = 100
"""Pixels per inch of PNG output."""
CONTENT_INCHES = 3.6
"""Size of the figure's larger side, margins excluded."""
MARGIN_INCHES = 0.4
"""Blank border around the figure (room for labels of points on the edge)."""
FONT_POINTS = 11.0
"""Label font size."""
_FONT_INCHES = FONT_POINTS / 72.0
_CHAR_WIDTH = 0.62 * _FONT_INCHES
_LABEL_RADII = (0.15, 0.21, 0.29, 0.4)
_DIRECTIONS = 24
_MARK_INCHES = 0.1
_Pt = tuple[float, float]

_FROZEN = ConfigDict(frozen=True, extra="forbid", strict=True)


class RenderError(GeoSynthError, ValueError):
    """A diagram cannot be drawn (unknown construction, missing coordinates, unsupported format)."""


class DrawSpec(BaseModel):
    """What one construction draws, in its definition's argument names."""

    model_config = _FROZEN
    segments: tuple[tuple[str, str], ...] = ()
    """Segments between two arguments."""
    circles: tuple[tuple[str, ...], ...] = ()
    """``(centre, through)`` or three points the circle passes through."""
    right: tuple[tuple[str, str, str, str], ...] = ()
    """Perpendicular line pairs ``(p, q, r, s)``: a right-angle mark where lines pq and rs meet at a point."""


class LabelBox(BaseModel):
    """A placed point label (inches from the figure's lower left corner)."""

    model_config = _FROZEN
    point: str
    """The point's name in the problem."""
    text: str
    """The text drawn."""
    x: float
    """Centre, horizontal."""
    y: float
    """Centre, vertical."""
    width: float
    """Box width."""
    height: float
    """Box height."""

    def overlaps(self, other: LabelBox) -> bool:
        """Whether the two boxes intersect."""
        return abs(self.x - other.x) * 2 < self.width + other.width and (
            abs(self.y - other.y) * 2 < self.height + other.height
        )

    def contains(self, p: _Pt, pad: float = 0.0) -> bool:
        """Whether a point lies inside the box grown by ``pad`` on every side."""
        return abs(p[0] - self.x) <= self.width / 2 + pad and abs(p[1] - self.y) <= self.height / 2 + pad


class Layout(BaseModel):
    """Everything to draw, in inches on a ``width`` x ``height`` page."""

    model_config = _FROZEN
    width: float
    """Page width."""
    height: float
    """Page height."""
    points: dict[str, _Pt]
    """Every point's position."""
    segments: tuple[tuple[_Pt, _Pt], ...]
    """Segments after merging collinear overlapping ones."""
    circles: tuple[tuple[float, float, float], ...]
    """Circles as ``(x, y, radius)``."""
    marks: tuple[tuple[_Pt, _Pt, _Pt], ...]
    """Right-angle marks, each a three-point polyline."""
    labels: tuple[LabelBox, ...]
    """One label per point."""


def _spec_item(text: str, size: tuple[int, ...], where: str) -> tuple[str, ...]:
    parts = tuple(str(text).split())
    if len(parts) not in size:
        raise RenderError(f"drawing.yaml {where}: {text!r} needs {' or '.join(map(str, size))} names")
    return parts


def _parse_spec(name: str, raw: object) -> DrawSpec:
    if not isinstance(raw, dict):
        raise RenderError(f"drawing.yaml: entry {name!r} is not a mapping")
    entry: dict[str, list[str]] = {str(k): list(v) for k, v in raw.items()}
    if unknown := set(entry) - {"segments", "circles", "right"}:
        raise RenderError(f"drawing.yaml: entry {name!r} has unknown keys {sorted(unknown)}")
    where = f"entry {name!r}"
    segments = tuple(_spec_item(s, (2,), where) for s in entry.get("segments", []))
    return DrawSpec(
        segments=tuple((a, b) for a, b in segments),
        circles=tuple(_spec_item(c, (2, 3), where) for c in entry.get("circles", [])),
        right=tuple(
            (a, b, c, d) for a, b, c, d in (_spec_item(r, (4,), where) for r in entry.get("right", []))
        ),
    )


@cache
def drawing_table() -> dict[str, DrawSpec]:
    """The bundled drawing table: construction name to what its clause draws.

    Raises:
        RenderError: ``drawing.yaml`` is malformed.
    """
    text = resources.files("geosynth.synth").joinpath("templates/drawing.yaml").read_text(encoding="utf-8")
    raw = yaml.safe_load(text)
    if not isinstance(raw, dict):
        raise RenderError("drawing.yaml: expected a mapping of construction names")
    return {str(k): _parse_spec(str(k), v) for k, v in raw.items()}


_FACT_DRAWING: dict[str, str] = {
    "coll": "chain",
    "para": "pairs",
    "perp": "right",
    "cong": "pairs",
    "cyclic": "circle",
}
"""How a fact of a definition the table lacks is drawn: a chain of segments, two segments, a right angle..."""


def _spec_from_definition(definition: ConstructionDef) -> DrawSpec:
    segments: list[tuple[str, str]] = []
    circles: list[tuple[str, ...]] = []
    right: list[tuple[str, str, str, str]] = []
    for group in definition.facts:
        for fact in group.facts:
            how, args = _FACT_DRAWING.get(fact.name), fact.args
            if how == "chain":
                segments.extend(itertools.pairwise(args))
            elif how in ("pairs", "right") and len(args) == 4:
                segments.extend(((args[0], args[1]), (args[2], args[3])))
                if how == "right":
                    right.append((args[0], args[1], args[2], args[3]))
            elif how == "circle" and len(args) >= 3:
                circles.append(tuple(args[:3]))
    return DrawSpec(segments=tuple(segments), circles=tuple(circles), right=tuple(right))


def _resolve_spec(name: str, definitions: Mapping[str, ConstructionDef] | None) -> DrawSpec:
    table = drawing_table()
    if name in table:
        return table[name]
    defs = default_definitions() if definitions is None else definitions
    if name in defs:
        return _spec_from_definition(defs[name])
    raise RenderError(f"no drawing for construction {name!r}: add it to drawing.yaml or pass its definition")


class _Scene:
    """Named primitives of a problem, before layout."""

    def __init__(self) -> None:
        self.segments: dict[tuple[str, str], None] = {}
        self.circles: dict[tuple[str, ...], None] = {}
        self.right: dict[tuple[str, str, str, str], None] = {}


def _collect(problem: Problem, definitions: Mapping[str, ConstructionDef] | None) -> _Scene:
    scene = _Scene()
    defs = default_definitions() if definitions is None else definitions
    for clause in problem.clauses:
        for call in clause.constructions:
            spec = _resolve_spec(call.name, definitions)
            arg_names = defs[call.name].args if call.name in defs else ()
            if len(arg_names) != len(call.args):
                raise RenderError(f"construction {call.text()!r} does not match its definition's arguments")
            binding = dict(zip(arg_names, call.args, strict=True))
            for a, b in spec.segments:
                if binding[a] != binding[b]:
                    scene.segments[(binding[a], binding[b])] = None
            for circle in spec.circles:
                scene.circles[tuple(binding[p] for p in circle)] = None
            for a, b, c, d in spec.right:
                scene.right[(binding[a], binding[b], binding[c], binding[d])] = None
    return scene


_PAIRED = frozenset({"length", "cong", "para", "perp", "eqangle", "eqratio"})
_TRIANGLES = frozenset({"simtri", "simtri2", "contri", "contri2"})


def statement_segments(statement: str) -> list[tuple[str, str]]:
    """The segments a goal or given names, so the figure shows what the text asks about.

    ``length a b`` and the point pairs of ``cong``/``para``/``perp``/``eqangle``/``eqratio`` give their
    segments; ``angle a b c`` its two arms; ``area p q r ...`` the polygon's sides; ``midp m a b`` the
    segment ``a b``; a triangle pair (``simtri``, ``contri`` and their mirrored forms) both triangles'
    sides. Anything after ``=`` (a given's value) is ignored. Statements that would draw their own
    claim (``coll``, ``cyclic``) or name no segment (``var x``) give none.

    Args:
        statement: A goal or given in the record syntax (``"angle a b c = 40"``, ``"cong a b c d"``).

    Returns:
        Point pairs, without repeats or degenerate pairs.
    """
    words = statement.partition("=")[0].split()
    if not words:
        return []
    kind, pts = words[0], words[1:]
    pairs: list[tuple[str, str]] = []
    if kind in _PAIRED:
        pairs = [(pts[i], pts[i + 1]) for i in range(0, len(pts) - 1, 2)]
    elif kind == "angle" and len(pts) == 3:
        pairs = [(pts[0], pts[1]), (pts[1], pts[2])]
    elif kind == "area" and len(pts) >= 3:
        pairs = [(pts[i], pts[(i + 1) % len(pts)]) for i in range(len(pts))]
    elif kind == "midp" and len(pts) == 3:
        pairs = [(pts[1], pts[2])]
    elif kind in _TRIANGLES and len(pts) == 6:
        pairs = [(t[i], t[(i + 1) % 3]) for t in (pts[:3], pts[3:]) for i in range(3)]
    return list(dict.fromkeys((a, b) for a, b in pairs if a != b))


def _sub(p: _Pt, q: _Pt) -> _Pt:
    return (p[0] - q[0], p[1] - q[1])


def _dist(p: _Pt, q: _Pt) -> float:
    return math.hypot(p[0] - q[0], p[1] - q[1])


def _circumcircle(a: _Pt, b: _Pt, c: _Pt) -> tuple[float, float, float] | None:
    d = 2 * (a[0] * (b[1] - c[1]) + b[0] * (c[1] - a[1]) + c[0] * (a[1] - b[1]))
    if abs(d) < 1e-12:
        return None
    sa, sb, sc = a[0] ** 2 + a[1] ** 2, b[0] ** 2 + b[1] ** 2, c[0] ** 2 + c[1] ** 2
    x = (sa * (b[1] - c[1]) + sb * (c[1] - a[1]) + sc * (a[1] - b[1])) / d
    y = (sa * (c[0] - b[0]) + sb * (a[0] - c[0]) + sc * (b[0] - a[0])) / d
    return (x, y, _dist((x, y), a))


def _circle(names: tuple[str, ...], at: Mapping[str, _Pt]) -> tuple[float, float, float] | None:
    if len(names) == 2:
        centre = at[names[0]]
        return (centre[0], centre[1], _dist(centre, at[names[1]]))
    return _circumcircle(at[names[0]], at[names[1]], at[names[2]])


def _merge_collinear(segments: list[tuple[_Pt, _Pt]], tol: float) -> list[tuple[_Pt, _Pt]]:
    """Union of segments: collinear overlapping segments become one (gaps between them stay gaps)."""
    lines: list[tuple[_Pt, _Pt, list[tuple[float, float]]]] = []
    for p, q in segments:
        length = _dist(p, q)
        if length < tol:
            continue
        u = ((q[0] - p[0]) / length, (q[1] - p[1]) / length)
        for origin, w, intervals in lines:
            if abs(u[0] * w[1] - u[1] * w[0]) < 1e-6 and abs(_cross(_sub(p, origin), w)) < tol:
                t0, t1 = _dot(_sub(p, origin), w), _dot(_sub(q, origin), w)
                intervals.append((min(t0, t1), max(t0, t1)))
                break
        else:
            lines.append((p, u, [(0.0, length)]))
    out: list[tuple[_Pt, _Pt]] = []
    for origin, w, intervals in lines:
        intervals.sort()
        start, end = intervals[0]
        for lo, hi in [*intervals[1:], (math.inf, math.inf)]:
            if lo <= end + tol:
                end = max(end, hi)
                continue
            out.append(
                (
                    (origin[0] + start * w[0], origin[1] + start * w[1]),
                    (origin[0] + end * w[0], origin[1] + end * w[1]),
                )
            )
            start, end = lo, hi
    return out


def _cross(p: _Pt, q: _Pt) -> float:
    return p[0] * q[1] - p[1] * q[0]


def _dot(p: _Pt, q: _Pt) -> float:
    return p[0] * q[0] + p[1] * q[1]


def _page(
    coords: Mapping[str, _Pt], circles: list[tuple[float, float, float]]
) -> tuple[float, float, float, _Pt]:
    """Scale (inches per unit), page width and height, and the data point mapped to the margin corner."""
    xs = [p[0] for p in coords.values()]
    ys = [p[1] for p in coords.values()]
    span = max(max(xs) - min(xs), max(ys) - min(ys), 1e-9)
    for x, y, r in circles:
        if (
            r <= 1.5 * span
        ):  # a huge circle (nearly collinear points) is clipped rather than shrinking the figure
            xs.extend((x - r, x + r))
            ys.extend((y - r, y + r))
    width, height = max(xs) - min(xs), max(ys) - min(ys)
    scale = CONTENT_INCHES / max(width, height, 1e-9)
    page_w = max(width * scale, 1.0) + 2 * MARGIN_INCHES
    page_h = max(height * scale, 1.0) + 2 * MARGIN_INCHES
    corner = (
        min(xs) - (page_w - width * scale) / 2 / scale,
        min(ys) - (page_h - height * scale) / 2 / scale,
    )
    return scale, page_w, page_h, corner


def _right_mark(
    names: tuple[str, str, str, str], at: Mapping[str, _Pt], tol: float
) -> tuple[_Pt, _Pt, _Pt] | None:
    p, q, r, s = (at[n] for n in names)
    d1, d2 = _sub(q, p), _sub(s, r)
    n1, n2 = math.hypot(*d1), math.hypot(*d2)
    if n1 < tol or n2 < tol or abs(_dot(d1, d2)) > 1e-3 * n1 * n2:
        return None
    denom = _cross(d1, d2)
    t = _cross(_sub(r, p), d2) / denom
    corner = (p[0] + t * d1[0], p[1] + t * d1[1])
    vertex = next((v for v in at.values() if _dist(v, corner) < tol), None)
    if vertex is None:
        return None  # the lines meet at no named point: nothing to mark
    arm1 = max((p, q), key=lambda e: _dist(e, vertex))
    arm2 = max((r, s), key=lambda e: _dist(e, vertex))
    l1, l2 = _dist(arm1, vertex), _dist(arm2, vertex)
    size = min(_MARK_INCHES, 0.35 * l1, 0.35 * l2)
    u = ((arm1[0] - vertex[0]) / l1 * size, (arm1[1] - vertex[1]) / l1 * size)
    w = ((arm2[0] - vertex[0]) / l2 * size, (arm2[1] - vertex[1]) / l2 * size)
    return (
        (vertex[0] + u[0], vertex[1] + u[1]),
        (vertex[0] + u[0] + w[0], vertex[1] + u[1] + w[1]),
        (vertex[0] + w[0], vertex[1] + w[1]),
    )


def diagram_layout(
    problem: Problem,
    diagram: Diagram,
    *,
    seed: int = 0,
    definitions: Mapping[str, ConstructionDef] | None = None,
    statements: Sequence[str] = (),
) -> Layout:
    """Lay a problem's figure out on the page: primitives in inches and a label for every point.

    Args:
        problem: The construction clauses (what to draw comes from each construction's table entry);
            the segments its goal names are drawn too (see :func:`statement_segments`).
        diagram: Coordinates of every point of the problem.
        seed: Breaks ties between equally good label positions.
        definitions: Construction definitions, for constructions the drawing table lacks (their facts
            are drawn); the bundled ones when ``None``.
        statements: More goals or givens whose segments to draw (a calculation record's goal and
            givens, which are not part of its problem line).

    Returns:
        The layout :func:`render_diagram` draws.

    Raises:
        RenderError: A construction has no drawing, or a problem point has no coordinates.
    """
    if missing := [p for p in problem.points if p not in diagram.points]:
        raise RenderError(
            f"diagram has no coordinates for points {' '.join(missing)} of problem {problem.name!r}"
        )
    scene = _collect(problem, definitions)
    texts = [*([relation_text(problem.goal)] if problem.goal is not None else []), *statements]
    for text in texts:
        for a, b in statement_segments(text):
            if a not in problem.points or b not in problem.points:
                raise RenderError(
                    f"statement {text!r} names a point the problem {problem.name!r} does not have"
                )
            if (b, a) not in scene.segments:
                scene.segments[(a, b)] = None
    raw = {p: diagram.points[p] for p in problem.points}
    raw_circles = [c for c in (_circle(names, raw) for names in scene.circles) if c is not None]
    scale, page_w, page_h, corner = _page(raw, raw_circles)
    at = {p: ((x - corner[0]) * scale, (y - corner[1]) * scale) for p, (x, y) in raw.items()}
    tol = 1e-6 * CONTENT_INCHES
    circles = [((x - corner[0]) * scale, (y - corner[1]) * scale, r * scale) for x, y, r in raw_circles]
    segments = _merge_collinear([(at[a], at[b]) for a, b in scene.segments], tol)
    marks = [m for m in (_right_mark(names, at, 1e-4) for names in scene.right) if m is not None]
    placer = _LabelPlacer(at, segments, circles, (page_w, page_h), random.Random(seed))
    labels = placer.place_all()
    return Layout(
        width=page_w,
        height=page_h,
        points=at,
        segments=tuple(segments),
        circles=tuple(circles),
        marks=tuple(marks),
        labels=tuple(labels),
    )


def _segment_hits_box(p: _Pt, q: _Pt, box: LabelBox) -> bool:
    """Liang-Barsky clipping of segment pq against the box."""
    lo, hi = 0.0, 1.0
    d = _sub(q, p)
    bounds = (
        (-d[0], p[0] - (box.x - box.width / 2)),
        (d[0], (box.x + box.width / 2) - p[0]),
        (-d[1], p[1] - (box.y - box.height / 2)),
        (d[1], (box.y + box.height / 2) - p[1]),
    )
    for step, room in bounds:
        if abs(step) < 1e-15:
            if room < 0:
                return False
            continue
        t = room / step
        if step < 0:
            lo = max(lo, t)
        else:
            hi = min(hi, t)
        if lo > hi:
            return False
    return True


def _circle_hits_box(circle: tuple[float, float, float], box: LabelBox) -> bool:
    x, y, r = circle
    dx = max(abs(x - box.x) - box.width / 2, 0.0)
    dy = max(abs(y - box.y) - box.height / 2, 0.0)
    far = math.hypot(abs(x - box.x) + box.width / 2, abs(y - box.y) + box.height / 2)
    return math.hypot(dx, dy) <= r <= far


class _LabelPlacer:
    """Greedy label placement: the most crowded points first, each at its best-scoring candidate."""

    def __init__(
        self,
        at: Mapping[str, _Pt],
        segments: list[tuple[_Pt, _Pt]],
        circles: list[tuple[float, float, float]],
        page: tuple[float, float],
        rng: random.Random,
    ) -> None:
        self.at, self.segments, self.circles, self.page = at, segments, circles, page
        self.offset = rng.randrange(_DIRECTIONS)
        self.placed: list[LabelBox] = []

    def incident(self, p: _Pt) -> list[float]:
        """Directions (radians) of the segments and circle tangents leaving a point."""
        out: list[float] = []
        for a, b in self.segments:
            length = _dist(a, b)
            if abs(_cross(_sub(p, a), _sub(b, a))) / length > 1e-3:
                continue
            for end in (a, b):
                if _dist(end, p) > 1e-3 and _dot(_sub(end, p), _sub(a if end is b else b, p)) <= 1e-9:
                    out.append(math.atan2(end[1] - p[1], end[0] - p[0]))
        for x, y, r in self.circles:
            if abs(_dist((x, y), p) - r) < 1e-3:
                tangent = math.atan2(p[1] - y, p[0] - x) + math.pi / 2
                out.extend((tangent, tangent + math.pi))
        return out

    def score(self, box: LabelBox, name: str, clearance: float) -> float:
        """Lower is better."""
        cost = -2.0 * clearance
        cost += 100.0 * sum(box.overlaps(other) for other in self.placed)
        cost += 20.0 * sum(box.contains(q, pad=0.03) for n, q in self.at.items() if n != name)
        cost += 8.0 * sum(_segment_hits_box(a, b, box) for a, b in self.segments)
        cost += 6.0 * sum(_circle_hits_box(c, box) for c in self.circles)
        inside = box.width / 2 <= box.x <= self.page[0] - box.width / 2 and (
            box.height / 2 <= box.y <= self.page[1] - box.height / 2
        )
        return cost + (0.0 if inside else 50.0)

    def place(self, name: str) -> LabelBox:
        """The best label box for one point."""
        p, text = self.at[name], point_label(name)
        width, height = _CHAR_WIDTH * len(text) + 0.04, _FONT_INCHES * 1.08
        arms = self.incident(p)
        best: tuple[float, LabelBox] | None = None
        for level, radius in enumerate(_LABEL_RADII):
            for k in range(_DIRECTIONS):
                angle = 2 * math.pi * ((k + self.offset) % _DIRECTIONS) / _DIRECTIONS
                gap = min((abs(math.remainder(angle - a, 2 * math.pi)) for a in arms), default=math.pi)
                reach = radius + max(abs(math.cos(angle)) * (width / 2 - 0.05), 0.0)
                box = LabelBox(
                    point=name,
                    text=text,
                    x=p[0] + reach * math.cos(angle),
                    y=p[1] + radius * math.sin(angle),
                    width=width,
                    height=height,
                )
                cost = self.score(box, name, gap) + 0.6 * level
                if best is None or cost < best[0]:
                    best = (cost, box)
        if best is None:
            raise RenderError(f"no label position was tried for point {name}")
        return best[1]

    def place_all(self) -> list[LabelBox]:
        """Labels for every point, in the points' order."""
        crowded = sorted(self.at, key=lambda n: (-len(self.incident(self.at[n])), list(self.at).index(n)))
        chosen = {}
        for name in crowded:
            chosen[name] = self.place(name)
            self.placed.append(chosen[name])
        return [chosen[n] for n in self.at]


def require_renderer() -> None:
    """Check, before any work starts, that diagrams can be drawn.

    Raises:
        SynthUnavailableError: matplotlib (the ``geosynth[render]`` extra) is not installed.
    """
    if importlib.util.find_spec("matplotlib") is None:
        raise SynthUnavailableError('drawing diagrams needs matplotlib: pip install "geosynth[render]"')


def render_diagram(
    problem: Problem,
    diagram: Diagram,
    path: Path,
    *,
    fmt: str = "png",
    seed: int = 0,
    definitions: Mapping[str, ConstructionDef] | None = None,
    statements: Sequence[str] = (),
) -> Path:
    """Draw a problem's figure to a PNG or SVG file.

    The same problem, diagram and seed always give the same file (PNG: identical pixels and bytes;
    SVG: identical text): no dates or software versions are written, and SVG ids are salted by the seed.

    Args:
        problem: The construction clauses.
        diagram: Coordinates of every point.
        path: Where to write (parent folders are created).
        fmt: ``"png"`` or ``"svg"``.
        seed: Tie-breaking of label positions and the SVG id salt.
        definitions: Construction definitions for constructions the drawing table lacks.
        statements: Goals or givens beyond the problem's own goal whose segments to draw.

    Returns:
        ``path``.

    Raises:
        RenderError: Unsupported format, a construction without a drawing, or missing coordinates.
        ImportError: matplotlib is missing (install the ``geosynth[render]`` extra).
    """
    if fmt not in FORMATS:
        raise RenderError(f"unsupported diagram format {fmt!r}; expected one of {', '.join(FORMATS)}")
    layout = diagram_layout(problem, diagram, seed=seed, definitions=definitions, statements=statements)
    path.parent.mkdir(parents=True, exist_ok=True)
    _draw(layout, path, fmt, seed)
    return path


def _draw(
    layout: Layout,
    path: Path,
    fmt: str,
    seed: int,
    *,
    notes: Sequence[tuple[float, float, str]] = (),
    arcs: Sequence[tuple[float, float, float, float, float]] = (),
) -> None:
    """Draw a layout with matplotlib (imported here only) and save it without dates or versions.

    ``notes`` are texts at positions (values written on the figure), ``arcs`` angle marks (centre,
    radius, start and end in degrees), both in inches.
    """
    try:
        import matplotlib
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.patches import Arc, Circle
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError('rendering diagrams needs matplotlib: pip install "geosynth[render]"') from err
    rc: dict[Any, Any] = {
        "svg.hashsalt": f"geosynth-{seed}",
        "svg.fonttype": "none",
        "font.family": "DejaVu Sans",
    }
    with matplotlib.rc_context(rc):
        figure = Figure(figsize=(layout.width, layout.height), dpi=DPI)
        FigureCanvasAgg(figure)
        axes = figure.add_axes((0.0, 0.0, 1.0, 1.0))
        axes.set_xlim(0.0, layout.width)
        axes.set_ylim(0.0, layout.height)
        axes.set_axis_off()
        for (x0, y0), (x1, y1) in layout.segments:
            axes.plot((x0, x1), (y0, y1), color="black", linewidth=1.2, solid_capstyle="round")
        for x, y, r in layout.circles:
            axes.add_patch(Circle((x, y), r, fill=False, edgecolor="#1f4e9e", linewidth=1.1))
        for a, b, c in layout.marks:
            axes.plot((a[0], b[0], c[0]), (a[1], b[1], c[1]), color="black", linewidth=0.9)
        xs = [p[0] for p in layout.points.values()]
        ys = [p[1] for p in layout.points.values()]
        axes.plot(xs, ys, linestyle="none", marker="o", markersize=3.5, color="black")
        for label in layout.labels:
            axes.text(label.x, label.y, label.text, ha="center", va="center", fontsize=FONT_POINTS)
        for x, y, r, start, end in arcs:
            axes.add_patch(
                Arc((x, y), 2 * r, 2 * r, theta1=start, theta2=end, color="#444444", linewidth=0.8)
            )
        for x, y, text in notes:
            axes.text(x, y, text, ha="center", va="center", fontsize=FONT_POINTS - 1, color="#b01c1c")
        metadata: dict[str, str | None] = (
            {"Software": None} if fmt == "png" else {"Date": None, "Creator": None}
        )
        figure.savefig(path, format=fmt, dpi=DPI, metadata=metadata)
