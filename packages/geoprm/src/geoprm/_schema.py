"""The critique schema: what the process reward model says about a solution, step by step.

A critique covers the steps of a solution up to and including the first incorrect one (all of them
when every step is correct). For each step it states the step's goal, checks the step against the
figure and checks its logic, each with a judgement, and gives a final judgement. When a step is
incorrect it also gives a corrected version of that step, which refined best-of-N hands back to the
policy.
"""

from __future__ import annotations

from typing import Annotated, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from geoprm._labels import Judgement, reserved_line


def check_text_field(value: str, what: str) -> str:
    """Check that a free-text field survives the text form unchanged.

    Args:
        value: the field's text.
        what: the field's name, for the error message.

    Returns:
        The value, unchanged.

    Raises:
        ValueError: the text is empty, has surrounding whitespace, contains a carriage return, or has
            a line the text form reserves for a header or a label.
    """
    if not value.strip():
        raise ValueError(f"{what} is empty")
    if value != value.strip():
        raise ValueError(f"{what} has leading or trailing whitespace")
    if "\r" in value:
        raise ValueError(f"{what} contains a carriage return; use \\n line breaks")
    for number, line in enumerate(value.split("\n"), start=1):
        if reserved_line(line):
            raise ValueError(
                f"{what}: its line {number} ({line.strip()[:40]!r}) would be read as a critique header or label"
            )
    return value


class StepCritique(BaseModel):
    """The critique of one solution step."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    index: Annotated[int, Field(ge=1)]
    """The step's 1-based number in the solution."""
    intent: str
    """What the step sets out to do and how."""
    image_analysis: str
    """Whether the facts the step takes from the figure match the figure."""
    image_judgement: Judgement
    """The judgement on the step's agreement with the figure."""
    logic_analysis: str
    """Whether the step's reasoning and arithmetic are sound and agree with the earlier steps."""
    logic_judgement: Judgement
    """The judgement on the step's logic."""
    judgement: Judgement
    """The final judgement: Correct exactly when both judgements above are Correct."""

    @field_validator("intent", "image_analysis", "logic_analysis")
    @classmethod
    def _text(cls, value: str, info: ValidationInfo) -> str:
        return check_text_field(value, info.field_name or "text field")

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        expected: Judgement = (
            "Correct"
            if self.image_judgement == "Correct" and self.logic_judgement == "Correct"
            else "Incorrect"
        )
        if self.judgement != expected:
            raise ValueError(
                f"step {self.index}: final judgement {self.judgement} contradicts figure judgement "
                f"{self.image_judgement} and logic judgement {self.logic_judgement} (expected {expected})"
            )
        return self


class Critique(BaseModel):
    """A whole critique: the judged steps and the correction of the first incorrect one."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    steps: Annotated[tuple[StepCritique, ...], Field(min_length=1)]
    """Steps 1..k: every step when all are correct, else up to and including the first incorrect one."""
    correction: str | None = None
    """The corrected text of the incorrect step (the last one), or None when every step is correct."""

    @field_validator("correction")
    @classmethod
    def _correction_text(cls, value: str | None) -> str | None:
        return None if value is None else check_text_field(value, "correction")

    @model_validator(mode="after")
    def _invariants(self) -> Self:
        for position, step in enumerate(self.steps, start=1):
            if step.index != position:
                raise ValueError(
                    f"steps must be numbered 1..{len(self.steps)}; found step {step.index} at position {position}"
                )
            if step.judgement == "Incorrect" and position != len(self.steps):
                raise ValueError(
                    f"step {step.index} is Incorrect but is not the last step; a critique stops at the first incorrect step"
                )
        if self.has_error and self.correction is None:
            raise ValueError(f"step {self.steps[-1].index} is Incorrect but no correction is given")
        if not self.has_error and self.correction is not None:
            raise ValueError("a correction is given but every step is Correct")
        return self

    @property
    def has_error(self) -> bool:
        """Whether the critique found an incorrect step (always the last one)."""
        return self.steps[-1].judgement == "Incorrect"

    @property
    def first_error(self) -> int | None:
        """The number of the first incorrect step, or None when every step is correct."""
        return self.steps[-1].index if self.has_error else None

    @property
    def judgements(self) -> tuple[Judgement, ...]:
        """The final judgement of each critiqued step, in order."""
        return tuple(step.judgement for step in self.steps)
