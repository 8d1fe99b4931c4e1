"""The host side of the sandbox: a pool of warm worker processes and the batch dispatcher."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import secrets
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Literal

from geodsl.answers import answer_from_output
from geodsl.errors import SandboxError
from geodsl.sandbox._models import SandboxLimits, SandboxResult

ProgressCallback = Callable[[int, int], None]
"""Called as ``progress(done, total)`` after each script of a batch finishes (in the calling thread)."""

_HEADER = struct.Struct(">I")
_WORKER_FILE = Path(__file__).with_name("_worker.py")
_START_TIMEOUT = 120.0
_GRACE_SECONDS = 5.0
_PASSED_ENV = ("LD_LIBRARY_PATH", "SYSTEMROOT")
_FRAME_SLACK = 1 << 20  # a reply carries at most the output cap plus this much
_ISOLATION_ENV = "GEODSL_SANDBOX_ISOLATION"

Isolation = Literal["kernel", "best-effort", "weak"]
"""How much isolation a :class:`Sandbox` demands of the kernel:

* ``"kernel"`` (the default): every layer (user, PID, mount and network namespaces, no
  capabilities, seccomp); a machine that refuses one makes the sandbox refuse to start and name it;
* ``"best-effort"``: the layers the kernel grants, with the missing ones listed in
  :attr:`Sandbox.missing_layers` (an explicit acceptance of the weaker mode);
* ``"weak"``: no namespaces at all (seccomp, rlimits and the audit hook only).

The environment variable ``GEODSL_SANDBOX_ISOLATION`` sets the default.
"""
_ISOLATIONS: tuple[str, ...] = ("kernel", "best-effort", "weak")
DEFAULT_PRELOAD: tuple[str, ...] = ("math", "fractions", "sympy")
"""Modules every worker imports before it forks its first child."""


class _WorkerDied(Exception):
    """A worker stopped answering (internal; turned into a per-script error and a restart)."""


class _BadFrame(_WorkerDied):
    """A worker's reply was not a well-formed frame for the request it answers."""


def _default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)))


