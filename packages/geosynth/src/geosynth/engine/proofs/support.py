"""Minimal supports of facts derived by elimination: which source facts a chased fact really needs.

The elimination (:mod:`geosynth.engine.algebra.elimination`) tags every row with the sources combined into it, a
superset of what the derived fact needs. Here the question is asked directly: given the target
equations (a fact's linear forms) and candidate rows (linear forms, each needing a set of source facts),
find the fewest source facts whose rows combine linearly into every target.

- **L0** is a mixed-integer program: a binary ``use`` per source fact, real coefficients per row and
  target bounded by ``big_m * use`` of every fact the row needs, minimise the facts used. When there
  are at most :data:`EXACT_FACTS` candidate facts (most chased steps), the subsets are tried instead,
  smallest first, each by exact elimination: the same optimum without the solver.
- **L1** is a linear program: minimise the sum of absolute coefficients (split into positive and
  negative parts); the support is the rows with a nonzero coefficient. Cheaper, not always minimal.

Both run in SCIP (PySCIPOpt). The solver works in floating point, so its answer is only a candidate:
:func:`minimal_support` re-derives every target exactly (``Fraction`` elimination over the chosen rows
alone) and falls back to the full candidate set when that check fails.

For proofs, :func:`chased_support` builds the candidate rows of a chased fact from its premises (their
own equations, and the ratio equations of parallel cuts, intercepts, transversals and bisectors their
lines form) and
:func:`class_premises` adds the collinearities that make the lines it names the same lines.
"""

from __future__ import annotations

import itertools
from collections.abc import Container, Hashable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from pyscipopt import Model, Variable, quicksum

from geosynth.engine.algebra.chasing import (
    ANGLE_FACTS,
    RATIO_FACTS,
    AngleSystem,
    RatioSystem,
    bisectors,
    intercepts,
    thales,
)
from geosynth.engine.algebra.elimination import Coef, LinearSystem
from geosynth.engine.algebra.transversals import transversal_equations
from geosynth.engine.geometry.geometry import Vec
from geosynth.engine.language.relations import (
    Collinear,
    CongruentTriangles,
    DirectedAngleConstant,
    EqualLineAngles,
    Midpoint,
    Parallel,
    Perpendicular,
    Relation,
    SimilarTriangles,
)
from geosynth.engine.proofs.replay import premise_store
from geosynth.engine.store.factstore import FactStore
from geosynth.errors import GeoSynthError

Method = Literal["l0", "l1"]
"""How to minimise: ``l0`` (fewest facts, MILP) or ``l1`` (least total coefficient, LP)."""
METHODS: tuple[Method, ...] = ("l0", "l1")
"""Every minimisation method."""

BIG_M = 64.0
"""Bound on the absolute value of a row's coefficient (chasing combines rows with small integers)."""
TOLERANCE = 1e-6
"""Coefficients below this count as zero in the solver's answer."""
TIME_LIMIT = 5.0
"""Seconds SCIP may spend on one problem before the best answer so far is taken."""
EXACT_FACTS = 6
"""Up to this many candidate facts, L0 tries every smaller subset exactly instead of asking SCIP."""


@dataclass(frozen=True)
class Row:
    """A candidate equation ``expr = 0`` and the source facts (ids) it needs."""

    expr: Mapping[Hashable, Coef]
    sources: frozenset[int]


@dataclass(frozen=True)
class Support:
    """The outcome of one minimisation."""

    sources: frozenset[int]
    """The source facts kept (all candidates' sources when the solver's answer did not verify)."""
    verified: bool
    """Whether the kept rows imply every target exactly."""
    minimised: bool
    """Whether the solver's answer was used (``False``: fell back to every candidate)."""


