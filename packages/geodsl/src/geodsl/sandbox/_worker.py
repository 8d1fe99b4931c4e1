"""The sandbox worker: a warm interpreter that runs each script in a fresh forked child.

This file runs as its own program (``python -I _worker.py``), started by
:class:`geodsl.sandbox.Sandbox`; it imports only the standard library plus the
modules named for preloading, and never imports geodsl. The child half (everything
below ``_run_child``) must not depend on anything a script could have replaced.

Protocol (the worker's stdin and stdout, duplicated to private descriptors at
start-up so that stray library prints cannot corrupt it): frames of a 4-byte
big-endian length followed by UTF-8 JSON. The worker first sends
``{"ready": true, "host_pid": ..., "features": {...}, "missing": [...]}``; each request
``{"nonce": str, "script": str, "limits": {...}}`` gets exactly one reply carrying the same
nonce (see ``_run_job``). End of input stops the worker.

Start-up: the worker imports its preloads and warms up sympy, then isolates itself
(``_kernel.py``). The process the host started (W0) forks W1, which enters new user,
mount, PID, network, IPC, UTS and cgroup namespaces (W0 writes its uid/gid map from
outside: root is mapped to ``nobody``); W1 forks W2, PID 1 of the new PID namespace,
which pivots into a private read-only root with a scratch tmpfs, drops every capability,
marks itself non-dumpable and serves. W0 and W1 only wait; a SIGKILL to W0 takes the
whole tree down (parent-death signals, then the PID namespace).

Per script W2 creates three pipes (stdout, stderr, status) and a throw-away directory,
forks, and supervises the child: it enforces the wall-clock limit and the output cap,
kills the child's whole process group when done, reaps it, and empties the scratch tmpfs.
The child confines itself (capabilities, new session, rlimits, fresh cwd, scrubbed
environment, every other descriptor closed, seccomp allowlist, an audit hook for readable
errors) before it compiles the script.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import importlib.util
import io
import json
import math
import os
import resource
import selectors
import shutil
import signal
import struct
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

_HEADER = struct.Struct(">I")
_PR_SET_PDEATHSIG = 1
_STATUS_FD = 3
_STATUS_CAP = 64 * 1024
_STDERR_CAP = 64 * 1024
_MAX_THREADS = 32  # RLIMIT_NPROC of a script: threads only (seccomp refuses new processes)
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
# Numeric libraries imported by a script must not try to start a thread per core (RLIMIT_NPROC forbids it).
_THREAD_CAPS = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
_ALWAYS_READABLE = ("/dev/null", "/dev/urandom", "/dev/random", "/dev/zero", "/usr/share/zoneinfo")
_ALWAYS_WRITABLE = ("/dev/null",)

# Audit events a script may never raise, by prefix, with the category reported to the user.
_DENY_PREFIXES: tuple[tuple[str, str], ...] = (
    ("socket.", "network"),
    ("http.client.", "network"),
    ("urllib.", "network"),
    ("ftplib.", "network"),
    ("smtplib.", "network"),
    ("imaplib.", "network"),
    ("poplib.", "network"),
    ("nntplib.", "network"),
    ("telnetlib.", "network"),
    ("webbrowser.", "network"),
    ("subprocess.", "subprocess"),
    ("os.system", "subprocess"),
    ("os.exec", "subprocess"),
    ("os.posix_spawn", "subprocess"),
    ("os.spawn", "subprocess"),
    ("os.startfile", "subprocess"),
    ("pty.", "subprocess"),
    ("os.fork", "fork"),
    ("os.kill", "signal"),
    ("signal.pthread_kill", "signal"),
    ("ctypes.", "ctypes"),
    ("resource.", "resource limits"),
    ("gc.get_", "interpreter introspection"),
    ("sys._current_frames", "interpreter introspection"),
    ("os.chmod", "permission change"),
    ("os.lchmod", "permission change"),
    ("os.chown", "permission change"),
    ("os.lchown", "permission change"),
    ("os.chflags", "permission change"),
    ("os.lchflags", "permission change"),
    ("shutil.chown", "permission change"),
    ("os.setxattr", "permission change"),
    ("os.removexattr", "permission change"),
    ("os.link", "link"),
    ("os.symlink", "link"),
    ("os.chroot", "filesystem"),
    ("os.mknod", "filesystem"),
    ("os.mkfifo", "filesystem"),
)

# Audit events whose path arguments (by position) must lie inside the scratch directory.
_WRITE_PATH_EVENTS: dict[str, tuple[int, ...]] = {
    "os.remove": (0,),
    "os.rmdir": (0,),
    "os.mkdir": (0,),
    "os.rename": (0, 1),
    "os.truncate": (0,),
    "os.utime": (0,),
    "shutil.rmtree": (0,),
    "shutil.copyfile": (1,),
    "shutil.copymode": (1,),
    "shutil.copystat": (1,),
    "shutil.copytree": (1,),
    "shutil.move": (0, 1),
    "shutil.make_archive": (0,),
    "shutil.unpack_archive": (1,),
}

# Audit events whose path argument 0 must be readable (inside the scratch directory or an allowed root).
# Standard-library modules that write files from C without an "open" audit event.
_DENIED_IMPORTS = frozenset({"readline", "_dbm", "_gdbm"})
_MEMORY_DATABASES = frozenset({":memory:", ""})

_READ_PATH_EVENTS = frozenset({"os.listdir", "os.scandir", "glob.glob", "glob.glob/2", "os.chdir"})


class _Blocked(BaseException):
    """Raised by the audit hook; a BaseException so that ``except Exception`` in a script cannot swallow it."""


# --- protocol --------------------------------------------------------------------------------------


def _read_exact(fd: int, n: int) -> bytes | None:
    chunks: list[bytes] = []
    while n:
        chunk = os.read(fd, n)
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _recv(fd: int) -> dict[str, Any] | None:
    header = _read_exact(fd, _HEADER.size)
    if header is None:
        return None
    body = _read_exact(fd, _HEADER.unpack(header)[0])
    return None if body is None else json.loads(body)


def _send(fd: int, message: dict[str, Any]) -> None:
    body = json.dumps(message).encode()
    data = _HEADER.pack(len(body)) + body
    while data:
        data = data[os.write(fd, data) :]


# --- the child -------------------------------------------------------------------------------------


def _resolve(path: Any) -> str | None:
    """Absolute, symlink-free form of a path argument; ``None`` for a file descriptor."""
    if isinstance(path, int):
        return None
    text = os.fsdecode(os.fspath(path))
    return os.path.realpath(os.path.join(os.getcwd(), text))


def _inside(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


class _Policy:
    """The audit hook of a child: deny by event name, confine paths, remember the first violation."""

    def __init__(self, scratch: str, read_roots: tuple[str, ...], violations: list[str]) -> None:
        self.scratch = (scratch,)
        self.writable = (scratch, *_ALWAYS_WRITABLE)
        self.readable = (scratch, *read_roots)
        self.violations = violations
        self.isdir = os.path.isdir

    def deny(self, category: str, detail: str) -> None:
        message = f"blocked: {category} ({detail})"
        if not self.violations:
            self.violations.append(message)
        raise _Blocked(message)

    def check_open(self, args: tuple[Any, ...]) -> None:
        path, flags = _resolve(args[0]), args[2]
        if path is None:
            return
        if isinstance(flags, int) and flags & _WRITE_FLAGS:
            if not _inside(path, self.writable):
                self.deny("write outside the sandbox", path)
        elif not _inside(path, self.readable):
            self.deny("read outside the allowlist", path)
        elif self.isdir(path) and not _inside(path, self.scratch):
            self.deny("open directory", path)

    def check_paths(self, event: str, args: tuple[Any, ...]) -> None:
        positions = _WRITE_PATH_EVENTS.get(event)
        if positions is not None:
            for i in positions:
                path = _resolve(args[i]) if i < len(args) else None
                if path is not None and not _inside(path, self.writable):
                    self.deny("write outside the sandbox", f"{event} {path}")
        elif event in _READ_PATH_EVENTS and args and args[0] is not None:
            path = _resolve(args[0])
            if path is not None and not _inside(path, self.readable):
                self.deny("read outside the allowlist", f"{event} {path}")

    def check_special(self, event: str, args: tuple[Any, ...]) -> None:
        """Events whose danger depends on their arguments: native file writers."""
        if event == "import" and args and args[0] in _DENIED_IMPORTS:
            self.deny("native file access", f"import {args[0]}")
        elif event == "sqlite3.connect" and args:
            database = args[0]
            if isinstance(database, bytes | str) and os.fsdecode(database) in _MEMORY_DATABASES:
                return
            path = _resolve(database)
            if path is None or os.fsdecode(database).startswith("file:") or not _inside(path, self.scratch):
                self.deny("write outside the sandbox", f"sqlite3.connect {database!r}")

    def __call__(self, event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            self.check_open(args)
            return
        if event in ("import", "sqlite3.connect"):
            self.check_special(event, args)
            return
        for prefix, category in _DENY_PREFIXES:
            if event.startswith(prefix):
                self.deny(category, event)
        self.check_paths(event, args)


def _set_limits(limits: dict[str, Any]) -> None:
    cpu = max(1, math.ceil(limits["cpu_seconds"]))
    memory = int(limits["memory_mb"]) * 1024 * 1024
    table = (
        (resource.RLIMIT_CPU, cpu, cpu + 1),
        (resource.RLIMIT_AS, memory, memory),
        (resource.RLIMIT_FSIZE, int(limits["max_file_bytes"]), int(limits["max_file_bytes"])),
        (resource.RLIMIT_NOFILE, int(limits["max_open_files"]), int(limits["max_open_files"])),
        (resource.RLIMIT_NPROC, _MAX_THREADS, _MAX_THREADS),
        (resource.RLIMIT_CORE, 0, 0),
    )
    for which, soft, hard in table:
        resource.setrlimit(which, (soft, hard))


def _neuter_process_spawning() -> None:
    """Remove the one process-spawning primitive that raises no audit event of its own."""
    posixsubprocess = sys.modules.get("_posixsubprocess")
    if posixsubprocess is not None:
        audit = sys.audit

        def fork_exec(*_args: object) -> None:
            audit("subprocess._posixsubprocess.fork_exec")  # the audit hook records and refuses it
            raise _Blocked("blocked: subprocess (_posixsubprocess.fork_exec)")

        posixsubprocess.fork_exec = fork_exec  # type: ignore[attr-defined]


def _confine(
    scratch: str,
    pipes: tuple[int, int, int],
    limits: dict[str, Any],
    libc: Any,
    kernel: Any,
    seccomp: bool,
) -> None:
    """Everything the child does to itself before it compiles the script."""
    os.setsid()
    if libc is not None:
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        kernel.drop_capabilities(libc)  # already none in the isolated worker; this covers the weaker mode
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    for target, fd in zip((1, 2, _STATUS_FD), pipes, strict=True):
        os.dup2(fd, target)
    os.closerange(_STATUS_FD + 1, 1 << 20)
    os.chdir(scratch)
    os.environ.clear()
    os.environ.update(
        {"HOME": scratch, "TMPDIR": scratch, "PATH": "/nonexistent", "LANG": "C.UTF-8", **_THREAD_CAPS}
    )
    tempfile.tempdir = scratch
    sys.dont_write_bytecode = True  # imports must not try to write __pycache__ next to the sources
    for name in ("SIGINT", "SIGTERM", "SIGPIPE", "SIGXCPU", "SIGXFSZ"):
        signal.signal(getattr(signal, name), signal.SIG_DFL)
    _set_limits(limits)
    _neuter_process_spawning()
    if seccomp:
        kernel.install(libc, kernel.build_filter(os.getpid()))


def _describe(exc: BaseException) -> str:
    """One line naming an exception, robust against hostile ``__str__`` methods."""
    name = type(exc).__name__
    try:
        text = str(exc)
    except BaseException:
        text = ""
    line = text.strip().splitlines()[0] if text.strip() else ""
    return f"{name}: {line}"[:500] if line else name


def _run_child(
    script: str,
    scratch: str,
    pipes: tuple[int, int, int],
    limits: dict[str, Any],
    read_roots: tuple[str, ...],
    libc: Any,
    kernel: Any,
    seccomp: bool,
) -> None:
    """Body of the forked child; never returns."""
    status: dict[str, Any] = {"finished": False, "error": "child failed to start"}
    write, exit_now, dumps = os.write, os._exit, json.dumps
    violations: list[str] = []
    out: io.TextIOWrapper | None = None
    try:
        try:
            _confine(scratch, pipes, limits, libc, kernel, seccomp)
        except Exception as exc:
            status = {"finished": True, "error": f"sandbox set-up failed: {_describe(exc)}"}
            raise
        out = io.TextIOWrapper(
            io.FileIO(1, "w", closefd=False),
            encoding="utf-8",
            errors="backslashreplace",
            line_buffering=True,
            write_through=True,
        )
        err = io.TextIOWrapper(
            io.FileIO(2, "w", closefd=False),
            encoding="utf-8",
            errors="backslashreplace",
            line_buffering=True,
            write_through=True,
        )
        sys.stdout, sys.stderr, sys.stdin = out, err, io.TextIOWrapper(io.FileIO(0, "r", closefd=False))
        sys.addaudithook(_Policy(scratch, read_roots, violations))
        status = {"finished": False, "error": None}
        code = compile(script, "<script>", "exec")
        try:
            exec(code, {"__name__": "__main__", "__builtins__": __builtins__})
        except SystemExit as stop:
            if stop.code not in (None, 0):
                status["error"] = f"SystemExit: {stop.code}"
        status["finished"] = True
    except MemoryError:
        status = {"finished": True, "error": "MemoryError"}
    except BaseException as exc:
        if status["error"] is None or not status["finished"]:
            status = {"finished": True, "error": _describe(exc)}
    finally:
        try:
            with contextlib.suppress(BaseException):
                if out is not None:
                    out.flush()
            if violations:
                status["error"] = violations[0]
            try:
                write(_STATUS_FD, dumps(status).encode()[:_STATUS_CAP])
            except MemoryError:
                write(_STATUS_FD, b'{"finished": true, "error": "MemoryError"}')
        finally:
            exit_now(0 if status.get("error") is None else 1)


# --- the supervisor --------------------------------------------------------------------------------


class _Capture:
    """Bytes read from one of the child's pipes, with a cap."""

    def __init__(self, fd: int, cap: int) -> None:
        self.fd, self.cap = fd, cap
        self.data = bytearray()
        self.total = 0
        self.open = True

    def pump(self) -> None:
        try:
            chunk = os.read(self.fd, 65536)
        except BlockingIOError:
            return
        if not chunk:
            self.open = False
            return
        self.total += len(chunk)
        room = self.cap - len(self.data)
        if room > 0:
            self.data += chunk[:room]


