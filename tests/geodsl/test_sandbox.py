"""The sandbox: normal PAL scripts work; hostile scripts fail with a clear error and harm nothing."""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from geodsl.errors import SandboxError
from geodsl.sandbox import Sandbox, SandboxLimits, SandboxResult, run_scripts

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux only")

SECRET_VARIABLE = "GEODSL_TEST_SECRET_TOKEN"

# The PAL script of ReTTS-PGPS's worked example (Table 11): BD^2 = AB * BC, then Pythagoras (answer 1.491).
PAL_SCRIPT = textwrap.dedent(
    """
    from sympy import Eq, solve, sqrt, symbols
    y, z = symbols('y z')
    equations = []
    equations.append(Eq(sqrt(3 * sqrt(2) * z), sqrt(2)))
    equations.append(Eq(z**2 + sqrt(2)**2, y**2))
    solutions = solve(equations, [y, z], dict=True)
    for sol in solutions:
        try:
            if any(float(v) <= 0 for v in sol.values()):
                continue
            val = float(y.subs(sol))
            print(f'{val:.3f}')
            break
        except (TypeError, ValueError):
            pass
    """
)
SIMPLE_SCRIPT = "from sympy import Rational\nprint(float(Rational(7, 4)))\n"
SHORT = SandboxLimits(wall_seconds=3.0, cpu_seconds=1.0)


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    os.environ[SECRET_VARIABLE] = "hunter2"
    try:
        with Sandbox(workers=2, limits=SHORT) as box:
            yield box
    finally:
        os.environ.pop(SECRET_VARIABLE, None)


def run(sandbox: Sandbox, script: str, limits: SandboxLimits = SHORT) -> SandboxResult:
    return sandbox.run_one(textwrap.dedent(script), limits=limits)


def assert_healthy(sandbox: Sandbox) -> None:
    """Both workers still run a normal script after whatever ran before."""
    results = sandbox.run([SIMPLE_SCRIPT, SIMPLE_SCRIPT, SIMPLE_SCRIPT])
    assert [r.error for r in results] == [None, None, None]
    assert [r.answer for r in results] == [1.75, 1.75, 1.75]


# --- normal scripts ---------------------------------------------------------------------------------


def test_pal_script_gives_the_right_answer(sandbox: Sandbox) -> None:
    result = sandbox.run_one(PAL_SCRIPT, limits=SandboxLimits(wall_seconds=30.0, cpu_seconds=30.0))
    assert result.error is None, result.stderr
    assert result.ok
    assert result.stdout.strip() == "1.491"
    assert result.answer == pytest.approx(1.491)
    assert result.exit_status == 0
    assert result.seconds > 0


def test_results_keep_input_order_and_report_progress(sandbox: Sandbox) -> None:
    scripts = [f"import time\ntime.sleep({0.05 * (i % 3)})\nprint({i} * 1.5)" for i in range(8)]
    seen: list[tuple[int, int]] = []
    results = sandbox.run(scripts, progress=lambda done, total: seen.append((done, total)))
    assert [r.answer for r in results] == [i * 1.5 for i in range(8)]
    assert seen == [(k, 8) for k in range(1, 9)]


def test_empty_batch_returns_no_results(sandbox: Sandbox) -> None:
    assert sandbox.run([]) == []


def test_scratch_directory_is_usable_and_removed_afterwards(sandbox: Sandbox) -> None:
    result = run(
        sandbox,
        """
        import os, tempfile
        with open('notes.txt', 'w') as f:
            f.write('12.5')
        with tempfile.NamedTemporaryFile('w', delete=False) as g:
            g.write('x')
        print(os.getcwd())
        print(open('notes.txt').read())
    """,
    )
    assert result.error is None
    assert result.answer == 12.5
    scratch = Path(result.stdout.splitlines()[0])
    assert not scratch.exists()


def test_output_written_to_fd_1_is_captured_in_order(sandbox: Sandbox) -> None:
    result = run(
        sandbox,
        """
        import os
        print(1)
        os.write(1, b'2\\n')
        print(3)
    """,
    )
    assert result.stdout == "1\n2\n3\n"
    assert result.answer == 3.0


