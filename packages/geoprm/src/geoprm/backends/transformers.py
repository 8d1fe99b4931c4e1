"""The reward model on Hugging Face ``transformers`` (a Qwen-VL-family checkpoint or a text-only causal LM).

:class:`TransformersCritic` writes critiques with greedy decoding, reads the top log-probs at each
step's final verdict while generating, and implements geotts's :class:`~geotts.StepScorer`. It can
also score a given critique by teacher forcing (one forward pass over prompt + critique), which gives
the same numbers as generation when the critique is the model's own output.

Needs the ``transformers`` extra: ``pip install "geoprm[transformers]"``.
"""

from __future__ import annotations

import importlib
import io
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from geoprm._adapter import to_step_judgement
from geoprm._labels import FIELDS_BY_NAME
from geoprm._parser import ParsedCritique, parse_critique
from geoprm._prompts import critic_prompt, critique_prompt
from geoprm._scores import CritiqueScores, JudgementTokens, VerdictLogprobs, score_critique
from geoprm.errors import CriticError, MissingExtraError
from geotts import BackendError, StepJudgement, StepScoreRequest
from geotts.backends.transformers import check_tokenizer, load_processor

__all__ = ("CriticPrompt", "CritiqueResult", "TransformersCritic", "judgement_tokens")

CriticPrompt = Literal["critic", "teacher"]
"""What the critic is asked with: ``critic`` (:func:`geoprm.critic_prompt`, the input geoprm's SFT records
train on) or ``teacher`` (:func:`geoprm.critique_prompt`, which describes the layout, for a model that
was not trained on critiques)."""


