"""``use_ray``: verification on Ray actors and LLM calls in Ray tasks give the same outputs as a local run."""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import geodsl
from geosynth.mts import LLMConfig, MTSConfig, MTSConfigError, MTSWorkerError, run_mts

if TYPE_CHECKING:
    from .conftest import FakeOpenAI

HAS_RAY = importlib.util.find_spec("ray") is not None


@pytest.fixture
def ray() -> Iterator[Any]:
    """Ray, shut down after the test even when the test fails half-way."""
    module = importlib.import_module("ray")
    yield module
    if module.is_initialized():
        module.shutdown()


@pytest.mark.skipif(HAS_RAY, reason="ray is installed")
def test_without_ray_installed_the_option_fails_with_the_install_command(
    tmp_path: Path, mini_dataset: Path
) -> None:
    with pytest.raises(MTSConfigError, match="pip install"):
        run_mts(mini_dataset, tmp_path / "out", MTSConfig(use_ray=True))


@pytest.mark.slow
@pytest.mark.skipif(not HAS_RAY, reason="ray is not installed")
def test_ray_and_local_runs_write_the_same_files(tmp_path: Path, mini_dataset: Path, ray: Any) -> None:
    local = run_mts(mini_dataset, tmp_path / "local", MTSConfig(jobs=1, mixtures=False))
    remote = run_mts(mini_dataset, tmp_path / "ray", MTSConfig(jobs=2, mixtures=False, use_ray=True))
    assert remote.stats == local.stats
    for name in ("traces/pal.jsonl", "drops.jsonl", "pa/pal.jsonl"):
        assert (tmp_path / "ray" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()
    assert not ray.is_initialized()  # the run shut down the local Ray instance it started


@pytest.mark.slow
@pytest.mark.skipif(not HAS_RAY, reason="ray is not installed")
def test_actors_that_do_not_start_in_time_stop_the_run_with_a_clear_error(
    tmp_path: Path, mini_dataset: Path, ray: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("geosynth.mts._runner.RAY_START_SECONDS", 0.001)
    with pytest.raises(MTSWorkerError, match="did not start within"):
        run_mts(mini_dataset, tmp_path / "out", MTSConfig(jobs=2, mixtures=False, use_ray=True))
    assert not ray.is_initialized()


def _teacher(prompt: str) -> str:
    """A well-behaved teacher: comments every equation of a PAL script, explains every program step."""
    if "## Program\n`" in prompt:
        program = prompt.split("## Program\n`")[1].split("`\n")[0]
        steps = geodsl.parse_instantiated(program).program.steps
        tokens, at, lines = program.split(), 0, []
        for n, step in enumerate(steps, start=1):
            lines.append(
                f"{n}. **Step {n}.** The {step.op} relation holds here.\n   **Op:** "
                f"`{' '.join(tokens[at : at + 1 + len(step.operands)])}`"
            )
            at += 1 + len(step.operands)
        return "\n".join(lines) + f"\nFinal program: {program}"
    script = prompt.split("## PAL script\n```python\n")[1].split("\n```")[0]
    return (
        "```python\n"
        + re.sub(r"^(eq\d+ = Eq\()", r"# By the theorem that fits this figure.\n\1", script, flags=re.M)
        + "\n```"
    )


@pytest.mark.slow
@pytest.mark.skipif(not HAS_RAY, reason="ray is not installed")
@pytest.mark.skipif(importlib.util.find_spec("geotts") is None, reason="geotts is not installed")
def test_llm_requests_run_as_ray_tasks_with_the_same_traces(
    tmp_path: Path,
    mini_dataset: Path,
    ray: Any,
    fake_openai: Callable[[Callable[[str], str]], FakeOpenAI],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from geosynth.mts._runner import RaySampler

    batches: list[int] = []

    class CountingRaySampler(RaySampler):
        def generate(self, requests: Any) -> Any:
            batches.append(len(requests))
            return super().generate(requests)

    monkeypatch.setattr("geosynth.mts._pipeline.RaySampler", CountingRaySampler)
    server = fake_openai(_teacher)
    # A long timeout: on a busy machine the Ray workers may take a minute or more to start and reply.
    llm = LLMConfig(model="teacher", base_url=server.base_url, max_retries=0, timeout=180)
    local = run_mts(mini_dataset, tmp_path / "local", MTSConfig(jobs=1, mixtures=False, llm=llm))
    calls = server.calls
    llm = llm.model_copy(update={"cache": tmp_path / "ray-cache.sqlite"})  # a cold cache: every call again
    remote = run_mts(mini_dataset, tmp_path / "ray", MTSConfig(jobs=2, mixtures=False, llm=llm, use_ray=True))
    assert server.calls == 2 * calls and remote.stats == local.stats
    assert local.stats.traces["cot_pal"] == 6 and local.stats.traces["cot_program"] == 8
    for name in ("traces/cot_pal.jsonl", "traces/cot_program.jsonl", "drops.jsonl"):
        assert (tmp_path / "ray" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()
    timings = json.loads((tmp_path / "ray" / "timings.json").read_text())
    assert timings["llm_requests_sent"] == calls and sum(batches) == calls  # every request went through Ray
