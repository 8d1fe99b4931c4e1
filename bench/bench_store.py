"""SQLite against DuckDB as the deductive database of the geosynth engine, on the engine's own workload.

Usage: ``uv run python bench/bench_store.py [--repeat 5] [--threads 1] [--problems NAME ...]``. Data from
GEO_SHARED (default ``../shared``); without it the script says so and exits 1.

For a small and a large JGEX-AG-231 problem (fewest and most points, unless named) the engine realises
the diagram and deduces as usual while every SQL statement its fact store sends to SQLite is traced (the
statement mix of a real run: rule joins versus the store's point lookups and updates). The store's final
tables (givens plus every derived fact) are then copied row for row into an in-memory DuckDB database,
and every compiled rule join of ``rules.txt`` (``geosynth.engine.compile_rule``: the SQL the engine fires each
round) runs against both; the row sets must agree. Per query: best-of-``repeat`` seconds on each side and
the ratio DuckDB / SQLite; then totals, and the same for a sample of the store's single-row lookups
(``SELECT g FROM ang WHERE d1 = ? AND d2 = ?`` and friends), which a run sends far more often than joins.
Timings on a shared machine are provisional.
"""

from __future__ import annotations

import argparse
import os
import re
import sqlite3
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from geosynth.engine import (
    DEFINITION_RULES,
    KINDS,
    CompiledRule,
    FactStore,
    Problem,
    compile_rule,
    deduce,
    load_givens,
    load_problems,
    load_rules,
    realise,
)
from geosynth.engine.deduction import deductive

ROOT = Path(__file__).resolve().parents[1]
TABLES = ("line", "dir", "perp", "seg", "midp", "circ", "ang")


def final_store(problem: Problem) -> tuple[FactStore, Counter[str], float]:
    """The engine's run on one problem: its final fact store, the traced statement mix and the seconds.

    The deduction runs on its own traced store (what the engine sends to SQLite); the store returned is
    rebuilt from the givens and every derivation, so it holds the same final classes.
    """
    diagram = realise(problem, np.random.default_rng(0), 100, check_goal=problem.goal is not None)
    statements: Counter[str] = Counter()
    original = FactStore.__init__

    def traced(self: FactStore, points: Sequence[str]) -> None:
        original(self, points)
        self.db.set_trace_callback(lambda sql: statements.update([_kind(sql)]))

    FactStore.__init__ = traced  # type: ignore[method-assign]
    try:
        start = time.perf_counter()
        deduction = deduce(problem, diagram, time_limit=60.0)
        seconds = time.perf_counter() - start
    finally:
        FactStore.__init__ = original
    store = FactStore(problem.points)
    load_givens(store, problem)
    for derivation in deduction.derivations:
        kind = KINDS.get(type(derivation.fact))
        if kind is not None:
            kind.apply(store, derivation.fact)
    return store, statements, seconds


def timed_deduction(problem: Problem, analyse: bool) -> tuple[float, bool]:
    """Seconds and verdict of the engine's deduction (untraced), optionally with planner statistics.

    With ``analyse``, ``ANALYZE`` runs on the engine's own store right after the givens are loaded (by
    wrapping ``deductive.load_givens`` for this one call); nothing else changes.
    """
    diagram = realise(problem, np.random.default_rng(0), 100, check_goal=problem.goal is not None)
    original = deductive.load_givens

    def load_then_analyse(store: FactStore, problem: Problem) -> list[Any]:
        givens = original(store, problem)
        if analyse:
            store.db.execute("ANALYZE")
        return givens

    deductive.load_givens = load_then_analyse
    try:
        start = time.perf_counter()
        deduction = deduce(problem, diagram, time_limit=60.0)
        return time.perf_counter() - start, deduction.proved
    finally:
        deductive.load_givens = original


