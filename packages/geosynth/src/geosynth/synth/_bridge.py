"""The bridge from traced calculation solutions to PGPS programs (the 34-operator geodsl language).

Each step of a :class:`geosynth.calc.CalcSolution` states an equation between quantities (``AB``,
``∠ABC``, ``S(ABC)``, variables). Given values become the program's N list (a quantity given as
``AB = 13`` or ``∠ABC = 2x + 10`` is that N value); relations given without a value become semantic
clauses. Derived steps that only substitute or solve (``solve``, ``substitution``, ``elimination``) need
no program step: the executor solves an equation as soon as its other operands are known, and solves
pending equations jointly. Every other equation is expressed by one operator, or by ``Sum``/``Equal``
steps when it is linear:

* linear equations with small integer coefficients: ``Equal``, ``Sum`` (repeated operands for
  multiplicities, one intermediate V when both sides have several terms), ``Multiple`` by a constant;
* anything else: the operator rows of :data:`MATCH_ORDER`, tried with every assignment of the
  equation's quantities and constants to the operator's slots; a row expresses the equation when its
  residual (geodsl's own, from ``geodsl.OPERATORS``) is a constant multiple of the equation's at random
  points.

The goal quantity is read with ``Get``. The program is then executed by geodsl and kept only when it
reproduces the engine's answer; otherwise (or when a step has no operator form) the reason is returned.
"""

from __future__ import annotations

import collections
import itertools
import math
import random
import re
from collections.abc import Callable, Sequence
from typing import Any

import sympy
from pydantic import BaseModel, ConfigDict
from sympy.parsing.sympy_parser import parse_expr, standard_transformations

from geodsl import OPERATORS, answers_match, execute, parse_value
from geodsl.errors import GeoDSLError
from geosynth.calc import CalcProblem, CalcSolution, CalcStep, Op
from geosynth.synth.errors import SynthError

__all__ = ("MATCH_ORDER", "BridgeOutcome", "PGPSProgram", "bridge_program", "to_pgps")

SKIPPED_RULES = frozenset({"solve", "substitution", "elimination", "goal"})
"""Rules whose steps only combine earlier equations: the executor does that work itself."""

MATCH_ORDER: tuple[tuple[str, int], ...] = (
    ("Gougu", 3),
    ("Cos_Law", 4),
    ("Sin_Law", 4),
    ("Tria_SAS_Area", 4),
    ("Tria_BH_Area", 3),
    ("Rect_Area", 3),
    ("Trap_Area", 4),
    ("Proportion", 4),
    ("Geo_Mean", 3),
    ("Gsin", 3),
    ("Gcos", 3),
    ("Gtan", 3),
    ("Multiple", 3),
    ("Multiple", 4),
    ("Ratio", 3),
    ("Circle_R_Area", 2),
    ("Circle_R_Circum", 2),
    ("Median", 3),
    ("Iso_Tri_Ang", 2),
)
"""Operators (and operand counts) tried for a nonlinear equation, most specific first."""

_VOCABULARY = {0.5: "C0.5", 2.0: "C2", 3.0: "C3", 4.0: "C4", 5.0: "C5", 6.0: "C6", 8.0: "C8"} | {
    60.0: "C60",
    90.0: "C90",
    180.0: "C180",
    360.0: "C360",
}
_POLYGON_SIDES = {5: "C5", 6: "C6", 8: "C8"}
"""Polygons whose interior angle sum a program can name (``Ngon_Angsum C5 V0``: 540 degrees)."""
_MAX_COEFFICIENT = 6
_SAMPLES = 3
_RELATION_SYMBOLS = {"⊥": r"\perp", "∥": r"\parallel", "∼": r"\sim", "≅": r"\cong", "△": r"\triangle "}


_Owner = dict[Any, str]
"""Each sympy symbol of a parsed statement to the quantity it stands for."""


class _PiMath:
    """geodsl's math interface with the exact value of pi (matching compares formulas, not the reference's pi)."""

    pi = math.pi

    def sin_deg(self, x: Any) -> Any:
        return math.sin(math.radians(x))

    def cos_deg(self, x: Any) -> Any:
        return math.cos(math.radians(x))

    def tan_deg(self, x: Any) -> Any:
        return math.tan(math.radians(x))

    def power(self, x: Any, e: Any) -> Any:
        return float(x) ** e


