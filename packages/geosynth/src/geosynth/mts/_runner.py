"""Where scripts run: a local warm sandbox pool by default, Ray actors each holding one with ``--ray``."""

from __future__ import annotations

import importlib
import re
from collections.abc import Sequence
from typing import Any, Protocol

from geodsl.sandbox import Sandbox, SandboxLimits, SandboxResult
from geosynth.mts.errors import MTSConfigError

__all__ = ("LocalRunner", "RayRunner", "ScriptRunner", "make_runner")


class ScriptRunner(Protocol):
    """Runs untrusted scripts; one result per script, in order; a failing script never raises."""

    def run(self, scripts: Sequence[str]) -> list[SandboxResult]:
        """Run the scripts."""
        ...

    def close(self) -> None:
        """Release the workers."""
        ...


_TRIG = re.compile(r"\b(?:sin|cos|tan)\(")


def _expected_cost(script: str) -> int:
    """A rough cost rank: scripts with more equations and with trigonometry take longest to solve.

    Running the costly ones first keeps every worker busy until the batch ends (longest job first),
    instead of leaving one worker on a slow script after the others ran out of work.
    """
    equations = [line for line in script.splitlines() if line.lstrip().startswith("equations.append(")]
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


class RayRunner:
    """Scripts spread over Ray actors, each keeping a warm one-worker sandbox (a cluster-wide pool)."""

    def __init__(self, jobs: int, limits: SandboxLimits) -> None:
        try:
            ray: Any = importlib.import_module("ray")
            actor_pool: Any = importlib.import_module("ray.util").ActorPool
        except ImportError as exc:
            raise MTSConfigError('--ray needs Ray: pip install "ray>=2.9"') from exc
        self._ray = ray
        if not ray.is_initialized():
            ray.init(ignore_reinit_error=True, log_to_driver=False)
        actor = ray.remote(num_cpus=1)(_SandboxActor)
        self._actors = [actor.remote(limits.model_dump()) for _ in range(jobs)]
        self._pool: Any = actor_pool(self._actors)
        self.scripts_run = 0

    def run(self, scripts: Sequence[str]) -> list[SandboxResult]:
        """Run scripts in chunks across the actors; results come back in input order."""
        chunk = max(1, len(scripts) // (4 * len(self._actors)) or 1)
        chunks = [list(scripts[i : i + chunk]) for i in range(0, len(scripts), chunk)]
        results: list[SandboxResult] = []
        for part in self._pool.map(_submit, chunks):
            results.extend(SandboxResult.model_validate(r) for r in part)
        self.scripts_run += len(scripts)
        return results

    def close(self) -> None:
        """Stop the actors."""
        for a in self._actors:
            self._ray.kill(a)
        self._actors = []


def _submit(actor: Any, scripts: list[str]) -> Any:
    return actor.run.remote(scripts)


class _SandboxActor:
    """Body of a Ray actor: one warm sandbox worker."""

    def __init__(self, limits: dict[str, Any]) -> None:
        self._sandbox = Sandbox(workers=1, limits=SandboxLimits.model_validate(limits))
        self._sandbox.start()

    def run(self, scripts: list[str]) -> list[dict[str, Any]]:
        return [r.model_dump() for r in self._sandbox.run(scripts)]


def make_runner(*, jobs: int, timeout: float, use_ray: bool) -> LocalRunner | RayRunner:
    """The runner for a run's configuration (per-script wall and CPU limits set to ``timeout``)."""
    limits = SandboxLimits(wall_seconds=timeout, cpu_seconds=timeout)
    return RayRunner(jobs, limits) if use_ray else LocalRunner(jobs, limits)
