"""Replaying a proof: re-derive every step from its own premises alone, independently of the search.

A proof is data (:class:`Proof`: the problem line and numbered steps, each a fact in predicate form, a
rule name and the numbers of the earlier steps it uses), so it can be stored as JSON and checked later
by code that shares nothing with the search but the rules and the algebra. :func:`replay` realises its
own diagram of the problem (an independent seed), used only for diagrammatic side conditions, and checks
each step by the checker its rule names (a table, :data:`CHECKERS`):

- ``given``: the fact is one of the problem's construction facts;
- ``diagram``: a diagrammatic relation (not collinear, sides...) that holds on the replay diagram;
- a rule of ``rules.txt`` (``r07``...) or of the engine's own ``engine_rules.txt`` (``e01``...): a
  fact store holding only the premises, the rule alone fired on it, its diagrammatic side conditions
  among the premises and true on the diagram; the step's fact must be one of the instances' conclusions;
- ``angle chasing``/``ratio chasing``: the angle and ratio systems built from the premises alone imply
  the fact; other algebraic rules (``similar triangles (ratios)``, ``length chasing``, the ratio-premise
  rules of ``rules.txt`` and ``engine_rules.txt`` that do not compile): the algebra's finders, run on
  the premises, find it;
- ``same line or circle``: a store holding the premises implies it (merged lines or circles);
- ``same segment``: a length equal to itself.

Each step gets ``ok`` or a one-line reason; the proof must end at the problem's goal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from pydantic import BaseModel, ConfigDict

from geosynth.engine.algebra.chasing import (
    ANGLE_RULE,
    RATIO_RULE,
    AngleSystem,
    RatioSystem,
    build_systems,
    goal_sources,
)
from geosynth.engine.algebra.findings import NAMED_RULES, algebra_findings
from geosynth.engine.deduction.deductive import DEFINITION_RULES, KINDS, compile_rule
from geosynth.engine.deduction.rules import Rule, default_rules
from geosynth.engine.diagram.numeric import holds
from geosynth.engine.diagram.realise import compile_problem, realise
from geosynth.engine.geometry.geometry import Vec
from geosynth.engine.language.predicates import build_relation, relation_text
from geosynth.engine.language.problem import Problem, parse_problem
from geosynth.engine.language.relations import (
    Between,
    CongruentTriangles,
    Distinct,
    EqualLength,
    EqualLineAngles,
    NotCollinear,
    NotParallel,
    NotPerpendicular,
    OppositeSide,
    Relation,
    SameSide,
    SimilarTriangles,
)
from geosynth.engine.store.factstore import FactStore
from geosynth.errors import GeoSynthError, RelationError

GIVEN = "given"
"""The rule name of a step that is a fact of the constructions."""
DIAGRAM = "diagram"
"""The rule name of a side condition read off the diagram (non-collinear, not parallel...)."""
SAME_SEGMENT = "same segment"
"""The rule name of a length equal to itself (a side two triangles share)."""
SAME_CLASSES = "same line or circle"
"""The rule name of a step implied by merged classes (e.g. two collinearities sharing two points)."""
DIAGRAMMATIC = (NotCollinear, NotParallel, NotPerpendicular, Distinct, SameSide, OppositeSide, Between)
"""Relations a proof takes from the diagram rather than proves."""
CHASING_RULES = frozenset({ANGLE_RULE, RATIO_RULE})
"""Rules whose facts the elimination derives as linear consequences (their supports can be minimised)."""
ALGEBRA_RULES = NAMED_RULES
"""Rules the algebraic systems apply (rules of ``rules.txt`` that do not compile are decided there too)."""
SEEDS = 3
"""Replay diagrams tried (a problem may have several configurations; the first that passes counts)."""


class ProofLine(BaseModel):
    """One step of a proof as data."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)
    number: int
    """The step's number, from 1."""
    fact: str
    """The fact in predicate form (``para a b c d``)."""
    rule: str
    """The rule (``r07``, ``angle chasing``, ``given``...)."""
    premises: tuple[int, ...]
    """Numbers of the earlier steps it uses."""


