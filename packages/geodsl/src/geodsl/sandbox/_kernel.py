"""Kernel-enforced isolation for the sandbox: namespaces, a private root, no capabilities, seccomp.

Loaded by ``_worker.py`` by file path (standard library only, no geodsl imports). The
boundary is the kernel, not the interpreter: a script that owns its whole interpreter
(ctypes, patched modules, native code) still meets every layer below.

Per worker, once, before it serves (:func:`enter_isolation`):

* a **user namespace** (or, for root where user namespaces are off, plain root privileges
  dropped to ``nobody`` afterwards): scripts run as an unprivileged host uid;
* a **PID namespace**: the worker is PID 1 of its own tree and host processes are invisible;
  when the worker dies the kernel kills everything in it;
* a **mount namespace** whose root is a fresh tmpfs holding only what Python needs, bound
  read-only (the interpreter's trees, ``sys.path``, shared libraries, four devices, a private
  ``/proc`` of the PID namespace), plus a size-capped scratch tmpfs; the host's root is
  unmounted, so no path (``..``, ``dir_fd``, ``openat2``, symlinks, ``/proc/<pid>/root``)
  leads back to it;
* an empty **network**, IPC and UTS namespace;
* every **capability** dropped (bounding set too), ``no_new_privs``, and the process marked
  non-dumpable, so nothing the worker runs can ptrace it or open ``/proc/1/fd``, ``/mem``,
  ``/root`` or ``/environ``.

Per script, in the forked child (:func:`seccomp_filter`): a seccomp **allowlist**: syscalls not
named in :data:`ALLOWED_SYSCALLS` fail with ``EPERM`` (``clone3`` with ``ENOSYS``, so the C
library falls back to ``clone``, which is allowed only for threads); signals only to the script
itself; ioctls only from a short read-only list; any other syscall ABI refused.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import struct
import sys
from collections.abc import Iterable, Sequence
from typing import Any

# --- constants (x86-64 Linux) ------------------------------------------------------------------------

_CLONE_NEWNS, _CLONE_NEWUTS, _CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
_CLONE_NEWUSER, _CLONE_NEWPID, _CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
_CLONE_NEWCGROUP = 0x02000000
_CLONE_THREAD = 0x00010000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 0x20, 0x1000, 0x4000, 0x40000
_MNT_DETACH = 0x2
_PR_SET_PDEATHSIG, _PR_SET_DUMPABLE, _PR_CAPBSET_DROP = 1, 4, 24
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_PR_SET_SECUREBITS = 28
_SECURE_ALL_LOCKED = 0x2B  # SECBIT_NOROOT and its lock, NO_SETUID_FIXUP and KEEP_CAPS locked off
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
_SYS_CAPSET, _SYS_PIVOT_ROOT = 126, 155
_NOBODY = 65534

SCRATCH_TMPFS_MB = 512
"""Size of the tmpfs that holds a worker's scratch directories (RAM, used only as files are written)."""
SCRATCH = "/scratch"
"""Where the scratch tmpfs sits inside the sandbox root."""
DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random")
"""Device nodes bound into the sandbox root."""
LIBRARY_DIRS = ("/usr/lib", "/usr/lib64", "/usr/lib32", "/lib", "/lib64", "/lib32", "/usr/share/zoneinfo")
"""System trees bound read-only (shared libraries a C extension may load; time zones)."""
LIBRARY_FILES = ("/etc/ld.so.cache", "/etc/localtime")
"""Single files bound read-only (the dynamic loader's cache; the local time zone)."""

LAYERS = ("user_namespace", "pid_namespace", "mount_namespace", "network_namespace", "no_capabilities")
"""The per-worker layers; a worker missing any of them is in the weaker mode."""

_AUDIT_ARCH_X86_64 = 0xC000003E
_X32_BIT = 0x40000000
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_EPERM, _ENOSYS = 1, 38
_LD_ABS_W, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_OFFSET_NR, _OFFSET_ARCH, _OFFSET_ARG0, _OFFSET_ARG1 = 0, 4, 16, 24

