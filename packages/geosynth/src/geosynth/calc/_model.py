"""The calculation-problem model: expression trees, relations, a goal, and the solution trace.

A :class:`CalcProblem` is a set of *conditions* (equations ``expr = 0`` and relations over named points),
*diagram* relations read off the figure (sidedness, betweenness, non-collinearity), and a *goal*: an
expression to evaluate (a length, an angle, an area, a variable, or any arithmetic of those) or, rarely, a
relation to confirm. Angle quantities inside expressions are in radians (as in the formal Geometry3K
data); the solver reports an angle goal in degrees.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from geosynth.engine import (
    Angle,
    Area,
    Between,
    Collinear,
    CongruentTriangles,
    Kite,
    Length,
    Midpoint,
    NotCollinear,
    OppositeSide,
    Parallel,
    Parallelogram,
    Perpendicular,
    Rectangle,
    Rhombus,
    SameSide,
    SimilarTriangles,
    Square,
    Trapezoid,
)

_FROZEN = ConfigDict(frozen=True, extra="forbid", strict=True)

Operator = Literal["+", "-", "*", "/", "^", "sqrt", "sin", "cos", "tan"]
"""Arithmetic operators and functions of an expression node."""

ARITY: dict[str, tuple[int, int]] = {
    "+": (1, 64),
    "-": (1, 2),
    "*": (1, 64),
    "/": (2, 2),
    "^": (2, 2),
    "sqrt": (1, 1),
    "sin": (1, 1),
    "cos": (1, 1),
    "tan": (1, 1),
}
"""Operator to (least, most) number of arguments."""


class Num(BaseModel):
    """A numeric constant written as a small exact expression (``"13"``, ``"50/180*pi"``, ``"16.5"``)."""

    model_config = _FROZEN
    kind: Literal["num"] = "num"
    text: str = Field(min_length=1)
    """The constant as written (digits, ``.``, ``/``, ``*``, ``+``, ``-``, parentheses and ``pi``)."""


class Var(BaseModel):
    """A free variable named in the problem (``x``, ``radius_A``...)."""

    model_config = _FROZEN
    kind: Literal["var"] = "var"
    name: str = Field(min_length=1)
    """The variable's name."""


class Const(BaseModel):
    """A named mathematical constant."""

    model_config = _FROZEN
    kind: Literal["const"] = "const"
    name: Literal["pi"]
    """The constant's name (only ``pi`` occurs)."""


class Op(BaseModel):
    """An operator applied to sub-expressions (``-`` with one argument is negation)."""

    model_config = _FROZEN
    kind: Literal["op"] = "op"
    op: Operator
    """The operator."""
    args: tuple[Expr, ...]
    """The operands, in order."""

    @model_validator(mode="after")
    def _check_arity(self) -> Op:
        least, most = ARITY[self.op]
        if not least <= len(self.args) <= most:
            raise ValueError(f"operator {self.op!r} takes {least}..{most} arguments, got {len(self.args)}")
        return self


Expr = Annotated[Num | Var | Const | Length | Angle | Area | Op, Field(discriminator="kind")]
"""An expression tree node, tagged by ``kind``."""


class Equation(BaseModel):
    """The condition ``expr = 0``."""

    model_config = _FROZEN
    kind: Literal["equation"] = "equation"
    expr: Expr
    """The left-hand side (the right-hand side is zero)."""


class Polygon(BaseModel):
    """A polygon with vertices in boundary order (Geometry3K ``Quadrilateral`` / ``Pentagon``)."""

    model_config = _FROZEN
    kind: Literal["polygon"] = "polygon"
    points: tuple[str, ...] = Field(min_length=3)
    """The vertices, in boundary order, as given."""


class SimilarPolygons(BaseModel):
    """Two polygons with corresponding vertices in the same positions (``Similar4P`` / ``Similar5P``)."""

    model_config = _FROZEN
    kind: Literal["similar_polygons"] = "similar_polygons"
    first: tuple[str, ...] = Field(min_length=3)
    """The first polygon's vertices in boundary order."""
    second: tuple[str, ...] = Field(min_length=3)
    """The second polygon's vertices, ``second[i]`` corresponding to ``first[i]``."""

    @model_validator(mode="after")
    def _check(self) -> SimilarPolygons:
        if len(self.first) != len(self.second):
            raise ValueError(f"similar polygons of {len(self.first)} and {len(self.second)} vertices")
        return self


