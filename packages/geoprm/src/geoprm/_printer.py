"""Printing a critique in its text form (the form the model is trained to write)."""

from __future__ import annotations

from geoprm._labels import CORRECTION_HEADER, END_MARKER, FIELDS, FIELDS_BY_NAME, STEP_HEADER, FieldSpec
from geoprm._schema import Critique, StepCritique


def field_order(verdict_first: bool = False) -> tuple[FieldSpec, ...]:
    """The labelled lines of a step block in print order.

    GM-PRM's order (the analyses, then the verdicts they lead to), or with the step verdict moved to the
    front when ``verdict_first``.
    """
    if not verdict_first:
        return FIELDS
    final = FIELDS_BY_NAME["judgement"]
    return (final, *(spec for spec in FIELDS if spec is not final))


def _step_block(step: StepCritique, verdict_first: bool) -> str:
    lines = [STEP_HEADER.format(index=step.index)]
    lines.extend(f"{spec.label}: {getattr(step, spec.name)}" for spec in field_order(verdict_first))
    return "\n".join(lines)


def format_critique(critique: Critique, *, verdict_first: bool = False) -> str:
    """Write a critique in the text form that :func:`geoprm.parse_critique` reads back.

    One block per step (a ``[Step k]`` header and six labelled lines), then, when a step is
    incorrect, a ``[Correction of step k]`` block, and finally the ``[End]`` marker. Blocks are
    separated by blank lines.

    Args:
        critique: the critique to print.
        verdict_first: write each step's verdict before its analyses instead of after them (a critic
            trained on this order states its decision first; the parser reads either order).

    Returns:
        The text, ending with a newline.
    """
    blocks = [_step_block(step, verdict_first) for step in critique.steps]
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
