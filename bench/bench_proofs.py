"""Proofs of the geosynth engine on JGEX-AG-231 and IMO-AG-30: replay, size, and support minimisation.

Usage: ``uv run python bench/bench_proofs.py [--timeout 60] [--jobs 1] [--only jgex|imo] [--limit N]
[--no-supports | --supports-only]``. Benchmarks are read from ``$GEO_SHARED/data/alphageometry`` (``GEO_SHARED`` defaults
to ``../shared`` next to the repository). For each file it

1. solves every problem in worker processes (the engine's ``solve_all``, proofs minimised with L0),
2. replays every solved problem's proof (:func:`geosynth.engine.replay`, its own diagrams) and lists
   each failure with its step and reason,
3. counts steps per proof, raw and in the textbook form (merged and folded),
4. unless ``--no-supports``: re-solves each solved problem (``--jobs`` worker processes, the engine's
   own soft time limit) and traces its proof three ways (the elimination's sources, L0, L1),
   reporting premises per chased step and the tracing time. ``--supports-only`` runs only this part,
   over every problem.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from geosynth import GeoSynthError, load_problems, solve_all, solve_one
from geosynth.engine import Problem, Proof, SupportRecord, replay, textbook_steps, trace_proof

ROOT = Path(__file__).resolve().parents[1]
FILES = {"jgex": "jgex_ag_231.txt", "imo": "imo_ag_30.txt"}


def _stats(values: list[float]) -> str:
    if not values:
        return "n/a"
    return f"mean {statistics.mean(values):.2f}, median {statistics.median(values):.1f}"


def replay_all(proofs: list[Proof]) -> tuple[int, list[int], list[int]]:
    """Replay each proof; print failures. Returns (passed, raw steps, textbook steps)."""
    passed = 0
    raw: list[int] = []
    merged: list[int] = []
    for proof in proofs:
        raw.append(len(proof.steps))
        merged.append(len(textbook_steps(proof)))
        try:
            report = replay(proof)
        except GeoSynthError as err:
            print(f"  replay {proof.name}: cannot realise: {err}")
            continue
        if report.ok:
            passed += 1
        elif report.failed is not None:
            line = proof.steps[report.failed.number - 1] if report.failed.number else None
            what = f"{line.fact} [{line.rule}]" if line is not None else ""
            print(
                f"  replay {proof.name}: failed at step {report.failed.number} {what}: {report.failed.reason}"
            )
    return passed, raw, merged


def _trace_three_ways(
    problem: Problem, timeout: float
) -> tuple[dict[str, list[SupportRecord]], dict[str, float]]:
    """Solve in-process once, then trace the proof with no minimisation, L0 and L1 (worker side)."""
    records: dict[str, list[SupportRecord]] = {"l0": [], "l1": []}
    seconds: dict[str, float] = {"none": 0.0, "l0": 0.0, "l1": 0.0}
    try:
        _, deduction = solve_one(problem, time_limit=timeout, support=None)
    except GeoSynthError:
        return records, seconds
    if not deduction.proved:
        return records, seconds
    for method in ("none", "l0", "l1"):
        start = time.perf_counter()
        traced = trace_proof(problem, deduction, None if method == "none" else method)
        seconds[method] += time.perf_counter() - start
        if method != "none":
            records[method] += traced.supports
    return records, seconds


def supports(problems: list[Problem], timeout: float, jobs: int) -> None:
    """Premises per chased step before and after L0 / L1 minimisation, and the tracing time."""
    records: dict[str, list[SupportRecord]] = {"l0": [], "l1": []}
    seconds: dict[str, float] = {"none": 0.0, "l0": 0.0, "l1": 0.0}
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for found, spent in pool.map(_trace_three_ways, problems, [timeout] * len(problems)):
            for method, rows in found.items():
                records[method] += rows
            for method, value in spent.items():
                seconds[method] += value
    before = [float(r.before) for r in records["l0"]]
    print(f"  chased steps: {len(before)}; premises before: {_stats(before)}")
    for method in ("l0", "l1"):
        rows = records[method]
        after = [float(r.after) for r in rows]
        kept = sum(1 for r in rows if not r.minimised)
        print(f"  after {method.upper()}: {_stats(after)}; fell back to the sources: {kept}")
    print("  tracing time (all solved problems): " + ", ".join(f"{m} {s:.1f} s" for m, s in seconds.items()))


def run(path: Path, args: argparse.Namespace) -> None:
    problems = load_problems(path)[: args.limit]
    if args.supports_only:
        print(f"{path.name}: supports of every problem the engine proves")
        supports(problems, args.timeout, args.jobs)
        return
    start = time.perf_counter()
    results = list(solve_all(problems, timeout=args.timeout, jobs=args.jobs))
    solve_seconds = time.perf_counter() - start
    proofs = [r.proof for r in results if r.solved and r.proof is not None]
    print(f"{path.name}: solved {sum(r.solved for r in results)}/{len(problems)} in {solve_seconds:.0f} s")
    start = time.perf_counter()
    passed, raw, merged = replay_all(proofs)
    print(f"  replay passed: {passed}/{len(proofs)} ({time.perf_counter() - start:.1f} s)")
    print(
        f"  steps per proof: raw {_stats([float(n) for n in raw])}; textbook {_stats([float(n) for n in merged])}"
    )
    if args.supports:
        solved = {r.name for r in results if r.solved}
        supports([p for p in problems if p.name in solved], args.timeout, args.jobs)


def main() -> None:
    parser = argparse.ArgumentParser(description="Replay, size and minimised supports of engine proofs.")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--only", choices=sorted(FILES), default=None)
    parser.add_argument("--no-supports", dest="supports", action="store_false")
    parser.add_argument("--supports-only", action="store_true", help="only the support figures")
    args = parser.parse_args()
    shared = Path(os.environ.get("GEO_SHARED", ROOT.parent / "shared"))
    folder = shared / "data" / "alphageometry"
    if not folder.is_dir():
        print(f"skipped: {folder} not found (set GEO_SHARED)")
        sys.exit(0)
    for key, name in FILES.items():
        if args.only in (None, key):
            run(folder / name, args)


if __name__ == "__main__":
    main()
