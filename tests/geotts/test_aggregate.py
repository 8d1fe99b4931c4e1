"""Semantics of the recorded-answer aggregators: SC, MTE, CG-MTE and the adaptive beam-SC baselines."""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import geotts
from geotts import StrategyConfigError, adaptive_beam_sc, cg_mte, mte, numeric_key, self_consistency

ORDER = geotts.DEFAULT_ORDER

# Small answer alphabets make agreement, ties and failures all common.
answer = st.one_of(st.none(), st.integers(min_value=0, max_value=4))


@st.composite
def pools(
    draw: st.DrawFn, min_traces: int = 1, max_traces: int = 4
) -> tuple[dict[str, list[Hashable | None]], int]:
    v = draw(st.integers(min_value=min_traces, max_value=max_traces))
    d = draw(st.integers(min_value=1, max_value=6))
    names = list(ORDER[:v])
    return {t: draw(st.lists(answer, min_size=d, max_size=d)) for t in names}, d


def reference_cg_mte(
    lists: Mapping[str, Sequence[Hashable | None]], order: Sequence[str], fallback: str
) -> tuple[Hashable | None, int, bool]:
    """Brute-force restatement of ReTTS-PGPS, section 3.4.2, written independently of the library."""
    depth = len(lists[order[0]])
    for d in range(1, depth + 1):
        votes = Counter(a for t in order for a in lists[t][:d] if a is not None)
        if votes:
            (top, n), *rest = votes.most_common()
            if not rest or rest[0][1] < n:
                return top, d, False
    return lists[fallback][0], depth, True


@settings(max_examples=300, deadline=None)
@given(pools())
def test_cg_mte_matches_the_specification(pool: tuple[dict[str, list[Hashable | None]], int]) -> None:
    lists, _ = pool
    order = list(lists)
    fallback = "cot_pal" if "cot_pal" in order else order[-1]
    got = cg_mte(lists)
    want_answer, want_depth, want_fallback = reference_cg_mte(lists, order, fallback)
    assert (got.answer, got.depth, got.fallback) == (want_answer, want_depth, want_fallback)
    assert got.samples == len(order) * got.depth


@settings(max_examples=300, deadline=None)
@given(pools())
def test_cg_mte_never_counts_more_samples_than_standard_mte(
    pool: tuple[dict[str, list[Hashable | None]], int],
) -> None:
    lists, _ = pool
    assert cg_mte(lists).samples <= mte(lists).samples


@settings(max_examples=300, deadline=None)
@given(st.lists(answer, min_size=1, max_size=10))
def test_cg_mte_on_one_trace_type_is_self_consistency_at_its_depth(answers: list[Hashable | None]) -> None:
    got = cg_mte({"program": answers})
    assert got.answer == self_consistency(answers, k=got.depth).answer
    # One trace type reaches consensus at its first successful candidate.
    first_ok = next((i for i, a in enumerate(answers) if a is not None), None)
    assert got.depth == (len(answers) if first_ok is None else first_ok + 1)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(min_value=3, max_value=4),
    st.permutations(range(4)),
    st.lists(st.integers(min_value=5, max_value=9), min_size=2, max_size=2, unique=True),
    st.lists(st.lists(answer, min_size=3, max_size=3), min_size=4, max_size=4),
    st.booleans(),
)
def test_cg_mte_stops_at_depth_one_when_two_agree_and_the_rest_disagree(
    v: int, perm: list[int], others: list[int], deeper: list[list[Hashable | None]], fail_one: bool
) -> None:
    names = list(ORDER[:v])
    pair = [names[i] for i in perm if i < v][:2]
    rest = [t for t in names if t not in pair]
    tops: dict[str, Hashable | None] = {t: 42 for t in pair}
    for t, other in zip(rest, others, strict=False):
        tops[t] = other
    if fail_one:
        tops[rest[0]] = None  # a failed execution is no vote and cannot break the agreement
    lists = {t: [tops[t], *deeper[i]] for i, t in enumerate(names)}
    got = cg_mte(lists)
    assert (got.answer, got.depth, got.samples, got.fallback) == (42, 1, v, False)


@settings(max_examples=200, deadline=None)
@given(pools(min_traces=2), st.permutations(range(5)), st.sampled_from(ORDER))
def test_cg_mte_is_invariant_to_renaming_answers(
    pool: tuple[dict[str, list[Hashable | None]], int], perm: list[int], fallback: str
) -> None:
    lists, _ = pool
    fb = fallback if fallback in lists else None
    rename = {i: f"answer-{p}" for i, p in enumerate(perm)}
    renamed = {t: [None if a is None else rename[a] for a in answers] for t, answers in lists.items()}  # type: ignore[index]
    a, b = cg_mte(lists, fallback=fb), cg_mte(renamed, fallback=fb)
    assert (b.depth, b.samples, b.fallback) == (a.depth, a.samples, a.fallback)
    assert b.answer == (None if a.answer is None else rename[a.answer])  # type: ignore[index]


