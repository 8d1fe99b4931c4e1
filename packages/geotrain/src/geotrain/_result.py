"""What a training run returns."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ("TrainResult",)


class TrainResult(BaseModel):
    """Where a run wrote its outputs, and what it logged."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    output_dir: str
    """The run folder (checkpoints, ``geotrain_config.json``)."""
    final_dir: str
    """The final model (full weights, or the LoRA adapter) with its processor."""
    global_step: int
    """Optimizer steps completed."""
    log_history: tuple[dict[str, float], ...]
    """Every log entry: ``loss``, ``perception_loss``, ``reasoning_loss``, ``verdict_loss``, ``learning_rate``..."""

    def losses(self, key: str = "loss") -> list[float]:
        """The logged values of ``key`` in step order (e.g. ``loss``, ``perception_loss``)."""
        return [entry[key] for entry in self.log_history if key in entry]
