"""The operator registry of the PGPS solution-program language.

Every operator is one row of :data:`OPERATORS`: its name, the operand counts it
accepts, the role of each operand, a one-line geometric meaning (written for
prompts), the equation in readable form, and the equation as data: a residual
function that is zero exactly when the step holds. The residual is written once,
against a small :class:`MathLib` interface, so the same row drives the numeric
executor (floats), the exact executor (sympy) and the PAL translation (sympy
symbols).

Angles are in degrees. Residuals avoid dividing by an operand where an
equivalent product form exists (``a = b*sin(c)`` rather than ``a/b = sin(c)``),
which keeps them polynomial in most operand slots.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, Protocol

__all__ = (
    "FLOAT_MATH",
    "OPERATORS",
    "REFERENCE_PI",
    "VOCABULARY_CONSTANTS",
    "CanonicalRule",
    "MathLib",
    "OpSpec",
    "PowerForm",
    "TrigTarget",
    "arity_error",
    "program_grammar",
)

REFERENCE_PI = 3.141593
"""The value of pi the reference executor writes into every equation."""

VOCABULARY_CONSTANTS: tuple[str, ...] = (
    "C0.5",
    "C2",
    "C3",
    "C4",
    "C5",
    "C6",
    "C8",
    "C60",
    "C90",
    "C180",
    "C360",
)
"""The eleven constant tokens of the PGPS target vocabulary (other ``C<number>`` tokens are accepted too)."""

CanonicalRule = Literal[
    "none", "sort_all_but_last", "sort_first_two", "sort_middle_two", "swap_pairs", "swap_ends"
]
"""How :func:`geodsl.canonicalize` may reorder a step's operands (spec section 6)."""

TrigTarget = tuple[Literal["sin", "cos", "tan"], Any]
"""A closed-form inversion result: the angle operand satisfies ``fn(angle) = value``."""


@dataclass(frozen=True)
class PowerForm:
    """Where the operands of a power equation ``(a / b)^e = c / d`` sit in a step.

    The residual of such a step is ``a^e * d - b^e * c`` (``d`` is 1 when ``rhs_den`` is
    ``None``); the executors invert it for any one slot in closed form, working with
    logarithms of magnitudes so that ``a^e`` is never formed (``27^360`` overflows a float).
    """

    num: int
    den: int
    exponent: int
    rhs_num: int
    rhs_den: int | None = None


class MathLib(Protocol):
    """The few non-arithmetic functions a residual needs; values are floats or sympy expressions."""

    @property
    def pi(self) -> Any:
        """The value used for pi."""
        ...

    def sin_deg(self, x: Any) -> Any:
        """Sine of an angle in degrees."""
        ...

    def cos_deg(self, x: Any) -> Any:
        """Cosine of an angle in degrees."""
        ...

    def tan_deg(self, x: Any) -> Any:
        """Tangent of an angle in degrees."""
        ...

    def power(self, x: Any, e: Any) -> Any:
        """``x`` to the power ``e`` (real-valued)."""
        ...


class _FloatMath:
    """:class:`MathLib` over Python floats (math module), with pi as the reference uses it."""

    pi = REFERENCE_PI

    def sin_deg(self, x: Any) -> Any:
        return math.sin(x * REFERENCE_PI / 180.0)

    def cos_deg(self, x: Any) -> Any:
        return math.cos(x * REFERENCE_PI / 180.0)

    def tan_deg(self, x: Any) -> Any:
        return math.tan(x * REFERENCE_PI / 180.0)

    def power(self, x: Any, e: Any) -> Any:
        if x < 0 and not float(e).is_integer():
            raise ValueError("fractional power of a negative number")
        return float(x) ** e


FLOAT_MATH: MathLib = _FloatMath()
"""The float implementation used by the numeric executor."""

Residual = Callable[[Sequence[Any], MathLib], Any]
Inverse = Callable[[Sequence[Any], MathLib], TrigTarget]


