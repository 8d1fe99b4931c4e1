"""Calculation problems: quantities the engine determines exactly on a figure fixed up to similarity.

The figure's rules leave no degree of freedom (angles are parameters of ``s_angle`` clauses) and one
segment's length is given, so the engine's algebra decides values: an angle whose line directions
reduce to a constant in the angle system, a length whose log reduces to a constant relative to the given
segment in the ratio system, and the area of a triangle with two such sides and an included angle of
exact sine. Each value carries the facts the elimination combined; their proofs are traced, the figure is
cut down to the clauses those proofs need, and the cut-down problem is solved again from its own text.
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass
from fractions import Fraction

from geosynth.engine import (
    DEG,
    Deduction,
    Diagram,
    Problem,
    ProofStep,
    Tracer,
    Vec,
    norm,
    parse_problem,
    relation_text,
)
from geosynth.synth._config import SynthConfig
from geosynth.synth._sample import Figure
from geosynth.synth._trace import derived_count, prune, run_engine, trace_steps
from geosynth.synth._values import PowerProduct, multiply, power_of, power_text, power_value
from geosynth.synth.errors import SynthError

TOLERANCE = 1e-6
"""Relative tolerance of the numeric check of an exact answer against the diagram."""

SINES: dict[Fraction, PowerProduct] = {
    Fraction(30): {2: Fraction(-1)},
    Fraction(150): {2: Fraction(-1)},
    Fraction(90): {},
    Fraction(45): {2: Fraction(-1, 2)},
    Fraction(135): {2: Fraction(-1, 2)},
    Fraction(60): {2: Fraction(-1), 3: Fraction(1, 2)},
    Fraction(120): {2: Fraction(-1), 3: Fraction(1, 2)},
}
"""Angles (degrees) whose sine is a power product: the included angles areas may use."""

COSINES: dict[Fraction, tuple[int, PowerProduct]] = {
    Fraction(90): (0, {}),
    Fraction(60): (1, {2: Fraction(-1)}),
    Fraction(120): (-1, {2: Fraction(-1)}),
    Fraction(45): (1, {2: Fraction(-1, 2)}),
    Fraction(135): (-1, {2: Fraction(-1, 2)}),
    Fraction(30): (1, {2: Fraction(-1), 3: Fraction(1, 2)}),
    Fraction(150): (-1, {2: Fraction(-1), 3: Fraction(1, 2)}),
}
"""Angles (degrees) whose cosine is a signed power product (sign, magnitude; sign 0 for 90 degrees):
the angles at which the law of cosines gives a side exactly (Pythagoras at 90)."""


@dataclass(frozen=True)
class Value:
    """An exactly determined quantity of a figure."""

    kind: str
    """``angle``, ``length`` or ``area``."""
    points: tuple[str, ...]
    """``a b c`` (vertex b), ``a b`` or the triangle."""
    degrees: Fraction | None
    """Angles: the value in degrees."""
    ratio: PowerProduct | None
    """Lengths and areas: the value over the given length (squared for areas)."""
    sources: frozenset[int]
    """Indices of the facts the elimination combined."""
    rule: str | None = None
    """How the value follows from those facts when not by chasing alone (``law of cosines``)."""


def _rational(product: PowerProduct) -> Fraction | None:
    """A power product with whole exponents as a rational (``None`` when it is irrational)."""
    if any(e.denominator != 1 for e in product.values()):
        return None
    value = Fraction(1)
    for p, e in product.items():
        value *= Fraction(p) ** int(e)
    return value


def _cosine_square(
    first: PowerProduct, second: PowerProduct, cosine: tuple[int, PowerProduct]
) -> Fraction | None:
    """``a^2 + b^2 - 2ab cos C`` as a rational, or ``None`` when a term is irrational."""
    sign, magnitude = cosine
    squares = [_rational(multiply(first, first)), _rational(multiply(second, second))]
    cross = Fraction(0) if sign == 0 else _rational(multiply(first, second, magnitude))
    if cross is None or squares[0] is None or squares[1] is None:
        return None
    return squares[0] + squares[1] - 2 * sign * cross


def _angle_at(coords: dict[str, Vec], a: str, b: str, c: str) -> float:
    u, v = coords[a] - coords[b], coords[c] - coords[b]
    cosine = float(u @ v) / (norm(u) * norm(v))
    return math.degrees(math.acos(max(-1.0, min(1.0, cosine))))


class Evaluator:
    """Exact values read off the engine's angle and ratio systems after a search to closure."""

    def __init__(self, deduction: Deduction, scale: tuple[str, str]) -> None:
        """Build both systems from every fact of a finished search."""
        self.tracer = Tracer(deduction, None)
        self.angles, self.ratios = self.tracer.systems()
        if deduction.diagram is None:
            raise SynthError("the search kept no diagram to read the figure's coordinates from")
        self.coords = deduction.diagram.coords()
        self.scale = scale
        self._lengths: dict[tuple[str, str], Value | None] = {}

    def angle(self, a: str, b: str, c: str) -> Value | None:
        """The undirected angle ``a b c`` when the angle system fixes it."""
        l1, l2 = self.angles.line(b, a), self.angles.line(b, c)
        if l1 == l2:
            return None
        reduced = self.angles.angle(l1, l2)
        units = self.angles.system.units
        if reduced.key(units) or not reduced.sources:
            return None
        directed = reduced.constant(units).get(DEG, Fraction(0)) % 180
        measured = _angle_at(self.coords, a, b, c)
        for value in (directed, 180 - directed):
            if 0 < value < 180 and abs(float(value) - measured) < TOLERANCE * 180:
                return Value("angle", (a, b, c), Fraction(value), None, reduced.sources)
        return None

    def length(self, x: str, y: str) -> Value | None:
        """``|x y|`` over the given length: fixed by the ratio system, or else by the law of cosines.

        The law of cosines applies in a triangle ``x z y`` whose sides ``z x`` and ``z y`` the ratio
        system fixes and whose angle at ``z`` has an exact cosine (:data:`COSINES`; 90 degrees is
        Pythagoras), when the square of the third side comes out rational.
        """
        key = (x, y) if x <= y else (y, x)
        if key not in self._lengths:
            self._lengths[key] = self.ratio_length(x, y) or self._cosine_length(x, y)
        found = self._lengths[key]
        return (
            None if found is None else Value("length", (x, y), None, found.ratio, found.sources, found.rule)
        )

    def _cosine_length(self, x: str, y: str) -> Value | None:
        for z in self.coords:
            if z in (x, y):
                continue
            angle = self.angle(x, z, y)
            if angle is None or angle.degrees is None or angle.degrees not in COSINES:
                continue
            first, second = self.ratio_length(z, x), self.ratio_length(z, y)
            if first is None or second is None or first.ratio is None or second.ratio is None:
                continue
            square = _cosine_square(first.ratio, second.ratio, COSINES[angle.degrees])
            if square is None or square <= 0:
                continue
            ratio = {p: e / 2 for p, e in power_of(square).items()}
            measured = self._measured(x, y)
            if abs(power_value(ratio) - measured) > TOLERANCE * max(1.0, measured):
                continue
            rule = "Pythagorean theorem" if angle.degrees == 90 else "law of cosines"
            sources = angle.sources | first.sources | second.sources
            return Value("length", (x, y), None, ratio, sources, rule)
        return None

    def _measured(self, x: str, y: str) -> float:
        p, q = self.scale
        return norm(self.coords[x] - self.coords[y]) / norm(self.coords[p] - self.coords[q])

    def ratio_length(self, x: str, y: str) -> Value | None:
        """``|x y|`` over the given length when the ratio system fixes it."""
        p, q = self.scale
        if {x, y} == {p, q}:
            return None
        reduced = self.ratios.system.reduce(self.ratios.ratio(x, y, p, q))
        units = self.ratios.system.units
        if reduced.key(units) or not reduced.sources:
            return None
        ratio = {int(u[1]): Fraction(e) for u, e in reduced.constant(units).items() if isinstance(u, tuple)}
        measured = self._measured(x, y)
        if abs(power_value(ratio) - measured) > TOLERANCE * max(1.0, measured):
            return None
        return Value("length", (x, y), None, ratio, reduced.sources)

    def area(self, a: str, b: str, c: str) -> Value | None:
        """The area of triangle ``a b c`` over the given length squared, from two sides and their angle."""
        for x, y, z in ((a, b, c), (b, c, a), (c, a, b)):
            angle = self.angle(x, y, z)
            if angle is None or angle.degrees is None or angle.degrees not in SINES:
                continue
            first, second = self.length(y, x), self.length(y, z)
            if first is None or second is None or first.ratio is None or second.ratio is None:
                continue
            ratio = multiply(first.ratio, second.ratio, SINES[angle.degrees], {2: Fraction(-1)})
            sources = angle.sources | first.sources | second.sources
            return Value("area", (a, b, c), None, ratio, sources)
        return None

    def candidates(self, points: tuple[str, ...]) -> dict[str, list[Value]]:
        """Every determined, non-trivial angle, length and area of the figure (by kind)."""
        found: dict[str, list[Value]] = {"angle": [], "length": [], "area": []}
        for b in points:
            for a, c in itertools.combinations([p for p in points if p != b], 2):
                if abs(_angle_at(self.coords, a, b, c) - 90) < 89.9 and (v := self.angle(a, b, c)):
                    found["angle"].append(v)
        for x, y in itertools.combinations(points, 2):
            if v := self.length(x, y):
                found["length"].append(v)
        for tri in itertools.combinations(points, 3):
            if abs(_angle_at(self.coords, *tri) - 90) < 89.9 and (v := self.area(*tri)):
                found["area"].append(v)
        return {k: [v for v in vs if len(v.sources) >= 2] for k, vs in found.items()}


