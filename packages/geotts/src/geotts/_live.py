"""Strategies that drive a :class:`~geotts.Sampler`: SC, standard MTE and incremental CG-MTE.

CG-MTE asks the backend only for what the current depth needs, and only for problems that have not
reached consensus, so compute is saved rather than merely counted. Its candidates at depth d are
the first d per trace type that standard MTE draws at depth D under the same parameters, so the two
are compared on the same samples. How depth grows depends on decoding:

* sampling: both strategies request one candidate per request; candidate j of trace t is seeded
  with a hash of (seed, t, j), so it does not depend on how many candidates a call
  asks for. Standard MTE asks for j = 0..D-1 at once, CG-MTE for j = d-1 at depth d: exact and
  incremental (``generated`` equals ``samples``);
* beam, ``reveal``: one beam search of width D per trace type at depth 1 (the very request standard
  MTE makes), revealed depth by depth; ``samples`` follows the paper (V x d) while
  ``generated``/``tokens`` report the D beams really decoded;
* beam, ``regrow``: a fresh beam search of width d at depth d (a width-d beam is not the top-d of a
  width-D beam, so this is not standard MTE's pool); ``generated`` is 1 + 2 + ... + d per trace
  type, all of it really decoded.
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Mapping, Sequence
from types import MappingProxyType
from typing import Annotated, ClassVar, Literal, Protocol, Self

from pydantic import Field, model_validator

from geotts._aggregate import DEFAULT_ORDER, pool_at_depth, resolve_fallback
from geotts._models import (
    BeamParams,
    ChatMessage,
    Completion,
    Decision,
    GenerationRequest,
    GeoTTSModel,
    Problem,
    SamplingParams,
)
from geotts._protocols import AnswerExtractor, Sampler
from geotts._vote import AnswerKey, numeric_key, tally
from geotts.errors import BackendError, StrategyConfigError

__all__ = (
    "TRACE_INSTRUCTIONS",
    "CGMTEConfig",
    "ConsensusEnsemble",
    "MTEConfig",
    "MultiTraceEnsemble",
    "SelfConsistency",
    "SelfConsistencyConfig",
    "Strategy",
    "run_strategy",
    "strategy_from_spec",
)

#: The question plus one instruction per trace type (our wording; ``{question}`` is replaced by the question).
#: geosynth's multi-trace synthesis writes its training prompts from this same table, so a model trained on
#: those records is prompted at test time exactly as it was trained.
TRACE_INSTRUCTIONS: Mapping[str, str] = MappingProxyType(
    {
        "program": "{question}\nStart by writing down the relations you read in the diagram. Then give a symbolic "
        "solution program that computes the answer.",
        "pal": "{question}\nStart by writing down the relations you read in the diagram. Then write a Python script "
        "that computes and prints the answer.",
        "cot_program": "{question}\nStart by writing down the relations you read in the diagram. Then explain the "
        "solution one step at a time, naming the symbolic operator of each step, and end with the full symbolic program.",
        "cot_pal": "{question}\nStart by writing down the relations you read in the diagram. Then write a Python "
        "script that computes and prints the answer, with a comment before each equation explaining the geometry "
        "behind it.",
    }
)


Params = SamplingParams | BeamParams


def _check_instruction(name: str, template: str) -> None:
    if "{question}" not in template:
        raise StrategyConfigError(f"instruction for {name!r} has no '{{question}}' placeholder: {template!r}")


class SelfConsistencyConfig(GeoTTSModel):
    """Self-consistency on a unified model: K candidates from one prompt, majority vote."""

    k: Annotated[int, Field(ge=1)] = 40
    """Candidates per problem (the beam width under beam search)."""
    params: Params = Field(default_factory=BeamParams, discriminator="mode")
    """Decoding: beam search (default) or sampling."""
    instruction: str = "{question}"
    """Prompt template; ``{question}`` is replaced by the problem's question."""

    @model_validator(mode="after")
    def _check(self) -> Self:
        _check_instruction("self_consistency", self.instruction)
        return self


