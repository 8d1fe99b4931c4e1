"""The algebraic system: angle chasing and ratio chasing by exact elimination over the known facts.

**Angles.** Each line class ``l`` of the fact store gets a variable ``theta_l``, its direction in
degrees. Facts give equations between directions: ``para`` (difference 0), ``perp`` (difference 90),
``eqangle`` (``theta_1 - theta_2 - theta_3 + theta_4 = 0``) and ``s_angle`` (a constant). These hold
modulo 180 degrees; the diagram *lifts* each one to an exact equation over the reals by adding the
multiple of 180 that makes it true for the diagram's directions (each line's direction read once, in
[0, 180)). Lifted equations are consequences of the facts on this diagram, and so is everything the
elimination derives from them; read modulo 180 again they are the usual directed-angle facts. Two
angles between lines are equal when their reduced forms differ by a multiple of 180; a direction
difference that reduces to a constant gives ``para`` (0) or ``perp`` (90).

**Ratios.** Each segment gets a variable ``log |a b|``; ``cong``, ``circle``, ``midp``, ``eqratio``,
``rconst``, similar and congruent triangles give linear equations whose constants are logarithms of
rationals, written exactly over the units ``log p`` for primes ``p``. Segments with identical reduced
forms are congruent.

Every derived fact is checked numerically on the diagram before it is fed back (the same gate as the
rules) and records the facts whose equations the elimination combined for it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Container, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from geosynth.engine.algebra.elimination import Coef, Expr, LinearSystem, Reduced, add_scaled, difference
from geosynth.engine.algebra.transversals import lines_by_direction, points_on_lines, transversal_equations
from geosynth.engine.geometry.geometry import Vec, directed_line_angle
from geosynth.engine.language.relations import (
    CircleThrough,
    Collinear,
    CongruentTriangles,
    DirectedAngleConstant,
    EqualLength,
    EqualLineAngles,
    EqualRatios,
    Midpoint,
    Parallel,
    Perpendicular,
    RatioConstant,
    Relation,
    SimilarTriangles,
)
from geosynth.engine.store.factstore import FactStore


def triangle_angle_forms(
    points: tuple[str, ...], mirrored: bool
) -> list[tuple[tuple[str, str, str, str], tuple[str, str, str, str]]]:
    """Equal directed angles at corresponding vertices of two triangles (reversed when mirrored)."""
    a, b, c, d, e, f = points
    out: list[tuple[tuple[str, str, str, str], tuple[str, str, str, str]]] = []
    for (x, y, z), (u, v, w) in (((b, a, c), (e, d, f)), ((c, b, a), (f, e, d)), ((a, c, b), (d, f, e))):
        out.append(((y, x, y, z), (v, w, v, u) if mirrored else (v, u, v, w)))
    return out


ANGLE_RULE = "angle chasing"
"""The rule name recorded for facts the angle system derives."""
RATIO_RULE = "ratio chasing"
"""The rule name recorded for facts the ratio system derives."""

DEG = "deg"
"""The unit of the angle system: one degree."""

Pair = tuple[str, str]


def factor(n: int) -> dict[int, int]:
    """The prime factorisation of a positive integer."""
    out: dict[int, int] = {}
    p = 2
    while p * p <= n:
        while n % p == 0:
            out[p] = out.get(p, 0) + 1
            n //= p
        p += 1
    if n > 1:
        out[n] = out.get(n, 0) + 1
    return out


def log_of(value: Fraction) -> Expr:
    """``log value`` (a positive rational) over the prime units ``("log", p)``."""
    out: Expr = {("log", p): e for p, e in factor(value.numerator).items()}
    for p, e in factor(value.denominator).items():
        add_scaled(out, {("log", p): e}, -1)
    return out


_log_of = log_of  # the earlier private name


class _LogUnits:
    """Membership test for the units ``("log", p)`` of the ratio system."""

    def __contains__(self, item: object) -> bool:
        return isinstance(item, tuple) and len(item) == 2 and item[0] == "log"


@dataclass
class AngleSystem:
    """Directions of line classes as variables, lifted to exact equations by one diagram."""

    store: FactStore
    coords: dict[str, Vec]
    system: LinearSystem = field(init=False)
    value: dict[int, float] = field(init=False, default_factory=dict[int, float])
    """Each line class's direction on the diagram, degrees in [0, 180)."""
    where: dict[int, Pair] = field(init=False, default_factory=dict[int, Pair])
    """A representative point pair of each line class."""

    def __post_init__(self) -> None:
        self.system = LinearSystem(frozenset([DEG]))
        for a, b in itertools.combinations(self.store.points, 2):
            line = self.store.line_of(a, b)
            if line not in self.where:
                self.where[line] = (a, b)
                self.value[line] = math.degrees(directed_line_angle(self.coords[a], self.coords[b]))

    def line(self, a: str, b: str) -> int:
        """The line class through two points (keyed by the store's current classes)."""
        return self.store.line_of(a, b)

    def measured(self, terms: Mapping[int, Coef]) -> float:
        """``sum terms`` in degrees on the diagram (``KeyError`` for a line class newer than the system)."""
        return sum(float(c) * self.value[v] for v, c in terms.items())

    def lifted(self, terms: Mapping[int, Coef], degrees: Coef) -> Expr | None:
        """``sum terms = degrees (mod 180)`` as an exact equation true on the diagram (``None`` if trivial)."""
        terms = {v: c for v, c in terms.items() if c}
        if not terms:
            return None
        measured = self.measured(terms) - float(degrees)
        turns = round(measured / 180)
        expr: Expr = {("L", v): c for v, c in terms.items()}
        constant = degrees + 180 * turns
        if constant:
            expr[DEG] = -constant
        return expr

    def difference(self, pairs: Sequence[Pair], signs: Sequence[int], degrees: Coef) -> Expr | None:
        """The lifted equation ``sum sign * theta(pair) = degrees``."""
        terms: dict[int, int] = {}
        for (a, b), sign in zip(pairs, signs, strict=True):
            line = self.line(a, b)
            terms[line] = terms.get(line, 0) + sign
        return self.lifted(terms, degrees)

    def equations(self, fact: Relation) -> list[Expr]:
        """The angle equations a fact gives (possibly none)."""
        if isinstance(fact, SimilarTriangles | CongruentTriangles):
            mirrored = fact.orientation == "opposite"
            out: list[Expr] = []
            for first, second in triangle_angle_forms(fact.points, mirrored)[:2]:
                pairs = [
                    (first[0], first[1]),
                    (first[2], first[3]),
                    (second[0], second[1]),
                    (second[2], second[3]),
                ]
                expr = self.difference(pairs, [1, -1, -1, 1], 0)
                out += [] if expr is None else [expr]
            return out
        expr = self.equation(fact)
        return [] if expr is None else [expr]

    def equation(self, fact: Relation) -> Expr | None:
        """The angle equation a one-equation fact gives, or ``None``."""
        p = fact.points
        if isinstance(fact, Parallel | Perpendicular):
            degrees = 90 if isinstance(fact, Perpendicular) else 0
            return self.difference([(p[0], p[1]), (p[2], p[3])], [1, -1], degrees)
        if isinstance(fact, EqualLineAngles):
            pairs = [(p[i], p[i + 1]) for i in range(0, 8, 2)]
            return self.difference(pairs, [1, -1, -1, 1], 0)
        if isinstance(fact, DirectedAngleConstant):
            return self.difference([(p[1], p[2]), (p[1], p[0])], [1, -1], fact.degrees)
        return None

    def angle(self, l1: int, l2: int) -> Reduced:
        """The reduced form of ``theta_l1 - theta_l2``."""
        return self.system.reduce({("L", l1): 1, ("L", l2): -1})


