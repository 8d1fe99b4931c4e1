"""Evaluation of strategies over recorded pools: accuracy vs samples, termination, error coupling, diversity."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Self

from pydantic import Field, ValidationError, field_validator, model_validator

from geotts._aggregate import adaptive_beam_sc, cg_mte, mte, resolve_order, self_consistency
from geotts._models import Decision, GeoTTSModel
from geotts._vote import numeric_key
from geotts.errors import StrategyConfigError

__all__ = (
    "CurvePoint",
    "ErrorCoupling",
    "Evaluation",
    "RecordedPool",
    "evaluate",
    "is_correct",
    "load_pools",
)

Num = float | None


class RecordedPool(GeoTTSModel):
    """One problem's recorded answers (a line of a pools JSONL file)."""

    id: str
    """Problem identifier (an integer id in a JSON file reads as its decimal text)."""
    traces: dict[str, tuple[Num, ...]]
    """Ranked answers per trace type (null = failed execution)."""
    gold: float | None = None
    """The gold answer (needed for accuracy)."""
    unified: tuple[Num, ...] | None = None
    """Optional ranked answers of the unified model's beam search (for SC and the adaptive baselines)."""
    unified_patterns: tuple[str, ...] | None = None
    """Optional detected trace pattern of each unified candidate."""

    @field_validator("id", mode="before")
    @classmethod
    def _integer_id(cls, value: object) -> object:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @model_validator(mode="after")
    def _check(self) -> Self:
        if not self.traces and self.unified is None:
            raise ValueError(f"pool {self.id!r} has neither traces nor a unified list")
        if self.unified_patterns is not None and (
            self.unified is None or len(self.unified) != len(self.unified_patterns)
        ):
            raise ValueError(f"pool {self.id!r}: unified_patterns must label every unified answer")
        return self


def load_pools(path: str | Path) -> list[RecordedPool]:
    """Read a pools JSONL file; a bad line raises an error naming the file, the line and the problem."""
    p = Path(path)
    pools: list[RecordedPool] = []
    for number, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            pools.append(RecordedPool.model_validate_json(line))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(x) for x in first["loc"]) or "line"
            raise StrategyConfigError(f"{p}:{number}: invalid pool ({where}: {first['msg']})") from exc
    if not pools:
        raise StrategyConfigError(f"{p}: no pools")
    return pools


def is_correct(answer: object, gold: float | None, rel_tol: float = 1e-3) -> bool:
    """True when ``answer`` is a number within relative tolerance ``rel_tol`` of ``gold`` (ReTTS-PGPS's criterion, section 3.2.1)."""
    if gold is None or isinstance(answer, bool) or not isinstance(answer, int | float):
        return False
    return math.isclose(float(answer), gold, rel_tol=rel_tol, abs_tol=1e-9)


class CurvePoint(GeoTTSModel):
    """Accuracy of one strategy at one budget."""

    strategy: str
    """Strategy name."""
    budget: Annotated[int, Field(ge=1)]
    """Maximum samples per problem."""
    accuracy: float
    """Fraction of problems answered correctly."""
    asn: float
    """Average number of samples counted per problem."""


class ErrorCoupling(GeoTTSModel):
    """How often the top-1 answers of different trace types are wrong in the same way (ReTTS-PGPS, appendix D.5)."""

    pairwise_same_wrong: float
    """Among trace pairs where both top-1 answers are wrong, the share giving the same wrong answer."""
    at_least_3_same_wrong: float
    """Share of problems where at least three top-1 answers agree on a wrong answer."""
    all_same_wrong: float
    """Share of problems where every trace type's top-1 is the same wrong answer."""


class Evaluation(GeoTTSModel):
    """Everything a report shows."""

    problems: int
    """Number of problems evaluated."""
    order: tuple[str, ...]
    """Trace types used."""
    curves: tuple[CurvePoint, ...]
    """Accuracy vs samples for every strategy and budget."""
    baselines: tuple[CurvePoint, ...]
    """SC, adaptive beam SC (rank, pattern) and CG-MTE at the largest budget (Table 5)."""
    termination: dict[int, int]
    """CG-MTE at the largest depth: problems per termination depth."""
    accuracy_by_depth: dict[int, float]
    """CG-MTE at the largest depth: accuracy of the problems terminating at each depth."""
    fallbacks: int
    """CG-MTE at the largest depth: problems decided by the fallback."""
    coupling: ErrorCoupling
    """Error coupling of the top-1 answers."""
    unique_answers: dict[int, int]
    """Problems per number of distinct answers among all recorded candidates."""
    trace_shares: dict[int, dict[str, float]]
    """Unified beam: share of each detected trace pattern in the top-k, per k."""
    top1_accuracy: dict[str, float]
    """Accuracy of each trace type's top-1 answer."""


def _acc(decisions: Sequence[Decision], pools: Sequence[RecordedPool]) -> float:
    return sum(is_correct(d.answer, p.gold) for d, p in zip(decisions, pools, strict=True)) / len(pools)


def _asn(decisions: Sequence[Decision]) -> float:
    return sum(d.samples for d in decisions) / len(decisions)


def _coupling(pools: Sequence[RecordedPool], order: Sequence[str]) -> ErrorCoupling:
    pairs = same = three = every = 0
    for p in pools:
        tops = [p.traces[t][0] if p.traces[t] else None for t in order]
        wrong = [None if is_correct(a, p.gold) else (None if a is None else numeric_key(a)) for a in tops]
        is_wrong = [not is_correct(a, p.gold) for a in tops]
        for i, j in itertools.combinations(range(len(order)), 2):
            if is_wrong[i] and is_wrong[j]:
                pairs += 1
                same += wrong[i] is not None and wrong[i] == wrong[j]
        counts = Counter(w for w in wrong if w is not None)
        top = max(counts.values(), default=0)
        three += top >= 3
        every += top == len(order)
    n = len(pools)
    return ErrorCoupling(
        pairwise_same_wrong=same / pairs if pairs else 0.0,
        at_least_3_same_wrong=three / n,
        all_same_wrong=every / n,
    )


