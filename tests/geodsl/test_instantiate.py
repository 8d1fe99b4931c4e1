"""Instantiated programs: values in place of N tokens (ReTTS-PGPS style)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import geodsl
from geodsl import (
    BindingError,
    DSLSyntaxError,
    execute,
    execute_instantiated,
    instantiate,
    parse_instantiated,
)

DATA = Path(__file__).parent / "data"
EXAMPLES = json.loads((DATA / "examples_96.json").read_text())


def test_the_papers_example() -> None:
    numbers = ["3\\sqrt{2}", "z", "x", "y", "\\sqrt{2}"]
    inst = instantiate("Geo_Mean N0 N1 N4 Gougu N1 N4 N3 Get y", numbers)
    assert inst.text == "Geo_Mean 3\\sqrt{2} z \\sqrt{2} Gougu z \\sqrt{2} y Get y"


@pytest.mark.parametrize(
    ("program", "numbers", "text"),
    [
        ("Multiple V0 C2 N2 Get V0", ["30", "40", "50"], "Multiple V0 2 50 Get V0"),
        ("Ratio N0 N1 C0.5 V0 Get V0", ["400", "64"], "Ratio 400 64 0.5 V0 Get V0"),
        ("Equal a N0 Get a", ["8"], "Equal a 8 Get a"),
    ],
)
def test_constants_print_as_numbers(program: str, numbers: list[str], text: str) -> None:
    assert instantiate(program, numbers).text == text


@pytest.mark.parametrize("record", EXAMPLES, ids=[r["id"] for r in EXAMPLES])
def test_instantiated_programs_round_trip_and_give_the_same_answer(record: dict[str, object]) -> None:
    numbers = [str(v) for v in record["var_values"]]  # type: ignore[union-attr]
    inst = instantiate(str(record["dedup_expression"]), numbers)
    again = parse_instantiated(inst.text)
    assert again.text == inst.text
    assert execute_instantiated(inst.text).answer_text == record["answer"]
    assert execute(inst).answer_text == record["answer"]


def test_equal_values_share_one_n() -> None:
    inst = parse_instantiated("Sum 30 30 V0 Get V0")
    assert inst.numbers == ("30",)
    assert geodsl.print_program(inst.program) == "Sum N0 N0 V0 Get V0"


@pytest.mark.parametrize(
    ("text", "token_index"),
    [("Sum 3 #4 V0 Get V0", 2), ("3 Get V0", 0), ("Equal 3 Get V0", 0), ("", 0)],
)
def test_bad_instantiated_text(text: str, token_index: int) -> None:
    with pytest.raises(DSLSyntaxError) as info:
        parse_instantiated(text)
    assert info.value.token_index == token_index


def test_rejects_values_with_spaces_and_extra_numbers() -> None:
    with pytest.raises(BindingError, match="N0"):
        instantiate("Get N0", ["3 x"])
    with pytest.raises(BindingError, match="own numbers"):
        execute(instantiate("Get N0", ["3"]), ["4"])
