"""Formal Geometry3K (598 problems): how many answers the calculation solver gets within 2 % of the truth.

Usage: ``uv run python bench/bench_g3k.py [--timeout 60] [--jobs 1] [--limit N] [--ids 2401,2402]
[--out FILE]``.

Each problem runs in a worker process killed at ``--timeout`` seconds (``solve_calc_all``). The ground
truth is the record's ``solution`` string evaluated with sympy (radians for angles; converted to degrees
when the goal is an angle, since the solver reports angle goals in degrees). Prints solved / wrong /
unanswered counts, the median seconds, the wall time, the failures by cause with their ids, and how many
answers also match the multiple-choice answer (the solver never reads the choices). Reads GEO_SHARED
(default ../shared); exits 0 with a note when the data is missing.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import sys
import time
from pathlib import Path
from tokenize import TokenError

import sympy
from sympy.parsing.sympy_parser import (
    implicit_multiplication_application,
    parse_expr,
    standard_transformations,
)

from geosynth.calc import CalcFormatError, CalcProblem, load_calc_problems, solve_calc_all
from geosynth.engine import Angle, SolveResult

ROOT = Path(__file__).resolve().parents[1]
TOLERANCE = 0.02


def truth(problem: CalcProblem) -> float | None:
    """The ground truth as a float (degrees for an angle goal; 1.0 for ``True``), or ``None``."""
    if problem.answer is None:
        return None
    text = problem.answer.strip()
    if text == "True":
        return 1.0
    try:
        value = float(sympy.N(sympy.sympify(text)))
    except (sympy.SympifyError, TypeError, ValueError):
        return None
    return math.degrees(value) if isinstance(problem.goal, Angle) else value


def close(answer: float, expected: float) -> bool:
    """Within 2 % (absolute 1e-6 near zero)."""
    return abs(answer - expected) <= max(TOLERANCE * abs(expected), 1e-6)


_LATEX = (
    (re.compile(r"\\frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}"), r"((\1)/(\2))"),
    (re.compile(r"\\sqrt\s*\{([^{}]*)\}"), r"sqrt(\1)"),
    (re.compile(r"\\pi"), "pi"),
)


def choice_value(problem: CalcProblem) -> float | None:
    """The value of the correct multiple-choice option (a small LaTeX subset: fractions, roots, pi)."""
    if problem.answer_choice is None or not problem.choices:
        return None
    index = ord(problem.answer_choice) - ord("A")
    if not 0 <= index < len(problem.choices):
        return None
    text = problem.choices[index]
    for pattern, replacement in _LATEX:
        text = pattern.sub(replacement, text)
    try:
        transformations = (*standard_transformations, implicit_multiplication_application)
        return float(sympy.N(parse_expr(text, transformations=transformations)))
    except (sympy.SympifyError, TypeError, ValueError, SyntaxError, TokenError):
        return None


def classify(result: SolveResult, expected: float | None) -> str:
    """``solved``, ``wrong``, ``unanswered``, ``timeout``, ``error`` or ``no truth``."""
    if result.timed_out:
        return "timeout"
    if result.error is not None:
        return "error"
    if result.answer is None:
        return "unanswered"
    if expected is None:
        return "no truth"
    return "solved" if close(result.answer, expected) else "wrong"


def load(folder: Path, ids: str, limit: int | None) -> tuple[list[CalcProblem], list[str]]:
    """The records to run (all, or the listed ids, at most ``limit``) and the ids of malformed ones."""
    files = sorted(folder.glob("*.json"), key=lambda f: (len(f.stem), f.stem))
    if ids:
        wanted = set(ids.split(","))
        files = [f for f in files if f.stem in wanted]
    problems: list[CalcProblem] = []
    malformed: list[str] = []
    for file in files[:limit]:
        try:
            problems.extend(load_calc_problems(file))
        except CalcFormatError as err:
            malformed.append(file.stem)
            print(f"malformed: {err}", file=sys.stderr)
    return problems, malformed


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--ids", default="", help="comma-separated record ids")
    parser.add_argument("--out", default="", help="write one JSON line per problem here")
    args = parser.parse_args()
    shared = Path(os.environ.get("GEO_SHARED", ROOT.parent / "shared"))
    folder = shared / "data" / "geometry3k_formal"
    if not folder.is_dir():
        print(f"no data at {folder}; set GEO_SHARED (skipping)")
        return 0
    problems, malformed = load(folder, args.ids, args.limit)
    start = time.perf_counter()
    causes: dict[str, list[str]] = {}
    seconds: list[float] = []
    choice_hits = 0
    lines: list[str] = []
    for problem, result in zip(
        problems, solve_calc_all(problems, timeout=args.timeout, jobs=args.jobs), strict=True
    ):
        expected = truth(problem)
        cause = classify(result, expected)
        causes.setdefault(cause, []).append(problem.id)
        seconds.append(result.seconds)
        choice = choice_value(problem)
        if result.answer is not None and choice is not None and close(result.answer, choice):
            choice_hits += 1
        line = {
            "id": problem.id,
            "cause": cause,
            "answer": result.answer,
            "truth": expected,
            "seconds": round(result.seconds, 2),
            "error": result.error,
        }
        lines.append(json.dumps(line))
        if cause not in ("solved",):
            print(json.dumps(line), file=sys.stderr)
    if args.out:
        Path(args.out).write_text("".join(f"{x}\n" for x in lines), encoding="utf-8")
    if malformed:
        causes["malformed"] = malformed
    total = len(problems) + len(malformed)
    solved = len(causes.get("solved", []))
    print(f"solved {solved}/{total} within {TOLERANCE:.0%} (timeout {args.timeout:g}s, jobs {args.jobs})")
    print(f"wrong {len(causes.get('wrong', []))}, unanswered {len(causes.get('unanswered', []))}")
    print(
        f"median {statistics.median(seconds) if seconds else 0:.2f}s, wall {time.perf_counter() - start:.0f}s"
    )
    print(f"answers matching the multiple-choice answer: {choice_hits}")
    for cause, ids in sorted(causes.items()):
        if cause != "solved":
            print(f"{cause} ({len(ids)}): {' '.join(ids)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