@dataclass
class RatioSystem:
    """Logarithms of segment lengths as variables."""

    system: LinearSystem = field(init=False)
    segments: set[Pair] = field(init=False, default_factory=set[Pair])

    def __post_init__(self) -> None:
        self.system = LinearSystem(_LogUnits())

    def seg(self, a: str, b: str) -> Hashable:
        """The variable of segment ``a b``."""
        pair = (a, b) if a <= b else (b, a)
        self.segments.add(pair)
        return ("S", *pair)

    def ratio(self, a: str, b: str, c: str, d: str) -> Expr:
        """``log |a b| - log |c d|``."""
        first, second = self.seg(a, b), self.seg(c, d)
        return {} if first == second else {first: 1, second: -1}

    def equations(self, fact: Relation) -> list[Expr]:
        """The ratio equations a fact gives (possibly none)."""
        p = fact.points
        if isinstance(fact, EqualLength):
            return [self.ratio(*p)]
        if isinstance(fact, CircleThrough):
            return [self.ratio(p[0], p[1], p[0], q) for q in p[2:]]
        if isinstance(fact, Midpoint):
            m, a, b = p
            double = self.ratio(a, b, m, a)
            add_scaled(double, log_of(Fraction(2)), Fraction(-1))
            return [self.ratio(m, a, m, b), double]
        if isinstance(fact, EqualRatios):
            expr = self.ratio(*p[0:4])
            add_scaled(expr, self.ratio(*p[4:8]), Fraction(-1))
            return [expr]
        if isinstance(fact, RatioConstant):
            expr = self.ratio(*p)
            add_scaled(expr, log_of(fact.value), Fraction(-1))
            return [expr]
        if isinstance(fact, SimilarTriangles | CongruentTriangles):
            return self._triangles(fact)
        return []

    def _triangles(self, fact: SimilarTriangles | CongruentTriangles) -> list[Expr]:
        a, b, c, d, e, f = fact.points
        sides = [((a, b), (d, e)), ((b, c), (e, f)), ((c, a), (f, d))]
        if isinstance(fact, CongruentTriangles):
            return [self.ratio(*s, *t) for s, t in sides]
        out: list[Expr] = []
        for (s1, t1), (s2, t2) in itertools.pairwise(sides):
            expr = self.ratio(*s1, *t1)
            add_scaled(expr, self.ratio(*s2, *t2), Fraction(-1))
            out.append(expr)
        return out