def _kind(sql: str) -> str:
    head = sql.lstrip().split(None, 2)
    if not head:
        return "other"
    if head[0].upper() == "WITH":  # a join reading a computed view (vertex angles)
        return "rule join, recent rows" if "likelihood(" in sql else "rule join"
    if head[0].upper() == "SELECT" and len(head) > 1 and head[1].upper() == "DISTINCT":
        return "rule join"
    if head[0].upper() == "SELECT" and "likelihood(" in sql:
        return "rule join, recent rows"
    return head[0].upper()


def duckdb_copy(store: FactStore, threads: int) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB database with the same tables, rows and indexes as the store."""
    con = duckdb.connect(":memory:")
    con.execute(f"SET threads = {threads}")
    schema = [
        row[0]
        for row in store.db.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY type DESC")
    ]
    for statement in schema:  # tables before indexes ('table' sorts after 'index' descending)
        con.execute(statement)
    for table in TABLES:
        rows = store.db.execute(f"SELECT * FROM {table}").fetchall()
        if rows:
            marks = ", ".join("?" * len(rows[0]))
            con.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
    return con


def duckdb_sql(sql: str) -> str:
    """A join in DuckDB's dialect: SQLite's scalar ``max`` of several values is DuckDB's ``greatest``."""
    return re.sub(r"\bmax\((?=[^()]*,)", "greatest(", sql)


def best_of(run: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - start)
    return best, result


def compiled_rules() -> list[CompiledRule]:
    return [c for r in (*load_rules(), *DEFINITION_RULES) if (c := compile_rule(r)) is not None]


def analysed_copy(store: FactStore) -> sqlite3.Connection:
    """A copy of the store's SQLite database with planner statistics (``ANALYZE``), which the engine skips."""
    copy = sqlite3.connect(":memory:")
    store.db.commit()  # a backup waits for the source's open write transaction to end
    store.db.backup(copy)
    copy.execute("ANALYZE")
    return copy


def compare_joins(
    store: FactStore, con: duckdb.DuckDBPyConnection, repeat: int
) -> tuple[float, float, float]:
    analysed = analysed_copy(store)
    print(
        f"  {'rule':<6} {'rows':>7} {'sqlite ms':>10} {'analysed':>10} {'duckdb ms':>10} {'duckdb/sqlite':>14}"
    )
    totals = [0.0, 0.0, 0.0]
    for compiled in compiled_rules():
        s_time, s_rows = best_of(lambda c=compiled: store.db.execute(c.sql).fetchall(), repeat)
        a_time, a_rows = best_of(lambda c=compiled: analysed.execute(c.sql).fetchall(), repeat)
        d_time, d_rows = best_of(lambda c=compiled: con.execute(duckdb_sql(c.sql)).fetchall(), repeat)
        if not sorted(s_rows) == sorted(a_rows) == sorted(d_rows):
            raise RuntimeError(
                f"{compiled.rule.name}: the databases disagree ({len(s_rows)} vs {len(d_rows)} rows)"
            )
        totals = [totals[0] + s_time, totals[1] + a_time, totals[2] + d_time]
        print(
            f"  {compiled.rule.name:<6} {len(s_rows):>7} {s_time * 1e3:>10.3f} {a_time * 1e3:>10.3f} "
            f"{d_time * 1e3:>10.3f} {d_time / max(s_time, 1e-9):>14.2f}"
        )
    s_total, a_total, d_total = totals
    print(
        f"  {'joins':<6} {'':>7} {s_total * 1e3:>10.2f} {a_total * 1e3:>10.2f} {d_total * 1e3:>10.2f} "
        f"{d_total / max(s_total, 1e-9):>14.2f}"
    )
    return s_total, a_total, d_total


LOOKUPS = (
    ("SELECT g FROM ang WHERE d1 = ? AND d2 = ?", "SELECT d1, d2 FROM ang"),
    ("SELECT 1 FROM perp WHERE d1 = ? AND d2 = ?", "SELECT d1, d2 FROM perp"),
    ("SELECT 1 FROM midp WHERE m = ? AND a = ? AND b = ?", "SELECT m, a, b FROM midp"),
)
"""The store's single-row lookups, each with a query giving real arguments for it."""


