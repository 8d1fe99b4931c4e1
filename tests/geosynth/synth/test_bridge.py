from __future__ import annotations

import math

import pytest
import sympy

from geodsl import answers_match, execute, parse_program
from geosynth.calc import CalcProblem, CalcSolution, CalcStep, Const, Equation, Num, Op, solve_calc
from geosynth.engine import Angle, Length, Perpendicular
from geosynth.synth._bridge import bridge_program, parse_statement, to_pgps

PROBLEM = CalcProblem(id="t", conditions=(), goal=Length.of("A", "C"))


def _given(number: int, statement: str, *quantities: str) -> CalcStep:
    return CalcStep(number=number, rule="given", statement=statement, quantities=quantities)


def _step(number: int, rule: str, statement: str, *quantities: str) -> CalcStep:
    return CalcStep(number=number, rule=rule, statement=statement, quantities=quantities)


def _goal(number: int, statement: str, value: float) -> CalcStep:
    return CalcStep(number=number, rule="goal", statement=statement, quantities=(), value=value)


def _runs_to(program_text: str, numbers: tuple[str, ...], answer: float) -> bool:
    parse_program(program_text)  # valid syntax for the 34-operator language
    return answers_match(execute(program_text, numbers).answer, answer)


def test_pythagoras_becomes_gougu() -> None:
    solution = CalcSolution(
        answer=5.0,
        steps=(
            _given(1, "AB = 3", "AB"),
            _given(2, "BC = 4", "BC"),
            _given(3, "AB ⊥ BC"),
            _step(4, "pythagoras", "AC^2 = AB^2 + BC^2", "AB", "AC", "BC"),
            _goal(5, "AC = 5", 5.0),
        ),
    )
    program = to_pgps(PROBLEM, solution)
    assert program is not None
    assert program.program == "Gougu N0 N1 V0 Get V0"
    assert program.numbers == ("3", "4")
    assert program.clauses == ("AB = 3", "BC = 4", r"AB \perp BC")
    assert program.answer == 5.0 and program.executed == pytest.approx(5.0)
    assert _runs_to(program.program, program.numbers, 5.0)


def test_angle_sums_use_sum_with_vocabulary_constants_and_radian_givens_are_converted() -> None:
    solution = CalcSolution(
        answer=66.0,
        steps=(
            _given(1, "∠ACB = 3·pi/10°", "∠ACB"),  # radians in the statement: 54 degrees
            _given(2, "∠BAC = 60", "∠BAC"),
            _step(3, "triangle angle sum", "∠ABC + ∠ACB + ∠BAC = 180°", "∠ABC", "∠ACB", "∠BAC"),
            _goal(4, "∠ABC = 66", 66.0),
        ),
    )
    program = to_pgps(PROBLEM, solution)
    assert program is not None
    assert program.numbers == ("54", "60")
    assert program.clauses[0] == r"m \angle ACB = 54"
    assert program.program.startswith("Sum ") and "C180" in program.program
    assert _runs_to(program.program, program.numbers, 66.0)


def test_letters_in_given_values_and_a_variable_goal() -> None:
    solution = CalcSolution(
        answer=20.0,
        steps=(
            _given(1, "∠ABD = 2·x + 10", "x", "∠ABD"),
            _given(2, "∠DBC = x + 20", "x", "∠DBC"),
            _step(3, "straight angle", "∠ABD + ∠DBC = 180°", "∠ABD", "∠DBC"),
            _step(4, "solve", "x = 50", "x"),
            _goal(5, "x = 50", 50.0),
        ),
    )
    outcome = bridge_program(PROBLEM, solution)
    assert outcome.program is None and outcome.reason is not None and "gives 50" in outcome.reason
    right = solution.model_copy(update={"answer": 50.0})
    program = to_pgps(PROBLEM, right)
    assert program is not None
    assert program.numbers == ("2x+10", "x+20")
    assert program.program.endswith("Get x")
    assert _runs_to(program.program, program.numbers, 50.0)


