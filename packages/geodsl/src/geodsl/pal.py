"""PAL translation: a solution program as a short SymPy script that reads like a worked solution.

The script follows the plan of :func:`geodsl.execute` step by step. Each program step becomes one
``Eq`` in its natural form (``Eq(sin(30 * pi / 180), 24 / y)``), written with the problem's numbers in
place and a comment naming the operator and its meaning. Right after an equation comes the ``solve``
the executor did there: for the unknown solved from that equation alone, or with ``dict=True`` for a
group of equations it solved jointly. A solved value is assigned to the unknown's own name, so later
equations see the number and every ``solve`` has only the unknowns it is meant to find. An equation
that waits for a later step is written where it is solved. When a solve can have several roots, the
root rule (all real roots positive: the smallest, otherwise the largest) is a five-line helper ``pick``;
an unknown angle inside sin/cos/tan is first reduced to one turn (``% 360``, ``% 180`` for tan).
Equations sympy cannot solve in closed form (an unknown both inside and outside a trig function) use
``nsolve`` from the executor's root rounded to two significant digits.

Scripts need only sympy, use exact numbers where the problem's are exact (``sqrt(174)``,
``Rational(18, 5)``) and exact ``pi``, and print one line: the answer with three decimals.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import cast

import sympy
from sympy.printing.precedence import PRECEDENCE, precedence
from sympy.printing.str import StrPrinter

from geodsl._api import execute
from geodsl._bind import bind_operand
from geodsl._exact import SYMPY_MATH, _sympy_can_solve
from geodsl._parser import parse_program
from geodsl._result import Execution
from geodsl.ast import Operand, Program, Step
from geodsl.errors import ExecutionError
from geodsl.ops import OPERATORS

__all__ = ("ROOT_HELPER", "to_pal")

_ADD, _MUL, _POW, _ATOM = PRECEDENCE["Add"], PRECEDENCE["Mul"], PRECEDENCE["Pow"], PRECEDENCE["Atom"]
_PLAIN_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")
_CALL = re.compile(r"[A-Za-z_]\w*\(")
_IMPORTABLE = ("Eq", "Rational", "cos", "nsolve", "pi", "sin", "solve", "sqrt", "symbols", "tan")
_NAME = re.compile(r"\b(" + "|".join(_IMPORTABLE) + r")\b")

ROOT_HELPER = '''def pick(roots, key=lambda r: r):
    """Root rule: drop complex roots; all positive -> the smallest, otherwise the largest."""
    real = [r for r in roots if key(r).is_real]
    best = min if all(key(r) > 0 for r in real) else max
    return best(real, key=key)
'''
"""The only function a script may define: the executor's root rule over sympy roots (or solution dicts)."""


class _Printer(StrPrinter):
    """sympy's str printer, but rationals stay exact when the script runs."""

    def _print_Rational(self, expr: sympy.Rational) -> str:
        return f"Rational({expr.p}, {expr.q})"

    def _print_Half(self, expr: sympy.Rational) -> str:
        return "Rational(1, 2)"


# --- operands as code ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Term:
    """An operand as Python code, with the precedence of its outermost operation."""

    code: str
    prec: int


def _is_call(code: str) -> bool:
    """Whether the code is one function call (``sqrt(3)``), which binds like an atom."""
    start = _CALL.match(code)
    if start is None:
        return False
    depth = 0
    for k in range(start.end() - 1, len(code)):
        depth += {"(": 1, ")": -1}.get(code[k], 0)
        if depth == 0:
            return k == len(code) - 1
    return False


def _term(operand: Operand, numbers: Sequence[str]) -> _Term:
    if operand.is_unknown:
        return _Term(operand.token, _ATOM)
    text = operand.constant_text if operand.kind == "C" else numbers[operand.index].strip()
    if _PLAIN_NUMBER.fullmatch(text):
        return _Term(text, _ATOM)
    expr = bind_operand(operand, numbers)
    code = _Printer().doprint(expr)
    return _Term(code, _ATOM if _is_call(code) else precedence(expr))


def _factor(t: _Term) -> str:
    """A factor of a product, or the numerator of a quotient."""
    return t.code if t.prec >= _MUL else f"({t.code})"


def _den(t: _Term) -> str:
    """The denominator of a quotient."""
    return t.code if t.prec > _MUL else f"({t.code})"


def _base(t: _Term) -> str:
    """The base of a power."""
    return t.code if t.prec > _POW else f"({t.code})"


def _sub(t: _Term) -> str:
    """Something subtracted."""
    return t.code if t.prec > _ADD else f"({t.code})"


