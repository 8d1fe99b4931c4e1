"""LLM access for the CoT stages: a geotts sampler from an :class:`LLMConfig`, behind a disk cache.

geotts is imported lazily (geosynth's ``llm`` extra). Every reply is cached in SQLite under the hash
of (rendered messages, model, decoding parameters, and the diagram's bytes when one is sent), so
rerunning a finished or interrupted run sends no request that was already answered. Misses go to
the sampler in batches; an optional client-side rate limit spaces the batches. A teacher configured
with ``vision`` gets each problem's diagram with every prompt about it; a text-only teacher gets the
prompt alone, which names the diagram's clauses in words.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from geosynth.mts._config import LLMConfig
from geosynth.mts._store import stable_hash
from geosynth.mts.errors import MTSConfigError, MTSLLMError

if TYPE_CHECKING:
    from geotts import Sampler

__all__ = ("CachedLLM", "build_sampler")


def build_sampler(config: LLMConfig) -> Sampler:
    """The geotts sampler a configuration names.

    Raises:
        MTSConfigError: geotts (or the backend's extra) is not installed, or the key variable is unset.
    """
    try:
        from geotts.errors import MissingExtraError
    except ImportError as exc:
        raise MTSConfigError('the CoT stages need geotts: pip install "geosynth[llm]"') from exc

    try:
        if config.backend == "template":
            from geosynth.mts._template_teacher import TemplateTeacher

            return TemplateTeacher(seed=config.seed or 0)
        if config.backend == "openai":
            from geotts.backends.openai import OpenAICompatibleSampler

            key = None
            if config.api_key_env:
                key = os.environ.get(config.api_key_env)
                if not key:
                    raise MTSConfigError(
                        f"environment variable {config.api_key_env} (api_key_env) is not set"
                    )
            if config.base_url is None:  # LLMConfig's validator makes this unreachable from a loaded config
                raise MTSConfigError("backend 'openai' needs base_url (e.g. http://127.0.0.1:8000/v1)")
            return OpenAICompatibleSampler(
                config.base_url,
                config.model,
                api_key=key,
                timeout=config.timeout,
                max_retries=config.max_retries,
                max_concurrency=config.max_concurrency,
                logprobs=False,
            )
        if config.backend == "transformers":
            from geotts.backends.transformers import TransformersSampler

            return TransformersSampler.from_pretrained(config.model, device=config.device)
        from geotts.backends.vllm import VLLMSampler

        return VLLMSampler(config.model, options=config.vllm)
    except MissingExtraError as exc:
        raise MTSConfigError(str(exc)) from exc


class CachedLLM:
    """Chat prompts in, reply texts out, through a sampler with a persistent SQLite cache.

    Args:
        sampler: the geotts sampler that answers cache misses.
        config: model name and decoding parameters (part of the cache key), batching and rate limit,
            and whether the teacher reads images (``vision``).
        cache_path: the SQLite file.
        images_dir: the folder the diagram names of :meth:`complete` are read from (None: no diagrams).
        close_sampler: :meth:`close` also closes the sampler (its HTTP connections), for a sampler built
            for this cache.
        clock, sleep: injectable time functions for the rate limit.
    """

    def __init__(
        self,
        sampler: Sampler,
        config: LLMConfig,
        cache_path: Path,
        *,
        images_dir: Path | None = None,
        close_sampler: bool = False,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.sampler = sampler
        self.config = config
        self.images_dir = images_dir
        self._close_sampler = close_sampler
        self.images_sent = 0
        self.images_missing: set[str] = set()
        cache_path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(cache_path))
        self._db.execute("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, reply TEXT NOT NULL)")
        self._db.commit()
        self._clock, self._sleep = clock, sleep
        self._next_slot = 0.0
        self.requests_sent = 0
        self.cache_hits = 0

    def close(self) -> None:
        """Close the cache database (and the sampler, when built for this cache)."""
        self._db.close()
        closer = getattr(self.sampler, "close", None) if self._close_sampler else None
        if callable(closer):
            closer()

    def _params(self) -> dict[str, Any]:
        c = self.config
        return {"temperature": c.temperature, "top_p": c.top_p, "max_tokens": c.max_tokens, "seed": c.seed}

    def key(self, prompt: str, image: bytes | None = None) -> str:
        """The cache key of a one-turn prompt: hash of (prompt, model, decoding parameters[, image digest])."""
        fields: dict[str, Any] = {"prompt": prompt, "model": self.config.model, "params": self._params()}
        if image is not None:
            fields["image_sha256"] = hashlib.sha256(image).hexdigest()
        return stable_hash(fields)

    def diagram(self, name: str | None) -> bytes | None:
        """The bytes of the diagram a prompt is sent with, if any.

        None for a text-only teacher, a problem without a diagram, or a diagram file that is not in
        ``images_dir`` (remembered in ``images_missing``; the prompt then goes as text).
        """
        if not self.config.vision or not name or self.images_dir is None:
            return None
        try:
            return (self.images_dir / name).read_bytes()
        except OSError:
            self.images_missing.add(name)
            return None

    def _lookup(self, key: str) -> str | None:
        row = self._db.execute("SELECT reply FROM replies WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(json.loads(row[0])["text"])

    def _wait_for_slot(self, calls: int) -> None:
        rpm = self.config.requests_per_minute
        if rpm is None:
            return
        now = self._clock()
        if now < self._next_slot:
            self._sleep(self._next_slot - now)
            now = self._next_slot
        self._next_slot = now + 60.0 * calls / rpm

    def complete(self, prompts: Sequence[str], diagrams: Sequence[str | None] | None = None) -> list[str]:
        """Reply texts for one-turn user prompts, in order (cached replies are not requested again).

        Args:
            prompts: the rendered prompts.
            diagrams: per prompt, the file name of its problem's diagram in ``images_dir`` (or None);
                sent with the prompt when the teacher reads images (see :meth:`diagram`).

        Raises:
            MTSLLMError: the backend failed for a batch after its retries.
        """
        from geotts import ChatMessage, GenerationRequest, GeoTTSError, SamplingParams

        names = list(diagrams) if diagrams is not None else [None] * len(prompts)
        if len(names) != len(prompts):
            raise ValueError(f"{len(prompts)} prompts but {len(names)} diagram names")
        images = [self.diagram(name) for name in names]
        keys = [self.key(p, image) for p, image in zip(prompts, images, strict=True)]
        replies: dict[str, str] = {}
        for k in keys:
            hit = self._lookup(k)
            if hit is not None:
                replies[k] = hit
        self.cache_hits += len(replies)
        misses = list(
            {
                k: (k, p, image)
                for k, p, image in zip(keys, prompts, images, strict=True)
                if k not in replies
            }.values()
        )
        c = self.config
        params = SamplingParams(
            temperature=c.temperature, top_p=c.top_p, max_tokens=c.max_tokens, seed=c.seed
        )
        for start in range(0, len(misses), c.batch_size):
            batch = misses[start : start + c.batch_size]
            requests = [
                GenerationRequest(
                    messages=(ChatMessage(role="user", content=p),),
                    images=() if image is None else (image,),
                    params=params,
                )
                for _, p, image in batch
            ]
            self._wait_for_slot(len(requests))
            try:
                out = self.sampler.generate(requests)
            except GeoTTSError as exc:
                raise MTSLLMError(
                    f"LLM {c.model!r} failed on a batch of {len(requests)} prompts: {exc}"
                ) from exc
            self.requests_sent += len(requests)
            self.images_sent += sum(1 for r in requests if r.images)
            with self._db:
                for (k, _, _), candidates in zip(batch, out, strict=True):
                    text = candidates[0].text if candidates else ""
                    replies[k] = text
                    self._db.execute(
                        "INSERT OR REPLACE INTO replies VALUES (?, ?)",
                        (k, json.dumps({"text": text, "model": c.model})),
                    )
        return [replies[k] for k in keys]
