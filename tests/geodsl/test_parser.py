"""Parsing, printing and canonicalising programs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import geodsl
from geodsl import DSLSyntaxError, Operand, Program, Step, canonicalize, parse_program, print_program

DATA = Path(__file__).parent / "data"
EXAMPLES = json.loads((DATA / "examples_96.json").read_text())


def test_parses_steps_and_operand_kinds() -> None:
    program = parse_program("Equal a N0 Ratio N4 N3 C0.5 V0 Get V0")
    assert [s.op for s in program.steps] == ["Equal", "Ratio", "Get"]
    assert [o.kind for o in program.steps[1].operands] == ["N", "N", "C", "V"]
    assert program.steps[0].operands[0] == Operand(kind="letter", token="a")
    assert program.steps[1].operands[2].constant_text == "0.5"
    assert program.steps[1].operands[0].index == 4


def test_any_whitespace_separates_tokens() -> None:
    assert parse_program("  Gsin N0\tN2  N3\nGet y ") == parse_program("Gsin N0 N2 N3 Get y")


def test_accepts_constants_outside_the_vocabulary() -> None:
    assert parse_program("Multiple N0 C7 V0 Get V0").steps[0].operands[1].constant_text == "7"


@pytest.mark.parametrize(
    ("text", "token_index", "column", "words"),
    [
        pytest.param("", 0, 0, ["empty"], id="empty"),
        pytest.param("   ", 0, 0, ["empty"], id="blank"),
        pytest.param("N0 Get N0", 0, 0, ["start with an operator", "'N0'"], id="token-before-operator"),
        pytest.param(
            "Gsin N0 N1 V0 Gets V0", 4, 14, ["unknown operator", "'Gets'", "'Get'"], id="unknown-operator"
        ),
        pytest.param("Foo N0", 0, 0, ["unknown operator", "'Foo'"], id="unknown-first-operator"),
        pytest.param("Equal N0 N1 N2 Get N0", 0, 0, ["Equal", "exactly 2", "got 3"], id="arity-too-many"),
        pytest.param("Get N0 Sum N0 V0", 2, 7, ["Sum", "3 or more", "got 2"], id="arity-too-few"),
        pytest.param(
            "Circle_R_Area N0 Get N0", 0, 0, ["Circle_R_Area", "2 or 3", "got 1"], id="circle-area-arity"
        ),
        pytest.param(
            "Proportion N0 N1 N2 N3 C2 C2 Get N0", 0, 0, ["4 or 5", "got 6"], id="proportion-extras"
        ),
        pytest.param("Get", 0, 0, ["Get", "exactly 1", "got 0"], id="get-without-operand"),
        pytest.param("Equal N0 Nx", 2, 9, ["malformed operand", "'Nx'"], id="bad-n"),
        pytest.param("Equal N0 N01", 2, 9, ["malformed operand", "'N01'"], id="leading-zero"),
        pytest.param("Equal xy N0", 1, 6, ["malformed operand", "'xy'"], id="two-letters"),
        pytest.param("Equal C N0", 1, 6, ["malformed operand", "'C'"], id="bare-c"),
        pytest.param("Equal 3 N0", 1, 6, ["malformed operand", "'3'"], id="bare-number"),
    ],
)
def test_syntax_errors_point_at_the_token(text: str, token_index: int, column: int, words: list[str]) -> None:
    with pytest.raises(DSLSyntaxError) as info:
        parse_program(text)
    assert info.value.token_index == token_index
    assert info.value.column == column
    for word in words:
        assert word in str(info.value)


def test_models_are_frozen_and_strict() -> None:
    program = parse_program("Get N0")
    with pytest.raises(ValueError, match="frozen"):
        program.steps = ()
    with pytest.raises(ValueError):
        Operand(kind="N", token="V0")
    with pytest.raises(ValueError, match="unknown operator"):
        Step(op="Nope", operands=())
    with pytest.raises(ValueError, match="exactly 2"):
        Step(op="Equal", operands=(Operand.of("N0"),))
    with pytest.raises(ValueError, match="at least one step"):
        Program(steps=())


# --- round trip -------------------------------------------------------------------------------------

_OPERAND_TOKENS = st.one_of(
    st.integers(0, 15).map(lambda i: f"N{i}"),
    st.integers(0, 9).map(lambda i: f"V{i}"),
    st.sampled_from(geodsl.VOCABULARY_CONSTANTS),
    st.integers(1, 500).map(lambda i: f"C{i}"),
    st.sampled_from("abcdefghijklmnopqrstuvwxyz"),
)


@st.composite
def steps(draw: st.DrawFn) -> Step:
    spec = draw(st.sampled_from(sorted(geodsl.OPERATORS.values(), key=lambda s: s.name)))
    top = spec.max_arity if spec.max_arity is not None else spec.min_arity + 4
    n = draw(st.integers(spec.min_arity, top))
    tokens = draw(st.lists(_OPERAND_TOKENS, min_size=n, max_size=n))
    return Step(op=spec.name, operands=tuple(Operand.of(t) for t in tokens))


programs = st.lists(steps(), min_size=1, max_size=8).map(lambda s: Program(steps=tuple(s)))


@given(programs)
def test_print_then_parse_is_identity(program: Program) -> None:
    assert parse_program(print_program(program)) == program


@given(programs)
def test_canonicalize_is_idempotent(program: Program) -> None:
    once = canonicalize(program)
    assert canonicalize(once) == once
    assert sorted(once.tokens) == sorted(program.tokens)


@pytest.mark.parametrize("record", EXAMPLES, ids=[r["id"] for r in EXAMPLES])
def test_examples_round_trip_and_match_the_reference_normal_form(record: dict[str, object]) -> None:
    program = parse_program(str(record["dedup_expression"]))
    assert print_program(program) == record["dedup_expression"]
    assert print_program(canonicalize(program)) == record["normalized_expression"]


@pytest.mark.parametrize("record", EXAMPLES, ids=[r["id"] for r in EXAMPLES])
def test_canonicalize_preserves_the_answer(record: dict[str, object]) -> None:
    numbers = [str(v) for v in record["var_values"]]  # type: ignore[union-attr]
    program = parse_program(str(record["dedup_expression"]))
    assert (
        geodsl.execute(canonicalize(program), numbers).answer_text
        == geodsl.execute(program, numbers).answer_text
    )


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("Sin_Law N4 N2 N3 N0", "Sin_Law N3 N0 N4 N2"),
        ("Sum N0 N1 V0 V1 V2 C360", "Sum V0 V1 V2 N0 N1 C360"),
        ("Gougu V3 V2 V1", "Gougu V2 V3 V1"),
        ("Cos_Law V0 N3 N1 N2", "Cos_Law V0 N1 N3 N2"),
        ("Tria_SAS_Area N3 N2 N1 V0", "Tria_SAS_Area N1 N2 N3 V0"),
        ("Proportion N3 N2 N1 N0 C2", "Proportion N3 N2 N1 N0 C2"),
        ("Equal N0 x", "Equal x N0"),
        ("Geo_Mean N2 N1 N0", "Geo_Mean N2 N1 N0"),
    ],
)
def test_canonical_order_from_the_spec(before: str, after: str) -> None:
    assert print_program(canonicalize(parse_program(before))) == after
