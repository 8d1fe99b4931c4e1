"""geosynth: the formal plane-geometry engine and the data factories built on it.

The engine: a formal language (relations over named points in canonical form, composite shapes, quantities
and linear equations), the AlphaGeometry/JGEX problem format, construction definitions as data, a numeric
realiser with an injected RNG, diagrammatic relations read off a diagram, a deductive database (rules as
data compiled to SQLite joins over union-find classes) alternating with exact algebra (angle, ratio and
length systems by Gaussian elimination), per-problem worker processes with hard timeouts, proofs traced
from the givens to the goal with minimal supports (PySCIPOpt), a textbook form, and a replay checker.

Subpackages: :mod:`geosynth.calc` (calculation problems, formal Geometry3K), :mod:`geosynth.synth`
(problem synthesis, diagrams, text, auxiliary constructions, the PGPS bridge), :mod:`geosynth.mts`
(multi-trace synthesis of PGPS programs).
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
from geosynth._problem import (
    Clause,
    Construction,
    Problem,
    format_problem,
    load_problems,
    parse_problem,
    read_problem_lines,
)
from geosynth._proof import (
    TextbookStep,
    TracedProof,
    format_textbook,
    proof_data,
    textbook_steps,
    trace_proof,
)
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
from geosynth._replay import Proof, ProofLine, ReplayReport, StepCheck, replay
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
from geosynth._support import Support, minimal_support
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
    "Proof",
    "ProofLine",
    "ProofStep",
    "RatioConstant",
    "Rectangle",
    "Relation",
    "RelationError",
    "ReplayReport",
    "Rhombus",
    "RightTriangle",
    "Rule",
    "SameSide",
    "Shape",
    "SimilarTriangles",
    "SolveResult",
    "Square",
    "Statement",
    "StepCheck",
    "Support",
    "Term",
    "TextbookStep",
    "TracedProof",
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
    "format_textbook",
    "holds",
    "load_definitions",
    "load_problems",
    "load_rules",
    "minimal_support",
    "parse_definitions",
    "parse_problem",
    "parse_rules",
    "proof_data",
    "proof_steps",
    "quantity_value",
    "read_problem_lines",
    "realise",
    "relation_text",
    "replay",
    "solve_all",
    "solve_one",
    "textbook_steps",
    "trace_proof",
    "undirected_equation",
)
__version__ = "0.1.0"
