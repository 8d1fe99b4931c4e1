r"""Exact step labels for PGPS solution programs, judged on the problem's realised figure.

A generated PGPS problem carries its realised figure (:class:`~geosynth.synth._pgps_realised.RealisedFigure`),
so every length, angle, arc and area of it is known. :func:`figure_step_labels` labels each step of a
program for the problem (one operator application is one step, in program order, the final ``Get``
included) as correct or wrong, without a teacher model:

**A step is correct** when

(a) every operand is a value the problem gives (an ``N`` of its N list; in an instantiated program a
    value token equal to one of those values or to a vocabulary constant), a constant (``C2``,
    ``C180``...), or an unknown fixed by an earlier *correct* step; besides those, the step may name
    exactly one unknown that nothing has fixed yet (a ``V``, a letter, or a letter inside a given such as
    ``2x+10``): the quantity it solves for; and
(b) the relation the operator states holds on the figure: the step's equation (its residual in
    ``geodsl.OPERATORS``) is solved for that unknown by geodsl's executor (its root rule), and the solved
    value is *on the figure*. A letter of the question must take the value the figure binds to it; any
    other unknown must make the operand it sits in equal to a quantity of the figure of the kind the
    operator's slot calls for (:data:`SLOT_KINDS`: a ``Gougu`` step solves a side of a right triangle,
    so its unknown must be a length of the figure; the angle of a ``Gsin`` step must be an angle of it;
    the third operand of ``Tria_BH_Area`` an area). A step with no unknown left is a check: its equation
    must hold for the known values (geodsl's own consistency test). The ``Get`` step is correct when
    it reads a known value equal to the figure's answer.

**On the figure** means: within the problem's tolerance (relative 1e-3, or 2e-2 when the problem rounds
one given value, the tolerance the generator checks its answers with; absolute 1e-6 near zero) of one
value of the figure's catalogue of that kind (:class:`FigureCatalogue`), built once per figure from the
named points, the drawn lines and circles. On a problem that rounds a given, the tolerance of a step's
value also takes in how far the value moves when every decimal given it uses moves by half a unit of its
last digit (and every earlier value by its own such spread): a leg from ``Gougu`` with a hypotenuse of
12 and a rounded leg of 11.8 is uncertain by far more than 2%. The catalogue, kind by kind:

* ``length``: the distance between every two named points; radius, diameter and circumference of every
  circle; the length of every arc between two named points of a circle (minor and major); the perimeter of
  every polygon of the figure;
* ``angle``: the angle at every vertex triple ``a b c`` of named points (0 to 180 degrees); the measure
  of every arc (minor and major) and 360; the interior angle sum of every polygon size present;
* ``area``: every polygon of the figure, every circle, every sector (minor and major) and circular
  segment between two named points of a circle;
* ``trig``: sine, cosine and tangent of every vertex-triple angle;
* ``ratio``: those, and the ratio of every two lengths between named points (the ratio slot of
  ``Ratio`` only);
* ``count``: the number of vertices of every polygon of the figure.

Degenerate measures (a zero angle between two points on one ray) are not quantities: a value at or below
1e-6 is on no figure.

The figure's polygons are the convex polygons (3 to 8 vertices) whose vertices are named points, no
three consecutive ones collinear, and whose every side lies on a drawn line.

**After the first wrong step.** The GM-PRM paper (section 3.2, data construction) has its judge analyse
the steps up to the first incorrect one and correct that one only. Every step is labelled here on its
own terms, so a later step is wrong whenever it uses the result of a wrong step (rule (a)) and may be
correct when it does not; :attr:`StepLabels.first_wrong` and :meth:`StepLabels.until_first_wrong` give
the GM-PRM view (the steps up to and including the first wrong one).

Both program styles are read: N-index programs (the ``expression`` field, ``Sum N0 N1 V0 Get V0``) and
instantiated ones, as the multi-trace synthesis writes its program traces (``Sum 105 y 180 Get y``).
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
import re
from collections.abc import Iterable, Sequence
from typing import Any, Literal, cast

import sympy
from pydantic import BaseModel, ConfigDict

from geodsl import (
    InstantiatedProgram,
    Operand,
    Program,
    Step,
    execute,
    parse_instantiated,
    parse_program,
    parse_value,
)
from geodsl.errors import GeoDSLError
from geodsl.ops import VOCABULARY_CONSTANTS
from geosynth.synth._pgps_realised import FiguredProblem, RealisedFigure
from geosynth.synth.errors import StepLabelError

__all__ = (
    "CORRUPTION_KINDS",
    "SLOT_KINDS",
    "Corruption",
    "CorruptionKind",
    "FigureCatalogue",
    "Kind",
    "StepLabel",
    "StepLabels",
    "corrupt_program",
    "figure_step_labels",
)

Kind = Literal["length", "angle", "area", "trig", "ratio", "count"]
"""The kinds of figure quantities a program operand can stand for."""

_ANY: tuple[Kind, ...] = ("length", "angle", "area", "trig", "count")
_L: tuple[Kind, ...] = ("length",)
_A: tuple[Kind, ...] = ("angle",)
_S: tuple[Kind, ...] = ("area",)
_N: tuple[Kind, ...] = ("count",)
_R: tuple[Kind, ...] = ("ratio",)
_LS: tuple[Kind, ...] = ("length", "area")
_LSA: tuple[Kind, ...] = ("length", "area", "angle")

SLOT_KINDS: dict[str, dict[int, tuple[tuple[Kind, ...], ...]]] = {
    "Gougu": {3: (_L, _L, _L)},
    "Gsin": {3: (_L, _L, _A)},
    "Gcos": {3: (_L, _L, _A)},
    "Gtan": {3: (_L, _L, _A)},
    "Cos_Law": {4: (_L, _L, _L, _A)},
    "Sin_Law": {4: (_A, _L, _A, _L)},
    "Iso_Tri_Ang": {2: (_A, _A)},
    "Chord2_Ang": {3: (_A, _A, _A)},
    "TanSec_Ang": {3: (_A, _A, _A)},
    "Median": {3: (_L, _L, _L)},
    "Geo_Mean": {3: (_L, _L, _L)},
    "PRK_Perim": {3: (_L, _L, _L)},
    "Tria_BH_Area": {3: (_L, _L, _S)},
    "Para_Area": {3: (_L, _L, _S)},
    "Rect_Area": {3: (_L, _L, _S)},
    "Rhom_Area": {3: (_L, _L, _S)},
    "Kite_Area": {3: (_L, _L, _S)},
    "Trap_Area": {4: (_L, _L, _L, _S)},
    "Tria_SAS_Area": {4: (_L, _A, _L, _S)},
    "Circle_R_Circum": {2: (_L, _L), 3: (_L, _A, _L)},
    "Circle_D_Circum": {2: (_L, _L), 3: (_L, _A, _L)},
    "Circle_R_Area": {2: (_L, _S), 3: (_L, _A, _S)},
    "Circle_D_Area": {2: (_L, _S), 3: (_L, _A, _S)},
    "ArcSeg_Area": {3: (_L, _A, _S)},
    "Ngon_Angsum": {2: (_N, _A)},
    "RNgon_B_Area": {3: (_N, _L, _S)},
    "RNgon_L_Area": {3: (_N, _L, _S)},
    "RNgon_H_Area": {3: (_N, _L, _S)},
    "Proportion": {4: (_LS, _LS, _LS, _LS), 5: (_LS, _LS, _LS, _LS, _N)},
    "Ratio": {3: (_LSA, _LSA, _R), 4: (_LS, _LS, _N, _R)},
}
"""The kind of figure quantity each operand slot of an operator stands for, by operand count, from the
operator's geometric meaning (``geodsl.OPERATORS``). ``Sum``, ``Multiple`` and ``Equal`` relate
quantities of any one kind, so their slots accept every kind but ``ratio``."""

_MAX_SIDES = 8
_INDEXED = re.compile(r"\bN\d+\b")
_ABS = 1e-6


def _slot_kinds(op: str, arity: int, slot: int) -> tuple[Kind, ...]:
    table = SLOT_KINDS.get(op)
    if table is None or arity not in table:
        return _ANY
    return table[arity][slot]


def _dist(p: tuple[float, float], q: tuple[float, float]) -> float:
    return math.hypot(p[0] - q[0], p[1] - q[1])


def _degrees(a: tuple[float, float], b: tuple[float, float], c: tuple[float, float]) -> float:
    u, v = (a[0] - b[0], a[1] - b[1]), (c[0] - b[0], c[1] - b[1])
    return math.degrees(math.atan2(abs(u[0] * v[1] - u[1] * v[0]), u[0] * v[0] + u[1] * v[1]))


class FigureCatalogue:
    """Every quantity of a realised figure, by kind, for tolerance look-ups (see the module docstring)."""

    def __init__(self, figure: RealisedFigure) -> None:
        """Measure the figure once."""
        xy = figure.coordinates()
        names = sorted(xy)
        span = max(
            1e-9,
            *(abs(c) for p in xy.values() for c in p),
        )
        self._tiny = 1e-9 * span
        found: dict[Kind, list[float]] = {k: [] for k in (*_ANY, "ratio")}
        segs = [_dist(xy[p], xy[q]) for p, q in itertools.combinations(names, 2)]
        segs = [s for s in segs if s > self._tiny]
        found["length"].extend(segs)
        found["ratio"].extend(a / b for a in segs for b in segs)
        for b in names:
            for a, c in itertools.combinations([n for n in names if n != b], 2):
                if _dist(xy[a], xy[b]) <= self._tiny or _dist(xy[c], xy[b]) <= self._tiny:
                    continue
                angle = _degrees(xy[a], xy[b], xy[c])
                found["angle"].append(angle)
                rad = math.radians(angle)
                found["trig"].extend((math.sin(rad), math.cos(rad)))
                if abs(angle - 90.0) > 1e-9:
                    found["trig"].append(math.tan(rad))
        found["angle"].append(360.0)
        for circle in figure.circles:
            self._circle(circle.x, circle.y, circle.r, [xy[p] for p in circle.points if p in xy], found)
        for poly in self._polygons(figure, xy, names):
            pts = [xy[p] for p in poly]
            found["area"].append(abs(_shoelace(pts)))
            found["length"].append(sum(_dist(p, q) for p, q in itertools.pairwise([*pts, pts[0]])))
            found["count"].append(float(len(poly)))
            found["angle"].append(180.0 * (len(poly) - 2))
        found["ratio"].extend(found["trig"])
        self.values: dict[Kind, tuple[float, ...]] = {k: tuple(sorted(v)) for k, v in found.items()}
        """The sorted values of each kind."""
        self.variables = dict(figure.variables)
        self.goal = figure.goal
        self.tolerance = 1e-3 if figure.exact else 2e-2
        """The relative tolerance of a match."""

    @staticmethod
    def _circle(
        x: float, y: float, r: float, on: list[tuple[float, float]], found: dict[Kind, list[float]]
    ) -> None:
        found["length"].extend((r, 2 * r, 2 * math.pi * r))
        found["area"].append(math.pi * r * r)
        for p, q in itertools.combinations(on, 2):
            theta = _degrees(p, (x, y), q)
            for t in (theta, 360.0 - theta):
                found["angle"].append(t)
                found["length"].append(2 * math.pi * r * t / 360)
                found["area"].append(math.pi * r * r * t / 360)
                found["area"].append(math.pi * r * r * t / 360 - r * r * math.sin(math.radians(t)) / 2)

    def _polygons(
        self, figure: RealisedFigure, xy: dict[str, tuple[float, float]], names: list[str]
    ) -> Iterable[tuple[str, ...]]:
        joined: set[frozenset[str]] = set()
        for line in figure.lines:
            joined.update(frozenset(pair) for pair in itertools.combinations(line, 2))
        seen: set[tuple[str, ...]] = set()
        for size in range(3, min(_MAX_SIDES, len(names)) + 1):
            for combo in itertools.combinations(names, size):
                cx = sum(xy[p][0] for p in combo) / size
                cy = sum(xy[p][1] for p in combo) / size
                order = sorted(combo, key=lambda p: math.atan2(xy[p][1] - cy, xy[p][0] - cx))
                key = tuple(order)
                if key in seen or not self._convex(order, xy, joined):
                    continue
                seen.add(key)
                yield key

    def _convex(
        self, order: list[str], xy: dict[str, tuple[float, float]], joined: set[frozenset[str]]
    ) -> bool:
        n = len(order)
        for i in range(n):
            a, b, c = xy[order[i - 1]], xy[order[i]], xy[order[(i + 1) % n]]
            if frozenset((order[i], order[(i + 1) % n])) not in joined:
                return False
            cross = (b[0] - a[0]) * (c[1] - b[1]) - (b[1] - a[1]) * (c[0] - b[0])
            if cross <= self._tiny * max(1.0, _dist(a, b) + _dist(b, c)):
                return False
        return True

    def close(self, value: float, target: float, slack: float = 0.0) -> bool:
        """Whether two values agree within the figure's tolerance (widened by ``slack``)."""
        return abs(value - target) <= max(_ABS, self.tolerance * max(abs(value), abs(target))) + slack

    def has(self, value: float, kinds: Sequence[Kind], slack: float = 0.0) -> bool:
        """Whether a quantity of one of ``kinds`` has ``value`` on the figure (within the tolerance)."""
        if not math.isfinite(value) or value <= _ABS:
            return False  # every quantity of a figure is positive: a zero or negative value is none
        reach = max(_ABS, self.tolerance * abs(value)) * 1.5 + slack
        for kind in kinds:
            values = self.values[kind]
            at = bisect.bisect_left(values, value - reach)
            while at < len(values) and values[at] <= value + reach:
                if self.close(value, values[at], slack):
                    return True
                at += 1
        return False


