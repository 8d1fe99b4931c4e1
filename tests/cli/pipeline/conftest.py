"""Fixtures of the pipeline tests: a small real config, a CLI that mounts ``geo pipeline``, chromium."""

from __future__ import annotations

import copy
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml

from geo_cli.pipeline_cmd import app as pipeline_app

#: The smallest config that runs every stage for real: 8 training problems, 2 test problems,
#: a tiny Qwen2-VL trained for 4 steps (checkpoints every 2), D = 1 and 8-token candidates.
SMALL: dict[str, Any] = {
    "name": "small",
    "hardware": {"summary": "2 CPU cores", "gpus": 0, "cpu_cores": 2},
    "data": {
        "train": {"source": "bundled_sample", "offset": 0, "limit": 8},
        "test": {"source": "bundled_sample", "offset": 100, "limit": 2},
    },
    "mts": {"jobs": 1, "shard_size": 4, "script_timeout": 30},
    "train": {
        "base_model": "tiny:qwen2_vl",
        "settings": {
            "use_cpu": True,
            "max_steps": 4,
            "save_steps": 2,
            "logging_steps": 1,
            "per_device_batch_size": 2,
            "max_length": 512,
            "learning_rate": 0.002,
        },
    },
    "evaluate": {"depth": 1, "max_tokens": 8, "temperature": 1.0, "sandbox_workers": 1},
    "report": {"gallery": 2},
}


def write_config(
    folder: Path,
    changes: dict[str, Any] | None = None,
    name: str = "pipeline.yaml",
    base: dict[str, Any] = SMALL,
) -> Path:
    """Write ``base`` (SMALL by default) deep-updated with ``changes`` as YAML into ``folder``.

    A None value in ``changes`` deletes the key.
    """
    config = copy.deepcopy(base)

    def merge(into: dict[str, Any], new: dict[str, Any]) -> None:
        for key, value in new.items():
            if value is None:
                into.pop(key, None)
            elif isinstance(value, dict) and isinstance(into.get(key), dict):
                merge(into[key], value)
            else:
                into[key] = value

    merge(config, changes or {})
    path = folder / name
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


MakeConfig = Callable[..., Path]


@pytest.fixture
def make_config(tmp_path: Path) -> MakeConfig:
    """``make_config(changes=None, name="pipeline.yaml")`` writes the small config into ``tmp_path``."""

    def make(changes: dict[str, Any] | None = None, name: str = "pipeline.yaml") -> Path:
        return write_config(tmp_path, changes, name)

    return make


@pytest.fixture
def cli() -> typer.Typer:
    """A root app with ``pipeline`` mounted as the real ``geo`` app will mount it."""
    root = typer.Typer()
    root.add_typer(pipeline_app, name="pipeline")

    @root.callback()
    def main() -> None:
        """Test root."""

    return root


@pytest.fixture(scope="session")
def chromium() -> str:
    """The headless browser (Debian's chromium package); skip when it is not installed."""
    found = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
    if found is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    return found
