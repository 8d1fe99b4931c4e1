"""The geoprm error hierarchy.

Every error geoprm raises on purpose derives from :class:`GeoPRMError`, so a caller (the CLI's single
error boundary, for instance) can catch the package's failures in one place.
"""

from __future__ import annotations


class GeoPRMError(Exception):
    """Base class of every error geoprm raises on purpose."""


class CritiqueParseError(GeoPRMError, ValueError):
    """A critique's text form that the strict parser cannot read.

    Attributes:
        line: 1-based line number of the offending line in the parsed text, or None when the problem is
            not tied to one line (an empty text, for instance).
        reason: the problem, without the line prefix.
    """

    def __init__(self, reason: str, *, line: int | None = None) -> None:
        self.line = line
        self.reason = reason
        where = f"line {line}: " if line is not None else ""
        super().__init__(f"{where}{reason}")


class PromptError(GeoPRMError, ValueError):
    """A prompt template that is missing, malformed, or rendered with unusable values."""


class ScoringError(GeoPRMError, ValueError):
    """Log-probabilities or candidates that cannot be scored (inconsistent inputs, not a bad critique).

    A truncated or malformed critique never raises this: its steps are left unscored with a reason.
    """


class CriticError(GeoPRMError, RuntimeError):
    """A reward-model backend that failed to produce a critique (a model or input failure, not bad text)."""


class MissingExtraError(GeoPRMError, ImportError):
    """An optional dependency is missing; the message names the extra to install."""


class DataError(GeoPRMError, ValueError):
    """Inputs of training-data construction that cannot work (duplicate ids, a sampler's wrong output)."""
