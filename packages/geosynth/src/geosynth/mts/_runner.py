"""Where scripts run: a local warm sandbox pool by default, Ray actors each holding one with ``--ray``.

With ``--ray`` the LLM requests of the CoT stages also run as Ray tasks (:class:`RaySampler`).
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from geodsl.sandbox import Sandbox, SandboxLimits, SandboxResult
from geosynth import engine
from geosynth.mts._config import LLMConfig
from geosynth.mts._llm import build_sampler
from geosynth.mts.errors import MTSConfigError, MTSLLMError, MTSWorkerError

if TYPE_CHECKING:
    from geotts import Completion, GenerationRequest

__all__ = ("RAY_START_SECONDS", "LocalRunner", "RayRunner", "RaySampler", "ScriptRunner", "make_runner")


class ScriptRunner(Protocol):
    """Runs untrusted scripts; one result per script, in order; a failing script never raises."""

    def run(self, scripts: Sequence[str]) -> list[SandboxResult]:
        """Run the scripts."""
        ...

    def close(self) -> None:
        """Release the workers."""
        ...


_TRIG = re.compile(r"\b(?:sin|cos|tan)\(")
_EQUATION = re.compile(r"\s*\w+ = Eq\(")  # eq3 = Eq(lhs, rhs): one per program step


def _expected_cost(script: str) -> int:
    """A rough cost rank: scripts with more equations and with trigonometry take longest to solve.

    Running the costly ones first keeps every worker busy until the batch ends (longest job first),
    instead of leaving one worker on a slow script after the others ran out of work.
    """
    equations = [line for line in script.splitlines() if _EQUATION.match(line)]
    return len(equations) + 2 * sum(bool(_TRIG.search(line)) for line in equations)


class LocalRunner:
    """A :class:`geodsl.sandbox.Sandbox` pool on this machine, started on first use."""

    def __init__(self, jobs: int, limits: SandboxLimits) -> None:
        self._sandbox: Sandbox | None = None
        self.jobs = jobs
        self.limits = limits
        self.scripts_run = 0

    def run(self, scripts: Sequence[str]) -> list[SandboxResult]:
        """Run the scripts on the local pool (started lazily, so a fully resumed run starts none)."""
        if not scripts:
            return []
        if self._sandbox is None:
            self._sandbox = Sandbox(workers=self.jobs, limits=self.limits)
            self._sandbox.start()
        self.scripts_run += len(scripts)
        order = sorted(range(len(scripts)), key=lambda i: -_expected_cost(scripts[i]))
        results = self._sandbox.run([scripts[i] for i in order])
        back: list[SandboxResult | None] = [None] * len(scripts)
        for i, result in zip(order, results, strict=True):
            back[i] = result
        return [r for r in back if r is not None]

    def close(self) -> None:
        """Stop the pool's workers."""
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None


#: Seconds Ray may take to start and to bring up its actors before the run gives up.
RAY_START_SECONDS = 120.0


def _import_ray() -> Any:
    """Ray, for ``use_ray`` (see :func:`geosynth.engine.import_ray`).

    Raises:
        MTSConfigError: Ray is not installed.
    """
    try:
        return engine.import_ray('--ray needs Ray: pip install "ray>=2.9"')
    except ImportError as exc:
        raise MTSConfigError(str(exc)) from exc


