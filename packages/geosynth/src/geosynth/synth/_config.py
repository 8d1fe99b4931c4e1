"""The generator's configuration: construction rules as clause templates, goal weights, bounds.

A configuration is a frozen pydantic model loaded from YAML (the bundled ``configs/default.yaml`` or a
user file). Rules are data: each is a clause in the JGEX problem syntax with placeholders for new points
(``{x}``), existing points (``{a}``) and sampled angles (``{angle}``).
"""

from __future__ import annotations

import string
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)

from geosynth.synth.errors import SynthConfigError

_FROZEN = ConfigDict(frozen=True, extra="forbid", strict=True)

Task = Literal["proving", "calculation"]
TASKS: tuple[Task, ...] = ("proving", "calculation")
"""The two kinds of problems the generator makes."""

NEW_SLOTS = ("x", "y", "z", "w")
"""Placeholders that stand for new points."""
PARAM_SLOTS = ("angle", "angle2")
"""Placeholders that stand for sampled angles (degrees)."""
EXISTING_SLOTS = ("a", "b", "c", "d", "e", "f")
"""Placeholders that stand for distinct existing points."""

PROVING_GOALS = ("para", "perp", "cong", "coll", "cyclic", "midp", "eqangle", "simtri", "contri")
"""Goal types of proving problems (predicate names)."""
CALCULATION_GOALS = ("angle", "length", "area", "var")
"""Goal types of calculation problems."""


def placeholders(template: str) -> tuple[str, ...]:
    """The distinct placeholder names of a clause template, in order of first use."""
    names = [field for _, field, _, _ in string.Formatter().parse(template) if field]
    return tuple(dict.fromkeys(names))


class RuleSpec(BaseModel):
    """One construction rule: a clause template and how often to pick it."""

    model_config = _FROZEN
    clause: str
    """The clause template (``{x} = foot {x} {a} {b} {c}``); a start rule may hold several clauses."""
    weight: float = Field(default=1.0, gt=0)
    """Relative sampling weight among the rules available for the task."""
    tasks: tuple[Task, ...] = TASKS
    """The tasks that may use the rule."""
    scale: tuple[str, ...] = ()
    """Start rules of calculation problems: the two points whose distance is the given length."""

    @model_validator(mode="after")
    def _check(self) -> RuleSpec:
        known = (*NEW_SLOTS, *PARAM_SLOTS, *EXISTING_SLOTS)
        unknown = [p for p in placeholders(self.clause) if p not in known]
        if unknown:
            raise ValueError(f"rule {self.clause!r} has unknown placeholders {unknown} (known: {known})")
        if self.scale and len(self.scale) != 2:
            raise ValueError(f"rule {self.clause!r}: scale must name two points, got {list(self.scale)}")
        return self

    @property
    def new_slots(self) -> tuple[str, ...]:
        """The new-point placeholders it uses."""
        return tuple(p for p in placeholders(self.clause) if p in NEW_SLOTS)

    @property
    def existing_slots(self) -> tuple[str, ...]:
        """The existing-point placeholders it uses."""
        return tuple(p for p in placeholders(self.clause) if p in EXISTING_SLOTS)


class PGPSWriting(BaseModel):
    r"""How PGPS-format problems (``--pgps``) are written: the conventions of textbook PGPS problems.

    Each convention is a seeded choice per problem (from the problem's own seed, apart from the choices
    that design it, so turning a convention on or off does not change which problems are designed).
    None changes a program or an answer. :data:`PLAIN_WRITING` (all off, the bundled ``pgps-v1`` preset)
    writes problems exactly as the generator did before these conventions existed.
    """

    model_config = _FROZEN
    phrasings: bool = True
    r"""Ask each question in one of several textbook phrasings (``Find x.``, ``Solve for x.``, ``What is the
    measure of \angle ABC?``, ``Find the area of the parallelogram.``...); off: one phrasing per kind
    of question."""
    numbered_angles: float = Field(default=0.15, ge=0, le=1)
    r"""Share of the problems with a given or asked angle that name angles by number: the semantic
    clauses gain ``m \angle ABC = m \angle 1`` and the value or the question uses ``m \angle 1``."""
    equality_chains: float = Field(default=0.9, ge=0, le=1)
    r"""Probability that a stated equality and the value of one of its sides (``AB = AC``, ``AC = 6``), or
    two given values that are equal, are written as one chain (``AB = AC = 6``)."""
    drop_unused_lines: float = Field(default=0.8, ge=0, le=1)
    """Share of the problems whose structural clauses (and diagram) keep only the lines that a clause,
    the question or a step of the program uses."""