def _cut(store: FactStore, o: str, first: list[str], second: list[str]) -> list[tuple[str, str]]:
    """Pairs ``(a, c)``: ``a`` on the first line, ``c`` on the second, ``o``, ``a``, ``c`` collinear."""
    return [
        (a, c)
        for a in first
        for c in second
        if o not in (a, c) and a != c and store.line_of(o, a) == store.line_of(o, c)
    ]


def thales(store: FactStore, facts: list[Relation]) -> list[tuple[Expr, frozenset[int]]]:
    """Ratio equations of two parallel lines cut by two lines through a point (``r08`` of rules.txt).

    With ``a b`` parallel to ``c d``, ``o a c`` and ``o b d`` collinear: ``oa / oc = ob / od = ab / cd``.
    The parallel and the two collinearities are appended to ``facts`` as the equations' sources.
    """
    on = points_on_lines(store)
    by_dir = lines_by_direction(store, on)
    ratios = RatioSystem()
    out: list[tuple[Expr, frozenset[int]]] = []
    for lines in by_dir.values():
        for l1, l2 in itertools.combinations(sorted(lines), 2):
            for o in store.points:
                cuts = _cut(store, o, on[l1], on[l2])
                for (a, c), (b, d) in itertools.combinations(cuts, 2):
                    if a == b or c == d or store.line_of(o, a) == store.line_of(o, b):
                        continue
                    base = len(facts)
                    facts += [Parallel.of(a, b, c, d), Collinear.of(o, a, c), Collinear.of(o, b, d)]
                    sources = frozenset(range(base, base + 3))
                    left = ratios.ratio(o, a, o, c)
                    for other in (ratios.ratio(o, b, o, d), ratios.ratio(a, b, c, d)):
                        expr = dict(left)
                        add_scaled(expr, other, Fraction(-1))
                        out.append((expr, sources))
    return out


def _hits(on: dict[int, list[str]], transversal: int, parallels: list[int]) -> dict[int, str]:
    """For each parallel line, the named point it shares with the transversal (when there is one)."""
    points = set(on[transversal])
    out: dict[int, str] = {}
    for line in parallels:
        common = points.intersection(on[line])
        if len(common) == 1:
            out[line] = common.pop()
    return out


