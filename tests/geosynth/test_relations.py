from __future__ import annotations

import itertools
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from geosynth import (
    Angle,
    Area,
    Between,
    Collinear,
    Concyclic,
    CongruentTriangles,
    EqualAngles,
    EqualLength,
    EqualLineAngles,
    EqualRatios,
    Length,
    LinearEquation,
    Midpoint,
    Parallel,
    Parallelogram,
    Perpendicular,
    RatioConstant,
    Rectangle,
    RelationError,
    SameSide,
    SimilarTriangles,
    Square,
    Term,
    Trapezoid,
    build_relation,
    relation_text,
)
from geosynth.engine.language.relations import canonical_four_pairs, canonical_triangle_pair

NAMES = st.lists(st.sampled_from("abcdefghijkmnopq"), min_size=8, max_size=8, unique=True)


def test_symmetric_relations_ignore_order() -> None:
    assert Collinear.of("c", "a", "b") == Collinear.of("a", "b", "c")
    assert Collinear.of("c", "a", "b").points == ("a", "b", "c")
    assert Concyclic.of("d", "b", "a", "c") == Concyclic.of("a", "b", "c", "d")
    assert hash(Parallel.of("b", "a", "d", "c")) == hash(Parallel.of("c", "d", "a", "b"))


def test_pair_relations_keep_their_pairing() -> None:
    assert Parallel.of("a", "b", "c", "d") != Parallel.of("a", "c", "b", "d")
    assert EqualLength.of("d", "c", "b", "a").points == ("a", "b", "c", "d")
    assert Midpoint.of("m", "b", "a").points == ("m", "a", "b")
    assert Midpoint.of("m", "a", "b") != Midpoint.of("a", "m", "b")


@given(NAMES)
def test_line_angle_equality_has_eight_equivalent_forms(names: list[str]) -> None:
    a, b, c, d, e, f, g, h = names
    base = EqualLineAngles.of(a, b, c, d, e, f, g, h)
    forms = [
        (e, f, g, h, a, b, c, d),  # swap the two sides
        (c, d, a, b, g, h, e, f),  # reverse both angles
        (a, b, e, f, c, d, g, h),  # swap the middle terms
        (b, a, d, c, f, e, h, g),  # each line written backwards
    ]
    for form in forms:
        assert EqualLineAngles.of(*form) == base
    assert EqualRatios.of(a, b, c, d, e, f, g, h) == EqualRatios.of(e, f, a, b, g, h, c, d)
    # Not a symmetry: pairing the first line with the third.
    assert EqualLineAngles.of(a, b, e, f, g, h, c, d) != base or len({a, b, c, d, e, f, g, h}) < 8


@given(st.lists(st.sampled_from("abcd"), min_size=8, max_size=8))
def test_four_pair_form_is_the_least_of_the_eight_orderings(names: list[str]) -> None:
    # Few names, so pairs repeat (``a b : c d = a b : e f``) and several orderings tie for least.
    pairs = [tuple(sorted(names[i : i + 2])) for i in range(0, 8, 2)]
    orders = [
        (0, 1, 2, 3),
        (2, 3, 0, 1),
        (1, 0, 3, 2),
        (3, 2, 1, 0),
        (0, 2, 1, 3),
        (1, 3, 0, 2),
        (2, 0, 3, 1),
        (3, 1, 2, 0),
    ]
    least = min(tuple(pairs[i] for i in order) for order in orders)
    assert canonical_four_pairs(tuple(names)) == tuple(x for pair in least for x in pair)


@given(NAMES)
def test_triangle_pairs_canonical_under_simultaneous_permutation(names: list[str]) -> None:
    t1, t2 = names[:3], names[3:6]
    base = SimilarTriangles.of(*t1, *t2)
    for perm in itertools.permutations(range(3)):
        p1 = [t1[i] for i in perm]
        p2 = [t2[i] for i in perm]
        assert SimilarTriangles.of(*p1, *p2) == base
        assert SimilarTriangles.of(*p2, *p1) == base
    assert SimilarTriangles.of(t1[1], t1[0], t1[2], *t2) != base


@given(st.lists(st.sampled_from("abcd"), min_size=6, max_size=6))
def test_triangle_pair_form_is_the_least_of_the_twelve_orderings(names: list[str]) -> None:
    # Few names, so points repeat and the shortcut through the least point is tested where it ties.
    first, second = names[:3], names[3:]
    orders = [
        tuple(t[i] for t in pair for i in perm)
        for perm in itertools.permutations(range(3))
        for pair in ((first, second), (second, first))
    ]
    assert canonical_triangle_pair(tuple(names)) == min(orders)


