"""``python -m geotrain`` (the entry accelerate launches): config layering, resume flag, JSON summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import geotrain
import geotrain.__main__ as entry


def test_main_trains_the_layered_config(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[tuple[geotrain.RunConfig, Any]] = []

    def fake_train(
        config: geotrain.RunConfig, *, resume_from: Any = None, callbacks: Any = ()
    ) -> geotrain.TrainResult:
        seen.append((config, resume_from))
        return geotrain.TrainResult(output_dir="o", final_dir="o/final", global_step=4, log_history=())

    monkeypatch.setattr(entry, "train", fake_train)
    path = tmp_path / "run.yaml"
    path.write_text(
        "family: qwen3_vl\nmodel_path: m\noutput_dir: o\ndata:\n  - path: d.jsonl\n", encoding="utf-8"
    )
    assert entry.main(["--config", str(path), "--preset", "pa_sft_8b", "--resume", "max_steps=4"]) == 0
    ((config, resume),) = seen
    assert (config.learning_rate, config.max_steps, config.epochs, resume) == (5e-6, 4, 10, True)
    assert json.loads(capsys.readouterr().out)["global_step"] == 4
    with pytest.raises(geotrain.ConfigError, match="max_steps"):
        entry.main(["--config", str(path), "max_steps=many"])
