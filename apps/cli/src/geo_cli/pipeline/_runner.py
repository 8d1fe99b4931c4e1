"""The stage graph, input keys, and the runner behind ``geo pipeline run/status/check``.

Stages are rows of a table (:data:`STAGES`): their upstream stages, the settings their key is hashed
from, the code versions that change their outputs, an availability probe and the function that runs
them. A stage's key hashes its settings, its code versions and its upstream stages' keys, so keys
follow from the config alone: ``status`` needs no run, and changing a stage's settings makes it and
everything downstream stale while the stages above it stay cached.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from geo_cli.pipeline._config import PipelineConfig
from geo_cli.pipeline._context import Events, NullEvents, StageContext
from geo_cli.pipeline._state import StageState, read_state, reset_folder, stable_hash, write_state
from geo_cli.pipeline.errors import PipelineError, StageFailedError, StageOrderError

__all__ = (
    "STAGES",
    "StageSpec",
    "StageStatus",
    "pipeline_status",
    "run_pipeline",
    "stage_keys",
    "workdir_of",
)

#: Bumped when this module's handling of a stage changes its outputs.
PIPELINE_VERSION = "1"

Settings = Callable[[PipelineConfig, Path], dict[str, Any]]


@dataclass(frozen=True)
class StageSpec:
    """One stage of the graph."""

    name: str
    """Stage name (its folder under the work folder)."""
    upstream: Callable[[PipelineConfig], tuple[str, ...]]
    """The stages whose outputs it reads (for this config)."""
    enabled: Callable[[PipelineConfig], bool]
    """Whether the config runs it."""
    settings: Settings
    """What its key hashes besides code versions and upstream keys."""
    modules: Callable[[PipelineConfig], tuple[str, ...]]
    """Modules it needs; their versions are part of the key, and a missing one makes it unavailable."""
    run: Callable[[StageContext], dict[str, Any]]
    """Does the work and returns a summary (JSON-ready)."""
    blocker: Callable[[PipelineConfig], str | None] = lambda _c: None
    """Why the stage cannot run with this config even with its modules present, or None."""


StatusName = Literal["done", "stale", "missing", "interrupted", "disabled", "unavailable", "blocked"]


class StageStatus(BaseModel):
    """Where one stage stands."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    name: str
    """The stage."""
    status: StatusName
    """``done`` (cached for this config), ``stale`` (outputs of other inputs), ``missing``, ``interrupted``
    (started with these inputs, not finished: the next run resumes it), ``disabled``, ``unavailable``,
    ``blocked`` (a stage it reads is unavailable)."""
    key: str
    """The stage's current input key (first 12 hex digits)."""
    detail: str = ""
    """Why (the unavailable module, the outputs' age...)."""
    summary: dict[str, Any] = {}
    """The finished stage's summary."""


#: Our packages: imported to read their versions (they import nothing heavy); others are only looked up.
_OURS = ("geodsl", "geotts", "geosynth", "geoprm", "geotrain", "geo_cli")


def _module_version(name: str) -> str | None:
    """The version that identifies ``name``'s code, or None when it is not installed (torch is not imported)."""
    top = name.split(".")[0]
    if top in _OURS:
        try:
            module = importlib.import_module(name)
        except ImportError:
            return None
        parent = importlib.import_module(top)
        return str(getattr(parent, "__version__", "0")) + str(getattr(module, "MTS_VERSION", ""))
    try:
        if importlib.util.find_spec(name) is None:
            return None
    except (ImportError, ValueError):
        return None
    try:
        return importlib.metadata.version(top)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _unavailable(spec: StageSpec, config: PipelineConfig) -> str | None:
    missing = [m for m in spec.modules(config) if _module_version(m) is None]
    reasons = (
        [f"module{'s' if len(missing) > 1 else ''} {', '.join(missing)} not installed"] if missing else []
    )
    blocker = spec.blocker(config)
    return "; ".join([*reasons, *([blocker] if blocker else [])]) or None


def workdir_of(config: PipelineConfig, base: Path, override: Path | None = None) -> Path:
    """The work folder: ``override``, else the config's ``workdir``, else ``runs/<name>`` here."""
    if override is not None:
        return override
    if config.workdir is not None:
        path = Path(config.workdir).expanduser()
        return path if path.is_absolute() else base / path
    return Path.cwd() / "runs" / config.name


def _inputs(spec: StageSpec, config: PipelineConfig, base: Path, keys: dict[str, str]) -> dict[str, Any]:
    return {
        "stage": spec.name,
        "pipeline": PIPELINE_VERSION,
        "settings": spec.settings(config, base),
        "versions": {m: _module_version(m) for m in spec.modules(config)},
        "upstream": {u: keys[u] for u in spec.upstream(config)},
    }


