"""A first deductive core: rules compiled to SQL joins over a :class:`FactStore`, run to a fixpoint.

A rule's premises become table atoms (``coll a b c`` is two ``line`` rows sharing a line id; ``perp``
goes through ``line``, ``dir`` and ``perp``; ``cong`` through ``seg``), joined on shared variables. The
tables hold no degenerate pair, so the two ends of a segment always differ; distinct variables may
still meet at one point (a right angle shares its vertex). Each result row instantiates the conclusions; a
conclusion that is not already implied and holds numerically on the diagram (the numeric gate) is added
and recorded with its rule and instantiated premises. Diagrammatic premises (``ncoll``, ``npara``...)
are checked on the diagram per row. Rules using predicates the store does not hold yet (ratios,
similarity, congruence) and rules made only of angle or ratio equalities (chasing, left to the algebraic
system) do not compile: :func:`compile_rule` returns ``None``.
"""

from __future__ import annotations

import functools
import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from operator import itemgetter
from typing import Any

from pydantic import BaseModel, ConfigDict

from geosynth.engine.algebra.chasing import triangle_angle_forms
from geosynth.engine.algebra.findings import algebra_findings
from geosynth.engine.deduction.rules import Rule, default_rules, parse_rule
from geosynth.engine.diagram.numeric import holds
from geosynth.engine.diagram.realise import Diagram, compile_problem
from geosynth.engine.geometry.geometry import Vec
from geosynth.engine.language.definitions import Statement
from geosynth.engine.language.predicates import build_relation
from geosynth.engine.language.problem import Problem
from geosynth.engine.language.relations import (
    Canon,
    CircleThrough,
    Collinear,
    Concyclic,
    CongruentTriangles,
    DirectedAngleConstant,
    EqualLength,
    EqualLineAngles,
    EqualRatios,
    Midpoint,
    Parallel,
    Perpendicular,
    Points,
    RatioConstant,
    Relation,
    SimilarTriangles,
    canonical_four_pairs,
)
from geosynth.engine.language.shapes import AnyRelation
from geosynth.engine.store.factstore import FactStore
from geosynth.errors import RelationError

Atom = tuple[str, tuple[str, ...]]
Fresh = Callable[[], str]

_COLUMNS: dict[str, tuple[str, ...]] = {
    "line": ("a", "b", "l"),
    "dir": ("l", "d"),
    "perp": ("d1", "d2"),
    "seg": ("a", "b", "s"),
    "midp": ("m", "a", "b"),
    "circ": ("p", "k"),
    "ang": ("d1", "d2", "g"),
    "va": ("b", "a", "c", "d1", "d2", "g"),
}


VIEWS: dict[str, tuple[str, tuple[str, ...]]] = {
    "va": (
        "va(b, a, c, d1, d2, g, v) AS MATERIALIZED (SELECT l1.a, l1.b, l2.b, d1.d, d2.d, ang.g, "
        "max(l1.v, d1.v, ang.v, d2.v, l2.v) FROM line AS l1 CROSS JOIN dir AS d1 CROSS JOIN ang "
        "CROSS JOIN dir AS d2 CROSS JOIN line AS l2 "
        "WHERE d1.l = l1.l AND ang.d1 = d1.d AND d2.d = ang.d2 AND l2.l = d2.l AND l2.a = l1.a)",
        ("line", "dir", "ang"),
    ),
}
"""Tables a join may read that are computed per query from the store's tables: their ``WITH`` clause and
the tables they read. ``va(b, a, c, d1, d2, g)`` holds the vertex angles some angle equality mentions:
from line ``b a`` (direction ``d1``) to line ``b c`` (direction ``d2``) at the common point ``b``, with
its angle class ``g``; its ``v`` is the latest version of the rows it is made of. An angle equality of
two such angles (every ``eqangle`` of two triangles) joins two of its rows, which SQLite reads through
indexes it builds on the computed rows, where the same angles spelled out as line, direction and angle
rows join five tables each and enumerate every point of every line of a direction."""


def _coll(args: tuple[str, ...], fresh: Fresh) -> list[Atom]:
    line = fresh()
    return [("line", (args[0], p, line)) for p in args[1:]]


def _direction(a: str, b: str, fresh: Fresh) -> tuple[list[Atom], str]:
    line, direction = fresh(), fresh()
    return [("line", (a, b, line)), ("dir", (line, direction))], direction


def _para(args: tuple[str, ...], fresh: Fresh) -> list[Atom]:
    first, d1 = _direction(args[0], args[1], fresh)
    second, d2 = _direction(args[2], args[3], fresh)
    # Parallel lines share one direction id: rename the second to the first.
    return first + [(t, tuple(d1 if v == d2 else v for v in terms)) for t, terms in second]


def _perp(args: tuple[str, ...], fresh: Fresh) -> list[Atom]:
    first, d1 = _direction(args[0], args[1], fresh)
    second, d2 = _direction(args[2], args[3], fresh)
    return [*first, *second, ("perp", (d1, d2))]


def _cong(args: tuple[str, ...], fresh: Fresh) -> list[Atom]:
    length = fresh()
    return [("seg", (args[0], args[1], length)), ("seg", (args[2], args[3], length))]


def _circle(args: tuple[str, ...], fresh: Fresh) -> list[Atom]:
    length = fresh()
    return [("seg", (args[0], p, length)) for p in args[1:]]


def _cyclic(args: tuple[str, ...], fresh: Fresh) -> list[Atom]:
    circle = fresh()
    return [("circ", (p, circle)) for p in args]


def _eqangle(args: tuple[str, ...], fresh: Fresh) -> list[Atom]:
    angle = fresh()
    return [*_angle(args[:4], angle, fresh), *_angle(args[4:], angle, fresh)]