def _shoelace(pts: list[tuple[float, float]]) -> float:
    total = 0.0
    for (x0, y0), (x1, y1) in itertools.pairwise([*pts, pts[0]]):
        total += x0 * y1 - x1 * y0
    return total / 2


# --- labels ----------------------------------------------------------------------------------------

_CONFIG = ConfigDict(frozen=True, extra="forbid", strict=True, use_attribute_docstrings=True)


class StepLabel(BaseModel):
    """The judgement of one step."""

    model_config = _CONFIG

    index: int
    """The step's position in the program (0-based)."""
    step: str
    """The step as the program writes it (``Gougu N0 V0 N1``, ``Sum 105 y 180``)."""
    correct: bool
    """Whether the step is correct on the figure."""
    reason: str
    """Why, in a few words (``V0 = 4 is a length of the figure``, ``uses V0 of wrong step 0``)."""
    solved: dict[str, float] = {}
    """The unknowns the step fixed, with their values."""


class StepLabels(BaseModel):
    """The labels of every step of a program on one problem's figure."""

    model_config = _CONFIG

    record: str
    """The problem's id."""
    program: str
    """The program as given."""
    style: Literal["indexed", "values"]
    """``indexed``: N-index tokens; ``values``: instantiated (values in place of N tokens)."""
    steps: tuple[StepLabel, ...]
    """One label per step, in program order."""

    @property
    def labels(self) -> tuple[bool, ...]:
        """Correct or not, step by step."""
        return tuple(s.correct for s in self.steps)

    @property
    def first_wrong(self) -> int | None:
        """The index of the first wrong step (``None``: every step is correct)."""
        return next((s.index for s in self.steps if not s.correct), None)

    def until_first_wrong(self) -> tuple[StepLabel, ...]:
        """The labels up to and including the first wrong step (all of them when none is wrong)."""
        first = self.first_wrong
        return self.steps if first is None else self.steps[: first + 1]

    def at(self, index: int) -> StepLabel:
        """The label of step ``index``.

        Raises:
            StepLabelError: The program has no such step; the message names the record.
        """
        if not 0 <= index < len(self.steps):
            raise StepLabelError(
                f"record {self.record}: step index {index} is out of range (the program has "
                f"{len(self.steps)} steps)"
            )
        return self.steps[index]