def intercepts(store: FactStore, facts: list[Relation]) -> list[tuple[Expr, frozenset[int]]]:
    """Ratio equations of three or more parallel lines cut by two transversals (``r43`` generalised).

    When parallel lines ``l0, l1, ...`` meet one transversal at ``a0, a1, ...`` and another at
    ``b0, b1, ...``: ``|ai aj| / |a0 a1| = |bi bj| / |b0 b1|``. The parallels and the transversals'
    collinearities are appended to ``facts`` as the equations' sources.
    """
    on = points_on_lines(store)
    by_dir = lines_by_direction(store, on)
    ratios = RatioSystem()
    out: list[tuple[Expr, frozenset[int]]] = []
    for direction, parallels in by_dir.items():
        if len(parallels) < 3:
            continue
        cuts = [
            (t, hits)
            for t in sorted(on)
            if store._dirs.find(t) != direction and len(hits := _hits(on, t, sorted(parallels))) >= 3
        ]
        for (_, first), (_, second) in itertools.combinations(cuts, 2):
            shared = [line for line in first if line in second]
            if len(shared) < 3:
                continue
            a = [first[line] for line in shared]
            b = [second[line] for line in shared]
            if len(set(a)) < len(a) or len(set(b)) < len(b):
                # Two of the parallels meet a transversal at one point: they are one line whose points the
                # store has not yet merged, and the cuts would include a zero segment. No equation.
                continue
            base = len(facts)
            facts += [Parallel.of(*on[shared[0]][:2], *on[line][:2]) for line in shared[1:]]
            facts += [Collinear.of(*a), Collinear.of(*b)]
            sources = frozenset(range(base, len(facts)))
            head = ratios.ratio(a[0], a[1], b[0], b[1])
            for i, j in itertools.combinations(range(len(shared)), 2):
                if (i, j) == (0, 1):
                    continue
                expr = ratios.ratio(a[i], a[j], b[i], b[j])
                add_scaled(expr, head, Fraction(-1))
                out.append((expr, sources))
    return out


BISECTOR_SLACK = 1e-3
"""Degrees by which a bisector row may miss zero on the diagram and still be reduced (float error only)."""


def bisector_rows(
    angles: AngleSystem, on: Mapping[int, Sequence[str]]
) -> Iterator[tuple[str, str, str, str, Reduced]]:
    """Every angle-bisector configuration on the lines' points, with its reduced angle row.

    For each line holding ``b``, ``c`` and ``d`` and each point ``a`` off it: ``(a, b, c, d, row)``,
    where ``row`` is ``∠(ab, ad) - ∠(ad, ac)`` reduced by the angle system (``a d`` bisects the angle
    at ``a``, internally or externally, when :func:`is_bisector` holds for it). The bisector theorem
    (:func:`bisectors`) and its converse (``r12`` in ``_proportions``) both walk these.

    Only rows that vanish on the diagram (within ``BISECTOR_SLACK`` degrees, modulo 180) are reduced and
    yielded: every equation of the system holds on the diagram, so a row that reduces to zero does too,
    and a point dividing ``b c`` in the ratio ``|a b| / |a c|`` lies on a bisector of the figure. Neither
    consumer can use another row.

    Args:
        angles: The angle system.
        on: Points on each line (:func:`~geosynth.engine.algebra.transversals.points_on_lines`).
    """
    store = angles.store
    for points in on.values():
        if len(points) < 3:
            continue
        for b, c in itertools.combinations(points, 2):
            for d in points:
                if d in (b, c):
                    continue
                for a in store.points:
                    if a in points:
                        continue
                    ab, ad, ac = store.line_of(a, b), store.line_of(a, d), store.line_of(a, c)
                    try:
                        off = angles.measured({ab: 1, ad: -2, ac: 1}) % 180
                    except KeyError:  # a line class merged after the system was built: reduce the row
                        off = 0.0
                    if BISECTOR_SLACK < off < 180 - BISECTOR_SLACK:
                        continue
                    row: Expr = {("L", ab): 1, ("L", ad): -2, ("L", ac): 1}
                    yield a, b, c, d, angles.system.reduce(row)


def is_bisector(reduced: Reduced, units: Container[Hashable]) -> bool:
    """Whether a row of :func:`bisector_rows` reduces to zero modulo 180 degrees."""
    return not reduced.key(units) and not reduced.constant(units).get(DEG, Fraction(0)) % 180


