"""geodsl: the PGPS solution-program language.

Parse, print and canonicalise programs; execute them (fast numeric or exact
sympy mode); translate them to PAL scripts; extract and compare answers; read the
four trace formats. Public submodules: ``geodsl.sandbox`` (run untrusted Python),
``geodsl.data`` (PGPS-format datasets), ``geodsl.ops`` (the operator registry).
"""

from geodsl._api import execute, execute_instantiated
from geodsl._canonical import canonicalize
from geodsl._instantiate import InstantiatedProgram, instantiate, parse_instantiated
from geodsl._parser import parse_program
from geodsl._printer import print_program
from geodsl._result import Execution, Mode, Solved, StepTrace
from geodsl._values import parse_value
from geodsl.answers import (
    answer_from_output,
    answer_key,
    answers_match,
    extract_final_answer,
    match_choice,
    parse_answer,
)
from geodsl.ast import Operand, OperandKind, Program, Step
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
    TraceError,
    UnsolvableError,
    ValueSyntaxError,
)
from geodsl.ops import OPERATORS, REFERENCE_PI, VOCABULARY_CONSTANTS, OpSpec
from geodsl.pal import to_pal
from geodsl.traces import (
    TRACE_FORMATS,
    TraceFormat,
    detect_format,
    extract_program,
    extract_script,
    trace_answer,
)

__all__ = (
    "OPERATORS",
    "REFERENCE_PI",
    "TRACE_FORMATS",
    "VOCABULARY_CONSTANTS",
    "AmbiguousError",
    "AnswerParseError",
    "BindingError",
    "DSLSyntaxError",
    "DataError",
    "Execution",
    "ExecutionError",
    "GeoDSLError",
    "InconsistentError",
    "InstantiatedProgram",
    "Mode",
    "NoAnswerError",
    "NonRealError",
    "OpSpec",
    "Operand",
    "OperandKind",
    "Program",
    "SandboxError",
    "Solved",
    "Step",
    "StepTrace",
    "TraceError",
    "TraceFormat",
    "UnsolvableError",
    "ValueSyntaxError",
    "answer_from_output",
    "answer_key",
    "answers_match",
    "canonicalize",
    "detect_format",
    "execute",
    "execute_instantiated",
    "extract_final_answer",
    "extract_program",
    "extract_script",
    "instantiate",
    "match_choice",
    "parse_answer",
    "parse_instantiated",
    "parse_program",
    "parse_value",
    "print_program",
    "to_pal",
    "trace_answer",
)
__version__ = "0.1.0"
