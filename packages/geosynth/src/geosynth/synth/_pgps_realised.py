r"""The realised figure of a PGPS-format problem: what a reader needs to measure every quantity of it.

A PGPS problem the generator writes is about a figure it realised, so every length, angle, arc and area
of it is known. :class:`RealisedFigure` keeps that figure with the problem, in the problem's own unit
(the unit in which the given values are written): the named points' coordinates, the drawn lines, the
circles (centre, radius, the named points on them), the value of every letter the question uses, and the
value asked for. It travels as the optional ``realised_figure`` field of a PGPS record (a shard line or
an entry of ``pgps.json``); readers of the PGPS format that do not know the field ignore it
(``geodsl.data.load_pgps`` and ``geo synth mts`` keep only the fields they know).
:func:`load_figured` reads a PGPS file with it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from geodsl.data import PGPSRecord, load_pgps
from geodsl.errors import DataError
from geosynth.synth._pgps_figure import PGPSFigure
from geosynth.synth.errors import DatasetError

__all__ = (
    "FIGURE_FIELD",
    "FigureCircle",
    "FigurePoint",
    "FiguredProblem",
    "RealisedFigure",
    "load_figured",
    "realised_figure",
)

FIGURE_FIELD = "realised_figure"
"""The key of the realised figure in a PGPS record (shard line or ``pgps.json`` entry)."""

_CONFIG = ConfigDict(frozen=True, extra="forbid", strict=True, use_attribute_docstrings=True)


class FigurePoint(BaseModel):
    """A named point of the figure."""

    model_config = _CONFIG

    name: str
    """The point's name as the clauses write it, lower case (``a``, ``b``...)."""
    x: float
    """Its abscissa, in the problem's unit."""
    y: float
    """Its ordinate, in the problem's unit."""


class FigureCircle(BaseModel):
    """A drawn circle of the figure."""

    model_config = _CONFIG

    centre: str | None
    """The named point at its centre (``None`` when no named point is there)."""
    x: float
    """The centre's abscissa."""
    y: float
    """The centre's ordinate."""
    r: float
    """The radius, in the problem's unit."""
    points: tuple[str, ...]
    """The named points on the circle."""


class RealisedFigure(BaseModel):
    """The figure a problem is about, in the problem's unit, and the values its question binds."""

    model_config = _CONFIG

    points: tuple[FigurePoint, ...]
    """Every named point."""
    lines: tuple[tuple[str, ...], ...]
    """The drawn lines (named points in order along each), with the extra segments the problem draws."""
    circles: tuple[FigureCircle, ...]
    """The drawn circles."""
    variables: dict[str, float]
    """The value of each letter the question uses (``x`` of ``Find x.`` or of ``2x+10``)."""
    goal: float
    """The figure's value of what the question asks for (the answer)."""
    exact: bool
    """Whether every given value is written exactly (otherwise one is rounded and values agree to 2%)."""

    def coordinates(self) -> dict[str, tuple[float, float]]:
        """The points as a name-to-coordinates mapping."""
        return {p.name: (p.x, p.y) for p in self.points}


class FiguredProblem(BaseModel):
    """A PGPS record with the figure it is about (``None`` when the record carries none)."""

    model_config = _CONFIG

    record: PGPSRecord
    """The annotation record."""
    figure: RealisedFigure | None
    """Its realised figure."""


def realised_figure(
    fig: PGPSFigure,
    *,
    scale: float,
    draw: Sequence[tuple[str, str]],
    variables: Mapping[str, float],
    goal: float,
    exact: bool,
    lines: Sequence[tuple[str, ...]] | None = None,
) -> RealisedFigure:
    """The realised figure of a problem written on ``fig`` rescaled by ``scale`` (the composer's scale).

    Args:
        fig: The figure as the composer measured it.
        scale: The factor that makes the problem's given length whole.
        draw: Segments the problem draws besides the figure's lines.
        variables: The value of each letter of the question.
        goal: The value asked for.
        exact: Whether every given value is written exactly.
        lines: The figure's lines the problem draws when it leaves some out (``None``: all); the
            realised figure then has those lines and only the points they, the extra segments and the
            circles pass through.
    """
    drawn = fig.lines if lines is None else tuple(lines)
    all_lines = [*drawn, *(tuple(pair) for pair in draw if not fig.joined(*pair))]
    shown = fig.xy
    if lines is not None:
        on = {p for line in all_lines for p in line}
        on |= {p for c in fig.circles for p in (*c.points, *([c.centre] if c.centre is not None else []))}
        shown = {n: xy for n, xy in fig.xy.items() if n in on}
    return RealisedFigure(
        points=tuple(FigurePoint(name=n, x=x * scale, y=y * scale) for n, (x, y) in shown.items()),
        lines=tuple(tuple(line) for line in all_lines),
        circles=tuple(
            FigureCircle(centre=c.centre, x=c.x * scale, y=c.y * scale, r=c.r * scale, points=c.points)
            for c in fig.circles
        ),
        variables=dict(variables),
        goal=goal,
        exact=exact,
    )


def figure_from_json(value: Any, where: str) -> RealisedFigure:
    """A realised figure from its JSON value (lists as tuples).

    Raises:
        DatasetError: The value is not a realised figure; the message names ``where``.
    """
    try:
        return RealisedFigure.model_validate_json(json.dumps(value))
    except ValidationError as exc:
        first = exc.errors()[0]
        at = ".".join(str(p) for p in first["loc"])
        raise DatasetError(f"{where}: field {FIGURE_FIELD!r}: {at}: {first['msg']}") from None


def load_figured(path: Path) -> list[FiguredProblem]:
    """The records of a PGPS file (any layout ``geodsl.data.load_pgps`` reads) with their realised figures.

    Raises:
        DatasetError: The file is not PGPS-format, or a record's ``realised_figure`` is malformed.
    """
    try:
        records = load_pgps(path)
    except DataError as exc:
        raise DatasetError(str(exc)) from None
    text = path.read_text(encoding="utf-8-sig")
    raw: dict[str, Any] = {}
    entries: list[tuple[str | None, Any]]
    try:
        if path.suffix.lower() in (".jsonl", ".ndjson"):
            raise json.JSONDecodeError("JSON Lines", text, 0)
        document: Any = json.loads(text)  # one JSON value (load_pgps read it): keyed or a list
        entries = list(document.items()) if isinstance(document, dict) else [(None, e) for e in document]
    except json.JSONDecodeError:  # JSON Lines, as load_pgps reads them
        entries = [(None, json.loads(line)) for line in text.splitlines() if line.strip()]
    for key, entry in entries:
        if isinstance(entry, dict) and FIGURE_FIELD in entry:
            body: dict[str, Any] = entry
            raw[key if key is not None else str(body.get("id"))] = body[FIGURE_FIELD]
    return [
        FiguredProblem(
            record=r,
            figure=figure_from_json(raw[r.id], f"{path}: record {r.id}") if r.id in raw else None,
        )
        for r in records
    ]
