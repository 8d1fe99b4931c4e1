"""Solving problems end to end: realise a diagram, deduce, trace the goal back to the givens.

:func:`solve` runs one problem in-process; :func:`solve_all` runs many, each in its own worker process
with a hard timeout, and yields results in input order. The proof of a solved problem is traced by
:func:`geosynth.engine.proof_steps` (``proofs/proof.py``): the derivation of the goal in post-order.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator, Sequence
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict

from geosynth.engine.deduction.deductive import Deduction, compile_default_rules, search
from geosynth.engine.diagram.realise import realise
from geosynth.engine.language.problem import Problem
from geosynth.engine.proofs.proof import proof_data, proof_steps
from geosynth.engine.proofs.replay import Proof
from geosynth.engine.proofs.support import Method
from geosynth.engine.workers import worker_context
from geosynth.errors import GeoSynthError

__all__ = ("SolveResult", "race_isolated", "run_isolated", "solve", "solve_all")


class SolveResult(BaseModel):
    """The outcome of solving one problem (one JSON line of ``geo engine solve``)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)
    name: str
    """The problem's name."""
    solved: bool
    """Whether the goal was derived."""
    answer: float | None = None
    """The numeric answer of a calculation goal; ``None`` for proving problems."""
    seconds: float
    """Wall time spent on the problem (realisation and deduction)."""
    steps: int
    """Steps of the proof of the goal (0 when unsolved)."""
    timed_out: bool = False
    """Whether the worker was stopped at the time limit."""
    error: str | None = None
    """A one-line error (a construction that cannot be realised...), or ``None``."""
    proof: Proof | None = None
    """The proof as data (problem line and steps) when solved, for ``--proofs`` files and replay."""
    aux: tuple[str, ...] | None = None
    """Auxiliary clauses an auxiliary search added (full form; empty when the problem needed none or none
    was found); ``None`` when no search ran."""


def solve(
    problem: Problem,
    seed: int = 0,
    time_limit: float | None = None,
    attempts: int = 100,
    support: Method | None = "l0",
) -> tuple[SolveResult, Deduction]:
    """Realise one diagram (goal checked, seeded), run the engine on it and trace the proof.

    Args:
        problem: The problem.
        seed: Seed of the realiser.
        time_limit: Seconds of deduction after which the search stops (checked between rules; see
            :func:`search`).
        attempts: Realisation attempts.
        support: How chased steps' premises are minimised (``l0``, ``l1`` or ``None``: not at all).

    Raises:
        ConstructionFailed: No diagram of the problem could be realised.
    """
    start = time.perf_counter()
    diagram = realise(problem, np.random.default_rng(seed), attempts, check_goal=problem.goal is not None)
    deduction, store = search(problem, diagram, time_limit=time_limit)
    steps = proof_steps(problem, deduction, support, store)
    result = SolveResult(
        name=problem.name,
        solved=deduction.proved,
        seconds=time.perf_counter() - start,
        steps=len(steps),
        proof=proof_data(problem, steps) if steps else None,
        timed_out=deduction.timed_out and not deduction.proved,
    )
    return result, deduction


def _worker(problem: Problem, time_limit: float, conn: Connection, seed: int = 0) -> None:
    try:
        result, _ = solve(problem, seed, time_limit)
    except GeoSynthError as err:
        result = SolveResult(name=problem.name, solved=False, seconds=0.0, steps=0, error=str(err))
    conn.send(result.model_dump_json())
    conn.close()


T = TypeVar("T")
Work = Callable[[T, float, Connection], None]
"""Runs in a child: solves one item within the time limit and sends one ``SolveResult`` JSON."""


def run_isolated(
    items: Sequence[T], names: Sequence[str], work: Work[T], timeout: float, jobs: int
) -> Iterator[SolveResult]:
    """Run ``work`` on each item in its own worker process, killed at ``timeout`` seconds.

    The work gets 90 % of the limit as its own soft limit. A worker that dies, exits without a result
    or passes the limit gives an error or ``timed_out`` result named ``names[i]``; results come in input
    order. Shared by the proving engine and the calculation solver (:mod:`geosynth.calc`).
    """
    context = worker_context()
    running: dict[int, tuple[BaseProcess, Connection, float]] = {}
    done: dict[int, SolveResult] = {}
    queue = list(range(len(items)))[::-1]
    emitted = 0
    while emitted < len(items):
        while queue and len(running) < max(1, jobs):
            index = queue.pop()
            receive, send = context.Pipe(duplex=False)
            process = context.Process(target=work, args=(items[index], timeout * 0.9, send))
            process.start()
            send.close()
            running[index] = (process, receive, time.perf_counter())
        for index, (process, receive, began) in list(running.items()):
            result = _poll(names[index], process, receive, began, timeout)
            if result is None:
                continue
            process.join()
            receive.close()
            del running[index]
            done[index] = result
        while emitted in done:
            yield done.pop(emitted)
            emitted += 1


def race_isolated(items: Sequence[T], name: str, work: Work[T], timeout: float) -> SolveResult:
    """Run ``work`` on every item at once, each in its own process; the first solved result wins.

    The items are parts of one problem's work (the shards of a search). When one sends a solved result
    the others are killed and that result is returned; when none does, the result of the last to end
    (a failure or timeout result as in :func:`run_isolated`, named ``name``), with ``timed_out`` set when
    any part was stopped at ``timeout``. Each part gets 90 % of the limit as its own soft limit.
    """
    context = worker_context()
    running: list[tuple[BaseProcess, Connection, float]] = []
    for item in items:
        receive, send = context.Pipe(duplex=False)
        process = context.Process(target=work, args=(item, timeout * 0.9, send))
        process.start()
        send.close()
        running.append((process, receive, time.perf_counter()))
    last: SolveResult | None = None
    timed_out = False
    try:
        while running:
            for entry in list(running):
                process, receive, began = entry
                result = _poll(name, process, receive, began, timeout)
                if result is None:
                    continue
                process.join()
                receive.close()
                running.remove(entry)
                if result.solved:
                    return result
                timed_out = timed_out or result.timed_out
                last = result
    finally:
        for process, receive, _ in running:
            process.kill()
            process.join()
            receive.close()
    if last is None:
        return SolveResult(name=name, solved=False, seconds=0.0, steps=0, error="nothing to run")
    return last.model_copy(update={"timed_out": timed_out}) if timed_out else last


def _poll(
    name: str, process: BaseProcess, receive: Connection, began: float, timeout: float
) -> SolveResult | None:
    """The worker's result, a failure, a timeout, or ``None`` while it still runs."""
    elapsed = time.perf_counter() - began
    if receive.poll(0.02):
        try:
            return SolveResult.model_validate_json(receive.recv())
        except EOFError:
            return SolveResult(name=name, solved=False, seconds=elapsed, steps=0, error="worker died")
    if not process.is_alive() and not receive.poll(0):
        error = f"worker exited with {process.exitcode}"
        return SolveResult(name=name, solved=False, seconds=elapsed, steps=0, error=error)
    if elapsed > timeout:
        process.kill()
        return SolveResult(name=name, solved=False, seconds=elapsed, steps=0, timed_out=True)
    return None


def solve_all(
    problems: Sequence[Problem], timeout: float = 60.0, jobs: int = 1, seed: int = 0
) -> Iterator[SolveResult]:
    """Solve each problem in a worker process killed at ``timeout`` seconds; results in input order."""
    work: Work[Problem] = functools.partial(_worker, seed=seed)
    compile_default_rules()  # once here, not once per forked worker
    return run_isolated(problems, [p.name for p in problems], work, timeout, jobs)
