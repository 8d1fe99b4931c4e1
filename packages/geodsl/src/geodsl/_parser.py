"""Program text -> :class:`~geodsl.ast.Program`, with errors that point at the bad token."""

from __future__ import annotations

import difflib
import re

from geodsl.ast import OPERAND_PATTERNS, Operand, Program, Step
from geodsl.errors import DSLSyntaxError
from geodsl.ops import OPERATORS, arity_error

__all__ = ("parse_program", "tokenize")

_TOKEN = re.compile(r"\S+")
_OPERAND_LIKE = re.compile(r"[NVC][0-9a-z.+\-]{0,4}")


def tokenize(text: str) -> list[tuple[str, int]]:
    """Split a program on whitespace, keeping each token's column (character offset)."""
    return [(m.group(), m.start()) for m in _TOKEN.finditer(text)]


def _operand_or_none(token: str) -> Operand | None:
    for kind, pattern in OPERAND_PATTERNS.items():
        if pattern.fullmatch(token):
            return Operand(kind=kind, token=token)
    return None


def _bad_token_message(token: str) -> str:
    if _OPERAND_LIKE.fullmatch(token):
        return f"malformed operand {token!r} (expected N<i>, V<j>, C<number> or a lowercase letter)"
    if token[0].isupper():
        close = difflib.get_close_matches(token, list(OPERATORS), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        return f"unknown operator {token!r}{hint}"
    return f"malformed operand {token!r} (expected N<i>, V<j>, C<number> or a lowercase letter)"


def parse_program(text: str) -> Program:
    """Parse a space-separated program such as ``"Gsin N0 N2 N3 Get y"``.

    Every operator token starts a new step; the tokens up to the next operator are
    its operands. Operand counts are checked against :data:`geodsl.OPERATORS`.

    Args:
        text: the program text (any whitespace separates tokens).

    Returns:
        The parsed program.

    Raises:
        DSLSyntaxError: for an empty program, a token before the first operator, an
            unknown operator, a malformed operand or a wrong operand count; ``token_index``
            and ``column`` point at the offending token (the operator, for arity errors).
    """
    tokens = tokenize(text)
    if not tokens:
        raise DSLSyntaxError("empty program", source=text, token_index=0, column=0)
    groups: list[tuple[int, str, list[Operand]]] = []
    for i, (token, column) in enumerate(tokens):
        if token in OPERATORS:
            groups.append((i, token, []))
            continue
        operand = _operand_or_none(token)
        if operand is None:
            raise DSLSyntaxError(_bad_token_message(token), source=text, token_index=i, column=column)
        if not groups:
            raise DSLSyntaxError(
                f"program must start with an operator, got {token!r}",
                source=text,
                token_index=i,
                column=column,
            )
        groups[-1][2].append(operand)
    steps: list[Step] = []
    for i, op, operands in groups:
        message = arity_error(OPERATORS[op], len(operands))
        if message is not None:
            raise DSLSyntaxError(message, source=text, token_index=i, column=tokens[i][1])
        steps.append(Step(op=op, operands=tuple(operands)))
    return Program(steps=tuple(steps))
