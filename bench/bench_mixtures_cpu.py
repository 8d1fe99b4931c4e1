"""Benchmark: models trained on different MTS mixtures, greedy accuracy per split, side by side in one run.

Each model is evaluated by the pipeline's own evaluate stage (the code the ``cpu`` and ``cpu-train``
presets run: the same prompts, decoding, answer extraction and geodsl execution), on the same PGPS files,
with the same settings; only the model differs. Decoding is greedy and seeded, so the figures repeat.
The table prints, per split, each model's greedy accuracy for each trace type it was asked for, and the
difference of every model from the first (the baseline).

Usage:
    uv run python bench/bench_mixtures_cpu.py \
        --model mts_all=runs/cpu-train/train/model --model program=runs/exp-prog/train/model \
        --split heldout=runs/cpu-train/data/heldout.json \
        --split pgps9k_test=../shared/data/pgps/pgps9k_test.json \
        [--traces program] [--limit N] [--max-tokens 96] [--workdir runs/bench-mixtures]

A model is a folder with a Hugging Face causal LM and its tokenizer (a pipeline run's ``train/model``).
Traces other than ``program`` are only meaningful for a model trained on them. The stage's work folders
stay under ``--workdir`` (one per model), so an interrupted run resumes problem by problem.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import yaml


def _pairs(values: list[str], what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            sys.exit(f"--{what} {value!r}: expected NAME=PATH")
        if not Path(path).expanduser().exists():
            sys.exit(f"--{what} {value!r}: {path} does not exist")
        out[name] = str(Path(path).expanduser().resolve())
    return out


def _config(name: str, model: str, splits: dict[str, str], args: argparse.Namespace) -> dict[str, Any]:
    split = {"source": "pgps_file"} | ({} if args.limit is None else {"limit": args.limit})
    return {
        "name": f"bench-mixtures-{name}",
        "data": {"splits": {s: {**split, "path": p} for s, p in splits.items()}, "draw_missing_diagrams": False},
        "mts": {"enabled": False},
        "evaluate": {
            "model": model, "setting": "clauses", "order": list(args.traces), "depth": 1,
            "temperature": 0.7, "max_tokens": args.max_tokens, "beam": False, "instructions": "pa",
            "batch_size": args.batch, "threads": 1, "sandbox_workers": 1, "sandbox_timeout": 3,
        },
        "hardware": {"summary": "2 CPU cores", "gpus": 0, "cpu_cores": 2},
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--model", action="append", required=True, help="NAME=FOLDER; the first is the baseline"
    )
    parser.add_argument("--split", action="append", required=True, help="NAME=PGPS_FILE")
    parser.add_argument("--traces", nargs="+", default=["program"])
    parser.add_argument("--limit", type=int, default=None, help="first N problems of each split")
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--workdir", type=Path, default=Path("runs/bench-mixtures"))
    args = parser.parse_args()
    models = _pairs(args.model, "model")
    splits = _pairs(args.split, "split")
    os.environ.setdefault("OMP_NUM_THREADS", "1")

    from geo_cli.pipeline import load_pipeline_config, run_pipeline

    results: dict[str, dict[str, Any]] = {}
    seconds: dict[str, float] = {}
    for name, model in models.items():
        folder = args.workdir / name
        folder.mkdir(parents=True, exist_ok=True)
        config_path = folder / "config.yaml"
        config_path.write_text(yaml.safe_dump(_config(name, model, splits, args), sort_keys=False))
        config, base = load_pipeline_config(str(config_path))
        start = time.perf_counter()
        outcomes = run_pipeline(config, base, folder / "run", until="evaluate")
        seconds[name] = time.perf_counter() - start
        evaluate = next(o for o in outcomes if o.name == "evaluate")
        if evaluate.action not in ("ran", "resumed", "cached"):
            sys.exit(f"model {name}: the evaluate stage did not run ({evaluate.action})")
        results[name] = json.loads((folder / "run" / "evaluate" / "results.json").read_text())

    baseline = next(iter(models))
    print(
        f"greedy accuracy (%), setting: clauses given; traces: {', '.join(args.traces)}; baseline: {baseline}"
    )
    header = ["split", "problems", "trace", *models, *(f"{m} - {baseline}" for m in list(models)[1:])]
    print(" | ".join(header))
    for split in splits:
        for trace in args.traces:
            row: list[float] = []
            problems = 0
            for name in models:
                entry = results[name]["splits"][split]
                problems = entry["problems"]
                row.append(float(entry["greedy"].get(trace, 0.0)))
            diffs = [f"{v - row[0]:+.1f}" for v in row[1:]]
            print(" | ".join([split, str(problems), trace, *(f"{v:.1f}" for v in row), *diffs]))
    print("evaluate wall time (s): " + ", ".join(f"{n} {s:.0f}" for n, s in seconds.items()))


if __name__ == "__main__":
    main()
