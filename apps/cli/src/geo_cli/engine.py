"""`geo engine`: the formal geometry engine (geosynth) on problem files and single problems.

``geo engine solve FILE`` writes one JSON line per problem in input order; ``geo engine prove "LINE"``
prints the numbered derivation of one problem's goal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from geo_cli._errors import EXIT_USER, fail, guarded

app = typer.Typer(
    help="The formal geometry engine (geosynth): solve benchmark files, print proofs.", no_args_is_help=True
)


@app.callback()
def _group() -> None:
    """Group callback: lets the sub-app exist (and show --help) before its first command."""


@app.command("solve")
@guarded
def solve(
    file: Annotated[Path, typer.Argument(help="AlphaGeometry/JGEX problem file (name line, problem line).")],
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.1, help="Seconds per problem (hard limit).")
    ] = 60.0,
    jobs: Annotated[int, typer.Option("--jobs", min=1, help="Problems solved in parallel.")] = 1,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the diagram realiser.")] = 0,
) -> None:
    """Solve every problem of FILE; one JSON line per problem: name, solved, answer, seconds, steps."""
    from geosynth import load_problems, solve_all

    if not file.is_file():
        fail(f"no such problem file: {file}", EXIT_USER)
    problems = load_problems(file)
    for result in solve_all(problems, timeout=timeout, jobs=jobs, seed=seed):
        row = result.model_dump(include={"name", "solved", "answer", "seconds", "steps"})
        row["seconds"] = round(result.seconds, 3)
        if result.timed_out:
            row["timed_out"] = True
        if result.error is not None:
            row["error"] = result.error
        typer.echo(json.dumps(row))


@app.command("prove")
@guarded
def prove(
    problem: Annotated[
        str, typer.Argument(help='One problem line, e.g. "a b c = triangle a b c; ... ? para d e b c".')
    ],
    timeout: Annotated[float, typer.Option("--timeout", min=0.1, help="Seconds of search.")] = 60.0,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the diagram realiser.")] = 0,
) -> None:
    """Print the derivation of the goal: numbered facts with their rule and premises, givens first."""
    from geosynth import ProblemSyntaxError, format_proof, parse_problem, proof_steps, solve_one

    try:
        parsed = parse_problem(problem)
    except ProblemSyntaxError as err:
        fail(f"{type(err).__name__}: {err}", EXIT_USER)
    if parsed.goal is None:
        fail("the problem has no goal (add '? predicate points')", EXIT_USER)
    result, deduction = solve_one(parsed, seed=seed, time_limit=timeout)
    if not result.solved:
        typer.echo(f"not proved ({len(deduction.derivations)} facts derived in {result.seconds:.2f}s)")
        raise typer.Exit(code=1)
    typer.echo(format_proof(proof_steps(parsed, deduction)))
