"""Boundary data of the MTS pipeline: source problems, traces, drops (frozen, strict pydantic models)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = (
    "DROP_REASONS",
    "TRACE_TYPES",
    "Drop",
    "DropReason",
    "MTSModel",
    "SourceProblem",
    "Trace",
    "TraceType",
)

TraceType = Literal["program", "pal", "cot_program", "cot_pal"]
"""The four reasoning-trace formats of ReTTS-PGPS (section 3.2): the instantiated program, its PAL script, and their CoT variants."""

TRACE_TYPES: tuple[TraceType, ...] = ("program", "pal", "cot_program", "cot_pal")
"""Every trace type, in the order outputs and statistics list them."""

DropReason = Literal[
    "malformed_record",
    "bad_program",
    "pal_translation",
    "pal_failed",
    "pal_mismatch",
    "cot_pal_failed",
    "cot_program_mismatch",
]
"""Why an instance lost one or more of its traces (see :data:`DROP_REASONS`)."""

DROP_REASONS: Mapping[DropReason, tuple[str, tuple[TraceType, ...]]] = MappingProxyType(
    {
        "malformed_record": (
            "the record lacks a field, has a mistyped one or a non-numeric answer",
            TRACE_TYPES,
        ),
        "bad_program": (
            "the solution program does not parse or does not bind to the problem's numbers",
            TRACE_TYPES,
        ),
        "pal_translation": (
            "the program has no PAL translation: it does not execute (contradictory or degenerate "
            "givens, no Get step)",
            ("pal", "cot_pal"),
        ),
        "pal_failed": (
            "the PAL script raised, timed out or printed no number in the sandbox",
            ("pal", "cot_pal"),
        ),
        "pal_mismatch": ("the PAL script ran but its answer differs from the stored one", ("pal", "cot_pal")),
        "cot_pal_failed": ("no CoT-PAL rewrite verified within the allowed passes", ("cot_pal",)),
        "cot_program_mismatch": (
            "the CoT-Program reply does not restate the source program token for token",
            ("cot_program",),
        ),
    }
)
"""Each drop reason: what it means, and which trace types the instance loses because of it."""


class MTSModel(BaseModel):
    """Base of the MTS boundary models: frozen, strict, unknown fields rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, use_attribute_docstrings=True)


class SourceProblem(MTSModel):
    """One well-formed problem of the input dataset, with its program instantiated."""

    id: str
    """The record id of the input file (``prob_<k>``)."""
    text: str
    """The question text."""
    stru_clauses: tuple[str, ...]
    """Structural clauses parsed from the diagram (collinear points, points on circles)."""
    sem_clauses: tuple[str, ...]
    """Semantic clauses parsed from the diagram (lengths, angle measures, relations)."""
    diagram: str | None
    """The diagram file name, if the record names one."""
    choices: tuple[float, ...]
    """The multiple-choice options."""
    answer: str
    """The stored answer text."""
    answer_value: float
    """The stored answer as a number."""
    expression: str
    """The source program in N-token form, as stored."""
    numbers: tuple[str, ...]
    """The N list the program's N tokens index."""
    program: str
    """The instantiated program: N tokens replaced by their values, constants made literal."""
    knowledge_type: str
    """The knowledge type of the problem (stripped)."""


class Trace(MTSModel):
    """One verified (or, for CoT-Program, token-checked) reasoning trace of a problem."""

    problem_id: str
    """The source problem's id."""
    trace_type: TraceType
    """The trace format."""
    text: str
    """The trace itself: program text, Python script or CoT rewrite."""
    passes: Annotated[int, Field(ge=1)] = 1
    """LLM passes it took (1 for rule-based traces; 2 or 3 after CoT-PAL repairs)."""
    answer: float | None = None
    """The answer the trace computed in the sandbox (None for traces that are not executed)."""


class Drop(MTSModel):
    """Why an instance lost some of its traces; every dropped instance gets one."""

    problem_id: str
    """The source problem's id (the record key, or ``#<position>`` when the record has none)."""
    stage: str
    """The stage that dropped it (``load``, ``prepare``, ``verify``, ``cot_pal``, ``cot_program``)."""
    reason: DropReason
    """The drop category (see :data:`DROP_REASONS`)."""
    lost: tuple[TraceType, ...]
    """The trace types this instance does not get."""
    detail: str
    """One line of explanation: the error, the numbers that disagree, the executor's verdict."""