_MATH = _PiMath()


class BridgeError(SynthError):
    """A step of a solution has no program form (internal: surfaces as a reason, never raised out)."""


class PGPSProgram(BaseModel):
    """A PGPS solution program equivalent to a traced calculation, verified by the geodsl executor."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)
    program: str
    """The program in N/V/C/letter tokens (``Gougu N0 N1 V0 Get V0``)."""
    numbers: tuple[str, ...]
    """The N list: given values in geodsl's value syntax (``13``, ``x-3``, ``4\\sqrt{3}``)."""
    clauses: tuple[str, ...]
    """Semantic clauses in PGPS style (``AB = 13``, ``m \\angle ABC = 40``, ``AB \\perp BC``)."""
    answer: float
    """The engine's answer (degrees for angles, also where the goal expression has an angle in radians)."""
    executed: float
    """What the geodsl executor computed from the program (matches ``answer``)."""


class BridgeOutcome(BaseModel):
    """The program, or why there is none."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)
    program: PGPSProgram | None
    """The verified program, or ``None``."""
    reason: str | None
    """Why no program was made (``None`` when there is one)."""


# --- reading step statements ------------------------------------------------------------------------

_TRIG_CALL = re.compile(r"(sin|cos|tan)\([^()]*\)")
_QUANTITY = re.compile(r"∠[A-Z][A-Z0-9']*|S\([A-Z0-9']+\)|[A-Za-z_][A-Za-z0-9_']*")
_FUNCTIONS = frozenset({"sin", "cos", "tan", "sqrt", "pi"})


def _deg_fn(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda x: fn(x * sympy.pi / 180)


def _is_angle(name: str) -> bool:
    return name.startswith("∠")


def _is_letter(name: str) -> bool:
    return re.fullmatch(r"[a-z]", name) is not None


def parse_statement(statement: str, quantities: Sequence[str]) -> tuple[sympy.Expr, _Owner]:
    """A step's statement as ``expr`` (meaning ``expr = 0``), angles in degrees, and each symbol's quantity.

    Angles are in degrees (inside trigonometric functions too). A statement over angles only that
    mentions ``pi`` outside trigonometric arguments, not as a divisor, is in radians: a bare angle there
    stands for its radian measure (``∠ACB = 3·pi/10`` is 54 degrees).

    Raises:
        BridgeError: The statement does not read as one equation.
    """
    text = statement.replace("°", "").replace("·", "*").replace("^", "**")
    if text.count("=") != 1:
        raise BridgeError(f"statement {statement!r} is not one equation")
    names = sorted(quantities, key=len, reverse=True)
    symbols = {f"q{i}": sympy.Symbol(f"q{i}", real=True) for i in range(len(names))}
    outside = _TRIG_CALL.sub("", text)
    # Legacy statements of given angles in radians ("∠ACB = 3·pi/10"): only angles, pi not a divisor.
    radians = "pi" in outside and "/pi" not in outside and all(_is_angle(q) for q in quantities)
    for i, name in enumerate(names):
        pattern = re.compile(rf"(?<![A-Za-z0-9_∠]){re.escape(name)}(?![A-Za-z0-9_])")
        if radians and _is_angle(name):  # "pi*∠X" is already radians; a bare "∠X" stands for pi*∠X/180
            text = re.sub(rf"pi\*{re.escape(name)}(?![A-Za-z0-9_])", f"pi*@{i}@", text)
            text = pattern.sub(f"(pi*q{i}/180)", text).replace(f"@{i}@", f"q{i}")
        else:
            text = pattern.sub(f"q{i}", text)
    trig: dict[str, Any] = {"sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan}
    if not radians:
        trig = {k: _deg_fn(f) for k, f in trig.items()}
    scope: dict[str, Any] = {"Integer": sympy.Integer, "Float": sympy.Float, "Rational": sympy.Rational}
    scope |= {"pi": sympy.pi, "sqrt": sympy.sqrt, "Symbol": sympy.Symbol, **trig, **symbols}
    left, right = text.split("=")
    try:
        lhs = parse_expr(
            left, local_dict=dict(scope), global_dict={}, transformations=standard_transformations
        )
        rhs = parse_expr(
            right, local_dict=dict(scope), global_dict={}, transformations=standard_transformations
        )
    except (SyntaxError, TypeError, NameError, sympy.SympifyError) as err:
        raise BridgeError(f"statement {statement!r} does not parse: {err}") from None
    expr = sympy.expand(sympy.sympify(lhs - rhs))
    owner = {symbols[f"q{i}"]: name for i, name in enumerate(names)}
    unknown = [s for s in expr.free_symbols if s not in owner]
    if unknown:
        raise BridgeError(f"statement {statement!r} mentions {unknown} outside its quantities")
    return expr, owner


# --- building the program ----------------------------------------------------------------------------


def _value_text(expr: sympy.Expr) -> str:
    r"""A value in geodsl's syntax (LaTeX-ish, one token: ``13``, ``x-3``, ``4\sqrt{3}``, ``\frac{\pi*x}{2}``).

    Raises:
        BridgeError: A symbolic value geodsl cannot read.
    """
    expr = sympy.nsimplify(expr, [sympy.pi], tolerance=1e-12, rational=False)
    if expr.is_Integer:
        return str(int(expr))
    text = sympy.latex(expr).replace(r"\left(", "(").replace(r"\right)", ")")
    text = re.sub(r"(\\[A-Za-z]+) +(?=[A-Za-z0-9(\\])", r"\1*", text).replace(" ", "")
    try:
        parse_value(text)
    except GeoDSLError:
        if not expr.is_number:
            raise BridgeError(f"the value {expr} has no geodsl form") from None
        return f"{float(expr):.6f}".rstrip("0").rstrip(".")
    return text


class _Builder:
    """The program under construction: N list, semantic clauses, operand tokens and steps."""

    def __init__(self) -> None:
        self.numbers: list[str] = []
        self.values: list[float | None] = []
        self.clauses: list[str] = []
        self.tokens: dict[str, str] = {}
        self.aliases: dict[str, str] = {}
        self.radian_variables: set[str] = set()
        self.steps: list[str] = []
        self.v_count = 0
        self.angle_sums: dict[str, str] = {}

    def fresh(self) -> str:
        token = f"V{self.v_count}"
        self.v_count += 1
        return token

    def find(self, quantity: str) -> str:
        """The representative of the quantity's class of equal quantities."""
        while quantity in self.aliases:
            quantity = self.aliases[quantity]
        return quantity

    def known(self, quantity: str) -> bool:
        """Whether the quantity already has an operand."""
        return self.find(quantity) in self.tokens

    def operand(self, quantity: str) -> str:
        root = self.find(quantity)
        if root not in self.tokens:
            self.tokens[root] = root if _is_letter(root) else self.fresh()
        return self.tokens[root]

    def identify(self, first: str, second: str) -> None:
        """Record ``first = second``: both get one operand (an ``Equal`` step only when both have one)."""
        a, b = self.find(first), self.find(second)
        if a == b:
            return
        if a in self.tokens and b in self.tokens:
            self.steps.append(f"Equal {self.tokens[a]} {self.tokens[b]}")
            return
        if a in self.tokens or _is_letter(a):
            a, b = b, a
        self.aliases[a] = b

    def constant(self, value: float) -> str:
        for number, token in _VOCABULARY.items():
            if math.isclose(value, number, rel_tol=1e-12):
                return token
        for sides, token in _POLYGON_SIDES.items():
            if math.isclose(value, (sides - 2) * 180.0, rel_tol=1e-12):
                if token not in self.angle_sums:
                    self.angle_sums[token] = self.fresh()
                    self.steps.append(f"Ngon_Angsum {token} {self.angle_sums[token]}")
                return self.angle_sums[token]
        for index, given in enumerate(self.values):
            if given is not None and math.isclose(value, given, rel_tol=1e-9):
                return f"N{index}"
        raise BridgeError(f"the constant {value:g} is neither given nor a vocabulary constant")

    def add_number(self, text: str, value: float | None, clause: str) -> str:
        self.numbers.append(text)
        self.values.append(value)
        self.clauses.append(clause)
        return f"N{len(self.numbers) - 1}"


