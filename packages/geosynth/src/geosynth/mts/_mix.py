"""Training mixtures for the ablations of ReTTS-PGPS (section 5.1, Tables 3 and 4), built from PA records.

* ``single_<type>``: one trace type only;
* ``mts``: the three synthesized types (PAL, CoT-Program, CoT-PAL); ``mts_all``: all four;
* ``wo_<type>``: MTS-All without one type, topped up by resampling (with replacement, seeded) the
  remaining records until its target-token count reaches that of MTS-All (token-controlled
  leave-one-out);
* ``program_size_matched``: the original programs repeated until there are as many records as in
  MTS-All (the data-size-matched control).

Token counts are over the assistant targets, with a pluggable counter; the default splits words
and punctuation, which tracks subword counts closely enough to match budgets between mixtures.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from geosynth.mts._models import TRACE_TYPES, TraceType

__all__ = ("MIXTURE_NAMES", "TokenCounter", "build_mixtures", "default_token_count", "record_tokens")

TokenCounter = Callable[[str], int]
"""Counts the tokens of a text."""

_WORD = re.compile(r"\w+|[^\w\s]")

MIXTURE_NAMES: tuple[str, ...] = (
    *(f"single_{t}" for t in TRACE_TYPES),
    "mts",
    "mts_all",
    *(f"wo_{t}" for t in TRACE_TYPES),
    "program_size_matched",
)
"""Every mixture :func:`build_mixtures` writes."""


def default_token_count(text: str) -> int:
    """Words and punctuation marks of ``text`` (an approximation of subword tokens)."""
    return len(_WORD.findall(text))


def record_tokens(record: Mapping[str, Any], count: TokenCounter = default_token_count) -> int:
    """Tokens of a PA record's supervised target (its assistant turn)."""
    return sum(
        count(part["text"] or "")
        for m in record["messages"]
        if m["role"] == "assistant"
        for part in m["content"]
    )


def _matched(
    base: list[Mapping[str, Any]], budget: int, rng: random.Random, count: TokenCounter
) -> list[Mapping[str, Any]]:
    out = list(base)
    tokens = sum(record_tokens(r, count) for r in out)
    while base and tokens < budget:
        pick = base[rng.randrange(len(base))]
        out.append(pick)
        tokens += record_tokens(pick, count)
    return out


def build_mixtures(
    records: Mapping[TraceType, Sequence[Mapping[str, Any]]],
    *,
    seed: int = 0,
    count: TokenCounter = default_token_count,
) -> dict[str, list[Mapping[str, Any]]]:
    """Every mixture of :data:`MIXTURE_NAMES`, in a fixed order (shuffling is the trainer's job).

    Args:
        records: PA records per trace type.
        seed: seed of the leave-one-out resampling.
        count: token counter for the budget matching.
    """
    by_type = {t: list(records.get(t, ())) for t in TRACE_TYPES}
    mixes: dict[str, list[Mapping[str, Any]]] = {f"single_{t}": by_type[t] for t in TRACE_TYPES}
    mixes["mts"] = [r for t in ("pal", "cot_program", "cot_pal") for r in by_type[t]]
    mixes["mts_all"] = [r for t in TRACE_TYPES for r in by_type[t]]
    budget = sum(record_tokens(r, count) for r in mixes["mts_all"])
    for k, left_out in enumerate(TRACE_TYPES):
        rest = [r for t in TRACE_TYPES if t != left_out for r in by_type[t]]
        mixes[f"wo_{left_out}"] = _matched(rest, budget, random.Random(seed * 31 + k), count)
    programs = by_type["program"]
    target = len(mixes["mts_all"])
    mixes["program_size_matched"] = [programs[i % len(programs)] for i in range(target)] if programs else []
    return mixes
