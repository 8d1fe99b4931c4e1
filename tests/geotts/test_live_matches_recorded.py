"""Live CG-MTE and live standard MTE under one seed: the same candidates, and the offline evaluation agrees.

The sampler below behaves like a real seeded backend: the ``n`` candidates of one request all come
from one random stream seeded by (prompt, request seed), so asking for D candidates at once gives
other candidates than asking for them one by one. Beam search is deterministic per (prompt, width),
and a width-d beam is not the top-d of a width-D beam.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

import geotts
from geotts import (
    BeamParams,
    CGMTEConfig,
    Completion,
    ConsensusEnsemble,
    Decision,
    GenerationRequest,
    LastNumberExtractor,
    MTEConfig,
    MultiTraceEnsemble,
    Problem,
    SamplingParams,
)
from geotts.report import evaluate, is_correct, load_pools
from geotts.testing import FunctionSampler

ORDER = geotts.DEFAULT_ORDER
V, D = len(ORDER), 6
EXTRACT = LastNumberExtractor()
# Problem i has gold answer i. How often trace type t answers it: SKILL[t] x EASE[i % 5]; otherwise the
# candidate fails (a share FAIL[i % 5]) or gives one of six wrong answers, so problems stop at many depths.
SKILL = {"program": 0.55, "pal": 0.45, "cot_program": 0.4, "cot_pal": 0.5}
EASE = (1.0, 0.7, 0.4, 0.15, 0.0)
FAIL = (0.1, 0.1, 0.2, 0.2, 0.95)
PROBLEMS = [Problem(id=f"p{i}", question=f"Question {i}?") for i in range(40)]


def _answer(rng: random.Random, gold: int, trace: str) -> str:
    u = rng.random()
    if u < SKILL[trace] * EASE[gold % 5]:
        return f"so the answer is {gold}"
    if rng.random() < FAIL[gold % 5]:
        return "the program failed"
    return f"so the answer is {gold + rng.randint(1, 6)}"


def draw(req: GenerationRequest) -> list[Completion]:
    """Seeded sampling: one stream per (prompt, seed) for all n candidates; beams: one list per (prompt, width)."""
    assert req.trace_type is not None
    content = req.messages[-1].content
    gold = int(content.split("?")[0].removeprefix("Question "))
    if isinstance(req.params, BeamParams):
        rng = random.Random(f"beam|{content}|{req.n}")
    else:
        if req.params.seed is None:
            raise geotts.BackendError("this test sampler needs a seed")
        rng = random.Random(f"sample|{content}|{req.params.seed}")
    texts = [_answer(rng, gold, req.trace_type) for _ in range(req.n)]
    return [Completion(text=t, num_tokens=len(t.split())) for t in texts]


PARAMS = {
    "sampling seed 0": SamplingParams(temperature=0.8, seed=0),
    "sampling seed 7": SamplingParams(temperature=0.8, seed=7),
    "beam reveal": BeamParams(),
}


def _run(params: SamplingParams | BeamParams) -> tuple[list[Decision], list[Decision], FunctionSampler]:
    mte = MultiTraceEnsemble(MTEConfig(depth=D, params=params)).run(FunctionSampler(draw), PROBLEMS, EXTRACT)
    sampler = FunctionSampler(draw)
    cg = ConsensusEnsemble(CGMTEConfig(depth=D, params=params)).run(sampler, PROBLEMS, EXTRACT)
    return mte, cg, sampler


def _record(mte: list[Decision], path: Path) -> None:
    """Write standard MTE's pools as ``geo tts run --pools`` does: id, gold, answers per trace type."""
    with path.open("w", encoding="utf-8") as f:
        for p, d in zip(PROBLEMS, mte, strict=True):
            line = {"id": p.id, "gold": float(p.id[1:]), "traces": {t: list(a) for t, a in d.pool}}
            f.write(json.dumps(line) + "\n")


