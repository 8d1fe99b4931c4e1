r"""The four reasoning-trace formats, and reading a program or a script out of a trace.

* ``program``: a bare solution program (``Gougu N1 N4 N3 Get y``), symbolic or instantiated
  (``Geo_Mean 3\sqrt{2} z \sqrt{2} Gougu z \sqrt{2} y Get y``).
* ``pal``: a Python (SymPy) script that prints the answer.
* ``cot_program``: numbered natural-language steps, each naming its program step
  (``**Op:** `Gougu z \sqrt{2} y```), usually closed by ``final program is ...``.
* ``cot_pal``: a PAL script with a natural-language rationale, as comments before the
  equations and/or as prose around a fenced code block.

Readers are lenient about markdown (fences, backticks, bold) and strict about content:
program tokens must be operator names from :data:`geodsl.ops.OPERATORS` with an allowed
operand count, and a script must parse as Python (it is parsed, never executed, here).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal, get_args

from geodsl.errors import ExecutionError, GeoDSLError, SandboxError, TraceError

if TYPE_CHECKING:
    from geodsl.ops import OpSpec
    from geodsl.sandbox import Sandbox

__all__ = (
    "REASONING_HEADER",
    "TRACE_FORMATS",
    "TraceFormat",
    "candidate_answer",
    "detect_format",
    "extract_program",
    "extract_script",
    "reasoning_part",
    "trace_answer",
)

TraceFormat = Literal["program", "pal", "cot_program", "cot_pal"]
"""The four trace formats of multi-trace synthesis."""
TRACE_FORMATS: tuple[TraceFormat, ...] = get_args(TraceFormat)
REASONING_HEADER = "Solution:"
"""The line that opens the trace in a perception-augmented answer (the diagram's clauses come before it)."""
"""All trace formats, in a fixed order."""

_FENCE = re.compile(r"```[ \t]*(?P<lang>[\w+.-]*)[^\n]*\n(?P<code>.*?)```", re.S)
_CODE_LANGS = frozenset({"", "python", "py", "python3", "sympy", "pycon"})
_CODE_START = re.compile(r"^\s*(?:from\s+[\w.]+\s+import\s|import\s+\w)")
_STATEMENTS = (
    ast.Import,
    ast.ImportFrom,
    ast.Assign,
    ast.AugAssign,
    ast.AnnAssign,
    ast.For,
    ast.While,
    ast.If,
    ast.With,
    ast.Try,
    ast.FunctionDef,
)
_SYMBOLIC_OPERAND = re.compile(r"[NV]\d+|C\d+(?:\.\d+)?|[a-z]")
_VALUE_CHARS = re.compile(r"[-+]?[0-9a-z.+\-*/^{}()\\]+")
_LATEX_NAMES = re.compile(r"\\(?:sqrt|d?frac|tfrac|pi|cdot|times)")
_FINAL_PROGRAM = re.compile(r"(?:final\s+program(?:\s+is)?|\bprogram)\s*[:=]?\s*(?P<rest>[^\n]+)", re.I)
_OP_MARKER = re.compile(r"\bOp\s*:\s*\**\s*`(?P<step>[^`\n]+)`")
_TRANSLATOR_COMMENT = re.compile(r"#\s*step\s+\d+\s*:\s*(?P<op>\w+)")
_EQUATION_LINE = re.compile(r"\bEq\s*\(|equations\.append\(|\bsolve\s*\(")
_LIST_MARKER = re.compile(r"\(?\d+[.)]")
_PROSE_WORD = re.compile(r"\b[A-Za-z]{2,}\b")
_MIN_PROSE_WORDS = 8
_MIN_RATIONALE_WORDS = 3


# --- scripts --------------------------------------------------------------------------------------


def _python_tree(code: str) -> ast.Module | None:
    """The syntax tree if ``code`` parses and contains at least one real statement."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, _STATEMENTS) or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
            return tree
    return None


def _has_import(tree: ast.Module) -> bool:
    return any(isinstance(node, ast.Import | ast.ImportFrom) for node in tree.body)


def _has_print(code: str) -> bool:
    return re.search(r"\bprint\s*\(", code) is not None


def _fenced_blocks(text: str) -> list[str]:
    """Python code of every complete fenced block, plus a final unterminated one if it parses."""
    blocks: list[str] = []
    end = 0
    for match in _FENCE.finditer(text):
        end = match.end()
        if match["lang"].lower() in _CODE_LANGS and _python_tree(match["code"]) is not None:
            blocks.append(match["code"].strip("\n"))
    rest = text[end:]
    if not blocks and rest.count("```") == 1:
        tail = rest.split("```", 1)[1].split("\n", 1)
        if len(tail) == 2 and _python_tree(tail[1]) is not None:
            blocks.append(tail[1].strip("\n"))
    return blocks


def _bare_script(text: str) -> str | None:
    """Code written without fences: the longest stretch from the first import line that parses."""
    if _python_tree(text) is not None and _has_print(text):
        return text.strip("\n")
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if _CODE_START.match(line)), None)
    if start is None:
        return None
    for end in range(len(lines), start, -1):
        code = "\n".join(lines[start:end])
        if _python_tree(code) is not None:
            return code.strip("\n")
    return None


def extract_script(text: str) -> str | None:
    """Pull the Python script out of a PAL or CoT-PAL trace.

    Fenced blocks (```` ```python ````, ```` ```py ````, or untagged) come first: the script is
    the last block that parses as Python and prints something (else the last block that
    parses). When that block has no import but earlier blocks do, the blocks up to it are
    concatenated in order (a model that splits set-up and solving over several blocks).
    An unterminated last fence counts only when there is no complete block and it parses
    (a truncated generation gives ``None``, not half a script). Without any fence, the
    text itself if it parses, else the longest stretch starting at the first
    ``import``/``from ... import`` line that parses.

    Args:
        text: the trace.

    Returns:
        The script source, or ``None`` if the text contains no Python.
    """
    blocks = _fenced_blocks(text)
    if not blocks:
        return None if "```" in text else _bare_script(text)
    printing = [i for i, block in enumerate(blocks) if _has_print(block)]
    chosen = printing[-1] if printing else len(blocks) - 1
    tree = _python_tree(blocks[chosen])
    if tree is not None and not _has_import(tree) and chosen > 0:
        return "\n\n".join(blocks[: chosen + 1])
    return blocks[chosen]


# --- programs -------------------------------------------------------------------------------------


def _operators() -> Mapping[str, OpSpec]:
    from geodsl.ops import OPERATORS  # imported lazily: traces must not pull the executor in at import

    return OPERATORS


def _is_operand(token: str) -> bool:
    r"""A program operand: N/V/C token, a letter, or an instantiated value such as ``3\sqrt{2}``."""
    if _SYMBOLIC_OPERAND.fullmatch(token):
        return True
    if not _VALUE_CHARS.fullmatch(token) or not re.search(r"[0-9a-z]", token):
        return False
    if re.search(r"[a-z]{2,}", _LATEX_NAMES.sub("", token)):
        return False  # a word, not algebra
    return re.search(r"[0-9\\+\-*/^]", token) is not None


def _clean_tokens(text: str) -> list[str]:
    tokens: list[str] = []
    for raw in text.replace("`", " ").replace("**", " ").split():
        if _LIST_MARKER.fullmatch(raw):
            tokens.append("|")  # "2." or "3)" numbers a step: it separates, it is not an operand
            continue
        token = raw.strip("\"'").rstrip(",;:.")
        if token:
            tokens.append(token)
    return tokens


def _runs(tokens: Sequence[str]) -> list[list[tuple[str, list[str]]]]:
    """Maximal stretches of well-formed steps (an operator and an operand count it accepts)."""
    operators = _operators()
    runs: list[list[tuple[str, list[str]]]] = []
    current: list[tuple[str, list[str]]] = []

    def close() -> None:
        nonlocal current
        while current and not operators[current[-1][0]].accepts(len(current[-1][1])):
            current.pop()
        if current and all(operators[op].accepts(len(args)) for op, args in current):
            runs.append(current)
        current = []

    for token in tokens:
        if token in operators:
            if current and not operators[current[-1][0]].accepts(len(current[-1][1])):
                close()
            current.append((token, []))
        elif current and _is_operand(token):
            current[-1][1].append(token)
        else:
            close()
    close()
    return runs


def _render(steps: Sequence[tuple[str, list[str]]]) -> str:
    return " ".join(" ".join([op, *args]) for op, args in steps)


def _whole_program(text: str) -> str | None:
    """The text itself, when every token belongs to a well-formed step."""
    tokens = _clean_tokens(text)
    runs = _runs(tokens)
    if len(runs) == 1 and sum(1 + len(args) for _, args in runs[0]) == len(tokens):
        return _render(runs[0])
    return None


def extract_program(text: str) -> str | None:
    r"""Pull the solution program out of a program or CoT-Program trace.

    Tried in order: the last ``final program is ...`` / ``Program: ...`` line; the
    ``Op:`` markers of numbered steps, concatenated; the whole text when it is a bare
    program; otherwise every stretch of well-formed steps in the text, concatenated, except
    that a last stretch of two or more steps ending in ``Get`` (a restated full program) is
    taken alone. Operands may be symbolic (``N0``, ``V1``, ``C180``, ``x``) or instantiated
    values (``3\sqrt{2}``, ``12.5``, ``3x+5``).

    Args:
        text: the trace.

    Returns:
        The program as space-separated tokens, or ``None`` if the text has no well-formed step.
    """
    for match in reversed(list(_FINAL_PROGRAM.finditer(text))):
        program = _whole_program(match["rest"])
        if program is not None:
            return program
    markers = [m["step"] for m in _OP_MARKER.finditer(text)]
    if markers:
        program = _whole_program(" ".join(markers))
        if program is not None:
            return program
    whole = _whole_program(text)
    if whole is not None:
        return whole
    runs = _runs(_clean_tokens(text))
    if not runs:
        return None
    if len(runs[-1]) >= 2 and runs[-1][-1][0] == "Get":
        return _render(runs[-1])
    return _render([step for run in runs for step in run])


# --- detection ------------------------------------------------------------------------------------


def _prose_outside_fences(text: str) -> int:
    return len(_PROSE_WORD.findall(_FENCE.sub(" ", text)))


def _rationale_comments(script: str) -> int:
    """Comment lines written as reasoning that lead up to an equation (translator comments excluded)."""
    operators = _operators()
    count = 0
    pending = False
    for line in script.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            translator = _TRANSLATOR_COMMENT.match(stripped)
            if translator is None or translator["op"] not in operators:
                pending = pending or len(_PROSE_WORD.findall(stripped)) >= _MIN_RATIONALE_WORDS
        elif stripped:
            if pending and _EQUATION_LINE.search(stripped):
                count += 1
            pending = False
    return count


def detect_format(text: str) -> TraceFormat | None:
    """Tell which of the four formats a trace is written in.

    Python (see :func:`extract_script`) makes it PAL-like: ``cot_pal`` when a comment of
    three or more words leads into an equation line (``Eq(``, ``equations.append(``,
    ``solve(``; the ``# step k: Op ...`` comments of :func:`geodsl.to_pal` do not count) or
    when at least eight words of prose surround the code, else ``pal``. Otherwise a text
    that is nothing but a well-formed program is ``program``, and prose containing one is
    ``cot_program``.

    Args:
        text: the trace.

    Returns:
        The format, or ``None`` if the text holds neither Python nor a program.
    """
    script = extract_script(text)
    if script is not None:
        if _rationale_comments(script) > 0:
            return "cot_pal"
        outside = text.replace(script, " ") if script in text else _FENCE.sub(" ", text)
        return "cot_pal" if _prose_outside_fences(outside) >= _MIN_PROSE_WORDS else "pal"
    if _whole_program(text) is not None:
        return "program"
    return "cot_program" if extract_program(text) is not None else None


# --- answers --------------------------------------------------------------------------------------


def _is_symbolic(program: str) -> bool:
    operators = _operators()
    return all(token in operators or _SYMBOLIC_OPERAND.fullmatch(token) for token in program.split())


def trace_answer(
    text: str,
    fmt: TraceFormat,
    *,
    numbers: Sequence[str] = (),
    sandbox: Sandbox | None = None,
) -> float:
    """Execute a trace of any format to its numeric answer.

    Programs (``program``, ``cot_program``) run in geodsl's numeric executor: with
    ``numbers`` as the N list when the program is symbolic, as an instantiated program
    (values in place) otherwise. Scripts (``pal``, ``cot_pal``) run in ``sandbox``.

    Args:
        text: the trace.
        fmt: its format (see :func:`detect_format`).
        numbers: the problem's N list, for symbolic programs.
        sandbox: a running :class:`geodsl.sandbox.Sandbox`; required for script formats.

    Returns:
        The answer.

    Raises:
        TraceError: no program/script in the text, an unknown format, or no sandbox for a script.
        ExecutionError: the program or script runs but gives no answer (the message says why).
        DSLSyntaxError, ValueSyntaxError, BindingError: as :func:`geodsl.execute`.
    """
    if fmt in ("program", "cot_program"):
        program = extract_program(text)
        if program is None:
            raise TraceError(f"no solution program found in the {fmt} trace {text[:80]!r}")
        from geodsl import execute, execute_instantiated  # the executor is only needed here

        if _is_symbolic(program):
            return execute(program, numbers).answer
        return execute_instantiated(program).answer
    if fmt not in ("pal", "cot_pal"):
        raise TraceError(f"unknown trace format {fmt!r}; expected one of {', '.join(TRACE_FORMATS)}")
    script = extract_script(text)
    if script is None:
        raise TraceError(f"no Python script found in the {fmt} trace {text[:80]!r}")
    if sandbox is None:
        raise TraceError(f"a {fmt} trace runs Python, so trace_answer needs a sandbox")
    result = sandbox.run_one(script)
    if result.error is not None or result.answer is None:
        raise ExecutionError(f"{fmt} script failed: {result.error}")
    return result.answer


_REASONING_LINE = re.compile(rf"^[ \t]*{re.escape(REASONING_HEADER)}", re.M)
_FORMAT_NAMES: Mapping[str, TraceFormat] = {fmt: fmt for fmt in TRACE_FORMATS}


def reasoning_part(text: str) -> str:
    """The trace of an answer: what follows its first line opening with ``Solution:``, else the whole text.

    A perception-augmented answer restates the diagram's clauses, then writes its trace after that header;
    only the trace executes. The header counts at the start of a line only, so a script that prints
    ``"Solution:"`` is not cut.
    """
    match = _REASONING_LINE.search(text)
    return text if match is None else text[match.end() :].lstrip()


def candidate_answer(
    text: str,
    trace_type: str | None = None,
    *,
    numbers: Sequence[str] = (),
    sandbox: Sandbox | None = None,
) -> float | None:
    """Execute a generated candidate as its trace: its answer, or None when nothing in it runs to one.

    The trace is the candidate's :func:`reasoning_part`. It runs as ``trace_type`` when that is one of
    :data:`TRACE_FORMATS`, else as the format :func:`detect_format` reads from it (see :func:`trace_answer`).

    Args:
        text: the generated text.
        trace_type: the trace type the candidate was asked for; other names (or None) detect the format.
        numbers: the problem's N list, for symbolic programs.
        sandbox: a running :class:`geodsl.sandbox.Sandbox` for scripts; without one a script gives None.

    Returns:
        The answer; None when the text holds no trace, or its program or script fails or gives no answer.

    Raises:
        SandboxError: the sandbox itself failed (not the script in it).
    """
    trace = reasoning_part(text)
    fmt = _FORMAT_NAMES.get(trace_type or "") or detect_format(trace)
    if fmt is None:
        return None
    try:
        return trace_answer(trace, fmt, numbers=numbers, sandbox=sandbox)
    except SandboxError:
        raise
    except GeoDSLError:
        return None
