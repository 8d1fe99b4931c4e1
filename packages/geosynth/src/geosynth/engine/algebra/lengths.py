"""The length system: segment lengths as unknowns of exact linear equations (sums and differences).

The ratio system works with logarithms, so it cannot add lengths. This system keeps one variable per
segment, ``|a b|``, and collects the linear equations the facts give:

- ``cong``, ``circle``, congruent triangles: two lengths are equal;
- ``midp m a b``: ``|m a| = |m b|``;
- ``rconst``: ``|a b| = k |c d|``;
- betweenness read off the diagram on every proved line: for points ``a``, ``b``, ``c`` of one line
  class with ``b`` between ``a`` and ``c``, ``|a c| = |a b| + |b c|`` (a diagrammatic side condition,
  recorded as a :class:`Between` source next to the collinearity);
- the ratio system's constant ratios: two segments whose reduced log-lengths differ by a constant
  ``log k`` (``k`` rational) give ``|a b| = k |c d|``, with the ratio rows as sources.

Elimination (the same exact :class:`LinearSystem` as the other systems, no units) then reads off equal
segments and constant ratios the ratio system does not know yet; both are gated numerically by the
deductive loop and recorded with the facts the elimination combined.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction

from geosynth.engine.algebra.chasing import Finding, RatioSystem, log_of
from geosynth.engine.algebra.elimination import Coef, Expr, LinearSystem, Reduced, add_scaled, divide
from geosynth.engine.algebra.transversals import points_on_lines
from geosynth.engine.geometry.geometry import Vec
from geosynth.engine.language.relations import (
    Between,
    CircleThrough,
    Collinear,
    CongruentTriangles,
    EqualLength,
    Midpoint,
    RatioConstant,
    Relation,
)
from geosynth.engine.store.factstore import FactStore

LENGTH_RULE = "length chasing"
"""The rule name recorded for facts the length system derives."""
MAX_DENOMINATOR = 64
"""Constant ratios with a larger numerator or denominator are not exchanged between the systems."""

Pair = tuple[str, str]


def _seg(a: str, b: str) -> Hashable:
    return ("S", a, b) if a <= b else ("S", b, a)


def _diff(first: Pair, second: Pair, factor: Fraction = Fraction(1)) -> Expr:
    """``|first| - factor * |second|`` (empty when the two cancel)."""
    expr: Expr = {_seg(*first): Fraction(1)}
    add_scaled(expr, {_seg(*second): Fraction(1)}, -factor)
    return expr


@dataclass
class LengthSystem:
    """Segment lengths as variables of one exact linear system."""

    system: LinearSystem = field(init=False)
    segments: set[Pair] = field(init=False, default_factory=set[Pair])
    """Every segment some equation mentions (sorted point pairs)."""

    def __post_init__(self) -> None:
        self.system = LinearSystem(frozenset())

    def add(self, expr: Expr, source: int | frozenset[int]) -> None:
        """Add ``expr = 0`` (its segments are remembered; an empty equation is dropped)."""
        if not expr:
            return
        for var in expr:
            if isinstance(var, tuple) and len(var) == 3:
                self.segments.add((str(var[1]), str(var[2])))
        self.system.add(expr, source)

    def equations(self, fact: Relation) -> list[Expr]:
        """The linear length equations a fact gives (possibly none)."""
        p = fact.points
        if isinstance(fact, EqualLength):
            return [_diff((p[0], p[1]), (p[2], p[3]))]
        if isinstance(fact, CircleThrough):
            return [_diff((p[0], p[1]), (p[0], q)) for q in p[2:]]
        if isinstance(fact, Midpoint):
            return [_diff((p[0], p[1]), (p[0], p[2]))]
        if isinstance(fact, RatioConstant):
            return [_diff((p[0], p[1]), (p[2], p[3]), fact.value)]
        if isinstance(fact, CongruentTriangles):
            a, b, c, d, e, f = p
            return [_diff(s, t) for s, t in (((a, b), (d, e)), ((b, c), (e, f)), ((c, a), (f, d)))]
        return []

    def reduce(self, a: str, b: str) -> Reduced:
        """The reduced form of ``|a b|``."""
        return self.system.reduce({_seg(a, b): Fraction(1)})


def _ordered(points: list[str], coords: dict[str, Vec]) -> list[str]:
    """Points of one line sorted along it (projection on the direction of its two farthest points)."""
    first = coords[points[0]]
    far = max(points, key=lambda q: (coords[q][0] - first[0]) ** 2 + (coords[q][1] - first[1]) ** 2)
    dx, dy = coords[far][0] - first[0], coords[far][1] - first[1]
    return sorted(points, key=lambda q: (coords[q][0] - first[0]) * dx + (coords[q][1] - first[1]) * dy)


def _betweenness(
    store: FactStore, coords: dict[str, Vec], facts: list[Relation], lengths: LengthSystem
) -> None:
    """``|a c| = |a b| + |b c|`` for every ordered triple of every proved line (sources appended)."""
    for points in points_on_lines(store).values():
        if len(points) < 3:
            continue
        order = _ordered(points, coords)
        for a, b, c in itertools.combinations(order, 3):
            base = len(facts)
            facts += [Collinear.of(a, b, c), Between.of(a, b, c)]
            expr: Expr = {_seg(a, c): Fraction(1), _seg(a, b): Fraction(-1), _seg(b, c): Fraction(-1)}
            lengths.add(expr, frozenset((base, base + 1)))


def _rational_exp(constant: Mapping[Hashable, Coef]) -> Fraction | None:
    """``exp`` of a combination of ``log p`` units when it is a small rational, else ``None``."""
    value = Fraction(1)
    for unit, exponent in constant.items():
        if not (isinstance(unit, tuple) and len(unit) == 2 and isinstance(unit[1], int)):
            return None
        if exponent.denominator != 1:
            return None
        value *= Fraction(unit[1]) ** int(exponent)
    if value.numerator > MAX_DENOMINATOR or value.denominator > MAX_DENOMINATOR:
        return None
    return value


def _from_ratios(ratios: RatioSystem, lengths: LengthSystem) -> None:
    """``|a b| = k |c d|`` for segments whose reduced log-lengths differ by ``log k`` (rational ``k``)."""
    units = ratios.system.units
    heads: dict[tuple[object, ...], tuple[Pair, Reduced]] = {}
    for a, b in sorted(ratios.segments):
        reduced = ratios.system.reduce({("S", a, b): Fraction(1)})
        key = reduced.key(units)
        if not key:
            continue
        head = heads.setdefault(key, ((a, b), reduced))
        if head[0] == (a, b):
            continue
        constant = dict(reduced.constant(units))
        for unit, coef in head[1].constant(units).items():
            constant[unit] = constant.get(unit, Fraction(0)) - coef
        value = _rational_exp({u: c for u, c in constant.items() if c})
        if value is not None:
            lengths.add(_diff((a, b), head[0], value), reduced.sources | head[1].sources)


def build_lengths(
    store: FactStore, coords: dict[str, Vec], facts: list[Relation], ratios: RatioSystem | None = None
) -> LengthSystem:
    """The length system of the facts (fact ``i`` is source ``i``); betweenness sources are appended.

    Args:
        store: The fact store (its line classes say which points are proved collinear).
        coords: The diagram (the order of points along each line).
        facts: Every fact so far; the collinearities and betweenness conditions behind the sum
            equations are appended as sources.
        ratios: The ratio system of the same facts, whose constant ratios are exchanged (optional).

    Returns:
        The system, with every equation added.
    """
    lengths = LengthSystem()
    for index, fact in enumerate(list(facts)):
        for expr in lengths.equations(fact):
            lengths.add(expr, index)
    _betweenness(store, coords, facts, lengths)
    if ratios is not None:
        _from_ratios(ratios, lengths)
    return lengths


def _ratio_known(ratios: RatioSystem, first: Pair, second: Pair, value: Fraction) -> bool:
    expr: Expr = dict(ratios.ratio(*first, *second))
    for unit, coef in log_of(value).items():
        expr[unit] = expr.get(unit, Fraction(0)) - coef
    reduced = ratios.system.reduce({v: c for v, c in expr.items() if c})
    return not reduced.expr


def length_system_findings(
    store: FactStore, lengths: LengthSystem, ratios: RatioSystem, goal: Relation | None
) -> list[Finding]:
    """Equal segments and constant ratios the length system implies and the store or ratios lack.

    Segments are grouped by their reduced form scaled to a leading coefficient of one; within a group
    every member is a constant multiple of the first. A multiple of one is a ``cong`` (when the store's
    length classes differ), any other a ``rconst`` (when the ratio system does not know it).
    """
    if isinstance(goal, EqualLength):
        a, b, c, d = goal.points
        lengths.segments.update({(min(a, b), max(a, b)), (min(c, d), max(c, d))})
    groups: dict[tuple[object, ...], tuple[Pair, Reduced, Coef]] = {}
    out: list[Finding] = []
    for a, b in sorted(lengths.segments):
        reduced = lengths.reduce(a, b)
        if not reduced.expr:
            continue
        items = sorted(reduced.expr.items(), key=lambda t: repr(t[0]))
        lead = items[0][1]
        key = tuple((v, divide(c, lead)) for v, c in items)
        head = groups.setdefault(key, ((a, b), reduced, lead))
        if head[0] == (a, b):
            continue
        (c, d), head_reduced, head_lead = head
        value = Fraction(divide(lead, head_lead))  # |a b| = value * |c d|
        if value <= 0:
            continue  # only when the facts contradict the diagram's order; nothing to read off
        sources = reduced.sources | head_reduced.sources
        if value == 1:
            if store.length_of(a, b) != store.length_of(c, d):
                out.append(Finding(EqualLength.of(c, d, a, b), LENGTH_RULE, sources))
        elif max(value.numerator, value.denominator) <= MAX_DENOMINATOR and not _ratio_known(
            ratios, (a, b), (c, d), value
        ):
            out.append(Finding(RatioConstant.of(a, b, c, d, value=value), LENGTH_RULE, sources))
    return out