@pytest.mark.parametrize("params", PARAMS.values(), ids=PARAMS.keys())
def test_live_cg_mte_reads_a_prefix_of_live_mte_and_the_offline_evaluation_agrees(
    params: SamplingParams | BeamParams, tmp_path: Path
) -> None:
    mte, cg, sampler = _run(params)
    depths = Counter(d.depth for d in cg)
    assert len(depths) >= 3 and any(d.fallback for d in cg)  # the check covers several stopping depths

    # (a) CG-MTE's candidates at its stopping depth are the first d of standard MTE's, per trace type
    for p, m, c in zip(PROBLEMS, mte, cg, strict=True):
        full = dict(m.pool)
        assert [t for t, _ in c.pool] == list(ORDER)
        assert all(answers == full[t][: c.depth] for t, answers in c.pool), p.id

    # (b) the offline CG-MTE on MTE's recorded pool decides every problem as the live run did
    _record(mte, tmp_path / "pools.jsonl")
    pools = load_pools(tmp_path / "pools.jsonl")
    for pool, c in zip(pools, cg, strict=True):
        offline = geotts.cg_mte(pool.traces, depth=D)
        assert (offline.answer, offline.depth, offline.samples, offline.fallback) == (
            c.answer,
            c.depth,
            c.samples,
            c.fallback,
        ), pool.id
    ev = evaluate(pools, depths=[D])
    (point,) = [p for p in ev.curves if p.strategy == "cg_mte"]
    live_accuracy = sum(is_correct(c.answer, p.gold) for c, p in zip(cg, pools, strict=True)) / len(cg)
    assert point.accuracy == live_accuracy
    assert ev.termination == dict(sorted(Counter(c.depth for c in cg if not c.fallback).items()))
    assert ev.fallbacks == sum(c.fallback for c in cg)

    # (c) ASN: the live run counts what the offline run counts; sampling generates exactly that much
    live_asn = sum(c.samples for c in cg) / len(cg)
    assert point.asn == live_asn < V * D
    drawn = sum(r.n for call in sampler.calls for r in call)
    assert drawn == sum(c.generated for c in cg)
    if isinstance(params, SamplingParams):
        assert all(c.generated == c.samples for c in cg)
        assert drawn == live_asn * len(cg)
    else:  # reveal decodes the width-D beams up front and says so in ``generated``
        assert all(c.generated == V * D for c in cg) and drawn == V * D * len(cg)


def test_a_sampled_candidate_depends_on_the_seed_its_trace_type_and_its_index_only() -> None:
    params = PARAMS["sampling seed 0"]
    mte_sampler, cg_sampler = FunctionSampler(draw), FunctionSampler(draw)
    MultiTraceEnsemble(MTEConfig(depth=D, params=params)).run(mte_sampler, PROBLEMS, EXTRACT)
    ConsensusEnsemble(CGMTEConfig(depth=D, params=params)).run(cg_sampler, PROBLEMS, EXTRACT)

    def seeds(calls: list[list[GenerationRequest]]) -> dict[tuple[str, str | None], list[int | None]]:
        out: dict[tuple[str, str | None], list[int | None]] = {}
        for call in calls:
            for r in call:
                assert r.n == 1 and isinstance(r.params, SamplingParams)
                out.setdefault((r.messages[-1].content, r.trace_type), []).append(r.params.seed)
        return out

    mte_seeds, cg_seeds = seeds(mte_sampler.calls), seeds(cg_sampler.calls)
    assert len(mte_sampler.calls) == 1  # standard MTE: one batch of V x D one-candidate requests
    assert all(len(s) == D for s in mte_seeds.values())
    assert all(cg_seeds[k] == mte_seeds[k][: len(cg_seeds[k])] for k in cg_seeds)
    first = {t: seeds_ for (content, t), seeds_ in mte_seeds.items() if content.startswith("Question 0?")}
    assert len({s for ss in first.values() for s in ss}) == V * D  # no two (trace type, index) share a seed
    assert all(mte_seeds[c, t] == first[t] for c, t in mte_seeds)  # the same for every problem
    other = FunctionSampler(draw)
    MultiTraceEnsemble(MTEConfig(depth=D, params=PARAMS["sampling seed 7"])).run(other, PROBLEMS[:1], EXTRACT)
    assert not {s for ss in seeds(other.calls).values() for s in ss} & {
        s for ss in first.values() for s in ss
    }