def _clause(quantity: str, value: str) -> str:
    if _is_angle(quantity):
        return f"m \\angle {quantity[1:]} = {value}"
    return f"{quantity} = {value}"


def _relation_clause(statement: str) -> str:
    text = statement
    for symbol, latex in _RELATION_SYMBOLS.items():
        text = text.replace(symbol, latex)
    return " ".join(text.split())


def _given(step: CalcStep, builder: _Builder) -> None:
    """A given step: a value (an N), a relation (a clause) or an equation between quantities (a step)."""
    if not step.quantities:
        builder.clauses.append(_relation_clause(step.statement))
        return
    expr, owner = parse_statement(step.statement, step.quantities)
    geometric = [s for s in expr.free_symbols if not _is_letter(owner[s])]
    if len(geometric) == 1 and not builder.known(owner[geometric[0]]):
        target = geometric[0]
        solved = sympy.solve(expr, target)
        if len(solved) == 1:
            value = sympy.sympify(solved[0]).subs(
                {s: sympy.Symbol(owner[s]) for s in expr.free_symbols if s != target}
            )
            if owner[target] in builder.radian_variables:  # the program holds this angle in degrees
                value = value * 180 / sympy.pi
            text = _value_text(value)
            number = float(value) if value.is_number else None
            builder.tokens[builder.find(owner[target])] = builder.add_number(
                text, number, _clause(owner[target], text)
            )
            return
    if _radian_variable(expr, owner, builder):
        return
    if not _identity(expr, owner, builder):
        _express(expr, owner, builder)


