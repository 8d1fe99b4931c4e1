"""A run killed with SIGKILL mid-way resumes from its finished shards and ends with the same files."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from geosynth.mts import MTSConfig, run_mts

SCRIPT = """
import sys
from pathlib import Path
from geosynth.mts import MTSConfig, run_mts
run_mts(Path(sys.argv[1]), Path(sys.argv[2]), MTSConfig(jobs=1, shard_size=1, mixtures=False))
"""


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="needs POSIX process groups")
def test_sigkill_midway_then_rerun(tmp_path: Path, mini_dataset: Path) -> None:
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(mini_dataset), str(out)], start_new_session=True
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if len(list((out / "work" / "verify").glob("*.jsonl"))) >= 2:
            break
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)  # the run and its sandbox workers, at once
    proc.wait()
    finished_before = len(list((out / "work" / "verify").glob("*.jsonl")))
    assert finished_before >= 2
    run = run_mts(mini_dataset, out, MTSConfig(jobs=1, shard_size=1, mixtures=False))
    assert run.reused["verify"] >= finished_before
    assert run.computed["verify"] + run.reused["verify"] == 8
    clean = tmp_path / "clean"
    run_mts(mini_dataset, clean, MTSConfig(jobs=1, shard_size=1, mixtures=False))
    for name in ("traces/pal.jsonl", "traces/program.jsonl", "drops.jsonl", "pa/pal.jsonl", "stats.json"):
        assert (out / name).read_bytes() == (clean / name).read_bytes()
    assert not list(out.rglob("*.tmp"))
