"""Binding operands to values: N values to expressions, constants to numbers, unknowns to symbols."""

from __future__ import annotations

from collections.abc import Sequence

import sympy

from geodsl._values import parse_value, symbol
from geodsl.ast import Operand, Program
from geodsl.errors import BindingError

__all__ = ("bind_operand", "check_bindings")


def bind_operand(operand: Operand, numbers: Sequence[str]) -> sympy.Expr:
    r"""The exact expression an operand stands for (``\pi`` left symbolic as ``sympy.pi``).

    Raises:
        BindingError: an N index outside ``numbers``.
        ValueSyntaxError: an N value that does not parse.
    """
    if operand.kind == "N":
        index = operand.index
        if index >= len(numbers):
            raise BindingError(
                f"operand {operand.token} is out of range: the problem has {len(numbers)} "
                f"number{'s' if len(numbers) != 1 else ''} (N0..N{len(numbers) - 1})"
                if numbers
                else f"operand {operand.token} is out of range: the problem has no numbers"
            )
        return parse_value(numbers[index])
    if operand.kind == "C":
        return sympy.Rational(operand.constant_text)
    return symbol(operand.token)


def check_bindings(program: Program, numbers: Sequence[str]) -> None:
    """Reject operands that can never be bound, before anything executes.

    Raises:
        BindingError: an N index out of range, Get of a constant, or Get of a V no earlier step mentions.
    """
    seen_v: set[str] = set()
    for position, step in enumerate(program.steps):
        for operand in step.operands:
            if operand.kind == "N" and operand.index >= len(numbers):
                bind_operand(operand, numbers)  # raises the BindingError
        if step.op == "Get":
            target = step.operands[0]
            if target.kind == "C":
                raise BindingError(f"step {position} (Get {target.token}): Get of a constant")
            if target.kind == "V" and target.token not in seen_v:
                raise BindingError(
                    f"step {position} (Get {target.token}): {target.token} is not assigned "
                    "by any earlier step"
                )
        seen_v.update(o.token for o in step.operands if o.kind == "V")
