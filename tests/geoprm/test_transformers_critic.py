"""The transformers reward model on a tiny Qwen2-VL built offline: critiques, scores, geotts integration."""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
PIL_Image = pytest.importorskip("PIL.Image")

from geoprm import Critique, StepCritique, format_critique, parse_critique  # noqa: E402
from geoprm.backends.transformers import TransformersCritic, judgement_tokens  # noqa: E402
from geotts import (  # noqa: E402
    Completion,
    GenerationRequest,
    LastNumberExtractor,
    Problem,
    RefinedBestOfN,
    RefinedBestOfNConfig,
    SamplingParams,
    StepScorer,
    StepScoreRequest,
)
from geotts.backends.transformers import TransformersSampler  # noqa: E402
from geotts.testing import tiny_qwen_vl  # noqa: E402

torch.set_num_threads(1)


def _png(colour: tuple[int, int, int]) -> bytes:
    buffer = io.BytesIO()
    PIL_Image.new("RGB", (56, 56), colour).save(buffer, format="PNG")
    return buffer.getvalue()


def _critique_text(judgements: Sequence[str]) -> str:
    steps = []
    for index, final in enumerate(judgements, start=1):
        steps.append(
            StepCritique(
                index=index,
                intent=f"Find part {index}.",
                image_analysis="AB = 6 in the figure.",
                image_judgement="Correct",
                logic_analysis="Right." if final == "Correct" else "6 * 6 is 36.",
                logic_judgement="Correct" if final == "Correct" else "Incorrect",
                judgement="Correct" if final == "Correct" else "Incorrect",
            )
        )
    wrong = judgements[-1] == "Incorrect"
    return format_critique(Critique(steps=tuple(steps), correction="The area is 36." if wrong else None))


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_qwen_vl(tmp_path_factory.mktemp("tiny") / "qwen2_vl", seed=0)


def _forcing(critic: TransformersCritic, texts: Sequence[str]) -> Callable[[int, Any], list[int]]:
    """Make greedy decoding write ``texts[row]`` (the scores still come from the model's raw logits)."""
    eos = critic.tokenizer.convert_tokens_to_ids("<|im_end|>")
    targets = [[*critic.tokenizer.encode(text, add_special_tokens=False), eos] for text in texts]
    state: dict[str, int] = {}

    def allowed(row: int, input_ids: Any) -> list[int]:
        length = int(input_ids.shape[-1])
        start = state.setdefault("prompt", length)
        step = length - start
        target = targets[row % len(targets)]
        return [target[step]] if step < len(target) else [eos]

    def reset() -> None:
        state.clear()

    allowed.reset = reset  # type: ignore[attr-defined]
    return allowed


def _forced_critic(model_dir: Path, texts: Sequence[str], **kwargs: Any) -> TransformersCritic:
    critic = TransformersCritic.from_pretrained(model_dir, max_new_tokens=400, **kwargs)
    forcing = _forcing(critic, texts)

    original = critic._critique_batch

    def batch(requests: Sequence[StepScoreRequest]) -> Any:
        forcing.reset()  # type: ignore[attr-defined]
        return original(requests)

    critic._critique_batch = batch  # type: ignore[method-assign]
    critic.generate_kwargs["prefix_allowed_tokens_fn"] = forcing
    return critic


REQUEST = StepScoreRequest(
    question="ABCD is a square with AB = 6. Find its area.",
    images=(_png((200, 30, 30)),),
    steps=("AB = 6.", "The area is 6 * 2 = 12."),
)


def test_judgement_tokens_tell_the_two_judgements_apart(model_dir: Path) -> None:
    critic = TransformersCritic.from_pretrained(model_dir, max_new_tokens=8)
    tokens = judgement_tokens(critic.tokenizer)
    assert tokens == critic.tokens
    assert not set(tokens.correct) & set(tokens.incorrect)


def test_generated_critique_is_scored_and_teacher_forcing_gives_the_same_scores(model_dir: Path) -> None:
    text = _critique_text(["Correct", "Incorrect"])
    critic = _forced_critic(model_dir, [text])
    (result,) = critic.critique([REQUEST])
    assert result.text == text and result.finish_reason == "stop"
    assert result.parsed.critique == parse_critique(text)
    scores = [step.score for step in result.scores.steps]
    assert all(score is not None and 0.0 <= score <= 1.0 for score in scores)
    assert result.scores.verdict == "has_incorrect"
    (forced,) = critic.score_critiques([REQUEST], [result.text])
    assert [step.score for step in forced.steps] == pytest.approx(scores, abs=1e-5)

    (judgement,) = critic.score([REQUEST])
    assert judgement.first_wrong == 1
    assert judgement.correction == "The area is 36."  # as written; geotts.refined_prefix labels it
    assert judgement.scores == pytest.approx(scores, abs=1e-9)


