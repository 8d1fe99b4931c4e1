"""The bridge to geotts's StepScorer protocol, and the package's public surface."""

from __future__ import annotations

import subprocess
import sys

import pytest

import geoprm
from geoprm import (
    Critique,
    StepCritique,
    VerdictLogprobs,
    format_critique,
    parse_critique,
    score_critique,
    to_step_judgement,
)
from geotts import UNSCORED, StepJudgement


def _text(judgements: list[str], correction: str | None = "Step 2: The area is 36.") -> str:
    steps = tuple(
        StepCritique(
            index=i,
            intent="Do it.",
            image_analysis="Matches.",
            image_judgement="Correct",
            logic_analysis="Checked.",
            logic_judgement=j,  # type: ignore[arg-type]
            judgement=j,  # type: ignore[arg-type]
        )
        for i, j in enumerate(judgements, start=1)
    )
    return format_critique(
        Critique(steps=steps, correction=correction if judgements[-1] == "Incorrect" else None)
    )


def _judge(text: str, steps: tuple[str, ...], logprobs: list[VerdictLogprobs]) -> StepJudgement:
    parsed = parse_critique(text, strict=False)
    return to_step_judgement(parsed, score_critique(parsed, logprobs, num_steps=len(steps)))


def _lp(step: int, correct: float) -> VerdictLogprobs:
    return VerdictLogprobs(step=step, top_logprobs={" Correct": correct, " Incorrect": -1.0})


def test_incorrect_step_becomes_first_wrong_with_the_critiques_correction() -> None:
    text = _text(["Correct", "Incorrect"], correction="Step 2: The area is 36.")
    judgement = _judge(text, ("AB = 6.", "area 12.", "done."), [_lp(1, -0.1), _lp(2, -2.0)])
    assert judgement.first_wrong == 1 and len(judgement.scores) == 2
    assert judgement.correction == "Step 2: The area is 36."  # geotts.refined_prefix writes it in place


def test_all_correct_critique_covering_the_solution_passes() -> None:
    judgement = _judge(_text(["Correct", "Correct"]), ("a", "b"), [_lp(1, -0.1), _lp(2, -0.2)])
    assert judgement.all_correct and len(judgement.scores) == 2


def test_a_critique_that_cannot_vouch_for_every_step_is_not_all_correct() -> None:
    short = _judge(_text(["Correct"]), ("a", "b", "c"), [_lp(1, -0.1)])
    assert short.first_wrong == 1 and short.scores[1] == UNSCORED and short.correction is None
    cut = _text(["Correct", "Correct"]).rsplit("Logic verdict", 1)[0]
    truncated = _judge(cut, ("a", "b"), [_lp(1, -0.1)])
    assert truncated.first_wrong == 1 and truncated.scores[1] == UNSCORED
    garbage = _judge("I am not sure.", ("a",), [])
    assert garbage.first_wrong == 0 and garbage.scores == (UNSCORED,)


def test_public_surface_is_the_reviewed_snapshot() -> None:
    assert geoprm.__all__ == (
        "PROMPT_VERSION",
        "CriticError",
        "Critique",
        "CritiqueParseError",
        "CritiqueScores",
        "GeoPRMError",
        "Judgement",
        "JudgementTokens",
        "MissingExtraError",
        "ParseProblem",
        "ParsedCritique",
        "ParsedStep",
        "ProblemKind",
        "PromptError",
        "PromptName",
        "ScoringError",
        "StepCritique",
        "StepScore",
        "Verdict",
        "VerdictLogprobs",
        "critic_prompt",
        "critique_prompt",
        "format_critique",
        "parse_critique",
        "policy_prompt",
        "score_critique",
        "step_score",
        "to_step_judgement",
    )
    for name in geoprm.__all__:
        assert hasattr(geoprm, name), name


@pytest.mark.parametrize("name", [n for n in geoprm.__all__ if isinstance(getattr(geoprm, n), type)])
def test_public_models_are_frozen_and_errors_share_the_base(name: str) -> None:
    obj = getattr(geoprm, name)
    if issubclass(obj, BaseException):
        assert issubclass(obj, geoprm.GeoPRMError)
    else:
        assert obj.model_config.get("frozen") is True and obj.model_config.get("extra") == "forbid"


def test_importing_geoprm_does_not_import_heavy_libraries() -> None:
    code = (
        "import sys, geoprm; print(sorted(m for m in ('torch', 'transformers', 'PIL') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_data_module_surface_is_the_reviewed_snapshot() -> None:
    import geoprm.data

    assert geoprm.data.__all__ == (
        "AnswerKeyFn",
        "BuildResult",
        "BuildStats",
        "DataError",
        "DropReason",
        "MonteCarlo",
        "PRMItem",
        "SFTRecord",
        "VisualPRMRecord",
        "VisualPRMStep",
        "agrees",
        "balance",
        "build_prm_data",
        "load_visualprm",
        "mc_hard_labels",
        "visualprm_items",
        "write_records",
    )
    assert issubclass(geoprm.data.DataError, geoprm.GeoPRMError)


def test_evaluation_module_surface_is_the_reviewed_snapshot() -> None:
    import geoprm.evaluation

    assert geoprm.evaluation.__all__ == (
        "AblationRow",
        "CurveRow",
        "EvalCandidate",
        "EvalProblem",
        "EvaluationError",
        "KindRow",
        "PassRow",
        "StepF1",
        "accuracy_curve",
        "aggregation_ablation",
        "by_kind",
        "markdown_table",
        "pass_at_k",
        "plot_accuracy_curve",
        "record_runs",
        "step_f1",
    )
    assert issubclass(geoprm.evaluation.EvaluationError, geoprm.GeoPRMError)
