"""Proposing auxiliary constructions with a language model, checked by the engine in a beam search.

The model sees one problem line (versioned prompt ``prompts/aux.v1.txt``) and answers one clause in
JGEX syntax that adds new points. :func:`parse_proposal` reads a candidate with the engine's clause
parser; :func:`aux_search` expands every beam node with up to ``branching`` distinct valid proposals,
ranks the children by cumulative log-probability, keeps ``beam`` of them and lets the engine check
each one (one diagram per node: the parent's diagram with the new points placed on it), stopping at
the first node whose goal the engine proves. :func:`aux_chat_records` turns auxiliary-construction
examples into chat records for training a proposer (geotrain's ``chat`` data kind).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from string import Template
from typing import Annotated, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from geosynth.engine import (
    Clause,
    Deduction,
    Diagram,
    Method,
    Problem,
    Proof,
    deduce,
    default_definitions,
    extend_diagram,
    parse_clause,
    parse_problem,
    proof_data,
    proof_steps,
    realise,
    replay,
)
from geosynth.errors import ConstructionFailed, GeoSynthError, ProblemSyntaxError, UnknownConstructionError
from geosynth.synth._aux import (
    STANDARD_KINDS,
    AuxExample,
    standard_constructions,
    used_clauses,
    with_auxiliary,
)
from geotts import BeamParams, ChatMessage, Completion, GenerationRequest, Sampler, SamplingParams

_FROZEN = ConfigDict(frozen=True, extra="forbid", strict=True)

PROMPT_VERSION = "aux.v1"
"""The prompt :func:`aux_prompt` uses unless told otherwise (``prompts/<version>.txt``)."""

_REASONS: tuple[tuple[type[GeoSynthError], str], ...] = (
    (UnknownConstructionError, "unknown construction"),
    (ProblemSyntaxError, "syntax"),
    (ConstructionFailed, "not realisable"),
    (GeoSynthError, "invalid"),
)
"""Rejection reason of a proposal, by the error the engine raised (first match wins)."""


@cache
def load_prompt(version: str = PROMPT_VERSION) -> Template:
    """The prompt template of a version (package data ``geosynth/synth/prompts/<version>.txt``).

    Raises:
        GeoSynthError: No prompt of that version ships with the package.
    """
    source = resources.files("geosynth.synth") / "prompts" / f"{version}.txt"
    if not source.is_file():
        raise GeoSynthError(f"no auxiliary-construction prompt {version!r} (expected prompts/{version}.txt)")
    return Template(source.read_text(encoding="utf-8"))


def aux_prompt(problem: Problem, version: str = PROMPT_VERSION) -> str:
    """The user message asking for one auxiliary construction for ``problem``."""
    return load_prompt(version).substitute(problem=problem.text(), points=" ".join(problem.points))


def aux_request(
    problem: Problem, *, n: int, params: SamplingParams | BeamParams, version: str = PROMPT_VERSION
) -> GenerationRequest:
    """A generation request for ``n`` proposals of one auxiliary construction."""
    message = ChatMessage(role="user", content=aux_prompt(problem, version))
    return GenerationRequest(messages=(message,), n=n, params=params, trace_type="aux")


def parse_proposal(text: str, problem: Problem) -> Clause:
    """Read one proposed clause (its first non-empty line) against the problem's points.

    Surrounding backticks and a trailing ``;`` or ``.`` are ignored.

    Args:
        text: The model's answer.
        problem: The problem the clause extends.

    Returns:
        The clause in full form.

    Raises:
        ProblemSyntaxError: Empty answer, malformed clause, unknown construction, undefined or reused points.
    """
    line = next((ln.strip().strip("`").strip() for ln in text.splitlines() if ln.strip().strip("`")), "")
    line = line.split(";")[0].rstrip(" .")
    if not line:
        raise ProblemSyntaxError("empty proposal", clause=text.strip())
    return parse_clause(line, set(problem.points), default_definitions())


def _reason(err: GeoSynthError) -> str:
    return next(label for kind, label in _REASONS if isinstance(err, kind))


def _key(clause: Clause) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The clause with its new points renamed by position: equal keys are the same construction."""
    rename = {p: f"#{i}" for i, p in enumerate(clause.points)}
    return tuple(sorted((c.name, tuple(rename.get(a, a) for a in c.args)) for c in clause.constructions))


class Rejection(BaseModel):
    """A proposal the search dropped."""

    model_config = _FROZEN
    text: str
    """The proposal as generated."""
    reason: str
    """Its category: ``syntax``, ``unknown construction``, ``not realisable`` or ``invalid``."""
    detail: str
    """The engine's one-line message."""


