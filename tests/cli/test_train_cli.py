"""``geo train``: sft/prm build the config the package trains with; export and tiny-model run for real."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import geotrain
from geo_cli.main import app

runner = CliRunner()


def _capture(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[tuple[geotrain.RunConfig, Any]]:
    seen: list[tuple[geotrain.RunConfig, Any]] = []

    def fake_train(
        config: geotrain.RunConfig, *, resume_from: Any = None, callbacks: Any = ()
    ) -> geotrain.TrainResult:
        seen.append((config, resume_from))
        return geotrain.TrainResult(
            output_dir=str(tmp_path), final_dir=str(tmp_path / "final"), global_step=7,
            log_history=({"loss": 1.5, "perception_loss": 1.25, "reasoning_loss": 1.75, "step": 7.0},
                         {"train_runtime": 1.0, "step": 7.0}),
        )  # fmt: skip

    monkeypatch.setattr(geotrain, "train", fake_train)
    return seen


def _yaml(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "run.yaml"
    path.write_text(
        f"preset: pa_sft_2b\nmodel_path: m\noutput_dir: {tmp_path}\ndata:\n  - path: d.jsonl\n{extra}"
    )
    return path


def test_sft_loads_file_preset_and_overrides(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen = _capture(monkeypatch, tmp_path)
    result = runner.invoke(
        app, ["train", "sft", "--config", str(_yaml(tmp_path)), "epochs=2", "lora.r=8", "--resume"]
    )
    assert result.exit_code == 0, result.output
    ((config, resume),) = seen
    assert (config.task, config.epochs, config.lora.r, config.learning_rate, resume) == (
        "pa_sft",
        2,
        8,
        2e-5,
        True,
    )
    assert json.loads(result.stdout) == {
        "final_dir": str(tmp_path / "final"), "global_step": 7, "loss": 1.5, "perception_loss": 1.25,
        "reasoning_loss": 1.75,
    }  # fmt: skip


def test_prm_defaults_to_the_gm_prm_preset(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen = _capture(monkeypatch, tmp_path)
    path = tmp_path / "prm.yaml"
    path.write_text(f"model_path: m\noutput_dir: {tmp_path}\ndata:\n  - path: c.jsonl\n    kind: prm\n")
    result = runner.invoke(app, ["train", "prm", "--config", str(path)])
    assert result.exit_code == 0, result.output
    ((config, _),) = seen
    assert (config.task, config.family, config.freeze_vision, config.epochs, config.learning_rate) == (
        "prm",
        "qwen2_5_vl",
        True,
        2,
        1e-5,
    )


def test_bad_config_is_a_user_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _capture(monkeypatch, tmp_path)
    result = runner.invoke(app, ["train", "sft", "--config", str(_yaml(tmp_path)), "learning_rate=-1"])
    assert result.exit_code == 1 and "ConfigError" in result.output and "learning_rate" in result.output
    result = runner.invoke(app, ["train", "prm", "--config", str(_yaml(tmp_path))])  # PA data for a PRM run
    assert result.exit_code == 1 and "geoprm records only" in " ".join(result.output.split())


def test_tiny_model_then_export(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    result = runner.invoke(
        app, ["train", "tiny-model", "--family", "qwen3_vl", "--out", str(tmp_path / "tiny")]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"out": str(tmp_path / "tiny"), "family": "qwen3_vl"}
    config = json.loads((tmp_path / "tiny" / "config.json").read_text())
    assert config["model_type"] == "qwen3_vl"
    result = runner.invoke(app, ["train", "export", str(tmp_path / "tiny"), "--out", str(tmp_path / "exp")])
    assert result.exit_code == 0, result.output
    processor = json.loads((tmp_path / "exp" / "processor_config.json").read_text())
    assert processor["video_processor"]["video_processor_type"] == "Qwen3VLVideoProcessor"
    assert (tmp_path / "exp" / "model.safetensors").is_file()
    result = runner.invoke(app, ["train", "export", str(tmp_path / "nothing"), "--out", str(tmp_path / "x")])
    assert result.exit_code == 1  # a missing input is a user error
    assert result.output == f"error: export source {tmp_path / 'nothing'} does not exist\n"
