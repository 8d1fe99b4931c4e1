"""A :class:`~geotts.Sampler` on the vLLM offline engine (``pip install "geotts[vllm]"``, needs a GPU).

* sampling and greedy: one ``LLM.generate`` call for the whole batch, ``SamplingParams(n=..., logprobs=0)``
  (so cumulative log-probs are filled in), one params object per prompt;
* beam search: ``LLM.beam_search`` with ``BeamSearchParams(beam_width=n)``, one call per distinct
  (width, max_tokens, length_penalty), all ``n`` beams returned best first;
* images: ``{"prompt": ..., "multi_modal_data": {"image": ...}}`` with the chat template applied by
  the model's tokenizer; ``enable_prefix_caching=True`` by default, so the shared system + image +
  question prefix of the trace prompts of one problem is computed once per batch.

Incremental depth: sampling with a new seed gives fresh candidates, and prefix caching makes the
repeated prompt nearly free. Beam search cannot be extended: a width-d search is rerun from
scratch (the prompt prefix still hits the cache) or width D is decoded once and revealed
(``geotts.CGMTEConfig.beam_policy``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from geotts._models import BeamParams, Completion, GenerationRequest, SamplingParams
from geotts.backends._common import chat_dicts, pil_image, require
from geotts.errors import BackendError

__all__ = ("VLLMSampler",)

_FINISH: dict[str | None, Literal["stop", "length", "other"]] = {"stop": "stop", "length": "length"}


class VLLMSampler:
    """Generate candidates with ``vllm.LLM`` (offline, batched)."""

    def __init__(self, model: str | Any, *, max_images_per_prompt: int = 1, **engine_kwargs: Any) -> None:
        """Start an engine, or wrap one.

        Args:
            model: A model name/folder (an engine is started) or an existing ``vllm.LLM``.
            max_images_per_prompt: Images accepted per prompt (``limit_mm_per_prompt``).
            **engine_kwargs: Extra ``vllm.LLM`` arguments (e.g. ``dtype``, ``max_model_len``,
                ``gpu_memory_utilization``); ``enable_prefix_caching`` defaults to True.
        """
        self._vllm: Any = require("vllm", "vllm")
        if isinstance(model, str):
            engine_kwargs.setdefault("enable_prefix_caching", True)
            engine_kwargs.setdefault("limit_mm_per_prompt", {"image": max_images_per_prompt})
            self.llm: Any = self._vllm.LLM(model=model, **engine_kwargs)
        else:
            self.llm = model
        self.tokenizer: Any = self.llm.get_tokenizer()

    def _prompt(self, req: GenerationRequest) -> dict[str, Any]:
        if req.prompt is not None:
            text = req.prompt + req.assistant_prefix
        else:
            chat = chat_dicts(req.messages, len(req.images))
            text = self.tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
            text += req.assistant_prefix
        prompt: dict[str, Any] = {"prompt": text}
        if req.images:
            imgs = [pil_image(i, extra="vllm") for i in req.images]
            prompt["multi_modal_data"] = {"image": imgs[0] if len(imgs) == 1 else imgs}
        return prompt

    def _sampling(self, req: GenerationRequest) -> Any:
        p = req.params
        assert isinstance(p, SamplingParams)
        return self._vllm.SamplingParams(
            n=req.n,
            temperature=p.temperature,
            top_p=p.top_p,
            max_tokens=p.max_tokens,
            seed=p.seed,
            stop=list(p.stop) or None,
            logprobs=0,
        )

    def generate(self, requests: Sequence[GenerationRequest]) -> list[list[Completion]]:
        """Generate ``request.n`` ranked candidates for every request (sampling batched in one call)."""
        out: list[list[Completion] | None] = [None] * len(requests)
        sample_idx = [i for i, r in enumerate(requests) if isinstance(r.params, SamplingParams)]
        if sample_idx:
            try:
                results = self.llm.generate(
                    [self._prompt(requests[i]) for i in sample_idx],
                    sampling_params=[self._sampling(requests[i]) for i in sample_idx],
                    use_tqdm=False,
                )
            except (RuntimeError, ValueError) as exc:
                raise BackendError(f"vLLM generate failed: {exc}") from exc
            for i, res in zip(sample_idx, results, strict=True):
                out[i] = [
                    Completion(
                        text=c.text,
                        num_tokens=len(c.token_ids),
                        cumulative_logprob=c.cumulative_logprob,
                        finish_reason=_FINISH.get(c.finish_reason, "other"),
                    )
                    for c in res.outputs
                ]
        groups: dict[tuple[int, int, float], list[int]] = {}
        for i, r in enumerate(requests):
            if isinstance(r.params, BeamParams):
                groups.setdefault((r.n, r.params.max_tokens, r.params.length_penalty), []).append(i)
        for (width, max_tokens, penalty), idx in groups.items():
            params = self._vllm.sampling_params.BeamSearchParams(
                beam_width=width, max_tokens=max_tokens, length_penalty=penalty
            )
            try:
                results = self.llm.beam_search([self._prompt(requests[i]) for i in idx], params)
            except (RuntimeError, ValueError) as exc:
                raise BackendError(f"vLLM beam search failed (width {width}): {exc}") from exc
            for i, res in zip(idx, results, strict=True):
                out[i] = [self._beam(seq) for seq in res.sequences[:width]]
        return [c if c is not None else [] for c in out]

    def _beam(self, seq: Any) -> Completion:
        # ``tokens`` holds prompt + generated ids and ``logprobs`` one entry per generated token.
        n_gen = len(seq.logprobs)
        ids = list(seq.tokens[len(seq.tokens) - n_gen :]) if n_gen else []
        eos = self.tokenizer.eos_token_id
        reason: Literal["stop", "length", "other"] = "stop" if ids and ids[-1] == eos else "length"
        if getattr(seq, "finish_reason", None) in _FINISH:
            reason = _FINISH[seq.finish_reason]
        return Completion(
            text=self.tokenizer.decode(ids, skip_special_tokens=True),
            num_tokens=n_gen,
            cumulative_logprob=float(seq.cum_logprob),
            finish_reason=reason,
        )