def test_orientation_distinguishes_triangle_relations() -> None:
    same = CongruentTriangles.of("a", "b", "c", "d", "e", "f", orientation="same")
    assert same != CongruentTriangles.of("a", "b", "c", "d", "e", "f", orientation="opposite")
    assert relation_text(same) == "contri a b c d e f"


@given(st.permutations(list("abcd")))
def test_renaming_and_reordering_give_one_form(order: list[str]) -> None:
    mapping = dict(zip("abcd", order, strict=True))
    rel = Parallel.of("a", "b", "c", "d").renamed(mapping)
    assert rel == Parallel.of(mapping["c"], mapping["d"], mapping["b"], mapping["a"])


def test_undirected_angles_and_diagrammatic_forms() -> None:
    assert EqualAngles.of("c", "b", "a", "f", "e", "d") == EqualAngles.of("d", "e", "f", "a", "b", "c")
    assert Between.of("c", "b", "a").points == ("a", "b", "c")
    assert SameSide.of("q", "p", "b", "a").points == ("p", "q", "a", "b")


def test_ratio_constant_inverts_when_segments_swap() -> None:
    one = RatioConstant.of("c", "d", "a", "b", value=Fraction(2))
    assert one.points == ("a", "b", "c", "d")
    assert one.value == Fraction(1, 2)
    with pytest.raises(RelationError):
        RatioConstant.of("a", "b", "c", "d", value=Fraction(0))


@pytest.mark.parametrize(
    ("cls", "points"),
    [
        (Collinear, ("a", "a", "b")),
        (Parallel, ("a", "a", "c", "d")),
        (Perpendicular, ("a", "b", "c")),
        (EqualAngles, ("a", "b", "b", "d", "e", "f")),
        (SimilarTriangles, ("a", "a", "b", "d", "e", "f")),
    ],
)
def test_degenerate_relations_are_rejected(cls: type[Collinear], points: tuple[str, ...]) -> None:
    with pytest.raises(RelationError, match=cls.__name__):
        cls.of(*points)


def test_shapes_canonicalise_and_expand() -> None:
    assert Parallelogram.of("c", "d", "a", "b") == Parallelogram.of("a", "b", "c", "d")
    assert Parallelogram.of("a", "d", "c", "b") == Parallelogram.of("a", "b", "c", "d")
    assert Parallelogram.of("a", "c", "b", "d") != Parallelogram.of("a", "b", "c", "d")
    expected = [Parallel.of("a", "b", "c", "d"), Parallel.of("a", "d", "b", "c")]
    assert set(Parallelogram.of("a", "b", "c", "d").expand()) == set(expected)
    assert Perpendicular.of("a", "b", "b", "c") in Rectangle.of("a", "b", "c", "d").expand()
    assert len(Square.of("a", "b", "c", "d").expand()) == 4
    # A trapezoid's parallel sides are a b and c d: rotating by one vertex is a different statement.
    assert Trapezoid.of("b", "c", "d", "a") != Trapezoid.of("a", "b", "c", "d")
    assert Trapezoid.of("d", "c", "b", "a") == Trapezoid.of("a", "b", "c", "d")


def test_linear_equations_are_canonical() -> None:
    one = Fraction(1)
    ab, cd = Length.of("b", "a"), Length.of("c", "d")
    eq1 = LinearEquation(
        terms=(Term(coefficient=Fraction(2), quantity=cd), Term(coefficient=Fraction(-2), quantity=ab)),
        constant=Fraction(0),
    )
    assert eq1 == LinearEquation.equal(ab, cd)
    angle = Angle.of("c", "b", "a")
    assert angle.points == ("a", "b", "c")
    eq2 = LinearEquation(
        terms=(Term(coefficient=one, quantity=angle), Term(coefficient=one, quantity=angle)),
        constant=Fraction(180),
    )
    assert eq2 == LinearEquation.value(angle, Fraction(90))
    assert Area.of("c", "d", "a", "b") == Area.of("a", "b", "c", "d") == Area.of("a", "d", "c", "b")
    with pytest.raises(RelationError):
        LinearEquation(
            terms=(Term(coefficient=one, quantity=ab), Term(coefficient=-one, quantity=ab)),
            constant=Fraction(1),
        )


def test_predicate_table_round_trips() -> None:
    for text in (
        "coll a b c",
        "cong a b c d",
        "eqangle a b c d e f g h",
        "simtri2 a b c d e f",
        "rconst a b c d 1 2",
        "s_angle a b c 15",
        "midp m a b",
        "circle o a b c",
    ):
        rel = build_relation(text.split()[0], tuple(text.split()[1:]))
        again = relation_text(rel)
        assert build_relation(again.split()[0], tuple(again.split()[1:])) == rel
    with pytest.raises(RelationError, match="takes 4 points"):
        build_relation("para", ("a", "b", "c"))
