"""Errors raised by :mod:`geosynth.mts`.

Problems with single records never raise: they become :class:`~geosynth.mts.Drop` entries and the run
goes on. These errors stop a run: a bad configuration, an unreadable input file, an output folder that
belongs to another input, an LLM backend that keeps failing, or Ray workers that do not start or
answer. Finished shards stay on disk, so the next run resumes where this one stopped.
"""

from __future__ import annotations

from geosynth.errors import GeoSynthError

__all__ = ("MTSConfigError", "MTSError", "MTSInputError", "MTSLLMError", "MTSOutputError", "MTSWorkerError")


class MTSError(GeoSynthError):
    """Base class of every error the multi-trace synthesis pipeline raises on purpose."""


class MTSConfigError(MTSError, ValueError):
    """A pipeline or LLM configuration that cannot be used (bad value, unreadable config file)."""


class MTSInputError(MTSError, ValueError):
    """A dataset file that cannot be read at all (missing, not JSON, not a collection of records)."""


class MTSOutputError(MTSError):
    """An output folder that cannot be used (not writable, or holding a run of a different input)."""


class MTSLLMError(MTSError):
    """The LLM backend failed for a whole batch after its own retries (the run stops; rerun to resume)."""


class MTSWorkerError(MTSError):
    """The Ray script workers (``use_ray``) did not start, or did not answer within their time limit."""
