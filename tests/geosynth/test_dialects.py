"""Newclid's problem files read as AlphaGeometry's: the rewritten constructions and the five it adds."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from geosynth import ProblemSyntaxError, parse_problem, realise, solve_one
from geosynth.engine import from_newclid, load_problems


def _points(line: str, seed: int = 0) -> dict[str, np.ndarray]:
    diagram = realise(parse_problem(from_newclid(line)), np.random.default_rng(seed), check_goal=True)
    return {k: np.array(v) for k, v in diagram.points.items()}


def _proved(line: str) -> bool:
    result, _ = solve_one(parse_problem(from_newclid(line)), seed=0, time_limit=30)
    return result.solved


def test_newclid_argument_orders_become_alphageometry_ones() -> None:
    assert from_newclid("a b c = triangle a b c; x = parallelogram x a b c ? para a b c x") == (
        "a b c = triangle a b c; x = parallelogram a b c x ? para a b c x"
    )
    assert (
        from_newclid("a b = segment a b; x y = square x y a b") == "a b = segment a b; x y = square a b x y"
    )
    assert from_newclid("a b c d = iso_trapezoid a b c d") == "a b c d = eq_trapezoid a b c d"
    assert from_newclid("a b c d = iso_trapezoid") == "a b c d = eq_trapezoid"  # the short form
    # an AlphaGeometry line without those constructions reads the same
    line = "a b c = triangle a b c; d = midpoint d a b; e = midpoint e a c ? para d e b c"
    assert from_newclid(line) == line


def test_a_new_point_takes_the_name_left_of_the_equals_sign_as_in_newclid() -> None:
    # Newclid's shortlist writes `t = free d`: Newclid names the point t, whatever free calls it
    line = "a b c = triangle a b c; t = free d; x = reflect x t b c ? cong t b x b"
    assert from_newclid(line) == "a b c = triangle a b c; t = free t; x = reflect x t b c ? cong t b x b"
    assert _proved(line)
    # several new points are matched in order; a short form names no points and is left as it is
    assert from_newclid("a b = segment p q") == "a b = segment a b"
    assert from_newclid("a b c d = iso_trapezoid") == "a b c d = eq_trapezoid"
    # an undefined input point is not a new point: the parser still names it
    with pytest.raises(ProblemSyntaxError, match="undefined points q"):
        parse_problem(from_newclid("a b = segment a b; x = midpoint x a q"))
    # names that cannot be matched one to one are left for the parser to report
    with pytest.raises(ProblemSyntaxError, match="constructions create"):
        parse_problem(from_newclid("a b = segment a b; x y = on_line d a b"))


def test_a_newclid_parallelogram_is_the_same_figure() -> None:
    # Newclid's `parallelogram x a b c` closes a b c x: x = a + c - b, as AlphaGeometry's `parallelogram a b c x`
    p = _points("a b c = triangle a b c; x = parallelogram x a b c ? para a b c x")
    assert np.allclose(p["x"], p["a"] + p["c"] - p["b"])
    q = _points("a b = segment a b; x y = square x y a b ? perp a b b x")
    assert math.isclose(np.linalg.norm(q["x"] - q["b"]), np.linalg.norm(q["b"] - q["a"]), rel_tol=1e-9)


@pytest.mark.parametrize(
    ("angle", "degrees"), [("60o", "60"), ("1pi/3", "60"), ("0.5", "90"), ("pi/4", None)]
)
def test_newclid_angles_are_read_in_degrees(angle: str, degrees: str | None) -> None:
    line = f"a b = segment a b; x = s_angle a b x {angle}"
    if degrees is None:
        with pytest.raises(ProblemSyntaxError, match="not a Newclid angle"):
            from_newclid(line)
    else:
        assert from_newclid(line) == f"a b = segment a b; x = s_angle a b x {degrees}"


def test_auxiliary_clauses_after_the_bar_are_built_and_bad_lines_say_why() -> None:
    line = "a b c = triangle a b c; d = midpoint d b c | e = midpoint e a c ? para d e a b"
    assert (
        from_newclid(line) == "a b c = triangle a b c; d = midpoint d b c; e = midpoint e a c ? para d e a b"
    )
    with pytest.raises(ProblemSyntaxError, match="several goals"):
        from_newclid("a b c = triangle a b c ? ncoll a b c; ncoll b c a")
    with pytest.raises(ProblemSyntaxError, match="parallelogram takes 4 points, got 3"):
        from_newclid("a b c = triangle a b c; x = parallelogram x a b")


def test_the_constructions_newclid_adds_place_their_points() -> None:
    for seed in range(10):
        p = _points("a b c = acute_triangle a b c ? ncoll a b c", seed)
        for u, v, w in ("abc", "bca", "cab"):
            x, y = p[v] - p[u], p[w] - p[u]
            assert x @ y > 0  # every angle acute
        q = _points("c a b = between c a b ? coll a b c", seed)
        r = _points("a b = segment a b; x = between_bound x a b ? coll x a b", seed)
        for mid, ends in ((q["c"], (q["a"], q["b"])), (r["x"], (r["a"], r["b"]))):
            assert (ends[0] - mid) @ (ends[1] - mid) < 0  # strictly inside the segment


def test_theorems_about_the_added_constructions_are_proved() -> None:
    # an isosceles trapezoid is cyclic
    assert _proved("a b c = triangle a b c; x = iso_trapezoid2 x a b c ? cyclic a b c x")
    # x on a c with a x / c x = b a / b c lies on the bisector of angle a b c
    assert _proved(
        "a b c = triangle a b c; x = eqratio6 x a c b a b c, on_line x a c ? eqangle b a b x b x b c"
    )


def test_a_newclid_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "newclid.txt"
    path.write_text(
        "para\na b c = triangle a b c; x = parallelogram x a b c ? para a x b c\n"
        "trap\na b c = triangle a b c; x = iso_trapezoid2 x a b c ? cyclic a b c x\n",
        encoding="utf-8",
    )
    problems = load_problems(path, dialect="newclid")
    assert [p.name for p in problems] == ["para", "trap"]
    assert "parallelogram a b c x" in problems[0].text()
    # the same line read as AlphaGeometry's: its x is an input, which the triangle did not create
    with pytest.raises(ProblemSyntaxError, match="para"):
        load_problems(path)
