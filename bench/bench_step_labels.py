"""Step labels from the realised figure: soundness on the generator's programs, sensitivity to corruptions.

Usage::

    uv run python bench/bench_step_labels.py [--n 20] [--seed 0] [--per-figure 4] [--config pgps] [--json OUT]

Generates ``n`` calculation records with the ``pgps`` preset and writes up to ``per-figure`` PGPS problems
on each record's whole sampled figure, as ``geo synth generate --pgps`` does (``pgps_problems``, each with
its realised figure),
and labels every step of every problem's verified reference program with ``figure_step_labels``, in
both program styles (the N-index ``expression`` and its instantiated form, as the MTS program trace
writes it). **Soundness** is the share of those steps labelled correct (it must be 1). Then, per
corruption kind (``corrupt_program``: an N operand swapped for another value of the problem, an
operator replaced by one of the same operand count with a different equation, a constant replaced by
another vocabulary constant; one corruption of each kind per program where it applies, drawn with
``--seed``), **sensitivity** is the share of corrupted programs whose corrupted step is labelled wrong
(and, beside it, the share whose first wrong step is the corrupted one, and the share with any wrong
step). Every step not labelled correct on a reference program is printed.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path
from typing import Any

from geodsl import instantiate
from geosynth.synth import (
    CORRUPTION_KINDS,
    GenerationFailed,
    PGPSProblem,
    corrupt_program,
    figure_step_labels,
    generate_with_figure,
    load_config,
    pgps_problems,
)


def _problems(n: int, seed: int, per_figure: int, config_name: str) -> list[PGPSProblem]:
    config = load_config(config_name).model_copy(update={"time_limit": None})
    out: list[PGPSProblem] = []
    for index in range(n):
        try:
            record, figure = generate_with_figure(config, "calculation", seed, index)
        except GenerationFailed:
            continue
        out.extend(pgps_problems(figure, source=record.id, seed=record.seed, count=per_figure))
    return out


def run(n: int, seed: int, per_figure: int, config_name: str) -> dict[str, Any]:
    """Generate, label and corrupt; the figures as a dict."""
    start = time.process_time()
    problems = _problems(n, seed, per_figure, config_name)
    made = time.process_time() - start
    steps = correct = programs = clean = 0
    misses: list[str] = []
    start = time.process_time()
    for problem in problems:
        figured = problem.figured()
        record = problem.record
        for program in (record.expression, instantiate(record.expression, record.numbers).text):
            labels = figure_step_labels(figured, program)
            programs += 1
            clean += all(labels.labels)
            steps += len(labels.steps)
            correct += sum(labels.labels)
            misses.extend(f"{record.id}: {s.step}: {s.reason}" for s in labels.steps if not s.correct)
    labelled = time.process_time() - start
    rng = random.Random(seed)
    sensitivity: dict[str, dict[str, float | int]] = {}
    for kind in CORRUPTION_KINDS:
        total = caught = first = anywhere = 0
        for problem in problems:
            corrupted = corrupt_program(problem.record.expression, problem.record.numbers, kind, rng)
            if corrupted is None:
                continue
            labels = figure_step_labels(problem.figured(), corrupted.program)
            total += 1
            caught += not labels.steps[corrupted.step].correct
            first += labels.first_wrong == corrupted.step
            anywhere += labels.first_wrong is not None
        sensitivity[kind] = {
            "programs": total,
            "corrupted_step_wrong": caught / total if total else 0.0,
            "first_wrong_is_corrupted": first / total if total else 0.0,
            "some_step_wrong": anywhere / total if total else 0.0,
        }
    return {
        "records": n,
        "seed": seed,
        "problems": len(problems),
        "programs": programs,
        "steps": steps,
        "soundness": correct / steps if steps else 0.0,
        "programs_all_correct": clean / programs if programs else 0.0,
        "misses": misses,
        "sensitivity": sensitivity,
        "cpu_s_generate": round(made, 2),
        "cpu_ms_per_program_label": round(1000 * labelled / programs, 2) if programs else 0.0,
    }


def main() -> None:
    """Print the measurement (and write it as JSON with ``--json``)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20, help="calculation records (figures) to generate")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--per-figure", type=int, default=4)
    parser.add_argument("--config", default="pgps")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    result = run(args.n, args.seed, args.per_figure, args.config)
    print(
        f"{result['problems']} problems on {args.n} figures (seed {args.seed}), {result['programs']} programs "
        f"in both styles, {result['steps']} steps"
    )
    print(
        f"soundness: {result['soundness']:.4f} of reference steps labelled correct "
        f"({result['programs_all_correct']:.4f} of programs entirely)"
    )
    for line in result["misses"]:
        print(f"  miss: {line}")
    print("| corruption | programs | corrupted step wrong | first wrong = corrupted | some step wrong |")
    print("|---|---|---|---|---|")
    for kind, row in result["sensitivity"].items():
        print(
            f"| {kind} | {row['programs']} | {row['corrupted_step_wrong']:.3f} | "
            f"{row['first_wrong_is_corrupted']:.3f} | {row['some_step_wrong']:.3f} |"
        )
    print(
        f"CPU: {result['cpu_s_generate']} s generating, {result['cpu_ms_per_program_label']} ms labelling "
        "per program"
    )
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
