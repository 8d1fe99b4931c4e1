"""The numeric and the exact executor agree on random programs of every operator and arity.

Programs are planted: every unknown gets a value first, a step's other operands are drawn
around it, and one known operand is completed so that the step holds at the planted values
(from the operator's residual, never from an executor). So every program has a solution,
and for each one:

- when both executors answer, the answers agree;
- when one answers, so does the other;
- when both fail, they failed on a step that the planted values do not reach (an earlier
  step's root rule took another root than the planted one). A failure on a step whose
  inputs are all at their planted values is a miss: that step has a real solution.

The default suite checks 300 programs; the slow run checks ``GEODSL_AGREEMENT_PROGRAMS``
(default 2,000; the full check is ``GEODSL_AGREEMENT_PROGRAMS=10000 uv run pytest -m slow
tests/geodsl/test_executor_agreement.py``, about a quarter of an hour on two busy cores).
"""

from __future__ import annotations

import math
import os
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, cast

import pytest
import sympy

import geodsl
from geodsl import OPERATORS, GeoDSLError, OpSpec, execute
from geodsl._exact import SYMPY_MATH
from geodsl.ops import FLOAT_MATH, MathLib, PowerForm

_PAIRS: tuple[tuple[str, int], ...] = tuple(
    (spec.name, n)
    for spec in sorted(OPERATORS.values(), key=lambda s: s.name)
    if spec.residual is not None
    for n in range(spec.min_arity, (spec.max_arity or spec.min_arity + 2) + 1)
)
"""Every operator (except Get) with every operand count, the open-ended ones up to two extra operands."""

_TRIG_ANGLE = {("Gsin", 2), ("Gcos", 2), ("Gtan", 2), ("Sin_Law", 0), ("Sin_Law", 2), ("Tria_SAS_Area", 1)}
_EXPONENTS = ("C2", "C3", "C4", "C0.5", "C60", "C90", "C180", "C360", "1.5", "-2", "5")
_JOINT_EXPONENTS = ("C2", "C3", "C4", "-2")
"""Exponents in the equations of a joint system: the exact executor solves polynomial systems of
low degree and leaves others (a 60th power, a square root) pending."""
_CONSTANTS = ("C0.5", "C2", "C3", "C4", "C5", "C6", "C8", "C60", "C90", "C180", "C360")
_LETTERS = "xyzabmnpqr"


def _number(token: str) -> float:
    return float(token[1:] if token.startswith("C") else token)


def _text(value: float) -> str:
    return format(value, ".15g")


def _residual(spec: OpSpec) -> Callable[[Sequence[Any], MathLib], Any]:
    if spec.residual is None:
        raise ValueError(f"{spec.name} has no equation")
    return spec.residual


def _at(spec: OpSpec, values: list[float], slot: int, v: float) -> float:
    """The residual with operand ``slot`` set to ``v`` (float maths, the reference's pi)."""
    trial = list(values)
    trial[slot] = v
    return float(_residual(spec)(trial, FLOAT_MATH))


@cache
def _completions(op: str, arity: int) -> dict[int, int]:
    """Slots a step can be completed in from its residual: slot -> 1 (linear) or 2 (a pure square)."""
    syms = sympy.symbols(f"a0:{arity}")
    residual = sympy.expand(sympy.sympify(_residual(OPERATORS[op])(list(syms), SYMPY_MATH)))
    out: dict[int, int] = {}
    for slot, s in enumerate(syms):
        if not residual.is_polynomial(s):
            continue
        poly = sympy.Poly(residual, s)
        degree = int(poly.degree())
        if degree == 1 or (degree == 2 and poly.coeff_monomial(s) == 0):
            out[slot] = degree
    return out


def _complete(spec: OpSpec, values: list[float], slot: int, degree: int) -> float | None:
    """The value of ``slot`` that makes the residual zero."""
    try:
        gamma = _at(spec, values, slot, 0.0)
        value = -gamma / (_at(spec, values, slot, 1.0) - gamma)
        return math.sqrt(value) if degree == 2 else value
    except (ArithmeticError, ValueError):
        return None


def _complete_power(form: PowerForm, values: list[float], slot: int) -> float | None:
    """``(a / b)^e = c / d`` completed in a base slot: a = b (c / d)^(1/e), b = a (d / c)^(1/e)."""
    a, b, e, c = values[form.num], values[form.den], values[form.exponent], values[form.rhs_num]
    d = values[form.rhs_den] if form.rhs_den is not None else 1.0
    if d == 0 or c / d <= 0:
        return None
    ratio = math.exp(math.log(c / d) / e)
    return b * ratio if slot == form.num else a / ratio