def _wait_child(
    pid: int, pidfd: int, captures: list[_Capture], deadline: float, max_output: int
) -> str | None:
    """Pump the pipes until the child exits; return ``"timeout"``/``"output"`` if it had to be stopped.

    ``captures`` is (stdout, stderr, status); stdout and stderr together count against ``max_output``.
    """
    selector = selectors.DefaultSelector()
    for capture in captures:
        os.set_blocking(capture.fd, False)
        selector.register(capture.fd, selectors.EVENT_READ, capture)
    selector.register(pidfd, selectors.EVENT_READ, None)
    reason: str | None = None
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                reason = "timeout"
                break
            exited = False
            for key, _ in selector.select(remaining):
                if key.data is None:
                    exited = True
                else:
                    key.data.pump()
                    if not key.data.open:
                        selector.unregister(key.fd)
            if captures[0].total + captures[1].total > max_output:
                reason = "output"
                break
            if exited:
                break
    finally:
        selector.close()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    return reason


def _drain(captures: list[_Capture]) -> None:
    """Read what is left in the pipes once every writer is gone."""
    for capture in captures:
        os.set_blocking(capture.fd, True)
        while capture.open and capture.total <= capture.cap + 1:
            capture.pump()


def _error_for(
    reason: str | None, status: dict[str, Any] | None, returncode: int, cpu: float, limits: dict[str, Any]
) -> str | None:
    if reason == "timeout":
        return f"timeout after {float(limits['wall_seconds'])} s"
    if reason == "output":
        return f"output exceeded {int(limits['max_output_bytes'])} bytes"
    if returncode < 0:
        sig = -returncode
        cpu_limit = math.ceil(limits["cpu_seconds"])
        # rusage under-reports against the kernel's own CPU clock, hence the margin for the hard-limit SIGKILL
        if sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu >= 0.5 * cpu_limit):
            return f"cpu time limit exceeded ({float(limits['cpu_seconds'])} s)"
        if sig == signal.SIGXFSZ:
            return f"file size limit exceeded ({int(limits['max_file_bytes'])} bytes)"
        return f"killed by signal {signal.Signals(sig).name}"
    if status is None or not status.get("finished"):
        return f"script exited without finishing (exit status {returncode})"
    error = status.get("error")
    return error if isinstance(error, str) else None


