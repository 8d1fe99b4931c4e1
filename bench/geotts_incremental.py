"""Compute really spent by CG-MTE vs standard MTE through the transformers backend (CPU, tiny Qwen2-VL).

A tiny randomly initialised Qwen2-VL is built offline; its output layer is limited to digits, '.'
and end-of-turn so candidates are numbers. 12 image + text problems, V = 4 trace types, D = 10.
Prints, per strategy, the ASN and the candidates and tokens the backend actually generated.

    uv run python bench/geotts_incremental.py
"""

from __future__ import annotations

import io
import tempfile
import time

import torch
from PIL import Image

import geotts
from geotts import BeamParams, LastNumberExtractor, Problem, SamplingParams
from geotts.backends.transformers import TransformersSampler
from geotts.testing import tiny_qwen_vl


def _png(colour: tuple[int, int, int]) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (56, 56), colour).save(buf, format="PNG")
    return buf.getvalue()


def main() -> None:
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        sampler = TransformersSampler.from_pretrained(tiny_qwen_vl(f"{tmp}/model", seed=1))
    vocab = sampler.tokenizer.get_vocab()
    rows = [vocab[t] for t in [*"0123456789.", "<|im_end|>"] if t in vocab]
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        weight = sampler.model.lm_head.weight
        new = torch.zeros_like(weight)
        new[rows] = torch.randn(len(rows), weight.shape[1], generator=gen) * 0.5
        weight.copy_(new)
    problems = [
        Problem(id=f"p{i}", question=f"Find x{i}.", images=(_png((20 * i, 0, 255 - 20 * i)),))
        for i in range(12)
    ]
    extractor = LastNumberExtractor(allow_truncated=True)
    sample = SamplingParams(temperature=1.0, max_tokens=4, seed=0)
    beam = BeamParams(max_tokens=4)
    runs = [
        ("MTE, sampling", geotts.MultiTraceEnsemble(geotts.MTEConfig(depth=10, params=sample))),
        ("CG-MTE, sampling", geotts.ConsensusEnsemble(geotts.CGMTEConfig(depth=10, params=sample))),
        ("MTE, beam", geotts.MultiTraceEnsemble(geotts.MTEConfig(depth=10, params=beam))),
        ("CG-MTE, beam reveal", geotts.ConsensusEnsemble(geotts.CGMTEConfig(depth=10, params=beam))),
        (
            "CG-MTE, beam regrow",
            geotts.ConsensusEnsemble(geotts.CGMTEConfig(depth=10, params=beam, beam_policy="regrow")),
        ),
    ]
    for name, strategy in runs:
        start = time.perf_counter()
        ds = strategy.run(sampler, problems, extractor)
        wall = time.perf_counter() - start
        print(
            f"{name:22s} ASN={sum(d.samples for d in ds) / len(ds):5.2f} generated={sum(d.generated for d in ds):4d} "
            f"tokens={sum(d.tokens or 0 for d in ds):5d} wall={wall:4.1f}s depths={[d.depth for d in ds]}"
        )


if __name__ == "__main__":
    main()