def test_law_of_cosines_and_sas_area_are_matched_from_the_solver_wording() -> None:
    solution = CalcSolution(
        answer=60.0,
        steps=(
            _step(1, "triangle area", "S(ABC) = AB·BC·sin(∠ABC)/2", "AB", "BC", "S(ABC)", "∠ABC"),
            _given(2, "AB = 13", "AB"),
            _given(3, "BC = 13", "BC"),
            _step(4, "law of cosines", "AC^2 = AB^2 - 2·AB·BC·cos(∠ABC) + BC^2", "AB", "AC", "BC", "∠ABC"),
            _given(5, "AC = 10", "AC"),
            _step(6, "solve", "∠ABC = 45.2397298960809°", "∠ABC"),
            _goal(7, "S(ABC) = 60", 60.0),
        ),
    )
    program = to_pgps(PROBLEM, solution)
    assert program is not None
    ops = [t for t in program.program.split() if t[0].isupper() and not t[1:].isdigit()]
    assert ops == ["Tria_SAS_Area", "Cos_Law", "Get"]
    assert _runs_to(program.program, program.numbers, 60.0)


def test_equalities_share_one_operand_and_pentagons_use_their_angle_sum() -> None:
    steps = [
        _given(i + 1, f"∠{n} = {v}", f"∠{n}")
        for i, (n, v) in enumerate((("A1", 100), ("B1", 110), ("C1", 120)))
    ]
    steps += [
        _step(4, "isosceles triangle", "∠D1 = ∠E1", "∠D1", "∠E1"),
        _step(
            5, "polygon angle sum", "∠A1 + ∠B1 + ∠C1 + ∠D1 + ∠E1 = 540°", "∠A1", "∠B1", "∠C1", "∠D1", "∠E1"
        ),
        _goal(6, "∠D1 = 105", 105.0),
    ]
    program = to_pgps(PROBLEM, CalcSolution(answer=105.0, steps=tuple(steps)))
    assert program is not None
    assert "Ngon_Angsum C5 V0" in program.program
    assert "Sum N0 N1 N2 V1 V1 V0" in program.program  # D1 and E1 are one operand, counted twice
    assert program.program.endswith("Get V1")
    assert _runs_to(program.program, program.numbers, 105.0)


@pytest.mark.parametrize(
    ("statement", "quantities", "reason"),
    [
        ("AC^3 = AB·BC", ("AB", "AC", "BC"), "no operator expresses"),
        ("AC = AB + 7", ("AB", "AC"), "constant 7 is neither given"),
    ],
)
def test_steps_without_a_program_form_give_a_reason(
    statement: str, quantities: tuple[str, ...], reason: str
) -> None:
    solution = CalcSolution(
        answer=5.0,
        steps=(
            _given(1, "AB = 3", "AB"),
            _given(2, "BC = 4", "BC"),
            _step(3, "x", statement, *quantities),
            _goal(4, "AC = 5", 5.0),
        ),
    )
    outcome = bridge_program(PROBLEM, solution)
    assert outcome.program is None
    assert outcome.reason is not None and reason in outcome.reason and "problem t" in outcome.reason


def test_unsolved_solutions_have_no_program() -> None:
    assert bridge_program(PROBLEM, CalcSolution(answer=None)).reason == "the solution has no answer"


def test_parse_statement_reads_degrees_and_radians() -> None:
    expr, owner = parse_statement("∠BAD = pi·∠ADC/90", ("∠BAD", "∠ADC"))
    names = {q: s for s, q in owner.items()}
    assert sympy.simplify(expr.subs({names["∠ADC"]: 30, names["∠BAD"]: 60})) == 0  # ∠BAD = 2·∠ADC
    expr, owner = parse_statement("BC·sin(∠ACB) = AB·sin(∠BAC)", ("AB", "BC", "∠ACB", "∠BAC"))
    names = {q: s for s, q in owner.items()}
    values = {names["AB"]: 1, names["BC"]: 2, names["∠ACB"]: 30, names["∠BAC"]: 90}
    assert abs(float(expr.subs(values))) < 1e-12  # sines of degrees: 2·sin 30° = sin 90°


def test_a_solved_problem_round_trips_through_the_executor() -> None:
    problem = CalcProblem(
        id="demo",
        conditions=(
            Equation(expr=Op(op="-", args=(Length.of("A", "B"), Num(text="3")))),
            Equation(expr=Op(op="-", args=(Length.of("B", "C"), Num(text="4")))),
            Perpendicular.of("A", "B", "B", "C"),
        ),
        goal=Length.of("A", "C"),
    )
    solution = solve_calc(problem, time_limit=30)
    assert solution.answer == pytest.approx(5.0)
    program = to_pgps(problem, solution)
    assert program is not None, bridge_program(problem, solution).reason
    assert _runs_to(program.program, program.numbers, 5.0)


