"""Similar and congruent triangles read off the algebraic systems (side-side-side and side-angle-side).

Rules r39-r41 of ``rules.txt`` take ratio equalities as premises, which the fact store does not hold as
a table; the reduced forms of the ratio and angle systems answer the same questions directly. Each
ordered triangle ``a b c`` gets two keys: the reduced log-ratios ``|a b| / |b c|`` and ``|b c| / |c a|``
(SSS), and the reduced ``|b a| / |b c|`` with the directed angle at ``b`` (SAS; the angle negated for a
mirrored match). Triangles whose keys agree are similar with that correspondence; when, in addition, a
pair of corresponding sides reduces to the same length, they are congruent.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection
from fractions import Fraction

from geosynth.engine.algebra.chasing import DEG, AngleSystem, Finding, RatioSystem
from geosynth.engine.algebra.elimination import Coef, Expr, Reduced
from geosynth.engine.diagram.numeric import holds
from geosynth.engine.geometry.geometry import Vec
from geosynth.engine.language.relations import CongruentTriangles, Relation, SimilarTriangles

SIMILARITY_RULE = "similar triangles (ratios)"
"""The rule name recorded for triangles found similar or congruent by the systems."""
MAX_POINTS = 24
"""Problems with more points skip this search (its cost grows with the cube of the points)."""
MAX_TRIED = 6
"""Earlier triangles of one side-angle-side key tried against a new one."""

Triple = tuple[str, str, str]
Key = tuple[object, ...]


def _full(reduced: Reduced) -> Key:
    items: list[tuple[object, Coef]] = list(reduced.expr.items())
    items.sort(key=lambda t: repr(t[0]))
    return tuple(items)


def _ratio(ratios: RatioSystem, a: str, b: str, c: str, d: str) -> Reduced:
    expr: Expr = ratios.ratio(a, b, c, d)
    return ratios.system.reduce(expr)


def _angle_key(angles: AngleSystem, reduced: Reduced, sign: int) -> Key:
    units = angles.system.units
    body = tuple((v, sign * c) for v, c in reduced.key(units))
    constant = (sign * reduced.constant(units).get(DEG, Fraction(0))) % 180
    return (body, constant)


def _definite(fact: Relation, coords: dict[str, Vec], orientations: tuple[str, ...]) -> Relation | None:
    cls = type(fact)
    for orientation in orientations:
        candidate = cls.of(*fact.points, orientation=orientation)
        if holds(candidate, coords):
            return candidate
    return None


class _Search:
    def __init__(self, angles: AngleSystem, ratios: RatioSystem, coords: dict[str, Vec]) -> None:
        self.angles, self.ratios, self.coords = angles, ratios, coords
        self.found: dict[Relation, frozenset[int]] = {}

    def pair(
        self,
        t1: Triple,
        t2: Triple,
        sources: frozenset[int],
        known: set[object],
        orientations: tuple[str, ...] = ("same", "opposite"),
    ) -> bool:
        """Record ``t1 ~ t2`` when it holds on the diagram with an orientation the premises justify.

        Side-side-side justifies either orientation. Side-angle-side compares directed angles between
        lines, which fix the triangle angle only together with the orientation: equal directed angles give
        equal angles for triangles of the same orientation, opposite ones for mirrored triangles. Any other
        match (e.g. the two angles a line makes at a point, supplementary, that happen to be right angles on
        the diagram) would be a true fact with an invalid reason, so it is not recorded.
        """
        if set(t1) == set(t2):
            return False
        same_side = _ratio(self.ratios, t1[0], t1[1], t2[0], t2[1])
        congruent = not same_side.expr
        cls = CongruentTriangles if congruent else SimilarTriangles
        fact = _definite(cls.of(*t1, *t2), self.coords, orientations)
        if fact is None:
            return False  # equal directed angles, but the triangles' angles are supplementary
        if fact not in known and fact not in self.found:
            self.found[fact] = sources | (same_side.sources if congruent else frozenset())
        return True

    def run(self, points: tuple[str, ...], known: set[object]) -> None:
        sss: dict[Key, tuple[Triple, frozenset[int]]] = {}
        sas: dict[Key, list[tuple[Triple, frozenset[int]]]] = {}
        store = self.angles.store
        # The systems do not change during the search, so each ratio of two segments and each angle
        # between two lines is reduced once: a ratio |a b| / |b c| serves three triangles, an angle
        # every triangle whose two sides lie on its lines.
        ratios: dict[tuple[object, object], tuple[Reduced, Key]] = {}
        turns: dict[tuple[int, int], tuple[Reduced, Key, Key]] = {}

        def ratio(a: str, b: str, c: str, d: str) -> tuple[Reduced, Key]:
            segments = (self.ratios.seg(a, b), self.ratios.seg(c, d))
            found = ratios.get(segments)
            if found is None:
                reduced = _ratio(self.ratios, a, b, c, d)
                found = ratios[segments] = (reduced, _full(reduced))
            return found

        for a, b, c in itertools.permutations(points, 3):
            if store.line_of(a, b) == store.line_of(b, c):
                continue
            (r1, k1), (r2, k2) = ratio(a, b, b, c), ratio(b, c, c, a)
            head = sss.setdefault((k1, k2), ((a, b, c), r1.sources | r2.sources))
            if head[0] != (a, b, c):
                self.pair(head[0], (a, b, c), head[1] | r1.sources | r2.sources, known)
            lines = (store.line_of(b, a), store.line_of(b, c))
            turn = turns.get(lines)
            if turn is None:
                reduced = self.angles.angle(*lines)
                turn = turns[lines] = (
                    reduced,
                    _angle_key(self.angles, reduced, 1),
                    _angle_key(self.angles, reduced, -1),
                )
            side, side_key = ratio(b, a, b, c)
            self._side_angle_side((a, b, c), sas, side_key, turn[1:], side.sources | turn[0].sources, known)

    def _side_angle_side(
        self,
        triple: Triple,
        sas: dict[Key, list[tuple[Triple, frozenset[int]]]],
        ratio: Key,
        turns: tuple[Key, Key],
        sources: frozenset[int],
        known: set[object],
    ) -> None:
        """Pair a triangle with the first earlier one of equal side ratio and angle that really matches.

        ``turns`` are the keys of the angle at the vertex and of its negation (a mirrored match). Equal
        directed angles between lines may be supplementary angles of the triangles (a vertex angle and its
        neighbour along a line), so several candidates of one key are tried.
        """
        for sign, turn in zip((1, -1), turns, strict=True):
            for other, other_sources in sas.get((ratio, turn), [])[:MAX_TRIED]:
                orientation = ("same",) if sign == 1 else ("opposite",)
                if other != triple and self.pair(other, triple, other_sources | sources, known, orientation):
                    break
        sas.setdefault((ratio, turns[0]), []).append((triple, sources))


def triangle_findings(
    angles: AngleSystem,
    ratios: RatioSystem,
    coords: dict[str, Vec],
    known: set[object],
    within: Collection[str] | None = None,
) -> list[Finding]:
    """Similar and congruent triangle pairs the systems imply that ``known`` does not hold yet.

    With ``within``, only triangles of those points are searched (checking one step that names them):
    in the same order, so a pair the whole search finds is found too.
    """
    points = angles.store.points
    if within is not None:
        points = tuple(p for p in points if p in within)
    if len(points) > MAX_POINTS:
        return []
    search = _Search(angles, ratios, coords)
    search.run(points, known)
    return [Finding(fact, SIMILARITY_RULE, sources) for fact, sources in search.found.items()]