def stage_keys(
    config: PipelineConfig, base: Path, stages: Sequence[StageSpec]
) -> dict[str, tuple[str, dict[str, Any]]]:
    """Each enabled stage's key and the inputs it was hashed from."""
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for spec in stages:
        if spec.enabled(config):
            inputs = _inputs(spec, config, base, {k: v[0] for k, v in out.items()})
            out[spec.name] = (stable_hash(inputs), inputs)
    return out


def _status_of(state: StageState | None, key: str) -> tuple[StatusName, str]:
    if state is None:
        return "missing", ""
    if state.key != key:
        return "stale", f"outputs were made for key {state.key[:12]}"
    if state.status == "running":
        return "interrupted", f"attempt {state.attempts} did not finish; the next run resumes it"
    return "done", f"{state.seconds:.1f} s"


def pipeline_status(
    config: PipelineConfig, base: Path, workdir: Path, stages: Sequence[StageSpec] | None = None
) -> list[StageStatus]:
    """Where every stage stands for ``config`` in ``workdir`` (nothing is run)."""
    table = STAGES if stages is None else stages
    keys = stage_keys(config, base, table)
    out: list[StageStatus] = []
    blocked: set[str] = set()
    for spec in table:
        if spec.name not in keys:
            out.append(StageStatus(name=spec.name, status="disabled", key=""))
            continue
        key = keys[spec.name][0]
        waiting = [u for u in spec.upstream(config) if u in blocked]
        reason = _unavailable(spec, config)
        if waiting or reason is not None:
            blocked.add(spec.name)
            status: StatusName = "blocked" if waiting else "unavailable"
            detail = f"needs {', '.join(waiting)}" if waiting else str(reason)
            out.append(StageStatus(name=spec.name, status=status, key=key[:12], detail=detail))
            continue
        state = read_state(workdir / spec.name)
        status, detail = _status_of(state, key)
        summary = state.summary if state is not None and status == "done" else {}
        out.append(StageStatus(name=spec.name, status=status, key=key[:12], detail=detail, summary=summary))
    return out


class StageOutcome(BaseModel):
    """What one ``run`` did with one stage."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    name: str
    """The stage."""
    action: Literal["ran", "resumed", "cached", "kept", "disabled", "unavailable", "blocked", "not_requested"]
    """``ran``/``resumed`` (computed), ``cached`` (skipped: done for these inputs), ``kept`` (before
    ``--from``: used as it is), ``disabled``, ``unavailable``, ``blocked`` (an upstream stage did not
    run), ``not_requested`` (after ``--until``)."""
    detail: str = ""
    """Why, or the stage's summary in words."""
    seconds: float = 0.0
    """Seconds spent in this run."""


def brief(summary: dict[str, Any], limit: int = 90) -> str:
    """A one-line digest of a stage summary: its scalar entries and the scalars one level down."""
    parts: list[str] = []
    for key, value in summary.items():
        if isinstance(value, dict):
            inner = [f"{k} {v}" for k, v in value.items() if isinstance(v, int | float | str | bool)]
            if inner:
                parts.append(f"{key}: {', '.join(inner)}")
        elif isinstance(value, int | float | str | bool) and key not in ("html", "markdown", "model"):
            parts.append(f"{key} {round(value, 4) if isinstance(value, float) else value}")
    text = "; ".join(parts)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _range(table: Sequence[StageSpec], start: str | None, until: str | None) -> tuple[int, int]:
    names = [s.name for s in table]
    for flag, value in (("--from", start), ("--until", until)):
        if value is not None and value not in names:
            raise StageOrderError(f"{flag} {value!r}: no such stage; stages are {', '.join(names)}")
    first = names.index(start) if start is not None else 0
    last = names.index(until) if until is not None else len(names) - 1
    if first > last:
        raise StageOrderError(f"--from {start} comes after --until {until}")
    return first, last