ALLOWED_SYSCALLS: dict[str, int] = {
    # most frequent first: the filter tests them in order
    "read": 0, "write": 1, "mmap": 9, "munmap": 11, "brk": 12, "futex": 202, "close": 3, "fstat": 5,
    "newfstatat": 262, "openat": 257, "lseek": 8, "mprotect": 10, "mremap": 25, "madvise": 28,
    "rt_sigaction": 13, "rt_sigprocmask": 14, "rt_sigreturn": 15, "getdents64": 217, "statx": 332,
    "clock_gettime": 228, "getpid": 39, "gettid": 186, "getrandom": 318, "fcntl": 72,
    "pread64": 17, "pwrite64": 18, "readv": 19, "writev": 20, "open": 2, "stat": 4, "lstat": 6,
    "poll": 7, "ppoll": 271, "select": 23, "pselect6": 270, "access": 21, "faccessat": 269,
    "faccessat2": 439, "readlink": 89, "readlinkat": 267, "getcwd": 79, "chdir": 80, "fchdir": 81,
    "dup": 32, "dup2": 33, "dup3": 292, "pipe": 22, "pipe2": 293, "sched_yield": 24, "msync": 26,
    "mincore": 27, "nanosleep": 35, "clock_nanosleep": 230, "clock_getres": 229, "gettimeofday": 96,
    "time": 201, "times": 100, "getitimer": 36, "setitimer": 38, "alarm": 37, "pause": 34,
    "exit": 60, "exit_group": 231, "wait4": 61, "uname": 63, "flock": 73, "fsync": 74,
    "fdatasync": 75, "truncate": 76, "ftruncate": 77, "fallocate": 285, "fadvise64": 221,
    "readahead": 187, "getdents": 78, "rename": 82, "renameat": 264, "renameat2": 316, "mkdir": 83,
    "mkdirat": 258, "rmdir": 84, "creat": 85, "link": 86, "linkat": 265, "unlink": 87,
    "unlinkat": 263, "symlink": 88, "symlinkat": 266, "chmod": 90, "fchmod": 91, "fchmodat": 268,
    "umask": 95, "utimes": 235, "utimensat": 280, "futimesat": 261, "statfs": 137, "fstatfs": 138,
    "sendfile": 40, "copy_file_range": 326, "getrlimit": 97, "prlimit64": 302, "getrusage": 98,
    "sysinfo": 99, "getuid": 102, "getgid": 104, "geteuid": 107, "getegid": 108, "getppid": 110,
    "getpgrp": 111, "getpgid": 121, "getsid": 124, "getgroups": 115, "getresuid": 118,
    "getresgid": 120, "capget": 125, "getpriority": 140, "rt_sigpending": 127,
    "rt_sigtimedwait": 128, "rt_sigsuspend": 130, "sigaltstack": 131, "sched_getaffinity": 204,
    "sched_getparam": 143, "sched_getscheduler": 145, "sched_get_priority_max": 146,
    "sched_get_priority_min": 147, "getcpu": 309, "arch_prctl": 158, "prctl": 157,
    "set_tid_address": 218, "set_robust_list": 273, "get_robust_list": 274, "rseq": 334,
    "restart_syscall": 219, "membarrier": 324, "memfd_create": 319, "eventfd": 284, "eventfd2": 290,
    "epoll_create": 213, "epoll_create1": 291, "epoll_ctl": 233, "epoll_wait": 232,
    "epoll_pwait": 281, "epoll_pwait2": 441, "close_range": 436,
}  # fmt: skip
"""x86-64 syscalls a script may make without conditions; every other one fails (EPERM)."""

CONDITIONAL_SYSCALLS: dict[str, int] = {"clone": 56, "kill": 62, "tgkill": 234, "ioctl": 16}
"""Allowed with conditions: ``clone`` for threads only; ``kill``/``tgkill`` to the script itself;
``ioctl`` for the read-only requests in :data:`ALLOWED_IOCTLS`."""

ALLOWED_IOCTLS: dict[str, int] = {
    "TCGETS": 0x5401,
    "TIOCGWINSZ": 0x5413,
    "FIONREAD": 0x541B,
    "FIONBIO": 0x5421,
    "FIONCLEX": 0x5450,
    "FIOCLEX": 0x5451,
}
_CLONE3 = 435


class IsolationError(OSError):
    """A layer could not be set up (the worker reports it as missing)."""


# --- libc --------------------------------------------------------------------------------------------


