"""The pipeline config: frozen, strict pydantic models read from YAML (a file or a shipped preset).

YAML is parsed, converted to JSON and validated in strict JSON mode, so a list is accepted where a
tuple is declared, but a string never silently becomes a number. Relative paths in a config are read
from the config file's folder (for a shipped preset: from the current folder).
"""

from __future__ import annotations

import json
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)

from geo_cli._errors import InputError
from geo_cli._inputs import read_text
from geo_cli.pipeline.errors import PipelineConfigError
from geotts.backends.vllm import VLLMEngineOptions

__all__ = (
    "AuxSearchSettings",
    "DataSettings",
    "DatasetSpec",
    "EvaluateSettings",
    "Hardware",
    "LauncherSettings",
    "MTSSettings",
    "PRMSettings",
    "PipelineConfig",
    "ReportSettings",
    "TrainSettings",
    "available_presets",
    "load_pipeline_config",
    "preset_path",
)

TINY_PREFIX = "tiny:"
"""A model named ``tiny:<family>`` is a tiny random Qwen-VL built at run time (geotrain.build_tiny_model)."""
SCRATCH_PREFIX = "scratch:"
"""A base model named ``scratch:<architecture>`` (``qwen2``, ``qwen3``) is a text-only decoder built at run
time with a tokenizer trained on the training records (geotrain.build_scratch_model)."""
BUNDLED_PREFIX = "bundled:"
"""A path ``bundled:<relative path>`` names a file or folder shipped inside geo_cli (``geo_cli/bundled/``),
such as the CPU preset's trained checkpoint and its held-out split."""

DiagramSetting = Literal["image", "clauses"]
"""How the diagram reaches the model (``geosynth.mts.DiagramSetting``): ``image``, or its clauses in the prompt."""
TraceName = Literal["program", "pal", "cot_program", "cot_pal"]
"""A trace type of the MTS records (``geosynth.mts.TraceType``)."""


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, use_attribute_docstrings=True)


class Hardware(_Model):
    """What a run needs; ``geo pipeline check`` prints it and compares it with this machine."""

    summary: str
    """One line a person reads, e.g. ``8 x 80 GB GPUs (DeepSpeed ZeRO-2)``."""
    gpus: Annotated[int, Field(ge=0)] = 0
    """CUDA devices needed by the heaviest stage (0: CPU only)."""
    gpu_memory_gb: Annotated[float, Field(gt=0)] | None = None
    """Memory per GPU, GiB."""
    cpu_cores: Annotated[int, Field(ge=1)] = 2
    """CPU cores the run was sized for."""
    cluster: str | None = None
    """A cluster the run needs (e.g. a Ray cluster), or None."""


