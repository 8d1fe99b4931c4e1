"""`geo synth`: the formal engine and data synthesis (geosynth).

``geo synth mts DATASET --out DIR`` runs the multi-trace synthesis pipeline (geosynth.mts);
``geo synth mts-stats DIR...`` prints the Table-6 statistics of finished output folders.
``geo synth generate --config CONFIG --n N --out DIR`` synthesizes problems from scratch (geosynth.synth),
``geo synth render RECORDS --out DIR`` draws their diagrams and ``geo synth stats DIR`` summarises a dataset;
``geo synth leaks CORPUS --test SPLIT`` checks that a PGPS-format corpus poses no test problem.
"""

from __future__ import annotations

import json
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer
from rich.console import Console
from rich.table import Table

from geo_cli._errors import EXIT_USER, InputError, err_console, fail, guarded, one_line, validation_summary
from geo_cli._inputs import folder as input_folder
from geo_cli._inputs import read_text, text_file
from geo_cli._progress import stage_progress

if TYPE_CHECKING:
    from geodsl.data import PGPSRecord
    from geosynth.mts import MTSRun
    from geosynth.synth import SynthRecord

app = typer.Typer(help="Commands for the formal engine and data synthesis (geosynth).", no_args_is_help=True)


@app.callback()
def _group() -> None:
    """Group callback: lets the sub-app exist (and show --help) before its first command."""


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
            "CONFIG, or --teacher template). Program and PAL traces were produced.[/]"
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
    teacher: Annotated[
        Literal["template"] | None,
        typer.Option(
            "--teacher",
            help="'template': geosynth's template teacher writes the CoT traces, no LLM (instead of --llm).",
        ),
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
    from geosynth.mts import LLMConfig, MTSConfig, MTSConfigError, MTSInputError, load_llm_config, run_mts

    if teacher is not None and llm is not None:
        fail(f"--teacher {teacher} and --llm both name the CoT teacher: pass one of them", EXIT_USER)

    text_file(dataset, "dataset file")
    if images is not None:
        input_folder(images, "diagram folder")
    try:
        config = MTSConfig(
            jobs=jobs,
            shard_size=shard_size,
            script_timeout=timeout,
            split=split,
            mixtures=mixtures,
            images_dir=images,
            use_ray=ray,
            llm=None if llm is None else load_llm_config(text_file(llm, "LLM config")),
        )
        if teacher == "template":
            config = config.model_copy(update={"llm": LLMConfig.model_validate({"backend": "template"})})
        with stage_progress(err_console) as progress:
            run = run_mts(dataset, out, config, progress=progress)
    except (MTSConfigError, MTSInputError) as exc:
        fail(one_line(exc), EXIT_USER)
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
    """Print dataset statistics (ReTTS-PGPS, Table 6) of MTS output folders."""
    from geosynth.mts import MTSInputError, compute_stats, format_stats_table, format_trace_table

    try:
        stats = [compute_stats(input_folder(f, "MTS output folder")) for f in folders]
    except MTSInputError as exc:
        fail(one_line(exc, with_type=False), EXIT_USER)
    if as_json:
        for s in stats:
            typer.echo(json.dumps(s.model_dump(mode="json"), sort_keys=True))
        return
    header, *rows = format_stats_table(stats)
    table = Table(*header, title="MTS statistics")
    for row in rows:
        table.add_row(*row)
    Console(width=200).print(table)
    header, *rows = format_trace_table(stats)
    per_type = Table(*header, title="Per trace type")
    for row in rows:
        per_type.add_row(*row)
    Console(width=200).print(per_type)


@contextmanager
def _user_errors() -> Generator[None]:
    """Configuration, dataset-folder and missing-module errors of geosynth.synth exit as user errors."""
    from geosynth.synth import DatasetError, SynthConfigError, SynthUnavailableError

    try:
        yield
    except (DatasetError, SynthConfigError, SynthUnavailableError) as exc:
        fail(one_line(exc), EXIT_USER)


@app.command("generate")
@guarded
def generate(
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Dataset folder (an earlier run in it is resumed).")
    ],
    n: Annotated[int, typer.Option("--n", min=1, help="Problems to generate.")] = 100,
    config: Annotated[
        str, typer.Option("--config", "-c", help="Generator config: a YAML file or a bundled name.")
    ] = "default",
    task: Annotated[str, typer.Option("--task", help="calculation or proving.")] = "proving",
    seed: Annotated[int, typer.Option("--seed", help="Run seed (same seed, same files).")] = 0,
    jobs: Annotated[
        int, typer.Option("--jobs", "-j", min=1, help="Worker processes (Ray CPUs with --ray).")
    ] = 1,
    ray: Annotated[bool, typer.Option("--ray", help="Run shards as Ray tasks (needs ray).")] = False,
    shard_size: Annotated[
        int, typer.Option("--shard-size", min=1, help="Records per resumable shard.")
    ] = 100,
    render: Annotated[bool, typer.Option("--render/--no-render", help="Render every diagram.")] = False,
    image_format: Annotated[str, typer.Option("--image-format", help="png or svg.")] = "png",
    pgps: Annotated[
        int,
        typer.Option(
            "--pgps",
            min=0,
            help="Also write up to N PGPS-format problems per calculation figure to OUT/pgps (0: none).",
        ),
    ] = 0,
    pgps_exclude: Annotated[
        list[Path] | None,
        typer.Option(
            "--pgps-exclude",
            help="PGPS-format file (a test split) whose problems the corpus must not pose; repeatable.",
        ),
    ] = None,
) -> None:
    """Synthesize problems from scratch; every one is re-solved by the engine before it is written."""
    from geosynth.synth import dataset_stats, load_config, write_dataset

    if task not in ("calculation", "proving"):
        fail(f"--task must be calculation or proving, got {task!r}")
    if pgps and task != "calculation":
        fail(f"--pgps needs --task calculation (PGPS problems are calculations), got --task {task}")
    exclude = _pgps_files(pgps_exclude or [])
    if config.endswith((".yaml", ".yml")):
        text_file(Path(config), "synthesis config")
    with _user_errors(), stage_progress(err_console) as progress:
        settings = load_config(config)
        made, failed = write_dataset(
            settings,
            n,
            seed,
            out,
            task="calculation" if task == "calculation" else "proving",
            shard_size=shard_size,
            jobs=jobs,
            use_ray=ray,
            render=render,
            image_format=image_format,
            progress=lambda done, total: progress("generate", done, total),
            pgps=pgps,
            pgps_exclude=exclude,
        )
    stats = dataset_stats(out, recheck=False)
    (out / "stats.json").write_text(stats.model_dump_json(indent=2) + "\n", encoding="utf-8")
    left = f"; {len(failed)} records gave up (indices {list(failed)[:10]})" if failed else ""
    typer.echo(f"{stats.records} {task} records in {out} ({made} shards made this run){left}")
    typer.echo(f"goal types: {', '.join(f'{k}={v}' for k, v in stats.goal_types.items())}")
    if pgps:
        corpus = json.loads((out / "pgps" / "stats.json").read_text(encoding="utf-8"))
        typer.echo(
            f"{corpus['problems']} PGPS problems in {out / 'pgps' / 'pgps.json'} "
            f"({corpus['duplicates']} duplicates and {corpus['test_matches']} test problems dropped)"
        )
        typer.echo(f"operator steps per program: {', '.join(f'{k}={v}' for k, v in corpus['steps'].items())}")


