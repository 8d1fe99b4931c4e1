""":class:`~geodsl.ast.Program` -> text, the inverse of :func:`geodsl.parse_program`."""

from __future__ import annotations

from geodsl.ast import Program

__all__ = ("print_program",)


def print_program(program: Program) -> str:
    """Write a program as single-space-separated tokens.

    ``parse_program(print_program(p)) == p`` holds for every program.

    Args:
        program: the program to print.

    Returns:
        The program text, e.g. ``"Gsin N0 N2 N3 Get y"``.
    """
    return " ".join(program.tokens)