def _empty(base: str) -> None:
    """Remove everything under ``base`` (a script may have left files beside its own directory)."""
    with os.scandir(base) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def _run_job(
    script: str,
    limits: dict[str, Any],
    base: str,
    read_roots: tuple[str, ...],
    libc: Any,
    kernel: Any,
    seccomp: bool,
) -> dict[str, Any]:
    scratch = tempfile.mkdtemp(prefix="job-", dir=base)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    st_r, st_w = os.pipe()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child never returns
        for fd in (out_r, err_r, st_r):
            os.close(fd)
        try:
            _run_child(script, scratch, (out_w, err_w, st_w), limits, read_roots, libc, kernel, seccomp)
        finally:
            os._exit(1)
    for fd in (out_w, err_w, st_w):
        os.close(fd)
    max_output = int(limits["max_output_bytes"])
    out, err, st = _Capture(out_r, max_output), _Capture(err_r, _STDERR_CAP), _Capture(st_r, _STATUS_CAP)
    pidfd = os.pidfd_open(pid)
    try:
        reason = _wait_child(pid, pidfd, [out, err, st], start + float(limits["wall_seconds"]), max_output)
        _, wait_status, usage = os.wait4(pid, 0)
        _drain([out, err, st])
    finally:
        for fd in (out_r, err_r, st_r, pidfd):
            os.close(fd)
        _empty(base)
    seconds = time.monotonic() - start
    returncode = os.waitstatus_to_exitcode(wait_status)
    cpu = usage.ru_utime + usage.ru_stime
    try:
        status = json.loads(bytes(st.data)) if st.data else None
    except ValueError:
        status = None
    return {
        "stdout": bytes(out.data).decode("utf-8", "replace"),
        "stderr": bytes(err.data).decode("utf-8", "replace"),
        "error": _error_for(reason, status if isinstance(status, dict) else None, returncode, cpu, limits),
        "exit_status": returncode,
        "seconds": seconds,
        "cpu_seconds": cpu,
    }


