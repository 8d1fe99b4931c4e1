"""Worker processes are forked, except while this process drives Ray (a fork there can hang)."""

from __future__ import annotations

import multiprocessing
import sys
import types

import pytest

from geosynth.engine import worker_context


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
