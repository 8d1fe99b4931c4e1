"""Problems in the AlphaGeometry/JGEX one-line format: parsing, validation and a round-trip printer.

A problem line is ``clause; clause; ... ? goal``; a clause is ``new points = construction, construction``
and a construction is ``name args``. A construction may be written in full form (every argument, the
new points included: ``x = on_line x a b``) or in short form (the new points left out: ``x = on_line a b``);
both parse to the full form, which is what the printer writes.
"""

from __future__ import annotations

import math
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from geosynth.engine.language.definitions import ConstructionDef, default_definitions
from geosynth.engine.language.dialects import Dialect, from_dialect
from geosynth.engine.language.predicates import build_relation, relation_text
from geosynth.engine.language.relations import Relation
from geosynth.engine.language.shapes import AnyRelation
from geosynth.errors import ProblemSyntaxError, RelationError, UnknownConstructionError, UnknownPredicateError

_FROZEN = ConfigDict(frozen=True, extra="forbid", strict=True)


class Construction(BaseModel):
    """One construction call in full form: ``on_line x a b``."""

    model_config = _FROZEN
    name: str
    """The definition's name."""
    args: tuple[str, ...]
    """All its arguments in the definition's order (new points, existing points, numbers)."""

    def text(self) -> str:
        """The call as written in a problem line."""
        return " ".join((self.name, *self.args))


class Clause(BaseModel):
    """New points and the constructions that together place them."""

    model_config = _FROZEN
    points: tuple[str, ...]
    """The points this clause creates."""
    constructions: tuple[Construction, ...]
    """Their constructions; the new points satisfy all of them."""
    positions: tuple[tuple[str, float, float], ...] = ()
    """Coordinates the problem suggests for some new points (written ``x@1.5_-2``)."""

    def text(self) -> str:
        """The clause as written in a problem line."""
        where = {name: f"{name}@{x!r}_{y!r}" for name, x, y in self.positions}
        names = " ".join(where.get(p, p) for p in self.points)
        return f"{names} = {', '.join(c.text() for c in self.constructions)}"


class Problem(BaseModel):
    """A construction sequence and an optional goal."""

    model_config = _FROZEN
    name: str
    """The problem's name (its name line in a problem file; may be empty)."""
    clauses: tuple[Clause, ...]
    """The clauses, each using only points created before it."""
    goal: AnyRelation | None
    """What is to be proved, in canonical form, or ``None``."""

    @property
    def points(self) -> tuple[str, ...]:
        """Every point, in creation order."""
        return tuple(p for clause in self.clauses for p in clause.points)

    def renamed(self, mapping: dict[str, str]) -> Problem:
        """The same problem with points renamed (names not in ``mapping`` are kept).

        Raises:
            ProblemSyntaxError: Two points would get the same name.
        """
        new_names = [mapping.get(p, p) for p in self.points]
        if len(set(new_names)) != len(new_names):
            raise ProblemSyntaxError("renaming merges points", clause=str(mapping))

        def clause(c: Clause) -> Clause:
            calls = tuple(
                Construction(name=k.name, args=tuple(mapping.get(a, a) for a in k.args))
                for k in c.constructions
            )
            where = tuple((mapping.get(n, n), x, y) for n, x, y in c.positions)
            return Clause(
                points=tuple(mapping.get(p, p) for p in c.points), constructions=calls, positions=where
            )

        goal = None if self.goal is None else self.goal.renamed(mapping)
        return Problem.model_validate(
            {"name": self.name, "clauses": tuple(clause(c) for c in self.clauses), "goal": goal}
        )

    def text(self) -> str:
        """The problem line (full-form clauses; the goal in canonical point order)."""
        body = "; ".join(c.text() for c in self.clauses)
        return body if self.goal is None else f"{body} ? {relation_text(self.goal)}"


