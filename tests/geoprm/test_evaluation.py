"""Evaluation of best-of-N, refined best-of-N and self-consistency on recorded pools."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from geoprm.evaluation import (
    CurveRow,
    EvalCandidate,
    EvalProblem,
    EvaluationError,
    accuracy_curve,
    aggregation_ablation,
    by_kind,
    markdown_table,
    pass_at_k,
    plot_accuracy_curve,
    record_runs,
)
from geotts import (
    Completion,
    GenerationRequest,
    LastNumberExtractor,
    Problem,
    SamplingParams,
    StepJudgement,
    StepScoreRequest,
)
from geotts.testing import FunctionSampler


def C(answer: float | None, *scores: float | None, verdict: str = "has_incorrect") -> EvalCandidate:
    return EvalCandidate(answer=answer, step_scores=scores, verdict=verdict)  # type: ignore[arg-type]


# Problem 1: the sampled pool's best-scored all-correct candidate is right; SC is wrong (two 3s).
P1 = EvalProblem(
    id="p1",
    kind="plane_geometry",
    answer=5.0,
    sampled=(
        C(3.0, 0.9, 0.2),
        C(5.0, 0.8, 0.9, verdict="all_correct"),
        C(3.0, 0.7),
        C(4.0, 0.99, verdict="all_correct"),
    ),
    refined=(C(5.0, 0.95, 0.95, verdict="all_correct"), C(5.0, 0.6), C(1.0, 0.1), C(2.0, 0.2)),
)
# Problem 2: all samples wrong; the refinement of sample 0 fixes it.
P2 = EvalProblem(
    id="p2",
    kind="functions",
    answer=2.0,
    sampled=(C(1.0, 0.3), C(1.0, 0.4), C(7.0, 0.2), C(None)),
    refined=(C(2.0, 0.9, 0.8, verdict="all_correct"), C(1.0, 0.5), C(1.0, 0.5), C(1.0, 0.5)),
)


def test_accuracy_curve_on_hand_checked_pools() -> None:
    rows = accuracy_curve([P1, P2], [1, 2, 4])
    assert [r.n for r in rows] == [1, 2, 4]
    # N=1: only sample 0 (wrong for both); refined needs N even
    assert rows[0] == CurveRow(n=1, policy=0.0, bon=0.0, refined_bon=None, self_consistency=0.0)
    # N=2: P1 BoN picks the all-correct 5.0; refined pool = sampled[0] + refined[0] -> right for both
    assert rows[1].bon == 0.5 and rows[1].refined_bon == 1.0 and rows[1].policy == pytest.approx(0.25)
    # N=4: P1 BoN: all-correct candidates 5.0 (mean 0.85) and 4.0 (0.99) -> 4.0, wrong; SC: 3.0, wrong
    assert rows[2].bon == 0.0 and rows[2].self_consistency == 0.0
    assert rows[2].policy == pytest.approx(0.125)
    # refined pool of P1 at N=4: sampled[:2] + refined[:2]; all-correct ones score 0.85 and 0.95 -> 5.0
    assert rows[2].refined_bon == 1.0


def test_skipping_unanswered_candidates_changes_only_pools_with_one() -> None:
    # P3: the best-scored all-correct sample has no answer; the next all-correct one is right
    p3 = EvalProblem(
        id="p3",
        kind="plane_geometry",
        answer=6.0,
        sampled=(C(None, 0.99, verdict="all_correct"), C(6.0, 0.7, verdict="all_correct")),
        refined=(C(None, 0.98, verdict="all_correct"),),
    )
    paper = accuracy_curve([P1, p3], [2])[0]
    skipping = accuracy_curve([P1, p3], [2], skip_unanswered=True)[0]
    assert paper.bon == 0.5 and skipping.bon == 1.0  # P1 is right either way
    # refined pool of p3: sampled[0] (no answer) + refined[0] (no answer): nothing to skip to
    assert paper.refined_bon == skipping.refined_bon == 0.5
    assert paper.self_consistency == skipping.self_consistency and paper.policy == skipping.policy


def test_pass_at_k_and_ablation_and_kinds() -> None:
    rows = pass_at_k([P1, P2], 4, [1, 2, 4])
    # sampled: P1 has 1 right of 4, P2 none; refined pool: P1 3 of 4, P2 1 of 4
    assert rows[0].sampled == pytest.approx((0.25 + 0.0) / 2)
    assert rows[0].refined == pytest.approx((0.75 + 0.25) / 2)
    assert rows[1].sampled == pytest.approx((1 - 3 / 6) / 2)
    assert rows[2].sampled == pytest.approx(0.5) and rows[2].refined == pytest.approx(1.0)
    ablation = {row.how: row for row in aggregation_ablation([P1, P2], 4)}
    assert set(ablation) == {"mean", "min", "max"}
    assert ablation["mean"].refined_bon == 1.0
    # with max, P1's sampled pool prefers 4.0 (0.99) over 5.0 (0.9): still wrong
    assert ablation["max"].bon == 0.0
    kinds = by_kind([P1, P2], 2)
    assert [(k.kind, k.problems) for k in kinds] == [("plane_geometry", 1), ("functions", 1)]
    assert kinds[0].improvement == pytest.approx(50.0) and kinds[1].improvement == pytest.approx(100.0)


def test_bad_requests_are_rejected() -> None:
    with pytest.raises(EvaluationError, match="N=5 needs N sampled"):
        accuracy_curve([P1], [5])
    with pytest.raises(EvaluationError, match="no problems"):
        accuracy_curve([], [1])
    with pytest.raises(EvaluationError, match="even N"):
        pass_at_k([P1], 3, [1])
    with pytest.raises(EvaluationError, match="between 1 and N=4"):
        pass_at_k([P1], 4, [5])
    with pytest.raises(ValueError, match="5 refined but 4 sampled"):
        EvalProblem(id="x", answer=1.0, sampled=P1.sampled, refined=(*P1.refined, C(1.0)))
    with pytest.raises(ValueError, match="an all_correct candidate needs the scores of its judged steps"):
        C(1.0, verdict="all_correct")


def test_recorded_candidates_are_read_as_geotts_judgements() -> None:
    # a judged step without a score counts 0.5: (0.95, 0.5) has mean 0.725 < 0.8, so the second wins
    pool = (C(1.0, 0.95, None, verdict="all_correct"), C(2.0, 0.8, 0.8, verdict="all_correct"))
    (row,) = accuracy_curve([EvalProblem(id="p", answer=2.0, sampled=pool)], [2])
    assert row.bon == 1.0
    assert pool[0].judgement == StepJudgement(scores=(0.95, 0.5))
    # anything but all_correct: the last judged step is the first wrong one; no steps: one unverified step
    assert C(1.0, 0.9, 0.2).judgement == StepJudgement(scores=(0.9, 0.2), first_wrong=1)
    assert C(None, verdict="undetermined").judgement == StepJudgement(scores=(0.5,), first_wrong=0)


candidates = (
    st.tuples(
        st.sampled_from([None, 1.0, 2.0, 3.0]),
        st.lists(st.one_of(st.none(), st.floats(0.0, 1.0)), max_size=3).map(tuple),
        st.sampled_from(["all_correct", "has_incorrect", "undetermined"]),
    )
    .filter(lambda t: t[2] != "all_correct" or bool(t[1]))
    .map(lambda t: EvalCandidate(answer=t[0], step_scores=t[1], verdict=t[2]))  # type: ignore[arg-type]
)


@given(
    st.lists(
        st.tuples(st.lists(candidates, min_size=4, max_size=4), st.lists(candidates, min_size=2, max_size=2)),
        min_size=1,
        max_size=6,
    )
)
def test_pass_at_1_is_the_policy_accuracy_and_pass_at_n_is_any_correct(
    raw: list[tuple[list[EvalCandidate], list[EvalCandidate]]],
) -> None:
    problems = [
        EvalProblem(id=str(i), answer=1.0, sampled=tuple(s), refined=tuple(r)) for i, (s, r) in enumerate(raw)
    ]
    (curve,) = accuracy_curve(problems, [4])
    first, last = pass_at_k(problems, 4, [1, 4])
    assert first.sampled == pytest.approx(curve.policy)
    assert last.sampled == pytest.approx(
        sum(any(c.answer == 1.0 for c in p.sampled) for p in problems) / len(problems)
    )
    assert 0.0 <= curve.bon <= last.sampled + 1e-12  # a selection can only be right when some candidate is
    assert curve.refined_bon is not None and curve.refined_bon <= last.refined + 1e-12


def _recorded(rng: random.Random, count: int) -> list[EvalProblem]:
    """A recorded run where a better step score means a likelier right answer, and refinements help."""
    problems = []
    for i in range(count):

        def cand(p_right: float) -> EvalCandidate:
            right = rng.random() < p_right
            score = min(1.0, max(0.0, rng.gauss(0.7 if right else 0.4, 0.15)))
            return EvalCandidate(
                answer=1.0 if right else float(rng.randint(2, 4)),
                step_scores=(score, score),
                verdict="all_correct" if score > 0.6 else "has_incorrect",
            )

        problems.append(
            EvalProblem(
                id=f"p{i}",
                kind=rng.choice(["plane_geometry", "functions"]),
                answer=1.0,
                sampled=tuple(cand(0.4) for _ in range(8)),
                refined=tuple(cand(0.55) for _ in range(4)),
            )
        )
    return problems


def test_tables_and_plot_render(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    problems = _recorded(random.Random(7), 40)
    rows = accuracy_curve(problems, [1, 2, 4, 8])
    table = markdown_table(rows)
    assert table.splitlines()[0] == "| n | policy | bon | refined_bon | self_consistency |"
    assert table.splitlines()[2].startswith("| 1 | ") and "| - |" in table.splitlines()[2]
    assert rows[-1].bon > rows[0].bon  # scores carry signal in this recording, so selection helps
    png = plot_accuracy_curve(rows, tmp_path / "curve.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


class _SlipScorer:
    """A step scorer that flags the first step mentioning a slip and corrects it."""

    def score(self, requests: Sequence[StepScoreRequest]) -> list[StepJudgement]:
        out = []
        for request in requests:
            bad = next((i for i, s in enumerate(request.steps) if "slip" in s), None)
            if bad is None:
                out.append(StepJudgement(scores=tuple(0.9 for _ in request.steps)))
            else:
                a, b = map(int, re.findall(r"(\d+) \+ (\d+)", request.question)[0])
                scores = (*(0.8 for _ in range(bad)), 0.1)
                out.append(
                    StepJudgement(scores=scores, first_wrong=bad, correction=f"Redo: {a} + {b} = {a + b}.")
                )
        return out


def _policy(request: GenerationRequest) -> list[Completion]:
    a, b = map(int, re.findall(r"(\d+) \+ (\d+)", request.messages[-1].content)[0])
    if "Redo" in request.assistant_prefix:
        return [Completion(text=f"Step 3: So it is {a + b}.\nAnswer: {a + b}", num_tokens=6)]
    seed = request.params.seed if isinstance(request.params, SamplingParams) and request.params.seed else 0
    texts = [
        f"Step 1: Add.\nStep 2: A slip gives {a + b + 1}.\nAnswer: {a + b + 1}",
        f"Step 1: {a} + {b} = {a + b}.\nAnswer: {a + b}",
    ]
    return [Completion(text=texts[(i + seed) % 2], num_tokens=9) for i in range(request.n)]


def test_record_runs_refines_the_flagged_candidates_and_feeds_the_curve() -> None:
    problems = [Problem(id=f"q{k}", question=f"Compute {k} + {k + 1}.") for k in range(3)]
    policy = FunctionSampler(_policy)
    recorded = record_runs(
        problems,
        [float(2 * k + 1) for k in range(3)],
        policy=policy,
        scorer=_SlipScorer(),
        extractor=LastNumberExtractor(marker="Answer:"),
        n=4,
        params=SamplingParams(temperature=0.7, seed=0),
        kinds=["plane_geometry", "functions", "plane_geometry"],
    )
    first = recorded[0]
    assert [c.answer for c in first.sampled] == [2.0, 1.0, 2.0, 1.0]
    assert [c.verdict for c in first.sampled] == [
        "has_incorrect",
        "all_correct",
        "has_incorrect",
        "all_correct",
    ]
    # the slipped candidate 0 was continued from step 1 plus the correction; candidate 1 was resampled afresh
    assert [c.answer for c in first.refined] == [1.0, 1.0]
    prefixes = [r.assistant_prefix for r in policy.calls[1]]
    assert prefixes[0] == "Step 1: Add.\nStep 2: Redo: 0 + 1 = 1.\n" and prefixes[1] == ""
    assert len(policy.calls) == 2 and len(policy.calls[1]) == 3 * 2
    (row,) = accuracy_curve(recorded, [4])
    assert row.policy == 0.5 and row.bon == 1.0 and row.refined_bon == 1.0
    with pytest.raises(EvaluationError, match="even n"):
        record_runs(problems, [1.0] * 3, policy=policy, scorer=_SlipScorer(), extractor=LastNumberExtractor(), n=3,
                    params=SamplingParams(temperature=0.7))  # fmt: skip


def test_record_runs_asks_with_the_given_prompt_and_keeps_texts_and_corrections() -> None:
    problems = [Problem(id="q", question="Compute 2 + 3.")]
    policy = FunctionSampler(_policy)
    (run,) = record_runs(
        problems, [5.0], policy=policy, scorer=_SlipScorer(), extractor=LastNumberExtractor(marker="Answer:"),
        n=2, params=SamplingParams(temperature=0.7, seed=0), prompt=lambda q: q,
    )  # fmt: skip
    # the policy saw the question itself, not geoprm's policy prompt around it, in both rounds
    assert [r.messages[-1].content for call in policy.calls for r in call] == ["Compute 2 + 3."] * 2
    slipped = run.sampled[0]
    assert slipped.text == "Step 1: Add.\nStep 2: A slip gives 6.\nAnswer: 6"
    assert slipped.correction == "Redo: 2 + 3 = 5." and slipped.judgement.correction == "Redo: 2 + 3 = 5."
    assert run.sampled[1].correction is None and run.sampled[1].judgement.first_wrong is None
    again = EvalProblem.model_validate_json(run.model_dump_json())
    assert again == run
