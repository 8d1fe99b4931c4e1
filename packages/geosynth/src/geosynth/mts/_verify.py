"""The rule-based stages: PAL translation and execution-based verification, with failure explanations."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import geodsl
from geodsl.answers import DEFAULT_ABS_TOL, answers_match
from geodsl.sandbox import SandboxResult
from geosynth.mts._models import DROP_REASONS, Drop, DropReason, SourceProblem, Trace, TraceType
from geosynth.mts._runner import ScriptRunner

__all__ = (
    "check_answer",
    "drop_row",
    "executor_verdict",
    "explain_program",
    "pal_shard",
    "trace_row",
    "verify_shard",
)

#: What the native executor's failure says about the problem, by error class (most specific first).
_EXECUTOR_VERDICTS: tuple[tuple[type[geodsl.GeoDSLError], str], ...] = (
    (
        geodsl.NonRealError,
        "the givens are geometrically contradictory: a step has only complex solutions "
        "(for example a negative squared length or a sine above 1)",
    ),
    (
        geodsl.InconsistentError,
        "the givens contradict each other: a step's equation disagrees with values fixed by earlier steps",
    ),
    (
        geodsl.AmbiguousError,
        "the program leaves unknowns that no later step pins down (degenerate configuration)",
    ),
    (geodsl.UnsolvableError, "a step's unknown cannot be determined (degenerate configuration)"),
    (geodsl.GeoDSLError, "the program does not execute"),
)


def executor_verdict(exc: geodsl.GeoDSLError) -> str:
    """What an executor (or PAL translation) failure says about the problem, with the error itself."""
    verdict = next(text for cls, text in _EXECUTOR_VERDICTS if isinstance(exc, cls))
    return f"{verdict} ({type(exc).__name__}: {exc})"


def drop_row(problem_id: str, stage: str, reason: DropReason, detail: str) -> dict[str, Any]:
    """A shard row recording a drop."""
    drop = Drop(
        problem_id=problem_id,
        stage=stage,
        reason=reason,
        lost=DROP_REASONS[reason][1],
        detail=" ".join(detail.split()),
    )
    return {"id": problem_id, "drop": drop.model_dump(mode="json")}


def trace_row(
    problem_id: str,
    trace_type: TraceType,
    text: str,
    *,
    passes: int = 1,
    answer: float | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A shard row carrying a trace (and optional bookkeeping such as the attempt history)."""
    trace = Trace(problem_id=problem_id, trace_type=trace_type, text=text, passes=passes, answer=answer)
    return {"id": problem_id, "trace": trace.model_dump(mode="json"), **extra}


def check_answer(result: SandboxResult, expected: float, rel_tol: float) -> str | None:
    """Why a script's result does not verify against ``expected``, or None when it does."""
    if result.error is not None:
        return result.error
    if result.answer is None:
        return "printed no number"
    if not math.isfinite(result.answer):
        return f"printed a non-finite value {result.answer}"
    if answers_match(result.answer, expected, rel_tol=rel_tol, abs_tol=min(DEFAULT_ABS_TOL, rel_tol)):
        return None
    return f"printed {result.answer:.6g}, expected {expected:.6g}"


def explain_program(problem: SourceProblem, rel_tol: float) -> str:
    """The native executor's verdict on a problem's program: why its PAL script could fail."""
    try:
        answer = geodsl.execute(problem.expression, problem.numbers).answer
    except geodsl.GeoDSLError as exc:
        return executor_verdict(exc)
    if answers_match(answer, problem.answer_value, rel_tol=rel_tol):
        return f"the executor reproduces the stored answer ({answer:.6g}), so the PAL translation is at fault"
    return (
        f"the program itself gives {answer:.6g}, not the stored {problem.answer}: the annotation is "
        "inconsistent with its problem"
    )


def pal_shard(problems: Sequence[SourceProblem]) -> list[dict[str, Any]]:
    """Stage ``prepare``: translate each instantiated program into a PAL script.

    :func:`geodsl.to_pal` runs the executor first, so a program that does not execute (contradictory
    givens, a degenerate configuration) is dropped here, as ``pal_translation``, with the executor's
    verdict on why.
    """
    rows: list[dict[str, Any]] = []
    for p in problems:
        try:
            script = geodsl.to_pal(p.expression, p.numbers)
        except geodsl.GeoDSLError as exc:
            rows.append(
                drop_row(p.id, "prepare", "pal_translation", f"no PAL script: {executor_verdict(exc)}")
            )
            continue
        rows.append({"id": p.id, "pal": script})
    return rows


def verify_shard(
    problems: Mapping[str, SourceProblem],
    pal_rows: Sequence[Mapping[str, Any]],
    runner: ScriptRunner,
    rel_tol: float,
) -> list[dict[str, Any]]:
    """Stage ``verify``: run each PAL script in the sandbox and compare with the stored answer."""
    todo = [r for r in pal_rows if "pal" in r]
    results = runner.run([r["pal"] for r in todo])
    outcome: dict[str, dict[str, Any]] = {}
    for row, result in zip(todo, results, strict=True):
        problem = problems[row["id"]]
        problem_why = check_answer(result, problem.answer_value, rel_tol)
        if problem_why is None:
            outcome[row["id"]] = trace_row(row["id"], "pal", row["pal"], answer=result.answer)
            continue
        reason: DropReason = "pal_failed" if result.error is not None else "pal_mismatch"
        detail = f"PAL script {problem_why}; {explain_program(problem, rel_tol)}"
        outcome[row["id"]] = drop_row(row["id"], "verify", reason, detail)
    return [outcome.get(r["id"], dict(r)) for r in pal_rows]