def test_a_goal_equal_to_a_given_value_is_read_through_an_equal_step() -> None:
    solution = CalcSolution(
        answer=7.0,
        steps=(
            _given(1, "AB = 7", "AB"),
            _step(2, "isosceles triangle", "AC = AB", "AB", "AC"),
            _goal(3, "AC = 7", 7.0),
        ),
    )
    program = to_pgps(PROBLEM, solution)
    assert program is not None
    assert program.program == "Equal N0 V0 Get V0"
    assert _runs_to(program.program, program.numbers, 7.0)


def test_a_law_of_cosines_at_a_right_angle_is_written_as_pythagoras() -> None:
    solution = CalcSolution(
        answer=10 * 2**0.5,
        steps=(
            _step(1, "law of cosines", "AC^2 = AB^2 - 2·AB·BC·cos(∠ABC) + BC^2", "AB", "AC", "BC", "∠ABC"),
            _given(2, "AB = BC", "AB", "BC"),
            _given(3, "AB = 10", "AB"),
            _given(4, "AB ⊥ BC"),
            _step(5, "perpendicular", "∠ABC = 90°", "∠ABC"),
            _goal(6, "AC = 14.1421", 10 * 2**0.5),
        ),
    )
    program = to_pgps(PROBLEM, solution)
    assert program is not None
    assert program.program == "Gougu N0 N0 V0 Get V0"
    assert _runs_to(program.program, program.numbers, 10 * 2**0.5)


def test_an_angle_in_a_goal_expression_is_answered_in_degrees() -> None:
    radians_goal = CalcProblem(
        id="r",
        conditions=(),
        goal=Op(op="*", args=(Angle.of("A", "B", "C"), Op(op="/", args=(Const(name="pi"), Num(text="180"))))),
    )
    solution = CalcSolution(
        answer=math.radians(66.0),
        steps=(
            _given(1, "∠ACB = 54", "∠ACB"),
            _given(2, "∠BAC = 60", "∠BAC"),
            _step(3, "triangle angle sum", "∠ABC + ∠ACB + ∠BAC = 180°", "∠ABC", "∠ACB", "∠BAC"),
            _goal(4, "∠ABC = 1.15192", math.radians(66.0)),
        ),
    )
    program = to_pgps(radians_goal, solution)
    assert program is not None and program.answer == pytest.approx(66.0)
    assert _runs_to(program.program, program.numbers, 66.0)


def test_symbolic_given_values_are_written_in_geodsl_value_syntax() -> None:
    solution = CalcSolution(
        answer=8 * 3**0.5 / math.pi,
        steps=(
            _given(1, "AB = pi·x/2", "AB", "x"),
            _given(2, "AC = 4·sqrt(3)", "AC"),
            _step(3, "x", "AB = AC", "AB", "AC"),
            _goal(4, "x = 4.41", 8 * 3**0.5 / math.pi),
        ),
    )
    outcome = bridge_program(PROBLEM, solution)
    assert outcome.program is not None, outcome.reason
    assert outcome.program.numbers == (r"\frac{\pi*x}{2}", r"4\sqrt{3}")
    assert sorted(outcome.program.program.split()[1:3]) == ["N0", "N1"]


def test_a_variable_holding_an_angle_in_radians_is_read_in_degrees() -> None:
    solution = CalcSolution(
        answer=math.radians(108.0),
        steps=(
            _given(1, "∠QSR = 180·angle_1/pi", "angle_1", "∠QSR"),
            _given(2, "∠PSQ = 180·angle_2/pi", "angle_2", "∠PSQ"),
            _given(3, "angle_2 = 2·pi/5", "angle_2"),  # 72 degrees
            _step(4, "straight angle", "∠PSQ + ∠QSR = 180°", "∠PSQ", "∠QSR"),
            _goal(5, "angle_1 = 1.88496", math.radians(108.0)),
        ),
    )
    program = to_pgps(PROBLEM, solution)
    assert program is not None, bridge_program(PROBLEM, solution).reason
    assert program.answer == pytest.approx(108.0)
    assert program.numbers == ("72",)
    assert _runs_to(program.program, program.numbers, 108.0)
