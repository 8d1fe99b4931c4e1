"""``geo prm``: the generative process reward model (geoprm).

``critique`` and ``score`` read JSON Lines (``-`` is stdin) and write exactly one JSON line per input
line, in input order; a bad line gets a one-line ``error``, the rest of the batch still runs and the
exit code is then 1. ``build-data`` turns policy solutions into reward-model training records from a
YAML config; ``eval`` writes the tables and the accuracy-vs-N plot of recorded runs.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from geo_cli._errors import fail, guarded, report
from geo_cli._inputs import read_text
from geo_cli._jsonl import Line, emit, input_lines, record_id
from geo_cli.tts import BackendSpec, build_sampler

if TYPE_CHECKING:
    from geoprm import CritiqueScores, ParsedCritique
    from geoprm.backends.transformers import TransformersCritic
    from geoprm.data import BuildResult, PRMItem
    from geoprm.evaluation import EvalProblem
    from geotts import GenerationRequest, StepScoreRequest

app = typer.Typer(help="Commands for the process reward model (geoprm).", no_args_is_help=True)

InputArg = Annotated[str, typer.Argument(help="JSON Lines file, or - for standard input.")]
BatchOpt = Annotated[int, typer.Option("--batch-size", "-b", min=1, help="Solutions per model call.")]
DeviceOpt = Annotated[str, typer.Option(help="Torch device of the reward model (cpu, cuda, cuda:1...).")]


# --- JSON Lines requests ------------------------------------------------------------------------------


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _texts(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ValueError(f"{where} must be a list of strings, got {type(value).__name__}")
    for i, text in enumerate(value):
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"{where}[{i}] must be a non-empty string, got {text!r}")
    return tuple(value)


def _steps(line: Line) -> tuple[str, ...] | None:
    """The solution's steps: given as ``steps``, or split from ``solution``; None when neither is there."""
    from geotts import split_steps

    record = line.fields
    if "steps" in record:
        return _texts(record["steps"], f"line {line.number}: 'steps'")
    solution = record.get("solution")
    return split_steps(solution).steps if isinstance(solution, str) else None


def _request(line: Line, base: Path) -> StepScoreRequest:
    """The judged solution of a record (question, images, steps); ValueError names the line and the field."""
    from geotts import StepScoreRequest

    record = line.fields
    question, where = record.get("question"), f"line {line.number}"
    if not isinstance(question, str) or not question.strip():
        raise ValueError(f"{where}: 'question' must be a non-empty string")
    steps = _steps(line)
    if steps is None:
        raise ValueError(f"{where}: give 'steps' (a list of strings) or 'solution' (a string)")
    if not steps:
        raise ValueError(f"{where}: the solution has no steps")
    images = tuple(base / p for p in _texts(record.get("images", []), f"{where}: 'images'"))
    missing = [str(p) for p in images if not p.is_file()]
    if missing:
        raise ValueError(f"{where}: image files not found: {missing}")
    return StepScoreRequest(question=question, images=images, steps=steps)


def _base(path: str) -> Path:
    """The folder relative image paths are read from: the input file's, or the working one for stdin."""
    return Path.cwd() if path == "-" else Path(path).parent


def _chunks(lines: Iterator[Line], size: int) -> Iterator[list[Line]]:
    while chunk := list(islice(lines, size)):
        yield chunk


def _judgement_json(parsed: ParsedCritique, scores: CritiqueScores) -> dict[str, Any]:
    """What a critique says: per-step verdicts and scores, the first wrong step (1-based), the correction.

    The first wrong step is the solution step refined best-of-N rewrites, as geoprm's judgement of the
    critique places it (blocks read in order, whatever number the critic writes on them).
    """
    from geoprm import to_step_judgement

    wrong = to_step_judgement(parsed, scores).first_wrong
    return {
        "verdict": scores.verdict,
        "scores": [s.score for s in scores.steps],
        "first_wrong": wrong + 1 if scores.verdict == "has_incorrect" and wrong is not None else None,
        "correction": parsed.correction if scores.verdict == "has_incorrect" else None,
        "steps": [s.model_dump(mode="json") for s in scores.steps],
        "problems": [p.model_dump(mode="json") for p in scores.problems],
    }


