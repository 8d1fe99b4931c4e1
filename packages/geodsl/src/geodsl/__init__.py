"""geodsl: the PGPS solution-program language.

Parse, print and canonicalise programs; execute them (fast numeric or exact
sympy mode); translate them to PAL scripts; run untrusted Python in a sandbox;
extract and compare answers; load PGPS-format datasets.
"""

from geodsl._api import execute, execute_instantiated
from geodsl._canonical import canonicalize
from geodsl._instantiate import InstantiatedProgram, instantiate, parse_instantiated
from geodsl._parser import parse_program
from geodsl._printer import print_program
from geodsl._result import Execution, Mode, Solved, StepTrace
from geodsl._values import parse_value
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
    UnsolvableError,
    ValueSyntaxError,
)
from geodsl.ops import OPERATORS, REFERENCE_PI, VOCABULARY_CONSTANTS, OpSpec
from geodsl.pal import to_pal

__all__ = (
    "OPERATORS",
    "REFERENCE_PI",
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
    "UnsolvableError",
    "ValueSyntaxError",
    "canonicalize",
    "execute",
    "execute_instantiated",
    "instantiate",
    "parse_instantiated",
    "parse_program",
    "parse_value",
    "print_program",
    "to_pal",
)
__version__ = "0.1.0"
