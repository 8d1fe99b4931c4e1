"""The geosynth engine: formal plane geometry, a numeric diagram, DD+AR deduction and traced proofs.

Import the engine from here. The sub-packages are its layers, listed bottom up; a module imports only
modules of its own layer and of the layers before it (``tests/geosynth/test_layout.py`` checks this):

- ``geometry/``: floating-point plane geometry (points, lines, circles, intersections) and the numeric
  sketch of every construction, a table keyed by sketch name.
- ``language/``: the formal language. Relations over named points in canonical form, composite shapes,
  quantities and exact linear equations, the AlphaGeometry predicate table, construction definitions
  as data (``rules/defs.txt``) and the JGEX one-line problem format.
- ``diagram/``: the numeric realiser (coordinates sampled with an injected RNG), numeric truth of every
  relation, diagrammatic relations read off a drawing, and numeric values of quantities.
- ``store/``: the fact store, in-memory SQLite tables over union-find classes of lines, directions,
  lengths and circles; both the rules and the algebra read it.
- ``algebra/``: exact Gaussian elimination over rationals, the angle, ratio and length systems,
  Menelaus and Ceva, ratio-premise rules and the similar/congruent triangle search.
- ``deduction/``: deduction rules as data (``rules/rules.txt``) compiled to SQL joins, and the
  deductive loop that alternates rule passes with the algebra until a fixpoint.
- ``proofs/``: tracing the goal back to the givens, minimal supports (PySCIPOpt), the textbook form, and
  the replay checker that re-derives every step on its own diagram.
- top level: :mod:`~geosynth.engine.solver` (one problem in-process, or many in worker processes with
  hard timeouts), :mod:`~geosynth.engine.workers` (the worker start method),
  :mod:`~geosynth.engine.ray` (Ray start-up) and :mod:`~geosynth.engine.files` (atomic file writes),
  the last three shared with :mod:`geosynth.synth` and :mod:`geosynth.mts`.

The data files ``defs.txt`` and ``rules.txt`` ship inside the package, in ``geosynth/engine/rules/``.
Errors derive from :class:`geosynth.errors.GeoSynthError` and are re-exported here.
"""

from __future__ import annotations

