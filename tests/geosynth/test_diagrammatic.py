from __future__ import annotations

import numpy as np

from geosynth import (
    Between,
    Diagram,
    NotCollinear,
    OppositeSide,
    SameSide,
    diagrammatic_relations,
    holds,
    parse_problem,
    realise,
)


def _diagram(**points: tuple[float, float]) -> Diagram:
    return Diagram(points=points, attempts=1)


def test_relations_of_a_known_figure() -> None:
    d = _diagram(a=(0.0, 2.0), b=(-1.0, 0.0), c=(1.0, 0.0), m=(0.0, 0.0), e=(0.0, -1.0))
    rels = diagrammatic_relations(d)
    assert Between.of("b", "m", "c") in rels
    assert Between.of("a", "m", "e") in rels
    assert Between.of("m", "b", "c") not in rels
    assert NotCollinear.of("a", "b", "c") in rels
    assert NotCollinear.of("b", "m", "c") not in rels
    assert OppositeSide.of("a", "e", "b", "c") in rels
    assert SameSide.of("a", "c", "b", "e") in rels
    assert OppositeSide.of("b", "c", "a", "e") in rels
    assert SameSide.of("b", "e", "a", "c") in rels
    # m lies on line b c: it is on neither side.
    assert not any(
        r.points[2:] == ("b", "c") and "m" in r.points[:2]
        for r in rels
        if isinstance(r, SameSide | OppositeSide)
    )


def test_extracted_relations_hold_and_are_complete() -> None:
    problem = parse_problem(
        "a b c = triangle a b c; m = midpoint m b c; h = foot h a b c; o = circle o a b c"
    )
    d = realise(problem, np.random.default_rng(11), 20)
    rels = diagrammatic_relations(d)
    coords = d.coords()
    assert all(holds(r, coords) for r in rels)
    triples = [r for r in rels if isinstance(r, NotCollinear | Between)]
    assert len(triples) == 20  # one per triple of the six points
    assert Between.of("b", "m", "c") in rels
    assert diagrammatic_relations(d, sides=False) == frozenset(triples)
