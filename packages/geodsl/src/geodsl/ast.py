"""The typed syntax tree of a solution program: :class:`Program` of :class:`Step` of :class:`Operand`."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

from geodsl.ops import OPERATORS, arity_error

__all__ = ("OPERAND_PATTERNS", "Operand", "OperandKind", "Program", "Step")

OperandKind = Literal["N", "V", "C", "letter"]
"""N<i>: the i-th problem number; V<j>: an intermediate unknown; C<number>: a constant; a bare lowercase letter."""

OPERAND_PATTERNS: dict[OperandKind, re.Pattern[str]] = {
    "N": re.compile(r"N(0|[1-9][0-9]*)"),
    "V": re.compile(r"V(0|[1-9][0-9]*)"),
    "C": re.compile(r"C(0|[1-9][0-9]*)(\.[0-9]+)?"),
    "letter": re.compile(r"[a-z]"),
}
"""The full-match pattern of each operand kind's token."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, use_attribute_docstrings=True)


class Operand(_Frozen):
    """One operand token of a step."""

    kind: OperandKind
    """Which kind of operand this is."""
    token: str
    """The token as written in the program (``"N3"``, ``"V0"``, ``"C0.5"``, ``"x"``)."""

    @model_validator(mode="after")
    def _token_matches_kind(self) -> Operand:
        if OPERAND_PATTERNS[self.kind].fullmatch(self.token) is None:
            raise ValueError(f"operand token {self.token!r} is not a valid {self.kind} operand")
        return self

    @classmethod
    def of(cls, token: str) -> Operand:
        """Build an operand from its token, inferring the kind.

        Raises:
            ValueError: when ``token`` is not an operand token.
        """
        for kind, pattern in OPERAND_PATTERNS.items():
            if pattern.fullmatch(token):
                return cls(kind=kind, token=token)
        raise ValueError(
            f"{token!r} is not an operand (expected N<i>, V<j>, C<number> or a lowercase letter)"
        )

    @property
    def index(self) -> int:
        """The index of an N or V operand.

        Raises:
            ValueError: for C and letter operands.
        """
        if self.kind not in ("N", "V"):
            raise ValueError(f"operand {self.token!r} has no index")
        return int(self.token[1:])

    @property
    def constant_text(self) -> str:
        """The number a C operand stands for, as text (``"C0.5"`` -> ``"0.5"``).

        Raises:
            ValueError: for non-constant operands.
        """
        if self.kind != "C":
            raise ValueError(f"operand {self.token!r} is not a constant")
        return self.token[1:]

    @property
    def is_unknown(self) -> bool:
        """Whether the operand names an unknown (a V or a letter)."""
        return self.kind in ("V", "letter")


class Step(_Frozen):
    """One operator applied to its operands."""

    op: str
    """The operator name (a key of :data:`geodsl.OPERATORS`)."""
    operands: tuple[Operand, ...]
    """The operands, in program order."""

    @model_validator(mode="after")
    def _known_op_and_arity(self) -> Step:
        spec = OPERATORS.get(self.op)
        if spec is None:
            raise ValueError(f"unknown operator {self.op!r}")
        message = arity_error(spec, len(self.operands))
        if message is not None:
            raise ValueError(message)
        return self


class Program(_Frozen):
    """A whole solution program: a non-empty sequence of steps."""

    steps: tuple[Step, ...]
    """The steps, in execution order."""

    @model_validator(mode="after")
    def _not_empty(self) -> Program:
        if not self.steps:
            raise ValueError("a program needs at least one step")
        return self

    @property
    def tokens(self) -> tuple[str, ...]:
        """The program as a flat token sequence."""
        out: list[str] = []
        for step in self.steps:
            out.append(step.op)
            out.extend(o.token for o in step.operands)
        return tuple(out)
