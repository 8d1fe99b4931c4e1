"""Problem files written for other engines: Newclid's dialect of the JGEX format, read as AlphaGeometry's.

Newclid (and the benchmark files it ships: IMO shortlist, USAMO, its larger IMO set) writes problem lines
in the same ``clause; clause ? goal`` layout (plus ``setup | auxiliary clauses``, which Newclid builds as
part of the problem, and so does this reader), with three constructions defined differently from
AlphaGeometry's ``defs.txt`` and a few that AlphaGeometry lacks. Reading a line in the ``newclid`` dialect
rewrites the first kind into AlphaGeometry's form (the table below, as data); the second kind are bundled
definitions of their own (``rules/newclid_defs.txt``), so the rewritten line is an ordinary problem that
prints, re-parses and replays like any other.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal

from geosynth.errors import ProblemSyntaxError

__all__ = ("DIALECTS", "NEWCLID_ANGLES", "NEWCLID_REWRITES", "Dialect", "from_dialect", "from_newclid")

Dialect = Literal["alphageometry", "newclid"]
"""Whose definitions a problem line is written against."""
DIALECTS: tuple[Dialect, ...] = ("alphageometry", "newclid")

NEWCLID_REWRITES: Mapping[str, tuple[str, tuple[int, ...]]] = MappingProxyType(
    {
        # Newclid `x = parallelogram x a b c` is AlphaGeometry's `parallelogram a b c x`
        "parallelogram": ("parallelogram", (1, 2, 3, 0)),
        # Newclid `x y = square x y a b` is AlphaGeometry's `square a b x y`
        "square": ("square", (2, 3, 0, 1)),
        # the same facts under AlphaGeometry's name
        "iso_trapezoid": ("eq_trapezoid", (0, 1, 2, 3)),
    }
)
"""Newclid construction -> (AlphaGeometry construction, the Newclid argument at each AlphaGeometry position)."""

NEWCLID_ANGLES: Mapping[str, int] = MappingProxyType({"s_angle": 3})
"""Constructions with an angle argument, and its position: Newclid writes ``60o`` for degrees and reads a bare
number as a multiple of pi; AlphaGeometry writes degrees."""

_DEGREES = re.compile(r"^(-?\d+(?:\.\d+)?)o$")
_PI_FRACTION = re.compile(r"^(-?\d+(?:\.\d+)?)pi(?:/(\d+(?:\.\d+)?))?$")


def _angle(token: str, clause: str) -> str:
    """A Newclid angle (``60o`` degrees, ``1pi/3`` or a bare number: multiples of pi) in degrees."""
    if match := _DEGREES.match(token):
        return match.group(1)
    if match := _PI_FRACTION.match(token):
        value = float(match.group(1)) * 180.0 / float(match.group(2) or 1.0)
    else:
        try:
            value = float(token) * 180.0
        except ValueError:
            raise ProblemSyntaxError(
                f"angle {token!r} is not a Newclid angle (60o, 1pi/3)", clause=clause
            ) from None
    return f"{value:g}"


def _construction(text: str, clause: str) -> str:
    name, *args = text.split()
    at = NEWCLID_ANGLES.get(name)
    if at is not None and len(args) > at:
        args = [*args[:at], _angle(args[at], clause), *args[at + 1 :]]
    if name not in NEWCLID_REWRITES:
        return " ".join((name, *args))
    target, order = NEWCLID_REWRITES[name]
    if not args:  # the short form names no points: only the name changes
        return target
    if len(args) != len(order):
        raise ProblemSyntaxError(
            f"Newclid's {name} takes {len(order)} points, got {len(args)}", clause=clause.strip()
        )
    return " ".join((target, *(args[k] for k in order)))


def _own_names(points: list[str], parts: list[str], known: set[str]) -> list[str]:
    """``parts`` with the clause's new points where they name them otherwise, as Newclid places them.

    Newclid gives a clause's new points the names left of ``=`` in order, whatever the construction
    calls them: its IMO-shortlist file writes ``t = free d`` for a free point ``t``. When the names the
    constructions introduce (neither known nor left of ``=``) are as many as the new points they do not
    mention, they are renamed to those, in order of appearance; otherwise the clause is left as it is and
    the parser says what is wrong with it.
    """
    args = [a for part in parts for a in part.split()[1:] if a[:1].isalpha()]
    introduced = list(dict.fromkeys(a for a in args if a not in known and a not in points))
    unnamed = [p for p in points if p not in args]
    if not introduced or len(introduced) != len(unnamed):
        return parts
    rename = dict(zip(introduced, unnamed, strict=True))
    return [" ".join((name, *(rename.get(a, a) for a in rest))) for name, *rest in (p.split() for p in parts)]


def from_newclid(line: str) -> str:
    """A Newclid problem line rewritten against AlphaGeometry's definitions (the goal is unchanged).

    A clause whose construction calls its new point by another name (``t = free d``) gets the name
    left of ``=``, as Newclid builds it.

    Args:
        line: ``clause; clause ? goal`` as Newclid's problem files write it.

    Returns:
        The same problem in the AlphaGeometry dialect, which :func:`~geosynth.engine.parse_problem` reads.

    Raises:
        ProblemSyntaxError: A rewritten construction has the wrong number of arguments, or an angle is
            not in Newclid's notation.
    """
    body, sep, goal = line.partition("?")
    if ";" in goal:
        raise ProblemSyntaxError("several goals (geo proves one goal per problem)", clause=goal.strip())
    clauses: list[str] = []
    known: set[str] = set()
    for clause in body.replace("|", ";").split(";"):  # the auxiliary clauses after '|' are built too
        points, eq, constructions = clause.partition("=")
        if not eq:
            clauses.append(clause.strip())
            continue
        names = [token.partition("@")[0] for token in points.split()]
        parts = [_construction(part, clause) for part in constructions.split(",") if part.strip()]
        parts = _own_names(names, parts, known)
        known.update(names)
        clauses.append(f"{points.strip()} = {', '.join(parts)}")
    return "; ".join(clauses) + (f" ? {goal.strip()}" if sep else "")


def from_dialect(line: str, dialect: Dialect) -> str:
    """``line`` rewritten against AlphaGeometry's definitions (unchanged when it already is)."""
    return from_newclid(line) if dialect == "newclid" else line
