"""Throughput of the MTS pipeline without an LLM: instantiate + PAL + verify on the PGPS test splits.

Usage:
    uv run python bench/bench_mts.py [--jobs 2] [--splits pgps9k_test.json geometry3k_test.json] [--keep DIR]

Reads ``$GEO_SHARED/data/pgps/<split>`` (GEO_SHARED defaults to ``../shared`` beside the
repository; the benchmark exits cleanly when it is missing). For each split it runs
``geosynth.mts.run_mts`` into a fresh folder (no mixtures), then reruns it into the same folder
(everything resumed) and into a second fresh folder (to check byte-for-byte repeatability), and
prints: problems, PAL traces verified, failures with their reasons, seconds per stage, programs per
second through load + PAL + verify, the resumed run's seconds, and the median length of the PAL
traces and of the PAL PA targets (clauses + trace) in words-and-punctuation tokens
(``geosynth.mts.default_token_count``, the counter the mixtures use). Target: the 1,000 PGPS9K test
programs in under 2 minutes on 2 cores, at least 99% verified.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from geosynth.mts import MTSConfig, default_token_count, record_tokens, run_mts


def _shared_root() -> Path:
    default = Path(__file__).resolve().parents[1].parent / "shared"
    return Path(os.environ.get("GEO_SHARED", default))


def _digest(out: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(out.rglob("*")):
        if p.is_file() and p.name != "timings.json" and "work" not in p.parts:
            h.update(str(p.relative_to(out)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def _median_tokens(out: Path) -> tuple[float, float]:
    """Median tokens of the verified PAL traces, and of the PAL PA records' assistant targets."""
    traces = [json.loads(r)["text"] for r in (out / "traces" / "pal.jsonl").read_text().splitlines()]
    records = [json.loads(r) for r in (out / "pa" / "pal.jsonl").read_text().splitlines()]
    if not traces:
        return 0.0, 0.0
    return (
        statistics.median(default_token_count(t) for t in traces),
        statistics.median(record_tokens(r) for r in records),
    )


def _bench(path: Path, jobs: int, keep: Path | None) -> bool:
    config = MTSConfig(jobs=jobs, mixtures=False)
    with tempfile.TemporaryDirectory() as tmp:
        out = (keep / path.stem) if keep else Path(tmp) / "a"
        start = time.perf_counter()
        run = run_mts(path, out, config)
        wall = time.perf_counter() - start
        resume_start = time.perf_counter()
        resumed = run_mts(path, out, config)
        resume_wall = time.perf_counter() - resume_start
        twin = Path(tmp) / "b"
        run_mts(path, twin, config)
        same = _digest(out) == _digest(twin)
        trace_tokens, target_tokens = _median_tokens(out)
    s = run.stats
    rate = s.pal_verified / max(1, s.problems)
    seconds = {k: round(v, 2) for k, v in run.seconds.items() if v}
    print(
        f"{path.name}: {s.records} records, {s.problems} usable, PAL verified {s.pal_verified} "
        f"({100 * rate:.2f}%), failed {s.pal_failed}"
    )
    for row in (out / "drops.jsonl").read_text().splitlines() if keep else []:
        drop = json.loads(row)
        print(f"  drop {drop['problem_id']}: {drop['reason']}: {drop['detail'][:160]}")
    print(f"  wall {wall:.1f} s with {jobs} sandbox workers; per stage {seconds}")
    print(f"  throughput {s.problems / wall:.1f} programs/s end to end")
    print(f"  median PAL trace {trace_tokens:.0f} tokens, median PAL PA target {target_tokens:.0f} tokens")
    print(
        f"  resumed rerun {resume_wall:.1f} s ({sum(resumed.computed.values())} shards recomputed); "
        f"byte-identical outputs on a fresh rerun: {same}"
    )
    return rate >= 0.99 and same and not sum(resumed.computed.values())


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--splits", nargs="+", default=["pgps9k_test.json", "geometry3k_test.json"])
    parser.add_argument(
        "--keep", type=Path, default=None, help="keep the first run's outputs under this folder"
    )
    args = parser.parse_args()
    root = _shared_root() / "data" / "pgps"
    if not root.is_dir():
        print(f"skipped: {root} not found (set GEO_SHARED)")
        return 0
    ok = all([_bench(root / split, args.jobs, args.keep) for split in args.splits])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