def test_script_errors_are_one_line(sandbox: Sandbox) -> None:
    assert run(sandbox, "print(1 / 0)").error == "ZeroDivisionError: division by zero"
    syntax = run(sandbox, "print(1 +)").error
    assert syntax is not None and syntax.startswith("SyntaxError")
    assert run(sandbox, "print('no numbers here')").error == "no number in the output"


# --- hostile scripts --------------------------------------------------------------------------------


def test_cannot_write_outside_the_sandbox(sandbox: Sandbox, tmp_path: Path) -> None:
    target = tmp_path / "owned.txt"
    result = run(sandbox, f"open({str(target)!r}, 'w').write('pwned')\nprint(1)")
    assert result.error is not None and result.error.startswith("blocked: write outside the sandbox")
    assert not target.exists()
    for script in (
        f"import os\nos.open({str(target)!r}, os.O_WRONLY | os.O_CREAT)",
        f"import os\nos.mkdir({str(tmp_path / 'dir')!r})",
        f"import os\nos.symlink('/etc/passwd', {str(tmp_path / 'link')!r})",
    ):
        assert (run(sandbox, script).error or "").startswith("blocked:")
    assert list(tmp_path.iterdir()) == []
    assert_healthy(sandbox)


def test_native_file_writers_are_confined(sandbox: Sandbox, tmp_path: Path) -> None:
    database = tmp_path / "owned.db"
    outside = run(sandbox, f"import sqlite3\nsqlite3.connect({str(database)!r}).execute('create table t(x)')")
    assert (outside.error or "").startswith("blocked: write outside the sandbox (sqlite3.connect")
    history = run(sandbox, f"import readline\nreadline.write_history_file({str(tmp_path / 'history')!r})")
    assert history.error == "blocked: native file access (import readline)"
    assert list(tmp_path.iterdir()) == []
    inside = run(
        sandbox,
        """
        import sqlite3
        for target in (':memory:', 'local.db'):
            db = sqlite3.connect(target)
            db.execute('create table t(x)')
            db.execute('insert into t values (2.5)')
            print(db.execute('select x * 2 from t').fetchone()[0])
    """,
    )
    assert inside.error is None and inside.stdout.split() == ["5.0", "5.0"]


def test_swallowed_violation_is_still_reported(sandbox: Sandbox, tmp_path: Path) -> None:
    result = run(
        sandbox,
        f"""
        try:
            open({str(tmp_path / "x")!r}, 'w')
        except BaseException:
            pass
        print(5)
    """,
    )
    assert result.answer == 5.0
    assert result.error is not None and result.error.startswith("blocked: write outside the sandbox")


@pytest.mark.parametrize("path", ["/etc/shadow", "/root/.ssh/id_rsa", "/proc/self/environ", "/etc/passwd"])
def test_cannot_read_outside_the_allowlist(sandbox: Sandbox, path: str) -> None:
    result = run(sandbox, f"print(open({path!r}).read())")
    assert result.error is not None and result.error.startswith("blocked: read outside the allowlist")
    assert result.stdout == ""


def test_environment_of_the_host_is_not_visible(sandbox: Sandbox) -> None:
    result = run(sandbox, f"import os\nprint(len(os.environ.get({SECRET_VARIABLE!r}, '')))")
    assert result.answer == 0.0


def test_cannot_open_a_socket(sandbox: Sandbox) -> None:
    result = run(
        sandbox,
        """
        import socket
        s = socket.create_connection(('127.0.0.1', 80), timeout=1)
    """,
    )
    assert result.error is not None and result.error.startswith("blocked: network")
    assert_healthy(sandbox)


