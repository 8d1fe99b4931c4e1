"""Splitting a policy's solution into the steps the reward model judges.

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
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Literal, TypeAlias

from pydantic import BaseModel, ConfigDict

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


class SplitSolution(BaseModel):
    """A solution cut into steps, with its final answer."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    steps: tuple[str, ...]
    """The step texts, without their ``Step k:`` labels or list numbers; empty for an empty solution."""
    answer: str | None
    """The text of the last final-answer line, or None when there is none."""
    style: SplitStyle
    """The layout the steps were recognised by."""
    preamble: str | None
    """Text before the first ``Step k:`` label or list item, which is not judged; None when absent."""


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


def _take_answer(lines: list[str]) -> tuple[list[str], str | None]:
    for position in range(len(lines) - 1, -1, -1):
        match = _ANSWER_RE.match(lines[position])
        if match and (answer := _answer_text(match)):
            return lines[:position] + lines[position + 1 :], answer
    return lines, None


def _blocks_at(
    lines: Sequence[str], starts: Sequence[int], firsts: Sequence[str]
) -> tuple[list[str], str | None]:
    steps: list[str] = []
    for number, start in enumerate(starts):
        end = starts[number + 1] if number + 1 < len(starts) else len(lines)
        body = "\n".join([firsts[number], *lines[start + 1 : end]]).strip()
        if body:
            steps.append(body)
    preamble = "\n".join(lines[: starts[0]]).strip() if starts else ""
    return steps, preamble or None


def _by_labels(lines: Sequence[str]) -> tuple[list[str], str | None] | None:
    starts: list[int] = []
    firsts: list[str] = []
    for position, line in enumerate(lines):
        if match := _STEP_LABEL_RE.match(line):
            starts.append(position)
            firsts.append(_label_rest(match))
    return _blocks_at(lines, starts, firsts) if starts else None


def _by_list(lines: Sequence[str]) -> tuple[list[str], str | None] | None:
    starts: list[int] = []
    firsts: list[str] = []
    for position, line in enumerate(lines):
        match = _LIST_ITEM_RE.match(line)
        if match and int(match[1]) == len(starts) + 1:
            starts.append(position)
            firsts.append(match[2])
    return _blocks_at(lines, starts, firsts) if starts else None


def _by_paragraphs(text: str) -> list[str]:
    return [part.strip() for part in re.split(r"\n\s*\n", text) if part.strip()]


def split_steps(solution: str) -> SplitSolution:
    """Split a policy's solution into steps and its final answer.

    Args:
        solution: the policy's output text.

    Returns:
        The steps (label-free, stripped), the final answer, the layout used and any preamble.
    """
    lines, answer = _take_answer(solution.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    splitters: tuple[
        tuple[SplitStyle, Callable[[Sequence[str]], tuple[list[str], str | None] | None]], ...
    ] = (
        ("step_labels", _by_labels),
        ("numbered_list", _by_list),
    )
    for style, splitter in splitters:
        found = splitter(lines)
        if found is not None and found[0]:
            return SplitSolution(steps=tuple(found[0]), answer=answer, style=style, preamble=found[1])
    text = "\n".join(lines).strip()
    paragraphs = _by_paragraphs(text)
    if len(paragraphs) > 1:
        return SplitSolution(steps=tuple(paragraphs), answer=answer, style="paragraphs", preamble=None)
    nonblank = [line.strip() for line in lines if line.strip()]
    if len(nonblank) > 1:
        return SplitSolution(steps=tuple(nonblank), answer=answer, style="lines", preamble=None)
    if text:
        return SplitSolution(steps=(text,), answer=answer, style="single", preamble=None)
    return SplitSolution(steps=(), answer=answer, style="empty", preamble=None)


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
