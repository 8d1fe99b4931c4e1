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

Also exported for the command line and the benchmarks: auxiliary-construction data (``AuxExample``,
``split_auxiliary``, ``write_aux_examples``, ``write_aux_records``) and the model-proposed search
(``aux_search``, ``EnumerationProposer``); diagram drawing (``render_diagram``, which imports matplotlib only
when it draws, and ``require_renderer``); the PGPS output (``pgps_problems``, ``pgps_json``, the leak keys
and histograms); ``generate_with_figure`` and ``bridge_program``.
"""

from __future__ import annotations

from geosynth.synth._aux import (
    STANDARD_KINDS,
    AuxExample,
    new_point_names,
    split_auxiliary,
    standard_constructions,
    with_auxiliary,
)
from geosynth.synth._aux_heuristic import (
    HeuristicConfig,
    Share,
    heuristic_aux_search,
    ranked_candidates,
    solve_all_with_aux,
    solve_with_aux,
)
from geosynth.synth._aux_random import AuxGenConfig, mine_sequence, write_aux_examples
from geosynth.synth._aux_search import EnumerationProposer, aux_search, write_aux_records
from geosynth.synth._bridge import bridge_program
from geosynth.synth._config import (
    CALCULATION_GOALS,
    PLAIN_WRITING,
    PROVING_GOALS,
    PGPSDesign,
    PGPSWriting,
    RuleSpec,
    SynthConfig,
    Task,
    config_from_mapping,
    load_config,
)
from geosynth.synth._dataset import Manifest, read_records, record_line, write_dataset
from geosynth.synth._generate import check_record, generate, generate_one, generate_with_figure, record_seed
from geosynth.synth._pgps_out import (
    PGPSProblem,
    find_leaks,
    operator_histogram,
    pgps_json,
    pgps_problems,
    question_key,
    statement_key,
    step_histogram,
    type_histogram,
)
from geosynth.synth._pgps_realised import (
    FIGURE_FIELD,
    FigureCircle,
    FiguredProblem,
    FigurePoint,
    RealisedFigure,
    load_figured,
)
from geosynth.synth._records import PointRecord, SynthRecord
from geosynth.synth._render import render_diagram, require_renderer
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
    "STANDARD_KINDS",
    "AuxExample",
    "AuxGenConfig",
    "Corruption",
    "CorruptionKind",
    "DatasetError",
    "EnumerationProposer",
    "FigureCatalogue",
    "FigureCircle",
    "FigurePoint",
    "FiguredProblem",
    "GenerationFailed",
    "HeuristicConfig",
    "Manifest",
    "PGPSDesign",
    "PGPSProblem",
    "PGPSWriting",
    "PointRecord",
    "RealisedFigure",
    "RuleSpec",
    "Share",
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
    "aux_search",
    "bridge_program",
    "calc_crosscheck",
    "check_record",
    "config_from_mapping",
    "corrupt_program",
    "dataset_stats",
    "figure_step_labels",
    "find_leaks",
    "generate",
    "generate_one",
    "generate_with_figure",
    "heuristic_aux_search",
    "load_config",
    "load_figured",
    "mine_sequence",
    "new_point_names",
    "operator_histogram",
    "pgps_json",
    "pgps_problems",
    "question_key",
    "ranked_candidates",
    "read_records",
    "record_line",
    "record_seed",
    "records_stats",
    "render_diagram",
    "require_renderer",
    "solve_all_with_aux",
    "solve_with_aux",
    "split_auxiliary",
    "standard_constructions",
    "statement_key",
    "step_histogram",
    "to_calc_problem",
    "type_histogram",
    "with_auxiliary",
    "write_aux_examples",
    "write_aux_records",
    "write_dataset",
)