@pytest.mark.parametrize(
    ("script", "category"),
    [
        ("import subprocess\nsubprocess.run(['touch', '/tmp/geodsl-sandbox-pwned'])", "subprocess"),
        ("import os\nos.system('touch /tmp/geodsl-sandbox-pwned')", "subprocess"),
        ("import os\nos.execv('/bin/sh', ['sh'])", "subprocess"),
        ("import os\nos.posix_spawn('/bin/true', ['true'], {})", "subprocess"),
        ("import _posixsubprocess\n_posixsubprocess.fork_exec()", "subprocess"),
        ("import os\npid = os.fork()\nprint(pid)", "fork"),
        ("import multiprocessing\nmultiprocessing.Process(target=print).start()", "fork"),
        ("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)", "signal"),
        ("import ctypes\nctypes.CDLL(None).fork()", "ctypes"),
        ("import resource\nresource.setrlimit(resource.RLIMIT_CPU, (100, 100))", "resource limits"),
    ],
    ids=[
        "subprocess",
        "os.system",
        "exec",
        "posix_spawn",
        "fork_exec",
        "fork",
        "multiprocessing",
        "kill",
        "ctypes",
        "setrlimit",
    ],
)
def test_cannot_spawn_processes_or_escape(sandbox: Sandbox, script: str, category: str) -> None:
    result = run(sandbox, script)
    assert result.error is not None and result.error.startswith(f"blocked: {category}"), result.error
    assert not Path("/tmp/geodsl-sandbox-pwned").exists()
    assert_healthy(sandbox)


def test_fork_bomb_fails_fast(sandbox: Sandbox) -> None:
    result = run(
        sandbox,
        """
        import os
        while True:
            try:
                os.fork()
            except Exception:
                pass
    """,
    )
    assert result.error is not None and result.error.startswith("blocked: fork")
    assert_healthy(sandbox)


def test_huge_allocation_is_a_memory_error(sandbox: Sandbox) -> None:
    result = run(sandbox, "block = bytearray(20 * 1024 ** 3)\nprint(len(block))")
    assert result.error == "MemoryError"
    assert_healthy(sandbox)


def test_busy_loop_hits_the_cpu_limit(sandbox: Sandbox) -> None:
    # a generous wall clock, so that a busy shared machine still lets the loop use its CPU second
    result = run(sandbox, "while True:\n    pass", SandboxLimits(wall_seconds=30.0, cpu_seconds=1.0))
    assert result.error == "cpu time limit exceeded (1.0 s)"
    assert result.cpu_seconds > 0.5
    assert_healthy(sandbox)


def test_sleeping_script_hits_the_wall_clock(sandbox: Sandbox) -> None:
    result = run(sandbox, "import time\ntime.sleep(60)", SandboxLimits(wall_seconds=0.5, cpu_seconds=1.0))
    assert result.error == "timeout after 0.5 s"
    assert result.exit_status is not None and result.exit_status < 0
    assert_healthy(sandbox)


@pytest.mark.parametrize("code", [0, 3])
def test_os_exit_is_not_a_silent_success(sandbox: Sandbox, code: int) -> None:
    result = run(sandbox, f"import os\nprint(4)\nos._exit({code})")
    assert result.error == f"script exited without finishing (exit status {code})"
    assert result.exit_status == code
    assert_healthy(sandbox)


def test_sys_exit_before_printing_has_no_answer(sandbox: Sandbox) -> None:
    assert run(sandbox, "import sys\nsys.exit(0)\nprint(3)").error == "no number in the output"
    assert run(sandbox, "import sys\nsys.exit(2)").error == "SystemExit: 2"


def test_monkey_patching_cannot_fake_an_answer_or_hide_an_error(sandbox: Sandbox) -> None:
    result = run(
        sandbox,
        """
        import builtins, json, os, sys
        builtins.float = lambda *args: 42.0
        json.dumps = lambda *args, **kwargs: '{"finished": true, "error": null}'
        os.write = lambda fd, data: len(data)
        print(7)
        raise ValueError('real failure')
    """,
    )
    assert result.error == "ValueError: real failure"
    assert result.answer == 7.0


def test_output_that_bypasses_fd_1_is_not_an_answer(sandbox: Sandbox) -> None:
    result = run(sandbox, "import io, sys\nsys.stdout = io.StringIO()\nprint(42)")
    assert result.answer is None
    assert result.error == "no number in the output"


def test_forged_status_record_does_not_turn_a_crash_into_success(sandbox: Sandbox) -> None:
    result = run(
        sandbox,
        """
        import os
        os.write(3, b'{"finished": true, "error": null}')
        print(9)
        raise RuntimeError('boom')
    """,
    )
    assert result.error is not None
    assert result.error.startswith("script exited without finishing")


