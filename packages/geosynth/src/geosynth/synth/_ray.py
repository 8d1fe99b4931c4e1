"""Shards as Ray tasks: the same :func:`make_shard` as the process pool, so the output is identical."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from geosynth import engine
from geosynth.synth.errors import SynthUnavailableError

RAY_START_SECONDS = 120.0
"""Seconds a task may wait for Ray workers to start before the run gives up."""


def import_ray() -> Any:
    """Ray, for ``--ray`` (see :func:`geosynth.engine.import_ray`).

    Raises:
        SynthUnavailableError: Ray is not installed.
    """
    try:
        return engine.import_ray('--ray needs Ray: pip install "geosynth[ray]"')
    except ImportError as exc:
        raise SynthUnavailableError(str(exc)) from exc


def ray_shards(args: list[tuple[Any, ...]], jobs: int) -> Iterator[Any]:
    """Run :func:`make_shard` on Ray for each argument tuple; yields results as they finish.

    Joins a running Ray (``ray.init`` done by the caller, or ``RAY_ADDRESS``); otherwise starts a local
    one with ``jobs`` CPUs and shuts it down at the end.
    """
    from geosynth.synth._dataset import make_shard

    ray = import_ray()
    try:
        owns = engine.join_or_start(ray, jobs)
    except (ConnectionError, RuntimeError) as exc:
        raise SynthUnavailableError(
            f"cannot start or reach Ray (RAY_ADDRESS={os.environ.get('RAY_ADDRESS')!r}): {exc}"
        ) from exc
    try:
        task = ray.remote(num_cpus=1)(make_shard)
        pending = [task.remote(*item) for item in args]
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            yield ray.get(ready[0])
    finally:
        if owns:
            ray.shutdown()
