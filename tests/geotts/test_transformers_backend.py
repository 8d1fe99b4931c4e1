"""The transformers backend on tiny, randomly initialised Qwen models built offline (image + text prompts)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import geotts
from geotts import (
    BeamParams,
    ChatMessage,
    Completion,
    GenerationRequest,
    LastNumberExtractor,
    Problem,
    SamplingParams,
)
from geotts.backends.transformers import TransformersSampler, image_only_processor_class, load_processor
from geotts.testing import TINY_KINDS, tiny_qwen_vl

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
Image = pytest.importorskip("PIL.Image")
torch.set_num_threads(1)


def _png(colour: tuple[int, int, int]) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (56, 56), colour).save(buf, format="PNG")
    return buf.getvalue()


RED, BLUE = _png((255, 0, 0)), _png((0, 0, 255))


@pytest.fixture(scope="module")
def sampler(tmp_path_factory: pytest.TempPathFactory) -> TransformersSampler:
    folder = tiny_qwen_vl(tmp_path_factory.mktemp("tiny") / "qwen2_vl")
    return TransformersSampler.from_pretrained(folder)


@pytest.fixture(scope="module")
def digit_sampler(tmp_path_factory: pytest.TempPathFactory) -> TransformersSampler:
    """Same architecture, output layer restricted to digits, '.' and end-of-turn so answers are numbers."""
    s = TransformersSampler.from_pretrained(tiny_qwen_vl(tmp_path_factory.mktemp("tiny") / "digits", seed=1))
    vocab = s.tokenizer.get_vocab()
    rows = [vocab[t] for t in [*"0123456789.", "<|im_end|>"] if t in vocab]
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        weight = s.model.lm_head.weight
        new = torch.zeros_like(weight)
        new[rows] = torch.randn(len(rows), weight.shape[1], generator=gen) * 0.5
        weight.copy_(new)
    return s


def request(
    n: int, params: SamplingParams | BeamParams, images: tuple[bytes, ...] = (RED,)
) -> GenerationRequest:
    return GenerationRequest(
        messages=(ChatMessage(role="user", content="Find x. Please solve the problem using Python code."),),
        images=images,
        n=n,
        params=params,
    )


def teacher_forced_logprob(s: TransformersSampler, req: GenerationRequest, c: Completion) -> float:
    inputs, plen = s._inputs([req])
    ids = s.tokenizer(c.text, add_special_tokens=False)["input_ids"]
    eos = [s.tokenizer.convert_tokens_to_ids("<|im_end|>")] if c.finish_reason == "stop" else []
    gen = torch.tensor([ids + eos])
    kw: dict[str, Any] = dict(inputs)
    kw["input_ids"] = torch.cat([inputs["input_ids"], gen], 1)
    kw["attention_mask"] = torch.ones_like(kw["input_ids"])
    if "mm_token_type_ids" in kw:
        kw["mm_token_type_ids"] = torch.cat([inputs["mm_token_type_ids"], torch.zeros_like(gen)], 1)
    with torch.no_grad():
        logp = torch.log_softmax(s.model(**kw).logits[0].float(), -1)
    return sum(logp[plen - 1 + i, t].item() for i, t in enumerate(gen[0].tolist()))


def test_greedy_returns_one_candidate_with_its_true_log_probability(
    digit_sampler: TransformersSampler,
) -> None:
    req = request(1, SamplingParams(temperature=0.0, max_tokens=6))
    (c,) = digit_sampler.generate([req])[0]
    assert c.num_tokens is not None and 1 <= c.num_tokens <= 6
    assert c.finish_reason == ("length" if c.num_tokens == 6 else "stop")
    assert c.cumulative_logprob == pytest.approx(teacher_forced_logprob(digit_sampler, req, c), abs=1e-3)
    assert digit_sampler.generate([req])[0][0] == c  # greedy is deterministic


def test_beam_search_returns_the_beams_ranked(sampler: TransformersSampler) -> None:
    cands = sampler.generate([request(3, BeamParams(max_tokens=5, length_penalty=0.0))])[0]
    assert len(cands) == 3 and len({c.text for c in cands}) == 3
    scores = [c.cumulative_logprob for c in cands]
    assert all(s is not None for s in scores)
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]
    greedy = sampler.generate([request(1, SamplingParams(temperature=0.0, max_tokens=5))])[0][0]
    assert cands[0].cumulative_logprob >= greedy.cumulative_logprob - 1e-4  # type: ignore[operator]


def test_sampling_is_seeded_and_images_matter(sampler: TransformersSampler) -> None:
    params = SamplingParams(temperature=1.0, max_tokens=6, seed=7)
    a = sampler.generate([request(3, params)])[0]
    b = sampler.generate([request(3, params)])[0]
    c = sampler.generate([request(3, params.model_copy(update={"seed": 8}))])[0]
    assert a == b and len(a) == 3
    assert [x.text for x in a] != [x.text for x in c]
    red = sampler.generate([request(1, SamplingParams(temperature=0.0, max_tokens=6))])[0][0]
    blue = sampler.generate([request(1, SamplingParams(temperature=0.0, max_tokens=6), images=(BLUE,))])[0][0]
    assert red.cumulative_logprob != blue.cumulative_logprob


class Recorder:
    """Wraps a sampler and keeps every batch and its outputs."""

    def __init__(self, inner: TransformersSampler) -> None:
        self.inner = inner
        self.batches: list[tuple[list[GenerationRequest], list[list[Completion]]]] = []

    def generate(self, requests: Sequence[GenerationRequest]) -> list[list[Completion]]:
        out = self.inner.generate(requests)
        self.batches.append((list(requests), out))
        return out


def test_cg_mte_and_sc_end_to_end_with_a_real_extractor(digit_sampler: TransformersSampler) -> None:
    problems = [
        Problem(id=f"p{i}", question=f"Find x{i}.", images=(RED if i % 2 else BLUE,)) for i in range(3)
    ]
    extractor = LastNumberExtractor(allow_truncated=True)
    rec = Recorder(digit_sampler)
    cfg = geotts.CGMTEConfig(depth=3, params=SamplingParams(temperature=1.5, max_tokens=5, seed=0))
    decisions = geotts.ConsensusEnsemble(cfg).run(rec, problems, extractor)
    # Rebuild each problem's ranked answers from what the model really produced, and re-decide offline.
    answers: dict[str, dict[str, list[Any]]] = {p.id: {t: [] for t in cfg.order} for p in problems}
    tokens: dict[str, int] = {p.id: 0 for p in problems}
    for reqs, outs in rec.batches:
        for req, out in zip(reqs, outs, strict=True):
            problem = next(p for p in problems if req.messages[-1].content.startswith(p.question))
            assert req.trace_type is not None
            answers[problem.id][req.trace_type] += [extractor(c, req.trace_type, problem) for c in out]
            tokens[problem.id] += sum(c.num_tokens or 0 for c in out)
    for p, d in zip(problems, decisions, strict=True):
        offline = geotts.cg_mte({t: a for t, a in answers[p.id].items()}, depth=d.depth)
        assert (d.answer, d.depth, d.samples, d.fallback) == (
            offline.answer,
            offline.depth,
            offline.samples,
            offline.fallback,
        )
        assert d.generated == 4 * d.depth and d.tokens == tokens[p.id]
    assert any(isinstance(a, float) for d in decisions for _, lst in d.pool for a in lst)

    sc = geotts.SelfConsistency(geotts.SelfConsistencyConfig(k=4, params=BeamParams(max_tokens=5)))
    (d,) = sc.run(digit_sampler, problems[:1], extractor)
    assert d.samples == d.generated == 4 and d.tokens is not None and d.tokens > 0


def test_loading_a_missing_folder_fails_clearly(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        TransformersSampler.from_pretrained(tmp_path / "absent")


def test_a_raw_prompt_matches_the_same_chat_rendered_by_the_template(sampler: TransformersSampler) -> None:
    params = SamplingParams(temperature=0.0, max_tokens=5)
    chat = GenerationRequest(messages=(ChatMessage(role="user", content="Find x."),), params=params)
    text = sampler.processor.apply_chat_template(
        [{"role": "user", "content": [{"type": "text", "text": "Find x."}]}],
        tokenize=False,
        add_generation_prompt=True,
    )
    raw = GenerationRequest(prompt=text, params=params)
    assert sampler.generate([chat]) == sampler.generate([raw])


def test_cg_mte_end_to_end_with_geodsl_answer_reading(digit_sampler: TransformersSampler) -> None:
    """geodsl's final-answer reader, wired in by the test (geotts itself never imports geodsl)."""
    answers = pytest.importorskip("geodsl.answers")

    def geodsl_extractor(completion: Completion, trace_type: str | None, problem: Problem) -> float | None:
        text = answers.extract_final_answer(completion.text)
        if text is None:
            return None
        try:
            return answers.parse_answer(text)
        except ValueError:
            return None

    problems = [Problem(id=f"q{i}", question=f"Find y{i}.", images=(BLUE,)) for i in range(2)]
    cfg = geotts.CGMTEConfig(depth=3, params=SamplingParams(temperature=1.5, max_tokens=5, seed=3))
    rec = Recorder(digit_sampler)
    decisions = geotts.ConsensusEnsemble(cfg).run(rec, problems, geodsl_extractor)
    for p, d in zip(problems, decisions, strict=True):
        lists = {t: list(a) for t, a in d.pool}
        assert d == geotts.cg_mte(lists, depth=d.depth).model_copy(
            update={"generated": d.generated, "tokens": d.tokens, "pool": d.pool}
        ), p.id
        assert d.generated == 4 * d.depth


