"""Throughput of the geodsl sandbox pool against one fresh ``python script.py`` process per script.

The same N PAL-style sympy scripts (symbols, Eq, solve, a positivity filter, a 3-decimal
print, in the shape of the rule-based PAL translation) run twice: through
``geodsl.sandbox.Sandbox`` with J workers, and as fresh interpreter processes, J at a time.
Answers must agree between the two runs. Prints scripts/second of each and the ratio.

    uv run python bench/bench_sandbox.py --n 200 --jobs 2
    uv run python bench/bench_sandbox.py --n 200 --baseline-n 40   # a shorter baseline run
    uv run python bench/bench_sandbox.py --source examples --n 190 --baseline-n 40   # real PAL (geodsl.to_pal)
"""

from __future__ import annotations

import argparse
import json
import math
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from geodsl.answers import answer_from_output
from geodsl.sandbox import Sandbox, SandboxLimits

EXAMPLES = Path(__file__).resolve().parents[1] / "tests" / "geodsl" / "data" / "pgps_examples_96.json"
_PRELUDE = "from sympy import Eq, solve, sqrt, symbols, sin, cos, pi, Rational\n"
_SOLVE = """
solutions = solve(equations, [{unknowns}], dict=True)
for sol in solutions:
    try:
        # Keep only solutions whose unknowns are all positive (lengths, angles, areas).
        all_positive = True
        for v in sol.values():
            if float(v) <= 0:
                all_positive = False
                break
        if not all_positive:
            continue
        target_expr = {target}
        final_value = target_expr.subs(sol) if sol else target_expr
        val = float(final_value)
        print(f'{{val:.3f}}')
        break
    except (TypeError, ValueError):
        pass
"""


def _script(symbols: str, equations: list[str], unknowns: str, target: str) -> str:
    body = "".join(f"equations.append({eq})\n" for eq in equations)
    names = symbols.replace(",", " ")
    return (
        f"{_PRELUDE}{symbols} = symbols('{names}')\nequations = []\n{body}"
        f"{_SOLVE.format(unknowns=unknowns, target=target)}"
    )


def _pythagoras(rng: random.Random) -> str:
    a, b = rng.randint(3, 20), rng.randint(3, 20)
    return _script("x", [f"Eq({a}**2 + {b}**2, x**2)"], "x", "x")


def _geo_mean_then_pythagoras(rng: random.Random) -> str:
    a, c = rng.randint(2, 12), rng.randint(2, 12)
    return _script("y,z", [f"Eq({a} * z, {c}**2)", f"Eq(z**2 + {c}**2, y**2)"], "y, z", "y")


def _cosine_law(rng: random.Random) -> str:
    b, c, angle = rng.randint(4, 20), rng.randint(4, 20), rng.choice([30, 45, 60, 75, 100, 120])
    return _script("a", [f"Eq(a**2, {b}**2 + {c}**2 - 2*{b}*{c}*cos({angle}*pi/180))"], "a", "a")


def _sine_law(rng: random.Random) -> str:
    a, big, small = rng.randint(5, 25), rng.choice([60, 90, 120]), rng.choice([30, 45])
    return _script("x", [f"Eq(x * sin({big}*pi/180), {a} * sin({small}*pi/180))"], "x", "x")


def _isosceles_then_sector(rng: random.Random) -> str:
    apex, radius = rng.choice([20, 40, 50, 70, 100]), rng.randint(2, 15)
    return _script("v0,v1", [f"Eq({apex} + 2*v0, 180)", f"Eq(pi*{radius}**2*v0/360, v1)"], "v0, v1", "v1")


def _similar_triangles(rng: random.Random) -> str:
    a, b, c = rng.randint(2, 15), rng.randint(2, 15), rng.randint(2, 15)
    return _script("x", [f"Eq({a} * x, {b} * {c})"], "x", "x")


def _trapezoid(rng: random.Random) -> str:
    b1, b2, area = rng.randint(3, 20), rng.randint(3, 20), rng.randint(30, 300)
    return _script("h", [f"Eq(Rational(1, 2) * ({b1} + {b2}) * h, {area})"], "h", "h")


def _angle_sum_with_expressions(rng: random.Random) -> str:
    k, m = rng.randint(2, 6), rng.randint(1, 20)
    return _script("x", [f"Eq(({k}*x + {m}) + (x + 10) + 50, 180)"], "x", "x")


def _triangle_sas_then_height(rng: random.Random) -> str:
    a, c, angle = rng.randint(3, 15), rng.randint(3, 15), rng.choice([30, 45, 60, 90, 120])
    return _script(
        "s,h",
        [f"Eq(Rational(1, 2)*{a}*{c}*sin({angle}*pi/180), s)", f"Eq(Rational(1, 2)*{a}*h, s)"],
        "s, h",
        "h",
    )


TEMPLATES: tuple[Callable[[random.Random], str], ...] = (
    _pythagoras,
    _geo_mean_then_pythagoras,
    _cosine_law,
    _sine_law,
    _isosceles_then_sector,
    _similar_triangles,
    _trapezoid,
    _angle_sum_with_expressions,
    _triangle_sas_then_height,
)


