"""geodsl: the PGPS solution-program language.

Parse, print and canonicalise programs; execute them (fast numeric or exact
sympy mode); translate them to PAL scripts; run untrusted Python in a sandbox;
extract and compare answers; load PGPS-format datasets.
"""

from geodsl.errors import (
    AmbiguousError,
    AnswerParseError,
    BindingError,
    DataError,
    DSLSyntaxError,
    ExecutionError,
    GeoDSLError,
    InconsistentError,
    NoAnswerError,
    NonRealError,
    SandboxError,
    UnsolvableError,
    ValueSyntaxError,
)

__all__ = (
    # errors
    "AmbiguousError",
    "AnswerParseError",
    "BindingError",
    "DSLSyntaxError",
    "DataError",
    "ExecutionError",
    "GeoDSLError",
    "InconsistentError",
    "NoAnswerError",
    "NonRealError",
    "SandboxError",
    "UnsolvableError",
    "ValueSyntaxError",
)
__version__ = "0.1.0"
