"""``geo tts``: test-time scaling (geotts) on recorded pools, live backends, and reports.

Pool commands read JSON Lines (``-`` is stdin), one pool per line::

    {"id": "p1", "traces": {"program": [3.0, null], "pal": [...], "cot_program": [...], "cot_pal": [...]}}

and write one decision per line, in input order: ``{"id", "answer", "depth", "samples"}``. A bad
line gets ``{"id", "error"}`` and the rest of the batch still runs; the exit code is then 1.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from geo_cli._errors import guarded
from geo_cli._inputs import read_text, text_file
from geo_cli._jsonl import Line, emit, input_lines, record_id

if TYPE_CHECKING:
    from geodsl.sandbox import Sandbox
    from geotts import Completion, Problem

app = typer.Typer(help="Commands for test-time scaling (geotts).", no_args_is_help=True)

PoolsArg = Annotated[str, typer.Argument(help="Pools as JSON Lines, or - for standard input.")]
DepthOpt = Annotated[
    int | None, typer.Option("--depth", "-d", min=1, help="D: answers read per trace type (default: all).")
]
OrderOpt = Annotated[
    str | None,
    typer.Option(
        "--order",
        help="Comma-separated trace types in read order (default: program,pal,cot_program,cot_pal).",
    ),
]


def _order(order: str | None) -> list[str] | None:
    return None if order is None else [t.strip() for t in order.split(",") if t.strip()]


def _answers(value: Any, where: str) -> list[Hashable | None]:
    if not isinstance(value, list):
        raise ValueError(f"{where} must be a list of numbers or null, got {type(value).__name__}")
    for i, a in enumerate(value):
        if a is not None and (isinstance(a, bool) or not isinstance(a, int | float | str)):
            raise ValueError(f"{where}[{i}] must be a number, a string or null, got {a!r}")
    return list(value)


def _traces(line: Line) -> dict[str, list[Hashable | None]]:
    traces = line.fields.get("traces")
    if not isinstance(traces, dict) or not traces:
        raise ValueError(f"line {line.number}: 'traces' must be a non-empty object of answer lists")
    return {str(t): _answers(a, f"line {line.number}: traces.{t}") for t, a in traces.items()}


def _run_pools(path: str, decide: Callable[[Line], Any]) -> None:
    import geotts

    failed = 0
    for line in input_lines(path, "pools file"):
        if line.error is not None:
            emit({"id": None, "error": line.error})
            failed += 1
            continue
        try:
            emit(decide(line).to_json(id=line.id))
        except (geotts.StrategyConfigError, ValueError) as exc:
            emit({"id": line.id, "error": " ".join(str(exc).split())})
            failed += 1
    if failed:
        raise typer.Exit(code=1)


@app.command("cg-mte")
@guarded
def cg_mte(
    pools: PoolsArg,
    depth: DepthOpt = None,
    order: OrderOpt = None,
    fallback: Annotated[
        str | None, typer.Option(help="Trace type answering without consensus (default cot_pal).")
    ] = None,
) -> None:
    """Consensus-guided MTE: stop at the first depth with a unique most frequent answer."""
    import geotts

    _run_pools(
        pools, lambda line: geotts.cg_mte(_traces(line), order=_order(order), fallback=fallback, depth=depth)
    )


@app.command("mte")
@guarded
def mte(pools: PoolsArg, depth: DepthOpt = None, order: OrderOpt = None) -> None:
    """Standard MTE: majority vote over the top-D answers of every trace type."""
    import geotts

    _run_pools(pools, lambda line: geotts.mte(_traces(line), order=_order(order), depth=depth))


@app.command("sc")
@guarded
def sc(
    pools: PoolsArg,
    k: Annotated[int, typer.Option("--k", "-k", min=1, help="Budget: candidates voted on.")],
    trace: Annotated[
        str | None, typer.Option(help="Ranked list to vote on: a trace type, or 'unified'.")
    ] = None,
) -> None:
    """Self-consistency over the first K answers of one ranked list (the pool's 'unified' list by default)."""
    import geotts

    def decide(line: Line) -> Any:
        record = line.fields
        if trace not in (None, "unified"):
            answers = _traces(line).get(trace)
            if answers is None:
                raise ValueError(f"line {line.number}: pool has no trace type {trace!r}")
        elif "unified" in record:
            answers = _answers(record["unified"], f"line {line.number}: unified")
        else:
            traces = _traces(line)
            if len(traces) != 1 or trace == "unified":
                raise ValueError(
                    f"line {line.number}: pool has {len(traces)} trace types and no 'unified' list; pass --trace"
                )
            answers = next(iter(traces.values()))
        return geotts.self_consistency(answers, k=k)

    _run_pools(pools, decide)


ExtractorName = Literal["last-number", "geodsl-answer", "geodsl-trace"]
"""The answer extractors of ``geo tts run``."""


class BackendSpec(BaseModel):
    """Which backend ``geo tts run`` drives."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["transformers", "openai", "vllm"]
    """Backend family."""
    model: str
    """Model folder or name (relative folders are read from the config file's folder)."""
    base_url: str | None = None
    """Server URL for ``openai`` (e.g. http://127.0.0.1:8000/v1)."""
    api_key_env: str | None = None
    """Environment variable holding the API key for ``openai`` (never the key itself)."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Extra constructor arguments of the backend."""


class RunConfig(BaseModel):
    """The file given to ``geo tts run`` (YAML or JSON)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    backend: BackendSpec
    """The generation backend."""
    strategy: dict[str, Any]
    """One-key strategy spec, e.g. ``{"cg_mte": {"depth": 10, "params": {"mode": "sample"}}}``."""
    problems: str
    """JSON Lines of ``{"id", "question", "images": [paths], "gold"?, "numbers"?}`` (relative to the config
    file); ``numbers`` is the problem's N list, which symbolic program traces refer to as N0, N1..."""
    extractor: ExtractorName = "last-number"
    """How answers are read from candidates: ``last-number``, ``geodsl-answer`` (the stated final answer)
    or ``geodsl-trace`` (the trace executed: programs on geodsl's executor, scripts in the sandbox)."""
    sandbox_workers: int = Field(default=2, ge=1)
    """Sandbox worker processes for ``geodsl-trace`` (PAL and CoT-PAL scripts)."""
    sandbox_timeout: float = Field(default=10.0, gt=0)
    """Wall-clock and CPU limit per script for ``geodsl-trace``, seconds."""
    batch_size: int = Field(default=16, ge=1)
    """Problems per strategy call."""


def _load_config(path: Path) -> RunConfig:
    import yaml

    from geotts import StrategyConfigError

    try:
        raw = yaml.safe_load(read_text(path, "config file"))
        return RunConfig.model_validate(raw)
    except yaml.YAMLError as exc:
        raise StrategyConfigError(f"{path}: not valid YAML/JSON: {exc}") from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        raise StrategyConfigError(f"{path}: {'.'.join(map(str, first['loc']))}: {first['msg']}") from exc


def build_sampler(spec: BackendSpec, base: Path) -> Any:
    """Construct the backend named by ``spec`` (imports its extra only now)."""
    model = str(base / spec.model) if (base / spec.model).exists() else spec.model
    if spec.kind == "transformers":
        from geotts.backends.transformers import TransformersSampler

        return TransformersSampler.from_pretrained(model, **spec.options)
    if spec.kind == "vllm":
        from geotts.backends.vllm import VLLMSampler

        return VLLMSampler(model, **spec.options)
    from geotts import StrategyConfigError
    from geotts.backends.openai import OpenAICompatibleSampler

    if spec.base_url is None:
        raise StrategyConfigError("backend.base_url is required for kind 'openai'")
    key = os.environ.get(spec.api_key_env) if spec.api_key_env else None
    return OpenAICompatibleSampler(spec.base_url, spec.model, api_key=key, **spec.options)


def _geodsl_answer() -> Any:
    import geotts
    from geodsl.answers import extract_final_answer, parse_answer
    from geodsl.errors import AnswerParseError

    def geodsl_answer(
        completion: geotts.Completion, trace_type: str | None, problem: geotts.Problem
    ) -> float | None:
        if completion.finish_reason == "length":
            return None
        text = extract_final_answer(completion.text)
        if text is None:
            return None
        try:
            return parse_answer(text)
        except AnswerParseError:
            return None

    return geodsl_answer


class TraceExtractor:
    """Answer = the candidate executed as its trace type (``geodsl-trace``); a failed execution is None.

    ``geodsl.traces.candidate_answer`` executes it: the trace after a ``Solution:`` header line (the whole
    text without one), program and CoT-Program traces on geodsl's numeric executor (symbolic programs
    against the problem's N list, read from ``problem.metadata["numbers"]``), PAL and CoT-PAL scripts in a
    shared sandbox. A candidate cut off by the token limit, or whose execution fails, gives None (no vote).
    A failure of the sandbox itself propagates.
    """

    def __init__(self, sandbox: Sandbox | None) -> None:
        """Bind a sandbox (needed for script traces)."""
        self.sandbox = sandbox

    def __call__(self, completion: Completion, trace_type: str | None, problem: Problem) -> float | None:
        """Execute ``completion`` as the format of ``trace_type`` (detected when the type is not a format)."""
        from geodsl.traces import candidate_answer

        if completion.finish_reason == "length":
            return None
        return candidate_answer(
            completion.text, trace_type, numbers=problem_numbers(problem), sandbox=self.sandbox
        )


def problem_numbers(problem: Problem) -> tuple[str, ...]:
    """The problem's N list (``metadata["numbers"]``, as written by ``geo tts run``); empty when absent.

    Raises:
        StrategyConfigError: the metadata holds something other than a list of strings.
    """
    from geotts import StrategyConfigError

    value = problem.metadata.get("numbers", [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise StrategyConfigError(f"problem {problem.id!r}: metadata 'numbers' must be a list of strings")
    return tuple(v for v in value if isinstance(v, str))


def build_extractor(name: ExtractorName, *, sandbox: Sandbox | None = None) -> Any:
    """The answer extractor called ``name``.

    Args:
        name: ``last-number`` (geotts), ``geodsl-answer`` (the final answer read by geodsl.answers) or
            ``geodsl-trace`` (a :class:`TraceExtractor`; it reads each problem's N list from its metadata).
        sandbox: the sandbox ``geodsl-trace`` runs scripts in (the caller starts and closes it).

    Returns:
        The extractor.
    """
    import geotts

    if name == "last-number":
        return geotts.LastNumberExtractor()
    if name == "geodsl-answer":
        return _geodsl_answer()
    return TraceExtractor(sandbox)


@dataclass(frozen=True, slots=True)
class _Item:
    problem: Any
    gold: float | None


def _numbers(rec: dict[str, Any], where: str) -> tuple[str, ...]:
    from geotts import StrategyConfigError

    value = rec.get("numbers", [])
    if not isinstance(value, list):
        raise StrategyConfigError(f"{where}: 'numbers' must be a list, got {type(value).__name__}")
    out: list[str] = []
    for i, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, str | int | float):
            raise StrategyConfigError(f"{where}: numbers[{i}] must be a string or a number, got {v!r}")
        out.append(v if isinstance(v, str) else repr(v))
    return tuple(out)


def _problems(path: Path) -> Iterator[_Item]:
    import geotts

    for line in input_lines(str(path), "problems file"):
        if line.record is None:
            raise geotts.StrategyConfigError(f"{path}: {line.error}")
        rec, where = line.record, f"{path}: line {line.number}"
        problem_id = record_id(rec.get("id"))
        if not isinstance(problem_id, str) or not isinstance(rec.get("question"), str):
            raise geotts.StrategyConfigError(
                f"{where}: needs an 'id' (a string or an integer) and a string 'question'"
            )
        images = tuple(path.parent / str(p) for p in rec.get("images", []))
        missing = [str(p) for p in images if not p.is_file()]
        if missing:
            raise geotts.StrategyConfigError(f"{where}: image files not found: {missing}")
        try:
            problem = geotts.Problem(
                id=problem_id,
                question=str(rec.get("question", "")),
                images=images,
                metadata={"numbers": list(_numbers(rec, where))},
            )
        except ValidationError as exc:
            raise geotts.StrategyConfigError(f"{where}: {exc.errors()[0]['msg']}") from exc
        gold = rec.get("gold")
        gold = gold if isinstance(gold, int | float) and not isinstance(gold, bool) else None
        yield _Item(problem, gold)


@app.command("run")
@guarded
def run(
    config: Annotated[Path, typer.Argument(help="Run configuration (YAML or JSON).")],
    pools: Annotated[
        Path | None,
        typer.Option(help="Also write the answers read as a pools file (input of `geo tts report`)."),
    ] = None,
) -> None:
    """Sample live with a backend and a strategy; one decision (with its answer pool) per problem."""
    import geotts
    from geotts.report import is_correct

    cfg = _load_config(config)
    strategy = geotts.strategy_from_spec(cfg.strategy)
    base = config.parent
    items = list(_problems(base / cfg.problems))
    sampler = build_sampler(cfg.backend, base)
    with contextlib.ExitStack() as stack:
        sandbox = None
        if cfg.extractor == "geodsl-trace":
            from geodsl.sandbox import Sandbox, SandboxLimits

            limits = SandboxLimits(wall_seconds=cfg.sandbox_timeout, cpu_seconds=cfg.sandbox_timeout)
            # workers start on the first script; closed when the run ends, however it ends
            sandbox = stack.enter_context(contextlib.closing(Sandbox(cfg.sandbox_workers, limits)))
        extractor = build_extractor(cfg.extractor, sandbox=sandbox)
        pool_out = None if pools is None else stack.enter_context(pools.open("w", encoding="utf-8"))
        for start in range(0, len(items), cfg.batch_size):
            chunk = items[start : start + cfg.batch_size]
            # one strategy call per chunk: the extractor reads each problem's N list from its metadata
            decisions = geotts.run_strategy(strategy, sampler, [item.problem for item in chunk], extractor)
            for item, d in zip(chunk, decisions, strict=True):
                traces = {name: list(answers) for name, answers in d.pool}
                out = {**d.to_json(id=item.problem.id), "traces": traces}
                if item.gold is not None:
                    out.update(gold=item.gold, correct=is_correct(d.answer, item.gold))
                emit(out)
                if pool_out is not None:
                    emit({"id": item.problem.id, "gold": item.gold, "traces": traces}, pool_out)


@app.command("report")
@guarded
def report(
    pools: Annotated[Path, typer.Argument(help="Recorded pools (JSON Lines with gold answers).")],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder for report.md, summary.json and PNG figures.")
    ],
    depths: Annotated[
        str | None, typer.Option(help="Comma-separated depths D to evaluate (default 1..max).")
    ] = None,
    order: OrderOpt = None,
) -> None:
    """Evaluate SC, MTE, CG-MTE and the adaptive baselines on recorded pools; write tables and figures."""
    from geotts import StrategyConfigError
    from geotts.report import evaluate, load_pools, write_report

    try:
        ds = None if depths is None else [int(x) for x in depths.split(",") if x.strip()]
    except ValueError as exc:
        raise StrategyConfigError(f"--depths must be comma-separated integers, got {depths!r}") from exc
    pools_in = load_pools(text_file(pools, "pools file"))
    files = write_report(evaluate(pools_in, depths=ds, order=_order(order)), out)
    typer.echo(json.dumps({"written": [str(f) for f in files]}))
