"""The evaluate stage's vLLM engine settings: validated with the config, passed to ``vllm.LLM`` unchanged.

vLLM needs a CUDA build; a module named ``vllm`` whose ``LLM`` records its keyword arguments stands in.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest

from geo_cli.pipeline._config import load_pipeline_config
from geo_cli.pipeline._context import StageContext
from geo_cli.pipeline._stage_evaluate import _sampler
from geo_cli.pipeline.errors import PipelineConfigError

MakeConfig = Callable[..., Path]


class _RecordingLLM:
    built: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, **kwargs: Any) -> None:
        _RecordingLLM.built.append(kwargs)

    def get_tokenizer(self) -> object:
        return object()


def _vllm_evaluate(options: dict[str, Any]) -> dict[str, Any]:
    return {"evaluate": {"backend": "vllm", "model": "org/policy", "vllm": options}}


def test_engine_settings_reach_the_vllm_constructor(
    make_config: MakeConfig, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    module = types.ModuleType("vllm")
    module.LLM = _RecordingLLM  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "vllm", module)
    _RecordingLLM.built = []
    options = {"dtype": "bfloat16", "max_model_len": 8192, "gpu_memory_utilization": 0.85}
    config, base = load_pipeline_config(make_config(_vllm_evaluate(options)))
    ctx = StageContext(
        config=config, base=base, workdir=tmp_path, folder=tmp_path / "evaluate", resumed=False
    )
    _sampler(ctx, config.evaluate)
    (kwargs,) = _RecordingLLM.built
    assert kwargs["model"] == "org/policy"
    assert {k: kwargs[k] for k in options} == options


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        (_vllm_evaluate({"gpu_memory_utilization": 1.5}), "evaluate.vllm.gpu_memory_utilization"),
        (_vllm_evaluate({"max_model_len": "long"}), "evaluate.vllm.max_model_len"),
        (_vllm_evaluate({"dtype": "bf16"}), "evaluate.vllm.dtype"),
        (_vllm_evaluate({"swap_space": 4}), "evaluate.vllm.swap_space"),
        ({"evaluate": {"vllm": {"max_model_len": 512}}}, "backend 'vllm' only"),
    ],
)
def test_bad_engine_settings_name_the_field(
    make_config: MakeConfig, changes: dict[str, Any], named: str
) -> None:
    with pytest.raises(PipelineConfigError) as err:
        load_pipeline_config(make_config(changes))
    assert named in str(err.value) and "\n" not in str(err.value)
