"""The deductive search's time limit: checked between rules, inside the algebra, and inside a rule's join.

No assertion here is about elapsed time. Stopping points are made deterministic by replacing the clock
the search reads (one tick per reading), and a deadline already in the past interrupts any long query.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from geosynth import load_problems, parse_problem, realise
from geosynth.engine import (
    DEFINITION_RULES,
    Deduction,
    FactStore,
    Problem,
    compile_rule,
    deduce,
    load_givens,
    load_rules,
)
from geosynth.engine.algebra.chasing import ANGLE_RULE, RATIO_RULE
from geosynth.engine.algebra.findings import algebra_findings
from geosynth.engine.deduction import deductive
from geosynth.engine.deduction.rules import engine_rules
from geosynth.engine.diagram.realise import Diagram

# The verdict and derivation count of these problems with no limit, as the engine gave them when the
# limit was only checked between rounds; a change to the rules or the algebra may change them.
UNLIMITED = {0: (True, 33), 5: (True, 67), 18: (True, 21)}
CHASED = {ANGLE_RULE, RATIO_RULE}
FALSE_GOAL = "a b c = triangle a b c; d = foot d a b c ? cong a b a c"


def _jgex(data_dir: Path, index: int) -> tuple[Problem, Diagram]:
    problem = load_problems(data_dir / "jgex_sample.txt")[index]
    return problem, realise(problem, np.random.default_rng(index), 50, check_goal=True)


def _ticking(monkeypatch: pytest.MonkeyPatch, step: float) -> None:
    """Make the search's clock advance ``step`` seconds per reading (from now, so never behind)."""
    base, calls = time.perf_counter(), [0]

    def clock() -> float:
        calls[0] += 1
        return base + step * calls[0]

    monkeypatch.setattr(deductive, "time", SimpleNamespace(perf_counter=clock))


@pytest.mark.parametrize("limit", [0.0, 1e-9])
def test_a_tiny_limit_stops_before_any_rule(data_dir: Path, limit: float) -> None:
    problem, diagram = _jgex(data_dir, 5)
    result = deduce(problem, diagram, time_limit=limit)
    assert result.timed_out
    assert not result.proved
    assert result.rounds == 0
    assert result.derivations == ()


@pytest.mark.parametrize("index", sorted(UNLIMITED))
def test_a_generous_limit_changes_nothing(data_dir: Path, index: int) -> None:
    problem, diagram = _jgex(data_dir, index)
    free = deduce(problem, diagram)
    limited = deduce(problem, diagram, time_limit=1e6)
    assert (free.proved, len(free.derivations)) == UNLIMITED[index]
    assert not free.timed_out and not limited.timed_out
    assert limited.derivations == free.derivations
    assert (limited.proved, limited.rounds, limited.rejected) == (free.proved, free.rounds, free.rejected)


def test_an_unproved_goal_is_unchanged_by_a_generous_limit() -> None:
    problem = parse_problem(FALSE_GOAL)
    diagram = realise(problem, np.random.default_rng(0), 20)
    free, limited = deduce(problem, diagram), deduce(problem, diagram, time_limit=1e6)
    assert not free.proved and not limited.proved
    assert not limited.timed_out
    assert limited.derivations == free.derivations


def _is_prefix(part: Deduction, whole: Deduction) -> bool:
    return whole.derivations[: len(part.derivations)] == part.derivations


def _compiled_rules() -> int:
    return len([r for r in load_rules() + engine_rules() + DEFINITION_RULES if compile_rule(r) is not None])


