"""Auxiliary constructions without a model: figure candidates ranked numerically, checked by the engine."""

from __future__ import annotations

import numpy as np
import pytest

from geosynth import ProblemSyntaxError, parse_problem, realise, replay
from geosynth.synth import (
    HeuristicConfig,
    Share,
    heuristic_aux_search,
    ranked_candidates,
    solve_all_with_aux,
    solve_with_aux,
)
from geosynth.synth._aux_heuristic import (
    FAMILIES,
    Figure,
    Ranked,
    family_batches,
    goal_centre,
    propose,
    score_point,
)

# JGEX-AG-231 "complete_007_7_Book_LLL_L058-9": plain deduction fails; the foot of the perpendicular from
# d to line a e is what its proof needs.
L058_9 = "a b = segment a b; c = on_bline c a b; d = on_tline d b a b; e = intersection_lt e c d a a b ? cong e c c d"
MIDLINE = "a b c = triangle a b c; d = midpoint d a b; e = midpoint e a c ? para d e b c"


def test_the_search_finds_the_foot_and_its_proof_replays() -> None:
    problem = parse_problem(L058_9, "L058-9")
    found = heuristic_aux_search(problem, 30)
    # the foot ranks first, so the first family batch (the best four feet together) holds it; the
    # proof keeps the one foot it uses (the foot from e to b d serves as well as the one from d to a e)
    assert found.solved and len(found.constructions) == 1 and " = foot " in found.constructions[0]
    assert found.reasons == {"family batch": 1} and found.depth == 1
    assert found.proof is not None and found.proof.problem == found.problem
    assert found.problem.endswith(f"; {found.constructions[0]} ? cong c d c e")
    report = replay(found.proof)
    assert report.ok, report.failed


def test_the_foot_ranks_first_on_its_figure() -> None:
    problem = parse_problem(L058_9)
    ranked = ranked_candidates(problem, realise(problem, np.random.default_rng(0), check_goal=True))
    assert ranked[0].candidate.clause(["f"]) == "f = foot f d a e"
    assert [r.score for r in ranked] == sorted((r.score for r in ranked), reverse=True)


def test_the_single_candidates_find_the_foot_without_batches() -> None:
    found = heuristic_aux_search(parse_problem(L058_9, "L058-9"), 30, config=HeuristicConfig(batch_size=0))
    assert found.solved and found.constructions == ("f = foot f d a e",) and found.reasons == {"ranked": 1}


# the nine-point circle: the midpoints of the sides and the foot of an altitude; its centre is not named
NINE_POINT = (
    "a b c = triangle a b c; d = midpoint d b c; e = midpoint e a c; f = midpoint f a b; "
    "g = foot g a b c ? cyclic d e f g"
)


def test_family_batches_take_the_best_of_each_family_with_the_goal_centre() -> None:
    problem = parse_problem(NINE_POINT)
    diagram = realise(problem, np.random.default_rng(0), check_goal=True)
    centre = goal_centre(problem, diagram)
    assert centre is not None and centre.candidate.family == "circle"
    built_on = set(centre.candidate.inputs())
    assert len(built_on) == 3 and built_on <= {"d", "e", "f", "g"}
    (x, y), *_ = centre.points.values()
    radii = {round(float(np.hypot(x - diagram.points[p][0], y - diagram.points[p][1])), 9) for p in "defg"}
    assert len(radii) == 1  # equidistant from the four goal points
    ranked = ranked_candidates(problem, diagram)
    batches = family_batches(problem, diagram, ranked, 3)
    families = [batch[-1].candidate.family for batch in batches]
    assert len(families) == len(set(families)) == len({r.candidate.family for r in ranked})
    first_rank = {f: next(i for i, r in enumerate(ranked) if r.candidate.family == f) for f in families}
    assert [first_rank[f] for f in families] == sorted(first_rank.values())
    for batch in batches:
        assert batch[0] == centre and 2 <= len(batch) <= 4
        members = batch[1:]
        assert (
            members
            == [r for r in ranked if r.candidate.family == members[0].candidate.family][: len(members)]
        )
        for r in members:  # none of them is the centre again under another construction
            assert not any(np.hypot(px - x, py - y) < 1e-6 for px, py in r.points.values())
    # the ranked list does hold the centre (as a circumcentre of three goal points), left out above
    assert any(
        np.hypot(px - x, py - y) < 1e-6
        for r in ranked
        if r.candidate.outputs == 1
        for px, py in r.points.values()
    )
    # other goals get no centre
    midline = parse_problem(MIDLINE)
    assert goal_centre(midline, realise(midline, np.random.default_rng(0), check_goal=True)) is None


def test_a_problem_solved_as_given_adds_nothing() -> None:
    result = solve_with_aux(parse_problem(MIDLINE, "midline"), 10)
    assert result.solved and result.aux == () and result.proof is not None
    found = heuristic_aux_search(parse_problem(MIDLINE), 10)
    assert found.solved and found.constructions == () and found.reasons == {"as given": 1}


def test_the_score_counts_coincidences_not_generic_points() -> None:
    problem = parse_problem(MIDLINE)
    diagram = realise(problem, np.random.default_rng(0), check_goal=True)
    figure = Figure(problem, diagram)
    b, c = (np.array(diagram.points[p]) for p in "bc")
    # the midpoint of b c closes two parallelograms (f d parallel to a c, f e to a b), the goal's points among them
    assert score_point(figure, (b + c) / 2, frozenset("bc")) >= 4
    # a point in general position shows nothing
    assert score_point(figure, np.array([0.123456, 2.345678]), frozenset()) == 0
    assert score_point(figure, b, frozenset()) == float("-inf")  # an existing point


