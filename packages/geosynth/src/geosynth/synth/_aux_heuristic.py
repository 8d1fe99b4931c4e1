"""Auxiliary constructions without a language model: proposed from the figure, ranked numerically.

Candidates come from the problem's own figure: midpoints, feet of perpendiculars, circumcentres,
incentres, excentres and orthocentres of its triangles, reflections, parallelogram vertices,
intersections of its lines and circles, parallels and perpendiculars through the goal's points
meeting its lines, and tangency points (:func:`propose`). Each candidate is placed on the problem's
realised diagram and scored by what its new point does there, numerically (:func:`score_point`): a
point that falls on a line, a circle or a perpendicular bisector it was not built on, or makes a line
parallel or perpendicular to one of the figure's, reveals structure the engine may use; one that does
so with the goal's points counts more. :func:`heuristic_aux_search` checks the best few of each family
together with the engine (with the centre of a cyclic goal's circle), then the ranked candidates one
at a time (or several on one diagram), then two constructions deep, then random construction
sequences, within one time budget; every proof it returns has been replayed step
by step.
:func:`solve_all_with_aux` is what ``geo engine solve --aux SECONDS`` runs: plain deduction first (the
problems in parallel), then the search only where it fails, one problem at a time with its budget
shared over the cores: each worker process searches one share of the candidates (:class:`Share`), and
the first proof found stops the others.
"""

from __future__ import annotations

import functools
import itertools
import random
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Annotated

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, model_validator

from geosynth.engine import (
    CircleThrough,
    Collinear,
    Concyclic,
    Diagram,
    EqualLineAngles,
    Midpoint,
    Parallel,
    Perpendicular,
    Problem,
    Proof,
    SolveResult,
    compile_problem,
    deduce,
    default_definitions,
    extend_diagram,
    parse_clause,
    race_isolated,
    realise,
    solve,
    solve_all,
)
from geosynth.errors import GeoSynthError, ProblemSyntaxError
from geosynth.synth._aux import _ENUMERATORS, new_point_names, with_auxiliary
from geosynth.synth._aux_random import _add_random
from geosynth.synth._aux_search import AuxSearchResult, replayed_proof

Array = npt.NDArray[np.float64]

_FROZEN = ConfigDict(frozen=True, extra="forbid", strict=True)

FAMILIES: tuple[str, ...] = (
    "midpoint",
    "foot",
    "circle",
    "incenter",
    "mirror",
    "reflect",
    "intersection_ll",
    "intersection_lp",
    "intersection_lt",
    "parallelogram",
    "intersection_lc",
    "intersection_cc",
    "line_circum",
    "tangent",
    "lc_tangent",
    "orthocenter",
    "excenter",
)
"""Candidate families in tie-break order (earlier first when two candidates score the same).

The point-only ones (``midpoint``, ``foot``, ``circle``, ``mirror``, ``parallelogram``, ``incenter``,
``excenter``, ``orthocenter``, ``reflect``) draw their argument tuples from the enumeration table of
:func:`~geosynth.synth._aux.standard_constructions`, restricted to the figure where the table is large
(triangles of the figure for centres, its lines for reflections); the others combine the figure's
lines and circles: ``intersection_ll`` two lines, ``intersection_lp`` / ``intersection_lt`` a line and
the parallel / perpendicular through a goal point to another line, ``intersection_lc`` a line through a
point of a circle with a named centre, ``intersection_cc`` two such circles through a common point,
``line_circum`` the second point where a line through a point of a circle without a named centre meets
it, ``tangent`` the two tangency points from a goal point to a circle, ``lc_tangent`` where the tangent
at a circle's point meets a line."""

TOLERANCE = 1e-7
"""Relative numeric tolerance of the coincidence tests (the diagram's own precision is about 1e-12)."""


class HeuristicConfig(BaseModel):
    """Settings of :func:`heuristic_aux_search`."""

    model_config = _FROZEN
    group: Annotated[int, Field(ge=1)] = 1
    """Candidates the engine checks together on one diagram (a proof then keeps only those it uses).
    Deduction time grows faster than the number of points, so one at a time is the default."""
    depth: Annotated[int, Field(ge=1, le=3)] = 2
    """Constructions deep: 1 checks single candidates; 2 also candidates built on one of the best
    candidates' points; 3 also a second such step."""
    parents: Annotated[int, Field(ge=1)] = 6
    """Best single candidates expanded one level deeper (by each worker when several share the search:
    the best ``parents`` times ``parts`` are dealt out)."""
    max_candidates: Annotated[int, Field(ge=1)] = 4000
    """Candidates placed and scored per diagram, at most (goal points first)."""
    batch_size: Annotated[int, Field(ge=0)] = 4
    """Best candidates of one family checked together in the family batches (0: no batches)."""
    batch_share: Annotated[float, Field(gt=0, le=1)] = 0.4
    """Part of the budget the family batches may use before the single ranked candidates start."""
    batch_time_factor: Annotated[float, Field(ge=1)] = 10.0
    """A batch check's deduction time, as a multiple of a single check's: deduction time grows much
    faster than the number of points (IMO 2008 P1b: 3.8 s as given, about 40 s with five points more)."""
    ranked_share: Annotated[float, Field(gt=0, le=1)] = 0.6
    """Part of the budget the single ranked candidates may use before deeper candidates start."""
    deep_share: Annotated[float, Field(gt=0, le=1)] = 0.85
    """Part of the budget after which deeper candidates stop and random sequences take the rest."""
    random_length: Annotated[int, Field(ge=1)] = 3
    """Constructions per random sequence (drawn from the mining table, each on the previous points)."""
    node_time_limit: Annotated[float, Field(gt=0)] | None = None
    """Seconds of deduction per check; ``None``: 1.5 times the plain deduction's time plus one second,
    at least three seconds."""
    support: bool = True
    """Minimise chased steps' premises (L0) when tracing a found proof."""


