"""The sandbox's boundary models: limits in, results out."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SandboxLimits(BaseModel):
    """Resource limits applied to every script (each script gets its own fresh budget)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    wall_seconds: float = Field(default=10.0, gt=0, le=3600)
    """Wall-clock limit; the supervisor kills the script's process group when it passes."""
    cpu_seconds: float = Field(default=10.0, gt=0, le=3600)
    """CPU-time limit (RLIMIT_CPU, rounded up to whole seconds by the kernel)."""
    memory_mb: int = Field(default=1024, ge=64, le=1 << 20)
    """Address-space cap in MiB (RLIMIT_AS). It includes the ~150-300 MiB of the preloaded interpreter."""
    max_output_bytes: int = Field(default=1_000_000, ge=1, le=1 << 30)
    """Most bytes a script may write to stdout and stderr together; more stops it with an error."""
    max_file_bytes: int = Field(default=10_000_000, ge=0, le=1 << 34)
    """Largest file a script may write in its scratch directory (RLIMIT_FSIZE)."""
    max_open_files: int = Field(default=64, ge=16, le=65536)
    """Most file descriptors a script may hold at once (RLIMIT_NOFILE)."""

    def wire(self) -> dict[str, float | int]:
        """The limits as the plain dict the worker protocol carries."""
        return self.model_dump()


class SandboxResult(BaseModel):
    """What one script did."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    stdout: str
    """Everything the script wrote to file descriptor 1 (``print``, ``sys.stdout``, ``os.write(1, ...)``), capped."""
    stderr: str = ""
    """What the script wrote to file descriptor 2 (warnings), capped at 64 KiB."""
    answer: float | None
    """The last number printed, read by :func:`geodsl.answers.answer_from_output`; ``None`` if none."""
    error: str | None
    """One line saying why the script failed (``"timeout after 10.0 s"``, ``"MemoryError"``,
    ``"blocked: subprocess (subprocess.Popen)"``, ``"ZeroDivisionError: division by zero"``,
    ``"no number in the output"``), or ``None`` when it finished normally and printed a number."""
    seconds: float
    """Wall-clock seconds from fork to exit."""
    cpu_seconds: float = 0.0
    """CPU seconds the script's process used."""
    exit_status: int | None
    """Exit code of the script's process, ``-N`` when killed by signal N, ``None`` if it never ran."""

    @property
    def ok(self) -> bool:
        """Whether the script finished normally and printed a number."""
        return self.error is None