def test_the_limit_holds_between_rules(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    problem, diagram = _jgex(data_dir, 5)
    full = deduce(problem, diagram)
    assert full.rounds == 1
    _ticking(monkeypatch, 1000.0)
    # Readings: the start, the check before the round, then one after each rule. A limit of k + 0.5
    # ticks stops the round after k rules.
    cut = [deduce(problem, diagram, time_limit=1000.0 * (k + 0.5)) for k in range(1, _compiled_rules())]
    assert all(r.timed_out and r.rounds == 1 for r in cut)
    assert all(_is_prefix(r, full) for r in cut)
    sizes = [len(r.derivations) for r in cut]
    assert sizes == sorted(sizes)
    assert any(0 < n < len(full.derivations) for n in sizes)  # some stop falls inside the round
    assert not cut[0].proved


def test_the_limit_holds_before_the_algebra(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    problem, diagram = _jgex(data_dir, 0)
    # With no rules of its own the search alternates the definition rule and the algebraic system.
    full = deduce(problem, diagram, rules=())
    first = next(i for i, d in enumerate(full.derivations) if d.rule in CHASED)
    _ticking(monkeypatch, 1000.0)
    cut = [deduce(problem, diagram, rules=(), time_limit=1000.0 * (k + 0.5)) for k in range(1, 8)]
    assert all(_is_prefix(r, full) for r in cut)
    # The first stop that has chased facts follows one that stopped just before the algebra ran: the
    # same round, every fact of the rules before it and nothing of the algebra.
    later = next(k for k, r in enumerate(cut) if any(d.rule in CHASED for d in r.derivations))
    assert later > 0
    assert cut[later - 1].timed_out and cut[later].timed_out
    assert cut[later - 1].rounds == cut[later].rounds
    assert len(cut[later - 1].derivations) == first


def test_the_algebra_stops_between_stages(data_dir: Path) -> None:
    problem, diagram = _jgex(data_dir, 0)
    store = FactStore(problem.points)
    givens = load_givens(store, problem)
    coords = diagram.coords()
    everything = algebra_findings(store, coords, list(givens), problem.goal)
    assert everything
    assert (
        algebra_findings(store, coords, list(givens), problem.goal, time.perf_counter() + 1e6) == everything
    )
    assert algebra_findings(store, coords, list(givens), problem.goal, time.perf_counter() - 1.0) == []


def test_an_interrupted_join_is_reported_as_timed_out(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    problem, diagram = _jgex(data_dir, 5)
    full = deduce(problem, diagram)
    # The search's clock runs far behind the real one: its own checks never fire within the limit,
    # but the deadline it hands the store is long past, so the first long join is interrupted.
    real = time.perf_counter
    monkeypatch.setattr(deductive, "time", SimpleNamespace(perf_counter=lambda: real() - 1e6))
    result = deduce(problem, diagram, time_limit=60.0)
    assert result.timed_out and not result.proved
    assert result.rounds == 1
    assert _is_prefix(result, full)
    assert len(result.derivations) < len(full.derivations)


LONG = "SELECT COUNT(*) FROM line AS x, line AS y WHERE x.l <> y.l"


def test_an_interrupted_query_leaves_the_store_usable() -> None:
    store = FactStore([f"p{i}" for i in range(20)])
    store.merge_lengths(store.length_of("p0", "p1"), store.length_of("p2", "p3"))
    expected = store.select(LONG)
    lines = store.select("SELECT a, b, l FROM line ORDER BY a, b")
    assert store.db.in_transaction  # every write so far is uncommitted
    assert store.select(LONG, time.perf_counter() - 1.0) is None
    # Nothing was rolled back, the handler is gone, and the store takes new facts.
    assert store.db.in_transaction
    assert store.select("SELECT a, b, l FROM line ORDER BY a, b") == lines
    assert store.length_of("p0", "p1") == store.length_of("p2", "p3")
    assert store.select(LONG) == expected
    assert store.merge_lines(store.line_of("p0", "p1"), store.line_of("p0", "p2"))
    rows = store.select("SELECT l FROM line WHERE a = 'p2' AND b = 'p0'", time.perf_counter() + 1e6)
    assert rows == [(store.line_of("p0", "p1"),)]


def test_a_query_error_is_not_taken_for_an_interrupt() -> None:
    store = FactStore("abc")
    with pytest.raises(sqlite3.OperationalError):
        store.select("SELECT nothing FROM nowhere", time.perf_counter() + 1e6)
    assert store.select("SELECT COUNT(*) FROM line", time.perf_counter() - 1.0) == [(6,)]
