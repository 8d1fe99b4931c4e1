"""Run configuration: presets reproduce the seeds' recipes, layering preset < file < overrides, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

import geotrain
from geotrain import ConfigError, RunConfig, load_config

BASE = {"model_path": "m", "data": [{"path": "d.jsonl"}], "output_dir": "out"}


def _yaml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "run.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_presets_reproduce_the_papers_recipes() -> None:
    small = load_config(None, BASE, base_preset="pa_sft_2b")
    big = load_config(None, BASE, base_preset="pa_sft_8b")
    prm = load_config(None, {**BASE, "data": [{"path": "c.jsonl", "kind": "prm"}]}, base_preset="gm_prm")
    assert (small.learning_rate, big.learning_rate) == (2e-5, 5e-6)
    for cfg in (small, big):
        assert (cfg.epochs, cfg.lr_scheduler, cfg.warmup_ratio, cfg.max_length, cfg.task) == (
            10,
            "cosine",
            0.1,
            1024,
            "pa_sft",
        )
    assert big.family == "qwen3_vl"
    assert (prm.task, prm.family, prm.epochs, prm.learning_rate, prm.lr_scheduler, prm.warmup_ratio) == (
        "prm",
        "qwen2_5_vl",
        2,
        1e-5,
        "linear",
        0.05,
    )
    assert (prm.per_device_batch_size, prm.precision, prm.freeze_vision) == (2, "bf16", True)
    assert prm.accumulation(8) == 1 and prm.accumulation(2) == 4 and prm.accumulation(1) == 8  # effective 16


def test_layering_file_over_preset_and_overrides_last(tmp_path: Path) -> None:
    path = _yaml(tmp_path, "preset: pa_sft_2b\nmodel_path: m\noutput_dir: o\nlearning_rate: 3e-5\n"
                           "data:\n  - path: a.jsonl\n    weight: 2\n")  # fmt: skip
    cfg = load_config(path, ["epochs=3", "lora.r=4", "finetune=lora", "data=[{path: b.jsonl, kind: prm}]",
                             "task=prm"])  # fmt: skip
    assert cfg.learning_rate == 3e-5 and cfg.epochs == 3 and cfg.warmup_ratio == 0.1
    assert cfg.lora.r == 4 and cfg.lora.alpha == 32 and cfg.finetune == "lora"
    assert cfg.data == (geotrain.DataSource(path="b.jsonl", kind="prm"),)


def test_config_is_frozen_and_strict() -> None:
    cfg = load_config(None, {**BASE, "family": "qwen2_vl"})
    with pytest.raises(ValueError, match="frozen"):
        cfg.epochs = 2
    with pytest.raises(ValueError):
        RunConfig(family="qwen2_vl", model_path="m", data=(), output_dir="o")


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["family=llama"], "family"),
        (["learning_rate=-1"], "learning_rate"),
        (["bogus=1"], "bogus"),
        (["epochs"], "key=value"),
        (["precision=bf16", "use_cpu=true"], "needs a GPU"),
        (["task=prm"], "geoprm records only"),
        (["verdict_weight=4"], "needs task 'prm'"),
        (["verdict_weight=0"], "verdict_weight"),
        (["warmup_ratio=1.0"], "warmup_ratio"),
        (["family=causal_lm", "freeze_vision=true"], "text-only"),
        (["eval={data: {path: h.jsonl, kind: prm}}"], "eval.data must hold PA records"),
    ],
)
def test_bad_values_are_named(overrides: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(None, ["family=qwen2_vl", "model_path=m", "output_dir=o", "data=[{path: d}]", *overrides])


def test_missing_file_unknown_preset_and_uneven_batch(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match="unknown preset 'nope'"):
        load_config(_yaml(tmp_path, "preset: nope\n"))
    with pytest.raises(ConfigError, match="mapping"):
        load_config(_yaml(tmp_path, "- 1\n"))
    cfg = load_config(
        None, {**BASE, "family": "qwen2_vl", "effective_batch_size": 6, "per_device_batch_size": 4}
    )
    with pytest.raises(ConfigError, match="not a multiple"):
        cfg.accumulation(1)


def test_shipped_accelerate_configs() -> None:
    import yaml

    assert set(geotrain.accelerate_configs()) >= {"ddp", "ddp_cpu", "zero2", "zero3", "fsdp2"}
    zero3 = yaml.safe_load(geotrain.accelerate_config("zero3").read_text(encoding="utf-8"))
    assert zero3["distributed_type"] == "DEEPSPEED" and zero3["deepspeed_config"]["zero_stage"] == 3
    fsdp = yaml.safe_load(geotrain.accelerate_config("fsdp2").read_text(encoding="utf-8"))
    assert fsdp["fsdp_config"]["fsdp_version"] == 2
    with pytest.raises(ConfigError, match="unknown accelerate config"):
        geotrain.accelerate_config("zero9")