def _slope(spec: OpSpec, values: list[float], slot: int) -> float:
    """The residual's derivative in one slot at the planted values (a central difference)."""
    h = 1e-6 * max(1.0, abs(values[slot]))
    try:
        return (_at(spec, values, slot, values[slot] + h) - _at(spec, values, slot, values[slot] - h)) / (
            2 * h
        )
    except (ArithmeticError, ValueError):
        return math.nan


@dataclass(frozen=True)
class Planted:
    """A random program, its N list, and the planted value of every unknown."""

    index: int
    program: str
    numbers: tuple[str, ...]
    values: dict[str, float]

    def describe(self) -> str:
        return f"#{self.index}: {self.program!r} numbers={list(self.numbers)} planted={self.values}"


class _Builder:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.numbers: list[str] = []
        self.values: dict[str, float] = {}
        self.lengths: list[str] = []
        """Unknowns standing for lengths, which later steps may reuse as operands."""
        self.steps: list[str] = []
        self.v = 0
        self.letters = 0

    def _state(self) -> tuple[list[str], dict[str, float], list[str], list[str], int, int]:
        return (
            list(self.numbers),
            dict(self.values),
            list(self.lengths),
            list(self.steps),
            self.v,
            self.letters,
        )

    def _restore(self, state: tuple[list[str], dict[str, float], list[str], list[str], int, int]) -> None:
        self.numbers, self.values, self.lengths, self.steps, self.v, self.letters = state

    def number(self, text: str) -> str:
        self.numbers.append(text)
        return f"N{len(self.numbers) - 1}"

    def _kind(self, op: str, arity: int, slot: int) -> str:
        spec = OPERATORS[op]
        form = spec.power_forms.get(arity)
        if form is not None and slot == form.exponent:
            return "exponent"
        if slot in spec.minimums:
            return "sides"
        if (op, slot) in _TRIG_ANGLE:
            return "acute"
        if slot in spec.angle_slots:
            return "angle"
        return "length"

    def _draw(self, kind: str, *, joint: bool) -> tuple[float, str | None]:
        """A planted value for a slot of this kind, and the constant token when it is one."""
        rng = self.rng
        if kind == "exponent":
            token = rng.choice(_JOINT_EXPONENTS if joint else _EXPONENTS)
            return _number(token), token if token.startswith("C") else None
        if kind == "sides":
            return float(rng.randint(3, 12)), None
        if kind == "acute":
            return round(rng.uniform(8.0, 82.0), 1), None
        if kind == "angle":
            return round(rng.uniform(8.0, 172.0), 1), None
        if rng.random() < 0.15:
            token = rng.choice(_CONSTANTS)
            return _number(token), token
        return float(f"{rng.uniform(0.5, 60.0):.4g}"), None

    def _unknown(self, kind: str, value: float, *, bare: bool) -> str | None:
        """A token for a new unknown with this value: a V, a letter, or (unless bare) an N value in a letter."""
        rng = self.rng
        roll = rng.random() * (0.7 if bare else 1.0)
        if kind == "exponent" or roll < 0.55:
            name, token = f"V{self.v}", f"V{self.v}"
            self.v += 1
        else:
            if self.letters == len(_LETTERS):
                return None
            name = token = _LETTERS[self.letters]
            self.letters += 1
            if bare:
                pass
            elif roll < 0.7:
                k, m = rng.randint(2, 5), rng.randint(-9, 9)
                token = self.number(f"{k}{name}{m:+d}")
                value = (value - m) / k
            elif roll < 0.8:
                k = rng.randint(2, 5)
                token = self.number(f"\\frac{{{name}}}{{{k}}}")
                value *= k
            elif roll < 0.9 and value > 0:
                token = self.number(f"{name}^{{2}}")
                value = math.sqrt(value)
        self.values[name] = value
        if kind == "length" and token == name and value > 0:
            self.lengths.append(name)
        return token

    def step(self, op: str, arity: int, new: int, reuse: Sequence[str] = ()) -> dict[str, float] | None:
        """Add one step with ``new`` new unknowns (and the given earlier ones); None (and no change) to retry.

        Returns the step's unknowns (new and reused) with the residual's slope in each. A step
        with two new unknowns (or reused ones) is one equation of a joint system: those
        unknowns are bare tokens in length slots, so the system is polynomial.
        """
        state = self._state()
        slopes = self._step(op, arity, new, reuse)
        if slopes is None:
            self._restore(state)
        return slopes

    def _step(self, op: str, arity: int, new: int, reuse: Sequence[str]) -> dict[str, float] | None:
        spec = OPERATORS[op]
        rng = self.rng
        completable = dict(_completions(op, arity))
        form = spec.power_forms.get(arity)
        if form is not None:
            completable.update({form.num: 0, form.den: 0})
        kinds = [self._kind(op, arity, s) for s in range(arity)]
        slots = list(range(arity))
        rng.shuffle(slots)
        dependent = next((s for s in slots if s in completable), None)
        if dependent is None:
            return None
        joint = new > 1 or bool(reuse)
        free = [s for s in slots if s != dependent and (not joint or kinds[s] == "length")]
        if len(free) < new + len(reuse):
            return None
        unknown_slots, reuse_slots = free[:new], free[new : new + len(reuse)]
        values = [0.0] * arity
        tokens: list[str | None] = [None] * arity
        used = set(reuse)
        for s in range(arity):
            if s == dependent:
                continue
            if s in reuse_slots:
                name = reuse[reuse_slots.index(s)]
                values[s], tokens[s] = self.values[name], name
                continue
            value, constant = self._draw(kinds[s], joint=joint)
            values[s] = value
            if s not in unknown_slots:
                others = [n for n in self.lengths if n not in used]
                if constant is None and kinds[s] == "length" and others and rng.random() < 0.2:
                    name = rng.choice(others)
                    used.add(name)
                    values[s], tokens[s] = self.values[name], name
                else:
                    tokens[s] = constant or self.number(_text(value))
        degree = completable[dependent]
        value = (
            _complete_power(form, values, dependent)
            if form is not None and degree == 0
            else _complete(spec, values, dependent, degree)
        )
        if value is None or not math.isfinite(value) or not 1e-4 <= abs(value) <= 1e7:
            return None
        values[dependent] = value
        if any(_slope(spec, values, s) == 0.0 for s in unknown_slots) or (
            form is not None and form.exponent in unknown_slots and values[form.num] == values[form.den]
        ):
            return None  # the step does not depend on its unknown ((37.34 / 37.34)^e = 1)
        slopes = {reuse[k]: _slope(spec, values, s) for k, s in enumerate(reuse_slots)}
        tokens[dependent] = self.number(_text(value))
        for s in unknown_slots:
            before = set(self.values)
            token = self._unknown(kinds[s], values[s], bare=joint)
            if token is None:
                return None
            tokens[s] = token
            slopes.update({n: _slope(spec, values, s) for n in set(self.values) - before})
        self.steps.append(" ".join([op, *(t for t in tokens if t is not None)]))
        return slopes