class AuxSearchResult(BaseModel):
    """The outcome of :func:`aux_search`."""

    model_config = _FROZEN
    solved: bool
    """Whether some node's goal was proved."""
    constructions: tuple[str, ...]
    """The auxiliary clauses of the proving node (full form; empty when unsolved or proved as given)."""
    problem: str
    """The proving node's problem line (the input line when unsolved)."""
    nodes_checked: int
    """Nodes the engine ran on (the root included)."""
    proposals: int
    """Candidates generated by the proposer."""
    invalid: int
    """Candidates dropped as unparsable, unknown or not realisable."""
    duplicates: int
    """Valid candidates dropped because a better-ranked sibling proposed the same construction."""
    reasons: dict[str, int]
    """Invalid candidates per rejection reason."""
    rejected: tuple[Rejection, ...]
    """The first rejected candidates (at most 20), for inspection."""
    depth: int
    """Levels expanded."""
    seconds: float
    """Wall time of the whole search."""
    timed_out: bool = False
    """Whether the search stopped at its time limit."""
    proof: Proof | None = None
    """The proof found (with only the constructions it uses), replayed step by step; ``None`` when
    unsolved or proved as given."""


@dataclass(frozen=True)
class _Node:
    problem: Problem
    diagram: Diagram
    clauses: tuple[str, ...]
    score: float


@dataclass
class _Tally:
    proposals: int = 0
    invalid: int = 0
    duplicates: int = 0
    checked: int = 0

    def __post_init__(self) -> None:
        self.reasons: dict[str, int] = {}
        self.rejected: list[Rejection] = []

    def reject(self, text: str, err: GeoSynthError) -> None:
        self.invalid += 1
        reason = _reason(err)
        self.reasons[reason] = self.reasons.get(reason, 0) + 1
        if len(self.rejected) < 20:
            self.rejected.append(Rejection(text=text, reason=reason, detail=str(err)))


def _score(completion: Completion, rank: int) -> float:
    """A candidate's log-probability; a backend that gives none ranks by position (rank r scores -r-1)."""
    lp = completion.cumulative_logprob
    return -float(rank + 1) if lp is None else lp


def _expand(
    node: _Node, completions: Sequence[Completion], branching: int, tally: _Tally, rng: np.random.Generator
) -> list[_Node]:
    children: list[_Node] = []
    seen: set[tuple[tuple[str, tuple[str, ...]], ...]] = set()
    for rank, completion in enumerate(completions):
        if len(children) >= branching:
            break
        tally.proposals += 1
        try:
            clause = parse_proposal(completion.text, node.problem)
            if _key(clause) in seen:
                tally.duplicates += 1
                continue
            diagram = extend_diagram(node.diagram, clause, rng, attempts=5)
            problem = with_auxiliary(node.problem, [clause])
        except GeoSynthError as err:
            tally.reject(completion.text, err)
            continue
        seen.add(_key(clause))
        score = node.score + _score(completion, rank)
        children.append(_Node(problem, diagram, (*node.clauses, clause.text()), score))
    return children


def _level_params(
    params: SamplingParams | BeamParams | None, seed: int, level: int
) -> SamplingParams | BeamParams:
    if params is None:
        return SamplingParams(temperature=1.0, max_tokens=48, seed=seed * 1009 + level)
    if isinstance(params, SamplingParams) and params.seed is not None:
        return params.model_copy(update={"seed": params.seed * 1009 + level})
    return params


def replayed_proof(
    problem: Problem, added: Sequence[Clause], deduction: Deduction, support: Method | None = "l0"
) -> tuple[Proof, tuple[str, ...]] | None:
    """The proof of a deduction on ``problem`` with ``added`` clauses, if it replays; else ``None``.

    Only the added clauses the proof's steps mention are kept (with the added clauses those are built
    from), and the proof of the problem with just those must replay step by step on fresh diagrams
    (:func:`geosynth.engine.replay`).

    Returns:
        The replayed proof and the clauses kept (full form, in order), or ``None`` when the deduction
        did not prove the goal or its proof does not replay.
    """
    if not deduction.proved:
        return None
    steps = proof_steps(with_auxiliary(problem, list(added)), deduction, support)
    kept = used_clauses(added, steps)
    proof = proof_data(with_auxiliary(problem, kept), steps)
    try:
        ok = replay(proof).ok
    except GeoSynthError:
        ok = False
    return (proof, tuple(c.text() for c in kept)) if ok else None


def _check_settings(branching: int, beam: int, depth: int, node_time_limit: float) -> None:
    bad = [f"{k}={v}" for k, v in (("branching", branching), ("beam", beam), ("depth", depth)) if v < 1]
    if node_time_limit <= 0:
        bad.append(f"node_time_limit={node_time_limit}")
    if bad:
        raise GeoSynthError(f"aux_search needs positive settings, got {', '.join(bad)}")


