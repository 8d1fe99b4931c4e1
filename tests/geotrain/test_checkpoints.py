"""Which checkpoint a resumed run starts from: the latest one whose save finished."""

from __future__ import annotations

from pathlib import Path

import geotrain


def _checkpoint(out: Path, step: int, *files: str) -> Path:
    folder = out / f"checkpoint-{step}"
    folder.mkdir(parents=True)
    for name in files:
        (folder / name).write_bytes(b"x")
    return folder


def test_the_latest_whole_checkpoint_is_chosen_and_cut_saves_are_passed_over(tmp_path: Path) -> None:
    assert geotrain.latest_checkpoint(tmp_path) is None
    two = _checkpoint(
        tmp_path, 2, "model.safetensors", "rng_state_0.pth", "rng_state_1.pth", "trainer_state.json"
    )
    ten = _checkpoint(tmp_path, 10, "model.safetensors", "rng_state_0.pth", "trainer_state.json")
    _checkpoint(tmp_path, 12, "model.safetensors", "rng_state_0.pth", "rng_state_1.pth")  # no trainer state
    (tmp_path / "checkpoint-20").write_text("a file, not a folder")
    _checkpoint(tmp_path, 30, "trainer_state.json").rename(tmp_path / "checkpoint-x")
    # numeric order (10 after 2), not name order; one process needs only the trainer state
    assert geotrain.latest_checkpoint(tmp_path) == ten
    # two processes: the second one's RNG state is missing from checkpoint-10
    assert geotrain.latest_checkpoint(tmp_path, processes=2) == two
