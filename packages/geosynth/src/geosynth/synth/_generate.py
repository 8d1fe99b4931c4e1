"""The generator: records from a configuration, a count and a seed.

Record ``i`` of a run uses only its own seed (derived from the run seed and ``i``), so records can be
made in any order, by any number of processes or Ray tasks, and the output is the same. For each record,
figures are sampled until one yields a problem the engine re-solves from its emitted statement (bounded
by ``config.sample_tries``).
"""

from __future__ import annotations

import random
import signal
import threading
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from geosynth.engine import Diagram, Problem, ProofStep, format_proof, parse_problem
from geosynth.synth._aux import split_auxiliary
from geosynth.synth._bridge import to_pgps
from geosynth.synth._calculation import CalculationProblem, check_calculation, make_calculation
from geosynth.synth._choices import boxed, multiple_choice
from geosynth.synth._config import SynthConfig, Task
from geosynth.synth._proving import ProvingProblem, check_proving, make_proving
from geosynth.synth._records import PointRecord, SynthRecord
from geosynth.synth._sample import Figure, sample_figure
from geosynth.synth._text import calc_conclusion, problem_text, proof_text
from geosynth.synth.errors import GenerationFailed, SynthError

_TASK_CODE = {"proving": 1, "calculation": 2}


def record_seed(seed: int, index: int, task: Task) -> int:
    """The seed of record ``index`` of a run (a hash of the run seed, the index and the task)."""
    state = np.random.SeedSequence([seed, index, _TASK_CODE[task]]).generate_state(1, dtype=np.uint32)
    return int(state[0])


class _Overtime(Exception):
    """Raised by the alarm when one figure's work passes the clock."""