@dataclass(frozen=True)
class CalculationProblem:
    """A calculation problem the engine re-solved from its own statement."""

    text: str
    """The problem line (constructions only)."""
    givens: tuple[str, ...]
    """Quantity statements: ``length a b = 6`` and, for variable goals, ``angle a b c = x + 15``."""
    goal: str
    """``angle a b c``, ``length a b``, ``area a b c`` or ``var x``."""
    goal_type: str
    """``angle``, ``length``, ``area`` or ``var``."""
    answer: str
    """The exact answer (``40``, ``3*sqrt(2)``)."""
    answer_value: float
    """Its float value."""
    diagram: Diagram
    """Coordinates of the points."""
    steps: tuple[ProofStep, ...]
    """Proofs of the facts the computation uses."""
    final: str
    """The computation's last line (the value and where it comes from)."""


@dataclass(frozen=True)
class _Goal:
    kind: str
    points: tuple[str, ...]
    offset: int
    length: int


def _degrees(value: Value) -> Fraction:
    """The measure of an angle quantity (the evaluator gives every angle its degrees)."""
    if value.degrees is None:
        raise SynthError(f"{value.kind} {' '.join(value.points)} has no measure in degrees")
    return value.degrees


def _answer(value: Value, goal: _Goal) -> tuple[str, float]:
    if value.degrees is not None:
        exact = value.degrees - goal.offset
        return str(exact), float(exact)
    if value.ratio is None:
        raise SynthError(f"{value.kind} {' '.join(value.points)} has neither degrees nor a ratio")
    power = 2 if value.kind == "area" else 1
    product = multiply(value.ratio, power_of(Fraction(goal.length) ** power))
    return power_text(product), power_value(product)


