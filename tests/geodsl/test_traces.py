"""Trace formats: detection, program and script extraction, and running a trace to its answer."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from geodsl.errors import ExecutionError, SandboxError, TraceError
from geodsl.traces import (
    TRACE_FORMATS,
    candidate_answer,
    detect_format,
    extract_program,
    extract_script,
    reasoning_part,
    trace_answer,
)

pytest.importorskip("geodsl.ops")

DATA = Path(__file__).parent / "data"
CASES: dict[str, dict[str, object]] = json.loads((DATA / "traces_cases.json").read_text())
PROBLEMS = ("prob494", "prob617")


def fixture_text(problem: str, fmt: str) -> str:
    return (DATA / f"traces_{problem}_{fmt}.txt").read_text()


def case(problem: str) -> dict[str, object]:
    return CASES[problem.replace("prob", "prob_")]


@pytest.mark.parametrize("problem", PROBLEMS)
@pytest.mark.parametrize("fmt", TRACE_FORMATS)
def test_detect_format_of_fixtures(problem: str, fmt: str) -> None:
    assert detect_format(fixture_text(problem, fmt)) == fmt


def test_detect_format_of_translator_output_is_pal() -> None:
    geodsl = pytest.importorskip("geodsl")
    script = geodsl.to_pal("Sum N0 N2 V0 Geo_Mean N0 V0 N1 Get x", ["x", "\\sqrt{174}", "3x+5"])
    assert detect_format(script) == "pal"
    assert detect_format(f"```python\n{script}\n```") == "pal"


def test_rationale_comments_turn_translator_output_into_cot_pal() -> None:
    geodsl = pytest.importorskip("geodsl")
    script = geodsl.to_pal("Sum N0 N2 V0 Geo_Mean N0 V0 N1 Get x", ["x", "\\sqrt{174}", "3x+5"])
    lines = script.splitlines()
    first_equation = next(
        i for i, line in enumerate(lines) if "Eq(" in line and not line.lstrip().startswith(("#", "from"))
    )
    lines.insert(
        first_equation, "# Tangent-secant theorem: the tangent squared is the outside part times the secant"
    )
    assert detect_format("\n".join(lines)) == "cot_pal"


@pytest.mark.parametrize("text", ["", "The answer is 12.", "I am not sure how to solve this problem."])
def test_detect_format_of_text_without_program_or_code(text: str) -> None:
    assert detect_format(text) is None


def test_extract_program_from_cot_program_final_line() -> None:
    assert extract_program(fixture_text("prob494", "cot_program")) == case("prob494")["instantiated"]


def test_extract_program_from_op_markers_without_final_line() -> None:
    assert extract_program(fixture_text("prob617", "cot_program")) == case("prob617")["instantiated"]


def test_extract_program_from_bare_programs() -> None:
    assert extract_program(fixture_text("prob494", "program")) == case("prob494")["program"]
    assert extract_program("  `Gsin N0 N2 N3 Get y`.  ") == "Gsin N0 N2 N3 Get y"


def test_extract_program_from_numbered_steps_without_markers() -> None:
    text = (
        "1. First, the two angles are supplementary: Sum N0 V0 C180\n"
        "2. Then the base angles of the isosceles triangle: Iso_Tri_Ang V0 V1\n"
        "3. Finally, Get V1."
    )
    assert extract_program(text) == "Sum N0 V0 C180 Iso_Tri_Ang V0 V1 Get V1"


def test_extract_program_prefers_a_restated_full_program() -> None:
    text = (
        "We use Gougu N1 N4 N3 on the right triangle.\n"
        "Putting it together: Geo_Mean N0 N1 N4 Gougu N1 N4 N3 Get y"
    )
    assert extract_program(text) == "Geo_Mean N0 N1 N4 Gougu N1 N4 N3 Get y"


def test_extract_program_ignores_operator_names_in_prose() -> None:
    assert extract_program("The Sum of the angles is what we Get in the end.") is None
    assert extract_program("Gougu N0 N1 N2 N3 N4") is None  # Gougu takes exactly 3 operands


def test_extract_script_from_fenced_block() -> None:
    script = extract_script(fixture_text("prob494", "cot_pal"))
    assert script is not None
    assert script.startswith("from sympy import")
    assert script.rstrip().endswith("pass")
    assert "So x = 6" not in script


def test_extract_script_from_bare_code_with_trailing_prose() -> None:
    text = "Here is the code:\nimport math\nprint(round(math.sqrt(2), 3))\nThis prints the diagonal."
    assert extract_script(text) == "import math\nprint(round(math.sqrt(2), 3))"


def test_extract_script_takes_the_last_printing_block() -> None:
    text = (
        "```python\nx = 1\nprint(x)\n```\nWait, that is wrong. Corrected:\n"
        "```python\nimport math\nprint(math.pi)\n```\n```text\n3.14159\n```"
    )
    assert extract_script(text) == "import math\nprint(math.pi)"


def test_extract_script_joins_split_blocks() -> None:
    text = "```python\nfrom sympy import sqrt\nside = 3\n```\nNow the diagonal:\n```python\nprint(float(sqrt(2) * side))\n```"
    assert extract_script(text) == "from sympy import sqrt\nside = 3\n\nprint(float(sqrt(2) * side))"


def test_extract_script_uses_an_unterminated_fence_only_when_it_parses() -> None:
    assert extract_script("```python\nimport math\nprint(math.e)\n") == "import math\nprint(math.e)"
    assert extract_script("```python\nimport math\nprint(math.e") is None


def test_extract_script_of_a_program_is_none() -> None:
    assert extract_script(fixture_text("prob494", "program")) is None
    assert extract_script(fixture_text("prob617", "cot_program")) is None


@pytest.mark.parametrize("problem", PROBLEMS)
@pytest.mark.parametrize("fmt", ["program", "cot_program"])
def test_trace_answer_of_program_formats(problem: str, fmt: str) -> None:
    pytest.importorskip("geodsl._api")
    numbers = case(problem)["numbers"]
    assert isinstance(numbers, list)
    answer = trace_answer(fixture_text(problem, fmt), fmt, numbers=[str(n) for n in numbers])  # type: ignore[arg-type]
    assert answer == pytest.approx(case(problem)["answer"], rel=1e-3)


@pytest.fixture(scope="module")
def sandbox() -> Iterator[object]:
    if not sys.platform.startswith("linux"):
        pytest.skip("the sandbox is Linux only")
    from geodsl.sandbox import Sandbox

    with Sandbox(workers=1) as box:
        yield box


@pytest.mark.parametrize("problem", PROBLEMS)
@pytest.mark.parametrize("fmt", ["pal", "cot_pal"])
def test_trace_answer_of_script_formats(problem: str, fmt: str, sandbox: object) -> None:
    answer = trace_answer(fixture_text(problem, fmt), fmt, sandbox=sandbox)  # type: ignore[arg-type]
    assert answer == pytest.approx(case(problem)["answer"], rel=1e-3)


def test_trace_answer_errors(sandbox: object) -> None:
    with pytest.raises(TraceError, match="no solution program"):
        trace_answer("no program here", "cot_program")
    with pytest.raises(TraceError, match="needs a sandbox"):
        trace_answer(fixture_text("prob617", "pal"), "pal")
    with pytest.raises(TraceError, match="unknown trace format"):
        trace_answer("Get x", "latex")  # type: ignore[arg-type]
    with pytest.raises(ExecutionError, match="ZeroDivisionError"):
        trace_answer("```python\nprint(1 / 0)\n```", "pal", sandbox=sandbox)  # type: ignore[arg-type]


# --- candidates: a generated answer executed as its trace ------------------------------------------------

PERCEPTION = "Diagram relations:\nline A B C\nAB = 3, BC = 4\n\nSolution:\n"


def test_reasoning_part_is_what_follows_the_header_line() -> None:
    assert reasoning_part(PERCEPTION + "Gougu 3 4 V0 Get V0") == "Gougu 3 4 V0 Get V0"
    assert reasoning_part("Gougu 3 4 V0 Get V0") == "Gougu 3 4 V0 Get V0"  # no header: the whole text
    script = 'x = 5\nprint("Solution:", x)'
    assert reasoning_part(script) == script  # not at the start of a line: part of the trace


@pytest.mark.parametrize(
    ("text", "trace_type", "numbers", "expected"),
    [
        (PERCEPTION + "Gougu 3 4 V0 Get V0", "program", (), 5.0),
        (PERCEPTION + "Gougu N0 N1 V0 Get V0", "program", ("3", "4"), 5.0),  # symbolic: the N list
        (PERCEPTION + "Gougu 3 4 V0 Get V0", None, (), 5.0),  # no type: detected
        (PERCEPTION + "Gougu 3 4 V0 Get V0", "unified", (), 5.0),  # not a format: detected
        (
            PERCEPTION + "Step 1: Op: `Multiple 3 4 V0` gives 12.\nfinal program is Multiple 3 4 V0 Get V0",
            None,
            (),
            12.0,
        ),
        (PERCEPTION + "no program here", "program", (), None),
        (PERCEPTION + "Gougu N0 N1 V0 Get V0", "program", (), None),  # symbolic without its N list
        (PERCEPTION + "```python\nprint(5)\n```", "pal", (), None),  # a script without a sandbox
    ],
)
def test_candidate_answer_of_programs(
    text: str, trace_type: str | None, numbers: tuple[str, ...], expected: float | None
) -> None:
    answer = candidate_answer(text, trace_type, numbers=numbers)
    assert answer == (None if expected is None else pytest.approx(expected))


def test_candidate_answer_of_scripts(sandbox: object) -> None:
    script = 'import math\nx = math.hypot(3, 4)\nprint("Solution:", x)'  # no header; the text prints one
    assert candidate_answer(script, "pal", sandbox=sandbox) == pytest.approx(5.0)  # type: ignore[arg-type]
    assert candidate_answer(PERCEPTION + script, None, sandbox=sandbox) == pytest.approx(5.0)  # type: ignore[arg-type]
    failing = PERCEPTION + "```python\nprint(1 / 0)\n```"
    assert candidate_answer(failing, "pal", sandbox=sandbox) is None  # type: ignore[arg-type]


class _DeadSandbox:
    """A sandbox whose workers died: it raises instead of returning a result."""

    def run_one(self, script: str) -> object:
        raise SandboxError("sandbox worker died and could not be restarted")


def test_candidate_answer_lets_a_broken_sandbox_fail() -> None:
    with pytest.raises(SandboxError, match="worker died"):  # the run cannot go on: not a wrong answer
        candidate_answer(PERCEPTION + "print(5)", "pal", sandbox=_DeadSandbox())  # type: ignore[arg-type]