class Share(BaseModel):
    """Which part of one problem's search a worker takes: ``index`` of ``parts``.

    The ranked candidates are dealt out in turn (part ``k`` checks the groups ``k``, ``k + parts``, ...),
    so every part starts with some of the best-ranked ones; so are the parents expanded one level
    deeper; each part draws its own random sequences. One part of one is the whole search.
    """

    model_config = _FROZEN
    index: Annotated[int, Field(ge=0)] = 0
    """This worker's part, from 0."""
    parts: Annotated[int, Field(ge=1)] = 1
    """Parts the search is split into (the worker processes)."""

    @model_validator(mode="after")
    def _exists(self) -> Share:
        if self.index >= self.parts:
            raise ValueError(f"part {self.index} of {self.parts} does not exist (parts count from 0)")
        return self

    def mine(self, position: int) -> bool:
        """Whether the item at ``position`` of a dealt list is this part's."""
        return position % self.parts == self.index


WHOLE = Share()
"""The whole search in one worker."""


@dataclass(frozen=True)
class Candidate:
    """One auxiliary clause with its new points left open: constructions over existing points."""

    family: str
    constructions: tuple[tuple[str, tuple[str, ...]], ...]
    """(construction name, its input points in order); the new points fill the definition's outputs."""
    outputs: int = 1
    """How many new points the clause creates."""

    def inputs(self) -> frozenset[str]:
        """The existing points the clause uses."""
        return frozenset(p for _, args in self.constructions for p in args)

    def clause(self, names: Sequence[str]) -> str:
        """The clause text with ``names`` as its new points (full form)."""
        defs = default_definitions()
        parts: list[str] = []
        for kind, args in self.constructions:
            definition = defs[kind]
            given = iter(args)
            new = iter(names)
            full = [next(new) if a in definition.outputs else next(given) for a in definition.args]
            parts.append(f"{kind} {' '.join(full)}")
        return f"{' '.join(names[: self.outputs])} = {', '.join(parts)}"


@dataclass(frozen=True)
class Ranked:
    """A candidate placed on a diagram, with its score."""

    candidate: Candidate
    points: dict[str, tuple[float, float]]
    """The new points' coordinates, under the placeholder names ``names``."""
    names: tuple[str, ...]
    score: float


# --- The figure -------------------------------------------------------------------------------------


def _pairs_of(rel: object) -> list[tuple[str, str]]:
    """Lines a given fact draws (as point pairs)."""
    if isinstance(rel, Collinear):
        return list(itertools.combinations(rel.points, 2))
    if isinstance(rel, Midpoint):
        m, a, b = rel.points
        return [(a, b), (m, a)]
    if isinstance(rel, Parallel | Perpendicular):
        a, b, c, d = rel.points
        return [(a, b), (c, d)]
    if isinstance(rel, EqualLineAngles):
        p = rel.points
        return [(p[i], p[i + 1]) for i in range(0, 8, 2)]
    return []