def test_cg_mte_falls_back_to_the_top1_of_cot_pal_when_no_depth_has_a_unique_mode() -> None:
    lists = {"program": [1, 5], "pal": [2, 6], "cot_program": [3, 7], "cot_pal": [4, 8]}
    got = cg_mte(lists)
    assert (got.answer, got.depth, got.samples, got.fallback) == (4, 2, 8, True)
    assert cg_mte(lists, fallback="pal").answer == 2
    # The fallback answer is the top-1 even when that candidate failed.
    assert cg_mte({**lists, "cot_pal": [None, 8]}).answer is None


def test_cg_mte_expands_depth_until_a_unique_mode_appears() -> None:
    # d=1: 1,2,3,4 all tied; d=2 adds 2,1,9,None: 1 and 2 tied; d=3 adds 2: 2 wins.
    lists = {"program": [1, 2, 2], "pal": [2, 1, 7], "cot_program": [3, 9, 8], "cot_pal": [4, None, 6]}
    got = cg_mte(lists)
    assert (got.answer, got.depth, got.samples) == (2, 3, 12)


def test_cg_mte_honours_custom_trace_types_order_and_depth() -> None:
    lists = {"sketch": [1, 2], "code": [3, 2]}
    got = cg_mte(lists, order=["code", "sketch"], fallback="sketch", depth=2)
    assert (got.answer, got.depth, got.samples) == (2, 2, 4)
    got = cg_mte({"sketch": [1, 2], "code": [3, 4]})
    assert (got.answer, got.fallback) == (3, True)  # non-default names: the fallback is the last trace type


def test_ties_go_to_the_first_answer_in_read_order() -> None:
    assert self_consistency([3, 5, 5, 3]).answer == 3
    assert self_consistency([None, 5, 3, 3, 5]).answer == 5
    # MTE reads depth by depth, trace type by trace type: pal's top-1 (7) is read before program's second (6).
    assert mte({"program": [1, 6], "pal": [7, 6], "cot_program": [7, 3], "cot_pal": [2, 4]}).answer == 7
    assert mte({"program": [6, 1], "pal": [7, 6], "cot_program": [None, 7], "cot_pal": [2, 2]}).answer == 6


def test_answers_compare_by_a_configurable_key() -> None:
    assert numeric_key(1.0004) == numeric_key(1) == 1.0
    assert numeric_key(1.0006) != numeric_key(1.0)
    assert numeric_key(True) is True
    got = cg_mte({"program": [2.0001], "pal": [1.99996], "cot_program": [5.0], "cot_pal": [None]})
    assert (got.answer, got.depth) == (2.0001, 1)  # the first-seen representative is reported
    exact = cg_mte(
        {"program": [2.0001], "pal": [1.99996], "cot_program": [5.0], "cot_pal": [None]}, key=lambda a: a
    )
    assert exact.fallback


def test_self_consistency_budget_and_failures() -> None:
    assert self_consistency([None, None, 4], k=2).answer is None
    assert self_consistency([1, 2, 2, 2], k=3).samples == 3
    with pytest.raises(StrategyConfigError, match="budget k=5"):
        self_consistency([1, 2], k=5)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"fallback": "sketch"}, "fallback trace type 'sketch'"),
        ({"order": ["program", "geometry"]}, "no answers: \\['geometry'\\]"),
        ({"order": ["program", "program"]}, "repeats"),
        ({"depth": 3}, "fewer"),
        ({"depth": 0}, "at least 1"),
    ],
)
def test_bad_configuration_is_named(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(StrategyConfigError, match=message):
        cg_mte({"program": [1, 2], "pal": [1, 2]}, **kwargs)  # type: ignore[arg-type]


def test_uneven_answer_lists_need_an_explicit_depth() -> None:
    lists = {"program": [1, 2, 3], "pal": [4, 5]}
    with pytest.raises(StrategyConfigError, match="different numbers of answers"):
        mte(lists)
    assert mte(lists, depth=2).samples == 4


def test_rank_split_baseline_uses_rank_blocks_and_the_same_stopping_rule() -> None:
    ranked = [1, 7, 2, 8, 3, 9, 1, 6]  # blocks of 2: [1,7] [2,8] [3,9] [1,6]
    got = adaptive_beam_sc(ranked, split="rank", groups=4)
    assert (got.answer, got.depth, got.samples, got.generated) == (1, 1, 4, 8)
    flat = adaptive_beam_sc([1, 2, 3, 4, 5, 6, 7, 8], split="rank", groups=4)
    assert (flat.answer, flat.fallback, flat.samples) == (1, True, 8)
    with pytest.raises(StrategyConfigError, match="equal blocks"):
        adaptive_beam_sc([1, 2, 3], split="rank", groups=2)


def test_pattern_split_baseline_groups_by_trace_pattern() -> None:
    ranked = [5, 5, 3, 3, 3]
    patterns = ["pal", "pal", "cot_pal", "program", "cot_pal"]
    got = adaptive_beam_sc(ranked, split="pattern", patterns=patterns)
    # d=1 pools the top of each group: 5 (pal), 3 (cot_pal), 3 (program) -> 3 is the unique mode.
    assert (got.answer, got.depth, got.samples, got.generated) == (3, 1, 3, 5)
    with pytest.raises(StrategyConfigError, match="one pattern label per candidate"):
        adaptive_beam_sc(ranked, split="pattern", patterns=["pal"])
