"""What a stage function receives, and the progress events the runner emits."""

from __future__ import annotations

import contextlib
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from geo_cli.pipeline._config import PipelineConfig

__all__ = ("Events", "NullEvents", "StageContext", "captured_output")


class Events(Protocol):
    """Receives the runner's progress (the CLI draws it with rich; tests record it)."""

    def stage(self, name: str, action: str, detail: str) -> None:
        """A stage changed state: ``started``, ``resumed``, ``cached``, ``done``, ``disabled``, ``unavailable``..."""
        ...

    def progress(self, name: str, done: int, total: int, what: str) -> None:
        """A stage advanced: ``done`` of ``total`` units of ``what``."""
        ...


class NullEvents:
    """Events that go nowhere."""

    def stage(self, name: str, action: str, detail: str) -> None:
        """Ignore a stage change."""

    def progress(self, name: str, done: int, total: int, what: str) -> None:
        """Ignore progress."""


@dataclass(frozen=True)
class StageContext:
    """Everything a stage function needs."""

    config: PipelineConfig
    """The pipeline config."""
    base: Path
    """The folder the config's relative paths are read from."""
    workdir: Path
    """The pipeline's work folder."""
    folder: Path
    """This stage's output folder."""
    resumed: bool
    """True when the folder holds an unfinished run of the same key (continue it)."""
    upstream: dict[str, Path] = field(default_factory=dict[str, Path])
    """Output folders of the stages this one reads, by stage name."""
    events: Events = field(default_factory=NullEvents)
    """Where progress goes."""


@contextlib.contextmanager
def captured_output(log: Path) -> Generator[None]:
    """Send what libraries print (progress bars, log lines) to ``log`` instead of the terminal."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with (
        log.open("a", encoding="utf-8") as sink,
        contextlib.redirect_stdout(sink),
        contextlib.redirect_stderr(sink),
    ):
        yield