class _Batch:
    """Runs a model over the good lines of a chunk; a failing batch is retried line by line.

    ``load`` runs before the first model call, outside the per-line boundary: a model that cannot be
    loaded stops the command with one message instead of failing every line.
    """

    def __init__(
        self, call: Callable[[list[Any]], list[dict[str, Any]]], load: Callable[[], object] = lambda: None
    ) -> None:
        self.call = call
        self.load = load
        self.failed = 0

    def run(self, chunk: Sequence[Line], prepare: Callable[[Line], Any]) -> Iterator[dict[str, Any]]:
        from geoprm import GeoPRMError

        prepared: list[tuple[Line, Any, str | None]] = []
        for line in chunk:
            if line.error is not None:
                prepared.append((line, None, line.error))
                continue
            try:
                prepared.append((line, prepare(line), None))
            except (GeoPRMError, ValueError) as exc:
                prepared.append((line, None, _one_line(exc)))
        good = [work for _, work, error in prepared if error is None]
        if good:
            self.load()
        try:
            results = iter(self.call(good) if good else [])
        except GeoPRMError:
            results = iter([self._alone(work) for work in good])
        for line, _, error in prepared:
            out = {"id": line.id, **next(results)} if error is None else {"id": line.id, "error": error}
            out.setdefault("error", None)
            self.failed += out["error"] is not None
            yield out

    def _alone(self, work: Any) -> dict[str, Any]:
        from geoprm import GeoPRMError

        try:
            return self.call([work])[0]
        except GeoPRMError as exc:
            return {"error": _one_line(exc)}


class _Critic:
    """The reward model, loaded on first use (bad input alone never loads it)."""

    def __init__(self, model: str, device: str, batch_size: int, max_new_tokens: int | None = None) -> None:
        self.args: dict[str, Any] = {"device": device, "batch_size": batch_size}
        if max_new_tokens is not None:
            self.args["max_new_tokens"] = max_new_tokens
        self.model = model
        self._critic: TransformersCritic | None = None

    def get(self) -> TransformersCritic:
        """The loaded critic."""
        from geoprm.backends.transformers import TransformersCritic

        if self._critic is None:
            self._critic = TransformersCritic.from_pretrained(self.model, **self.args)
        return self._critic


# --- critique -----------------------------------------------------------------------------------------


@app.command("critique")
@guarded
def critique(
    path: InputArg,
    model: Annotated[str, typer.Option(help="Reward-model folder (a Qwen-VL-family checkpoint).")],
    batch_size: BatchOpt = 4,
    max_new_tokens: Annotated[int, typer.Option(min=1, help="Longest critique written.")] = 1024,
    device: DeviceOpt = "cpu",
) -> None:
    """Write a critique of each solution with the reward model, one JSON line out per line in.

    Input lines: {"id", "question", "steps": list of step texts, or "solution": text, "images": list of paths}.

    Output lines: {"id", "critique", "scores", "first_wrong", "correction", "verdict", "steps", "problems", "finish_reason", "error"}; first_wrong is a 1-based step number, images are read relative to the input file.
    """
    critic = _Critic(model, device, batch_size, max_new_tokens)

    def call(requests: list[StepScoreRequest]) -> list[dict[str, Any]]:
        return [
            {"critique": r.text, **_judgement_json(r.parsed, r.scores), "finish_reason": r.finish_reason}
            for r in critic.get().critique(requests)
        ]

    base, batch = _base(path), _Batch(call, critic.get)
    for chunk in _chunks(input_lines(path), batch_size):
        for out in batch.run(chunk, lambda line: _request(line, base)):
            emit(out)
    if batch.failed:
        raise typer.Exit(code=1)


# --- score --------------------------------------------------------------------------------------------


def _critique_text(line: Line) -> str:
    text = line.fields.get("critique")
    if not isinstance(text, str):
        raise ValueError(f"line {line.number}: 'critique' must be a string, got {type(text).__name__}")
    return text


def _score_offline(line: Line, strict: bool) -> dict[str, Any]:
    """Score one critique without a model: parse it and use its recorded verdict log-probs, if any."""
    from geoprm import VerdictLogprobs, parse_critique, score_critique

    text = _critique_text(line)
    steps = _steps(line)
    if strict:
        parse_critique(text)  # raises CritiqueParseError naming the first deviating line
    parsed = parse_critique(text, strict=False)
    raw = line.fields.get("logprobs", [])
    if not isinstance(raw, list):
        raise ValueError(f"line {line.number}: 'logprobs' must be a list of {{step, top_logprobs}} objects")
    entries: list[VerdictLogprobs] = []
    for i, entry in enumerate(raw):
        try:
            entries.append(VerdictLogprobs.model_validate_json(json.dumps(entry)))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(map(str, (i, *first["loc"])))
            raise ValueError(f"line {line.number}: logprobs.{where}: {first['msg']}") from exc
    num_steps = None if steps is None else len(steps)
    return _judgement_json(parsed, score_critique(parsed, entries, num_steps=num_steps))


