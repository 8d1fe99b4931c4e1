r"""Program instantiation: N tokens replaced by their values, as ReTTS-PGPS writes programs.

``Geo_Mean N0 N1 N4 Gougu N1 N4 N3 Get y`` with N = [3\sqrt{2}, z, ...] becomes
``Geo_Mean 3\sqrt{2} z \sqrt{2} Gougu z \sqrt{2} y Get y``. Constants print as their
number (``C2`` -> ``2``, ``C0.5`` -> ``0.5``); V's and letters print unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from geodsl._bind import check_bindings
from geodsl._parser import parse_program, tokenize
from geodsl._values import parse_value
from geodsl.ast import OPERAND_PATTERNS, Operand, Program, Step
from geodsl.errors import BindingError, DSLSyntaxError, ValueSyntaxError
from geodsl.ops import OPERATORS, arity_error

__all__ = ("InstantiatedProgram", "instantiate", "parse_instantiated")


class InstantiatedProgram(BaseModel):
    """A program together with the N values its tokens point at."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, use_attribute_docstrings=True)

    program: Program
    """The program in N/V/C/letter tokens."""
    numbers: tuple[str, ...]
    """The N list the program's N tokens index."""

    @property
    def text(self) -> str:
        """The instantiated text: N tokens replaced by their values, constants by their numbers."""
        out: list[str] = []
        for step in self.program.steps:
            out.append(step.op)
            for o in step.operands:
                if o.kind == "N":
                    out.append(self.numbers[o.index])
                elif o.kind == "C":
                    out.append(o.constant_text)
                else:
                    out.append(o.token)
        return " ".join(out)


def instantiate(program: Program | str, numbers: Sequence[str]) -> InstantiatedProgram:
    """Bind a program's N tokens to their values.

    Args:
        program: a program or its text.
        numbers: the N list.

    Returns:
        The instantiated program; its ``text`` is the ReTTS-style form.

    Raises:
        DSLSyntaxError: the program text does not parse.
        BindingError: an N index out of range or a value containing whitespace.
        ValueSyntaxError: a value that does not parse.
    """
    parsed = parse_program(program) if isinstance(program, str) else program
    for k, value in enumerate(numbers):
        if not value or any(c.isspace() for c in value):
            raise BindingError(f"N{k} = {value!r}: an instantiated value must be one non-empty token")
        parse_value(value)
    check_bindings(parsed, numbers)
    return InstantiatedProgram(program=parsed, numbers=tuple(numbers))


def _operand_for(token: str, index: int, column: int, text: str, numbers: list[str]) -> Operand:
    if OPERAND_PATTERNS["V"].fullmatch(token) or OPERAND_PATTERNS["letter"].fullmatch(token):
        return Operand.of(token)
    try:
        parse_value(token)
    except ValueSyntaxError as exc:
        raise DSLSyntaxError(
            f"operand {token!r} is neither a V, a letter nor a value: {exc}",
            source=text,
            token_index=index,
            column=column,
        ) from exc
    if token not in numbers:
        numbers.append(token)
    return Operand(kind="N", token=f"N{numbers.index(token)}")


def parse_instantiated(text: str) -> InstantiatedProgram:
    """Parse an instantiated program such as ``"Gsin 24 y 30 Get y"``.

    Every value token becomes an N operand; equal value strings share one N index, in
    order of first appearance. ``V<j>`` tokens and single lowercase letters stay unknowns.

    Raises:
        DSLSyntaxError: an empty text, a token before the first operator, a token that is
            neither an operator, a V, a letter nor a value, or a wrong operand count.
    """
    tokens = tokenize(text)
    if not tokens:
        raise DSLSyntaxError("empty program", source=text, token_index=0, column=0)
    numbers: list[str] = []
    groups: list[tuple[int, str, list[Operand]]] = []
    for i, (token, column) in enumerate(tokens):
        if token in OPERATORS:
            groups.append((i, token, []))
            continue
        if not groups:
            raise DSLSyntaxError(
                f"program must start with an operator, got {token!r}",
                source=text,
                token_index=i,
                column=column,
            )
        groups[-1][2].append(_operand_for(token, i, column, text, numbers))
    steps: list[Step] = []
    for i, op, operands in groups:
        message = arity_error(OPERATORS[op], len(operands))
        if message is not None:
            raise DSLSyntaxError(message, source=text, token_index=i, column=tokens[i][1])
        steps.append(Step(op=op, operands=tuple(operands)))
    return InstantiatedProgram(program=Program(steps=tuple(steps)), numbers=tuple(numbers))