def _decimal(value: float) -> str:
    text = f"{value:.12f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


_CONSTANT_VALUES = tuple(float(Operand.of(c).constant_text) for c in VOCABULARY_CONSTANTS)


def _as_float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _given_value(token: str, numbers: Sequence[str]) -> bool:
    """Whether a value token of an instantiated program is a value the problem gives or a constant."""
    if token.lower() in numbers:
        return True
    number = _as_float(token)
    if number is None:
        return False
    plain = [v for v in (_as_float(n) for n in numbers) if v is not None]
    return any(math.isclose(number, v, rel_tol=1e-9, abs_tol=1e-12) for v in (*plain, *_CONSTANT_VALUES))


def _letters(value: str) -> tuple[sympy.Expr | None, frozenset[str]]:
    try:
        expr = parse_value(value)
    except GeoDSLError:
        return None, frozenset()
    symbols = cast("set[sympy.Symbol]", expr.free_symbols)
    return expr, frozenset(str(s) for s in symbols)


class _Labeller:
    def __init__(self, record_id: str, figure: RealisedFigure, numbers: Sequence[str]) -> None:
        self.record_id = record_id
        self.catalogue = FigureCatalogue(figure)
        self.numbers = tuple(numbers)
        self.known: dict[str, float] = {}
        self.spreads: dict[str, float] = {}
        self.tainted: dict[str, int] = {}
        self.parsed = [_letters(n) for n in self.numbers]

    def names(self, operand: Operand) -> frozenset[str]:
        if operand.is_unknown:
            return frozenset((operand.token,))
        if operand.kind == "N" and operand.index < len(self.numbers):
            return self.parsed[operand.index][1]
        return frozenset()

    def operand_value(self, operand: Operand, env: dict[str, float]) -> float | None:
        if operand.is_unknown:
            return env.get(operand.token)
        if operand.kind == "C":
            return float(operand.constant_text)
        expr = self.parsed[operand.index][0]
        if expr is None:
            return None
        names = self.parsed[operand.index][1]
        try:
            value = complex(expr.subs({sympy.Symbol(n): env[n] for n in names}).evalf())
        except (KeyError, TypeError, ValueError):
            return None
        return value.real if abs(value.imag) <= 1e-9 else None

    def invalid(self, step: Step, given: Sequence[bool]) -> str | None:
        for operand, ok in zip(step.operands, given, strict=True):
            if operand.kind == "N" and operand.index >= len(self.numbers):
                return f"operand {operand.token}: the problem has no {operand.token}"
            if not ok:
                return f"operand {self.numbers[operand.index]} is not a value the problem gives"
            for name in self.names(operand):
                if name in self.tainted:
                    return f"uses {name} of wrong step {self.tainted[name]}"
        return None

    def solve(
        self,
        step: Step,
        open_: list[str],
        numbers: list[str] | None = None,
        known: dict[str, float] | None = None,
    ) -> tuple[dict[str, float] | None, str]:
        """Run the step alone, with the known unknowns it uses bound first; its fixed unknowns."""
        used = set().union(*(self.names(o) for o in step.operands))
        numbers = list(self.numbers if numbers is None else numbers)
        known = self.known if known is None else known
        pre: list[Step] = []
        for name in sorted(used & known.keys()):
            numbers.append(_decimal(known[name]))
            pre.append(
                Step(op="Equal", operands=(Operand.of(name), Operand(kind="N", token=f"N{len(numbers) - 1}")))
            )
        if open_:
            read = Operand.of(open_[0])
        else:
            numbers.append("0")
            read = Operand(kind="N", token=f"N{len(numbers) - 1}")
        program = Program(steps=(*pre, step, Step(op="Get", operands=(read,))))
        try:
            run = execute(program, numbers)
        except GeoDSLError as exc:
            return None, str(exc).splitlines()[0].split(": ", 1)[-1]
        return {s.name: s.value for s in run.steps[len(pre)].solved}, ""

    def spread(self, step: Step, open_: list[str], value: float) -> float:
        """How far the solved value may move when the givens are rounded (0 on an exactly written problem).

        Each plain-number given the step uses moves by half a unit of its last written digit (0.05 for a
        whole number), each known unknown by its own spread; the moves of the value add up.
        """
        if self.catalogue.tolerance <= 1e-3 or not open_:
            return 0.0
        total = 0.0
        indices = sorted({o.index for o in step.operands if o.kind == "N"})
        for k in indices:
            number = _as_float(self.numbers[k])
            if number is None:
                continue
            digits = self.numbers[k].partition(".")[2]
            half = 0.5 * 10.0 ** -len(digits) if digits else 0.05
            total += self._moved(step, open_, value, numbers={k: number - half}, other={k: number + half})
        used = set().union(*(self.names(o) for o in step.operands))
        for name in sorted(used & self.known.keys()):
            delta = self.spreads.get(name, 0.0)
            if delta > 0:
                base = self.known[name]
                total += self._moved(
                    step, open_, value, known={name: base - delta}, other_known={name: base + delta}
                )
        return total

    def _moved(
        self,
        step: Step,
        open_: list[str],
        value: float,
        numbers: dict[int, float] | None = None,
        other: dict[int, float] | None = None,
        known: dict[str, float] | None = None,
        other_known: dict[str, float] | None = None,
    ) -> float:
        worst = 0.0
        for nums, kn in ((numbers, known), (other, other_known)):
            changed = list(self.numbers)
            for k, v in (nums or {}).items():
                changed[k] = _decimal(v)
            solved, _ = self.solve(step, open_, changed, {**self.known, **(kn or {})})
            if solved is not None and open_[0] in solved:
                worst = max(worst, abs(solved[open_[0]] - value))
        return worst

    def label(self, index: int, step: Step, text: str, given: Sequence[bool]) -> StepLabel:
        def verdict(correct: bool, reason: str, solved: dict[str, float] | None = None) -> StepLabel:
            return StepLabel(index=index, step=text, correct=correct, reason=reason, solved=solved or {})

        bad = self.invalid(step, given)
        if bad is not None:
            return self.wrong(step, verdict(False, bad))
        if step.op == "Get":
            value = self.operand_value(step.operands[0], self.known)
            if value is None:
                return verdict(False, f"reads {step.operands[0].token}, which no step fixed")
            slack = self.spreads.get(step.operands[0].token, 0.0)
            if not self.catalogue.close(value, self.catalogue.goal, slack):
                return verdict(False, f"reads {value:.6g}; the figure's answer is {self.catalogue.goal:.6g}")
            return verdict(True, f"reads the figure's answer {value:.6g}")
        used = set().union(*(self.names(o) for o in step.operands))
        open_ = sorted(used - self.known.keys())
        if len(open_) > 1:
            return self.wrong(step, verdict(False, f"leaves {len(open_)} unknowns open ({', '.join(open_)})"))
        solved, error = self.solve(step, open_)
        if solved is None:
            return self.wrong(step, verdict(False, f"its equation fails: {error}"))
        if not open_:
            return verdict(True, "its equation holds for the known values")
        name = open_[0]
        if name not in solved:
            return self.wrong(step, verdict(False, f"determines no value of {name}"))
        value = solved[name]
        slack = self.spread(step, open_, value)
        reason = self.on_figure(step, name, value, slack)
        if reason is not None:
            return self.wrong(step, verdict(False, reason, solved))
        self.known[name] = value
        self.spreads[name] = slack
        return verdict(True, f"{name} = {value:.6g} is on the figure", solved)

    def on_figure(self, step: Step, name: str, value: float, slack: float) -> str | None:
        """``None`` when the solved value is on the figure (within ``slack`` more), else why not."""
        if name in self.catalogue.variables:
            want = self.catalogue.variables[name]
            if self.catalogue.close(value, want, slack):
                return None
            return f"{name} = {value:.6g}; the figure has {name} = {want:.6g}"
        env = {**self.known, name: value}
        arity = len(step.operands)
        for slot, operand in enumerate(step.operands):
            if name not in self.names(operand):
                continue
            kinds = _slot_kinds(step.op, arity, slot)
            got = self.operand_value(operand, env)
            moved = self.operand_value(operand, {**env, name: value + slack}) if slack else got
            room = abs(moved - got) if got is not None and moved is not None else 0.0
            if got is None or not self.catalogue.has(got, kinds, room):
                shown = "nothing real" if got is None else f"{got:.6g}"
                return f"{operand.token} = {shown} is no {' or '.join(kinds)} of the figure"
        return None

    def wrong(self, step: Step, label: StepLabel) -> StepLabel:
        for operand in step.operands:
            for name in self.names(operand):
                if name not in self.known:
                    self.tainted.setdefault(name, label.index)
        return label