def _angle(args: tuple[str, ...], angle: str, fresh: Fresh) -> list[Atom]:
    """The angle from line ``args[0] args[1]`` to line ``args[2] args[3]`` in class ``angle``.

    When the two lines are named through one common point it is a vertex angle (:data:`VIEWS`),
    otherwise two lines, their directions and the angle row.
    """
    first, second = args[:2], args[2:]
    common = set(first) & set(second)
    if len(common) == 1:
        (vertex,) = common
        (a,) = (p for p in first if p != vertex)
        (c,) = (p for p in second if p != vertex)
        return [("va", (vertex, a, c, fresh(), fresh(), angle))]
    atoms: list[Atom] = []
    dirs: list[str] = []
    for i in (0, 2):
        more, direction = _direction(args[i], args[i + 1], fresh)
        atoms += more
        dirs.append(direction)
    return [*atoms, ("ang", (dirs[0], dirs[1], angle))]


CHASING = frozenset({"eqangle", "eqangle6", "eqratio", "eqratio6"})
"""Predicates of rules that only combine equalities (left to the algebraic system)."""

DIAGRAM_PREMISES = frozenset({"ncoll", "npara", "nperp", "diff"})
"""Premises read off the diagram when a rule fires (their points must be bound by other premises)."""

PREMISE_ATOMS: dict[str, Callable[[tuple[str, ...], Fresh], list[Atom]]] = {
    "coll": _coll,
    "para": _para,
    "perp": _perp,
    "cong": _cong,
    "circle": _circle,
    "cyclic": _cyclic,
    "midp": lambda args, fresh: [("midp", args)],
    "eqangle": _eqangle,
    "eqangle6": _eqangle,
}
"""How each premise predicate reads the tables (a predicate not listed cannot be compiled yet)."""


def _apply_coll(store: FactStore, rel: Relation) -> bool:
    # Every pair of the points spans the same line, so all their pair-lines merge.
    pairs = list(itertools.combinations(rel.points, 2))
    base = store.line_of(*pairs[0])
    return any([store.merge_lines(base, store.line_of(*pair)) for pair in pairs[1:]])


def _apply_midpoint(store: FactStore, rel: Relation) -> bool:
    m, a, b = rel.points
    new = store.add_midpoint(m, a, b)
    _apply_coll(store, Collinear.of(m, a, b))
    store.merge_lengths(store.length_of(m, a), store.length_of(m, b))
    return new


def _apply_circle_through(store: FactStore, rel: Relation) -> bool:
    o, first, *rest = rel.points
    return any([store.merge_lengths(store.length_of(o, first), store.length_of(o, p)) for p in rest])


def _angle_forms(store: FactStore, points: Points) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """``angle(l1, l2) = angle(l3, l4)`` and its equivalent ``angle(l1, l3) = angle(l2, l4)``.

    ``points`` are an ``eqangle``'s in canonical order, which may present either form; storing and
    testing both keeps the store's contents independent of point names (the other six forms are mirrors
    the store adds itself).
    """
    d = [store.dir_of(points[i], points[i + 1]) for i in range(0, 8, 2)]
    return [((d[0], d[1]), (d[2], d[3])), ((d[0], d[2]), (d[1], d[3]))]


def _add_eqangle(store: FactStore, points: Points) -> bool:
    return any([store.add_equal_angles(*form) for form in _angle_forms(store, points)])


def _apply_eqangle(store: FactStore, rel: Relation) -> bool:
    return _add_eqangle(store, rel.points)


def _eqangle_implied(store: FactStore, rel: Relation) -> bool:
    return all(store.angles_equal(*form) for form in _angle_forms(store, rel.points))


def _apply_triangles(store: FactStore, rel: Relation) -> bool:
    """Similar (or congruent) triangles: equal angles, and equal sides when congruent; remembered."""
    if rel in store.triangles:
        return False
    store.triangles.add(rel)
    mirrored = getattr(rel, "orientation", "same") == "opposite"
    for first, second in triangle_angle_forms(rel.points, mirrored):
        # the canonical order of ``eqangle first second``, without building the relation (a triangle's
        # sides are never degenerate): the store reads only the points
        _add_eqangle(store, canonical_four_pairs((*first, *second)))
    if isinstance(rel, CongruentTriangles):
        a, b, c, d, e, f = rel.points
        for s, t in (((a, b), (d, e)), ((b, c), (e, f)), ((c, a), (f, d))):
            store.merge_lengths(store.length_of(*s), store.length_of(*t))
    return True


@dataclass(frozen=True)
class _Kind:
    """How the store holds one relation class: record it, and test whether it is already implied."""

    apply: Callable[[FactStore, Relation], bool]
    implied: Callable[[FactStore, Relation], bool]


KINDS: dict[type[Relation], _Kind] = {
    Collinear: _Kind(
        _apply_coll, lambda s, r: len({s.line_of(*pair) for pair in itertools.combinations(r.points, 2)}) == 1
    ),
    Parallel: _Kind(
        lambda s, r: s.merge_dirs(s.dir_of(*r.points[:2]), s.dir_of(*r.points[2:])),
        lambda s, r: s.dir_of(*r.points[:2]) == s.dir_of(*r.points[2:]),
    ),
    Perpendicular: _Kind(
        lambda s, r: s.add_perp(s.dir_of(*r.points[:2]), s.dir_of(*r.points[2:])),
        lambda s, r: s.is_perp(s.dir_of(*r.points[:2]), s.dir_of(*r.points[2:])),
    ),
    EqualLength: _Kind(
        lambda s, r: s.merge_lengths(s.length_of(*r.points[:2]), s.length_of(*r.points[2:])),
        lambda s, r: s.length_of(*r.points[:2]) == s.length_of(*r.points[2:]),
    ),
    Midpoint: _Kind(_apply_midpoint, lambda s, r: s.has_midpoint(*r.points)),
    EqualLineAngles: _Kind(_apply_eqangle, _eqangle_implied),
    Concyclic: _Kind(lambda s, r: s.add_circle(r.points), lambda s, r: s.on_one_circle(r.points)),
    CircleThrough: _Kind(
        _apply_circle_through, lambda s, r: len({s.length_of(r.points[0], p) for p in r.points[1:]}) == 1
    ),
    SimilarTriangles: _Kind(_apply_triangles, lambda s, r: r in s.triangles),
    CongruentTriangles: _Kind(_apply_triangles, lambda s, r: r in s.triangles),
}
"""Relations the store can hold, each with how to add it and how to test it."""


