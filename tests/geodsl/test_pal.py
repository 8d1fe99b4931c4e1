"""PAL translation: short, deterministic SymPy scripts that solve in the executor's plan and agree with it."""

from __future__ import annotations

import ast
import contextlib
import io
import json
import math
import random
import subprocess
import sys
from pathlib import Path
from typing import cast

import pytest
import sympy

from geodsl import (
    OPERATORS,
    BindingError,
    DSLSyntaxError,
    InconsistentError,
    NoAnswerError,
    NonRealError,
    execute,
    parse_program,
    to_pal,
)
from geodsl._exact import SYMPY_MATH
from geodsl.pal import _FORMS, ROOT_HELPER, _term
from geodsl.traces import detect_format

DATA = Path(__file__).parent / "data"
EXAMPLES = json.loads((DATA / "examples_96.json").read_text())
README_PROGRAM = ("Sum N0 N2 V0 Geo_Mean N0 V0 N1 Get x", ["x", "\\sqrt{174}", "3x+5"])


def _numbers(record: dict[str, object]) -> list[str]:
    return [str(v) for v in record["var_values"]]  # type: ignore[union-attr]


def _run_in_process(script: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(script, "<pal>", "exec"), {"__name__": "__main__"})  # our own generated code
    return out.getvalue()


def test_a_one_step_program_reads_like_a_worked_solution() -> None:
    script = to_pal("Gsin N0 N2 N3 Get y", ["24", "x", "y", "30"])
    assert script == (
        "from sympy import Eq, pi, sin, solve, symbols\n"
        "\n"
        'y = symbols("y")\n'
        "\n"
        "# step 1: Gsin - In a right triangle the sine of an angle is the opposite side over the hypotenuse\n"
        "eq1 = Eq(sin(30 * pi / 180), 24 / y)\n"
        "y = solve(eq1, y)[0]\n"
        "\n"
        'print(f"{float(y):.3f}")\n'
    )
    assert _run_in_process(script) == "48.000\n"


def test_the_same_input_gives_the_same_bytes() -> None:
    record = EXAMPLES[5]
    scripts = {to_pal(str(record["dedup_expression"]), _numbers(record)) for _ in range(3)}
    assert len(scripts) == 1


def test_joint_steps_are_solved_together_with_the_root_rule_on_the_letter() -> None:
    script = to_pal(*README_PROGRAM)
    assert "eq1 = Eq(x + 3*x + 5, V0)" in script
    assert "eq2 = Eq(x * V0, sqrt(174)**2)" in script
    assert "solution = pick(solve([eq1, eq2], [x, V0], dict=True), key=lambda sol: sol[x])" in script
    assert "x, V0 = solution[x], solution[V0]" in script
    assert _run_in_process(script) == "6.000\n"


def test_a_linear_joint_solve_takes_its_only_solution() -> None:
    script = to_pal("Sum V0 N1 N3 Proportion N0 N2 V0 N1 Get a", ["20", "a", "24", "27.5"])
    assert "solution = solve([eq1, eq2], [a, V0], dict=True)[0]" in script
    assert "def pick" not in script
    assert float(_run_in_process(script)) == pytest.approx(
        execute("Sum V0 N1 N3 Proportion N0 N2 V0 N1 Get a", ["20", "a", "24", "27.5"]).answer, abs=5e-4
    )


def test_an_equation_waits_until_the_executor_can_solve_it() -> None:
    # Step 1 has two unknowns; the executor solves steps 2 and 3 first and comes back to it.
    script = to_pal("Sum N0 N2 V0 Sum N1 N3 V1 Proportion N0 N1 V1 V0 Get x", ["6", "7", "x", "12"])
    order = [line.split(" = ")[0] for line in script.splitlines() if " = solve(" in line]
    assert order == ["V1", "V0", "x"]
    assert script.index("eq2 = Eq(") < script.index("eq3 = Eq(") < script.index("eq1 = Eq(")
    assert all(line.count("solve(") <= 1 for line in script.splitlines())
    assert _run_in_process(script) == "16.167\n"


