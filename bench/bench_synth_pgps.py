"""The PGPS-format corpus of `geo synth generate --pgps`: throughput in CPU time, its mix beside the test splits.

Usage::

    uv run python bench/bench_synth_pgps.py [--n 200] [--config pgps] [--per-figure 4] [--render]
        [--seed 0] [--jobs 1] [--out DIR] [--legacy] [--json OUT]

Generates ``n`` calculation records into a dataset folder (a temporary one unless ``--out``) with
``write_dataset(..., pgps=per_figure)``, which writes the PGPS problems of every record's figure to
``DIR/pgps/pgps.json`` (deduplicated). Prints the CPU seconds of the run (this process and its worker
processes, ``resource.getrusage``: on a shared machine wall time says little), the problems kept, the
duplicates dropped and problems per CPU second; then the operator, step-count and knowledge-type histograms of the
corpus beside those of the PGPS9K and Geometry3K test splits (``$GEO_SHARED/data/pgps``, default
``../shared``). The splits are passed to the writer as ``pgps_exclude``, so the corpus leaves out the
problems that pose a test problem (:func:`find_leaks`; the count is printed), and the check is run again
on the written corpus (it must find none). A last table gives the writing conventions of textbook PGPS
problems (numbered angles, equality chains, rounding instructions, figure and statement sizes) and the
question forms (the text with values, point names and letters blanked, as ``bench_transfer_cpu.py``
defines them): their count, and for each test split the share of its problems whose form the corpus
also asks. That share is measured on the test splits after the generator's phrasings were written; it
is a measurement, not something the phrasings were tuned to.

``--legacy`` measures the generator as it was before the PGPS output, the same way: the Euclid-Omni preset
(calculation solver cross-check and bridge), counting records that carry a verified PGPS program
(``pgps_program``) per CPU second.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_transfer_cpu import FEATURES, question_form
from geodsl.data import PGPSRecord, load_pgps
from geosynth.synth import load_config, pgps_json, read_records, write_dataset

ROOT = Path(__file__).resolve().parents[1]
SPLITS = ("pgps9k_test", "geometry3k_test")


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _splits() -> dict[str, list[PGPSRecord]]:
    folder = Path(os.environ.get("GEO_SHARED", ROOT.parent / "shared")) / "data" / "pgps"
    return {
        name: load_pgps(folder / f"{name}.json") for name in SPLITS if (folder / f"{name}.json").is_file()
    }


def _table(
    title: str, columns: dict[str, dict[str, int]], sizes: dict[str, int], *, numeric: bool = False
) -> list[str]:
    names = list(columns)
    keys = {k for c in columns.values() for k in c}
    # counts in their order; other keys most common in the first column first
    ordered = sorted(keys, key=int) if numeric else sorted(keys, key=lambda k: -columns[names[0]].get(k, 0))
    lines = [f"| {title} | " + " | ".join(f"{n} (n={sizes[n]})" for n in names) + " |"]
    lines.append("|---|" + "---|" * len(names))
    for key in ordered:
        cells = [
            f"{columns[n].get(key, 0)} ({100 * columns[n].get(key, 0) / max(1, sizes[n]):.1f}%)"
            for n in names
        ]
        lines.append(f"| {key} | " + " | ".join(cells) + " |")
    return lines


_CONVENTIONS = ("numbered angle (m \\angle 1)", "equality chain (a = b = c)")


def _conventions(sets: dict[str, list[PGPSRecord]]) -> tuple[list[str], dict[str, dict[str, float]]]:
    """The writing conventions of each set of problems (% of its problems) and its question forms."""
    features = dict(FEATURES)
    rows: dict[str, dict[str, float]] = {}
    corpus_forms = {question_form(r.text) for r in sets["corpus"]}
    for name, records in sets.items():
        entries = [pgps_json(r) for r in records]
        n = max(1, len(entries))
        row = {label: 100 * sum(features[label](e) for e in entries) / n for label in _CONVENTIONS}
        row["rounding instruction"] = 100 * sum("Round " in r.text for r in records) / n
        row["at most 6 structure clauses"] = (
            100 - 100 * sum(features["more than 6 structure clauses"](e) for e in entries) / n
        )
        row["more than 4 semantic clauses"] = (
            100 * sum(features["more than 4 semantic clauses"](e) for e in entries) / n
        )
        row["question forms (count)"] = len({question_form(r.text) for r in records})
        if name != "corpus":
            row["question form the corpus asks"] = (
                100 * sum(question_form(r.text) in corpus_forms for r in records) / n
            )
        rows[name] = row
    names = list(sets)
    lines = ["| writing | " + " | ".join(f"{n} (n={len(sets[n])})" for n in names) + " |"]
    lines.append("|---|" + "---|" * len(names))
    for label in rows["corpus"] | rows.get(names[-1], {}):
        cells = [
            "-"
            if label not in rows[n]
            else f"{rows[n][label]:.0f}"
            if "count" in label
            else f"{rows[n][label]:.1f}%"
            for n in names
        ]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines, rows


def _run(args: argparse.Namespace, out: Path, exclude: list[PGPSRecord]) -> dict[str, Any]:
    config = load_config("euclid-omni" if args.legacy else args.config)
    start_cpu, start_wall = _cpu(), time.perf_counter()
    # The writer before the PGPS output has no pgps options; the corpus leaves out what a test split poses.
    options: dict[str, Any] = {} if args.legacy else {"pgps": args.per_figure, "pgps_exclude": exclude}
    _, failed = write_dataset(
        config,
        args.n,
        args.seed,
        out,
        task="calculation",
        shard_size=args.shard_size,
        jobs=args.jobs,
        render=args.render,
        **options,
    )
    cpu, wall = _cpu() - start_cpu, time.perf_counter() - start_wall
    records = read_records(out)
    row: dict[str, Any] = {
        "mode": "legacy (euclid-omni, bridged records)" if args.legacy else f"pgps ({args.config})",
        "records": len(records),
        "gave_up": len(failed),
        "cpu_seconds": round(cpu, 1),
        "wall_seconds": round(wall, 1),
    }
    if args.legacy:
        bridged = sum(r.pgps_program is not None for r in records)
        row |= {"problems": bridged, "problems_per_cpu_second": round(bridged / cpu, 3)}
        return row
    stats = json.loads((out / "pgps" / "stats.json").read_text(encoding="utf-8"))
    row |= {
        "problems": stats["problems"],
        "duplicates_dropped": stats["duplicates"],
        "test_matches_dropped": stats["test_matches"],
        "problems_per_cpu_second": round(stats["problems"] / cpu, 3),
        "cpu_seconds_per_record": round(cpu / max(1, len(records)), 3),
    }
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description="Throughput and mix of the PGPS-format synthetic corpus.")
    parser.add_argument("--n", type=int, default=200, help="calculation records (figures)")
    parser.add_argument("--config", default="pgps", help="generator preset or YAML file")
    parser.add_argument("--per-figure", type=int, default=4, help="PGPS problems per record's figure")
    parser.add_argument("--render", action="store_true", help="also draw every diagram")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--shard-size", type=int, default=50)
    parser.add_argument("--out", type=Path, default=None, help="keep the dataset folder here")
    parser.add_argument(
        "--legacy", action="store_true", help="measure the Euclid-Omni bridged records instead"
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the results as JSON here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        out = args.out if args.out is not None else Path(scratch) / "ds"
        splits = {} if args.legacy else _splits()
        row = _run(args, out, [r for records in splits.values() for r in records])
        print(" ".join(f"{k}={v}" for k, v in row.items()))
        result: dict[str, Any] = {"run": row}
        if not args.legacy:
            from geosynth.synth import find_leaks, operator_histogram, step_histogram, type_histogram

            corpus = load_pgps(out / "pgps" / "pgps.json")
            if not splits:
                print("PGPS test splits not found (set GEO_SHARED): the corpus histograms only")
            sets = {"corpus": corpus, **splits}
            sizes = {k: len(v) for k, v in sets.items()}
            ops = {k: operator_histogram(v) for k, v in sets.items()}
            types = {k: type_histogram(v) for k, v in sets.items()}
            steps = {k: step_histogram(v) for k, v in sets.items()}
            print("\n".join(_table("operator (programs using it)", ops, sizes)))
            print()
            print("\n".join(_table("operator steps per program (Get aside)", steps, sizes, numeric=True)))
            print()
            print("\n".join(_table("problem type", types, sizes)))
            leaks = {name: find_leaks(corpus, records) for name, records in splits.items()}
            print(
                "\ntest problems the corpus poses (after leaving out matches):",
                {k: len(v) for k, v in leaks.items()},
            )
            result |= {
                "operators": ops,
                "steps": steps,
                "types": types,
                "leaks": {k: len(v) for k, v in leaks.items()},
            }
            table, conventions = _conventions(sets)
            print()
            print("\n".join(table))
            result["conventions"] = conventions
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
