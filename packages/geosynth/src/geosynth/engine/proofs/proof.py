"""Proofs: the goal's derivation traced back to the givens, minimised, linearised and printed.

:func:`trace_proof` walks the derivation of the goal in post-order (every fact after the facts it uses).
Facts the elimination derived (angle and ratio chasing) get their premises re-chosen: the fewest
source facts whose equations combine into the fact's (:func:`geosynth.engine.proofs.support.minimal_support`, L0 or
L1 in SCIP, verified exactly), plus the collinearities that make the lines they name the same lines
(:func:`geosynth.engine.proofs.support.class_premises`); the result is checked by the replay's own elimination check
and the elimination's source set is kept when it fails. :func:`format_proof` prints the raw numbered
steps; :func:`textbook_steps` merges and folds them for a reader (rule names and symbols are tables).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict

from geosynth.engine.algebra.chasing import AngleSystem, RatioSystem, build_systems, goal_sources
from geosynth.engine.algebra.lengths import LENGTH_RULE
from geosynth.engine.algebra.triangles import SIMILARITY_RULE
from geosynth.engine.deduction.deductive import Deduction, Derivation, compile_rule
from geosynth.engine.language.predicates import relation_text
from geosynth.engine.language.problem import Problem, format_problem
from geosynth.engine.language.relations import (
    CircleThrough,
    Collinear,
    Concyclic,
    EqualLength,
    Midpoint,
    Parallel,
    Relation,
)
from geosynth.engine.language.shapes import AnyRelation
from geosynth.engine.proofs.replay import (
    ALGEBRA_RULES,
    CHASING_RULES,
    DIAGRAM,
    DIAGRAMMATIC,
    GIVEN,
    SAME_CLASSES,
    SAME_SEGMENT,
    Proof,
    ProofLine,
    StepContext,
    check_step,
    hold,
    premise_store,
    rule_table,
    store_implies,
    systems_of,
)
from geosynth.engine.proofs.support import Method, chased_support, class_premises
from geosynth.engine.store.factstore import FactStore


class ProofStep(BaseModel):
    """One numbered line of a proof."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)
    number: int
    """The step's number, from 1."""
    fact: AnyRelation
    """What the step establishes."""
    rule: str
    """The rule (``r07``, ``angle chasing``, ``given``...)."""
    premises: tuple[int, ...]
    """Numbers of the earlier steps it uses."""


@dataclass(frozen=True)
class SupportRecord:
    """How one chased fact's premises changed under minimisation."""

    rule: str
    """``angle chasing`` or ``ratio chasing``."""
    before: int
    """Source facts the elimination combined."""
    after: int
    """Source facts kept (collinearities added for line classes not counted)."""
    minimised: bool
    """Whether the minimised set was used (``False``: it failed the check and the sources were kept)."""


@dataclass
class TracedProof:
    """A traced proof and what minimisation did to its chased steps."""

    steps: list[ProofStep]
    supports: list[SupportRecord] = field(default_factory=list[SupportRecord])


def _dedupe(facts: Sequence[Relation]) -> tuple[Relation, ...]:
    return tuple(dict.fromkeys(facts))


