"""``geo dsl``: execute, translate, sandbox-run and check PGPS solution programs.

Batch commands read JSON Lines (``-`` is stdin) and write exactly one JSON line
per input line, in input order; a bad record gets a one-line ``error`` and the
rest of the batch still runs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Annotated, Any

import typer

from geo_cli._errors import guarded
from geo_cli._inputs import text_file
from geo_cli._jsonl import Line, emit, input_lines

app = typer.Typer(help="Commands for the PGPS program language (geodsl).", no_args_is_help=True)

InputArg = Annotated[str, typer.Argument(help="JSON Lines file, or - for standard input.")]


def _program_request(line: Line) -> tuple[str, list[str]]:
    """Validate an ``{"id", "program", "numbers"}`` record; raise ValueError naming the bad field."""
    record = line.fields
    program = record.get("program")
    if not isinstance(program, str):
        raise ValueError(f"line {line.number}: 'program' must be a string, got {type(program).__name__}")
    numbers = record.get("numbers", [])
    if not isinstance(numbers, list):
        raise ValueError(f"line {line.number}: 'numbers' must be a list, got {type(numbers).__name__}")
    out: list[str] = []
    for i, value in enumerate(numbers):
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ValueError(f"line {line.number}: numbers[{i}] must be a string or a number, got {value!r}")
        out.append(value if isinstance(value, str) else repr(value))
    return program, out


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _exec_one(line: Line) -> dict[str, Any]:
    import geodsl

    if line.error is not None:
        return {"id": None, "answer": None, "error": line.error}
    try:
        program, numbers = _program_request(line)
        answer = geodsl.execute(program, numbers).answer
    except (geodsl.GeoDSLError, ValueError) as exc:
        return {"id": line.id, "answer": None, "error": _one_line(exc)}
    return {"id": line.id, "answer": answer, "error": None}


def _pal_one(line: Line) -> dict[str, Any]:
    import geodsl

    if line.error is not None:
        return {"id": None, "script": None, "error": line.error}
    try:
        program, numbers = _program_request(line)
        script = geodsl.to_pal(program, numbers)
    except (geodsl.GeoDSLError, ValueError) as exc:
        return {"id": line.id, "script": None, "error": _one_line(exc)}
    return {"id": line.id, "script": script, "error": None}


@app.command("exec")
@guarded
def exec_(path: InputArg) -> None:
    """Execute programs: input lines {"id", "program", "numbers"}; output {"id", "answer", "error"}."""
    for line in input_lines(path):
        emit(_exec_one(line))


@app.command("pal")
@guarded
def pal(path: InputArg) -> None:
    """Translate programs to PAL SymPy scripts: input as for exec; output {"id", "script", "error"}."""
    for line in input_lines(path):
        emit(_pal_one(line))


def _chunks(lines: Iterator[Line], size: int) -> Iterator[list[Line]]:
    while chunk := list(islice(lines, size)):
        yield chunk


def _script_of(line: Line) -> str | None:
    if line.record is None:
        return None
    script = line.record.get("script")
    return script if isinstance(script, str) else None


def _run_chunk(sandbox: Any, chunk: Sequence[Line]) -> Iterator[dict[str, Any]]:
    scripts = [s for s in (_script_of(line) for line in chunk) if s is not None]
    results = iter(sandbox.run(scripts)) if scripts else iter(())
    for line in chunk:
        if line.error is not None:
            yield {"id": None, "answer": None, "stdout": "", "error": line.error, "seconds": 0.0}
        elif _script_of(line) is None:
            yield {
                "id": line.id,
                "answer": None,
                "stdout": "",
                "seconds": 0.0,
                "error": f"line {line.number}: 'script' must be a string",
            }
        else:
            r = next(results)
            yield {
                "id": line.id,
                "answer": r.answer,
                "stdout": r.stdout,
                "error": r.error,
                "seconds": r.seconds,
            }


@app.command("run")
@guarded
def run(
    path: InputArg,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, help="Sandbox worker processes.")] = 2,
    timeout: Annotated[float, typer.Option(min=0.1, help="Wall-clock limit per script, seconds.")] = 10.0,
    memory_mb: Annotated[int, typer.Option(min=64, help="Memory cap per script, MiB.")] = 1024,
) -> None:
    """Run untrusted Python scripts in the sandbox: input {"id", "script"}; output {"id", "answer", "stdout", "error", "seconds"}."""
    from geodsl.sandbox import Sandbox, SandboxLimits

    limits = SandboxLimits(wall_seconds=timeout, cpu_seconds=timeout, memory_mb=memory_mb)
    with Sandbox(workers=jobs, limits=limits) as sandbox:
        for chunk in _chunks(input_lines(path), 64):
            for out in _run_chunk(sandbox, chunk):
                emit(out)


@app.command("check")
@guarded
def check(
    dataset: Annotated[
        Path | None,
        typer.Argument(
            help="PGPS-format annotation JSON (e.g. PGPS9K test.json). Default: the bundled sample."
        ),
    ] = None,
    show: Annotated[int, typer.Option(help="How many disagreements to list.")] = 50,
) -> None:
    """Execute every program of a PGPS-format dataset against its stored answer and summarise."""
    from rich.console import Console
    from rich.table import Table

    from geodsl import data

    if dataset is not None:
        text_file(dataset, "dataset file")
    records = data.load_pgps(dataset) if dataset is not None else data.load_sample()
    report = data.check_dataset(records)
    console = Console()
    table = Table(title=f"geo dsl check: {dataset or 'bundled sample'}")
    for col in ("programs", "agree", "disagree", "error", "agreement"):
        table.add_column(col, justify="right")
    table.add_row(
        str(report.total),
        str(report.agree),
        str(report.disagree),
        str(report.error + report.crash),
        f"{report.agreement:.2%}",
    )
    console.print(table)
    for miss in report.misses[:show]:
        got = "-" if miss.got is None else f"{miss.got:.3f}"
        console.print(
            f"  {miss.id}: expected {miss.expected}, got {got}" + (f" ({miss.error})" if miss.error else ""),
            highlight=False,
            markup=False,
        )