@pytest.mark.parametrize(
    ("program", "numbers", "expected", "line"),
    [
        ("Gtan N0 N1 V0 Get V0", ["-3", "3"], "135.000", "V0 = solve(eq1, V0)[0] % 180"),
        (
            "Gsin N0 N1 V0 Get V0",
            ["12", "25"],
            "28.685",
            "V0 = pick([root % 360 for root in solve(eq1, V0)])",
        ),
        (
            "Gsin N0 N1 V0 Get V0",
            ["-3", "6"],
            "210.000",
            "V0 = pick([root % 360 for root in solve(eq1, V0)])",
        ),
        ("Gougu N0 N1 N2 Get x", ["x-1", "x", "5"], "4.000", "x = pick(solve(eq1, x))"),
        ("Equal N0 N1 Get x", ["x^{2}+6x", "-8"], "-2.000", "x = pick(solve(eq1, x))"),
    ],
)
def test_the_root_rule_and_angles_follow_the_executor(
    program: str, numbers: list[str], expected: str, line: str
) -> None:
    script = to_pal(program, numbers)
    assert line in script.splitlines()
    assert execute(program, numbers).answer_text == expected
    assert _run_in_process(script) == expected + "\n"


def test_a_transcendental_equation_uses_nsolve() -> None:
    script = to_pal("ArcSeg_Area N0 V0 N1 Get V0", ["5", "10"])
    assert "eq1 = Eq(pi * 5**2 * V0 / 360 - 5**2 * sin(V0 * pi / 180) / 2, 10)" in script
    assert "V0 = nsolve(eq1, V0, 100)" in script
    assert _run_in_process(script) == execute("ArcSeg_Area N0 V0 N1 Get V0", ["5", "10"]).answer_text + "\n"


def test_numbers_stay_exact_and_readable() -> None:
    script = to_pal("Multiple V0 C3 N0 Get V0", ["3\\frac{3}{4}"])
    assert "eq1 = Eq(V0 * 3, Rational(15, 4))" in script
    assert _run_in_process(script) == "1.250\n"
    assert "Eq(Rational(12, 25), V0 / 7)" in to_pal("Proportion N0 N1 V0 N2 Get V0", ["12", "25", "7"])
    assert "Eq(x + 9.4, 12)" in to_pal("Sum N0 N1 N2 Get x", ["x", "9.4", "12"])
    assert "Eq(x + (-3), 5)" in to_pal("Sum N0 N1 N2 Get x", ["x", "-3", "5"])
    assert "Eq((x - 1)**2 + x**2, 5**2)" in to_pal("Gougu N0 N1 N2 Get x", ["x-1", "x", "5"])


def test_get_of_a_value_prints_it() -> None:
    script = to_pal("Equal N0 N1 Get N2", ["2x", "6", "3x-1"])
    assert script.endswith('print(f"{float(3*x - 1):.3f}")\n')
    assert _run_in_process(script) == "8.000\n"
    assert _run_in_process(to_pal("Get N0", ["3\\sqrt{2}"])) == "4.243\n"


def test_an_equation_no_solve_needs_stays_in_place() -> None:
    script = to_pal("Equal N0 N1 Equal N1 N2 Get x", ["x", "5", "5"])
    assert "eq2 = Eq(5, 5)" in script
    assert _run_in_process(script) == "5.000\n"


@pytest.mark.parametrize(
    ("program", "numbers", "error"),
    [
        ("Equal N0 V0", ["1"], NoAnswerError),
        ("Gsin N0 N1 N2 Get x", ["1"], BindingError),
        ("Gsin N0 N1", ["1"], DSLSyntaxError),
        ("Equal N0 N1 Gougu N2 N3 x Get x", ["2x+1", "7", "3", "4"], InconsistentError),
        ("Gsin N0 N1 V0 Get V0", ["3", "2"], NonRealError),
    ],
)
def test_a_program_that_does_not_run_gets_no_script(
    program: str, numbers: list[str], error: type[Exception]
) -> None:
    with pytest.raises(error):
        to_pal(program, numbers)


# --- no solver harness ----------------------------------------------------------------------------


def _structure_problems(script: str) -> list[str]:
    """What in a script goes beyond imports, symbols, equations, solves, the root-rule helper and one print."""
    tree = ast.parse(script)
    problems: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            if f"{ast.get_source_segment(script, node)}\n" != ROOT_HELPER:
                problems.append(f"defines {node.name}")
        elif isinstance(node, ast.ImportFrom):
            if node.module != "sympy":
                problems.append(f"imports from {node.module}")
        elif not isinstance(node, ast.Assign) and not (
            isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
        ):
            problems.append(f"has a {type(node).__name__} statement")
    prints = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "print"]
    if len(prints) != 1:
        problems.append(f"{len(prints)} print calls")
    return problems