PLAIN_WRITING = PGPSWriting(phrasings=False, numbered_angles=0.0, equality_chains=0.0, drop_unused_lines=0.0)
"""PGPS problems written without the textbook conventions, as before they existed (preset ``pgps-v1``)."""


class PGPSDesign(BaseModel):
    """How many steps the PGPS-format problems (``--pgps``) take: the odds of each way a problem grows.

    A problem starts from one theorem of the figure and one of its quantities as the unknown. It grows
    forward (the unknown feeds a second theorem whose new quantity becomes the goal) and backward (a
    quantity a step needs is derived by one more theorem instead of given). The defaults are the odds every
    bundled corpus was made with; higher odds make more problems of two and three steps (those the
    well-posedness check lets through: a goal reachable in fewer steps is refused).
    """

    model_config = _FROZEN
    forward: float = Field(default=0.3, ge=0, le=1)
    """Probability that the first unknown feeds a second theorem, whose new quantity is asked."""
    backward: float = Field(default=0.3, ge=0, le=1)
    """Probability that a length, angle or arc a step needs is derived by one more theorem (when the
    figure has one) rather than given."""


class SynthConfig(BaseModel):
    """Everything the generator needs besides the record count and the seed."""

    model_config = _FROZEN
    name: str = "custom"
    """A label written to the manifest."""
    min_constructions: int = Field(default=2, ge=1)
    """Fewest rules applied after the start rule."""
    max_constructions: int = Field(default=4, ge=1)
    """Most rules applied after the start rule."""
    realise_attempts: int = Field(default=20, ge=1)
    """Whole-diagram attempts per realisation."""
    max_rounds: int = Field(default=12, ge=1)
    """Rounds of the deductive search (a bound that keeps generation deterministic, unlike a clock)."""
    max_points: int = Field(default=9, ge=3)
    """No rule is applied once the figure has this many points."""
    time_limit: float | None = Field(default=None, gt=0)
    """Seconds one figure (and each engine search on it) may take before the figure is dropped.

    ``None``: no clock. Rounds bound the search deterministically; the clock only drops the rare figure
    whose closure explodes (a hard alarm where the platform allows one, since the engine checks its own
    limit only between rules and algebraic stages), and only such figures can make a run depend on the
    machine's speed.
    """
    min_proof_steps: int = Field(default=2, ge=1)
    """Fewest derived (non-given, non-diagram) steps in a goal's solution."""
    goal_tries: int = Field(default=6, ge=1)
    """Goals tried per sampled figure before sampling a new one."""
    sample_tries: int = Field(default=40, ge=1)
    """Figures sampled per record before giving up."""
    calc_crosscheck: bool = False
    """Calculation records: also solve a Geometry3K-style version with ``geosynth.calc`` (and bridge it to PGPS)."""
    require_calc_agreement: bool = False
    """With the cross-check: emit only problems whose calc-solver answer agrees with the engine's."""
    calc_time_limit: float = Field(default=10.0, gt=0)
    """Seconds the calculation solver may take per problem in the cross-check."""
    aux_split: bool = False
    """Proving records: also split off the auxiliary constructions the proof uses (``split_auxiliary``)."""
    require_aux: bool = False
    """With the split: emit only problems whose proof uses auxiliary constructions."""
    aux_strict: bool = False
    """With the split: count a split only when the engine fails without the auxiliary constructions."""
    aux_time_limit: float = Field(default=10.0, gt=0)
    """Seconds of deduction for each of the split's two checks."""
    angles: tuple[int, ...] = (30, 40, 45, 60)
    """Angles (degrees) that parameterised rules draw from."""
    lengths: tuple[int, ...] = (2, 5, 10)
    """Lengths that the scale segment of a calculation problem draws from."""
    goals: dict[Task, dict[str, float]] = Field(
        default_factory=lambda: {
            "proving": dict.fromkeys(PROVING_GOALS, 1.0),
            "calculation": dict.fromkeys(CALCULATION_GOALS, 1.0),
        }
    )
    """Goal-type weights per task."""
    pgps_writing: PGPSWriting = PLAIN_WRITING
    """How the PGPS-format problems on the figures are written (``--pgps`` only). Every bundled preset
    sets it (``pgps``, ``default``, ``euclid-omni``: the textbook conventions, ``PGPSWriting()``;
    ``pgps-v1``: plain); a configuration that does not, such as the one in a dataset folder's manifest
    written before the setting existed, writes plainly, as every configuration did then."""
    pgps_design: PGPSDesign = PGPSDesign()
    """How many steps the PGPS-format problems take (``--pgps`` only); left out of the configuration's
    JSON when it is the default, so configurations and manifests written before it existed match."""
    start: tuple[RuleSpec, ...]
    """Rules that begin a figure."""
    rules: tuple[RuleSpec, ...]
    """Rules that extend it."""

    @model_validator(mode="after")
    def _check(self) -> SynthConfig:
        if self.min_constructions > self.max_constructions:
            raise ValueError(
                f"min_constructions ({self.min_constructions}) exceeds max_constructions ({self.max_constructions})"
            )
        allowed = {"proving": PROVING_GOALS, "calculation": CALCULATION_GOALS}
        for task, weights in self.goals.items():
            bad = [g for g in weights if g not in allowed[task]]
            if bad:
                raise ValueError(f"goals.{task} has unknown goal types {bad} (known: {list(allowed[task])})")
        for rule in self.start:
            if rule.new_slots or rule.existing_slots:
                raise ValueError(f"start rule {rule.clause!r} must name its points (no point placeholders)")
            if "calculation" in rule.tasks and not rule.scale:
                raise ValueError(f"start rule {rule.clause!r} serves calculation but has no scale segment")
        for rule in self.rules:
            if not rule.new_slots:
                raise ValueError(f"rule {rule.clause!r} creates no point (use {{x}})")
        return self

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if self.pgps_design == PGPSDesign():
            data.pop("pgps_design", None)
        return data

    def start_rules(self, task: Task) -> tuple[RuleSpec, ...]:
        """The start rules available for a task."""
        return tuple(r for r in self.start if task in r.tasks)

    def extend_rules(self, task: Task) -> tuple[RuleSpec, ...]:
        """The extension rules available for a task."""
        return tuple(r for r in self.rules if task in r.tasks)


