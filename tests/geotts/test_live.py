"""Live strategies through a sampler: incremental CG-MTE compute, MTE, SC, specs and refined best-of-N."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from pydantic import ValidationError

import geotts
from geotts import (
    BeamParams,
    CGMTEConfig,
    Completion,
    ConsensusEnsemble,
    GenerationRequest,
    LastNumberExtractor,
    MTEConfig,
    MultiTraceEnsemble,
    Problem,
    RefinedBestOfN,
    RefinedBestOfNConfig,
    SamplingParams,
    SelfConsistency,
    SelfConsistencyConfig,
    StepJudgement,
    StepScoreRequest,
    StrategyConfigError,
    cg_mte,
    strategy_from_spec,
)
from geotts.testing import FunctionSampler, ScriptedSampler

ORDER = geotts.DEFAULT_ORDER
EXTRACT = LastNumberExtractor()

# Ranked answers per problem and trace type; each candidate's text is "<words> answer <x>".
SCRIPT: dict[str, dict[str, list[str]]] = {
    "easy": {"program": ["5"] * 4, "pal": ["5"] * 4, "cot_program": ["3"] * 4, "cot_pal": ["5"] * 4},
    # d=1: 1 2 3 4 (tie); d=2 adds 2 1 none 9 (1 and 2 tied); d=3 adds 2: unique mode 2.
    "hard": {
        "program": ["1", "2", "2", "8"],
        "pal": ["2", "1", "7", "8"],
        "cot_program": ["3", "x", "6", "8"],
        "cot_pal": ["4", "9", "5", "8"],
    },
    "never": {
        "program": ["1", "5", "9", "13"],
        "pal": ["2", "6", "10", "14"],
        "cot_program": ["3", "7", "11", "15"],
        "cot_pal": ["4", "8", "12", "16"],
    },
}
PROBLEMS = [Problem(id=pid, question=f"Question {pid}?") for pid in SCRIPT]


def script(req: GenerationRequest) -> list[str]:
    pid = req.messages[-1].content.split("?")[0].removeprefix("Question ")
    assert req.trace_type is not None
    return [f"so the answer is {a}" for a in SCRIPT[pid][req.trace_type]]


def recorded_answers(pid: str, depth: int) -> dict[str, list[float | None]]:
    return {t: [float(a) if a.isdigit() else None for a in SCRIPT[pid][t][:depth]] for t in ORDER}


def test_sampling_cg_mte_requests_candidates_only_while_consensus_is_missing() -> None:
    sampler = ScriptedSampler(script)
    cfg = CGMTEConfig(depth=4, params=SamplingParams(temperature=0.8, seed=10))
    decisions = ConsensusEnsemble(cfg).run(sampler, PROBLEMS, EXTRACT)
    easy, hard, never = decisions
    assert (easy.answer, easy.depth, easy.samples, easy.generated) == (5.0, 1, 4, 4)
    assert (hard.answer, hard.depth, hard.samples, hard.generated) == (2.0, 3, 12, 12)
    assert (never.answer, never.depth, never.generated, never.fallback) == (4.0, 4, 16, True)
    # One batched call per depth, covering only the problems still undecided, one candidate per trace type.
    assert [len(call) for call in sampler.calls] == [12, 8, 8, 4]
    assert all(r.n == 1 for call in sampler.calls for r in call)
    # one seed per trace type at each depth (the two undecided problems share it), new at every depth
    depth2, depth3 = ({r.params.seed for r in sampler.calls[i]} for i in (1, 2))  # type: ignore[union-attr]
    assert len(depth2) == len(depth3) == 4 and not depth2 & depth3
    assert sampler.generated == sum(d.generated for d in decisions)
    # Tokens are those actually generated: 5 words + 1 per candidate here.
    assert easy.tokens == 4 * 6
    for p, d in zip(PROBLEMS, decisions, strict=True):
        assert d == cg_mte(recorded_answers(p.id, 4), depth=4).model_copy(
            update={"generated": d.generated, "tokens": d.tokens, "pool": d.pool}
        )


def test_beam_reveal_decodes_width_d_once_and_reports_it() -> None:
    sampler = ScriptedSampler(script)
    decisions = ConsensusEnsemble(CGMTEConfig(depth=4, params=BeamParams())).run(sampler, PROBLEMS, EXTRACT)
    assert len(sampler.calls) == 1 and all(r.n == 4 for r in sampler.calls[0])
    assert [(d.depth, d.samples, d.generated) for d in decisions] == [(1, 4, 16), (3, 12, 16), (4, 16, 16)]


def test_beam_regrow_reruns_growing_widths_for_undecided_problems() -> None:
    sampler = ScriptedSampler(script)
    cfg = CGMTEConfig(depth=4, params=BeamParams(), beam_policy="regrow")
    decisions = ConsensusEnsemble(cfg).run(sampler, PROBLEMS, EXTRACT)
    assert [[r.n for r in call] for call in sampler.calls] == [[1] * 12, [2] * 8, [3] * 8, [4] * 4]
    assert [(d.depth, d.generated) for d in decisions] == [(1, 4), (3, 4 * 6), (4, 4 * 10)]
    assert [d.answer for d in decisions] == [5.0, 2.0, 4.0]


def test_live_mte_and_self_consistency() -> None:
    sampler = ScriptedSampler(script)
    decisions = MultiTraceEnsemble(MTEConfig(depth=2, params=BeamParams())).run(
        sampler, PROBLEMS[:2], EXTRACT
    )
    assert [(d.answer, d.samples, d.generated) for d in decisions] == [(5.0, 8, 8), (1.0, 8, 8)]

    def unified(req: GenerationRequest) -> list[str]:
        assert req.trace_type is None and req.messages[-1].content == "Solve: Question easy?"
        return ["7", "8", "8", "7", "9"]

    sc = SelfConsistency(SelfConsistencyConfig(k=4, instruction="Solve: {question}", params=BeamParams()))
    (d,) = sc.run(ScriptedSampler(unified), PROBLEMS[:1], EXTRACT)
    assert (d.answer, d.samples, d.generated, d.tokens) == (7.0, 4, 4, 8)


def test_a_sampler_returning_the_wrong_number_of_candidates_is_a_backend_error() -> None:
    bad = FunctionSampler(lambda req: [Completion(text="1", num_tokens=1)])
    with pytest.raises(geotts.BackendError, match="1 candidates for request 0"):
        MultiTraceEnsemble(MTEConfig(depth=2)).run(bad, PROBLEMS[:1], EXTRACT)


def test_strategies_are_built_from_specs() -> None:
    s = strategy_from_spec(
        {
            "cg_mte": {
                "depth": 3,
                "order": ["pal", "cot_pal"],
                "params": {"mode": "sample", "temperature": 0.7},
            }
        }
    )
    assert isinstance(s, ConsensusEnsemble) and s.config.order == ("pal", "cot_pal")
    assert isinstance(strategy_from_spec({"self_consistency": None}), SelfConsistency)
    with pytest.raises(StrategyConfigError, match="unknown strategy 'beam'"):
        strategy_from_spec({"beam": {}})
    with pytest.raises(StrategyConfigError, match="invalid settings for strategy 'mte'"):
        strategy_from_spec({"mte": {"depth": 0}})
    with pytest.raises(StrategyConfigError, match="invalid settings"):
        strategy_from_spec({"cg_mte": {"order": ["pal"], "fallback": "program"}})


def test_configs_reject_impossible_settings() -> None:
    with pytest.raises(ValidationError, match="greedy"):
        MTEConfig(depth=3, params=SamplingParams(temperature=0.0))
    with pytest.raises(ValidationError, match="no instruction"):
        MTEConfig(order=("pal", "sketch"))
    with pytest.raises(ValidationError, match="Extra inputs"):
        Problem(id="a", question="q", extra=1)  # type: ignore[call-arg]
    with pytest.raises(StrategyConfigError, match="repeated: \\['easy'\\]"):
        ConsensusEnsemble().run(ScriptedSampler(script), [PROBLEMS[0], PROBLEMS[0]], EXTRACT)


class FakePRM:
    """Judges steps: a step containing "wrong" fails and is corrected; scores are fixed per text."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, ...]] = []

    def score(self, requests: Sequence[StepScoreRequest]) -> list[StepJudgement]:
        out: list[StepJudgement] = []
        for r in requests:
            self.seen.append(r.steps)
            bad = next((i for i, s in enumerate(r.steps) if "wrong" in s), None)
            scores = tuple(
                0.9 if "good" in s else 0.6 for s in r.steps[: (len(r.steps) if bad is None else bad + 1)]
            )
            if bad is not None:
                scores = (*scores[:-1], 0.1)
            out.append(
                StepJudgement(
                    scores=scores, first_wrong=bad, correction=None if bad is None else "Step 2: fixed"
                )
            )
        return out