class Figure:
    """A problem's diagram as lines, circles and direction classes, for proposing and scoring."""

    def __init__(self, problem: Problem, diagram: Diagram) -> None:
        """Read the figure off the problem's given facts and its diagram (numerically)."""
        self.problem = problem
        self.names = list(problem.points)
        self.index = {n: i for i, n in enumerate(self.names)}
        self.coords: Array = np.array([diagram.points[n] for n in self.names], dtype=np.float64)
        self.scale = float(max(1.0, np.abs(self.coords).max()))
        self.tol = TOLERANCE * self.scale
        goal = problem.goal
        self.goal = frozenset(() if goal is None else goal.points)
        givens = [f for step in compile_problem(problem) for f in step.facts]
        seeds = {tuple(sorted(pair)) for f in givens for pair in _pairs_of(f) if pair[0] != pair[1]}
        if goal is not None:
            seeds |= {tuple(sorted(pair)) for pair in _pairs_of(goal) if pair[0] != pair[1]}
        self.lines = self._lines(seeds)
        self.centred, self.uncentred = self._circles(givens)
        self._triple_circles()
        self._direction_classes()

    # points on the line through two points / collinear groups
    def _on_line(self, i: int, j: int) -> frozenset[str]:
        a, b = self.coords[i], self.coords[j]
        u = (b - a) / np.linalg.norm(b - a)
        d = self.coords - a
        cross = np.abs(d[:, 0] * u[1] - d[:, 1] * u[0])
        return frozenset(self.names[k] for k in np.nonzero(cross < self.tol)[0])

    def _lines(self, seeds: set[tuple[str, ...]]) -> list[frozenset[str]]:
        lines: set[frozenset[str]] = set()
        for a, b in seeds:
            if a in self.index and b in self.index:
                lines.add(self._on_line(self.index[a], self.index[b]))
        n = len(self.names)
        for i, j in itertools.combinations(range(n), 2):  # collinear groups of three or more points
            group = self._on_line(i, j)
            if len(group) >= 3:
                lines.add(group)
        return sorted(lines, key=lambda s: (-len(s), self.indices(s)))

    def _circles(
        self, givens: Sequence[object]
    ) -> tuple[list[tuple[str, frozenset[str]]], list[frozenset[str]]]:
        """Circles with a named centre (centre, points on it) and circles through four or more points."""
        centred: set[tuple[str, frozenset[str]]] = set()
        for o in self.names:
            d = np.linalg.norm(self.coords - self.coords[self.index[o]], axis=1)
            order = np.argsort(d)
            k = 0
            while k < len(order):
                group = [int(order[k])]
                while k + 1 < len(order) and abs(d[order[k + 1]] - d[group[0]]) < self.tol:
                    k += 1
                    group.append(int(order[k]))
                k += 1
                if d[group[0]] > self.tol and len(group) >= 2:
                    centred.add((o, frozenset(self.names[g] for g in group)))
        for f in givens:  # a given circle through a single named point still counts
            if isinstance(f, CircleThrough):
                centre, *rest = f.points
                if rest:
                    r = np.linalg.norm(self.coords[self.index[rest[0]]] - self.coords[self.index[centre]])
                    d = np.linalg.norm(self.coords - self.coords[self.index[centre]], axis=1)
                    members = frozenset(self.names[k] for k in np.nonzero(np.abs(d - r) < self.tol)[0])
                    centred.add((centre, members))
        uncentred: set[frozenset[str]] = set()
        for f in givens:
            if isinstance(f, Concyclic):
                uncentred.add(frozenset(f.points))
        centred_order = sorted(centred, key=lambda c: (self.index[c[0]], self.indices(c[1])))
        return centred_order, sorted(uncentred, key=self.indices)

    def _triple_circles(self) -> None:
        """Every circle through three of the points (deduplicated), with its members."""
        found: dict[tuple[float, float, float], tuple[Array, float]] = {}
        for i, j, k in itertools.combinations(range(len(self.names)), 3):
            circle = _circumcircle(self.coords[i], self.coords[j], self.coords[k], self.tol)
            if circle is None or circle[1] > 1e3 * self.scale:
                continue
            c, r = circle
            key = (
                round(float(c[0]) / self.scale, 6),
                round(float(c[1]) / self.scale, 6),
                round(r / self.scale, 6),
            )
            found.setdefault(key, circle)
        centres = [c for c, _ in found.values()]
        self.circle_centres: Array = np.array(centres, dtype=np.float64).reshape(-1, 2)
        self.circle_radii: Array = np.array([r for _, r in found.values()], dtype=np.float64)
        self.circle_members: list[frozenset[str]] = []
        self.centre_names: list[str | None] = []
        for c, r in found.values():
            d = np.linalg.norm(self.coords - c, axis=1)
            self.circle_members.append(
                frozenset(self.names[m] for m in np.nonzero(np.abs(d - r) < self.tol)[0])
            )
            k = int(np.argmin(d))
            self.centre_names.append(self.names[k] if d[k] < self.tol else None)
        self.circle_goal = np.array([bool(m & self.goal) for m in self.circle_members], dtype=bool)
        extra = (
            m
            for m, name in zip(self.circle_members, self.centre_names, strict=True)
            if len(m) >= 4 and name is None
        )
        self.uncentred = sorted({*self.uncentred, *extra}, key=self.indices)
        self.pair_dist: Array = np.linalg.norm(self.coords[:, None, :] - self.coords[None, :, :], axis=2)

    def _direction_classes(self) -> None:
        """Directions of every line through two points, grouped; each class keeps its point pairs."""
        n = len(self.names)
        units: list[Array] = []
        pairs: list[list[tuple[str, str]]] = []
        for i, j in itertools.combinations(range(n), 2):
            v = self.coords[j] - self.coords[i]
            u = v / np.linalg.norm(v)
            if u[0] < 0 or (abs(u[0]) < 1e-12 and u[1] < 0):
                u = -u
            for k, w in enumerate(units):
                if abs(u[0] * w[1] - u[1] * w[0]) < TOLERANCE:
                    pairs[k].append((self.names[i], self.names[j]))
                    break
            else:
                units.append(u)
                pairs.append([(self.names[i], self.names[j])])
        self.class_units: Array = np.array(units, dtype=np.float64).reshape(-1, 2)
        self.class_pairs = pairs
        self.class_points = [frozenset(p for pair in ps for p in pair) for ps in pairs]

    def indices(self, points: frozenset[str] | set[str]) -> list[int]:
        """The points' positions in the problem's order, ascending (a key that renaming keeps)."""
        return sorted(self.index[p] for p in points)

    def ordered(self, points: frozenset[str] | set[str]) -> list[str]:
        """The points in the problem's order (where they are defined), not by name: renaming keeps it."""
        return [self.names[i] for i in self.indices(points)]

    def lines_through(self, point: str) -> list[frozenset[str]]:
        """The figure's lines through a point."""
        return [line for line in self.lines if point in line]


def _circumcircle(a: Array, b: Array, c: Array, tol: float) -> tuple[Array, float] | None:
    d = 2.0 * (a[0] * (b[1] - c[1]) + b[0] * (c[1] - a[1]) + c[0] * (a[1] - b[1]))
    if abs(d) < tol * tol:
        return None
    sa, sb, sc = a @ a, b @ b, c @ c
    ux = (sa * (b[1] - c[1]) + sb * (c[1] - a[1]) + sc * (a[1] - b[1])) / d
    uy = (sa * (c[0] - b[0]) + sb * (a[0] - c[0]) + sc * (b[0] - a[0])) / d
    centre = np.array([ux, uy], dtype=np.float64)
    return centre, float(np.linalg.norm(a - centre))


# --- Scoring ----------------------------------------------------------------------------------------


def score_point(figure: Figure, x: Array, inputs: frozenset[str]) -> float:
    """How much structure a new point at ``x`` shows on the figure, numerically.

    Each coincidence counts 1, and 2 when it involves a goal point: the point lies on a line through
    two or more existing points, on a circle through three, on a circle centred at an existing point
    through another, is equidistant from two points, or the line from it to a point is parallel or
    perpendicular to a line through two points. Coincidences its own construction implies (two of its
    inputs on the same line or circle, a circle centred at an input, the direction its construction
    prescribes) are not counted. Each goal point among the inputs adds 0.25.

    Returns:
        The score; ``-inf`` when the point coincides with an existing one.
    """
    d = figure.coords - x
    dist = np.linalg.norm(d, axis=1)
    if np.any(dist < figure.tol):
        return float("-inf")
    return (
        0.25 * len(inputs & figure.goal)
        + _line_score(figure, d / dist[:, None], inputs)
        + _distance_score(figure, dist, inputs)
        + _circle_score(figure, x, dist, inputs)
    )