class Tracer:
    """Explains facts a proof uses: their own derivation, or how the final state implies them.

    :func:`trace_proof` drives one; :mod:`geosynth.synth` uses it directly to explain synthetic goals.
    """

    def __init__(
        self, deduction: Deduction, support: Method | None = None, store: FactStore | None = None
    ) -> None:
        """A tracer of ``deduction``'s facts.

        ``store`` is the search's final store (:func:`~geosynth.engine.deduction.deductive.search`),
        reused for :meth:`systems` instead of applying every fact to a new one (the same classes).
        """
        self.givens = set(deduction.givens)
        self.first: dict[Relation, Derivation] = {}
        for derivation in deduction.derivations:
            self.first.setdefault(derivation.fact, derivation)
        self.facts: list[Relation] = [*deduction.givens, *(d.fact for d in deduction.derivations)]
        self.index: dict[Relation, int] = {}
        for position, fact in enumerate(self.facts):
            self.index.setdefault(fact, position)
        diagram = deduction.diagram
        self.points: tuple[str, ...] = () if diagram is None else tuple(diagram.points)
        self.coords = {} if diagram is None else diagram.coords()
        self.support: Method | None = support
        self.records: list[SupportRecord] = []
        self.known: dict[tuple[Relation, int], Derivation] = {}
        self._systems: tuple[AngleSystem, RatioSystem] | None = None
        self._final = store if store is not None and store.points == self.points else None
        self._prefix: dict[int, tuple[AngleSystem, RatioSystem, list[Relation]]] = {}
        self.size = len(self.facts)
        """Facts known at the end of the search (``facts`` may grow: :meth:`systems` appends to it)."""

    def systems(self) -> tuple[AngleSystem, RatioSystem]:
        """The angle and ratio systems over every fact known at the end of the search (built once)."""
        if self._systems is None:
            final = self._final or hold(FactStore(self.points), self.facts)
            self._systems = build_systems(final, self.coords, self.facts)
        return self._systems

    def prefix_systems(self, limit: int) -> tuple[AngleSystem, RatioSystem, list[Relation]]:
        """Both systems over the facts known before fact ``limit`` (and the facts their sources index)."""
        if limit not in self._prefix:
            facts = list(self.facts[:limit])
            angles, ratios = systems_of(hold(FactStore(self.points), facts), self.coords, facts)
            self._prefix[limit] = (angles, ratios, facts)
        return self._prefix[limit]

    def explain(self, fact: Relation, limit: int | None = None) -> Derivation | None:
        """``None`` for a given; else the derivation to show for the fact.

        Args:
            fact: The fact.
            limit: How many facts were known when the step using it was taken (all when ``None``): a
                fact without a derivation of its own is explained from that state, not the final one.
        """
        if fact in self.givens:
            return None
        upto = self.size if limit is None else limit
        own = fact in self.first and self.index[fact] < upto
        key = (fact, -1 if own else upto)  # a fact's own derivation does not depend on the step using it
        if key not in self.known:
            self.known[key] = self._explain(fact, upto)
        return self.known[key]

    def _explain(self, fact: Relation, upto: int) -> Derivation:
        found = self.first.get(fact)
        if found is not None and self.index[fact] < upto:  # derived before the step that uses it
            limit = self.index[fact]
            if found.rule in CHASING_RULES:
                return self._chased(fact, found.rule, found.premises, limit)
            if _algebraic(found.rule):
                extra = class_premises([fact, *found.premises], self.facts[:limit])
                return self._ensure(_derivation(fact, found.rule, _dedupe([*found.premises, *extra])), limit)
            return self._ensure(found, limit)
        if isinstance(fact, DIAGRAMMATIC):
            return _derivation(fact, DIAGRAM, ())
        if isinstance(fact, EqualLength) and fact.points[:2] == fact.points[2:]:
            return _derivation(fact, SAME_SEGMENT, ())
        if self.coords:
            chased = self._from_systems(fact, upto)
            if chased is not None:
                return self._chased(fact, chased[0], chased[1], upto)
        # implied by merged classes (lines sharing two points, circles sharing three)
        pool = self.facts[:upto]
        pairs = list(itertools.combinations(fact.points, 2)) if isinstance(fact, Collinear) else []
        joining = class_premises([fact], pool, pairs)
        shared = [f for f in pool if f != fact and _shares_class(f, fact)]
        if isinstance(fact, Concyclic) and not store_implies(premise_store(self.points, shared, fact), fact):
            shared = _circle_chain(fact, pool, self.points) or shared
        return self._ensure(_derivation(fact, SAME_CLASSES, _dedupe([*shared, *joining])), upto)

    def _from_systems(self, fact: Relation, upto: int) -> tuple[str, tuple[Relation, ...]] | None:
        """The chasing rule and sources that imply ``fact`` from facts known before ``upto``, if any.

        Building the systems of a prefix is the costly part of tracing, so the systems already built
        are tried first: those of a shorter prefix (their sources were known earlier still), then the
        final ones when every source they combine comes before ``upto`` and the step checks over the
        classes known then (a line merged only by a later fact fails it); the systems of exactly this
        prefix are built last.
        """
        for limit in sorted((limit for limit in self._prefix if limit <= upto), reverse=True):
            found = self._chase_in(fact, *self._prefix[limit])
            if found is not None:
                return found
        angles, ratios = self.systems()
        found = self._chase_in(fact, angles, ratios, self.facts)
        if found is not None and all(self.index.get(s, upto) < upto for s in found[1]):
            full = _dedupe([*found[1], *class_premises([fact, *found[1]], self.facts[:upto])])
            if check_step(found[0], fact, full, self._context()) is None:
                return found
        if upto in self._prefix:
            return None
        return self._chase_in(fact, *self.prefix_systems(upto))

    @staticmethod
    def _chase_in(
        fact: Relation, angles: AngleSystem, ratios: RatioSystem, known: list[Relation]
    ) -> tuple[str, tuple[Relation, ...]] | None:
        verdict = goal_sources(fact, angles, ratios)
        if verdict is None or fact in (known[i] for i in verdict[1]):
            return None
        return verdict[0], tuple(known[i] for i in sorted(verdict[1]))

    def _context(self) -> StepContext:
        return StepContext(frozenset(self.givens), self.points, self.coords)

    def _ensure(self, derivation: Derivation, limit: int) -> Derivation:
        """The derivation, with facts of the same lines and circles added when its premises alone fail.

        A rule instance found over merged classes may rest on more than its recorded premises (a
        degenerate premise such as ``cyclic a b c a b d`` is not a relation and is not recorded): the
        collinearities, circles and equal lengths of the known facts that share points with it are
        added, then pruned one by one while the step still checks.
        """
        if not self.coords:
            return derivation
        ctx = self._context()
        fact, rule = derivation.fact, derivation.rule
        if check_step(rule, fact, derivation.premises, ctx) is None:
            return derivation
        named = {p for f in (fact, *derivation.premises) for p in f.points}
        pool = [
            f
            for f in self.facts[:limit]
            if isinstance(f, REPAIRS) and f != fact and len(named & set(f.points)) >= 2
        ]
        premises = list(_dedupe([*derivation.premises, *pool]))
        if check_step(rule, fact, tuple(premises), ctx) is not None:
            return derivation
        for extra in reversed(pool):
            if extra in derivation.premises:
                continue
            rest = tuple(p for p in premises if p != extra)
            if check_step(rule, fact, rest, ctx) is None:
                premises = list(rest)
        return _derivation(fact, rule, premises)

    def _chased(self, fact: Relation, rule: str, sources: Sequence[Relation], limit: int) -> Derivation:
        pool = self.facts[:limit]
        sources = _dedupe(sources)
        full = _dedupe([*sources, *class_premises([fact, *sources], pool)])
        if self.support is not None and self.coords:
            chosen = chased_support(fact, full, self.points, self.coords, self.support)
            if chosen is not None:
                candidate = _dedupe([*chosen, *class_premises([fact, *chosen], pool)])
                if check_step(rule, fact, candidate, self._context()) is None:
                    self.records.append(SupportRecord(rule, len(sources), len(chosen), True))
                    return _derivation(fact, rule, candidate)
            self.records.append(SupportRecord(rule, len(sources), len(sources), False))
        return _derivation(fact, rule, full)


