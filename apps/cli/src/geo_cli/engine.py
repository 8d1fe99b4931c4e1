"""`geo engine`: the formal geometry engine (geosynth) on problem files and single problems.

``geo engine solve FILE`` writes one JSON line per problem in input order (and, with ``--proofs``, one
proof per solved problem to a JSON-lines file); ``geo engine prove "LINE"`` prints the proof of one
problem's goal (textbook form, ``--raw`` for the numbered derivation, ``--json`` for data);
``geo engine check PROOFS.jsonl`` replays every proof of such a file, step by step.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from geo_cli._errors import EXIT_USER, InputError, fail, guarded, one_line
from geo_cli._inputs import problem_entries, read_text, text_file

if TYPE_CHECKING:
    from geosynth import Problem, SolveResult
    from geosynth.engine import Dialect, Proof

app = typer.Typer(
    help="The formal geometry engine (geosynth): solve benchmark files, print proofs.", no_args_is_help=True
)


@app.callback()
def _group() -> None:
    """Group callback: lets the sub-app exist (and show --help) before its first command."""


def _solve_calculations(path: Path, timeout: float, jobs: int) -> Iterator[SolveResult]:
    """Calculation records in input order; a record that does not parse yields an error result in its place."""
    from geosynth import SolveResult
    from geosynth.calc import CalcProblem, read_calc_problems, solve_calc_all

    entries = list(read_calc_problems(path))
    good = [item for _, item in entries if isinstance(item, CalcProblem)]
    solved = solve_calc_all(good, timeout=timeout, jobs=jobs)
    for name, item in entries:
        if isinstance(item, CalcProblem):
            yield next(solved)
        else:
            yield SolveResult(name=name, solved=False, seconds=0.0, steps=0, error=str(item))


def _solve_proving(
    path: Path,
    timeout: float,
    jobs: int,
    seed: int,
    aux: float | None = None,
    dialect: Dialect = "alphageometry",
) -> Iterator[SolveResult]:
    """Proving problems in input order; a problem that does not parse yields an error result in its place.

    With ``aux``, each problem plain deduction does not prove gets up to ``aux`` seconds of auxiliary
    search (``geosynth.synth.solve_all_with_aux``). Lines in Newclid's dialect are rewritten first.
    """
    from geosynth import GeoSynthError, SolveResult, parse_problem, solve_all
    from geosynth.engine import from_dialect
    from geosynth.synth import solve_all_with_aux

    entries: list[tuple[str, Problem | str]] = []
    for entry in problem_entries(path):
        if entry.error is not None:
            entries.append((entry.name, f"InputError: {entry.error}"))
            continue
        try:
            entries.append((entry.name, parse_problem(from_dialect(entry.line, dialect), entry.name)))
        except GeoSynthError as err:
            entries.append((entry.name, f"{type(err).__name__}: {err}"))
    good = [item for _, item in entries if not isinstance(item, str)]
    if aux is None:
        solved = solve_all(good, timeout=timeout, jobs=jobs, seed=seed)
    else:
        solved = solve_all_with_aux(good, aux, timeout=timeout, jobs=jobs, seed=seed)
    for name, item in entries:
        if isinstance(item, str):
            yield SolveResult(name=name, solved=False, seconds=0.0, steps=0, error=item)
        else:
            yield next(solved)


def _is_calc_file(file: Path) -> bool:
    """Whether the file holds calculation records (JSON); a JGEX file is read line by line later.

    A JSON file must be UTF-8 throughout; a JGEX file need not be: a problem line that is not gets its
    own error row.
    """
    from geosynth.calc import is_calc_source

    return file.suffix in (".json", ".jsonl") and is_calc_source(text_file(file, "problem file"))


@app.command("solve")
@guarded
def solve(
    file: Annotated[
        Path,
        typer.Argument(
            help="JGEX problem file (name line, problem line), or calculation records (Geometry3K folder, .json, .jsonl)."
        ),
    ],
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.1, help="Seconds per problem (hard limit).")
    ] = 60.0,
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs",
            min=1,
            help="Worker processes: problems solved in parallel; with --aux, also the parts of one problem's search.",
        ),
    ] = 1,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the diagram realiser.")] = 0,
    proofs: Annotated[
        Path | None,
        typer.Option("--proofs", help="Write one proof per solved problem to this JSON-lines file."),
    ] = None,
    aux: Annotated[
        float | None,
        typer.Option(
            "--aux",
            min=0.1,
            help="Seconds of auxiliary-construction search per proving problem that plain deduction does not "
            'prove; each line gains "aux": the clauses added.',
        ),
    ] = None,
    dialect: Annotated[
        str,
        typer.Option(
            "--dialect",
            help="Whose construction definitions a proving file is written against: alphageometry, or newclid "
            "(Newclid's problem files: its parallelogram, square and iso_trapezoid argument orders, its angles).",
        ),
    ] = "alphageometry",
) -> None:
    """Solve every problem of FILE; one JSON line per problem: name, solved, answer, seconds, steps.

    FILE is an AlphaGeometry/JGEX text file (proving problems), or calculation problems: a formal Geometry3K
    folder, one ``.json`` record or a ``.jsonl`` file of records (ours or Geometry3K's); angle answers are in
    degrees. A malformed calculation record gets its own error line and the batch goes on. With ``--aux``
    (proving problems only) every line also has ``aux``: the auxiliary clauses the proof added, ``[]`` when
    none were needed or none was found.
    """
    from geosynth.calc import is_calc_source
    from geosynth.engine import DIALECTS

    if dialect not in DIALECTS:
        raise InputError(f"--dialect {dialect!r}: expected one of {', '.join(DIALECTS)}")
    if aux is not None and (file.is_dir() or _is_calc_file(file)):
        raise InputError(
            f"--aux searches auxiliary constructions for proving problems; {file} holds calculation records"
        )
    if file.is_dir():
        if not is_calc_source(file):
            raise InputError(
                f"problem folder {file} holds no calculation records (*.json files with goal and conditions)"
            )
        results = _solve_calculations(file, timeout, jobs)
    elif _is_calc_file(file):
        results = _solve_calculations(file, timeout, jobs)
    else:
        results = _solve_proving(file, timeout, jobs, seed, aux, dialect)
    sink = None if proofs is None else proofs.open("w", encoding="utf-8")
    try:
        for result in results:
            row = result.model_dump(include={"name", "solved", "answer", "seconds", "steps"})
            row["seconds"] = round(result.seconds, 3)
            if result.timed_out:
                row["timed_out"] = True
            if result.error is not None:
                row["error"] = result.error
            if aux is not None:
                row["aux"] = list(result.aux or ())
            typer.echo(json.dumps(row))
            if sink is not None and result.proof is not None:
                sink.write(result.proof.model_dump_json() + "\n")
                sink.flush()
    finally:
        if sink is not None:
            sink.close()


@app.command("prove")
@guarded
def prove(
    problem: Annotated[
        str, typer.Argument(help='One problem line, e.g. "a b c = triangle a b c; ... ? para d e b c".')
    ],
    timeout: Annotated[float, typer.Option("--timeout", min=0.1, help="Seconds of search.")] = 60.0,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the diagram realiser.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the proof as one JSON object.")] = False,
    raw: Annotated[
        bool,
        typer.Option("--raw", help="The numbered derivation (every step, rule ids) instead of sentences."),
    ] = False,
) -> None:
    """Print the proof of the goal: sentences with symbols (default), the raw derivation, or JSON."""
    from geosynth import ProblemSyntaxError, format_proof, parse_problem, proof_steps, solve_one
    from geosynth.engine import format_textbook, proof_data, textbook_steps

    try:
        parsed = parse_problem(problem)
    except ProblemSyntaxError as err:
        fail(one_line(err), EXIT_USER)
    if parsed.goal is None:
        fail("the problem has no goal (add '? predicate points')", EXIT_USER)
    result, deduction = solve_one(parsed, seed=seed, time_limit=timeout)
    if not result.solved:
        typer.echo(f"not proved ({len(deduction.derivations)} facts derived in {result.seconds:.2f}s)")
        raise typer.Exit(code=1)
    steps = proof_steps(parsed, deduction)
    data = proof_data(parsed, steps)
    if raw:
        typer.echo(data.model_dump_json() if as_json else format_proof(steps))
        return
    book = textbook_steps(data)
    if as_json:
        rows = [{**step.model_dump(), "sentence": step.sentence()} for step in book]
        typer.echo(
            json.dumps({"name": data.name, "problem": data.problem, "steps": rows}, ensure_ascii=False)
        )
    else:
        typer.echo(format_textbook(book))


def _read_proofs(path: Path) -> list[Proof]:
    from pydantic import ValidationError

    from geosynth.engine import Proof

    proofs: list[Proof] = []
    for number, line in enumerate(read_text(path, "proofs file").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            proofs.append(Proof.model_validate_json(line))
        except ValidationError as err:
            first = err.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "line"
            fail(f"{path}:{number}: not a proof ({where}: {first['msg']})", EXIT_USER)
    if not proofs:
        raise InputError(f"proofs file {path} holds no proofs (only blank lines)")
    return proofs


@app.command("check")
@guarded
def check(
    proofs: Annotated[Path, typer.Argument(help="JSON-lines proofs (from `geo engine solve --proofs`).")],
    seed: Annotated[int, typer.Option("--seed", help="Seed of the first replay diagram.")] = 1,
) -> None:
    """Replay every proof step by step from its premises alone; one line per proof; exit 1 if any fails."""
    from geosynth import GeoSynthError
    from geosynth.engine import replay

    failed = 0
    for proof in _read_proofs(proofs):
        try:
            report = replay(proof, seed=seed)
        except GeoSynthError as err:
            failed += 1
            typer.echo(f"{proof.name}: failed: {one_line(err)}")
            continue
        step = report.failed
        if step is None:
            typer.echo(f"{proof.name}: ok ({len(proof.steps)} steps)")
        else:
            failed += 1
            typer.echo(f"{proof.name}: failed at step {step.number}: {step.reason}")
    if failed:
        raise typer.Exit(code=1)
