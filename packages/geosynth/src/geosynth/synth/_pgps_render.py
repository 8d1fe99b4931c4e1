"""Diagrams of PGPS problems: the figure with its given values written on it, as PGPS diagrams are.

The figure is laid out by :func:`geosynth.synth._render.diagram_layout` (the same lines, circles,
right-angle marks and point labels as every synthesized diagram); a length is written beside its
segment, an angle's measure inside the angle by a small arc (``40°``, ``(2x+10)°``), an arc's measure
outside the circle, and the letter a problem asks for (``x``) where its quantity is. Each note goes to
the candidate position that overlaps nothing already placed (point labels, other notes, points).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from geosynth.engine import Diagram, Problem
from geosynth.synth._pgps_figure import Q
from geosynth.synth._render import (
    _CHAR_WIDTH,
    _FONT_INCHES,
    FORMATS,
    LabelBox,
    Layout,
    RenderError,
    _draw,
    _right_mark,
    _segment_hits_box,
    diagram_layout,
)

__all__ = ("Note", "notes_for", "render_pgps")

Note = tuple[float, float, str]
"""A text drawn at a position (inches)."""
Arc = tuple[float, float, float, float, float]
"""An angle mark: centre, radius, start and end angle (degrees)."""

_SHOWN = frozenset({"seg", "ang", "arc"})


def _box(x: float, y: float, text: str) -> LabelBox:
    return LabelBox(
        point="", text=text, x=x, y=y, width=_CHAR_WIDTH * len(text) + 0.04, height=_FONT_INCHES * 1.08
    )


def _free(box: LabelBox, placed: list[LabelBox], layout: Layout) -> float:
    """Lower is better: overlaps with placed boxes, points and segments, and leaving the page."""
    cost = 10.0 * sum(box.overlaps(other) for other in placed)
    cost += 5.0 * sum(box.contains(p, pad=0.1) for p in layout.points.values())
    cost += 3.0 * sum(_segment_hits_box(a, b, box) for a, b in layout.segments)
    inside = box.width / 2 <= box.x <= layout.width - box.width / 2 and (
        box.height / 2 <= box.y <= layout.height - box.height / 2
    )
    return cost + (0.0 if inside else 20.0)


def _best(
    candidates: list[tuple[float, float]], text: str, placed: list[LabelBox], layout: Layout
) -> LabelBox:
    """The first candidate of least cost (candidates come in order of preference)."""
    boxes = [_box(x, y, text) for x, y in candidates]
    return min(boxes, key=lambda b: _free(b, placed, layout) + 0.01 * boxes.index(b))


def _segment_note(
    p: tuple[float, float], q: tuple[float, float], text: str, placed: list[LabelBox], layout: Layout
) -> LabelBox:
    mid = ((p[0] + q[0]) / 2, (p[1] + q[1]) / 2)
    length = max(math.hypot(q[0] - p[0], q[1] - p[1]), 1e-9)
    normal = (-(q[1] - p[1]) / length, (q[0] - p[0]) / length)
    candidates = [
        (mid[0] + side * d * normal[0] + t * (q[0] - p[0]), mid[1] + side * d * normal[1] + t * (q[1] - p[1]))
        for d in (0.14, 0.24)
        for t in (0.0, 0.2, -0.2, 0.32, -0.32)
        for side in (1, -1)
    ]
    return _best(candidates, text, placed, layout)


def _angle_note(
    a: tuple[float, float],
    b: tuple[float, float],
    c: tuple[float, float],
    text: str,
    placed: list[LabelBox],
    layout: Layout,
) -> tuple[LabelBox, Arc]:
    t1 = math.atan2(a[1] - b[1], a[0] - b[0])
    t2 = math.atan2(c[1] - b[1], c[0] - b[0])
    sweep = (t2 - t1) % (2 * math.pi)
    if sweep > math.pi:
        t1, t2, sweep = t2, t1, 2 * math.pi - sweep
    middle = t1 + sweep / 2
    reach = 0.28 + 0.12 / max(math.sin(sweep / 2), 0.35)
    candidates = [
        (b[0] + r * math.cos(middle), b[1] + r * math.sin(middle))
        for r in (reach, reach + 0.12, reach + 0.24)
    ]
    box = _best(candidates, text, placed, layout)
    arc = (b[0], b[1], 0.18, math.degrees(t1), math.degrees(t1 + sweep))
    return box, arc


def _arc_note(
    centre: tuple[float, float],
    a: tuple[float, float],
    b: tuple[float, float],
    text: str,
    placed: list[LabelBox],
    layout: Layout,
) -> LabelBox:
    t1 = math.atan2(a[1] - centre[1], a[0] - centre[0])
    t2 = math.atan2(b[1] - centre[1], b[0] - centre[0])
    sweep = (t2 - t1) % (2 * math.pi)
    if sweep > math.pi:
        t1, sweep = t2, 2 * math.pi - sweep
    middle = t1 + sweep / 2
    radius = math.hypot(a[0] - centre[0], a[1] - centre[1])
    candidates = [
        (centre[0] + (radius + d) * math.cos(middle), centre[1] + (radius + d) * math.sin(middle))
        for d in (0.18, 0.3)
    ]
    return _best(candidates, text, placed, layout)


def _shown(q: Q, text: str) -> str:
    if text.startswith("\\angle "):  # a numbered angle: its number, as textbook diagrams write it
        return text.removeprefix("\\angle ")
    if q.kind in ("ang", "arc"):
        if any(ch.isalpha() for ch in text) and len(text) > 1:
            return f"({text})°"
        return f"{text}°"
    return text.replace("\\sqrt{", "√").replace("}", "")


def notes_for(layout: Layout, values: Sequence[tuple[Q, str]]) -> tuple[list[Note], list[Arc]]:
    """Where each value goes on a laid-out figure: the notes and the angle marks.

    Raises:
        RenderError: A quantity names a point the layout does not have.
    """
    placed = list(layout.labels)
    notes: list[Note] = []
    arcs: list[Arc] = []
    at = layout.points
    for q, text in values:
        if q.kind not in _SHOWN:
            continue
        if missing := [p for p in q.pts if p not in at]:
            raise RenderError(f"value {text!r} names points {' '.join(missing)} the diagram does not have")
        shown = _shown(q, text)
        if q.kind == "seg":
            box = _segment_note(at[q.pts[0]], at[q.pts[1]], shown, placed, layout)
        elif q.kind == "ang":
            box, arc = _angle_note(at[q.pts[0]], at[q.pts[1]], at[q.pts[2]], shown, placed, layout)
            arcs.append(arc)
        else:
            box = _arc_note(at[q.pts[0]], at[q.pts[1]], at[q.pts[2]], shown, placed, layout)
        placed.append(box)
        notes.append((box.x, box.y, shown))
    return notes, arcs


def _on(p: tuple[float, float], a: tuple[float, float], b: tuple[float, float], tol: float) -> bool:
    """Whether ``p`` lies on the segment ``a b`` (within ``tol``)."""
    length = math.hypot(b[0] - a[0], b[1] - a[1])
    if length <= tol:
        return math.hypot(p[0] - a[0], p[1] - a[1]) <= tol
    cross = (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])
    along = ((p[0] - a[0]) * (b[0] - a[0]) + (p[1] - a[1]) * (b[1] - a[1])) / length
    return abs(cross) / length <= tol and -tol <= along <= length + tol


def _only(layout: Layout, lines: Sequence[Sequence[str]]) -> Layout:
    """The layout with only the segments along ``lines`` and the points on what remains drawn."""
    tol = 1e-3
    at = layout.points
    segments = []
    for a, b in layout.segments:
        on = {name for name, xy in at.items() if _on(xy, a, b, tol)}
        if any(len(on.intersection(line)) >= 2 for line in lines):
            segments.append((a, b))
    kept = {name for name, xy in at.items() if any(_on(xy, a, b, tol) for a, b in segments)}
    for x, y, r in layout.circles:
        kept |= {
            name
            for name, (px, py) in at.items()
            if abs(math.hypot(px - x, py - y) - r) <= tol or math.hypot(px - x, py - y) <= tol
        }
    return layout.model_copy(
        update={
            "segments": tuple(segments),
            "points": {name: xy for name, xy in at.items() if name in kept},
            "labels": tuple(label for label in layout.labels if label.point in kept),
        }
    )


def render_pgps(
    problem: Problem,
    diagram: Diagram,
    path: Path,
    *,
    values: Sequence[tuple[Q, str]],
    draw: Sequence[tuple[str, str]] = (),
    right: Sequence[tuple[str, str, str, str]] = (),
    lines: Sequence[tuple[str, ...]] | None = None,
    fmt: str = "png",
    seed: int = 0,
    layout: Layout | None = None,
) -> Path:
    """Draw a PGPS problem's diagram: its figure, the extra segments it names, its values written on it.

    The same inputs give the same bytes (as :func:`geosynth.synth._render.render_diagram`).

    Args:
        problem: The figure's construction clauses.
        diagram: Coordinates of every point.
        path: Where to write.
        values: Quantities and the text to write at them (given values, the asked letter).
        draw: Segments to draw besides the constructions' own (a radius the problem gives).
        right: Perpendicular line pairs the problem states (``p q r s``: pq ⊥ rs), marked where they meet.
        lines: The figure's lines to draw (named points along each) when the problem leaves some out:
            the others, the points on nothing drawn and the right-angle marks it does not state are left
            out of the picture. ``None``: the whole figure.
        fmt: ``png`` or ``svg``.
        seed: Tie-breaking of label positions and the SVG id salt.
        layout: The figure's layout, when the caller has it (several problems on one figure share it;
            it must have been made with this seed and these extra segments).

    Raises:
        RenderError: Unsupported format, a construction without a drawing, or a value naming an unknown point.
    """
    if fmt not in FORMATS:
        raise RenderError(f"unsupported diagram format {fmt!r}; expected one of {', '.join(FORMATS)}")
    if layout is None:
        statements = [f"length {p} {q}" for p, q in draw]
        layout = diagram_layout(problem, diagram, seed=seed, statements=statements)
    marks = [m for names in right if (m := _right_mark(names, layout.points, 1e-4)) is not None]
    if lines is not None:
        layout = _only(layout, [*lines, *draw]).model_copy(update={"marks": tuple(dict.fromkeys(marks))})
    else:
        layout = layout.model_copy(update={"marks": tuple(dict.fromkeys((*layout.marks, *marks)))})
    notes, arcs = notes_for(layout, values)
    path.parent.mkdir(parents=True, exist_ok=True)
    _draw(layout, path, fmt, seed, notes=notes, arcs=arcs)
    return path
