"""Printing a critique in its text form (the form the model is trained to write)."""

from __future__ import annotations

from geoprm._labels import CORRECTION_HEADER, END_MARKER, FIELDS, STEP_HEADER
from geoprm._schema import Critique, StepCritique


def _step_block(step: StepCritique) -> str:
    lines = [STEP_HEADER.format(index=step.index)]
    lines.extend(f"{spec.label}: {getattr(step, spec.name)}" for spec in FIELDS)
    return "\n".join(lines)


def format_critique(critique: Critique) -> str:
    """Write a critique in the text form that :func:`geoprm.parse_critique` reads back.

    One block per step (a ``[Step k]`` header and six labelled lines), then, when a step is
    incorrect, a ``[Correction of step k]`` block, and finally the ``[End]`` marker. Blocks are
    separated by blank lines.

    Args:
        critique: the critique to print.

    Returns:
        The text, ending with a newline.
    """
    blocks = [_step_block(step) for step in critique.steps]
    if critique.correction is not None:
        header = CORRECTION_HEADER.format(index=critique.steps[-1].index)
        blocks.append(f"{header}\n{critique.correction}")
    blocks.append(END_MARKER)
    return "\n\n".join(blocks) + "\n"


def format_skeleton() -> str:
    """The text form with placeholders in place of the contents, used to describe it in prompts."""
    lines = [STEP_HEADER.format(index=1)]
    lines.extend(f"{spec.label}: <{spec.guide}>" for spec in FIELDS)
    lines += ["", STEP_HEADER.format(index=2), "...", "", CORRECTION_HEADER.format(index="k")]
    lines += ["<the corrected step k, only when step k is Incorrect>", "", END_MARKER]
    return "\n".join(lines)
