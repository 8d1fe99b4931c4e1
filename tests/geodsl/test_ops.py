"""The operator registry: completeness, and every operator solved for every operand slot."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

import geodsl
from geodsl import OPERATORS
from geodsl.ops import FLOAT_MATH, arity_error

SPEC_OPERATORS = {
    "ArcSeg_Area",
    "Chord2_Ang",
    "Circle_D_Area",
    "Circle_D_Circum",
    "Circle_R_Area",
    "Circle_R_Circum",
    "Cos_Law",
    "Equal",
    "Gcos",
    "Geo_Mean",
    "Get",
    "Gougu",
    "Gsin",
    "Gtan",
    "Iso_Tri_Ang",
    "Kite_Area",
    "Median",
    "Multiple",
    "Ngon_Angsum",
    "PRK_Perim",
    "Para_Area",
    "Proportion",
    "RNgon_B_Area",
    "RNgon_H_Area",
    "RNgon_L_Area",
    "Ratio",
    "Rect_Area",
    "Rhom_Area",
    "Sin_Law",
    "Sum",
    "TanSec_Ang",
    "Trap_Area",
    "Tria_BH_Area",
    "Tria_SAS_Area",
}


@dataclass(frozen=True)
class OpCase:
    """Operand values (N-value strings) that satisfy ``op``; ``expected`` overrides the answer per slot."""

    op: str
    values: tuple[str, ...]
    expected: dict[int, float] = field(default_factory=dict[int, float])


CASES = [
    OpCase("Sum", ("5", "7", "12")),
    OpCase("Sum", ("3", "4", "5", "12")),
    OpCase("Multiple", ("3", "4", "12")),
    OpCase("Multiple", ("2", "3", "4", "24")),
    OpCase("Equal", ("7", "7")),
    OpCase("Iso_Tri_Ang", ("40", "70")),
    OpCase("Gougu", ("3", "4", "5")),
    OpCase("Gsin", ("1", "2", "30")),
    OpCase("Gcos", ("1", "2", "60")),
    OpCase("Gtan", ("1", "1", "45")),
    # c^2 - 8c + 15 = 0 has roots 3 and 5: both positive, so the root rule takes 3
    OpCase("Cos_Law", ("7", "8", "5", "60"), {2: 3.0}),
    OpCase("Sin_Law", ("30", "5", "90", "10")),
    OpCase("Median", ("4", "6", "8")),
    OpCase("Geo_Mean", ("4", "9", "6")),
    OpCase("Proportion", ("2", "3", "4", "6")),
    OpCase("Proportion", ("2", "3", "16", "36", "2")),
    OpCase("Ratio", ("6", "3", "2")),
    OpCase("Ratio", ("400", "64", "0.5", "2.5")),
    OpCase("Chord2_Ang", ("50", "40", "60")),
    OpCase("TanSec_Ang", ("30", "40", "100")),
    OpCase("Tria_BH_Area", ("6", "4", "12")),
    OpCase("Tria_SAS_Area", ("4", "30", "5", "5")),
    OpCase("PRK_Perim", ("3", "4", "14")),
    OpCase("Para_Area", ("3", "4", "12")),
    OpCase("Rect_Area", ("3", "4", "12")),
    OpCase("Rhom_Area", ("3", "4", "24")),
    OpCase("Kite_Area", ("3", "4", "6")),
    OpCase("Trap_Area", ("3", "5", "4", "16")),
    OpCase("Circle_R_Circum", ("3", "6\\pi")),
    OpCase("Circle_R_Circum", ("3", "60", "\\pi")),
    OpCase("Circle_D_Circum", ("2", "2\\pi")),
    OpCase("Circle_D_Circum", ("6", "60", "\\pi")),
    OpCase("Circle_R_Area", ("3", "9\\pi")),
    OpCase("Circle_R_Area", ("6", "90", "9\\pi")),
    OpCase("Circle_D_Area", ("4", "4\\pi")),
    OpCase("Circle_D_Area", ("4", "180", "2\\pi")),
    OpCase("ArcSeg_Area", ("2", "90", "\\pi-2")),
    OpCase("Ngon_Angsum", ("6", "720")),
    OpCase("RNgon_B_Area", ("4", "3", "9")),
    OpCase("RNgon_L_Area", ("4", "1", "2")),
    OpCase("RNgon_H_Area", ("4", "1", "4")),
]

SLOT_CASES = [
    pytest.param(case, slot, id=f"{case.op}/{len(case.values)}-slot{slot}")
    for case in CASES
    for slot in range(len(case.values))
]


def _program(case: OpCase, slot: int) -> str:
    tokens = ["V0" if k == slot else f"N{k}" for k in range(len(case.values))]
    return f"{case.op} {' '.join(tokens)} Get V0"


def _value(text: str) -> float:
    return geodsl.execute("Get N0", [text]).answer


def test_registry_has_exactly_the_34_operators() -> None:
    assert set(OPERATORS) == SPEC_OPERATORS


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_every_entry_is_complete(name: str) -> None:
    spec = OPERATORS[name]
    assert spec.name == name
    assert spec.min_arity >= 1
    assert spec.max_arity is None or spec.max_arity >= spec.min_arity
    assert spec.meaning.strip() and spec.equation.strip() and spec.roles
    assert (spec.residual is None) == (name == "Get")
    assert all(0 <= k < (spec.max_arity or 99) for k in spec.angle_slots)
    assert set(spec.trig_inverse) <= spec.angle_slots


def test_every_operator_is_exercised_for_every_arity() -> None:
    covered = {(c.op, len(c.values)) for c in CASES} | {("Get", 1)}
    for spec in OPERATORS.values():
        top = spec.max_arity if spec.max_arity is not None else spec.min_arity + 1
        for n in range(spec.min_arity, top + 1):
            if spec.variadic and n > spec.min_arity:
                continue
            assert (spec.name, n) in covered, f"no solve case for {spec.name} with {n} operands"


@pytest.mark.parametrize(("case", "slot"), SLOT_CASES)
@pytest.mark.parametrize("mode", ["numeric", "exact"])
def test_operator_solved_for_each_slot(case: OpCase, slot: int, mode: geodsl.Mode) -> None:
    expected = case.expected.get(slot, _value(case.values[slot]))
    result = geodsl.execute(_program(case, slot), case.values, mode=mode)
    assert result.answer == pytest.approx(expected, rel=1e-5, abs=1e-6)


@pytest.mark.parametrize(("case", "slot"), SLOT_CASES)
def test_residual_vanishes_on_the_case_values(case: OpCase, slot: int) -> None:
    spec = OPERATORS[case.op]
    assert spec.residual is not None
    values = [_value(v) for v in case.values]
    scale = max(abs(v) for v in values) ** 2
    # 1e-6: trig uses the reference's pi = 3.141593, so cos(60) is only nearly 1/2
    assert abs(spec.residual(values, FLOAT_MATH)) <= 1e-6 * scale


@pytest.mark.parametrize(
    ("name", "arity"), [(spec.name, n) for spec in OPERATORS.values() for n in spec.power_forms]
)
def test_power_forms_name_the_slots_of_the_residual(name: str, arity: int) -> None:
    # the residual is a^e * d - b^e * c with the slots the power form names (d = 1 when absent)
    spec = OPERATORS[name]
    assert spec.residual is not None and spec.accepts(arity)
    form = spec.power_forms[arity]
    for values in ([3.0, 2.0, 5.0, 7.0, 11.0], [1.5, 4.0, 0.5, 2.5, 9.0]):
        v = values[:arity]
        q = v[form.rhs_den] if form.rhs_den is not None else 1.0
        expected = v[form.num] ** v[form.exponent] * q - v[form.den] ** v[form.exponent] * v[form.rhs_num]
        assert spec.residual(v, FLOAT_MATH) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("name", "arity", "ok"),
    [
        ("Sum", 2, False),
        ("Sum", 3, True),
        ("Sum", 9, True),
        ("Equal", 3, False),
        ("Proportion", 6, False),
        ("Circle_R_Area", 1, False),
        ("Circle_R_Area", 4, False),
        ("Circle_D_Area", 3, True),
        ("Ratio", 5, False),
        ("Get", 2, False),
    ],
)
def test_arity_table(name: str, arity: int, ok: bool) -> None:
    assert OPERATORS[name].accepts(arity) is ok
    message = arity_error(OPERATORS[name], arity)
    assert (message is None) is ok
    if message is not None:
        assert name in message and str(arity) in message


def test_role_names_follow_the_operand_positions() -> None:
    assert OPERATORS["Gougu"].role_of(2, 3) == "hypotenuse"
    assert OPERATORS["Sum"].role_of(0, 5) == "summand"
    assert OPERATORS["Sum"].role_of(4, 5) == "total"


def test_package_readme_lists_every_operator_with_its_arity() -> None:
    readme = Path(__file__).resolve().parents[2] / "packages" / "geodsl" / "README.md"
    rows = {
        line.split("|")[1].strip(" `"): line.split("|")[2].strip()
        for line in readme.read_text().splitlines()
        if line.startswith("| `")
    }
    for name, spec in OPERATORS.items():
        assert rows.get(name) == spec.arity_text(), f"README operator table is out of date for {name}"