class DatasetSpec(_Model):
    """Where one split's problems come from."""

    source: Literal["bundled_sample", "pgps_file", "synthesize"]
    """``bundled_sample``: one of geodsl's bundled samples (120 test records); ``pgps_file``: a PGPS-format
    file; ``synthesize``: generated problems (needs a geosynth problem factory)."""
    sample: Literal["pgps9k_test", "geometry3k_test"] = "pgps9k_test"
    """Which bundled sample (``bundled_sample`` only): the first 120 PGPS9K or Geometry3K test records."""
    path: str | None = None
    """The PGPS-format file (``pgps_file`` only)."""
    images_dir: str | None = None
    """Folder holding the diagrams the records name (missing ones are drawn from the clauses)."""
    offset: Annotated[int, Field(ge=0)] = 0
    """Records skipped at the start (in file order)."""
    limit: Annotated[int, Field(ge=1)] | None = None
    """Records kept after the offset (None: all)."""
    synth_kind: Literal["calculation", "pgps", "aux_construction"] | None = None
    """What ``synthesize`` generates: Euclid-Omni calculation problems with a bridged program, the PGPS-format
    corpus (``pgps``: the ``pgps`` generator preset, several problems per figure), or auxiliary-construction
    problems."""
    synth_count: Annotated[int, Field(ge=1)] | None = None
    """How many problems ``synthesize`` generates (``pgps``: how many figures)."""
    synth_seed: int = 0
    """Generator seed (``synthesize`` only): splits made with different seeds draw different figures."""
    synth_config: str | None = None
    """The generator configuration ``synthesize`` runs: a geosynth preset name (``pgps``, ``pgps-v1``,
    ``euclid-omni``, ...) or a YAML file (relative to the pipeline config). None: ``pgps`` for
    ``synth_kind: pgps``, ``euclid-omni`` for ``calculation``. Its content is part of the data stage's key."""
    pgps_per_figure: Annotated[int, Field(ge=1)] = 4
    """Problems posed per figure (``synth_kind: pgps`` only)."""
    pgps_figures: bool = False
    """Keep each problem's realised figure in ``synth/<split>/pgps/pgps.json`` (``synth_kind: pgps`` only),
    so its solution steps can be labelled on it (``geo prm figure-data --figured``) without generating the
    figures again."""
    exclude: tuple[str, ...] = ()
    """PGPS-format files (test splits) whose problems a ``pgps`` split must not pose; a synthesized
    evaluation split also leaves out every problem of the training split."""
    use_ray: bool = False
    """Generate on a Ray cluster (``synthesize`` only)."""

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.source == "pgps_file" and not self.path:
            raise ValueError("source 'pgps_file' needs path")
        if self.source != "pgps_file" and self.path:
            raise ValueError(f"path is only read for source 'pgps_file', not {self.source!r}")
        if self.source == "synthesize" and (self.synth_kind is None or self.synth_count is None):
            raise ValueError("source 'synthesize' needs synth_kind and synth_count")
        if self.synth_config is not None and self.synth_kind not in ("pgps", "calculation"):
            raise ValueError("synth_config is only read for synth_kind 'pgps' or 'calculation'")
        if self.exclude and self.synth_kind != "pgps":
            raise ValueError("exclude is only read for synth_kind 'pgps'")
        if self.pgps_figures and self.synth_kind != "pgps":
            raise ValueError("pgps_figures is only read for synth_kind 'pgps'")
        return self


class DataSettings(_Model):
    """The data stage: the training and test problems, with their diagrams."""

    train: DatasetSpec | None = None
    """Problems that MTS turns into training data (None: no training split)."""
    test: DatasetSpec | None = None
    """Problems the evaluate stage solves, as the split named ``test`` (None: no such split)."""
    splits: dict[str, DatasetSpec] = Field(default_factory=dict)
    """More evaluation splits by name (``heldout``, ``pgps9k_test``...), scored one by one; the first
    evaluation split (``test`` when set) also gives the report's top-level figures."""
    draw_missing_diagrams: bool = True
    """Draw a schematic diagram from a record's clauses when its image is not available."""

    @model_validator(mode="after")
    def _check(self) -> Self:
        bad = [
            name for name in self.splits if name in ("train", "test") or not name.replace("_", "").isalnum()
        ]
        if bad:
            raise ValueError(f"split names must be identifiers other than 'train' and 'test': {bad}")
        return self

    def evaluation_splits(self) -> dict[str, DatasetSpec]:
        """Every evaluation split by name, the primary one first."""
        return {**({"test": self.test} if self.test is not None else {}), **self.splits}


class CritiqueDataSettings(_Model):
    """Critique records instead of MTS traces.

    The policy's program traces on the training split, every step labelled on the problem's realised
    figure (the training split needs ``pgps_figures``).
    """

    policy: str
    """The policy model that writes the solutions (a folder, or ``bundled:<name>``)."""
    samples: Annotated[int, Field(ge=1)] = 4
    """Program traces sampled per problem."""
    corruptions: Annotated[int, Field(ge=0)] = 1
    """Corrupted reference programs per problem (solutions with a known wrong step)."""
    references: bool = True
    """Add each problem's reference program (a solution correct at every step)."""
    balance: bool = True
    """Keep as many records with a wrong step as without."""
    verdict_first: bool = False
    """Write each step's verdict before its analyses in the critiques (``geoprm.format_critique``)."""
    temperature: Annotated[float, Field(gt=0)] = 0.7
    """Policy sampling temperature."""
    max_tokens: Annotated[int, Field(ge=1)] = 96
    """Longest program trace sampled."""
    seed: int = 0
    """Seeds the sampling, the corruptions and the balancing."""
    batch_size: Annotated[int, Field(ge=1)] = 16
    """Problems per policy call (one resumable chunk)."""
    threads: Annotated[int, Field(ge=1)] = 1
    """Torch CPU threads of the policy."""

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if not self.verdict_first:  # left out at its default: the stage keys of earlier runs stay valid
            data.pop("verdict_first", None)
        return data


