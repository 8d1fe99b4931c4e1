"""geosynth.mts: multi-trace synthesis (MTS) and perception-augmented training data from PGPS-format datasets.

Each solution program is instantiated, translated into a PAL script and verified by running it in
the sandbox; with an LLM configured, the verified script is rewritten with theorem-grounded
rationales (CoT-PAL, verified again, repaired up to three passes in all) and the program is
explained step by step (CoT-Program, its program checked token for token). Without an LLM, the
template teacher (``LLMConfig(backend="template")``) writes both CoT traces from templates. The
traces become chat-formatted PA records, ablation mixtures and Table-6 statistics::

    from pathlib import Path
    from geosynth.mts import MTSConfig, run_mts

    run = run_mts(Path("pgps9k_test.json"), Path("out/pgps9k_test"), MTSConfig(jobs=2))
    run.stats.traces      # {"program": 1000, "pal": 1000, "cot_program": 0, "cot_pal": 0}
    run.cot_skipped       # True: no LLM configured

See ``docs/mts.md`` for the output layout and the CLI (``geo synth mts``).
"""

from __future__ import annotations

from geosynth.mts._config import LLMConfig, MTSConfig, load_llm_config
from geosynth.mts._extract import (
    equation_drift,
    extract_code,
    extract_steps,
    program_mismatch,
    rationale_missing,
)
from geosynth.mts._load import LoadedDataset, load_dataset
from geosynth.mts._mix import MIXTURE_NAMES, TokenCounter, build_mixtures, default_token_count, record_tokens
from geosynth.mts._models import DROP_REASONS, TRACE_TYPES, Drop, DropReason, SourceProblem, Trace, TraceType
from geosynth.mts._pa import (
    CLAUSE_INSTRUCTIONS,
    DIAGRAM_SETTINGS,
    PA_INSTRUCTIONS,
    PERCEPTION_HEADER,
    REASONING_HEADER,
    DiagramSetting,
    pa_prompt,
    pa_record,
)
from geosynth.mts._pipeline import MTS_VERSION, STAGES, MTSRun, ProgressCallback, ShardHook, run_mts
from geosynth.mts._prompts import PROMPT_VERSIONS, PromptName, PromptTemplate, template
from geosynth.mts._stats import (
    TRACE_CHECKS,
    DatasetStats,
    compute_stats,
    format_stats_table,
    format_trace_table,
)
from geosynth.mts._template_teacher import TEMPLATE_TEACHER_MODEL, TemplateTeacher
from geosynth.mts.errors import (
    MTSConfigError,
    MTSError,
    MTSInputError,
    MTSLLMError,
    MTSOutputError,
    MTSWorkerError,
)

__all__ = (
    "CLAUSE_INSTRUCTIONS",
    "DIAGRAM_SETTINGS",
    "DROP_REASONS",
    "MIXTURE_NAMES",
    "MTS_VERSION",
    "PA_INSTRUCTIONS",
    "PERCEPTION_HEADER",
    "PROMPT_VERSIONS",
    "REASONING_HEADER",
    "STAGES",
    "TEMPLATE_TEACHER_MODEL",
    "TRACE_CHECKS",
    "TRACE_TYPES",
    "DatasetStats",
    "DiagramSetting",
    "Drop",
    "DropReason",
    "LLMConfig",
    "LoadedDataset",
    "MTSConfig",
    "MTSConfigError",
    "MTSError",
    "MTSInputError",
    "MTSLLMError",
    "MTSOutputError",
    "MTSRun",
    "MTSWorkerError",
    "ProgressCallback",
    "PromptName",
    "PromptTemplate",
    "ShardHook",
    "SourceProblem",
    "TemplateTeacher",
    "TokenCounter",
    "Trace",
    "TraceType",
    "build_mixtures",
    "compute_stats",
    "default_token_count",
    "equation_drift",
    "extract_code",
    "extract_steps",
    "format_stats_table",
    "format_trace_table",
    "load_dataset",
    "load_llm_config",
    "pa_prompt",
    "pa_record",
    "program_mismatch",
    "rationale_missing",
    "record_tokens",
    "run_mts",
    "template",
)