REPAIRS = (Collinear, Midpoint, Concyclic, CircleThrough, EqualLength, Parallel)
"""Facts that merge the store's classes, added when a step's recorded premises do not replay alone."""


def _algebraic(rule: str) -> bool:
    """Whether the algebra derived facts of this rule (named rules that do not compile included)."""
    if rule in ALGEBRA_RULES:
        return True
    known = rule_table().get(rule)
    return known is not None and compile_rule(known) is None


def _derivation(fact: Relation, rule: str, premises: Sequence[Relation]) -> Derivation:
    return Derivation.model_validate({"fact": fact, "rule": rule, "premises": tuple(premises)})


def _shares_class(known: Relation, fact: Relation) -> bool:
    common = len(set(known.points) & set(fact.points))
    if isinstance(known, Collinear):
        return common >= 3  # it puts two of the fact's segments on one line
    return isinstance(known, Concyclic | CircleThrough) and type(known) is type(fact) and common >= 3


def _on_circle(fact: Relation) -> frozenset[str]:
    return frozenset(fact.points[1:] if isinstance(fact, CircleThrough) else fact.points)


def _circle_chain(fact: Concyclic, pool: Sequence[Relation], points: Sequence[str]) -> list[Relation]:
    """Circle facts of ``pool`` whose merged circle holds every point of ``fact``, pruned; empty if none.

    The store merges two circles that share three points, so a concyclicity of points that were put on
    one circle by different facts (``cyclic e x z o`` given, ``cyclic a x z o`` derived: then ``a e``
    and the other points of that circle are concyclic) rests on a chain of facts that may each share
    a single point with it. The facts of the merged circle are found by joining the point sets of the
    pool's circle facts that share three points; then each is dropped, latest first, while the rest
    still imply the fact.
    """
    circles: list[Relation] = [f for f in pool if f != fact and isinstance(f, Concyclic | CircleThrough)]
    groups: list[tuple[set[str], list[int]]] = []  # merged circles: their points, their facts
    for k, circle in enumerate(circles):
        on, members = set(_on_circle(circle)), [k]
        while (joined := next((g for g in groups if len(g[0] & on) >= 3), None)) is not None:
            groups.remove(joined)  # as the store joins circles: three common points make them one
            on |= joined[0]
            members += joined[1]
        groups.append((on, members))
    target = set(fact.points)
    home = next((members for points_on, members in groups if target <= points_on), None)
    if home is None:
        return []
    chosen = [circles[k] for k in sorted(home)]
    if not store_implies(premise_store(points, chosen, fact), fact):
        return []
    for extra in reversed(list(chosen)):
        rest = [f for f in chosen if f is not extra]
        if store_implies(premise_store(points, rest, fact), fact):
            chosen = rest
    return chosen