def _weight(figure: Figure, points: frozenset[str] | set[str]) -> float:
    return 2.0 if figure.goal.intersection(points) else 1.0


def _line_score(figure: Figure, units: Array, inputs: frozenset[str]) -> float:
    """Lines through the point with two or more points on them; parallels and perpendiculars."""
    signs = np.where((units[:, 0] < 0) | ((np.abs(units[:, 0]) < 1e-12) & (units[:, 1] < 0)), -1.0, 1.0)
    units = units * signs[:, None]
    total = 0.0
    unassigned = list(range(len(figure.names)))
    cls = figure.class_units
    while unassigned:  # the existing points grouped by their direction from the point
        u = units[unassigned[0]]
        cross = np.abs(units[unassigned, 0] * u[1] - units[unassigned, 1] * u[0])
        chosen = [unassigned[k] for k in np.nonzero(cross < 10 * TOLERANCE)[0]]
        unassigned = [k for k in unassigned if k not in chosen]
        members = frozenset(figure.names[m] for m in chosen)
        if len(members) >= 2 and len(members & inputs) < 2:
            total += _weight(figure, members)
        para = np.abs(cls[:, 0] * u[1] - cls[:, 1] * u[0]) < 10 * TOLERANCE
        perp = np.abs(cls @ u) < 10 * TOLERANCE
        for k in np.nonzero(para | perp)[0]:
            pairs = figure.class_pairs[k]
            if para[k] and any(a in members and b in members for a, b in pairs):
                continue  # the line itself
            if members & inputs and any(a in inputs and b in inputs for a, b in pairs):
                continue  # the direction the construction prescribes
            total += _weight(figure, members | figure.class_points[k])
    return total


def _distance_score(figure: Figure, dist: Array, inputs: frozenset[str]) -> float:
    """Existing points at equal distances from the point (beyond the inputs it is built equidistant from)."""
    total = 0.0
    order = np.argsort(dist)
    k = 0
    while k < len(order):
        group = [int(order[k])]
        while k + 1 < len(order) and abs(dist[order[k + 1]] - dist[group[0]]) < figure.tol:
            k += 1
            group.append(int(order[k]))
        k += 1
        members = frozenset(figure.names[g] for g in group)
        extra = len(members) - max(1, len(members & inputs))
        if extra > 0:
            total += extra * _weight(figure, members)
    return total


def _circle_score(figure: Figure, x: Array, dist: Array, inputs: frozenset[str]) -> float:
    """Circles through three existing points, and circles centred at one through another, the point is on."""
    total = 0.0
    on = np.abs(np.linalg.norm(figure.circle_centres - x, axis=1) - figure.circle_radii) < figure.tol
    for k in np.nonzero(on)[0]:
        members = figure.circle_members[k]
        centre = figure.centre_names[k]
        if len(members & inputs) < 2 and (centre is None or centre not in inputs):
            total += 2.0 if figure.circle_goal[k] else 1.0
    hits = np.abs(figure.pair_dist - dist[:, None]) < figure.tol
    np.fill_diagonal(hits, False)
    for o in np.nonzero(hits.any(axis=1))[0]:
        if figure.names[o] not in inputs:
            through = {figure.names[p] for p in np.nonzero(hits[o])[0]}
            total += _weight(figure, {figure.names[o], *through})
    return total


# --- Proposals --------------------------------------------------------------------------------------


def _triangles(figure: Figure) -> list[tuple[str, str, str]]:
    """Triples of points whose three sides are lines of the figure."""
    on: dict[frozenset[str], bool] = {}
    for line in figure.lines:
        for a, b in itertools.combinations(sorted(line), 2):
            on[frozenset((a, b))] = True
    out: list[tuple[str, str, str]] = []
    for a, b, c in itertools.combinations(figure.names, 3):
        if all(frozenset(p) in on for p in ((a, b), (b, c), (a, c))) and not any(
            {a, b, c} <= line for line in figure.lines
        ):
            out.append((a, b, c))
    return out


def _one(family: str, *args: str) -> Candidate:
    return Candidate(family, ((family, args),))


def propose(figure: Figure) -> list[Candidate]:
    """Every candidate of every family (see :data:`FAMILIES`) on the figure, in family order."""
    out: dict[str, list[Candidate]] = {f: [] for f in FAMILIES}
    for candidate in (*_point_candidates(figure), *_line_candidates(figure), *_circle_candidates(figure)):
        out[candidate.family].append(candidate)
    return [c for f in FAMILIES for c in out[f]]


def _point_candidates(figure: Figure) -> Iterator[Candidate]:
    """Constructions over points: the enumeration table, triangle centres, reflections in lines."""
    pts = figure.names
    drawn = {frozenset(pair) for line in figure.lines for pair in itertools.combinations(sorted(line), 2)}
    for kind in ("midpoint", "foot", "circle", "mirror"):
        yield from (_one(kind, *args) for args in _ENUMERATORS[kind](pts))
    for a, b, c in _ENUMERATORS["parallelogram"](pts):
        if frozenset((a, b)) in drawn or frozenset((b, c)) in drawn:
            yield _one("parallelogram", a, b, c)
    for triangle in _triangles(figure):
        yield from (_one(kind, *triangle) for kind in ("incenter", "excenter", "orthocenter"))
    for a, b in (_span(figure, line) for line in figure.lines):
        yield from (_one("reflect", p, a, b) for p in pts if p not in (a, b))


