"""Newclid against the geosynth engine on JGEX-AG-231 and IMO-AG-30, the same per-problem limit for both.

Usage: ``uv run python bench/bench_newclid.py [--timeout 30] [--jobs 1] [--only jgex|imo|none] [--limit N]
[--skip-cli] [--newclid-file FILE ...]``. The data comes from GEO_SHARED (default ``../shared``); without it
the script says so and exits 1. ``--newclid-file`` adds problem files written in Newclid's dialect, such as
the harder sets Newclid ships in its source distribution (``pip download --no-deps --no-binary :all:
newclid==3.0.1``, then ``problems_datasets/imo_sl.txt``, ``usamo.txt``, ``larger_imo_eval.txt``): Newclid
reads them as they are and geo with ``--dialect newclid``.

Newclid runs in its own virtual environment, ``.bench/newclid-venv`` (created on first use with
``python -m venv`` and ``pip install`` of the pinned versions below; PyPI must be reachable that once).
Newclid reads the AlphaGeometry problem format itself (name line, problem line), so nothing is
translated; a problem Newclid cannot build is counted as an error with its reason.

Each engine is run twice:

- as a user would: Newclid's own CLI, one process per problem (``newclid --seed 0 jgex --file F
  --problem-id NAME``, killed at the limit), and ``geo engine solve F --timeout T --jobs J``; this gives the
  whole-run wall time and the peak resident memory of the run (``getrusage(RUSAGE_CHILDREN)`` of a
  wrapper process: the largest process of the run, parent or worker);
- in-process (one Python process, ``SIGALRM`` at the limit): Newclid's ``GeometricSolverBuilder``
  (``run()``, then ``proof()`` when solved) and ``geosynth.solve_one`` (which traces the proof of a solved
  problem); this gives the median seconds per solved problem, proof included, without start-up costs.

The side-by-side table prints solved counts, the problems each solves that the other does not, whole-run
wall time, median and max seconds per solved problem and peak RSS. Timings on a shared machine are
provisional.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".bench" / "newclid-venv"
PINS = ("newclid==3.0.1", "py-yuclid==3.0.0", "pyyaml==6.0.4")
"""What the Newclid environment gets (the versions this comparison was made with)."""
FILES = ("jgex_ag_231.txt", "imo_ag_30.txt")


class _Timeout(Exception):
    """Raised by the alarm when one in-process problem reaches the limit."""


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    raise _Timeout


def read_pairs(path: Path) -> list[tuple[str, str]]:
    """Name and problem line pairs of a problem file (the layout both engines read)."""
    lines = [ln.strip() for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    return list(zip(lines[0::2], lines[1::2], strict=True))


def ensure_venv() -> Path:
    """The Newclid interpreter, creating the environment on first use."""
    python = VENV / "bin" / "python"
    if not python.is_file():
        print(f"creating {VENV} ({', '.join(PINS)})", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *PINS], check=True)
    return python


def newclid_env() -> dict[str, str]:
    """Environment for Newclid: its venv's ``bin`` first (py-yuclid looks its binary up on PATH)."""
    env = dict(os.environ)
    env["PATH"] = f"{VENV / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def versions(python: Path) -> str:
    code = (
        "import importlib.metadata as m, sys; "
        "print(sys.version.split()[0], *(f'{p}=={m.version(p)}' for p in ('newclid', 'py-yuclid', 'numpy')))"
    )
    return subprocess.run(
        [str(python), "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()


# --- translation to Newclid's definitions -----------------------------------------------------------------

MISSING = frozenset({"cc_tangent0", "ninepoints", "on_aline2", "on_opline"})
"""AlphaGeometry constructions with no Newclid definition (problems using them cannot be translated)."""


@functools.cache
def _to_newclid() -> dict[str, tuple[str, tuple[int, ...]]]:
    """AlphaGeometry construction -> (Newclid's, the AlphaGeometry argument at each Newclid position): the
    inverse of the table geo reads Newclid's files with (``geosynth.engine.NEWCLID_REWRITES``)."""
    rewrites = importlib.import_module("geosynth.engine").NEWCLID_REWRITES
    out: dict[str, tuple[str, tuple[int, ...]]] = {}
    for theirs, (ours, order) in rewrites.items():
        inverse = [0] * len(order)
        for position, argument in enumerate(order):
            inverse[argument] = position
        out[ours] = (theirs, tuple(inverse))
    return out


def _translate_call(name: str, args: list[str]) -> tuple[str, bool]:
    target, order = _to_newclid().get(name, (name, ()))
    if order and len(args) == len(order):
        args = [args[i] for i in order]
    at = importlib.import_module("geosynth.engine").NEWCLID_ANGLES.get(name)  # degrees there, marked `60o`
    if at is not None and len(args) > at and args[at].lstrip("-").isdigit():
        args = [*args[:at], args[at] + "o", *args[at + 1 :]]
    return " ".join((target, *args)), name not in MISSING


def translate_line(line: str) -> tuple[str, bool]:
    """A problem line in Newclid's definitions, and whether every construction has a Newclid counterpart.

    Constructions are first brought to full form by geosynth's parser (Newclid does not read the short
    form ``a b c = triangle``); the goal is kept as written.
    """
    geosynth = importlib.import_module("geosynth")
    problem = geosynth.parse_problem(line)
    body, sep, goal = line.partition("?")
    lefts = [clause.partition("=")[0].strip() for clause in body.split(";")]  # keeps position hints
    clauses: list[str] = []
    complete = True
    for left, clause in zip(lefts, problem.clauses, strict=True):
        calls: list[str] = []
        for call in clause.constructions:
            text, known = _translate_call(call.name, list(call.args))
            calls.append(text)
            complete &= known
        clauses.append(f"{left} = {', '.join(calls)}")
    return "; ".join(clauses) + (f" ? {goal.strip()}" if sep else ""), complete


def translate_file(path: Path) -> tuple[Path, int, list[str]]:
    """Write the Newclid version of a problem file under ``.bench/``.

    Returns:
        The new file, how many problems changed, and the names of problems that cannot be translated.
    """
    out: list[str] = []
    changed, missing = 0, []
    for name, line in read_pairs(path):
        translated, complete = translate_line(line)
        changed += translated.split() != line.split()
        if not complete:
            missing.append(name)
        out.append(f"{name}\n{translated}\n")
    target = ROOT / ".bench" / f"newclid_{path.name}"
    target.write_text("".join(out), encoding="utf-8")
    return target, changed, missing


# --- measurement subcommands (each runs in its own process, so RUSAGE_CHILDREN is its own run's) -------


def _emit(payload: dict[str, Any]) -> None:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    payload["peak_rss_mb"] = round(max(usage, own) / 1024, 1)
    print("RESULT " + json.dumps(payload), flush=True)


def newclid_cli(path: Path, timeout: float, limit: int | None) -> None:
    """Newclid's CLI, one process per problem, killed at ``timeout``."""
    newclid = VENV / "bin" / "newclid"
    rows: dict[str, dict[str, Any]] = {}
    start = time.perf_counter()
    for name, _ in read_pairs(path)[:limit]:
        began = time.perf_counter()
        command = [str(newclid), "--seed", "0", "jgex", "--file", str(path), "--problem-id", name]
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=timeout, env=newclid_env(), check=False
            )
        except subprocess.TimeoutExpired:
            rows[name] = {"solved": False, "timed_out": True, "seconds": time.perf_counter() - began}
            continue
        solved = done.returncode == 0 and '"success": true' in done.stderr
        row: dict[str, Any] = {"solved": solved, "seconds": time.perf_counter() - began}
        if done.returncode != 0:
            row["error"] = (done.stderr.strip().splitlines() or ["no output"])[-1][:200]
        rows[name] = row
    _emit({"rows": rows, "wall": time.perf_counter() - start})


def _timed(fn: Callable[[], tuple[bool, bool]], timeout: float) -> dict[str, Any]:
    """One in-process run; ``fn`` says whether it solved and whether the engine stopped at its own limit."""
    began = time.perf_counter()
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        solved, stopped = fn()
    except _Timeout:
        return {"solved": False, "timed_out": True, "seconds": time.perf_counter() - began}
    except Exception as err:  # any failure of the engine under test is a per-problem result
        return {
            "solved": False,
            "seconds": time.perf_counter() - began,
            "error": f"{type(err).__name__}: {err}"[:200],
        }
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    row: dict[str, Any] = {"solved": solved, "seconds": time.perf_counter() - began}
    return row | ({"timed_out": True} if stopped and not solved else {})


def newclid_inprocess(path: Path, timeout: float, limit: int | None) -> None:
    """Newclid in this process (run with the Newclid interpreter): build the problem, run the solver."""
    np = importlib.import_module("numpy")
    api = importlib.import_module("newclid.api")
    builder_module = importlib.import_module("newclid.jgex.problem_builder")
    formulation = importlib.import_module("newclid.jgex.formulation")
    problems = formulation.jgex_formulation_from_txt_file(path)
    signal.signal(signal.SIGALRM, _on_alarm)

    searched: dict[str, float] = {}

    def one(name: str) -> Callable[[], tuple[bool, bool]]:
        def run() -> tuple[bool, bool]:
            began = time.perf_counter()
            builder = builder_module.JGEXProblemBuilder(rng=np.random.default_rng(0)).with_problem(
                problems[name]
            )
            solver = api.GeometricSolverBuilder(np.random.default_rng(0)).build(builder.build())
            solved = bool(solver.run())
            searched[name] = time.perf_counter() - began
            if solved:  # the proof text, as geo's solve_one traces its proof: both times end with a proof
                solver.proof()
            return solved, False

        return run

    start = time.perf_counter()
    rows: dict[str, dict[str, Any]] = {}
    for name, _ in read_pairs(path)[:limit]:
        rows[name] = _timed(one(name), timeout)
        if rows[name]["solved"]:
            rows[name]["search_seconds"] = searched[name]
    _emit({"rows": rows, "wall": time.perf_counter() - start})


def geo_cli(path: Path, timeout: float, jobs: int, limit: int | None, dialect: str) -> None:
    """``geo engine solve`` on the file (a temporary copy when ``limit`` cuts it)."""
    target = path
    if limit is not None:
        target = ROOT / ".bench" / f"cut_{path.name}"
        target.write_text("".join(f"{n}\n{p}\n" for n, p in read_pairs(path)[:limit]), encoding="utf-8")
    geo = Path(sys.executable).parent / "geo"
    command = [str(geo), "engine", "solve", str(target), "--timeout", str(timeout), "--jobs", str(jobs),
               "--dialect", dialect]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    rows: dict[str, dict[str, Any]] = {}
    for line in done.stdout.splitlines():
        row = json.loads(line)
        rows[row.pop("name")] = row
    if done.returncode != 0:
        print(f"geo engine solve exited {done.returncode}: {done.stderr.strip()[-300:]}", flush=True)
    _emit({"rows": rows, "wall": wall})


def geo_inprocess(path: Path, timeout: float, limit: int | None, dialect: str) -> None:
    """``geosynth.solve_one`` in this process, one problem after another (a line that does not parse is an error row)."""
    geosynth = importlib.import_module("geosynth")
    engine = importlib.import_module("geosynth.engine")
    problems: list[Any] = []
    broken: dict[str, dict[str, Any]] = {}
    for name, line in read_pairs(path)[:limit]:
        try:
            problems.append(geosynth.parse_problem(engine.from_dialect(line, dialect), name))
        except geosynth.GeoSynthError as err:
            broken[name] = {"solved": False, "seconds": 0.0, "error": f"{type(err).__name__}: {err}"[:200]}
    signal.signal(signal.SIGALRM, _on_alarm)

    def one(problem: Any) -> Callable[[], tuple[bool, bool]]:
        def run() -> tuple[bool, bool]:
            # the engine's own limit (a little under the alarm) ends most long runs: a timeout too
            result, _ = geosynth.solve_one(problem, seed=0, time_limit=timeout * 0.9)
            return bool(result.solved), bool(result.timed_out)

        return run

    start = time.perf_counter()
    rows = {p.name: _timed(one(p), timeout) for p in problems}
    _emit({"rows": {**rows, **broken}, "wall": time.perf_counter() - start})


# --- the comparison ------------------------------------------------------------------------------------


def measure(command: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run one measurement subcommand and return its result."""
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False, cwd=ROOT)
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            result: dict[str, Any] = json.loads(line.removeprefix("RESULT "))
            return result
    raise RuntimeError(f"{' '.join(command[:4])} gave no result: {done.stderr.strip()[-500:]}")


def summary(result: dict[str, Any]) -> dict[str, Any]:
    rows: dict[str, dict[str, Any]] = result["rows"]
    solved = sorted(n for n, r in rows.items() if r["solved"])
    times = [rows[n]["seconds"] for n in solved] or [0.0]
    return {
        "solved": solved,
        "count": f"{len(solved)}/{len(rows)}",
        "timeouts": sum(bool(r.get("timed_out")) for r in rows.values()),
        "errors": sum(r.get("error") is not None for r in rows.values()),
        "median": statistics.median(times),
        "max": max(times),
        "wall": result["wall"],
        "rss": result["peak_rss_mb"],
        "search": [rows[n]["search_seconds"] for n in solved if "search_seconds" in rows[n]],
    }


def compare(path: Path, args: argparse.Namespace, python: Path, dialect: str = "alphageometry") -> None:
    """One file, both engines; a file in Newclid's dialect goes to Newclid as it is and to geo with ``--dialect``."""
    me = str(Path(__file__).resolve())
    common = [str(path), str(args.timeout), str(args.limit or 0)]
    if dialect == "newclid":
        translated, changed, missing = path, 0, []
    else:
        translated, changed, missing = translate_file(path)
    theirs = [str(translated), *common[1:]]
    runs: dict[str, dict[str, Any]] = {}
    runs["geo in-process"] = measure([sys.executable, me, "_geo-inprocess", *common, dialect])
    runs["geo CLI"] = measure([sys.executable, me, "_geo-cli", *common, str(args.jobs), dialect])
    runs["newclid in-process"] = measure([str(python), me, "_newclid-inprocess", *theirs], newclid_env())
    if not args.skip_cli:
        runs["newclid CLI"] = measure([sys.executable, me, "_newclid-cli", *theirs], newclid_env())
    stats = {k: summary(v) for k, v in runs.items()}
    print(
        f"\n{path.name} (limit {args.timeout:g} s per problem, geo --jobs {args.jobs}, Newclid 1 process at a time)"
    )
    print(
        f"{'run':<20} {'solved':>8} {'timeouts':>8} {'errors':>6} {'median s':>9} {'max s':>7} {'wall s':>8} {'peak MB':>8}"
    )
    for key, s in stats.items():
        print(
            f"{key:<20} {s['count']:>8} {s['timeouts']:>8} {s['errors']:>6} {s['median']:>9.3f} "
            f"{s['max']:>7.2f} {s['wall']:>8.1f} {s['rss']:>8.1f}"
        )
    if search := stats["newclid in-process"]["search"]:
        print(
            f"  newclid in-process without its proof (run() only): median {statistics.median(search):.3f} s"
        )
    ours, theirs = set(stats["geo CLI"]["solved"]), set(stats["newclid in-process"]["solved"])
    if dialect == "newclid":
        print("  written in Newclid's dialect: Newclid reads it as it is, geo with --dialect newclid")
    else:
        print(
            f"  translated for Newclid: {changed} problems had constructions reordered or renamed; "
            f"{len(missing)} could not be translated{': ' + ' '.join(missing) if missing else ''}"
        )
    broken = {n: r["error"] for n, r in runs["geo in-process"]["rows"].items() if r.get("error")}
    print(f"  geo could not read or run {len(broken)} problems:")
    for name, why in broken.items():
        print(f"    {name}: {why}")
    print(f"  solved by geo only ({len(ours - theirs)}): {' '.join(sorted(ours - theirs))}")
    print(f"  solved by Newclid only ({len(theirs - ours)}): {' '.join(sorted(theirs - ours))}")
    errors = {n: r["error"] for n, r in runs["newclid in-process"]["rows"].items() if r.get("error")}
    print(f"  Newclid could not build or run {len(errors)} problems:")
    for name, why in errors.items():
        print(f"    {name}: {why}")
    if args.json:
        out = ROOT / ".bench" / f"newclid_{path.stem}.json"
        out.write_text(json.dumps(runs, indent=1), encoding="utf-8")
        print(f"  raw rows: {out}")


SUBCOMMANDS: dict[str, Callable[[list[str]], None]] = {
    "_newclid-cli": lambda a: newclid_cli(Path(a[0]), float(a[1]), int(a[2]) or None),
    "_newclid-inprocess": lambda a: newclid_inprocess(Path(a[0]), float(a[1]), int(a[2]) or None),
    "_geo-cli": lambda a: geo_cli(Path(a[0]), float(a[1]), int(a[3]), int(a[2]) or None, a[4]),
    "_geo-inprocess": lambda a: geo_inprocess(Path(a[0]), float(a[1]), int(a[2]) or None, a[3]),
}


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] in SUBCOMMANDS:
        SUBCOMMANDS[sys.argv[1]](sys.argv[2:])
        return 0
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per problem, both engines")
    parser.add_argument("--jobs", type=int, default=1, help="geo engine solve --jobs")
    parser.add_argument("--limit", type=int, default=None, help="first N problems of each file")
    parser.add_argument("--only", default=None, help="jgex or imo (none: only the --newclid-file files)")
    parser.add_argument(
        "--newclid-file", type=Path, action="append", default=[], help="a problem file in Newclid's dialect"
    )
    parser.add_argument(
        "--skip-cli", action="store_true", help="skip the slow one-process-per-problem Newclid run"
    )
    parser.add_argument("--json", action="store_true", help="also write the raw rows under .bench/")
    args = parser.parse_args()
    shared = Path(os.environ.get("GEO_SHARED", ROOT.parent / "shared")) / "data" / "alphageometry"
    if args.only != "none" and not shared.is_dir():
        print(f"no benchmark data at {shared}; set GEO_SHARED")
        return 1
    for extra in args.newclid_file:
        if not extra.is_file():
            print(f"--newclid-file {extra}: no such file")
            return 1
    python = ensure_venv()
    print(f"Newclid environment: {versions(python)}; geo: Python {sys.version.split()[0]}")
    for name in FILES:
        if args.only is None or name.startswith(args.only):
            compare(shared / name, args, python)
    for extra in args.newclid_file:
        compare(extra.resolve(), args, python, dialect="newclid")
    return 0


if __name__ == "__main__":
    sys.exit(main())
