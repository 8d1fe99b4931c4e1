"""``geo pipeline``: run, inspect and check config-driven pipelines (data -> mts -> train -> aux_search -> evaluate -> report).

CONFIG is a YAML file or the name of a shipped preset (``cpu``, ``paper-pa-sft-qwen3vl8b``...).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from geo_cli._errors import EXIT_RUNTIME, EXIT_USER, error_boundary, fail, one_line

app = typer.Typer(
    help="Config-driven pipelines: data -> mts -> train -> aux_search -> evaluate -> report.",
    no_args_is_help=True,
)

P = ParamSpec("P")
R = TypeVar("R")

ConfigArg = Annotated[str, typer.Argument(help="Pipeline config (YAML file) or a shipped preset name.")]
WorkdirOpt = Annotated[
    Path | None,
    typer.Option("--workdir", "-w", help="Work folder (default: the config's, else runs/<name>)."),
]


def _guarded(fn: Callable[P, R]) -> Callable[P, R]:
    """Pipeline errors become a red one-line message: exit 1 for config/order errors, 3 for a failed stage."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        from geo_cli.pipeline import PipelineError, StageFailedError

        try:
            with error_boundary():
                return fn(*args, **kwargs)
        except PipelineError as exc:
            fail(
                one_line(exc, with_type=False),
                EXIT_RUNTIME if isinstance(exc, StageFailedError) else EXIT_USER,
            )

    return wrapper


class _RichEvents:
    """Draws stage changes as lines and stage progress as rich bars."""

    def __init__(self, progress: Progress) -> None:
        self.bars = progress
        self.tasks: dict[tuple[str, str], TaskID] = {}

    def stage(self, name: str, action: str, detail: str) -> None:
        colour = {
            "ran": "green",
            "resumed": "green",
            "cached": "cyan",
            "unavailable": "yellow",
            "blocked": "yellow",
        }
        text = f"[bold]{name}[/]: [{colour.get(action, 'white')}]{action}[/]" + (
            f" ({detail})" if detail else ""
        )
        self.bars.console.print(text, highlight=False, soft_wrap=True)

    def progress(self, name: str, done: int, total: int, what: str) -> None:
        key = (name, what)
        if key not in self.tasks:
            self.tasks[key] = self.bars.add_task(f"{name}: {what}", total=max(total, 1))
        self.bars.update(self.tasks[key], completed=done, total=max(total, 1))


@app.command("run")
@_guarded
def run(
    config: ConfigArg,
    start: Annotated[
        str | None, typer.Option("--from", help="Rerun from this stage (earlier stages must be done).")
    ] = None,
    until: Annotated[str | None, typer.Option("--until", help="Stop after this stage.")] = None,
    workdir: WorkdirOpt = None,
) -> None:
    """Run the pipeline; stages whose inputs did not change are skipped, interrupted ones resume."""
    from geo_cli.pipeline import load_pipeline_config, run_pipeline, workdir_of

    console = Console(file=sys.stdout)
    cfg, base = load_pipeline_config(config)
    folder = workdir_of(cfg, base, workdir)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    try:
        with Progress(*columns, console=console, transient=False) as progress:
            outcomes = run_pipeline(cfg, base, folder, start=start, until=until, events=_RichEvents(progress))
    except KeyboardInterrupt:
        console.print(
            "[yellow]interrupted[/]: finished work is kept; run the same command again to resume",
            soft_wrap=True,
        )
        raise typer.Exit(code=130) from None
    table = Table(title=f"pipeline {cfg.name} in {folder}")
    for column in ("stage", "action", "seconds", "detail"):
        table.add_column(column)
    for o in outcomes:
        table.add_row(o.name, o.action, f"{o.seconds:.1f}" if o.seconds else "", o.detail)
    console.print(table)
    report = folder / "report" / "index.html"
    if report.is_file():
        console.print(f"report: {report}", highlight=False, soft_wrap=True)


@app.command("status")
@_guarded
def status(config: ConfigArg, workdir: WorkdirOpt = None) -> None:
    """Show which stages are done, stale, interrupted, missing, disabled or not available."""
    from geo_cli.pipeline import load_pipeline_config, pipeline_status, workdir_of

    cfg, base = load_pipeline_config(config)
    folder = workdir_of(cfg, base, workdir)
    table = Table(title=f"pipeline {cfg.name} in {folder}")
    for column in ("stage", "status", "key", "detail"):
        table.add_column(column)
    for s in pipeline_status(cfg, base, folder):
        table.add_row(s.name, s.status, s.key, s.detail)
    Console(file=sys.stdout).print(table)


@app.command("check")
@_guarded
def check(config: ConfigArg) -> None:
    """Validate a config without running it; say what hardware it needs and which stages can run here.

    Exits 0 when the run can start here, 1 when it cannot (or the config is invalid).
    """
    from geo_cli.pipeline import check_pipeline, load_pipeline_config

    cfg, base = load_pipeline_config(config)
    report = check_pipeline(cfg, base)
    console = Console(file=sys.stdout, soft_wrap=True)
    console.print(f"[bold]{cfg.name}[/]: config valid", highlight=False)
    console.print(
        f"needs: {report.hardware} ({report.gpus_needed} GPUs; {report.gpus_here} here)", highlight=False
    )
    for s in report.stages:
        console.print(f"  {s.name}: {s.state}" + (f" ({s.detail})" if s.detail else ""), highlight=False)
    for path in report.missing_inputs:
        console.print(f"  missing input: {path}", highlight=False)
    verdict = "runnable here" if report.runnable_here else "not runnable here as is"
    console.print(f"{verdict}", highlight=False)
    if not report.runnable_here:
        raise typer.Exit(code=EXIT_USER)