from geosynth.engine.algebra.chasing import ANGLE_RULE, DEG, RATIO_RULE, factor
from geosynth.engine.algebra.elimination import LinearSystem
from geosynth.engine.algebra.lengths import LENGTH_RULE
from geosynth.engine.algebra.triangles import SIMILARITY_RULE
from geosynth.engine.deduction.deductive import (
    DEFINITION_RULES,
    KINDS,
    CompiledRule,
    Deduction,
    Derivation,
    compile_rule,
    deduce,
    load_givens,
)
from geosynth.engine.deduction.rules import (
    Rule,
    default_rules,
    engine_rules,
    load_rules,
    parse_named_rules,
    parse_rule,
    parse_rules,
)
from geosynth.engine.diagram.angles import equation_holds, quantity_value, undirected_equation
from geosynth.engine.diagram.diagrammatic import diagrammatic_relations
from geosynth.engine.diagram.numeric import holds
from geosynth.engine.diagram.realise import Diagram, compile_problem, extend_diagram, realise
from geosynth.engine.files import atomic_write
from geosynth.engine.geometry.geometry import Degenerate, Vec, norm
from geosynth.engine.language.definitions import (
    ConstructionDef,
    FactGroup,
    Statement,
    default_definitions,
    load_definitions,
    parse_definition,
    parse_definitions,
)
from geosynth.engine.language.dialects import (
    DIALECTS,
    NEWCLID_ANGLES,
    NEWCLID_REWRITES,
    Dialect,
    from_dialect,
    from_newclid,
)
from geosynth.engine.language.predicates import PREDICATES, build_relation, relation_text
from geosynth.engine.language.problem import (
    Clause,
    Construction,
    Problem,
    ProblemEntry,
    format_problem,
    load_problems,
    parse_clause,
    parse_goal,
    parse_problem,
    read_problem_entries,
    read_problem_lines,
)
from geosynth.engine.language.quantities import Angle, Area, Length, LinearEquation, Term, Variable
from geosynth.engine.language.relations import (
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
from geosynth.engine.language.shapes import (
    AnyRelation,
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
from geosynth.engine.proofs.proof import (
    ProofStep,
    SupportRecord,
    TextbookStep,
    TracedProof,
    Tracer,
    format_proof,
    format_textbook,
    proof_data,
    proof_steps,
    textbook_steps,
    trace_proof,
)
from geosynth.engine.proofs.replay import (
    DIAGRAM,
    DIAGRAMMATIC,
    GIVEN,
    SAME_CLASSES,
    SAME_SEGMENT,
    Proof,
    ProofLine,
    ReplayReport,
    StepCheck,
    replay,
)
from geosynth.engine.proofs.support import METHODS, Method, Support, minimal_support
from geosynth.engine.ray import import_ray, join_or_start
from geosynth.engine.solver import SolveResult, race_isolated, run_isolated, solve, solve_all
from geosynth.engine.store.factstore import FactStore, UnionFind
from geosynth.engine.workers import worker_context
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
    "ANGLE_RULE",
    "DEFINITION_RULES",
    "DEG",
    "DIAGRAM",
    "DIAGRAMMATIC",
    "DIALECTS",
    "GIVEN",
    "KINDS",
    "LENGTH_RULE",
    "METHODS",
    "NEWCLID_ANGLES",
    "NEWCLID_REWRITES",
    "PREDICATES",
    "RATIO_RULE",
    "SAME_CLASSES",
    "SAME_SEGMENT",
    "SIMILARITY_RULE",
    "Angle",
    "AnyRelation",
    "Area",
    "Between",
    "CircleThrough",
    "Clause",
    "Collinear",
    "CompiledRule",
    "Concyclic",
    "CongruentTriangles",
    "Construction",
    "ConstructionDef",
    "ConstructionFailed",
    "Deduction",
    "DefinitionError",
    "Degenerate",
    "Derivation",
    "Diagram",
    "Dialect",
    "DirectedAngleConstant",
    "Distinct",
    "EqualAngles",
    "EqualLength",
    "EqualLineAngles",
    "EqualRatios",
    "EquilateralTriangle",
    "FactGroup",
    "FactStore",
    "GeoSynthError",
    "IsoscelesTrapezoid",
    "IsoscelesTriangle",
    "Kite",
    "Length",
    "LinearEquation",
    "LinearSystem",
    "Method",
    "Midpoint",
    "NotCollinear",
    "NotParallel",
    "NotPerpendicular",
    "OppositeSide",
    "Parallel",
    "Parallelogram",
    "Perpendicular",
    "Problem",
    "ProblemEntry",
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
    "SupportRecord",
    "Term",
    "TextbookStep",
    "TracedProof",
    "Tracer",
    "Trapezoid",
    "UnionFind",
    "UnknownConstructionError",
    "UnknownPredicateError",
    "Variable",
    "Vec",
    "atomic_write",
    "build_relation",
    "compile_problem",
    "compile_rule",
    "deduce",
    "default_definitions",
    "default_rules",
    "diagrammatic_relations",
    "engine_rules",
    "equation_holds",
    "extend_diagram",
    "factor",
    "format_problem",
    "format_proof",
    "format_textbook",
    "from_dialect",
    "from_newclid",
    "holds",
    "import_ray",
    "join_or_start",
    "load_definitions",
    "load_givens",
    "load_problems",
    "load_rules",
    "minimal_support",
    "norm",
    "parse_clause",
    "parse_definition",
    "parse_definitions",
    "parse_goal",
    "parse_named_rules",
    "parse_problem",
    "parse_rule",
    "parse_rules",
    "proof_data",
    "proof_steps",
    "quantity_value",
    "race_isolated",
    "read_problem_entries",
    "read_problem_lines",
    "realise",
    "relation_text",
    "replay",
    "run_isolated",
    "solve",
    "solve_all",
    "textbook_steps",
    "trace_proof",
    "undirected_equation",
    "worker_context",
)