class RayRunner:
    """Scripts spread over Ray actors, each keeping a warm one-worker sandbox (a cluster-wide pool).

    Without a running Ray, a local one is started (``jobs`` CPUs, no dashboard, no runtime
    environment to package) and shut down again by :meth:`close`; with ``RAY_ADDRESS`` set, or
    after ``ray.init`` by the caller, the existing cluster is used and left running.
    """

    def __init__(self, jobs: int, limits: SandboxLimits) -> None:
        """Start (or join) Ray and its ``jobs`` sandbox actors.

        Raises:
            MTSConfigError: Ray is not installed.
            MTSWorkerError: Ray cannot be started or reached, or the actors do not start in time.
        """
        ray = _import_ray()
        self._ray = ray
        try:
            self._owns_ray = engine.join_or_start(ray, jobs)
        except (ConnectionError, RuntimeError) as exc:
            address = os.environ.get("RAY_ADDRESS")
            raise MTSWorkerError(f"cannot start or reach Ray (RAY_ADDRESS={address!r}): {exc}") from exc
        self.limits = limits
        self.scripts_run = 0
        actor = ray.remote(num_cpus=1)(_SandboxActor)
        self._actors: list[Any] = [actor.remote(limits.model_dump()) for _ in range(jobs)]
        try:
            ray.get([a.ready.remote() for a in self._actors], timeout=RAY_START_SECONDS)
        except (TimeoutError, ray.exceptions.RayError) as exc:  # not up in time, or died while starting
            self.close()
            raise MTSWorkerError(
                f"the {jobs} Ray sandbox actors did not start within {RAY_START_SECONDS:.0f} s "
                f"({type(exc).__name__}: {exc})"
            ) from exc
        self._pool: Any = importlib.import_module("ray.util").ActorPool(self._actors)

    def run(self, scripts: Sequence[str]) -> list[SandboxResult]:
        """Run scripts in chunks across the actors (costliest first); results come back in input order.

        Raises:
            MTSWorkerError: an actor did not answer within the time its chunk may take.
        """
        if not scripts:
            return []
        order = sorted(range(len(scripts)), key=lambda i: -_expected_cost(scripts[i]))
        size = max(1, len(scripts) // (4 * len(self._actors)))
        chunks = [[scripts[i] for i in order[k : k + size]] for k in range(0, len(order), size)]
        # in order, the next chunk waits at most for the chunks already running, then runs itself
        wait = 2 * size * (self.limits.wall_seconds + 1) + 30
        for chunk in chunks:
            self._pool.submit(_submit, chunk)
        results: list[SandboxResult] = []
        try:
            while self._pool.has_next():
                results.extend(SandboxResult.model_validate(r) for r in self._pool.get_next(timeout=wait))
        except TimeoutError as exc:
            raise MTSWorkerError(f"a Ray sandbox actor gave no result within {wait:.0f} s") from exc
        except self._ray.exceptions.RayError as exc:
            raise MTSWorkerError(f"a Ray sandbox actor failed ({type(exc).__name__}: {exc})") from exc
        self.scripts_run += len(scripts)
        back: list[SandboxResult | None] = [None] * len(scripts)
        for i, result in zip(order, results, strict=True):
            back[i] = result
        return [r for r in back if r is not None]

    def close(self) -> None:
        """Stop the actors, and the local Ray instance if this runner started it."""
        for a in self._actors:
            self._ray.kill(a)
        self._actors = []
        if self._owns_ray and self._ray.is_initialized():
            self._ray.shutdown()
        self._owns_ray = False


def _submit(actor: Any, scripts: list[str]) -> Any:
    return actor.run.remote(scripts)


class _SandboxActor:
    """Body of a Ray actor: one warm sandbox worker."""

    def __init__(self, limits: dict[str, Any]) -> None:
        self._sandbox = Sandbox(workers=1, limits=SandboxLimits.model_validate(limits))
        self._sandbox.start()

    def ready(self) -> bool:
        """Answered once the sandbox is up (the runner waits for this, with a time limit)."""
        return True

    def run(self, scripts: list[str]) -> list[dict[str, Any]]:
        return [r.model_dump() for r in self._sandbox.run(scripts)]


class RaySampler:
    """A geotts sampler whose batches are answered by Ray tasks (``use_ray`` with an HTTP backend).

    Each batch is split into ``tasks`` parts; each part is one Ray task that builds the configured
    sampler on its worker (:func:`geosynth.mts._llm.build_sampler`, so the API key variable must be
    set there too: a local Ray inherits it) and generates. The tasks ask for no CPU, so they run
    beside the sandbox actors, which hold the CPUs. Replies come back in request order. The cache and
    the rate limit stay in the driver (:class:`geosynth.mts._llm.CachedLLM` wraps this sampler).
    """

    def __init__(self, config: LLMConfig, tasks: int) -> None:
        self._ray = _import_ray()
        if not self._ray.is_initialized():
            raise MTSConfigError("the Ray LLM tasks need a running Ray (start the RayRunner first)")
        self.config = config
        self.tasks = tasks
        self._remote: Any = self._ray.remote(num_cpus=0)(_generate_part)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[list[Completion]]:
        """Generate the requests' candidates on Ray tasks; one list per request, in order.

        Raises:
            MTSLLMError: a task failed (the backend's own error, after its retries) or did not answer.
        """
        if not requests:
            return []
        size = -(-len(requests) // self.tasks)
        parts = [list(requests[k : k + size]) for k in range(0, len(requests), size)]
        c = self.config
        wait = c.timeout * (c.max_retries + 1) * -(-size // c.max_concurrency) + 60
        try:
            answers: list[list[list[Completion]]] = self._ray.get(
                [self._remote.remote(c, part) for part in parts], timeout=wait
            )
        except TimeoutError as exc:
            raise MTSLLMError(f"LLM {c.model!r}: a Ray task gave no replies within {wait:.0f} s") from exc
        except self._ray.exceptions.RayError as exc:
            raise MTSLLMError(f"LLM {c.model!r} failed in a Ray task: {exc}") from exc
        return [candidates for answer in answers for candidates in answer]


def _generate_part(config: LLMConfig, requests: list[GenerationRequest]) -> list[list[Completion]]:
    """Body of a Ray LLM task: build the sampler here, answer the requests, close its connections."""
    sampler = build_sampler(config)
    try:
        return sampler.generate(requests)
    finally:
        close = getattr(sampler, "close", None)
        if callable(close):
            close()


def make_runner(*, jobs: int, timeout: float, use_ray: bool) -> LocalRunner | RayRunner:
    """The runner for a run's configuration (per-script wall and CPU limits set to ``timeout``)."""
    limits = SandboxLimits(wall_seconds=timeout, cpu_seconds=timeout)
    return RayRunner(jobs, limits) if use_ray else LocalRunner(jobs, limits)
