"""The sandbox's kernel boundary: attacks by scripts that own their whole interpreter.

Every attack script first disarms the audit hook (the worker module is ``sys.modules['__main__']``
in the child, so a script can patch its policy). What stops it afterwards must be the kernel:
namespaces, the private root, dropped capabilities, non-dumpable workers and the seccomp
allowlist. Each test checks the host afterwards: files, processes, other scripts' results.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from geodsl.errors import SandboxError
from geodsl.sandbox import Sandbox, SandboxLimits

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux only"),
    pytest.mark.skipif(os.uname().machine != "x86_64", reason="the seccomp allowlist is x86-64 only"),
]

LIMITS = SandboxLimits(wall_seconds=5.0, cpu_seconds=3.0)
BENIGN = "from sympy import Rational\nprint(float(Rational(7, 4)))\n"

# Patch the child's audit policy into a no-op: from here on the script is unhindered by Python.
DISARM = textwrap.dedent(
    """
    import sys
    sys.modules['__main__']._Policy.__call__ = lambda self, event, args: None
    import ctypes, errno, os, signal
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    outcome = {}
    def attempt(name, action):
        try:
            value = action()
            outcome[name] = 'ok' if value is None else value
        except OSError as exc:
            outcome[name] = errno.errorcode.get(exc.errno, str(exc.errno))
        except Exception as exc:
            outcome[name] = type(exc).__name__
    def raw(nr, *args):
        result = libc.syscall(nr, *args)
        return 'ok' if result >= 0 else errno.errorcode[ctypes.get_errno()]
    """
)
REPORT = "\nimport json\nprint(json.dumps(outcome))\nprint(1)\n"


def attack(body: str) -> str:
    return DISARM + textwrap.dedent(body) + REPORT


def outcome_of(stdout: str) -> dict[str, str]:
    return json.loads(stdout.splitlines()[0])


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(workers=2, limits=LIMITS) as box:
        yield box


@pytest.fixture
def bystander() -> Iterator[subprocess.Popen[bytes]]:
    """An unrelated host process that no script may signal."""
    process = subprocess.Popen(["sleep", "300"])
    try:
        yield process
    finally:
        process.kill()
        process.wait()


def run(sandbox: Sandbox, script: str) -> dict[str, str]:
    result = sandbox.run_one(script)
    assert result.error is None, (result.error, result.stderr[-2000:])
    return outcome_of(result.stdout)


def assert_healthy(sandbox: Sandbox) -> None:
    results = sandbox.run([BENIGN] * 4)
    assert [(r.error, r.answer) for r in results] == [(None, 1.75)] * 4


def test_disarming_the_audit_hook_works_so_the_kernel_is_what_is_tested(sandbox: Sandbox) -> None:
    got = run(sandbox, attack("attempt('ctypes', lambda: str(libc.getpid()))"))
    assert got["ctypes"].isdigit()


def test_host_files_are_out_of_reach_even_with_the_policy_patched(sandbox: Sandbox, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("hunter2")
    target = tmp_path / "pwned.txt"
    got = run(
        sandbox,
        attack(
            f"""
            attempt('read_secret', lambda: open({str(secret)!r}).read())
            attempt('write_host', lambda: open({str(target)!r}, 'w').write('x') and None)
            attempt('host_environ', lambda: open('/proc/{os.getpid()}/environ').read()[:20])
            attempt('etc_passwd', lambda: open('/etc/passwd').read()[:20])
            attempt('list_root', lambda: ','.join(sorted(os.listdir('/'))))
            attempt('write_root', lambda: open('/planted', 'w').write('x') and None)
            attempt('write_library', lambda: open({os.path.realpath(sys.prefix)!r} + '/planted', 'w') and None)
            attempt('mkdir_tmp', lambda: os.mkdir('/tmp/x'))
            """
        ),
    )
    assert got["read_secret"] == "ENOENT" and got["write_host"] == "ENOENT"
    assert got["host_environ"] == "ENOENT" and got["etc_passwd"] == "ENOENT"
    assert got["write_root"] == "EROFS" and got["write_library"] == "EROFS" and got["mkdir_tmp"] == "EROFS"
    listed = set(got["list_root"].split(","))
    assert {"proc", "scratch", "dev"} <= listed and "etc" in listed  # only ld.so.cache lives there
    assert not target.exists() and secret.read_text() == "hunter2"
    assert not Path("/planted").exists()


def test_dir_fd_and_openat2_path_games_find_no_way_out(sandbox: Sandbox, tmp_path: Path) -> None:
    target = tmp_path / "escaped.txt"
    got = run(
        sandbox,
        attack(
            f"""
            os.makedirs('a/b/c/d/e/f'); top = os.open('.', os.O_RDONLY); os.chdir('a/b/c/d/e/f')
            climb = '../' * 12
            attempt('stat', lambda: os.read(os.open('../../../../../../../proc/self/stat', os.O_RDONLY, dir_fd=top), 5).decode())
            attempt('host_proc', lambda: os.open(climb + 'proc/{os.getpid()}/root/etc/hostname', os.O_RDONLY, dir_fd=top) and None)
            attempt('create', lambda: os.open(climb + {str(target)[1:]!r}, os.O_WRONLY | os.O_CREAT, dir_fd=top) and None)
            attempt('root_fd', lambda: ','.join(sorted(os.listdir(os.open(climb, os.O_RDONLY, dir_fd=top)))))
            how = ctypes.create_string_buffer(24)  # struct open_how {{flags, mode, resolve}}, all zero
            attempt('openat2', lambda: raw(437, -100, b'/proc/1/root', how, 24))
            """
        ),
    )
    assert int(got["stat"].split()[0]) < 100  # the script's pid in the worker's own small PID namespace
    assert got["host_proc"] == "ENOENT" and got["create"] in ("ENOENT", "EROFS")
    assert "scratch" in got["root_fd"].split(",")  # '..' from anywhere ends at the private root
    assert got["openat2"] == "EPERM"
    assert not target.exists()


def test_magic_links_under_proc_are_closed(sandbox: Sandbox) -> None:
    got = run(
        sandbox,
        attack(
            """
            attempt('pids', lambda: ','.join(sorted(p for p in os.listdir('/proc') if p.isdigit())))
            outcome['self'] = str(os.getpid())
            attempt('worker_root', lambda: os.listdir('/proc/1/root'))
            attempt('worker_fds', lambda: os.listdir('/proc/1/fd'))
            attempt('worker_fd0', lambda: os.open('/proc/1/fd/0', os.O_RDONLY) and None)
            attempt('worker_environ', lambda: open('/proc/1/environ').read())
            attempt('worker_mem', lambda: open('/proc/1/mem', 'rb') and None)
            attempt('worker_cwd', lambda: os.listdir('/proc/1/cwd'))
            attempt('own_root', lambda: ','.join(sorted(os.listdir('/proc/self/root'))))
            """
        ),
    )
    assert set(got["pids"].split(",")) == {"1", got["self"]}  # the worker and this script: no host process
    for name in ("worker_root", "worker_fds", "worker_fd0", "worker_environ", "worker_mem", "worker_cwd"):
        assert got[name] in ("EACCES", "EPERM"), (name, got[name])
    assert "scratch" in got["own_root"].split(",")


def test_signals_reach_no_other_process(sandbox: Sandbox, bystander: subprocess.Popen[bytes]) -> None:
    host = os.getpid()
    serving = [worker.host_pid for worker in sandbox._pool]
    got = run(
        sandbox,
        attack(
            f"""
            for pid in ({bystander.pid}, {host}, 1, *{serving!r}):
                attempt(f'kill{{pid}}', lambda: os.kill(pid, signal.SIGKILL))
                attempt(f'pidfd_open{{pid}}', lambda: raw(434, pid, 0))
                attempt(f'pidfd_send{{pid}}', lambda: raw(424, 3, 9, 0, 0))
                attempt(f'sigqueue{{pid}}', lambda: raw(129, pid, 9, ctypes.create_string_buffer(128)))
                attempt(f'tgkill{{pid}}', lambda: raw(234, pid, pid, 9))
            attempt('kill_all', lambda: os.kill(-1, signal.SIGKILL))
            attempt('pidfd_getfd', lambda: raw(438, 3, 0, 0))
            attempt('io_uring', lambda: raw(425, 8, ctypes.create_string_buffer(120)))
            attempt('self_signal', lambda: os.kill(os.getpid(), 0))
            """
        ),
    )
    for name, value in got.items():
        if name == "self_signal":
            assert value == "ok"
        else:
            assert value in ("EPERM", "ESRCH"), (name, value)
    assert bystander.poll() is None
    assert all(worker.process.poll() is None for worker in sandbox._pool)
    assert_healthy(sandbox)


def test_ptrace_and_cross_process_memory_are_refused(sandbox: Sandbox) -> None:
    got = run(
        sandbox,
        attack(
            f"""
            buffer = ctypes.create_string_buffer(8)
            iov = (ctypes.c_void_p * 2)(ctypes.addressof(buffer), 8)
            for pid in (1, {os.getpid()}):
                attempt(f'attach{{pid}}', lambda: raw(101, 16, pid, 0, 0))   # PTRACE_ATTACH
                attempt(f'seize{{pid}}', lambda: raw(101, 0x4206, pid, 0, 0))
                attempt(f'vm_read{{pid}}', lambda: raw(310, pid, iov, 1, iov, 1, 0))
                attempt(f'vm_write{{pid}}', lambda: raw(311, pid, iov, 1, iov, 1, 0))
            attempt('fork', lambda: raw(57))
            attempt('clone_process', lambda: raw(56, 17, 0, 0, 0, 0))  # SIGCHLD only: a new process
            attempt('unshare_user', lambda: raw(272, 0x10000000))
            attempt('mount', lambda: raw(165, b'none', b'/scratch', b'tmpfs', 0, 0))
            attempt('execve', lambda: os.execv('/usr/bin/true', ['true']))
            attempt('socket', lambda: raw(41, 2, 1, 0))
            attempt('capabilities', lambda: [ln.split()[1] for ln in open('/proc/self/status') if ln.startswith('CapEff')][0])
            """
        ),
    )
    assert got.pop("capabilities") == "0000000000000000"
    for name, value in got.items():
        assert value in ("EPERM", "ENOENT"), (name, value)
    assert_healthy(sandbox)


def test_a_script_inherits_no_descriptor_beyond_its_own_pipes(sandbox: Sandbox) -> None:
    got = run(
        sandbox,
        attack(
            """
            import stat
            kinds = []
            for fd in range(4096):
                try:
                    kinds.append(f'{fd}:{stat.S_IFMT(os.fstat(fd).st_mode):o}')
                except OSError:
                    pass
            outcome['fds'] = ' '.join(kinds)
            """
        ),
    )
    open_fds = [int(item.split(":")[0]) for item in got["fds"].split()]
    # 0 /dev/null, 1 stdout, 2 stderr, 3 status; ctypes may hold one more for libc only transiently
    assert open_fds[:4] == [0, 1, 2, 3] and all(fd < 6 for fd in open_fds)


def test_forged_reply_frames_change_no_other_result(sandbox: Sandbox) -> None:
    forged = textwrap.dedent(
        """
        import struct
        frame = json.dumps({"stdout": "666\\n", "stderr": "", "error": None, "exit_status": 0,
                            "seconds": 0.0, "cpu_seconds": 0.0, "nonce": None}).encode()
        packet = struct.pack('>I', len(frame)) + frame
        for path in ['/proc/1/fd/%d' % n for n in range(16)] + ['/proc/%d/fd/1' % n for n in range(1, 4)]:
            attempt(path, lambda: os.write(os.open(path, os.O_WRONLY), packet * 4) and None)
        for fd in range(4, 64):
            attempt(f'fd{fd}', lambda: os.write(fd, packet) and None)
        """
    )
    scripts = [attack("import json\n" + forged), *[BENIGN] * 20]
    results = sandbox.run(scripts)
    assert [r.answer for r in results[1:]] == [1.75] * 20
    got = outcome_of(results[0].stdout)
    assert all(value in ("EACCES", "EPERM", "EBADF", "ENOENT") for value in got.values()), got
    assert_healthy(sandbox)


def test_hostile_scripts_among_fifty_benign_ones(
    sandbox: Sandbox, bystander: subprocess.Popen[bytes]
) -> None:
    hostile = [
        attack(f"attempt('kill', lambda: os.kill({bystander.pid}, 9))"),
        attack("attempt('fork', lambda: os.fork())"),
        "while True:\n    pass\n",
        "import os\nos.write(3, b'garbage' * 1000)\nos._exit(0)\n",
        attack("attempt('wfd', lambda: os.write(os.open('/proc/1/fd/1', os.O_WRONLY), b'\\xff' * 64))"),
        "x = bytearray(1 << 34)\n",
    ]
    benign = [f"from sympy import Rational\nprint(float(Rational({i}, 4)))\n" for i in range(50)]
    scripts: list[str] = []
    for i, script in enumerate(benign):
        scripts.append(script)
        if i % 8 == 0:
            scripts.append(hostile[(i // 8) % len(hostile)])
    results = sandbox.run(scripts, limits=SandboxLimits(wall_seconds=3.0, cpu_seconds=1.0))
    answers = [r.answer for s, r in zip(scripts, results, strict=True) if s in benign]
    assert answers == [i / 4 for i in range(50)]
    assert bystander.poll() is None


# --- the host side of the protocol: a worker that misbehaves ----------------------------------------

FAKE_WORKER = textwrap.dedent(
    """
    import json, os, struct, sys
    def recv():
        head = os.read(0, 4)
        if len(head) < 4:
            return None
        size = struct.unpack('>I', head)[0]
        data = b''
        while len(data) < size:
            data += os.read(0, size - len(data))
        return json.loads(data)
    def send(obj):
        body = json.dumps(obj).encode()
        os.write(1, struct.pack('>I', len(body)) + body)
    config = recv()
    send({"ready": True, "features": {"mode": "user"}, "missing": MISSING_LAYERS, "scratch": "/scratch"})
    while (request := recv()) is not None:
        reply = {"stdout": "1.5\\n", "stderr": "", "error": None, "exit_status": 0, "seconds": 0.0,
                 "cpu_seconds": 0.0, "nonce": request["nonce"]}
        script = request["script"]
        if script == "GARBAGE":
            os.write(1, struct.pack('>I', 9) + b'not json!')
        elif script == "HUGE":
            os.write(1, struct.pack('>I', 0xFFFFFFF0))
        elif script == "WRONG-NONCE":
            send({**reply, "nonce": "0" * 32})
        elif script == "MISSING-FIELDS":
            send({"nonce": request["nonce"]})
        elif script == "BAD-TYPES":
            send({**reply, "stdout": 5})
        else:
            send(reply)
    """
)


def fake_python(tmp_path: Path, missing: list[str]) -> str:
    """An executable that ignores its arguments and runs the fake worker above."""
    worker = tmp_path / "fake_worker.py"
    worker.write_text(FAKE_WORKER.replace("MISSING_LAYERS", repr(missing)))
    launcher = tmp_path / "python"
    launcher.write_text(f"#!/bin/sh\nexec {sys.executable} -I {worker}\n")
    launcher.chmod(0o755)
    return str(launcher)


def test_malformed_frames_fail_one_request_and_restart_that_worker(tmp_path: Path) -> None:
    bad = ["GARBAGE", "HUGE", "WRONG-NONCE", "MISSING-FIELDS", "BAD-TYPES"]
    scripts = [x for b in bad for x in ("ok", b)] + ["ok"]
    with Sandbox(workers=1, python=fake_python(tmp_path, []), limits=SandboxLimits(wall_seconds=2.0)) as box:
        first = box._pool[0].process.pid
        results = box.run(scripts)
        assert box._pool[0].process.pid != first
    for script, result in zip(scripts, results, strict=True):
        if script == "ok":
            assert (result.answer, result.error) == (1.5, None)
        else:
            assert (result.error or "").startswith("sandbox worker sent a malformed reply"), (
                script,
                result.error,
            )
            assert result.error is not None and result.error.endswith("worker restarted")


def test_a_machine_without_every_layer_is_refused_unless_accepted(tmp_path: Path) -> None:
    python = fake_python(tmp_path, ["user_namespace", "pid_namespace"])
    box = Sandbox(workers=1, python=python)
    with pytest.raises(SandboxError, match=r"kernel refused user_namespace, pid_namespace .*best-effort"):
        box.start()
    box.close()
    with Sandbox(workers=1, python=python, isolation="best-effort") as accepted:
        assert accepted.missing_layers == ["user_namespace", "pid_namespace"]
        assert accepted.run_one("print(1.5)").answer == 1.5


# --- the same attacks as an ordinary user ------------------------------------------------------------

ORDINARY_DRIVER = textwrap.dedent(
    """
    import json, struct, subprocess, sys
    worker = subprocess.Popen([sys.executable, '-I', sys.argv[1]], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    def send(obj):
        body = json.dumps(obj).encode()
        worker.stdin.write(struct.pack('>I', len(body)) + body)
        worker.stdin.flush()
    def recv():
        size = struct.unpack('>I', worker.stdout.read(4))[0]
        return json.loads(worker.stdout.read(size))
    send({'preload': ['math'], 'allow_read': [], 'isolation': 'kernel'})
    hello = recv()
    limits = {'wall_seconds': 5.0, 'cpu_seconds': 3.0, 'memory_mb': 1024, 'max_output_bytes': 100000,
              'max_file_bytes': 100000, 'max_open_files': 64}
    replies = []
    for script in json.load(open(sys.argv[2])):
        send({'nonce': 'n', 'script': script, 'limits': limits})
        replies.append(recv())
    worker.stdin.close()
    worker.wait()
    print(json.dumps({'hello': hello, 'replies': replies}))
    """
)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to start a process as an ordinary user")
@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv (util-linux)")
def test_the_boundary_holds_for_an_ordinary_user_too(bystander: subprocess.Popen[bytes]) -> None:
    work = Path(tempfile.mkdtemp(prefix="geodsl-ordinary-user-"))  # pytest's own tmp dirs are root-only
    try:
        _ordinary_user_attacks(work, bystander)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _ordinary_user_attacks(tmp_path: Path, bystander: subprocess.Popen[bytes]) -> None:
    # The worker is standard library only, so the system interpreter runs it for a user who cannot read
    # this checkout's virtual environment (which may live under /root).
    python = "/usr/bin/python3"
    if not Path(python).exists():
        pytest.skip("needs /usr/bin/python3 for the ordinary user")
    worker_file = Path(__file__).resolve().parents[2] / "packages/geodsl/src/geodsl/sandbox/_worker.py"
    staged = tmp_path / "sandbox"
    shutil.copytree(worker_file.parent, staged, ignore=shutil.ignore_patterns("__pycache__"))
    secret = tmp_path / "secret.txt"
    secret.write_text("hunter2")
    secret.chmod(0o644)  # readable by the user on the host: the sandbox must still hide it
    tmp_path.chmod(0o755)
    scripts = [
        attack(f"attempt('read', lambda: open({str(secret)!r}).read())"),
        attack(f"attempt('kill', lambda: os.kill({bystander.pid}, 9))"),
        attack("attempt('fds', lambda: os.listdir('/proc/1/fd'))"),
        attack("attempt('uid', lambda: str(os.getuid()))"),
        "print(2 ** 0.5)",
    ]
    (tmp_path / "scripts.json").write_text(json.dumps(scripts))
    (tmp_path / "driver.py").write_text(ORDINARY_DRIVER)
    out = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", python, "-I",
         str(tmp_path / "driver.py"), str(staged / "_worker.py"), str(tmp_path / "scripts.json")],
        capture_output=True, text=True, timeout=120, check=True, cwd=str(tmp_path),
    )  # fmt: skip
    report = json.loads(out.stdout)
    assert report["hello"]["missing"] == [] and report["hello"]["features"]["host_uid"] == 65534
    got = [
        outcome_of(reply["stdout"]) if reply["error"] is None else reply["error"]
        for reply in report["replies"][:4]
    ]
    assert (
        got[0] == {"read": "ENOENT"}
        and got[1]["kill"] in ("EPERM", "ESRCH")
        and got[2]["fds"] in ("EACCES", "EPERM")
    )
    assert got[3] == {"uid": "0"}
    assert report["replies"][4]["stdout"].strip() == str(2**0.5)
    assert bystander.poll() is None and secret.read_text() == "hunter2"