class Proof(BaseModel):
    """A proof of one problem's goal: what ``geo engine solve --proofs`` writes, one JSON line each."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)
    name: str
    """The problem's name."""
    problem: str
    """The problem line (``a b c = triangle a b c; ... ? goal``)."""
    steps: tuple[ProofLine, ...]
    """The steps, numbered from 1, each after the steps it uses; the last states the goal."""


class StepCheck(BaseModel):
    """The verdict on one step."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)
    number: int
    """The step's number."""
    ok: bool
    """Whether the step follows from its premises."""
    reason: str = ""
    """Why it does not (empty when ``ok``)."""


class ReplayReport(BaseModel):
    """The verdict on a whole proof."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)
    name: str
    """The problem's name."""
    ok: bool
    """Whether every step checks and the last one states the goal."""
    steps: tuple[StepCheck, ...]
    """One verdict per step, in order."""
    failed: StepCheck | None = None
    """The first failing step (``None`` when ``ok``)."""


@dataclass(frozen=True)
class StepContext:
    """What a step checker may look at: the problem's givens, the replay diagram and its points."""

    givens: frozenset[Relation]
    points: tuple[str, ...]
    coords: dict[str, Vec]


Checker = Callable[[str, Relation, tuple[Relation, ...], StepContext], str | None]
"""A step checker: ``(rule, fact, premises, context) -> None`` when the step holds, else the reason."""


def hold(store: FactStore, facts: Iterable[Relation]) -> FactStore:
    """``store`` with ``facts`` applied (those the store can hold; the rest are ignored here)."""
    for fact in facts:
        kind = KINDS.get(type(fact))
        if kind is not None:
            kind.apply(store, fact)
    return store


def premise_store(points: Sequence[str], premises: Sequence[Relation], *about: Relation) -> FactStore:
    """A fact store holding only ``premises`` (those the store can hold; the rest are ignored here).

    Its rows cover only the points of ``premises`` and of the facts ``about`` (to be tested on it),
    numbered as in a store over all of ``points``: a pair of other points has no fact, so no join row
    or equation of the premises' classes needs it, and a step's store is several times smaller than
    its problem's.
    """
    return hold(FactStore(points, only={p for f in (*premises, *about) for p in f.points}), premises)


def store_implies(store: FactStore, fact: Relation) -> bool:
    """Whether the store's classes imply ``fact`` (an ``eqangle`` in either of its stored forms)."""
    if isinstance(fact, EqualLineAngles):
        p = fact.points
        d = [store.dir_of(p[i], p[i + 1]) for i in range(0, 8, 2)]
        return store.angles_equal((d[0], d[1]), (d[2], d[3])) or store.angles_equal(
            (d[0], d[2]), (d[1], d[3])
        )
    kind = KINDS.get(type(fact))
    return kind is not None and kind.implied(store, fact)


def systems_of(
    store: FactStore, coords: dict[str, Vec], facts: list[Relation]
) -> tuple[AngleSystem, RatioSystem]:
    """Both systems, by :func:`build_systems` or from the facts' own equations alone.

    The second is the fallback when one of ``build_systems``' extra equation sources fails on these
    facts; ``facts`` is extended as ``build_systems`` does.
    """
    given = len(facts)
    try:
        return build_systems(store, coords, facts)
    except GeoSynthError:
        del facts[given:]
    angles, ratios = AngleSystem(store, coords), RatioSystem()
    for index, fact in enumerate(facts):
        for expr in angles.equations(fact):
            angles.system.add(expr, index)
        for expr in ratios.equations(fact):
            ratios.system.add(expr, index)
    return angles, ratios


def chased(
    rule: str, fact: Relation, premises: Sequence[Relation], points: Sequence[str], coords: dict[str, Vec]
) -> bool:
    """Whether the algebraic systems built from ``premises`` alone give ``fact``.

    A fact the premises' classes already imply passes. Angle and ratio chasing are asked directly (the
    fact's equations reduce to zero in that system); any other algebraic rule (triangles, ratio-premise
    rules, length chasing) by running every finder of the algebra on the premises and looking for the
    fact among that rule's findings.
    """
    store = premise_store(points, premises, fact)
    if store_implies(store, fact):
        return True
    if rule in CHASING_RULES:
        angles, ratios = systems_of(store, coords, list(premises))
        verdict = goal_sources(fact, angles, ratios)
        return verdict is not None and verdict[0] == rule
    findings = algebra_findings(store, coords, list(premises), fact, rule=rule)
    return any(f.fact == fact and f.rule == rule for f in findings)


