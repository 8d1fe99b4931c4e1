"""Errors raised by geosynth.

Every error the package raises on purpose derives from :class:`GeoSynthError`; messages are one line and
name the offending input (a clause, a definition, a relation) so a batch can log them and continue.
"""

from __future__ import annotations


class GeoSynthError(Exception):
    """Base class of every error geosynth raises on purpose."""


class RelationError(GeoSynthError):
    """A relation was built from points that cannot form it (wrong count, repeated point, bad parameter)."""


class DefinitionError(GeoSynthError):
    """A construction or rule definition file is malformed.

    Attributes:
        source: The definition (its header line or rule text) the problem was found in.
    """

    def __init__(self, message: str, *, source: str) -> None:
        super().__init__(f"{message} (in definition {source!r})")
        self.source = source


class ProblemSyntaxError(GeoSynthError, ValueError):
    """A problem line is malformed.

    Attributes:
        clause: The clause (or goal) text the problem was found in.
    """

    def __init__(self, message: str, *, clause: str) -> None:
        super().__init__(f"{message} in clause {clause!r}")
        self.clause = clause


class UnknownConstructionError(ProblemSyntaxError):
    """A clause uses a construction that no loaded definition provides.

    Attributes:
        name: The unknown construction name.
    """

    def __init__(self, name: str, *, clause: str) -> None:
        super().__init__(f"unknown construction {name!r}", clause=clause)
        self.name = name


class UnknownPredicateError(ProblemSyntaxError):
    """A goal or condition uses a predicate that the formal language does not know.

    Attributes:
        name: The unknown predicate name.
    """

    def __init__(self, name: str, *, clause: str) -> None:
        super().__init__(f"unknown predicate {name!r}", clause=clause)
        self.name = name


class ConstructionFailed(GeoSynthError):
    """The numeric realiser found no valid diagram within its attempt budget.

    Attributes:
        attempts: How many whole-diagram attempts were made.
        clause: The clause that failed on the last attempt (empty when the goal check failed).
        reason: Why the last attempt failed.
    """

    def __init__(self, *, attempts: int, clause: str, reason: str) -> None:
        where = f" at clause {clause!r}" if clause else ""
        super().__init__(f"no valid diagram after {attempts} attempts{where}: {reason}")
        self.attempts = attempts
        self.clause = clause
        self.reason = reason