@app.command("score")
@guarded
def score(
    path: InputArg,
    model: Annotated[
        str | None, typer.Option(help="Reward-model folder: score by teacher forcing instead of log-probs.")
    ] = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Reject critiques that deviate from the canonical form.")
    ] = False,
    batch_size: BatchOpt = 4,
    device: DeviceOpt = "cpu",
) -> None:
    """Score given critiques, one JSON line out per line in.

    Input lines: {"id", "critique", "question"?, "steps" | "solution"?, "images"?, "logprobs"?: list of {"step", "top_logprobs"}}.

    Output lines: {"id", "verdict", "scores", "first_wrong", "correction", "steps", "problems", "error"}.

    Without --model a step is scored from the verdict log-probs the line carries (and left unscored without them); with --model the reward model reads question, solution and critique in one teacher-forced pass.
    """
    from geoprm import parse_critique

    base = _base(path)

    def offline(line: Line) -> Any:
        return _score_offline(line, strict)

    batch, prepare = _Batch(lambda done: done), offline
    if model is not None:
        critic = _Critic(model, device, batch_size)

        def forced(work: list[tuple[StepScoreRequest, str]]) -> list[dict[str, Any]]:
            scored = critic.get().score_critiques([r for r, _ in work], [t for _, t in work])
            return [
                _judgement_json(parse_critique(t, strict=False), s)
                for (_, t), s in zip(work, scored, strict=True)
            ]

        def teacher_forced(line: Line) -> Any:
            text = _critique_text(line)
            if strict:
                parse_critique(text)
            return _request(line, base), text

        batch, prepare = _Batch(forced, critic.get), teacher_forced
    for chunk in _chunks(input_lines(path), batch_size):
        for out in batch.run(chunk, prepare):
            emit(out)
    if batch.failed:
        raise typer.Exit(code=1)


# --- build-data ---------------------------------------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class ItemsSource(_Strict):
    """Where the solutions to label come from."""

    kind: Literal["pgps", "visualprm"]
    """``pgps``: a PGPS-format annotation file plus policy solutions; ``visualprm``: VisualPRM400K JSON Lines
    (its Monte Carlo counts label the steps, so no completer is needed)."""
    path: str
    """The dataset file (relative to the config file)."""
    solutions: str | None = None
    """``pgps`` only: JSON Lines of policy solutions ``{"problem": <record id>, "solution": text, "id"?}``."""
    images: str | None = None
    """The image folder: diagrams of ``pgps`` records, the image root of ``visualprm`` records."""
    limit: int | None = Field(default=None, ge=1)
    """Use only the first ``limit`` items."""


class MonteCarloSpec(_Strict):
    """Monte Carlo hard estimation by the completer."""

    completions: int = Field(default=8, ge=1)
    """m: continuations sampled from each step prefix."""
    temperature: float = Field(default=0.7, gt=0.0)
    """The completer's sampling temperature."""
    max_tokens: int = Field(default=512, ge=1)
    """The longest continuation."""


class BuildDataConfig(_Strict):
    """The file given to ``geo prm build-data`` (YAML or JSON)."""

    items: ItemsSource
    """The solutions to label."""
    teacher: BackendSpec
    """The model that writes critiques (usually ``kind: openai`` with ``base_url`` and ``model``)."""
    teacher_max_tokens: int = Field(default=2048, ge=1)
    """The longest teacher critique (greedy decoding)."""
    completer: BackendSpec | None = None
    """The model that continues step prefixes (``transformers`` folder or ``openai``); needed unless every
    item carries its own Monte Carlo labels."""
    monte_carlo: MonteCarloSpec = Field(default_factory=MonteCarloSpec)
    """m and the completer's sampling settings."""
    seed: int = 0
    """Seeds the completer's sampling and the balancing."""
    balanced: bool = True
    """Keep as many solutions with an error as without."""
    out: str
    """The JSON Lines file of SFT records to write (relative to the config file)."""


