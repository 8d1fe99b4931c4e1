"""``geo pipeline``: config-driven runs from data to report (data -> mts -> train -> aux_search -> evaluate -> report).

Each stage writes ``<workdir>/<stage>/`` and a ``stage.json`` keyed by a hash of its settings, its
code versions and its upstream stages' keys: an unchanged stage is skipped, a changed one reruns
with everything downstream, and a stage killed half-way resumes (MTS shards, training checkpoints,
evaluation problem by problem)::

    from geo_cli.pipeline import load_pipeline_config, run_pipeline, workdir_of

    config, base = load_pipeline_config("cpu")          # a shipped preset, or a YAML file
    outcomes = run_pipeline(config, base, workdir_of(config, base))
"""

from __future__ import annotations

from geo_cli.pipeline._check import CheckReport, StageCheck, check_pipeline
from geo_cli.pipeline._config import (
    CritiqueDataSettings,
    DatasetSpec,
    DataSettings,
    EvaluateSettings,
    Hardware,
    LauncherSettings,
    MTSSettings,
    PipelineConfig,
    PRMSettings,
    ReportSettings,
    TrainSettings,
    available_presets,
    load_pipeline_config,
    preset_path,
)
from geo_cli.pipeline._context import Events, NullEvents, StageContext
from geo_cli.pipeline._report import build_report
from geo_cli.pipeline._runner import (
    STAGES,
    StageOutcome,
    StageSpec,
    StageStatus,
    pipeline_status,
    run_pipeline,
    stage_keys,
    workdir_of,
)
from geo_cli.pipeline.errors import PipelineConfigError, PipelineError, StageFailedError, StageOrderError

__all__ = (
    "STAGES",
    "CheckReport",
    "CritiqueDataSettings",
    "DataSettings",
    "DatasetSpec",
    "EvaluateSettings",
    "Events",
    "Hardware",
    "LauncherSettings",
    "MTSSettings",
    "NullEvents",
    "PRMSettings",
    "PipelineConfig",
    "PipelineConfigError",
    "PipelineError",
    "ReportSettings",
    "StageCheck",
    "StageContext",
    "StageFailedError",
    "StageOrderError",
    "StageOutcome",
    "StageSpec",
    "StageStatus",
    "TrainSettings",
    "available_presets",
    "build_report",
    "check_pipeline",
    "load_pipeline_config",
    "pipeline_status",
    "preset_path",
    "run_pipeline",
    "stage_keys",
    "workdir_of",
)
