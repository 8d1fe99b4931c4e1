"""Run untrusted Python (PAL scripts, model output) fast and contained.

A :class:`Sandbox` keeps a pool of warm worker processes that have already imported
sympy; every script runs in a fresh child forked from a worker, so it starts in
milliseconds and can damage nothing that outlives it. Limits (wall clock, CPU, memory,
output, file size, open files) come from :class:`SandboxLimits`; each script yields a
:class:`SandboxResult` with its output, the last number it printed, and a one-line error.
Linux only. See ``docs/sandbox.md`` for the threat model and what is guaranteed.
"""

from __future__ import annotations

from geodsl.sandbox._models import SandboxLimits, SandboxResult
from geodsl.sandbox._pool import DEFAULT_PRELOAD, ProgressCallback, Sandbox, run_scripts

__all__ = (
    "DEFAULT_PRELOAD",
    "ProgressCallback",
    "Sandbox",
    "SandboxLimits",
    "SandboxResult",
    "run_scripts",
)
