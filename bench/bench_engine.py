"""Run the geosynth engine on JGEX-AG-231 and IMO-AG-30 (GEO_SHARED, default ../shared).

Usage: ``uv run python bench/bench_engine.py [--timeout 60] [--jobs 1] [--limit N] [--rename]
[--second-diagram] [--only jgex|imo]``. Each
problem runs in a worker process with a hard timeout (the engine's ``solve_all``); prints solved counts,
median and max seconds of solved problems, the unsolved names, and whole-run wall time. ``--rename``
renames every point to a random name first (same seed); ``--second-diagram`` re-solves in-process and
checks every derivation of every solved problem on an independently realised diagram.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from geosynth import GeoSynthError, load_problems, realise, solve_all, solve_one
from geosynth.engine import Problem

ROOT = Path(__file__).resolve().parents[1]


def renamed(problem: Problem, rng: random.Random) -> Problem:
    names = list(problem.points)
    fresh = [f"p{i}" for i in rng.sample(range(100, 999), len(names))]
    return problem.renamed(dict(zip(names, fresh, strict=True)))


def second_diagram(problems: list[Problem], timeout: float) -> None:
    """Re-solve in-process and check every derivation of every solved problem on a second diagram."""
    solved = failed = 0
    for index, problem in enumerate(problems):
        try:
            _, deduction = solve_one(problem, seed=index, time_limit=timeout)
            if not deduction.proved:
                continue
            other = realise(problem, np.random.default_rng(index + 1000), 200, check_goal=True)
        except GeoSynthError as err:
            print(f"  {problem.name}: {err}")
            continue
        solved += 1
        wrong = [d for d in deduction.derivations if not other.holds(d.fact)]
        if wrong:
            failed += 1
            print(
                f"  {problem.name}: {len(wrong)} derivations fail on a second diagram, e.g. {wrong[0].fact}"
            )
    print(f"second diagram: {solved} solved problems checked, {failed} with a derivation failing")


def run(path: Path, timeout: float, jobs: int, limit: int | None, rename: bool, check: bool) -> None:
    problems = load_problems(path)[:limit]
    if rename:
        rng = random.Random(0)
        problems = [renamed(p, rng) for p in problems]
    start = time.perf_counter()
    results = list(solve_all(problems, timeout=timeout, jobs=jobs))
    wall = time.perf_counter() - start
    solved = [r for r in results if r.solved]
    times = [r.seconds for r in solved] or [0.0]
    print(
        f"{path.name}: solved {len(solved)}/{len(results)}; timeouts {sum(r.timed_out for r in results)}; "
        f"errors {sum(r.error is not None for r in results)}; median {statistics.median(times):.3f}s, "
        f"max {max(times):.2f}s per solved problem; wall {wall:.1f}s ({jobs} jobs)"
    )
    print("  solved: " + " ".join(r.name for r in solved))
    print("  timed out: " + " ".join(r.name for r in results if r.timed_out))
    if check:
        second_diagram(problems, timeout)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--rename", action="store_true")
    parser.add_argument("--second-diagram", action="store_true", help="check derivations on another diagram")
    parser.add_argument("--only", default=None, help="jgex or imo")
    args = parser.parse_args()
    shared = Path(os.environ.get("GEO_SHARED", ROOT.parent / "shared")) / "data" / "alphageometry"
    if not shared.is_dir():
        print(f"no benchmark data at {shared}; set GEO_SHARED")
        return 1
    for name in ("jgex_ag_231.txt", "imo_ag_30.txt"):
        if args.only and not name.startswith(args.only):
            continue
        run(shared / name, args.timeout, args.jobs, args.limit, args.rename, args.second_diagram)
    return 0


if __name__ == "__main__":
    sys.exit(main())
