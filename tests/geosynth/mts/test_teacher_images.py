"""The MTS teacher sees the figure: a vision teacher gets each problem's diagram, a text-only one none."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any, ClassVar

import pytest

pytest.importorskip("geotts")

from geosynth.mts import LLMConfig, MTSConfig, MTSConfigError, load_llm_config, run_mts
from geosynth.mts._llm import CachedLLM, build_sampler
from geotts import Completion, GenerationRequest
from geotts.testing import FunctionSampler

#: Distinct bytes per diagram (a PNG signature, then the name), so a request shows which file it carries.
DIAGRAMS = {"img_3909.png": "prob_13", "img_423.png": "prob_27", "img_1591.png": "prob_159"}


def _png(name: str) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + name.encode()


def _questions(dataset: Path) -> dict[str, str]:
    """The questions of the real PGPS9K problems (the synthetic broken records all ask "Find x.")."""
    records = json.loads(dataset.read_text(encoding="utf-8"))
    return {k: " ".join(r["text"].split()) for k, r in records.items() if k.startswith("prob_")}


def _recording_sampler() -> FunctionSampler:
    def reply(request: GenerationRequest) -> list[Completion]:
        return [Completion(text="I cannot help with that.", num_tokens=6)]

    return FunctionSampler(reply)


def _images_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "Diagram"
    folder.mkdir()
    for name in DIAGRAMS:
        (folder / name).write_bytes(_png(name))
    return folder


def _run(tmp_path: Path, dataset: Path, *, vision: bool, images_dir: Path | None) -> list[GenerationRequest]:
    sampler = _recording_sampler()
    config = MTSConfig(
        jobs=1,
        shard_size=12,
        mixtures=False,
        max_cot_pal_passes=2,
        images_dir=images_dir,
        llm=LLMConfig(model="teacher", base_url="http://127.0.0.1:9/v1", vision=vision),
    )
    run_mts(dataset, tmp_path / "out", config, sampler=sampler)
    return [r for call in sampler.calls for r in call]


def _problem_of(request: GenerationRequest, questions: dict[str, str]) -> str | None:
    (message,) = request.messages
    found = [pid for pid, q in questions.items() if f"## Problem\n{q}\n" in message.content]
    return found[0] if found else None


def test_a_vision_teacher_gets_the_diagram_bytes_with_every_prompt(
    tmp_path: Path, mini_dataset: Path
) -> None:
    requests = _run(tmp_path, mini_dataset, vision=True, images_dir=_images_dir(tmp_path))
    questions = _questions(mini_dataset)
    seen: dict[str | None, set[tuple[bytes | Path, ...]]] = {}
    for r in requests:
        seen.setdefault(_problem_of(r, questions), set()).add(r.images)
    assert seen.get(None, {()}) == {()}  # the broken records' diagrams are not in the folder
    expected = {pid: {(_png(name),)} for name, pid in DIAGRAMS.items()}
    assert {pid: seen[pid] for pid in expected} == expected  # CoT-PAL, its repair and CoT-Program alike
    # prob_494 names img_2270.png, which is not in the folder: its prompts go as text.
    assert seen["prob_494"] == {()}
    timings = json.loads((tmp_path / "out" / "timings.json").read_text(encoding="utf-8"))
    assert timings["llm_requests_with_diagram"] == sum(1 for r in requests if r.images) > 0
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["llm_params"]["vision"] is True


def test_a_text_only_teacher_gets_no_image(tmp_path: Path, mini_dataset: Path) -> None:
    requests = _run(tmp_path, mini_dataset, vision=False, images_dir=_images_dir(tmp_path))
    assert requests and all(r.images == () for r in requests)
    # The text-only prompt still names the diagram's clauses (what the teacher sees instead of the figure).
    (first,) = [r for r in requests if "What is the length of UB?" in r.messages[0].content][:1]
    assert "line Q U R" in first.messages[0].content and "BT = 30" in first.messages[0].content
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert "vision" not in manifest["llm_params"]


def test_a_vision_teacher_without_a_diagram_folder_is_a_config_error(
    tmp_path: Path, mini_dataset: Path
) -> None:
    with pytest.raises(MTSConfigError, match="images_dir"):
        _run(tmp_path, mini_dataset, vision=True, images_dir=None)


def test_the_diagram_is_part_of_the_cache_key(tmp_path: Path) -> None:
    folder = _images_dir(tmp_path)
    config = LLMConfig(model="teacher", base_url="http://127.0.0.1:9/v1", vision=True)
    sampler = _recording_sampler()
    llm = CachedLLM(sampler, config, tmp_path / "cache.sqlite", images_dir=folder)
    llm.complete(["same prompt", "same prompt", "same prompt"], ["img_3909.png", "img_423.png", None])
    assert [r.images for r in sampler.calls[0]] == [(_png("img_3909.png"),), (_png("img_423.png"),), ()]
    again = CachedLLM(sampler, config, tmp_path / "cache.sqlite", images_dir=folder)
    again.complete(["same prompt"], ["img_423.png"])
    assert len(sampler.calls) == 1 and again.cache_hits == 1
    # A text-only teacher keys prompts as before (no image field), so its old cache entries still hit.
    text_only = CachedLLM(sampler, config.model_copy(update={"vision": False}), tmp_path / "cache.sqlite")
    assert text_only.key("same prompt") == llm.key("same prompt", None)


def test_llm_config_files_read_vision_and_vllm_settings(tmp_path: Path) -> None:
    path = tmp_path / "teacher.yaml"
    path.write_text(
        "backend: vllm\nmodel: org/teacher\nvision: true\n"
        "vllm: {dtype: bfloat16, max_model_len: 8192, gpu_memory_utilization: 0.85}\n",
        encoding="utf-8",
    )
    config = load_llm_config(path)
    assert config.vision is True and config.vllm is not None
    assert config.vllm.engine_kwargs() == {
        "dtype": "bfloat16",
        "max_model_len": 8192,
        "gpu_memory_utilization": 0.85,
    }
    bad = tmp_path / "bad.yaml"
    bad.write_text("backend: vllm\nmodel: m\nvllm: {gpu_memory_utilization: 2}\n", encoding="utf-8")
    with pytest.raises(MTSConfigError, match=r"vllm\.gpu_memory_utilization"):
        load_llm_config(bad)
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("backend: transformers\nmodel: m\nvllm: {max_model_len: 512}\n", encoding="utf-8")
    with pytest.raises(MTSConfigError, match="backend 'vllm' only"):
        load_llm_config(wrong)


class _RecordingLLM:
    built: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, **kwargs: Any) -> None:
        _RecordingLLM.built.append(kwargs)

    def get_tokenizer(self) -> object:
        return object()


def test_a_vllm_teacher_gets_its_engine_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("vllm")
    module.LLM = _RecordingLLM  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "vllm", module)
    _RecordingLLM.built = []
    config = LLMConfig.model_validate(
        {"backend": "vllm", "model": "org/teacher", "vllm": {"dtype": "float16", "max_model_len": 4096}},
        strict=False,
    )
    build_sampler(config)
    (kwargs,) = _RecordingLLM.built
    assert (
        kwargs["model"] == "org/teacher" and kwargs["dtype"] == "float16" and kwargs["max_model_len"] == 4096
    )