def make_scripts(n: int, seed: int) -> list[str]:
    """N realistic PAL-style scripts drawn from the templates above."""
    rng = random.Random(seed)
    return [rng.choice(TEMPLATES)(rng) for _ in range(n)]


def pal_from_examples(n: int) -> list[str]:
    """Real PAL: ``geodsl.to_pal`` over the 96 verified PGPS records kept with the tests (cycled to n)."""
    import geodsl

    records = json.loads(EXAMPLES.read_text())
    scripts: list[str] = []
    for record in records:
        try:
            scripts.append(geodsl.to_pal(record["expression"], record["var_values"]))
        except geodsl.GeoDSLError:
            continue  # a record whose program does not bind to its numbers
    return [scripts[i % len(scripts)] for i in range(n)]


def pal_from_pgps9k(n: int) -> list[str]:
    """Real PAL over the real data: ``geodsl.to_pal`` of the first n PGPS9K test programs (needs ../shared)."""
    import os

    import geodsl
    from geodsl.data import load_pgps

    shared = Path(os.environ.get("GEO_SHARED", Path(__file__).resolve().parents[1].parent / "shared"))
    path = shared / "data" / "pgps" / "pgps9k_test.json"
    if not path.is_file():
        raise SystemExit(f"--source pgps9k needs {path} (set GEO_SHARED)")
    return [geodsl.to_pal(r.expression, r.numbers) for r in load_pgps(path)[:n]]


def run_fresh_processes(scripts: list[str], jobs: int, timeout: float) -> tuple[float, list[float | None]]:
    """One ``python -I script.py`` per script, ``jobs`` at a time; returns (seconds, answers)."""
    with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as tmp:
        paths = []
        for i, script in enumerate(scripts):
            path = Path(tmp) / f"script_{i:05d}.py"
            path.write_text(script)
            paths.append(path)

        def one(path: Path) -> float | None:
            done = subprocess.run(
                [sys.executable, "-I", str(path)],
                capture_output=True,
                text=True,
                timeout=timeout,
                cwd=tmp,
                check=False,
            )
            return answer_from_output(done.stdout) if done.returncode == 0 else None

        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            answers = list(pool.map(one, paths))
        return time.perf_counter() - start, answers


def main() -> None:
    parser = argparse.ArgumentParser(
        description="Sandbox pool vs fresh processes: throughput on PAL-style scripts."
    )
    parser.add_argument("--n", type=int, default=200, help="scripts through the pool")
    parser.add_argument(
        "--baseline-n", type=int, default=None, help="scripts run as fresh processes (default: --n)"
    )
    parser.add_argument("--jobs", type=int, default=2, help="pool workers = parallel fresh processes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--source",
        choices=("synthetic", "examples", "pgps9k"),
        default="synthetic",
        help="synthetic templates, or geodsl.to_pal over the PGPS examples in tests/geodsl/data",
    )
    args = parser.parse_args()
    sources = {
        "synthetic": lambda: make_scripts(args.n, args.seed),
        "examples": lambda: pal_from_examples(args.n),
        "pgps9k": lambda: pal_from_pgps9k(args.n),
    }
    scripts = sources[args.source]()
    baseline_n = min(args.baseline_n or args.n, args.n)
    limits = SandboxLimits(wall_seconds=30.0, cpu_seconds=30.0)

    start = time.perf_counter()
    with Sandbox(workers=args.jobs, limits=limits) as sandbox:
        started = time.perf_counter() - start
        run_start = time.perf_counter()
        results = sandbox.run(scripts)
        pool_seconds = time.perf_counter() - run_start
    failures = [r.error for r in results if r.error is not None]

    fresh_seconds, fresh_answers = run_fresh_processes(scripts[:baseline_n], args.jobs, timeout=60.0)
    mismatches = sum(
        1
        for r, a in zip(results[:baseline_n], fresh_answers, strict=True)
        if (r.answer is None) != (a is None)
        or (a is not None and r.answer is not None and not math.isclose(r.answer, a))
    )
    pool_rate = len(scripts) / pool_seconds
    end_to_end_rate = len(scripts) / (pool_seconds + started)
    fresh_rate = baseline_n / fresh_seconds
    print(
        f"scripts ({args.source}): {len(scripts)} through the pool, {baseline_n} as fresh processes; "
        f"jobs={args.jobs}"
    )
    print(f"pool start-up ({args.jobs} workers, sympy preloaded): {started:.2f} s")
    print(
        f"pool:            {pool_seconds:8.2f} s  {pool_rate:8.1f} scripts/s "
        f"(mean {1000 * sum(r.seconds for r in results) / len(results):.1f} ms per script in its child)"
    )
    print(f"pool incl. start:{pool_seconds + started:8.2f} s  {end_to_end_rate:8.1f} scripts/s")
    print(f"fresh processes: {fresh_seconds:8.2f} s  {fresh_rate:8.1f} scripts/s")
    print(
        f"speed-up: {pool_rate / fresh_rate:.1f}x steady state, {end_to_end_rate / fresh_rate:.1f}x including start-up"
    )
    print(f"script errors in the pool: {len(failures)}; answer mismatches pool vs fresh: {mismatches}")
    if failures:
        print("first errors:", sorted(set(failures))[:5])


if __name__ == "__main__":
    main()
