"""Answer scoring for evaluation: the generated trace executed with geodsl, compared with the stored answer."""

from __future__ import annotations

import math
from typing import Any

__all__ = ("REASONING_HEADER", "score")

REASONING_HEADER = "Solution:"
"""The line that opens the reasoning span of a PA target (the MTS pipeline's format)."""

_FORMATS = ("program", "pal", "cot_program", "cot_pal")


def _trace(text: str) -> str:
    """The reasoning part of a generated PA answer (everything after the reasoning header, if present)."""
    head, sep, tail = text.partition(REASONING_HEADER)
    return tail.lstrip("\n") if sep else head


def executed_answer(text: str, trace_type: str, sandbox: Any) -> float | None:
    """Execute a generated answer as its trace type; None when nothing runs to an answer.

    Args:
        text: The generated assistant text (clauses then trace).
        trace_type: The record's trace type; other names fall back to format detection.
        sandbox: A running ``geodsl.sandbox.Sandbox`` for PAL scripts, or None.

    Returns:
        The executed answer, or None (no trace found, execution failed, or a script with no sandbox).
    """
    from geodsl.errors import GeoDSLError, SandboxError
    from geodsl.traces import detect_format, trace_answer

    trace = _trace(text)
    fmt = trace_type if trace_type in _FORMATS else detect_format(trace)
    if fmt is None:
        return None
    try:
        return trace_answer(trace, fmt, sandbox=sandbox)
    except SandboxError:
        raise
    except GeoDSLError:
        return None


def score(
    text: str, trace_type: str, answer: str | float, *, sandbox: Any, tolerance: float
) -> tuple[bool, bool]:
    """Whether a generated answer executes, and whether its value matches the stored answer.

    Args:
        text: The generated assistant text.
        trace_type: The record's trace type.
        answer: The stored answer (a number, or text that ``geodsl.answers.parse_answer`` reads).
        sandbox: A running sandbox for PAL scripts, or None.
        tolerance: Relative and absolute tolerance.

    Returns:
        ``(executed, correct)``.
    """
    from geodsl.answers import parse_answer

    value = executed_answer(text, trace_type, sandbox)
    if value is None:
        return False, False
    expected = float(answer) if isinstance(answer, int | float) else parse_answer(answer)
    return True, math.isclose(value, expected, rel_tol=tolerance, abs_tol=tolerance)