# --- start-up --------------------------------------------------------------------------------------


def _read_roots(trees: list[str]) -> tuple[str, ...]:
    """Directories the audit hook lets a script read: the interpreter's trees and a few devices."""
    return (*trees, *_ALWAYS_READABLE)


def _warm_up(preload: list[str]) -> None:
    """Import the preloads and exercise sympy's solver once, so children inherit its lazy imports and caches."""
    for name in preload:
        importlib.import_module(name)
    if "sympy" not in preload:
        return
    import sympy

    x, y = sympy.symbols("x y")
    systems = (
        [sympy.Eq(3 * x + 4, 19)],
        [sympy.Eq(x**2 + 3**2, 5**2)],
        [sympy.Eq(sympy.sqrt(2 * x), sympy.sqrt(3)), sympy.Eq(x**2 + 4, y**2)],
        [sympy.Eq(x**2, 7**2 + 9**2 - 2 * 7 * 9 * sympy.cos(60 * sympy.pi / 180))],
        [sympy.Eq(x * sympy.sin(45 * sympy.pi / 180), 6 * sympy.sin(30 * sympy.pi / 180))],
        [sympy.Eq(sympy.Rational(1, 2) * 3 * x, y), sympy.Eq(sympy.pi * 2**2 * x / 360, y)],
    )
    for system in systems:
        unknowns = sorted(set().union(*(eq.free_symbols for eq in system)), key=str)
        for solution in sympy.solve(system, unknowns, dict=True):
            for value in solution.values():
                with contextlib.suppress(TypeError, ValueError):
                    float(value)
    sympy.nsimplify("0.5")
    float(sympy.N(sympy.asin(sympy.Rational(1, 3)) * 180 / sympy.pi))