def test_refined_best_of_n_continues_from_the_verified_prefix_and_selects_by_mean_step_score() -> None:
    first = ["Step 1: good\n\nStep 2: wrong, x = 3\n\nAnswer: 3", "Step 1: ok\n\nStep 2: ok\n\nAnswer: 4"]

    def policy(req: GenerationRequest) -> list[Completion]:
        if req.n == 2:
            return [Completion(text=t, num_tokens=10) for t in first]
        if req.assistant_prefix:
            return [Completion(text="Step 3: good\n\nAnswer: 5", num_tokens=4)]
        return [Completion(text="Step 1: good\n\nStep 2: good\n\nAnswer: 6", num_tokens=6)]

    sampler = FunctionSampler(policy)
    prm = FakePRM()
    cfg = RefinedBestOfNConfig(n=4, params=SamplingParams(temperature=0.7, seed=3))
    (d,) = RefinedBestOfN(prm, cfg).run(sampler, [Problem(id="p", question="Find x.")], EXTRACT)
    second = sampler.calls[1]
    assert (
        second[0].assistant_prefix == "Step 1: good\n\nStep 2: fixed\n\n"
    )  # verified steps + corrected step, in the solution's layout
    assert second[1].assistant_prefix == ""  # all steps passed: resample from the same prompt
    assert [r.params.seed for r in second] == [4, 5]  # type: ignore[union-attr]
    assert d.solution == "Step 1: good\n\nStep 2: good\n\nAnswer: 6"  # all-correct with the best mean (0.9)
    assert (d.answer, d.samples, d.generated, d.tokens, d.all_correct) == (6.0, 4, 4, 30, True)
    assert d.score == d.mean_score == pytest.approx(0.9)
    # the scorer sees the steps geoprm trains on: no Step k: labels, no Answer: line
    assert prm.seen[0] == ("good", "wrong, x = 3") and prm.seen[2] == ("good", "fixed", "good")


