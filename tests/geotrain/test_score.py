"""Evaluation scoring: generated traces executed with geodsl and compared with the stored answer."""

from __future__ import annotations

import contextlib

import pytest

from geotrain._score import score

PERCEPTION = "Diagram relations:\nline A B C\nAB = 3, BC = 4\n\nSolution:\n"


@pytest.mark.parametrize(
    ("text", "trace_type", "answer", "expected"),
    [
        (PERCEPTION + "Gougu 3 4 V0 Get V0", "program", "5", (True, True)),
        (PERCEPTION + "Multiple 3 4 V0 Get V0", "program", "5", (True, False)),
        (
            PERCEPTION + "Step 1: Op: `Multiple 3 4 V0` gives 12.\nfinal program is Multiple 3 4 V0 Get V0",
            "cot_program",
            "12.0",
            (True, True),
        ),
        (PERCEPTION + "no program here", "program", "5", (False, False)),
        (PERCEPTION + "Gougu 3 4 V0 Get V0", "unknown_type", r"\sqrt{25}", (True, True)),
        ("Gougu 3 4 V0 Get V0", "program", 5.04, (True, True)),  # no header: the whole text; within 1e-2
    ],
)
def test_program_traces(text: str, trace_type: str, answer: str | float, expected: tuple[bool, bool]) -> None:
    assert score(text, trace_type, answer, sandbox=None, tolerance=1e-2) == expected


def test_pal_scripts_run_in_the_sandbox() -> None:
    from geodsl.sandbox import Sandbox, SandboxLimits

    script = PERCEPTION + "```python\nimport math\nprint(math.hypot(3, 4))\n```"
    assert score(script, "pal", "5", sandbox=None, tolerance=1e-6) == (False, False)  # scripts need one
    with contextlib.closing(Sandbox(1, SandboxLimits(wall_seconds=5, cpu_seconds=5))) as sandbox:
        assert score(script, "pal", "5", sandbox=sandbox, tolerance=1e-6) == (True, True)
        assert score(script, "cot_pal", "6", sandbox=sandbox, tolerance=1e-6) == (True, False)