class MTEConfig(GeoTTSModel):
    """Standard multi-trace ensemble: D candidates per trace type, one vote over all of them."""

    depth: Annotated[int, Field(ge=1)] = 10
    """D, candidates per trace type."""
    order: tuple[str, ...] = DEFAULT_ORDER
    """Trace types, in read order (ties go to the earliest read)."""
    params: Params = Field(default_factory=BeamParams, discriminator="mode")
    """Decoding: beam search (default) or sampling."""
    instructions: dict[str, str] = Field(default_factory=lambda: dict(TRACE_INSTRUCTIONS))
    """Prompt template per trace type."""

    @model_validator(mode="after")
    def _check(self) -> Self:
        if not self.order or len(set(self.order)) != len(self.order):
            raise StrategyConfigError(f"order must list distinct trace types, got {list(self.order)}")
        missing = [t for t in self.order if t not in self.instructions]
        if missing:
            raise StrategyConfigError(
                f"no instruction for trace types {missing}; known: {sorted(self.instructions)}"
            )
        for name in self.order:
            _check_instruction(name, self.instructions[name])
        if isinstance(self.params, SamplingParams) and self.params.temperature == 0.0 and self.depth > 1:
            raise StrategyConfigError(
                f"greedy decoding yields one candidate per prompt; depth={self.depth} needs beam or sampling"
            )
        return self


class CGMTEConfig(MTEConfig):
    """Consensus-guided MTE: grow the depth only while no unique most frequent answer exists."""

    fallback: str | None = None
    """Trace type whose top-1 answers without consensus (default cot_pal, else the last of ``order``)."""
    beam_policy: Literal["reveal", "regrow"] = "reveal"
    """Beam search only: decode width D once and reveal it, or decode width d afresh at each depth."""

    @model_validator(mode="after")
    def _check_fallback(self) -> Self:
        resolve_fallback(self.order, self.fallback)
        return self


class _Cost:
    """Candidates and tokens actually generated for one problem."""

    def __init__(self) -> None:
        self.generated = 0
        self.tokens: int | None = 0

    def add(self, completions: Sequence[Completion]) -> None:
        self.generated += len(completions)
        for c in completions:
            self.tokens = None if self.tokens is None or c.num_tokens is None else self.tokens + c.num_tokens


def _request(problem: Problem, template: str, trace: str | None, n: int, params: Params) -> GenerationRequest:
    messages: list[ChatMessage] = []
    if problem.system is not None:
        messages.append(ChatMessage(role="system", content=problem.system))
    messages.append(ChatMessage(role="user", content=template.replace("{question}", problem.question)))
    return GenerationRequest(
        messages=tuple(messages),
        images=problem.images,
        trace_type=trace,
        n=n,
        params=params,
        numbers=problem.numbers,
    )