def aux_search(
    problem: Problem,
    proposer: Sampler,
    *,
    branching: int = 32,
    beam: int = 128,
    depth: int = 4,
    time_limit: float | None = None,
    node_time_limit: float = 5.0,
    seed: int = 0,
    params: SamplingParams | BeamParams | None = None,
    prompt_version: str = PROMPT_VERSION,
) -> AuxSearchResult:
    """Beam search over proposed auxiliary constructions, each node checked by the engine.

    The root (the problem as given) is checked first. At each level every beam node asks the
    proposer for ``branching`` candidates (one batched ``generate`` call per level); each node keeps
    up to ``branching`` distinct candidates that parse and realise on its diagram. Children are ranked
    by cumulative log-probability (ties keep proposal order), the best ``beam`` are checked in rank
    order, and the first proved node whose proof replays (:func:`replayed_proof`, which also drops the
    constructions the proof does not use) ends the search. Deterministic for a seed given a deterministic
    proposer (up to ``node_time_limit``, which a loaded machine reaches sooner).

    Args:
        problem: A problem with a goal.
        proposer: The generation backend (candidates with log-probabilities).
        branching: Distinct valid proposals kept per node.
        beam: Nodes kept per level.
        depth: Most auxiliary constructions added.
        time_limit: Seconds for the whole search (``None``: no limit); checked between node checks.
        node_time_limit: Seconds of deduction per node.
        seed: Seed of the diagrams and of the default sampling parameters.
        params: Decoding parameters (default: temperature 1, 48 tokens, a seed per level).
        prompt_version: The prompt file to use.

    Returns:
        What was found and what it cost.

    Raises:
        ProblemSyntaxError: The problem has no goal.
        ConstructionFailed: The problem itself cannot be realised.
        GeoSynthError: A setting is not positive.
    """
    _check_settings(branching, beam, depth, node_time_limit)
    if problem.goal is None:
        raise ProblemSyntaxError("aux_search needs a goal to prove", clause=problem.text())
    start = time.perf_counter()
    tally = _Tally()

    def result(
        node: _Node | None,
        level: int,
        timed_out: bool = False,
        found: tuple[Proof, tuple[str, ...]] | None = None,
    ) -> AuxSearchResult:
        proof, kept = found if found is not None else (None, () if node is None else node.clauses)
        line = proof.problem if proof is not None else (problem if node is None else node.problem).text()
        return AuxSearchResult(
            solved=node is not None, constructions=kept, problem=line, nodes_checked=tally.checked,
            proposals=tally.proposals, invalid=tally.invalid, duplicates=tally.duplicates,
            reasons=dict(tally.reasons), rejected=tuple(tally.rejected), depth=level,
            seconds=time.perf_counter() - start, timed_out=timed_out, proof=proof,
        )  # fmt: skip

    def expired() -> bool:
        return time_limit is not None and time.perf_counter() - start > time_limit

    root = _Node(problem, realise(problem, np.random.default_rng(seed), check_goal=True), (), 0.0)
    tally.checked += 1
    if deduce(problem, root.diagram, time_limit=node_time_limit).proved:
        return result(root, 0)
    frontier = [root]
    for level in range(1, depth + 1):
        if expired():
            return result(None, level - 1, timed_out=True)
        request_params = _level_params(params, seed, level)
        requests = [
            aux_request(n.problem, n=branching, params=request_params, version=prompt_version)
            for n in frontier
        ]
        children: list[_Node] = []
        for index, (node, completions) in enumerate(zip(frontier, proposer.generate(requests), strict=True)):
            rng = np.random.default_rng((seed % 2**32, level, index))
            children.extend(_expand(node, completions, branching, tally, rng))
        children.sort(key=lambda c: -c.score)
        frontier = []
        for child in children[:beam]:
            if expired():
                return result(None, level, timed_out=True)
            tally.checked += 1
            deduction = deduce(child.problem, child.diagram, time_limit=node_time_limit)
            if deduction.proved:
                found = replayed_proof(problem, child.problem.clauses[len(problem.clauses) :], deduction)
                if found is not None:
                    return result(child, level, found=found)
                tally.invalid += 1
                tally.reasons["proof did not replay"] = tally.reasons.get("proof did not replay", 0) + 1
            frontier.append(child)
        if not frontier:
            return result(None, level)
    return result(None, depth)


