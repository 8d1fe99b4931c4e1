"""``geo pipeline check``: validate a config without running it, and say what it needs."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from geo_cli.pipeline._config import PipelineConfig
from geo_cli.pipeline._runner import STAGES, StageSpec, _unavailable

__all__ = ("CheckReport", "StageCheck", "check_pipeline", "validate_nested")


class StageCheck(BaseModel):
    """One stage as the check sees it."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    name: str
    """The stage."""
    state: str
    """``ready``, ``disabled``, ``not available`` (a module, a generator or an input file is missing here)
    or ``blocked`` (an upstream stage is not available)."""
    detail: str = ""
    """Why a stage is not available."""


class CheckReport(BaseModel):
    """What ``check`` found."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    name: str
    """The pipeline's name."""
    hardware: str
    """What the config says it needs."""
    gpus_needed: int
    """GPUs needed."""
    gpus_here: int
    """CUDA devices visible here."""
    stages: tuple[StageCheck, ...]
    """Every stage."""
    missing_inputs: tuple[str, ...]
    """Input files and folders named by the config that do not exist here."""

    @property
    def runnable_here(self) -> bool:
        """True when every enabled stage is available, inputs exist and the GPUs are here."""
        return (
            all(s.state in ("ready", "disabled") for s in self.stages)
            and not self.missing_inputs
            and self.gpus_here >= self.gpus_needed
        )


def _gpus() -> int:
    if os.environ.get("CUDA_VISIBLE_DEVICES") == "":
        return 0
    try:
        import torch
    except ImportError:
        return 0
    return int(torch.cuda.device_count()) if torch.cuda.is_available() else 0


def _inputs(config: PipelineConfig, base: Path) -> dict[str, dict[str, str]]:
    """The input files and folders named by the config that do not exist here, by the stage reading them.

    Each maps the path as the config writes it to the path it resolves to.
    """
    from geo_cli.pipeline._stages_prep import resolve_path, splits_of, synth_config_of
    from geo_cli.pipeline.errors import PipelineConfigError

    named: dict[str, list[str]] = {"data": [], "train": [], "aux_search": [], "evaluate": []}
    missing: dict[str, dict[str, str]] = {}
    for split, spec in splits_of(config).items():
        named["data"] += [p for p in (spec.path, spec.images_dir, *spec.exclude) if p]
        if spec.synth_config is not None:
            try:
                synth_config_of(spec, base, split)
            except PipelineConfigError as exc:
                missing.setdefault("data", {})[spec.synth_config] = str(exc)
    if config.train is not None and config.train.records is not None:
        named["train"].append(config.train.records)
    if config.aux is not None and config.aux.enabled:
        named["aux_search"].append(config.aux.problems)
    model = config.evaluate.model
    if model is not None and model.startswith("bundled:"):
        named["evaluate"].append(model)
    for stage, values in named.items():
        for value in dict.fromkeys(values):
            try:
                path = resolve_path(base, value)
            except PipelineConfigError as exc:
                missing.setdefault(stage, {})[value] = str(exc)
                continue
            if not path.exists():
                missing.setdefault(stage, {})[value] = str(path)
    return missing


def check_pipeline(
    config: PipelineConfig, base: Path, stages: tuple[StageSpec, ...] | None = None
) -> CheckReport:
    """Check ``config`` (already validated by loading it): stage availability, inputs, hardware.

    Args:
        config: The pipeline config.
        base: The folder its relative paths are read from.
        stages: The stage table (default: the pipeline's).

    Returns:
        The report; nothing is run or written.
    """
    table = STAGES if stages is None else stages
    if stages is None:
        validate_nested(config)
    checks: list[StageCheck] = []
    blocked: set[str] = set()
    missing = _inputs(config, base)
    for spec in table:
        if not spec.enabled(config):
            checks.append(StageCheck(name=spec.name, state="disabled"))
            continue
        waiting = [u for u in spec.upstream(config) if u in blocked]
        absent = list(missing.get(spec.name, {}))
        reasons = [
            _unavailable(spec, config),
            f"inputs missing here: {', '.join(absent)}" if absent else None,
        ]
        reason = "; ".join(r for r in reasons if r) or None
        if waiting:
            blocked.add(spec.name)
            checks.append(StageCheck(name=spec.name, state="blocked", detail=f"needs {', '.join(waiting)}"
                                     + (f"; also {reason}" if reason else "")))  # fmt: skip
        elif reason is not None:
            blocked.add(spec.name)
            checks.append(StageCheck(name=spec.name, state="not available", detail=reason))
        else:
            checks.append(StageCheck(name=spec.name, state="ready"))
    return CheckReport(
        name=config.name, hardware=config.hardware.summary, gpus_needed=config.hardware.gpus, gpus_here=_gpus(),
        stages=tuple(checks), missing_inputs=tuple(p for paths in missing.values() for p in paths.values()),
    )  # fmt: skip


def validate_nested(config: PipelineConfig) -> None:
    """Validate the settings the pipeline hands to other packages: the MTS teacher LLM and geotrain's run.

    Raises:
        PipelineConfigError: naming the section and the field at fault.
    """
    from pydantic import ValidationError

    from geo_cli.pipeline.errors import PipelineConfigError

    if config.mts.enabled and config.mts.llm is not None:
        from geosynth.mts import LLMConfig

        try:
            LLMConfig.model_validate(config.mts.llm, strict=False)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise PipelineConfigError(f"mts.llm.{'.'.join(map(str, first['loc']))}: {first['msg']}") from None
    train = config.train
    if train is None or not train.enabled:
        return
    import geotrain
    from geo_cli.pipeline._stages_prep import model_family, records_kind

    family = model_family(train.base_model, train.settings)
    if train.base_model.startswith("scratch:"):
        try:
            geotrain.ScratchModel.model_validate(
                {"architecture": train.base_model.removeprefix("scratch:"), **train.scratch}, strict=False
            )
        except ValidationError as exc:
            first = exc.errors()[0]
            where = "".join(f".{part}" for part in first["loc"])  # empty: a check across fields
            raise PipelineConfigError(f"train.scratch{where}: {first['msg']}") from None
    values: dict[str, object] = {**train.settings, "model_path": train.base_model, "output_dir": "run",
                                 "data": [{"path": train.records or "mixture.jsonl", "kind": records_kind(config)}]}  # fmt: skip
    if family is not None:
        values["family"] = family
    try:
        geotrain.load_config(None, values, base_preset=train.geotrain_preset)
    except geotrain.ConfigError as exc:
        raise PipelineConfigError(f"train.settings (geotrain run config): {exc}") from None