def bisectors(angles: AngleSystem, facts: list[Relation]) -> list[tuple[Expr, frozenset[int]]]:
    """Ratio equations of angle bisectors (``r13`` of rules.txt), decided by the reduced angle system.

    When line ``a d`` bisects the angle between ``a b`` and ``a c`` (directed: internal or external)
    and ``d`` lies on ``b c``: ``|d b| / |d c| = |a b| / |a c|``. The collinearity is appended to
    ``facts`` as a source next to the angle rows used.
    """
    ratios = RatioSystem()
    out: list[tuple[Expr, frozenset[int]]] = []
    for a, b, c, d, reduced in bisector_rows(angles, points_on_lines(angles.store)):
        if not is_bisector(reduced, angles.system.units):
            continue
        facts.append(Collinear.of(b, c, d))
        expr = ratios.ratio(d, b, d, c)
        add_scaled(expr, ratios.ratio(a, b, a, c), Fraction(-1))
        out.append((expr, reduced.sources | {len(facts) - 1}))
    return out


def build_systems(
    store: FactStore, coords: dict[str, Vec], facts: list[Relation]
) -> tuple[AngleSystem, RatioSystem]:
    """Both systems from the facts (fact ``i`` is source ``i`` of every equation it gives).

    Parallel lines cut by lines through a point (Thales), three or more parallels cut by two lines
    (intercepts), Menelaus and Ceva configurations and angle bisectors add ratio equations whose
    sources (parallels, collinearities) are appended to ``facts``.
    """
    angles, ratios = AngleSystem(store, coords), RatioSystem()
    for index, fact in enumerate(list(facts)):
        for expr in angles.equations(fact):
            angles.system.add(expr, index)
        for ratio in ratios.equations(fact):
            ratios.system.add(ratio, index)
    derived = [
        *thales(store, facts),
        *intercepts(store, facts),
        *transversal_equations(store, facts),
        *bisectors(angles, facts),
    ]
    for expr, sources in derived:
        for var in expr:
            if isinstance(var, tuple) and var[0] == "S":
                ratios.segments.add((var[1], var[2]))
        ratios.system.add(expr, sources)
    return angles, ratios


def _mod180(value: Coef) -> Coef:
    return value % 180


@dataclass(frozen=True)
class Finding:
    """A fact the algebra derives, with the source facts (indices) its elimination combined."""

    fact: Relation
    rule: str
    sources: frozenset[int]


def _line_pair_relation(
    cls: type[Parallel] | type[Perpendicular], angles: AngleSystem, l1: int, l2: int
) -> Relation:
    return cls.of(*angles.where[l1], *angles.where[l2])


def direction_findings(angles: AngleSystem) -> list[Finding]:
    """``para`` and ``perp`` facts read off the reduced directions (one per pair of direction groups)."""
    units = angles.system.units
    groups: dict[Hashable, list[tuple[Coef, int, Reduced]]] = {}
    for line in sorted(angles.where):
        reduced = angles.system.reduce({("L", line): Fraction(1)})
        constant = reduced.constant(units).get(DEG, Fraction(0))
        groups.setdefault(reduced.variables(units), []).append((constant, line, reduced))
    out: list[Finding] = []
    for members in groups.values():
        firsts: dict[Coef, tuple[int, Reduced]] = {}
        for constant, line, reduced in members:
            slot = _mod180(constant)
            if slot in firsts:
                head, head_reduced = firsts[slot]
                sources = head_reduced.sources | reduced.sources
                out.append(Finding(_line_pair_relation(Parallel, angles, head, line), ANGLE_RULE, sources))
            else:
                firsts[slot] = (line, reduced)
        for slot, (line, reduced) in firsts.items():
            other = firsts.get(_mod180(slot + 90))
            if other is not None and slot < 90:
                fact = _line_pair_relation(Perpendicular, angles, line, other[0])
                out.append(Finding(fact, ANGLE_RULE, reduced.sources | other[1].sources))
    return out


def vertex_angles(
    store: FactStore, angles: AngleSystem, extra: Iterable[tuple[int, int]]
) -> set[tuple[int, int]]:
    """Ordered pairs of distinct, non-parallel line classes that meet at a named point (plus ``extra``)."""
    through: dict[str, set[int]] = {}
    for line, (a, b) in angles.where.items():
        for p in store.points:
            if p in (a, b) or (p != a and store.line_of(a, p) == line):
                through.setdefault(p, set()).add(line)
    pairs: set[tuple[int, int]] = set(extra)
    for lines in through.values():
        pairs.update(itertools.permutations(sorted(lines), 2))
    return {(x, y) for x, y in pairs if x != y}


