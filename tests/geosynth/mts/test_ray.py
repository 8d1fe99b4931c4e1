"""``use_ray``: verification on Ray actors gives the same outputs as the local pool."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from geosynth.mts import MTSConfig, MTSConfigError, run_mts


def test_without_ray_installed_the_option_fails_with_the_install_command(tmp_path: Path,
                                                                         mini_dataset: Path) -> None:
    if importlib.util.find_spec("ray") is not None:
        pytest.skip("ray is installed")
    with pytest.raises(MTSConfigError, match="pip install"):
        run_mts(mini_dataset, tmp_path / "out", MTSConfig(use_ray=True))


@pytest.mark.slow
def test_ray_and_local_runs_write_the_same_files(tmp_path: Path, mini_dataset: Path) -> None:
    pytest.importorskip("ray")
    local = run_mts(mini_dataset, tmp_path / "local", MTSConfig(jobs=1, mixtures=False))
    remote = run_mts(mini_dataset, tmp_path / "ray", MTSConfig(jobs=2, mixtures=False, use_ray=True))
    assert remote.stats == local.stats
    for name in ("traces/pal.jsonl", "drops.jsonl", "pa/pal.jsonl"):
        assert (tmp_path / "ray" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()
