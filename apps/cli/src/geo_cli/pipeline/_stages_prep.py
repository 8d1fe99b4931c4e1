"""The data, mts and train stages (what runs before evaluation)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from geo_cli.pipeline._config import (
    BUNDLED_PREFIX,
    SCRATCH_PREFIX,
    TINY_PREFIX,
    DatasetSpec,
    PipelineConfig,
    TrainSettings,
)
from geo_cli.pipeline._context import StageContext, captured_output
from geo_cli.pipeline._diagram import draw_schematic
from geo_cli.pipeline._stage_aux import AUX_RECORDS, mine_aux_split
from geo_cli.pipeline._state import atomic_write_text, file_digest
from geo_cli.pipeline.errors import PipelineConfigError, StageFailedError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from geodsl.data import PGPSRecord
    from geosynth.synth import SynthConfig

__all__ = (
    "bundled_path",
    "data_inputs",
    "model_family",
    "resolve_path",
    "run_data",
    "run_mts",
    "run_train",
    "splits_of",
    "synth_config_of",
    "train_model_dir",
)

SYNTH_CONFIG = "euclid-omni"
"""The geosynth.synth configuration of a ``synthesize`` calculation split (cross-checked, bridged to PGPS)."""


def bundled_path(value: str) -> Path:
    """The file or folder a ``bundled:<relative path>`` names inside geo_cli's package data.

    Raises:
        PipelineConfigError: nothing is shipped under that name.
    """
    from importlib.resources import files

    rel = value.removeprefix(BUNDLED_PREFIX)
    path = Path(str(files("geo_cli") / "bundled" / rel))
    if not path.exists():
        raise PipelineConfigError(f"{value}: geo_cli ships no {rel!r} (looked in {path.parent})")
    return path


def resolve_path(base: Path, value: str) -> Path:
    """A path of the config: ``bundled:`` names geo_cli's package data, relative paths start at ``base``."""
    if value.startswith(BUNDLED_PREFIX):
        return bundled_path(value)
    path = Path(value).expanduser()
    return path if path.is_absolute() else base / path


def splits_of(config: PipelineConfig) -> dict[str, DatasetSpec]:
    """Every split the data stage writes: ``train`` (when set), then the evaluation splits."""
    train = {} if config.data.train is None else {"train": config.data.train}
    return {**train, **config.data.evaluation_splits()}


def _digest(base: Path, value: str) -> str:
    try:
        path = resolve_path(base, value)
    except PipelineConfigError as exc:
        return f"missing: {exc}"
    return file_digest(path) if path.is_file() else f"missing: {path}"


def synth_config_of(spec: DatasetSpec, base: Path, split: str) -> SynthConfig:
    """The generator configuration a synthesized split runs (``synth_config``, else the kind's default).

    Raises:
        PipelineConfigError: the preset or file does not exist or is not a valid configuration (named).
    """
    from geosynth.synth import SynthConfigError, load_config

    name = spec.synth_config or ("pgps" if spec.synth_kind == "pgps" else SYNTH_CONFIG)
    source = str(resolve_path(base, name)) if name.endswith((".yaml", ".yml")) else name
    try:
        return load_config(source)
    except SynthConfigError as exc:
        raise PipelineConfigError(f"data.{split}.synth_config: {exc}") from None


def _generator_digest(spec: DatasetSpec, base: Path, split: str) -> str:
    try:
        config = synth_config_of(spec, base, split)
    except PipelineConfigError as exc:
        return f"invalid: {exc}"
    return hashlib.sha256(config.model_dump_json().encode()).hexdigest()


def data_inputs(config: PipelineConfig, base: Path) -> dict[str, Any]:
    """What the data stage's key is hashed from: the split specs and the input files' digests."""
    out: dict[str, Any] = {"draw": config.data.draw_missing_diagrams}
    for split, spec in splits_of(config).items():
        # Fields at their defaults are left out, so a field added later keeps the keys of earlier runs.
        entry: dict[str, Any] = spec.model_dump(mode="json", exclude_defaults=True)
        if spec.path is not None:
            entry["sha256"] = _digest(base, spec.path)
        if spec.exclude:
            entry["exclude_sha256"] = [_digest(base, x) for x in spec.exclude]
        if spec.images_dir is not None:
            entry["images_dir"] = str(resolve_path(base, spec.images_dir))
        if spec.source == "synthesize" and spec.synth_kind in ("pgps", "calculation"):
            entry["generator_sha256"] = _generator_digest(spec, base, split)
        out[split] = entry
    return out


