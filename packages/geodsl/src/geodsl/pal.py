"""PAL translation: a solution program as a standalone, readable SymPy script.

The script defines one symbol per unknown (V's and letters), one variable per N value,
one ``Eq`` per step with the operator named in a comment, then solves the equations
in order with the same rules as :func:`geodsl.execute` (one open unknown: ``solve`` and
the root rule; several: a joint ``solve`` once there are as many equations as unknowns)
and prints the last Get's value with three decimals. It needs only sympy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sympy
from sympy.printing.str import StrPrinter

from geodsl._bind import check_bindings
from geodsl._exact import SYMPY_MATH
from geodsl._parser import parse_program
from geodsl._printer import print_program
from geodsl._values import parse_value
from geodsl.ast import Operand, Program
from geodsl.errors import NoAnswerError
from geodsl.ops import OPERATORS

__all__ = ("to_pal",)


class _Printer(StrPrinter):
    """sympy's str printer, but rationals stay exact when the script runs."""

    def _print_Rational(self, expr: sympy.Rational) -> str:
        return f"Rational({expr.p}, {expr.q})"

    def _print_Half(self, expr: sympy.Rational) -> str:
        return "Rational(1, 2)"


def _code(expr: Any) -> str:
    return _Printer().doprint(sympy.sympify(expr))


_HELPERS = '''

def ordered(symbols):
    """Letters before V's, then by name: the order unknowns are solved for."""
    return sorted(symbols, key=lambda s: (s.name[0] == "V", s.name))


def is_angle(expr, sym):
    """Whether sym sits inside a trig function (its solutions are angles in degrees)."""
    return any(sym in f.free_symbols for f in expr.atoms(sin, cos, tan))


def real_value(root):
    """The float value of a root, or None when it is not real."""
    z = complex(root.evalf(30))
    return z.real if abs(z.imag) <= 1e-9 * max(1.0, abs(z.real)) else None


def pick(candidates):
    """Root rule over (value, root) pairs: all positive -> the smallest, otherwise the largest."""
    values = [v for v, _ in candidates]
    best = min(values) if all(v > 0 for v in values) else max(values)
    return next(root for v, root in candidates if v == best)


def real_roots(expr, sym):
    """Real solutions of expr = 0 for sym as (value, root) pairs; angles reduced to [0, 360)."""
    try:
        found = solve(expr, sym, check=False, simplify=False)
    except NotImplementedError:
        found = []
    if not found:  # transcendental: fall back to numeric root finding
        for guess in (1, 10, 30, 45, 60, 100, 1000):
            try:
                found = [nsolve(expr, sym, guess)]
                break
            except (ValueError, ZeroDivisionError):
                continue
    pairs = []
    for root in found:
        value = real_value(root)
        if value is not None and is_angle(expr, sym):
            turns = value // 360
            root, value = root - 360 * turns, value - 360 * turns
        if value is not None:
            pairs.append((value, root))
    return pairs


def solve_one(pending, known):
    """Solve the first equation with at most one open unknown; False when there is none."""
    for eq in pending:
        expr = (eq.lhs - eq.rhs).subs(known)
        open_syms = ordered(expr.free_symbols)
        if len(open_syms) > 1:
            continue
        pending.remove(eq)
        if open_syms and expand(expr).has(open_syms[0]):
            known[open_syms[0]] = pick(real_roots(expr, open_syms[0]))
        return True
    return False


def solve_joint(pending, known):
    """Solve 2 or 3 pending equations with as many open unknowns together; False when none fit."""
    for size in (2, 3):
        for group in combinations(pending, size):
            exprs = [(eq.lhs - eq.rhs).subs(known) for eq in group]
            syms = ordered(set().union(*(e.free_symbols for e in exprs)))
            if len(syms) != size:
                continue
            solutions = [s for s in solve(exprs, syms, dict=True)
                         if all(k in s and not s[k].free_symbols and real_value(s[k]) is not None for k in syms)]
            if solutions:
                first = pick([(real_value(s[syms[0]]), s[syms[0]]) for s in solutions])
                chosen = next(s for s in solutions if s[syms[0]] == first)
                known.update({k: chosen[k] for k in syms})
                for eq in group:
                    pending.remove(eq)
                return True
    return False


def solve_all(equations, known):
    """Solve the equations as geodsl's executor does; known collects the values."""
    pending = list(equations)
    while pending and (solve_one(pending, known) or solve_joint(pending, known)):
        pass
'''


def _operand_name(operand: Operand) -> str:
    return operand.token if operand.kind != "C" else _code(sympy.Rational(operand.constant_text))


def _symbol_lines(program: Program, numbers: Sequence[str]) -> tuple[list[str], list[str]]:
    unknowns: set[str] = set()
    used_n = sorted({o.index for s in program.steps for o in s.operands if o.kind == "N"})
    values = {k: parse_value(numbers[k]) for k in used_n}
    for s in program.steps:
        unknowns.update(o.token for o in s.operands if o.is_unknown)
    for v in values.values():
        unknowns.update(sym.name for sym in v.free_symbols if isinstance(sym, sympy.Symbol))
    ordered = sorted(unknowns, key=lambda n: (n[0] == "V", n))
    symbols = [f'{n} = Symbol("{n}")' for n in ordered]
    n_lines = [f"N{k} = {_code(v)}  # {numbers[k]}" for k, v in values.items()]
    return symbols, n_lines


def to_pal(program: Program | str, numbers: Sequence[str]) -> str:
    """Translate a program into a standalone SymPy script that prints the answer.

    Args:
        program: a program or its text.
        numbers: the N list.

    Returns:
        The script text (deterministic for the same input); run it with ``python`` and
        read one line: the answer with three decimals.

    Raises:
        DSLSyntaxError, ValueSyntaxError, BindingError: as :func:`geodsl.execute`.
        NoAnswerError: the program has no Get step.
    """
    parsed = parse_program(program) if isinstance(program, str) else program
    check_bindings(parsed, numbers)
    gets = [s for s in parsed.steps if s.op == "Get"]
    if not gets:
        raise NoAnswerError("the program has no Get step, so it produces no answer")
    symbols, n_lines = _symbol_lines(parsed, numbers)
    placeholders = {name: sympy.Symbol(name) for name in
                    {o.token for s in parsed.steps for o in s.operands if o.kind != "C"}}
    lines = [
        f'"""PAL translation of the geodsl program: {print_program(parsed)}"""',
        "",
        "from itertools import combinations",
        "",
        "from sympy import Eq, Rational, Symbol, cos, expand, nsolve, pi, sin, solve, sqrt, tan",
        _HELPERS,
        "# unknowns",
        *symbols,
        "",
        "# problem numbers",
        *n_lines,
        "",
        "equations = []",
    ]
    for index, step in enumerate(parsed.steps):
        spec = OPERATORS[step.op]
        if spec.residual is None:
            continue
        args = [placeholders[o.token] if o.kind != "C" else sympy.Rational(o.constant_text) for o in step.operands]
        residual = _code(spec.residual(args, SYMPY_MATH))
        tokens = " ".join(o.token for o in step.operands)
        lines.append(f"# step {index}: {step.op} {tokens}  ({spec.equation})")
        lines.append(f"equations.append(Eq({residual}, 0))")
    target = _operand_name(gets[-1].operands[0])
    lines += [
        "",
        "known = {}",
        "solve_all(equations, known)",
        f"ans = {target}",
        "ans = ans.subs(known) if hasattr(ans, 'subs') else ans",
        'print(f"{float(ans):.3f}")',
        "",
    ]
    return "\n".join(lines)
