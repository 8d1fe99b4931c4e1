"""The HTTP backend with servers that answer short, refuse vLLM's extensions or get bytes that are no image.

The calls go to an in-process ``httpx.MockTransport`` that records each JSON body (the real-server
version of these checks, against ``transformers serve``, is tests/serve/test_geotts_http.py).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import pytest

import geotts
from geotts import BeamParams, ChatMessage, GenerationRequest, SamplingParams
from geotts.backends.openai import OpenAICompatibleSampler, top_up_seed

httpx = pytest.importorskip("httpx")

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)

Reply = Callable[[dict[str, Any]], tuple[int, dict[str, Any]]]


def _one_choice(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """What ``transformers serve`` does: one choice whatever ``n`` is, no logprobs, usage of that choice."""
    text = f"seed {body.get('seed')}"
    choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "length"}
    return 200, {"choices": [choice], "usage": {"completion_tokens": 4}}


def _sampler(reply: Reply) -> tuple[OpenAICompatibleSampler, list[dict[str, Any]]]:
    bodies: list[dict[str, Any]] = []

    def handle(request: Any) -> Any:
        body = json.loads(request.content)
        bodies.append(body)
        status, payload = reply(body)
        return httpx.Response(status, json=payload)

    sampler = OpenAICompatibleSampler("http://server.test/v1", "m", max_retries=0)
    sampler.close()
    sampler._client = httpx.Client(base_url="http://server.test/v1/", transport=httpx.MockTransport(handle))
    return sampler, bodies


def _request(n: int, *, seed: int | None = 5, images: tuple[bytes, ...] = ()) -> GenerationRequest:
    return GenerationRequest(
        messages=(ChatMessage(role="user", content="Find x."),),
        images=images,
        n=n,
        params=SamplingParams(temperature=0.8, max_tokens=4, seed=seed),
    )


def test_a_server_that_ignores_n_is_asked_again_for_the_rest() -> None:
    sampler, bodies = _sampler(_one_choice)
    with sampler:
        (cands,) = sampler.generate([_request(3)])
    assert [b["n"] for b in bodies] == [3, 2, 1]
    assert [b["seed"] for b in bodies] == [5, top_up_seed(5, 1), top_up_seed(5, 2)]
    assert [c.text for c in cands] == [f"seed {b['seed']}" for b in bodies]
    assert all(
        c.num_tokens == 4 and c.cumulative_logprob is None for c in cands
    )  # usage of a one-choice call


def test_top_up_seeds_stay_clear_of_the_strategies_seed_series() -> None:
    # strategies ask depth d with seed + d - 1: the extra calls of one depth must not replay another depth
    series = {5 + d for d in range(100)}
    assert not {top_up_seed(5, k) for k in range(1, 100)} & series


def test_an_unseeded_request_stays_unseeded() -> None:
    sampler, bodies = _sampler(_one_choice)
    with sampler:
        (cands,) = sampler.generate([_request(2, seed=None)])
    assert len(cands) == 2 and all("seed" not in b for b in bodies)


@pytest.mark.parametrize(("count", "n"), [(0, 2), (3, 2)])
def test_no_choices_or_too_many_is_an_error(count: int, n: int) -> None:
    def reply(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        choice = {"message": {"role": "assistant", "content": "x"}, "finish_reason": "stop"}
        return 200, {"choices": [{**choice, "index": i} for i in range(count)]}

    sampler, _ = _sampler(reply)
    with (
        sampler,
        pytest.raises(geotts.BackendError, match=f"server returned {count} choices, asked for n={n}"),
    ):
        sampler.generate([_request(n)])


def test_a_short_beam_answer_is_an_error_not_a_resample() -> None:
    sampler, bodies = _sampler(_one_choice)
    beam = GenerationRequest(messages=_request(1).messages, n=3, params=BeamParams(max_tokens=4))
    with sampler, pytest.raises(geotts.BackendError, match="returned 1 beams, asked for n=3"):
        sampler.generate([beam])
    assert len(bodies) == 1


def test_a_refused_vllm_extension_is_named_in_the_error() -> None:
    def reply(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        return 422, {"detail": "Unexpected fields in the request: {'continue_final_message'}"}

    sampler, _ = _sampler(reply)
    prefixed = _request(1).model_copy(update={"assistant_prefix": "Step 1:"})
    with sampler, pytest.raises(geotts.BackendError) as err:
        sampler.generate([prefixed])
    message = str(err.value)
    assert "HTTP 422" in message and "vLLM's extension fields" in message
    assert "'continue_final_message', 'add_generation_prompt'" in message and "\n" not in message


def test_images_are_checked_before_any_call() -> None:
    sampler, bodies = _sampler(_one_choice)
    with sampler:
        sampler.generate([_request(1, images=(PNG,))])
        with pytest.raises(
            geotts.BackendError, match=r"image 2 of the request is not PNG, JPEG, GIF or WebP"
        ):
            sampler.generate([_request(1, images=(PNG, b"BM\x00\x00 a bitmap"))])
    assert len(bodies) == 1
    assert bodies[0]["messages"][0]["content"][0]["image_url"]["url"].startswith("data:image/png;base64,")
