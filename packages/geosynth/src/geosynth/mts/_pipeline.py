"""The MTS pipeline: load -> PAL translation -> verification -> CoT-PAL -> CoT-Program -> outputs.

Work is done shard by shard (``shard_size`` problems); each stage's shard result is stored under a
key derived from its inputs (see :mod:`geosynth.mts._store`), so an interrupted run resumes and a
repeated run recomputes nothing. Outputs (sorted keys, input order, no timestamps) are byte-for-byte
repeatable; wall-clock figures go to ``timings.json`` only.
"""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import geodsl
from geosynth.mts._config import MTSConfig
from geosynth.mts._cot import cot_pal_shard, cot_program_shard, prompt_fingerprints
from geosynth.mts._llm import CachedLLM, build_sampler
from geosynth.mts._load import LoadedDataset, load_dataset
from geosynth.mts._mix import build_mixtures, record_tokens
from geosynth.mts._models import TRACE_TYPES, MTSModel, SourceProblem, TraceType
from geosynth.mts._outputs import OutputWriter
from geosynth.mts._runner import RaySampler, ScriptRunner, make_runner
from geosynth.mts._stats import DatasetStats, compute_stats
from geosynth.mts._store import ShardStore, read_jsonl, stable_hash, write_json, write_jsonl
from geosynth.mts._verify import pal_shard, verify_shard
from geosynth.mts.errors import MTSConfigError

if TYPE_CHECKING:
    from geotts import Sampler

__all__ = ("MTS_VERSION", "STAGES", "MTSRun", "ProgressCallback", "ShardHook", "run_mts")

MTS_VERSION = "2"
"""Version of the stage code; part of every resume key (bump it when a stage's output changes)."""

STAGES: tuple[str, ...] = ("prepare", "verify", "cot_pal", "cot_program")
"""The per-shard stages, in order."""

ProgressCallback = Callable[[str, int, int], None]
"""Called as ``progress(stage, problems_done, problems_total)`` after each shard of a stage."""
ShardHook = Callable[[str, int], None]
"""Called as ``hook(stage, shard_index)`` after a shard was computed and stored (not when reused)."""

_SPLITS = re.compile(r"(?<![a-z])(train|test|val|valid|dev)(?![a-z])", re.I)


class MTSRun(MTSModel):
    """What a run did."""

    out: Path
    """The output folder."""
    stats: DatasetStats
    """The counts of the outputs (also in ``stats.json``)."""
    cot_skipped: bool
    """True when no LLM was configured, so CoT-PAL and CoT-Program were not produced."""
    computed: dict[str, int]
    """Shards computed per stage in this run."""
    reused: dict[str, int]
    """Shards read back from an earlier run per stage."""
    seconds: dict[str, float]
    """Wall-clock seconds per stage (also in ``timings.json``)."""
    images_missing: int = 0
    """Diagrams named by records but absent from the images folder."""


@dataclass
class _Context:
    config: MTSConfig
    store: ShardStore
    runner: ScriptRunner
    llm: CachedLLM | None
    total: int
    progress: ProgressCallback | None
    after_shard: ShardHook | None
    computed: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STAGES, 0))
    reused: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STAGES, 0))
    done: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STAGES, 0))
    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGES, 0.0))

    def stage(
        self, name: str, index: int, key: str, size: int, compute: Callable[[], list[dict[str, Any]]]
    ) -> list[dict[str, Any]]:
        start = time.perf_counter()
        rows = self.store.load(name, index, key)
        if rows is None:
            rows = compute()
            self.store.save(name, index, key, rows)
            self.computed[name] += 1
            self.seconds[name] += time.perf_counter() - start
            if self.after_shard is not None:
                self.after_shard(name, index)
        else:
            self.reused[name] += 1
            self.seconds[name] += time.perf_counter() - start
        self.done[name] += size
        if self.progress is not None:
            self.progress(name, self.done[name], self.total)
        return rows


def _llm_identity(llm: CachedLLM) -> dict[str, Any]:
    c = llm.config
    identity: dict[str, Any] = {
        "model": c.model,
        "temperature": c.temperature,
        "top_p": c.top_p,
        "max_tokens": c.max_tokens,
        "seed": c.seed,
    }
    if c.vision:  # only when set, so the stages of text-only runs keep their resume keys
        identity["vision"] = True
    return identity


