"""The auxiliary-construction branch: mining the proposer's examples, and the aux_search stage.

A training split of ``synth_kind: aux_construction`` is mined by geosynth (random construction
sequences, each proof split into a reduced problem and the auxiliary clauses it used) and written as
geotrain ``chat`` records, which the train stage learns a proposer from. The aux_search stage then
gives every problem of a JGEX file to plain deduction and searches each one it does not prove twice
with the same budget: the engine-checked beam search over the proposer's constructions, and the
heuristic search that needs no language model. Rows are appended one problem at a time, so an
interrupted stage resumes at the next problem.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import TYPE_CHECKING, Any

from geo_cli.pipeline._config import AuxSearchSettings, DatasetSpec
from geo_cli.pipeline._context import StageContext, captured_output
from geo_cli.pipeline._state import atomic_write_text
from geo_cli.pipeline.errors import PipelineConfigError, StageFailedError

if TYPE_CHECKING:
    from geosynth.engine import Problem
    from geotts import Sampler

__all__ = ("AUX_RECORDS", "mine_aux_split", "run_aux_search")

AUX_RECORDS = Path("synth") / "train" / "aux_records.jsonl"
"""The data stage's chat records of the mined examples (what the train stage reads), below its folder."""
ROWS = "problems.jsonl"
"""The aux_search stage's rows, one JSON line per problem of the file."""


def mine_aux_split(spec: DatasetSpec, ctx: StageContext, split: str) -> dict[str, Any]:
    """Mine ``synth_count`` auxiliary-construction examples and write their chat records.

    The miner resumes its own partial file (``synth/<split>/examples.jsonl.partial``); the records are
    one per auxiliary clause (the problem with the earlier clauses added, answered by the next clause),
    the form the beam search asks for.
    """
    from geosynth import GeoSynthError
    from geosynth.synth import write_aux_examples, write_aux_records

    if spec.synth_count is None:
        raise StageFailedError(f"data.{split}: synth_kind 'aux_construction' needs synth_count")
    out = ctx.folder / "synth" / split
    out.mkdir(parents=True, exist_ok=True)
    try:
        examples = write_aux_examples(
            out / "examples.jsonl", spec.synth_count, spec.synth_seed, jobs=ctx.config.mts.jobs,
            progress=lambda done, total, found: ctx.events.progress(
                "data", done, total, f"{split} auxiliary examples ({found} found)"
            ),
        )  # fmt: skip
    except GeoSynthError as exc:
        raise StageFailedError(f"data.{split}: {' '.join(str(exc).split())}") from None
    if not examples:
        raise StageFailedError(f"data.{split}: mining found no auxiliary-construction example")
    records = out / "aux_records.jsonl"
    partial = records.with_name(records.name + ".tmp")
    count = write_aux_records(examples, partial)
    partial.replace(records)
    clauses = [len(e.auxiliary) for e in examples]
    return {"examples": len(examples), "records": count, "most_clauses": max(clauses)}


def _settings(ctx: StageContext) -> AuxSearchSettings:
    if ctx.config.aux is None:
        raise PipelineConfigError("aux_search: the config has no aux section")
    return ctx.config.aux


def _problems(ctx: StageContext, settings: AuxSearchSettings) -> list[tuple[str, str]]:
    from geo_cli._errors import InputError
    from geo_cli._inputs import problem_lines
    from geo_cli.pipeline._stages_prep import resolve_path
    from geosynth import ProblemSyntaxError

    path = resolve_path(ctx.base, settings.problems)
    try:
        lines = problem_lines(path)
    except (InputError, ProblemSyntaxError) as exc:
        raise StageFailedError(f"aux.problems: {' '.join(str(exc).split())}") from None
    return lines[: settings.limit] if settings.limit is not None else lines


def _done_rows(path: Path) -> dict[str, dict[str, Any]]:
    """The rows an interrupted run wrote (a last line cut short is dropped)."""
    rows: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return rows
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict) and isinstance(row.get("name"), str):
            rows[str(row["name"])] = dict(row)
    return rows