def _radian_variable(expr: sympy.Expr, owner: _Owner, builder: _Builder) -> bool:
    """``∠X = 180·v/pi``: the variable ``v`` is the angle in radians; the program uses the angle in degrees."""
    symbols = list(expr.free_symbols)
    if len(symbols) != 2:
        return False
    for angle, variable in (symbols, symbols[::-1]):
        degrees: Any = sympy.Integer(180) * variable / sympy.pi
        relation: Any = angle - degrees
        if not _is_angle(owner[angle]) or _is_angle(owner[variable]):
            continue
        if sympy.simplify(expr - relation) == 0 or sympy.simplify(expr + relation) == 0:
            builder.identify(owner[variable], owner[angle])
            builder.radian_variables.add(owner[variable])
            return True
    return False


def _linear(expr: sympy.Expr, owner: _Owner, builder: _Builder) -> bool:
    """Express a linear equation with ``Equal``/``Sum``/``Multiple``; False when it is not linear enough."""
    symbols = sorted(expr.free_symbols, key=lambda s: owner[s])
    try:
        poly = sympy.Poly(expr, *symbols)
    except sympy.PolynomialError:
        return False
    if poly.total_degree() != 1:
        return False
    coefficients = [poly.coeff_monomial(s) for s in symbols]
    constant = poly.coeff_monomial(1)
    lead = coefficients[0]
    scaled = [sympy.nsimplify(c / lead) for c in coefficients]
    if not all(c.is_Rational for c in scaled):
        return False
    lcd = math.lcm(*(int(sympy.fraction(c)[1]) for c in scaled))
    integers = [int(c * lcd) for c in scaled]
    rest = sympy.nsimplify(constant / lead * lcd)
    if max(abs(c) for c in integers) > _MAX_COEFFICIENT:
        return False
    left: list[str] = []
    right: list[str] = []
    for s, c in zip(symbols, integers, strict=True):
        (left if c > 0 else right).extend([builder.operand(owner[s])] * abs(c))
    if rest != 0:
        (left if rest > 0 else right).append(builder.constant(abs(float(rest))))
    builder.steps.extend(_sum_steps(left, right, builder))
    return True