def _candidate_seed(seed: int, trace: str, index: int) -> int:
    """The sampling seed of candidate ``index`` (0-based) of trace type ``trace`` under base ``seed``.

    A function of the three values only (a 31-bit hash), so a candidate is the same whichever
    strategy asks for it and however many it asks for at once; trace types get unrelated streams
    even though their prompts share the question.
    """
    digest = hashlib.blake2b(f"{seed}/{trace}/{index}".encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big") & 0x7FFF_FFFF


def _candidates(
    problem: Problem, cfg: MTEConfig, trace: str, first: int, count: int
) -> list[GenerationRequest]:
    """Requests for candidates ``first .. first + count - 1`` of ``trace`` (beam search: a width-``count`` beam)."""
    template, params = cfg.instructions[trace], cfg.params
    if isinstance(params, BeamParams):
        return [_request(problem, template, trace, count, params)]
    return [
        _request(
            problem,
            template,
            trace,
            1,
            params
            if params.seed is None
            else params.model_copy(update={"seed": _candidate_seed(params.seed, trace, j)}),
        )
        for j in range(first, first + count)
    ]


def _generate(sampler: Sampler, requests: Sequence[GenerationRequest]) -> list[list[Completion]]:
    if not requests:
        return []
    outputs = sampler.generate(requests)
    if len(outputs) != len(requests):
        raise BackendError(f"sampler returned {len(outputs)} result lists for {len(requests)} requests")
    for i, (req, out) in enumerate(zip(requests, outputs, strict=True)):
        if len(out) != req.n:
            raise BackendError(
                f"sampler returned {len(out)} candidates for request {i} ({req.trace_type}), expected {req.n}"
            )
    return outputs


def _unique_ids(problems: Sequence[Problem]) -> None:
    seen: set[str] = set()
    dup = [p.id for p in problems if p.id in seen or seen.add(p.id)]
    if dup:
        raise StrategyConfigError(f"problem ids must be unique; repeated: {sorted(set(dup))}")


class Strategy(Protocol):
    """A test-time scaling strategy that drives a sampler over a batch of problems."""

    name: ClassVar[str]

    def run(
        self,
        sampler: Sampler,
        problems: Sequence[Problem],
        extractor: AnswerExtractor,
        *,
        key: AnswerKey = numeric_key,
    ) -> list[Decision]:
        """Decide every problem; one decision per problem, in order."""
        ...


class SelfConsistency:
    """Live self-consistency: one request of K candidates per problem, then a majority vote."""

    name: ClassVar[str] = "self_consistency"

    def __init__(self, config: SelfConsistencyConfig | None = None) -> None:
        self.config = config or SelfConsistencyConfig()

    def run(
        self,
        sampler: Sampler,
        problems: Sequence[Problem],
        extractor: AnswerExtractor,
        *,
        key: AnswerKey = numeric_key,
    ) -> list[Decision]:
        """Generate K candidates per problem and vote (ties: first in rank order)."""
        _unique_ids(problems)
        cfg = self.config
        outputs = _generate(
            sampler, [_request(p, cfg.instruction, None, cfg.k, cfg.params) for p in problems]
        )
        decisions: list[Decision] = []
        for p, comps in zip(problems, outputs, strict=True):
            cost = _Cost()
            cost.add(comps)
            answers = tuple(extractor(c, None, p) for c in comps)
            decisions.append(
                Decision(
                    answer=tally(answers, key).winner(),
                    depth=cfg.k,
                    samples=cfg.k,
                    generated=cost.generated,
                    tokens=cost.tokens,
                    strategy=self.name,
                    pool=(("candidates", answers),),
                )
            )
        return decisions


class MultiTraceEnsemble:
    """Live standard MTE: D candidates for each trace type of each problem, one vote.

    Sampling asks for each candidate in its own request, seeded per (seed, trace type, index), so the
    pool is the one :class:`ConsensusEnsemble` reveals a prefix of; beam search asks for one width-D beam.
    """

    name: ClassVar[str] = "mte"

    def __init__(self, config: MTEConfig | None = None) -> None:
        self.config = config or MTEConfig()

    def run(
        self,
        sampler: Sampler,
        problems: Sequence[Problem],
        extractor: AnswerExtractor,
        *,
        key: AnswerKey = numeric_key,
    ) -> list[Decision]:
        """Generate D candidates per trace type and problem, then vote over the pooled answers."""
        _unique_ids(problems)
        cfg = self.config
        slots = [(p, t, r) for p in problems for t in cfg.order for r in _candidates(p, cfg, t, 0, cfg.depth)]
        drawn: dict[tuple[str, str], list[Completion]] = {}
        for (p, t, _), comps in zip(slots, _generate(sampler, [r for _, _, r in slots]), strict=True):
            drawn.setdefault((p.id, t), []).extend(comps)
        decisions: list[Decision] = []
        for p in problems:
            cost = _Cost()
            lists: dict[str, tuple[Hashable | None, ...]] = {}
            for t in cfg.order:
                comps = drawn[p.id, t]
                cost.add(comps)
                lists[t] = tuple(extractor(c, t, p) for c in comps)
            pooled = pool_at_depth(list(lists.values()), cfg.depth)
            decisions.append(
                Decision(
                    answer=tally(pooled, key).winner(),
                    depth=cfg.depth,
                    samples=len(cfg.order) * cfg.depth,
                    generated=cost.generated,
                    tokens=cost.tokens,
                    strategy=self.name,
                    pool=tuple(lists.items()),
                )
            )
        return decisions


class ConsensusEnsemble:
    """Live CG-MTE with incremental depth: more candidates are requested only where consensus failed.

    Under sampling and under beam ``reveal``, the candidates read at depth d are the first d per trace
    type of what :class:`MultiTraceEnsemble` draws at depth D with the same parameters, so its decision
    equals :func:`geotts.cg_mte` on standard MTE's pool.
    """

    name: ClassVar[str] = "cg_mte"

    def __init__(self, config: CGMTEConfig | None = None) -> None:
        self.config = config or CGMTEConfig()

    def _requests_at(self, problem: Problem, trace: str, d: int) -> list[GenerationRequest]:
        """What depth ``d`` asks of ``trace``: sampling candidate d - 1, a width-d beam, or at d = 1 the width-D beam."""
        cfg = self.config
        if isinstance(cfg.params, SamplingParams):
            return _candidates(problem, cfg, trace, d - 1, 1)
        if cfg.beam_policy == "regrow":
            return _candidates(problem, cfg, trace, 0, d)
        return _candidates(problem, cfg, trace, 0, cfg.depth) if d == 1 else []

    def run(
        self,
        sampler: Sampler,
        problems: Sequence[Problem],
        extractor: AnswerExtractor,
        *,
        key: AnswerKey = numeric_key,
    ) -> list[Decision]:
        """Grow the depth batch by batch until each problem has a unique mode or D is reached."""
        _unique_ids(problems)
        cfg = self.config
        order, v = cfg.order, len(cfg.order)
        lists: dict[str, dict[str, list[Hashable | None]]] = {p.id: {t: [] for t in order} for p in problems}
        costs = {p.id: _Cost() for p in problems}
        decided: dict[str, Decision] = {}
        active = list(problems)
        for d in range(1, cfg.depth + 1):
            slots = [(p, t, r) for p in active for t in order for r in self._requests_at(p, t, d)]
            for (p, t, _), comps in zip(slots, _generate(sampler, [r for _, _, r in slots]), strict=True):
                costs[p.id].add(comps)
                answers = [extractor(c, t, p) for c in comps]
                lists[p.id][t] = (
                    answers
                    if cfg.beam_policy == "regrow" and isinstance(cfg.params, BeamParams)
                    else lists[p.id][t] + answers
                )
            still: list[Problem] = []
            for p in active:
                heads = [lists[p.id][t][:d] for t in order]
                mode = tally(pool_at_depth(heads, d), key).unique_mode()
                if mode is None:
                    still.append(p)
                    continue
                decided[p.id] = self._decision(mode, d, v, costs[p.id], order, heads, fallback=False)
            active = still
            if not active:
                break
        fb = resolve_fallback(order, cfg.fallback)
        for p in active:
            heads = [lists[p.id][t][: cfg.depth] for t in order]
            decided[p.id] = self._decision(
                lists[p.id][fb][0], cfg.depth, v, costs[p.id], order, heads, fallback=True
            )
        return [decided[p.id] for p in problems]

    def _decision(
        self,
        answer: Hashable | None,
        d: int,
        v: int,
        cost: _Cost,
        order: Sequence[str],
        heads: Sequence[Sequence[Hashable | None]],
        *,
        fallback: bool,
    ) -> Decision:
        return Decision(
            answer=answer,
            depth=d,
            samples=v * d,
            generated=cost.generated,
            tokens=cost.tokens,
            fallback=fallback,
            strategy=self.name,
            pool=tuple((t, tuple(h)) for t, h in zip(order, heads, strict=True)),
        )


#: Strategy registry: spec name -> (strategy class, its config model).
STRATEGIES: Mapping[
    str, tuple[type[SelfConsistency | MultiTraceEnsemble | ConsensusEnsemble], type[GeoTTSModel]]
] = {
    "self_consistency": (SelfConsistency, SelfConsistencyConfig),
    "mte": (MultiTraceEnsemble, MTEConfig),
    "cg_mte": (ConsensusEnsemble, CGMTEConfig),
}


def strategy_from_spec(
    spec: Mapping[str, object],
) -> SelfConsistency | MultiTraceEnsemble | ConsensusEnsemble:
    """Build a strategy from a one-key spec such as ``{"cg_mte": {"depth": 10}}`` (JSON-shaped values).

    Raises:
        StrategyConfigError: for an unknown name, a spec with more than one key, or invalid settings.
    """
    if len(spec) != 1:
        raise StrategyConfigError(
            f"a strategy spec has exactly one key (the strategy name), got {sorted(spec)}"
        )
    ((name, settings),) = spec.items()
    if name not in STRATEGIES:
        raise StrategyConfigError(f"unknown strategy {name!r}; known: {sorted(STRATEGIES)}")
    cls, config_cls = STRATEGIES[name]
    from pydantic import ValidationError

    try:
        config = config_cls.model_validate(settings or {}, strict=False)
    except ValidationError as exc:
        raise StrategyConfigError(f"invalid settings for strategy {name!r}: {exc}") from exc
    return cls(config)  # type: ignore[arg-type]


def run_strategy(
    strategy: Strategy,
    sampler: Sampler,
    problems: Sequence[Problem],
    extractor: AnswerExtractor,
    *,
    key: AnswerKey = numeric_key,
) -> list[Decision]:
    """Run ``strategy`` over ``problems`` with ``sampler``; one decision per problem, in order."""
    return strategy.run(sampler, problems, extractor, key=key)