def _given(rule: str, fact: Relation, premises: tuple[Relation, ...], ctx: StepContext) -> str | None:
    if premises:
        return "a given has no premises"
    return None if fact in ctx.givens else "not a fact of the problem's constructions"


def _diagram(rule: str, fact: Relation, premises: tuple[Relation, ...], ctx: StepContext) -> str | None:
    if not isinstance(fact, DIAGRAMMATIC):
        return f"{type(fact).__name__} is not a diagrammatic relation"
    return None if holds(fact, ctx.coords) else "false on the replay diagram"


def _same_segment(rule: str, fact: Relation, premises: tuple[Relation, ...], ctx: StepContext) -> str | None:
    same = isinstance(fact, EqualLength) and fact.points[:2] == fact.points[2:]
    return None if same else "not a segment equal to itself"


def _same_classes(rule: str, fact: Relation, premises: tuple[Relation, ...], ctx: StepContext) -> str | None:
    implied = store_implies(premise_store(ctx.points, premises, fact), fact)
    return None if implied else "not implied by the lines and circles of its premises"


def _chasing(rule: str, fact: Relation, premises: tuple[Relation, ...], ctx: StepContext) -> str | None:
    try:
        if chased(rule, fact, premises, ctx.points, ctx.coords):
            return None
    except GeoSynthError as err:
        return f"the algebra fails on its premises: {err}"
    return f"{rule} does not derive it from its premises"


@lru_cache(maxsize=1)
def rule_table() -> dict[str, Rule]:
    """Every rule a step may name: ``rules.txt``, the engine's own rules and the definitional rules."""
    return {rule.name: rule for rule in (*default_rules(), *DEFINITION_RULES)}


def _orient_like(conclusion: Relation, fact: Relation) -> Relation:
    """A triangle conclusion of unknown orientation, stated with the step's orientation."""
    if (
        isinstance(conclusion, SimilarTriangles | CongruentTriangles)
        and conclusion.orientation == "any"
        and type(conclusion) is type(fact)
    ):
        return type(conclusion).of(*conclusion.points, orientation=getattr(fact, "orientation", "any"))
    return conclusion


def _instance(name: str, args: tuple[str, ...], binding: dict[str, str]) -> Relation | None:
    try:
        return build_relation(name, tuple(binding[a] for a in args))
    except RelationError:
        return None


def _fires(rule: Rule, fact: Relation, premises: tuple[Relation, ...], ctx: StepContext) -> bool:
    compiled = compile_rule(rule, every_row=True)
    if compiled is None:
        return False
    store = premise_store(ctx.points, [p for p in premises if not isinstance(p, DIAGRAMMATIC)], fact)
    given = set(premises)
    for row in store.db.execute(compiled.sql).fetchall():
        binding = compiled.binding(row)
        sides = [_instance(s.name, s.args, binding) for s in compiled.side_conditions]
        if not all(s is not None and s in given and holds(s, ctx.coords) for s in sides):
            continue
        for conclusion in rule.conclusions:
            found = _instance(conclusion.name, conclusion.args, binding)
            if found is not None and _orient_like(found, fact) == fact:
                return True
    return False


def _rule(rule: str, fact: Relation, premises: tuple[Relation, ...], ctx: StepContext) -> str | None:
    known = rule_table().get(rule)
    if known is None:
        return f"unknown rule {rule!r}"
    if compile_rule(known) is None:  # a ratio-premise rule: the algebra applies it
        return _chasing(rule, fact, premises, ctx)
    if not holds(fact, ctx.coords):
        return "false on the replay diagram"
    return None if _fires(known, fact, premises, ctx) else f"rule {rule} does not give it from its premises"