def _load_build_config(path: Path) -> BuildDataConfig:
    import yaml

    try:
        return BuildDataConfig.model_validate(yaml.safe_load(read_text(path, "config file")))
    except yaml.YAMLError as exc:
        fail(f"{path}: not valid YAML/JSON: {' '.join(str(exc).split())}")
    except ValidationError as exc:
        first = exc.errors()[0]
        fail(f"{path}: {'.'.join(map(str, first['loc'])) or 'config'}: {first['msg']}")


def _solution_lines(path: Path) -> Iterator[tuple[int, str, str, str | None]]:
    """(line number, problem id, solution, item id) of each line of a solutions file; a bad line stops the run."""
    for line in input_lines(str(path), "solutions file"):
        rec = line.record
        if rec is None:
            fail(f"{path}: {line.error}")
        problem, solution, item_id = record_id(rec.get("problem")), rec.get("solution"), rec.get("id")
        if not isinstance(problem, str) or not isinstance(solution, str):
            fail(
                f"{path}: line {line.number}: needs a 'problem' (a record id: a string or an integer) "
                "and a string 'solution'"
            )
        yield line.number, problem, solution, None if item_id is None else str(item_id)


def _pgps_items(src: ItemsSource, base: Path) -> list[PRMItem]:
    from geodsl.data import load_pgps
    from geoprm.data import PRMItem

    if src.solutions is None:
        fail("items.solutions is required for kind 'pgps': PGPS files hold no policy solutions")
    records = {r.id: r for r in load_pgps(base / src.path)}
    solutions = base / src.solutions
    counts: dict[str, int] = {}
    items: list[PRMItem] = []
    for number, problem, solution, item_id in _solution_lines(solutions):
        record = records.get(problem)
        if record is None:
            fail(f"{solutions}: line {number}: problem {problem!r} is not in {src.path}")
        counts[problem] = counts.get(problem, 0) + 1
        images: tuple[str, ...] = ()
        if src.images is not None and record.diagram is not None:
            image = base / src.images / record.diagram
            if not image.is_file():
                fail(f"{solutions}: line {number}: diagram {image} not found")
            images = (str(image),)
        items.append(
            PRMItem(
                id=item_id or f"{problem}/{counts[problem]}",
                question=record.text,
                images=images,
                solution=solution,
                answer=record.answer_value,
                source="pgps",
            )
        )
    return items


def _items(src: ItemsSource, base: Path) -> list[PRMItem]:
    from geoprm.data import load_visualprm, visualprm_items

    if src.kind == "pgps":
        items = _pgps_items(src, base)
    else:
        if src.solutions is not None:
            fail("items.solutions is only read for kind 'pgps'; VisualPRM records carry their solutions")
        root = None if src.images is None else base / src.images
        items = visualprm_items(load_visualprm(base / src.path, image_root=root))
    return items[: src.limit]


class _NoCompleter:
    """Stands in for the completer when every item carries its Monte Carlo labels (it is never asked)."""

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Any]:
        from geoprm.data import DataError

        raise DataError(f"{len(requests)} step prefixes need a completer, but the config names none")


def _build(cfg: BuildDataConfig, base: Path) -> BuildResult:
    import contextlib

    from geoprm.data import MonteCarlo, build_prm_data
    from geotts import LastNumberExtractor, SamplingParams

    items = _items(cfg.items, base)
    if cfg.completer is None and any(item.mc_labels is None for item in items):
        fail("completer is required: these items have no Monte Carlo labels of their own")
    mc = cfg.monte_carlo
    with contextlib.ExitStack() as stack:
        samplers = [build_sampler(spec, base) for spec in (cfg.teacher, cfg.completer) if spec is not None]
        for sampler in samplers:
            if hasattr(sampler, "close"):
                stack.callback(sampler.close)
        return build_prm_data(
            items,
            teacher=samplers[0],
            completer=samplers[1] if cfg.completer is not None else _NoCompleter(),
            extractor=LastNumberExtractor(marker="Answer:"),  # the policy prompt ends with "Answer: <value>"
            rng=random.Random(cfg.seed),
            monte_carlo=MonteCarlo(
                completions=mc.completions,
                params=SamplingParams(temperature=mc.temperature, max_tokens=mc.max_tokens, seed=cfg.seed),
            ),
            teacher_params=SamplingParams(temperature=0.0, max_tokens=cfg.teacher_max_tokens),
            balanced=cfg.balanced,
        )


