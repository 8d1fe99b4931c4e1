"""The evaluate stage's process-reward-model curves for a program policy (``evaluate.prm.layout: program``).

For each evaluation split the policy writes N program traces per problem (its PA program prompt in the
clauses setting, the prompt its critique records hold), the critic judges them one operator per step
(:class:`geoprm.programs.ProgramLayout`), and the first N/2 are refined: the policy continues from the
steps the critic passed plus its correction (``geotts.refined_prefix``) and the result is judged again.
This is :func:`geoprm.evaluation.record_runs` with :class:`geoprm.programs.ProgramLayoutSampler` around the
policy; problems go in chunks of ``evaluate.batch_size`` (chunk k seeded ``seed + k``), each appended to
``prm_runs.jsonl`` as it finishes, so a rerun resumes after the last complete chunk.

From the recorded pools: accuracy as N grows for random choice (the mean of single samples), SC,
best-of-N by the mean / min / max step score, and refined best-of-N (geotts's rule, the one
``RefinedBestOfN`` selects with), and beside them (``answered_curves``) the best-of-N variants that
leave candidates without an answer out of the choice, as SC leaves out their votes; where the split's figures were kept (``pgps_figures``), every
finished policy sample's steps are labelled on the figure and the critic's verdicts scored by step F1,
and each correction the critic writes is checked on the figure.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from geo_cli.pipeline._context import StageContext, captured_output
from geo_cli.pipeline._state import done_lines
from geo_cli.pipeline.errors import PipelineConfigError

if TYPE_CHECKING:
    from geodsl.data import PGPSRecord
    from geoprm.backends.transformers import TransformersCritic
    from geoprm.evaluation import EvalProblem
    from geosynth.synth import FiguredProblem
    from geotts import AnswerExtractor, StepJudgement, StepScoreRequest

__all__ = ("PRM_RUNS", "PRM_STRATEGIES", "RecordingCritic", "prm_split", "prm_summary")

PRM_RUNS = "prm_runs.jsonl"
PRM_STRATEGIES = ("greedy", "sc", "random", "bon_mean", "bon_min", "bon_max", "refined_bon")
"""The strategies of ``results.json``'s ``prm.curves``."""


class RecordingCritic:
    """A geotts ``StepScorer`` that judges with a critic and keeps each critique's text by solution."""

    def __init__(self, critic: TransformersCritic) -> None:
        """Wrap ``critic``."""
        self.critic = critic
        self.texts: dict[tuple[str, tuple[str, ...]], str] = {}

    def score(self, requests: Sequence[StepScoreRequest]) -> list[StepJudgement]:
        """Judge every request (``TransformersCritic.score``), remembering the critiques' texts."""
        from geoprm import to_step_judgement

        out: list[StepJudgement] = []
        for request, result in zip(requests, self.critic.critique(requests), strict=True):
            self.texts[(request.question, tuple(request.steps))] = result.text
            out.append(to_step_judgement(result.parsed, result.scores))
        return out


def _steps(text: str | None) -> tuple[str, ...]:
    from geotts import split_steps

    return split_steps(text or "").steps


def prm_split(
    ctx: StageContext,
    name: str,
    records: Sequence[PGPSRecord],
    sampler: Any,
    critic: RecordingCritic,
    extract: AnswerExtractor,
    folder: Path,
) -> list[dict[str, Any]]:
    """Record the policy's and the critic's runs on one split (resumable); the lines of ``prm_runs.jsonl``.

    Each line holds one problem's recorded pools (``geoprm.evaluation.EvalProblem``, every candidate with
    its text) and the critic's critiques of its candidates, by candidate position (``s<i>`` sampled,
    ``r<i>`` refined).
    """
    from geo_cli import _figure_prm as fp
    from geoprm.evaluation import record_runs
    from geoprm.programs import ProgramLayoutSampler
    from geotts import Problem, SamplingParams

    s = ctx.config.evaluate
    prm = s.prm
    if prm is None:
        raise PipelineConfigError("evaluate: the program layout's curves need the prm section")
    top = max(prm.ns, default=prm.n)
    chosen = list(records[: prm.limit])
    path = folder / PRM_RUNS
    rows = done_lines(path)
    done = {r["id"] for r in rows}
    policy = ProgramLayoutSampler(sampler, fp.layout())
    chunks = [chosen[i : i + s.batch_size] for i in range(0, len(chosen), s.batch_size)]
    finished = sum(len(c) for c in chunks if all(r.id in done for r in c))
    ctx.events.progress("evaluate", finished, len(chosen), f"{name}: best-of-N and refined best-of-N")
    with path.open("a", encoding="utf-8") as sink:
        for k, chunk in enumerate(chunks):
            if all(r.id in done for r in chunk):
                continue
            problems = [
                Problem(id=r.id, question=fp.record_prompt(r), metadata={"numbers": list(r.numbers)})
                for r in chunk
            ]
            params = SamplingParams(temperature=s.temperature, max_tokens=s.max_tokens, seed=s.seed + k)
            with captured_output(ctx.folder / "evaluate.log"):
                recorded = record_runs(
                    problems, [r.answer_value for r in chunk], policy=policy, scorer=critic, extractor=extract,
                    n=top, params=params, kinds=[r.knowledge_type or "other" for r in chunk], prompt=lambda q: q,
                )  # fmt: skip
            for problem, run in zip(problems, recorded, strict=True):
                critiques = {
                    f"{tag}{i}": critic.texts.get((problem.question, _steps(c.text)))
                    for tag, pool in (("s", run.sampled), ("r", run.refined))
                    for i, c in enumerate(pool)
                }
                row = {"id": run.id, "question": problem.question, "run": run.model_dump(mode="json"),
                       "critiques": critiques}  # fmt: skip
                sink.write(json.dumps(row) + "\n")
                sink.flush()
                os.fsync(sink.fileno())
                rows.append(row)
            critic.texts.clear()
            finished += len(chunk)
            ctx.events.progress("evaluate", finished, len(chosen), f"{name}: best-of-N and refined best-of-N")
    order = {r.id: i for i, r in enumerate(chosen)}
    return sorted((r for r in rows if r["id"] in order), key=lambda r: order[r["id"]])