def config_from_mapping(data: Any, source: str = "<mapping>") -> SynthConfig:
    """Validate a configuration given as a mapping (parsed YAML).

    Raises:
        SynthConfigError: The mapping is not a valid configuration (the message names the field).
    """
    if not isinstance(data, dict):
        raise SynthConfigError(f"{source}: a synthesis config must be a mapping, got {type(data).__name__}")
    try:
        return SynthConfig.model_validate(_lists_to_tuples(data), strict=False)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise SynthConfigError(f"{source}: {where}: {first['msg']}") from None


def _lists_to_tuples(data: Any) -> Any:
    if isinstance(data, list):
        return tuple(_lists_to_tuples(x) for x in data)
    if isinstance(data, dict):
        return {k: _lists_to_tuples(v) for k, v in data.items()}
    return data


def load_config(path: Path | str | None = None) -> SynthConfig:
    """Load a configuration: a YAML file, a bundled preset name (``default``), or the default.

    Raises:
        SynthConfigError: The file is missing, not YAML, or not a valid configuration.
    """
    if path is None or (isinstance(path, str) and not path.endswith((".yaml", ".yml"))):
        name = "default" if path is None else path
        bundled = resources.files("geosynth.synth").joinpath("configs", f"{name}.yaml")
        if not bundled.is_file():
            raise SynthConfigError(
                f"no bundled synthesis config named {name!r} (try 'default' or a YAML path)"
            )
        text, source = bundled.read_text(encoding="utf-8"), f"configs/{name}.yaml"
    else:
        file = Path(path)
        if not file.is_file():
            raise SynthConfigError(f"synthesis config {file} does not exist")
        text, source = file.read_text(encoding="utf-8"), str(file)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise SynthConfigError(f"{source} is not valid YAML: {err}") from None
    return config_from_mapping(data, source)