def test_the_helper_is_small() -> None:
    assert len(ROOT_HELPER.splitlines()) <= 8
    assert [n.name for n in ast.walk(ast.parse(ROOT_HELPER)) if isinstance(n, ast.FunctionDef)] == ["pick"]


def test_scripts_carry_no_solver_harness_and_stay_short() -> None:
    sizes = []
    for record in EXAMPLES:
        script = to_pal(str(record["dedup_expression"]), _numbers(record))
        assert _structure_problems(script) == [], record["id"]
        steps = sum(
            1 for token in str(record["dedup_expression"]).split() if token in OPERATORS and token != "Get"
        )
        assert script.count(" = Eq(") == steps, record["id"]  # one equation per step
        sizes.append(len(script))
    assert max(sizes) < 1500
    assert sorted(sizes)[len(sizes) // 2] < 500


def test_translator_comments_are_not_rationales() -> None:
    # The MTS pipeline tells PAL from CoT-PAL by rationale comments; the step comments must not count.
    for record in EXAMPLES[:20]:
        assert detect_format(to_pal(str(record["dedup_expression"]), _numbers(record))) == "pal"


# --- the equations are the registry's --------------------------------------------------------------


def _arities(name: str) -> list[int]:
    spec = OPERATORS[name]
    return list(range(spec.min_arity, (spec.max_arity or spec.min_arity + 1) + 1))


def _equation_code(program: str) -> str:
    """The ``Eq(...)`` code written for the first step of a program whose operands are all letters."""
    step = parse_program(program).steps[0]
    lhs, rhs = _FORMS[step.op]([_term(o, []) for o in step.operands])
    return f"Eq({lhs}, {rhs})"


@pytest.mark.parametrize("name", sorted(n for n in OPERATORS if n != "Get"))
def test_each_written_equation_holds_exactly_when_the_residual_vanishes(name: str) -> None:
    spec = OPERATORS[name]
    assert spec.residual is not None
    rng = random.Random(name)
    for arity in _arities(name):
        letters = "abcdefgh"[:arity]
        syms = sympy.symbols(" ".join(letters))
        eq = eval(
            _equation_code(f"{name} {' '.join(letters)} Get a"),
            {**vars(sympy), **dict(zip(letters, syms, strict=True))},
        )
        free = next(k for k in range(arity) if k not in spec.trig_inverse and k not in spec.minimums)
        for _ in range(3):
            values = [
                rng.uniform(3.0, 6.0) if k in spec.minimums else rng.uniform(1.5, 4.0) for k in range(arity)
            ]
            # move one operand so that the residual vanishes: the written equation must then hold ...
            z = sympy.Symbol("z")
            residual = spec.residual([z if k == free else v for k, v in enumerate(values)], SYMPY_MATH)
            values[free] = float(cast(sympy.Expr, sympy.nsolve(residual, z, values[free])))
            gap = eq.lhs - eq.rhs
            assert abs(float(gap.subs(dict(zip(syms, values, strict=True))))) < 1e-6
            # ... and fail once that operand moves away again
            values[free] += 1.0
            assert abs(float(gap.subs(dict(zip(syms, values, strict=True))))) > 1e-6


# --- agreement --------------------------------------------------------------------------------------


@pytest.mark.parametrize("record", EXAMPLES, ids=[r["id"] for r in EXAMPLES])
def test_scripts_agree_with_the_executor(record: dict[str, object]) -> None:
    numbers = _numbers(record)
    program = parse_program(str(record["dedup_expression"]))
    expected = execute(program, numbers).answer
    assert math.isclose(float(_run_in_process(to_pal(program, numbers))), expected, abs_tol=5e-3)


def test_a_script_runs_standalone_with_only_sympy(tmp_path: Path) -> None:
    path = tmp_path / "script.py"
    path.write_text(to_pal(*README_PROGRAM))
    done = subprocess.run(
        [sys.executable, "-I", str(path)], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout == "6.000\n" and done.stderr == ""


@pytest.mark.slow
@pytest.mark.parametrize("record", EXAMPLES[:8], ids=[r["id"] for r in EXAMPLES[:8]])
def test_scripts_run_standalone(record: dict[str, object], tmp_path: Path) -> None:
    path = tmp_path / "script.py"
    path.write_text(to_pal(str(record["dedup_expression"]), _numbers(record)))
    done = subprocess.run(
        [sys.executable, "-I", str(path)], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == record["answer"]
