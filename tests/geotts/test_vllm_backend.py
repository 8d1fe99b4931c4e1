"""The vLLM backend: runs only where vLLM and a CUDA GPU are present; skips with the reason elsewhere."""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path

import pytest

import geotts
from geotts import BeamParams, ChatMessage, GenerationRequest, LastNumberExtractor, Problem, SamplingParams


def _skip_reason() -> str | None:
    if importlib.util.find_spec("vllm") is None:
        return (
            'vllm is not installed (pip install "geotts[vllm]"); the vLLM backend needs a CUDA build of vLLM'
        )
    import torch

    if not torch.cuda.is_available():
        return "no CUDA GPU: vLLM's Qwen-VL engine cannot run on this machine"
    return None


pytestmark = [pytest.mark.gpu, pytest.mark.skipif(_skip_reason() is not None, reason=_skip_reason() or "")]


def test_sampling_beam_and_cg_mte_on_a_tiny_qwen2_vl(tmp_path: Path) -> None:
    from PIL import Image

    from geotts.backends.vllm import VLLMSampler
    from geotts.testing import tiny_qwen_vl

    folder = tiny_qwen_vl(tmp_path / "tiny")
    sampler = VLLMSampler(
        str(folder), dtype="float32", max_model_len=512, gpu_memory_utilization=0.3, enforce_eager=True
    )
    buf = io.BytesIO()
    Image.new("RGB", (56, 56), (255, 0, 0)).save(buf, format="PNG")
    msgs = (ChatMessage(role="user", content="Find x."),)
    sampled, beams = sampler.generate(
        [
            GenerationRequest(
                messages=msgs,
                images=(buf.getvalue(),),
                n=3,
                params=SamplingParams(temperature=1.0, max_tokens=8, seed=0),
            ),
            GenerationRequest(messages=msgs, images=(buf.getvalue(),), n=3, params=BeamParams(max_tokens=8)),
        ]
    )
    assert len(sampled) == 3 and all(c.num_tokens and c.cumulative_logprob is not None for c in sampled)
    assert len(beams) == 3
    scores = [c.cumulative_logprob for c in beams]
    assert all(s is not None for s in scores)
    problems = [Problem(id="p", question="Find x.", images=(buf.getvalue(),))]
    (d,) = geotts.ConsensusEnsemble(
        geotts.CGMTEConfig(depth=2, params=SamplingParams(max_tokens=8, seed=0))
    ).run(sampler, problems, LastNumberExtractor(allow_truncated=True))
    assert d.generated == 4 * d.depth
