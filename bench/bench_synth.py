"""Throughput of the problem generator (geosynth.synth), and how it scales with the number of constructions.

Usage: ``uv run python bench/bench_synth.py [--n 20] [--constructions 2,3,4] [--tasks proving,calculation]
[--seed 0] [--json OUT]``. For each task and each construction count ``k`` the default configuration is
run with exactly ``k`` extension rules (``min_constructions = max_constructions = k``, room for the
points they add), ``n`` records are generated in this process (one core) and timed. Prints problems per
minute per core, mean seconds per record, the mean clauses left after the minimal-construction cut, the
mean solution steps; wall-clock figures and CPU-time figures (``time.process_time``, less sensitive to
other load on the machine) side by side. Every emitted record was re-solved
by the engine from its own statement before it was counted (the generator does not emit otherwise).
Timings on a shared machine are provisional: run it on an idle one for stable figures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from geosynth.synth import GenerationFailed, SynthConfig, Task, generate_one, load_config


def bench(config: SynthConfig, task: Task, k: int, n: int, seed: int) -> dict[str, Any]:
    """Generate ``n`` records with exactly ``k`` extension rules and time them."""
    sized = config.model_copy(
        update={"min_constructions": k, "max_constructions": k, "max_points": max(config.max_points, 4 + k)}
    )
    seconds: list[float] = []
    cpu: list[float] = []
    clauses: list[int] = []
    steps: list[int] = []
    failed = 0
    for index in range(n):
        start, start_cpu = time.perf_counter(), time.process_time()
        try:
            record = generate_one(sized, task, seed, index)
        except GenerationFailed:
            failed += 1
            continue
        seconds.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        clauses.append(record.n_clauses)
        steps.append(record.n_steps)
    total = sum(seconds)
    return {
        "task": task,
        "constructions": k,
        "records": len(seconds),
        "gave_up": failed,
        "seconds_per_record": round(total / max(1, len(seconds)), 3),
        "problems_per_minute_per_core": round(60 * len(seconds) / total, 1) if total else 0.0,
        "cpu_seconds_per_record": round(sum(cpu) / max(1, len(cpu)), 3),
        "problems_per_cpu_minute": round(60 * len(cpu) / sum(cpu), 1) if sum(cpu) else 0.0,
        "mean_clauses_after_cut": round(statistics.fmean(clauses), 2) if clauses else 0.0,
        "mean_solution_steps": round(statistics.fmean(steps), 1) if steps else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="Throughput of the problem generator.")
    parser.add_argument("--n", type=int, default=20, help="records per (task, construction count)")
    parser.add_argument("--constructions", default="2,3,4", help="comma-separated extension-rule counts")
    parser.add_argument("--tasks", default="proving,calculation")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--config", default="default", help="a YAML file or a bundled config name")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows as JSON here")
    args = parser.parse_args()
    config = load_config(args.config)
    rows: list[dict[str, Any]] = []
    print(
        "| task | constructions | records | gave up | wall s/record | problems/min/core (wall) "
        "| CPU s/record | problems/CPU-minute | clauses after cut | solution steps |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for task in args.tasks.split(","):
        for k in (int(x) for x in args.constructions.split(",")):
            row = bench(config, "calculation" if task == "calculation" else "proving", k, args.n, args.seed)
            rows.append(row)
            print(
                f"| {task} | {k} | {row['records']} | {row['gave_up']} | {row['seconds_per_record']} | "
                f"{row['problems_per_minute_per_core']} | {row['cpu_seconds_per_record']} | "
                f"{row['problems_per_cpu_minute']} | {row['mean_clauses_after_cut']} | {row['mean_solution_steps']} |",
                flush=True,
            )
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