class MTSSettings(_Model):
    """The mts stage: geosynth's multi-trace synthesis on the training split.

    With ``critiques`` it writes the critique records a process reward model trains on instead.
    """

    enabled: bool = True
    """Run the stage."""
    jobs: Annotated[int, Field(ge=1)] = 2
    """Sandbox worker processes."""
    shard_size: Annotated[int, Field(ge=1)] = 100
    """Problems per resumable shard."""
    script_timeout: Annotated[float, Field(gt=0, le=600)] = 30.0
    """Seconds one PAL script may run."""
    llm: dict[str, Any] | None = None
    """The teacher LLM writing CoT traces (fields of ``geosynth.mts.LLMConfig``); None: program + PAL only."""
    use_ray: bool = False
    """Verify scripts on Ray actors."""
    setting: DiagramSetting = "image"
    """How the PA records give the diagram: ``image`` (perceived) or ``clauses`` (stated in the prompt)."""
    critiques: CritiqueDataSettings | None = None
    """Write critique records labelled on the training figures (``mts/critiques/records.jsonl``, what a
    ``records_kind: prm`` train stage reads) instead of MTS traces."""


class LauncherSettings(_Model):
    """How the train stage starts geotrain."""

    kind: Literal["in_process", "accelerate"] = "in_process"
    """``in_process``: train in this process (CPU, one GPU); ``accelerate``: ``accelerate launch -m geotrain``."""
    accelerate_config: str | None = None
    """A shipped accelerate config name (``zero2``, ``fsdp2``, ``ddp``...) for ``accelerate``."""
    num_processes: Annotated[int, Field(ge=1)] = 1
    """Processes (GPUs) for ``accelerate``."""

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.kind == "accelerate" and self.accelerate_config is None:
            raise ValueError("launcher 'accelerate' needs accelerate_config (e.g. zero2)")
        return self


class TrainSettings(_Model):
    """The train stage: geotrain on the MTS mixture (PA-SFT) or on given records (e.g. GM-PRM)."""

    enabled: bool = True
    """Run the stage."""
    base_model: str
    """Base model folder or hub id; ``tiny:<family>`` builds a tiny random model at run time;
    ``scratch:qwen2`` / ``scratch:qwen3`` a from-scratch decoder shaped by ``scratch``; ``bundled:<name>``
    a checkpoint shipped with geo_cli (e.g. the CPU policy, which a CPU critic starts from)."""
    scratch: dict[str, Any] = Field(default_factory=dict)
    """Fields of ``geotrain.ScratchModel`` (``hidden_size``, ``num_layers``, ``vocab_size``...) for a
    ``scratch:`` base model."""
    geotrain_preset: str | None = None
    """A geotrain preset the settings start from (``pa_sft_8b``, ``gm_prm``...)."""
    mixture: str = "mts_all"
    """The MTS mixture trained on (``mts_all``, ``single_pal``, ``wo_cot_pal``...)."""
    trace_weights: dict[TraceName, Annotated[float, Field(gt=0)]] = Field(default_factory=dict)
    """Passes per epoch over the mixture's records of each trace type, 1 for a type not named: ``{program: 4}``
    trains on every program record four times an epoch and on the other traces once (geotrain's source
    weights: a fraction keeps a seeded share). Only for an MTS mixture of PA records."""
    records: str | None = None
    """Train on this JSON Lines file instead of an MTS mixture (then the stage does not need mts)."""
    records_kind: Literal["pa", "prm", "chat"] = "pa"
    """Format of ``records`` (``chat``: geotrain chat records, e.g. ``geo synth aux-data --records``)."""
    settings: dict[str, Any] = Field(default_factory=dict)
    """Fields of ``geotrain.RunConfig`` (``max_steps``, ``learning_rate``, ``family``...)."""
    launcher: LauncherSettings = LauncherSettings()
    """How training is started."""
    export: bool = True
    """Export a merged, self-contained model folder (LoRA adapters merged) for evaluation."""