def _shard(ctx: _Context, index: int, shard: Sequence[SourceProblem]) -> dict[str, list[dict[str, Any]]]:
    problems = {p.id: p for p in shard}
    cfg = ctx.config
    base = stable_hash(
        {
            "v": MTS_VERSION,
            "geodsl": geodsl.__version__,
            "problems": [p.model_dump(mode="json") for p in shard],
        }
    )
    k_prep = stable_hash({"stage": "prepare", "base": base})
    rows = {"prepare": ctx.stage("prepare", index, k_prep, len(shard), lambda: pal_shard(shard))}
    k_ver = stable_hash(
        {"stage": "verify", "up": k_prep, "rel_tol": cfg.rel_tol, "timeout": cfg.script_timeout}
    )
    rows["verify"] = ctx.stage(
        "verify",
        index,
        k_ver,
        len(shard),
        lambda: verify_shard(problems, rows["prepare"], ctx.runner, cfg.rel_tol),
    )
    llm = ctx.llm
    if llm is None:
        return rows
    k_cp = stable_hash(
        {
            "stage": "cot_pal",
            "up": k_ver,
            "llm": _llm_identity(llm),
            "prompts": prompt_fingerprints("cot_pal"),
            "passes": cfg.max_cot_pal_passes,
        }
    )
    rows["cot_pal"] = ctx.stage(
        "cot_pal",
        index,
        k_cp,
        len(shard),
        lambda: cot_pal_shard(
            problems, rows["verify"], llm, ctx.runner, rel_tol=cfg.rel_tol, max_passes=cfg.max_cot_pal_passes
        ),
    )
    k_cg = stable_hash(
        {
            "stage": "cot_program",
            "up": k_prep,
            "llm": _llm_identity(llm),
            "prompts": prompt_fingerprints("cot_program"),
        }
    )
    rows["cot_program"] = ctx.stage(
        "cot_program", index, k_cg, len(shard), lambda: cot_program_shard(shard, llm)
    )
    return rows


def _split_name(dataset: Path, config: MTSConfig) -> str:
    if config.split:
        return config.split
    found = _SPLITS.search(dataset.stem)
    return found.group(1).lower() if found else "unspecified"


def _open_llm(config: MTSConfig, out: Path, sampler: Sampler | None) -> CachedLLM | None:
    """The cached LLM of a run; with ``use_ray`` an HTTP backend is called from Ray tasks."""
    if config.llm is None:
        return None
    if config.llm.vision and config.images_dir is None:
        raise MTSConfigError(
            "the teacher reads images (llm vision: true) but no diagram folder is given (images_dir, --images)"
        )
    built = sampler is None
    if sampler is None:
        sampler = build_sampler(config.llm)  # also checks the backend and the key in the driver
        if config.use_ray and config.llm.backend == "openai":
            close = getattr(sampler, "close", None)
            if callable(close):
                close()  # the Ray tasks build their own
            sampler = RaySampler(config.llm, config.jobs)
    return CachedLLM(
        sampler,
        config.llm,
        config.llm.cache or out / "llm_cache.sqlite",
        images_dir=config.images_dir,
        close_sampler=built,
    )


def _mixtures(out: Path, seed: int) -> dict[str, dict[str, int]]:
    records: dict[TraceType, list[dict[str, Any]]] = {
        t: read_jsonl(out / "pa" / f"{t}.jsonl") for t in TRACE_TYPES
    }
    summary: dict[str, dict[str, int]] = {}
    for name, rows in build_mixtures(records, seed=seed).items():
        write_jsonl(out / "mixtures" / f"{name}.jsonl", rows)
        summary[name] = {"records": len(rows), "tokens": sum(record_tokens(r) for r in rows)}
    write_json(out / "mixtures" / "summary.json", summary)
    return summary


def _manifest(
    out: Path,
    dataset: Path,
    loaded: LoadedDataset,
    config: MTSConfig,
    llm: CachedLLM | None,
    writer: OutputWriter,
) -> None:
    write_json(
        out / "manifest.json",
        {
            "mts_version": MTS_VERSION,
            "geodsl_version": geodsl.__version__,
            "input": {
                "name": dataset.name,
                "sha256": loaded.sha256,
                "records": loaded.total,
                "problems": len(loaded.problems),
            },
            "split": _split_name(dataset, config),
            "config": config.resume_fields(),
            "llm": None if llm is None else llm.config.model,
            "llm_params": None if llm is None else _llm_identity(llm),
            "prompts": None
            if llm is None
            else prompt_fingerprints("cot_pal") + prompt_fingerprints("cot_program"),
            "cot_traces": "produced" if llm is not None else "skipped: no LLM configured",
            "images": {"copied": writer.images_copied, "missing": sorted(writer.images_missing)},
        },
    )


