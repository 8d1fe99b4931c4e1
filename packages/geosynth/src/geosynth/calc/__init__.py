"""Calculation problems (Geometry3K style): a model, loaders, and a traced equation solver.

A :class:`CalcProblem` has equations and relations over named points, relations read off the figure, and
a goal expression. :func:`solve_calc` derives equations from rules (angle sums, parallel lines, triangle
laws, shapes, similarity, circles...), solves them by exact elimination plus one-unknown numeric solving,
and returns the answer with the steps that give it.
"""

from __future__ import annotations

from geosynth.calc._errors import CalcFormatError
from geosynth.calc._io import (
    dump_problem,
    is_calc_source,
    load_calc_problems,
    parse_record,
    read_calc_problems,
)
from geosynth.calc._model import (
    CalcProblem,
    CalcSolution,
    CalcStep,
    Centroid,
    Const,
    Equation,
    Expr,
    Incenter,
    Num,
    Op,
    Polygon,
    SimilarPolygons,
    Var,
)
from geosynth.calc._solve import format_expr, solve_calc, solve_calc_all

__all__ = [
    "CalcFormatError",
    "CalcProblem",
    "CalcSolution",
    "CalcStep",
    "Centroid",
    "Const",
    "Equation",
    "Expr",
    "Incenter",
    "Num",
    "Op",
    "Polygon",
    "SimilarPolygons",
    "Var",
    "dump_problem",
    "format_expr",
    "is_calc_source",
    "load_calc_problems",
    "parse_record",
    "read_calc_problems",
    "solve_calc",
    "solve_calc_all",
]