def _sum_steps(left: list[str], right: list[str], builder: _Builder) -> list[str]:
    if not left or not right:
        raise BridgeError("a linear equation with all terms on one side (a sum of positives equal to zero)")
    if len(left) == 1 and len(right) == 1:
        return [f"Equal {left[0]} {right[0]}"]
    if len(right) == 1:
        return [f"Sum {' '.join(left)} {right[0]}"]
    if len(left) == 1:
        return [f"Sum {' '.join(right)} {left[0]}"]
    middle = builder.fresh()
    return [f"Sum {' '.join(left)} {middle}", f"Sum {' '.join(right)} {middle}"]


def _sample_points(symbols: Sequence[Any], owner: _Owner, rng: random.Random) -> list[dict[Any, float]]:
    return [
        {s: rng.uniform(20.0, 70.0) if _is_angle(owner[s]) else rng.uniform(1.0, 3.0) for s in symbols}
        for _ in range(_SAMPLES)
    ]


def _proportional(first: list[float], second: list[float]) -> bool:
    ratios: list[float] = []
    for a, b in zip(first, second, strict=True):
        if not (math.isfinite(a) and math.isfinite(b)) or abs(b) < 1e-12 or abs(a) < 1e-12:
            return False
        ratios.append(a / b)
    return all(math.isclose(r, ratios[0], rel_tol=1e-5) for r in ratios)


def _match(expr: sympy.Expr, owner: _Owner, builder: _Builder) -> str | None:
    """One operator step whose equation is a multiple of ``expr``, or None."""
    symbols = sorted(expr.free_symbols, key=lambda s: owner[s])
    points = _sample_points(symbols, owner, random.Random(0))
    function = sympy.lambdify(symbols, expr, "math")
    target = [float(function(*(p[s] for s in symbols))) for p in points]
    constants: list[tuple[str, float]] = []
    for atom in sorted({abs(float(a)) for a in expr.atoms(sympy.Number) if a != 0 and abs(a) != 1}):
        try:
            constants.append((builder.constant(atom), atom))
        except BridgeError:
            continue
    pool: list[tuple[Any, str, float]] = [(s, "", 0.0) for s in symbols]
    pool += [(None, token, value) for token, value in constants]
    for name, arity in MATCH_ORDER:
        spec = OPERATORS[name]
        residual = spec.residual
        if residual is None or arity < len(symbols):
            continue
        for slots in itertools.product(pool, repeat=arity):
            if {s for s, _, _ in slots if s is not None} != set(symbols):
                continue
            values = [[p[s] if s is not None else v for s, _, v in slots] for p in points]
            try:
                produced = [float(residual(v, _MATH)) for v in values]
            except (ValueError, ZeroDivisionError, OverflowError):
                continue
            if _proportional(produced, target):
                operands = [builder.operand(owner[s]) if s is not None else t for s, t, _ in slots]
                return f"{name} {' '.join(operands)}"
    return None


def _identity(expr: sympy.Expr, owner: _Owner, builder: _Builder) -> bool:
    """Record an equation ``q1 = q2`` between two quantities as one operand for both."""
    symbols = list(expr.free_symbols)
    if len(symbols) != 2 or sympy.expand(expr.subs(symbols[0], symbols[1])) != 0:
        return False
    builder.identify(owner[symbols[0]], owner[symbols[1]])
    return True


def _express(expr: sympy.Expr, owner: _Owner, builder: _Builder) -> None:
    if not expr.free_symbols:
        raise BridgeError("an equation without quantities")
    if _linear(expr, owner, builder):
        return
    step = _match(expr, owner, builder)
    if step is None:
        names = ", ".join(sorted(owner[s] for s in expr.free_symbols))
        raise BridgeError(f"no operator expresses {sympy.sstr(expr)} = 0 (over {names})")
    builder.steps.append(step)