def _curves(
    name: str, runs: Sequence[EvalProblem], ns: Sequence[int], greedy: float
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The split's curves by GM-PRM's rule, and its best-of-N variants with unanswered candidates skipped."""
    from geoprm.evaluation import accuracy_curve

    out: list[dict[str, Any]] = [{"split": name, "strategy": "greedy", "n": 1, "accuracy": greedy}]
    answered: list[dict[str, Any]] = []

    def add(rows: list[dict[str, Any]], n: int, values: dict[str, float | None]) -> None:
        for strategy, value in values.items():
            if value is not None:
                rows.append({"split": name, "strategy": strategy, "n": n, "accuracy": 100.0 * value})

    hows = ("mean", "min", "max")
    by_how = {how: accuracy_curve(runs, ns, how=how) for how in hows}
    skipping = {how: accuracy_curve(runs, ns, how=how, skip_unanswered=True) for how in hows}
    for i, n in enumerate(ns):
        mean = by_how["mean"][i]
        add(out, n, {
            "sc": mean.self_consistency, "random": mean.policy, "bon_mean": mean.bon,
            "bon_min": by_how["min"][i].bon, "bon_max": by_how["max"][i].bon, "refined_bon": mean.refined_bon,
        })  # fmt: skip
        add(answered, n, {
            "bon_mean": skipping["mean"][i].bon, "bon_min": skipping["min"][i].bon,
            "bon_max": skipping["max"][i].bon, "refined_bon": skipping["mean"][i].refined_bon,
        })  # fmt: skip
    return out, answered


def _figured(ctx: StageContext, name: str) -> dict[str, FiguredProblem]:
    """The split's problems with the figures the data stage kept (none when it kept none)."""
    from geosynth.synth import load_figured

    source = ctx.upstream["data"] / "synth" / name / "pgps" / "pgps.json"
    if not source.is_file():
        return {}
    return {p.record.id: p for p in load_figured(source) if p.figure is not None}


def prm_summary(
    ctx: StageContext, name: str, rows: Sequence[dict[str, Any]], greedy: float, gallery: int
) -> dict[str, Any]:
    """One split's PRM results: curves, and where its figures were kept step F1, corrections and a gallery.

    ``greedy`` is the split's greedy program accuracy in percent (the evaluate stage's own candidates).
    """
    from geo_cli import _figure_prm as fp
    from geoprm.evaluation import EvalProblem, step_f1
    from geosynth.synth import StepLabelError

    prm = ctx.config.evaluate.prm
    if prm is None:
        raise PipelineConfigError("evaluate: the program layout's curves need the prm section")
    ns = tuple(sorted(prm.ns or (prm.n,)))
    runs = [EvalProblem.model_validate_json(json.dumps(r["run"])) for r in rows]
    curves, answered = _curves(name, runs, ns, greedy) if runs else ([], [])
    entry: dict[str, Any] = {"problems": len(runs), "curves": curves, "answered_curves": answered}
    figured = _figured(ctx, name)
    if not figured:
        return entry
    pairs: list[tuple[list[bool], StepJudgement]] = []
    written = correct = unlabelled = 0
    shown: list[dict[str, Any]] = []
    for row, run in zip(rows, runs, strict=True):
        problem = figured.get(run.id)
        if problem is None:
            continue
        for i, cand in enumerate(run.sampled):
            steps = _steps(cand.text)
            if not steps or not any(step.split()[0] == "Get" for step in steps):
                continue  # step labels vouch for finished solutions only
            try:
                labels = [step.correct for step in fp.label_steps(problem, steps)]
            except StepLabelError:
                unlabelled += 1
                continue
            judgement = cand.judgement
            pairs.append((labels, judgement))
            ok = fp.correction_is_correct(problem, steps, judgement)
            if ok is None:
                continue
            written += 1
            correct += ok
            if len(shown) < gallery:
                truth = next((k for k, good in enumerate(labels) if not good), None)
                shown.append({
                    "split": name, "problem": run.id, "question": problem.record.text, "solution": cand.text,
                    "critique": row["critiques"].get(f"s{i}"), "first_wrong": judgement.first_wrong,
                    "true_first_wrong": truth, "correction": judgement.correction, "correction_correct": ok,
                })  # fmt: skip
    if pairs:
        entry["step_f1"] = step_f1(pairs).model_dump(mode="json")
        entry["corrections"] = {"written": written, "correct": correct}
        entry["unlabelled"] = unlabelled  # samples whose steps could not be labelled on the figure
        entry["gallery"] = shown
    return entry