@dataclass(frozen=True, kw_only=True)
class OpSpec:
    """One operator of the language.

    Attributes:
        name: the operator token.
        min_arity: the fewest operands allowed.
        max_arity: the most operands allowed (``None``: no limit).
        roles: the role of each operand; for variadic operators the roles of the first
            ``len(roles) - 1`` operands are ``roles[0]`` repeated and the last one is ``roles[-1]``.
        meaning: one line of geometric meaning, in plain words (used in prompts).
        equation: the equation in readable form, operands named a, b, c, ...
        residual: ``f(values, mathlib)``, zero exactly when the step holds (``None`` for Get).
        angle_slots: operand positions that are angles in degrees.
        trig_inverse: closed forms for an unknown angle slot, from the other operands' values.
        canonical: how the canonicaliser may reorder operands.
        minimums: smallest meaningful value of some slots (a polygon has at least 3 sides);
            roots below it are discarded when that slot is the unknown.
        power_forms: by operand count, the slots of a power equation ``(a / b)^e = c / d``
            (solved in closed form for whichever slot is unknown).
    """

    name: str
    min_arity: int
    max_arity: int | None
    roles: tuple[str, ...]
    meaning: str
    equation: str
    residual: Residual | None
    angle_slots: frozenset[int] = frozenset()
    trig_inverse: Mapping[int, Inverse] = field(default_factory=lambda: MappingProxyType({}))
    canonical: CanonicalRule = "none"
    minimums: Mapping[int, float] = field(default_factory=lambda: MappingProxyType({}))
    power_forms: Mapping[int, PowerForm] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def variadic(self) -> bool:
        """Whether the operator takes an open-ended number of operands."""
        return self.max_arity is None

    def accepts(self, n: int) -> bool:
        """Whether ``n`` operands are allowed."""
        return n >= self.min_arity and (self.max_arity is None or n <= self.max_arity)

    def admissible(self, slot: int, value: float) -> bool:
        """Whether ``value`` is a meaningful solution for operand ``slot``.

        A root a hair below the minimum counts as the minimum: a triangle found numerically
        (2.9999999999999996 sides), or with exact pi from an area written with pi = 3.141593.
        """
        minimum = self.minimums.get(slot, -math.inf)
        return value >= minimum - 1e-6 * max(1.0, abs(minimum))

    def arity_text(self) -> str:
        """The allowed operand counts, in words (``"3 or more"``, ``"2 or 3"``, ``"exactly 1"``)."""
        if self.max_arity is None:
            return f"{self.min_arity} or more"
        if self.max_arity == self.min_arity:
            return f"exactly {self.min_arity}"
        return " or ".join(str(k) for k in range(self.min_arity, self.max_arity + 1))

    def role_of(self, position: int, arity: int) -> str:
        """The role of operand ``position`` in a step with ``arity`` operands."""
        if self.variadic:
            return self.roles[-1] if position == arity - 1 else self.roles[0]
        return self.roles[min(position, len(self.roles) - 1)]


def arity_error(spec: OpSpec, n: int) -> str | None:
    """The message for a wrong operand count, or ``None`` when ``n`` is allowed."""
    if spec.accepts(n):
        return None
    return f"{spec.name} takes {spec.arity_text()} operands, got {n}"


# --- residuals -----------------------------------------------------------------------------------


def _sum(v: Sequence[Any], m: MathLib) -> Any:
    return sum(v[:-1]) - v[-1]


def _product(v: Sequence[Any], m: MathLib) -> Any:
    out: Any = v[0]
    for x in v[1:-1]:
        out = out * x
    return out - v[-1]


def _proportion(v: Sequence[Any], m: MathLib) -> Any:
    if len(v) == 4:
        return v[0] * v[3] - v[1] * v[2]
    # (a/b)^e = c/d written without division
    return m.power(v[0], v[4]) * v[3] - m.power(v[1], v[4]) * v[2]


def _ratio(v: Sequence[Any], m: MathLib) -> Any:
    if len(v) == 3:
        return v[0] - v[1] * v[2]
    return m.power(v[0], v[2]) - v[3] * m.power(v[1], v[2])


def _circle_r_circum(v: Sequence[Any], m: MathLib) -> Any:
    if len(v) == 2:
        return 2 * m.pi * v[0] - v[1]
    return 2 * m.pi * v[0] * v[1] / 360 - v[2]


def _circle_d_circum(v: Sequence[Any], m: MathLib) -> Any:
    if len(v) == 2:
        return m.pi * v[0] - v[1]
    return m.pi * v[0] * v[1] / 360 - v[2]


def _circle_r_area(v: Sequence[Any], m: MathLib) -> Any:
    if len(v) == 2:
        return m.pi * v[0] ** 2 - v[1]
    return m.pi * v[0] ** 2 * v[1] / 360 - v[2]