def compare_lookups(store: FactStore, con: duckdb.DuckDBPyConnection, repeat: int) -> tuple[float, float]:
    per_s: list[float] = []
    per_d: list[float] = []
    for lookup, source in LOOKUPS:
        keys = store.db.execute(source).fetchall()[:200]
        if not keys:
            continue
        s_time, _ = best_of(lambda q=lookup, k=keys: [store.db.execute(q, a).fetchone() for a in k], repeat)
        d_time, _ = best_of(lambda q=lookup, k=keys: [con.execute(q, a).fetchone() for a in k], repeat)
        per_s.append(s_time / len(keys))
        per_d.append(d_time / len(keys))
    s_mean, d_mean = statistics.mean(per_s), statistics.mean(per_d)
    print(
        f"  single-row lookup: sqlite {s_mean * 1e6:.1f} us, duckdb {d_mean * 1e6:.1f} us per query "
        f"(ratio {d_mean / s_mean:.0f})"
    )
    return s_mean, d_mean


def report(problem: Problem, repeat: int, threads: int) -> None:
    store, statements, seconds = final_store(problem)
    plain_seconds, plain_proved = timed_deduction(problem, analyse=False)
    analysed_seconds, analysed_proved = timed_deduction(problem, analyse=True)
    sizes = {t: store.db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in TABLES}
    print(
        f"\n{problem.name}: {len(problem.points)} points; deduction {plain_seconds:.2f} s (proved: {plain_proved}; "
        f"{seconds:.2f} s traced); with ANALYZE after the givens {analysed_seconds:.2f} s (proved: {analysed_proved})"
    )
    print("  final tables: " + ", ".join(f"{t} {n}" for t, n in sizes.items()))
    total = sum(statements.values())
    print(
        f"  statements of the run: {total} ("
        + ", ".join(f"{k} {v}" for k, v in statements.most_common())
        + ")"
    )
    con = duckdb_copy(store, threads)
    join_s, join_a, join_d = compare_joins(store, con, repeat)
    look_s, look_d = compare_lookups(store, con, repeat)
    joins = statements["rule join"]
    others = total - joins
    est_s = join_s / max(len(compiled_rules()), 1) * joins + look_s * others
    est_a = join_a / max(len(compiled_rules()), 1) * joins + look_s * others
    est_d = join_d / max(len(compiled_rules()), 1) * joins + look_d * others
    print(
        f"  the run's {joins} joins and {others} other statements at these rates: sqlite {est_s:.2f} s, "
        f"sqlite analysed {est_a:.2f} s, duckdb {est_d:.2f} s (duckdb/sqlite {est_d / max(est_s, 1e-9):.2f})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per query; the best counts")
    parser.add_argument(
        "--threads", type=int, default=1, help="DuckDB threads (the machine has 2 shared cores)"
    )
    parser.add_argument(
        "--problems", nargs="*", default=None, help="JGEX problem names (default: smallest, largest)"
    )
    args = parser.parse_args()
    shared = Path(os.environ.get("GEO_SHARED", ROOT.parent / "shared")) / "data" / "alphageometry"
    if not shared.is_dir():
        print(f"no benchmark data at {shared}; set GEO_SHARED")
        return 1
    problems = load_problems(shared / "jgex_ag_231.txt")
    if args.problems:
        chosen = [p for p in problems if p.name in set(args.problems)]
    else:
        by_size = sorted(problems, key=lambda p: (len(p.points), p.name))
        chosen = [by_size[0], by_size[-1]]
    print(
        f"SQLite {sqlite3.sqlite_version} (Python sqlite3), DuckDB {duckdb.__version__} ({args.threads} thread(s)); "
        f"best of {args.repeat}; {len(compiled_rules())} compiled rules"
    )
    for problem in chosen:
        report(problem, args.repeat, args.threads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
