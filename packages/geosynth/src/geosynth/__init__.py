"""geosynth: the formal plane-geometry engine and the data factories built on it.

Phase 1 of the engine: the formal language (relations over named points in canonical form, composite
shapes, quantities and linear equations), the AlphaGeometry/JGEX problem format, construction
definitions as data, a numeric realiser with an injected RNG, extraction of diagrammatic relations,
a deductive core (rules as data compiled to SQLite joins over union-find classes) alternating with
an exact algebraic system (angle and ratio chasing by Gaussian elimination), solving with per-problem
worker processes, and proofs traced from the givens to the goal.
"""

from __future__ import annotations

from geosynth._angles import equation_holds, quantity_value, undirected_equation
from geosynth._deductive import Deduction, Derivation, compile_rule, deduce
from geosynth._definitions import (
    ConstructionDef,
    FactGroup,
    Statement,
    default_definitions,
    load_definitions,
    parse_definitions,
)
from geosynth._diagrammatic import diagrammatic_relations
from geosynth._numeric import holds
from geosynth._predicates import PREDICATES, build_relation, relation_text
from geosynth._problem import Clause, Construction, Problem, format_problem, load_problems, parse_problem
from geosynth._quantities import Angle, Area, Length, LinearEquation, Term, Variable
from geosynth._realise import Diagram, realise
from geosynth._relations import (
    Between,
    CircleThrough,
    Collinear,
    Concyclic,
    CongruentTriangles,
    DirectedAngleConstant,
    Distinct,
    EqualAngles,
    EqualLength,
    EqualLineAngles,
    EqualRatios,
    Midpoint,
    NotCollinear,
    NotParallel,
    NotPerpendicular,
    OppositeSide,
    Parallel,
    Perpendicular,
    RatioConstant,
    Relation,
    SameSide,
    SimilarTriangles,
)
from geosynth._rules import Rule, load_rules, parse_rules
from geosynth._shapes import (
    EquilateralTriangle,
    IsoscelesTrapezoid,
    IsoscelesTriangle,
    Kite,
    Parallelogram,
    Rectangle,
    Rhombus,
    RightTriangle,
    Shape,
    Square,
    Trapezoid,
)
from geosynth._solve import ProofStep, SolveResult, format_proof, proof_steps, solve_all
from geosynth._solve import solve as solve_one
from geosynth.errors import (
    ConstructionFailed,
    DefinitionError,
    GeoSynthError,
    ProblemSyntaxError,
    RelationError,
    UnknownConstructionError,
    UnknownPredicateError,
)

__all__ = (
    "PREDICATES",
    "Angle",
    "Area",
    "Between",
    "CircleThrough",
    "Clause",
    "Collinear",
    "Concyclic",
    "CongruentTriangles",
    "Construction",
    "ConstructionDef",
    "ConstructionFailed",
    "Deduction",
    "DefinitionError",
    "Derivation",
    "Diagram",
    "DirectedAngleConstant",
    "Distinct",
    "EqualAngles",
    "EqualLength",
    "EqualLineAngles",
    "EqualRatios",
    "EquilateralTriangle",
    "FactGroup",
    "GeoSynthError",
    "IsoscelesTrapezoid",
    "IsoscelesTriangle",
    "Kite",
    "Length",
    "LinearEquation",
    "Midpoint",
    "NotCollinear",
    "NotParallel",
    "NotPerpendicular",
    "OppositeSide",
    "Parallel",
    "Parallelogram",
    "Perpendicular",
    "Problem",
    "ProblemSyntaxError",
    "ProofStep",
    "RatioConstant",
    "Rectangle",
    "Relation",
    "RelationError",
    "Rhombus",
    "RightTriangle",
    "Rule",
    "SameSide",
    "Shape",
    "SimilarTriangles",
    "SolveResult",
    "Square",
    "Statement",
    "Term",
    "Trapezoid",
    "UnknownConstructionError",
    "UnknownPredicateError",
    "Variable",
    "build_relation",
    "compile_rule",
    "deduce",
    "default_definitions",
    "diagrammatic_relations",
    "equation_holds",
    "format_problem",
    "format_proof",
    "holds",
    "load_definitions",
    "load_problems",
    "load_rules",
    "parse_definitions",
    "parse_problem",
    "parse_rules",
    "proof_steps",
    "quantity_value",
    "realise",
    "relation_text",
    "solve_all",
    "solve_one",
    "undirected_equation",
)
__version__ = "0.1.0"