def _span(figure: Figure, line: frozenset[str]) -> tuple[str, str]:
    """Two points naming a line (its first two in the problem's order)."""
    a, b = figure.ordered(line)[:2]
    return a, b


def _key_points(figure: Figure) -> list[str]:
    """The goal's points (every point when there is no goal)."""
    return [p for p in figure.names if p in figure.goal] or figure.names


def _line_candidates(figure: Figure) -> Iterator[Candidate]:
    """Two lines meeting; a line meeting the parallel or perpendicular to another through a goal point."""
    lines = figure.lines
    for l1, l2 in itertools.combinations(lines, 2):
        if not l1 & l2:
            yield _one("intersection_ll", *_span(figure, l1), *_span(figure, l2))
    for c in _key_points(figure):
        for l1, l2 in itertools.permutations(lines, 2):
            if c not in l1:
                yield _one("intersection_lp", *_span(figure, l1), c, *_span(figure, l2))
                yield _one("intersection_lt", *_span(figure, l1), c, *_span(figure, l2))


def _circle_candidates(figure: Figure) -> Iterator[Candidate]:
    """Lines and circles meeting circles, tangency points."""
    key = _key_points(figure)
    for centre, members in figure.centred:
        named = figure.ordered(members)[0]
        for b in figure.ordered(members):
            for line in figure.lines_through(b):
                if others := figure.ordered(line - {b, centre}):
                    yield _one("intersection_lc", others[0], centre, b)
            for line in figure.lines:
                if b not in line and (b in figure.goal or line & figure.goal):
                    yield Candidate(
                        "lc_tangent", (("lc_tangent", (b, centre)), ("on_line", _span(figure, line)))
                    )
        for a in key:
            if a not in members and a != centre:
                yield Candidate("tangent", (("tangent", (a, centre, named)),), outputs=2)
    for (o, m1), (w, m2) in itertools.combinations(figure.centred, 2):
        if o != w and (common := figure.ordered(m1 & m2)):
            yield _one("intersection_cc", o, w, common[0])
    for circle in figure.uncentred:
        a, b, c = figure.ordered(circle)[:3]
        for member in figure.ordered(circle):
            for line in figure.lines_through(member):
                if len(line & circle) == 1:
                    through = (member, figure.ordered(line - {member})[0])
                    yield Candidate("line_circum", (("on_line", through), ("on_circum", (a, b, c))))


def _place(
    candidate: Candidate, names: Sequence[str], known: set[str], diagram: Diagram, rng: np.random.Generator
) -> dict[str, tuple[float, float]] | None:
    """The new points of ``candidate`` (named ``names``) on ``diagram``; ``None`` if it does not realise."""
    try:
        clause = parse_clause(candidate.clause(names), known, default_definitions())
        placed = extend_diagram(diagram, clause, rng, attempts=2)
    except GeoSynthError:
        return None
    return {n: placed.points[n] for n in names[: candidate.outputs]}


def _place_key(points: dict[str, tuple[float, float]], scale: float) -> tuple[tuple[float, float], ...]:
    """Where new points are, rounded to the figure's scale (one key: the same place)."""
    return tuple(sorted((round(x / scale, 6), round(y / scale, 6)) for x, y in points.values()))


def ranked_candidates(
    problem: Problem,
    diagram: Diagram,
    *,
    max_candidates: int = 4000,
    require: frozenset[str] = frozenset(),
    seed: int = 0,
) -> list[Ranked]:
    """The candidates of a problem, placed on its diagram and ranked by :func:`score_point`.

    Candidates are placed in order of how many goal points they use, then in :data:`FAMILIES` order,
    up to ``max_candidates``; ones that do not realise on the diagram are dropped, and of several that
    put their new points at the same place only the first placed is kept. Sorted by score, highest
    first (ties keep family order).

    Args:
        problem: The problem (its goal gives the goal points).
        diagram: A diagram of it.
        max_candidates: Candidates placed, at most.
        require: Keep only candidates using at least one of these points (deeper levels: the parent's).
        seed: Seed of the placement of constructions with a free parameter.
    """
    figure = Figure(problem, diagram)
    proposals = [c for c in propose(figure) if not require or c.inputs() & require]
    order = {f: i for i, f in enumerate(FAMILIES)}
    proposals.sort(
        key=lambda c: (
            -len(c.inputs() & figure.goal),
            order[c.family],
            [figure.index[p] for _, args in c.constructions for p in args],
        )
    )
    names = tuple(new_point_names(problem, 2))
    known = set(problem.points)
    rng = np.random.default_rng(seed)
    seen: set[tuple[tuple[float, float], ...]] = set()
    out: list[tuple[float, int, Ranked]] = []
    for candidate in proposals[:max_candidates]:
        new = _place(candidate, names, known, diagram, rng)
        if new is None:
            continue
        where = _place_key(new, figure.scale)
        if where in seen:
            continue
        seen.add(where)
        inputs = candidate.inputs()
        value = sum(score_point(figure, np.array(p, dtype=np.float64), inputs) for p in new.values())
        if not np.isfinite(value):
            continue
        ranked = Ranked(candidate, new, names[: candidate.outputs], float(value))
        out.append((-ranked.score, order[candidate.family], ranked))
    out.sort(key=lambda item: (item[0], item[1]))
    return [r for _, _, r in out]


# --- The search -------------------------------------------------------------------------------------


