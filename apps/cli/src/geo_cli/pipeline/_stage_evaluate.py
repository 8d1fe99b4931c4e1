"""The evaluate stage: generate candidates with the policy, execute them with geodsl, score every strategy.

Every evaluation split (``data.test`` as ``test``, then ``data.splits`` in order) is scored on its own.
For each problem it records, in one JSON line (appended and synced, so a crash loses at most the
problems in flight and a rerun continues after the last complete line):

* greedy: one greedy candidate per trace type;
* traces: D sampled candidates per trace type (the pools standard MTE and CG-MTE read);
* unified: a width V x D beam on the bare question, with each candidate's detected trace pattern
  (SC beam, the adaptive beam-SC baselines, trace shares);
* sc_sample: V x D sampled candidates on the bare question (SC sampling);
* refined_bon: the refined best-of-N answer when a PRM is configured.

Problems are generated ``batch_size`` at a time: the requests of a chunk of problems go to the sampler
in one call (the transformers backend decodes requests of equal settings together) and the outputs
are split back per problem. Every candidate is executed as its trace format (programs on geodsl's
executor, PAL scripts in the sandbox); a cut-off or failing candidate is None (a sample that casts no
vote). The recorded pools then go through ``geotts.report.evaluate`` for the paper's tables and figures.

The first split writes ``candidates.jsonl``, ``pools.jsonl`` and ``tts/`` in the stage folder; every other
split writes the same files under ``splits/<name>/``. ``results.json`` holds them all (see
``docs/pipeline.md`` for its fields and their units).
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
from collections.abc import Generator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from geo_cli.pipeline._config import BUNDLED_PREFIX, TINY_PREFIX, DatasetSpec, EvaluateSettings
from geo_cli.pipeline._context import StageContext, captured_output
from geo_cli.pipeline._stages_prep import bundled_path, train_model_dir
from geo_cli.pipeline._state import atomic_write_text, done_lines
from geo_cli.pipeline.errors import PipelineConfigError, StageFailedError

if TYPE_CHECKING:
    from geodsl.data import PGPSRecord
    from geodsl.sandbox import Sandbox
    from geotts import Completion, GenerationRequest, Problem, RefinedBestOfN

__all__ = (
    "CANDIDATES",
    "RESULTS",
    "SPLITS_DIR",
    "run_evaluate",
    "sc_curve",
    "score_split",
    "split_folder",
    "write_results",
)

CANDIDATES = "candidates.jsonl"
RESULTS = "results.json"
SPLITS_DIR = "splits"
"""Where the splits after the first one write their files: ``splits/<name>/``."""
#: Problems per split whose sampled candidate texts are kept for the report's gallery (greedy texts: all).
_KEEP_TEXTS = 8
#: How each figure of ``results.json`` is measured (also written into the file).
UNITS = {
    "greedy": "fraction (0-1), first split",
    "sc_sample[].accuracy": "fraction (0-1)",
    "tts.*.accuracy": "fraction (0-1)",
    "splits.*.greedy": "percent (0-100)",
    "splits.*.by_type.*.accuracy": "percent (0-100)",
    "splits.*.by_operator.*.accuracy": "percent (0-100)",
    "splits.*.sc_sample[].accuracy": "fraction (0-1)",
    "splits.*.tts.*.accuracy": "fraction (0-1)",
    "asn": "candidates per problem",
}


def split_folder(stage_folder: Path, name: str, primary: bool) -> Path:
    """Where one split's candidates, pools and geotts report live: the stage folder for the first split."""
    return stage_folder if primary else stage_folder / SPLITS_DIR / name


def _model_kind(name: str | None) -> str:
    if name is None or name == "trained":
        return "trained"
    if name.startswith(TINY_PREFIX):
        return "tiny"
    if name.startswith(BUNDLED_PREFIX):
        return "bundled"
    return "folder_or_hub"