@app.command("leaks")
@guarded
def leaks(
    corpus: Annotated[
        Path, typer.Argument(help="PGPS-format file of training problems (e.g. a pipeline's train.json).")
    ],
    test: Annotated[
        list[Path],
        typer.Option("--test", "-t", help="PGPS-format test split the corpus must not pose; repeatable."),
    ],
    as_written: Annotated[
        bool,
        typer.Option(
            "--as-written",
            help="Compare question texts as written, not in any phrasing (the check of corpora of the "
            "plain writing, such as the pgps-v1 preset's).",
        ),
    ] = False,
) -> None:
    """Check that a corpus poses none of the test problems: same statement, or same question relabelled.

    A question matches in any phrasing the generator writes (``Solve for x.`` is ``Find x.``) unless
    ``--as-written``. Prints one JSON line per match (corpus id, test id, test file) and a summary; exits 1
    when any is found.
    """
    from geosynth.synth import find_leaks

    problems = _pgps_files([corpus])
    found = 0
    for path in test:
        for mine, theirs in find_leaks(problems, _pgps_files([path]), as_written=as_written):
            typer.echo(json.dumps({"corpus_id": mine, "test_id": theirs, "test_file": str(path)}))
            found += 1
    sizes = f"{len(problems)} corpus problems against {len(test)} test file(s)"
    if found:
        fail(f"{found} corpus problems pose a test problem ({sizes})", EXIT_USER)
    typer.echo(f"no leaks: {sizes}", err=True)


