"""Menelaus and Ceva as equations of the ratio system (log-lengths).

For a triangle ``a b c`` and points ``d``, ``e``, ``f`` on the lines ``b c``, ``c a``, ``a b`` (none a
vertex): ``|b d| |c e| |a f| = |d c| |e a| |f b|`` when ``d``, ``e``, ``f`` are collinear (Menelaus)
and when the lines ``a d``, ``b e``, ``c f`` meet at one point (Ceva). Both hold for unsigned lengths
whatever the configuration, so no side condition is needed; in logarithms they are linear. Triangles
are enumerated from proved lines with at least three named points (each side line holds two vertices
and the cut point). The collinearities behind each equation are appended to the fact list as its
sources.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Mapping, Sequence
from fractions import Fraction

from geosynth.engine.algebra.elimination import Expr, add_scaled
from geosynth.engine.language.relations import Collinear, Relation
from geosynth.engine.store.factstore import FactStore

MAX_LINES = 40
"""Problems with more proved lines of three or more points skip the enumeration."""


def points_on_lines(store: FactStore) -> dict[int, list[str]]:
    """The named points of every line class (sorted), keyed by the line's class id."""
    on: dict[int, set[str]] = {}
    for a, b in itertools.combinations(store.points, 2):
        on.setdefault(store.line_of(a, b), set()).update((a, b))
    return {line: sorted(points) for line, points in on.items()}


def lines_by_direction(store: FactStore, on: Mapping[int, Sequence[str]]) -> dict[int, list[int]]:
    """The lines of ``on`` grouped by direction class (parallel lines share a group), in ``on``'s order."""
    groups: dict[int, list[int]] = {}
    for line in on:
        groups.setdefault(store._dirs.find(line), []).append(line)
    return groups


def _seg(a: str, b: str) -> Hashable:
    return ("S", a, b) if a <= b else ("S", b, a)


def _product(d: str, e: str, f: str, corners: tuple[str, str, str]) -> Expr:
    """``log(|b d| |c e| |a f|) - log(|d c| |e a| |f b|)``."""
    a, b, c = corners
    expr: Expr = {}
    for (x, y), sign in (((b, d), 1), ((c, e), 1), ((a, f), 1), ((d, c), -1), ((e, a), -1), ((f, b), -1)):
        add_scaled(expr, {_seg(x, y): Fraction(1)}, Fraction(sign))
    return expr


def _meet(on: dict[int, list[str]], l1: int, l2: int) -> str | None:
    common = set(on[l1]).intersection(on[l2])
    return common.pop() if len(common) == 1 else None


def _concurrent(store: FactStore, on: dict[int, list[str]], cevians: list[tuple[str, str]]) -> str | None:
    """A named point on all three lines ``a d``, ``b e``, ``c f``, if any."""
    common = set(store.points)
    for x, y in cevians:
        common &= set(on[store.line_of(x, y)])
    return min(common) if common else None


def transversal_equations(store: FactStore, facts: list[Relation]) -> list[tuple[Expr, frozenset[int]]]:
    """Menelaus and Ceva equations of every triangle of proved lines (sources appended to ``facts``)."""
    on = points_on_lines(store)
    rich = sorted(line for line, points in on.items() if len(points) >= 3)
    out: list[tuple[Expr, frozenset[int]]] = []
    if len(rich) > MAX_LINES:
        return out
    for l1, l2, l3 in itertools.combinations(rich, 3):
        a, b, c = _meet(on, l2, l3), _meet(on, l3, l1), _meet(on, l1, l2)
        if a is None or b is None or c is None or len({a, b, c}) < 3:
            continue
        for d, e, f in itertools.product(on[l1], on[l2], on[l3]):
            if d in (b, c) or e in (c, a) or f in (a, b):
                continue
            sides: list[Relation] = [Collinear.of(b, c, d), Collinear.of(c, a, e), Collinear.of(a, b, f)]
            if store.line_of(d, e) == store.line_of(e, f):
                extra = [Collinear.of(d, e, f)]
            elif (o := _concurrent(store, on, [(a, d), (b, e), (c, f)])) is not None and o not in (
                a,
                b,
                c,
                d,
                e,
                f,
            ):
                extra = [Collinear.of(a, o, d), Collinear.of(b, o, e), Collinear.of(c, o, f)]
            else:
                continue
            base = len(facts)
            facts += [*sides, *extra]
            out.append((_product(d, e, f, (a, b, c)), frozenset(range(base, len(facts)))))
    return out
