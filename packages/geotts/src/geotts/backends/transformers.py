"""A :class:`~geotts.Sampler` on Hugging Face ``transformers`` ``generate`` (CPU or GPU).

Greedy (``temperature=0``), sampling (``num_return_sequences=n``) and beam search (``num_beams=n``,
all beams returned best first), each with the log-probability of every candidate computed from the
raw logits. By default each request is decoded alone; with ``batch_size > 1`` requests with equal
``n`` and parameters are decoded together in one left-padded call. Incremental depth: sampling calls
with different seeds give fresh candidates; beam search must be rerun (see
``geotts.CGMTEConfig.beam_policy``). With a :class:`ProgramGrammar`, program traces are decoded
under the grammar (:mod:`geotts.backends._grammar`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from geotts._models import BeamParams, Completion, GenerationRequest, SamplingParams
from geotts.backends._common import chat_dicts, pil_image, require
from geotts.backends._grammar import ProgramGrammar, TokenGrammar
from geotts.errors import BackendError, StrategyConfigError

__all__ = (
    "VL_PROCESSORS",
    "ProgramGrammar",
    "TransformersSampler",
    "image_only_processor_class",
    "load_processor",
)


#: The processor class of each Qwen-VL model type (``config.json``'s ``model_type``).
VL_PROCESSORS: dict[str, str] = {
    "qwen2_vl": "Qwen2VLProcessor",
    "qwen2_5_vl": "Qwen2_5_VLProcessor",
    "qwen3_vl": "Qwen3VLProcessor",
}


def image_only_processor_class(model_type: str) -> Any:
    """The stock Qwen-VL processor class minus its video processor, usable where torchvision is missing.

    Qwen-VL processors require a video processor, which exists only as a torchvision class; the
    processor's sub-processors are read from ``__init__``'s signature, so dropping the argument
    makes an image + text processor that loads and saves the same folder.

    Args:
        model_type: A key of :data:`VL_PROCESSORS` (``qwen2_vl``, ``qwen2_5_vl`` or ``qwen3_vl``).

    Returns:
        A subclass of the model type's processor class, with the same class name.

    Raises:
        BackendError: for a model type without a Qwen-VL processor.
    """
    if model_type not in VL_PROCESSORS:
        raise BackendError(
            f"model type {model_type!r} has no image-only processor; known: {sorted(VL_PROCESSORS)}"
        )
    transformers = require("transformers", "transformers")
    base: Any = getattr(transformers, VL_PROCESSORS[model_type])

    def __init__(
        self: Any, image_processor: Any = None, tokenizer: Any = None, chat_template: Any = None, **kw: Any
    ) -> None:
        base.__init__(self, image_processor, tokenizer, None, chat_template=chat_template, **kw)

    return type(base.__name__, (base,), {"__init__": __init__})


GENERIC_TOKENIZER_CLASSES = ("TokenizersBackend", "PreTrainedTokenizerFast")
"""Tokenizer classes that take their whole pipeline from ``tokenizer.json``."""


def _saved_generic_tokenizer(path: str | Path) -> bool:
    """Whether a local text-only model folder declares the generic fast tokenizer.

    Such a folder (a from-scratch model whose tokenizer keeps numbers whole, for one) is loaded exactly as
    saved: ``AutoTokenizer`` would swap in the model type's own class (``Qwen2Tokenizer`` for ``qwen2``),
    whose built-in pre-tokenisation differs from the saved one.
    """
    folder = Path(path)
    config = folder / "tokenizer_config.json"
    if not config.is_file() or (folder / "preprocessor_config.json").is_file():
        return False
    try:
        declared = json.loads(config.read_text(encoding="utf-8")).get("tokenizer_class")
    except (OSError, ValueError, AttributeError):
        return False
    return declared in GENERIC_TOKENIZER_CLASSES


def load_processor(path: str | Path) -> Any:
    """The processor of a model folder: ``AutoProcessor``, else the image-only Qwen-VL processor.

    The image-only processor (chosen by the config's ``model_type``) covers Qwen-VL folders where
    torchvision, which their video half needs, is missing.

    Args:
        path: Model folder or hub id.

    Returns:
        The processor (a tokenizer for text-only models).

    Raises:
        BackendError: ``AutoProcessor`` failed and the model type has no image-only processor.
    """
    transformers = require("transformers", "transformers")
    if _saved_generic_tokenizer(path):
        return transformers.PreTrainedTokenizerFast.from_pretrained(path)
    try:
        return transformers.AutoProcessor.from_pretrained(path)
    except (OSError, ImportError, AttributeError, ValueError) as exc:
        model_type = str(transformers.AutoConfig.from_pretrained(path).model_type)
        if model_type not in VL_PROCESSORS:
            raise BackendError(f"cannot load the processor of {str(path)!r} ({model_type}): {exc}") from exc
        return image_only_processor_class(model_type).from_pretrained(path)


VOCAB_DIGEST_KEY = "tokenizer_vocab_sha256"
"""The model-config key under which a model folder may record the digest of the tokenizer it was trained with."""


def vocab_digest(tokenizer: Any) -> str:
    """SHA-256 of a tokenizer's vocabulary (token -> id, sorted), independent of how the file is serialised."""
    import hashlib
    import json

    vocab = sorted((str(t), int(i)) for t, i in tokenizer.get_vocab().items())
    return hashlib.sha256(json.dumps(vocab, ensure_ascii=False).encode()).hexdigest()


def check_tokenizer(path: str | Path, model: Any, processor: Any) -> None:
    """Refuse a model folder whose tokenizer is not the one its model was trained with.

    Two checks: every token id of the tokenizer has a row in the model's input embedding, and, where the
    model's config records :data:`VOCAB_DIGEST_KEY` (geotrain's from-scratch models do), the tokenizer's
    vocabulary has that digest.

    Raises:
        BackendError: naming the folder and the mismatch.
    """
    tokenizer = getattr(processor, "tokenizer", processor)
    rows = int(model.get_input_embeddings().weight.shape[0])
    size = len(tokenizer)
    if size > rows:
        raise BackendError(
            f"the tokenizer in {str(path)!r} does not match its model: {size} tokens, but the model's "
            f"embedding has {rows} rows"
        )
    expected = getattr(model.config, VOCAB_DIGEST_KEY, None)
    if expected is not None and vocab_digest(tokenizer) != expected:
        raise BackendError(
            f"the tokenizer in {str(path)!r} does not match its model: its vocabulary is not the one the "
            f"model was trained with ({VOCAB_DIGEST_KEY} differs)"
        )


_load_processor = load_processor  # the name tests/geosynth/mts/test_pa_qwen.py imports (owned elsewhere)


class TransformersSampler:
    """Generate candidates with a ``transformers`` image-text-to-text (or causal) model."""

    def __init__(
        self,
        model: Any,
        processor: Any,
        *,
        device: str | None = None,
        batch_size: int = 1,
        program_grammar: ProgramGrammar | None = None,
    ) -> None:
        """Wrap a loaded model and its processor.

        Args:
            model: A ``*ForConditionalGeneration`` (or causal LM) model.
            processor: Its processor (or tokenizer for text-only models); its tokenizer is switched
                to left padding.
            device: Device for the inputs (default: the model's device).
            batch_size: Requests with equal ``n`` and parameters decoded together in one
                left-padded ``generate`` call. 1 (the default) decodes each request alone, so a
                seeded request gives the same candidates whatever else is in the batch.
            program_grammar: Keep the program part of requests whose trace type the grammar names
                grammatical (see :mod:`geotts.backends._grammar`); those requests need ``numbers``.
        """
        if batch_size < 1:
            raise StrategyConfigError(f"batch_size must be at least 1, got {batch_size}")
        self.batch_size = batch_size
        self.model = model
        self.processor = processor
        self.tokenizer: Any = getattr(processor, "tokenizer", processor)
        self.tokenizer.padding_side = "left"
        self.device = device or str(next(model.parameters()).device)
        eos = model.generation_config.eos_token_id
        self._eos: set[int] = set(eos if isinstance(eos, list) else [] if eos is None else [eos])
        self.grammar = (
            None
            if program_grammar is None
            else TokenGrammar(program_grammar, self.tokenizer, sorted(self._eos))
        )

    @classmethod
    def from_pretrained(
        cls,
        path: str | Path,
        *,
        device: str = "cpu",
        dtype: str | None = None,
        batch_size: int = 1,
        program_grammar: ProgramGrammar | None = None,
    ) -> TransformersSampler:
        """Load a model folder (or hub id) and its processor.

        Args:
            path: Model folder or hub id.
            device: Torch device.
            dtype: Optional torch dtype name (e.g. ``bfloat16``).
            batch_size: See :class:`TransformersSampler`.
            program_grammar: See :class:`TransformersSampler`.

        Raises:
            BackendError: the folder's tokenizer does not match its model (:func:`check_tokenizer`).
        """
        transformers = require("transformers", "transformers")
        require("torch", "transformers")
        kwargs: dict[str, Any] = {} if dtype is None else {"dtype": dtype}
        try:
            model = transformers.AutoModelForImageTextToText.from_pretrained(path, **kwargs)
        except ValueError:
            model = transformers.AutoModelForCausalLM.from_pretrained(path, **kwargs)
        processor = load_processor(path)
        check_tokenizer(path, model, processor)
        return cls(
            model.to(device).eval(),
            processor,
            device=device,
            batch_size=batch_size,
            program_grammar=program_grammar,
        )

    def generate(self, requests: Sequence[GenerationRequest]) -> list[list[Completion]]:
        """Generate ``request.n`` ranked candidates for every request (grouped into batches of equal settings).

        Within a group, requests of the same trace type are batched together (a batch runs as long as its
        longest candidate, and short program traces would wait for long CoT ones).
        """
        out: list[list[Completion]] = [[] for _ in requests]
        groups: dict[tuple[int, str, bool], list[int]] = {}
        for i, r in enumerate(requests):
            groups.setdefault((r.n, r.params.model_dump_json(), bool(r.images)), []).append(i)
        for group in groups.values():
            idx = sorted(group, key=lambda i: requests[i].trace_type or "")
            for start in range(0, len(idx), self.batch_size):
                chunk = idx[start : start + self.batch_size]
                for i, comps in zip(chunk, self._batch([requests[i] for i in chunk]), strict=True):
                    out[i] = comps
        return out

    def _text(self, req: GenerationRequest) -> str:
        if req.prompt is not None:
            return req.prompt + req.assistant_prefix
        chat = chat_dicts(req.messages, len(req.images))
        return (
            self.processor.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
            + req.assistant_prefix
        )

    def _inputs(self, reqs: Sequence[GenerationRequest]) -> tuple[Any, int]:
        texts = [self._text(r) for r in reqs]
        images = [pil_image(i) for r in reqs for i in r.images]
        if images:
            enc = self.processor(text=texts, images=images, padding=True, return_tensors="pt")
        elif self.processor is self.tokenizer:
            enc = self.tokenizer(texts, padding=True, return_tensors="pt")
        else:
            enc = self.processor(text=texts, padding=True, return_tensors="pt")
        return enc.to(self.device), int(enc["input_ids"].shape[1])

    def _kwargs(self, req: GenerationRequest) -> dict[str, Any]:
        p = req.params
        kw: dict[str, Any] = {
            "max_new_tokens": p.max_tokens,
            "num_return_sequences": req.n,
            "return_dict_in_generate": True,
            "output_logits": True,
        }
        if isinstance(p, BeamParams) and req.n > 1:
            kw.update(num_beams=req.n, do_sample=False, length_penalty=p.length_penalty, early_stopping=True)
        elif isinstance(p, BeamParams) or p.temperature == 0.0:  # a width-1 beam is greedy decoding
            kw.update(do_sample=False, num_beams=1)
        else:
            kw.update(do_sample=True, temperature=p.temperature, top_p=p.top_p, num_beams=1)
        if isinstance(p, SamplingParams) and p.stop:
            kw.update(stop_strings=list(p.stop), tokenizer=self.tokenizer)
        return kw

    def _batch(self, reqs: Sequence[GenerationRequest]) -> list[list[Completion]]:
        torch = require("torch", "transformers")
        first = reqs[0]  # every request of a batch has the same n and parameters
        inputs, prompt_len = self._inputs(reqs)
        seed = None if isinstance(first.params, BeamParams) else first.params.seed
        kwargs = self._kwargs(first)
        grammar = None if self.grammar is None else self.grammar.processor(reqs, prompt_len, first.n)
        if grammar is not None:
            kwargs["logits_processor"] = require("transformers", "transformers").LogitsProcessorList(
                [grammar]
            )
        devices = [torch.device(self.device)] if self.device.startswith("cuda") else []
        try:
            with torch.random.fork_rng(devices=devices), torch.inference_mode():
                if seed is not None:
                    torch.manual_seed(seed)
                out = self.model.generate(**inputs, **kwargs)
                beams = getattr(out, "beam_indices", None) if isinstance(first.params, BeamParams) else None
                scores = self.model.compute_transition_scores(
                    out.sequences, out.logits, beams, normalize_logits=True
                )
        except (RuntimeError, ValueError) as exc:
            raise BackendError(f"transformers generate failed for trace {first.trace_type!r}: {exc}") from exc
        stop = () if isinstance(first.params, BeamParams) else first.params.stop
        n = first.n
        return [
            [
                self._completion(
                    out.sequences[b * n + j, prompt_len:].tolist(), scores[b * n + j].tolist(), stop
                )
                for j in range(n)
            ]
            for b in range(len(reqs))
        ]

    def _completion(self, ids: list[int], scores: list[float], stop: Sequence[str]) -> Completion:
        end = next((i + 1 for i, t in enumerate(ids) if t in self._eos), None)
        length = len(ids) if end is None else end
        text = self.tokenizer.decode(ids[:length], skip_special_tokens=True)
        reason: Literal["stop", "length"] = "length" if end is None else "stop"
        cut = min((at for s in stop if (at := text.find(s)) >= 0), default=None)
        if cut is not None:
            text, reason = text[:cut], "stop"
        return Completion(
            text=text, num_tokens=length, cumulative_logprob=float(sum(scores[:length])), finish_reason=reason
        )
