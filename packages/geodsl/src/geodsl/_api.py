"""The execution entry points of the facade."""

from __future__ import annotations

from collections.abc import Sequence

from geodsl._exact import execute_exact
from geodsl._executor import execute_numeric
from geodsl._instantiate import InstantiatedProgram, parse_instantiated
from geodsl._parser import parse_program
from geodsl._result import Execution, Mode
from geodsl.ast import Program
from geodsl.errors import BindingError

__all__ = ("execute", "execute_instantiated")


def execute(
    program: Program | InstantiatedProgram | str, numbers: Sequence[str] = (), *, mode: Mode = "numeric"
) -> Execution:
    """Execute a solution program.

    Each non-Get step adds one equation; as soon as an equation has a single open
    unknown it is solved (closed forms first, then root finding) with the root rule:
    when all roots are positive the smallest, otherwise the largest; an unknown angle
    takes the smallest non-negative solution in degrees. Equations with several open
    unknowns wait until later steps allow a joint solve. The last Get gives the answer.

    Args:
        program: a :class:`Program`, its text, or an :class:`InstantiatedProgram`.
        numbers: the N list (values in the dataset's LaTeX-ish algebra); must be empty
            for an instantiated program, which carries its own.
        mode: ``"numeric"`` (floats, pi = 3.141593 like the reference) or ``"exact"``
            (sympy, exact pi, with an exact answer form).

    Returns:
        The answer and the per-step trace.

    Raises:
        DSLSyntaxError: program text that does not parse.
        ValueSyntaxError: an N value that does not parse.
        BindingError: an N index out of range, Get of a constant or of an unassigned V.
        ExecutionError: the program runs but gives no answer (see its subclasses).
        ValueError: an unknown ``mode``.
    """
    if isinstance(program, InstantiatedProgram):
        if numbers:
            raise BindingError("an instantiated program carries its own numbers; pass none")
        program, numbers = program.program, program.numbers
    parsed = parse_program(program) if isinstance(program, str) else program
    if mode == "exact":
        return execute_exact(parsed, numbers)
    if mode != "numeric":
        raise ValueError(f"mode must be 'numeric' or 'exact', got {mode!r}")
    return execute_numeric(parsed, numbers)


def execute_instantiated(text: str, *, mode: Mode = "numeric") -> Execution:
    """Parse an instantiated program (values in place of N tokens) and execute it.

    Raises:
        DSLSyntaxError: text that does not parse; otherwise as :func:`execute`.
    """
    return execute(parse_instantiated(text), mode=mode)