def _parse(
    record_id: str, program: str | Program | InstantiatedProgram
) -> tuple[InstantiatedProgram | Program, Literal["indexed", "values"]]:
    if not isinstance(program, str):
        return program, "values" if isinstance(program, InstantiatedProgram) else "indexed"
    try:
        return parse_program(program), "indexed"
    except GeoDSLError as indexed:
        try:
            return parse_instantiated(program), "values"
        except GeoDSLError as values:
            shown = indexed if _INDEXED.search(program) else values  # the style the text is written in
            first = str(shown).splitlines()[0]
            raise StepLabelError(f"record {record_id}: the program does not parse: {first}") from None


def figure_step_labels(problem: FiguredProblem, program: str | Program | InstantiatedProgram) -> StepLabels:
    """Label each step of ``program`` correct or wrong on the problem's realised figure.

    The rule is the module's (:mod:`geosynth.synth._step_labels`): a step is correct when its operands
    are given values, constants or results of earlier correct steps, and the value it solves for is a
    quantity of the figure of the kind its operator's slot calls for.

    Args:
        problem: The PGPS record and its realised figure.
        program: An N-index program (``Gougu N0 N1 V0 Get V0``) or an instantiated one
            (``Gougu 3 4 y Get y``), as text or parsed.

    Raises:
        StepLabelError: The record has no figure, or the program does not parse (an unknown operator,
            a malformed operand, a wrong operand count); the message names the record.
    """
    record = problem.record
    if problem.figure is None:
        raise StepLabelError(f"record {record.id}: no realised figure to judge the steps on")
    parsed, style = _parse(record.id, program)
    if isinstance(parsed, InstantiatedProgram):
        steps = parsed.program.steps
        labeller = _Labeller(record.id, problem.figure, parsed.numbers)
        values = parsed.numbers
        given = [
            [o.kind != "N" or _given_value(values[o.index], record.numbers) for o in s.operands]
            for s in steps
        ]
        texts = _instantiated_texts(parsed)
    else:
        steps = parsed.steps
        labeller = _Labeller(record.id, problem.figure, record.numbers)
        given = [[True] * len(s.operands) for s in steps]
        texts = [" ".join([s.op, *(o.token for o in s.operands)]) for s in steps]
    labels = tuple(labeller.label(i, s, texts[i], given[i]) for i, s in enumerate(steps))
    text = program if isinstance(program, str) else " ".join(texts)
    return StepLabels(record=record.id, program=text, style=style, steps=labels)