def load_libc() -> Any:
    """The C library with ``errno`` kept, or ``None`` where it cannot be loaded."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
    libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
    libc.syscall.restype = ctypes.c_long
    return libc


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise IsolationError(err, f"{what}: {os.strerror(err)}")


# --- seccomp (per script) ----------------------------------------------------------------------------


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]  # ctypes layout


_Instruction = tuple[int, str | int, str | int, int]
"""(code, jt, jf, k) with jump targets as labels or relative offsets."""


def _program(self_pid: int) -> list[tuple[int, int, int, int]]:
    """The filter as (code, jt, jf, k) instructions; symbolic jump targets are resolved at the end."""
    body: list[_Instruction] = [
        (_LD_ABS_W, 0, 0, _OFFSET_ARCH),
        (_JEQ, 1, 0, _AUDIT_ARCH_X86_64),
        (_RET, 0, 0, _RET_ERRNO | _EPERM),
        (_LD_ABS_W, 0, 0, _OFFSET_NR),
        (_JGE, "deny", 0, _X32_BIT),
        *((_JEQ, "allow", 0, nr) for nr in ALLOWED_SYSCALLS.values()),
        (_JEQ, "clone", 0, CONDITIONAL_SYSCALLS["clone"]),
        (_JEQ, "signal", 0, CONDITIONAL_SYSCALLS["kill"]),
        (_JEQ, "signal", 0, CONDITIONAL_SYSCALLS["tgkill"]),
        (_JEQ, "ioctl", 0, CONDITIONAL_SYSCALLS["ioctl"]),
        (_JEQ, "enosys", "deny", _CLONE3),
    ]
    labels: dict[str, int] = {}
    labels["clone"] = len(body)
    body += [(_LD_ABS_W, 0, 0, _OFFSET_ARG0), (_JSET, "allow", "deny", _CLONE_THREAD)]
    labels["signal"] = len(body)
    body += [(_LD_ABS_W, 0, 0, _OFFSET_ARG0), (_JEQ, "allow", "deny", self_pid)]
    labels["ioctl"] = len(body)
    body += [(_LD_ABS_W, 0, 0, _OFFSET_ARG1)]
    body += [(_JEQ, "allow", 0, request) for request in ALLOWED_IOCTLS.values()]
    body += [(_RET, 0, 0, _RET_ERRNO | _EPERM)]
    labels.update(allow=len(body), deny=len(body) + 1, enosys=len(body) + 2)
    tail = [(_RET, 0, 0, _RET_ALLOW), (_RET, 0, 0, _RET_ERRNO | _EPERM), (_RET, 0, 0, _RET_ERRNO | _ENOSYS)]

    def jump(index: int, target: str | int) -> int:
        offset = target if isinstance(target, int) else labels[target] - index - 1
        if not 0 <= offset <= 255:
            raise ValueError(f"seccomp jump out of range at instruction {index}")
        return offset

    return [(code, jump(i, jt), jump(i, jf), k) for i, (code, jt, jf, k) in enumerate(body)] + tail


def build_filter(self_pid: int | None = None) -> bytes | None:
    """The packed allowlist filter for a process whose pid is ``self_pid`` (default: the caller).

    ``None`` on a machine that is not x86-64 (no filter is installed there).
    """
    if platform.machine() not in ("x86_64", "AMD64"):
        return None
    pid = os.getpid() if self_pid is None else self_pid
    return b"".join(struct.pack("=HBBI", *instruction) for instruction in _program(pid))


def install(libc: Any, packed: bytes) -> None:
    """Install a filter on the calling thread and its future threads (irreversible).

    Raises:
        OSError: if the kernel refuses ``PR_SET_NO_NEW_PRIVS`` or the filter.
    """
    buffer = ctypes.create_string_buffer(packed, len(packed))
    prog = _SockFprog(len(packed) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
    _check(libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0), "seccomp")


def seccomp_works(libc: Any) -> bool:
    """Whether a throw-away child can install the filter and still run Python afterwards."""
    if libc is None or build_filter() is None:
        return False
    pid = os.fork()
    if pid == 0:  # pragma: no cover - probe child
        code = 1
        try:
            install(libc, build_filter() or b"")
            code = 0 if os.getpid() > 0 and sum(range(10)) == 45 else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


# --- capabilities -------------------------------------------------------------------------------------


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]  # ctypes layout


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def drop_bounding_set(libc: Any) -> None:
    """Empty the bounding and ambient sets and lock root's special treatment off (needs CAP_SETPCAP).

    Calls the kernel refuses (CAP_SETPCAP already gone) are skipped: :func:`drop_capabilities`
    and :func:`capabilities_empty` tell what holds.
    """
    last_cap = 63
    with (
        contextlib.suppress(OSError, ValueError),
        open("/proc/sys/kernel/cap_last_cap", encoding="utf-8") as f,
    ):
        last_cap = int(f.read())
    for cap in range(last_cap + 1):
        libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    libc.prctl(_PR_SET_SECUREBITS, _SECURE_ALL_LOCKED, 0, 0, 0)


def drop_capabilities(libc: Any) -> None:
    """Drop every capability for good: bounding and ambient sets, then effective/permitted/inheritable.

    Raises:
        IsolationError: if the kernel refuses to clear the permitted set or ``no_new_privs``.
    """
    drop_bounding_set(libc)
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(libc.syscall(_SYS_CAPSET, ctypes.byref(header), ctypes.byref(data)), "capset")
    _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")


def capabilities_empty() -> bool:
    """Whether the calling process holds no capability in any set (read from /proc/self/status)."""
    try:
        with open("/proc/self/status", encoding="utf-8") as status:
            fields = dict(line.split(":", 1) for line in status if ":" in line)
    except OSError:
        return False
    return all(
        int(fields.get(name, "1").strip(), 16) == 0 for name in ("CapEff", "CapPrm", "CapBnd", "CapAmb")
    )


# --- namespaces and the private root (per worker) -----------------------------------------------------


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def map_user(pid: int, host_uid: int, host_gid: int, *, allow_setgroups: bool) -> None:
    """Map uid/gid 0 inside ``pid``'s new user namespace to ``host_uid``/``host_gid`` outside.

    Run by the parent, which is still in the outer namespace (root may map any uid there). Root
    leaves ``setgroups`` allowed so that the child can drop its supplementary groups; anyone
    else must deny it before a gid map is accepted.
    """
    if not allow_setgroups:
        with contextlib.suppress(FileNotFoundError):
            _write(f"/proc/{pid}/setgroups", "deny")
    _write(f"/proc/{pid}/uid_map", f"0 {host_uid} 1\n")
    _write(f"/proc/{pid}/gid_map", f"0 {host_gid} 1\n")


def host_pid() -> int:
    """This process's pid in the outermost PID namespace this /proc shows (before a new /proc)."""
    with contextlib.suppress(OSError, ValueError), open("/proc/self/status", encoding="utf-8") as status:
        for line in status:
            if line.startswith("NSpid:"):
                return int(line.split()[1])
    return os.getpid()