def _print_stats(result: BuildResult, out: Path) -> None:
    from rich.console import Console
    from rich.table import Table

    stats = result.stats
    table = Table(title=f"geo prm build-data: {len(result.records)} records -> {out}")
    table.add_column("measure")
    table.add_column("value", justify="right")
    agreement = "-" if stats.agreement is None else f"{stats.agreement:.1%}"
    rows = [
        ("items", stats.items),
        ("judged (usable teacher critique)", stats.judged),
        ("agreed with Monte Carlo", stats.agreed),
        ("agreement", agreement),
        ("records with an error", stats.with_error),
        ("records without an error", stats.without_error),
        ("completions generated", stats.completions),
        *((f"dropped: {reason}", count) for reason, count in stats.dropped.items()),
    ]
    for name, value in rows:
        table.add_row(name, str(value))
    Console().print(table)


@app.command("build-data")
@guarded
def build_data(config: Annotated[Path, typer.Argument(help="Build configuration (YAML or JSON).")]) -> None:
    """Build reward-model SFT records: teacher critiques kept where Monte Carlo labels agree; print the stats."""
    from geoprm.data import write_records

    cfg = _load_build_config(config)
    base = config.parent
    result = _build(cfg, base)
    out = base / cfg.out
    out.parent.mkdir(parents=True, exist_ok=True)
    _print_stats(result, write_records(result.records, out))


# --- eval ---------------------------------------------------------------------------------------------


def _load_runs(path: Path) -> tuple[list[EvalProblem], int]:
    """The recorded problems of a runs file, and how many lines could not be read (reported on stderr)."""
    from geoprm.evaluation import EvalProblem

    problems: list[EvalProblem] = []
    bad = 0
    for line in input_lines(str(path), "runs file"):
        error = line.error
        if line.record is not None:
            try:
                problems.append(EvalProblem.model_validate_json(json.dumps(line.record)))
            except ValidationError as exc:
                first = exc.errors()[0]
                error = f"line {line.number}: {'.'.join(map(str, first['loc']))}: {first['msg']}"
        if error is not None:
            report(f"{path}: {error}")
            bad += 1
    return problems, bad


def _ints(text: str | None, option: str) -> list[int] | None:
    if text is None:
        return None
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        fail(f"{option} must be comma-separated integers, got {text!r}")
    if not values or min(values) < 1:
        fail(f"{option} must list positive integers, got {text!r}")
    return values


def _powers(top: int) -> list[int]:
    """1, 2, 4... up to ``top``, and ``top`` itself."""
    values = [1 << k for k in range(top.bit_length()) if 1 << k <= top]
    return values if values[-1] == top else [*values, top]


def _report(
    problems: Sequence[EvalProblem], ns: list[int], n: int | None, ks: list[int] | None, title: str
) -> str:
    from geoprm.evaluation import accuracy_curve, aggregation_ablation, by_kind, markdown_table, pass_at_k

    parts = [
        f"# {title}\n",
        f"{len(problems)} problems.\n",
        "## Accuracy vs N\n",
        markdown_table(accuracy_curve(problems, ns)),
    ]
    if n is None:
        parts.append(
            "\nNo refined-round candidates: Pass@k, the aggregation ablation and the types are skipped.\n"
        )
        return "\n".join(parts)
    parts += [
        f"## Pass@k, sampled vs refined pool (N={n})\n",
        markdown_table(pass_at_k(problems, n, ks or _powers(n))),
        f"## Step-score aggregation (N={n})\n",
        markdown_table(aggregation_ablation(problems, n)),
        f"## By problem type (N={n})\n",
        markdown_table(by_kind(problems, n)),
    ]
    return "\n".join(parts)