def _load_kernel_module() -> Any:
    """``_kernel.py`` from next to this file (the worker runs by path, outside any package)."""
    spec = importlib.util.spec_from_file_location(
        "_geodsl_sandbox_kernel", Path(__file__).with_name("_kernel.py")
    )
    if spec is None or spec.loader is None:
        raise ImportError("cannot load the sandbox's _kernel.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Isolation:
    """What :func:`_isolate` set up for the serving process."""

    def __init__(self) -> None:
        self.features: dict[str, Any] = {}
        self.missing: list[str] = []
        self.base = ""


def _wait_and_exit(pid: int, close: tuple[int, ...]) -> None:
    """Parent half of a fork in the start-up chain: hold nothing, wait for the child, exit like it."""
    for fd in close:
        with contextlib.suppress(OSError):
            os.close(fd)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            os._exit(1)
    code = os.waitstatus_to_exitcode(status)
    os._exit(code if code >= 0 else 128 - code)


def _namespaces(
    kernel: Any, libc: Any, mode: str, trees: list[str], proto: tuple[int, int]
) -> tuple[str, Any]:
    """Fork W1 into new namespaces, mapped from outside by this process (W0).

    Only W1 returns: the mode it got and the opened :class:`RootPlan` (``None`` in the weaker
    mode). The plan is opened after the new mount namespace exists (a bind mount must come from
    the caller's namespace) and before the switch of uid (root's trees may not be reachable by
    ``nobody``). W0 waits for W1 and exits with its status.
    """
    euid, egid = os.geteuid(), os.getegid()
    ready_r, ready_w = os.pipe()
    mapped_r, mapped_w = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid:  # W0
        os.close(ready_w)
        os.close(mapped_r)
        got = os.read(ready_r, 16).decode() or "weak"
        ok = b"0"
        if got == "user":
            try:
                outside_uid, outside_gid = (65534, 65534) if euid == 0 else (euid, egid)
                kernel.map_user(pid, outside_uid, outside_gid, allow_setgroups=euid == 0)
                ok = b"1"
            except OSError:
                ok = b"0"
        os.write(mapped_w, ok)
        _wait_and_exit(pid, (*proto, ready_r, mapped_w))
    kernel.die_with_parent(libc, parent)
    os.close(ready_r)
    os.close(mapped_w)
    got = "weak"
    if mode == "kernel" and kernel.unshare(libc, kernel.USER_NAMESPACE | kernel.NAMESPACE_FLAGS):
        got = "user"
    elif mode == "kernel" and euid == 0 and kernel.unshare(libc, kernel.NAMESPACE_FLAGS):
        got = "root"
    plan = kernel.RootPlan(trees) if got != "weak" else None
    os.write(ready_w, got.encode())
    os.close(ready_w)
    if got == "user":
        ack = os.read(mapped_r, 1)
        if ack != b"1":
            os._exit(3)  # a user namespace without a map cannot be left; the host reports the start failure
        if euid == 0:
            os.setgroups([])
        os.setresgid(0, 0, 0)
        os.setresuid(0, 0, 0)
    os.close(mapped_r)
    return got, plan


def _isolate(
    kernel: Any, libc: Any, config: dict[str, Any], trees: list[str], proto: tuple[int, int]
) -> _Isolation:
    """Enter every layer the kernel grants; only the serving process returns (see the module docstring)."""
    result = _Isolation()
    mode = str(config.get("isolation", "kernel"))
    got, plan = _namespaces(kernel, libc, mode, trees, proto) if libc is not None else ("weak", None)
    staging = tempfile.gettempdir()
    proc = False
    if got in ("user", "root"):
        parent = os.getpid()
        pid = os.fork()  # the first child of W1 is PID 1 of the new PID namespace
        if pid:
            _wait_and_exit(pid, proto)
        kernel.die_with_parent(libc, parent)
        result.features["host_pid"] = kernel.host_pid()
        rooted = True
        try:
            proc = kernel.build_root(
                libc, plan, staging, scratch_owner=65534 if got == "root" else None, mount_proc=True
            )
        except OSError as exc:  # the kernel refused a mount: no private root (reported as a missing layer)
            rooted, result.features["root_error"] = False, str(exc)
        if got == "root":
            kernel.drop_bounding_set(libc)
            kernel.become_nobody(libc)
        kernel.drop_capabilities(libc)
        kernel.set_non_dumpable(libc)
        result.base = kernel.SCRATCH if rooted else tempfile.mkdtemp(prefix="geodsl-sandbox-")
    else:
        rooted = False
        result.features["host_pid"] = os.getpid()
        if libc is not None:
            kernel.set_non_dumpable(libc)
        result.base = tempfile.mkdtemp(prefix="geodsl-sandbox-")
    layers = {
        "user_namespace": got == "user" or (got == "root" and os.geteuid() != 0),
        "pid_namespace": got in ("user", "root") and os.getpid() == 1,
        "mount_namespace": rooted,
        "network_namespace": got in ("user", "root"),
        "no_capabilities": kernel.capabilities_empty(),
    }
    result.features.update(layers)
    result.features.update(
        mode=got,
        private_proc=proc,
        read_only_root=rooted,
        seccomp=kernel.seccomp_works(libc),
        uid=os.getuid(),
        host_uid=_host_uid(os.getuid()),
    )
    result.missing = [name for name, ok in layers.items() if not ok]
    if not result.features["seccomp"]:
        result.missing.append("seccomp")
    return result


def _host_uid(uid: int) -> int:
    """The uid outside every user namespace that ``uid`` here stands for (from /proc/self/uid_map)."""
    try:
        with open("/proc/self/uid_map", encoding="utf-8") as mapping:
            for line in mapping:
                inside, outside, count = (int(x) for x in line.split())
                if inside <= uid < inside + count:
                    return outside + uid - inside
    except (OSError, ValueError):
        pass
    return uid


def main() -> None:
    """Serve requests until the host closes our stdin."""
    proto_in, proto_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    config = _recv(proto_in)
    if config is None:
        return
    _warm_up(list(config.get("preload", [])))  # first: a failing preload must leave nothing behind
    kernel = _load_kernel_module()
    libc = kernel.load_libc()
    trees = kernel.python_trees(list(config.get("allow_read", [])))
    isolation = _isolate(kernel, libc, config, trees, (proto_in, proto_out))
    read_roots = _read_roots(trees)
    seccomp = bool(isolation.features["seccomp"])
    gc.collect()
    gc.freeze()
    hello = {
        "ready": True,
        "features": isolation.features,
        "missing": isolation.missing,
        "scratch": isolation.base,
    }
    _send(proto_out, hello)
    try:
        while (request := _recv(proto_in)) is not None:
            reply = _run_job(
                request["script"], request["limits"], isolation.base, read_roots, libc, kernel, seccomp
            )
            reply["nonce"] = request.get("nonce")
            _send(proto_out, reply)
    finally:
        if not isolation.features["mount_namespace"]:
            shutil.rmtree(isolation.base, ignore_errors=True)


if __name__ == "__main__":
    main()