def test_batched_decoding_matches_one_request_at_a_time(digit_sampler: TransformersSampler) -> None:
    reqs = [
        GenerationRequest(messages=(ChatMessage(role="user", content=q),), images=(img,), params=p, n=n)
        for q, img in (("Find x.", RED), ("What is the length of segment AB?", BLUE), ("Find y.", BLUE))
        for p, n in ((SamplingParams(temperature=0.0, max_tokens=5), 1), (BeamParams(max_tokens=5), 2))
    ]
    alone = digit_sampler.generate(reqs)
    batched = TransformersSampler(digit_sampler.model, digit_sampler.processor, batch_size=8).generate(reqs)
    for a, b in zip(alone, batched, strict=True):
        assert [c.text for c in a] == [c.text for c in b]
        assert [c.cumulative_logprob for c in a] == pytest.approx([c.cumulative_logprob for c in b], abs=1e-3)


def test_tiny_qwen2_5_vl_builds_and_generates(tmp_path: Path) -> None:
    s = TransformersSampler.from_pretrained(tiny_qwen_vl(tmp_path / "q25", kind="qwen2_5_vl"))
    assert type(s.model).__name__ == "Qwen2_5_VLForConditionalGeneration"
    (cands,) = s.generate([request(2, BeamParams(max_tokens=4))])
    assert len(cands) == 2 and all(c.num_tokens == 4 and c.cumulative_logprob is not None for c in cands)