def _mkdirs(path: str) -> None:
    os.makedirs(path, mode=0o755, exist_ok=True)


def _touch(path: str) -> None:
    _mkdirs(os.path.dirname(path))
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o644))


def _collapse(paths: Iterable[str]) -> list[str]:
    """Existing absolute paths with every path below another one dropped, shortest first."""
    kept: list[str] = []
    for path in sorted({os.path.normpath(p) for p in paths if p and os.path.isabs(p)}, key=len):
        if path != "/" and not any(path == k or path.startswith(k + "/") for k in kept):
            kept.append(path)
    return kept


class RootPlan:
    """What the private root holds, opened by path *before* privileges change.

    Every source is opened with ``O_PATH`` while the worker can still reach it (for root, the
    tree under ``/root`` stops being reachable once it is ``nobody``); the bind mounts then
    use ``/proc/self/fd/N``, so nothing is looked up by path again.
    """

    def __init__(self, trees: Sequence[str]) -> None:
        self.binds: list[tuple[str, int, bool]] = []  # (target, O_PATH fd, is a directory)
        self.links: list[tuple[str, str]] = []  # (path, target) of top-level symlinks such as /lib -> usr/lib
        for path in (*trees, *LIBRARY_DIRS):
            for real in self._expand(path):
                self._add(real, directory=True)
        for path in (*LIBRARY_FILES, *DEVICES):
            if os.path.exists(path):
                self._add(os.path.realpath(path), directory=False, target=path)

    def _expand(self, path: str) -> list[str]:
        """The real directories behind ``path``; a symlinked top-level dir becomes a link in the root."""
        if not os.path.isdir(path):
            return []
        if os.path.islink(path) and os.path.dirname(path) == "/":
            self.links.append((path, os.readlink(path)))
            return []
        real = os.path.realpath(path)
        return [real] if real == path else [real, path]

    def _add(self, source: str, *, directory: bool, target: str | None = None) -> None:
        dest = target or source
        if any(dest == t or dest.startswith(t.rstrip("/") + "/") for t, _, is_dir in self.binds if is_dir):
            return
        try:
            fd = os.open(source, os.O_PATH | os.O_CLOEXEC | (os.O_DIRECTORY if directory else 0))
        except OSError:
            return
        self.binds.append((dest, fd, directory))

    def close(self) -> None:
        for _, fd, _ in self.binds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.binds.clear()