def test_huge_output_is_cut_off(sandbox: Sandbox) -> None:
    limits = SandboxLimits(wall_seconds=3.0, cpu_seconds=2.0, max_output_bytes=10_000)
    result = run(sandbox, "while True:\n    print('x' * 1000)", limits)
    assert result.error == "output exceeded 10000 bytes"
    assert len(result.stdout) <= 10_000
    assert_healthy(sandbox)


def test_big_file_in_scratch_hits_the_file_size_limit(sandbox: Sandbox) -> None:
    limits = SandboxLimits(wall_seconds=3.0, cpu_seconds=2.0, max_file_bytes=100_000)
    result = run(sandbox, "open('big.bin', 'wb').write(b'0' * 1_000_000)\nprint(1)", limits)
    assert result.error == "file size limit exceeded (100000 bytes)"


def test_deep_recursion_fails_cleanly(sandbox: Sandbox) -> None:
    plain = run(sandbox, "def f(n):\n    return f(n + 1)\nf(0)")
    assert plain.error == "RecursionError: maximum recursion depth exceeded"
    unbounded = run(sandbox, "import sys\nsys.setrecursionlimit(10**7)\ndef f(n):\n    return f(n + 1)\nf(0)")
    assert unbounded.error is not None and unbounded.answer is None
    assert_healthy(sandbox)


def test_hostile_scripts_in_one_batch_do_not_stall_the_pool(sandbox: Sandbox) -> None:
    scripts = [
        "while True:\n    pass",
        SIMPLE_SCRIPT,
        "import time\ntime.sleep(60)",
        SIMPLE_SCRIPT,
        "import os\nos._exit(1)",
        SIMPLE_SCRIPT,
    ]
    results = sandbox.run(scripts, limits=SandboxLimits(wall_seconds=1.5, cpu_seconds=1.0))
    assert [r.answer for r in results[1::2]] == [1.75, 1.75, 1.75]
    assert all(r.error is not None for r in results[0::2])


def test_a_dead_worker_is_replaced(sandbox: Sandbox) -> None:
    for worker in sandbox._pool:
        worker.process.kill()
        worker.process.wait()
    results = sandbox.run([SIMPLE_SCRIPT] * 4)
    assert all(r.error is None or r.error.startswith("sandbox worker died") for r in results)
    assert_healthy(sandbox)


# --- configuration ----------------------------------------------------------------------------------


def test_limits_are_validated() -> None:
    with pytest.raises(ValidationError):
        SandboxLimits(wall_seconds=0)
    with pytest.raises(ValidationError):
        SandboxLimits(memory_mb=8)
    with pytest.raises(ValidationError):
        SandboxLimits(walltime=3)  # type: ignore[call-arg]


def test_bad_arguments_are_rejected(sandbox: Sandbox) -> None:
    with pytest.raises(SandboxError, match="workers must be at least 1"):
        Sandbox(workers=0)
    with pytest.raises(TypeError, match=r"scripts\[1\] is bytes"):
        sandbox.run(["print(1)", b"print(2)"])  # type: ignore[list-item]


def test_run_scripts_convenience() -> None:
    results = run_scripts(["print(2 ** 10)", "print(1/0)"], jobs=1, limits=SHORT)
    assert results[0].answer == 1024.0
    assert results[1].error == "ZeroDivisionError: division by zero"
    assert run_scripts([]) == []


def test_worker_that_cannot_start_raises_sandbox_error() -> None:
    box = Sandbox(workers=1, preload=("geodsl_no_such_module",))
    with pytest.raises(SandboxError, match=r"(?s)failed to start.*geodsl_no_such_module"):
        box.start()
    box.close()


def test_features_are_reported(sandbox: Sandbox) -> None:
    features = sandbox.features
    for layer in (
        "user_namespace",
        "pid_namespace",
        "mount_namespace",
        "network_namespace",
        "no_capabilities",
    ):
        assert features[layer] is True, layer
    assert features["seccomp"] is True and features["read_only_root"] is True
    assert features["mode"] == "user" and features["uid"] == 0
    # scripts never run as the host's root: root is mapped to nobody, anyone else to themselves
    assert features["host_uid"] == (65534 if os.geteuid() == 0 else os.geteuid())
    assert sandbox.missing_layers == []


