"""The record model of a synthesized problem (one JSON line of a dataset shard)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from geosynth.synth._config import Task

_FROZEN = ConfigDict(frozen=True, extra="forbid", strict=True)


class PointRecord(BaseModel):
    """One point of the diagram (a list of these keeps the schema fixed for Arrow/``datasets``)."""

    model_config = _FROZEN
    name: str
    """The point's name."""
    x: float
    """Its x coordinate."""
    y: float
    """Its y coordinate."""


class SynthRecord(BaseModel):
    """A synthesized problem with its engine solution, checked before it was emitted."""

    model_config = _FROZEN
    id: str
    """``{task}-{seed}-{index:07d}``: unique within a dataset."""
    task: Task
    """``proving`` or ``calculation``."""
    index: int
    """The record's position in the run (its seed derives from the run seed and this)."""
    seed: int
    """The record's own seed (every random choice of this record came from it)."""
    problem: str
    """The formal problem line; proving problems end with ``? goal``."""
    givens: tuple[str, ...]
    """Calculation problems: given quantities (``length a b = 6``, ``angle a b c = x + 15``)."""
    goal: str
    """The formal goal: a relation (``para d e b c``) or a quantity (``angle a b c``, ``var x``)."""
    goal_type: str
    """``para``, ``cong``... for proving; ``angle``, ``length``, ``area``, ``var`` for calculation."""
    constructions: tuple[str, ...]
    """The construction names of every clause, in order."""
    n_clauses: int
    """How many clauses the (minimal) problem has."""
    points: tuple[PointRecord, ...]
    """The diagram."""
    answer: str | None
    """Calculation problems: the exact answer (``3*sqrt(2)``); ``None`` for proving problems."""
    answer_value: float | None
    """Its float value."""
    solution: tuple[str, ...]
    """The engine's solution, one numbered step per line (proof steps; then the value for calculations)."""
    n_steps: int
    """Steps of the solution."""
    question: str | None = None
    """The natural-language problem (when the text module is available)."""
    solution_text: str | None = None
    """The natural-language solution (when the text module is available)."""
    choices: tuple[str, ...] | None = None
    """Calculation problems: multiple-choice options (when the choices module is available)."""
    choice_index: int | None = None
    """The index of the correct option."""
    boxed: str | None = None
    """The final answer as ``\\boxed{...}``."""
    calc_answer: float | None = None
    """Cross-check: the calculation solver's answer to the Geometry3K-style version (``None``: not run or not found)."""
    pgps_program: str | None = None
    """Cross-check: an equivalent PGPS program verified by the geodsl executor, when the bridge finds one."""
    pgps_numbers: tuple[str, ...] | None = None
    """The program's N values."""
    pgps_clauses: tuple[str, ...] | None = None
    """The program's semantic clauses."""
    aux_problem: str | None = None
    """Auxiliary split: the problem without the auxiliary clauses its proof uses."""
    aux_clauses: tuple[str, ...] | None = None
    """Auxiliary split: the removed clauses; added back, the engine proves the goal."""
    aux_engine_alone: bool | None = None
    """Auxiliary split: whether the engine also proves ``aux_problem`` without the clauses."""
    image: str | None = None
    """The diagram image, relative to the dataset folder."""
