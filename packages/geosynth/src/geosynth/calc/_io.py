"""Loading calculation problems: formal Geometry3K JSON records and our own JSON format.

A source is a ``.json`` file (one record), a ``.jsonl`` file (one record a line) or a folder of ``.json``
records. Each record is either a formal Geometry3K record (it has ``solution`` or
``diagrammatic_relations``; relations as ``{"rel", "args"}``, expressions as ``{"op", "args"}`` trees) or
a dumped :class:`CalcProblem` (``problem.model_dump_json()``), which loads back equal.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

from pydantic import ValidationError

from geosynth.calc._errors import CalcFormatError
from geosynth.calc._model import (
    CalcProblem,
    Centroid,
    Const,
    Equation,
    Incenter,
    Num,
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
    Kite,
    Length,
    Midpoint,
    NotCollinear,
    OppositeSide,
    Parallel,
    Parallelogram,
    Perpendicular,
    Rectangle,
    Rhombus,
    SameSide,
    SimilarTriangles,
    Square,
    Trapezoid,
)
from geosynth.errors import GeoSynthError

Json = dict[str, Any]


def _between(args: list[str]) -> Between:
    return Between.of(args[1], args[0], args[2])  # Geometry3K: Between(middle, end, end)


def _centroid(args: list[str]) -> Centroid:
    return Centroid(centre=args[0], triangle=(args[1], args[2], args[3]), feet=tuple(args[4:]))


_RELATIONS: dict[str, Callable[[list[str]], Any]] = {
    "Collinear": lambda a: Collinear.of(*a),
    "Between": _between,
    "Perpendicular": lambda a: Perpendicular.of(*a),
    "Parallel": lambda a: Parallel.of(*a),
    "Midpoint": lambda a: Midpoint.of(*a),
    "Parallelogram": lambda a: Parallelogram.of(*a),
    "Rectangle": lambda a: Rectangle.of(*a),
    "Rhombus": lambda a: Rhombus.of(*a),
    "Square": lambda a: Square.of(*a),
    "Trapezoid": lambda a: Trapezoid.of(*a),
    "Kite": lambda a: Kite.of(*a),
    "Similar": lambda a: SimilarTriangles.of(*a),
    "Congruent": lambda a: CongruentTriangles.of(*a),
    "Quadrilateral": lambda a: Polygon(points=tuple(a)),
    "Pentagon": lambda a: Polygon(points=tuple(a)),
    "Similar4P": lambda a: SimilarPolygons(first=tuple(a[:4]), second=tuple(a[4:])),
    "Similar5P": lambda a: SimilarPolygons(first=tuple(a[:5]), second=tuple(a[5:])),
    "Incenter": lambda a: Incenter(centre=a[0], triangle=(a[1], a[2], a[3])),
    "Centroid": _centroid,
}
"""Geometry3K relation name to a builder from its argument list."""

_DIAGRAM: dict[str, Callable[[list[str]], Any]] = {
    "SameSide": lambda a: SameSide.of(*a),
    "OppositeSide": lambda a: OppositeSide.of(*a),
    "NotCollinear": lambda a: NotCollinear.of(*a),
    "Between": _between,
}
"""Geometry3K diagrammatic relation name to a builder."""

_QUANTITIES: dict[str, Callable[[list[str]], Any]] = {
    "length": lambda p: Length.of(*p),
    "angle": lambda p: Angle.of(*p),
    "area": lambda p: Area.of(*p),
}


def _expr(node: Any) -> Any:
    if not isinstance(node, dict):
        raise ValueError(f"expected an expression object, got {node!r}")
    tree = cast(Json, node)
    if "op" in tree:
        return Op(op=tree["op"], args=tuple(_expr(a) for a in tree["args"]))
    if "qty" in tree:
        builder = _QUANTITIES.get(tree["qty"])
        if builder is None:
            raise ValueError(f"unknown quantity {tree['qty']!r}")
        return builder(list(tree["points"]))
    if "var" in tree:
        return Var(name=str(tree["var"]))
    if "num" in tree:
        if not isinstance(tree["num"], str | int | float):
            raise ValueError(f"num must be a number or numeric text, got {tree['num']!r}")
        return Num(text=str(tree["num"]))
    if "const" in tree:
        return Const(name=tree["const"])
    raise ValueError(f"unknown expression node {sorted(tree)}")


def _relation(node: Json, table: dict[str, Callable[[list[str]], Any]]) -> Any:
    builder = table.get(node["rel"])
    if builder is None:
        raise ValueError(f"unknown relation {node['rel']!r}")
    return builder([str(a) for a in node["args"]])


def _field(record: str, field: str, build: Callable[[], Any]) -> Any:
    try:
        return build()
    except (GeoSynthError, ValidationError, ValueError, KeyError, TypeError, IndexError) as err:
        if isinstance(err, CalcFormatError):
            raise
        detail = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise CalcFormatError(detail, record=record, field=field) from None


def from_geometry3k(record: Json) -> CalcProblem:
    """A :class:`CalcProblem` from one formal Geometry3K record.

    Raises:
        CalcFormatError: A field is missing or malformed (the message names the record and field).
    """
    rid = str(record.get("id", "?"))
    conditions = [
        _field(
            rid,
            f"conditions[{i}]",
            lambda c=c: _relation(c, _RELATIONS) if "rel" in c else Equation(expr=_expr(c)),
        )
        for i, c in enumerate(_field(rid, "conditions", lambda: list(record["conditions"])))
    ]
    diagram = [
        _field(rid, f"diagrammatic_relations[{i}]", lambda d=d: _relation(d, _DIAGRAM))
        for i, d in enumerate(record.get("diagrammatic_relations", []))
    ]
    goal_node = _field(rid, "goal", lambda: cast(Json, record["goal"]))
    goal = _field(
        rid, "goal", lambda: _relation(goal_node, _RELATIONS) if "rel" in goal_node else _expr(goal_node)
    )
    solution = record.get("solution")
    return _field(
        rid,
        "record",
        lambda: CalcProblem(
            id=rid,
            text=str(record.get("text", "")),
            conditions=tuple(conditions),
            diagram=tuple(diagram),
            goal=goal,
            answer=None if solution is None else str(solution),
            choices=tuple(str(c) for c in record.get("choices", [])),
            answer_choice=record.get("answer_choice"),
        ),
    )


def _is_geometry3k(record: Json) -> bool:
    return "diagrammatic_relations" in record or "solution" in record


def parse_record(record: Any, position: str = "?") -> CalcProblem:
    """One record (either format) as a :class:`CalcProblem`.

    Raises:
        CalcFormatError: The record is malformed.
    """
    if not isinstance(record, dict):
        raise CalcFormatError("a record must be a JSON object", record=position, field="record")
    data = cast(Json, record)
    if _is_geometry3k(data):
        return from_geometry3k(data)
    rid = str(data.get("id", position))
    try:
        return CalcProblem.model_validate_json(json.dumps(data))
    except ValidationError as err:
        first = err.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "record"
        raise CalcFormatError(first["msg"], record=rid, field=field) from None


def dump_problem(problem: CalcProblem) -> str:
    """Our own JSON format for one problem (one line; :func:`parse_record` loads it back equal)."""
    return problem.model_dump_json()


def _records(path: Path) -> Iterator[tuple[str, Any]]:
    if path.is_dir():
        for file in sorted(path.glob("*.json"), key=lambda p: (len(p.stem), p.stem)):
            yield from _records(file)
        return
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                yield f"{path.name}:{number}", _decode(line, f"{path.name}:{number}")
        return
    yield path.name, _decode(text, path.name)


def _decode(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise CalcFormatError(
            f"invalid JSON ({err.msg} at line {err.lineno})", record=where, field="record"
        ) from None


def load_calc_problems(path: str | Path) -> list[CalcProblem]:
    """Load every problem of a source: a ``.json`` record, a ``.jsonl`` file, or a folder of ``.json``.

    Raises:
        CalcFormatError: A record is malformed (the message names the record and field).
        FileNotFoundError: The path does not exist.
    """
    source = Path(path)
    if not source.exists():
        raise FileNotFoundError(f"no such calculation source: {source}")
    return [parse_record(record, where) for where, record in _records(source)]


def read_calc_problems(path: str | Path) -> Iterator[tuple[str, CalcProblem | CalcFormatError]]:
    """Every record of a source in order, each parsed or with the one-line error that rejects it.

    Unlike :func:`load_calc_problems` a malformed record does not stop the others: a batch reports it and
    goes on. The name is the record's id when it has one, else its position (``file.jsonl:3``).

    Raises:
        FileNotFoundError: The path does not exist.
    """
    source = Path(path)
    if not source.exists():
        raise FileNotFoundError(f"no such calculation source: {source}")
    files = (
        sorted(source.glob("*.json"), key=lambda p: (len(p.stem), p.stem)) if source.is_dir() else [source]
    )
    for file in files:
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            yield file.name, CalcFormatError(f"cannot read ({err})", record=file.name, field="record")
            continue
        if file.suffix == ".jsonl":
            chunks = [
                (f"{file.name}:{n}", line) for n, line in enumerate(text.splitlines(), 1) if line.strip()
            ]
        else:
            chunks = [(file.name, text)]
        for where, chunk in chunks:
            try:
                problem = parse_record(_decode(chunk, where), where)
            except CalcFormatError as err:
                yield err.record, err
                continue
            yield problem.id, problem


def is_calc_source(path: str | Path) -> bool:
    """Whether ``path`` looks like a calculation source (checks the first record only)."""
    source = Path(path)
    try:
        if source.is_dir():
            first = next(iter(sorted(source.glob("*.json"))), None)
            return first is not None and is_calc_source(first)
        if source.suffix not in (".json", ".jsonl") or not source.is_file():
            return False
        with source.open(encoding="utf-8") as handle:
            head = handle.readline() if source.suffix == ".jsonl" else handle.read()
        record = json.loads(head)
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return False
    if not isinstance(record, dict):
        return False
    data = cast(Json, record)
    return "goal" in data and "conditions" in data
