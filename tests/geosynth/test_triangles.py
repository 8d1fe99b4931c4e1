"""Soundness of the side-angle-side triangle search (geosynth.engine.algebra.triangles)."""

from __future__ import annotations

from geosynth import parse_problem, solve_one
from geosynth.engine import SIMILARITY_RULE

MORLEY_MIDPOINT = (
    "a b c = triangle a b c; d e = trisect d e b a c; f g = trisect f g c b a; h i = trisect h i a c b; "
    "j = intersection_ll j b f c i; k = intersection_ll k a e c h; l = intersection_ll l a d b g; "
    "m = midpoint m k l ? cong j k j l"
)


def test_a_coincidental_right_angle_is_no_reason_for_congruence() -> None:
    # Morley's triangle j k l is equilateral, so j m is perpendicular to k l on every diagram; nothing in
    # the rules proves that. Triangles j k m and j l m share the line pair (k l, j m) at m, so their directed
    # line angles are equal although their triangle angles are supplementary. Congruence from that match
    # needs the same orientation, which these mirrored triangles lack: the search once "proved" the goal in
    # five steps this way.
    problem = parse_problem(MORLEY_MIDPOINT)
    result, deduction = solve_one(problem, time_limit=20)
    assert not result.solved
    for derivation in deduction.derivations:
        if derivation.rule == SIMILARITY_RULE:
            assert set(derivation.fact.points[:3]) != {"j", "k", "m"} or "l" not in derivation.fact.points


def test_side_angle_side_still_finds_mirrored_congruent_triangles() -> None:
    # The perpendicular bisector: p a m and p b m are mirror images with a right angle that is proved.
    problem = parse_problem(
        "a b = segment a b; m = midpoint m a b; p = on_tline p m a b ? eqangle p a a b a b p b"
    )
    result, _ = solve_one(problem, time_limit=20)
    assert result.solved


def test_rules_with_directed_angle_premises_conclude_only_the_same_orientation() -> None:
    import numpy as np

    from geosynth import CongruentTriangles, realise
    from geosynth.engine.deduction.deductive import _Numeric, _oriented

    # B, H, C collinear: r34's premise ∠(HB, HD) = ∠(HC, HD) holds for any D, so it pairs B H D with C H D;
    # they are mirror images only because H D happens to be perpendicular to B C on this figure.
    problem = parse_problem(
        "a b c = triangle a b c; o = circle o a b c; h = midpoint h c b; d = on_line d o h, on_line d a b"
    )
    numeric = _Numeric(realise(problem, np.random.default_rng(0), 100, check_goal=False))
    pair = CongruentTriangles.of("b", "h", "d", "c", "h", "d")
    assert _oriented(pair, numeric, ("same",)) is None
    either = _oriented(pair, numeric, ("same", "opposite"))
    assert isinstance(either, CongruentTriangles) and either.orientation == "opposite"


def test_a_similarity_step_is_checked_by_the_triangle_search_among_its_points() -> None:
    from geosynth.engine.algebra.findings import algebra_findings
    from geosynth.engine.proofs.replay import chased, premise_store

    # Replaying a step of the triangle search runs that stage alone, over the step's own points: it must
    # accept every such step the engine derives, find nothing of another rule or outside those points, and
    # not find the pair from its first premise alone.
    # Parallels through a point of a diagonal of a quadrangle (JGEX E023-15): triangle pairs of 4-5 of 7 points.
    problem = parse_problem(
        "a b c d = quadrangle a b c d; e = on_line e a c; g = on_pline g e a b, on_line g b c; "
        "f = on_pline f e a d, on_line f c d ? para b d g f"
    )
    _, deduction = solve_one(problem, time_limit=20)
    steps = [d for d in deduction.derivations if d.rule == SIMILARITY_RULE]
    assert deduction.diagram is not None
    assert any(len(set(d.fact.points)) < len(problem.points) for d in steps)
    coords, points = deduction.diagram.coords(), tuple(deduction.diagram.points)
    for step in steps:
        assert chased(SIMILARITY_RULE, step.fact, step.premises, points, coords)
        store = premise_store(points, step.premises)
        targeted = algebra_findings(store, coords, list(step.premises), step.fact, rule=SIMILARITY_RULE)
        assert step.fact in {f.fact for f in targeted}
        assert all(
            f.rule == SIMILARITY_RULE and set(f.fact.points) <= set(step.fact.points) for f in targeted
        )
        whole = algebra_findings(premise_store(points, step.premises), coords, list(step.premises), step.fact)
        assert step.fact in {f.fact for f in whole if f.rule == SIMILARITY_RULE}
        assert not chased(SIMILARITY_RULE, step.fact, step.premises[:1], points, coords)