def _full_args(
    definition: ConstructionDef, given: list[str], new_points: list[str], clause: str
) -> list[str]:
    if len(given) == len(definition.args):
        return given
    if len(given) == len(definition.args) - len(definition.outputs):
        new_iter, given_iter = iter(new_points), iter(given)
        try:
            return [next(new_iter) if a in definition.outputs else next(given_iter) for a in definition.args]
        except StopIteration:
            raise ProblemSyntaxError(
                f"short-form {definition.name} needs {len(definition.outputs)} new points", clause=clause
            ) from None
    raise ProblemSyntaxError(
        f"{definition.name} takes {len(definition.args)} arguments ({' '.join(definition.args)}) "
        f"or {len(definition.args) - len(definition.outputs)} in short form, got {len(given)}",
        clause=clause,
    )


def _check_binding(definition: ConstructionDef, args: list[str], known: set[str], clause: str) -> list[str]:
    binding = dict(zip(definition.args, args, strict=True))
    for param in definition.params:
        try:
            float(binding[param])
        except ValueError:
            raise ProblemSyntaxError(
                f"{definition.name} expects a number for {param}, got {binding[param]!r}", clause=clause
            ) from None
    missing = [binding[p] for p in definition.inputs if binding[p] not in known]
    if missing:
        raise ProblemSyntaxError(
            f"{definition.name} uses undefined points {' '.join(missing)}", clause=clause
        )
    _check_degenerate(definition, binding, clause)
    return [binding[p] for p in definition.outputs]


def _check_degenerate(definition: ConstructionDef, binding: dict[str, str], clause: str) -> None:
    """Check that every precondition and fact can be stated on the given points.

    A repeated point where the definition needs distinct ones (``on_line x a a``) cannot.
    """
    statements = (*definition.preconditions, *(s for g in definition.facts for s in g.facts))
    for statement in statements:
        args = tuple(binding.get(a, a) for a in statement.args)
        try:
            build_relation(statement.name, args)
        except RelationError as err:
            call = " ".join((definition.name, *(binding[a] for a in definition.args)))
            raise ProblemSyntaxError(
                f"degenerate construction {call}: {' '.join((statement.name, *args))} ({err})", clause=clause
            ) from None


def parse_clause(text: str, known: set[str], definitions: dict[str, ConstructionDef]) -> Clause:
    """Parse one clause against the points created so far.

    Args:
        text: ``new points = construction, construction``.
        known: Points created by earlier clauses.
        definitions: Construction definitions by name.

    Returns:
        The clause in full form.

    Raises:
        ProblemSyntaxError: Malformed clause, wrong argument count, undefined or re-used points.
        UnknownConstructionError: A construction name with no definition.
    """
    clause = text.strip()
    if "=" not in clause:
        raise ProblemSyntaxError("expected 'points = constructions'", clause=clause)
    if clause.count("=") > 1:
        raise ProblemSyntaxError("more than one '=' (a missing ';' between clauses?)", clause=clause)
    left, right = clause.split("=", 1)
    new_points, positions = _point_names(left.split(), clause)
    if not new_points or len(set(new_points)) != len(new_points):
        raise ProblemSyntaxError("expected distinct new point names before '='", clause=clause)
    if reused := [p for p in new_points if p in known]:
        raise ProblemSyntaxError(f"points {' '.join(reused)} already exist", clause=clause)
    constructions: list[Construction] = []
    created: set[str] = set()
    for part in right.split(","):
        tokens = part.split()
        if not tokens:
            raise ProblemSyntaxError("empty construction", clause=clause)
        definition = definitions.get(tokens[0])
        if definition is None:
            raise UnknownConstructionError(tokens[0], clause=clause)
        args = _full_args(definition, tokens[1:], new_points, clause)
        created.update(_check_binding(definition, args, known, clause))
        constructions.append(Construction(name=definition.name, args=tuple(args)))
    if created != set(new_points):
        raise ProblemSyntaxError(
            f"constructions create {' '.join(sorted(created))} but the clause names {' '.join(new_points)}",
            clause=clause,
        )
    return Clause(points=tuple(new_points), constructions=tuple(constructions), positions=positions)