class ValuePRM:
    """Every step is correct and its text is its score."""

    def score(self, requests: Sequence[StepScoreRequest]) -> list[StepJudgement]:
        return [StepJudgement(scores=tuple(float(s) for s in r.steps)) for r in requests]


@pytest.mark.parametrize(
    ("how", "answer", "score"), [("mean", 1.0, 0.75), ("min", 2.0, 0.7), ("max", 1.0, 0.9)]
)
def test_refined_best_of_n_selects_by_the_configured_aggregation(
    how: str, answer: float, score: float
) -> None:
    texts = iter(["Step 1: 0.9\nStep 2: 0.6\nAnswer: 1", "Step 1: 0.7\nStep 2: 0.7\nAnswer: 2"])

    def policy(req: GenerationRequest) -> list[Completion]:
        return [Completion(text=next(texts), num_tokens=1) for _ in range(req.n)]

    cfg = RefinedBestOfNConfig(n=2, aggregation=how)  # type: ignore[arg-type]
    (d,) = RefinedBestOfN(ValuePRM(), cfg).run(
        FunctionSampler(policy), [Problem(id="p", question="q")], EXTRACT
    )
    assert (d.answer, d.score) == (answer, pytest.approx(score))


@pytest.mark.parametrize(("skip", "answer"), [(False, None), (True, 2.0)])
def test_refined_best_of_n_can_skip_solutions_without_an_answer(skip: bool, answer: float | None) -> None:
    texts = iter(["Step 1: 0.9\nStep 2: 0.9", "Step 1: 0.7\nStep 2: 0.7\nAnswer: 2"])

    def policy(req: GenerationRequest) -> list[Completion]:
        return [Completion(text=next(texts), num_tokens=1) for _ in range(req.n)]

    cfg = RefinedBestOfNConfig(n=2, skip_unanswered=skip)
    (d,) = RefinedBestOfN(ValuePRM(), cfg).run(
        FunctionSampler(policy), [Problem(id="p", question="q")], LastNumberExtractor(marker="Answer:")
    )
    assert d.answer == answer  # the paper's rule takes the better-scored solution, answer or not


def test_refined_best_of_n_without_an_all_correct_solution_takes_the_best_mean() -> None:
    def policy(req: GenerationRequest) -> list[Completion]:
        return [Completion(text=f"Step 1: wrong {i}\n\nAnswer {i}", num_tokens=3) for i in range(req.n)]

    (d,) = RefinedBestOfN(FakePRM(), RefinedBestOfNConfig(n=2)).run(
        FunctionSampler(policy), [Problem(id="p", question="q")], EXTRACT
    )
    assert not d.all_correct and d.fallback and d.answer == 0.0
    with pytest.raises(ValidationError, match="even n"):
        RefinedBestOfNConfig(n=3)