def test_weak_mode_is_explicit_and_says_what_is_missing() -> None:
    with Sandbox(workers=1, limits=SHORT, isolation="weak") as box:
        assert box.features["mode"] == "weak"
        assert {"user_namespace", "pid_namespace", "mount_namespace"} <= set(box.missing_layers)
        assert box.features["seccomp"] is True
        assert box.run_one(SIMPLE_SCRIPT).answer == 1.75
        scratch = Path(box._pool[0].scratch)  # on the host in this mode, and removed with the pool
        assert scratch.name.startswith("geodsl-sandbox-") and scratch.is_dir()
    assert not scratch.exists()


def test_isolation_mode_is_validated(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SandboxError, match="isolation='none' is not one of kernel, best-effort, weak"):
        Sandbox(isolation="none")  # type: ignore[arg-type]
    monkeypatch.setenv("GEODSL_SANDBOX_ISOLATION", "off")
    with pytest.raises(SandboxError, match="GEODSL_SANDBOX_ISOLATION='off'"):
        Sandbox()
    monkeypatch.setenv("GEODSL_SANDBOX_ISOLATION", "weak")
    assert Sandbox().isolation == "weak"


def test_scratch_lives_only_inside_the_private_root(sandbox: Sandbox) -> None:
    result = run(sandbox, "import os\nopen('x.txt', 'w').write('1')\nprint(os.getcwd())\nprint(1)")
    cwd = result.stdout.split()[0]
    assert result.answer == 1.0 and cwd.startswith("/scratch/job-")
    assert not Path(cwd).exists()  # the host never sees it


def test_failing_progress_callback_leaves_the_pool_usable(sandbox: Sandbox) -> None:
    def explode(done: int, total: int) -> None:
        raise RuntimeError(f"callback failed at {done}/{total}")

    with pytest.raises(RuntimeError, match="callback failed at 1/6"):
        sandbox.run([SIMPLE_SCRIPT] * 6, progress=explode)
    assert_healthy(sandbox)


@pytest.mark.slow
def test_a_wedged_worker_is_abandoned_and_replaced(sandbox: Sandbox) -> None:
    import signal

    frozen = sandbox._pool[0].process.pid
    serving = sandbox._pool[0].host_pid
    assert serving is not None
    os.kill(serving, signal.SIGSTOP)  # the worker stops answering; the host's own deadline must fire
    results = sandbox.run([SIMPLE_SCRIPT] * 4, limits=SandboxLimits(wall_seconds=0.5, cpu_seconds=1.0))
    errors = [r.error for r in results if r.error is not None]
    assert len(errors) == 1 and errors[0].startswith("sandbox worker died (worker did not answer in time)")
    assert all(worker.process.pid != frozen for worker in sandbox._pool)
    assert_healthy(sandbox)


SECCOMP_PROBE = textwrap.dedent(
    """
    import ctypes, os, socket, threading
    from geodsl.sandbox import _kernel
    packed = _kernel.build_filter()
    pid = os.fork()
    if pid == 0:
        _kernel.install(ctypes.CDLL(None, use_errno=True), packed)
        outcome = []
        for name, attempt in [("fork", os.fork), ("socket", socket.socket),
                              ("exec", lambda: os.execv("/bin/true", ["true"])), ("kill", lambda: os.kill(1, 0))]:
            try:
                attempt()
                outcome.append(name + "=allowed")
            except PermissionError:
                outcome.append(name + "=EPERM")
        ran = []
        thread = threading.Thread(target=lambda: ran.append(True))
        thread.start()
        thread.join()
        outcome.append("thread=" + ("ran" if ran else "failed"))
        os.write(1, (" ".join(outcome) + "\\n").encode())
        os._exit(0)
    os.waitpid(pid, 0)
    """
)


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the seccomp filter is x86-64 only")
def test_seccomp_filter_refuses_native_process_creation_sockets_and_signals(sandbox: Sandbox) -> None:
    import subprocess

    assert sandbox.features["seccomp"] is True
    probe = subprocess.run(
        [sys.executable, "-c", SECCOMP_PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    assert probe.stdout.split() == ["fork=EPERM", "socket=EPERM", "exec=EPERM", "kill=EPERM", "thread=ran"]
