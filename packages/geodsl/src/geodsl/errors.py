"""The geodsl error hierarchy.

Every error geodsl raises on purpose derives from :class:`GeoDSLError`, so a
caller can catch the whole package with one clause. Errors are split by phase:
reading text (:class:`DSLSyntaxError`, :class:`ValueSyntaxError`), binding
operands (:class:`BindingError`), executing (:class:`ExecutionError` and its
subclasses), running untrusted code (:class:`SandboxError`) and loading data
(:class:`DataError`).
"""

from __future__ import annotations


class GeoDSLError(Exception):
    """Base class of every error geodsl raises on purpose."""


class DSLSyntaxError(GeoDSLError, ValueError):
    """A program text that does not parse.

    Attributes:
        source: the text that failed to parse.
        token_index: index of the offending token (0-based), if known.
        column: character offset of the offending token in ``source``, if known.
    """

    def __init__(
        self, message: str, *, source: str = "", token_index: int | None = None, column: int | None = None
    ) -> None:
        self.source = source
        self.token_index = token_index
        self.column = column
        where = f" (token {token_index}, column {column})" if token_index is not None else ""
        super().__init__(f"{message}{where}")


class ValueSyntaxError(GeoDSLError, ValueError):
    """An N value written in the dataset's LaTeX-ish algebra that does not parse."""

    def __init__(self, message: str, *, text: str = "", column: int | None = None) -> None:
        self.text = text
        self.column = column
        super().__init__(message)


class BindingError(GeoDSLError, ValueError):
    """An operand that cannot be bound (N index out of range, V read before it is defined, ...)."""


class ExecutionError(GeoDSLError, RuntimeError):
    """A program that parses but does not execute to an answer."""


class UnsolvableError(ExecutionError):
    """A step (or the final Get) whose unknowns cannot be determined."""


class AmbiguousError(ExecutionError):
    """A step that leaves more unknowns than any later step can pin down."""


class NonRealError(ExecutionError):
    """A step whose only solutions are complex (for example sin(x) = 2)."""


class InconsistentError(ExecutionError):
    """A step whose equation contradicts values already known."""


class NoAnswerError(ExecutionError):
    """A program without a Get step."""


class SandboxError(GeoDSLError, RuntimeError):
    """The sandbox itself failed (not the script it ran)."""


class DataError(GeoDSLError, ValueError):
    """A dataset file or record that does not have the expected shape."""


class AnswerParseError(GeoDSLError, ValueError):
    """An answer text that is not a number geodsl can read."""


class TraceError(GeoDSLError, ValueError):
    """A reasoning trace from which no program or script can be read, or that cannot be run as asked."""