def planted_program(index: int, seed: int = 0) -> Planted | None:
    """Program ``index`` of the seeded stream: its first step cycles through every (operator, arity)."""
    rng = random.Random(f"{seed}:{index}")
    builder = _Builder(rng)
    first = True
    for _ in range(rng.randint(1, 4)):
        op, arity = _PAIRS[index % len(_PAIRS)] if first else rng.choice(_PAIRS)
        first = False
        joint = arity >= 3 and rng.random() < 0.2
        for _attempt in range(20):
            first_slopes = builder.step(op, arity, 2 if joint else 1)
            if first_slopes is not None:
                break
        else:
            continue
        if joint and len(first_slopes) == 2:
            u, w = sorted(first_slopes)
            for _attempt in range(20):
                op2, arity2 = rng.choice([p for p in _PAIRS if p[1] >= 3])
                state = builder._state()
                slopes = builder.step(op2, arity2, 0, reuse=(u, w))
                if slopes is None:
                    continue
                # the two equations must cross, not run along each other (a x = y and b x = y at x = 0)
                det = first_slopes[u] * slopes[w] - first_slopes[w] * slopes[u]
                size = abs(first_slopes[u] * slopes[w]) + abs(first_slopes[w] * slopes[u])
                if abs(det) > 1e-3 * size:
                    break
                builder._restore(state)
            else:
                return None  # the pair stays underdetermined
    if not builder.values:
        return None
    target = rng.choice(sorted(builder.values))
    program = " ".join([*builder.steps, f"Get {target}"])
    return Planted(index, program, tuple(builder.numbers), dict(builder.values))


# --- the check ------------------------------------------------------------------------------------

_STEP = re.compile(r"step (\d+)")


def _run(p: Planted, mode: geodsl.Mode) -> float | GeoDSLError:
    try:
        return execute(p.program, p.numbers, mode=mode).answer
    except GeoDSLError as exc:
        return exc