def _instantiated_texts(program: InstantiatedProgram) -> list[str]:
    out: list[str] = []
    for step in program.program.steps:
        tokens = [step.op]
        for o in step.operands:
            if o.kind == "N":
                tokens.append(program.numbers[o.index])
            elif o.kind == "C":
                tokens.append(o.constant_text)
            else:
                tokens.append(o.token)
        out.append(" ".join(tokens))
    return out


# --- corrupted programs (what the labels must catch) -----------------------------------------------

CorruptionKind = Literal["operand", "operator", "constant"]
"""``operand``: an N operand swapped for another value of the problem; ``operator``: an operator replaced
by another that takes the same operand count and states a different equation; ``constant``: a constant
operand replaced by another vocabulary constant."""

CORRUPTION_KINDS: tuple[CorruptionKind, ...] = ("operand", "operator", "constant")


class Corruption(BaseModel):
    """A program with one step changed."""

    model_config = _CONFIG

    kind: CorruptionKind
    """What was changed."""
    program: str
    """The changed program (N-index tokens)."""
    step: int
    """The index of the changed step."""


def _same_equation(first: str, second: str, arity: int) -> bool:
    """Whether two operators state the same equation for ``arity`` operands (equal residuals on samples)."""
    from geodsl.ops import FLOAT_MATH, OPERATORS

    one, two = OPERATORS[first].residual, OPERATORS[second].residual
    if one is None or two is None:
        return one is two
    samples = ([3.0 + 1.7 * k + 0.3 * (k % 2) for k in range(arity)], [5.0, 12.0, 13.0, 40.0, 2.0][:arity])
    try:
        return all(
            math.isclose(float(one(v, FLOAT_MATH)), float(two(v, FLOAT_MATH)), rel_tol=1e-9, abs_tol=1e-9)
            for v in samples
        )
    except (ValueError, ZeroDivisionError, OverflowError):
        return False