def test_tiny_qwen3_vl_loads_the_qwen3_processor_and_generates_with_an_image(tmp_path: Path) -> None:
    s = TransformersSampler.from_pretrained(tiny_qwen_vl(tmp_path / "q3", kind="qwen3_vl"))
    assert type(s.model).__name__ == "Qwen3VLForConditionalGeneration"
    assert type(s.processor).__name__ == "Qwen3VLProcessor"  # chosen by the config's model_type
    inputs, _ = s._inputs([request(1, SamplingParams(temperature=0.0, max_tokens=4))])
    grid = inputs["image_grid_thw"][0].tolist()  # 56x56 image, patch 16: resized to a 4x4 patch grid
    image_id = s.tokenizer.convert_tokens_to_ids("<|image_pad|>")
    assert int((inputs["input_ids"][0] == image_id).sum()) == grid[0] * grid[1] * grid[2] // 4
    (cands,) = s.generate([request(2, BeamParams(max_tokens=4))])
    assert len(cands) == 2 and all(c.num_tokens == 4 and c.cumulative_logprob is not None for c in cands)
    red = s.generate([request(1, SamplingParams(temperature=0.0, max_tokens=4))])[0][0]
    blue = s.generate([request(1, SamplingParams(temperature=0.0, max_tokens=4), images=(BLUE,))])[0][0]
    assert red.cumulative_logprob != blue.cumulative_logprob  # the image reaches the model


def test_a_text_only_causal_lm_renders_chat_requests_with_plain_string_content(tmp_path: Path) -> None:
    s = TransformersSampler.from_pretrained(tiny_qwen_vl(tmp_path / "lm", kind="causal_lm"))
    assert type(s.model).__name__ == "Qwen2ForCausalLM"
    chat = GenerationRequest(
        messages=(
            ChatMessage(role="system", content="Be brief."),
            ChatMessage(role="user", content="Find x."),
        ),
        params=SamplingParams(temperature=0.0, max_tokens=5),
    )
    text = s._text(chat)
    assert "<|im_start|>user\nFind x.<|im_end|>" in text and "'type'" not in text
    assert text.startswith("<|im_start|>system\nBe brief.<|im_end|>")
    (c,) = s.generate([chat])[0]
    assert c.num_tokens is not None and 1 <= c.num_tokens <= 5
    assert s.generate([GenerationRequest(prompt=text, params=chat.params)]) == [[c]]


def test_the_tiny_builder_covers_every_family_and_rejects_unknown_ones(tmp_path: Path) -> None:
    assert TINY_KINDS == ("qwen2_vl", "qwen2_5_vl", "qwen3_vl", "causal_lm")
    with pytest.raises(geotts.StrategyConfigError, match="no tiny model of family 'llama'"):
        tiny_qwen_vl(tmp_path / "x", kind="llama")  # type: ignore[arg-type]
    with pytest.raises(geotts.BackendError, match="model type 'llama' has no image-only processor"):
        image_only_processor_class("llama")
    folder = tiny_qwen_vl(tmp_path / "q25", kind="qwen2_5_vl", seed=3)
    assert type(load_processor(folder)).__name__ == "Qwen2_5_VLProcessor"
    again = tiny_qwen_vl(tmp_path / "q25b", kind="qwen2_5_vl", seed=3)
    assert (folder / "model.safetensors").read_bytes() == (again / "model.safetensors").read_bytes()