def _excluded(spec: DatasetSpec, ctx: StageContext, split: str) -> list[PGPSRecord]:
    """The problems a ``pgps`` split must not pose.

    Those are its ``exclude`` files and, for an evaluation split, the training split (written before it).
    """
    from geodsl.data import load_pgps

    out: list[PGPSRecord] = []
    for value in spec.exclude:
        path = resolve_path(ctx.base, value)
        if not path.is_file():
            raise PipelineConfigError(f"data.{split}.exclude: PGPS file {path} does not exist")
        out.extend(load_pgps(path))
    train = ctx.folder / "train.json"
    if split != "train" and train.is_file():
        out.extend(load_pgps(train))
    return out


def _synthesized_pgps(
    spec: DatasetSpec, ctx: StageContext, split: str
) -> tuple[list[PGPSRecord], Path | None]:
    """The PGPS-format corpus of the ``pgps`` generator preset: ``synth_count`` figures, several problems each.

    Every problem was posed on a figure the engine realised, its program executed to its answer, and
    duplicates and every problem of the excluded splits are left out (``geosynth.synth`` PGPS output).
    """
    from geodsl.data import load_pgps
    from geosynth.synth import write_dataset

    if spec.synth_count is None:
        raise StageFailedError(f"data.{split}: synth_kind 'pgps' needs synth_count")
    out = ctx.folder / "synth" / split
    render = ctx.config.data.draw_missing_diagrams
    write_dataset(
        synth_config_of(spec, ctx.base, split), spec.synth_count, spec.synth_seed, out, task="calculation", shard_size=50,
        jobs=ctx.config.mts.jobs, use_ray=spec.use_ray, render=render, pgps=spec.pgps_per_figure,
        pgps_exclude=_excluded(spec, ctx, split), pgps_figures=spec.pgps_figures,
        progress=lambda done, total: ctx.events.progress("data", done, total, f"{split} synthesis (figures)"),
    )  # fmt: skip
    records = load_pgps(out / "pgps" / "pgps.json")
    if spec.limit is not None:
        records = records[spec.offset : spec.offset + spec.limit]
    if not records:
        raise StageFailedError(
            f"data.{split}: the {spec.synth_count} synthesized figures gave no PGPS problem"
        )
    return records, (out / "pgps" / "Diagram") if render else None


def _synthesized(spec: DatasetSpec, ctx: StageContext, split: str) -> tuple[list[PGPSRecord], Path | None]:
    """Generate calculation problems (geosynth.synth) and keep those bridged to a verified PGPS program.

    The generator resumes its own shards under ``synth/<split>``; every kept problem was re-solved by the
    engine, cross-checked by the calculation solver and its program executed to the engine's answer.
    Returns the records (read back through the PGPS loader, so N numbering is the loader's) and the
    folder their diagrams are in.
    """
    from geodsl.data import load_pgps
    from geosynth.synth import read_records, write_dataset

    if spec.synth_kind == "pgps":
        return _synthesized_pgps(spec, ctx, split)
    if spec.synth_kind != "calculation" or spec.synth_count is None:
        raise StageFailedError(f"data.{split}: synthesis of {spec.synth_kind!r} gives no PGPS records")
    out = ctx.folder / "synth" / split
    write_dataset(
        synth_config_of(spec, ctx.base, split), spec.synth_count, 0, out, task="calculation", shard_size=50,
        jobs=ctx.config.mts.jobs, use_ray=spec.use_ray, render=True,
        progress=lambda done, total: ctx.events.progress("data", done, total, f"{split} synthesis"),
    )  # fmt: skip
    raw: dict[str, Any] = {}
    for rec in read_records(out):
        if rec.pgps_program is None or rec.pgps_clauses is None or rec.answer_value is None:
            continue
        raw[rec.id] = {
            "text": _question(rec.goal), "parsing_stru_seqs": [], "parsing_sem_seqs": list(rec.pgps_clauses),
            "expression": rec.pgps_program, "answer": f"{rec.answer_value:.6g}", "type": rec.goal_type,
            "choices": _choices(rec.answer_value, rec.choices), "diagram": None if rec.image is None else Path(rec.image).name,
        }  # fmt: skip
    if not raw:
        raise StageFailedError(
            f"data: none of the {spec.synth_count} synthesized problems has a PGPS program"
        )
    bridged = out / "pgps.json"
    atomic_write_text(bridged, json.dumps(raw, indent=1, ensure_ascii=False))
    return load_pgps(bridged), out / "images"


