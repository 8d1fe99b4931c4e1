"""Quantities (length, undirected angle, area, free variable) and exact linear equations over them.

Angles are undirected, in [0, 180] degrees (degrees keep the usual constants rational). An equation is
``sum(coefficient * quantity) = constant`` with exact ``Fraction`` coefficients; its canonical form merges
like terms, orders them, and scales so the first coefficient is 1, so equal equations compare equal.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from geosynth.engine.language.relations import DIHEDRAL4, canonical_by
from geosynth.errors import RelationError

_FROZEN = ConfigDict(frozen=True, extra="forbid", strict=True)


class Length(BaseModel):
    """The length of segment ``a b``."""

    model_config = _FROZEN
    kind: Literal["length"] = "length"
    points: tuple[str, str]
    """The segment's ends, sorted."""

    @model_validator(mode="after")
    def _check(self) -> Length:
        if self.points[0] == self.points[1]:
            raise RelationError(f"Length of a degenerate segment {self.points[0]} {self.points[1]}")
        if self.points[0] > self.points[1]:
            raise RelationError(f"Length points must be sorted; use Length.of, got {self.points}")
        return self

    @classmethod
    def of(cls, a: str, b: str) -> Length:
        """The length of ``a b`` (either order)."""
        return cls(points=(a, b) if a <= b else (b, a))


class Angle(BaseModel):
    """The undirected angle ``a b c`` at vertex ``b``, in degrees."""

    model_config = _FROZEN
    kind: Literal["angle"] = "angle"
    points: tuple[str, str, str]
    """Arm, vertex, arm; the arms sorted."""

    @model_validator(mode="after")
    def _check(self) -> Angle:
        a, b, c = self.points
        if b in (a, c):
            raise RelationError(f"Angle with an arm on its vertex: {a} {b} {c}")
        if a > c:
            raise RelationError(f"Angle arms must be sorted; use Angle.of, got {self.points}")
        return self

    @classmethod
    def of(cls, a: str, b: str, c: str) -> Angle:
        """The angle ``a b c`` at ``b`` (arms in either order)."""
        return cls(points=(a, b, c) if a <= c else (c, b, a))


class Area(BaseModel):
    """The area of the polygon with these vertices in boundary order."""

    model_config = _FROZEN
    kind: Literal["area"] = "area"
    points: tuple[str, ...]
    """The vertices, in the least rotation/reflection of the boundary cycle."""

    @classmethod
    def of(cls, *points: str) -> Area:
        """The area of a polygon given by its vertices in boundary order.

        Raises:
            RelationError: Fewer than three or repeated vertices.
        """
        if len(points) < 3 or len(set(points)) != len(points):
            raise RelationError(f"Area needs at least three distinct vertices, got {' '.join(points)}")
        n = len(points)
        perms = tuple(tuple((s + d * i) % n for i in range(n)) for s in range(n) for d in (1, -1))
        canon = canonical_by(perms) if n != 4 else canonical_by(DIHEDRAL4)
        return cls(points=canon(points))


class Variable(BaseModel):
    """A free variable of a problem (an unknown named in its text)."""

    model_config = _FROZEN
    kind: Literal["variable"] = "variable"
    name: str
    """The variable's name."""


Quantity = Annotated[Length | Angle | Area | Variable, Field(discriminator="kind")]


def _sort_key(q: Length | Angle | Area | Variable) -> tuple[str, tuple[str, ...]]:
    return (q.kind, (q.name,) if isinstance(q, Variable) else q.points)


class Term(BaseModel):
    """``coefficient * quantity``."""

    model_config = _FROZEN
    coefficient: Fraction
    """A non-zero exact coefficient."""
    quantity: Quantity
    """The quantity it multiplies."""


class LinearEquation(BaseModel):
    """``sum(terms) = constant``, in canonical form (merged, ordered, first coefficient 1)."""

    model_config = _FROZEN
    terms: tuple[Term, ...]
    """The non-zero terms, ordered by quantity."""
    constant: Fraction
    """The right-hand side."""

    @model_validator(mode="before")
    @classmethod
    def _canonicalise(cls, data: Any) -> Any:
        if not isinstance(data, dict) or "terms" not in data:
            return data
        merged: dict[Any, Fraction] = {}
        for term in data["terms"]:
            t = term if isinstance(term, Term) else Term.model_validate(term)
            merged[t.quantity] = merged.get(t.quantity, Fraction(0)) + t.coefficient
        items = sorted(((q, c) for q, c in merged.items() if c != 0), key=lambda qc: _sort_key(qc[0]))
        constant = data.get("constant", Fraction(0))
        if not isinstance(constant, Fraction):
            raise RelationError(f"LinearEquation constant must be a Fraction, got {constant!r}")
        if not items:
            raise RelationError("LinearEquation has no non-zero term")
        lead = items[0][1]
        terms = tuple(Term(coefficient=c / lead, quantity=q) for q, c in items)
        return {"terms": terms, "constant": constant / lead}

    @classmethod
    def equal(
        cls, left: Length | Angle | Area | Variable, right: Length | Angle | Area | Variable
    ) -> LinearEquation:
        """``left = right``."""
        one = Fraction(1)
        return cls(
            terms=(Term(coefficient=one, quantity=left), Term(coefficient=-one, quantity=right)),
            constant=Fraction(0),
        )

    @classmethod
    def value(cls, quantity: Length | Angle | Area | Variable, constant: Fraction) -> LinearEquation:
        """``quantity = constant``."""
        return cls(terms=(Term(coefficient=Fraction(1), quantity=quantity),), constant=constant)
