"""How geosynth starts worker processes (the engine's isolated solves, dataset shards, re-checks, mining)."""

from __future__ import annotations

import multiprocessing
import sys
from multiprocessing.context import ForkContext, SpawnContext


def worker_context() -> ForkContext | SpawnContext:
    """The start method for workers: ``fork`` where possible, else ``spawn``.

    ``fork`` starts a worker in milliseconds with geosynth already imported. ``spawn`` is used where
    the platform lacks ``fork`` and while this process drives Ray: Ray's driver keeps gRPC threads that hold locks; a child forked in the middle of one of their
    calls inherits the lock held and can hang forever (seen with a process pool run beside a local
    Ray cluster). Spawned workers start clean, at the cost of importing geosynth again.
    """
    ray = sys.modules.get("ray")
    driving_ray = ray is not None and bool(getattr(ray, "is_initialized", lambda: False)())
    if "fork" in multiprocessing.get_all_start_methods() and not driving_ray:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")