def _model_path(ctx: StageContext, name: str | None, folder: str) -> str:
    kind = _model_kind(name)
    if kind == "trained" or name is None:
        return str(train_model_dir(ctx.upstream["train"]))
    if kind == "bundled":
        return str(bundled_path(name))
    if kind == "tiny":
        import geotrain

        out = ctx.folder / folder
        if not (out / "config.json").is_file():
            with captured_output(ctx.folder / "evaluate.log"):
                geotrain.build_tiny_model(name.removeprefix(TINY_PREFIX), out, seed=0)  # type: ignore[arg-type]
        return str(out)
    local = ctx.base / name
    return str(local) if local.exists() else name


def _one_line(exc: BaseException, limit: int = 300) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _load_errors() -> tuple[type[Exception], ...]:
    """What loading a model folder that does not load raises.

    Missing or unreadable files, a bad config or tokenizer (geotts's BackendError is a RuntimeError), a
    truncated weights file (the error of safetensors, which transformers reads weights with).
    """
    errors: list[type[Exception]] = [OSError, ValueError, RuntimeError]
    with contextlib.suppress(ImportError):
        from safetensors import SafetensorError

        errors.append(SafetensorError)
    return tuple(errors)


def _load_transformers(path: str, settings: EvaluateSettings) -> Any:
    """The transformers sampler of ``path``; a folder that does not load is one error naming it."""
    from geotts.backends.transformers import ProgramGrammar, TransformersSampler

    grammar = None
    if settings.program_grammar:
        from geodsl.ops import program_grammar

        # The policy writes program traces as the MTS PA records it learns from state them: instantiated
        # (the problem's values and constants in place of N<i> and C<number>), so the grammar is the values one.
        grammar = ProgramGrammar.from_data(program_grammar("values"))
    if settings.threads is not None:
        import torch

        torch.set_num_threads(settings.threads)
    try:
        return TransformersSampler.from_pretrained(
            path, device=settings.device, batch_size=settings.batch_size, program_grammar=grammar
        )
    except _load_errors() as exc:
        raise StageFailedError(
            f"evaluate: cannot load the model in {path}: {type(exc).__name__}: {_one_line(exc)}"
        ) from exc


def _sampler(ctx: StageContext, settings: EvaluateSettings) -> tuple[Any, str]:
    path = _model_path(ctx, settings.model, "policy_model")
    if settings.backend == "transformers":
        return _load_transformers(path, settings), path
    if settings.backend == "vllm":
        from geotts.backends.vllm import VLLMSampler

        return VLLMSampler(path, options=settings.vllm), path
    from geotts.backends.openai import OpenAICompatibleSampler

    if settings.base_url is None:
        raise PipelineConfigError("evaluate: backend 'openai' needs base_url")
    return OpenAICompatibleSampler(settings.base_url, path), path


def _safetensors_parameters(folder: Path) -> int | None:
    """Parameters stored in a folder's ``*.safetensors`` files, read from their headers (no weights loaded)."""
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        return None
    total = 0
    for file in files:
        with file.open("rb") as handle:
            (size,) = struct.unpack("<Q", handle.read(8))
            header: dict[str, Any] = json.loads(handle.read(size))
        for key, entry in header.items():
            if key != "__metadata__":
                count = 1
                for dim in entry["shape"]:
                    count *= int(dim)
                total += count
    return total


def _model_info(ctx: StageContext, sampler: Any, path: str) -> dict[str, Any]:
    """What ``results.json`` says about the policy: where, how big, which architecture, how prompted."""
    s = ctx.config.evaluate
    kind = _model_kind(s.model)
    info: dict[str, Any] = {
        "name": s.model or "trained", "kind": kind, "path": path, "parameters": None, "architecture": None,
        "vocab_size": None, "setting": s.setting, "backend": s.backend,
        "base_model": ctx.config.train.base_model if kind == "trained" and ctx.config.train else None,
    }  # fmt: skip
    model = getattr(sampler, "model", None)
    if s.backend == "transformers" and model is not None:
        config = model.config
        info["parameters"] = int(sum(p.numel() for p in model.parameters()))
        info["architecture"] = str(config.model_type)
        info["vocab_size"] = int(config.get_text_config().vocab_size)
        return info
    folder = Path(path)
    if (folder / "config.json").is_file():
        with contextlib.suppress(OSError, ValueError, struct.error, KeyError, TypeError):
            config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
            text = config.get("text_config") or config
            info["architecture"] = config.get("model_type")
            info["vocab_size"] = text.get("vocab_size", config.get("vocab_size"))
            info["parameters"] = _safetensors_parameters(folder)
    return info


