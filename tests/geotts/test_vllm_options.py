"""vLLM engine options from configuration reach ``vllm.LLM`` (a recording stand-in for the vllm module).

vLLM needs a CUDA build, so these tests put a module named ``vllm`` into ``sys.modules`` whose ``LLM``
records the keyword arguments it is constructed with; the real engine test is test_vllm_backend.py.
"""

from __future__ import annotations

import sys
import types
from typing import Any, ClassVar

import pytest

from geotts import StrategyConfigError
from geotts.backends.vllm import VLLMEngineOptions, VLLMSampler


class _RecordingLLM:
    built: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, **kwargs: Any) -> None:
        _RecordingLLM.built.append(kwargs)

    def get_tokenizer(self) -> object:
        return object()


@pytest.fixture
def fake_vllm(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    module = types.ModuleType("vllm")
    module.LLM = _RecordingLLM  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "vllm", module)
    _RecordingLLM.built = []
    return _RecordingLLM.built


def test_options_reach_the_engine_constructor(fake_vllm: list[dict[str, Any]]) -> None:
    options = VLLMEngineOptions(dtype="bfloat16", max_model_len=4096, gpu_memory_utilization=0.8)
    VLLMSampler("some/model", options=options, enforce_eager=True)
    (kwargs,) = fake_vllm
    assert kwargs["model"] == "some/model"
    assert kwargs["dtype"] == "bfloat16"
    assert kwargs["max_model_len"] == 4096
    assert kwargs["gpu_memory_utilization"] == 0.8
    assert kwargs["enforce_eager"] is True
    assert kwargs["enable_prefix_caching"] is True


def test_unset_options_leave_vllm_defaults(fake_vllm: list[dict[str, Any]]) -> None:
    VLLMSampler("m", options=VLLMEngineOptions(max_model_len=2048))
    (kwargs,) = fake_vllm
    assert kwargs["max_model_len"] == 2048
    assert "dtype" not in kwargs and "gpu_memory_utilization" not in kwargs


def test_keyword_options_are_validated_the_same_way(fake_vllm: list[dict[str, Any]]) -> None:
    VLLMSampler("m", dtype="float16", gpu_memory_utilization=1)
    assert fake_vllm[0]["dtype"] == "float16" and fake_vllm[0]["gpu_memory_utilization"] == 1.0
    with pytest.raises(StrategyConfigError, match="gpu_memory_utilization"):
        VLLMSampler("m", gpu_memory_utilization=1.5)
    with pytest.raises(StrategyConfigError, match="dtype"):
        VLLMSampler("m", dtype="bf16")
    with pytest.raises(StrategyConfigError, match=r"both in options and as arguments"):
        VLLMSampler("m", options=VLLMEngineOptions(dtype="float16"), dtype="bfloat16")
    assert len(fake_vllm) == 1  # no engine was started for a rejected option


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({"max_model_len": 0}, "max_model_len"),
        ({"gpu_memory_utilization": 0}, "gpu_memory_utilization"),
        ({"gpu_memory_utilization": 1.01}, "gpu_memory_utilization"),
        ({"dtype": "int4"}, "dtype"),
        ({"max_num_seqs": 8}, "max_num_seqs"),
    ],
)
def test_bad_option_values_give_one_line_naming_the_field(values: dict[str, Any], field: str) -> None:
    with pytest.raises(StrategyConfigError) as err:
        VLLMEngineOptions.parse(values, where="evaluate.vllm")
    message = str(err.value)
    assert message.startswith("evaluate.vllm: ") and field in message and "\n" not in message


def test_file_values_are_read_as_json_types() -> None:
    parsed = VLLMEngineOptions.parse({"max_model_len": "8192", "gpu_memory_utilization": 0.5})
    assert parsed.engine_kwargs() == {"max_model_len": 8192, "gpu_memory_utilization": 0.5}


def test_options_for_an_existing_engine_are_refused(fake_vllm: list[dict[str, Any]]) -> None:
    with pytest.raises(StrategyConfigError, match=r"existing vllm\.LLM"):
        VLLMSampler(_RecordingLLM(), options=VLLMEngineOptions(max_model_len=512))
