"""Deduction time with 1, 2, 4... ranked auxiliary candidates added to a problem at once.

Usage: ``uv run python bench/bench_aux_group.py NAME [NAME ...] [--file jgex|imo] [--groups 1,2,4]
[--batches 2] [--limit 60]``. Each NAME is a substring of a problem name of the benchmark file. The
problem is realised (seed 0, goal checked), its candidates ranked (``geosynth.synth.ranked_candidates``),
and for each group size ``g`` the first ``--batches`` groups of ``g`` consecutive candidates are added
together on one diagram and deduced once (``--limit`` seconds each); one line per problem gives the
plain deduction's time, then per group size the seconds and verdict of each batch. This is what
decides ``HeuristicConfig.group``: when a batch of ``g`` costs more than ``g`` single checks, checking one
candidate at a time is cheaper. Reads GEO_SHARED (default ../shared); exits 0 with a note when the data
is missing.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

from geosynth import deduce, load_problems, realise
from geosynth.engine import Diagram, default_definitions, parse_clause
from geosynth.synth import new_point_names, ranked_candidates, with_auxiliary

ROOT = Path(__file__).resolve().parents[1]
FILES = {"jgex": "jgex_ag_231.txt", "imo": "imo_ag_30.txt"}


def main() -> int:
    parser = argparse.ArgumentParser(description="deduction time with several auxiliary candidates at once")
    parser.add_argument("names", nargs="+", help="substrings of problem names")
    parser.add_argument("--file", choices=tuple(FILES), default="jgex", help="benchmark file")
    parser.add_argument("--groups", default="1,2,4", help="group sizes")
    parser.add_argument("--batches", type=int, default=2, help="groups timed per size")
    parser.add_argument("--limit", type=float, default=60.0, help="seconds of deduction per batch")
    args = parser.parse_args()
    shared = Path(os.environ.get("GEO_SHARED", ROOT.parent / "shared"))
    path = shared / "data" / "alphageometry" / FILES[args.file]
    if not path.is_file():
        print(f"no benchmark data at {path} (set GEO_SHARED); nothing measured")
        return 0
    problems = load_problems(path)
    defs = default_definitions()
    for key in args.names:
        problem = next((p for p in problems if key in p.name), None)
        if problem is None:
            print(f"{key}: no such problem in {path.name}")
            continue
        diagram = realise(problem, np.random.default_rng(0), check_goal=True)
        began = time.perf_counter()
        deduce(problem, diagram, time_limit=args.limit)
        row = [f"{problem.name}: {len(problem.points)} points, plain {time.perf_counter() - began:.2f}s"]
        ranked = ranked_candidates(problem, diagram)
        for group in (int(g) for g in args.groups.split(",")):
            runs: list[str] = []
            for batch in range(args.batches):
                items = ranked[batch * group : (batch + 1) * group]
                names = new_point_names(problem, sum(r.candidate.outputs for r in items))
                points = dict(diagram.points)
                known = set(problem.points)
                clauses = []
                k = 0
                for r in items:
                    mine = names[k : k + r.candidate.outputs]
                    k += r.candidate.outputs
                    clause = parse_clause(r.candidate.clause(mine), known, defs)
                    known.update(clause.points)
                    clauses.append(clause)
                    points.update({new: r.points[old] for new, old in zip(mine, r.names, strict=True)})
                posed = with_auxiliary(problem, clauses)
                began = time.perf_counter()
                proved = deduce(posed, Diagram(points=points, attempts=1), time_limit=args.limit).proved
                runs.append(f"{time.perf_counter() - began:.2f}s{' proved' if proved else ''}")
            row.append(f"{group} at once: {', '.join(runs)}")
        print(" | ".join(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