class PRMSettings(_Model):
    """Refined best-of-N with a process reward model (geoprm)."""

    model: str
    """The reward model folder or hub id; ``trained`` uses this pipeline's train stage output;
    ``tiny:<family>`` a tiny random model."""
    n: Annotated[int, Field(ge=2)] = 8
    """Solutions per problem (N/2 sampled, N/2 refined)."""
    max_critique_tokens: Annotated[int, Field(ge=8)] = 512
    """Token limit of one critique."""
    layout: Literal["text", "program"] = "text"
    """What the policy writes and the critic judges: ``text`` (step-by-step solutions of the question) or
    ``program`` (the policy's PA program trace in the clauses setting, one operator per step, as
    ``geoprm.programs`` lays it out). ``program`` records every strategy's curve over ``ns``."""
    ns: tuple[Annotated[int, Field(ge=1)], ...] = ()
    """``program`` layout: the N of the curves (greedy, SC, random choice, best-of-N by mean / min / max,
    refined best-of-N); the largest is sampled per problem and must be even. Empty: ``(n,)``."""
    batch_size: Annotated[int, Field(ge=1)] = 8
    """Critiques written together."""
    limit: Annotated[int, Field(ge=1)] | None = None
    """``program`` layout: judge only each split's first this many problems (None: all)."""

    @model_validator(mode="after")
    def _check(self) -> Self:
        top = max(self.ns, default=self.n)
        if self.layout == "program" and top % 2:
            raise ValueError(f"the largest N ({top}) must be even: refined best-of-N refines half of them")
        if self.ns and self.layout != "program":
            raise ValueError("ns is only read for layout 'program'")
        return self


class EvaluateSettings(_Model):
    """The evaluate stage: candidates generated and executed, then every strategy scored."""

    enabled: bool = True
    """Run the stage."""
    model: str | None = None
    """The policy model; None: this pipeline's trained model; ``tiny:<family>``: a tiny random one;
    ``bundled:<name>``: a checkpoint shipped with geo_cli."""
    setting: DiagramSetting = "image"
    """How the diagram reaches the model: the image (``image``) or its clauses stated in the prompt
    (``clauses``, the ground-truth-diagram setting of text-only models); must match the training records."""
    program_grammar: bool = False
    """Constrain the program trace's decoding to the PGPS program grammar (transformers backend): valid
    operators and operand counts, in the instantiated form of the PA records (only the problem's number
    values and the vocabulary constants as operands), ``Get`` last."""
    threads: Annotated[int, Field(ge=1)] | None = None
    """Torch CPU threads while generating (transformers backend on CPU; None: torch's default, which follows
    ``OMP_NUM_THREADS``). Scripts run in the sandbox between generate calls, so the threads are not shared."""
    batch_size: Annotated[int, Field(ge=1)] = 1
    """Requests with equal settings decoded together (transformers backend): problems are generated this
    many at a time. 1 decodes each request alone (seeded samples then do not depend on the batch)."""
    backend: Literal["transformers", "vllm", "openai"] = "transformers"
    """Generation backend."""
    base_url: str | None = None
    """Server URL for ``openai``."""
    device: str = "cpu"
    """Torch device for ``transformers``."""
    vllm: VLLMEngineOptions | None = None
    """Engine settings of the ``vllm`` backend (``dtype``, ``max_model_len``, ``gpu_memory_utilization``)."""
    depth: Annotated[int, Field(ge=1)] = 10
    """D: candidates per trace type; budgets run 1..V x D (40 for the paper's V = 4, D = 10)."""
    order: tuple[Literal["program", "pal", "cot_program", "cot_pal"], ...] = (
        "program",
        "pal",
        "cot_program",
        "cot_pal",
    )
    """Trace types (V of them) in read order."""
    temperature: Annotated[float, Field(gt=0)] = 0.7
    """Temperature of the sampled candidates."""
    max_tokens: Annotated[int, Field(ge=1)] = 1024
    """Token limit per candidate."""
    seed: int = 0
    """Sampling seed."""
    beam: bool = True
    """Also decode a unified beam of width V x D (SC beam and the adaptive beam-SC baselines)."""
    instructions: Literal["pa", "paper"] = "pa"
    """Trace instructions: ``pa`` (the PA records' own, what the trained model saw) or ``paper``."""
    prm: PRMSettings | None = None
    """Refined best-of-N when set."""
    sandbox_workers: Annotated[int, Field(ge=1)] = 2
    """Sandbox workers that run PAL candidates."""
    sandbox_timeout: Annotated[float, Field(gt=0)] = 10.0
    """Seconds one PAL candidate may run."""

    @model_validator(mode="after")
    def _check(self) -> Self:
        if len(set(self.order)) != len(self.order):
            raise ValueError(f"order lists a trace type twice: {list(self.order)}")
        if self.backend == "openai" and not self.base_url:
            raise ValueError("backend 'openai' needs base_url")
        if self.vllm is not None and self.backend != "vllm":
            raise ValueError(f"vllm engine settings apply to backend 'vllm' only, not {self.backend!r}")
        if self.program_grammar and self.backend != "transformers":
            raise ValueError(f"program_grammar needs backend 'transformers', not {self.backend!r}")
        return self


