"""How many engine failures on JGEX-AG-231 (or IMO-AG-30) one standard auxiliary construction turns into proofs.

Usage: ``uv run python bench/bench_aux.py [--file jgex|imo] [--timeout 20] [--budget 60] [--node-limit 5] [--jobs 1]
[--skip N] [--limit N] [--kinds midpoint,foot,circle,mirror,parallelogram] [--out FILE]``.

First every problem is solved as given (the engine's ``solve_all``, hard ``--timeout``). For each
failure, a worker process enumerates one-point constructions (``standard_constructions``: candidates
touching more goal points first), places each on one seeded diagram of the problem and runs the
engine (``--node-limit`` seconds of deduction each) until one proves the goal or ``--budget`` seconds
of the problem are spent (the worker is killed then); a found proof's row lists the rules it uses. This brute-force proposer is an upper bound for
what a one-step model proposal can achieve with these constructions; it is not a search strategy.
Reads GEO_SHARED (default ../shared); exits 0 with a note when the data is missing. One JSON line per
failure goes to ``--out`` (default: stdout only).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
from multiprocessing.connection import Connection
from pathlib import Path

import numpy as np

from geosynth import GeoSynthError, load_problems, proof_data, proof_steps, realise, replay, solve_all
from geosynth.engine import Problem, deduce, default_definitions, extend_diagram, parse_clause
from geosynth.synth import STANDARD_KINDS, standard_constructions, with_auxiliary

ROOT = Path(__file__).resolve().parents[1]
FILES = {"jgex": "jgex_ag_231.txt", "imo": "imo_ag_30.txt"}


def enumerate_one(problem: Problem, kinds: list[str], node_limit: float, conn: Connection) -> None:
    """Worker: try candidates in order, report each proof attempt count and the first success."""
    start = time.perf_counter()
    try:
        diagram = realise(problem, np.random.default_rng(0), check_goal=True)
    except GeoSynthError as err:
        conn.send({"error": str(err)})
        return
    defs = default_definitions()
    candidates = standard_constructions(problem, kinds)
    tried = placed = 0
    for index, text in enumerate(candidates):
        tried += 1
        try:
            clause = parse_clause(text, set(problem.points), defs)
            extended = extend_diagram(diagram, clause, np.random.default_rng(index), attempts=3)
        except GeoSynthError:
            continue
        placed += 1
        conn.send({"progress": tried, "placed": placed})
        posed = with_auxiliary(problem, [clause])
        deduction = deduce(posed, extended, time_limit=node_limit)
        if deduction.proved:
            steps = proof_steps(posed, deduction)
            rules = sorted({s.rule for s in steps})
            seconds = time.perf_counter() - start
            try:  # re-derive every step from its premises on fresh diagrams (the soundness check)
                replayed = replay(proof_data(posed, steps)).ok
            except GeoSynthError:
                replayed = False
            conn.send({"found": text, "tried": tried, "placed": placed, "candidates": len(candidates),
                       "seconds": seconds, "rules": rules, "replayed": replayed})  # fmt: skip
            return
    conn.send({"found": None, "tried": tried, "placed": placed, "candidates": len(candidates),
               "seconds": time.perf_counter() - start})  # fmt: skip


def run_problem(problem: Problem, kinds: list[str], node_limit: float, budget: float) -> dict[str, object]:
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    worker = context.Process(target=enumerate_one, args=(problem, kinds, node_limit, send))
    worker.start()
    send.close()
    began = time.perf_counter()
    row: dict[str, object] = {"name": problem.name, "found": None, "tried": 0, "placed": 0}
    while time.perf_counter() - began < budget:
        if not receive.poll(0.05):
            if not worker.is_alive() and not receive.poll(0):
                row["error"] = f"worker exited with {worker.exitcode}"
                break
            continue
        try:
            message = receive.recv()
        except EOFError:
            break
        if "progress" in message:
            row["tried"], row["placed"] = message["progress"], message["placed"]
            continue
        row.update(message)
        break
    else:
        row["budget_spent"] = True
    worker.kill()
    worker.join()
    receive.close()
    row.setdefault("seconds", round(time.perf_counter() - began, 2))
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description="one standard auxiliary construction on engine failures")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per problem as given")
    parser.add_argument("--budget", type=float, default=60.0, help="seconds of enumeration per failure")
    parser.add_argument("--node-limit", type=float, default=5.0, help="seconds of deduction per candidate")
    parser.add_argument("--jobs", type=int, default=1, help="problems solved in parallel in the first pass")
    parser.add_argument("--skip", type=int, default=0, help="skip the first N failures")
    parser.add_argument("--limit", type=int, default=None, help="N failures only")
    parser.add_argument("--kinds", default=",".join(STANDARD_KINDS), help="constructions to enumerate")
    parser.add_argument("--file", choices=("jgex", "imo"), default="jgex", help="benchmark file")
    parser.add_argument("--out", type=Path, default=None, help="JSON lines, one per failure")
    args = parser.parse_args()
    shared = Path(os.environ.get("GEO_SHARED", ROOT.parent / "shared"))
    path = shared / "data" / "alphageometry" / FILES[args.file]
    if not path.is_file():
        print(f"no benchmark data at {path} (set GEO_SHARED); nothing measured")
        return 0
    kinds = [k for k in args.kinds.split(",") if k]
    start = time.perf_counter()
    problems = load_problems(path)
    results = list(solve_all(problems, timeout=args.timeout, jobs=args.jobs))
    failed = [p for p, r in zip(problems, results, strict=True) if not r.solved]
    failures = failed[args.skip :][: args.limit]
    print(f"as given: {len(problems) - len(failed)} solved, {len(failures)} failures examined "
          f"({time.perf_counter() - start:.0f}s)", flush=True)  # fmt: skip
    rows: list[dict[str, object]] = []
    out = None if args.out is None else args.out.open("w", encoding="utf-8")
    for problem in failures:
        row = run_problem(problem, kinds, args.node_limit, args.budget)
        rows.append(row)
        print(json.dumps(row), flush=True)
        if out is not None:
            out.write(json.dumps(row) + "\n")
            out.flush()
    found = [r for r in rows if r.get("found")]
    exhausted = [r for r in rows if not r.get("found") and not r.get("budget_spent") and "error" not in r]
    replayed = sum(1 for r in found if r.get("replayed"))
    print(f"one standard construction ({','.join(kinds)}): {len(found)} of {len(rows)} failures proved "
          f"({replayed} of the proofs replay step by step); "
          f"{len(exhausted)} exhausted every candidate; {len(rows) - len(found) - len(exhausted)} hit the "
          f"{args.budget:.0f}s budget or failed; wall {time.perf_counter() - start:.0f}s")  # fmt: skip
    if out is not None:
        out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
