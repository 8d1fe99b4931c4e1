"""Yield of auxiliary-construction mining: traced splits vs strict ones (the engine fails alone), side by side.

Usage: ``uv run python bench/bench_aux_mining.py [--sequences 400] [--seed 7]``.

Mines random construction sequences ``0..N-1`` of a seed with the default ``AuxGenConfig`` on one core
(``mine_sequence``, the function ``geo synth aux-data`` runs). Every example records whether the engine
also proves its reduced problem alone, so one run gives both definitions: the traced one (the proof
uses the clauses; AlphaGeometry and Euclid-Omni) and the strict one (the engine cannot do without
them). Prints progress every 50 sequences, then one JSON summary line.
"""

from __future__ import annotations

import argparse
import json
import time

from geosynth.synth import AuxGenConfig, mine_sequence


def main() -> int:
    parser = argparse.ArgumentParser(description="Yield of auxiliary-construction mining.")
    parser.add_argument("--sequences", type=int, default=400, help="random sequences to mine")
    parser.add_argument("--seed", type=int, default=7, help="seed of the sequences")
    args = parser.parse_args()
    config = AuxGenConfig()
    start = time.perf_counter()
    examples = strict = productive = clauses = 0
    for index in range(args.sequences):
        found = mine_sequence(index, args.seed, config)
        examples += len(found)
        productive += bool(found)
        strict += sum(not e.engine_alone for e in found)
        clauses += sum(len(e.auxiliary) for e in found)
        if (index + 1) % 50 == 0:
            print(f"{index + 1} sequences: {examples} traced examples, {strict} strict, "
                  f"{time.perf_counter() - start:.0f}s", flush=True)  # fmt: skip
    seconds = time.perf_counter() - start
    summary = {
        "sequences": args.sequences,
        "seed": args.seed,
        "traced_examples": examples,
        "strict_examples": strict,
        "sequences_with_examples": productive,
        "aux_clauses_per_example": round(clauses / max(1, examples), 2),
        "seconds": round(seconds, 1),
        "traced_per_minute": round(60 * examples / seconds, 1),
        "strict_per_minute": round(60 * strict / seconds, 2),
        "traced_to_strict": round(examples / strict, 1) if strict else None,
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