class _Executor:
    """Candidate -> answer: executed as its trace format; None when cut off, unreadable or failing."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox

    def pattern(self, text: str) -> str:
        from geodsl.traces import detect_format, reasoning_part

        return detect_format(reasoning_part(text)) or "other"

    def extract(self, completion: Completion, trace_type: str | None, problem: Problem) -> float | None:
        """The geotts extractor form: the problem's N list is read from ``problem.metadata["numbers"]``."""
        numbers = problem.metadata.get("numbers", [])
        return self.answer(completion, None, [str(n) for n in numbers] if isinstance(numbers, list) else [])

    def answer(self, completion: Completion, fmt: str | None, numbers: Sequence[str]) -> float | None:
        from geodsl.traces import candidate_answer

        if completion.finish_reason == "length":
            return None
        return candidate_answer(completion.text, fmt, numbers=numbers, sandbox=self.sandbox)


def _prompts(rec: PGPSRecord, s: EvaluateSettings) -> tuple[dict[str, str], str]:
    """The user text per trace type and the bare question of the unified prompts.

    ``pa``: ``geosynth.mts.pa_prompt``, the text the PA records were trained on. ``paper``: geotts's
    wording of the paper's instructions around the same question (in the ``clauses`` setting the
    question is preceded by the diagram's clauses, as ``pa_prompt`` states them).
    """
    from geosynth.mts import pa_prompt

    clauses = [*rec.stru_clauses, *rec.sem_clauses]
    question = pa_prompt(rec.text, clauses, None, s.setting)
    if s.instructions == "pa":
        return {t: pa_prompt(rec.text, clauses, t, s.setting) for t in s.order}, question
    from geotts import TRACE_INSTRUCTIONS

    return {t: TRACE_INSTRUCTIONS[t].replace("{question}", question) for t in s.order}, question


def _requests(rec: PGPSRecord, image: Path | None, s: EvaluateSettings) -> list[GenerationRequest]:
    """The requests of one problem: V greedy, V sampled (D each), the unified sampled list, the beam."""
    from geotts import BeamParams, ChatMessage, GenerationRequest, SamplingParams

    images = () if image is None or s.setting == "clauses" else (image,)
    per_trace, question = _prompts(rec, s)

    def req(text: str, trace: str | None, n: int, params: Any) -> GenerationRequest:
        return GenerationRequest(messages=(ChatMessage(role="user", content=text),), images=images,
                                 trace_type=trace, n=n, params=params, numbers=tuple(rec.numbers))  # fmt: skip

    width = len(s.order) * s.depth
    greedy = SamplingParams(temperature=0.0, max_tokens=s.max_tokens)
    sample = SamplingParams(temperature=s.temperature, max_tokens=s.max_tokens, seed=s.seed)
    out = [req(per_trace[t], t, 1, greedy) for t in s.order]
    out += [req(per_trace[t], t, s.depth, sample) for t in s.order]
    out.append(req(question, None, width, sample))
    if s.beam:
        out.append(req(question, None, width, BeamParams(max_tokens=s.max_tokens)))
    return out


def _operators(expression: str) -> list[str]:
    """The distinct operators of a gold program (``Get`` left out: every program ends with it)."""
    from geodsl import GeoDSLError, parse_program

    try:
        steps = parse_program(expression).steps
    except GeoDSLError:
        return []
    return sorted({step.op for step in steps} - {"Get"})


