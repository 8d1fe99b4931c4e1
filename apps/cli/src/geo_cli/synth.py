"""`geo synth`: the formal engine and data synthesis (geosynth).

``geo synth mts DATASET --out DIR`` runs the multi-trace synthesis pipeline (geosynth.mts);
``geo synth mts-stats DIR...`` prints the Table-6 statistics of finished output folders.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from geo_cli._errors import EXIT_USER, err_console, fail, guarded

if TYPE_CHECKING:
    from geosynth.mts import MTSRun

app = typer.Typer(help="Commands for the formal engine and data synthesis (geosynth).", no_args_is_help=True)


@app.callback()
def _group() -> None:
    """Group callback: lets the sub-app exist (and show --help) before its first command."""


@contextmanager
def _progress(console: Console) -> Generator[Callable[[str, int, int], None]]:
    """A rich progress display fed by the pipeline's callback; silent when stderr is not a terminal."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description:<12}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=not console.is_terminal,
        transient=False,
    ) as bar:
        tasks: dict[str, TaskID] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done)

        yield update


def _report(run: MTSRun) -> None:
    s = run.stats
    typer.echo(
        f"{s.dataset} ({s.split}): {s.problems} of {s.records} records usable; "
        f"traces {', '.join(f'{k}={v}' for k, v in s.traces.items())}; #MTS={s.mts}, #MTS-All={s.mts_all}"
    )
    typer.echo(
        f"PAL verified {s.pal_verified}, failed {s.pal_failed}; drops: "
        f"{', '.join(f'{k}={v}' for k, v in s.drops.items()) or 'none'} (see {run.out / 'drops.jsonl'})"
    )
    reused = sum(run.reused.values())
    if reused:
        typer.echo(f"resumed: {reused} stage shards reused, {sum(run.computed.values())} computed")
    if run.cot_skipped:
        err_console.print(
            "[yellow]CoT-PAL and CoT-Program traces were skipped: no LLM configured (pass --llm "
            "CONFIG). Program and PAL traces were produced.[/]"
        )
    else:
        by_pass = ", ".join(f"pass {k}: {v}" for k, v in s.cot_pal_by_pass.items()) or "none"
        typer.echo(
            f"CoT-PAL verified by {by_pass}; gave up on {s.cot_pal_failed}; "
            f"CoT-Program mismatches {s.cot_program_mismatched}"
        )
    if run.images_missing:
        err_console.print(
            f"[yellow]{run.images_missing} diagrams named by the records were not found in --images[/]"
        )


@app.command("mts")
@guarded
def mts(
    dataset: Annotated[
        Path, typer.Argument(help="PGPS-format dataset (keyed JSON object, JSON list or JSON Lines).")
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Output folder (an earlier run in it is resumed).")
    ],
    llm: Annotated[
        Path | None, typer.Option("--llm", help="LLM config (JSON/YAML) for the CoT traces.")
    ] = None,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, help="Sandbox workers.")] = 2,
    images: Annotated[Path | None, typer.Option("--images", help="Folder with the diagrams to copy.")] = None,
    ray: Annotated[
        bool,
        typer.Option(
            "--ray", help="Run verification on Ray actors and LLM requests as Ray tasks (needs ray)."
        ),
    ] = False,
    shard_size: Annotated[
        int, typer.Option("--shard-size", min=1, help="Problems per resumable shard.")
    ] = 100,
    split: Annotated[str | None, typer.Option("--split", help="Split name for the statistics.")] = None,
    timeout: Annotated[float, typer.Option("--timeout", min=0.1, help="Seconds per script.")] = 30.0,
    mixtures: Annotated[
        bool, typer.Option("--mixtures/--no-mixtures", help="Write the ablation mixtures.")
    ] = True,
) -> None:
    """Synthesize verified multi-trace data and PA training records from a PGPS-format dataset."""
    from geosynth.mts import MTSConfig, MTSConfigError, MTSInputError, load_llm_config, run_mts

    try:
        config = MTSConfig(
            jobs=jobs,
            shard_size=shard_size,
            script_timeout=timeout,
            split=split,
            mixtures=mixtures,
            images_dir=images,
            use_ray=ray,
            llm=None if llm is None else load_llm_config(llm),
        )
        with _progress(err_console) as progress:
            run = run_mts(dataset, out, config, progress=progress)
    except (MTSConfigError, MTSInputError) as exc:
        fail(f"{type(exc).__name__}: {exc}", EXIT_USER)
    _report(run)


@app.command("mts-stats")
@guarded
def mts_stats(
    folders: Annotated[
        list[Path], typer.Argument(help="Output folders of `geo synth mts` (e.g. train and test).")
    ],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object per folder instead of a table.")
    ] = False,
) -> None:
    """Print dataset statistics (seed 000, Table 6) of MTS output folders."""
    from geosynth.mts import MTSInputError, compute_stats, format_stats_table

    try:
        stats = [compute_stats(f) for f in folders]
    except MTSInputError as exc:
        fail(str(exc), EXIT_USER)
    if as_json:
        for s in stats:
            typer.echo(json.dumps(s.model_dump(mode="json"), sort_keys=True))
        return
    header, *rows = format_stats_table(stats)
    table = Table(*header, title="MTS statistics")
    for row in rows:
        table.add_row(*row)
    Console(width=200).print(table)