def _evaluate(evaluator: Evaluator, kind: str, points: tuple[str, ...]) -> Value | None:
    if kind in ("angle", "var"):
        return evaluator.angle(*points)
    return evaluator.length(*points) if kind == "length" else evaluator.area(*points)


def _givens(goal: _Goal, scale: tuple[str, str]) -> tuple[str, ...]:
    out = [f"length {scale[0]} {scale[1]} = {goal.length}"]
    if goal.kind == "var":
        sign = "+" if goal.offset >= 0 else "-"
        out.append(f"angle {' '.join(goal.points)} = x {sign} {abs(goal.offset)}")
    return tuple(out)


def _final(value: Value, goal: _Goal, answer: str, refs: tuple[int, ...]) -> str:
    rule = {
        "angle": "angle chasing",
        "var": "angle chasing",
        "length": "ratio chasing",
        "area": "triangle area",
    }
    how = value.rule or rule[goal.kind]
    where = f"{how} from {', '.join(map(str, refs))}" if refs else how
    name = f"{goal.kind} {' '.join(goal.points)}"
    if goal.kind == "var":
        return f"angle {' '.join(goal.points)} = {_degrees(value)}  [{where}]; x = {answer}"
    return f"{name} = {answer}  [{where}]"


def check_calculation(
    text: str,
    givens: tuple[str, ...],
    goal: str,
    diagram: Diagram,
    config: SynthConfig,
    *,
    solved: tuple[Deduction, Evaluator] | None = None,
) -> tuple[str, float, tuple[ProofStep, ...], str] | None:
    """Solve a calculation problem from its statement on its diagram.

    Args:
        text: The problem line.
        givens: ``length p q = L`` first; for a ``var x`` goal, then ``angle a b c = x + k``.
        goal: ``angle a b c``, ``length a b``, ``area a b c`` or ``var x``.
        diagram: The emitted coordinates (the numeric check and the engine's diagram).
        config: Search bounds.
        solved: The engine's search on exactly this problem and diagram, and its evaluator, when the
            caller already ran it (the search is deterministic, so running it again would repeat it).

    Returns:
        The exact answer, its value, the proofs of the facts used and the final line; ``None`` when the
        engine does not determine the goal or the value disagrees with the diagram.
    """
    problem = parse_problem(text)
    _, p, q, _, length = givens[0].split()
    kind, *names = goal.split()
    offset = 0
    if kind == "var":
        tokens = givens[1].split()
        names, offset = tokens[1:4], int(tokens[7]) * (1 if tokens[6] == "+" else -1)
    target = _Goal(kind, tuple(names), offset, int(length))
    if solved is not None and solved[1].scale == (p, q):
        deduction, evaluator = solved
    else:
        found = run_engine(problem, diagram, config)
        if found is None:
            return None
        deduction, evaluator = found, Evaluator(found, (p, q))
    value = _evaluate(evaluator, kind, target.points)
    if value is None:
        return None
    roots = [evaluator.tracer.facts[i] for i in sorted(value.sources)]
    steps = tuple(trace_steps(deduction, roots, minimal=True))
    numbers = {relation_text(s.fact): s.number for s in steps}
    refs = tuple(numbers[relation_text(f)] for f in roots if relation_text(f) in numbers)
    answer, number = _answer(value, target)
    return answer, number, steps, _final(value, target, answer, refs)