def _execute(
    spec: StageSpec, ctx: StageContext, key: str, inputs: dict[str, Any], prior: StageState | None
) -> float:
    attempts = prior.attempts + 1 if ctx.resumed and prior is not None else 1
    spent = prior.seconds if ctx.resumed and prior is not None else 0.0
    write_state(
        ctx.folder, StageState(key=key, status="running", inputs=inputs, attempts=attempts, seconds=spent)
    )
    started = time.perf_counter()
    try:
        summary = spec.run(ctx)
    except PipelineError:
        raise
    except Exception as exc:
        raise StageFailedError(
            f"stage {spec.name} failed: {type(exc).__name__}: {exc} (partial outputs kept in {ctx.folder}; "
            "rerun to resume)"
        ) from exc
    finally:
        elapsed = time.perf_counter() - started
        state = read_state(ctx.folder)
        if state is not None and state.status == "running":  # record the time even when interrupted
            write_state(ctx.folder, state.model_copy(update={"seconds": spent + elapsed}))
    write_state(ctx.folder, StageState(key=key, status="done", inputs=inputs, summary=summary,
                                       seconds=spent + elapsed, attempts=attempts))  # fmt: skip
    return elapsed


def run_pipeline(
    config: PipelineConfig,
    base: Path,
    workdir: Path,
    *,
    start: str | None = None,
    until: str | None = None,
    events: Events | None = None,
    stages: Sequence[StageSpec] | None = None,
) -> list[StageOutcome]:
    """Run the stages of ``config`` in order, skipping those already done for the same inputs.

    Args:
        config: The pipeline config.
        base: The folder its relative paths are read from.
        workdir: The work folder (each stage writes ``<workdir>/<stage>/``).
        start: ``--from``: stages before it are used as they are (they must be done); it and the stages
            after it (up to ``until``) are recomputed even when cached.
        until: ``--until``: the last stage to run.
        events: Receives progress.
        stages: The stage table (default :data:`STAGES`).

    Returns:
        One outcome per stage.

    Raises:
        StageOrderError: unknown ``--from``/``--until`` stage, or a stage before ``--from`` is not done.
        StageFailedError: a stage failed (its partial outputs are kept; rerunning resumes).
    """
    table = STAGES if stages is None else stages
    if stages is None:
        from geo_cli.pipeline._check import validate_nested

        validate_nested(config)
    sink: Events = events if events is not None else NullEvents()
    first, last = _range(table, start, until)
    keys = stage_keys(config, base, table)
    blocked: set[str] = set()
    out: list[StageOutcome] = []

    def note(name: str, action: Any, detail: str = "", seconds: float = 0.0) -> None:
        out.append(StageOutcome(name=name, action=action, detail=detail, seconds=seconds))
        sink.stage(name, action, detail)

    for index, spec in enumerate(table):
        if spec.name not in keys:
            note(spec.name, "disabled")
            continue
        if index > last:
            note(spec.name, "not_requested", f"after --until {until}")
            continue
        ups = spec.upstream(config)
        if any(u in blocked for u in ups):
            blocked.add(spec.name)
            note(spec.name, "blocked", f"needs {', '.join(u for u in ups if u in blocked)}")
            continue
        reason = _unavailable(spec, config)
        if reason is not None:
            blocked.add(spec.name)
            note(spec.name, "unavailable", reason)
            continue
        key, inputs = keys[spec.name]
        folder = workdir / spec.name
        state = read_state(folder)
        status, _ = _status_of(state, key)
        if index < first:
            if status != "done":
                raise StageOrderError(
                    f"--from {start}: upstream stage {spec.name} is {status}; run it first (drop --from)"
                )
            note(spec.name, "kept", "before --from")
            continue
        if status == "done" and start is None:
            note(spec.name, "cached", "inputs unchanged")
            continue
        resumed = status == "interrupted" and start is None
        if not resumed:
            reset_folder(folder)
        sink.stage(spec.name, "resumed" if resumed else "started", "")
        ctx = StageContext(config=config, base=base, workdir=workdir, folder=folder, resumed=resumed,
                           upstream={u: workdir / u for u in ups}, events=sink)  # fmt: skip
        seconds = _execute(spec, ctx, key, inputs, state)
        done = read_state(folder)
        note(spec.name, "resumed" if resumed else "ran", brief(done.summary if done else {}), seconds)
    return out


