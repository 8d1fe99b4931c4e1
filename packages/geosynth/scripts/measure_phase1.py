"""Measure parsing, realisation and deduction on the AlphaGeometry files (reads GEO_SHARED, default ../shared).

Run from the repository root: ``uv run python packages/geosynth/scripts/measure_phase1.py``. Prints, per
file: problems parsed; diagrams realised without and with the goal check (seeded, 100 attempts); goals
holding on the first diagram; diagrammatic relations extracted; goals proved by the whole engine (rules,
triangles and algebra) on that diagram.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from geosynth import ConstructionFailed, deduce, diagrammatic_relations, load_problems, realise

ROOT = Path(__file__).resolve().parents[3]


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")


def measure(path: Path) -> None:
    """Print the measurements of one problem file."""
    start = time.perf_counter()
    problems = load_problems(path)
    parse_s = time.perf_counter() - start
    realised = goal_first = realised_goal = proved = relations = 0
    attempts: list[int] = []
    deduce_s: list[float] = []
    start = time.perf_counter()
    for index, problem in enumerate(problems):
        try:
            first = realise(problem, np.random.default_rng(index), 100)
        except ConstructionFailed as err:
            _say(f"  not realised: {problem.name}: {err}")
            continue
        realised += 1
        goal_first += problem.goal is None or first.holds(problem.goal)
        try:
            diagram = realise(problem, np.random.default_rng(index), 100, check_goal=True)
        except ConstructionFailed as err:
            _say(f"  goal never holds: {problem.name}: {err}")
            continue
        realised_goal += 1
        attempts.append(diagram.attempts)
        relations += len(diagrammatic_relations(diagram))
        tick = time.perf_counter()
        proved += deduce(problem, diagram).proved
        deduce_s.append(time.perf_counter() - tick)
    total_s = time.perf_counter() - start
    _say(
        f"{path.name}: parsed {len(problems)} in {parse_s:.2f}s; realised {realised} (goal holds on the first "
        f"diagram: {goal_first}); realised with goal check {realised_goal} (mean attempts "
        f"{statistics.mean(attempts):.2f}); diagrammatic relations {relations}; deductive core proved "
        f"{proved} (median {statistics.median(deduce_s):.3f}s, max {max(deduce_s):.3f}s); total {total_s:.1f}s"
    )


def main() -> int:
    """Measure both benchmark files; 1 when the data is missing."""
    shared = Path(os.environ.get("GEO_SHARED", ROOT.parent / "shared")) / "data" / "alphageometry"
    if not shared.is_dir():
        _say(f"no benchmark data at {shared}; set GEO_SHARED")
        return 1
    for name in ("jgex_ag_231.txt", "imo_ag_30.txt"):
        measure(shared / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