CHECKERS: dict[str, Checker] = {
    GIVEN: _given,
    DIAGRAM: _diagram,
    SAME_SEGMENT: _same_segment,
    SAME_CLASSES: _same_classes,
    **dict.fromkeys(ALGEBRA_RULES, _chasing),
}
"""Rule name -> checker; any other name is looked up in :func:`rule_table` (``rules.txt``, the engine's rules)."""


def _read_fact(text: str) -> Relation:
    name, *args = text.split()
    return build_relation(name, tuple(args))


def check_step(rule: str, fact: Relation, premises: tuple[Relation, ...], ctx: StepContext) -> str | None:
    """``None`` when ``fact`` follows by ``rule`` from ``premises`` alone (on ``ctx``'s diagram), else why not."""
    return CHECKERS.get(rule, _rule)(rule, fact, premises, ctx)


def _check_step(line: ProofLine, facts: dict[int, Relation], ctx: StepContext) -> StepCheck:
    def bad(reason: str) -> StepCheck:
        return StepCheck(number=line.number, ok=False, reason=reason)

    try:
        fact = _read_fact(line.fact)
    except (RelationError, ValueError) as err:
        return bad(f"cannot read fact {line.fact!r}: {err}")
    missing = [n for n in line.premises if n not in facts or n >= line.number]
    facts[line.number] = fact  # later steps are judged on their own even when this one fails
    if missing:
        return bad(f"premise {missing[0]} is not an earlier step")
    premises = tuple(facts[n] for n in line.premises)
    reason = check_step(line.rule, fact, premises, ctx)
    return StepCheck(number=line.number, ok=True) if reason is None else bad(reason)


def _run(proof: Proof, problem: Problem, ctx: StepContext) -> ReplayReport:
    facts: dict[int, Relation] = {}
    checks: list[StepCheck] = []
    for index, line in enumerate(proof.steps):
        check = _check_step(line, facts, ctx) if line.number == index + 1 else None
        if check is None:
            check = StepCheck(
                number=line.number, ok=False, reason=f"step {index + 1} is numbered {line.number}"
            )
        checks.append(check)
    goal = problem.goal
    if checks and checks[-1].ok and goal is not None and facts.get(checks[-1].number) != goal:
        last = checks[-1].number
        checks[-1] = StepCheck(
            number=last, ok=False, reason=f"the proof ends here, not at {relation_text(goal)}"
        )
    if not checks:
        checks.append(StepCheck(number=0, ok=False, reason="the proof has no steps"))
    failed = next((c for c in checks if not c.ok), None)
    return ReplayReport(name=proof.name, ok=failed is None, steps=tuple(checks), failed=failed)


def replay(proof: Proof, seed: int = 1, attempts: int = 200) -> ReplayReport:
    """Check every step of ``proof`` from its premises alone, on diagrams realised here.

    Diagrams for seeds ``seed``, ``seed + 1``... (:data:`SEEDS` of them, goal checked) are tried in
    turn, as the diagram only decides side conditions and a problem may have several configurations;
    the first diagram on which every step checks makes the proof pass, else the first diagram's
    verdicts are reported.

    Args:
        proof: The proof (problem line and steps).
        seed: Seed of the first replay diagram (independent of the search's).
        attempts: Realisation attempts per diagram.

    Returns:
        Per-step verdicts and the first failure.

    Raises:
        ProblemSyntaxError: The proof's problem line does not parse.
        ConstructionFailed: No diagram of the problem could be realised.
    """
    problem = parse_problem(proof.problem, name=proof.name)
    givens = frozenset(fact for step in compile_problem(problem) for fact in step.facts)
    first: ReplayReport | None = None
    for offset in range(SEEDS):
        try:
            diagram = realise(
                problem, np.random.default_rng(seed + offset), attempts, check_goal=problem.goal is not None
            )
        except GeoSynthError:
            if offset == SEEDS - 1 and first is None:
                raise
            continue
        report = _run(proof, problem, StepContext(givens, problem.points, diagram.coords()))
        if report.ok:
            return report
        first = first or report
    if first is None:
        raise GeoSynthError(f"proof {proof.name!r}: no replay diagram was tried")
    return first