_QUESTIONS = {
    "length": "Find {p}.",
    "angle": "Find m \\angle {p}.",
    "area": "Find the area of {p}.",
    "var": "Find {v}.",
}
"""PGPS-style question per goal kind: the givens (and every number) are in the semantic clauses."""


def _question(goal: str) -> str:
    """``length b d`` -> ``Find BD.``: a question without numbers, so N0... are the clauses' numbers in order."""
    kind, *args = goal.split()
    template = _QUESTIONS.get(kind, "Find {v}.")
    return template.format(p="".join(a.upper() for a in args), v=" ".join(args))


def _choices(answer: float, options: tuple[str, ...] | None) -> list[float]:
    """Four numeric options (PGPS records carry them); the answer and scaled copies when none parse."""
    values: list[float] = []
    for option in options or ():
        try:
            values.append(float(option))
        except ValueError:
            break
    return values if len(values) == 4 else [answer, answer * 0.5, answer * 1.5, answer * 2.0]


def _records(spec: DatasetSpec, base: Path) -> list[PGPSRecord]:
    from geodsl.data import load_pgps, load_sample

    if spec.source == "bundled_sample":
        records = load_sample(spec.sample)
    else:
        if spec.path is None:
            raise PipelineConfigError("data: source 'pgps_file' needs path")
        path = resolve_path(base, spec.path)
        if not path.is_file():
            raise PipelineConfigError(f"data: PGPS file {path} does not exist")
        records = load_pgps(path)
    end = None if spec.limit is None else spec.offset + spec.limit
    chosen = records[spec.offset : end]
    if not chosen:
        raise PipelineConfigError(f"data: offset {spec.offset} and limit {spec.limit} leave no records")
    _check_programs(chosen, spec.path or f"bundled sample {spec.sample}")
    return chosen


def _check_programs(records: Sequence[PGPSRecord], source: str) -> None:
    """Every record's solution program parses (known operators, right arities), or one error naming it.

    A program that does not parse would otherwise pass unnoticed into training data and per-operator
    breakdowns.
    """
    from geodsl import parse_program

    for record in records:
        try:
            parse_program(record.expression)
        except ValueError as exc:
            raise PipelineConfigError(
                f"data: {source}: record {record.id}: its expression {record.expression!r} does not parse: {exc}"
            ) from None


def _raw(record: PGPSRecord) -> dict[str, Any]:
    out: dict[str, Any] = {
        "text": record.text, "parsing_stru_seqs": list(record.stru_clauses),
        "parsing_sem_seqs": list(record.sem_clauses), "expression": record.expression, "answer": record.answer,
        "type": record.type, "choices": list(record.choices),
    }  # fmt: skip
    for key in ("diagram", "book", "page"):
        if getattr(record, key) is not None:
            out[key] = getattr(record, key)
    return out


def _image(record: PGPSRecord, diagram: str, images_dir: Path | None, out: Path, draw: bool) -> str:
    """Put the record's diagram (file name ``diagram``) into ``out``; say how it got there."""
    target = out / diagram
    if target.is_file():
        return "present"
    if images_dir is not None and (images_dir / diagram).is_file():
        partial = target.with_name(f".{target.name}.tmp")
        shutil.copy2(images_dir / diagram, partial)
        os.replace(partial, target)
        return "copied"
    if draw:
        draw_schematic(record.stru_clauses, record.sem_clauses, target, title=record.id)
        return "drawn"
    return "missing"