def _plus(t: _Term) -> str:
    """A term added after another one (``x + (-3)`` rather than ``x + -3``)."""
    return f"({t.code})" if t.code.startswith("-") else t.code


def _rad(t: _Term) -> str:
    return f"{_factor(t)} * pi / 180"


def _q(a: _Term, b: _Term) -> str:
    """A quotient; two whole numbers make a ``Rational`` (Python's ``/`` would give a float)."""
    if a.code.isdigit() and b.code.isdigit() and int(b.code) != 0:
        return f"Rational({a.code}, {b.code})"
    return f"{_factor(a)} / {_den(b)}"


# --- equations in their natural form ------------------------------------------------------------

_Sides = tuple[str, str]
_Form = Callable[[Sequence[_Term]], _Sides]


def _sum(t: Sequence[_Term]) -> _Sides:
    return " + ".join([t[0].code, *(_plus(x) for x in t[1:-1])]), t[-1].code


def _proportion(t: Sequence[_Term]) -> _Sides:
    left = _q(t[0], t[1]) if len(t) == 4 else f"({_q(t[0], t[1])})**{_base(t[4])}"
    return left, _q(t[2], t[3])


def _ratio(t: Sequence[_Term]) -> _Sides:
    if len(t) == 3:
        return _q(t[0], t[1]), t[2].code
    return f"({_q(t[0], t[1])})**{_base(t[2])}", t[3].code


def _arc(whole: Callable[[_Term], str]) -> _Form:
    """Circle formulas: ``whole(a) = b`` with two operands, ``whole(a) * b / 360 = c`` (arc, sector) with three."""

    def form(t: Sequence[_Term]) -> _Sides:
        if len(t) == 2:
            return whole(t[0]), t[1].code
        return f"{whole(t[0])} * {_factor(t[1])} / 360", t[2].code

    return form


_FORMS: Mapping[str, _Form] = MappingProxyType(
    {
        "Sum": _sum,
        "Multiple": lambda t: (" * ".join(_factor(x) for x in t[:-1]), t[-1].code),
        "Equal": lambda t: (t[0].code, t[1].code),
        "Iso_Tri_Ang": lambda t: (f"{t[0].code} + 2 * {_factor(t[1])}", "180"),
        "Gougu": lambda t: (f"{_base(t[0])}**2 + {_base(t[1])}**2", f"{_base(t[2])}**2"),
        "Gsin": lambda t: (f"sin({_rad(t[2])})", _q(t[0], t[1])),
        "Gcos": lambda t: (f"cos({_rad(t[2])})", _q(t[0], t[1])),
        "Gtan": lambda t: (f"tan({_rad(t[2])})", _q(t[0], t[1])),
        "Cos_Law": lambda t: (
            f"{_base(t[0])}**2",
            f"{_base(t[1])}**2 + {_base(t[2])}**2 - 2 * {_factor(t[1])} * {_factor(t[2])}"
            f" * cos({_rad(t[3])})",
        ),
        "Sin_Law": lambda t: (f"sin({_rad(t[0])}) / {_den(t[1])}", f"sin({_rad(t[2])}) / {_den(t[3])}"),
        "Median": lambda t: (f"{t[0].code} + {_plus(t[2])}", f"2 * {_factor(t[1])}"),
        "Geo_Mean": lambda t: (f"{_factor(t[0])} * {_factor(t[1])}", f"{_base(t[2])}**2"),
        "Proportion": _proportion,
        "Ratio": _ratio,
        "Chord2_Ang": lambda t: (t[0].code, f"({t[1].code} + {_plus(t[2])}) / 2"),
        "TanSec_Ang": lambda t: (t[0].code, f"({t[2].code} - {_sub(t[1])}) / 2"),
        "Tria_BH_Area": lambda t: (f"{_factor(t[0])} * {_factor(t[1])} / 2", t[2].code),
        "Tria_SAS_Area": lambda t: (f"{_factor(t[0])} * {_factor(t[2])} * sin({_rad(t[1])}) / 2", t[3].code),
        "PRK_Perim": lambda t: (f"2 * ({t[0].code} + {_plus(t[1])})", t[2].code),
        "Para_Area": lambda t: (f"{_factor(t[0])} * {_factor(t[1])}", t[2].code),
        "Rect_Area": lambda t: (f"{_factor(t[0])} * {_factor(t[1])}", t[2].code),
        "Rhom_Area": lambda t: (f"2 * {_factor(t[0])} * {_factor(t[1])}", t[2].code),
        "Kite_Area": lambda t: (f"{_factor(t[0])} * {_factor(t[1])} / 2", t[2].code),
        "Trap_Area": lambda t: (f"({t[0].code} + {_plus(t[1])}) * {_factor(t[2])} / 2", t[3].code),
        "Circle_R_Circum": _arc(lambda a: f"2 * pi * {_factor(a)}"),
        "Circle_D_Circum": _arc(lambda a: f"pi * {_factor(a)}"),
        "Circle_R_Area": _arc(lambda a: f"pi * {_base(a)}**2"),
        "Circle_D_Area": _arc(lambda a: f"pi * ({_factor(a)} / 2)**2"),
        "ArcSeg_Area": lambda t: (
            f"pi * {_base(t[0])}**2 * {_factor(t[1])} / 360 - {_base(t[0])}**2 * sin({_rad(t[1])}) / 2",
            t[2].code,
        ),
        "Ngon_Angsum": lambda t: (f"({t[0].code} - 2) * 180", t[1].code),
        "RNgon_B_Area": lambda t: (
            f"{_factor(t[0])} * {_base(t[1])}**2 / (4 * tan(pi / {_den(t[0])}))",
            t[2].code,
        ),
        "RNgon_L_Area": lambda t: (
            f"{_factor(t[0])} * {_base(t[1])}**2 * sin(2 * pi / {_den(t[0])}) / 2",
            t[2].code,
        ),
        "RNgon_H_Area": lambda t: (f"{_factor(t[0])} * {_base(t[1])}**2 * tan(pi / {_den(t[0])})", t[2].code),
    }
)
"""Every operator except Get: its equation as (left side, right side) code, angles in degrees."""


