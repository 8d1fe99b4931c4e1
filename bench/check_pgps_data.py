"""Load the full PGPS-format test splits and check their N lists (and answers, when an executor exists).

Usage:
    uv run python bench/check_pgps_data.py [--misses N]

Reads ``$GEO_SHARED/data/pgps/{geometry3k_test,pgps9k_test}.json`` (GEO_SHARED
defaults to ``../shared`` beside the repository) and prints, per split: records
loaded, records whose semantic values were de-duplicated, programs that use an
``N`` index outside the raw N list, programs whose letter operands are not
argument letters of the text, programs needing more than the 12 pointer slots
of the reference model, and load time. When ``geodsl.execute`` exists it also
runs every stored program on its raw N list and prints the agreement with the
stored answers (|diff| < 5e-3) and the first misses.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import geodsl
from geodsl.data import PGPSRecord, check_dataset, load_pgps

SPLITS = ("geometry3k_test.json", "pgps9k_test.json")
POINTER_SLOTS = 12


def _shared_root() -> Path:
    default = Path(__file__).resolve().parents[1].parent / "shared"
    return Path(os.environ.get("GEO_SHARED", default))


def _letter_operands(record: PGPSRecord) -> set[str]:
    return {t for t in record.expression.split() if len(t) == 1 and t.islower()}


def _report_split(path: Path, show_misses: int) -> None:
    start = time.perf_counter()
    records = load_pgps(path)
    elapsed = time.perf_counter() - start
    out_of_range = [r.id for r in records if r.out_of_range_n()]
    stray_letters = [r.id for r in records if _letter_operands(r) - set(r.letters)]
    deduped = sum(len(r.numbers) != len(r.dedup_numbers) for r in records)
    over_slots = sum(len(r.dedup_numbers) + len(r.letters) > POINTER_SLOTS for r in records)
    print(f"{path.name}: {len(records)} records loaded in {elapsed * 1000:.0f} ms")
    print(f"  de-duplicated semantic values: {deduped} records")
    print(f"  N index out of range: {len(out_of_range)} {out_of_range[:10]}")
    print(f"  letter operands that are no [ARG]: {len(stray_letters)} {stray_letters[:10]}")
    print(f"  more than {POINTER_SLOTS} pointer slots (numbers + letters): {over_slots}")
    if not hasattr(geodsl, "execute"):
        print("  answers: skipped (geodsl.execute not available)")
        return
    start = time.perf_counter()
    report = check_dataset(records)
    elapsed = time.perf_counter() - start
    print(
        f"  answers: {report.agree}/{report.total} agree ({report.agreement:.2%}), "
        f"{report.disagree} disagree, {report.error} errors, {report.crash} crashes, {elapsed:.1f} s"
    )
    for miss in report.misses[:show_misses]:
        outcome = f"got {miss.got}" if miss.error is None else miss.error
        print(f"    {miss.id}: expected {miss.expected}, {outcome} | {miss.expression}")


def main() -> int:
    parser = argparse.ArgumentParser(description="Check the N lists (and answers) of the PGPS test splits.")
    parser.add_argument("--misses", type=int, default=40, help="how many misses to list per split")
    args = parser.parse_args()
    root = _shared_root() / "data" / "pgps"
    if not root.is_dir():
        print(f"skipped: {root} not found (set GEO_SHARED)")
        return 0
    for split in SPLITS:
        _report_split(root / split, args.misses)
    return 0


if __name__ == "__main__":
    sys.exit(main())