def run_data(ctx: StageContext) -> dict[str, Any]:
    """Write ``<split>.json`` (PGPS format) for ``train`` and every evaluation split, and the diagrams into ``images/``."""
    images = ctx.folder / "images"
    images.mkdir(exist_ok=True)
    summary: dict[str, Any] = {}
    for split, spec in splits_of(ctx.config).items():
        if spec.synth_kind == "aux_construction":
            summary[split] = mine_aux_split(spec, ctx, split)
            continue
        if spec.source == "synthesize":
            records, source = _synthesized(spec, ctx, split)
        else:
            records = _records(spec, ctx.base)
            source = None if spec.images_dir is None else resolve_path(ctx.base, spec.images_dir)
        counts: dict[str, int] = {}
        for i, rec in enumerate(records, start=1):
            if rec.diagram is not None:
                how = _image(rec, rec.diagram, source, images, ctx.config.data.draw_missing_diagrams)
                counts[how] = counts.get(how, 0) + 1
            ctx.events.progress("data", i, len(records), f"{split} diagrams")
        body = json.dumps({r.id: _raw(r) for r in records}, indent=1, ensure_ascii=False)
        atomic_write_text(ctx.folder / f"{split}.json", body)
        summary[split] = {"records": len(records), "diagrams": counts}
    return summary


CRITIQUES = "critiques"
"""The mts stage's folder of critique records (``mts.critiques``)."""


def _critique_data(ctx: StageContext) -> dict[str, Any]:
    """Critique records from the policy's program traces on the training split, labelled on its figures.

    The figures are those the data stage kept (``pgps_figures``) in ``synth/train/pgps/pgps.json``; a
    problem without one is left out and named in ``critiques/problems.log``. Sampling resumes by chunk.
    """
    from geo_cli import _figure_prm as fp
    from geo_cli._errors import InputError
    from geotts.backends.transformers import TransformersSampler

    settings = ctx.config.mts.critiques
    if settings is None:
        raise PipelineConfigError("mts: critique records need mts.critiques")
    # the config refuses critiques without a synthesized training split with figures (PipelineConfig)
    out = ctx.folder / CRITIQUES
    out.mkdir(parents=True, exist_ok=True)
    log = out / "problems.log"
    reported: list[str] = []

    def report(line: str) -> None:
        reported.append(line)
        with log.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")

    figured = ctx.upstream["data"] / "synth" / "train" / "pgps" / "pgps.json"
    corpus = ctx.upstream["data"] / "train.json"
    try:
        problems, _ = fp.figured_problems(corpus, figured, None, out, None, report)
    except InputError as exc:
        raise StageFailedError(f"mts.critiques: {exc}") from None
    if not problems:
        raise StageFailedError(f"mts.critiques: no problem of {corpus} has a realised figure in {figured}")
    policy = str(resolve_path(ctx.base, settings.policy))
    import torch

    torch.set_num_threads(settings.threads)
    with captured_output(ctx.folder / "critiques.log"):
        sampler = TransformersSampler.from_pretrained(policy, device="cpu", batch_size=settings.batch_size)
    sampling = fp.SamplingSpec(
        n=settings.samples, temperature=settings.temperature, max_tokens=settings.max_tokens,
        seed=settings.seed, batch=settings.batch_size,
    )  # fmt: skip
    try:
        made = fp.write_critique_data(
            problems, sampler, sampling, out, corruptions=settings.corruptions, references=settings.references,
            balanced=settings.balance, verdict_first=settings.verdict_first, report=report,
            progress=lambda what, done, total: ctx.events.progress("mts", done, total, f"critique data: {what}"),
            about={"figures": str(figured), "corpus": str(corpus), "policy": settings.policy},
        )  # fmt: skip
    except InputError as exc:
        raise StageFailedError(f"mts.critiques: {exc}") from None
    stats = made.stats
    return {
        "critiques": {
            "problems": made.problems, "solutions": made.solutions, "records": stats["records"],
            "with_error": stats["with_error"], "without_error": stats["without_error"],
            "errors": made.errors, "reported": len(reported),
        }
    }  # fmt: skip


