"""Random construction sequences mined for auxiliary-construction examples.

A sequence starts from a base figure (a triangle, a quadrangle...) and adds constructions drawn from
:data:`RANDOM_CONSTRUCTIONS` over random existing points, each placed on the growing diagram (a draw
that does not realise is redrawn). The engine runs to closure on the diagram; derived facts become
candidate goals, and :func:`~geosynth.synth._aux.aux_examples_from` keeps those whose proof needs
constructions the goal does not.
"""

from __future__ import annotations

import functools
import os
import random
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from geosynth.engine import (
    Diagram,
    Problem,
    atomic_write,
    deduce,
    default_definitions,
    extend_diagram,
    parse_clause,
    parse_problem,
    realise,
    worker_context,
)
from geosynth.errors import GeoSynthError
from geosynth.synth._aux import AuxExample, aux_examples_from, new_point_name

BASES: tuple[str, ...] = (
    "a b c = triangle a b c",
    "a b c = triangle a b c",
    "a b c = iso_triangle a b c",
    "a b c = r_triangle a b c",
    "a b c d = quadrangle a b c d",
    "a b c d = trapezoid a b c d",
)
"""Base figures (drawn uniformly; the plain triangle twice as often)."""

RANDOM_CONSTRUCTIONS: dict[str, int] = {
    "midpoint": 2,
    "mirror": 2,
    "on_circle": 2,
    "on_line": 2,
    "on_bline": 2,
    "on_dia": 2,
    "foot": 3,
    "circle": 3,
    "orthocenter": 3,
    "incenter": 3,
    "on_tline": 3,
    "on_pline": 3,
    "parallelogram": 3,
    "angle_bisector": 3,
    "intersection_lc": 3,
    "intersection_ll": 4,
}
"""One-point constructions and how many existing points each takes (in short form)."""


class AuxGenConfig(BaseModel):
    """Settings of :func:`generate_aux_examples`."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)
    min_constructions: Annotated[int, Field(ge=1)] = 5
    """Fewest constructions added to the base figure."""
    max_constructions: Annotated[int, Field(ge=1)] = 8
    """Most constructions added to the base figure."""
    closure_time_limit: Annotated[float, Field(gt=0)] = 10.0
    """Seconds of deduction to closure per random sequence."""
    check_time_limit: Annotated[float, Field(gt=0)] = 5.0
    """Seconds of deduction per check of a candidate example."""
    max_goals: Annotated[int, Field(ge=1)] = 4
    """Candidate goals checked per sequence."""
    max_sequences: Annotated[int, Field(ge=1)] | None = None
    """Random sequences tried before stopping (``None``: 50 per requested example)."""
    strict: bool = False
    """Keep only examples the engine cannot prove without their auxiliary clauses (far rarer)."""

    @model_validator(mode="after")
    def _check(self) -> AuxGenConfig:
        if self.min_constructions > self.max_constructions:
            raise ValueError(
                f"min_constructions={self.min_constructions} exceeds max_constructions={self.max_constructions}"
            )
        return self


def _add_random(
    problem: Problem, diagram: Diagram, rng: random.Random, np_rng: np.random.Generator, tries: int = 12
) -> tuple[Problem, Diagram] | None:
    known = set(problem.points)
    defs = default_definitions()
    names = list(RANDOM_CONSTRUCTIONS)
    for _ in range(tries):
        name = rng.choice(names)
        arity = RANDOM_CONSTRUCTIONS[name]
        if arity > len(known):
            continue
        args = rng.sample(sorted(known), arity)
        new = new_point_name(problem)
        try:
            clause = parse_clause(f"{new} = {name} {' '.join(args)}", known, defs)
            extended = extend_diagram(diagram, clause, np_rng, attempts=5)
        except GeoSynthError:
            continue
        grown = Problem.model_validate(
            {"name": problem.name, "clauses": (*problem.clauses, clause), "goal": None}
        )
        return grown, extended
    return None


def random_sequence(rng: random.Random, config: AuxGenConfig, name: str = "") -> tuple[Problem, Diagram]:
    """A random construction sequence (no goal) and a diagram of it.

    Args:
        rng: Random generator (all choices and the numeric placement derive from it).
        config: Generation settings (how many constructions).
        name: The problem's name.

    Returns:
        The problem and its diagram; fewer constructions than drawn when draws keep failing.
    """
    np_rng = np.random.default_rng(rng.getrandbits(63))
    problem = parse_problem(rng.choice(BASES), name)
    diagram = realise(problem, np_rng)
    for _ in range(rng.randint(config.min_constructions, config.max_constructions)):
        grown = _add_random(problem, diagram, rng, np_rng)
        if grown is None:
            break
        problem, diagram = grown
    return problem, diagram


def mine_sequence(index: int, seed: int, config: AuxGenConfig) -> list[AuxExample]:
    """The examples of one random sequence (``aux-<seed>-<index>``): a pure function of its arguments.

    Deterministic up to the engine's time limits, which a loaded machine may hit sooner.
    """
    rng = random.Random(f"aux:{seed}:{index}")
    try:
        problem, diagram = random_sequence(rng, config, name=f"aux-{seed}-{index}")
    except GeoSynthError:
        return []
    closure = deduce(problem, diagram, time_limit=config.closure_time_limit)
    return aux_examples_from(
        problem,
        closure,
        rng=rng,
        max_goals=config.max_goals,
        seed=index,
        time_limit=config.check_time_limit,
        strict=config.strict,
    )


def _budget(n: int, config: AuxGenConfig) -> int:
    return config.max_sequences if config.max_sequences is not None else 50 * max(1, n)


def generate_aux_examples(n: int, seed: int = 0, config: AuxGenConfig | None = None) -> Iterator[AuxExample]:
    """Yield up to ``n`` auxiliary-construction examples mined from random construction sequences.

    Deterministic for a seed (up to the engine's time limits, which a loaded machine may hit sooner).

    Args:
        n: Examples wanted.
        seed: Seed of every random choice.
        config: Generation settings; the defaults when ``None``.

    Yields:
        Confirmed examples, until ``n`` are found or ``config.max_sequences`` sequences are spent.
    """
    cfg = AuxGenConfig() if config is None else config
    found = 0
    for index in range(_budget(n, cfg)):
        if found >= n:
            return
        for example in mine_sequence(index, seed, cfg)[: n - found]:
            found += 1
            yield example


class _MiningState(BaseModel):
    """What an interrupted :func:`write_aux_examples` run had done (``OUT.partial.json``)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)
    seed: int
    config: AuxGenConfig
    next_index: int
    found: int