class AuxSearchSettings(_Model):
    """The aux_search stage: auxiliary constructions for the problems plain deduction does not prove.

    Each problem of ``problems`` is first given to plain deduction; each one it does not prove is then
    searched twice with the same budget: by the engine-checked beam search over the trained proposer's
    constructions, and by the heuristic search (no language model). Every proof either finds is replayed.
    """

    enabled: bool = True
    """Run the stage."""
    problems: str
    """A JGEX problem file (name line, problem line), relative to the config or ``bundled:<name>``."""
    limit: Annotated[int, Field(ge=1)] | None = None
    """Search only the first this many problems of the file (None: all)."""
    plain_time_limit: Annotated[float, Field(gt=0)] = 30.0
    """Seconds of plain deduction per problem (what it proves is not searched)."""
    budget: Annotated[float, Field(gt=0)] = 60.0
    """Seconds of each search per unproved problem."""
    node_time_limit: Annotated[float, Field(gt=0)] = 5.0
    """Seconds of deduction per construction checked by the beam search."""
    branching: Annotated[int, Field(ge=1)] = 8
    """Distinct valid proposals kept per beam node."""
    beam: Annotated[int, Field(ge=1)] = 16
    """Nodes kept per level."""
    depth: Annotated[int, Field(ge=1, le=4)] = 2
    """Most constructions the beam search adds."""
    temperature: Annotated[float, Field(ge=0)] = 1.0
    """Sampling temperature of the proposer."""
    max_tokens: Annotated[int, Field(ge=4)] = 48
    """Tokens per proposal."""
    heuristic: bool = True
    """Also run the heuristic search, for the side-by-side table."""
    seed: int = 0
    """Seed of the diagrams and of sampling."""
    threads: Annotated[int, Field(ge=1)] = 1
    """Torch threads of the proposer (one is steadiest on a busy machine)."""


class ReportSettings(_Model):
    """The report stage."""

    title: str | None = None
    """Page title (default: the pipeline's name)."""
    gallery: Annotated[int, Field(ge=0)] = 4
    """Examples in the gallery."""


