"""Reading LLM replies: the script of a CoT-PAL reply, the program of a CoT-Program reply.

Nothing a reply says is trusted. A CoT-PAL script must read back with geodsl's trace readers (as
it will at inference), carry rationale comments, keep the reference script's equations and then
verify in the sandbox. A CoT-Program reply must read back (:func:`geodsl.traces.extract_program`)
as the source program, and its ``Op:`` lines and final program line must restate it token for token.
"""

from __future__ import annotations

import re

from geodsl.traces import detect_format, extract_program, extract_script

__all__ = ("equation_drift", "extract_code", "extract_steps", "program_mismatch", "rationale_missing")

_OP_LINE = re.compile(r"\*{0,2}\s*Op\s*:\s*\*{0,2}\s*(.+)$", re.M)
_TRAILING_COMMENT = re.compile(r"\s+#[^'\"]*$")  # equations hold no strings, so a '#' after code starts a comment
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


def _key_lines(script: str) -> tuple[list[str], list[str]]:
    """The lines a rewrite must keep, whitespace-normalised: the equations, and the answer target."""
    equations: list[str] = []
    targets: list[str] = []
    for line in script.splitlines():
        code = " ".join(_TRAILING_COMMENT.sub("", line).split())
        if code.startswith("equations.append("):
            equations.append(code)
        elif code.startswith("ans = ") and "subs" not in code:
            targets.append(code)
    return equations, targets


def equation_drift(reference: str, candidate: str) -> str | None:
    """How ``candidate`` changed the equations or the solve target of ``reference``, or None if it did not."""
    (ref_eq, ref_target), (got_eq, got_target) = _key_lines(reference), _key_lines(candidate)
    if len(ref_eq) != len(got_eq):
        return (f"the rewrite has {len(got_eq)} equation lines, the reference {len(ref_eq)} "
                "(equations must not be added or removed)")
    for k, (a, b) in enumerate(zip(ref_eq, got_eq, strict=True)):
        if a != b:
            return f"equation line {k + 1} changed: expected {a!r}, got {b!r}"
    if ref_target != got_target:
        return f"the solve target changed: expected {ref_target!r}, got {got_target!r}"
    return None


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