def trace_proof(
    problem: Problem, deduction: Deduction, support: Method | None = "l0", store: FactStore | None = None
) -> TracedProof:
    """The derivation of the goal in post-order, with a record of each chased step's minimisation.

    Args:
        problem: The problem.
        deduction: The engine's outcome on it.
        support: ``l0`` (fewest premises, MILP), ``l1`` (LP) or ``None`` (the elimination's sources).
        store: The search's final store, when at hand (:func:`~geosynth.engine.deduction.deductive.search`):
            the final systems are built on it rather than on a new store holding the same facts.

    Returns:
        The numbered steps (empty when the goal was not proved) and the minimisation records.
    """
    goal = problem.goal
    if goal is None or not deduction.proved or deduction.diagram is None:
        return TracedProof([])
    tracer = Tracer(deduction, support, store)
    numbers: dict[Relation, int] = {}
    steps: list[ProofStep] = []
    stack: list[tuple[Relation, bool, int]] = [(goal, False, tracer.size)]
    on_path: set[tuple[Relation, int]] = set()
    while stack:
        fact, expanded, limit = stack.pop()
        if fact in numbers:
            continue
        derivation = tracer.explain(fact, limit)
        premises = () if derivation is None else derivation.premises
        inner = min(limit, tracer.index.get(fact, limit))
        if not expanded:
            on_path.add((fact, limit))
            stack.append((fact, True, limit))
            stack.extend(
                (p, False, inner)
                for p in reversed(premises)
                if p not in numbers and (p, inner) not in on_path
            )
            continue
        numbers[fact] = len(steps) + 1
        rule = GIVEN if derivation is None else derivation.rule
        refs = tuple(dict.fromkeys(numbers[p] for p in premises if p in numbers and p != fact))
        steps.append(
            ProofStep.model_validate({"number": numbers[fact], "fact": fact, "rule": rule, "premises": refs})
        )
    return TracedProof(_used(steps, numbers[goal]), tracer.records)


def _used(steps: list[ProofStep], last: int) -> list[ProofStep]:
    """The steps the goal's step rests on (a premise re-explained earlier leaves others unused), renumbered."""
    needed = {last}
    for step in reversed(steps[:last]):
        if step.number in needed:
            needed.update(step.premises)
    renumber = {old: new for new, old in enumerate(sorted(needed), start=1)}
    return [
        step.model_copy(
            update={"number": renumber[step.number], "premises": tuple(renumber[p] for p in step.premises)}
        )
        for step in steps
        if step.number in needed
    ]