def _angle_relation(angles: AngleSystem, l1: int, l2: int, l3: int, l4: int) -> Relation:
    return EqualLineAngles.of(*angles.where[l1], *angles.where[l2], *angles.where[l3], *angles.where[l4])


def angle_findings(store: FactStore, angles: AngleSystem, pairs: set[tuple[int, int]]) -> list[Finding]:
    """``eqangle`` facts: angles between line pairs whose reduced forms agree modulo 180."""
    units = angles.system.units
    groups: dict[Hashable, tuple[int, int, Reduced]] = {}
    out: list[Finding] = []
    directions: dict[int, Reduced] = {}  # each line's direction reduced once; an angle is a difference

    def direction(line: int) -> Reduced:
        found = directions.get(line)
        if found is None:
            found = directions[line] = angles.system.reduce({("L", line): 1})
        return found

    for l1, l2 in sorted(pairs):
        d1, d2 = store._dirs.find(l1), store._dirs.find(l2)
        if d1 == d2:
            continue
        reduced = difference(direction(l1), direction(l2))
        constant = _mod180(reduced.expr.get(DEG, 0))
        key = (reduced.variables(units), constant)
        head = groups.get(key)
        if head is None:
            groups[key] = (l1, l2, reduced)
            continue
        h1, h2, head_reduced = head
        if store.angles_equal((store._dirs.find(h1), store._dirs.find(h2)), (d1, d2)):
            continue
        fact = _angle_relation(angles, h1, h2, l1, l2)
        out.append(Finding(fact, ANGLE_RULE, head_reduced.sources | reduced.sources))
    return out


def length_findings(store: FactStore, ratios: RatioSystem) -> list[Finding]:
    """``cong`` facts: segments whose reduced log-lengths are identical."""
    groups: dict[Hashable, tuple[Pair, Reduced]] = {}
    out: list[Finding] = []
    for a, b in sorted(ratios.segments):
        reduced = ratios.system.reduce({("S", a, b): Fraction(1)})
        key = frozenset(reduced.expr.items())
        head = groups.get(key)
        if head is None:
            groups[key] = ((a, b), reduced)
            continue
        (c, d), head_reduced = head
        if store.length_of(a, b) != store.length_of(c, d):
            out.append(
                Finding(EqualLength.of(c, d, a, b), RATIO_RULE, head_reduced.sources | reduced.sources)
            )
    return out


def _zero(reduced: Reduced, modulus: Fraction | None, units: Container[Hashable]) -> bool:
    if reduced.key(units):
        return False
    constant = reduced.constant(units)
    if modulus is None:
        return not constant
    return set(constant) <= {DEG} and constant.get(DEG, Fraction(0)) % modulus == 0


ANGLE_FACTS = (Parallel, Perpendicular, EqualLineAngles)
"""Facts the angle system can decide."""
RATIO_FACTS = (EqualLength, EqualRatios, CircleThrough)
"""Facts the ratio system can decide."""


def goal_sources(
    goal: Relation, angles: AngleSystem, ratios: RatioSystem
) -> tuple[str, frozenset[int]] | None:
    """When the algebra alone implies ``goal``: the rule name and the source facts it combined.

    ``None`` when the goal is not an angle or ratio fact, is trivial (its equation is empty), or does
    not follow.
    """
    system: LinearSystem
    if isinstance(goal, ANGLE_FACTS):
        exprs, rule, modulus, system = angles.equations(goal), ANGLE_RULE, Fraction(180), angles.system
    elif isinstance(goal, RATIO_FACTS):
        exprs, rule, modulus, system = ratios.equations(goal), RATIO_RULE, None, ratios.system
    else:
        return None
    sources: frozenset[int] = frozenset()
    for expr in exprs:
        reduced = system.reduce(expr)
        if not reduced.expr and not reduced.sources:
            return None
        if not _zero(reduced, modulus, system.units):
            return None
        sources |= reduced.sources
    return (rule, sources) if exprs else None
