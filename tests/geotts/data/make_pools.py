"""Generate tests/geotts/data/pools.jsonl: a deterministic, realistic recorded pool file.

60 problems x 4 trace types x 10 ranked answers, plus the unified model's 40 ranked beam answers
with their detected trace patterns, and the gold answer. The simulated solver has a per-problem
difficulty, trace-specific skill, rank decay, correlated wrong answers (problem-specific
distractors shared by all traces) and failed executions (null). Run from the repository root:

    uv run python tests/geotts/data/make_pools.py
"""

from __future__ import annotations

import json
import random
from pathlib import Path

TRACES = ("program", "pal", "cot_program", "cot_pal")
SKILL = {"program": 0.70, "pal": 0.78, "cot_program": 0.66, "cot_pal": 0.80}
FAIL = {"program": 0.06, "pal": 0.05, "cot_program": 0.10, "cot_pal": 0.04}
# Unified beam: share of each detected pattern by rank block (executable traces first, CoT deeper).
PATTERN_SHARES = (
    (0.15, 0.40, 0.10, 0.35),
    (0.10, 0.25, 0.25, 0.40),
    (0.05, 0.15, 0.35, 0.45),
    (0.05, 0.10, 0.40, 0.45),
)


def _answer(
    rng: random.Random, gold: float, distractors: list[float], p_right: float, p_fail: float
) -> float | None:
    u = rng.random()
    if u < p_fail:
        return None
    if u < p_fail + (1 - p_fail) * p_right:
        return gold
    # Wrong answers concentrate on the first distractor: errors are correlated across traces.
    return distractors[min(int(rng.expovariate(0.45)), len(distractors) - 1)]


def make(seed: int = 2026, problems: int = 60, depth: int = 10) -> list[dict[str, object]]:
    rng = random.Random(seed)
    rows: list[dict[str, object]] = []
    for i in range(problems):
        gold = round(rng.uniform(1, 180), 2)
        distractors = [round(gold * f, 2) for f in (0.5, 2.0, 1.5, 0.75, 3.0, 0.25, 1.25, 4.0)]
        ease = rng.betavariate(2.2, 1.4)  # per-problem difficulty
        traces: dict[str, list[float | None]] = {}
        for t in TRACES:
            traces[t] = [
                _answer(rng, gold, distractors, ease * SKILL[t] * (0.985**r) + 0.08 * (r == 0), FAIL[t])
                for r in range(depth)
            ]
        unified: list[float | None] = []
        patterns: list[str] = []
        for r in range(len(TRACES) * depth):
            shares = PATTERN_SHARES[min(r // depth, 3)]
            pattern = rng.choices(TRACES, weights=shares)[0]
            patterns.append(pattern)
            unified.append(_answer(rng, gold, distractors, ease * SKILL[pattern] * (0.99**r), FAIL[pattern]))
        rows.append(
            {
                "id": f"pgps-{i:03d}",
                "gold": gold,
                "traces": traces,
                "unified": unified,
                "unified_patterns": patterns,
            }
        )
    return rows


if __name__ == "__main__":
    out = Path(__file__).with_name("pools.jsonl")
    out.write_text("".join(json.dumps(r) + "\n" for r in make()), encoding="utf-8")
    print(f"wrote {out}")