def test_candidates_at_the_same_place_are_checked_once() -> None:
    # in an isosceles triangle the foot from the apex is the midpoint of the base
    problem = parse_problem("a b c = iso_triangle a b c; d = midpoint d a c ? cong a b a c")
    diagram = realise(problem, np.random.default_rng(0))
    figure = Figure(problem, diagram)
    texts = [c.clause(["e", "f"]) for c in propose(figure)]
    assert "e = midpoint e b c" in texts and "e = foot e a b c" in texts
    kept = [r.candidate.clause(["e", "f"]) for r in ranked_candidates(problem, diagram)]
    # the foot uses more goal points, so it is placed first and the midpoint is dropped
    assert "e = foot e a b c" in kept and "e = midpoint e b c" not in kept
    assert {c.family for c in propose(figure)} <= set(FAMILIES)


def test_every_family_is_proposed_on_a_rich_figure() -> None:
    line = (
        "a b c = triangle a b c; o = circle o a b c; h = orthocenter h a b c; d = midpoint d b c; "
        "e = on_line e a d, on_circle e o a; f = on_circum f a b c ? cyclic a b c e"
    )
    problem = parse_problem(line)
    figure = Figure(problem, realise(problem, np.random.default_rng(0), check_goal=True))
    assert {c.family for c in propose(figure)} == set(FAMILIES)


def test_a_problem_without_a_goal_is_refused() -> None:
    with pytest.raises(ProblemSyntaxError, match="needs a goal"):
        heuristic_aux_search(parse_problem("a b c = triangle a b c"), 5)
    with pytest.raises(ValueError, match="depth"):
        HeuristicConfig(depth=4)


def test_the_parts_of_a_shared_search_deal_every_candidate_once() -> None:
    parts = [Share(index=k, parts=3) for k in range(3)]
    assert all(sum(part.mine(position) for part in parts) == 1 for position in range(50))
    assert [p for p in range(7) if parts[1].mine(p)] == [1, 4]
    with pytest.raises(ValueError, match="does not exist"):
        Share(index=2, parts=2)


def test_a_search_shared_over_two_workers_finds_a_proof_that_replays() -> None:
    # part 0 of 2 is dealt the first family batch (the best feet), so it finds the whole search's proof
    problem = parse_problem(L058_9, "L058-9")
    first = heuristic_aux_search(problem, 30, share=Share(index=0, parts=2))
    assert first.solved and len(first.constructions) == 1 and " = foot " in first.constructions[0]
    problems = [parse_problem(MIDLINE, "midline"), problem]
    midline, shared = solve_all_with_aux(problems, 30, timeout=30, jobs=2)
    assert midline.solved and midline.aux == ()
    assert shared.name == "L058-9" and shared.solved and shared.aux and shared.proof is not None
    assert shared.proof.problem.endswith(f"; {'; '.join(shared.aux)} ? cong c d c e")
    report = replay(shared.proof)
    assert report.ok, report.failed


# JGEX-AG-231 "complete_015_7_Book_00EE_08_E059-59": its proof needs where two drawn lines meet
E059_59 = (
    "a b c = triangle a b c; d = angle_bisector d b a c; e = on_pline e c b d, on_pline e b c d; "
    "f = on_line f b e, on_line f a c; g = on_line g c e, on_line g a b ? cong b g c f"
)


def test_a_batch_whose_replayed_steps_share_two_points_on_two_lines_is_proved() -> None:
    # part 1 of 2 takes the second and fourth family batches; tracing the fourth's proof (four points
    # where lines through goal points meet a d) once crashed the replay checker, whose store of one
    # step's premises held two lines through the same two points
    problem = parse_problem(E059_59, "E059-59")
    found = heuristic_aux_search(problem, 60, share=Share(index=1, parts=2))
    assert found.solved and found.reasons == {"family batch": 1}
    assert all(" = intersection_lp " in clause for clause in found.constructions)
    assert found.proof is not None
    report = replay(found.proof)
    assert report.ok, report.failed


def test_renaming_the_points_changes_no_candidate_rank_or_batch() -> None:
    line = (
        "a b c = triangle a b c; o = circle o a b c; h = orthocenter h a b c; d = midpoint d b c; "
        "e = on_line e a d, on_circle e o a; f = on_circum f a b c ? cyclic a b c e"
    )
    problem = parse_problem(line)
    # names in the opposite alphabetical order, so every tie broken by name would flip
    mapping: dict[str, str] = dict(zip(problem.points, ("y", "x", "w", "v", "u", "t", "s", "r"), strict=True))
    other = problem.renamed(mapping)
    diagram = realise(problem, np.random.default_rng(0), check_goal=True)
    renamed_diagram = realise(other, np.random.default_rng(0), check_goal=True)
    for p, q in mapping.items():
        assert np.allclose(diagram.points[p], renamed_diagram.points[q])  # the same figure

    def places(ranked: list[Ranked]) -> list[tuple[str, tuple[tuple[float, float], ...]]]:
        return [
            (r.candidate.family, tuple(sorted((round(x, 6), round(y, 6)) for x, y in r.points.values())))
            for r in ranked
        ]

    first, second = ranked_candidates(problem, diagram), ranked_candidates(other, renamed_diagram)
    assert len(first) > 50 and places(first) == places(second)
    batches = family_batches(problem, diagram, first, 4)
    renamed_batches = family_batches(other, renamed_diagram, second, 4)
    assert len(batches) > 3 and [places(b) for b in batches] == [places(b) for b in renamed_batches]
