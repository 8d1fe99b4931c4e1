"""Data parallelism: `accelerate launch --num_processes 2` (gloo, CPU) matches one process with doubled accumulation."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("accelerate")

import geotrain  # noqa: E402

GPUS = torch.cuda.device_count() if torch.cuda.is_available() else 0


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _launch(args: list[str], tmp: Path) -> tuple[dict[str, object], str]:
    """The run's result line and its stderr."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(args, capture_output=True, text=True, env=env, cwd=tmp, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def _run(args: list[str], tmp: Path) -> dict[str, object]:
    return _launch(args, tmp)[0]


def _config(
    tmp: Path, model: Path, data: Path, name: str, accumulation: int, family: str = "qwen2_vl"
) -> Path:
    text = (
        f"family: {family}\nmodel_path: {model}\ndata:\n  - path: {data}\noutput_dir: {tmp / name}\n"
        f"max_steps: 3\nlearning_rate: 1.0e-2\nlr_scheduler: constant\nper_device_batch_size: 2\n"
        f"gradient_accumulation_steps: {accumulation}\nlogging_steps: 1\nsave_steps: 1000\nuse_cpu: true\n"
    )
    path = tmp / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _weights(folder: Path) -> dict[str, Any]:
    from safetensors.torch import load_file

    return load_file(str(folder / "model.safetensors"))


@pytest.mark.slow  # 27 s per family on an idle 2-core machine, 100-120 s when it is shared (3 interpreters import torch)
@pytest.mark.parametrize("family", ["qwen2_vl", "causal_lm"])
def test_two_process_ddp_matches_one_process_with_doubled_accumulation(
    family: str, tiny: Callable[[str], Path], write_pa: Callable[..., Path], tmp_path: Path
) -> None:
    # the vision model sees a diagram in every record, so its tower gets gradients; the text-only one sees none
    model, data = tiny(family), write_pa(12, images=family != "causal_lm")
    one = _run(
        [sys.executable, "-m", "geotrain", "--config", str(_config(tmp_path, model, data, "one", 2, family))],
        tmp_path,
    )
    launch = [sys.executable, "-m", "accelerate.commands.launch", "--config_file",
              str(geotrain.accelerate_config("ddp_cpu")), "--num_processes", "2", "--main_process_port", str(_port())]  # fmt: skip
    progress = tmp_path / "progress.jsonl"
    two_config = str(_config(tmp_path, model, data, "two", 1, family))
    two, log = _launch(
        [*launch, "-m", "geotrain", "--config", two_config, "--progress", str(progress)], tmp_path
    )
    assert one["global_step"] == two["global_step"] == 3
    # a full vision-language fine-tune lets DDP search for parameters a text-only batch skips; a text-only
    # model uses all of its parameters, so it must not pay for that search (torch warns when it finds none)
    assert ("find_unused_parameters=True" in log) is (family == "qwen2_vl"), log[-2000:]
    # the first process alone reports each optimizer step
    steps = [json.loads(line) for line in progress.read_text().splitlines()]
    assert steps == [{"step": k, "max_steps": 3} for k in (1, 2, 3)]
    a, b = _weights(Path(str(one["final_dir"]))), _weights(Path(str(two["final_dir"])))
    base = _weights(model)
    assert a.keys() == b.keys()
    moved = max(float((a[k] - base[k]).abs().max()) for k in a)
    gap = max(float((a[k] - b[k]).abs().max()) for k in a)
    assert moved > 1e-3 and gap < 1e-4 * max(1.0, moved * 100), (moved, gap)


@pytest.mark.gpu
@pytest.mark.skipif(GPUS < 2, reason="DeepSpeed ZeRO-2/3 and FSDP2 launches need at least 2 CUDA GPUs")
@pytest.mark.parametrize("strategy", ["zero2", "zero3", "fsdp2"])
def test_sharded_strategies_on_gpus(
    strategy: str, tiny: Callable[[str], Path], write_pa: Callable[[int], Path], tmp_path: Path
) -> None:
    if strategy.startswith("zero"):
        pytest.importorskip("deepspeed", reason="install geotrain[deepspeed]")
    model, data = tiny("qwen2_5_vl"), write_pa(8)
    cfg = _config(tmp_path, model, data, strategy, 1, family="qwen2_5_vl")
    cfg.write_text(cfg.read_text().replace("use_cpu: true\n", "precision: bf16\n"), encoding="utf-8")
    launch = [sys.executable, "-m", "accelerate.commands.launch", "--config_file", str(geotrain.accelerate_config(strategy)),
              "--num_processes", "2", "--main_process_port", str(_port())]  # fmt: skip
    result = _run([*launch, "-m", "geotrain", "--config", str(cfg)], tmp_path)
    assert result["global_step"] == 3
