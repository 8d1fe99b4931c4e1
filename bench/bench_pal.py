"""PAL scripts from ``geodsl.to_pal`` on the PGPS test splits: size, and agreement when they run.

Sizes: median bytes and median "token-ish" length (runs of word characters, and every other
non-space character, counted separately) of the scripts, next to the figures of the previous
translator (a generic solver harness in every script; measured once on the same programs, the
code is gone). Agreement (``--run``): every script runs in ``geodsl.sandbox`` and its printed
answer is compared with the numeric executor's and with the stored answer (within 5e-3).

    uv run python bench/bench_pal.py                 # sizes only (seconds)
    uv run python bench/bench_pal.py --run --jobs 2  # plus sandbox agreement (minutes on 2 cores)

Data: $GEO_SHARED/data/pgps/{pgps9k,geometry3k}_test.json (GEO_SHARED defaults to ../shared beside
the repository); the script exits cleanly with a note when they are missing.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
from pathlib import Path

import geodsl
from geodsl.data import ANSWER_TOLERANCE, load_pgps
from geodsl.sandbox import Sandbox, SandboxLimits

ROOT = Path(__file__).resolve().parent.parent
SPLITS = ("pgps9k_test", "geometry3k_test")
TOKEN = re.compile(r"\w+|[^\w\s]")
BEFORE = {"bytes": 3900, "tokens": 1024}
"""Median bytes / token-ish length of the previous translator's scripts on both splits (1589 programs)."""


def _shared() -> Path:
    return Path(os.environ.get("GEO_SHARED", ROOT.parent / "shared"))


def _median(values: list[int]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--run", action="store_true", help="run every script in the sandbox and compare answers"
    )
    parser.add_argument("--jobs", type=int, default=2, help="sandbox workers (default 2)")
    parser.add_argument("--limit", type=int, default=0, help="use only the first N programs of each split")
    args = parser.parse_args()
    data = _shared() / "data" / "pgps"
    if not all((data / f"{s}.json").is_file() for s in SPLITS):
        print(f"PGPS test splits not found under {data}; set GEO_SHARED. Nothing to measure.")
        return 0
    rows: list[tuple[str, str, str, float, str]] = []  # split, id, script, executor answer, stored answer
    failures: list[str] = []
    started = time.perf_counter()
    for split in SPLITS:
        records = load_pgps(data / f"{split}.json")
        for record in records[: args.limit or None]:
            try:
                expected = geodsl.execute(record.expression, record.numbers).answer
                rows.append(
                    (
                        split,
                        record.id,
                        geodsl.to_pal(record.expression, record.numbers),
                        expected,
                        record.answer,
                    )
                )
            except geodsl.GeoDSLError as exc:
                failures.append(f"{split} {record.id}: no script: {exc}")
    seconds = time.perf_counter() - started
    sizes = [len(r[2].encode()) for r in rows]
    tokens = [len(TOKEN.findall(r[2])) for r in rows]
    print(f"scripts: {len(rows)} ({len(failures)} programs without one), translated in {seconds:.1f} s")
    print(f"{'':14}{'median bytes':>14}{'median tokens':>15}{'max bytes':>11}")
    print(f"{'before':14}{BEFORE['bytes']:>14}{BEFORE['tokens']:>15}{'':>11}")
    print(f"{'after':14}{_median(sizes):>14.0f}{_median(tokens):>15.0f}{max(sizes, default=0):>11}")
    uses_pick = sum("def pick(" in r[2] for r in rows)
    print(f"scripts defining the root-rule helper: {uses_pick} / {len(rows)}")
    if args.run:
        failures += _agreement(rows, args.jobs)
    for line in failures:
        print("MISS", line)
    return 0


def _agreement(rows: list[tuple[str, str, str, float, str]], jobs: int) -> list[str]:
    started = time.perf_counter()
    with Sandbox(workers=jobs, limits=SandboxLimits(wall_seconds=30.0, cpu_seconds=30.0)) as sandbox:
        results = sandbox.run([r[2] for r in rows])
    misses: list[str] = []
    # per split: total, agree with the executor, with the stored answer, print the stored answer's string
    per_split: dict[str, list[int]] = {s: [0, 0, 0, 0] for s in SPLITS}
    for (split, rid, _, expected, stored), result in zip(rows, results, strict=True):
        counts = per_split[split]
        counts[0] += 1
        got = result.answer
        if got is None:
            misses.append(f"{split} {rid}: {result.error}")
            continue
        counts[1] += abs(got - expected) <= ANSWER_TOLERANCE
        counts[2] += abs(got - float(stored)) <= ANSWER_TOLERANCE
        counts[3] += result.stdout.strip() == stored
        if result.stdout.strip() != stored:
            print(f"string differs: {split} {rid}: script {result.stdout.strip()}, stored {stored}")
        if abs(got - expected) > ANSWER_TOLERANCE or abs(got - float(stored)) > ANSWER_TOLERANCE:
            misses.append(f"{split} {rid}: script {got:.3f}, executor {expected:.3f}, stored {stored}")
    seconds = sorted(r.seconds for r in results)
    print(
        f"ran {len(rows)} scripts in the sandbox in {time.perf_counter() - started:.1f} s; per script: "
        f"median {statistics.median(seconds):.2f} s, 95th percentile {seconds[int(0.95 * (len(seconds) - 1))]:.2f} s, "
        f"max {seconds[-1]:.2f} s"
    )
    for split, (total, agree, stored_ok, same_text) in per_split.items():
        print(
            f"{split}: agree with executor {agree} / {total} ({100 * agree / max(total, 1):.2f}%), "
            f"with stored answer {stored_ok} / {total}, same 3-decimal string {same_text} / {total}"
        )
    return misses


if __name__ == "__main__":
    sys.exit(main())