def _goal(problem: CalcProblem, step: CalcStep, builder: _Builder) -> str:
    """The operand to read: the goal quantity's token, or a V defined by one more step."""
    lhs = step.statement.rsplit("=", 1)[0].strip()
    if builder.known(lhs):
        token = builder.operand(lhs)
        if token.startswith("N") and builder.find(lhs) != lhs:  # equal to a given value, not given itself
            read = builder.fresh()
            builder.steps.append(f"Equal {token} {read}")
            return read
        return token
    if _is_letter(lhs):
        return lhs
    names = sorted(set(_QUANTITY.findall(lhs)) - _FUNCTIONS)
    if missing := [q for q in names if not builder.known(q) and not _is_letter(q)]:
        raise BridgeError(f"the goal {lhs!r} uses {', '.join(missing)}, which no step determines")
    expr, owner = parse_statement(f"{lhs} = goal_value", [*names, "goal_value"])
    goal_symbol = next(s for s, q in owner.items() if q == "goal_value")
    builder.tokens["goal_value"] = builder.fresh()
    _express(expr, owner, builder)
    del owner[goal_symbol]
    return builder.tokens["goal_value"]


def _right_angle_cosines(steps: list[str]) -> list[str]:
    """``Cos_Law a b c V`` with ``V`` only ever equal to 90 degrees is Pythagoras: ``Gougu b c a``."""
    right = {step.split()[1] for step in steps if step.startswith("Equal V") and step.endswith(" C90")}
    out: list[str] = []
    for step in steps:
        tokens = step.split()
        if tokens[0] == "Cos_Law" and tokens[4] in right:
            out.append(f"Gougu {tokens[2]} {tokens[3]} {tokens[1]}")
        else:
            out.append(step)
    used = collections.Counter(t for step in out for t in step.split()[1:])
    return [
        s for s in out if not (s.startswith("Equal V") and s.endswith(" C90") and used[s.split()[1]] == 1)
    ]


def _renumber(program: str) -> str:
    """Number the V's in order of first appearance, as PGPS programs do."""
    order: dict[str, str] = {}
    for token in program.split():
        if re.fullmatch(r"V\d+", token) and token not in order:
            order[token] = f"V{len(order)}"
    return " ".join(order.get(token, token) for token in program.split())


def bridge_program(problem: CalcProblem, solution: CalcSolution) -> BridgeOutcome:
    """The PGPS program of a calculation solution, or the reason there is none.

    Args:
        problem: The calculation problem (its id names it in reasons).
        solution: The calc solver's traced solution.

    Returns:
        A verified program (the geodsl executor reproduces ``solution.answer``), or the reason.
    """
    if solution.answer is None or not solution.steps:
        return BridgeOutcome(program=None, reason="the solution has no answer")
    builder = _Builder()
    try:
        for step in solution.steps[:-1]:
            if step.rule == "given":
                _given(step, builder)
        equations = [
            parse_statement(step.statement, step.quantities)
            for step in solution.steps[:-1]
            if step.rule not in SKIPPED_RULES | {"given"} and step.quantities
        ]
        rest = [(expr, owner) for expr, owner in equations if not _identity(expr, owner, builder)]
        for expr, owner in rest:
            _express(expr, owner, builder)
        read = _goal(problem, solution.steps[-1], builder)
    except BridgeError as err:
        return BridgeOutcome(program=None, reason=f"problem {problem.id}: {err}")
    program = _renumber(" ".join([*_right_angle_cosines(builder.steps), f"Get {read}"]))
    answer = solution.answer
    goal_text = solution.steps[-1].statement.rsplit("=", 1)[0].strip()
    if (_is_angle(goal_text) and isinstance(problem.goal, Op)) or goal_text in builder.radian_variables:
        answer = math.degrees(
            answer
        )  # an angle inside a goal expression is in radians; programs give degrees
    try:
        executed = execute(program, builder.numbers).answer
    except GeoDSLError as err:
        return BridgeOutcome(
            program=None, reason=f"problem {problem.id}: the program {program!r} fails: {err}"
        )
    if not answers_match(executed, answer):
        reason = f"problem {problem.id}: the program gives {executed:g}, the engine {answer:g}"
        return BridgeOutcome(program=None, reason=reason)
    made = PGPSProgram(
        program=program,
        numbers=tuple(builder.numbers),
        clauses=tuple(builder.clauses),
        answer=answer,
        executed=executed,
    )
    return BridgeOutcome(program=made, reason=None)


def to_pgps(problem: CalcProblem, solution: CalcSolution) -> PGPSProgram | None:
    """The verified PGPS program of a calculation solution, or ``None`` (see :func:`bridge_program` for why)."""
    return bridge_program(problem, solution).program