def _circle_d_area(v: Sequence[Any], m: MathLib) -> Any:
    if len(v) == 2:
        return m.pi * v[0] ** 2 / 4 - v[1]
    return m.pi * v[0] ** 2 * v[1] / 1440 - v[2]


_SIDES: Mapping[int, float] = MappingProxyType({0: 3.0})


def _ratio_inverse(num: Any, den: Any) -> Any:
    return num / den


_OPS: tuple[OpSpec, ...] = (
    OpSpec(
        name="Get",
        min_arity=1,
        max_arity=1,
        roles=("quantity asked for",),
        meaning="Report the value of a quantity as the answer (the last Get wins).",
        equation="answer = a",
        residual=None,
    ),
    OpSpec(
        name="Sum",
        min_arity=3,
        max_arity=None,
        roles=("summand", "total"),
        meaning="The first quantities add up to the last one.",
        equation="a + b + ... = last",
        residual=_sum,
        canonical="sort_all_but_last",
    ),
    OpSpec(
        name="Multiple",
        min_arity=3,
        max_arity=None,
        roles=("factor", "product"),
        meaning="The first quantities multiply to the last one.",
        equation="a * b * ... = last",
        residual=_product,
        canonical="sort_all_but_last",
    ),
    OpSpec(
        name="Equal",
        min_arity=2,
        max_arity=2,
        roles=("left side", "right side"),
        meaning="Two quantities are equal.",
        equation="a = b",
        residual=lambda v, m: v[0] - v[1],
        canonical="sort_first_two",
    ),
    OpSpec(
        name="Iso_Tri_Ang",
        min_arity=2,
        max_arity=2,
        roles=("apex angle (degrees)", "base angle (degrees)"),
        meaning="In an isosceles triangle the apex angle plus both equal base angles make 180 degrees.",
        equation="a + 2*b = 180",
        residual=lambda v, m: v[0] + 2 * v[1] - 180,
        angle_slots=frozenset({0, 1}),
    ),
    OpSpec(
        name="Gougu",
        min_arity=3,
        max_arity=3,
        roles=("leg", "leg", "hypotenuse"),
        meaning="Pythagorean theorem: the squares of the legs add up to the square of the hypotenuse.",
        equation="a^2 + b^2 = c^2",
        residual=lambda v, m: v[0] ** 2 + v[1] ** 2 - v[2] ** 2,
        canonical="sort_first_two",
    ),
    OpSpec(
        name="Gsin",
        min_arity=3,
        max_arity=3,
        roles=("opposite side", "hypotenuse", "angle (degrees)"),
        meaning="In a right triangle the sine of an angle is the opposite side over the hypotenuse.",
        equation="sin(c) = a / b",
        residual=lambda v, m: v[0] - v[1] * m.sin_deg(v[2]),
        angle_slots=frozenset({2}),
        trig_inverse=MappingProxyType({2: lambda v, m: ("sin", _ratio_inverse(v[0], v[1]))}),
    ),
    OpSpec(
        name="Gcos",
        min_arity=3,
        max_arity=3,
        roles=("adjacent side", "hypotenuse", "angle (degrees)"),
        meaning="In a right triangle the cosine of an angle is the adjacent side over the hypotenuse.",
        equation="cos(c) = a / b",
        residual=lambda v, m: v[0] - v[1] * m.cos_deg(v[2]),
        angle_slots=frozenset({2}),
        trig_inverse=MappingProxyType({2: lambda v, m: ("cos", _ratio_inverse(v[0], v[1]))}),
    ),
    OpSpec(
        name="Gtan",
        min_arity=3,
        max_arity=3,
        roles=("opposite side", "adjacent side", "angle (degrees)"),
        meaning="In a right triangle the tangent of an angle is the opposite side over the adjacent side.",
        equation="tan(c) = a / b",
        residual=lambda v, m: v[0] - v[1] * m.tan_deg(v[2]),
        angle_slots=frozenset({2}),
        trig_inverse=MappingProxyType({2: lambda v, m: ("tan", _ratio_inverse(v[0], v[1]))}),
    ),
    OpSpec(
        name="Cos_Law",
        min_arity=4,
        max_arity=4,
        roles=("side opposite the angle", "enclosing side", "enclosing side", "angle (degrees)"),
        meaning="Law of cosines: a side from the two sides enclosing the opposite angle.",
        equation="a^2 = b^2 + c^2 - 2*b*c*cos(d)",
        residual=lambda v, m: v[1] ** 2 + v[2] ** 2 - v[0] ** 2 - 2 * v[1] * v[2] * m.cos_deg(v[3]),
        angle_slots=frozenset({3}),
        trig_inverse=MappingProxyType(
            {
                3: lambda v, m: ("cos", _ratio_inverse(v[1] ** 2 + v[2] ** 2 - v[0] ** 2, 2 * v[1] * v[2])),
            }
        ),
        canonical="sort_middle_two",
    ),
    OpSpec(
        name="Sin_Law",
        min_arity=4,
        max_arity=4,
        roles=(
            "angle (degrees)",
            "side opposite the first angle",
            "angle (degrees)",
            "side opposite the second angle",
        ),
        meaning="Law of sines: each side over the sine of its opposite angle is the same.",
        equation="sin(a) / b = sin(c) / d",
        residual=lambda v, m: v[3] * m.sin_deg(v[0]) - v[1] * m.sin_deg(v[2]),
        angle_slots=frozenset({0, 2}),
        trig_inverse=MappingProxyType(
            {
                0: lambda v, m: ("sin", _ratio_inverse(v[1] * m.sin_deg(v[2]), v[3])),
                2: lambda v, m: ("sin", _ratio_inverse(v[3] * m.sin_deg(v[0]), v[1])),
            }
        ),
        canonical="swap_pairs",
    ),
    OpSpec(
        name="Median",
        min_arity=3,
        max_arity=3,
        roles=("first base", "midline", "second base"),
        meaning="A midline is the average of the two parallel sides (the middle operand is the mean).",
        equation="a + c = 2*b",
        residual=lambda v, m: v[0] - 2 * v[1] + v[2],
        canonical="swap_ends",
    ),
    OpSpec(
        name="Geo_Mean",
        min_arity=3,
        max_arity=3,
        roles=("segment", "segment", "mean"),
        meaning="Geometric mean: the product of two segments is the square of the third "
        "(altitude on the hypotenuse, tangent and secant).",
        equation="a * b = c^2",
        residual=lambda v, m: v[0] * v[1] - v[2] ** 2,
    ),
    OpSpec(
        name="Proportion",
        min_arity=4,
        max_arity=5,
        roles=("numerator", "denominator", "numerator", "denominator", "exponent"),
        meaning="Two ratios are equal; with a fifth operand e the first ratio is raised to the power e "
        "(areas of similar figures).",
        equation="a / b = c / d  or  (a / b)^e = c / d",
        residual=_proportion,
        canonical="swap_pairs",
        power_forms=MappingProxyType({5: PowerForm(num=0, den=1, exponent=4, rhs_num=2, rhs_den=3)}),
    ),
    OpSpec(
        name="Ratio",
        min_arity=3,
        max_arity=4,
        roles=("numerator", "denominator", "ratio or exponent", "ratio"),
        meaning="A ratio of two quantities equals a value; with four operands the ratio raised to the "
        "third operand equals the fourth.",
        equation="a / b = c  or  (a / b)^c = d",
        residual=_ratio,
        power_forms=MappingProxyType({4: PowerForm(num=0, den=1, exponent=2, rhs_num=3)}),
    ),
    OpSpec(
        name="Chord2_Ang",
        min_arity=3,
        max_arity=3,
        roles=("angle between chords (degrees)", "intercepted arc (degrees)", "intercepted arc (degrees)"),
        meaning="Two chords crossing inside a circle make an angle equal to half the sum of the arcs they cut.",
        equation="a = (b + c) / 2",
        residual=lambda v, m: 2 * v[0] - v[1] - v[2],
        angle_slots=frozenset({0, 1, 2}),
    ),
    OpSpec(
        name="TanSec_Ang",
        min_arity=3,
        max_arity=3,
        roles=("outside angle (degrees)", "near arc (degrees)", "far arc (degrees)"),
        meaning="Tangents or secants meeting outside a circle make an angle equal to half the difference "
        "of the arcs.",
        equation="a = (c - b) / 2",
        residual=lambda v, m: 2 * v[0] + v[1] - v[2],
        angle_slots=frozenset({0, 1, 2}),
    ),
    OpSpec(
        name="Tria_BH_Area",
        min_arity=3,
        max_arity=3,
        roles=("base", "height", "area"),
        meaning="Triangle area is half of base times height.",
        equation="a * b / 2 = c",
        residual=lambda v, m: v[0] * v[1] / 2 - v[2],
    ),
    OpSpec(
        name="Tria_SAS_Area",
        min_arity=4,
        max_arity=4,
        roles=("side", "included angle (degrees)", "side", "area"),
        meaning="Triangle area is half the product of two sides and the sine of the angle between them.",
        equation="a * c * sin(b) / 2 = d",
        residual=lambda v, m: v[0] * v[2] * m.sin_deg(v[1]) / 2 - v[3],
        angle_slots=frozenset({1}),
        trig_inverse=MappingProxyType({1: lambda v, m: ("sin", _ratio_inverse(2 * v[3], v[0] * v[2]))}),
        canonical="swap_ends",
    ),
    OpSpec(
        name="PRK_Perim",
        min_arity=3,
        max_arity=3,
        roles=("side", "adjacent side", "perimeter"),
        meaning="Perimeter of a parallelogram, rectangle or kite from two adjacent sides.",
        equation="2*(a + b) = c",
        residual=lambda v, m: 2 * v[0] + 2 * v[1] - v[2],
        canonical="sort_first_two",
    ),
    OpSpec(
        name="Para_Area",
        min_arity=3,
        max_arity=3,
        roles=("base", "height", "area"),
        meaning="Parallelogram area is base times height.",
        equation="a * b = c",
        residual=lambda v, m: v[0] * v[1] - v[2],
    ),
    OpSpec(
        name="Rect_Area",
        min_arity=3,
        max_arity=3,
        roles=("length", "width", "area"),
        meaning="Rectangle area is length times width.",
        equation="a * b = c",
        residual=lambda v, m: v[0] * v[1] - v[2],
        canonical="sort_first_two",
    ),
    OpSpec(
        name="Rhom_Area",
        min_arity=3,
        max_arity=3,
        roles=("half diagonal", "half diagonal", "area"),
        meaning="Rhombus area from its HALF diagonals: twice their product.",
        equation="2 * a * b = c",
        residual=lambda v, m: 2 * v[0] * v[1] - v[2],
        canonical="sort_first_two",
    ),
    OpSpec(
        name="Kite_Area",
        min_arity=3,
        max_arity=3,
        roles=("diagonal", "diagonal", "area"),
        meaning="Kite area from its FULL diagonals: half their product.",
        equation="a * b / 2 = c",
        residual=lambda v, m: v[0] * v[1] / 2 - v[2],
    ),
    OpSpec(
        name="Trap_Area",
        min_arity=4,
        max_arity=4,
        roles=("base", "base", "height", "area"),
        meaning="Trapezoid area is the mean of the parallel sides times the height.",
        equation="(a + b) * c / 2 = d",
        residual=lambda v, m: (v[0] + v[1]) * v[2] / 2 - v[3],
        canonical="sort_first_two",
    ),
    OpSpec(
        name="Circle_R_Circum",
        min_arity=2,
        max_arity=3,
        roles=("radius", "central angle (degrees) or circumference", "arc length"),
        meaning="Circumference from the radius; with three operands, the length of an arc of the given "
        "central angle.",
        equation="2*pi*a = b  or  2*pi*a*b/360 = c",
        residual=_circle_r_circum,
    ),
    OpSpec(
        name="Circle_D_Circum",
        min_arity=2,
        max_arity=3,
        roles=("diameter", "central angle (degrees) or circumference", "arc length"),
        meaning="Circumference from the diameter; with three operands, the length of an arc.",
        equation="pi*a = b  or  pi*a*b/360 = c",
        residual=_circle_d_circum,
    ),
    OpSpec(
        name="Circle_R_Area",
        min_arity=2,
        max_arity=3,
        roles=("radius", "central angle (degrees) or area", "sector area"),
        meaning="Disc area from the radius; with three operands, the area of a sector.",
        equation="pi*a^2 = b  or  pi*a^2*b/360 = c",
        residual=_circle_r_area,
    ),
    OpSpec(
        name="Circle_D_Area",
        min_arity=2,
        max_arity=3,
        roles=("diameter", "central angle (degrees) or area", "sector area"),
        meaning="Disc area from the diameter; with three operands, the area of a sector (C180: half disc).",
        equation="pi*(a/2)^2 = b  or  pi*(a/2)^2*b/360 = c",
        residual=_circle_d_area,
    ),
    OpSpec(
        name="ArcSeg_Area",
        min_arity=3,
        max_arity=3,
        roles=("radius", "central angle (degrees)", "segment area"),
        meaning="Area of a circular segment: the sector minus the triangle on its chord.",
        equation="pi*a^2*b/360 - a^2*sin(b)/2 = c",
        residual=lambda v, m: m.pi * v[0] ** 2 * v[1] / 360 - v[0] ** 2 * m.sin_deg(v[1]) / 2 - v[2],
        angle_slots=frozenset({1}),
    ),
    OpSpec(
        name="Ngon_Angsum",
        min_arity=2,
        max_arity=2,
        roles=("number of sides", "interior angle sum (degrees)"),
        meaning="The interior angles of an n-gon add up to (n - 2) * 180 degrees.",
        equation="(a - 2) * 180 = b",
        minimums=_SIDES,
        residual=lambda v, m: (v[0] - 2) * 180 - v[1],
    ),
    OpSpec(
        name="RNgon_B_Area",
        min_arity=3,
        max_arity=3,
        roles=("number of sides", "side", "area"),
        meaning="Area of a regular polygon from its side length.",
        equation="a * b^2 / (4 * tan(180/a)) = c",
        minimums=_SIDES,
        residual=lambda v, m: v[0] * v[1] ** 2 - 4 * v[2] * m.tan_deg(180 / v[0]),
    ),
    OpSpec(
        name="RNgon_L_Area",
        min_arity=3,
        max_arity=3,
        roles=("number of sides", "circumradius", "area"),
        meaning="Area of a regular polygon from the distance between its centre and a vertex.",
        equation="a * b^2 * sin(360/a) / 2 = c",
        minimums=_SIDES,
        residual=lambda v, m: v[0] * v[1] ** 2 * m.sin_deg(360 / v[0]) / 2 - v[2],
    ),
    OpSpec(
        name="RNgon_H_Area",
        min_arity=3,
        max_arity=3,
        roles=("number of sides", "apothem", "area"),
        meaning="Area of a regular polygon from its apothem (centre to the middle of a side).",
        equation="a * b^2 * tan(180/a) = c",
        minimums=_SIDES,
        residual=lambda v, m: v[0] * v[1] ** 2 * m.tan_deg(180 / v[0]) - v[2],
    ),
)

