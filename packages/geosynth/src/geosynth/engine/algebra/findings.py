"""One run of the algebraic system: build the angle and ratio systems from the facts, read off what is new.

The deductive loop (:func:`geosynth.deduce`) calls :func:`algebra_findings` whenever a pass over the rules
adds nothing; the findings it returns are gated numerically and fed back to the fact store, so the rules
see them on the next pass.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from geosynth.engine.algebra.chasing import (
    ANGLE_RULE,
    RATIO_RULE,
    Finding,
    angle_findings,
    build_systems,
    direction_findings,
    goal_sources,
    length_findings,
    vertex_angles,
)
from geosynth.engine.algebra.lengths import LENGTH_RULE, build_lengths, length_system_findings
from geosynth.engine.algebra.proportions import proportion_findings
from geosynth.engine.algebra.triangles import SIMILARITY_RULE, triangle_findings
from geosynth.engine.geometry.geometry import Vec
from geosynth.engine.language.relations import Relation
from geosynth.engine.store.factstore import FactStore

__all__ = ("Finding", "algebra_findings")

NAMED_RULES = frozenset({ANGLE_RULE, RATIO_RULE, SIMILARITY_RULE, LENGTH_RULE})
"""The algebra's own rule names; any other rule it derives is a ratio-premise rule (the proportion stage)."""
STAGE_RULES: tuple[frozenset[str] | None, ...] = (
    frozenset({ANGLE_RULE}),  # directions
    frozenset({ANGLE_RULE}),  # angles at named points
    frozenset({RATIO_RULE}),  # congruent segments
    frozenset({SIMILARITY_RULE}),  # triangles
    None,  # ratio-premise rules (the facts it appends feed the length system: that stage needs it too)
    frozenset({LENGTH_RULE}),  # the length system
    frozenset({ANGLE_RULE, RATIO_RULE}),  # the goal
)
"""Per stage of :func:`algebra_findings`, the rules of its findings (``None``: every rule not named)."""


def _needed(stage: int, rule: str) -> bool:
    produces = STAGE_RULES[stage]
    if produces is None:
        return rule not in NAMED_RULES or rule == LENGTH_RULE
    return rule in produces


def algebra_findings(
    store: FactStore,
    coords: dict[str, Vec],
    facts: list[Relation],
    goal: Relation | None,
    deadline: float | None = None,
    rule: str | None = None,
) -> list[Finding]:
    """Facts the elimination derives from ``facts`` that the store may not hold yet.

    Args:
        store: The fact store (its line classes are the angle variables; its classes filter findings).
        coords: The diagram's coordinates (lifting directed angles; representative directions).
        facts: Every fact so far; a finding's ``sources`` index into this list, which may grow (the
            parallels and collinearities behind ratio equations of parallel cuts are appended).
        goal: The problem's goal: when the algebra implies it, it is the last finding.
        deadline: A :func:`time.perf_counter` reading checked before each stage after the systems are
            built; once past it, the findings of the stages run so far are returned (``None``: run all).
        rule: Replaying one step of this rule whose fact is ``goal``: only the stages that can find
            facts of the rule run, and triangles are sought among the goal's points only. ``None``: all.

    Returns:
        Parallels and perpendiculars, equal angles at named points, congruent segments, similar and
        congruent triangles, facts of the ratio-premise rules, equal segments and constant ratios of
        the length system, then the goal.
    """
    angles, ratios = build_systems(store, coords, facts)
    within = None if rule is None or goal is None else frozenset(goal.points)

    def goal_finding() -> list[Finding]:
        verdict = None if goal is None else goal_sources(goal, angles, ratios)
        return [] if goal is None or verdict is None else [Finding(goal, verdict[0], verdict[1])]

    stages: tuple[Callable[[], list[Finding]], ...] = (
        lambda: direction_findings(angles),
        lambda: angle_findings(store, angles, vertex_angles(store, angles, ())),
        lambda: length_findings(store, ratios),
        lambda: triangle_findings(angles, ratios, coords, store.triangles, within),
        lambda: proportion_findings(store, angles, ratios, coords, facts),
        lambda: length_system_findings(store, build_lengths(store, coords, facts, ratios), ratios, goal),
        goal_finding,
    )
    found: list[Finding] = []
    for index, stage in enumerate(stages):
        if deadline is not None and time.perf_counter() > deadline:
            break
        if rule is None or _needed(index, rule):
            found += stage()
    return found