@dataclass
class _State:
    problem: Problem
    diagram: Diagram
    deadline: float
    node_limit: float
    support: bool
    checked: int = 0
    placed: int = 0
    invalid: int = 0
    replay_failures: int = 0
    proof: Proof | None = None
    constructions: tuple[str, ...] = ()
    found_by: str = ""

    def left(self) -> float:
        return self.deadline - time.perf_counter()


def _check(
    state: _State, clauses: Sequence[str], diagram: Diagram, found_by: str, factor: float = 1.0
) -> bool:
    """Let the engine try the problem with ``clauses`` added, for ``factor`` times a check's time.

    On a proof, keep the clauses its steps use and replay it; a proof that does not replay is dropped.
    """
    limit = min(factor * state.node_limit, state.left())
    if limit <= 0.05:
        return False
    known = set(state.problem.points)
    defs = default_definitions()
    parsed = []
    for text in clauses:
        clause = parse_clause(text, known, defs)
        known.update(clause.points)
        parsed.append(clause)
    posed = with_auxiliary(state.problem, parsed)
    state.checked += 1
    deduction = deduce(posed, diagram, time_limit=limit)
    if not deduction.proved:
        return False
    found = replayed_proof(state.problem, parsed, deduction, "l0" if state.support else None)
    if found is None:
        state.replay_failures += 1
        return False
    proof, kept = found
    state.proof = proof
    state.constructions = kept
    state.found_by = found_by
    return True


def _batch(
    state: _State,
    base: Problem,
    diagram: Diagram,
    prefix: Sequence[str],
    items: Sequence[Ranked],
    found_by: str,
    factor: float = 1.0,
) -> bool:
    """Check ``items`` together (after the ``prefix`` clauses) on one diagram; ``factor`` as in ``_check``."""
    names = new_point_names(base, sum(r.candidate.outputs for r in items))
    points = dict(diagram.points)
    clauses = list(prefix)
    k = 0
    for r in items:
        mine = names[k : k + r.candidate.outputs]
        k += r.candidate.outputs
        clauses.append(r.candidate.clause(mine))
        points.update({new: r.points[old] for new, old in zip(mine, r.names, strict=True)})
    return _check(state, clauses, Diagram(points=points, attempts=diagram.attempts), found_by, factor)


def goal_centre(problem: Problem, diagram: Diagram, figure: Figure | None = None) -> Ranked | None:
    """The centre of a cyclic goal's circle as a candidate, when no point of the figure is there.

    Proving four points concyclic often goes through the circle's centre (equal distances from it),
    which the statement may not name. The centre is built on the three goal points with the most pairs
    on a circle of the figure with a named centre (the perpendicular bisector of such a pair passes
    through that centre, a fact the engine has), earlier goal points first on a tie. ``None`` for
    other goals, when a point already sits at the centre, or when the centre cannot be placed.
    """
    goal = problem.goal
    if not isinstance(goal, Concyclic):
        return None
    figure = Figure(problem, diagram) if figure is None else figure
    a, b, c = (figure.coords[figure.index[p]] for p in goal.points[:3])
    circle = _circumcircle(a, b, c, figure.tol)
    if circle is None or np.any(np.linalg.norm(figure.coords - circle[0], axis=1) < figure.tol):
        return None
    paired = {pair for _, members in figure.centred for pair in itertools.combinations(sorted(members), 2)}
    triples = list(itertools.combinations(goal.points, 3))
    best = max(
        triples, key=lambda t: sum(tuple(sorted(pair)) in paired for pair in itertools.combinations(t, 2))
    )
    candidate = _one("circle", *best)
    names = tuple(new_point_names(problem, 1))
    new = _place(candidate, names, set(problem.points), diagram, np.random.default_rng(0))
    return None if new is None else Ranked(candidate, new, names, 0.0)


def family_batches(
    problem: Problem, diagram: Diagram, ranked: Sequence[Ranked], size: int
) -> list[list[Ranked]]:
    """Groups of candidates checked together: the ``size`` best of each family, best family first.

    A proof may need several points of one kind at once (the second meeting points of three circles
    through a common point, the midpoints of three sides), which single candidates and their children
    reach only by luck. One check per family puts its best-ranked members on one diagram; a cyclic
    goal's centre (:func:`goal_centre`) joins every group. Families are ordered by their best member's
    rank; the proof keeps only the points it uses.
    """
    figure = Figure(problem, diagram)
    centre = goal_centre(problem, diagram, figure)
    where = None if centre is None else _place_key(centre.points, figure.scale)
    by_family: dict[str, list[Ranked]] = {}
    for r in ranked:
        if _place_key(r.points, figure.scale) != where:  # the centre under another construction
            members = by_family.setdefault(r.candidate.family, [])
            if len(members) < size:
                members.append(r)
    head = [] if centre is None else [centre]
    return [[*head, *members] for members in by_family.values()]