def test_batched_critiques_match_one_at_a_time(model_dir: Path) -> None:
    texts = [_critique_text(["Correct", "Incorrect"]), _critique_text(["Correct"])]
    other = StepScoreRequest(question="Find x.", images=(_png((20, 90, 200)),), steps=("x = 3.",))
    batched = _forced_critic(model_dir, texts, batch_size=2).critique([REQUEST, other])
    alone = [
        _forced_critic(model_dir, [t]).critique([r])[0] for t, r in zip(texts, [REQUEST, other], strict=True)
    ]
    assert [r.text for r in batched] == texts
    assert batched[1].scores.verdict == "all_correct"
    for a, b in zip(batched, alone, strict=True):
        assert [s.score for s in a.scores.steps] == pytest.approx([s.score for s in b.scores.steps], abs=1e-4)


def test_untrained_model_output_never_crashes_scoring(model_dir: Path) -> None:
    critic = TransformersCritic.from_pretrained(model_dir, max_new_tokens=24)
    assert isinstance(critic, StepScorer)
    (result,) = critic.critique([REQUEST])
    assert result.finish_reason in ("stop", "length")
    assert all(step.score is None and step.reason for step in result.scores.steps)
    assert result.scores.verdict != "all_correct"
    (judgement,) = critic.score([REQUEST])
    assert not judgement.all_correct and all(0.0 <= s <= 1.0 for s in judgement.scores)
    # a damaged critique scored by teacher forcing: the cut step has no score, the others do
    damaged = _critique_text(["Correct", "Correct"]).replace("[End]\n", "").rsplit("Logic verdict", 1)[0]
    (forced,) = critic.score_critiques([REQUEST], [damaged])
    assert forced.steps[0].score is not None and forced.steps[1].score is None
    assert forced.steps[1].reason


class _Recorder:
    """A sampler that records the requests it gets (to see the refined round's prefixes)."""

    def __init__(self, inner: TransformersSampler) -> None:
        self.inner = inner
        self.requests: list[GenerationRequest] = []

    def generate(self, requests: Sequence[GenerationRequest]) -> list[list[Completion]]:
        self.requests.extend(requests)
        return self.inner.generate(requests)


def test_refined_best_of_n_runs_end_to_end_with_the_tiny_policy_and_critic(model_dir: Path) -> None:
    critic = _forced_critic(model_dir, [_critique_text(["Correct", "Incorrect"])])
    policy = _Recorder(TransformersSampler.from_pretrained(model_dir))
    config = RefinedBestOfNConfig(n=4, params=SamplingParams(temperature=0.7, max_tokens=12, seed=0))
    problem = Problem(
        id="sq", question="ABCD is a square with AB = 6. Find its area.", images=(_png((0, 120, 0)),)
    )
    (decision,) = RefinedBestOfN(critic, config).run(policy, [problem], LastNumberExtractor())
    assert decision.samples == 4 and decision.strategy == "refined_best_of_n"
    assert 0.0 <= decision.mean_score <= 1.0
    refined = [r for r in policy.requests if r.assistant_prefix]
    assert refined, "the critic's correction was not handed back to the policy"
    assert all("The area is 36." in r.assistant_prefix for r in refined)


@pytest.fixture(scope="module")
def text_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_qwen_vl(tmp_path_factory.mktemp("tiny") / "causal_lm", kind="causal_lm", seed=0)


TEXT_REQUEST = StepScoreRequest(question="Find y.", steps=("Sum 105 y 180", "Get y"))


def test_a_text_only_critic_is_asked_with_the_critic_prompt_as_plain_text(text_model_dir: Path) -> None:
    from geoprm import critic_prompt, critique_prompt

    critic = TransformersCritic.from_pretrained(text_model_dir, max_new_tokens=8)
    prompt = critic._prompt(TEXT_REQUEST)
    assert critic_prompt(TEXT_REQUEST.question, TEXT_REQUEST.steps) in prompt
    assert "'type'" not in prompt  # a plain string, not a list of parts, reaches the text-only template
    teacher = TransformersCritic.from_pretrained(text_model_dir, max_new_tokens=8, prompt="teacher")
    assert critique_prompt(TEXT_REQUEST.question, TEXT_REQUEST.steps) in teacher._prompt(TEXT_REQUEST)


def test_a_text_only_critic_scores_what_it_writes_as_teacher_forcing_does(text_model_dir: Path) -> None:
    text = _critique_text(["Correct", "Incorrect"])
    critic = _forced_critic(text_model_dir, [text])
    (result,) = critic.critique([TEXT_REQUEST])
    assert result.text == text and result.scores.verdict == "has_incorrect"
    scores = [step.score for step in result.scores.steps]
    (forced,) = critic.score_critiques([TEXT_REQUEST], [text])
    assert [step.score for step in forced.steps] == pytest.approx(scores, abs=1e-5)
    (judgement,) = critic.score([TEXT_REQUEST])
    assert judgement.first_wrong == 1 and judgement.correction == "The area is 36."


def test_a_folder_whose_tokenizer_is_not_its_models_is_refused(text_model_dir: Path, tmp_path: Path) -> None:
    import json
    import shutil

    from geoprm import CriticError
    from geotts.backends.transformers import VOCAB_DIGEST_KEY

    bad = tmp_path / "bad"
    shutil.copytree(text_model_dir, bad)
    config = json.loads((bad / "config.json").read_text(encoding="utf-8"))
    config[VOCAB_DIGEST_KEY] = "0" * 64  # the model says it was trained with another vocabulary
    (bad / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(CriticError, match="bad"):
        TransformersCritic.from_pretrained(bad)
