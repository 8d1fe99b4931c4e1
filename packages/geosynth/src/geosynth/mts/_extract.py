"""Reading LLM replies: the script of a CoT-PAL reply, the program of a CoT-Program reply.

Nothing a reply says is trusted. A CoT-PAL script must read back with geodsl's trace readers (as
it will at inference), carry rationale comments, keep the reference script's key lines
(equations, solves, the print) and then verify in the sandbox. A CoT-Program reply must read back
(:func:`geodsl.traces.extract_program`) as the source program, and its ``Op:`` lines and final program line must restate it token for token.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from geodsl.traces import detect_format, extract_program, extract_script

__all__ = ("equation_drift", "extract_code", "extract_steps", "program_mismatch", "rationale_missing")

_OP_LINE = re.compile(r"\*{0,2}\s*Op\s*:\s*\*{0,2}\s*(.+)$", re.M)
_FINAL = re.compile(r"final\s+program\s*(?:is)?\s*[:=]?\s*\**\s*(.+)$", re.I | re.M)


def extract_code(reply: str) -> str | None:
    """The Python script of a reply, read as inference reads it (:func:`geodsl.traces.extract_script`).

    Returns None when the reply holds no Python.
    """
    script = extract_script(reply)
    return None if script is None or not script.strip() else script.strip("\n") + "\n"


def rationale_missing(script: str) -> str | None:
    """Why a rewrite is not a CoT-PAL trace (no rationale comment leads into an equation), or None."""
    if detect_format(script) == "cot_pal":
        return None
    return "the rewrite adds no rationale: write a comment of a few words before each equation"


#: The kinds of line a rewrite must keep, each recognised on the code with all whitespace removed.
_KEY_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("equation", re.compile(r"^eq\d+=Eq\(")),  # eq3 = Eq(lhs, rhs)
    ("solve", re.compile(r"solve\(|=solution\[")),  # solve / nsolve / pick(solve(...)), x = solution[x]
    ("print", re.compile(r"^print\(")),  # the answer line
)


@dataclass(frozen=True)
class _KeyLine:
    kind: str
    """One of the names of ``_KEY_KINDS``."""
    text: str
    """The code as written (comment and outer whitespace removed), for messages."""
    code: str
    """The code with all whitespace removed, for comparison."""


def _label(lines: Sequence[_KeyLine], at: int) -> str:
    """``equation line 2``: the kind of ``lines[at]`` and its 1-based rank among the lines of that kind."""
    kind = lines[at].kind
    return f"{kind} line {1 + sum(line.kind == kind for line in lines[:at])}"


def _strip_comment(line: str) -> str:
    """The code of a line: everything before the first ``#`` that is not inside a string literal."""
    quote: str | None = None
    for k, char in enumerate(line):
        if quote is None and char == "#":
            return line[:k]
        if char in "'\"" and (k == 0 or line[k - 1] != "\\"):
            quote = char if quote is None else (None if char == quote else quote)
    return line


def _key_lines(script: str) -> list[_KeyLine]:
    """The lines a rewrite must keep, in order: equations (``eqK = Eq(...)``), solves, the print."""
    keys: list[_KeyLine] = []
    for line in script.splitlines():
        text = _strip_comment(line).strip()
        code = "".join(text.split())
        kind = next((name for name, pattern in _KEY_KINDS if pattern.search(code)), None)
        if kind is not None:
            keys.append(_KeyLine(kind, text, code))
    return keys


def equation_drift(reference: str, candidate: str) -> str | None:
    """How ``candidate`` changed the key lines of the PAL script ``reference``, or None if it kept them.

    The key lines are the equations (``eqK = Eq(...)``), the solve lines (``solve(``, ``nsolve(``,
    assignments from a ``solution`` dict) and the final ``print(``. They must all be there, unchanged
    up to whitespace and trailing comments, in the reference's order; comments and blank lines may
    be added anywhere.
    """
    ref, got = _key_lines(reference), _key_lines(candidate)
    ref_codes, got_codes = [k.code for k in ref], [k.code for k in got]
    if ref_codes == got_codes:
        return None
    if sorted(ref_codes) == sorted(got_codes):
        first = next(k for k, (a, b) in enumerate(zip(ref_codes, got_codes, strict=True)) if a != b)
        return (
            f"the key lines are reordered: {_label(ref, first)} should be {ref[first].text!r}, "
            f"the rewrite has {got[first].text!r} there (keep the reference's order)"
        )
    tag, i1, _, j1, _ = next(
        op
        for op in SequenceMatcher(a=ref_codes, b=got_codes, autojunk=False).get_opcodes()
        if op[0] != "equal"
    )
    if tag == "replace":
        return f"{_label(ref, i1)} changed: expected {ref[i1].text!r}, got {got[j1].text!r}"
    if tag == "delete":
        return (
            f"{_label(ref, i1)} was removed: {ref[i1].text!r} "
            "(every equation, solve and print line must be kept)"
        )
    return f"the rewrite adds a {got[j1].kind} line {got[j1].text!r} that the reference does not have"


def _clean(fragment: str) -> list[str]:
    return fragment.replace("`", " ").replace("*", " ").split()


def extract_steps(reply: str) -> tuple[list[str], list[str] | None]:
    """The tokens of the ``Op:`` lines in order, and those of the ``Final program:`` line (None if absent)."""
    tokens = [t for m in _OP_LINE.finditer(reply) for t in _clean(m.group(1))]
    finals = list(_FINAL.finditer(reply))
    return tokens, (_clean(finals[-1].group(1)) if finals else None)


def program_mismatch(program: str, reply: str) -> str | None:
    """Why a CoT-Program reply does not restate ``program`` token for token, or None when it does."""
    expected = program.split()
    steps, final = extract_steps(reply)
    if not steps:
        return "the reply has no 'Op:' lines"
    for label, got in (("the Op: lines", steps), ("the final program line", final)):
        if got is None or got == expected:
            continue
        for k, (a, b) in enumerate(zip(expected, got, strict=False)):
            if a != b:
                return f"{label} differ from the program at token {k + 1}: expected {a!r}, got {b!r}"
        return f"{label} have {len(got)} tokens, the program {len(expected)}"
    parsed = extract_program(reply)  # what inference will read from this trace
    if parsed is None or parsed.split() != expected:
        return f"the program geodsl reads from the reply is {parsed!r}, not {program!r}"
    return None
