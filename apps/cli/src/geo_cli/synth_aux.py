"""`geo synth aux-data` and `geo synth aux-search`: auxiliary-construction data and the proposer search.

``aux-data`` writes problems whose proofs need auxiliary constructions, with those constructions
(mined from random construction sequences, or split off the problems of a file), and optionally the
chat records for training a proposer. ``aux-search`` runs the engine-checked beam search over
constructions proposed by a model (a local transformers folder or an OpenAI-compatible server) or by
plain enumeration of standard constructions. Mount with :func:`register_aux_commands` (or add
:data:`app` as a sub-app).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from geo_cli._errors import EXIT_USER, InputError, err_console, fail, guarded, one_line, report
from geo_cli._inputs import problem_entries, problem_lines
from geo_cli._progress import stage_progress

if TYPE_CHECKING:
    from geosynth import Problem
    from geosynth.synth import AuxExample
    from geotts import Sampler

app = typer.Typer(help="Auxiliary-construction data and search (geosynth).", no_args_is_help=True)


@app.callback()
def _group() -> None:
    """Group callback: lets the sub-app exist (and show --help) before its first command."""


def _split_file(path: Path, seed: int, time_limit: float, strict: bool) -> tuple[list[AuxExample], str]:
    """The examples split off the problems of ``path``, and what became of the others.

    A problem that does not parse, has no goal or makes the engine fail is reported on stderr (one line
    each) and the rest go on; when no problem could be used at all the command fails.
    """
    from geosynth import GeoSynthError, parse_problem, proof_steps, solve_one
    from geosynth.synth import split_auxiliary

    lines = problem_entries(path)
    examples: list[AuxExample] = []
    failed = unproved = 0
    for entry in lines:
        name = entry.name
        try:
            if entry.error is not None:
                raise InputError(entry.error)
            problem = parse_problem(entry.line, name)
            if problem.goal is None:
                raise InputError("it has no goal (add '? predicate points')")
            result, deduction = solve_one(problem, seed=seed, time_limit=time_limit)
            if not result.solved:
                unproved += 1
                continue
            example = split_auxiliary(
                problem, proof_steps(problem, deduction), seed=seed, time_limit=time_limit, strict=strict
            )
        except (GeoSynthError, InputError) as err:
            report(f"problem file {path}: problem {name!r}: {one_line(err)}")
            failed += 1
            continue
        if example is not None:
            examples.append(example)
    if failed == len(lines):
        fail(f"problem file {path}: none of its {failed} problems could be used (see above)", EXIT_USER)
    note = f"{len(lines)} problems: {unproved} not proved in {time_limit:g}s, {failed} failed"
    return examples, note


@app.command("aux-data")
@guarded
def aux_data(
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Examples as JSON lines (name, problem, auxiliary).")
    ],
    n: Annotated[int, typer.Option("--n", min=1, help="Examples to mine from random sequences.")] = 10,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random sequences and diagrams.")] = 0,
    from_file: Annotated[
        Path | None, typer.Option("--from-file", help="Split the problems of this JGEX file instead.")
    ] = None,
    records: Annotated[
        Path | None, typer.Option("--records", help="Also write geotrain chat records (JSON lines) here.")
    ] = None,
    stepwise: Annotated[
        bool, typer.Option("--stepwise/--whole", help="One record per clause, or one with every clause.")
    ] = True,
    max_sequences: Annotated[
        int | None,
        typer.Option("--max-sequences", min=1, help="Random sequences tried (default 50 per example)."),
    ] = None,
    time_limit: Annotated[
        float, typer.Option("--time-limit", min=0.1, help="Seconds per engine check.")
    ] = 5.0,
    jobs: Annotated[int, typer.Option("--jobs", min=1, help="Worker processes for mining.")] = 1,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="Keep only examples the engine cannot prove without their auxiliary clauses (rare).",
        ),
    ] = False,
) -> None:
    """Write auxiliary-construction examples: a reduced problem and the clauses its proof uses."""
    from geosynth import GeoSynthError
    from geosynth.synth import AuxGenConfig, write_aux_examples, write_aux_records

    note = ""
    if from_file is not None:
        examples, note = _split_file(from_file, seed, time_limit, strict)
        out.write_text("".join(f"{e.model_dump_json()}\n" for e in examples), encoding="utf-8")
    else:
        config = AuxGenConfig(check_time_limit=time_limit, max_sequences=max_sequences, strict=strict)
        try:
            with stage_progress(err_console) as update:
                examples = write_aux_examples(
                    out, n, seed, config, jobs=jobs,
                    progress=lambda done, total, found: update("mining", done, total, f"{found} examples"),
                )  # fmt: skip
        except GeoSynthError as err:
            fail(one_line(err, with_type=False), EXIT_USER)
    message = f"{len(examples)} examples -> {out}"
    if records is not None:
        count = write_aux_records(examples, records, stepwise=stepwise)
        message += f"; {count} chat records -> {records}"
    typer.echo(message + (f" (of {note})" if note else ""))


def _proposer(backend: str, model: str | None, url: str | None, device: str) -> Sampler:
    from geosynth.synth import EnumerationProposer

    if backend == "enumerate":
        return EnumerationProposer()
    if model is None:
        fail(f"--backend {backend} needs --model (a model folder, or the server's model name)", EXIT_USER)
    if backend == "transformers":
        from geotts.backends.transformers import TransformersSampler

        return TransformersSampler.from_pretrained(model, device=device)
    if backend == "openai":
        if url is None:
            fail("--backend openai needs --url (e.g. http://127.0.0.1:8000/v1)", EXIT_USER)
        from geotts.backends.openai import OpenAICompatibleSampler

        return OpenAICompatibleSampler(url, model)
    fail(f"unknown backend {backend!r}; choose transformers, openai or enumerate", EXIT_USER)


def _problems(problem: str | None, file: Path | None) -> list[Problem]:
    from geosynth import ProblemSyntaxError, parse_problem

    if problem is not None and file is None:
        return [parse_problem(problem)]
    if file is None or problem is not None:
        fail("give either a PROBLEM line or --file", EXIT_USER)
    problems: list[Problem] = []
    for name, line in problem_lines(file):
        try:
            problems.append(parse_problem(line, name))
        except ProblemSyntaxError as err:
            raise InputError(f"problem file {file}: problem {name!r}: {one_line(err)}") from None
    return problems


@app.command("aux-search")
@guarded
def aux_search_command(
    problem: Annotated[str | None, typer.Argument(help="One problem line with a goal.")] = None,
    file: Annotated[Path | None, typer.Option("--file", help="A JGEX problem file instead.")] = None,
    backend: Annotated[
        str, typer.Option("--backend", help="transformers (model folder), openai (server) or enumerate.")
    ] = "transformers",
    model: Annotated[
        str | None, typer.Option("--model", help="Model folder, or the server's model name.")
    ] = None,
    url: Annotated[
        str | None, typer.Option("--url", help="OpenAI-compatible server root (with /v1).")
    ] = None,
    device: Annotated[str, typer.Option("--device", help="Torch device for --backend transformers.")] = "cpu",
    branching: Annotated[int, typer.Option("--branching", min=1, help="Proposals kept per node.")] = 32,
    beam: Annotated[int, typer.Option("--beam", min=1, help="Nodes kept per level.")] = 128,
    depth: Annotated[int, typer.Option("--depth", min=1, help="Most constructions added.")] = 4,
    time_limit: Annotated[
        float | None, typer.Option("--time-limit", min=0.1, help="Seconds per problem (default: none).")
    ] = None,
    node_limit: Annotated[
        float, typer.Option("--node-limit", min=0.1, help="Seconds of deduction per node.")
    ] = 5.0,
    temperature: Annotated[float, typer.Option("--temperature", min=0.0, help="Sampling temperature.")] = 1.0,
    max_tokens: Annotated[int, typer.Option("--max-tokens", min=1, help="Tokens per proposal.")] = 48,
    seed: Annotated[int, typer.Option("--seed", help="Seed of diagrams and sampling.")] = 0,
) -> None:
    """Search for auxiliary constructions that let the engine prove each goal; one JSON line per problem."""
    from geosynth.synth import aux_search
    from geotts import SamplingParams

    problems = _problems(problem, file)
    if missing := [p.name or p.text() for p in problems if p.goal is None]:
        fail(f"problem has no goal (add '? predicate points'): {missing[0]}", EXIT_USER)
    proposer = _proposer(backend, model, url, device)
    params = SamplingParams(temperature=temperature, max_tokens=max_tokens, seed=seed)
    for item in problems:
        result = aux_search(
            item, proposer, branching=branching, beam=beam, depth=depth, time_limit=time_limit,
            node_time_limit=node_limit, seed=seed, params=params,
        )  # fmt: skip
        row = {"name": item.name, **result.model_dump(exclude={"rejected", "proof"})}
        row["seconds"] = round(result.seconds, 3)
        typer.echo(json.dumps(row))


def register_aux_commands(target: typer.Typer) -> None:
    """Add ``aux-data`` and ``aux-search`` to another Typer app (e.g. ``geo synth``)."""
    target.command("aux-data")(aux_data)
    target.command("aux-search")(aux_search_command)