@app.command("eval")
@guarded
def eval_(
    runs: Annotated[Path, typer.Argument(help="Recorded runs: one geoprm EvalProblem per JSON line.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for report.md and accuracy_vs_n.png.")],
    ns: Annotated[
        str | None, typer.Option(help="Comma-separated N of the curve (default 1, 2, 4... up to the pools).")
    ] = None,
    n: Annotated[
        int | None,
        typer.Option(
            min=2,
            help="N of Pass@k, ablation and types (default: the largest even N the refined pools allow).",
        ),
    ] = None,
    ks: Annotated[
        str | None, typer.Option(help="Comma-separated k of Pass@k (default 1, 2, 4... up to N).")
    ] = None,
) -> None:
    """Evaluate best-of-N, refined best-of-N and self-consistency on recorded runs: Markdown tables and a plot."""
    from geoprm.evaluation import accuracy_curve, plot_accuracy_curve

    problems, bad = _load_runs(runs)
    if not problems:
        fail(f"{runs}: no recorded problem could be read")
    sampled = min(len(p.sampled) for p in problems)
    pairs = 2 * min(min(len(p.refined) for p in problems), sampled // 2)
    curve = _ints(ns, "--ns") or _powers(sampled)
    if max(curve) > sampled:
        fail(f"--ns goes up to {max(curve)} but some problems have only {sampled} sampled candidates")
    if n is not None and (n % 2 or n > pairs):
        fail(f"--n must be even and at most {pairs} (N/2 refined candidates per problem), got {n}")
    n, k_list = n or pairs or None, _ints(ks, "--ks")
    if n is not None and k_list and max(k_list) > n:
        fail(f"--ks goes up to {max(k_list)} but Pass@k is measured on pools of N={n}")
    out.mkdir(parents=True, exist_ok=True)
    report = out / "report.md"
    report.write_text(_report(problems, curve, n, k_list, f"geo prm eval: {runs.name}"), encoding="utf-8")
    plot = plot_accuracy_curve(accuracy_curve(problems, curve), out / "accuracy_vs_n.png")
    typer.echo(json.dumps({"written": [str(report), str(plot)], "problems": len(problems), "bad_lines": bad}))
    if bad:
        raise typer.Exit(code=1)


# --- figure-data / figure-eval ---------------------------------------------------------------------------


def _set_threads(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)


ThreadsOpt = Annotated[int, typer.Option(min=1, help="Torch threads (1 on a shared machine).")]


@app.command("figure-data")
@guarded
def figure_data(
    corpus: Annotated[
        Path, typer.Argument(help="PGPS-format corpus of synthetic problems (e.g. the train split).")
    ],
    policy: Annotated[
        str, typer.Option(help="Policy model folder (writes program traces, e.g. the CPU model).")
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder for samples, solutions, records and stats.")
    ],
    figured: Annotated[
        Path | None,
        typer.Option(help="PGPS file with the realised figures of the corpus's problems (joined by id)."),
    ] = None,
    synth: Annotated[
        Path | None,
        typer.Option(
            help="Folder the corpus was generated in: its figures are made again (config and seed)."
        ),
    ] = None,
    figures: Annotated[
        int | None, typer.Option(min=1, help="Use the problems of the first N figures (default: all).")
    ] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Use only the first N problems.")] = None,
    samples: Annotated[int, typer.Option(min=1, help="Policy solutions sampled per problem.")] = 4,
    corruptions: Annotated[
        int, typer.Option(min=0, help="Corrupted reference programs per problem (negatives).")
    ] = 1,
    references: Annotated[
        bool, typer.Option("--references/--no-references", help="Add each reference program (a positive).")
    ] = True,
    balanced: Annotated[
        bool, typer.Option("--balance/--no-balance", help="Keep as many records with an error as without.")
    ] = True,
    verdict_first: Annotated[
        bool,
        typer.Option(
            help="Write each step's verdict before its analyses in the critiques (the parser reads both)."
        ),
    ] = False,
    temperature: Annotated[float, typer.Option(min=0.0, help="Policy sampling temperature.")] = 0.7,
    max_tokens: Annotated[int, typer.Option(min=1, help="Longest program trace sampled.")] = 96,
    seed: Annotated[int, typer.Option(help="Seeds sampling, corruptions and balancing.")] = 0,
    batch_size: Annotated[
        int, typer.Option(min=1, help="Problems per policy call (one resumable chunk).")
    ] = 16,
    threads: ThreadsOpt = 1,
    device: DeviceOpt = "cpu",
) -> None:
    """Critique records from the policy's program traces, every step labelled exactly on the problem's figure.

    Writes OUT/samples.jsonl (resumable), OUT/solutions.jsonl (every labelled solution), OUT/records.jsonl
    (geoprm SFT records for geo train prm), OUT/stats.json and OUT/data_table.md; prints a JSON summary.
    A record that cannot be labelled gets a one-line error and the batch goes on.
    """
    from geo_cli import _figure_prm as fp
    from geo_cli._progress import stage_progress

    out.mkdir(parents=True, exist_ok=True)
    problems, source = fp.figured_problems(read_corpus(corpus), figured, synth, out, figures, report)
    problems = problems[:limit]
    if not problems:
        fail(f"corpus {corpus}: no problem with a realised figure to label")
    _set_threads(threads)
    from geo_cli._errors import err_console
    from geotts.backends.transformers import TransformersSampler

    sampler = TransformersSampler.from_pretrained(policy, device=device, batch_size=batch_size)
    spec = fp.SamplingSpec(
        n=samples, temperature=temperature, max_tokens=max_tokens, seed=seed, batch=batch_size
    )
    with stage_progress(err_console) as progress:
        made = fp.write_critique_data(
            problems, sampler, spec, out, corruptions=corruptions, references=references, balanced=balanced,
            verdict_first=verdict_first, report=report, progress=lambda s, d, t: progress(s, d, t),
            about={"figures": str(source), "corpus": str(corpus), "policy": policy},
        )  # fmt: skip
    stats = made.stats
    typer.echo(json.dumps({"out": str(out), "problems": made.problems, "solutions": made.solutions,
                           "records": stats["records"], "with_error": stats["with_error"],
                           "without_error": stats["without_error"], "errors": made.errors}))  # fmt: skip


def read_corpus(path: Path) -> Path:
    """The corpus file, checked to exist and be a file (an InputError naming it otherwise)."""
    from geo_cli._inputs import text_file

    text_file(path, "corpus file")
    return path


@app.command("figure-eval")
@guarded
def figure_eval(
    data: Annotated[
        Path, typer.Argument(help="A folder figure-data wrote (its solutions.jsonl and stats.json).")
    ],
    model: Annotated[str, typer.Option(help="Critic model folder (e.g. the final folder of geo train prm).")],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder for critiques.jsonl (resumable) and the report.")
    ],
    ns: Annotated[
        str, typer.Option(help="Comma-separated N of best-of-N against random choice.")
    ] = "1,2,4,8",
    limit: Annotated[int | None, typer.Option(min=1, help="Judge only the first N solutions.")] = None,
    batch_size: BatchOpt = 8,
    max_new_tokens: Annotated[int, typer.Option(min=1, help="Longest critique written.")] = 768,
    threads: ThreadsOpt = 1,
    device: DeviceOpt = "cpu",
) -> None:
    """Judge figure-data's solutions with a critic: step F1, best-of-N against random choice, corrections.

    Step F1 is against the figure labels; best-of-N by the critic's scores is set against random choice
    and self-consistency on the policy's samples; a correction counts as correct when the figure labels
    it so. Writes OUT/critiques.jsonl (resumable), OUT/summary.json and OUT/report.md; prints the summary.
    """
    from geo_cli import _figure_prm as fp
    from geo_cli._errors import err_console
    from geo_cli._progress import stage_progress
    from geoprm.labelled import LabelledSolution, read_labelled

    solutions: list[LabelledSolution] = []
    bad = 0
    for solution, error in read_labelled(data / "solutions.jsonl"):
        if solution is None:
            report(error or "unreadable line")
            bad += 1
        else:
            solutions.append(solution)
    solutions = solutions[:limit]
    if not solutions:
        fail(f"{data / 'solutions.jsonl'}: no labelled solution could be read")
    values = _ints(ns, "--ns") or [1]
    stats = json.loads(read_text(data / "stats.json", "stats file"))
    problems = fp.load_problems(Path(stats["figures"]))
    _set_threads(threads)
    critic = _Critic(model, device, batch_size, max_new_tokens)
    out.mkdir(parents=True, exist_ok=True)
    with stage_progress(err_console) as progress:
        rows = fp.critique_solutions(solutions, critic.get(), out / "critiques.jsonl", batch_size,
                                     lambda s, d, t: progress(s, d, t))  # fmt: skip
    summary = fp.evaluate(solutions, rows, problems, values)
    summary.update({"model": model, "data": str(data), "bad_lines": bad})
    fp.write_text(out / "summary.json", json.dumps(summary, indent=2, sort_keys=True) + "\n")
    fp.write_text(out / "report.md", fp.report_markdown(summary))
    typer.echo(json.dumps(summary))