@contextmanager
def _deadline(seconds: float | None) -> Generator[None]:
    """A hard wall-clock limit on the block (SIGALRM; only where the platform and thread allow it).

    The engine checks its own ``time_limit`` only between rules and algebraic stages (and interrupts a
    long join), so one rule's rows or one algebraic stage can still run away on an unlucky figure; the
    alarm interrupts it. Only figures that reach the limit are affected.
    """
    usable = (
        seconds is not None
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable or seconds is None:
        yield
        return

    rang = False

    def _ring(signum: int, frame: object) -> None:
        nonlocal rang
        rang = True
        raise _Overtime

    previous = signal.signal(signal.SIGALRM, _ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except _Overtime:
        raise
    except Exception as exc:
        # The alarm rang inside a callback that swallowed it (SQLite reports a progress handler's
        # exception only as "interrupted"): whatever escaped is the alarm's doing.
        if rang:
            raise _Overtime from exc
        raise
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _points(diagram: Diagram) -> tuple[PointRecord, ...]:
    return tuple(PointRecord(name=n, x=x, y=y) for n, (x, y) in diagram.points.items())


def _constructions(problem: Problem) -> tuple[str, ...]:
    return tuple("+".join(c.name for c in clause.constructions) for clause in problem.clauses)


def _given_sentence(givens: tuple[str, ...]) -> str:
    """The given quantities as one sentence: ``length a b = 6`` becomes ``Given AB = 6.``."""
    parts: list[str] = []
    for given in givens:
        left, right = given.split(" = ")
        kind, *names = left.split()
        label = "".join(n.upper() for n in names)
        parts.append(f"∠{label} = {right}°" if kind == "angle" else f"{label} = {right}")
    return f"Given {' and '.join(parts)}." if parts else ""


def _with_givens(question: str, givens: tuple[str, ...]) -> str:
    """The question with the given quantities stated just before its last sentence."""
    sentence = _given_sentence(givens)
    if not sentence:
        return question
    cut = question.rstrip().rfind(". ")
    if cut < 0:
        return f"{sentence} {question}"
    return f"{question[: cut + 2]}{sentence} {question[cut + 2 :]}"


def _texts(
    problem: Problem,
    goal: str,
    steps: tuple[ProofStep, ...],
    rng: random.Random,
    givens: tuple[str, ...] = (),
) -> dict[str, Any]:
    return {
        "question": _with_givens(problem_text(problem, goal=goal, rng=rng), givens),
        "solution_text": proof_text(steps),
    }


def _aux_split(made: ProvingProblem, base: dict[str, Any], config: SynthConfig) -> dict[str, Any] | None:
    """Auxiliary-split fields, or ``None`` when the record must be dropped (no split, split required)."""
    if not config.aux_split:
        return {}
    example = split_auxiliary(
        parse_problem(made.text),
        made.steps,
        seed=base["seed"],
        time_limit=config.aux_time_limit,
        strict=config.aux_strict,
    )
    if example is None:
        return None if config.require_aux else {}
    return {
        "aux_problem": example.problem,
        "aux_clauses": tuple(example.auxiliary),
        "aux_engine_alone": example.engine_alone,
    }


def _proving_record(
    made: ProvingProblem, base: dict[str, Any], rng: random.Random, split: dict[str, Any]
) -> SynthRecord:
    problem = parse_problem(made.text)
    lines = tuple(format_proof(made.steps).splitlines())
    return SynthRecord.model_validate(
        {
            **base,
            "problem": made.text,
            "givens": (),
            "goal": made.goal,
            "goal_type": made.goal_type,
            "constructions": _constructions(problem),
            "n_clauses": len(problem.clauses),
            "points": _points(made.diagram),
            "answer": None,
            "answer_value": None,
            "solution": lines,
            "n_steps": len(lines),
            **_texts(problem, made.goal, made.steps, rng),
            **split,
        }
    )


def _crosscheck(made: CalculationProblem, base: dict[str, Any], config: SynthConfig) -> dict[str, Any] | None:
    """Cross-check fields, or ``None`` when the record must be dropped (disagreement, agreement required)."""
    if not config.calc_crosscheck:
        return {}
    from geosynth.synth._to_calc import calc_crosscheck

    problem = parse_problem(made.text)
    answer, calc_problem, solution = calc_crosscheck(
        base["id"], problem, made.diagram, made.givens, made.goal, config.calc_time_limit
    )
    agrees = answer is not None and abs(answer - made.answer_value) <= 1e-6 * max(1.0, abs(made.answer_value))
    if config.require_calc_agreement and not agrees:
        return None
    out: dict[str, Any] = {"calc_answer": answer}
    if agrees:
        program = to_pgps(calc_problem, solution)
        if program is not None:
            out.update(
                pgps_program=program.program,
                pgps_numbers=tuple(program.numbers),
                pgps_clauses=tuple(program.clauses),
            )
    return out


def _closing(made: CalculationProblem, conclusion: str) -> str:
    """The last step of a calculation's text: how the value follows (the final line's reason), then the answer."""
    reason = made.final.rsplit("[", 1)[-1].split("]", 1)[0] if "[" in made.final else ""
    rule, _, refs = reason.partition(" from ")
    if not rule:
        return conclusion
    source = f"{rule}; from steps {refs}" if refs else rule
    return f"Step {len(made.steps) + 1}: the value follows ({source}).\n{conclusion}"


def _calculation_record(
    made: CalculationProblem, base: dict[str, Any], rng: random.Random, checked: dict[str, Any]
) -> SynthRecord:
    problem = parse_problem(made.text)
    lines = (*format_proof(made.steps).splitlines(), f"{len(made.steps) + 1}. {made.final}")
    extra = {**_texts(problem, made.goal, made.steps, rng, made.givens), **checked}
    kind = made.goal_type  # a variable bound by ``x + k = angle`` is not itself an angle (it may pass 180)
    if made.steps:
        extra["solution_text"] = proof_text(
            made.steps,
            rng=None,
            conclusion=_closing(made, calc_conclusion(made.goal, made.answer_value, kind)),
        )
    try:
        options, index = multiple_choice(made.answer_value, kind=kind, rng=rng)
    except SynthError:  # no plausible options for this value: the record keeps its free-form answer
        pass
    else:
        extra.update(choices=tuple(options), choice_index=index)
    extra["boxed"] = boxed(made.answer_value, kind)
    return SynthRecord.model_validate(
        {
            **base,
            "problem": made.text,
            "givens": made.givens,
            "goal": made.goal,
            "goal_type": made.goal_type,
            "constructions": _constructions(problem),
            "n_clauses": len(problem.clauses),
            "points": _points(made.diagram),
            "answer": made.answer,
            "answer_value": made.answer_value,
            "solution": lines,
            "n_steps": len(lines),
            **extra,
        }
    )


def generate_one(config: SynthConfig, task: Task, seed: int, index: int) -> SynthRecord:
    """Record ``index`` of the run with seed ``seed``.

    Raises:
        GenerationFailed: No sampled figure gave a checked problem within ``config.sample_tries``.
    """
    return generate_with_figure(config, task, seed, index)[0]


def generate_with_figure(
    config: SynthConfig, task: Task, seed: int, index: int
) -> tuple[SynthRecord, Figure]:
    """Record ``index`` of the run and the whole sampled figure it was cut from (before the cut).

    Raises:
        GenerationFailed: No sampled figure gave a checked problem within ``config.sample_tries``.
    """
    own = record_seed(seed, index, task)
    base = {"id": f"{task}-{seed}-{index:07d}", "task": task, "index": index, "seed": own}
    for attempt in range(config.sample_tries):
        try:
            with _deadline(config.time_limit):
                made = _attempt(config, task, own, attempt, base)
        except _Overtime:
            continue  # the figure's search ran away within one engine round: drop the figure
        if made is not None:
            return made
    raise GenerationFailed(
        f"record {index} (seed {seed}, task {task}): no checked problem after {config.sample_tries} figures"
    )


def _attempt(
    config: SynthConfig, task: Task, own: int, attempt: int, base: dict[str, Any]
) -> tuple[SynthRecord, Figure] | None:
    """One sampled figure: the record it yields and the figure, or ``None``."""
    rng = random.Random(own * 1000 + attempt)
    nprng = np.random.default_rng([own, attempt])
    figure = sample_figure(config, task, rng, nprng)
    if figure is None:
        return None
    if task == "proving":
        proving = make_proving(figure, config, rng)
        split = None if proving is None else _aux_split(proving, base, config)
        if proving is not None and split is not None:
            return _proving_record(proving, base, rng, split), figure
        return None
    calculation = make_calculation(figure, config, rng)
    checked = None if calculation is None else _crosscheck(calculation, base, config)
    if calculation is not None and checked is not None:
        return _calculation_record(calculation, base, rng, checked), figure
    return None


def generate(config: SynthConfig, n: int, seed: int, task: Task = "proving") -> Iterator[SynthRecord]:
    """Records ``0..n-1`` of a run, in order (each re-solved and numerically checked before it is yielded).

    Args:
        config: The generator configuration.
        n: How many records.
        seed: The run's seed.
        task: ``proving`` or ``calculation``.

    Raises:
        GenerationFailed: A record index exhausted its tries.
        ValueError: ``n`` is negative.
    """
    if n < 0:
        raise ValueError(f"n must be non-negative, got {n}")
    for index in range(n):
        yield generate_one(config, task, seed, index)


def check_record(record: SynthRecord, config: SynthConfig) -> bool:
    """Re-solve a record from its statement on its diagram and compare with what it claims.

    Proving records: the engine proves the goal again and the goal holds numerically. Calculation
    records: the engine determines the same exact answer, which agrees with the diagram's measurement.
    """
    diagram = Diagram(points={p.name: (p.x, p.y) for p in record.points}, attempts=1)
    if record.task == "proving":
        steps = check_proving(record.problem, diagram, config)
        return steps is not None and not record.answer
    checked = check_calculation(record.problem, record.givens, record.goal, diagram, config)
    return checked is not None and checked[0] == record.answer