# --- the executor's plan --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Solve:
    """One solve of the executor: the steps whose equations fixed the unknowns, and the unknowns."""

    steps: tuple[int, ...]
    names: tuple[str, ...]
    """Letters first, then V's: the first one is where the root rule applies."""
    values: tuple[float, ...]


def _order(name: str) -> tuple[bool, int, str]:
    return name[0] == "V", len(name), name


def _plan(execution: Execution) -> list[list[_Solve]]:
    """Per program step, the solves the executor did once that step's equation was added."""
    plan: list[list[_Solve]] = []
    for trace in execution.steps:
        groups: dict[tuple[int, ...], dict[str, float]] = {}
        for solved in trace.solved:
            groups.setdefault(solved.steps, {})[solved.name] = solved.value
        plan.append(
            [
                _Solve(steps, tuple(sorted(g, key=_order)), tuple(g[n] for n in sorted(g, key=_order)))
                for steps, g in groups.items()
            ]
        )
    return plan


def _residual(step: Step, numbers: Sequence[str]) -> sympy.Expr:
    residual = OPERATORS[step.op].residual
    if residual is None:
        raise ExecutionError(f"{step.op} states no equation to translate")
    return cast(
        sympy.Expr,
        sympy.sympify(residual([bind_operand(o, numbers) for o in step.operands], SYMPY_MATH)),
    )


def _numerator(expr: sympy.Expr) -> sympy.Expr:
    return cast(sympy.Expr, sympy.together(expr)).as_numer_denom()[0]


def _linear(exprs: Sequence[sympy.Expr], names: Sequence[str]) -> bool:
    """Whether the equations are linear in the unknowns (so ``solve`` gives one solution)."""
    syms = [sympy.Symbol(n) for n in names]
    for expr in exprs:
        numerator = _numerator(expr)
        if not numerator.is_polynomial(*syms) or sympy.Poly(numerator, *syms).total_degree() != 1:
            return False
    return True


def _angle_turn(step: Step, name: str, numbers: Sequence[str]) -> int | None:
    """360 (180 for tan) when ``name`` is itself the angle operand of a trig function, and nowhere else."""
    spec = OPERATORS[step.op]
    values = [bind_operand(o, numbers) for o in step.operands]
    slots = [k for k, v in enumerate(values) if sympy.Symbol(name) in v.free_symbols]
    if len(slots) != 1 or slots[0] not in spec.trig_inverse or step.operands[slots[0]].token != name:
        return None
    fn, _ = spec.trig_inverse[slots[0]](values, SYMPY_MATH)
    return 180 if fn == "tan" else 360


def _guess(value: float) -> str:
    """A starting point for ``nsolve``: the executor's root to two significant digits."""
    rounded = float(f"{value:.2g}")
    return str(int(rounded)) if rounded.is_integer() else repr(rounded)