def corrupt_program(
    program: str, numbers: Sequence[str], kind: CorruptionKind, rng: random.Random
) -> Corruption | None:
    """The program with one step changed as ``kind`` says, or ``None`` when it offers no such change.

    The step and the replacement are drawn with ``rng``; changes that leave the step's equation as it was
    (an N swapped for an equal value, ``Rect_Area`` for ``Para_Area``) are never made.

    Raises:
        DSLSyntaxError: The program does not parse.
    """
    from geodsl.ops import OPERATORS

    parsed = parse_program(program)
    steps = list(parsed.steps)
    options: list[tuple[int, Step]] = []
    for index, step in enumerate(steps):
        if step.op == "Get":
            continue
        options.extend((index, changed) for changed in _changes(step, numbers, kind, OPERATORS))
    if not options:
        return None
    index, changed = rng.choice(options)
    steps[index] = changed
    text = " ".join(" ".join([s.op, *(o.token for o in s.operands)]) for s in steps)
    return Corruption(kind=kind, program=text, step=index)


def _changes(step: Step, numbers: Sequence[str], kind: CorruptionKind, operators: Any) -> list[Step]:
    out: list[Step] = []
    ops = step.operands
    if kind == "operator":
        for name, spec in sorted(operators.items()):
            if name in ("Get", step.op) or not spec.accepts(len(ops)):
                continue
            if not _same_equation(step.op, name, len(ops)):
                out.append(Step(op=name, operands=ops))
        return out
    for slot, operand in enumerate(ops):
        if kind == "operand" and operand.kind == "N" and operand.index < len(numbers):
            mine = numbers[operand.index]
            for other, value in enumerate(numbers):
                if value != mine and _as_float(value) != _as_float(mine):
                    new = Operand(kind="N", token=f"N{other}")
                    out.append(Step(op=step.op, operands=(*ops[:slot], new, *ops[slot + 1 :])))
        if kind == "constant" and operand.kind == "C":
            for token in VOCABULARY_CONSTANTS:
                if float(token[1:]) != float(operand.constant_text):
                    new = Operand.of(token)
                    out.append(Step(op=step.op, operands=(*ops[:slot], new, *ops[slot + 1 :])))
    return out