OPERATORS: Mapping[str, OpSpec] = MappingProxyType({spec.name: spec for spec in _OPS})
"""All 34 operators, by name (alphabetical iteration order is not guaranteed; sort if you need it)."""

if len(OPERATORS) != len(_OPS):  # pragma: no cover - guards the table itself
    raise RuntimeError("duplicate operator name in the geodsl registry")


def program_grammar(operands: Literal["indexed", "values"] = "indexed") -> dict[str, Any]:
    """The shape of a program as plain data, for decoders that keep generation grammatical.

    Packages that must not import geodsl (geotts's constrained decoding) take this instead of the
    registry: ``geotts.backends.transformers.ProgramGrammar.from_data(program_grammar())``.

    Args:
        operands: ``indexed`` for programs that name numbers as ``N<i>`` and constants as ``C<number>``
            (``Sum N0 N1 C180 Get N1``); ``values`` for instantiated programs (:func:`geodsl.instantiate`),
            which write both as their values (``Sum 105 y 180 Get y``).

    Returns:
        ``{"operators": {name: [min_arity, max_arity]}, "terminator": "Get", "operands": operands,
        "constants": [...]}``; ``max_arity`` is ``None`` for variadic operators, ``constants`` are
        :data:`VOCABULARY_CONSTANTS`, spelled as instantiation writes them when ``operands`` is
        ``values`` (``"2"``, ``"0.5"``, ...). JSON-ready (lists and dicts only).
    """
    from geodsl.ast import Operand  # geodsl.ast imports this module

    constants = list(VOCABULARY_CONSTANTS)
    if operands == "values":
        constants = [Operand.of(c).constant_text for c in constants]
    return {
        "operators": {name: [spec.min_arity, spec.max_arity] for name, spec in sorted(OPERATORS.items())},
        "terminator": "Get",
        "operands": operands,
        "constants": constants,
    }