def _search_row(problem: Problem, sampler: Sampler, settings: AuxSearchSettings) -> dict[str, Any]:
    """Plain deduction, then (when it fails) both searches with the same budget."""
    from geosynth import GeoSynthError, solve_one
    from geosynth.synth import aux_search, heuristic_aux_search
    from geotts import SamplingParams

    try:
        plain, _ = solve_one(problem, seed=settings.seed, time_limit=settings.plain_time_limit)
    except GeoSynthError as exc:
        return {"name": problem.name, "error": " ".join(str(exc).split())}
    row: dict[str, Any] = {
        "name": problem.name,
        "plain": plain.solved,
        "plain_seconds": round(plain.seconds, 3),
    }
    if plain.solved:
        return row
    params = SamplingParams(
        temperature=settings.temperature, max_tokens=settings.max_tokens, seed=settings.seed
    )
    try:
        found = aux_search(
            problem, sampler, branching=settings.branching, beam=settings.beam, depth=settings.depth,
            time_limit=settings.budget, node_time_limit=settings.node_time_limit, seed=settings.seed, params=params,
        )  # fmt: skip
        heuristic = (
            heuristic_aux_search(problem, settings.budget, seed=settings.seed, plain_seconds=plain.seconds)
            if settings.heuristic
            else None
        )
    except GeoSynthError as exc:
        return {**row, "error": " ".join(str(exc).split())}
    row["proposer"] = {
        "solved": found.solved, "aux": list(found.constructions), "seconds": round(found.seconds, 3),
        "nodes": found.nodes_checked, "proposals": found.proposals, "invalid": found.invalid,
        "reasons": found.reasons,
    }  # fmt: skip
    if heuristic is not None:
        row["heuristic"] = {
            "solved": heuristic.solved, "aux": list(heuristic.constructions),
            "seconds": round(heuristic.seconds, 3), "nodes": heuristic.nodes_checked,
        }  # fmt: skip
    return row


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def _tally(rows: list[dict[str, Any]], heuristic: bool) -> dict[str, Any]:
    searched = [r for r in rows if r.get("plain") is False and "error" not in r]
    out: dict[str, Any] = {
        "problems": len(rows), "errors": sum("error" in r for r in rows),
        "plain_proved": sum(r.get("plain") is True for r in rows), "searched": len(searched),
    }  # fmt: skip
    for method in ("proposer", *(("heuristic",) if heuristic else ())):
        solved = [r[method] for r in searched if r[method]["solved"]]
        out[method] = {"solved": len(solved), "median_seconds": _median([s["seconds"] for s in solved])}
    if heuristic:
        mine = {r["name"] for r in searched if r["proposer"]["solved"]}
        theirs = {r["name"] for r in searched if r["heuristic"]["solved"]}
        out["both"], out["proposer_only"], out["heuristic_only"] = (
            len(mine & theirs), len(mine - theirs), len(theirs - mine),
        )  # fmt: skip
    return out


def _markdown(rows: list[dict[str, Any]], summary: dict[str, Any], settings: AuxSearchSettings) -> str:
    heading = (
        ["problem", "plain", "proposer", "heuristic"]
        if settings.heuristic
        else ["problem", "plain", "proposer"]
    )

    def cell(result: dict[str, Any] | None) -> str:
        if result is None:
            return ""
        if not result["solved"]:
            return f"not found ({result['seconds']:.1f} s)"
        return f"`{'; '.join(result['aux']) or '(none)'}` ({result['seconds']:.1f} s)"

    lines = [
        "# Auxiliary constructions: trained proposer and heuristic search",
        "",
        f"{summary['problems']} problems of `{settings.problems}`; plain deduction ({settings.plain_time_limit:g} s) "
        f"proved {summary['plain_proved']}; each of the other {summary['searched']} was searched "
        f"{settings.budget:g} s by each method (beam {settings.beam}, branching {settings.branching}, "
        f"depth {settings.depth}); every proof found was replayed.",
        "",
        "| " + " | ".join(heading) + " |",
        "|" + "---|" * len(heading),
    ]
    for row in rows:
        if "error" in row:
            lines.append(f"| {row['name']} | error: {row['error']} |" + " |" * (len(heading) - 2))
            continue
        plain = "proved" if row["plain"] else "not proved"
        cells = [row["name"], plain, cell(row.get("proposer"))]
        if settings.heuristic:
            cells.append(cell(row.get("heuristic")))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def run_aux_search(ctx: StageContext) -> dict[str, Any]:
    """Search the problems plain deduction does not prove, with the trained proposer and the heuristics.

    Writes ``problems.jsonl`` (one row per problem, appended as each finishes; a rerun resumes after the
    last) and ``report.md`` (the side-by-side table), and returns the counts.
    """
    from geo_cli.pipeline._stages_prep import train_model_dir
    from geosynth import ProblemSyntaxError, parse_problem

    settings = _settings(ctx)
    lines = _problems(ctx, settings)
    rows_path = ctx.folder / ROWS
    done = _done_rows(rows_path) if ctx.resumed else {}
    import torch

    from geotts.backends.transformers import TransformersSampler

    torch.set_num_threads(settings.threads)
    model = train_model_dir(ctx.upstream["train"])
    with captured_output(ctx.folder / "proposer.log"):
        sampler = TransformersSampler.from_pretrained(str(model), device="cpu")
    rows: list[dict[str, Any]] = []
    with rows_path.open("a" if done else "w", encoding="utf-8") as handle:
        for index, (name, line) in enumerate(lines, start=1):
            if name in done:
                rows.append(done[name])
                continue
            try:
                row = _search_row(parse_problem(line, name), sampler, settings)
            except ProblemSyntaxError as exc:
                row = {"name": name, "error": " ".join(str(exc).split())}
            rows.append(row)
            handle.write(json.dumps(row) + "\n")
            handle.flush()
            ctx.events.progress("aux_search", index, len(lines), f"problems ({name})")
    summary = _tally(rows, settings.heuristic)
    atomic_write_text(ctx.folder / "report.md", _markdown(rows, summary, settings))
    return summary
