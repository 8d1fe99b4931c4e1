"""A :class:`~geotts.Sampler` for any OpenAI-compatible chat-completions server (vLLM's server, hosted APIs).

One HTTP call per request: ``n`` candidates with per-token ``logprobs``, images as base64 data URLs
in the first user turn (PNG, JPEG, GIF or WebP; other bytes fail before any call). Calls run
concurrently up to ``max_concurrency``; each has a timeout; timeouts, connection errors, 429 and 5xx
are retried with exponential backoff (``Retry-After`` is honoured), other 4xx fail at once (naming
the vLLM extension fields the call used, which other servers may refuse). Beam requests set vLLM's
``use_beam_search`` extension (hosted APIs reject it); an ``assistant_prefix`` is sent as a final
assistant turn with vLLM's ``continue_final_message``. Incremental depth: sampling calls with new seeds give fresh candidates;
beam search is rerun at the new width (``n``), with no reuse across calls.

A server that answers a sampling call with fewer choices than ``n`` (``transformers serve`` ignores
``n`` and answers one) is asked again for the rest, each further call seeded apart from the strategies'
own ``seed + k`` series (see :func:`top_up_seed`); a beam call answered short is an error. A server
that ignores ``logprobs`` leaves ``cumulative_logprob`` unset; the token count then comes from the
call's ``usage`` when the call returned a single choice.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

from geotts._models import BeamParams, Completion, GenerationRequest
from geotts.backends._common import image_bytes, image_mime, require
from geotts.errors import BackendError, StrategyConfigError

__all__ = ("OpenAICompatibleSampler", "top_up_seed")

_RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
_FINISH: dict[str, Literal["stop", "length", "other"]] = {"stop": "stop", "length": "length", "eos": "stop"}
_VLLM_EXTENSIONS = ("use_beam_search", "length_penalty", "continue_final_message", "add_generation_prompt")
_TOP_UP_STRIDE = 1_000_003  # far beyond the small offsets strategies add to a base seed


def top_up_seed(seed: int, have: int) -> int:
    """The seed of the call that asks for the rest once ``have`` candidates of a seeded request came back."""
    return (seed + _TOP_UP_STRIDE * have) % 2**32


def _data_url(data: bytes, index: int) -> str:
    mime = image_mime(data)
    if mime is None:
        raise BackendError(
            f"image {index + 1} of the request is not PNG, JPEG, GIF or WebP data (it starts with {data[:8]!r})"
        )
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def _user_content(text: str, images: Sequence[bytes]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = [
        {"type": "image_url", "image_url": {"url": _data_url(b, i)}} for i, b in enumerate(images)
    ]
    parts.append({"type": "text", "text": text})
    return parts


class OpenAICompatibleSampler:
    """Chat completions with ``n`` and ``logprobs`` against an OpenAI-compatible HTTP server."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 4,
        backoff: float = 1.0,
        max_concurrency: int = 8,
        logprobs: bool = True,
        extra_body: dict[str, Any] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Configure the client.

        Args:
            base_url: Server root including the API prefix, e.g. ``http://127.0.0.1:8000/v1``.
            model: Model name sent with every call.
            api_key: Bearer token, if the server needs one.
            timeout: Seconds allowed per HTTP call (connect, read and write each).
            max_retries: Retries after the first attempt for retryable failures.
            backoff: First retry delay in seconds; doubles on each further retry.
            max_concurrency: Most HTTP calls in flight at once.
            logprobs: Ask for per-token log-probs (gives exact token counts and cumulative log-probs).
            extra_body: Extra JSON fields merged into every call (server-specific options).
            sleep: Sleep function used between retries (injectable for tests).
        """
        if max_concurrency < 1 or max_retries < 0 or timeout <= 0 or backoff < 0:
            raise StrategyConfigError(
                f"invalid HTTP settings: max_concurrency={max_concurrency} (>=1), max_retries={max_retries} (>=0), "
                f"timeout={timeout} (>0), backoff={backoff} (>=0)"
            )
        httpx = require("httpx", "openai")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._httpx: Any = httpx
        self._client: Any = httpx.Client(
            base_url=base_url.rstrip("/") + "/", timeout=timeout, headers=headers
        )
        self.model = model
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_concurrency = max_concurrency
        self.logprobs = logprobs
        self.extra_body = dict(extra_body or {})
        self._sleep = sleep

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    def __enter__(self) -> OpenAICompatibleSampler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _messages(self, req: GenerationRequest) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = []
        imgs = [image_bytes(i) for i in req.images]
        placed = False
        for m in req.messages:
            if m.role == "user" and not placed:
                messages.append({"role": "user", "content": _user_content(m.content, imgs)})
                placed = True
            else:
                messages.append({"role": m.role, "content": m.content})
        if req.assistant_prefix:
            messages.append({"role": "assistant", "content": req.assistant_prefix})
        return messages

    def body(self, req: GenerationRequest) -> tuple[str, dict[str, Any]]:
        """The endpoint (``chat/completions``, or ``completions`` for a raw prompt) and JSON body for ``req``."""
        p = req.params
        body: dict[str, Any] = {"model": self.model, "n": req.n, "max_tokens": p.max_tokens}
        if isinstance(p, BeamParams):
            body.update(use_beam_search=True, temperature=0.0, length_penalty=p.length_penalty)
        else:
            body.update(temperature=p.temperature, top_p=p.top_p)
            if p.seed is not None:
                body["seed"] = p.seed
            if p.stop:
                body["stop"] = list(p.stop)
        if req.prompt is not None:
            if req.images:
                raise StrategyConfigError(
                    "a raw-prompt request cannot carry images over HTTP; use chat messages"
                )
            body["prompt"] = req.prompt + req.assistant_prefix
            if self.logprobs:
                body["logprobs"] = 0
            body.update(self.extra_body)
            return "completions", body
        body["messages"] = self._messages(req)
        if self.logprobs:
            body["logprobs"] = True
        if req.assistant_prefix:
            body.update(continue_final_message=True, add_generation_prompt=False)
        body.update(self.extra_body)
        return "chat/completions", body

    def _post(self, call: tuple[str, dict[str, Any]]) -> dict[str, Any]:
        path, body = call
        httpx = self._httpx
        last: str = ""
        retry_after: str | None = None
        for attempt in range(self.max_retries + 1):
            if attempt:
                self._sleep(self._delay(attempt, retry_after))
                retry_after = None
            try:
                resp = self._client.post(path, json=body)
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                last = f"{type(exc).__name__}: {exc}"
                if attempt == self.max_retries:
                    raise BackendError(f"{path} failed after {attempt + 1} attempts: {last}") from exc
                continue
            if resp.status_code == 200:
                try:
                    return resp.json()
                except ValueError as exc:
                    raise BackendError(
                        f"server answered 200 with a body that is not JSON: {resp.text[:200]!r}"
                    ) from exc
            last = f"HTTP {resp.status_code}: {' '.join(resp.text[:300].split())}"
            if resp.status_code == 429:
                retry_after = resp.headers.get("retry-after")
            if resp.status_code not in _RETRY_STATUS or attempt == self.max_retries:
                used = [k for k in _VLLM_EXTENSIONS if k in body]
                hint = (
                    f" (the call used vLLM's extension fields {used}, which this server may not accept)"
                    if used and 400 <= resp.status_code < 500
                    else ""
                )
                raise BackendError(f"{path} failed after {attempt + 1} attempts: {last}{hint}")
        raise BackendError(f"{path} failed: {last}")  # pragma: no cover - the loop always returns or raises

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after is not None:
            try:
                return max(0.0, float(retry_after))
            except ValueError:
                pass
        return self.backoff * 2 ** (attempt - 1)

    def _token_logprobs(self, choice: dict[str, Any]) -> list[float] | None:
        lp = choice.get("logprobs") if self.logprobs else None
        if not lp:
            return None
        if "content" in lp:  # chat completions
            return None if lp["content"] is None else [float(t["logprob"]) for t in lp["content"]]
        values = lp.get("token_logprobs")  # legacy completions
        return None if values is None else [float(v) for v in values if v is not None]

    def _parse(self, asked: int, data: dict[str, Any]) -> list[Completion]:
        choices = sorted(data.get("choices") or [], key=lambda c: c.get("index", 0))
        if not choices or len(choices) > asked:
            raise BackendError(f"server returned {len(choices)} choices, asked for n={asked}")
        usage = (data.get("usage") or {}).get("completion_tokens")
        out: list[Completion] = []
        for c in choices:
            logprobs = self._token_logprobs(c)
            tokens = len(logprobs) if logprobs is not None else (usage if len(choices) == 1 else None)
            text = c["text"] if "text" in c else (c.get("message") or {}).get("content")
            out.append(
                Completion(
                    text=text or "",
                    num_tokens=tokens,
                    cumulative_logprob=None if logprobs is None else sum(logprobs),
                    finish_reason=_FINISH.get(c.get("finish_reason") or "", "other"),
                )
            )
        return out

    def _candidates(self, req: GenerationRequest, call: tuple[str, dict[str, Any]]) -> list[Completion]:
        """The ``req.n`` candidates of one request: its call, then calls for the rest if the server answered short."""
        path, body = call
        out = self._parse(req.n, self._post(call))
        while len(out) < req.n:
            if isinstance(req.params, BeamParams):
                raise BackendError(
                    f"server returned {len(out)} beams, asked for n={req.n} (it does not run beam search)"
                )
            rest = {**body, "n": req.n - len(out)}
            if "seed" in body:
                rest["seed"] = top_up_seed(int(body["seed"]), len(out))
            out += self._parse(req.n - len(out), self._post((path, rest)))
        return out

    def generate(self, requests: Sequence[GenerationRequest]) -> list[list[Completion]]:
        """Send one call per request (at most ``max_concurrency`` at once); candidates in choice order."""
        calls = [self.body(r) for r in requests]
        with ThreadPoolExecutor(max_workers=self.max_concurrency) as pool:
            return list(pool.map(self._candidates, requests, calls))
