"""One rich progress display for the CLI's long jobs (on stderr; silent when it is not a terminal)."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from typing import Protocol

from rich.console import Console


class StageUpdate(Protocol):
    """Reports ``done`` of ``total`` for a stage (one bar per stage), with an optional note beside it."""

    def __call__(self, stage: str, done: int, total: int, note: str = "") -> None: ...


@contextmanager
def stage_progress(console: Console) -> Generator[StageUpdate]:
    """A bar per stage, fed by the callback it yields (the shape the pipelines' ``progress=`` expects)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description:<12}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[note]}"),
        console=console,
        disable=not console.is_terminal,
        transient=False,
    ) as bar:
        tasks: dict[str, TaskID] = {}

        def update(stage: str, done: int, total: int, note: str = "") -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total, note=note)
            bar.update(tasks[stage], completed=done, total=total, note=note)

        yield update