def _as_relations(statements: tuple[Statement, ...], rename: dict[str, str]) -> frozenset[Relation] | None:
    try:
        return frozenset(build_relation(s.name, tuple(rename.get(a, a) for a in s.args)) for s in statements)
    except RelationError:
        return None


def symmetric_pairs(rule: Rule) -> list[tuple[str, str]]:
    """Variable pairs whose swap maps the rule to itself (premises and conclusions alike).

    Swaps generate a product of symmetric groups on blocks of variables, so asking ``x <= y`` for each
    such pair keeps exactly the sorted member of every orbit: each instance is found once, none is lost.
    """
    premises, conclusions = _as_relations(rule.premises, {}), _as_relations(rule.conclusions, {})
    if premises is None or conclusions is None:
        return []
    pairs: list[tuple[str, str]] = []
    for x, y in itertools.combinations(rule.variables, 2):
        swap = {x: y, y: x}
        if (
            _as_relations(rule.premises, swap) == premises
            and _as_relations(rule.conclusions, swap) == conclusions
        ):
            pairs.append((x, y))
    return pairs


DELTA_SHARE = 1.0
"""Above this sum over a join's atoms of the share of their table's rows that are recent, the whole
join is cheaper than its branches over the recent rows."""


@dataclass(frozen=True)
class ConclusionKey:
    """What decides whether a conclusion's instance in a join row is already implied.

    Either the store classes the conclusion is about (the directions of a ``para``, ``perp`` or
    ``eqangle``, the lengths of a ``cong``: row columns after the points), or its points in canonical
    order (``canon`` set; the columns are the points of its arguments), which fix the relation itself.
    Two rows with equal keys state conclusions that are implied together; since the store only grows,
    once one of them is implied (or added) every later one is, and :func:`_fire` skips it. With
    canonical points the key also fixes a conclusion that is no fact (a triangle paired with itself, or
    with neither orientation true on the diagram), so that is not tried again either.
    """

    columns: tuple[int, ...]
    canon: Canon | None = None
    _pick: Callable[[tuple[Any, ...]], tuple[Any, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # itemgetter of two or more columns returns their tuple, several times faster than a generator
        pick = itemgetter(*self.columns) if len(self.columns) > 1 else _single(self.columns)
        object.__setattr__(self, "_pick", pick)

    def of(self, row: tuple[Any, ...]) -> tuple[Any, ...]:
        """The key of one join row."""
        values: tuple[Any, ...] = self._pick(row)
        return values if self.canon is None else self.canon(values)


def _single(columns: tuple[int, ...]) -> Callable[[tuple[Any, ...]], tuple[Any, ...]]:
    """The columns of a row as a tuple, for fewer than two columns (where ``itemgetter`` gives no tuple)."""
    return lambda row: tuple(row[c] for c in columns)


@dataclass(frozen=True)
class CompiledRule:
    """A rule as one SQL query whose rows bind the rule's point variables."""

    rule: Rule
    sql: str
    variables: tuple[str, ...]
    """The point variables the first columns of a row bind, in order."""
    side_conditions: tuple[Statement, ...]
    """Diagrammatic premises, checked on the diagram for each row."""
    keys: tuple[ConclusionKey, ...] = ()
    """Per conclusion, what decides whether its instance in a row is implied (empty: none known)."""
    branches: tuple[tuple[str, str], ...] = ()
    """Per atom, its table and the join with that atom's row of version ``:since`` or later (the planner
    is told such rows are rare); the union of the branches whose tables were written since is the part of
    the join that is new since ``since``. Without the ``WITH`` clause of :attr:`views`."""
    views: str = ""
    """The ``WITH`` clause of the computed tables the join reads (:data:`VIEWS`), or empty; :attr:`sql`
    starts with it."""

    def binding(self, row: tuple[Any, ...]) -> dict[str, str]:
        """The point variables of one join row (the key columns after them are left out)."""
        return dict(zip(self.variables, row[: len(self.variables)], strict=True))

    def delta_sql(self, store: FactStore, since: int) -> str | None:
        """The SQL for the rows of the join that use a table row of version ``since`` or later.

        ``None`` when no table of the join was written since. When many rows are recent, one branch per
        atom costs more than the join itself, so then the whole join is returned.
        """
        chosen = [
            (table, sql)
            for table, sql in self.branches
            if max(store.written[t] for t in _read(table)) >= since
        ]
        if not chosen:
            return None
        share = store.recent_share(since)
        if sum(max(share(t) for t in _read(table)) for table, _ in chosen) >= DELTA_SHARE:
            return self.sql
        return self.views + " UNION ".join(sql for _, sql in chosen)


VIEW_VERTICES = 4
"""Distinct vertices a rule's vertex angles need for its join to read them from :data:`VIEWS`: the triangle
rules (r35 to r38: two angles of each of two triangles) join three to six times faster on final stores of
IMO-AG-30 problems, while for fewer vertices (e07's two bisectors, r05's inscribed angles) computing the
view costs more than the join of the angles spelled out."""


def _read(table: str) -> tuple[str, ...]:
    """The store's tables a join atom's table is made of (itself, or those a view reads)."""
    view = VIEWS.get(table)
    return (table,) if view is None else view[1]


_COMPILED: dict[tuple[Rule, bool], CompiledRule | None] = {}


def compile_rule(rule: Rule, *, every_row: bool = False) -> CompiledRule | None:
    """Compile a rule's premises to a join, or ``None`` when a predicate is not in the store yet.

    The search's join leaves out the rows whose conclusion the store already implies; ``every_row``
    keeps them (checking a proof step asks whether the rule gives the fact, implied or not: premises
    alone may imply it at once, as an equality of angles with a common side implies the parallel).
    Remembered per rule (rules and compiled rules are immutable): every search and every replayed step
    uses the same few dozen rules.
    """
    key = (rule, every_row)
    if key not in _COMPILED:
        if len(_COMPILED) >= 4096:
            _COMPILED.clear()
        _COMPILED[key] = _compile_rule(rule, drop_implied=not every_row)
    return _COMPILED[key]


def compile_default_rules() -> None:
    """Compile the rules :func:`deduce` uses by default now, so that workers forked later inherit them."""
    for rule in default_rules() + DEFINITION_RULES:
        compile_rule(rule)


def _compile_rule(rule: Rule, drop_implied: bool = True, plain: bool = False) -> CompiledRule | None:
    """The join of a rule (``drop_implied``: without the rows whose conclusion the store implies).

    ``plain``: the atoms as the premises spell them, without vertex angles read from :data:`VIEWS` and
    without merging atoms that must bind the same row (:func:`_merged`); the same rows.
    """
    if all(s.name in CHASING for s in rule.premises + rule.conclusions):
        return None  # angle or ratio chasing: the algebraic system's job, far too many rows as a join
    joined = tuple(s for s in rule.premises if s.name not in DIAGRAM_PREMISES)
    sides = tuple(s for s in rule.premises if s.name in DIAGRAM_PREMISES)
    if any(s.name not in PREMISE_ATOMS for s in joined):
        return None
    if any(_conclusion_kind(s.name) is None for s in rule.conclusions):
        return None
    atoms = _premise_atoms(joined, plain)
    order = join_order(atoms)
    # Each variable is read from the atom the join binds it in first, so a condition on it (a conclusion
    # not implied yet) is tested as soon as the join knows it, before the atoms after it multiply rows.
    first: dict[str, str] = {}
    where: list[str] = []
    for index in order if not plain else range(len(atoms)):
        table, terms = atoms[index]
        for column, term in zip(_COLUMNS[table], terms, strict=True):
            ref = f"t{index}.{column}"
            if term in first:
                where.append(f"{first[term]} = {ref}")
            else:
                first[term] = ref
    points = tuple(v for v in first if not v.startswith("_v"))
    if any(v not in first for s in rule.conclusions + sides for v in s.args):
        return None
    keys, extra = _conclusion_keys(rule, atoms, first, points)
    # Rows whose one conclusion the store already implies are dropped inside the join, as soon as its
    # classes are bound: _fire would skip every such row, so the derivations are the same.
    if drop_implied and len(rule.conclusions) == 1 and rule.conclusions[0].name in NOT_IMPLIED:
        refs = _conclusion_classes(rule.conclusions[0], _class_columns(atoms, first))
        if refs is not None:
            where.append(NOT_IMPLIED[rule.conclusions[0].name](refs))
    # Likewise a triangle paired with itself vertex for vertex, which is no fact (:func:`_oriented`):
    # three fifths to six sevenths of the rows of r33, r34, r35 and r37 on JGEX-AG-231.
    if drop_implied and len(rule.conclusions) == 1 and rule.conclusions[0].name in TRIANGLE_CONCLUSIONS:
        args = rule.conclusions[0].args
        same = " AND ".join(f"{first[x]} = {first[y]}" for x, y in zip(args[:3], args[3:], strict=True))
        where.append(f"NOT ({same})")
    # One instance per orbit of the rule's symmetric variable swaps (x <= y, as x = y may be bound).
    where.extend(f"{first[x]} <= {first[y]}" for x, y in symmetric_pairs(rule))
    # Four points of a `cyclic` premise must differ: any three points are concyclic, so a repeated point
    # makes the premise vacuous (r25's cyclic kite with A = B would give a right angle at every vertex).
    for s in joined:
        if s.name == "cyclic" and len(s.args) == 4:
            where.extend(f"{first[a]} <> {first[b]}" for a, b in itertools.combinations(s.args, 2) if a != b)
    columns = ", ".join([first[v] for v in points] + extra)
    used = sorted({table for table, _ in atoms if table in VIEWS})
    prefix = "WITH " + ", ".join(VIEWS[table][0] for table in used) + " " if used else ""
    sql = f"{prefix}SELECT DISTINCT {columns} FROM {_tables(atoms, order)}"
    if where:
        sql += " WHERE " + " AND ".join(where)
    branches = tuple(
        (
            table,
            f"SELECT {columns} FROM {_tables(atoms, join_order(atoms, i))} WHERE "
            + " AND ".join([f"likelihood(t{i}.v >= :since, 0.001)", *where]),
        )
        for i, (table, _) in enumerate(atoms)
    )
    return CompiledRule(rule, sql, points, sides, keys=tuple(keys), branches=branches, views=prefix)


def _premise_atoms(joined: tuple[Statement, ...], plain: bool) -> list[Atom]:
    """The table atoms of a rule's joined premises (``plain``: as spelled; see :func:`_compile_rule`)."""
    counter = itertools.count()
    atoms = [a for s in joined for a in PREMISE_ATOMS[s.name](s.args, lambda: f"_v{next(counter)}")]
    if plain or len({terms[0] for table, terms in atoms if table == "va"}) < VIEW_VERTICES:
        atoms = _spelled_out(atoms)
    return atoms if plain else _merged(atoms)


FUNCTIONAL: dict[str, int] = {"line": 2, "seg": 2, "dir": 1, "ang": 2}
"""Tables whose first columns decide the rest (a pair's line and length, a line's direction, the angle of
two directions), and how many columns decide."""


def _merged(atoms: list[Atom]) -> list[Atom]:
    """The atoms with those that must bind one row made one (until none is left).

    A premise spelled as atoms names a pair's line once per premise (r31's ``eqangle A B P Q C D U V``
    and ``perp P Q U V`` each read line ``P Q`` and its direction): such atoms can only agree, so their
    fresh variables are made one and the copies dropped. The join then ties the premises together by
    their classes, not through their points again.
    """
    while True:
        seen: dict[tuple[str, tuple[str, ...]], tuple[str, ...]] = {}
        parent: dict[str, str] = {}
        root = functools.partial(_root, parent)
        for table, terms in atoms:
            width = FUNCTIONAL.get(table)
            if width is None:
                continue
            decided = terms[:width]
            key = (table, tuple(sorted(decided)) if table in ("line", "seg") else decided)
            found = seen.setdefault(key, terms[width:])
            for mine, theirs in zip(terms[width:], found, strict=True):
                mine, theirs = root(mine), root(theirs)
                if mine != theirs and mine.startswith("_v") and theirs.startswith("_v"):
                    parent[max(mine, theirs, key=_number)] = min(mine, theirs, key=_number)
        if not parent:
            return atoms
        atoms = list(dict.fromkeys((table, tuple(root(t) for t in terms)) for table, terms in atoms))


def _root(parent: dict[str, str], term: str) -> str:
    """The variable ``term`` is renamed to (following ``parent`` links)."""
    while term in parent:
        term = parent[term]
    return term


def _number(term: str) -> int:
    """The number of a fresh variable (``_v12`` -> 12)."""
    return int(term[2:].split("_")[0])


def _spelled_out(atoms: list[Atom]) -> list[Atom]:
    """The atoms with each vertex angle as its two lines, their directions and the angle row."""
    out: list[Atom] = []
    for table, terms in atoms:
        if table != "va":
            out.append((table, terms))
            continue
        b, a, c, d1, d2, g = terms
        first, second = f"{d1}_line", f"{d2}_line"
        out += [
            ("line", (b, a, first)),
            ("dir", (first, d1)),
            ("line", (b, c, second)),
            ("dir", (second, d2)),
        ]
        out.append(("ang", (d1, d2, g)))
    return out


def _fan_out(spec: str) -> dict[frozenset[str], float]:
    """``"a b=1; l=4"`` -> ``{{a, b}: 1.0, {l}: 4.0}`` (``-`` for no column bound)."""
    found: dict[frozenset[str], float] = {}
    for part in spec.split(";"):
        columns, rows = part.split("=")
        found[frozenset(c for c in columns.split() if c != "-")] = float(rows)
    return found


FAN_OUT: dict[str, dict[frozenset[str], float]] = {
    "line": _fan_out("-=400; a=20; b=20; l=4; a b=1; a l=0.5; b l=0.5; a b l=0.1"),
    "dir": _fan_out("-=150; l=1; d=1.7; l d=0.1"),
    "perp": _fan_out("-=30; d1=0.3; d2=0.3; d1 d2=0.02"),
    "seg": _fan_out("-=400; a=20; b=20; s=4; a b=1; a s=0.2; b s=0.2; a b s=0.05"),
    "midp": _fan_out("-=10; m=0.3; a=0.3; b=0.3; a b=0.1; m a=0.05; m b=0.05; m a b=0.01"),
    "circ": _fan_out("-=50; p=1; k=8; p k=0.3"),
    "ang": _fan_out("-=300; d1=3; d2=3; g=4; d1 d2=0.05; g d1=0.3; g d2=0.3; d1 d2 g=0.01"),
    "va": _fan_out(
        "-=1000; g=10; b=50; a=50; c=50; d1=30; d2=30; a b=6; b c=6; a c=6; a b c=0.5; g b=3; g a=3; g c=3; "
        "g a b=1.5; g b c=1.5; g a c=1.5; g a b c=0.3; d1 d2=3; b d1=8; b d2=8; d1 d2 g=2; b d1 d2=1"
    ),
}
"""Rows a table gives for one binding of the named columns (below 1: the chance that a fully bound
row exists), for a store of about 20 points. Rough, taken from stores of IMO problems: what matters is
the order of magnitude between tables and between lookups."""


def _rows(table: str, bound: frozenset[str]) -> float:
    """The estimated rows of ``table`` for a binding of the columns ``bound`` (its best index)."""
    return min(n for columns, n in FAN_OUT[table].items() if columns <= bound)


def _greedy(atoms: list[Atom], first: int) -> tuple[list[int], float]:
    """From ``first``, each step the atom giving the fewest rows; the order and its estimated cost.

    The cost is the sum of the estimated rows after each atom, the work of the nested loops.
    """
    order, bound = [first], set(atoms[first][1])
    width = _rows(atoms[first][0], frozenset())
    cost = width
    while len(order) < len(atoms):
        best, fewest = -1, math.inf
        for i, (table, terms) in enumerate(atoms):
            if i in order:
                continue
            rows = _rows(
                table, frozenset(c for c, t in zip(_COLUMNS[table], terms, strict=True) if t in bound)
            )
            if rows < fewest:
                best, fewest = i, rows
        order.append(best)
        bound.update(atoms[best][1])
        width *= fewest
        cost += width
    return order, cost


def join_order(atoms: list[Atom], start: int | None = None) -> list[int]:
    """The order in which a join reads its atoms, which ``CROSS JOIN`` makes SQLite keep.

    Without statistics SQLite's planner often starts from the large ``line`` and ``seg`` tables and
    meets the selective ``ang`` rows last (r37: every triangle and every segment congruent to one of
    its sides before the angles are read). Here each step takes the atom whose table gives the fewest
    rows for the columns already bound (:data:`FAN_OUT`), ties to the earlier atom. ``start`` puts that
    atom first (the recent rows of a delta branch); without it the first atom of each table is tried as
    the start and the order of least estimated cost is kept.
    """
    if start is not None:
        return _greedy(atoms, start)[0]
    firsts: dict[str, int] = {}
    for i, (table, _) in enumerate(atoms):
        firsts.setdefault(table, i)
    return min((_greedy(atoms, i) for i in firsts.values()), key=lambda found: found[1])[0]


def _tables(atoms: list[Atom], order: list[int]) -> str:
    """The FROM list in ``order``; ``CROSS JOIN`` makes SQLite keep that order."""
    return " CROSS JOIN ".join(f"{atoms[i][0]} AS t{i}" for i in order)


def _conclusion_keys(
    rule: Rule, atoms: list[Atom], first: dict[str, str], points: tuple[str, ...]
) -> tuple[list[ConclusionKey], list[str]]:
    """Each conclusion's key, and the class columns the join must select after the points for them."""
    classes = _class_columns(atoms, first)
    extra: list[str] = []
    keys: list[ConclusionKey] = []
    for conclusion in rule.conclusions:
        refs = _conclusion_classes(conclusion, classes)
        if refs is None:  # its points in canonical order (every compiled conclusion has a kind)
            kind = _conclusion_kind(conclusion.name)
            canon = kind.canon if kind is not None else Relation.canon
            keys.append(ConclusionKey(tuple(points.index(a) for a in conclusion.args), canon))
            continue
        for ref in refs:
            if ref not in extra:
                extra.append(ref)
        keys.append(ConclusionKey(tuple(len(points) + extra.index(ref) for ref in refs)))
    return keys, extra


_CLASS_TABLE = {"para": "dir", "perp": "dir", "eqangle": "dir", "eqangle6": "dir", "cong": "seg"}
"""Conclusions whose store test reads only classes of point pairs, and the table of those classes."""


def _class_columns(atoms: list[Atom], first: dict[str, str]) -> dict[tuple[str, str, str], str]:
    """The column holding the class of each point pair the join binds: ``("dir", a, b)``, ``("seg", a, b)``."""
    found: dict[tuple[str, str, str], str] = {}
    line_dirs = {terms[0]: first[terms[1]] for table, terms in atoms if table == "dir"}
    for table, terms in atoms:
        a, b = sorted(terms[:2])
        if table == "line" and terms[2] in line_dirs:
            found.setdefault(("dir", a, b), line_dirs[terms[2]])
        elif table == "seg":
            found.setdefault(("seg", a, b), first[terms[2]])
        elif table == "va":  # its two lines through the vertex, with their directions
            vertex, x, y, d1, d2, _ = terms
            for end, direction in ((x, d1), (y, d2)):
                low, high = sorted((vertex, end))
                found.setdefault(("dir", low, high), first[direction])
    return found


def _conclusion_classes(
    conclusion: Statement, classes: dict[tuple[str, str, str], str]
) -> tuple[str, ...] | None:
    """The columns of the classes a conclusion's store test reads, or ``None`` when the join lacks one."""
    table = _CLASS_TABLE.get(conclusion.name)
    if table is None:
        return None
    refs: list[str] = []
    for i in range(0, len(conclusion.args), 2):
        a, b = sorted(conclusion.args[i : i + 2])
        ref = classes.get((table, a, b))
        if ref is None:
            return None
        refs.append(ref)
    return tuple(refs)


NOT_IMPLIED: dict[str, Callable[[tuple[str, ...]], str]] = {
    "para": lambda c: f"{c[0]} <> {c[1]}",
    "cong": lambda c: f"{c[0]} <> {c[1]}",
    "perp": lambda c: (
        f"NOT EXISTS (SELECT 1 FROM perp AS known WHERE known.d1 = {c[0]} AND known.d2 = {c[1]})"
    ),
    "eqangle": lambda c: (
        f"NOT ({_angles_equal(c[0], c[1], c[2], c[3])} AND {_angles_equal(c[0], c[2], c[1], c[3])})"
    ),
}
"""Per conclusion, the SQL condition that the store does not imply it yet, over the columns of its classes
(the class ids of the tables are representatives, and ``perp`` holds both orders): what its kind's
``implied`` tests, at the time of the join."""


TRIANGLE_CONCLUSIONS = frozenset({"simtri", "simtri2", "simtri*", "contri", "contri2", "contri*"})
"""Conclusions pairing two triangles, vertex for vertex."""


def _angles_equal(x0: str, x1: str, y0: str, y1: str) -> str:
    """SQL for :meth:`FactStore.angles_equal` of the angles ``(x0, x1)`` and ``(y0, y1)`` (columns)."""
    known = (
        f"EXISTS (SELECT 1 FROM ang AS p, ang AS q WHERE p.d1 = {x0} AND p.d2 = {x1} "
        f"AND q.d1 = {y0} AND q.d2 = {y1} AND p.g = q.g)"
    )
    return f"(CASE WHEN {x0} = {x1} OR {y0} = {y1} THEN ({x0} = {x1} AND {y0} = {y1}) ELSE {known} END)"


DEFINITION_RULES: tuple[Rule, ...] = (parse_rule("coll M A B, cong M A M B => midp M A B", "d01"),)
"""Rules that restate a predicate's definition (a midpoint is a collinear, equidistant point)."""


def _conclusion_kind(name: str) -> type[Relation] | None:
    sample = {
        "coll": Collinear,
        "para": Parallel,
        "perp": Perpendicular,
        "cong": EqualLength,
        "midp": Midpoint,
        "cyclic": Concyclic,
        "eqangle": EqualLineAngles,
        "eqangle6": EqualLineAngles,
        "simtri": SimilarTriangles,
        "simtri2": SimilarTriangles,
        "simtri*": SimilarTriangles,
        "contri": CongruentTriangles,
        "contri2": CongruentTriangles,
        "contri*": CongruentTriangles,
    }
    return sample.get(name)


class Derivation(BaseModel):
    """A fact the engine added, with the rule and the (instantiated) premises it came from."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)
    fact: AnyRelation
    """The new fact."""
    rule: str
    """The rule's name (``r07``)."""
    premises: tuple[AnyRelation, ...]
    """The rule's premises for this instance."""


class Deduction(BaseModel):
    """The outcome of running the rules to a fixpoint (or until the goal is implied)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)
    proved: bool
    """Whether the goal is implied by the final state."""
    givens: tuple[AnyRelation, ...]
    """Facts of the constructions that the store holds."""
    derivations: tuple[Derivation, ...]
    """Derived facts, in the order they were added."""
    rounds: int
    """Passes over the rules."""
    rejected: int
    """Rule conclusions refused because they fail numerically on the diagram (degenerate instances)."""
    diagram: Diagram | None = None
    """The diagram the search ran on (the algebra's lifting; tracing proofs)."""
    timed_out: bool = False
    """Whether the search stopped at its time limit (rather than at the goal or at closure)."""


def _instantiate(name: str, args: tuple[str, ...], binding: dict[str, str]) -> Relation | None:
    return _relation(name, tuple(binding[a] for a in args))


@lru_cache(maxsize=1 << 17)
def _relation(name: str, points: tuple[str, ...]) -> Relation | None:
    """A statement as a relation (``None`` if degenerate); relations are immutable, so rows share them."""
    try:
        return build_relation(name, points)
    except RelationError:
        return None


class _Numeric:
    """Numeric verdicts on one diagram, remembered (rows repeat the same side conditions)."""

    def __init__(self, diagram: Diagram) -> None:
        self.coords: dict[str, Vec] = diagram.coords()
        self._seen: dict[Relation, bool] = {}
        self._orient: dict[tuple[Relation | None, tuple[str, ...]], Relation | None] = {}

    def holds(self, relation: Relation) -> bool:
        verdict = self._seen.get(relation)
        if verdict is None:
            verdict = self._seen[relation] = holds(relation, self.coords)
        return verdict

    def oriented(self, fact: Relation | None, orientations: tuple[str, ...]) -> Relation | None:
        """:func:`_oriented`, remembered (a triangle pair recurs in many rows of a join)."""
        if not isinstance(fact, SimilarTriangles | CongruentTriangles):
            return fact
        key = (fact, orientations)
        if key not in self._orient:
            self._orient[key] = _oriented(fact, self, orientations)
        return self._orient[key]


ALGEBRA_FACTS = (DirectedAngleConstant, EqualRatios, RatioConstant, SimilarTriangles, CongruentTriangles)
"""Construction facts the store cannot hold but the algebraic system reads."""


def load_givens(store: FactStore, problem: Problem) -> list[Relation]:
    """Load the facts of a problem's constructions into ``store``; returns every given (stored or algebraic)."""
    givens: list[Relation] = []
    for step in compile_problem(problem):
        for fact in step.facts:
            kind = KINDS.get(type(fact))
            if kind is not None:
                kind.apply(store, fact)
                givens.append(fact)
            elif isinstance(fact, ALGEBRA_FACTS):
                givens.append(fact)
    return givens


def _goal_implied(store: FactStore, goal: Relation | None, derivations: list[Derivation]) -> bool:
    if goal is not None and derivations and derivations[-1].fact == goal:
        return True  # the algebra states goals the store cannot hold (eqratio) as a last derivation
    if isinstance(goal, EqualLineAngles):  # either equivalent form proves it
        return any(store.angles_equal(*form) for form in _angle_forms(store, goal.points))
    kind = None if goal is None else KINDS.get(type(goal))
    return goal is not None and kind is not None and kind.implied(store, goal)


def _side_condition(statement: Statement, binding: dict[str, str], numeric: _Numeric) -> bool:
    relation = _instantiate(statement.name, statement.args, binding)
    return relation is not None and numeric.holds(relation)


def _oriented(fact: Relation | None, numeric: _Numeric, orientations: tuple[str, ...]) -> Relation | None:
    """A triangle pair of unknown orientation made definite by the diagram (kept as is otherwise).

    Only ``orientations`` are tried: a rule whose premises compare directed angles (``eqangle6 B A B C Q P Q
    R``) proves equal triangle angles only for triangles of the same orientation; for mirrored ones those
    premises say the angles are supplementary, and a right angle on the diagram would make the mirrored
    congruence true for an invalid reason. ``None`` for a triangle paired with itself vertex for vertex
    (true of any triangle, so not a fact).
    """
    if not isinstance(fact, SimilarTriangles | CongruentTriangles):
        return fact
    if fact.points[:3] == fact.points[3:]:
        return None  # a triangle matched with itself, vertex for vertex: says nothing
    if fact.orientation != "any":
        return fact
    for orientation in orientations:
        definite = type(fact).of(*fact.points, orientation=orientation)
        if numeric.holds(definite):
            return definite
    return None if len(orientations) < 2 else fact


_Settled = tuple[int, tuple[Any, ...]]
"""A conclusion (its index in the rule) with its key in one row, once that key is settled."""


def _fire(
    store: FactStore,
    compiled: CompiledRule,
    numeric: _Numeric,
    deadline: float | None = None,
    since: int | None = None,
) -> tuple[list[Derivation], int] | None:
    """Apply one rule to every row of its join; ``None`` when the join ran past ``deadline``.

    With ``since`` (a :attr:`FactStore.clock` reading taken before this rule's previous join) only the
    rows that use a table row written since then are joined: the others were all seen by that join.
    An interrupted join has produced no row yet, so the rule adds nothing and the store is unchanged.
    """
    if since is None:
        rows = store.select(compiled.sql, deadline)
    else:
        delta = compiled.delta_sql(store, since)
        rows = [] if delta is None else store.select(delta, deadline, {"since": since})
    if rows is None:
        return None
    added: list[Derivation] = []
    rejected = 0
    angled = any(s.name.startswith("eqangle") for s in compiled.rule.premises)
    orientations = ("same",) if angled else ("same", "opposite")
    conclusions = compiled.rule.conclusions
    keys = compiled.keys
    unkeyed: list[tuple[int, _Settled | None]] = [(i, None) for i in range(len(conclusions))]
    settled: set[_Settled] = set()
    for row in rows:
        pending = unkeyed
        if keys:
            pending = [(i, key) for i, k in enumerate(keys) if (key := (i, k.of(row))) not in settled]
            if not pending:
                continue
        binding = compiled.binding(row)
        if not all(_side_condition(s, binding, numeric) for s in compiled.side_conditions):
            continue
        for i, key in pending:
            conclusion = conclusions[i]
            fact = numeric.oriented(_instantiate(conclusion.name, conclusion.args, binding), orientations)
            if fact is None:  # no fact; with canonical points as the key, none in any row with that key
                if key is not None and keys[i].canon is not None:
                    settled.add(key)
                continue
            if KINDS[type(fact)].implied(store, fact):
                if key is not None:
                    settled.add(key)
                continue
            if not numeric.holds(fact):
                rejected += 1
                continue
            KINDS[type(fact)].apply(store, fact)
            premises = tuple(
                p for s in compiled.rule.premises if (p := _instantiate(s.name, s.args, binding)) is not None
            )
            added.append(
                Derivation.model_validate({"fact": fact, "rule": compiled.rule.name, "premises": premises})
            )
            if key is not None:
                settled.add(key)
    return added, rejected


def _algebra_pass(
    store: FactStore,
    numeric: _Numeric,
    facts: list[Relation],
    goal: Relation | None,
    deadline: float | None = None,
) -> tuple[list[Derivation], int]:
    """One run of the algebraic system over every fact so far; new facts are gated and applied.

    Past ``deadline`` (a :func:`time.perf_counter` reading) the system stops between its stages and
    only the findings of the stages run so far are applied.
    """
    added: list[Derivation] = []
    rejected = 0
    for finding in algebra_findings(store, numeric.coords, facts, goal, deadline):
        fact = finding.fact
        kind = KINDS.get(type(fact))
        if kind is not None and kind.implied(store, fact):
            continue
        if not numeric.holds(fact):
            rejected += 1
            continue
        if kind is not None:
            kind.apply(store, fact)
        premises = tuple(facts[i] for i in sorted(finding.sources))
        added.append(Derivation.model_validate({"fact": fact, "rule": finding.rule, "premises": premises}))
    return added, rejected


def deduce(
    problem: Problem,
    diagram: Diagram,
    rules: tuple[Rule, ...] | None = None,
    max_rounds: int = 100,
    *,
    algebra: bool = True,
    time_limit: float | None = None,
) -> Deduction:
    """:func:`search` without its final store (see there)."""
    return search(problem, diagram, rules, max_rounds, algebra=algebra, time_limit=time_limit)[0]


def search(
    problem: Problem,
    diagram: Diagram,
    rules: tuple[Rule, ...] | None = None,
    max_rounds: int = 100,
    *,
    algebra: bool = True,
    time_limit: float | None = None,
) -> tuple[Deduction, FactStore]:
    """Alternate the compiled rules and the algebraic system until the goal holds or nothing is new.

    Each round passes once over the rules; a round that adds nothing hands over to the algebraic system
    (angle and ratio chasing over every fact so far), whose findings start the next round. The search
    stops at the goal, at closure (neither adds anything), after ``max_rounds`` or past ``time_limit``.
    Below the time limit the derivations do not depend on it.

    Args:
        problem: The problem (its constructions give the initial facts).
        diagram: A realised diagram of it (diagrammatic side conditions and the numeric gate).
        rules: The rules; when ``None``, :func:`~geosynth.engine.deduction.rules.default_rules` (the
            bundled ``rules.txt`` and the engine's own rules). :data:`DEFINITION_RULES` always apply.
        max_rounds: Cap on passes over the rule set.
        algebra: Whether to run the algebraic system (``False``: the compiled rules alone).
        time_limit: Seconds after which deduction stops (``None``: no limit), counted from the call.
            The clock is checked between rules, before the algebraic system and between its stages;
            a rule's join still running at the limit is interrupted and that rule adds nothing. The
            result then has ``timed_out`` set and ``proved`` says whether the facts found so far
            imply the goal. Work between two checks (one rule's rows, one algebraic stage) is not
            cut short, so the search can overrun the limit by that much.

    Returns:
        Whether the goal was proved, with every derivation; and the store as the search left it (the
        givens, then every derivation applied in order), which proof tracing reuses.
    """
    start = time.perf_counter()
    store = FactStore(problem.points)
    givens = load_givens(store, problem)
    # No ANALYZE here: statistics of the givens-only tables mislead the planner once they grow (measured:
    # bench_store's 20-point problem gains 2x, but JGEX wang3 goes from 2.8 s solved to over 60 s unsolved).
    chosen = (default_rules() if rules is None else rules) + DEFINITION_RULES
    compiled = [c for r in chosen if (c := compile_rule(r)) is not None]
    derivations: list[Derivation] = []
    numeric = _Numeric(diagram)
    deadline = None if time_limit is None else start + time_limit

    def late() -> bool:
        return deadline is not None and time.perf_counter() > deadline

    joined: list[int | None] = [None] * len(compiled)  # per rule: the clock when its last join started
    rejected, rounds, timed_out = 0, 0, False
    while rounds < max_rounds and not _goal_implied(store, problem.goal, derivations):
        if late():
            timed_out = True
            break
        rounds += 1
        before = len(derivations)
        for index, rule in enumerate(compiled):
            mark = store.tick()  # rows written from here on are new to this rule's next join
            fired = _fire(store, rule, numeric, deadline, joined[index])
            if fired is None:
                timed_out = True
                break
            joined[index] = mark
            derivations.extend(fired[0])
            rejected += fired[1]
            if late():
                timed_out = True
                break
        if timed_out:
            break
        if len(derivations) == before and algebra:
            added, refused = _algebra_pass(
                store, numeric, [*givens, *(d.fact for d in derivations)], problem.goal, deadline
            )
            derivations.extend(added)
            rejected += refused
            if late():  # the system may have skipped stages: nothing new is not closure
                timed_out = True
                break
        if len(derivations) == before:
            break
    deduction = Deduction.model_validate(
        {
            "proved": _goal_implied(store, problem.goal, derivations),
            "givens": tuple(givens),
            "derivations": tuple(derivations),
            "rounds": rounds,
            "rejected": rejected,
            "diagram": diagram,
            "timed_out": timed_out,
        }
    )
    return deduction, store
