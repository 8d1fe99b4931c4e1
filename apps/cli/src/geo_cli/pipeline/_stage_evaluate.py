"""The evaluate stage: generate candidates with the policy, execute them with geodsl, score every strategy.

For each test problem it records, in one JSON line (appended and flushed, so a crash loses at most
the problem in flight and a rerun continues after the last complete line):

* greedy: one greedy candidate per trace type;
* traces: D sampled candidates per trace type (the pools standard MTE and CG-MTE read);
* unified: a width V x D beam on the bare question, with each candidate's detected trace pattern
  (SC beam, the adaptive beam-SC baselines, trace shares);
* sc_sample: V x D sampled candidates on the bare question (SC sampling);
* refined_bon: the refined best-of-N answer when a PRM is configured.

Every candidate is executed as its trace format (programs on geodsl's executor, PAL scripts in the
sandbox); a cut-off or failing candidate is None (a sample that casts no vote). The recorded pools
then go through ``geotts.report.evaluate`` for the paper's tables and figures.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Generator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from geo_cli.pipeline._config import TINY_PREFIX, EvaluateSettings
from geo_cli.pipeline._context import StageContext, captured_output
from geo_cli.pipeline._stages_prep import train_model_dir
from geo_cli.pipeline._state import atomic_write_text
from geo_cli.pipeline.errors import PipelineConfigError

if TYPE_CHECKING:
    from geodsl.data import PGPSRecord
    from geodsl.sandbox import Sandbox
    from geotts import Completion, GenerationRequest, Problem

__all__ = ("CANDIDATES", "run_evaluate", "sc_curve", "score_candidates")

CANDIDATES = "candidates.jsonl"
#: Problems whose candidate texts are kept for the report's gallery.
_KEEP_TEXTS = 8


def _instructions(kind: str) -> dict[str, str]:
    if kind == "paper":
        from geotts import TRACE_INSTRUCTIONS

        return dict(TRACE_INSTRUCTIONS)
    from geosynth.mts import PA_INSTRUCTIONS

    return {t: "{question}\n" + text for t, text in PA_INSTRUCTIONS.items()}


def _model_path(ctx: StageContext, name: str | None, folder: str) -> str:
    if name is None or name == "trained":
        return str(train_model_dir(ctx.upstream["train"]))
    if name.startswith(TINY_PREFIX):
        import geotrain

        out = ctx.folder / folder
        if not (out / "config.json").is_file():
            with captured_output(ctx.folder / "evaluate.log"):
                geotrain.build_tiny_model(name.removeprefix(TINY_PREFIX), out, seed=0)  # type: ignore[arg-type]
        return str(out)
    local = ctx.base / name
    return str(local) if local.exists() else name


def _sampler(ctx: StageContext, settings: EvaluateSettings) -> Any:
    path = _model_path(ctx, settings.model, "policy_model")
    if settings.backend == "transformers":
        from geotts.backends.transformers import TransformersSampler

        return TransformersSampler.from_pretrained(path, device=settings.device)
    if settings.backend == "vllm":
        from geotts.backends.vllm import VLLMSampler

        return VLLMSampler(path, options=settings.vllm)
    from geotts.backends.openai import OpenAICompatibleSampler

    if settings.base_url is None:
        raise PipelineConfigError("evaluate: backend 'openai' needs base_url")
    return OpenAICompatibleSampler(settings.base_url, path)


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


def _requests(
    rec: PGPSRecord, image: Path | None, s: EvaluateSettings, templates: dict[str, str]
) -> list[Any]:
    from geotts import BeamParams, ChatMessage, GenerationRequest, SamplingParams

    images = () if image is None else (image,)

    def req(template: str, trace: str | None, n: int, params: Any) -> GenerationRequest:
        text = template.replace("{question}", rec.text)
        return GenerationRequest(messages=(ChatMessage(role="user", content=text),), images=images,
                                 trace_type=trace, n=n, params=params)  # fmt: skip

    width = len(s.order) * s.depth
    greedy = SamplingParams(temperature=0.0, max_tokens=s.max_tokens)
    sample = SamplingParams(temperature=s.temperature, max_tokens=s.max_tokens, seed=s.seed)
    out = [req(templates[t], t, 1, greedy) for t in s.order]
    out += [req(templates[t], t, s.depth, sample) for t in s.order]
    out.append(req("{question}", None, width, sample))
    if s.beam:
        out.append(req("{question}", None, width, BeamParams(max_tokens=s.max_tokens)))
    return out


def _solve(
    rec: PGPSRecord, image: Path | None, sampler: Any, run: _Executor, s: EvaluateSettings, keep: bool
) -> dict[str, Any]:
    templates = _instructions(s.instructions)
    outputs = sampler.generate(_requests(rec, image, s, templates))
    v = len(s.order)
    numbers = rec.numbers

    def answers(comps: Sequence[Completion], fmt: str | None) -> list[float | None]:
        return [run.answer(c, fmt, numbers) for c in comps]

    row: dict[str, Any] = {
        "id": rec.id, "gold": rec.answer_value, "question": rec.text, "diagram": rec.diagram,
        "greedy": {t: answers(outputs[i], t)[0] for i, t in enumerate(s.order)},
        "traces": {t: answers(outputs[v + i], t) for i, t in enumerate(s.order)},
        "sc_sample": answers(outputs[2 * v], None),
        "tokens": sum(c.num_tokens or 0 for out in outputs for c in out),
    }  # fmt: skip
    if s.beam:
        beam = outputs[2 * v + 1]
        row["unified"] = answers(beam, None)
        row["unified_patterns"] = [run.pattern(c.text) for c in beam]
    if keep:
        row["texts"] = {t: outputs[v + i][0].text for i, t in enumerate(s.order)}
    return row


def _done_rows(path: Path) -> list[dict[str, Any]]:
    """Complete lines of an earlier run; a torn last line (a crash mid-write) is dropped and the file fixed."""
    if not path.is_file():
        return []
    rows: list[dict[str, Any]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            break
    atomic_write_text(path, "".join(json.dumps(r) + "\n" for r in rows))
    return rows


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


def _refined(ctx: StageContext, records: Sequence[PGPSRecord], images: Path, sampler: Any,
             run: _Executor) -> dict[str, float | None]:  # fmt: skip
    from geoprm.backends.transformers import TransformersCritic
    from geotts import Problem, RefinedBestOfN, RefinedBestOfNConfig, SamplingParams

    s = ctx.config.evaluate
    if s.prm is None:
        raise PipelineConfigError("evaluate: refined best-of-N needs the prm section")
    critic = TransformersCritic.from_pretrained(
        _model_path(ctx, s.prm.model, "prm_model"), device=s.device, max_new_tokens=s.prm.max_critique_tokens
    )
    params = SamplingParams(temperature=s.temperature, max_tokens=s.max_tokens, seed=s.seed)
    strategy = RefinedBestOfN(critic, RefinedBestOfNConfig(n=s.prm.n, params=params))
    out: dict[str, float | None] = {}
    for rec in records:
        image = images / rec.diagram if rec.diagram else None
        problem = Problem(
            id=rec.id, question=rec.text, images=() if image is None else (image,),
            metadata={"numbers": list(rec.numbers)},
        )  # fmt: skip
        decision = strategy.run(sampler, [problem], run.extract)[0]
        out[rec.id] = decision.answer if isinstance(decision.answer, float | int) else None
        ctx.events.progress("evaluate", len(out), len(records), "refined best-of-N")
    return out


def sc_curve(rows: Sequence[dict[str, Any]], budgets: Sequence[int]) -> list[dict[str, Any]]:
    """Accuracy and ASN of self-consistency over the sampled unified list at each budget."""
    from geotts import self_consistency
    from geotts.report import is_correct

    out: list[dict[str, Any]] = []
    for k in budgets:
        decisions = [self_consistency(r["sc_sample"], k=k) for r in rows]
        acc = sum(is_correct(d.answer, r["gold"]) for d, r in zip(decisions, rows, strict=True)) / len(rows)
        out.append({"strategy": "sc_sample", "budget": k, "accuracy": acc, "asn": float(k)})
    return out


def _write_pools(rows: Sequence[dict[str, Any]], path: Path) -> None:
    keys = ("id", "gold", "traces", "unified", "unified_patterns")
    atomic_write_text(path, "".join(json.dumps({k: r[k] for k in keys if k in r}) + "\n" for r in rows))


def score_candidates(
    rows: Sequence[dict[str, Any]], settings: EvaluateSettings, folder: Path, refined: dict[str, float | None]
) -> dict[str, Any]:
    """Score every strategy on recorded candidates; write ``pools.jsonl``, ``results.json`` and ``tts/``.

    Args:
        rows: One record per problem (the lines of ``candidates.jsonl``).
        settings: The evaluate settings (trace order, depth, PRM).
        folder: Where to write.
        refined: Refined best-of-N answers by problem id (empty: no PRM).

    Returns:
        The stage summary: problem count and the best strategy at the largest budget.
    """
    from geotts.report import evaluate, is_correct, load_pools, write_report

    s = settings
    _write_pools(rows, folder / "pools.jsonl")
    ev = evaluate(load_pools(folder / "pools.jsonl"), depths=range(1, s.depth + 1), order=list(s.order))
    write_report(ev, folder / "tts")
    n = len(rows)
    greedy = {t: sum(is_correct(r["greedy"][t], r["gold"]) for r in rows) / n for t in s.order}
    results: dict[str, Any] = {
        "problems": n, "order": list(s.order), "depth": s.depth, "greedy": greedy,
        "sc_sample": sc_curve(rows, range(1, len(s.order) * s.depth + 1)),
        "tts": ev.model_dump(mode="json"), "tokens": sum(r.get("tokens", 0) for r in rows),
    }  # fmt: skip
    if refined:
        correct = sum(is_correct(refined.get(r["id"]), r["gold"]) for r in rows)
        results["refined_bon"] = {"n": s.prm.n if s.prm else 0, "accuracy": correct / n}
    atomic_write_text(folder / "results.json", json.dumps(results, indent=2))
    best = max(ev.baselines, key=lambda p: p.accuracy)
    return {"problems": n, "best": {"strategy": best.strategy, "accuracy": best.accuracy, "asn": best.asn}}


def run_evaluate(ctx: StageContext) -> dict[str, Any]:
    """Generate and execute candidates for every test problem (resumable), then score every strategy."""
    from geodsl.data import load_pgps

    s = ctx.config.evaluate
    records = load_pgps(ctx.upstream["data"] / "test.json")
    if not records:
        raise PipelineConfigError("evaluate: the test split is empty")
    images = ctx.upstream["data"] / "images"
    path = ctx.folder / CANDIDATES
    rows = _done_rows(path)
    done = {r["id"] for r in rows}
    with captured_output(ctx.folder / "evaluate.log"):
        sampler = _sampler(ctx, s)
    with _sandbox(s) as box, path.open("a", encoding="utf-8") as sink:
        run = _Executor(box)
        for i, rec in enumerate(records):
            if rec.id not in done:
                image = images / rec.diagram if rec.diagram and (images / rec.diagram).is_file() else None
                row = _solve(rec, image, sampler, run, s, keep=i < _KEEP_TEXTS)
                sink.write(json.dumps(row) + "\n")
                sink.flush()
                os.fsync(sink.fileno())
                rows.append(row)
            ctx.events.progress("evaluate", i + 1, len(records), "problems")
        refined = _refined(ctx, records, images, sampler, run) if s.prm is not None else {}
    order = {r.id: i for i, r in enumerate(records)}
    rows.sort(key=lambda r: order.get(r["id"], len(order)))
    return score_candidates(rows, s, ctx.folder, refined)