class Incenter(BaseModel):
    """``centre`` is the incentre of triangle ``triangle`` (the meeting point of its angle bisectors)."""

    model_config = _FROZEN
    kind: Literal["incenter"] = "incenter"
    centre: str
    """The incentre."""
    triangle: tuple[str, str, str]
    """The triangle's vertices."""


class Centroid(BaseModel):
    """``centre`` is the centroid of ``triangle``; ``feet`` are further points on its medians."""

    model_config = _FROZEN
    kind: Literal["centroid"] = "centroid"
    centre: str
    """The centroid."""
    triangle: tuple[str, str, str]
    """The triangle's vertices."""
    feet: tuple[str, ...]
    """Points drawn on the medians (normally the midpoints of the sides), in the source's order."""


_RelationTypes = (
    Collinear
    | Between
    | Perpendicular
    | Parallel
    | Midpoint
    | Parallelogram
    | Rectangle
    | Rhombus
    | Square
    | Trapezoid
    | Kite
    | SimilarTriangles
    | CongruentTriangles
    | Polygon
    | SimilarPolygons
    | Incenter
    | Centroid
)

Relation = Annotated[_RelationTypes, Field(discriminator="kind")]
"""A geometric condition: an engine relation where one exists, else one of the models above."""

Condition = Annotated[Equation | _RelationTypes, Field(discriminator="kind")]
"""An equation or a relation."""

DiagramRelation = Annotated[SameSide | OppositeSide | NotCollinear | Between, Field(discriminator="kind")]
"""A relation read off the figure."""

Goal = Annotated[
    Num | Var | Const | Length | Angle | Area | Op | Parallel | Perpendicular, Field(discriminator="kind")
]
"""What to compute (an expression) or, rarely, a relation to confirm."""


class CalcProblem(BaseModel):
    """A calculation problem over named points, with no coordinates."""

    model_config = _FROZEN
    id: str = Field(min_length=1)
    """The record id (``"2401"`` for Geometry3K)."""
    text: str = ""
    """The natural-language question, if any."""
    conditions: tuple[Condition, ...]
    """Equations and relations that hold."""
    diagram: tuple[DiagramRelation, ...] = ()
    """Relations read off the figure (sidedness, order along lines, non-collinearity)."""
    goal: Goal
    """The quantity or expression to compute (or relation to confirm)."""
    answer: str | None = None
    """The ground truth as a sympy-style expression (angles in radians), when known."""
    choices: tuple[str, ...] = ()
    """Multiple-choice options, when the source has them (the solver never reads them)."""
    answer_choice: str | None = None
    """The letter of the correct choice, when known."""


class CalcStep(BaseModel):
    """One numbered line of a solution: an equation a rule produced, or a value found."""

    model_config = _FROZEN
    number: int
    """The step's number, from 1."""
    rule: str
    """The rule's name (``given``, ``triangle angle sum``, ``law of cosines``, ``solve``...)."""
    statement: str
    """The equation in readable form, e.g. ``∠ABC + ∠BCA + ∠CAB = 180°``."""
    quantities: tuple[str, ...]
    """The quantities the statement mentions (``AB``, ``∠ABC``, ``x``...)."""
    value: float | None = None
    """The value the step establishes for its single quantity (degrees for angles), if it is one."""
    premises: tuple[int, ...] = ()
    """Numbers of the earlier steps it uses."""


class CalcSolution(BaseModel):
    """The answer (degrees for an angle goal; 1.0 for a confirmed relation) and the steps that give it."""

    model_config = _FROZEN
    answer: float | None
    """The goal's value, or ``None`` when it was not found."""
    steps: tuple[CalcStep, ...] = ()
    """The steps the goal needs, in post-order (premises first, the goal's step last)."""


Op.model_rebuild()