def test_a_request_is_either_chat_or_raw_text() -> None:
    with pytest.raises(ValidationError, match="exactly one of messages"):
        GenerationRequest()
    with pytest.raises(ValidationError, match="exactly one of messages"):
        GenerationRequest(prompt="x", messages=(geotts.ChatMessage(role="user", content="y"),))
    with pytest.raises(ValidationError, match="must end with a user message"):
        GenerationRequest(messages=(geotts.ChatMessage(role="assistant", content="y"),))
    with pytest.raises(ValidationError, match="greedy decoding"):
        GenerationRequest(prompt="x", n=2, params=SamplingParams(temperature=0.0))


# --- problem-aware answer extraction --------------------------------------------------------------


class OffsetExtractor:
    """Answer = last number + the problem's ``metadata["offset"]``: pairing a candidate with the wrong
    problem gives a wrong answer. Records (problem id, trace type, text) of every call."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str | None, str]] = []

    def __call__(self, completion: Completion, trace_type: str | None, problem: Problem) -> float | None:
        self.seen.append((problem.id, trace_type, completion.text))
        value = EXTRACT(completion, trace_type, problem)
        offset = problem.metadata["offset"]
        assert isinstance(value, float) and isinstance(offset, int)
        return value + offset


OFFSET_PROBLEMS = [
    Problem(id=pid, question=f"Question {pid}?", metadata={"offset": 100 * i}) for i, pid in enumerate(SCRIPT)
]


def tagged(req: GenerationRequest) -> list[str]:
    """The main script, each text tagged with its problem id (the extractor checks the pairing)."""
    pid = req.messages[-1].content.split("?")[0].split("Question ")[-1]
    traces = SCRIPT[pid] if req.trace_type is not None else {"unified": ["7", "8", "8", "7", "9"]}
    return [f"{pid} says {a if a.isdigit() else 0}" for a in traces[req.trace_type or "unified"]]


@pytest.mark.parametrize(
    "strategy",
    [
        ConsensusEnsemble(CGMTEConfig(depth=4, params=SamplingParams(temperature=0.8, seed=1))),
        MultiTraceEnsemble(MTEConfig(depth=2, params=BeamParams())),
        SelfConsistency(SelfConsistencyConfig(k=3, params=BeamParams())),
    ],
    ids=["cg_mte", "mte", "sc"],
)
def test_every_strategy_tells_the_extractor_which_problem_a_candidate_answers(
    strategy: geotts.Strategy,
) -> None:
    extractor = OffsetExtractor()
    sampler = ScriptedSampler(tagged)
    decisions = geotts.run_strategy(strategy, sampler, OFFSET_PROBLEMS, extractor)
    assert len(sampler.calls) >= 1 and len(sampler.calls[0]) >= len(OFFSET_PROBLEMS)  # one batch for all
    assert extractor.seen and all(text.startswith(f"{pid} says") for pid, _, text in extractor.seen)
    for p, d in zip(OFFSET_PROBLEMS, decisions, strict=True):
        offset = p.metadata["offset"]
        assert isinstance(offset, int)
        assert all(isinstance(a, float) and a >= offset for _, answers in d.pool for a in answers)
        assert d.answer is not None and offset <= d.answer < offset + 100  # type: ignore[operator]
    if isinstance(strategy, ConsensusEnsemble):
        assert [d.answer for d in decisions] == [5.0, 102.0, 204.0]


def test_refined_best_of_n_tells_the_extractor_the_problem() -> None:
    def policy(req: GenerationRequest) -> list[Completion]:
        pid = req.messages[-1].content.split("?")[0].split("Question ")[-1]
        return [Completion(text=f"Step 1: good\n\n{pid} says {i + 1}", num_tokens=3) for i in range(req.n)]

    extractor = OffsetExtractor()
    decisions = RefinedBestOfN(FakePRM(), RefinedBestOfNConfig(n=2)).run(
        FunctionSampler(policy), OFFSET_PROBLEMS, extractor
    )
    assert [d.answer for d in decisions] == [1.0, 101.0, 201.0]
    assert len(extractor.seen) == 2 * len(OFFSET_PROBLEMS)
    assert all(text.endswith(f"{pid} says 1") for pid, _, text in extractor.seen)


def test_problem_metadata_is_read_only_json_and_round_trips() -> None:
    p = Problem(id="p", question="q", metadata={"numbers": ["3", "4"], "source": {"split": "test"}})
    with pytest.raises(TypeError):
        p.metadata["numbers"] = []  # type: ignore[index]
    assert Problem.model_validate_json(p.model_dump_json()) == p
    assert hash(p) == hash(
        Problem(id="p", question="q", metadata={"source": {"split": "test"}, "numbers": ["3", "4"]})
    )
    assert Problem(id="p", question="q").metadata == {}
    with pytest.raises(ValidationError, match="metadata"):
        Problem(id="p", question="q", metadata={"when": object()})  # type: ignore[dict-item]