def _single(step: Step, eq: str, name: str, value: float, numbers: Sequence[str]) -> str:
    turn = _angle_turn(step, name, numbers)
    if turn == 180:
        return f"{name} = solve({eq}, {name})[0] % 180"
    if turn is not None:
        return f"{name} = pick([root % {turn} for root in solve({eq}, {name})])"
    expr = _residual(step, numbers)
    if _linear([expr], [name]):
        return f"{name} = solve({eq}, {name})[0]"
    if _sympy_can_solve(expr, sympy.Symbol(name)):
        return f"{name} = pick(solve({eq}, {name}))"
    return f"{name} = nsolve({eq}, {name}, {_guess(value)})"


def _solve_lines(solve: _Solve, program: Program, numbers: Sequence[str]) -> list[str]:
    eqs = [f"eq{k + 1}" for k in solve.steps]
    if len(solve.names) == 1:
        return [_single(program.steps[solve.steps[0]], eqs[0], solve.names[0], solve.values[0], numbers)]
    call = f"solve([{', '.join(eqs)}], [{', '.join(solve.names)}], dict=True)"
    if _linear([_residual(program.steps[k], numbers) for k in solve.steps], solve.names):
        first = f"solution = {call}[0]"
    else:
        first = f"solution = pick({call}, key=lambda sol: sol[{solve.names[0]}])"
    return [first, f"{', '.join(solve.names)} = {', '.join(f'solution[{n}]' for n in solve.names)}"]


# --- the script -----------------------------------------------------------------------------------


def _meaning(step: Step) -> str:
    """The operator's meaning, kept short.

    No closing remark in parentheses, no final period, and for the shortest form of a
    variable-arity operator only the part before the ``;``.
    """
    spec = OPERATORS[step.op]
    text = re.sub(r"\s*\([^()]*\)\.?$", "", spec.meaning).rstrip(".")
    return text.split(";")[0] if len(step.operands) == spec.min_arity else text


def _equation_lines(index: int, step: Step, numbers: Sequence[str]) -> list[str]:
    lhs, rhs = _FORMS[step.op]([_term(o, numbers) for o in step.operands])
    return [f"# step {index + 1}: {step.op} - {_meaning(step)}", f"eq{index + 1} = Eq({lhs}, {rhs})"]


def _unknowns(program: Program, numbers: Sequence[str]) -> list[str]:
    names: set[str] = set()
    for step in program.steps:
        for operand in step.operands:
            if operand.kind != "C":
                names.update(
                    s.name for s in bind_operand(operand, numbers).free_symbols if isinstance(s, sympy.Symbol)
                )
    return sorted(names, key=_order)


def _body(program: Program, numbers: Sequence[str], plan: list[list[_Solve]]) -> list[str]:
    """Equations and solves in the executor's order; equations no solve uses stay at their own step."""
    used = {k for solves in plan for solve in solves for k in solve.steps}
    written: set[int] = set()
    lines: list[str] = []
    for index, step in enumerate(program.steps):
        if step.op != "Get" and index not in used:
            lines += [*_equation_lines(index, step, numbers), ""]
        for solve in plan[index]:
            for k in solve.steps:
                if k not in written:
                    written.add(k)
                    lines += _equation_lines(k, program.steps[k], numbers)
            lines += [*_solve_lines(solve, program, numbers), ""]
    return lines


def to_pal(program: Program | str, numbers: Sequence[str]) -> str:
    """Translate a program into a short, standalone SymPy script that prints the answer.

    The script solves the equations in the order :func:`geodsl.execute` does (numeric mode),
    one equation per step, with the executor's root rule; see the module docstring.

    Args:
        program: a program or its text.
        numbers: the N list.

    Returns:
        The script text (the same bytes for the same input); it needs only sympy and prints
        one line, the answer with three decimals.

    Raises:
        GeoDSLError: whatever :func:`geodsl.execute` raises for this program (syntax, binding,
            no Get, no solution): a program that does not run gets no script.
    """
    parsed = parse_program(program) if isinstance(program, str) else program
    execution = execute(parsed, numbers)
    body = _body(parsed, numbers, _plan(execution))
    target = next(s for s in reversed(parsed.steps) if s.op == "Get").operands[0]
    body.append(f'print(f"{{float({_term(target, numbers).code}):.3f}}")')
    code = "\n".join(line for line in body if not line.startswith("#"))
    unknowns = _unknowns(parsed, numbers)
    imports = sorted(set(_NAME.findall(code)) | ({"symbols"} if unknowns else set()))
    head = [f"from sympy import {', '.join(imports)}", ""]
    if "pick(" in code:
        head += ["", ROOT_HELPER, ""]
    if unknowns:
        head += [f'{", ".join(unknowns)} = symbols("{" ".join(unknowns)}")', ""]
    return "\n".join(head + body) + "\n"
