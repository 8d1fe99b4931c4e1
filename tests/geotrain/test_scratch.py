"""From-scratch models: the saved folder, its size, its tokenizer, bad shapes, training with length grouping."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

import geotrain  # noqa: E402
from geotrain import ConfigError, DataError, DataSource, ScratchModel  # noqa: E402
from geotrain._trainer import LengthGroupedSampler  # noqa: E402

SPEC = ScratchModel(
    hidden_size=32, num_layers=1, num_heads=4, num_kv_heads=2, intermediate_size=64, vocab_size=400
)
SAMPLES = (
    "Diagram relations:\nline A B C\n\\odot O lieson A B\nAB = 12.5\nm \\angle ABC = 130\n\n"
    "Find the length of BC.\nGive a symbolic solution program that computes the answer.",
    "Solution:\nGougu V0 12.5 130 Get V0",
    'Solution:\nimport math\nx = 12.5 * math.sin(math.radians(130))\nprint(f"{x:.3f}")',
    "In \\triangle QRS, T, U, and B are midpoints. What is the length of UB? 2024 1000 999",
)
CORPUS = [s.replace("12.5", f"{n}.{n % 7}") for n in range(11, 60) for s in SAMPLES]


def _rup64(n: int) -> int:
    return -(-n // 64) * 64


def _expected_parameters(spec: ScratchModel, vocab: int) -> int:
    """Qwen2/Qwen3 decoder parameters computed from the shape alone."""
    h, head = spec.hidden_size, spec.hidden_size // spec.num_heads
    kv = spec.num_kv_heads * head
    if spec.architecture == "qwen2":  # q, k, v projections carry a bias
        attention = (h * h + h) + 2 * (h * kv + kv) + h * h
    else:  # no biases, RMS norms on q and k per head
        attention = h * h + 2 * h * kv + h * h + 2 * head
    layer = attention + 3 * h * spec.intermediate_size + 2 * h
    embeddings = vocab * h * (1 if spec.tie_word_embeddings else 2)
    return embeddings + spec.num_layers * layer + h


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch.set_num_threads(1)
    return geotrain.build_scratch_model(SPEC, CORPUS, tmp_path_factory.mktemp("scratch") / "model", seed=0)


def test_the_folder_loads_with_the_geotts_sampler_and_generates(built: Path) -> None:
    from geotts import ChatMessage, GenerationRequest, SamplingParams
    from geotts.backends.transformers import TransformersSampler

    sampler = TransformersSampler.from_pretrained(built)
    assert type(sampler.model).__name__ == "Qwen2ForCausalLM"
    request = GenerationRequest(
        messages=(ChatMessage(role="user", content=SAMPLES[0]),),
        params=SamplingParams(temperature=0.0, max_tokens=6),
    )
    (candidate,) = sampler.generate([request])[0]
    assert candidate.num_tokens is not None and 1 <= candidate.num_tokens <= 6


def _copy_with_tokenizer_of(model: Path, tokenizer: Path, out: Path) -> Path:
    import shutil

    shutil.copytree(model, out)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy2(tokenizer / name, out / name)
    return out


def test_a_swapped_tokenizer_of_the_same_size_is_refused_at_load(built: Path, tmp_path: Path) -> None:
    from geotts import BackendError
    from geotts.backends.transformers import TransformersSampler

    # A tokenizer trained on other text fits the model's embedding (so no size check could see the swap)
    # but maps tokens to other ids.
    other = geotrain.build_scratch_model(SPEC, [t.upper() for t in CORPUS], tmp_path / "other")
    rows = transformers.AutoConfig.from_pretrained(built).vocab_size
    assert len(transformers.AutoTokenizer.from_pretrained(other)) <= rows
    swapped = _copy_with_tokenizer_of(built, other, tmp_path / "swapped")
    with pytest.raises(
        BackendError, match=r"tokenizer in .*swapped.* does not match its model: its vocabulary"
    ):
        TransformersSampler.from_pretrained(swapped)
    TransformersSampler.from_pretrained(built)  # its own tokenizer loads


def test_a_tokenizer_larger_than_the_embedding_is_refused_at_load(built: Path, tmp_path: Path) -> None:
    from geotts import BackendError
    from geotts.backends.transformers import TransformersSampler

    bigger = transformers.AutoTokenizer.from_pretrained(built)
    bigger.add_tokens([f"<extra_{i}>" for i in range(100)])  # 413 + 100 tokens, 448 embedding rows
    bigger.save_pretrained(tmp_path / "big")
    swapped = _copy_with_tokenizer_of(built, tmp_path / "big", tmp_path / "swapped")
    config = json.loads((swapped / "config.json").read_text())
    del config[
        "tokenizer_vocab_sha256"
    ]  # a folder made elsewhere, without the digest: the size check remains
    (swapped / "config.json").write_text(json.dumps(config))
    with pytest.raises(
        BackendError, match=r"does not match its model: \d+ tokens, but the model's embedding has 448"
    ):
        TransformersSampler.from_pretrained(swapped)


@pytest.mark.parametrize(
    "spec",
    [SPEC, ScratchModel(architecture="qwen3", hidden_size=48, num_layers=2, num_heads=6, num_kv_heads=3,
                        intermediate_size=40, vocab_size=300, tie_word_embeddings=False)],
    ids=["qwen2_tied", "qwen3_untied"],
)  # fmt: skip
def test_the_parameter_count_follows_from_the_shape(spec: ScratchModel, tmp_path: Path) -> None:
    folder = geotrain.build_scratch_model(spec, CORPUS, tmp_path / "m")
    model = transformers.AutoModelForCausalLM.from_pretrained(folder)
    config = transformers.AutoConfig.from_pretrained(folder)
    tok = transformers.AutoTokenizer.from_pretrained(folder)
    assert config.model_type == spec.architecture
    assert config.vocab_size == _rup64(len(tok))  # the embedding has a row for every token, rounded up
    assert sum(p.numel() for p in model.parameters()) == _expected_parameters(spec, config.vocab_size)


def test_the_same_seed_builds_the_same_weights(built: Path, tmp_path: Path) -> None:
    again = geotrain.build_scratch_model(SPEC, CORPUS, tmp_path / "again", seed=0)
    other = geotrain.build_scratch_model(SPEC, CORPUS, tmp_path / "other", seed=1)
    a, b, c = (
        transformers.AutoModelForCausalLM.from_pretrained(p).state_dict() for p in (built, again, other)
    )
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)
    assert (built / "tokenizer.json").read_bytes() == (again / "tokenizer.json").read_bytes()


def test_the_tokenizer_round_trips_and_spells_numbers_digit_by_digit(built: Path) -> None:
    tok = transformers.AutoTokenizer.from_pretrained(built)
    texts = [
        *SAMPLES,
        "m \\angle 1 = 3x + 17, \\frac{\\sqrt{3}}{2} \\odot O\n\n  x = 0.0051",
        "A new text with unseen glyphs: \u00b0 \u221a \u03c0 \u2220 and 31415926535",
    ]
    for text in texts:
        ids = tok.encode(text, add_special_tokens=False)
        assert tok.decode(ids) == text
    pieces = tok.tokenize("AB = 1234.56")
    assert [p for p in pieces if any(ch.isdigit() for ch in p)] == ["1", "2", "3", "4", "5", "6"]
    # The corpus repeats multi-digit numbers, yet no learnt token joins a digit to anything.
    with_digits = [t for t in tok.get_vocab() if any(ch.isdigit() for ch in t) and not t.startswith("<|")]
    assert with_digits and all(len(t) == 1 for t in with_digits)


def test_a_whole_number_tokenizer_keeps_frequent_numbers_as_one_token_wherever_it_is_loaded(
    tmp_path: Path,
) -> None:
    from geotrain._trainer import load_processor as trainer_processor
    from geotts.backends.transformers import TransformersSampler, load_processor

    spec = SPEC.model_copy(update={"numbers": "whole"})
    folder = geotrain.build_scratch_model(spec, CORPUS, tmp_path / "whole")
    loaded = [load_processor(folder), trainer_processor(folder, "causal_lm")]
    loaded.append(TransformersSampler.from_pretrained(folder).tokenizer)
    for tok in loaded:  # the sampler, the trainer and the plain loader all read the saved pre-tokenisation
        # 130 and 12.5-like numbers fill the corpus: each is one token, in the prompt and in the program alike
        assert tok.tokenize("Gougu V0 130 Get V0").count("130") == 1
        assert "130" in tok.tokenize("m \\angle ABC = 130")
        digits = [p for p in tok.tokenize("AB = 31415926535") if any(ch.isdigit() for ch in p)]
        assert "".join(digits) == "31415926535" and len(digits) > 1  # an unseen number: pieces of itself
        for text in (*SAMPLES, "x = 0.0051, 3x+17, 1.5.2"):
            assert tok.decode(tok.encode(text, add_special_tokens=False)) == text
    # Qwen2's tokenizer class would have cut every number into digits: the folder must not load as one.
    assert type(transformers.AutoTokenizer.from_pretrained(folder)).__name__ == "Qwen2Tokenizer"
    assert all(type(tok).__name__ != "Qwen2Tokenizer" for tok in loaded)


def test_whole_numbers_need_the_qwen_split() -> None:
    from geotts import StrategyConfigError
    from geotts.testing import train_tokenizer

    with pytest.raises(StrategyConfigError, match="numbers 'whole' needs qwen_split"):
        train_tokenizer(CORPUS, 400, qwen_split=False, numbers="whole")
    with pytest.raises(ValidationError, match="numbers"):
        ScratchModel.model_validate({"numbers": "bytes"})


def test_the_vocabulary_stays_within_the_target_and_the_chat_tokens_are_special(built: Path) -> None:
    tok = transformers.AutoTokenizer.from_pretrained(built)
    config = transformers.AutoConfig.from_pretrained(built)
    # The learnt BPE vocabulary (bytes, merges, <|endoftext|>) reaches the target on this corpus; Qwen's
    # 13 chat and vision special tokens come on top; the embedding is that many rows rounded up to 64.
    assert tok.vocab_size == SPEC.vocab_size
    assert len(tok) == SPEC.vocab_size + 13
    assert config.vocab_size == _rup64(len(tok)) <= _rup64(SPEC.vocab_size)
    for name in ("<|im_start|>", "<|im_end|>", "<|endoftext|>"):
        assert tok.tokenize(f"x{name}y").count(name) == 1
    assert config.eos_token_id == tok.convert_tokens_to_ids("<|im_end|>")
    assert config.pad_token_id == tok.convert_tokens_to_ids("<|endoftext|>")
    assert "<|im_start|>assistant" in tok.apply_chat_template(
        [{"role": "user", "content": "Find x."}], tokenize=False, add_generation_prompt=True
    )


def test_an_empty_corpus_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="corpus is empty"):
        geotrain.build_scratch_model(SPEC, iter(()), tmp_path / "m")
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"hidden_size": 50, "num_heads": 6}, "hidden_size 50 is not a multiple of num_heads 6"),
        ({"num_heads": 6, "num_kv_heads": 4}, "num_kv_heads 4 does not divide num_heads 6"),
        ({"vocab_size": 200}, "vocab_size"),
        ({"architecture": "llama"}, "architecture"),
        ({"hidden_size": "192"}, "hidden_size"),  # strict: no string-to-number coercion
        ({"num_layer": 2}, "num_layer"),
    ],
)
def test_invalid_shapes_are_rejected_naming_the_field(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        ScratchModel.model_validate(fields)


# --------------------------------------------------------------------------- training


def _record(index: int) -> dict[str, Any]:
    """A clause-setting PA record (no image, empty perception span) of a length that varies with ``index``."""
    prompt = f"Diagram relations:\nline A B\nAB = {index}\n\nFind {'the length of ' * (index % 5)}AB."
    target = f"Solution:\nEqual V0 {index}\n" + "Sum 1 2\n" * (index % 4) + "Get V0"
    return {
        "id": f"p{index}:program", "problem_id": f"p{index}", "trace_type": "program", "images": [],
        "messages": [{"role": "user", "content": [{"type": "text", "text": prompt}]},
                     {"role": "assistant", "content": [{"type": "text", "text": target}]}],
        "perception_span": [0, 0], "reasoning_span": [0, len(target)], "answer": str(index),
    }  # fmt: skip


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("records") / "pa.jsonl"
    path.write_text("".join(json.dumps(_record(i)) + "\n" for i in range(24)), encoding="utf-8")
    return path


def test_corpus_texts_are_the_prompts_and_targets_of_the_records(records: Path, tmp_path: Path) -> None:
    texts = geotrain.corpus_texts([DataSource(path=str(records))])
    assert len(texts) == 2 * 24
    first = _record(0)["messages"]
    assert texts[:2] == [first[0]["content"][0]["text"], first[1]["content"][0]["text"]]
    with pytest.raises(DataError, match="does not exist"):
        geotrain.corpus_texts([DataSource(path=str(tmp_path / "missing.jsonl"))])


def _run(model: Path, records: Path, out: Path, **extra: Any) -> geotrain.RunConfig:
    values: dict[str, Any] = {
        "family": "causal_lm", "model_path": str(model), "data": [{"path": str(records)}], "output_dir": str(out),
        "max_steps": 3, "learning_rate": 5e-3, "lr_scheduler": "constant", "logging_steps": 1, "save_steps": 2,
        "use_cpu": True, "per_device_batch_size": 2, "group_by_length": True, "seed": 3, **extra,
    }  # fmt: skip
    return geotrain.load_config(None, values)


def test_training_a_scratch_model_grouped_by_length_runs_and_resumes(tmp_path: Path, records: Path) -> None:
    model = geotrain.build_scratch_model(
        SPEC, geotrain.corpus_texts([DataSource(path=str(records))]), tmp_path / "base"
    )
    trainer = geotrain.build_trainer(_run(model, records, tmp_path / "probe"))
    sampler = trainer._get_train_sampler()
    assert isinstance(sampler, LengthGroupedSampler)
    lengths = trainer.train_dataset.lengths()
    order = list(sampler)  # 24 records, one group of 50 x 2: the longest come first
    assert [lengths[i] for i in order] == sorted(lengths, reverse=True) and min(lengths) < max(lengths)
    batches = [int(b["attention_mask"].sum()) for b in trainer.get_train_dataloader()]
    assert len(batches) == 12 and batches[0] > batches[-1]  # the trainer batches in that order

    straight = geotrain.train(_run(model, records, tmp_path / "a"))
    assert straight.global_step == 3 and (Path(straight.final_dir) / "config.json").is_file()
    losses = {int(e["step"]): e["loss"] for e in straight.log_history if "loss" in e}
    assert sorted(losses) == [1, 2, 3] and all(v > 0 for v in losses.values())
    checkpoint = tmp_path / "a" / "checkpoint-2"
    assert checkpoint.is_dir()
    resumed = geotrain.train(_run(model, records, tmp_path / "b"), resume_from=str(checkpoint))
    again = {int(e["step"]): e["loss"] for e in resumed.log_history if "loss" in e}
    assert resumed.global_step == 3 and 3 in again
    assert again[3] == pytest.approx(losses[3], abs=1e-5)  # same batches, same weights after a resume


# --------------------------------------------------------------------------- the length-grouped order


def _lengths(n: int, seed: int = 0) -> list[int]:
    rng = random.Random(seed)
    return [rng.randint(1, 500) for _ in range(n)]


def _order(lengths: list[int], batch: int, seed: int, epoch: int) -> list[int]:
    sampler = LengthGroupedSampler(lengths, batch, seed)
    sampler.set_epoch(epoch)
    return list(sampler)


def test_the_order_depends_only_on_seed_and_epoch() -> None:
    lengths = _lengths(1000)
    first = _order(lengths, 4, seed=7, epoch=2)
    assert first == _order(lengths, 4, seed=7, epoch=2)
    sampler = LengthGroupedSampler(lengths, 4, 7)
    sampler.set_epoch(5)
    list(sampler)  # iterating another epoch first changes nothing
    sampler.set_epoch(2)
    assert list(sampler) == first
    assert _order(lengths, 4, seed=7, epoch=3) != first
    assert _order(lengths, 4, seed=8, epoch=2) != first


@pytest.mark.parametrize(("n", "batch"), [(1000, 4), (999, 3), (7, 2), (1, 1)])
def test_every_index_comes_once_and_each_group_is_longest_first(n: int, batch: int) -> None:
    lengths = _lengths(n, seed=n)
    sampler = LengthGroupedSampler(lengths, batch, 0)
    order = list(sampler)
    assert len(sampler) == n and sorted(order) == list(range(n))
    group = 50 * batch
    chunks = [order[i : i + group] for i in range(0, n, group)]
    for chunk in chunks:
        values = [lengths[i] for i in chunk]
        assert values == sorted(values, reverse=True)
    if len(chunks) > 1:  # the groups are a seeded shuffle, not one global sort
        assert [lengths[i] for i in order] != sorted(lengths, reverse=True)