def _bind_read_only(libc: Any, fd: int, target: str) -> None:
    source = f"/proc/self/fd/{fd}".encode()
    flags = _MS_BIND
    if libc.mount(source, target.encode(), None, flags, None) != 0:
        # a tree with locked submounts may only be bound whole
        _check(libc.mount(source, target.encode(), None, flags | _MS_REC, None), f"bind {target}")
    remount = _MS_BIND | _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV
    if libc.mount(None, target.encode(), None, remount, None) != 0:
        # keep flags the outer namespace locked (noexec, relatime, ...) by adding them back
        with open("/proc/self/mountinfo", encoding="utf-8") as mountinfo:
            options = next((ln.split()[5] for ln in mountinfo if ln.split()[4] == target), "")
        extra = _MS_NOEXEC if "noexec" in options.split(",") else 0
        _check(libc.mount(None, target.encode(), None, remount | extra, None), f"read-only {target}")


def build_root(
    libc: Any, plan: RootPlan, staging: str, *, scratch_owner: int | None, mount_proc: bool
) -> bool:
    """Build the private root on a tmpfs at ``staging`` and pivot into it; returns whether /proc is mounted.

    Must run in a new mount namespace (and a new PID namespace, as its PID 1, for ``/proc``).

    Raises:
        IsolationError: if a mount or the pivot fails.
    """
    _check(libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None), "make / private")
    _check(
        libc.mount(b"tmpfs", staging.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, b"mode=0755,size=16m"),
        "tmpfs root",
    )
    for target, fd, directory in plan.binds:
        inside = staging + target
        _mkdirs(inside) if directory else _touch(inside)
        if target in DEVICES:
            source = f"/proc/self/fd/{fd}".encode()
            _check(libc.mount(source, inside.encode(), None, _MS_BIND, None), f"bind {target}")
            continue
        _bind_read_only(libc, fd, inside)
    for path, target in plan.links:
        if not os.path.lexists(staging + path):
            os.symlink(target, staging + path)
    scratch = staging + SCRATCH
    _mkdirs(scratch)
    owner = "" if scratch_owner is None else f",uid={scratch_owner},gid={scratch_owner}"
    options = f"mode=0700,size={SCRATCH_TMPFS_MB}m{owner}".encode()
    _check(libc.mount(b"tmpfs", scratch.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, options), "scratch tmpfs")
    proc = False
    if mount_proc:
        _mkdirs(staging + "/proc")
        flags = _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
        proc = libc.mount(b"proc", (staging + "/proc").encode(), b"proc", flags, None) == 0
    _mkdirs(staging + "/tmp")
    old = staging + "/.old-root"
    _mkdirs(old)
    _check(libc.syscall(_SYS_PIVOT_ROOT, staging.encode(), old.encode()), "pivot_root")
    os.chdir("/")
    _check(libc.umount2(b"/.old-root", _MNT_DETACH), "detach the old root")
    os.rmdir("/.old-root")
    remount = _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV
    _check(libc.mount(None, b"/", None, remount, None), "read-only root")
    plan.close()
    return proc


def unshare(libc: Any, flags: int) -> bool:
    """``unshare(2)``; whether it worked."""
    return libc is not None and libc.unshare(flags) == 0


NAMESPACE_FLAGS = (
    _CLONE_NEWNS | _CLONE_NEWPID | _CLONE_NEWNET | _CLONE_NEWIPC | _CLONE_NEWUTS | _CLONE_NEWCGROUP
)
USER_NAMESPACE = _CLONE_NEWUSER


def die_with_parent(libc: Any, parent: int) -> None:
    """SIGKILL this process when its parent exits (and at once if it already has)."""
    libc.prctl(_PR_SET_PDEATHSIG, 9, 0, 0, 0)
    if os.getppid() not in (parent, 0):  # 0: the parent is outside this process's PID namespace
        os._exit(1)


def set_non_dumpable(libc: Any) -> None:
    """No ptrace, no /proc/<pid>/{fd,mem,root,environ} for processes without CAP_SYS_PTRACE."""
    _check(libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0), "prctl(PR_SET_DUMPABLE)")


def become_nobody(libc: Any) -> None:
    """Root without a user namespace: switch to uid/gid ``nobody`` (which clears every capability).

    Raises:
        IsolationError: if the switch fails.
    """
    try:
        os.setgroups([])
        os.setresgid(_NOBODY, _NOBODY, _NOBODY)
        os.setresuid(_NOBODY, _NOBODY, _NOBODY)
    except OSError as exc:
        raise IsolationError(exc.errno or 1, f"switch to nobody: {exc}") from exc
    del libc


def python_trees(extra: Sequence[str]) -> list[str]:
    """Directories the interpreter needs (prefixes and ``sys.path``) plus ``extra``, collapsed."""
    candidates = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *sys.path, *extra]
    exe = os.path.realpath(sys.executable)
    candidates.append(os.path.dirname(os.path.dirname(exe)))
    return _collapse(p for p in candidates if p and os.path.isdir(p))