def _point_names(tokens: list[str], clause: str) -> tuple[list[str], tuple[tuple[str, float, float], ...]]:
    names: list[str] = []
    positions: list[tuple[str, float, float]] = []
    for token in tokens:
        name, at, where = token.partition("@")
        names.append(name)
        if not at:
            continue
        try:
            x_text, y_text = where.split("_")
            x, y = float(x_text), float(y_text)
        except ValueError:
            raise ProblemSyntaxError(f"bad position {token!r} (expected name@x_y)", clause=clause) from None
        if not (math.isfinite(x) and math.isfinite(y)):
            raise ProblemSyntaxError(f"position {token!r} is not finite", clause=clause)
        positions.append((name, x, y))
    return names, tuple(positions)


def parse_goal(text: str, known: set[str]) -> Relation:
    """Parse a goal statement (``cong a b c d``) over known points.

    Raises:
        UnknownPredicateError: The predicate is not in the formal language.
        ProblemSyntaxError: Wrong arguments or unknown points.
    """
    goal = text.strip()
    tokens = goal.split()
    if not tokens:
        raise ProblemSyntaxError("empty goal", clause=goal)
    try:
        relation = build_relation(tokens[0], tuple(tokens[1:]))
    except RelationError as err:
        if str(err).startswith("unknown predicate"):
            raise UnknownPredicateError(tokens[0], clause=goal) from None
        raise ProblemSyntaxError(str(err), clause=goal) from None
    if missing := [p for p in relation.points if p not in known]:
        raise ProblemSyntaxError(f"goal uses undefined points {' '.join(missing)}", clause=goal)
    return relation


def parse_problem(
    line: str, name: str = "", definitions: dict[str, ConstructionDef] | None = None
) -> Problem:
    """Parse a problem line.

    Args:
        line: ``clause; clause; ... [? goal]``.
        name: The problem's name.
        definitions: Construction definitions; the bundled ``defs.txt`` when ``None``.

    Returns:
        The validated problem.

    Raises:
        ProblemSyntaxError: The line (one of its clauses, or its goal) is malformed; the message names it.
    """
    defs = default_definitions() if definitions is None else definitions
    whole = line.strip()
    body, sep, goal_text = whole.partition("?")
    if not body.strip():
        raise ProblemSyntaxError("problem has no clauses", clause=whole)
    if "?" in goal_text:
        raise ProblemSyntaxError("more than one '?' (one goal per problem)", clause=f"?{goal_text}")
    if sep and not goal_text.strip():
        raise ProblemSyntaxError("nothing after '?' (expected a goal such as 'para a b c d')", clause=whole)
    known: set[str] = set()
    clauses: list[Clause] = []
    for number, text in enumerate(body.split(";"), start=1):
        if not text.strip():
            raise ProblemSyntaxError(f"clause {number} is empty (a stray ';')", clause=whole)
        clause = parse_clause(text, known, defs)
        known.update(clause.points)
        clauses.append(clause)
    goal = parse_goal(goal_text, known) if sep else None
    return Problem.model_validate({"name": name, "clauses": tuple(clauses), "goal": goal})


def format_problem(problem: Problem) -> str:
    """The problem line of a problem (inverse of :func:`parse_problem` up to canonical form)."""
    return problem.text()


class ProblemEntry(BaseModel):
    """One problem of a problem file as read, before parsing: its name, its line, and why it is unusable."""

    model_config = _FROZEN
    name: str
    """The name line (undecodable bytes shown as U+FFFD)."""
    line: str
    """The problem line (with ``error`` set, its bytes that are not UTF-8 show as U+FFFD)."""
    number: int
    """The problem line's number in the file (1-based)."""
    error: str | None = None
    """Why the problem cannot be read (its line is not UTF-8), in one line naming the file and line; else None."""