def run_mts(ctx: StageContext) -> dict[str, Any]:
    """Run geosynth's MTS pipeline on the training split (it resumes its own shards).

    With ``mts.critiques`` the stage writes critique records instead (:func:`_critique_data`).
    """
    from geosynth.mts import LLMConfig, MTSConfig
    from geosynth.mts import run_mts as mts

    if ctx.config.mts.critiques is not None:
        return _critique_data(ctx)
    settings = ctx.config.mts
    llm = None if settings.llm is None else LLMConfig.model_validate(settings.llm, strict=False)
    config = MTSConfig(
        jobs=settings.jobs, shard_size=settings.shard_size, script_timeout=settings.script_timeout, llm=llm,
        images_dir=ctx.upstream["data"] / "images", use_ray=settings.use_ray, setting=settings.setting,
    )  # fmt: skip
    run = mts(
        ctx.upstream["data"] / "train.json", ctx.folder, config,
        progress=lambda stage, done, total: ctx.events.progress("mts", done, total, stage),
    )  # fmt: skip
    return {
        "traces": dict(run.stats.traces), "problems": run.stats.problems, "pal_verified": run.stats.pal_verified,
        "pal_failed": run.stats.pal_failed, "drops": dict(run.stats.drops),
        "cot_skipped": run.cot_skipped, "computed_shards": run.computed, "reused_shards": run.reused,
        "images_missing": run.images_missing,
    }  # fmt: skip


def model_family(base_model: str, settings: dict[str, Any]) -> str | None:
    """The geotrain family of a base model name: built-in (``tiny:``, ``scratch:``) or from the settings."""
    if base_model.startswith(TINY_PREFIX):
        return base_model.removeprefix(TINY_PREFIX)
    if base_model.startswith(SCRATCH_PREFIX):
        return "causal_lm"
    family = settings.get("family")
    return family if isinstance(family, str) else None


def _train(ctx: StageContext) -> TrainSettings:
    """The train section of a config whose train stage runs.

    Raises:
        PipelineConfigError: the config has none (the stage table runs train only when it has one).
    """
    if ctx.config.train is None:
        raise PipelineConfigError("train: the config has no train section")
    return ctx.config.train


def records_kind(config: PipelineConfig) -> str:
    """The format of the records the train stage reads.

    ``records_kind`` for given records, ``chat`` for the data stage's auxiliary-construction records,
    ``prm`` for the mts stage's critique records, else ``pa`` (an MTS mixture).
    """
    if config.train is not None and config.train.records is not None:
        return config.train.records_kind
    if config.trains_proposer():
        return "chat"
    return "prm" if config.mts.critiques is not None else "pa"


def _records_file(ctx: StageContext) -> tuple[Path, str]:
    train = _train(ctx)
    if train.records is not None:
        return resolve_path(ctx.base, train.records), train.records_kind
    if ctx.config.trains_proposer():
        return ctx.upstream["data"] / AUX_RECORDS, "chat"
    if ctx.config.mts.critiques is not None:
        return ctx.upstream["mts"] / CRITIQUES / "records.jsonl", "prm"
    source = ctx.upstream["mts"] / "mixtures" / f"{train.mixture}.jsonl"
    if not source.is_file():
        found = sorted(p.stem for p in (ctx.upstream["mts"] / "mixtures").glob("*.jsonl"))
        raise PipelineConfigError(
            f"train.mixture {train.mixture!r} was not produced by mts; produced: {found}"
        )
    # The mixture's image paths are relative to MTS's PA folder (pa/images/...), not to mixtures/:
    # train on a copy placed beside a link to those images.
    data = ctx.folder / "data"
    data.mkdir(exist_ok=True)
    images, source_images = data / "images", (ctx.upstream["mts"] / "pa" / "images").resolve()
    if source_images.is_dir() and not images.is_symlink() and not images.exists():
        try:
            images.symlink_to(source_images, target_is_directory=True)
        except OSError:
            shutil.copytree(source_images, images)
    local = data / f"{train.mixture}.jsonl"
    partial = local.with_name(f".{local.name}.tmp")
    shutil.copy2(source, partial)
    os.replace(partial, local)
    return local, "pa"