def _require(module: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MissingExtraError(
            f'{module} is not installed; install it with: pip install "geoprm[transformers]"'
        ) from error


class CritiqueResult(BaseModel):
    """A generated critique with its parse and its step scores."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    text: str
    """The critique as generated (special tokens removed)."""
    token_ids: tuple[int, ...]
    """The generated token ids, up to and including the end-of-sequence token when there is one."""
    finish_reason: Literal["stop", "length"]
    """stop: the model ended the critique; length: it hit the token limit (the critique is cut off)."""
    parsed: ParsedCritique
    """The critique parsed leniently."""
    scores: CritiqueScores
    """Its step scores from the generation-time log-probs."""
    num_steps: Annotated[int, Field(ge=0)]
    """The number of steps of the judged solution."""


def _judgement_ids(tokenizer: Any) -> tuple[JudgementTokens, frozenset[int]]:
    label = FIELDS_BY_NAME["judgement"].label
    found: dict[str, list[str]] = {"Correct": [], "Incorrect": []}
    token_ids: set[int] = set()
    for glue in (": ", ":"):
        ids = {word: tokenizer.encode(f"{label}{glue}{word}", add_special_tokens=False) for word in found}
        a, b = ids["Correct"], ids["Incorrect"]
        split = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)
        if split is None:
            raise CriticError("the tokenizer spells Correct and Incorrect with the same tokens")
        for word, seq in ids.items():
            token_ids.add(seq[split])
            token = tokenizer.decode([seq[split]])
            if token not in found[word]:
                found[word].append(token)
    return JudgementTokens(correct=tuple(found["Correct"]), incorrect=tuple(found["Incorrect"])), frozenset(
        token_ids
    )


def judgement_tokens(tokenizer: Any) -> JudgementTokens:
    """The first tokens that tell " Correct" from " Incorrect" after the verdict label, for a tokenizer.

    With a byte-level BPE tokenizer " Incorrect" may start with a bare space token while " Correct" is
    one token; the tokens are found by encoding the verdict line both ways and taking the first token
    where the two differ (with and without a space after the colon).

    Args:
        tokenizer: a Hugging Face tokenizer.

    Returns:
        The judgement tokens, as decoded token strings.

    Raises:
        CriticError: the tokenizer spells both judgements with the same tokens.
    """
    return _judgement_ids(tokenizer)[0]


def _image(value: bytes | Path) -> Any:
    pil = _require("PIL.Image")
    try:
        data = value if isinstance(value, bytes) else value.read_bytes()
        return pil.open(io.BytesIO(data)).convert("RGB")
    except (OSError, ValueError) as error:
        raise CriticError(
            f"cannot read image {value if isinstance(value, Path) else '<bytes>'}: {error}"
        ) from error


def _load_processor(path: str | Path) -> Any:
    """The folder's processor (geotts's loader: image-only Qwen-VL processors where torchvision is missing)."""
    _require("transformers")
    try:
        return load_processor(path)
    except BackendError as error:
        raise CriticError(str(error)) from error


class TransformersCritic:
    """A generative process reward model on a ``transformers`` image-text-to-text or causal LM."""

    def __init__(
        self,
        model: Any,
        processor: Any,
        *,
        max_new_tokens: int = 1024,
        top_logprobs: int = 20,
        batch_size: int = 4,
        device: str | None = None,
        generate_kwargs: dict[str, Any] | None = None,
        prompt: CriticPrompt = "critic",
    ) -> None:
        """Wrap a loaded model and its processor.

        Args:
            model: a ``*ForConditionalGeneration`` model (Qwen2-VL, Qwen2.5-VL...) or a text-only causal LM.
            processor: its processor (the tokenizer, for a text-only model).
            max_new_tokens: the longest critique generated; longer ones are cut off (and scored as such).
            top_logprobs: how many most likely tokens are kept at each verdict position.
            batch_size: requests generated together (left-padded).
            device: device of the inputs (default: the model's).
            generate_kwargs: extra keyword arguments for ``model.generate`` (e.g. ``repetition_penalty``,
                ``prefix_allowed_tokens_fn``); decoding stays greedy and log-probs come from the raw logits,
                so logit processors change what is written, never how it is scored.
            prompt: the prompt the critic is asked with (``critic``: the one geoprm's SFT records hold).

        Raises:
            CriticError: a setting is out of range, or the tokenizer cannot tell the judgements apart.
        """
        if max_new_tokens < 1 or top_logprobs < 2 or batch_size < 1:
            raise CriticError(
                f"max_new_tokens={max_new_tokens}, top_logprobs={top_logprobs}, batch_size={batch_size}: "
                "need max_new_tokens >= 1, top_logprobs >= 2 and batch_size >= 1"
            )
        self.model = model
        self.processor = processor
        self.tokenizer: Any = getattr(processor, "tokenizer", processor)
        self.max_new_tokens = max_new_tokens
        self.top_logprobs = top_logprobs
        self.batch_size = batch_size
        self.device = device or str(next(model.parameters()).device)
        self.generate_kwargs = dict(generate_kwargs or {})
        self.prompt = prompt
        self.tokens, self._judgement_token_ids = _judgement_ids(self.tokenizer)
        eos = model.generation_config.eos_token_id
        self._eos: set[int] = set(eos if isinstance(eos, list) else [] if eos is None else [eos])

    @classmethod
    def from_pretrained(cls, path: str | Path, *, device: str = "cpu", **kwargs: Any) -> TransformersCritic:
        """Load a model folder (or hub id) and its processor.

        Args:
            path: the model folder or hub id: an image-text-to-text model, else a causal LM.
            device: torch device.
            **kwargs: passed to :class:`TransformersCritic`.

        Returns:
            The critic, in eval mode.

        Raises:
            CriticError: the folder's tokenizer is not its model's (geotts's ``check_tokenizer``).
        """
        transformers = _require("transformers")
        _require("torch")
        try:
            model = transformers.AutoModelForImageTextToText.from_pretrained(path)
        except ValueError:  # not an image-text-to-text architecture: a text-only causal LM
            model = transformers.AutoModelForCausalLM.from_pretrained(path)
        processor = _load_processor(path)
        try:
            check_tokenizer(path, model, processor)
        except BackendError as error:
            raise CriticError(str(error)) from error
        return cls(model.to(device).eval(), processor, device=device, **kwargs)

    # -- prompts ---------------------------------------------------------------------------------------

    def _prompt(self, request: StepScoreRequest) -> str:
        build = critic_prompt if self.prompt == "critic" else critique_prompt
        text = build(request.question, request.steps)
        content: str | list[dict[str, Any]] = text  # text-only chat templates need a plain string
        if request.images:
            content = [*({"type": "image"} for _ in request.images), {"type": "text", "text": text}]
        chat = [{"role": "user", "content": content}]
        return str(self.processor.apply_chat_template(chat, tokenize=False, add_generation_prompt=True))

    def _encode(self, requests: Sequence[StepScoreRequest]) -> Any:
        prompts = [self._prompt(request) for request in requests]
        images = [_image(image) for request in requests for image in request.images]
        kwargs: dict[str, Any] = {"text": prompts, "return_tensors": "pt", "padding": True}
        if images:
            kwargs["images"] = images
        side = self.tokenizer.padding_side
        self.tokenizer.padding_side = "left"  # generation continues every row from its last token
        try:
            return self.processor(**kwargs).to(self.device)
        finally:
            self.tokenizer.padding_side = side

    # -- log-probs at verdicts -------------------------------------------------------------------------

    def _top(self, logits: Any) -> dict[str, float]:
        """The top log-probs at one position, plus those of the judgement tokens, keyed by decoded token."""
        torch = _require("torch")
        logprobs = torch.log_softmax(logits.float(), dim=-1)
        ids = set(logprobs.topk(self.top_logprobs).indices.tolist()) | self._judgement_token_ids
        top: dict[str, float] = {}
        for token_id in sorted(ids):
            token, value = self.tokenizer.decode([token_id]), float(logprobs[token_id])
            top[token] = (
                value
                if token not in top
                else float(torch.logaddexp(torch.tensor(top[token]), torch.tensor(value)))
            )
        return top

    def _char_ends(self, ids: Sequence[int]) -> list[int]:
        """For each token, the length of the text decoded from the tokens up to and including it."""
        return [
            len(self.tokenizer.decode(list(ids[: k + 1]), skip_special_tokens=True)) for k in range(len(ids))
        ]

    def _verdict_logprobs(
        self, text: str, parsed: ParsedCritique, ids: Sequence[int], logits: Any
    ) -> list[VerdictLogprobs]:
        """``logits[k]`` is the distribution the k-th critique token was drawn from.

        The judgement is decided at the first token after the verdict label's colon (the judgement tokens
        are derived for that context); when something other than spaces stands between the colon and
        the verdict word (markdown, brackets), the token that starts the word is used instead.
        """
        out: list[VerdictLogprobs] = []
        seen: set[int] = set()
        ends = self._char_ends(ids) if parsed.steps else []
        for step in parsed.steps:
            span, value_start = step.judgement_span, step.judgement_value_start
            if span is None or value_start is None or step.index < 1 or step.index in seen:
                continue
            char = value_start if not text[value_start : span[0]].strip() else span[0]
            k = next((k for k, end in enumerate(ends) if end > char), None)
            if k is not None:
                seen.add(step.index)
                out.append(VerdictLogprobs(step=step.index, top_logprobs=self._top(logits[k])))
        return out

    # -- generation ------------------------------------------------------------------------------------

    def critique(self, requests: Sequence[StepScoreRequest]) -> list[CritiqueResult]:
        """Write a critique of every request's solution (greedy), with generation-time step scores.

        Args:
            requests: the solutions to judge, each with its question, images and steps.

        Returns:
            One result per request, in order.

        Raises:
            CriticError: the model failed on a batch.
        """
        results: list[CritiqueResult] = []
        for start in range(0, len(requests), self.batch_size):
            results.extend(self._critique_batch(requests[start : start + self.batch_size]))
        return results

    def _critique_batch(self, batch: Sequence[StepScoreRequest]) -> list[CritiqueResult]:
        torch = _require("torch")
        inputs = self._encode(batch)
        prompt_len = int(inputs["input_ids"].shape[1])
        try:
            with torch.inference_mode():
                out = self.model.generate(
                    **inputs,
                    **self.generate_kwargs,
                    max_new_tokens=self.max_new_tokens,
                    do_sample=False,
                    num_beams=1,
                    return_dict_in_generate=True,
                    output_logits=True,
                )
        except (RuntimeError, ValueError) as error:
            raise CriticError(f"critique generation failed for a batch of {len(batch)}: {error}") from error
        results: list[CritiqueResult] = []
        for row, request in enumerate(batch):
            generated = out.sequences[row, prompt_len:].tolist()
            end = next((i + 1 for i, token in enumerate(generated) if token in self._eos), None)
            ids = generated if end is None else generated[:end]
            text = self.tokenizer.decode(ids, skip_special_tokens=True)
            parsed = parse_critique(text, strict=False)
            logits = [step_logits[row] for step_logits in out.logits[: len(ids)]]
            entries = self._verdict_logprobs(text, parsed, ids, logits)
            scores = score_critique(parsed, entries, tokens=self.tokens, num_steps=len(request.steps))
            results.append(
                CritiqueResult(
                    text=text,
                    token_ids=tuple(ids),
                    finish_reason="length" if end is None else "stop",
                    parsed=parsed,
                    scores=scores,
                    num_steps=len(request.steps),
                )
            )
        return results

    # -- teacher forcing -------------------------------------------------------------------------------

    def score_critiques(
        self, requests: Sequence[StepScoreRequest], critiques: Sequence[str]
    ) -> list[CritiqueScores]:
        """Score given critiques by teacher forcing: the model reads prompt + critique in one forward pass.

        Args:
            requests: the judged solutions.
            critiques: one critique text per request (any quality: malformed steps go unscored).

        Returns:
            The step scores of each critique, in order.

        Raises:
            CriticError: the numbers of requests and critiques differ, or the model failed.
        """
        if len(requests) != len(critiques):
            raise CriticError(
                f"{len(requests)} requests but {len(critiques)} critiques; give one critique per request"
            )
        return [self._forced(request, text) for request, text in zip(requests, critiques, strict=True)]

    def _forced(self, request: StepScoreRequest, text: str) -> CritiqueScores:
        torch = _require("torch")
        inputs = self._encode([request])
        prompt_len = int(inputs["input_ids"].shape[1])
        ids: list[int] = self.tokenizer.encode(text, add_special_tokens=False)
        parsed = parse_critique(text, strict=False)
        if not ids:
            return score_critique(parsed, [], tokens=self.tokens, num_steps=len(request.steps))
        extra = torch.tensor([ids], dtype=inputs["input_ids"].dtype, device=self.device)
        fed = dict(inputs)
        for key, value in inputs.items():
            if hasattr(value, "shape") and value.dim() == 2 and value.shape[1] == prompt_len:
                fill = (
                    extra
                    if key == "input_ids"
                    else torch.full_like(extra, 1 if key == "attention_mask" else 0)
                )
                fed[key] = torch.cat([value, fill], dim=1)
        try:
            with torch.inference_mode():
                logits = self.model(**fed).logits[0, prompt_len - 1 : prompt_len - 1 + len(ids)]
        except (RuntimeError, ValueError) as error:
            raise CriticError(f"teacher-forced scoring failed: {error}") from error
        entries = self._verdict_logprobs(text, parsed, ids, logits)
        return score_critique(parsed, entries, tokens=self.tokens, num_steps=len(request.steps))

    # -- the geotts StepScorer protocol ----------------------------------------------------------------

    def score(self, requests: Sequence[StepScoreRequest]) -> list[StepJudgement]:
        """Judge every request's steps (geotts's ``StepScorer``): scores, first wrong step, correction.

        Args:
            requests: the solutions to judge.

        Returns:
            One judgement per request, in order.
        """
        return [to_step_judgement(result.parsed, result.scores) for result in self.critique(requests)]
