"""Run untrusted Python (PAL scripts, model output) fast and contained.

A :class:`Sandbox` keeps a pool of warm worker processes that have already imported
sympy; every script runs in a fresh child forked from a worker, so it starts in
milliseconds. The boundary is the kernel: each worker lives in its own user, PID, mount
and network namespaces with a private read-only root and no capabilities, and each
script runs under a seccomp allowlist. Limits (wall clock, CPU, memory,
output, file size, open files) come from :class:`SandboxLimits`; each script yields a
:class:`SandboxResult` with its output, the last number it printed, and a one-line error.
Linux only. See ``docs/sandbox.md`` for the threat model and what is guaranteed.
"""

from __future__ import annotations

from geodsl.sandbox._models import SandboxLimits, SandboxResult
from geodsl.sandbox._pool import DEFAULT_PRELOAD, Isolation, ProgressCallback, Sandbox, run_scripts

__all__ = (
    "DEFAULT_PRELOAD",
    "Isolation",
    "ProgressCallback",
    "Sandbox",
    "SandboxLimits",
    "SandboxResult",
    "run_scripts",
)