def _weighted_sources(records: Path, kind: str, weights: Mapping[str, float]) -> list[dict[str, Any]]:
    """The data sources geotrain reads: the records as one source, or one source per trace type with its weight.

    With ``weights`` the PA records are split by ``trace_type`` into ``<records stem>.<type>.jsonl`` beside
    them (each written atomically, in the mixture's order), so geotrain repeats each type's records by its
    weight; a type the weights do not name keeps weight 1.

    Raises:
        PipelineConfigError: a record without a known trace type, or a weighted type the mixture lacks.
    """
    if not weights:
        return [{"path": str(records), "kind": kind}]
    groups: dict[str, list[str]] = {}
    for number, line in enumerate(records.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            trace = json.loads(line).get("trace_type")
        except (json.JSONDecodeError, AttributeError):
            trace = None
        if not isinstance(trace, str):
            raise PipelineConfigError(
                f"{records}:{number}: a PA record without a trace_type; trace_weights needs one"
            )
        groups.setdefault(trace, []).append(line)
    missing = sorted(set(weights) - set(groups))
    if missing:
        raise PipelineConfigError(
            f"train.trace_weights names {', '.join(missing)}, which {records.name} has no records of; it has {sorted(groups)}"
        )
    sources: list[dict[str, Any]] = []
    for trace, lines in groups.items():
        part = records.with_name(f"{records.stem}.{trace}.jsonl")
        atomic_write_text(part, "".join(f"{line}\n" for line in lines))
        sources.append({"path": str(part), "kind": kind, "weight": float(weights.get(trace, 1.0))})
    return sources


def _scratch_model(ctx: StageContext, records: Path, kind: str) -> str:
    """Build the ``scratch:`` base model once: a tokenizer trained on the training records, random weights."""
    import geotrain

    train = _train(ctx)
    base = ctx.folder / "base_model"
    if not (base / "config.json").is_file():
        architecture = train.base_model.removeprefix(SCRATCH_PREFIX)
        try:
            spec = geotrain.ScratchModel.model_validate(
                {"architecture": architecture, **train.scratch}, strict=False
            )
        except ValueError as exc:
            raise PipelineConfigError(f"train.scratch: {' '.join(str(exc).split())}") from None
        source = geotrain.DataSource.model_validate({"path": str(records), "kind": kind})
        partial = base.with_name(".base_model.tmp")
        shutil.rmtree(partial, ignore_errors=True)
        with captured_output(ctx.folder / "train.log"):
            geotrain.build_scratch_model(spec, geotrain.corpus_texts([source]), partial, seed=0)
        os.replace(partial, base)
    return str(base)


def _run_config(ctx: StageContext) -> Any:
    import geotrain

    train = _train(ctx)
    family = model_family(train.base_model, train.settings)
    model_path = train.base_model
    records, kind = _records_file(ctx)
    if train.base_model.startswith(TINY_PREFIX):
        if family not in ("qwen2_vl", "qwen2_5_vl", "qwen3_vl"):
            raise PipelineConfigError(f"train.base_model {train.base_model!r}: unknown tiny family")
        base = ctx.folder / "base_model"
        if not (base / "config.json").is_file():
            with captured_output(ctx.folder / "train.log"):
                geotrain.build_tiny_model(family, base, seed=0)
        model_path = str(base)
    elif train.base_model.startswith(SCRATCH_PREFIX):
        model_path = _scratch_model(ctx, records, kind)
    elif train.base_model.startswith(BUNDLED_PREFIX):
        model_path = str(bundled_path(train.base_model))
    values: dict[str, Any] = {
        **train.settings, "model_path": model_path, "output_dir": str(ctx.folder / "run"),
        "data": _weighted_sources(records, kind, {str(t): w for t, w in train.trace_weights.items()}),
    }  # fmt: skip
    if family is not None:
        values["family"] = family
    return geotrain.load_config(None, values, base_preset=train.geotrain_preset)


def _progress_callback(ctx: StageContext) -> Any:
    from transformers import TrainerCallback

    events = ctx.events

    class _Progress(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            events.progress("train", int(state.global_step), int(state.max_steps), "optimizer steps")

    return _Progress()


def _accelerate(ctx: StageContext, config: Any, resume: bool) -> dict[str, Any]:
    """Train under ``accelerate launch``; progress comes from the first process's step file, output to train.log."""
    import geotrain

    launcher = _train(ctx).launcher
    if launcher.accelerate_config is None:
        raise PipelineConfigError("train.launcher: the 'accelerate' launcher needs accelerate_config")
    import yaml

    run_yaml = ctx.folder / "geotrain.yaml"
    atomic_write_text(run_yaml, yaml.safe_dump(config.model_dump(mode="json"), sort_keys=True))
    steps, result_file = ctx.folder / "progress.jsonl", ctx.folder / "result.out"
    steps.unlink(missing_ok=True)
    command = [
        sys.executable, "-m", "accelerate.commands.launch", "--config_file",
        str(geotrain.accelerate_config(launcher.accelerate_config)), "--num_processes", str(launcher.num_processes),
        "--main_process_port", str(_free_port()), "-m", "geotrain", "--config", str(run_yaml), "--progress", str(steps), *(["--resume"] if resume else []),
    ]  # fmt: skip
    with (ctx.folder / "train.log").open("a", encoding="utf-8") as log, result_file.open("w") as out:
        start = log.tell()
        process = subprocess.Popen(command, stdout=out, stderr=log, text=True, start_new_session=True)
        read, code = 0, None
        try:
            while code is None:
                try:
                    code = process.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    code = None
                read = _report_steps(ctx, steps, read)
        finally:
            if code is None:  # interrupted here: stop the launcher and its workers (checkpoints stay)
                os.killpg(process.pid, signal.SIGTERM)
                process.wait()
    if code != 0:
        log = (ctx.folder / "train.log").read_text(encoding="utf-8", errors="replace")[start:]
        raise StageFailedError(
            f"accelerate launch exited {code}: {_root_cause(log)} (full output in train.log)"
        )
    lines = result_file.read_text(encoding="utf-8").strip().splitlines()
    result: dict[str, Any] = json.loads(lines[-1])
    return result


_RANK = re.compile(r"^\[rank\d+\]:\s*")
_EXCEPTION = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?[A-Za-z_]\w*(?:Error|Exception|Interrupt)\b(?::.*)?$")


def _root_cause(log: str) -> str:
    """The first exception a training process raised in ``log`` (not the launcher's summary), else its tail."""
    for line in log.splitlines():
        text = _RANK.sub("", line.strip())
        if _EXCEPTION.match(text) and "ChildFailedError" not in text:
            return text
    return log.strip()[-2000:]


def _free_port() -> int:
    """A free local port for the processes' rendezvous, so that two runs on one machine do not collide."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _report_steps(ctx: StageContext, steps: Path, read: int) -> int:
    """Emit the progress lines of ``steps`` past byte ``read``; the new offset (a partial last line waits)."""
    if not steps.is_file():
        return read
    with steps.open("rb") as f:
        f.seek(read)
        chunk = f.read()
    complete = chunk[: chunk.rfind(b"\n") + 1]
    for line in complete.decode("utf-8").splitlines():
        step = json.loads(line)
        ctx.events.progress("train", int(step["step"]), int(step["max_steps"]), "optimizer steps")
    return read + len(complete)


def train_model_dir(folder: Path) -> Path:
    """The model the train stage leaves for evaluation (the export, else the final folder)."""
    exported = folder / "model"
    return exported if (exported / "config.json").is_file() else folder / "run" / "final"


def run_train(ctx: StageContext) -> dict[str, Any]:
    """Train with geotrain; a resumed stage continues from the latest checkpoint."""
    import geotrain

    train = _train(ctx)
    config = _run_config(ctx)
    processes = train.launcher.num_processes if train.launcher.kind == "accelerate" else 1
    resume = ctx.resumed and geotrain.latest_checkpoint(ctx.folder / "run", processes) is not None
    if train.launcher.kind == "accelerate":
        result = _accelerate(ctx, config, resume)
    else:
        with captured_output(ctx.folder / "train.log"):
            done = geotrain.train(
                config, resume_from=True if resume else None, callbacks=[_progress_callback(ctx)]
            )
        result = done.model_dump(mode="json")
    if train.export:
        with captured_output(ctx.folder / "train.log"):
            geotrain.export_model(result["final_dir"], ctx.folder / "model")
    history = [e for e in result["log_history"] if "loss" in e]
    return {
        "global_step": result["global_step"], "resumed_from_checkpoint": resume,
        "examples_per_epoch": len(geotrain.load_examples(config.data, config.seed)),
        "losses": [[e.get("step", i), e["loss"]] for i, e in enumerate(history)],
        "final_loss": history[-1]["loss"] if history else None, "model": str(train_model_dir(ctx.folder)),
    }  # fmt: skip