def write_aux_examples(
    out: Path,
    n: int,
    seed: int = 0,
    config: AuxGenConfig | None = None,
    *,
    jobs: int = 1,
    progress: Callable[[int, int, int], None] | None = None,
) -> list[AuxExample]:
    """Mine examples into a JSONL file, resumably: the same result as :func:`generate_aux_examples`.

    Examples go to ``OUT.partial`` as they are found, and the next sequence index to
    ``OUT.partial.json`` after each sequence; a rerun with the same seed and settings continues from
    there (other settings are refused). The finished file replaces ``out`` in one rename. With
    ``jobs > 1`` sequences are mined in worker processes and taken in index order, so the file is
    the one a single process writes.

    Args:
        out: The JSONL file to write (one :class:`AuxExample` per line).
        n: Examples wanted.
        seed: Seed of every random choice.
        config: Generation settings; the defaults when ``None``.
        jobs: Worker processes.
        progress: Called after each sequence with (sequences done, sequence budget, examples found).

    Returns:
        Every example of the file, in order.

    Raises:
        GeoSynthError: A leftover partial run with other settings, or an unreadable partial file.
        ValueError: ``jobs`` is below 1.
    """
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    cfg = AuxGenConfig() if config is None else config
    partial, state_path = out.with_name(out.name + ".partial"), out.with_name(out.name + ".partial.json")
    examples: list[AuxExample] = []
    start = 0
    if state_path.exists() and partial.exists():
        try:
            state = _MiningState.model_validate_json(state_path.read_text(encoding="utf-8"))
            lines = partial.read_text(encoding="utf-8").splitlines()
            if len(lines) < state.found:
                raise ValueError(f"it holds {len(lines)} examples, its state says {state.found}")
            examples = [AuxExample.model_validate_json(line) for line in lines[: state.found]]
        except ValueError as err:
            raise GeoSynthError(f"cannot resume from {partial}: {err}; delete it to start over") from err
        if state.seed != seed or state.config != cfg:
            raise GeoSynthError(
                f"{partial} is a run with other settings (seed {state.seed}, {state.config}); "
                "delete it and its .json to start over"
            )
        start = state.next_index
    budget = _budget(n, cfg)
    with (
        partial.open("w", encoding="utf-8") as sink,  # rewritten: drops lines past the recorded state
        _mined(range(start, budget), seed, cfg, jobs) as results,
    ):
        sink.writelines(f"{e.model_dump_json()}\n" for e in examples)
        sink.flush()
        for index, mined in results:
            if len(examples) >= n:
                break
            found = mined[: n - len(examples)]
            sink.writelines(f"{e.model_dump_json()}\n" for e in found)
            sink.flush()
            os.fsync(sink.fileno())
            examples.extend(found)
            state = _MiningState(seed=seed, config=cfg, next_index=index + 1, found=len(examples))
            atomic_write(state_path, state.model_dump_json().encode("utf-8"))
            if progress is not None:
                progress(index + 1, budget, len(examples))
    os.replace(partial, out)
    state_path.unlink(missing_ok=True)
    return examples


@contextmanager
def _mined(
    indices: range, seed: int, config: AuxGenConfig, jobs: int
) -> Generator[Iterator[tuple[int, list[AuxExample]]]]:
    """(index, examples) in index order, mined here or by ``jobs`` worker processes (stopped on exit)."""
    if jobs == 1 or len(indices) <= 1:
        yield ((i, mine_sequence(i, seed, config)) for i in indices)
        return
    with worker_context().Pool(jobs) as pool:  # terminated on exit
        work = functools.partial(mine_sequence, seed=seed, config=config)
        yield zip(indices, pool.imap(work, indices), strict=False)