def problem_from_prompt(text: str) -> Problem:
    """The problem an auxiliary-construction prompt is about (its ``Problem:`` line).

    Raises:
        ProblemSyntaxError: The prompt has no ``Problem:`` line, or the line does not parse.
    """
    line = next((ln for ln in reversed(text.splitlines()) if ln.startswith("Problem: ")), None)
    if line is None:
        raise ProblemSyntaxError("the prompt has no 'Problem: ' line", clause=text[-200:])
    return parse_problem(line.removeprefix("Problem: "))


class EnumerationProposer:
    """A :class:`geotts.Sampler` that proposes standard constructions in a fixed order (no model).

    For each request it reads the problem from the prompt (:func:`problem_from_prompt`) and returns
    the first ``n`` clauses of :func:`~geosynth.synth._aux.standard_constructions`, all with
    log-probability 0 (so the search keeps their order); fewer candidates than ``n`` are padded with
    empty answers, which the search rejects. A brute-force baseline and an offline stand-in for a model.
    """

    def __init__(self, kinds: Sequence[str] = STANDARD_KINDS) -> None:
        """Enumerate the given construction kinds (default :data:`STANDARD_KINDS`)."""
        self.kinds = tuple(kinds)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[list[Completion]]:
        """The first ``request.n`` standard constructions of each request's problem."""
        out: list[list[Completion]] = []
        for request in requests:
            text = request.prompt if request.prompt is not None else request.messages[-1].content
            texts = standard_constructions(problem_from_prompt(text), self.kinds)[: request.n]
            texts += [""] * (request.n - len(texts))
            out.append([Completion(text=t, num_tokens=None, cumulative_logprob=0.0) for t in texts])
        return out


class ChatPart(BaseModel):
    """One text part of a chat turn (geotrain's content-part format)."""

    model_config = _FROZEN
    type: Literal["text"] = "text"
    """Always text: the records carry no images."""
    text: str
    """The text."""


class ChatTurn(BaseModel):
    """One chat turn (geotrain's message format)."""

    model_config = _FROZEN
    role: Literal["user", "assistant"]
    """Who speaks."""
    content: tuple[ChatPart, ...]
    """The turn's text."""


class AuxChatRecord(BaseModel):
    """A training record for a proposer: the prompt and the auxiliary clause(s) it should answer.

    Its JSON line is a geotrain ``chat`` record (``id``, ``images``, ``messages``).
    """

    model_config = _FROZEN
    id: str
    """Unique record id (``<example name>:aux<k>``, or ``<example name>:aux`` for all clauses at once)."""
    images: tuple[str, ...] = ()
    """No images (formal problems are text only)."""
    messages: Annotated[tuple[ChatTurn, ...], Field(min_length=2, max_length=2)]
    """The user prompt, then the assistant target."""


def _record(rid: str, problem: Problem, target: str, version: str) -> AuxChatRecord:
    turns = (
        ChatTurn(role="user", content=(ChatPart(text=aux_prompt(problem, version)),)),
        ChatTurn(role="assistant", content=(ChatPart(text=target),)),
    )
    return AuxChatRecord(id=rid, messages=turns)


def aux_chat_records(
    example: AuxExample, *, stepwise: bool = True, prompt_version: str = PROMPT_VERSION
) -> list[AuxChatRecord]:
    """Chat records teaching a proposer to recover an example's auxiliary clauses.

    With ``stepwise`` (what :func:`aux_search` asks for), one record per clause: the problem with the
    earlier clauses added, answered by the next clause. Without it, one record whose answer is every
    clause joined by ``"; "`` (the paper's problem-to-constructions format).

    Args:
        example: The example.
        stepwise: One record per clause (default) or one for all.
        prompt_version: The prompt file to use (the one the search will use).

    Returns:
        The records, in clause order.
    """
    reduced = example.reduced_problem()
    if not stepwise:
        return [_record(f"{example.name}:aux", reduced, "; ".join(example.auxiliary), prompt_version)]
    full = example.full_problem()
    records: list[AuxChatRecord] = []
    first = len(reduced.clauses)
    for k, target in enumerate(example.auxiliary):
        partial = Problem.model_validate(
            {"name": reduced.name, "clauses": full.clauses[: first + k], "goal": reduced.goal}
        )
        records.append(_record(f"{example.name}:aux{k + 1}", partial, target, prompt_version))
    return records


def write_aux_records(
    examples: Sequence[AuxExample], path: Path, *, stepwise: bool = True, prompt_version: str = PROMPT_VERSION
) -> int:
    """Write the chat records of many examples as JSON lines; returns how many were written."""
    lines = [
        r.model_dump_json()
        for e in examples
        for r in aux_chat_records(e, stepwise=stepwise, prompt_version=prompt_version)
    ]
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return len(lines)
