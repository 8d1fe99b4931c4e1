"""``use_ray``: shards as Ray tasks on a local cluster write the same files as the process pool."""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from geosynth.synth import load_config, write_dataset
from geosynth.synth._ray import import_ray

HAS_RAY = importlib.util.find_spec("ray") is not None
CONFIG = load_config().model_copy(update={"time_limit": None})  # rounds only: no clock, so runs compare


@pytest.fixture
def ray() -> Iterator[Any]:
    module = import_ray()
    module.init(num_cpus=2, include_dashboard=False, runtime_env=None, log_to_driver=False)
    yield module
    module.shutdown()


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.slow
@pytest.mark.skipif(not HAS_RAY, reason="ray is not installed")
def test_ray_and_process_pool_write_the_same_files(tmp_path: Path, ray: Any) -> None:
    assert ray.is_initialized()
    for task in ("proving", "calculation"):
        remote = write_dataset(CONFIG, 4, 9, tmp_path / f"ray-{task}", task=task, shard_size=2, use_ray=True)
        local = write_dataset(CONFIG, 4, 9, tmp_path / f"local-{task}", task=task, shard_size=2, jobs=2)
        assert remote == local == (2, ())
        assert _files(tmp_path / f"ray-{task}") == _files(tmp_path / f"local-{task}")
    assert ray.is_initialized()  # a cluster started by the caller is left running
