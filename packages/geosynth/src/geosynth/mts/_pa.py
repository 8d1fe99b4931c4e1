"""Perception-augmented (PA) training records, chat-formatted for Qwen-VL-family processors.

The prompt is the diagram image, the question and one of four trace-specific instructions. The
target first states the diagram's clauses (the perception span), then the trace (the reasoning
span); both spans are given as character offsets into the target so a trainer can map them to
tokens (``return_offsets_mapping``) and report the perception and reasoning losses apart.

Every content part has exactly the keys ``type`` and ``text`` (``text`` is null for the image
placeholder): Arrow then infers one struct type for all parts, so the JSON Lines load with
Hugging Face ``datasets``, and Qwen-VL chat templates read the parts as intended. Image paths are
relative to the records' folder.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from geodsl.traces import REASONING_HEADER
from geosynth.mts._models import TRACE_TYPES, SourceProblem, Trace, TraceType
from geotts import TRACE_INSTRUCTIONS

__all__ = ("PA_INSTRUCTIONS", "PERCEPTION_HEADER", "REASONING_HEADER", "pa_record")

PA_INSTRUCTIONS: Mapping[TraceType, str] = MappingProxyType(
    {trace: TRACE_INSTRUCTIONS[trace].replace("{question}\n", "", 1) for trace in TRACE_TYPES}
)
"""The instruction appended to the question for each trace type: geotts's ``TRACE_INSTRUCTIONS`` without the
question, so training prompts and test-time prompts are the same text."""

PERCEPTION_HEADER = "Diagram relations:"
"""First line of every target: the perception span starts here."""


def pa_record(problem: SourceProblem, trace: Trace) -> dict[str, Any]:
    """The PA training record of one trace.

    Args:
        problem: the source problem (question, clauses, diagram).
        trace: one of its traces.

    Returns:
        A JSON-ready record: ``id``, ``problem_id``, ``trace_type``, ``images`` (relative paths),
        ``messages`` (user then assistant), ``perception_span`` and ``reasoning_span`` (``[start,
        end)`` character offsets into the assistant text; together they cover it), ``answer``.
    """
    clauses = [*problem.stru_clauses, *problem.sem_clauses]
    perception = "\n".join([PERCEPTION_HEADER, *clauses]) + "\n\n"
    target = perception + REASONING_HEADER + "\n" + trace.text.rstrip("\n")
    images = [f"images/{problem.diagram}"] if problem.diagram else []
    user: list[dict[str, str | None]] = [{"type": "image", "text": None} for _ in images]
    user.append({"type": "text", "text": f"{problem.text}\n{PA_INSTRUCTIONS[trace.trace_type]}"})
    return {
        "id": f"{problem.id}:{trace.trace_type}",
        "problem_id": problem.id,
        "trace_type": trace.trace_type,
        "images": images,
        "messages": [
            {"role": "user", "content": user},
            {"role": "assistant", "content": [{"type": "text", "text": target}]},
        ],
        "perception_span": [0, len(perception)],
        "reasoning_span": [len(perception), len(target)],
        "answer": problem.answer,
    }
