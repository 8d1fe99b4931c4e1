"""The OpenAI-compatible HTTP backend against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

pytest.importorskip("httpx")

import geotts
from geotts import BeamParams, ChatMessage, GenerationRequest, LastNumberExtractor, Problem, SamplingParams
from geotts.backends.openai import OpenAICompatibleSampler

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


class Fake:
    """Server behaviour: answers from ``reply``; optional failures for the first calls; tracks concurrency."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.fail_first: list[tuple[int, dict[str, str]]] = []
        self.slow_first = 0.0
        self.hold = 0.0
        self.truncate_first = False
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()
        self.reply: Callable[[dict[str, Any]], list[str]] = lambda body: [
            f"answer {i}" for i in range(body["n"])
        ]


def _handler(fake: Fake) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with fake.lock:
                fake.bodies.append(body)
                call = len(fake.bodies)
                fake.in_flight += 1
                fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                failure = fake.fail_first.pop(0) if fake.fail_first else None
            # A call stops counting as in flight before its response is written: the client may send its
            # next call as soon as it has read this response, so decrementing afterwards would count one
            # call twice (the late count once made this fake report 3 calls in flight under a cap of 2).
            try:
                if call == 1 and fake.slow_first:
                    time.sleep(fake.slow_first)
                time.sleep(fake.hold)
                if self.path == "/v1/completions":
                    status, payload, headers = 200, self._legacy(body), None
                elif self.path != "/v1/chat/completions":
                    status, payload, headers = 404, {"error": "not found"}, None
                elif failure is not None:
                    status, payload, headers = failure[0], {"error": "busy"}, failure[1]
                else:
                    status, payload, headers = 200, self._completion(body), None
            finally:
                with fake.lock:
                    fake.in_flight -= 1
            self._send(status, payload, headers)

        def _completion(self, body: dict[str, Any]) -> dict[str, Any]:
            texts = fake.reply(body)
            choices = [
                {
                    "index": i,
                    "message": {"role": "assistant", "content": t},
                    "finish_reason": "length" if fake.truncate_first and i == 0 else "stop",
                    "logprobs": {"content": [{"token": w, "logprob": -0.5} for w in t.split()]},
                }
                for i, t in enumerate(texts)
            ]
            return {
                "id": "x",
                "object": "chat.completion",
                "choices": choices[::-1],
                "usage": {"completion_tokens": sum(len(t.split()) for t in texts)},
            }

        def _legacy(self, body: dict[str, Any]) -> dict[str, Any]:
            texts = [f" then {i}" for i in range(body["n"])]
            return {
                "choices": [
                    {
                        "index": i,
                        "text": t,
                        "finish_reason": "length",
                        "logprobs": {"tokens": t.split(), "token_logprobs": [-0.25] * len(t.split())},
                    }
                    for i, t in enumerate(texts)
                ]
            }

        def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test)

    return Handler


@pytest.fixture
def server() -> Iterator[tuple[Fake, str]]:
    fake = Fake()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake, f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


def request(n: int = 2, **kw: Any) -> GenerationRequest:
    return GenerationRequest(
        messages=(
            ChatMessage(role="system", content="Be brief."),
            ChatMessage(role="user", content="Find x."),
        ),
        images=(PNG,),
        n=n,
        **kw,
    )


