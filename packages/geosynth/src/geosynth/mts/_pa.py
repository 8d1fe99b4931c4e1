"""Perception-augmented (PA) training records, chat-formatted for Qwen-family processors.

Two settings say how the diagram reaches the model:

* ``image`` (the ReTTS-PGPS paper's PA training): the prompt is the diagram image, the question and one of
  four trace-specific instructions; the target first states the diagram's clauses (the perception span),
  then the trace (the reasoning span).
* ``clauses`` (the "ground-truth diagram" setting of Inter-GPS and PGPSNet, for text-only models): the
  prompt states the diagram's clauses before the question, and the target is the trace alone (an empty
  perception span).

Both spans are given as character offsets into the target so a trainer can map them to tokens and report
the perception and reasoning losses apart. :func:`pa_prompt` is the one definition of the user text, used
by the records and by every test-time prompt, so a trained model is prompted exactly as it was trained.

Every content part has exactly the keys ``type`` and ``text`` (``text`` is null for the image
placeholder): Arrow then infers one struct type for all parts, so the JSON Lines load with
Hugging Face ``datasets``, and Qwen-VL chat templates read the parts as intended. Image paths are
relative to the records' folder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Literal

from geodsl.traces import REASONING_HEADER
from geosynth.mts._models import TRACE_TYPES, SourceProblem, Trace, TraceType
from geotts import TRACE_INSTRUCTIONS

__all__ = (
    "CLAUSE_INSTRUCTIONS",
    "DIAGRAM_SETTINGS",
    "PA_INSTRUCTIONS",
    "PERCEPTION_HEADER",
    "REASONING_HEADER",
    "DiagramSetting",
    "pa_prompt",
    "pa_record",
)

DiagramSetting = Literal["image", "clauses"]
"""How the diagram reaches the model: as an image it perceives, or as its clauses stated in the prompt."""
DIAGRAM_SETTINGS: tuple[DiagramSetting, ...] = ("image", "clauses")

PA_INSTRUCTIONS: Mapping[TraceType, str] = MappingProxyType(
    {trace: TRACE_INSTRUCTIONS[trace].replace("{question}\n", "", 1) for trace in TRACE_TYPES}
)
"""The instruction appended to the question for each trace type: geotts's ``TRACE_INSTRUCTIONS`` without the
question, so training prompts and test-time prompts are the same text."""

CLAUSE_INSTRUCTIONS: Mapping[TraceType, str] = MappingProxyType(
    {
        "program": "Give a symbolic solution program that computes the answer.",
        "pal": "Write a Python script that computes and prints the answer.",
        "cot_program": "Explain the solution one step at a time, naming the symbolic operator of each step, "
        "and end with the full symbolic program.",
        "cot_pal": "Write a Python script that computes and prints the answer, with a comment before each "
        "equation explaining the geometry behind it.",
    }
)
"""The instruction per trace type in the ``clauses`` setting: the same requests without asking for the
relations, which the prompt already states."""

PERCEPTION_HEADER = "Diagram relations:"
"""First line of the clause block: of every target in the ``image`` setting, of the prompt in ``clauses``."""


def _clause_block(clauses: Sequence[str]) -> str:
    return "\n".join([PERCEPTION_HEADER, *clauses]) + "\n\n"


def pa_prompt(
    text: str, clauses: Sequence[str], trace_type: TraceType | None, setting: DiagramSetting = "image"
) -> str:
    """The user text of a problem: the question (after its clauses in the ``clauses`` setting) and the instruction.

    Args:
        text: The problem's question text.
        clauses: Its structure then semantic clauses (read only in the ``clauses`` setting).
        trace_type: The trace asked for; None gives the bare question (the unified prompt of SC).
        setting: How the diagram reaches the model.

    Returns:
        The text of the user turn (after any image).
    """
    question = text if setting == "image" else _clause_block(clauses) + text
    if trace_type is None:
        return question
    table = PA_INSTRUCTIONS if setting == "image" else CLAUSE_INSTRUCTIONS
    return f"{question}\n{table[trace_type]}"


def pa_record(problem: SourceProblem, trace: Trace, setting: DiagramSetting = "image") -> dict[str, Any]:
    """The PA training record of one trace.

    Args:
        problem: the source problem (question, clauses, diagram).
        trace: one of its traces.
        setting: ``image``: the diagram image in the prompt, its clauses in the target; ``clauses``: the
            clauses in the prompt, no image, the trace alone in the target.

    Returns:
        A JSON-ready record: ``id``, ``problem_id``, ``trace_type``, ``images`` (relative paths),
        ``messages`` (user then assistant), ``perception_span`` and ``reasoning_span`` (``[start,
        end)`` character offsets into the assistant text; together they cover it), ``answer``.
    """
    clauses = [*problem.stru_clauses, *problem.sem_clauses]
    perception = _clause_block(clauses) if setting == "image" else ""
    target = perception + REASONING_HEADER + "\n" + trace.text.rstrip("\n")
    images = [f"images/{problem.diagram}"] if problem.diagram and setting == "image" else []
    user: list[dict[str, str | None]] = [{"type": "image", "text": None} for _ in images]
    user.append({"type": "text", "text": pa_prompt(problem.text, clauses, trace.trace_type, setting)})
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
