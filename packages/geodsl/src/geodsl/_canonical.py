"""Canonical operand order, as the reference ``normalize_exp`` computes it (spec section 6)."""

from __future__ import annotations

from collections.abc import Callable

from geodsl.ast import Operand, Program, Step
from geodsl.ops import OPERATORS, VOCABULARY_CONSTANTS, CanonicalRule

__all__ = ("canonicalize",)

_PRIORITY: dict[str, int] = {
    **{f"V{k}": k for k in range(7)},
    **{f"N{k}": 7 + k for k in range(11)},
    **{c: 18 + k for k, c in enumerate(VOCABULARY_CONSTANTS)},
}


def _priority(o: Operand) -> int:
    # Letters, N11+, V7+ and non-vocabulary constants all sort first, as in the reference.
    return _PRIORITY.get(o.token, -1)


def _sort_all_but_last(ops: list[Operand]) -> list[Operand]:
    return sorted(ops[:-1], key=_priority) + ops[-1:]


def _sort_first_two(ops: list[Operand]) -> list[Operand]:
    return sorted(ops[:2], key=_priority) + ops[2:]


def _sort_middle_two(ops: list[Operand]) -> list[Operand]:
    return ops[:1] + sorted(ops[1:3], key=_priority) + ops[3:]


def _swap_pairs(ops: list[Operand]) -> list[Operand]:
    if len(ops) == 4 and _priority(ops[0]) > _priority(ops[2]):
        return [ops[2], ops[3], ops[0], ops[1]]
    return ops


def _swap_ends(ops: list[Operand]) -> list[Operand]:
    if _priority(ops[0]) > _priority(ops[2]):
        return [ops[2], ops[1], ops[0], *ops[3:]]
    return ops


_RULES: dict[CanonicalRule, Callable[[list[Operand]], list[Operand]]] = {
    "none": lambda ops: ops,
    "sort_all_but_last": _sort_all_but_last,
    "sort_first_two": _sort_first_two,
    "sort_middle_two": _sort_middle_two,
    "swap_pairs": _swap_pairs,
    "swap_ends": _swap_ends,
}


def canonicalize(program: Program) -> Program:
    """Reorder the operands of order-insensitive operators into the reference's canonical order.

    Each operator's rule comes from its registry entry (:attr:`geodsl.OpSpec.canonical`).
    Priorities: V0..V6, then N0..N10, then the vocabulary constants; anything else sorts
    first. Sorting is stable, so the result is idempotent and never changes what a
    program computes.

    Args:
        program: any program.

    Returns:
        The canonical program (equal to the input when nothing moves).
    """
    steps = tuple(
        Step(op=s.op, operands=tuple(_RULES[OPERATORS[s.op].canonical](list(s.operands))))
        for s in program.steps
    )
    return Program(steps=steps)
