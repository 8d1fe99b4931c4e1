"""Construction definitions as data: ``defs.txt`` parsed into frozen :class:`ConstructionDef` objects.

Each definition is five lines (and a blank separator): the header ``name args``; the dependency line;
``inputs = preconditions``; the facts each new point satisfies, grouped by point (``x : fact, fact; y :
...``); and the numeric sketches that place the new points. New points are those named on the left of
a fact group; inputs are those named before ``=``; any remaining argument is a number (an angle).
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from geosynth.engine.geometry.sketches import SKETCHES
from geosynth.engine.language.predicates import PREDICATES
from geosynth.errors import DefinitionError

_FROZEN = ConfigDict(frozen=True, extra="forbid", strict=True)


class Statement(BaseModel):
    """A predicate applied to definition variables (or number tokens): ``coll x a b``."""

    model_config = _FROZEN
    name: str
    """The AlphaGeometry predicate (or sketch) name."""
    args: tuple[str, ...]
    """Its arguments, as the definition's variable names or number tokens."""

    def text(self) -> str:
        """The statement as written in ``defs.txt``."""
        return " ".join((self.name, *self.args))


class FactGroup(BaseModel):
    """Facts that pin down a group of new points."""

    model_config = _FROZEN
    points: tuple[str, ...]
    """The new points the facts are about."""
    facts: tuple[Statement, ...]
    """What they satisfy."""


class ConstructionDef(BaseModel):
    """One construction: its arguments, what must hold of its inputs, and how it places new points."""

    model_config = _FROZEN
    name: str
    """The construction's name (``on_line``)."""
    args: tuple[str, ...]
    """All arguments in full-form order (``x a b``)."""
    outputs: tuple[str, ...]
    """The arguments it creates, in argument order."""
    inputs: tuple[str, ...]
    """The existing points it needs."""
    params: tuple[str, ...]
    """Numeric arguments (an angle in degrees)."""
    preconditions: tuple[Statement, ...]
    """Non-degeneracy conditions on the inputs."""
    facts: tuple[FactGroup, ...]
    """What the new points satisfy."""
    sketches: tuple[Statement, ...]
    """Numeric sketches whose results are combined (intersected) to place the new points."""

    def text(self) -> str:
        """The definition in ``defs.txt`` form (five lines)."""
        rely = ", ".join(f"{p} : {' '.join(self.args)}" for p in self.outputs)
        pre = ", ".join(s.text() for s in self.preconditions)
        groups = "; ".join(
            f"{' '.join(g.points)} : {', '.join(s.text() for s in g.facts)}".rstrip() for g in self.facts
        )
        sketch = ", ".join(s.text() for s in self.sketches)
        return "\n".join(
            (
                f"{self.name} {' '.join(self.args)}".rstrip(),
                rely,
                f"{' '.join(self.inputs)} = {pre}".strip(),
                groups,
                sketch,
            )
        )


def _statements(
    text: str, source: str, known: frozenset[str], what: str = "predicate"
) -> tuple[Statement, ...]:
    out: list[Statement] = []
    for part in text.split(","):
        tokens = part.split()
        if not tokens:
            continue
        if tokens[0] not in known:
            raise DefinitionError(f"unknown {what} {tokens[0]!r}", source=source)
        out.append(Statement(name=tokens[0], args=tuple(tokens[1:])))
    return tuple(out)


def _fact_groups(text: str, source: str) -> tuple[FactGroup, ...]:
    groups: list[FactGroup] = []
    for chunk in text.split(";"):
        if not chunk.strip():
            continue
        if ":" in chunk:
            left, right = chunk.split(":", 1)
            groups.append(
                FactGroup(points=tuple(left.split()), facts=_statements(right, source, frozenset(PREDICATES)))
            )
        elif groups:  # a continuation of the previous group's facts
            last = groups[-1]
            more = _statements(chunk, source, frozenset(PREDICATES))
            groups[-1] = FactGroup(points=last.points, facts=last.facts + more)
        else:
            raise DefinitionError(f"fact group without points: {chunk.strip()!r}", source=source)
    return tuple(groups)