def _decoded(raw: bytes) -> tuple[str, str | None]:
    """A line's text and, when it is not UTF-8, where it breaks (the text then shows U+FFFD for the bad bytes)."""
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return raw.decode("utf-8", errors="replace"), f"{exc.reason} at byte {exc.start}"


def read_problem_entries(path: str | Path) -> list[ProblemEntry]:
    """The problems of a problem file, unparsed (blank lines skipped); a line that is not UTF-8 is marked.

    Each problem stands alone: a problem line that is not UTF-8 gives an entry with ``error`` set, and the
    others are read as usual, so a caller can report that problem and carry on. Lines end at a line
    feed, a carriage return or both.

    Args:
        path: The file: alternating name lines and problem lines.

    Raises:
        ProblemSyntaxError: The lines do not pair up (a name line without its problem, or a problem line
            where a name is expected); the message names the line and its number.
    """
    path = Path(path)
    numbered: list[tuple[int, str, str | None]] = []
    for number, raw in enumerate(path.read_bytes().splitlines(), start=1):
        text, error = _decoded(raw)
        if text.strip():
            numbered.append((number, text.strip(), error))
    for number, name, _ in numbered[0::2]:
        if "=" in name:
            raise ProblemSyntaxError(
                f"{path.name} line {number}: expected a name line followed by a problem line "
                "(a problem without its name?)",
                clause=name,
            )
    if len(numbered) % 2:
        number, last, _ = numbered[-1]
        raise ProblemSyntaxError(f"{path.name} line {number}: a name line without its problem", clause=last)
    entries: list[ProblemEntry] = []
    for (_, name, _), (number, line, error) in zip(numbered[0::2], numbered[1::2], strict=True):
        where = None if error is None else f"{path.name} line {number} is not UTF-8 ({error})"
        entries.append(ProblemEntry(name=name, line=line, number=number, error=where))
    return entries


def read_problem_lines(path: str | Path) -> list[tuple[str, str]]:
    """The ``(name, problem line)`` pairs of a problem file, unparsed (blank lines skipped).

    A caller that wants to report each bad problem separately (and carry on) parses the lines one by one
    with :func:`parse_problem`, and reads the file with :func:`read_problem_entries` to carry on past a
    line that is not UTF-8 too.

    Args:
        path: The file: alternating name lines and problem lines.

    Raises:
        ProblemSyntaxError: The lines do not pair up (a name line without its problem, or a problem line
            where a name is expected), or a problem line is not UTF-8; the message names the line and its
            number.
    """
    pairs: list[tuple[str, str]] = []
    for entry in read_problem_entries(path):
        if entry.error is not None:
            shown = entry.line if len(entry.line) <= 60 else entry.line[:57] + "..."
            raise ProblemSyntaxError(f"problem {entry.name!r}: {entry.error}", clause=shown)
        pairs.append((entry.name, entry.line))
    return pairs


def load_problems(
    path: str | Path,
    definitions: dict[str, ConstructionDef] | None = None,
    dialect: Dialect = "alphageometry",
) -> list[Problem]:
    """Load a problem file: alternating name lines and problem lines.

    Args:
        path: The file (``jgex_ag_231.txt`` layout).
        definitions: Construction definitions; the bundled ones when ``None``.
        dialect: Whose definitions the lines are written against (``newclid``: Newclid's problem files,
            rewritten on reading, see :mod:`geosynth.engine.language.dialects`).

    Returns:
        The problems in file order.

    Raises:
        ProblemSyntaxError: A problem line is malformed (the message names the problem and the clause).
    """
    problems: list[Problem] = []
    for name, line in read_problem_lines(path):
        try:
            problems.append(parse_problem(from_dialect(line, dialect), name, definitions))
        except ProblemSyntaxError as err:
            # Keep the error's type (unknown construction, ...) and prefix the problem's name.
            err.args = (f"problem {name!r}: {err.args[0]}",)
            raise
    return problems
