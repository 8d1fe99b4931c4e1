"""Kernel-level isolation for the sandbox worker: namespaces and a seccomp filter.

Loaded by ``_worker.py`` by file path (standard library only, no geodsl imports). Every
layer is best effort: a function returns ``False``/``None`` where the kernel or the
privileges do not allow it, and the worker reports what is active.

* :func:`isolate_network`: an empty network namespace for the worker and its children.
* :func:`read_only_filesystem`: a private mount namespace where every mount is read-only
  except a size-capped tmpfs that holds the scratch directories.
* :func:`seccomp_installer`: a classic-BPF seccomp filter (x86-64 only; any other ABI,
  including x32 and 32-bit compat calls, is refused) that returns ``EPERM`` for process
  creation, signals, sockets and a few administrative calls. ``clone`` is allowed only
  with ``CLONE_THREAD`` (threads, not processes), and ``clone3`` gets ``ENOSYS`` so that
  the C library falls back to ``clone``. Unlike the audit hook, these layers hold
  against native code too.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import re
import struct
from collections.abc import Callable
from typing import Any

_CLONE_NEWNET = 0x40000000
_CLONE_NEWNS = 0x00020000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 0x20, 0x1000, 0x4000, 0x40000
_KEPT_MOUNT_FLAGS = {
    "nosuid": _MS_NOSUID,
    "nodev": _MS_NODEV,
    "noexec": _MS_NOEXEC,
    "noatime": 0x400,
    "nodiratime": 0x800,
    "relatime": 0x200000,
}
SCRATCH_TMPFS_MB = 512
"""Size of the tmpfs that holds a worker's scratch directories (RAM, used only as files are written)."""
_AUDIT_ARCH_X86_64 = 0xC000003E
_X32_BIT = 0x40000000
_CLONE_THREAD = 0x00010000
_CLONE, _CLONE3 = 56, 435
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_EPERM, _ENOSYS = 1, 38
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
_LD_ABS_W, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_OFFSET_NR, _OFFSET_ARCH, _OFFSET_ARG0 = 0, 4, 16

DENIED_SYSCALLS: dict[str, int] = {
    "socket": 41,
    "connect": 42,
    "accept": 43,
    "sendto": 44,
    "bind": 49,
    "listen": 50,
    "accept4": 288,
    "fork": 57,
    "vfork": 58,
    "execve": 59,
    "execveat": 322,
    "kill": 62,
    "tkill": 200,
    "tgkill": 234,
    "ptrace": 101,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "chroot": 161,
    "pivot_root": 155,
    "mount": 165,
    "umount2": 166,
    "unshare": 272,
    "setns": 308,
    "swapon": 167,
    "swapoff": 168,
    "reboot": 169,
    "init_module": 175,
    "delete_module": 176,
    "finit_module": 313,
    "kexec_load": 246,
    "bpf": 321,
    "perf_event_open": 298,
    "userfaultfd": 323,
    "open_by_handle_at": 304,
    "keyctl": 250,
    "add_key": 248,
    "request_key": 249,
}
"""x86-64 syscalls a sandboxed script may not make (they fail with EPERM)."""


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]  # ctypes layout


def _program() -> list[tuple[int, int, int, int]]:
    """The filter as (code, jt, jf, k) instructions; jumps are resolved from the labels below."""
    denied = sorted(DENIED_SYSCALLS.values())
    body: list[tuple[int, str | int, str | int, int]] = [
        (_LD_ABS_W, 0, 0, _OFFSET_ARCH),
        (_JEQ, 1, 0, _AUDIT_ARCH_X86_64),
        (_RET, 0, 0, _RET_ERRNO | _EPERM),
        (_LD_ABS_W, 0, 0, _OFFSET_NR),
        (_JGE, "deny", 0, _X32_BIT),
        *((_JEQ, "deny", 0, nr) for nr in denied),
        (_JEQ, "enosys", 0, _CLONE3),
        (_JEQ, 0, "allow", _CLONE),
        (_LD_ABS_W, 0, 0, _OFFSET_ARG0),
        (_JSET, "allow", "deny", _CLONE_THREAD),
    ]
    labels = {"allow": len(body), "deny": len(body) + 1, "enosys": len(body) + 2}
    tail = [(_RET, 0, 0, _RET_ALLOW), (_RET, 0, 0, _RET_ERRNO | _EPERM), (_RET, 0, 0, _RET_ERRNO | _ENOSYS)]

    def jump(index: int, target: str | int) -> int:
        return target if isinstance(target, int) else labels[target] - index - 1

    return [(code, jump(i, jt), jump(i, jf), k) for i, (code, jt, jf, k) in enumerate(body)] + tail


def build_filter() -> bytes | None:
    """The packed filter, or ``None`` on a machine that is not x86-64 (no filter is installed there)."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return None
    return b"".join(struct.pack("=HBBI", *instruction) for instruction in _program())


def install(libc: Any, packed: bytes) -> None:
    """Install the filter on the calling process (irreversible; inherited by its threads).

    Raises:
        OSError: if the kernel refuses ``PR_SET_NO_NEW_PRIVS`` or the filter.
    """
    buffer = ctypes.create_string_buffer(packed, len(packed))
    prog = _SockFprog(len(packed) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")


def load_libc() -> Any:
    """The C library, or ``None`` where it cannot be loaded."""
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def seccomp_installer(libc: Any) -> Callable[[], None] | None:
    """A function that installs the filter on the calling process, if a throw-away child shows that it works."""
    packed = build_filter() if libc is not None else None
    if packed is None:
        return None

    def install_filter() -> None:
        install(libc, packed)

    pid = os.fork()
    if pid == 0:  # pragma: no cover - probe child
        code = 1
        try:
            install_filter()
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return install_filter if os.waitstatus_to_exitcode(status) == 0 else None


def _mount_points() -> list[tuple[str, str]]:
    """(mount point, per-mount options) of every mount, shortest path first."""
    points: list[tuple[str, str]] = []
    with open("/proc/self/mountinfo", encoding="utf-8") as mountinfo:
        for line in mountinfo:
            fields = line.split()
            path = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), fields[4])
            points.append((path, fields[5]))
    return sorted(points, key=lambda p: len(p[0]))


def read_only_filesystem(libc: Any, base: str) -> bool:
    """Give this worker a private mount namespace: everything read-only except a tmpfs at ``base``.

    Best effort (needs CAP_SYS_ADMIN). Returns whether a write next to ``base`` now fails
    with EROFS, i.e. whether the layer is verified to work.
    """
    if libc is None or libc.unshare(_CLONE_NEWNS) != 0:
        return False
    mount = libc.mount
    mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
    if mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        return False
    size = f"mode=0700,size={SCRATCH_TMPFS_MB}m".encode()
    if mount(b"tmpfs", base.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, size) != 0:
        return False
    for path, options in _mount_points():
        if path == base:
            continue
        kept = sum(flag for name, flag in _KEPT_MOUNT_FLAGS.items() if name in options.split(","))
        mount(None, path.encode(), None, _MS_BIND | _MS_REMOUNT | _MS_RDONLY | kept, None)
    probe = os.path.join(os.path.dirname(base), f".geodsl-sandbox-probe-{os.getpid()}")
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT, 0o600))
    except OSError as exc:
        return exc.errno == errno.EROFS
    os.unlink(probe)
    return False


def isolate_network(libc: Any) -> bool:
    """Move this worker (and so every child) into an empty network namespace, where permitted."""
    return libc is not None and libc.unshare(_CLONE_NEWNET) == 0