class _Worker:
    """One warm worker process and its framed pipe protocol."""

    def __init__(
        self, python: str, preload: Sequence[str], allow_read: Sequence[str], isolation: str
    ) -> None:
        env = {"PATH": os.defpath, "LANG": "C.UTF-8", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
        env.update({k: os.environ[k] for k in _PASSED_ENV if k in os.environ})
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115  # closed in kill()
        self.process = subprocess.Popen(
            [python, "-I", str(_WORKER_FILE)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
            cwd="/",
            close_fds=True,
        )
        self.features: dict[str, Any] = {}
        self.missing: list[str] = []
        self.host_pid: int | None = None
        self.scratch = ""  # the worker's scratch base (inside its private root, unless isolation is weak)
        self._send({"preload": list(preload), "allow_read": list(allow_read), "isolation": isolation})

    def wait_ready(self) -> None:
        try:
            hello = self._recv(_START_TIMEOUT)
        except _WorkerDied as exc:
            self.process.kill()
            self.process.wait()
            tail = self._stderr_tail()
            self.kill()
            raise SandboxError(f"sandbox worker failed to start: {exc}; {tail}") from exc
        self.features = dict(hello.get("features", {}))
        self.missing = [str(layer) for layer in hello.get("missing", [])]
        pid = self.features.get("host_pid")
        self.host_pid = pid if isinstance(pid, int) else None
        self.scratch = str(hello.get("scratch", ""))

    def _stderr_tail(self) -> str:
        self._stderr.seek(0)
        text = self._stderr.read().decode("utf-8", "replace").strip()
        return f"worker stderr: {text[-2000:]}" if text else "worker wrote nothing to stderr"

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        stdin = self.process.stdin
        if stdin is None:
            raise _WorkerDied("worker has no request pipe")
        try:
            stdin.write(_HEADER.pack(len(body)) + body)
            stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise _WorkerDied(f"cannot write to worker: {exc}") from exc

    def _read_exact(self, n: int, deadline: float) -> bytes:
        stdout = self.process.stdout
        if stdout is None:
            raise _WorkerDied("worker has no reply pipe")
        fd = stdout.fileno()
        chunks: list[bytes] = []
        while n:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                raise _WorkerDied("worker did not answer in time")
            chunk = os.read(fd, min(n, 1 << 20))
            if not chunk:
                raise _WorkerDied(f"worker exited (status {self.process.poll()})")
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def _recv(self, timeout: float, max_size: int = _FRAME_SLACK) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        (size,) = _HEADER.unpack(self._read_exact(_HEADER.size, deadline))
        if size > max_size:
            raise _BadFrame(f"worker sent a malformed reply (a {size}-byte frame)")
        try:
            message = json.loads(self._read_exact(size, deadline))
        except ValueError as exc:
            raise _BadFrame(f"worker sent a malformed reply ({exc})") from exc
        if not isinstance(message, dict):
            raise _BadFrame("worker sent a malformed reply (not a JSON object)")
        return message

    def request(self, script: str, limits: SandboxLimits) -> dict[str, Any]:
        """Send one script and read its reply, which must carry this request's nonce and every field."""
        nonce = secrets.token_hex(16)
        self._send({"nonce": nonce, "script": script, "limits": limits.wire()})
        reply = self._recv(limits.wall_seconds + _GRACE_SECONDS, 2 * limits.max_output_bytes + _FRAME_SLACK)
        if reply.get("nonce") != nonce:
            raise _BadFrame("worker sent a malformed reply (it answers another request)")
        return reply

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()  # its namespaced children follow through parent-death signals
        if self.host_pid is not None and self.host_pid != self.process.pid:
            with contextlib.suppress(OSError):
                os.kill(self.host_pid, signal.SIGKILL)  # the serving process, at once
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self._stderr.close()
        if self.scratch and not self.features.get("mount_namespace") and Path(self.scratch).is_dir():
            shutil.rmtree(self.scratch, ignore_errors=True)

    def close(self) -> None:
        stdin = self.process.stdin
        if stdin is not None and not stdin.closed:
            with contextlib.suppress(OSError):
                stdin.close()  # end of input: the worker exits on its own
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=2.0)
        self.kill()


def _shutdown(workers: list[_Worker]) -> None:
    while workers:
        workers.pop().close()


def _fail_remaining(
    todo: queue.SimpleQueue[int],
    done: queue.SimpleQueue[tuple[int, SandboxResult | SandboxError]],
    error: SandboxError,
) -> None:
    while True:
        try:
            done.put((todo.get_nowait(), error))
        except queue.Empty:
            return


def _as_sandbox_error(exc: Exception, context: str) -> SandboxError:
    if isinstance(exc, SandboxError):
        return exc
    error = SandboxError(f"{context}: {exc!r}")
    error.__cause__ = exc
    return error


def _to_result(reply: dict[str, Any]) -> SandboxResult:
    try:
        stdout, stderr, error = reply["stdout"], reply["stderr"], reply["error"]
        if not (isinstance(stdout, str) and isinstance(stderr, str) and isinstance(error, str | None)):
            raise TypeError("text fields of the wrong type")
        answer = answer_from_output(stdout)
        if error is None and answer is None:
            error = "no number in the output"
        return SandboxResult(
            stdout=stdout,
            stderr=stderr,
            answer=answer,
            error=error,
            seconds=float(reply["seconds"]),
            cpu_seconds=float(reply["cpu_seconds"]),
            exit_status=int(reply["exit_status"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise _BadFrame(f"worker sent a malformed reply ({type(exc).__name__}: {exc})") from exc


def _crash_result(exc: _WorkerDied, seconds: float) -> SandboxResult:
    error = (
        f"sandbox {exc}; worker restarted" if isinstance(exc, _BadFrame) else f"sandbox worker died ({exc})"
    )
    return SandboxResult(stdout="", answer=None, error=error, seconds=seconds, exit_status=None)


class Sandbox:
    """A pool of warm workers that run untrusted Python scripts, each in a fresh forked child.

    Linux only (namespaces, seccomp, pidfd, rlimits). Use as a context manager, or call
    :meth:`close` when done; workers start on entry (or on first use)::

        with Sandbox(workers=2) as sandbox:
            results = sandbox.run(scripts)

    Args:
        workers: number of worker processes (scripts run in parallel); default: usable CPUs.
        limits: default limits for every script.
        preload: modules each worker imports before forking (sympy is also warmed up).
        allow_read: extra directories scripts may read (the interpreter's own trees always are).
        python: the interpreter that runs the workers; default: this one.
        isolation: ``"kernel"`` (default; every kernel layer or no start), ``"best-effort"``
            or ``"weak"`` (see :data:`Isolation`); default from ``GEODSL_SANDBOX_ISOLATION``.

    Raises:
        SandboxError: on a non-Linux platform, a bad worker count or a bad isolation mode.
    """

    def __init__(
        self,
        workers: int | None = None,
        limits: SandboxLimits | None = None,
        *,
        preload: Sequence[str] = DEFAULT_PRELOAD,
        allow_read: Sequence[str] = (),
        python: str | None = None,
        isolation: Isolation | None = None,
    ) -> None:
        if not sys.platform.startswith("linux"):
            raise SandboxError(f"the sandbox needs Linux (fork, pidfd_open, rlimits); this is {sys.platform}")
        count = _default_workers() if workers is None else workers
        if count < 1:
            raise SandboxError(f"workers must be at least 1, got {workers}")
        self.workers = count
        self.limits = limits or SandboxLimits()
        self._preload = tuple(preload)
        self._allow_read = tuple(str(Path(p).resolve()) for p in allow_read)
        self._python = python or sys.executable
        chosen = isolation or os.environ.get(_ISOLATION_ENV) or "kernel"
        if chosen not in _ISOLATIONS:
            source = "isolation" if isolation else _ISOLATION_ENV
            raise SandboxError(f"{source}={chosen!r} is not one of {', '.join(_ISOLATIONS)}")
        self.isolation = chosen
        self._pool: list[_Worker] = []
        self._lock = threading.Lock()
        self._run_lock = threading.Lock()  # one batch at a time: a batch owns every worker
        self._finalizer = weakref.finalize(self, _shutdown, self._pool)

    # --- lifecycle ---

    def start(self) -> None:
        """Start the workers (idempotent); blocks until every one has imported its preloads.

        Raises:
            SandboxError: if a worker cannot be started.
        """
        with self._lock:
            if self._pool:
                return
            fresh = [self._spawn() for _ in range(self.workers)]
            try:
                for worker in fresh:
                    self._ready(worker)
            except SandboxError:
                _shutdown(fresh)
                raise
            self._pool.extend(fresh)

    def _spawn(self) -> _Worker:
        try:
            return _Worker(self._python, self._preload, self._allow_read, self.isolation)
        except OSError as exc:
            raise SandboxError(f"cannot start a sandbox worker with {self._python}: {exc}") from exc

    def _ready(self, worker: _Worker) -> None:
        """Wait for a worker's hello; in ``"kernel"`` mode refuse one that lacks a layer."""
        worker.wait_ready()
        if self.isolation == "kernel" and worker.missing:
            why = worker.features.get("root_error")
            detail = f" ({why})" if isinstance(why, str) else ""
            raise SandboxError(
                f"the sandbox cannot isolate scripts here: the kernel refused {', '.join(worker.missing)}"
                f"{detail} (see docs/sandbox.md); to run untrusted scripts with the weaker isolation anyway, pass "
                f"isolation='best-effort' or set {_ISOLATION_ENV}=best-effort"
            )

    def close(self) -> None:
        """Stop the workers; the sandbox can be started again later."""
        with self._lock:
            _shutdown(self._pool)

    def __enter__(self) -> Sandbox:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @property
    def features(self) -> dict[str, Any]:
        """Isolation the first worker reported.

        Booleans per layer (``user_namespace``, ``pid_namespace``, ``mount_namespace``,
        ``network_namespace``, ``no_capabilities``, ``seccomp``, ``private_proc``,
        ``read_only_root``), ``mode`` (``"user"``, ``"root"`` or ``"weak"``), ``uid`` (inside) and
        ``host_uid`` (the uid scripts have on the host), ``host_pid`` of the serving process.
        """
        self.start()
        return dict(self._pool[0].features)

    @property
    def missing_layers(self) -> list[str]:
        """The kernel layers the workers run without (empty in ``"kernel"`` mode)."""
        self.start()
        return list(self._pool[0].missing)

    # --- running ---

    def run_one(self, script: str, *, limits: SandboxLimits | None = None) -> SandboxResult:
        """Run one script; see :meth:`run`."""
        return self.run([script], limits=limits)[0]

    def run(
        self,
        scripts: Sequence[str],
        *,
        limits: SandboxLimits | None = None,
        progress: ProgressCallback | None = None,
    ) -> list[SandboxResult]:
        """Run scripts in parallel across the workers; results come back in input order.

        A failing script never raises: its result carries the error. Each script runs in
        its own forked child with its own limits, scratch directory and audit hook.

        Args:
            scripts: Python source texts.
            limits: limits for this batch (default: the sandbox's).
            progress: called as ``progress(done, total)`` after each script finishes.

        Raises:
            SandboxError: if a worker dies and cannot be restarted.
            TypeError: if an item of ``scripts`` is not a string.
        """
        for i, script in enumerate(scripts):
            if not isinstance(script, str):  # pyright: ignore[reportUnnecessaryIsInstance]
                raise TypeError(f"scripts[{i}] is {type(script).__name__}, not str")
        with self._run_lock:
            return self._run_batch(scripts, limits or self.limits, progress)

    def _run_batch(
        self, scripts: Sequence[str], batch_limits: SandboxLimits, progress: ProgressCallback | None
    ) -> list[SandboxResult]:
        self.start()
        todo: queue.SimpleQueue[int] = queue.SimpleQueue()
        for i in range(len(scripts)):
            todo.put(i)
        done: queue.SimpleQueue[tuple[int, SandboxResult | SandboxError]] = queue.SimpleQueue()
        stop = threading.Event()
        threads = [
            threading.Thread(
                target=self._drive, args=(slot, scripts, batch_limits, todo, done, stop), daemon=True
            )
            for slot in range(min(len(self._pool), len(scripts)))
        ]
        for thread in threads:
            thread.start()
        try:
            return self._collect(len(scripts), done, progress)
        finally:
            # Also on an exception from progress() or a KeyboardInterrupt: no new scripts start, and the
            # workers finish their current one before another batch may use them.
            stop.set()
            for thread in threads:
                thread.join()

    @staticmethod
    def _collect(
        total: int,
        done: queue.SimpleQueue[tuple[int, SandboxResult | SandboxError]],
        progress: ProgressCallback | None,
    ) -> list[SandboxResult]:
        results: list[SandboxResult | None] = [None] * total
        failure: SandboxError | None = None
        for count in range(1, total + 1):
            index, outcome = done.get()
            if isinstance(outcome, SandboxError):
                failure = failure or outcome
                continue
            results[index] = outcome
            if progress is not None:
                progress(count, total)
        if failure is not None:
            raise failure
        return [r for r in results if r is not None]

    def _drive(
        self,
        slot: int,
        scripts: Sequence[str],
        limits: SandboxLimits,
        todo: queue.SimpleQueue[int],
        done: queue.SimpleQueue[tuple[int, SandboxResult | SandboxError]],
        stop: threading.Event,
    ) -> None:
        """Feed one worker until the queue is empty (or the batch is abandoned); restart it if it dies."""
        while not stop.is_set():
            try:
                index = todo.get_nowait()
            except queue.Empty:
                return
            start = time.monotonic()
            try:
                done.put((index, _to_result(self._pool[slot].request(scripts[index], limits))))
            except _WorkerDied as exc:
                done.put((index, _crash_result(exc, time.monotonic() - start)))
                try:
                    self._restart(slot)
                except Exception as exc:
                    _fail_remaining(todo, done, _as_sandbox_error(exc, "cannot restart a sandbox worker"))
                    return
            except Exception as exc:  # a malformed reply: fail the batch rather than hang it
                fatal = _as_sandbox_error(exc, "sandbox worker protocol error")
                done.put((index, fatal))
                _fail_remaining(todo, done, fatal)
                return

    def _restart(self, slot: int) -> None:
        self._pool[slot].kill()
        worker = self._spawn()
        try:
            self._ready(worker)
        except SandboxError:
            worker.kill()
            raise
        self._pool[slot] = worker


def run_scripts(
    scripts: Sequence[str],
    *,
    jobs: int | None = None,
    limits: SandboxLimits | None = None,
    progress: ProgressCallback | None = None,
    isolation: Isolation | None = None,
) -> list[SandboxResult]:
    """Run scripts in a temporary :class:`Sandbox` (start-up costs about a second per worker).

    Args:
        scripts: Python source texts.
        jobs: number of workers (default: usable CPUs, at most one per script).
        limits: per-script limits (default :class:`SandboxLimits`).
        progress: called as ``progress(done, total)`` after each script.
        isolation: see :class:`Sandbox`.

    Returns:
        One :class:`SandboxResult` per script, in input order.
    """
    if not scripts:
        return []
    workers = min(jobs or _default_workers(), len(scripts))
    with Sandbox(workers=workers, limits=limits, isolation=isolation) as sandbox:
        return sandbox.run(scripts, progress=progress)