def parse_definition(block: str) -> ConstructionDef:
    """Parse one five-line definition block.

    Args:
        block: The definition's lines (header, dependencies, preconditions, facts, sketches).

    Returns:
        The frozen definition.

    Raises:
        DefinitionError: The block is malformed or names an unknown predicate or sketch.
    """
    lines = block.split("\n")
    header = lines[0].strip()
    if not header:
        raise DefinitionError("empty header line (a misplaced blank line?)", source=block.strip()[:60])
    if len(lines) != 5:
        raise DefinitionError(f"expected 5 lines, got {len(lines)}", source=header)
    name, *args = header.split()
    if "=" not in lines[2]:
        raise DefinitionError("precondition line lacks '='", source=header)
    left, right = lines[2].split("=", 1)
    inputs = tuple(left.split())
    facts = _fact_groups(lines[3], header)
    created = {p for g in facts for p in g.points}
    outputs = tuple(a for a in args if a in created)
    params = tuple(a for a in args if a not in created and a not in inputs)
    unknown = (set(inputs) | created) - set(args)
    if unknown or not outputs:
        raise DefinitionError(
            f"points {sorted(unknown)} are not arguments or nothing is created", source=header
        )
    sketches = _statements(lines[4], header, frozenset(SKETCHES), "sketch")
    return ConstructionDef(
        name=name,
        args=tuple(args),
        outputs=outputs,
        inputs=inputs,
        params=params,
        preconditions=_statements(right, header, frozenset(PREDICATES)),
        facts=facts,
        sketches=sketches,
    )


def parse_definitions(text: str) -> dict[str, ConstructionDef]:
    """Parse a whole ``defs.txt``.

    Args:
        text: Definitions separated by blank lines (a definition's dependency line may itself be blank).

    Returns:
        Definitions by name, in file order.

    Raises:
        DefinitionError: A block is malformed or a name is defined twice.
    """
    lines = text.rstrip("\n").split("\n")
    out: dict[str, ConstructionDef] = {}
    for start in range(0, len(lines), 6):
        try:
            definition = parse_definition("\n".join(lines[start : start + 5]))
        except DefinitionError as err:
            err.args = (f"line {start + 1}: {err.args[0]}",)
            raise
        if definition.name in out:
            raise DefinitionError("defined twice", source=definition.name)
        out[definition.name] = definition
    return out


def load_definitions(path: Path | None = None) -> dict[str, ConstructionDef]:
    """Load construction definitions from a file, or the package's bundled ``defs.txt``.

    Args:
        path: A ``defs.txt``-format file; ``None`` for the bundled copy.

    Returns:
        Definitions by name.
    """
    if path is None:
        return dict(_bundled())
    return parse_definitions(path.read_text(encoding="utf-8"))


BUNDLED_FILES = ("defs.txt", "newclid_defs.txt")
"""The bundled definition files: AlphaGeometry's ``defs.txt``, then the constructions Newclid's problem
files use that AlphaGeometry lacks (``acute_triangle``, ``between``, ``between_bound``, ``iso_trapezoid2``,
``eqratio6``; the ones Newclid defines differently are rewritten on reading, see
:mod:`geosynth.engine.language.dialects`)."""


@cache
def _bundled() -> dict[str, ConstructionDef]:
    out: dict[str, ConstructionDef] = {}
    for name in BUNDLED_FILES:
        text = resources.files("geosynth.engine").joinpath("rules", name).read_text(encoding="utf-8")
        for key, definition in parse_definitions(text).items():
            if key in out:
                raise DefinitionError(f"defined in two bundled files (the second is {name})", source=key)
            out[key] = definition
    return out


def default_definitions() -> dict[str, ConstructionDef]:
    """The bundled definitions (shared, read-only; loaded once)."""
    return _bundled()
