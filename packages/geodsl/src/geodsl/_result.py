"""Result models of an execution: the answer and a per-step trace."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = ("Execution", "Mode", "Solved", "StepTrace")

Mode = Literal["numeric", "exact"]
"""``numeric``: pure-Python floats (fast); ``exact``: sympy with exact numbers and exact pi."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, use_attribute_docstrings=True)


class Solved(_Frozen):
    """One unknown fixed during execution."""

    name: str
    """The unknown: a V name (``"V0"``) or a letter (``"x"``)."""
    value: float
    """Its value."""
    exact: str | None = None
    """Its exact value in sympy syntax (exact mode only)."""
    steps: tuple[int, ...]
    """Indices of the steps whose equations fixed it (several for a joint solve)."""


class StepTrace(_Frozen):
    """What one step did."""

    index: int
    """Position of the step in the program (0-based)."""
    op: str
    """The operator."""
    solved: tuple[Solved, ...] = ()
    """Unknowns fixed once this step's equation was added (possibly unknowns of earlier pending steps)."""
    open_unknowns: tuple[str, ...] = ()
    """Unknowns that occur in equations still pending after this step."""
    value: float | None = None
    """For a Get step: the value read."""


class Execution(_Frozen):
    """The outcome of executing a program."""

    answer: float
    """The value of the last Get."""
    exact: str | None = None
    """The answer's exact value in sympy syntax (exact mode only)."""
    mode: Mode
    """The mode that produced this result."""
    steps: tuple[StepTrace, ...]
    """One trace entry per step, in program order."""

    @property
    def answer_text(self) -> str:
        """The answer with three decimals, the format of the dataset's stored answers."""
        return format(self.answer, ".3f")
