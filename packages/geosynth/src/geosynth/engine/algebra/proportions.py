"""Rules whose premises are ratio equalities, decided by the reduced ratio system.

The fact store has no ``eqratio`` table; instead, every candidate instance of such a rule asks the ratio
system whether its ratio premise reduces to zero. Each finding names the ratio rows it used and the
collinearities behind it (appended to ``facts``); side conditions (which side of a point, which order
along a line) are read off the diagram, and the conclusion still passes the numeric gate.

- ``r28`` (converse of Thales): ``o a c`` and ``o b d`` collinear, ``oa / oc = ob / od`` or
  ``oa / ac = ob / bd``, the points in the same order on both lines: ``a b`` is parallel to ``c d``.
- ``r12`` (converse of the angle bisector theorem): ``d`` on line ``b c``, ``a`` off it,
  ``db / dc = ab / ac``: line ``a d`` bisects the angle between ``a b`` and ``a c`` (internally or
  externally; the directed statement covers both).
- ``r42`` (converse of the trapezoid midline): ``a b`` parallel to ``c d``, ``m`` on ``a d``, ``n`` on
  ``b c``, ``ma / md = nb / nc`` with ``m`` and ``n`` in the same position relative to their segments:
  ``m n`` is parallel to ``a b``.
- ``e10`` (converse of the power of a point, ``rules/engine_rules.txt``): ``p`` on the line of a chord
  ``x y`` and ``q`` on the line of a chord ``u v`` of one circle with centre ``o``, ``px * py = qu * qv``,
  each inside its chord or each outside it: ``o p = o q``. The signed product ``px * py`` (vectors) is
  ``op^2 - r^2``; the side condition makes the unsigned products signed alike.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

from geosynth.engine.algebra.chasing import AngleSystem, Finding, RatioSystem, bisector_rows, is_bisector
from geosynth.engine.algebra.elimination import Expr, LinearSystem, Reduced, add_scaled
from geosynth.engine.algebra.transversals import lines_by_direction, points_on_lines
from geosynth.engine.geometry.geometry import Vec
from geosynth.engine.language.relations import Collinear, EqualLength, EqualLineAngles, Parallel, Relation
from geosynth.engine.store.factstore import FactStore

CONVERSE_THALES = "r28"
"""The rule name of parallels from proportional cuts (``rules.txt`` r28)."""
RATIO_BISECTOR = "r12"
"""The rule name of angle bisectors from side ratios (``rules.txt`` r12)."""
TRAPEZOID_MIDLINE = "r42"
"""The rule name of the converse trapezoid midline (``rules.txt`` r42)."""
POWER_OF_A_POINT = "e10"
"""The rule name of equal distances from a centre by equal powers (``rules/engine_rules.txt`` e10)."""
MAX_POINTS = 30
"""Problems with more points skip these searches."""


def _equal_ratios(ratios: RatioSystem, first: tuple[str, ...], second: tuple[str, ...]) -> Reduced | None:
    """The reduced ``log(first ratio) - log(second ratio)`` when it is zero, else ``None``."""
    expr: Expr = ratios.ratio(*first)
    add_scaled(expr, ratios.ratio(*second), Fraction(-1))
    reduced = ratios.system.reduce(expr)
    return reduced if not reduced.expr else None


def _position(coords: dict[str, Vec], o: str, p: str) -> tuple[float, float]:
    return coords[p][0] - coords[o][0], coords[p][1] - coords[o][1]


def _same_ray(coords: dict[str, Vec], o: str, a: str, c: str) -> bool:
    """Whether ``a`` and ``c`` (collinear with ``o``) lie on the same side of ``o``."""
    u, v = _position(coords, o, a), _position(coords, o, c)
    return u[0] * v[0] + u[1] * v[1] > 0


class _Search:
    def __init__(
        self, store: FactStore, angles: AngleSystem, ratios: RatioSystem, coords: dict[str, Vec]
    ) -> None:
        self.store, self.angles, self.ratios, self.coords = store, angles, ratios, coords
        self.on = points_on_lines(store)
        self.found: list[Finding] = []

    def _emit(
        self, fact: Relation, rule: str, reduced: Reduced, facts: list[Relation], extra: list[Relation]
    ) -> None:
        base = len(facts)
        facts += extra
        self.found.append(Finding(fact, rule, reduced.sources | frozenset(range(base, len(facts)))))

    def thales(self, facts: list[Relation]) -> None:
        """``r28``: proportional cuts of two lines through a point give a parallel."""
        store = self.store
        for o in store.points:
            lines = [line for line, points in self.on.items() if o in points and len(points) >= 3]
            for l1, l2 in itertools.combinations(lines, 2):
                first = [p for p in self.on[l1] if p != o]
                second = [p for p in self.on[l2] if p != o]
                for a, c in itertools.combinations(first, 2):
                    for b, d in itertools.permutations(second, 2):
                        # two lines of a partial store (a replayed step's premises) can share a
                        # second point besides o; a cut through it is no cut
                        if a in (b, d) or c in (b, d) or store.dir_of(a, b) == store.dir_of(c, d):
                            continue
                        reduced = self._cuts(o, a, c, b, d)
                        if reduced is not None:
                            extra: list[Relation] = [Collinear.of(o, a, c), Collinear.of(o, b, d)]
                            self._emit(Parallel.of(a, b, c, d), CONVERSE_THALES, reduced, facts, extra)

    def _cuts(self, o: str, a: str, c: str, b: str, d: str) -> Reduced | None:
        """``oa / oc = ob / od``, ``oa / ac = ob / bd`` or ``oc / ca = od / db`` (points alike placed)."""
        coords = self.coords
        if _same_ray(coords, o, a, c) != _same_ray(coords, o, b, d):
            return None
        found = _equal_ratios(self.ratios, (o, a, o, c), (o, b, o, d))
        if found is None and _same_ray(coords, a, o, c) == _same_ray(coords, b, o, d):
            found = _equal_ratios(self.ratios, (o, a, a, c), (o, b, b, d))
        if found is None and _same_ray(coords, c, o, a) == _same_ray(coords, d, o, b):
            found = _equal_ratios(self.ratios, (o, c, c, a), (o, d, d, b))
        return found

    def bisectors(self, facts: list[Relation]) -> None:
        """``r12``: a point dividing a side in the ratio of the other two sides is on a bisector."""
        for a, b, c, d, known in bisector_rows(self.angles, self.on):
            if is_bisector(known, self.angles.system.units):
                continue
            reduced = _equal_ratios(self.ratios, (d, b, d, c), (a, b, a, c))
            if reduced is not None:
                fact = EqualLineAngles.of(a, b, a, d, a, d, a, c)
                self._emit(fact, RATIO_BISECTOR, reduced, facts, [Collinear.of(b, c, d)])

    def midlines(self, facts: list[Relation]) -> None:
        """``r42``: points dividing the legs of a trapezoid in one ratio span a parallel to its bases."""
        store = self.store
        by_dir = lines_by_direction(store, self.on)
        for parallels in by_dir.values():
            for l1, l2 in itertools.combinations(sorted(parallels), 2):
                for a, b in itertools.permutations(self.on[l1], 2):
                    for d, c in itertools.permutations(self.on[l2], 2):
                        self._legs(a, b, c, d, facts)

    def _legs(self, a: str, b: str, c: str, d: str, facts: list[Relation]) -> None:
        store, on = self.store, self.on
        if a > b or a in (c, d) or b in (c, d):  # a point on both lines: they are one line, not yet merged
            return
        if store.line_of(a, d) == store.line_of(b, c):
            return
        for m in on[store.line_of(a, d)]:
            for n in on[store.line_of(b, c)]:
                if m in (a, d) or n in (b, c) or m == n or store.dir_of(m, n) == store.dir_of(a, b):
                    continue
                if _same_ray(self.coords, m, a, d) != _same_ray(self.coords, n, b, c):
                    continue
                if _same_ray(self.coords, a, m, d) != _same_ray(self.coords, b, n, c):
                    continue
                reduced = _equal_ratios(self.ratios, (m, a, m, d), (n, b, n, c))
                if reduced is not None:
                    extra: list[Relation] = [
                        Parallel.of(a, b, c, d),
                        Collinear.of(a, d, m),
                        Collinear.of(b, c, n),
                    ]
                    self._emit(Parallel.of(m, n, a, b), TRAPEZOID_MIDLINE, reduced, facts, extra)

    def powers(self, facts: list[Relation]) -> None:
        """``e10``: points of equal power with respect to a circle are equally far from its centre."""
        store, system = self.store, self.ratios.system
        for o in store.points:
            rings: dict[int, list[str]] = {}
            for x in store.points:
                if x != o:
                    rings.setdefault(store.length_of(o, x), []).append(x)
            for ring in rings.values():
                if len(ring) >= 2:
                    self._equal_powers(o, ring, system, facts)

    def _equal_powers(self, o: str, ring: list[str], system: LinearSystem, facts: list[Relation]) -> None:
        store, ratios = self.store, self.ratios
        first: dict[tuple[object, ...], tuple[str, str, str, Reduced]] = {}
        for x, y in itertools.combinations(ring, 2):
            for p in self.on[store.line_of(x, y)]:
                if p in (x, y, o):
                    continue
                power: Expr = {ratios.seg(p, x): Fraction(1), ratios.seg(p, y): Fraction(1)}
                reduced = system.reduce(power)
                inside = not _same_ray(self.coords, p, x, y)
                key = (inside, *sorted(reduced.expr.items(), key=lambda t: repr(t[0])))
                earlier = first.setdefault(key, (p, x, y, reduced))
                q, u, v, other = earlier
                if q == p or store.length_of(o, p) == store.length_of(o, q):
                    continue
                extra: list[Relation] = [EqualLength.of(o, x, o, w) for w in sorted({y, u, v} - {x})]
                extra += [Collinear.of(p, x, y), Collinear.of(q, u, v)]
                both = Reduced({}, reduced.sources | other.sources)
                self._emit(EqualLength.of(o, p, o, q), POWER_OF_A_POINT, both, facts, extra)


def proportion_findings(
    store: FactStore, angles: AngleSystem, ratios: RatioSystem, coords: dict[str, Vec], facts: list[Relation]
) -> list[Finding]:
    """Parallels, angle bisectors and equal distances that ratio premises imply (rules r28, r12, r42, e10).

    Args:
        store: The fact store (line and direction classes; instances it already holds are skipped).
        angles: The angle system (bisectors it already implies are skipped).
        ratios: The ratio system that decides the ratio premises.
        coords: The diagram (the side conditions of r28 and r42).
        facts: Every fact so far; the collinearities and parallels each finding uses are appended.

    Returns:
        The findings, each with the ratio rows and appended facts it used as sources.
    """
    if len(store.points) > MAX_POINTS:
        return []
    search = _Search(store, angles, ratios, coords)
    search.thales(facts)
    search.bisectors(facts)
    search.midlines(facts)
    search.powers(facts)
    return search.found
