"""Which checkpoint a resumed run starts from (no heavy imports)."""

from __future__ import annotations

from pathlib import Path

__all__ = ("latest_checkpoint",)


def latest_checkpoint(output_dir: str | Path, processes: int = 1) -> Path | None:
    """The highest-numbered complete ``checkpoint-N`` folder in ``output_dir``, or None.

    A run stopped while it saved leaves a folder without ``trainer_state.json``, which the main process
    writes last (after the weights, the optimizer and its own RNG state); with several processes each
    one's ``rng_state_K.pth`` must be there too. Resuming skips such a folder and takes the one before.

    Args:
        output_dir: The run's output folder.
        processes: How many processes train (each saves its own RNG state).

    Returns:
        The checkpoint folder, or None when there is no complete one.
    """
    found: list[tuple[int, Path]] = []
    for folder in Path(output_dir).glob("checkpoint-*"):
        step = folder.name.removeprefix("checkpoint-")
        if step.isdigit() and folder.is_dir() and _complete(folder, processes):
            found.append((int(step), folder))
    return max(found)[1] if found else None


def _complete(folder: Path, processes: int) -> bool:
    """Whether every file of a checkpoint was written (see ``latest_checkpoint``)."""
    if not (folder / "trainer_state.json").is_file():
        return False
    return processes <= 1 or all((folder / f"rng_state_{k}.pth").is_file() for k in range(processes))
