"""Shards as Ray tasks: the same :func:`make_shard` as the process pool, so the output is identical."""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Iterator
from typing import Any

from geosynth.synth.errors import SynthUnavailableError

RAY_START_SECONDS = 120.0
"""Seconds a task may wait for Ray workers to start before the run gives up."""


def import_ray() -> Any:
    """Import Ray with its ``uv run`` runtime-environment hook switched off.

    With the hook on, Ray workers re-run ``uv run`` in an uploaded copy of the working directory that has
    no virtual environment; offline they never start. Workers must run this interpreter instead.

    Raises:
        SynthUnavailableError: Ray is not installed.
    """
    os.environ["RAY_ENABLE_UV_RUN_RUNTIME_ENV"] = "0"
    try:
        ray: Any = importlib.import_module("ray")
        constants: Any = importlib.import_module("ray._private.ray_constants")
    except ImportError as exc:
        raise SynthUnavailableError('--ray needs Ray: pip install "geosynth[ray]"') from exc
    constants.RAY_ENABLE_UV_RUN_RUNTIME_ENV = False
    return ray


def ray_shards(args: list[tuple[Any, ...]], jobs: int) -> Iterator[Any]:
    """Run :func:`make_shard` on Ray for each argument tuple; yields results as they finish.

    Joins a running Ray (``ray.init`` done by the caller, or ``RAY_ADDRESS``); otherwise starts a local
    one with ``jobs`` CPUs and shuts it down at the end.
    """
    from geosynth.synth._dataset import make_shard

    ray = import_ray()
    owns = not ray.is_initialized()
    if owns:
        address = os.environ.get("RAY_ADDRESS")
        local: dict[str, Any] = {} if address else {"num_cpus": jobs, "include_dashboard": False}
        ray.init(
            address=address, runtime_env=None, log_to_driver=False, logging_level=logging.WARNING, **local
        )
    try:
        task = ray.remote(num_cpus=1)(make_shard)
        pending = [task.remote(*item) for item in args]
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            yield ray.get(ready[0])
    finally:
        if owns:
            ray.shutdown()