def _shares(pools: Sequence[RecordedPool], ks: Sequence[int]) -> dict[int, dict[str, float]]:
    out: dict[int, dict[str, float]] = {}
    labelled = [p.unified_patterns for p in pools if p.unified_patterns]
    if not labelled:
        return out
    names = sorted({x for lab in labelled for x in lab})
    for k in ks:
        counts = Counter(x for lab in labelled for x in lab[:k])
        total = sum(counts.values())
        out[k] = {name: counts[name] / total for name in names}
    return out


def _point(
    strategy: str, budget: int, decisions: Sequence[Decision], pools: Sequence[RecordedPool]
) -> CurvePoint:
    return CurvePoint(strategy=strategy, budget=budget, accuracy=_acc(decisions, pools), asn=_asn(decisions))


def _depths(pools: Sequence[RecordedPool], names: Sequence[str], depths: Sequence[int] | None) -> list[int]:
    if not all(t in p.traces and p.traces[t] for p in pools for t in names):
        raise StrategyConfigError(f"every pool needs at least one answer for each trace type {list(names)}")
    max_d = min(len(p.traces[t]) for p in pools for t in names)
    chosen = sorted(set(depths or range(1, max_d + 1)))
    if chosen[0] < 1 or chosen[-1] > max_d:
        raise StrategyConfigError(f"depths must lie in 1..{max_d} (the shortest trace list), got {chosen}")
    return chosen


def _has_unified(pools: Sequence[RecordedPool], k: int) -> bool:
    return all(p.unified is not None and len(p.unified) >= k for p in pools)


def _curves(
    pools: Sequence[RecordedPool], names: Sequence[str], depths: Sequence[int], fallback: str | None
) -> list[CurvePoint]:
    v, out = len(names), []
    for d in depths:
        out.append(_point("mte", v * d, [mte(p.traces, order=names, depth=d) for p in pools], pools))
        out.append(
            _point(
                "cg_mte",
                v * d,
                [cg_mte(p.traces, order=names, depth=d, fallback=fallback) for p in pools],
                pools,
            )
        )
        if _has_unified(pools, v * d):
            out.append(
                _point("sc_beam", v * d, [self_consistency(p.unified or (), k=v * d) for p in pools], pools)
            )
    return out


def _baselines(pools: Sequence[RecordedPool], names: Sequence[str], k: int) -> list[CurvePoint]:
    """SC and the adaptive beam-SC baselines on the unified top-k (Table 5)."""
    if not _has_unified(pools, k):
        return []
    heads = [(p.unified or ())[:k] for p in pools]
    out = [
        _point("sc_beam", k, [self_consistency(h) for h in heads], pools),
        _point(
            "adaptive_rank", k, [adaptive_beam_sc(h, split="rank", groups=len(names)) for h in heads], pools
        ),
    ]
    if all(p.unified_patterns for p in pools):
        pattern = [
            adaptive_beam_sc(h, split="pattern", patterns=(p.unified_patterns or ())[:k], pattern_order=names)
            for h, p in zip(heads, pools, strict=True)
        ]
        out.append(_point("adaptive_pattern", k, pattern, pools))
    return out


def evaluate(
    pools: Sequence[RecordedPool],
    *,
    depths: Sequence[int] | None = None,
    order: Sequence[str] | None = None,
    fallback: str | None = None,
) -> Evaluation:
    """Run SC, standard MTE, CG-MTE and the adaptive beam-SC baselines over recorded pools.

    Args:
        pools: Recorded pools with gold answers.
        depths: Depths D to evaluate (budget V x D); default 1..the shortest trace list.
        order: Trace types in read order (default: the default order restricted to the pools' trace types).
        fallback: CG-MTE fallback trace type.

    Returns:
        The evaluation.
    """
    if not pools:
        raise StrategyConfigError("evaluate needs at least one pool")
    names = resolve_order(list(pools[0].traces) if order is None else list(order), order)
    chosen = _depths(pools, names, depths)
    top = len(names) * chosen[-1]
    final = [cg_mte(p.traces, order=names, depth=chosen[-1], fallback=fallback) for p in pools]
    by_depth: dict[int, list[bool]] = {}
    for d, p in zip(final, pools, strict=True):
        by_depth.setdefault(d.depth, []).append(is_correct(d.answer, p.gold))
    uniques = Counter(
        len({numeric_key(a) for a in (p.unified or [x for t in names for x in p.traces[t]]) if a is not None})
        for p in pools
    )
    return Evaluation(
        problems=len(pools),
        order=names,
        curves=tuple(_curves(pools, names, chosen, fallback)),
        baselines=(_point("cg_mte", top, final, pools), *_baselines(pools, names, top)),
        termination=dict(sorted(Counter(d.depth for d in final if not d.fallback).items())),
        accuracy_by_depth={k: sum(v) / len(v) for k, v in sorted(by_depth.items())},
        fallbacks=sum(d.fallback for d in final),
        coupling=_coupling(pools, names),
        unique_answers=dict(sorted(uniques.items())),
        trace_shares=_shares(pools, [k for k in (1, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40) if k <= top]),
        top1_accuracy={t: sum(is_correct(p.traces[t][0], p.gold) for p in pools) / len(pools) for t in names},
    )