def implies(
    targets: Sequence[Mapping[Hashable, Coef]],
    rows: Sequence[Row],
    units: Container[Hashable],
    modulus: Fraction | None,
) -> bool:
    """Whether the rows imply every target exactly (modulo ``modulus`` on the units when given).

    Args:
        targets: The equations to derive (``expr = 0``).
        rows: The equations available.
        units: Symbols standing for constants (``deg``, ``log p``).
        modulus: Angles hold modulo 180 degrees: pass ``Fraction(180)``; ``None`` asks for exact zero.
    """
    system = LinearSystem(units)
    for index, row in enumerate(rows):
        system.add(row.expr, index)
    for target in targets:
        reduced = system.reduce(target)
        if any(v not in units for v in reduced.expr):
            return False
        constant = reduced.constant(units)
        if modulus is None:
            if constant:
                return False
        elif any(c % modulus for c in constant.values()):
            return False
    return True


def _variables(targets: Sequence[Mapping[Hashable, Coef]], rows: Sequence[Row]) -> list[Hashable]:
    seen: dict[Hashable, None] = {}
    for expr in [*targets, *(r.expr for r in rows)]:
        for var in expr:
            seen.setdefault(var, None)
    return list(seen)


def solve_support(
    targets: Sequence[Mapping[Hashable, Coef]], rows: Sequence[Row], method: Method = "l0"
) -> frozenset[int] | None:
    """The solver's support (source ids), or ``None`` when it finds no combination.

    Every symbol, units included, must match: angle rows and targets are lifted by one diagram, so a
    combination whose variables match the target's matches its constant too.

    Args:
        targets: Equations to derive.
        rows: Candidate equations with the sources each needs.
        method: ``l0`` or ``l1``.
    """
    variables = _variables(targets, rows)
    facts = sorted({s for r in rows for s in r.sources})
    model = Model()
    model.hideOutput()
    model.setParam("limits/time", TIME_LIMIT)
    use = {f: model.addVar(vtype="B" if method == "l0" else "C", lb=0, ub=1) for f in facts}
    costs: list[Variable] = []
    coefficients: list[list[tuple[Variable, Variable]]] = []
    for j, target in enumerate(targets):
        mine: list[tuple[Variable, Variable]] = []
        for i, row in enumerate(rows):
            pos = model.addVar(name=f"p{j}_{i}", lb=0, ub=BIG_M)
            neg = model.addVar(name=f"n{j}_{i}", lb=0, ub=BIG_M)
            for f in row.sources:
                model.addCons(pos + neg <= BIG_M * use[f])
            mine.append((pos, neg))
            costs += [pos, neg]
        coefficients.append(mine)
        for var in variables:
            total = quicksum(
                float(row.expr.get(var, 0)) * (pos - neg)
                for row, (pos, neg) in zip(rows, mine, strict=True)
                if var in row.expr
            )
            model.addCons(total == float(target.get(var, 0)))
    if method == "l0":
        model.setObjective(quicksum(use.values()), "minimize")
    else:
        model.setObjective(quicksum(costs), "minimize")
    model.optimize()
    if model.getNSols() == 0:
        return None
    chosen: set[int] = set()
    for mine in coefficients:
        for row, (pos, neg) in zip(rows, mine, strict=True):
            if abs(model.getVal(pos) - model.getVal(neg)) > TOLERANCE:
                chosen |= row.sources
    return frozenset(chosen)


def minimal_support(
    targets: Sequence[Mapping[Hashable, Coef]],
    rows: Sequence[Row],
    units: Container[Hashable],
    modulus: Fraction | None,
    method: Method = "l0",
) -> Support:
    """The fewest (``l0``) or cheapest (``l1``) source facts whose rows imply every target, verified exactly.

    Args:
        targets: Equations to derive (a fact's linear forms).
        rows: Candidate equations, each with the source facts it needs.
        units: The system's constant symbols.
        modulus: ``Fraction(180)`` for angle equations (the exact check accepts constants that
            differ by multiples of 180), ``None`` for ratio equations.
        method: ``l0`` (MILP) or ``l1`` (LP).

    Returns:
        The support; every candidate's sources when the solver fails or its answer does not verify.
    """
    everything = frozenset(s for r in rows for s in r.sources)
    if not targets:
        return Support(frozenset(), True, True)
    if method == "l0" and len(everything) <= EXACT_FACTS:
        return _fewest(targets, rows, units, modulus, everything)
    chosen = solve_support(targets, rows, method)
    if chosen is not None:
        kept = [r for r in rows if r.sources <= chosen]
        if implies(targets, kept, units, modulus):
            return Support(chosen, True, True)
    return Support(everything, implies(targets, rows, units, modulus), False)


