"""A :class:`~geotts.Sampler` on the vLLM offline engine (``pip install "geotts[vllm]"``, needs a GPU).

* sampling and greedy: one ``LLM.generate`` call for the whole batch, ``SamplingParams(n=..., logprobs=0)``
  (so cumulative log-probs are filled in), one params object per prompt;
* beam search: ``LLM.beam_search`` with ``BeamSearchParams(beam_width=n)``, one call per distinct
  (width, max_tokens, length_penalty), all ``n`` beams returned best first;
* images: ``{"prompt": ..., "multi_modal_data": {"image": ...}}`` with the chat template applied by
  the model's tokenizer; ``enable_prefix_caching=True`` by default, so the shared system + image +
  question prefix of the trace prompts of one problem is computed once per batch.

Engine settings a configuration file sets (dtype, ``max_model_len``, ``gpu_memory_utilization``) are
:class:`VLLMEngineOptions`, validated before vLLM is imported.

Incremental depth: sampling with a new seed gives fresh candidates, and prefix caching makes the
repeated prompt nearly free. Beam search cannot be extended: a width-d search is rerun from
scratch (the prompt prefix still hits the cache) or width D is decoded once and revealed
(``geotts.CGMTEConfig.beam_policy``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError

from geotts._models import BeamParams, Completion, GenerationRequest, GeoTTSModel, SamplingParams
from geotts.backends._common import chat_dicts, pil_image, require
from geotts.errors import BackendError, StrategyConfigError

__all__ = ("VLLMEngineOptions", "VLLMSampler")

_FINISH: dict[str | None, Literal["stop", "length", "other"]] = {"stop": "stop", "length": "length"}

VLLMDtype = Literal["auto", "float16", "bfloat16", "float32", "half", "float"]
"""The weight and activation dtypes ``vllm.LLM`` accepts by name."""


class VLLMEngineOptions(GeoTTSModel):
    """The ``vllm.LLM`` engine settings a configuration file may set (None: vLLM's own default).

    Configurations that start a vLLM engine (geosynth's ``LLMConfig``, the pipeline's evaluate
    stage, ``geo tts run``'s backend options) carry these fields and pass them on unchanged.
    """

    dtype: VLLMDtype | None = None
    """Weight and activation dtype (``auto`` takes the checkpoint's; ``bfloat16`` for Qwen-VL on recent GPUs)."""
    max_model_len: Annotated[int, Field(ge=1)] | None = None
    """Longest prompt + completion in tokens (default: the model's context length, which may not fit in memory)."""
    gpu_memory_utilization: Annotated[float, Field(gt=0.0, le=1.0)] | None = None
    """Share of the GPU's memory the engine may take for weights and KV cache (vLLM's default is 0.9)."""

    def engine_kwargs(self) -> dict[str, Any]:
        """The fields that are set, as ``vllm.LLM`` keyword arguments."""
        return self.model_dump(exclude_none=True)

    @classmethod
    def parse(cls, values: Mapping[str, Any], *, where: str = "vLLM engine options") -> VLLMEngineOptions:
        """Validate options read from a file (JSON types: ``max_model_len: 4096``, ``dtype: bfloat16``).

        Raises:
            StrategyConfigError: an unknown option or a bad value, in one line naming the field.
        """
        try:
            return cls.model_validate(dict(values), strict=False)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise StrategyConfigError(f"{where}: {problems}") from None


class VLLMSampler:
    """Generate candidates with ``vllm.LLM`` (offline, batched)."""

    def __init__(
        self,
        model: str | Any,
        *,
        options: VLLMEngineOptions | None = None,
        max_images_per_prompt: int = 1,
        **engine_kwargs: Any,
    ) -> None:
        """Start an engine, or wrap one.

        Args:
            model: A model name/folder (an engine is started) or an existing ``vllm.LLM``.
            options: The engine settings of a configuration (dtype, ``max_model_len``,
                ``gpu_memory_utilization``).
            max_images_per_prompt: Images accepted per prompt (``limit_mm_per_prompt``).
            **engine_kwargs: Further ``vllm.LLM`` arguments (``enforce_eager``, ``tensor_parallel_size``...);
                the fields of :class:`VLLMEngineOptions` given here are validated as if given in
                ``options`` (and may not be given in both); ``enable_prefix_caching`` defaults to True.

        Raises:
            StrategyConfigError: a bad engine option (checked before vLLM is imported).
            MissingExtraError: vLLM is not installed.
        """
        named = {k: engine_kwargs.pop(k) for k in VLLMEngineOptions.model_fields if k in engine_kwargs}
        both = sorted(k for k in named if options is not None and k in options.model_fields_set)
        if both:
            raise StrategyConfigError(f"vLLM engine option(s) {both} given both in options and as arguments")
        if max_images_per_prompt < 0:
            raise StrategyConfigError(
                f"max_images_per_prompt must be at least 0, got {max_images_per_prompt}"
            )
        settings = {
            **(options.engine_kwargs() if options else {}),
            **VLLMEngineOptions.parse(named).engine_kwargs(),
        }
        self._vllm: Any = require("vllm", "vllm")
        if isinstance(model, str):
            engine_kwargs.setdefault("enable_prefix_caching", True)
            engine_kwargs.setdefault("limit_mm_per_prompt", {"image": max_images_per_prompt})
            self.llm: Any = self._vllm.LLM(model=model, **settings, **engine_kwargs)
        else:
            if settings:
                raise StrategyConfigError(
                    f"vLLM engine options {sorted(settings)} apply when the sampler starts the engine, "
                    "not to an existing vllm.LLM"
                )
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
        if not isinstance(p, SamplingParams):
            raise StrategyConfigError("a beam-search request cannot be sampled; it goes to beam search")
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
