"""Answer scoring for evaluation: the generated answer executed as its trace, compared with the stored answer."""

from __future__ import annotations

import math
from typing import Any

__all__ = ("score",)


def score(
    text: str, trace_type: str, answer: str | float, *, sandbox: Any, tolerance: float
) -> tuple[bool, bool]:
    """Whether a generated answer executes, and whether its value matches the stored answer.

    Args:
        text: The generated assistant text (clauses, the ``Solution:`` header, then the trace).
        trace_type: The record's trace type; other names fall back to format detection.
        answer: The stored answer (a number, or text that ``geodsl.answers.parse_answer`` reads).
        sandbox: A running ``geodsl.sandbox.Sandbox`` for PAL scripts, or None (scripts then do not execute).
        tolerance: Relative and absolute tolerance.

    Returns:
        ``(executed, correct)``.
    """
    from geodsl.answers import parse_answer
    from geodsl.traces import candidate_answer

    value = candidate_answer(text, trace_type, sandbox=sandbox)
    if value is None:
        return False, False
    expected = float(answer) if isinstance(answer, int | float) else parse_answer(answer)
    return True, math.isclose(value, expected, rel_tol=tolerance, abs_tol=tolerance)
