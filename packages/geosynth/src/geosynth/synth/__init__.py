"""Data synthesis: problems generated from scratch, with engine solutions, diagrams, texts and choices.

The generator samples construction rules (``SynthConfig``, bundled
``configs/default.yaml``), realises a diagram, runs the engine to closure, picks a goal (proving: a derived
relation; calculation: an angle, length, area or variable the engine determines exactly), cuts the
problem down to the constructions the solution needs and re-solves it from its own text before emitting
it. ``write_dataset`` writes resumable JSONL shards (process pool or Ray, identical output), and
``dataset_stats`` summarises a folder. Rendering, natural-language text, multiple choice, the PGPS bridge
and auxiliary constructions live in sibling modules and are used when present; the auxiliary-construction
search without a language model (``heuristic_aux_search``, ``solve_all_with_aux``: ``geo engine solve
--aux``) is exported here. PGPS-format problems can
carry their realised figure (``RealisedFigure``), on which ``figure_step_labels`` labels each step of a
solution program correct or wrong.
"""

from __future__ import annotations

from geosynth.synth._aux_heuristic import (
    HeuristicConfig,
    heuristic_aux_search,
    ranked_candidates,
    solve_all_with_aux,
    solve_with_aux,
)
from geosynth.synth._config import (
    CALCULATION_GOALS,
    PLAIN_WRITING,
    PROVING_GOALS,
    PGPSWriting,
    RuleSpec,
    SynthConfig,
    Task,
    config_from_mapping,
    load_config,
)
from geosynth.synth._dataset import Manifest, read_records, record_line, write_dataset
from geosynth.synth._generate import check_record, generate, generate_one, record_seed
from geosynth.synth._pgps_out import find_leaks
from geosynth.synth._pgps_realised import (
    FIGURE_FIELD,
    FigureCircle,
    FiguredProblem,
    FigurePoint,
    RealisedFigure,
    load_figured,
)
from geosynth.synth._records import PointRecord, SynthRecord
from geosynth.synth._stats import SynthStats, dataset_stats, records_stats
from geosynth.synth._step_labels import (
    CORRUPTION_KINDS,
    SLOT_KINDS,
    Corruption,
    CorruptionKind,
    FigureCatalogue,
    StepLabel,
    StepLabels,
    corrupt_program,
    figure_step_labels,
)
from geosynth.synth._to_calc import calc_crosscheck, to_calc_problem
from geosynth.synth.errors import (
    DatasetError,
    GenerationFailed,
    StepLabelError,
    SynthConfigError,
    SynthError,
    SynthUnavailableError,
)

__all__ = (
    "CALCULATION_GOALS",
    "CORRUPTION_KINDS",
    "FIGURE_FIELD",
    "PLAIN_WRITING",
    "PROVING_GOALS",
    "SLOT_KINDS",
    "Corruption",
    "CorruptionKind",
    "DatasetError",
    "FigureCatalogue",
    "FigureCircle",
    "FigurePoint",
    "FiguredProblem",
    "GenerationFailed",
    "HeuristicConfig",
    "Manifest",
    "PGPSWriting",
    "PointRecord",
    "RealisedFigure",
    "RuleSpec",
    "StepLabel",
    "StepLabelError",
    "StepLabels",
    "SynthConfig",
    "SynthConfigError",
    "SynthError",
    "SynthRecord",
    "SynthStats",
    "SynthUnavailableError",
    "Task",
    "calc_crosscheck",
    "check_record",
    "config_from_mapping",
    "corrupt_program",
    "dataset_stats",
    "figure_step_labels",
    "find_leaks",
    "generate",
    "generate_one",
    "heuristic_aux_search",
    "load_config",
    "load_figured",
    "ranked_candidates",
    "read_records",
    "record_line",
    "record_seed",
    "records_stats",
    "solve_all_with_aux",
    "solve_with_aux",
    "to_calc_problem",
    "write_dataset",
)