def _choose(
    found: dict[str, list[Value]], config: SynthConfig, rng: random.Random
) -> tuple[str, Value] | None:
    weights = config.goals.get("calculation", {})
    kinds = [k for k in sorted(weights) if weights[k] > 0 and found.get("angle" if k == "var" else k)]
    if not kinds:
        return None
    kind = rng.choices(kinds, weights=[weights[k] for k in kinds], k=1)[0]
    pool = found["angle" if kind == "var" else kind]
    return kind, pool.pop(rng.randrange(len(pool)))


def make_calculation(figure: Figure, config: SynthConfig, rng: random.Random) -> CalculationProblem | None:
    """A calculation problem from a determined figure, or ``None`` when no goal survives the checks."""
    if figure.scale is None or figure.length is None:
        return None
    deduction = run_engine(figure.problem, figure.diagram, config)
    if deduction is None:
        return None
    evaluator = Evaluator(deduction, figure.scale)
    found = evaluator.candidates(figure.problem.points)
    for _ in range(config.goal_tries):
        chosen = _choose(found, config, rng)
        if chosen is None:
            return None
        kind, value = chosen
        roots = [evaluator.tracer.facts[i] for i in sorted(value.sources)]
        steps = trace_steps(deduction, roots)
        derived = derived_count(steps)
        if derived < 1 or derived + len(roots) - 1 < config.min_proof_steps:
            continue  # read straight off the givens: too easy
        points = {p for s in steps for p in s.fact.points} | set(value.points) | set(figure.scale)
        problem, diagram, mapping = prune(figure.problem, figure.diagram, points, None)
        names = tuple(mapping[p] for p in value.points)
        offset = 0
        if kind == "var":
            degrees = _degrees(value)
            offset = rng.choice([k for k in range(-30, 31, 5) if k and degrees - k > 0])
        target = _Goal(kind, names, offset, figure.length)
        givens = _givens(target, (mapping[figure.scale[0]], mapping[figure.scale[1]]))
        goal = "var x" if kind == "var" else f"{kind} {' '.join(names)}"
        uncut = problem.text() == figure.problem.text() and diagram.points == figure.diagram.points
        made = _emit(problem, givens, goal, diagram, config, kind, (deduction, evaluator) if uncut else None)
        if made is not None:
            return made
    return None


def _emit(
    problem: Problem,
    givens: tuple[str, ...],
    goal: str,
    diagram: Diagram,
    config: SynthConfig,
    kind: str,
    solved: tuple[Deduction, Evaluator] | None,
) -> CalculationProblem | None:
    text = problem.text()
    checked = check_calculation(text, givens, goal, diagram, config, solved=solved)
    if checked is None:
        return None
    answer, number, steps, final = checked
    return CalculationProblem(
        text=text,
        givens=givens,
        goal=goal,
        goal_type=kind,
        answer=answer,
        answer_value=number,
        diagram=diagram,
        steps=steps,
        final=final,
    )
