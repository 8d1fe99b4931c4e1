"""Similar and congruent triangles read off the algebraic systems (side-side-side and side-angle-side).

Rules r39-r41 of ``rules.txt`` take ratio equalities as premises, which the fact store does not hold as
a table; the reduced forms of the ratio and angle systems answer the same questions directly. Each
ordered triangle ``a b c`` gets two keys: the reduced log-ratios ``|a b| / |b c|`` and ``|b c| / |c a|``
(SSS), and the reduced ``|b a| / |b c|`` with the directed angle at ``b`` (SAS; the angle negated for a
mirrored match). Triangles whose keys agree are similar with that correspondence; when, in addition, a
pair of corresponding sides reduces to the same length, they are congruent.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Collection, Hashable

from geosynth.engine.algebra.chasing import DEG, AngleSystem, Finding, RatioSystem
from geosynth.engine.algebra.elimination import Coef, Expr, Reduced, difference
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
Key = Hashable


def _full(reduced: Reduced) -> frozenset[tuple[Hashable, Coef]]:
    """The whole reduced form, as a key (equal forms, equal keys)."""
    return frozenset(reduced.expr.items())


def _ratio(ratios: RatioSystem, a: str, b: str, c: str, d: str) -> Reduced:
    expr: Expr = ratios.ratio(a, b, c, d)
    return ratios.system.reduce(expr)


def _angle_key(reduced: Reduced, sign: int) -> Key:
    """The reduced angle (negated when ``sign`` is -1) up to multiples of 180 degrees, as a key."""
    body = frozenset((v, sign * c) for v, c in reduced.expr.items() if v != DEG)
    constant = (sign * reduced.expr.get(DEG, 0)) % 180
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
        """Key every ordered triangle by its shape (SSS) and by a side ratio with its angle (SAS).

        Keys are hashes of the reduced forms (:class:`_Forms`), a few integer operations per triangle;
        two triangles of one key are compared on their exact reduced forms before they are paired.
        """
        forms = _Forms(self.angles, self.ratios)
        sss: dict[tuple[int, int], Triple] = {}
        sas: dict[tuple[int, int, Coef], list[Triple]] = {}
        line_of, seg = self.angles.store.line_of, self.ratios.seg
        for triple in itertools.permutations(points, 3):
            a, b, c = triple
            ab, bc = line_of(a, b), line_of(b, c)
            if ab == bc:
                continue
            h1, h2, h3 = forms.log(seg(a, b))[1], forms.log(seg(b, c))[1], forms.log(seg(c, a))[1]
            side = (h1 - h2) % _PRIME
            head = sss.setdefault((side, (h2 - h3) % _PRIME), triple)
            if head != triple and forms.shape(head) == forms.shape(triple):
                self.pair(head, triple, forms.shape_sources(head) | forms.shape_sources(triple), known)
            (_, b1, c1), (_, b2, c2) = forms.direction(ab), forms.direction(bc)
            body, constant = (b1 - b2) % _PRIME, c1 - c2
            self._side_angle_side(
                triple,
                sas,
                forms,
                (side, body, constant % 180),
                (side, -body % _PRIME, -constant % 180),
                known,
            )

    def _side_angle_side(
        self,
        triple: Triple,
        sas: dict[tuple[int, int, Coef], list[Triple]],
        forms: _Forms,
        same: tuple[int, int, Coef],
        mirrored: tuple[int, int, Coef],
        known: set[object],
    ) -> None:
        """Pair a triangle with the first earlier one of equal side ratio and angle that really matches.

        ``same`` and ``mirrored`` key the side ratio with the angle at the vertex and with its negation
        (a mirrored match). Equal directed angles between lines may be supplementary angles of the
        triangles (a vertex angle and its neighbour along a line), so several candidates of one key are
        tried.
        """
        for sign, key in ((1, same), (-1, mirrored)):
            for other in sas.get(key, [])[:MAX_TRIED]:
                if other == triple or forms.side_angle(other, 1) != forms.side_angle(triple, sign):
                    continue
                sources = forms.side_angle_sources(other) | forms.side_angle_sources(triple)
                orientation = ("same",) if sign == 1 else ("opposite",)
                if self.pair(other, triple, sources, known, orientation):
                    break
        sas.setdefault(same, []).append(triple)


_PRIME = (1 << 61) - 1
"""Triangle keys are sums of per-variable weights modulo this prime."""


def _weight(var: Hashable) -> int:
    """A fixed pseudo-random weight of a variable (the same in every process: not ``hash``)."""
    digest = hashlib.blake2b(repr(var).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % _PRIME


def _residue(coef: Coef) -> int:
    """An exact rational modulo :data:`_PRIME`."""
    if type(coef) is int:
        return coef % _PRIME
    return coef.numerator * pow(coef.denominator, -1, _PRIME) % _PRIME


class _Forms:
    """Each segment's log-length and each line's direction, reduced once, with a hash of each form.

    Reduction against a fully reduced system is linear, so a ratio of two segments or an angle between
    two lines is the difference of two forms, and its hash the difference of their hashes: equal forms
    have equal hashes, and unequal forms collide with probability about 2^-61 (the exact forms are
    compared before any pair is recorded, so a collision can only hide a match, never make one).
    """

    def __init__(self, angles: AngleSystem, ratios: RatioSystem) -> None:
        self.angles, self.ratios = angles, ratios
        self._weights: dict[Hashable, int] = {}
        self._logs: dict[Hashable, tuple[Reduced, int]] = {}
        self._directions: dict[int, tuple[Reduced, int, Coef]] = {}
        self._ratios: dict[tuple[Hashable, Hashable], Key] = {}
        self._turns: dict[tuple[int, int, int], Key] = {}

    def _hash(self, expr: Expr, skip: Hashable = None) -> int:
        total = 0
        for var, coef in expr.items():
            if var == skip:
                continue
            weight = self._weights.get(var)
            if weight is None:
                weight = self._weights[var] = _weight(var)
            total += _residue(coef) * weight
        return total % _PRIME

    def log(self, segment: Hashable) -> tuple[Reduced, int]:
        """The reduced log-length of a segment variable and its hash."""
        found = self._logs.get(segment)
        if found is None:
            reduced = self.ratios.system.reduce({segment: 1})
            found = self._logs[segment] = (reduced, self._hash(reduced.expr))
        return found

    def direction(self, line: int) -> tuple[Reduced, int, Coef]:
        """The reduced direction of a line class, the hash of its variable part and its degrees."""
        found = self._directions.get(line)
        if found is None:
            reduced = self.angles.system.reduce({("L", line): 1})
            found = self._directions[line] = (
                reduced,
                self._hash(reduced.expr, DEG),
                reduced.expr.get(DEG, 0),
            )
        return found

    def _ratio(self, first: Hashable, second: Hashable) -> Key:
        found = self._ratios.get((first, second))
        if found is None:
            found = self._ratios[first, second] = _full(difference(self.log(first)[0], self.log(second)[0]))
        return found

    def shape(self, triple: Triple) -> tuple[Key, Key]:
        """The exact side-side-side key: ``|a b| / |b c|`` and ``|b c| / |c a|``, reduced."""
        a, b, c = triple
        seg = self.ratios.seg
        return self._ratio(seg(a, b), seg(b, c)), self._ratio(seg(b, c), seg(c, a))

    def shape_sources(self, triple: Triple) -> frozenset[int]:
        """The rows behind :meth:`shape`."""
        a, b, c = triple
        seg = self.ratios.seg
        return (
            self.log(seg(a, b))[0].sources | self.log(seg(b, c))[0].sources | self.log(seg(c, a))[0].sources
        )

    def side_angle(self, triple: Triple, sign: int) -> tuple[Key, Key]:
        """The exact side-angle-side key: ``|b a| / |b c|`` and the directed angle at ``b`` (times ``sign``)."""
        a, b, c = triple
        seg, line_of = self.ratios.seg, self.angles.store.line_of
        lines = (line_of(b, a), line_of(b, c), sign)
        turn = self._turns.get(lines)
        if turn is None:
            reduced = difference(self.direction(lines[0])[0], self.direction(lines[1])[0])
            turn = self._turns[lines] = _angle_key(reduced, sign)
        return self._ratio(seg(b, a), seg(b, c)), turn

    def side_angle_sources(self, triple: Triple) -> frozenset[int]:
        """The rows behind :meth:`side_angle`."""
        a, b, c = triple
        seg, line_of = self.ratios.seg, self.angles.store.line_of
        return (
            self.log(seg(b, a))[0].sources
            | self.log(seg(b, c))[0].sources
            | self.direction(line_of(b, a))[0].sources
            | self.direction(line_of(b, c))[0].sources
        )


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
