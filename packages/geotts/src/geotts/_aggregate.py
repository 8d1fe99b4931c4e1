"""Aggregators over recorded, ranked answers: SC, standard MTE, CG-MTE and the adaptive beam-SC baselines.

Read order, which decides ties, is always depth by depth and, within a depth, trace type by trace
type in the configured order. A ``None`` answer is a failed candidate: it costs a sample but casts
no vote.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Literal

from geotts._models import Decision
from geotts._vote import AnswerKey, numeric_key, tally
from geotts.errors import StrategyConfigError

__all__ = (
    "DEFAULT_ORDER",
    "adaptive_beam_sc",
    "cg_mte",
    "mte",
    "pool_at_depth",
    "resolve_fallback",
    "resolve_order",
    "self_consistency",
)

#: The four trace types of ReTTS-PGPS (section 3.2), in the default CG-MTE order.
DEFAULT_ORDER: tuple[str, ...] = ("program", "pal", "cot_program", "cot_pal")

AnswerList = Sequence[Hashable | None]


def resolve_order(names: Sequence[str], order: Sequence[str] | None) -> tuple[str, ...]:
    """The trace types to use, in read order.

    Without an explicit ``order``: the default order when every name is one of the default trace
    types, otherwise the names as given.

    Raises:
        StrategyConfigError: when the order is empty, repeats a name or names a trace type that is absent.
    """
    if order is None:
        resolved = (
            tuple(t for t in DEFAULT_ORDER if t in names)
            if set(names) <= set(DEFAULT_ORDER)
            else tuple(names)
        )
    else:
        resolved = tuple(order)
        missing = [t for t in resolved if t not in names]
        if missing:
            raise StrategyConfigError(
                f"order names trace types with no answers: {missing}; available: {list(names)}"
            )
    if not resolved:
        raise StrategyConfigError("no trace types to aggregate: the answers mapping is empty")
    if len(set(resolved)) != len(resolved):
        raise StrategyConfigError(f"order repeats a trace type: {list(resolved)}")
    return resolved


def resolve_fallback(order: Sequence[str], fallback: str | None) -> str:
    """The fallback trace type: ``cot_pal`` when present, else the last trace type of ``order``."""
    if fallback is None:
        return "cot_pal" if "cot_pal" in order else order[-1]
    if fallback not in order:
        raise StrategyConfigError(
            f"fallback trace type {fallback!r} is not one of the trace types {list(order)}"
        )
    return fallback


def _resolve_depth(lists: Mapping[str, AnswerList], depth: int | None) -> int:
    lengths = {name: len(answers) for name, answers in lists.items()}
    if depth is None:
        if len(set(lengths.values())) > 1:
            raise StrategyConfigError(f"trace types have different numbers of answers {lengths}; pass depth=")
        depth = next(iter(lengths.values()))
    if depth < 1:
        raise StrategyConfigError(f"depth must be at least 1, got {depth} (answer list lengths: {lengths})")
    short = {name: n for name, n in lengths.items() if n < depth}
    if short:
        raise StrategyConfigError(
            f"depth {depth} needs {depth} answers per trace type; these have fewer: {short}"
        )
    return depth


def pool_at_depth(lists: Sequence[AnswerList], depth: int) -> list[Hashable | None]:
    """Pool the top-``depth`` answers of every list, read depth by depth, list by list (short lists end early)."""
    return [answers[i] for i in range(depth) for answers in lists if i < len(answers)]


def self_consistency(answers: AnswerList, *, k: int | None = None, key: AnswerKey = numeric_key) -> Decision:
    """Majority vote over the first ``k`` ranked candidates (all of them by default).

    Args:
        answers: Ranked answers (beam order or sampling order); None is a failed candidate.
        k: Budget; defaults to ``len(answers)``.
        key: Answer comparison key.

    Returns:
        The decision: ties go to the tied answer that appears first; None when all ``k`` failed.
    """
    k = len(answers) if k is None else k
    if k < 1 or k > len(answers):
        raise StrategyConfigError(
            f"self-consistency budget k={k} must be between 1 and the {len(answers)} answers given"
        )
    head = list(answers[:k])
    return Decision(
        answer=tally(head, key).winner(),
        depth=k,
        samples=k,
        generated=k,
        strategy="self_consistency",
        pool=(("candidates", tuple(head)),),
    )


def mte(
    answers_by_trace: Mapping[str, AnswerList],
    *,
    depth: int | None = None,
    order: Sequence[str] | None = None,
    key: AnswerKey = numeric_key,
) -> Decision:
    """Standard multi-trace ensemble: vote over the top-``depth`` answers of every trace type.

    Args:
        answers_by_trace: Ranked answers per trace type.
        depth: D, answers read per trace type (default: all, which must be equally many).
        order: Trace types and their read order (see :func:`resolve_order`).
        key: Answer comparison key.

    Returns:
        The decision; ``samples`` is V x D.
    """
    names = resolve_order(list(answers_by_trace), order)
    lists = {t: answers_by_trace[t] for t in names}
    d = _resolve_depth(lists, depth)
    pooled = pool_at_depth(list(lists.values()), d)
    return Decision(
        answer=tally(pooled, key).winner(),
        depth=d,
        samples=len(names) * d,
        generated=len(names) * d,
        strategy="mte",
        pool=tuple((t, tuple(lists[t][:d])) for t in names),
    )


def cg_mte(
    answers_by_trace: Mapping[str, AnswerList],
    *,
    order: Sequence[str] | None = None,
    fallback: str | None = None,
    depth: int | None = None,
    key: AnswerKey = numeric_key,
) -> Decision:
    """Consensus-guided MTE (ReTTS-PGPS, section 3.4.2).

    For d = 1..D, pool the top-d answers of all V trace types and stop at the first d where exactly
    one answer has the highest count; if no depth has one, answer the top-1 of the fallback trace.

    Args:
        answers_by_trace: Ranked answers per trace type (None = failed execution, no vote).
        order: Trace types and their read order; default program, pal, cot_program, cot_pal.
        fallback: Trace type whose top-1 answers when consensus never forms (default cot_pal, else the last).
        depth: D, the maximum depth (default: all answers, which must be equally many per trace type).
        key: Answer comparison key.

    Returns:
        The decision; ``samples`` is V x d at the stopping depth (V x D on fallback).
    """
    names = resolve_order(list(answers_by_trace), order)
    fb = resolve_fallback(names, fallback)
    lists = {t: answers_by_trace[t] for t in names}
    d_max = _resolve_depth(lists, depth)
    v = len(names)
    for d in range(1, d_max + 1):
        mode = tally(pool_at_depth(list(lists.values()), d), key).unique_mode()
        if mode is not None:
            return Decision(
                answer=mode,
                depth=d,
                samples=v * d,
                generated=v * d,
                strategy="cg_mte",
                pool=tuple((t, tuple(lists[t][:d])) for t in names),
            )
    return Decision(
        answer=lists[fb][0],
        depth=d_max,
        samples=v * d_max,
        generated=v * d_max,
        fallback=True,
        strategy="cg_mte",
        pool=tuple((t, tuple(lists[t][:d_max])) for t in names),
    )


def _groups_by_rank(answers: AnswerList, groups: int) -> list[list[Hashable | None]]:
    if groups < 1 or len(answers) % groups:
        raise StrategyConfigError(
            f"rank split needs the {len(answers)} candidates to divide into {groups} equal blocks"
        )
    size = len(answers) // groups
    return [list(answers[g * size : (g + 1) * size]) for g in range(groups)]


def _groups_by_pattern(
    answers: AnswerList, patterns: Sequence[str] | None, pattern_order: Sequence[str] | None
) -> tuple[list[str], list[list[Hashable | None]]]:
    if patterns is None or len(patterns) != len(answers):
        got = "none" if patterns is None else str(len(patterns))
        raise StrategyConfigError(
            f"pattern split needs one pattern label per candidate ({len(answers)}), got {got}"
        )
    present = list(dict.fromkeys(patterns))
    names = [p for p in pattern_order if p in present] if pattern_order is not None else present
    names += [p for p in present if p not in names]
    return names, [[a for a, p in zip(answers, patterns, strict=True) if p == name] for name in names]


def adaptive_beam_sc(
    answers: AnswerList,
    *,
    split: Literal["rank", "pattern"],
    groups: int = 4,
    patterns: Sequence[str] | None = None,
    pattern_order: Sequence[str] | None = None,
    key: AnswerKey = numeric_key,
) -> Decision:
    """Adaptive beam-search SC baselines of ReTTS-PGPS, section 5.2, Table 5.

    The unified model's ranked beam list is split into groups (``rank``: ``groups`` equal rank
    blocks; ``pattern``: one group per detected trace pattern, each in rank order), then the CG-MTE
    stopping rule runs over the groups as if they were trace types. Without consensus the answer is
    the top-1 of the unified list. ``samples`` counts the candidates pooled at the stopping depth;
    ``generated`` is the whole list, which had to be generated before it could be split.

    Args:
        answers: Ranked answers of one beam search of width K (None = failed).
        split: ``rank`` or ``pattern``.
        groups: Number of rank blocks (rank split only).
        patterns: Pattern label of each candidate (pattern split only).
        pattern_order: Read order of the pattern groups (default: first appearance in the list).
        key: Answer comparison key.

    Returns:
        The decision.
    """
    if not answers:
        raise StrategyConfigError("adaptive beam SC needs at least one candidate")
    if split == "rank":
        lists = _groups_by_rank(answers, groups)
        names = [f"rank_{g + 1}" for g in range(groups)]
    else:
        names, lists = _groups_by_pattern(answers, patterns, pattern_order)
    d_max = max(len(g) for g in lists)
    for d in range(1, d_max + 1):
        mode = tally(pool_at_depth(lists, d), key).unique_mode()
        if mode is not None:
            return Decision(
                answer=mode,
                depth=d,
                samples=sum(min(d, len(g)) for g in lists),
                generated=len(answers),
                strategy=f"adaptive_beam_sc_{split}",
                pool=tuple((n, tuple(g[:d])) for n, g in zip(names, lists, strict=True)),
            )
    return Decision(
        answer=answers[0],
        depth=d_max,
        samples=len(answers),
        generated=len(answers),
        fallback=True,
        strategy=f"adaptive_beam_sc_{split}",
        pool=tuple((n, tuple(g)) for n, g in zip(names, lists, strict=True)),
    )
