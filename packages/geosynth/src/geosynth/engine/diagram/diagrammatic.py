"""Diagrammatic relations read off a realised diagram: betweenness, sides of lines, non-collinearity.

These are facts of one drawing, not theorems: the deductive engine uses them as side conditions
(which of two intersections, which side of a chord) and never proves them. A point within the
numeric separation of a line counts as on it, so it is on neither side and its triple is collinear.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from geosynth.engine.diagram.numeric import SEPARATION, signed_side
from geosynth.engine.diagram.realise import Diagram
from geosynth.engine.geometry.geometry import Vec
from geosynth.engine.language.relations import Between, NotCollinear, OppositeSide, Relation, SameSide


def _triples(names: list[str], coords: dict[str, Vec]) -> Iterator[Relation]:
    for a, b, c in itertools.combinations(names, 3):
        pa, pb, pc = coords[a], coords[b], coords[c]
        if abs(signed_side(pc, pa, pb)) > SEPARATION:
            yield NotCollinear.of(a, b, c)
            continue
        # Collinear: the middle point is the one whose two neighbours lie in opposite directions.
        for left, mid, right in ((b, a, c), (a, b, c), (a, c, b)):
            d1, d2 = coords[left] - coords[mid], coords[right] - coords[mid]
            if float(d1 @ d2) < 0:
                yield Between.of(left, mid, right)
                break


def _sides(names: list[str], coords: dict[str, Vec]) -> Iterator[Relation]:
    for a, b in itertools.combinations(names, 2):
        pa, pb = coords[a], coords[b]
        signs: dict[str, float] = {}
        for p in names:
            if p not in (a, b):
                s = signed_side(coords[p], pa, pb)
                if abs(s) > SEPARATION:
                    signs[p] = s
        for p, q in itertools.combinations(sorted(signs), 2):
            kind = SameSide if signs[p] * signs[q] > 0 else OppositeSide
            yield kind.of(p, q, a, b)


def diagrammatic_relations(diagram: Diagram, *, sides: bool = True) -> frozenset[Relation]:
    """Every diagrammatic relation that holds in a diagram.

    Args:
        diagram: A realised diagram.
        sides: Also list :class:`SameSide`/:class:`OppositeSide` for every line through two points
            and every pair of points off it (the largest family: about ``n**4 / 4`` relations).

    Returns:
        :class:`NotCollinear` for each non-collinear triple, :class:`Between` for each collinear triple
        (its middle point), and the side relations when asked.
    """
    coords = diagram.coords()
    names = list(coords)
    found: set[Relation] = set(_triples(names, coords))
    if sides:
        found.update(_sides(names, coords))
    return frozenset(found)
