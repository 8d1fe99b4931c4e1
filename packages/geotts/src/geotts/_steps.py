"""Splitting a policy's solution into the steps a step scorer judges: the one step splitter of geo.

Policies are asked for ``Step k:`` lines and a final ``Answer:`` line, but they do not always comply,
so the splitter tries the layouts below in order and reports which one it used:

1. ``Step k:`` labels (also ``**Step 1.**``, ``### Step 2:``): a step runs to the next label;
2. a numbered list ``1.`` / ``1)`` whose numbers count up from 1 (other numbered lines stay inside
   the item they follow, so "3.5 cm" or a nested list does not split a step);
3. paragraphs separated by blank lines;
4. one step per non-blank line;
5. the whole text as a single step.

The final-answer line (``Answer: ...`` or ``Final answer: ...``, the last one in the text) is taken out
of the steps and returned separately; when it is the whole content of a step, that step is dropped.
Step texts carry no ``Step k:`` label or list number. The same steps are what a reward model is
trained on (geoprm builds its critique data with this function) and what it judges at test time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from geotts._models import GeoTTSModel

__all__ = ("SplitSolution", "SplitStyle", "format_steps", "split_steps", "strip_step_label")

SplitStyle: TypeAlias = Literal["step_labels", "numbered_list", "paragraphs", "lines", "single", "empty"]
"""Which layout :func:`split_steps` recognised."""

_STEP_LABEL_RE = re.compile(
    r"^\s*(?P<open>[#*_>]*)\s*step\s*(?P<number>\d+)\s*[*_]*\s*[:.)\-\u2013\u2014]\s*(?P<rest>.*)$",
    re.IGNORECASE,
)
_LIST_ITEM_RE = re.compile(r"^\s*(\d+)[.)]\s+(.*)$")
_ANSWER_RE = re.compile(
    r"^\s*(?P<open>[#*_>]*)\s*(?:step\s*\d+\s*[*_]*\s*[:.)]\s*[*_]*\s*)?(?:the\s+)?(?:final\s+)?answer\s*(?:is)?\s*[*_]*\s*"
    r"[:\uff1a]\s*(?P<answer>.*)$",
    re.IGNORECASE,
)
_EMPHASIS_RE = re.compile(r"([*_]+)(.+?)\1")
_NEWLINE_RE = re.compile(r"\r\n|\r|\n")


class SplitSolution(GeoTTSModel):
    """A solution cut into steps, with its final answer."""

    steps: tuple[str, ...]
    """The step texts, without their ``Step k:`` labels or list numbers; empty for an empty solution."""
    answer: str | None
    """The text of the last final-answer line, or None when there is none."""
    style: SplitStyle
    """The layout the steps were recognised by."""
    preamble: str | None
    """Text before the first ``Step k:`` label or list item, which is not judged; None when absent."""


@dataclass(frozen=True)
class _Line:
    text: str
    start: int  # offset of the line's first character in the solution
    end: int  # offset just past its last character (before the line break)


@dataclass(frozen=True)
class _Step:
    text: str
    start: int  # offset where the step's first line starts
    end: int  # offset just past the step's last non-blank line
    lead: str  # the label or list number before its text ("" when the layout has none)


@dataclass(frozen=True)
class _Split:
    solution: SplitSolution
    steps: tuple[_Step, ...]


def _lines(solution: str) -> list[_Line]:
    lines: list[_Line] = []
    position = 0
    for brk in _NEWLINE_RE.finditer(solution):
        lines.append(_Line(solution[position : brk.start()], position, brk.start()))
        position = brk.end()
    lines.append(_Line(solution[position:], position, len(solution)))
    return lines


def _label_rest(match: re.Match[str]) -> str:
    # With opening emphasis ("**Step 1:** ..."), emphasis right after the colon closes the label;
    # otherwise it belongs to the content.
    if "*" in match["open"] or "_" in match["open"]:
        return match["rest"].lstrip("*_").lstrip()
    return match["rest"]


def _answer_text(match: re.Match[str]) -> str:
    answer = match["answer"].strip()
    if "*" in match["open"] or "_" in match["open"]:
        answer = answer.lstrip("*_").strip()
    if emphasised := _EMPHASIS_RE.fullmatch(answer):
        answer = emphasised[2].strip()
    return answer


def _take_answer(lines: list[_Line]) -> tuple[list[_Line], str | None]:
    for position in range(len(lines) - 1, -1, -1):
        match = _ANSWER_RE.match(lines[position].text)
        if match and (answer := _answer_text(match)):
            return lines[:position] + lines[position + 1 :], answer
    return lines, None


def _blocks_at(
    lines: Sequence[_Line], starts: Sequence[int], firsts: Sequence[str]
) -> tuple[list[_Step], str | None]:
    steps: list[_Step] = []
    for number, start in enumerate(starts):
        end = starts[number + 1] if number + 1 < len(starts) else len(lines)
        block = lines[start:end]
        body = "\n".join([firsts[number], *(line.text for line in block[1:])]).strip()
        if body:
            last = next(line for line in reversed(block) if line.text.strip())
            lead = block[0].text[: len(block[0].text) - len(firsts[number])]
            steps.append(_Step(body, block[0].start, last.end, lead))
    preamble = "\n".join(line.text for line in lines[: starts[0]]).strip() if starts else ""
    return steps, preamble or None


def _by_labels(lines: Sequence[_Line]) -> tuple[list[_Step], str | None] | None:
    starts: list[int] = []
    firsts: list[str] = []
    for position, line in enumerate(lines):
        if match := _STEP_LABEL_RE.match(line.text):
            starts.append(position)
            firsts.append(_label_rest(match))
    return _blocks_at(lines, starts, firsts) if starts else None


def _by_list(lines: Sequence[_Line]) -> tuple[list[_Step], str | None] | None:
    starts: list[int] = []
    firsts: list[str] = []
    for position, line in enumerate(lines):
        match = _LIST_ITEM_RE.match(line.text)
        if match and int(match[1]) == len(starts) + 1:
            starts.append(position)
            firsts.append(match[2])
    return _blocks_at(lines, starts, firsts) if starts else None


def _runs(lines: Sequence[_Line]) -> list[list[_Line]]:
    """Maximal runs of non-blank lines (the paragraphs)."""
    runs: list[list[_Line]] = []
    current: list[_Line] = []
    for line in lines:
        if line.text.strip():
            current.append(line)
        elif current:
            runs.append(current)
            current = []
    if current:
        runs.append(current)
    return runs


def _step_of(run: Sequence[_Line]) -> _Step:
    return _Step("\n".join(line.text for line in run).strip(), run[0].start, run[-1].end, "")


def _split(solution: str) -> _Split:
    lines, answer = _take_answer(_lines(solution))
    splitters: tuple[
        tuple[SplitStyle, Callable[[Sequence[_Line]], tuple[list[_Step], str | None] | None]], ...
    ] = (
        ("step_labels", _by_labels),
        ("numbered_list", _by_list),
    )
    found: list[_Step] = []
    style: SplitStyle = "empty"
    preamble: str | None = None
    for name, splitter in splitters:
        result = splitter(lines)
        if result is not None and result[0]:
            (found, preamble), style = result, name
            break
    else:
        runs = _runs(lines)
        if len(runs) > 1:
            found, style = [_step_of(run) for run in runs], "paragraphs"
        elif runs and len(runs[0]) > 1:
            found, style = [_step_of([line]) for line in runs[0]], "lines"
        elif runs:
            found, style = [_step_of(runs[0])], "single"
    split = SplitSolution(
        steps=tuple(step.text for step in found), answer=answer, style=style, preamble=preamble
    )
    return _Split(split, tuple(found))


def split_steps(solution: str) -> SplitSolution:
    """Split a policy's solution into steps and its final answer.

    Args:
        solution: the policy's output text.

    Returns:
        The steps (label-free, stripped), the final answer, the layout used and any preamble.
    """
    return _split(solution).solution


def strip_step_label(text: str) -> str:
    """Remove a leading ``Step k:`` label from a step's text (corrections often repeat it).

    Args:
        text: a step's text.

    Returns:
        The text without the label, stripped.
    """
    first, *rest = text.strip().split("\n", 1)
    match = _STEP_LABEL_RE.match(first)
    if match is None:
        return text.strip()
    return "\n".join([_label_rest(match), *rest]).strip()


def format_steps(steps: Sequence[str], *, start: int = 1) -> str:
    """Write steps as ``Step k: ...`` lines, the layout policies are asked for.

    Args:
        steps: the step texts (any existing ``Step k:`` label is replaced).
        start: the number of the first step.

    Returns:
        The steps, one block per step, separated by newlines.
    """
    return "\n".join(f"Step {start + offset}: {strip_step_label(step)}" for offset, step in enumerate(steps))


def continuation(solution: str, first_wrong: int, correction: str | None) -> str:
    """The text a policy continues from after step ``first_wrong`` (0-based) was judged wrong.

    It is the solution's own text up to that step (preamble and verified steps, layout untouched),
    then the correction written the way the solution writes its steps (``Step k:`` label, list number
    or bare text) and the separator the solution puts between steps. Without a correction (or with an
    empty one) it stops after the verified steps; with nothing verified and nothing to add it is "".
    """
    split = _split(solution)
    steps, style = split.steps, split.solution.style
    default_sep = "\n\n" if style == "paragraphs" else "\n"
    if first_wrong < len(steps):
        head = solution[: steps[first_wrong].start]
        gap = solution[steps[first_wrong - 1].end : steps[first_wrong].start] if first_wrong else ""
        sep = gap if gap and not gap.strip() and ("\n" in gap or "\r" in gap) else default_sep
        lead = steps[first_wrong].lead
    else:  # the scorer judged past the solution's last step: every step is kept
        head = solution[: steps[-1].end] + default_sep if steps else ""
        sep = default_sep
        number = first_wrong + 1
        lead = {"step_labels": f"Step {number}: ", "numbered_list": f"{number}. "}.get(style, "")
    if not head.strip():
        head = ""
    body = strip_step_label(correction) if correction is not None else ""
    if not body:
        return head
    if lead and not lead[-1].isspace():
        lead += " "
    return head + lead + body + sep