def _stage_table() -> tuple[StageSpec, ...]:
    from geo_cli.pipeline._report import run_report
    from geo_cli.pipeline._stage_aux import run_aux_search
    from geo_cli.pipeline._stage_evaluate import run_evaluate
    from geo_cli.pipeline._stages_prep import (
        data_inputs,
        run_data,
        run_mts,
        run_train,
        splits_of,
    )

    def train_ups(c: PipelineConfig) -> tuple[str, ...]:
        if c.train is None or c.train.records is not None:
            return ()
        return ("data",) if c.trains_proposer() else ("mts",)

    def eval_ups(c: PipelineConfig) -> tuple[str, ...]:
        uses_train = c.evaluate.model in (None, "trained") or (
            c.evaluate.prm is not None and c.evaluate.prm.model == "trained"
        )
        return ("data", "train") if uses_train else ("data",)

    def eval_modules(c: PipelineConfig) -> tuple[str, ...]:
        backend = {"transformers": "transformers", "vllm": "vllm", "openai": "httpx"}[c.evaluate.backend]
        extra = ("geoprm", "geoprm.backends.transformers") if c.evaluate.prm is not None else ()
        if c.evaluate.prm is not None and c.evaluate.prm.layout == "program":
            extra = (*extra, "geosynth.synth")
        return ("geodsl", "geotts", "geosynth.mts", backend, *extra)

    def train_modules(c: PipelineConfig) -> tuple[str, ...]:
        launcher = c.train.launcher if c.train else None
        extra = (
            {"zero2": ("accelerate", "deepspeed"), "zero3": ("accelerate", "deepspeed")}.get(
                launcher.accelerate_config or "", ("accelerate",)
            )
            if launcher and launcher.kind == "accelerate"
            else ()
        )
        return ("geotrain", "torch", "transformers", "peft", *extra)

    def mts_modules(c: PipelineConfig) -> tuple[str, ...]:
        llm = (
            {"openai": "httpx", "transformers": "transformers", "vllm": "vllm"}.get(
                str((c.mts.llm or {}).get("backend", "openai"))
            )
            if c.mts.llm is not None
            else None
        )
        if c.mts.critiques is not None:
            return ("geosynth.mts", "geosynth.synth", "geoprm", "geotts", "torch", "transformers")
        return ("geosynth.mts", *(("ray",) if c.mts.use_ray else ()), *((llm,) if llm else ()))

    def aux_settings(c: PipelineConfig, base: Path) -> dict[str, Any]:
        if c.aux is None:
            return {}
        from geo_cli.pipeline._stages_prep import resolve_path
        from geo_cli.pipeline._state import file_digest
        from geo_cli.pipeline.errors import PipelineConfigError

        try:
            path = resolve_path(base, c.aux.problems)
            digest = file_digest(path) if path.is_file() else f"missing: {path}"
        except PipelineConfigError as exc:
            digest = f"missing: {exc}"
        return c.aux.model_dump(mode="json", exclude={"threads"}) | {"problems_digest": digest}

    def data_modules(c: PipelineConfig) -> tuple[str, ...]:
        ray = any(s.use_ray for s in splits_of(c).values())
        synth = any(s.source == "synthesize" for s in splits_of(c).values())
        return ("geodsl", "matplotlib", *(("geosynth.synth",) if synth else ()), *(("ray",) if ray else ()))

    return (
        StageSpec("data", lambda c: (), lambda c: True, data_inputs, data_modules, run_data),
        StageSpec("mts", lambda c: ("data",), lambda c: c.mts.enabled and c.data.train is not None,
                  lambda c, b: c.mts.model_dump(mode="json", exclude={"jobs", *(() if c.mts.critiques else ("critiques",))}),
                  mts_modules, run_mts),
        StageSpec("train", train_ups, lambda c: c.train is not None and c.train.enabled,
                  lambda c, b: c.train.model_dump(mode="json") if c.train else {}, train_modules, run_train),
        StageSpec("aux_search", lambda c: ("train",), lambda c: c.aux is not None and c.aux.enabled,
                  aux_settings, lambda c: ("geosynth.synth", "geotts", "torch", "transformers"), run_aux_search),
        StageSpec("evaluate", eval_ups, lambda c: c.evaluate.enabled,
                  lambda c, b: c.evaluate.model_dump(mode="json", exclude={"sandbox_workers"}), eval_modules,
                  run_evaluate),
        StageSpec("report", lambda c: ("evaluate",), lambda c: c.evaluate.enabled,
                  lambda c, b: c.report.model_dump(mode="json") | {"name": c.name}, lambda c: ("matplotlib",),
                  run_report),
    )  # fmt: skip


class _LazyTable(Sequence[StageSpec]):
    """The stage table, built on first use (the stage modules import geodsl and friends)."""

    _table: tuple[StageSpec, ...] | None = None

    def _get(self) -> tuple[StageSpec, ...]:
        if self._table is None:
            self._table = _stage_table()
        return self._table

    def __getitem__(self, index: Any) -> Any:
        return self._get()[index]

    def __len__(self) -> int:
        return len(self._get())


STAGES: Sequence[StageSpec] = _LazyTable()
"""The pipeline's stages, in order: data, mts, train, aux_search, evaluate, report."""
