"""geotts's HTTP backend against a real ``transformers serve`` (tiny random models: the texts are gibberish,
so what is checked is the protocol a user relies on: candidate counts, token counts, finish reasons,
seeds, images, and clear errors for what this server does not do)."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest

import geotts
from geotts import BeamParams, ChatMessage, GenerationRequest, LastNumberExtractor, Problem, SamplingParams

from .conftest import Served, serve_skip_reason

pytestmark = [
    pytest.mark.slow,  # a server process and two model builds: about a minute on a loaded 2-core machine
    pytest.mark.skipif(serve_skip_reason() is not None, reason=serve_skip_reason() or ""),
]


def _png() -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (40, 32), (200, 30, 30)).save(buf, format="PNG")
    return buf.getvalue()


def _chat(n: int = 1, *, images: tuple[bytes, ...] = (), **params: object) -> GenerationRequest:
    return GenerationRequest(
        messages=(ChatMessage(role="user", content="Find x. Answer: "),),
        images=images,
        n=n,
        params=SamplingParams.model_validate({"temperature": 1.0, "max_tokens": 6, "seed": 0, **params}),
    )


@pytest.fixture
def text_sampler(served: Served) -> Iterator[geotts.Sampler]:
    from geotts.backends.openai import OpenAICompatibleSampler

    with OpenAICompatibleSampler(served.base_url, served.text_model, max_retries=0, timeout=60) as sampler:
        yield sampler


@pytest.fixture
def vision_sampler(served: Served) -> Iterator[geotts.Sampler]:
    from geotts.backends.openai import OpenAICompatibleSampler

    with OpenAICompatibleSampler(served.base_url, served.vision_model, max_retries=0, timeout=60) as sampler:
        yield sampler


def test_n_candidates_come_back_with_token_counts_and_finish_reasons(text_sampler: geotts.Sampler) -> None:
    # transformers serve ignores n (one choice per call): the backend asks again for the rest.
    (cands,) = text_sampler.generate([_chat(n=3)])
    assert len(cands) == 3
    for c in cands:
        assert c.finish_reason in ("stop", "length")
        assert c.num_tokens is not None and 1 <= c.num_tokens <= 6
        assert c.finish_reason == "stop" or c.num_tokens == 6  # cut off exactly at max_tokens
        assert c.cumulative_logprob is None  # this server ignores logprobs
    assert len({c.text for c in cands}) > 1  # the extra calls are seeded apart: fresh samples


def test_a_seeded_request_is_repeatable_and_greedy_decoding_works(text_sampler: geotts.Sampler) -> None:
    (first,) = text_sampler.generate([_chat(n=2, seed=7)])
    (again,) = text_sampler.generate([_chat(n=2, seed=7)])
    assert [c.text for c in first] == [c.text for c in again]
    (greedy,) = text_sampler.generate([_chat(temperature=0.0)])
    (greedy_again,) = text_sampler.generate([_chat(temperature=0.0, seed=123)])
    assert greedy[0].text == greedy_again[0].text


def test_a_batch_of_requests_comes_back_in_order(text_sampler: geotts.Sampler) -> None:
    requests = [_chat(n=n, seed=s) for n, s in ((1, 0), (2, 1), (1, 2), (3, 3))]
    out = text_sampler.generate(requests)
    assert [len(c) for c in out] == [1, 2, 1, 3]  # the server seeds one global generator: concurrent
    # calls are not repeatable one by one, only counts and order are


def test_a_raw_prompt_goes_to_the_completions_endpoint(text_sampler: geotts.Sampler) -> None:
    req = GenerationRequest(
        prompt="<|im_start|>user\nFind x.<|im_end|>\n<|im_start|>assistant\n",
        n=2,
        params=SamplingParams(temperature=1.0, max_tokens=5, seed=0),
    )
    (cands,) = text_sampler.generate([req])
    assert len(cands) == 2 and all(c.num_tokens is not None and c.num_tokens <= 5 for c in cands)


def test_the_vision_model_takes_the_image(vision_sampler: geotts.Sampler) -> None:
    (with_image,) = vision_sampler.generate([_chat(n=2, images=(_png(),))])
    assert len(with_image) == 2 and all(c.finish_reason in ("stop", "length") for c in with_image)


def test_bytes_that_are_no_image_fail_before_any_call(vision_sampler: geotts.Sampler) -> None:
    with pytest.raises(geotts.BackendError) as err:
        vision_sampler.generate([_chat(images=(b"not an image",))])
    assert "image 1 of the request is not PNG, JPEG, GIF or WebP" in str(err.value)


def test_what_this_server_does_not_do_fails_with_one_line_naming_it(text_sampler: geotts.Sampler) -> None:
    beam = GenerationRequest(messages=_chat().messages, n=2, params=BeamParams(max_tokens=4))
    with pytest.raises(geotts.BackendError) as err:
        text_sampler.generate([beam])
    message = str(err.value)
    assert "HTTP 422" in message and "use_beam_search" in message and "\n" not in message
    prefixed = _chat().model_copy(update={"assistant_prefix": "Step 1: x = 2\n"})
    with pytest.raises(geotts.BackendError, match="continue_final_message"):
        text_sampler.generate([prefixed])


def test_cg_mte_runs_end_to_end(vision_sampler: geotts.Sampler) -> None:
    cfg = geotts.CGMTEConfig(depth=2, params=SamplingParams(temperature=1.0, max_tokens=6, seed=0))
    problems = [Problem(id="p", question="Find x.", images=(_png(),))]
    (decision,) = geotts.ConsensusEnsemble(cfg).run(vision_sampler, problems, LastNumberExtractor())
    assert 4 <= decision.generated <= 8 and decision.depth in (1, 2)  # V = 4 trace types, depth 1..2
    assert decision.tokens is not None and decision.tokens <= decision.generated * 6