def _fewest(
    targets: Sequence[Mapping[Hashable, Coef]],
    rows: Sequence[Row],
    units: Container[Hashable],
    modulus: Fraction | None,
    everything: frozenset[int],
) -> Support:
    """L0 by trying subsets of the candidate facts, smallest first (the first in index order of a size)."""
    if not implies(targets, rows, units, modulus):
        return Support(everything, False, False)
    facts = sorted(everything)
    for size in range(len(facts)):
        for subset in itertools.combinations(facts, size):
            chosen = frozenset(subset)
            if implies(targets, [r for r in rows if r.sources <= chosen], units, modulus):
                return Support(chosen, True, True)
    return Support(everything, True, True)


# --- Supports of chased facts in a proof -------------------------------------------------------------

COLLINEAR_MAKERS = (Collinear, Midpoint)
"""Facts that merge line classes (the angle system's variables)."""


def line_pairs(fact: Relation) -> list[tuple[str, str]]:
    """The point pairs whose lines the angle system reads for ``fact`` (its angle variables)."""
    p = fact.points
    if isinstance(fact, Parallel | Perpendicular):
        pairs = [(p[0], p[1]), (p[2], p[3])]
    elif isinstance(fact, EqualLineAngles):
        pairs = [(p[i], p[i + 1]) for i in range(0, 8, 2)]
    elif isinstance(fact, DirectedAngleConstant):
        pairs = [(p[1], p[2]), (p[1], p[0])]
    elif isinstance(fact, SimilarTriangles | CongruentTriangles):
        pairs = [*itertools.combinations(p[:3], 2), *itertools.combinations(p[3:], 2)]
    else:
        pairs = []
    return [(a, b) if a <= b else (b, a) for a, b in pairs if a != b]


class _Pairs:
    """Union-find over point pairs: two pairs are joined when collinearities put them on one line."""

    def __init__(self) -> None:
        self.parent: dict[tuple[str, str], tuple[str, str]] = {}

    def find(self, pair: tuple[str, str]) -> tuple[str, str]:
        root = pair
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        return root

    def add(self, points: Sequence[str]) -> bool:
        pairs = [(a, b) if a <= b else (b, a) for a, b in itertools.combinations(points, 2)]
        roots = {self.find(q) for q in pairs}
        first = self.find(pairs[0])
        for root in roots:
            self.parent[root] = first
        return len(roots) > 1


def _joined(pairs: Sequence[tuple[str, str]], facts: Sequence[Relation]) -> bool:
    uf = _Pairs()
    for fact in facts:
        uf.add(fact.points)
    return len({uf.find(q) for q in pairs}) <= 1