def proof_steps(
    problem: Problem, deduction: Deduction, support: Method | None = "l0", store: FactStore | None = None
) -> list[ProofStep]:
    """The derivation of the goal in post-order, from the givens it uses to the goal (empty if unproved)."""
    return trace_proof(problem, deduction, support, store).steps


def format_proof(steps: Sequence[ProofStep]) -> str:
    """A proof as numbered lines: ``3. para a b c d  [r07 from 1, 2]``."""
    lines: list[str] = []
    for step in steps:
        source = step.rule if not step.premises else f"{step.rule} from {', '.join(map(str, step.premises))}"
        lines.append(f"{step.number}. {relation_text(step.fact)}  [{source}]")
    return "\n".join(lines)


def proof_data(problem: Problem, steps: Sequence[ProofStep]) -> Proof:
    """A proof as data (problem line, steps with facts in predicate form) for JSON and :func:`replay`."""
    lines = tuple(
        ProofLine(number=s.number, fact=relation_text(s.fact), rule=s.rule, premises=s.premises)
        for s in steps
    )
    return Proof(name=problem.name, problem=format_problem(problem), steps=lines)


# --- Textbook form ----------------------------------------------------------------------------------

RULE_NAMES: dict[str, str] = {
    "r01": "two lines perpendicular to one line are parallel",
    "r02": "points equidistant from one centre are concyclic",
    "r03": "equal angles with a transversal make parallel lines",
    "r04": "inscribed angles on one chord are equal",
    "r05": "a chord seen under equal angles makes concyclic points",
    "r06": "equal inscribed angles stand on equal chords",
    "r07": "the midline of a triangle is parallel to its base",
    "r08": "intercept theorem",
    "r09": "angles with perpendicular arms are equal",
    "r10": "transitivity of equal angles",
    "r11": "transitivity of equal ratios",
    "r12": "converse of the angle bisector theorem",
    "r13": "angle bisector theorem",
    "r14": "base angles of an isosceles triangle",
    "r15": "a triangle with equal base angles is isosceles",
    "r16": "angle between tangent and chord",
    "r17": "converse of the tangent-chord angle",
    "r18": "inscribed angle is half the central angle",
    "r19": "converse of the central angle theorem",
    "r20": "the median to the hypotenuse is half of it",
    "r21": "angle in a semicircle",
    "r22": "a cyclic trapezoid is isosceles",
    "r23": "a point on the perpendicular bisector is equidistant from the ends",
    "r24": "two equidistant points span the perpendicular bisector",
    "r25": "a cyclic kite has right angles",
    "r26": "diagonals that bisect each other make a parallelogram",
    "r27": "diagonals of a parallelogram bisect each other",
    "r28": "converse of the intercept theorem",
    "r29": "parallel lines through one point coincide",
    "r30": "midpoints divide segments in equal ratios",
    "r31": "an angle equal to a right angle is right",
    "r32": "equal ratios over equal segments",
    "r33": "SSS congruence",
    "r34": "SAS congruence",
    "r35": "AA similarity",
    "r36": "AA similarity (mirrored)",
    "r37": "ASA congruence",
    "r38": "ASA congruence (mirrored)",
    "r39": "SSS similarity",
    "r40": "SAS similarity",
    "r41": "SSS similarity with a pair of equal sides (congruence)",
    "r42": "converse of the trapezoid intercept theorem",
    "r43": "trapezoid intercept theorem",
    "e01": "base angles of an isosceles trapezoid",
    "e02": "SAS congruence (mirrored)",
    "e03": "the centre of a circle is the centre of every circle through three of its points",
    "e04": "the perpendicular bisectors of two chords meet at the centre",
    "e05": "an angle bisector meets the perpendicular bisector of the opposite side on the circumcircle",
    "e06": "the altitudes of a triangle are concurrent",
    "e07": "the angle bisectors of a triangle are concurrent",
    "e08": "the medians of a triangle are concurrent",
    "e09": "equal chords subtend equal inscribed angles",
    "e10": "points of equal power are equally far from the centre",
    "d01": "a collinear point equidistant from the ends is the midpoint",
    GIVEN: "given",
    DIAGRAM: "read off the figure",
    SAME_CLASSES: "the same line or circle",
    SAME_SEGMENT: "a segment equals itself",
    "angle chasing": "angle chasing",
    "ratio chasing": "ratio chasing",
    LENGTH_RULE: "adding and comparing segment lengths",
    SIMILARITY_RULE: "similar triangles from sides and angles",
}
"""Rule id -> the short textbook name a sentence cites (unknown ids are cited as they are)."""