def _chunks(items: Sequence[Ranked], size: int) -> Iterator[Sequence[Ranked]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def heuristic_aux_search(
    problem: Problem,
    budget: float,
    *,
    seed: int = 0,
    config: HeuristicConfig | None = None,
    diagram: Diagram | None = None,
    plain_seconds: float | None = None,
    share: Share = WHOLE,
) -> AuxSearchResult:
    """Search auxiliary constructions without a model: family batches, single and deeper candidates.

    The root (the problem as given) is checked first unless ``plain_seconds`` says it already was.
    Then, in this order and within ``budget`` seconds in all:

    1. the family batches (:func:`family_batches`: the ``config.batch_size`` best candidates of each
       family together, with a cyclic goal's centre), each with ``config.batch_time_factor`` times a
       single check's time, until ``config.batch_share`` of the budget is spent or the batches end;
    2. the ranked candidates (:func:`ranked_candidates`), ``config.group`` at a time on one diagram,
       until ``config.ranked_share`` of the budget is spent or the list ends;
    3. with ``depth`` 2 or 3, for each of the ``config.parents`` best candidates, the candidates built
       on its new point, ranked on its diagram and checked ``group`` at a time with it (depth 3 goes
       one step further below the best of those), until ``config.deep_share`` of the budget;
    4. random construction sequences (``config.random_length`` constructions from the mining table
       :data:`~geosynth.synth._aux_random.RANDOM_CONSTRUCTIONS`, each over the points so far) until the
       budget ends.

    The first proof found ends the search. It keeps only the added clauses its steps mention (and the
    clauses those are built from), and it must replay step by step on fresh diagrams of the problem
    with those clauses (:func:`geosynth.engine.replay`); a proof that does not replay is dropped and the
    search goes on. A check that starts near the end of the budget gets only what is left; the engine
    checks its limit between rules, so one rule's work can overrun it a little.

    Args:
        problem: A problem with a goal.
        budget: Seconds for the whole search.
        seed: Seed of the diagram (when ``diagram`` is not given) and of the random sequences.
        config: Search settings (:class:`HeuristicConfig`).
        diagram: The problem's diagram (goal checked), when the caller has realised it already.
        plain_seconds: Seconds the plain deduction took when the caller ran it (then the root is not
            checked again); sets the default time per check.
        share: The part of the search this call makes when several processes share the budget
            (:class:`Share`; the root is checked by part 0 only); the whole search by default.

    Returns:
        The outcome: ``constructions`` (empty when the problem was proved as given), ``proof``,
        ``nodes_checked`` (engine runs), ``proposals`` (candidates placed), ``invalid`` (proofs that
        did not replay), ``depth`` (constructions kept) and ``reasons`` (how the proof was found).

    Raises:
        ProblemSyntaxError: The problem has no goal.
        ConstructionFailed: The problem itself cannot be realised.
    """
    cfg = HeuristicConfig() if config is None else config
    if problem.goal is None:
        raise ProblemSyntaxError("auxiliary search needs a goal to prove", clause=problem.text())
    start = time.perf_counter()
    root = realise(problem, np.random.default_rng(seed), check_goal=True) if diagram is None else diagram
    limit = cfg.node_time_limit
    state = _State(problem, root, start + budget, limit if limit is not None else budget, cfg.support)
    if plain_seconds is None and share.index == 0:
        began = time.perf_counter()
        if _check(state, [], root, "as given"):
            return _result(state, start)
        plain_seconds = time.perf_counter() - began
    if limit is None:
        state.node_limit = max(3.0, 1.5 * (plain_seconds or 0.0) + 1.0)
    _search(state, problem, root, cfg, seed, start, budget, share)
    return _result(state, start)


def _search(
    state: _State,
    problem: Problem,
    root: Diagram,
    cfg: HeuristicConfig,
    seed: int,
    start: float,
    budget: float,
    share: Share,
) -> bool:
    ranked_end = start + cfg.ranked_share * budget
    deep_end = start + cfg.deep_share * budget
    ranked = ranked_candidates(problem, root, max_candidates=cfg.max_candidates, seed=seed)
    state.placed += len(ranked)
    if cfg.batch_size:
        batch_end = start + cfg.batch_share * budget
        for position, items in enumerate(family_batches(problem, root, ranked, cfg.batch_size)):
            if time.perf_counter() > batch_end or state.left() <= 0:
                break
            factor = cfg.batch_time_factor
            if share.mine(position) and _batch(state, problem, root, [], items, "family batch", factor):
                return True
    for position, items in enumerate(_chunks(ranked, cfg.group)):
        if time.perf_counter() > ranked_end or state.left() <= 0:
            break
        if share.mine(position) and _batch(state, problem, root, [], items, "ranked"):
            return True
    if cfg.depth >= 2:
        parents = ranked[: cfg.parents * share.parts]
        for position, parent in enumerate(parents):
            if time.perf_counter() > deep_end or state.left() <= 0:
                break
            if share.mine(position) and _below(state, problem, root, [], parent, cfg, seed, deep_end, 2):
                return True
    return _random(state, problem, root, cfg, seed, share)


def _below(
    state: _State,
    problem: Problem,
    diagram: Diagram,
    prefix: list[str],
    parent: Ranked,
    cfg: HeuristicConfig,
    seed: int,
    end: float,
    level: int,
) -> bool:
    """Check the candidates built on ``parent``'s new points (with ``prefix`` and ``parent`` added)."""
    names = new_point_names(problem, parent.candidate.outputs)
    text = parent.candidate.clause(names)
    grown = with_auxiliary(problem, [parse_clause(text, set(problem.points), default_definitions())])
    moved = {new: parent.points[old] for new, old in zip(names, parent.names, strict=True)}
    extended = Diagram(points={**diagram.points, **moved}, attempts=diagram.attempts)
    children = ranked_candidates(
        grown, extended, max_candidates=cfg.max_candidates, require=frozenset(names), seed=seed
    )
    state.placed += len(children)
    for items in _chunks(children, cfg.group):
        if time.perf_counter() > end or state.left() <= 0:
            return False
        if _batch(state, grown, extended, [*prefix, text], items, f"depth {level}"):
            return True
    if level < cfg.depth:
        for child in children[: max(1, cfg.parents // 3)]:
            if _below(state, grown, extended, [*prefix, text], child, cfg, seed, end, level + 1):
                return True
    return False


def _random(
    state: _State, problem: Problem, root: Diagram, cfg: HeuristicConfig, seed: int, share: Share
) -> bool:
    # Each part of a shared search draws its own stream; a whole search keeps the historical one.
    tag = f":{share.index}" if share.parts > 1 else ""
    rng = random.Random(f"aux-heuristic:{seed}:{problem.name}{tag}")
    np_rng = np.random.default_rng(rng.getrandbits(63))
    while state.left() > 0.05:
        grown, diagram = problem, root
        clauses: list[str] = []
        for _ in range(cfg.random_length):
            step = _add_random(grown, diagram, rng, np_rng)
            if step is None:
                break
            grown, diagram = step
            clauses.append(grown.clauses[-1].text())
        if not clauses:
            return False
        state.placed += len(clauses)
        if _check(state, clauses, diagram, "random"):
            return True
    return False


def _result(state: _State, start: float) -> AuxSearchResult:
    solved = state.proof is not None
    reasons = {state.found_by: 1} if solved else {}
    if state.replay_failures:
        reasons["proof did not replay"] = state.replay_failures
    return AuxSearchResult(
        solved=solved,
        constructions=state.constructions,
        problem=state.proof.problem if state.proof is not None else state.problem.text(),
        nodes_checked=state.checked,
        proposals=state.placed,
        invalid=state.replay_failures,
        duplicates=0,
        reasons=reasons,
        rejected=(),
        depth=len(state.constructions),
        seconds=time.perf_counter() - start,
        timed_out=not solved and state.left() <= 0.05,
        proof=state.proof,
    )


# --- Solving files ----------------------------------------------------------------------------------


def solve_with_aux(
    problem: Problem,
    aux: float,
    *,
    seed: int = 0,
    time_limit: float | None = None,
    config: HeuristicConfig | None = None,
) -> SolveResult:
    """Solve a problem as given; when that fails, spend up to ``aux`` seconds of auxiliary search.

    Everything runs in this process (:func:`solve_all_with_aux` shares the search over processes). The
    result is the engine's :class:`~geosynth.engine.SolveResult` with ``aux`` set: the clauses added
    (full form), empty when none were needed or none was found. A solved result's proof is the proof of
    the problem with those clauses (replayed when clauses were added).

    Raises:
        ConstructionFailed: The problem cannot be realised.
    """
    start = time.perf_counter()
    plain, _ = solve(problem, seed, time_limit)
    if not _needs_search(problem, plain, aux):
        return plain.model_copy(update={"aux": ()})
    found = _search_part(problem, plain, aux, seed, config, WHOLE)
    return found.model_copy(update={"seconds": time.perf_counter() - start})


def _needs_search(problem: Problem, plain: SolveResult, aux: float) -> bool:
    return not plain.solved and plain.error is None and problem.goal is not None and aux > 0


def _search_part(
    problem: Problem,
    plain: SolveResult,
    aux: float,
    seed: int,
    config: HeuristicConfig | None,
    share: Share,
) -> SolveResult:
    """One part of the search after the plain deduction ``plain`` failed, as a solve result."""
    diagram = realise(problem, np.random.default_rng(seed), check_goal=True)
    found = heuristic_aux_search(
        problem, aux, seed=seed, config=config, diagram=diagram, plain_seconds=plain.seconds, share=share
    )
    proof = found.proof
    return SolveResult(
        name=problem.name,
        solved=found.solved,
        seconds=plain.seconds + found.seconds,
        steps=0 if proof is None else len(proof.steps),
        timed_out=plain.timed_out and not found.solved,
        proof=proof,
        aux=found.constructions,
    )


@dataclass(frozen=True)
class _Part:
    problem: Problem
    plain: SolveResult
    share: Share


def _part_worker(
    part: _Part,
    _limit: float,
    conn: Connection,
    *,
    aux: float,
    seed: int,
    config: HeuristicConfig | None,
) -> None:
    try:
        result = _search_part(part.problem, part.plain, aux, seed, config, part.share)
    except GeoSynthError as err:
        result = SolveResult(
            name=part.problem.name, solved=False, seconds=0.0, steps=0, error=str(err), aux=()
        )
    conn.send(result.model_dump_json())
    conn.close()


def solve_all_with_aux(
    problems: Sequence[Problem],
    aux: float,
    *,
    timeout: float = 60.0,
    jobs: int = 1,
    seed: int = 0,
    config: HeuristicConfig | None = None,
) -> Iterator[SolveResult]:
    """Plain deduction on every problem, then up to ``aux`` seconds of search on each it does not prove.

    The plain runs go as :func:`~geosynth.engine.solve_all` (``jobs`` worker processes, each killed at
    ``timeout`` seconds). Then the unproved problems are searched one after another, each over ``jobs``
    worker processes sharing its budget (:class:`Share`): the first proof found stops the other parts,
    and every part is killed at ``1.1 * aux + 5`` seconds (a problem whose parts all end that way is
    ``timed_out`` and unsolved, with no ``aux``). Results come in input order, so the problems after the
    first unproved one come once the plain runs are over and the searches before them are done. Which
    proof is found first can depend on ``jobs``.
    """
    plain = solve_all(problems, timeout=timeout, jobs=jobs, seed=seed)
    waiting: list[tuple[Problem, SolveResult]] = []
    for problem, result in zip(problems, plain, strict=True):
        if waiting or _needs_search(problem, result, aux):
            waiting.append((problem, result))
        else:
            yield result.model_copy(update={"aux": ()})
    work = functools.partial(_part_worker, aux=aux, seed=seed, config=config)
    hard = 1.1 * aux + 5.0
    for problem, result in waiting:
        if not _needs_search(problem, result, aux):
            yield result.model_copy(update={"aux": ()})
            continue
        start = time.perf_counter()
        parts = [_Part(problem, result, Share(index=k, parts=max(1, jobs))) for k in range(max(1, jobs))]
        found = race_isolated(parts, problem.name, work, hard)
        yield found.model_copy(update={"seconds": result.seconds + time.perf_counter() - start})
