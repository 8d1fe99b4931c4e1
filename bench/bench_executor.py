"""Benchmark: geodsl's numeric executor vs a reference-style executor vs geodsl's exact mode.

The reference PGPS executor rebuilds every step as a LaTeX string and re-parses it with
``sympy.parsing.latex.parse_latex`` before calling ``sympy.solve``. ``parse_latex`` needs
antlr4-python3-runtime, which is usually absent; the stand-in used then builds the same
per-step residual as a sympy-syntax string, parses it with ``sympy.sympify`` and calls
``sympy.solve`` once per unknown (the output says which baseline ran).

Usage:
    uv run python bench/bench_executor.py [--repeat 5] [--limit N] [--no-splits]

Programs: tests/geodsl/data/examples_96.json, plus the PGPS test splits from
$GEO_SHARED/data/pgps (GEO_SHARED defaults to ../shared beside the repository) when present.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import sympy

import geodsl
from geodsl import GeoDSLError, parse_program
from geodsl._numeric import compile_value
from geodsl._values import parse_value
from geodsl.ast import Program

ROOT = Path(__file__).resolve().parent.parent
PI = "3.141593"

# Per-step residual templates in sympy syntax, as the reference writes them in LaTeX.
TEMPLATES: dict[str, Callable[[Sequence[str]], str]] = {
    "Sum": lambda v: "+".join(v[:-1]) + f"-{v[-1]}",
    "Multiple": lambda v: "*".join(v[:-1]) + f"-{v[-1]}",
    "Equal": lambda v: f"{v[0]}-{v[1]}",
    "Iso_Tri_Ang": lambda v: f"{v[0]}+2*{v[1]}-180",
    "Gougu": lambda v: f"{v[0]}**2+{v[1]}**2-{v[2]}**2",
    "Gsin": lambda v: f"{v[0]}/{v[1]}-sin({v[2]}/180*{PI})",
    "Gcos": lambda v: f"{v[0]}/{v[1]}-cos({v[2]}/180*{PI})",
    "Gtan": lambda v: f"{v[0]}/{v[1]}-tan({v[2]}/180*{PI})",
    "Cos_Law": lambda v: f"{v[1]}**2+{v[2]}**2-{v[0]}**2-2*{v[1]}*{v[2]}*cos({v[3]}/180*{PI})",
    "Sin_Law": lambda v: f"{v[3]}*sin({v[0]}/180*{PI})-{v[1]}*sin({v[2]}/180*{PI})",
    "Median": lambda v: f"{v[0]}-2*{v[1]}+{v[2]}",
    "Geo_Mean": lambda v: f"{v[0]}*{v[1]}-{v[2]}**2",
    "Proportion": lambda v: (
        f"{v[0]}*{v[3]}-{v[1]}*{v[2]}"
        if len(v) == 4
        else f"{v[0]}*{v[3]}**(1/{v[4]})-{v[1]}*{v[2]}**(1/{v[4]})"
    ),
    "Ratio": lambda v: f"{v[0]}/{v[1]}-{v[2]}" if len(v) == 3 else f"({v[0]}/{v[1]})**{v[2]}-{v[3]}",
    "Chord2_Ang": lambda v: f"2*{v[0]}-{v[1]}-{v[2]}",
    "TanSec_Ang": lambda v: f"2*{v[0]}+{v[1]}-{v[2]}",
    "Tria_BH_Area": lambda v: f"{v[0]}*{v[1]}/2-{v[2]}",
    "Tria_SAS_Area": lambda v: f"{v[0]}*{v[2]}*sin({v[1]}/180*{PI})/2-{v[3]}",
    "PRK_Perim": lambda v: f"2*{v[0]}+2*{v[1]}-{v[2]}",
    "Para_Area": lambda v: f"{v[0]}*{v[1]}-{v[2]}",
    "Rect_Area": lambda v: f"{v[0]}*{v[1]}-{v[2]}",
    "Rhom_Area": lambda v: f"2*{v[0]}*{v[1]}-{v[2]}",
    "Kite_Area": lambda v: f"{v[0]}*{v[1]}/2-{v[2]}",
    "Trap_Area": lambda v: f"({v[0]}+{v[1]})*{v[2]}/2-{v[3]}",
    "Circle_R_Circum": lambda v: (
        f"2*{PI}*{v[0]}-{v[1]}" if len(v) == 2 else f"2*{PI}*{v[0]}*{v[1]}/360-{v[2]}"
    ),
    "Circle_D_Circum": lambda v: f"{PI}*{v[0]}-{v[1]}" if len(v) == 2 else f"{PI}*{v[0]}*{v[1]}/360-{v[2]}",
    "Circle_R_Area": lambda v: (
        f"{PI}*{v[0]}**2-{v[1]}" if len(v) == 2 else f"{PI}*{v[0]}**2*{v[1]}/360-{v[2]}"
    ),
    "Circle_D_Area": lambda v: (
        f"{PI}/4*{v[0]}**2-{v[1]}" if len(v) == 2 else f"{PI}/4*{v[0]}**2*{v[1]}/360-{v[2]}"
    ),
    "ArcSeg_Area": lambda v: f"{PI}*{v[0]}**2*{v[1]}/360-{v[0]}**2*sin({v[1]}/180*{PI})/2-{v[2]}",
    "Ngon_Angsum": lambda v: f"({v[0]}-2)*180-{v[1]}",
    "RNgon_B_Area": lambda v: f"{v[0]}*{v[1]}**2/4/tan({PI}/{v[0]})-{v[2]}",
    "RNgon_L_Area": lambda v: f"{v[0]}*{v[1]}**2*sin(2*{PI}/{v[0]})/2-{v[2]}",
    "RNgon_H_Area": lambda v: f"{v[0]}*{v[1]}**2*tan({PI}/{v[0]})-{v[2]}",
}


def _pick(roots: list[Any]) -> Any:
    values = [(complex(sympy.N(r)), r) for r in roots if not r.free_symbols]
    real = [(v.real, r) for v, r in values if abs(v.imag) < 1e-9]
    if not real:
        return roots[0] if roots else None
    best = min(v for v, _ in real) if all(v > 0 for v, _ in real) else max(v for v, _ in real)
    return next(r for v, r in real if v == best)


def _sympify(text: str) -> Any:
    return sympy.sympify(text)


def reference_style(program: Program, numbers: Sequence[str]) -> float:
    """String-rewriting executor: per step, a residual string is parsed and solved with sympy."""
    mid: dict[str, str] = {f"N{k}": str(parse_value(v)).replace("pi", PI) for k, v in enumerate(numbers)}
    answer: float | None = None
    for step in program.steps:
        tokens = [o.token for o in step.operands]
        if step.op == "Get":
            value: Any = sympy.sympify(mid.get(tokens[0], tokens[0]))
            for _ in range(4):
                value = value.subs({sympy.Symbol(k): sympy.sympify(s) for k, s in mid.items() if k[0] != "N"})
            answer = float(value)
            continue
        operands = [f"({mid[t]})" if t in mid else t[1:] if t[0] == "C" else t for t in tokens]
        expr: Any = sympy.sympify(TEMPLATES[step.op](operands))
        unknowns: list[Any] = sorted(expr.free_symbols, key=lambda s: (s.name[0] == "V", s.name))
        for sym in unknowns:
            root = _pick(sympy.solve(expr, sym))
            if root is not None:
                mid[sym.name] = str(root)
        if unknowns:
            known = {
                sympy.Symbol(k): sympy.sympify(s)
                for k, s in mid.items()
                if k[0] != "N" and not sympy.sympify(s).free_symbols
            }
            mid = {k: str(_sympify(s).subs(known)) for k, s in mid.items()}
    if answer is None:
        raise ValueError("no Get")
    return answer


def _load(limit: int | None, splits: bool) -> list[tuple[str, Program, list[str], float]]:
    records = json.loads((ROOT / "tests/geodsl/data/examples_96.json").read_text())
    items = [
        (f"ex96/{r['id']}", parse_program(r["dedup_expression"]), list(r["var_values"]), float(r["answer"]))
        for r in records
    ]
    shared = Path(os.environ.get("GEO_SHARED", ROOT.parent / "shared"))
    if splits and (shared / "data/pgps").is_dir():
        from geodsl.data import load_pgps

        for name in ("geometry3k_test", "pgps9k_test"):
            for rec in load_pgps(shared / "data/pgps" / f"{name}.json"):
                items.append(
                    (f"{name}/{rec.id}", parse_program(rec.expression), list(rec.numbers), float(rec.answer))
                )
    elif splits:
        print(f"(splits skipped: {shared}/data/pgps not found; set GEO_SHARED)")
    return items[:limit] if limit else items


def _time(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    samples: list[float] = []
    result: object = None
    for _ in range(repeat):
        start = time.perf_counter()
        try:
            result = fn()
        except (GeoDSLError, ValueError, TypeError, ZeroDivisionError, NotImplementedError) as exc:
            result = exc
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), result


def _cold_execute(program: Program, numbers: Sequence[str]) -> geodsl.Execution:
    parse_value.cache_clear()
    compile_value.cache_clear()
    return geodsl.execute(program, numbers)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of the numeric executor per program")
    parser.add_argument("--limit", type=int, default=None, help="only the first N programs")
    parser.add_argument("--no-splits", action="store_true", help="examples_96 only")
    args = parser.parse_args()
    items = _load(args.limit, not args.no_splits)
    print(
        "baseline: sympify + sympy.solve per step (stand-in: parse_latex needs antlr4-python3-runtime 4.11)"
    )
    rows: dict[str, list[float]] = {"numeric_cold": [], "numeric": [], "reference": [], "exact": []}
    agree = {"numeric": 0, "reference": 0, "exact": 0}
    for _, program, numbers, answer in items:
        cold, _ = _time(partial(_cold_execute, program, numbers), args.repeat)
        warm, got = _time(partial(geodsl.execute, program, numbers), args.repeat)
        ref, ref_got = _time(partial(reference_style, program, numbers), 1)
        exact, exact_got = _time(partial(geodsl.execute, program, numbers, mode="exact"), 1)
        for key, value in (("numeric_cold", cold), ("numeric", warm), ("reference", ref), ("exact", exact)):
            rows[key].append(value)
        agree["numeric"] += isinstance(got, geodsl.Execution) and abs(got.answer - answer) < 5e-3
        agree["exact"] += isinstance(exact_got, geodsl.Execution) and abs(exact_got.answer - answer) < 5e-3
        agree["reference"] += isinstance(ref_got, float) and abs(ref_got - answer) < 5e-3
    n = len(items)
    med = {k: statistics.median(v) for k, v in rows.items()}
    print(f"programs: {n}")
    for key in ("numeric", "numeric_cold", "exact", "reference"):
        agreeing = agree.get(key.removesuffix("_cold"), 0)
        print(
            f"{key:>13}: median {med[key] * 1e6:10.1f} us/program   total {sum(rows[key]):8.2f} s"
            f"   agree {agreeing}/{n}"
        )
    print(f"ratio reference/numeric (warm): {med['reference'] / med['numeric']:.0f}x")
    print(f"ratio reference/numeric (cold caches): {med['reference'] / med['numeric_cold']:.0f}x")
    print(f"ratio exact/numeric (warm): {med['exact'] / med['numeric']:.0f}x")


if __name__ == "__main__":
    main()