def _seg(*points: str) -> str:
    names = [p.upper() for p in points]
    return "".join(names) if all(len(p) == 1 for p in points) else " ".join(names)


def _listed(points: Sequence[str]) -> str:
    return ", ".join(p.upper() for p in points)


Render = Callable[[tuple[str, ...]], str]
SYMBOLS: dict[str, Render] = {
    "coll": lambda p: f"{_listed(p)} are collinear",
    "cyclic": lambda p: f"{_listed(p)} are concyclic",
    "circle": lambda p: f"{p[0].upper()} is the centre of a circle through {_listed(p[1:])}",
    "para": lambda p: f"{_seg(*p[:2])} ∥ {_seg(*p[2:4])}",
    "perp": lambda p: f"{_seg(*p[:2])} ⊥ {_seg(*p[2:4])}",
    "cong": lambda p: f"{_seg(*p[:2])} = {_seg(*p[2:4])}",
    "midp": lambda p: f"{p[0].upper()} is the midpoint of {_seg(*p[1:3])}",
    "eqangle": lambda p: f"∠({_seg(*p[0:2])}, {_seg(*p[2:4])}) = ∠({_seg(*p[4:6])}, {_seg(*p[6:8])})",
    "eqratio": lambda p: f"{_seg(*p[0:2])}/{_seg(*p[2:4])} = {_seg(*p[4:6])}/{_seg(*p[6:8])}",
    "simtri": lambda p: f"△{_seg(*p[:3])} ∼ △{_seg(*p[3:6])}",
    "simtri2": lambda p: f"△{_seg(*p[:3])} ∼ △{_seg(*p[3:6])} (mirrored)",
    "simtri*": lambda p: f"△{_seg(*p[:3])} ∼ △{_seg(*p[3:6])}",
    "contri": lambda p: f"△{_seg(*p[:3])} ≅ △{_seg(*p[3:6])}",
    "contri2": lambda p: f"△{_seg(*p[:3])} ≅ △{_seg(*p[3:6])} (mirrored)",
    "contri*": lambda p: f"△{_seg(*p[:3])} ≅ △{_seg(*p[3:6])}",
    "rconst": lambda p: f"{_seg(*p[0:2])}/{_seg(*p[2:4])} = {p[4]}/{p[5]}",
    "s_angle": lambda p: f"∠({_seg(p[1], p[0])}, {_seg(p[1], p[2])}) = {p[3]}°",
    "eqangle3": lambda p: f"∠{_seg(*p[:3])} = ∠{_seg(*p[3:6])}",
    "ncoll": lambda p: f"{_listed(p)} are not collinear",
    "diff": lambda p: " ≠ ".join(q.upper() for q in p),
    "npara": lambda p: f"{_seg(*p[:2])} ∦ {_seg(*p[2:4])}",
    "nperp": lambda p: f"{_seg(*p[:2])} is not ⊥ {_seg(*p[2:4])}",
    "between": lambda p: f"{p[1].upper()} lies between {p[0].upper()} and {p[2].upper()}",
    "sameside2": lambda p: f"{_listed(p[:2])} lie on the same side of {_seg(*p[2:4])}",
    "oppside": lambda p: f"{_listed(p[:2])} lie on opposite sides of {_seg(*p[2:4])}",
}
SYMBOLS["eqangle6"], SYMBOLS["eqratio6"] = SYMBOLS["eqangle"], SYMBOLS["eqratio"]
"""Predicate -> how a fact reads in a sentence (∠, ∥, ⊥, ≅, ∼; points upper-cased)."""


def symbolic(fact: str) -> str:
    """A fact in predicate form (``para a b c d``) as text with symbols (``AB ∥ CD``)."""
    name, *args = fact.split()
    render = SYMBOLS.get(name)
    return fact if render is None else render(tuple(args))


