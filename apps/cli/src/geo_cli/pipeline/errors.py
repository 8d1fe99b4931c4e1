"""Errors of ``geo pipeline``: every failure names the config, the stage or the file at fault."""

from __future__ import annotations

__all__ = ("PipelineConfigError", "PipelineError", "StageFailedError", "StageOrderError")


class PipelineError(Exception):
    """Base of every pipeline error."""


class PipelineConfigError(PipelineError):
    """A pipeline config cannot be read or is invalid (the message names the file and the field)."""


class StageOrderError(PipelineError):
    """``--from``/``--until`` name an unknown stage, or a stage's upstream outputs are missing or stale."""


class StageFailedError(PipelineError):
    """A stage raised while running; its partial outputs are kept so the next run resumes."""
