"""One run of the algebraic system: build the angle and ratio systems from the facts, read off what is new.

The deductive loop (:func:`geosynth.deduce`) calls :func:`algebra_findings` whenever a pass over the rules
adds nothing; the findings it returns are gated numerically and fed back to the fact store, so the rules
see them on the next pass.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from geosynth.engine.algebra.chasing import (
    Finding,
    angle_findings,
    build_systems,
    direction_findings,
    goal_sources,
    length_findings,
    vertex_angles,
)
from geosynth.engine.algebra.lengths import build_lengths, length_system_findings
from geosynth.engine.algebra.proportions import proportion_findings
from geosynth.engine.algebra.triangles import triangle_findings
from geosynth.engine.geometry.geometry import Vec
from geosynth.engine.language.relations import Relation
from geosynth.engine.store.factstore import FactStore

__all__ = ("Finding", "algebra_findings")


def algebra_findings(
    store: FactStore,
    coords: dict[str, Vec],
    facts: list[Relation],
    goal: Relation | None,
    deadline: float | None = None,
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

    Returns:
        Parallels and perpendiculars, equal angles at named points, congruent segments, similar and
        congruent triangles, facts of the ratio-premise rules, equal segments and constant ratios of
        the length system, then the goal.
    """
    angles, ratios = build_systems(store, coords, facts)

    def goal_finding() -> list[Finding]:
        verdict = None if goal is None else goal_sources(goal, angles, ratios)
        return [] if goal is None or verdict is None else [Finding(goal, verdict[0], verdict[1])]

    stages: tuple[Callable[[], list[Finding]], ...] = (
        lambda: direction_findings(angles),
        lambda: angle_findings(store, angles, vertex_angles(store, angles, ())),
        lambda: length_findings(store, ratios),
        lambda: triangle_findings(angles, ratios, coords, store.triangles),
        lambda: proportion_findings(store, angles, ratios, coords, facts),
        lambda: length_system_findings(store, build_lengths(store, coords, facts, ratios), ratios, goal),
        goal_finding,
    )
    found: list[Finding] = []
    for stage in stages:
        if deadline is not None and time.perf_counter() > deadline:
            break
        found += stage()
    return found