def _close(a: float, b: float) -> bool:
    # exact mode uses exact pi and numeric 3.141593 (1.1e-7 apart), which a step can amplify
    return abs(a - b) <= 1e-4 * max(1.0, abs(a), abs(b))


def _reaches(p: Planted, error: GeoDSLError) -> bool:
    """Whether every unknown solved before the failing step has its planted value (numeric mode)."""
    found = _STEP.search(str(error))
    if found is None:
        return True
    steps = geodsl.parse_program(p.program).steps[: int(found.group(1))]
    prefix = " ".join(
        [*(" ".join([s.op, *(o.token for o in s.operands)]) for s in steps), f"Get N{len(p.numbers)}"]
    )
    try:
        trace = execute(prefix, [*p.numbers, "1"]).steps
    except GeoDSLError:
        return True  # the steps before the failing one fail on their own: look at it

    solved = {s.name: s.value for t in trace for s in t.solved}
    return all(_close(v, p.values[n]) for n, v in solved.items())


def disagreement(p: Planted) -> str | None:
    """What is wrong with how the two executors handle a planted program, or None."""
    numeric, exact = _run(p, "numeric"), _run(p, "exact")
    if isinstance(numeric, float) and isinstance(exact, float):
        return None if _close(numeric, exact) else f"numeric {numeric!r} != exact {exact!r}"
    if isinstance(numeric, float) or isinstance(exact, float):
        return f"numeric: {numeric!r}; exact: {exact!r}"
    assert isinstance(numeric, GeoDSLError)
    if _reaches(p, numeric):
        return f"both failed on a step the planted values satisfy: numeric {numeric!r}; exact {exact!r}"
    return None


def _check(count: int, seed: int = 0) -> tuple[int, list[str]]:
    """Check the first ``count`` programs the seeded stream completes (a few indices complete none)."""
    checked, problems = 0, []
    for index in range(2 * count):
        if checked == count:
            break
        p = planted_program(index, seed)
        if p is None:
            continue
        checked += 1
        problem = disagreement(p)
        if problem is not None:
            problems.append(f"{p.describe()}: {problem}")
    return checked, problems


def test_generator_covers_every_operator_and_arity() -> None:
    seen = {
        (step.op, len(step.operands))
        for index in range(3 * len(_PAIRS))
        if (p := planted_program(index)) is not None
        for step in geodsl.parse_program(p.program).steps
    }
    assert set(_PAIRS) <= seen


def test_planted_programs_hold_at_their_planted_values() -> None:
    # the oracle itself: each step's residual vanishes at the planted values (float maths)
    for index in range(200):
        p = planted_program(index)
        if p is None:
            continue
        subs = {sympy.Symbol(k): sympy.Float(v) for k, v in p.values.items()}
        for step in geodsl.parse_program(p.program).steps:
            if step.op == "Get":
                continue
            spec = OPERATORS[step.op]
            values = [
                float(cast(sympy.Expr, geodsl.parse_value(p.numbers[o.index]).xreplace(subs)))
                if o.kind == "N"
                else _number(o.token)
                if o.kind == "C"
                else p.values[o.token]
                for o in step.operands
            ]
            form = spec.power_forms.get(len(values))
            if form is None:
                scale = max(1.0, *(abs(v) for v in values))
                assert abs(float(_residual(spec)(values, FLOAT_MATH))) <= 1e-9 * scale**3, p.describe()
                continue
            # a^e * d = b^e * c, compared as logarithms (27^360 overflows a float)
            a, b, e, c = (values[form.num], values[form.den], values[form.exponent], values[form.rhs_num])
            d = values[form.rhs_den] if form.rhs_den is not None else 1.0
            left, right = e * math.log(abs(a)) + math.log(abs(d)), e * math.log(abs(b)) + math.log(abs(c))
            assert abs(left - right) <= 1e-9 * max(1.0, abs(left)), p.describe()


@pytest.mark.parametrize("seed", [0, 1])
def test_numeric_and_exact_agree_on_planted_programs(seed: int) -> None:
    checked, problems = _check(150, seed)
    assert checked == 150
    assert not problems, "\n".join(problems[:10])


@pytest.mark.slow
def test_numeric_and_exact_agree_on_many_planted_programs() -> None:
    count = int(os.environ.get("GEODSL_AGREEMENT_PROGRAMS", "2000"))
    checked, problems = _check(count, seed=7)
    assert checked == count
    assert not problems, f"{len(problems)} of {checked}:\n" + "\n".join(problems[:10])
