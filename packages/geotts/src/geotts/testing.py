"""Test doubles and fixtures for code built on geotts.

* :class:`ScriptedSampler` replays ranked texts per prompt, honouring sampling and beam semantics;
* :class:`FunctionSampler` wraps a Python function;
* :func:`tiny_qwen_vl` builds a tiny, randomly initialised Qwen2-VL, Qwen2.5-VL, Qwen3-VL or text-only
  Qwen2 model with its processor or tokenizer offline (needs the ``transformers`` extra) so
  backends, PRMs and trainers can be tested on CPU; :data:`TINY_KINDS` lists the families;
* :func:`train_tokenizer` trains the byte-level BPE these models use on any texts (geotrain's from-scratch
  models train theirs on their corpus with it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from geotts._models import BeamParams, Completion, GenerationRequest
from geotts._tiny import TINY_KINDS, NumberSplit, TinyKind, chat_template, tiny_qwen_vl, train_tokenizer
from geotts.errors import BackendError

__all__ = (
    "TINY_KINDS",
    "FunctionSampler",
    "NumberSplit",
    "ScriptedSampler",
    "TinyKind",
    "chat_template",
    "tiny_qwen_vl",
    "train_tokenizer",
)


def _tokens(text: str) -> int:
    return len(text.split()) + 1  # whitespace words plus the end-of-sequence token


class ScriptedSampler:
    """A sampler that replays, for each prompt, the ranked texts ``script(request)`` returns.

    Sampling requests consume the list: each call continues where the previous call for the same
    prompt stopped (so incremental sampling gets fresh candidates). Beam requests of width w return
    the first w texts every time (so width-d beams are prefixes of width-D beams, which real beam
    search does not guarantee). Each candidate counts one token per word plus one.
    """

    __test__ = False

    def __init__(self, script: Callable[[GenerationRequest], Sequence[str]]) -> None:
        self.script = script
        self.calls: list[list[GenerationRequest]] = []
        self._cursor: dict[str, int] = {}

    def generate(self, requests: Sequence[GenerationRequest]) -> list[list[Completion]]:
        """Return the scripted candidates of every request."""
        self.calls.append(list(requests))
        out: list[list[Completion]] = []
        for req in requests:
            texts = list(self.script(req))
            if isinstance(req.params, BeamParams):
                start = 0
            else:
                key = req.model_dump_json(include={"messages", "prompt", "trace_type", "assistant_prefix"})
                start = self._cursor.get(key, 0)
                self._cursor[key] = start + req.n
            chosen = texts[start : start + req.n]
            if len(chosen) < req.n:
                raise BackendError(
                    f"script has {len(texts)} texts for this prompt; asked for {start + req.n}"
                )
            out.append(
                [
                    Completion(text=t, num_tokens=_tokens(t), cumulative_logprob=-float(i + 1))
                    for i, t in enumerate(chosen)
                ]
            )
        return out

    @property
    def generated(self) -> int:
        """Candidates produced so far."""
        return sum(r.n for call in self.calls for r in call)


class FunctionSampler:
    """A sampler that calls ``fn(request)`` for every request; records the batches it received."""

    __test__ = False

    def __init__(self, fn: Callable[[GenerationRequest], list[Completion]]) -> None:
        self.fn = fn
        self.calls: list[list[GenerationRequest]] = []

    def generate(self, requests: Sequence[GenerationRequest]) -> list[list[Completion]]:
        """Apply the function to every request."""
        self.calls.append(list(requests))
        return [self.fn(r) for r in requests]
