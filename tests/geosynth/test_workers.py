"""Worker processes: forked, except while this process drives Ray (a fork there can hang); races of parts."""

from __future__ import annotations

import functools
import multiprocessing
import os
import sys
import threading
import types
from multiprocessing.connection import Connection
from pathlib import Path

import pytest

from geosynth.engine import SolveResult, race_isolated, worker_context


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork on this platform")
def test_fork_unless_a_ray_driver_runs_here(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = types.ModuleType("ray")
    running = False
    fake.is_initialized = lambda: running  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ray", fake)
    assert worker_context().get_start_method() == "fork"  # Ray imported but not started
    running = True
    assert worker_context().get_start_method() == "spawn"
    monkeypatch.delitem(sys.modules, "ray")
    assert worker_context().get_start_method() == "fork"


def _part(item: tuple[str, bool | None], _limit: float, conn: Connection, *, pids: Path) -> None:
    """A part of a race: writes its pid, then reports ``solved`` at once or blocks until killed."""
    name, solved = item
    (pids / name).write_text(str(os.getpid()))
    if solved is None:
        threading.Event().wait()
    conn.send(
        SolveResult(name="p", solved=bool(solved), seconds=0.0, steps=1 if solved else 0).model_dump_json()
    )
    conn.close()


def test_the_first_solved_part_wins_and_the_others_are_stopped(tmp_path: Path) -> None:
    work = functools.partial(_part, pids=tmp_path)
    parts: list[tuple[str, bool | None]] = [("blocked", None), ("failed", False), ("solver", True)]
    result = race_isolated(parts, "p", work, 120.0)
    assert result.solved and result.steps == 1 and not result.timed_out
    blocked = int((tmp_path / "blocked").read_text())
    with pytest.raises(ProcessLookupError):  # killed and reaped, not left running
        os.kill(blocked, 0)


def test_a_race_nobody_wins_reports_a_stopped_part(tmp_path: Path) -> None:
    work = functools.partial(_part, pids=tmp_path)
    result = race_isolated([("failed", False), ("blocked", None)], "p", work, 1.0)
    assert not result.solved and result.timed_out and result.name == "p"