class TextbookStep(BaseModel):
    """One step of the textbook form: merged conclusions, folded trivial steps."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)
    number: int
    """The step's number, from 1."""
    facts: tuple[str, ...]
    """What it establishes (predicate form), several when one rule gives them from the same premises."""
    rule: str
    """The rule id."""
    reason: str
    """The rule's textbook name."""
    premises: tuple[int, ...]
    """Numbers of the earlier textbook steps it uses."""
    conditions: tuple[str, ...]
    """Side conditions read off the figure (predicate form)."""
    via: tuple[str, ...]
    """Facts folded in because the lines or circles of its premises already state them."""

    def sentence(self) -> str:
        """The step as one sentence with symbols."""
        facts = "; ".join(symbolic(f) for f in self.facts)
        if self.rule == GIVEN:
            return f"{self.number}. Given: {facts}."
        text = f"{self.number}. {facts} — {self.reason}"
        if self.premises:
            text += f", from {', '.join(map(str, self.premises))}"
        if self.via:
            text += f" (so {'; '.join(symbolic(v) for v in self.via)})"
        if self.conditions:
            text += f", as {'; '.join(symbolic(c) for c in self.conditions)}"
        return text + "."


TRIVIAL = frozenset({DIAGRAM, SAME_SEGMENT, SAME_CLASSES})
"""Rules whose steps are folded into the steps that use them."""


@dataclass
class _Folded:
    premises: list[int] = field(default_factory=list[int])
    conditions: list[str] = field(default_factory=list[str])
    via: list[str] = field(default_factory=list[str])


def _fold(line: ProofLine, lines: dict[int, ProofLine], memo: dict[int, _Folded]) -> _Folded:
    """The non-trivial premises a step really rests on, with its side conditions and folded facts."""
    if line.number in memo:
        return memo[line.number]
    out = _Folded()
    for number in line.premises:
        used = lines.get(number)
        if used is None or number >= line.number:
            continue
        if used.rule not in TRIVIAL:
            out.premises.append(number)
            continue
        if used.rule == DIAGRAM:
            out.conditions.append(used.fact)
        elif used.rule == SAME_CLASSES:
            inner = _fold(used, lines, memo)
            out.via += [*inner.via, used.fact]
            out.premises += inner.premises
            out.conditions += inner.conditions
    memo[line.number] = out
    return out


@dataclass
class _Entry:
    rule: str
    premises: tuple[int, ...]
    conditions: tuple[str, ...]
    facts: list[str] = field(default_factory=list[str])
    via: list[str] = field(default_factory=list[str])


def textbook_steps(proof: Proof) -> list[TextbookStep]:
    """The proof for a reader: trivial steps folded into their users, equal-premise steps merged.

    Diagrammatic steps become side conditions of the steps that use them, a fact implied by the lines or
    circles of its premises is folded into its user (which then rests on those premises), and steps of
    one rule with the same premises and conditions (all the givens, for one) become one step stating
    every conclusion. The last step (the goal) is always kept.
    """
    lines = {line.number: line for line in proof.steps}
    memo: dict[int, _Folded] = {}
    last = proof.steps[-1].number if proof.steps else 0
    groups: dict[tuple[object, ...], int] = {}
    merged: list[_Entry] = []
    renumber: dict[int, int] = {}
    for line in proof.steps:
        if line.rule in TRIVIAL and line.number != last:
            continue
        folded = _fold(line, lines, memo)
        premises = tuple(sorted({renumber[p] for p in folded.premises if p in renumber}))
        conditions = tuple(dict.fromkeys(folded.conditions))
        key = (line.rule, premises, conditions)
        index = groups.get(key)
        if index is None or line.number == last:
            groups[key] = index = len(merged)
            merged.append(_Entry(line.rule, premises, conditions))
        entry = merged[index]
        entry.facts.append(line.fact)
        entry.via = list(dict.fromkeys([*entry.via, *folded.via]))
        renumber[line.number] = index + 1
    return [
        TextbookStep(
            number=i + 1,
            facts=tuple(e.facts),
            rule=e.rule,
            reason=RULE_NAMES.get(e.rule, e.rule),
            premises=e.premises,
            conditions=e.conditions,
            via=tuple(e.via),
        )
        for i, e in enumerate(merged)
    ]


def format_textbook(steps: Sequence[TextbookStep]) -> str:
    """The textbook form as one sentence per line."""
    return "\n".join(step.sentence() for step in steps)