def class_premises(
    related: Sequence[Relation], pool: Sequence[Relation], pairs: Sequence[tuple[str, str]] = ()
) -> list[Relation]:
    """Collinearities of ``pool`` that put the lines ``related`` names into the classes the pool does.

    The angle system's variables are line classes, merged by collinearities that give no equation of
    their own; a chased fact whose premises name the same line by two point pairs needs them.

    Args:
        related: The chased fact and its premises.
        pool: Facts known when it was derived (its collinearities are the candidates).
        pairs: More point pairs to put on the lines the pool gives them (a collinearity to explain).

    Returns:
        A small set of collinearities (greedy, then pruned) joining each group of pairs the pool joins.
    """
    makers = [f for f in pool if isinstance(f, COLLINEAR_MAKERS)]
    present = [f for f in related if isinstance(f, COLLINEAR_MAKERS)]
    full = _Pairs()
    for fact in makers:
        full.add(fact.points)
    groups: dict[tuple[str, str], set[tuple[str, str]]] = {}
    named = [pair for fact in related for pair in line_pairs(fact)]
    for a, b in [*named, *pairs]:
        pair = (a, b) if a <= b else (b, a)
        groups.setdefault(full.find(pair), set()).add(pair)
    chosen: list[Relation] = []
    for root, group in groups.items():
        if len(group) < 2 or _joined(sorted(group), [*present, *chosen]):
            continue
        local = _Pairs()
        for fact in [*present, *chosen]:
            local.add(fact.points)
        mine: list[Relation] = []
        for fact in makers:
            a, b = sorted(fact.points[:2])
            if full.find((a, b)) == root and fact not in present and local.add(fact.points):
                mine.append(fact)
                if len({local.find(q) for q in group}) == 1:
                    break
        for fact in list(reversed(mine)):  # prune what the rest already joins
            rest = [f for f in mine if f != fact]
            if _joined(sorted(group), [*present, *chosen, *rest]):
                mine = rest
        chosen += mine
    return chosen


def _rows(angles: AngleSystem, ratios: RatioSystem, facts: list[Relation]) -> tuple[list[Row], list[Row]]:
    """Each fact's angle and ratio equations as candidate rows (the angle rows also fill its system)."""
    angle_rows: list[Row] = []
    ratio_rows: list[Row] = []
    for index, fact in enumerate(facts):
        for expr in angles.equations(fact):
            angles.system.add(expr, index)
            angle_rows.append(Row(expr, frozenset([index])))
        ratio_rows += [Row(expr, frozenset([index])) for expr in ratios.equations(fact)]
    return angle_rows, ratio_rows


def _extra_rows(store: FactStore, angles: AngleSystem, facts: list[Relation]) -> list[Row]:
    """Ratio rows of parallel cuts, intercepts, Menelaus/Ceva and bisectors (sources appended to ``facts``)."""
    ids = {f: i for i, f in reversed(list(enumerate(facts)))}
    out: list[Row] = []
    for source in (
        lambda: thales(store, facts),
        lambda: intercepts(store, facts),
        lambda: transversal_equations(store, facts),
        lambda: bisectors(angles, facts),
    ):
        given = len(facts)
        try:
            found = source()
        except GeoSynthError:  # a finder that fails on these facts offers no rows
            del facts[given:]
            continue
        out += [Row(expr, frozenset(ids.setdefault(facts[i], i) for i in sources)) for expr, sources in found]
    return out


def chased_support(
    fact: Relation,
    premises: Sequence[Relation],
    points: Sequence[str],
    coords: dict[str, Vec],
    method: Method,
) -> tuple[Relation, ...] | None:
    """The fewest of ``premises`` (or facts their lines imply) whose equations give a chased fact.

    Args:
        fact: An angle fact (``para``, ``perp``, ``eqangle``) or a ratio fact (``cong``, ``eqratio``...).
        premises: The elimination's source facts (with the collinearities behind their lines).
        points: The problem's points.
        coords: The diagram (lifting angle equations).
        method: ``l0`` or ``l1``.

    Returns:
        The support, or ``None`` when the fact is neither kind or no support verifies.
    """
    store = premise_store(points, premises, fact)
    angles, ratios = AngleSystem(store, coords), RatioSystem()
    facts = list(premises)
    angle_rows, ratio_rows = _rows(angles, ratios, facts)
    ratio_rows += _extra_rows(store, angles, facts)
    if isinstance(fact, ANGLE_FACTS):
        found = minimal_support(
            angles.equations(fact), angle_rows, angles.system.units, Fraction(180), method
        )
    elif isinstance(fact, RATIO_FACTS):
        found = minimal_support(ratios.equations(fact), ratio_rows, ratios.system.units, None, method)
    else:
        return None
    if not found.verified:
        return None
    return tuple(dict.fromkeys(facts[i] for i in sorted(found.sources)))
