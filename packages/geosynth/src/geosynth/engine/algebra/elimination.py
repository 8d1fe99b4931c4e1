"""Exact Gaussian elimination over rationals, kept in reduced row echelon form as equations arrive.

An equation is ``sum(coefficient * variable) = 0`` where some variables are *units*: symbols that stand
for known constants (``deg`` for one degree; ``log 2``, ``log 3``... for logarithms of primes). Units are
never chosen as pivots, so reducing an expression leaves it as a combination of free variables plus a
constant written over the units. Two expressions are equal exactly when their reduced forms are equal,
and an expression is a known constant exactly when its reduced form has only units.

Coefficients are exact rationals held as ``int`` whenever they are whole (nearly all of them: angle and
log-ratio equations have small integer coefficients) and as ``Fraction`` otherwise; integer arithmetic is
many times faster than ``Fraction``'s, and the two compare and hash alike.

Every row remembers the source equations combined into it (ids chosen by the caller), so a fact read off
the system can name the equations it came from.
"""

from __future__ import annotations

from collections.abc import Container, Hashable, Mapping
from dataclasses import dataclass
from fractions import Fraction

Coef = int | Fraction
"""An exact rational coefficient: an ``int`` when whole (see :func:`exact`)."""

Expr = dict[Hashable, Coef]
"""A linear combination: variable (or unit) to coefficient; zero coefficients are never stored."""


def exact(value: Coef) -> Coef:
    """The same rational, as an ``int`` when it is whole."""
    if type(value) is Fraction and value.denominator == 1:
        return value.numerator
    return value


def add_scaled(target: Expr, other: Mapping[Hashable, Coef], factor: Coef) -> None:
    """``target += factor * other`` in place, dropping terms that cancel."""
    factor = exact(factor)
    for var, coef in other.items():
        value = target.get(var, 0) + factor * coef
        if value:
            target[var] = exact(value)
        else:
            target.pop(var, None)


def divide(numerator: Coef, denominator: Coef) -> Coef:
    """The exact quotient (``/`` on two ints would give a float)."""
    if denominator == 1 or denominator == -1:  # most pivots: no Fraction needed
        return exact(numerator * denominator)
    return exact(Fraction(numerator) / denominator)


@dataclass
class _Row:
    pivot: Hashable
    expr: Expr
    """``pivot + rest = 0`` with the pivot's coefficient 1 (the pivot is stored in ``expr`` too)."""
    sources: frozenset[int]


@dataclass(frozen=True)
class Reduced:
    """An expression reduced against the system: free variables and units, and the sources used."""

    expr: Expr
    sources: frozenset[int]

    def key(self, units: Container[Hashable]) -> tuple[tuple[Hashable, Coef], ...]:
        """The variable part only (sorted by ``repr``), for grouping expressions that differ by a constant."""
        return tuple(
            sorted(((v, c) for v, c in self.expr.items() if v not in units), key=lambda t: repr(t[0]))
        )

    def variables(self, units: Container[Hashable]) -> frozenset[tuple[Hashable, Coef]]:
        """The variable part as a set: equal exactly when :meth:`key` is, and cheaper to build."""
        return frozenset((v, c) for v, c in self.expr.items() if v not in units)

    def constant(self, units: Container[Hashable]) -> Expr:
        """The unit part: the constant the expression equals once the variable part is known."""
        return {v: c for v, c in self.expr.items() if v in units}


def difference(first: Reduced, second: Reduced) -> Reduced:
    """``first - second`` for two forms reduced against one system: the reduced form of the difference.

    Reduction against a fully reduced system is linear (each pivot is replaced by its row), so the
    difference of two reduced forms is the difference's reduced form, resting on the rows of both.
    """
    expr = dict(first.expr)
    add_scaled(expr, second.expr, -1)
    return Reduced(expr, first.sources | second.sources)


class LinearSystem:
    """A growing set of linear equations in reduced row echelon form, with per-row provenance."""

    def __init__(self, units: Container[Hashable], order: Mapping[Hashable, int] | None = None) -> None:
        """Start empty.

        Args:
            units: Symbols that stand for constants (never pivots); any container (membership only).
            order: Optional rank of variables; the highest-ranked variable of an equation becomes its
                pivot (else the first by ``repr``). Only the representation depends on it.
        """
        self.units = units
        self._order = dict(order or {})
        self._rows: dict[Hashable, _Row] = {}
        self.equations = 0
        """Equations offered so far (independent or not)."""
        self.inconsistent: list[int] = []
        """Source ids of offered equations that contradicted the system (ignored)."""

    def reduce(self, expr: Mapping[Hashable, Coef]) -> Reduced:
        """Substitute every pivot: the expression over free variables and units, and the rows used."""
        out: Expr = {v: exact(c) for v, c in expr.items() if c}
        sources: set[int] = set()
        for var in [v for v in out if v in self._rows]:
            coef = out.get(var)
            if coef is None:
                continue
            row = self._rows[var]
            add_scaled(out, row.expr, -coef)
            sources |= row.sources
        return Reduced(out, frozenset(sources))

    def _pivot(self, expr: Expr) -> Hashable | None:
        candidates = [v for v in expr if v not in self.units]
        if not candidates:
            return None
        return max(candidates, key=lambda v: (self._order.get(v, -1), repr(v)))

    def add(self, expr: Mapping[Hashable, Coef], source: int | frozenset[int]) -> bool:
        """Add ``expr = 0`` from ``source`` (one id or several). Returns whether it was independent.

        A contradicting equation (reducing to a nonzero constant) is recorded in :attr:`inconsistent`
        and otherwise ignored.
        """
        self.equations += 1
        reduced = self.reduce(expr)
        pivot = self._pivot(reduced.expr)
        if pivot is None:
            if reduced.expr:
                self.inconsistent.extend([source] if isinstance(source, int) else sorted(source))
            return False
        scale = divide(1, reduced.expr[pivot])
        row_expr: Expr = {v: exact(c * scale) for v, c in reduced.expr.items()}
        row = _Row(pivot, row_expr, reduced.sources | ({source} if isinstance(source, int) else source))
        for other in self._rows.values():  # keep the echelon form fully reduced
            coef = other.expr.get(pivot)
            if coef is not None:
                add_scaled(other.expr, row_expr, -coef)
                other.sources = other.sources | row.sources
        self._rows[pivot] = row
        return True

    @property
    def rank(self) -> int:
        """Independent equations held."""
        return len(self._rows)