def _row(
    rec: PGPSRecord, outputs: Sequence[list[Completion]], run: _Executor, s: EvaluateSettings, keep: bool
) -> dict[str, Any]:
    """One problem's line of ``candidates.jsonl`` from the outputs of its :func:`_requests`."""
    v = len(s.order)
    numbers = rec.numbers

    def answers(comps: Sequence[Completion], fmt: str | None) -> list[float | None]:
        return [run.answer(c, fmt, numbers) for c in comps]

    row: dict[str, Any] = {
        "id": rec.id, "gold": rec.answer_value, "question": rec.text, "diagram": rec.diagram,
        "type": rec.knowledge_type, "operators": _operators(rec.expression),
        "greedy": {t: answers(outputs[i], t)[0] for i, t in enumerate(s.order)},
        "traces": {t: answers(outputs[v + i], t) for i, t in enumerate(s.order)},
        "sc_sample": answers(outputs[2 * v], None),
        "tokens": sum(c.num_tokens or 0 for out in outputs for c in out),
        # every problem's greedy texts, so failures can be read afterwards (a few KB per problem)
        "greedy_texts": {t: outputs[i][0].text for i, t in enumerate(s.order)},
    }  # fmt: skip
    if s.beam:
        beam = outputs[2 * v + 1]
        row["unified"] = answers(beam, None)
        row["unified_patterns"] = [run.pattern(c.text) for c in beam]
    if keep:
        row["texts"] = {t: outputs[v + i][0].text for i, t in enumerate(s.order)}
    return row


@contextlib.contextmanager
def _sandbox(s: EvaluateSettings) -> Generator[Sandbox]:
    from geodsl.sandbox import Sandbox, SandboxLimits

    box = Sandbox(
        s.sandbox_workers, SandboxLimits(wall_seconds=s.sandbox_timeout, cpu_seconds=s.sandbox_timeout)
    )
    try:
        yield box
    finally:
        box.close()


def _refined_strategy(ctx: StageContext, sampler: Any) -> RefinedBestOfN:
    from geoprm.backends.transformers import TransformersCritic
    from geotts import RefinedBestOfN, RefinedBestOfNConfig, SamplingParams

    s = ctx.config.evaluate
    if s.prm is None:
        raise PipelineConfigError("evaluate: refined best-of-N needs the prm section")
    critic = TransformersCritic.from_pretrained(
        _model_path(ctx, s.prm.model, "prm_model"), device=s.device, max_new_tokens=s.prm.max_critique_tokens
    )
    params = SamplingParams(temperature=s.temperature, max_tokens=s.max_tokens, seed=s.seed)
    return RefinedBestOfN(critic, RefinedBestOfNConfig(n=s.prm.n, params=params))


def _program_critic(ctx: StageContext) -> Any:
    """The critic of the program layout, wrapped to keep its critiques' texts."""
    from geo_cli.pipeline._stage_prm import RecordingCritic
    from geoprm.backends.transformers import TransformersCritic

    s = ctx.config.evaluate
    if s.prm is None:
        raise PipelineConfigError("evaluate: a critic needs the prm section")
    path = _model_path(ctx, s.prm.model, "prm_model")
    try:
        critic = TransformersCritic.from_pretrained(
            path, device=s.device, max_new_tokens=s.prm.max_critique_tokens, batch_size=s.prm.batch_size
        )
    except _load_errors() as exc:
        raise StageFailedError(
            f"evaluate: cannot load the critic in {path}: {type(exc).__name__}: {_one_line(exc)}"
        ) from exc
    return RecordingCritic(critic)