def _remove_stale_temporaries(out: Path) -> None:
    """Delete the temporary files a killed run left behind (one run per folder at a time)."""
    for folder in (out, out / "traces", out / "pa", out / "mixtures", *(out / "work").glob("*")):
        for tmp in folder.glob(".*.tmp"):
            tmp.unlink(missing_ok=True)


def run_mts(
    dataset: Path,
    out: Path,
    config: MTSConfig | None = None,
    *,
    sampler: Sampler | None = None,
    progress: ProgressCallback | None = None,
    after_shard: ShardHook | None = None,
) -> MTSRun:
    """Turn a PGPS-format dataset into verified multi-trace data, PA records, mixtures and statistics.

    Args:
        dataset: the PGPS-format file (keyed object, list, or JSON Lines).
        out: the output folder (created; an earlier run's work in it is reused).
        config: the run's configuration (default :class:`MTSConfig`).
        sampler: a geotts sampler to use instead of building one from ``config.llm`` (which must
            still be set: it names the model and parameters the cache is keyed by).
        progress: called after each shard of each stage.
        after_shard: called after each computed shard (tests interrupt a run from here).

    Returns:
        A summary; the data is in ``out`` (``traces/``, ``pa/``, ``mixtures/``, ``drops.jsonl``,
        ``stats.json``, ``manifest.json``, ``timings.json``).

    Raises:
        MTSInputError: the dataset cannot be read at all.
        MTSConfigError: the LLM or Ray cannot be set up.
        MTSLLMError: the LLM failed for a batch after its retries (rerun to resume).
        MTSOutputError: the output folder cannot be written.
    """
    config = config or MTSConfig()
    started = time.perf_counter()
    loaded = load_dataset(dataset)
    load_seconds = time.perf_counter() - started
    out.mkdir(parents=True, exist_ok=True)
    _remove_stale_temporaries(out)
    store = ShardStore(out)
    runner = make_runner(jobs=config.jobs, timeout=config.script_timeout, use_ray=config.use_ray)
    llm: CachedLLM | None = None
    writer: OutputWriter | None = None
    try:
        llm = _open_llm(config, out, sampler)
        ctx = _Context(config, store, runner, llm, len(loaded.problems), progress, after_shard)
        writer = OutputWriter(out, config.images_dir, config.setting)
        writer.drops(loaded.drops)
        size = config.shard_size
        for index in range(0, len(loaded.problems), size):
            shard = loaded.problems[index : index + size]
            writer.shard(shard, _shard(ctx, index // size, shard))
        writer.commit()
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    finally:
        runner.close()
        if llm is not None:
            llm.close()
    _manifest(out, dataset, loaded, config, llm, writer)
    stats = compute_stats(out)
    write_json(out / "stats.json", stats.model_dump(mode="json"))
    finishing = time.perf_counter()
    if not config.mixtures:  # mixtures of an earlier run would no longer match the traces
        shutil.rmtree(out / "mixtures", ignore_errors=True)
    mixtures = _mixtures(out, config.mixture_seed) if config.mixtures else {}
    store.prune()
    seconds = {
        "load": load_seconds,
        **ctx.seconds,
        "mixtures": time.perf_counter() - finishing,
        "total": time.perf_counter() - started,
    }
    write_json(
        out / "timings.json",
        {
            "seconds": {k: round(v, 3) for k, v in seconds.items()},
            "problems_per_second_prepare_verify": round(
                len(loaded.problems) / max(1e-9, load_seconds + seconds["prepare"] + seconds["verify"]), 2
            ),
            "computed_shards": ctx.computed,
            "reused_shards": ctx.reused,
            "llm_requests_sent": 0 if llm is None else llm.requests_sent,
            "llm_requests_with_diagram": 0 if llm is None else llm.images_sent,
            "llm_cache_hits": 0 if llm is None else llm.cache_hits,
            "mixture_tokens": {k: v["tokens"] for k, v in mixtures.items()},
        },
    )
    return MTSRun(
        out=out,
        stats=stats,
        cot_skipped=llm is None,
        computed=ctx.computed,
        reused=ctx.reused,
        seconds=seconds,
        images_missing=len(writer.images_missing),
    )
