"""Ray start-up shared by the dataset writer (``geosynth.synth``) and MTS (``geosynth.mts``).

Ray is an optional extra: it is imported here only, when a run asks for it. Callers turn the plain
exceptions raised here into their own package errors.
"""

from __future__ import annotations

import importlib
import logging
import os
from typing import Any


def import_ray(install_hint: str) -> Any:
    """Import Ray with its ``uv run`` runtime-environment integration switched off.

    That integration (on by default in recent Ray releases) makes every worker re-run ``uv run`` in an
    uploaded copy of the working directory, which has no ``.venv``: each worker re-resolves the whole
    environment (offline: never) and tasks or actors never start. Workers must run this interpreter.
    The flag is read when Ray is imported, so it is also cleared on the module in case Ray was
    imported before.

    Args:
        install_hint: What the ImportError tells the user to install.

    Raises:
        ImportError: Ray is not installed (the message is ``install_hint``).
    """
    os.environ["RAY_ENABLE_UV_RUN_RUNTIME_ENV"] = "0"
    try:
        ray: Any = importlib.import_module("ray")
        constants: Any = importlib.import_module("ray._private.ray_constants")
    except ImportError as exc:
        raise ImportError(install_hint) from exc
    constants.RAY_ENABLE_UV_RUN_RUNTIME_ENV = False
    return ray


def join_or_start(ray: Any, jobs: int) -> bool:
    """Use a running Ray (``ray.init`` done by the caller, or ``RAY_ADDRESS``), else start a local one.

    Args:
        ray: The module from :func:`import_ray`.
        jobs: CPUs of a local Ray.

    Returns:
        Whether this call started Ray (then the caller shuts it down).

    Raises:
        ConnectionError: ``RAY_ADDRESS`` names no reachable cluster.
        RuntimeError: Ray could not start.
    """
    if ray.is_initialized():
        return False
    address = os.environ.get("RAY_ADDRESS")
    local: dict[str, Any] = {} if address else {"num_cpus": jobs, "include_dashboard": False}
    try:
        ray.init(
            address=address,
            runtime_env=None,
            ignore_reinit_error=True,
            log_to_driver=False,
            logging_level=logging.WARNING,
            **local,
        )
    except ValueError as exc:  # Ray's own error for some bad addresses
        raise ConnectionError(str(exc)) from exc
    return True