def _pgps_files(paths: list[Path]) -> list[PGPSRecord]:
    """The records of PGPS-format files; an unreadable one stops with its name and the problem."""
    from geodsl.data import load_pgps
    from geodsl.errors import DataError

    records: list[PGPSRecord] = []
    for path in paths:
        try:
            records.extend(load_pgps(text_file(path, "PGPS file")))
        except DataError as exc:
            raise InputError(one_line(exc, with_type=False)) from None
    return records


@app.command("render")
@guarded
def render(
    records: Annotated[Path, typer.Argument(help="A dataset folder or a JSONL file of synthesized records.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the images.")],
    image_format: Annotated[str, typer.Option("--image-format", help="png or svg.")] = "png",
) -> None:
    """Draw the diagram of every synthesized record (needs the render extra)."""
    from geosynth.engine import Diagram, parse_problem
    from geosynth.synth import read_records, render_diagram, require_renderer

    with _user_errors():
        require_renderer()
        items = read_records(records) if records.is_dir() else _records_file(records)
    if not items:
        raise InputError(f"dataset folder {records} holds no records")
    out.mkdir(parents=True, exist_ok=True)
    for record in items:
        diagram = Diagram(points={p.name: (p.x, p.y) for p in record.points}, attempts=1)
        render_diagram(
            parse_problem(record.problem),
            diagram,
            out / f"{record.id}.{image_format}",
            fmt=image_format,
            seed=record.seed,
            statements=(record.goal, *record.givens),
        )
    typer.echo(f"{len(items)} diagrams written to {out}")


def _records_file(path: Path) -> list[SynthRecord]:
    """The synthesized records of a JSONL file; a line of another kind stops with its line number."""
    from pydantic import ValidationError

    from geosynth.synth import SynthRecord

    items: list[SynthRecord] = []
    for number, line in enumerate(read_text(path, "records file").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            items.append(SynthRecord.model_validate_json(line, strict=False))
        except ValidationError as exc:
            raise InputError(
                f"records file {path} line {number} is not a synthesized record "
                f"(from `geo synth generate`): {validation_summary(exc)}"
            ) from None
    if not items:
        raise InputError(f"records file {path} holds no records (only blank lines)")
    return items


@app.command("stats")
@guarded
def stats(
    folder: Annotated[Path, typer.Argument(help="A dataset folder of `geo synth generate`.")],
    recheck: Annotated[
        bool, typer.Option("--recheck/--no-recheck", help="Re-solve every record with the engine.")
    ] = True,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, help="Worker processes for the re-check.")] = 1,
    as_json: Annotated[bool, typer.Option("--json", help="Print the statistics as JSON.")] = False,
) -> None:
    """Statistics of a synthesized dataset (written to DIR/stats.json)."""
    from geosynth.synth import dataset_stats

    with _user_errors():
        result = dataset_stats(input_folder(folder, "dataset folder"), recheck=recheck, jobs=jobs)
    (folder / "stats.json").write_text(result.model_dump_json(indent=2) + "\n", encoding="utf-8")
    if as_json:
        typer.echo(result.model_dump_json())
        return
    table = Table("statistic", "value", title=f"Synthesized dataset {folder}")
    table.add_row("records", str(result.records))
    table.add_row("tasks", ", ".join(f"{k}={v}" for k, v in result.tasks.items()))
    table.add_row("goal types", ", ".join(f"{k}={v}" for k, v in result.goal_types.items()))
    table.add_row("clauses", ", ".join(f"{k}: {v}" for k, v in result.clauses.items()))
    tokens = result.solution_tokens
    table.add_row("solution tokens", f"mean {tokens.mean}, median {tokens.median}, max {tokens.max}")
    rate = (
        "not re-checked"
        if result.check_rate is None
        else f"{result.checked}/{result.records} ({result.check_rate:.1%})"
    )
    table.add_row("answer check", rate)
    table.add_row(
        f"diversity ({result.text_field})",
        f"unique {result.unique_texts}, distinct 3-grams {result.distinct_ngrams}",
    )
    table.add_row("images", str(result.images))
    if result.calc_crosschecked or result.pgps_programs:
        table.add_row(
            "calc cross-check",
            f"{result.calc_agreed}/{result.calc_crosschecked} agree; {result.pgps_programs} PGPS programs",
        )
    Console(width=160).print(table)


def _mount_aux() -> None:
    from geo_cli.synth_aux import register_aux_commands

    register_aux_commands(app)


_mount_aux()