def test_chat_completions_with_n_logprobs_and_images(server: tuple[Fake, str]) -> None:
    fake, url = server
    fake.truncate_first = True
    sleeps: list[float] = []
    with OpenAICompatibleSampler(url, "tiny", api_key="k", sleep=sleeps.append) as sampler:
        (cands,) = sampler.generate(
            [request(n=3, params=SamplingParams(temperature=0.7, seed=5, stop=("END",)))]
        )
    body = fake.bodies[0]
    assert (body["model"], body["n"], body["temperature"], body["seed"], body["stop"], body["logprobs"]) == (
        "tiny",
        3,
        0.7,
        5,
        ["END"],
        True,
    )
    user = body["messages"][1]["content"]
    assert user[0]["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert user[1] == {"type": "text", "text": "Find x."}
    assert [c.text for c in cands] == ["answer 0", "answer 1", "answer 2"]  # ranked by choice index
    assert [(c.num_tokens, c.cumulative_logprob, c.finish_reason) for c in cands][:2] == [
        (2, -1.0, "length"),
        (2, -1.0, "stop"),
    ]
    assert sleeps == []


def test_beam_and_assistant_prefix_use_vllm_extensions(server: tuple[Fake, str]) -> None:
    fake, url = server
    with OpenAICompatibleSampler(url, "tiny") as sampler:
        sampler.generate([request(n=4, params=BeamParams(max_tokens=9), assistant_prefix="Step 1: x = 2\n")])
    body = fake.bodies[0]
    assert body["use_beam_search"] is True and body["n"] == 4 and body["max_tokens"] == 9
    assert body["messages"][-1] == {"role": "assistant", "content": "Step 1: x = 2\n"}
    assert body["continue_final_message"] is True and body["add_generation_prompt"] is False


def test_a_raw_prompt_uses_the_completions_endpoint(server: tuple[Fake, str]) -> None:
    fake, url = server
    req = GenerationRequest(prompt="<|im_start|>user\nFind x.<|im_end|>\n", assistant_prefix="x = 1", n=2)
    with OpenAICompatibleSampler(url, "tiny") as sampler:
        (cands,) = sampler.generate([req])
        with pytest.raises(geotts.StrategyConfigError, match="raw-prompt request cannot carry images"):
            sampler.generate([req.model_copy(update={"images": (PNG,)})])
    assert fake.bodies[0]["prompt"].endswith("<|im_end|>\nx = 1") and fake.bodies[0]["logprobs"] == 0
    assert [(c.text, c.num_tokens, c.cumulative_logprob, c.finish_reason) for c in cands] == [
        (" then 0", 2, -0.5, "length"),
        (" then 1", 2, -0.5, "length"),
    ]


def test_retries_5xx_and_429_with_exponential_backoff_and_retry_after(server: tuple[Fake, str]) -> None:
    fake, url = server
    fake.fail_first = [(500, {}), (503, {}), (429, {"Retry-After": "7"})]
    sleeps: list[float] = []
    with OpenAICompatibleSampler(url, "tiny", backoff=0.25, max_retries=3, sleep=sleeps.append) as sampler:
        (cands,) = sampler.generate([request()])
    assert len(fake.bodies) == 4 and len(cands) == 2
    assert sleeps == [0.25, 0.5, 7.0]


def test_gives_up_after_max_retries_and_does_not_retry_client_errors(server: tuple[Fake, str]) -> None:
    fake, url = server
    fake.fail_first = [(500, {})] * 3
    with (
        OpenAICompatibleSampler(url, "tiny", max_retries=2, sleep=lambda s: None) as sampler,
        pytest.raises(geotts.BackendError, match="after 3 attempts: HTTP 500"),
    ):
        sampler.generate([request()])
    fake.fail_first = [(400, {})]
    fake.bodies.clear()
    with (
        OpenAICompatibleSampler(url, "tiny", sleep=lambda s: None) as sampler,
        pytest.raises(geotts.BackendError, match="after 1 attempts: HTTP 400"),
    ):
        sampler.generate([request()])
    assert len(fake.bodies) == 1


def test_a_timed_out_call_is_retried(server: tuple[Fake, str]) -> None:
    fake, url = server
    fake.slow_first = 1.0
    sleeps: list[float] = []
    with OpenAICompatibleSampler(url, "tiny", timeout=0.2, backoff=0.1, sleep=sleeps.append) as sampler:
        (cands,) = sampler.generate([request()])
    assert len(cands) == 2 and sleeps == [0.1] and len(fake.bodies) == 2


def test_concurrency_limit_caps_calls_in_flight(server: tuple[Fake, str]) -> None:
    fake, url = server
    fake.hold = 0.05
    with OpenAICompatibleSampler(url, "tiny", max_concurrency=2) as sampler:
        out = sampler.generate([request(n=1) for _ in range(6)])
    assert len(out) == 6 and len(fake.bodies) == 6
    assert 1 <= fake.max_in_flight <= 2


def test_cg_mte_end_to_end_over_http(server: tuple[Fake, str]) -> None:
    fake, url = server
    tops = {"symbolic program": "3", "Python code": "3"}

    def reply(body: dict[str, Any]) -> list[str]:
        text = body["messages"][-1]["content"][-1]["text"]
        kind = "Python code" if "Python" in text else "symbolic program"
        cot = "step by step" in text
        return [f"x = {tops[kind] if not cot else '4' if kind == 'Python code' else '5'}"] * body["n"]

    fake.reply = reply
    with OpenAICompatibleSampler(url, "tiny") as sampler:
        cfg = geotts.CGMTEConfig(depth=3, params=SamplingParams(temperature=1.0, seed=0))
        (d,) = geotts.ConsensusEnsemble(cfg).run(
            sampler, [Problem(id="p", question="Find x.", images=(PNG,))], LastNumberExtractor()
        )
    assert (d.answer, d.depth, d.samples, d.generated, d.tokens) == (3.0, 1, 4, 4, 12)
    assert len(fake.bodies) == 4


def test_bad_settings_are_rejected() -> None:
    with pytest.raises(geotts.StrategyConfigError, match="max_concurrency=0"):
        OpenAICompatibleSampler("http://127.0.0.1:1/v1", "m", max_concurrency=0)
