"""The Geometry3K-style version of synthesized calculation problems and the calculation-solver cross-check."""

from __future__ import annotations

import importlib.util

import pytest

from geosynth.engine import Diagram, parse_problem
from geosynth.synth import generate_one, load_config, records_stats
from geosynth.synth._to_calc import to_calc_problem

HAS_CALC = importlib.util.find_spec("geosynth.calc") is not None
CONFIG = load_config("euclid-omni")


@pytest.mark.slow
@pytest.mark.skipif(not HAS_CALC, reason="geosynth.calc is not installed")
def test_cross_checked_records_agree_with_the_calculation_solver() -> None:
    assert CONFIG.calc_crosscheck and CONFIG.require_calc_agreement
    records = [generate_one(CONFIG, "calculation", 2, i) for i in range(2)]
    for record in records:
        assert record.calc_answer is not None and record.answer_value is not None
        assert record.calc_answer == pytest.approx(record.answer_value, rel=1e-6)
    stats = records_stats(records)
    assert stats.calc_crosschecked == stats.calc_agreed == 2
    assert stats.pgps_programs == sum(1 for r in records if r.pgps_program)


@pytest.mark.skipif(not HAS_CALC, reason="geosynth.calc is not installed")
def test_calc_problem_carries_givens_diagram_and_goal() -> None:
    record = generate_one(load_config(), "calculation", 1, 0)
    diagram = Diagram(points={p.name: (p.x, p.y) for p in record.points}, attempts=1)
    problem = to_calc_problem(record.id, parse_problem(record.problem), diagram, record.givens, record.goal)
    assert problem.id == record.id and problem.diagram
    _, p, q, _, length = record.givens[0].split()
    assert any(
        f"'{length}'" in repr(c) and f"'{min(p, q)}', '{max(p, q)}'" in repr(c) for c in problem.conditions
    )
    kind = record.goal.split()[0]
    assert problem.goal.kind == ("var" if kind == "var" else kind)
