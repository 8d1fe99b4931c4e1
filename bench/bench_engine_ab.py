"""The engine at a base git revision against the working tree, side by side in one run.

Usage: ``uv run python bench/bench_engine_ab.py --base REV [--timeout 30] [--limit N] [--dialect D] [FILE ...]``
(files default to JGEX-AG-231 and IMO-AG-30 under GEO_SHARED, default ../shared; ``--dialect newclid``
for files written against Newclid's definitions, such as its ``imo_sl.txt``, rewritten by the working
tree's ``from_dialect`` before either version reads them). The base revision is
checked out into a temporary git worktree; two worker processes, one importing each version of
geosynth, take every problem in turn (base first, then the working tree), so both see the same load.
Prints per file and version the problems solved, errors, timeouts, the median seconds per solved
problem and the total, the problems only one version solves, and the ratio base / working tree of the
time on the problems both solve.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[1]

WORKER = r"""
import json, sys, time
import geosynth
for raw in sys.stdin:
    name, line, limit = json.loads(raw)
    t = time.perf_counter()
    try:
        result, _ = geosynth.solve_one(geosynth.parse_problem(line, name), seed=0, time_limit=limit)
        row = [bool(result.solved), bool(result.timed_out), None]
    except Exception as exc:  # a crash is a row, not the end of the run
        row = [False, False, type(exc).__name__]
    print(json.dumps([*row, time.perf_counter() - t]), flush=True)
"""


def _pairs(path: Path, limit: int | None) -> list[tuple[str, str]]:
    lines = [x for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    return [(lines[i], lines[i + 1]) for i in range(0, len(lines) - 1, 2)][:limit]


def _ask(proc: subprocess.Popen[str], name: str, line: str, limit: float) -> list[Any]:
    stdin: IO[str] | None = proc.stdin
    stdout: IO[str] | None = proc.stdout
    assert stdin is not None and stdout is not None
    stdin.write(json.dumps([name, line, limit]) + "\n")
    stdin.flush()
    return json.loads(stdout.readline())


def _summary(label: str, rows: list[list[Any]], both: list[int]) -> str:
    solved = [r[3] for r in rows if r[0]]
    median = f"{statistics.median(solved):.3f}" if solved else "-"
    return (
        f"  {label}: solved {len(solved)}/{len(rows)}, errors {sum(1 for r in rows if r[2])}, "
        f"timeouts {sum(1 for r in rows if r[1])}, median s per solved {median}, "
        f"total {sum(r[3] for r in rows):.1f} s, on the {len(both)} both solve {sum(rows[i][3] for i in both):.1f} s"
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description="The engine at a base git revision against the working tree."
    )
    parser.add_argument("--base", required=True, help="git revision of the baseline engine")
    parser.add_argument("--timeout", type=float, default=30.0, help="the engine's time limit per problem")
    parser.add_argument("--limit", type=int, default=None, help="first N problems of each file")
    parser.add_argument("--dialect", choices=("alphageometry", "newclid"), default="alphageometry",
                        help="whose construction definitions the files are written against")  # fmt: skip
    parser.add_argument("files", nargs="*", type=Path)
    args = parser.parse_args()
    shared = Path(os.environ.get("GEO_SHARED", ROOT.parent / "shared")) / "data" / "alphageometry"
    files: list[Path] = args.files or [shared / "jgex_ag_231.txt", shared / "imo_ag_30.txt"]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        print(
            f"bench_engine_ab: no such problem file: {', '.join(missing)} (set GEO_SHARED)", file=sys.stderr
        )
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "base"
        made = subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), args.base],
                              capture_output=True, text=True)  # fmt: skip
        if made.returncode:
            print(f"bench_engine_ab: --base {args.base}: {made.stderr.strip()}", file=sys.stderr)
            return 1
        try:
            sources = {"base": tree / "packages/geosynth/src", "tree": ROOT / "packages/geosynth/src"}
            procs = {
                label: subprocess.Popen(
                    [sys.executable, "-c", WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                    env={**os.environ, "PYTHONPATH": str(src), "OMP_NUM_THREADS": "1"},
                )
                for label, src in sources.items()
            }  # fmt: skip
            for path in files:
                pairs = _pairs(path, args.limit)
                if args.dialect != "alphageometry":
                    from geosynth.engine import from_dialect

                    pairs = [(name, from_dialect(line, args.dialect)) for name, line in pairs]
                rows: dict[str, list[list[Any]]] = {label: [] for label in procs}
                for name, line in pairs:
                    for label, proc in procs.items():
                        rows[label].append(_ask(proc, name, line, args.timeout))
                both = [i for i in range(len(pairs)) if rows["base"][i][0] and rows["tree"][i][0]]
                print(
                    f"{path.name} ({args.timeout:g} s per problem; base {args.base} against the working tree)"
                )
                print(_summary(f"base {args.base}", rows["base"], both))
                print(_summary("working tree", rows["tree"], both))
                for label, other, said in (("base", "tree", "base"), ("tree", "base", "the working tree")):
                    only = [
                        pairs[i][0] for i in range(len(pairs)) if rows[label][i][0] and not rows[other][i][0]
                    ]
                    print(f"  solved by {said} only: {only or 'none'}")
                spent = sum(rows["tree"][i][3] for i in both)
                if spent:
                    print(f"  base / working tree, time on the problems both solve: "
                          f"{sum(rows['base'][i][3] for i in both) / spent:.3f}")  # fmt: skip
            for proc in procs.values():
                proc.terminate()
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], capture_output=True
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