class PipelineConfig(_Model):
    """One pipeline: data -> mts -> train -> aux_search -> evaluate -> report."""

    name: str
    """Short name (used for the default work folder ``runs/<name>``)."""
    description: str = ""
    """What the run reproduces."""
    hardware: Hardware
    """What the run needs."""
    workdir: str | None = None
    """Folder for every stage's outputs (default ``runs/<name>`` in the current folder)."""
    data: DataSettings
    """Data stage."""
    mts: MTSSettings = MTSSettings()
    """MTS stage."""
    train: TrainSettings | None = None
    """Train stage (None: no training)."""
    evaluate: EvaluateSettings = EvaluateSettings()
    """Evaluate stage."""
    aux: AuxSearchSettings | None = None
    """Auxiliary-construction search with the trained proposer (None: no such stage)."""
    report: ReportSettings = ReportSettings()
    """Report stage."""

    def trains_proposer(self) -> bool:
        """Whether the training split is auxiliary-construction examples (the train stage learns a proposer)."""
        return self.data.train is not None and self.data.train.synth_kind == "aux_construction"

    @model_validator(mode="after")
    def _check(self) -> Self:
        needs_trained = self.evaluate.enabled and self.evaluate.model is None
        if needs_trained and (self.train is None or not self.train.enabled):
            raise ValueError(
                "evaluate.model is unset (use the trained model) but there is no enabled train stage"
            )
        if self.evaluate.enabled and not self.data.evaluation_splits():
            raise ValueError("evaluate is enabled but neither data.test nor data.splits is set")
        aux_split = next(
            (n for n, s in self.data.evaluation_splits().items() if s.synth_kind == "aux_construction"), None
        )
        if aux_split is not None:
            raise ValueError(
                f"data.{aux_split}: auxiliary-construction examples only train a proposer (data.train); "
                "the problems it is tried on are aux.problems"
            )
        spec = self.data.train
        if (
            self.mts.enabled
            and self.mts.critiques is not None
            and (spec is None or spec.source != "synthesize" or not spec.pgps_figures)
        ):  # checked before any stage runs: the data stage would spend its time for nothing
            raise ValueError(
                "mts.critiques: the training split must be synthesized with pgps_figures: true (its steps are "
                "labelled on the realised figures)"
            )
        if self.trains_proposer() and self.mts.enabled:
            raise ValueError(
                "data.train mines auxiliary-construction examples, which train a proposer directly: set "
                "mts.enabled: false (MTS writes traces of PGPS problems)"
            )
        if self.trains_proposer() and needs_trained:
            raise ValueError(
                "the trained model is an auxiliary-construction proposer, not a PGPS policy: give "
                "evaluate.model or set evaluate.enabled: false (the proposer is tried by the aux section)"
            )
        if (
            self.aux is not None
            and self.aux.enabled
            and not (
                self.train is not None
                and self.train.enabled
                and (self.trains_proposer() or self.train.records_kind == "chat")
            )
        ):
            raise ValueError(
                "aux searches with the trained proposer: it needs an enabled train stage on auxiliary-construction "
                "examples (data.train synth_kind aux_construction, or train.records with records_kind chat)"
            )
        uses_mts = (
            self.train is not None
            and self.train.enabled
            and self.train.records is None
            and not self.trains_proposer()
        )
        if (
            self.train is not None
            and self.train.trace_weights
            and (not uses_mts or self.mts.critiques is not None)
        ):
            raise ValueError(
                "train.trace_weights weighs the trace types of an MTS mixture; this train stage reads none"
            )
        if uses_mts and (not self.mts.enabled or self.data.train is None):
            raise ValueError("train reads the MTS mixture, so mts must be enabled and data.train set")
        if uses_mts and self.evaluate.enabled and needs_trained and self.evaluate.setting != self.mts.setting:
            raise ValueError(
                f"evaluate.setting {self.evaluate.setting!r} differs from mts.setting {self.mts.setting!r}: "
                "the trained model must be prompted as it was trained"
            )
        return self


def _bundled() -> Traversable:
    return resources.files("geo_cli") / "presets"


def available_presets() -> tuple[str, ...]:
    """Names of the shipped presets (``cpu``, ``paper-pa-sft-qwen3vl8b``...)."""
    return tuple(
        sorted(p.name.removesuffix(".yaml") for p in _bundled().iterdir() if p.name.endswith(".yaml"))
    )


def preset_path(name: str) -> Path:
    """The YAML file of a shipped preset.

    Raises:
        PipelineConfigError: for an unknown name.
    """
    if name not in available_presets():
        raise PipelineConfigError(f"no preset {name!r}; shipped presets: {', '.join(available_presets())}")
    return Path(str(_bundled() / f"{name}.yaml"))


def _problems(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or '(top level)'}: {e['msg']}" for e in exc.errors())


def load_pipeline_config(source: str | Path) -> tuple[PipelineConfig, Path]:
    """Read a pipeline config from a YAML file, or a shipped preset by name.

    Args:
        source: A YAML file, or a preset name (see :func:`available_presets`) when no such file exists.

    Returns:
        The config and the folder its relative paths are read from.

    Raises:
        PipelineConfigError: the file is missing or unreadable, not YAML, or has invalid fields (named).
    """
    import yaml

    path = Path(source)
    base = path.parent.resolve()
    named = path.suffix not in (".yaml", ".yml") and "/" not in str(source)
    if named and not path.is_file() and (not path.exists() or str(source) in available_presets()):
        path, base = preset_path(str(source)), Path.cwd()
    try:
        raw = yaml.safe_load(read_text(path, "config file"))
    except InputError as exc:
        raise PipelineConfigError(str(exc)) from None
    except yaml.YAMLError as exc:
        raise PipelineConfigError(f"{path}: cannot read YAML: {' '.join(str(exc).split())}") from exc
    if not isinstance(raw, dict):
        raise PipelineConfigError(f"{path}: the top level must be a mapping, got {type(raw).__name__}")
    try:
        config = PipelineConfig.model_validate_json(json.dumps(raw))
    except (ValidationError, TypeError) as exc:
        detail = _problems(exc) if isinstance(exc, ValidationError) else str(exc)
        raise PipelineConfigError(f"{path}: invalid pipeline config: {detail}") from None
    return config, base