def _program_prm(ctx: StageContext, name: str, records: Sequence[PGPSRecord], sampler: Any, critic: Any,
                 run: _Executor, folder: Path, entry: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    """One split's PRM curves, step F1 and gallery (``geo_cli.pipeline._stage_prm``)."""
    from geo_cli import _figure_prm as fp
    from geo_cli.pipeline._stage_prm import prm_split, prm_summary

    rows = prm_split(ctx, name, records, sampler, critic, fp.layout().extractor(run.extract), folder)
    greedy = float(entry["greedy"].get("program", 0.0))
    return prm_summary(ctx, name, rows, greedy, ctx.config.report.gallery)


def _refined(ctx: StageContext, name: str, records: Sequence[PGPSRecord], images: Path, sampler: Any,
             strategy: RefinedBestOfN, run: _Executor) -> dict[str, float | None]:  # fmt: skip
    from geotts import Problem

    out: dict[str, float | None] = {}
    for rec in records:
        image = _image(rec, images, ctx.config.evaluate)
        problem = Problem(
            id=rec.id, question=rec.text, images=() if image is None else (image,),
            metadata={"numbers": list(rec.numbers)},
        )  # fmt: skip
        decision = strategy.run(sampler, [problem], run.extract)[0]
        out[rec.id] = decision.answer if isinstance(decision.answer, float | int) else None
        ctx.events.progress("evaluate", len(out), len(records), f"{name}: refined best-of-N")
    return out


def sc_curve(rows: Sequence[dict[str, Any]], budgets: Sequence[int]) -> list[dict[str, Any]]:
    """Accuracy (fraction) and ASN of self-consistency over the sampled unified list at each budget."""
    from geotts import self_consistency
    from geotts.report import is_correct

    out: list[dict[str, Any]] = []
    for k in budgets:
        decisions = [self_consistency(r["sc_sample"], k=k) for r in rows]
        acc = sum(is_correct(d.answer, r["gold"]) for d, r in zip(decisions, rows, strict=True)) / len(rows)
        out.append({"strategy": "sc_sample", "budget": k, "accuracy": acc, "asn": float(k)})
    return out


def _greedy_correct(rows: Sequence[dict[str, Any]], order: Sequence[str]) -> dict[str, int]:
    """Problems whose greedy candidate of each trace type is correct."""
    from geotts.report import is_correct

    return {t: sum(is_correct(r["greedy"][t], r["gold"]) for r in rows) for t in order}


def _breakdown(rows: Sequence[dict[str, Any]], trace: str, keys: str) -> dict[str, dict[str, Any]]:
    """Greedy accuracy (percent) of ``trace`` per problem type (``keys="type"``) or per gold operator."""
    from geotts.report import is_correct

    tally: dict[str, list[int]] = {}
    for r in rows:
        labels = [str(r.get("type") or "unknown")] if keys == "type" else list(r.get("operators") or ["none"])
        for label in labels:
            counts = tally.setdefault(label, [0, 0])
            counts[0] += 1
            counts[1] += is_correct(r["greedy"][trace], r["gold"])
    ranked = sorted(tally.items(), key=lambda kv: (-kv[1][0], kv[0]))
    return {k: {"problems": n, "correct": c, "accuracy": 100.0 * c / n} for k, (n, c) in ranked}


def _write_pools(rows: Sequence[dict[str, Any]], path: Path) -> None:
    keys = ("id", "gold", "traces", "unified", "unified_patterns")
    atomic_write_text(path, "".join(json.dumps({k: r[k] for k in keys if k in r}) + "\n" for r in rows))


def score_split(
    rows: Sequence[dict[str, Any]],
    settings: EvaluateSettings,
    folder: Path,
    refined: dict[str, float | None],
    *,
    where: str = ".",
    source: str = "",
    benchmark: str | None = None,
) -> dict[str, Any]:
    """Score every strategy on one split's recorded candidates; write ``pools.jsonl`` and ``tts/`` into ``folder``.

    Args:
        rows: One record per problem (the lines of the split's ``candidates.jsonl``).
        settings: The evaluate settings (trace order, depth, PRM).
        folder: The split's folder.
        refined: Refined best-of-N answers by problem id (empty: no PRM).
        where: ``folder`` relative to the stage folder (recorded for the report).
        source: Where the split's problems come from, in words.
        benchmark: The public benchmark the split samples (``PGPS9K``, ``Geometry3K``), or None.

    Returns:
        The split's entry of ``results.json``: greedy, by-type and by-operator accuracy in percent,
        ``sc_sample`` and ``tts`` (geotts's evaluation) with accuracy as a fraction.
    """
    from geotts.report import evaluate, is_correct, load_pools, write_report

    s = settings
    _write_pools(rows, folder / "pools.jsonl")
    ev = evaluate(load_pools(folder / "pools.jsonl"), depths=range(1, s.depth + 1), order=list(s.order))
    write_report(ev, folder / "tts")
    correct = _greedy_correct(rows, s.order)
    best = max(s.order, key=lambda t: correct[t])  # the first in order on ties
    entry: dict[str, Any] = {
        "problems": len(rows), "folder": where, "source": source, "benchmark": benchmark,
        "greedy": {t: 100.0 * c / len(rows) for t, c in correct.items()}, "greedy_correct": correct,
        "best_trace": best,
        "sc_sample": sc_curve(rows, range(1, len(s.order) * s.depth + 1)),
        "tts": ev.model_dump(mode="json"), "tokens": sum(r.get("tokens", 0) for r in rows),
        "by_type": _breakdown(rows, best, "type"), "by_operator": _breakdown(rows, best, "operator"),
    }  # fmt: skip
    if refined:
        solved = sum(is_correct(refined.get(r["id"]), r["gold"]) for r in rows)
        entry["refined_bon"] = {"n": s.prm.n if s.prm else 0, "accuracy": solved / len(rows)}
    return entry


def write_results(
    folder: Path,
    splits: dict[str, dict[str, Any]],
    settings: EvaluateSettings,
    model: dict[str, Any],
    *,
    prm: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Write ``results.json``: every split, the first one's figures also at the top level, and the policy.

    The top level keeps the layout of a single-split run (greedy as a fraction); ``splits`` holds each
    split's entry (greedy in percent) and ``model`` the policy.

    Args:
        folder: The stage folder.
        splits: The entries of :func:`score_split` by split name, the first split first.
        settings: The evaluate settings.
        model: What the policy is (path, parameters, architecture, vocabulary, setting).
        prm: The program layout's PRM results by split (``geo_cli.pipeline._stage_prm.prm_summary``):
            written as ``prm`` with every split's curves in one list, ``step_f1`` the macro step F1 (0-1)
            of the first split with figure labels, and each split's entry under ``prm.splits``.

    Returns:
        The stage summary: the first split's problem count and best strategy, and each split's best.
    """
    name, first = next(iter(splits.items()))
    greedy = {t: c / first["problems"] for t, c in first["greedy_correct"].items()}
    results: dict[str, Any] = {
        "problems": first["problems"], "order": list(settings.order), "depth": settings.depth,
        "greedy": greedy, "sc_sample": first["sc_sample"], "tts": first["tts"], "tokens": first["tokens"],
        "primary": name, "model": model, "units": UNITS, "splits": splits,
    }  # fmt: skip
    if "refined_bon" in first:
        results["refined_bon"] = first["refined_bon"]
    if prm:
        scored = [e["step_f1"] for e in prm.values() if "step_f1" in e]
        results["prm"] = {
            "step_f1": scored[0]["macro_f1"] if scored else None,
            "curves": [row for e in prm.values() for row in e["curves"]],
            "answered_curves": [row for e in prm.values() for row in e.get("answered_curves", [])],
            "ns": sorted({row["n"] for e in prm.values() for row in e["curves"]}),
            "splits": prm,
        }
    atomic_write_text(folder / RESULTS, json.dumps(results, indent=2))

    def best(entry: dict[str, Any]) -> dict[str, Any]:
        top = max(entry["tts"]["baselines"], key=lambda p: p["accuracy"])
        return {"strategy": top["strategy"], "accuracy": top["accuracy"], "asn": top["asn"]}

    return {
        "problems": first["problems"],
        "best": best(first),
        "splits": {n: {"problems": e["problems"], **best(e)} for n, e in splits.items()},
    }


def _image(rec: PGPSRecord, images: Path, s: EvaluateSettings) -> Path | None:
    if s.setting == "clauses" or not rec.diagram or not (images / rec.diagram).is_file():
        return None
    return images / rec.diagram


def _source(spec: DatasetSpec) -> str:
    if spec.source == "bundled_sample":
        text = f"geodsl's bundled {spec.sample} sample"
    elif spec.source == "pgps_file":
        text = f"PGPS file {spec.path}"
    else:
        text = f"synthesized ({spec.synth_kind}, seed {spec.synth_seed})"
    if spec.offset or spec.limit is not None:
        text += f", records {spec.offset}..{'' if spec.limit is None else spec.offset + spec.limit}"
    return text


def _benchmark(name: str, spec: DatasetSpec) -> str | None:
    """The public benchmark a split samples, read from its sample name, file name or split name."""
    if spec.source == "synthesize":
        return None
    text = (spec.sample if spec.source == "bundled_sample" else f"{spec.path} {name}").lower()
    if "pgps9k" in text:
        return "PGPS9K"
    if "geometry3k" in text or "geo3k" in text:
        return "Geometry3K"
    return None


def _generate(ctx: StageContext, name: str, records: Sequence[PGPSRecord], path: Path, sampler: Any,
              run: _Executor) -> list[dict[str, Any]]:  # fmt: skip
    """Candidates of every problem of one split not yet in ``path``, ``batch_size`` problems per call."""
    s = ctx.config.evaluate
    images = ctx.upstream["data"] / "images"
    rows = done_lines(path)
    done = {r["id"] for r in rows}
    todo = [(i, rec) for i, rec in enumerate(records) if rec.id not in done]
    finished = len(records) - len(todo)
    if finished:
        ctx.events.progress("evaluate", finished, len(records), f"{name} problems")
    with path.open("a", encoding="utf-8") as sink:
        for start in range(0, len(todo), s.batch_size):
            chunk = todo[start : start + s.batch_size]
            per_problem = [_requests(rec, _image(rec, images, s), s) for _, rec in chunk]
            outputs = sampler.generate([r for reqs in per_problem for r in reqs])
            wanted = sum(len(reqs) for reqs in per_problem)
            if len(outputs) != wanted:
                raise StageFailedError(
                    f"evaluate: the {s.backend} sampler answered {len(outputs)} of {wanted} requests"
                )
            at = 0
            for (i, rec), reqs in zip(chunk, per_problem, strict=True):
                row = _row(rec, outputs[at : at + len(reqs)], run, s, keep=i < _KEEP_TEXTS)
                at += len(reqs)
                sink.write(json.dumps(row) + "\n")
                sink.flush()
                os.fsync(sink.fileno())
                rows.append(row)
                finished += 1
                ctx.events.progress("evaluate", finished, len(records), f"{name} problems")
    order = {r.id: i for i, r in enumerate(records)}
    rows.sort(key=lambda r: order.get(r["id"], len(order)))
    return rows


def _records(ctx: StageContext, name: str) -> list[PGPSRecord]:
    from geodsl.data import load_pgps

    file = ctx.upstream["data"] / f"{name}.json"
    if not file.is_file():
        raise StageFailedError(f"evaluate: split {name!r} has no records file {file}; rerun the data stage")
    records = load_pgps(file)
    if not records:
        raise PipelineConfigError(f"evaluate: split {name!r} ({file}) has no problems")
    return records


def run_evaluate(ctx: StageContext) -> dict[str, Any]:
    """Generate and execute candidates for every problem of every evaluation split (resumable), then score."""
    s = ctx.config.evaluate
    specs = ctx.config.data.evaluation_splits()
    records = {name: _records(ctx, name) for name in specs}
    with captured_output(ctx.folder / "evaluate.log"):
        sampler, path = _sampler(ctx, s)
        model = _model_info(ctx, sampler, path)
        program_prm = s.prm is not None and s.prm.layout == "program"
        strategy = _refined_strategy(ctx, sampler) if s.prm is not None and not program_prm else None
        critic = _program_critic(ctx) if program_prm else None
    entries: dict[str, dict[str, Any]] = {}
    prm: dict[str, dict[str, Any]] = {}
    with _sandbox(s) as box:
        run = _Executor(box)
        for index, (name, spec) in enumerate(specs.items()):
            folder = split_folder(ctx.folder, name, primary=index == 0)
            folder.mkdir(parents=True, exist_ok=True)
            rows = _generate(ctx, name, records[name], folder / CANDIDATES, sampler, run)
            images = ctx.upstream["data"] / "images"
            refined = (
                _refined(ctx, name, records[name], images, sampler, strategy, run)
                if strategy is not None
                else {}
            )
            where = str(folder.relative_to(ctx.folder)) if index else "."
            entries[name] = score_split(
                rows, s, folder, refined, where=where, source=_source(spec), benchmark=_benchmark(name, spec)
            )
            if critic is not None:
                prm[name] = _program_prm(
                    ctx, name, records[name], sampler, critic, run, folder, entries[name]
                )
    summary = write_results(ctx.folder, entries, s, model, prm=prm)
    return summary
