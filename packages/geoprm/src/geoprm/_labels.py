"""The critique's text form as data: field labels, block headers, and the line classifier.

The printer writes only the canonical spellings below. The parser recognises them and, in lenient
mode, a table of aliases and decorations (markdown bold, heading hashes, bullets, brackets) that
models tend to produce; every such deviation is reported as a problem, so the strict parser is the
lenient one with no problems allowed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, TypeAlias

Judgement: TypeAlias = Literal["Correct", "Incorrect"]
"""A judgement of a step or of one aspect of it."""

StepField: TypeAlias = Literal[
    "intent", "image_analysis", "image_judgement", "logic_analysis", "logic_judgement", "judgement"
]
"""The name of one field of a step's critique."""

LineKind: TypeAlias = Literal["blank", "step", "correction", "end", "label", "text"]

STEP_HEADER = "[Step {index}]"
CORRECTION_HEADER = "[Correction of step {index}]"
END_MARKER = "[End]"


@dataclass(frozen=True)
class FieldSpec:
    """One labelled field of a step block."""

    name: StepField
    """The attribute name on :class:`geoprm.StepCritique`."""
    label: str
    """The canonical label, written before the colon."""
    is_judgement: bool
    """True when the value is the single word Correct or Incorrect."""
    guide: str
    """What the field should contain, in the words the teacher prompt uses."""
    aliases: tuple[str, ...]
    """Other spellings the lenient parser accepts (normalised: lower case, single spaces)."""


FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec(
        "intent",
        "Step goal",
        False,
        "what the step sets out to do and how it tries to do it",
        ("goal", "step intent", "step intent analysis", "intent", "purpose", "step purpose"),
    ),
    FieldSpec(
        "image_analysis",
        "Figure check",
        False,
        "whether every fact the step takes from the figure (points, lengths, angles, marks) matches the figure",
        (
            "image alignment analysis",
            "image alignment check",
            "image check",
            "figure analysis",
            "diagram check",
        ),
    ),
    FieldSpec(
        "image_judgement",
        "Figure verdict",
        True,
        "Correct or Incorrect",
        (
            "judgement of image alignment",
            "image alignment judgement",
            "image verdict",
            "figure judgement",
            "diagram verdict",
        ),
    ),
    FieldSpec(
        "logic_analysis",
        "Logic check",
        False,
        "whether the reasoning is valid, the arithmetic is right and the step agrees with the earlier steps",
        ("reasoning logic analysis", "reasoning check", "logic analysis", "reasoning analysis"),
    ),
    FieldSpec(
        "logic_judgement",
        "Logic verdict",
        True,
        "Correct or Incorrect",
        ("judgement of reasoning logic", "reasoning logic judgement", "reasoning verdict", "logic judgement"),
    ),
    FieldSpec(
        "judgement",
        "Step verdict",
        True,
        "Correct when both verdicts above are Correct, otherwise Incorrect",
        (
            "final judgement",
            "final judgement of the current step",
            "final judgement of this step",
            "final judgement of the step",
            "verdict",
            "overall verdict",
            "final verdict",
            "step judgement",
        ),
    ),
)

FIELDS_BY_NAME: dict[StepField, FieldSpec] = {spec.name: spec for spec in FIELDS}


def _normalise_label(name: str) -> str:
    collapsed = " ".join(name.lower().split())
    return collapsed.replace("judgment", "judgement")


_LABEL_TABLE: dict[str, FieldSpec] = {}
for _spec in FIELDS:
    for _alias in (_spec.label, *_spec.aliases):
        _key = _normalise_label(_alias)
        if _key in _LABEL_TABLE:  # pragma: no cover - guards the table above against edits
            raise RuntimeError(f"label alias {_alias!r} is listed twice")
        _LABEL_TABLE[_key] = _spec

_OPEN = r"[\s#*_=>\[(<]*"
_CLOSE = r"[\s#*_=\])>:.]*"
_STEP_RE = re.compile(rf"^{_OPEN}step\s*(\d+){_CLOSE}$", re.IGNORECASE)
_CORRECTION_RE = re.compile(
    rf"^{_OPEN}(?:correction(?:\s+(?:of|for)\s+step\s*(\d+))?"
    r"|corrected\s+(?:version\s+of\s+)?step(?:\s*(\d+)|\s+of\s+the\s+first\s+incorrect\s+step(?:\s+in\s+(?:the\s+)?solution)?)?)"
    r"(?P<close>[\s#*_=\])>:.]*)(?P<value>.*)$",
    re.IGNORECASE,
)
_END_RE = re.compile(rf"^{_OPEN}end(?:\s+of\s+(?:the\s+)?(?:review|critique))?{_CLOSE}$", re.IGNORECASE)
_LABEL_RE = re.compile(r"^(?P<pre>[\s>*_-]*)(?P<name>[A-Za-z][A-Za-z ]*?)(?P<post>[*_ ]*):(?P<post2>[*_]*)")
_EXACT_STEP_RE = re.compile(r"^\[Step ([1-9]\d*)\]$")
_EXACT_CORRECTION_RE = re.compile(r"^\[Correction of step ([1-9]\d*)\]$")


@dataclass(frozen=True)
class LineInfo:
    """What one line of a critique's text form is."""

    kind: LineKind
    exact: bool = True
    """True when the line is in the canonical form the printer writes."""
    index: int | None = None
    """The step number of a step or correction header, when the line names one."""
    field: FieldSpec | None = None
    """The field a label line starts."""
    value: str = ""
    """The text after a label's colon (or after a correction header), unstripped."""
    value_start: int = 0
    """Offset of ``value`` in the line."""


def classify_line(line: str) -> LineInfo:
    """Classify one line (without its newline) of a critique's text form.

    Args:
        line: the line, with any trailing carriage return already removed.

    Returns:
        The line's kind, whether it is canonical, and its parts.
    """
    stripped = line.strip()
    if not stripped:
        return LineInfo("blank")
    if match := _STEP_RE.match(stripped):
        return LineInfo(
            "step", exact=line == stripped and bool(_EXACT_STEP_RE.match(stripped)), index=int(match[1])
        )
    if match := _END_RE.match(stripped):
        return LineInfo("end", exact=line == END_MARKER)
    match = _CORRECTION_RE.match(line)
    if match and (not match["value"].strip() or ":" in match["close"] or "]" in match["close"]):
        number = match[1] or match[2]
        return LineInfo(
            "correction",
            exact=bool(_EXACT_CORRECTION_RE.match(line)),
            index=int(number) if number else None,
            value=match["value"],
            value_start=match.start("value"),
        )
    if (match := _LABEL_RE.match(line)) and (spec := _LABEL_TABLE.get(_normalise_label(match["name"]))):
        exact = not match["pre"] and not match["post"] and not match["post2"] and match["name"] == spec.label
        return LineInfo("label", exact=exact, field=spec, value=line[match.end() :], value_start=match.end())
    return LineInfo("text")


_JUDGEMENT_RE = re.compile(r"\b(not\s+correct|incorrect|correct)\b", re.IGNORECASE)
# A value offering both words as alternatives ("Correct/Incorrect", "<Correct or Incorrect>") is a
# copied placeholder, not a judgement.
_ALTERNATIVES_RE = re.compile(r"\b(?:in)?correct\s*(?:/|\||\bor\b)\s*(?:in)?correct\b", re.IGNORECASE)
_JUDGEMENT_WORDS: dict[str, Judgement] = {"correct": "Correct", "incorrect": "Incorrect"}


@dataclass(frozen=True)
class JudgementValue:
    """A judgement read from a label's value."""

    judgement: Judgement
    exact: bool
    """True when the value is exactly the judgement word and nothing else."""
    start: int
    """Offset of the judgement word in the value."""
    end: int


def read_judgement(value: str) -> JudgementValue | None:
    """Read Correct or Incorrect from a label's value.

    The first occurrence of "correct", "incorrect" or "not correct" (any case) decides; markdown,
    brackets and trailing explanations around it are tolerated but make the value inexact. A value
    that offers both words as alternatives (a copied placeholder) names neither.

    Args:
        value: the text after the label's colon.

    Returns:
        The judgement, or None when the value names neither.
    """
    match = _JUDGEMENT_RE.search(value)
    if match is None or _ALTERNATIVES_RE.search(value):
        return None
    word = " ".join(match[1].lower().split())
    judgement: Judgement = "Incorrect" if word == "not correct" else _JUDGEMENT_WORDS[word]
    exact = value.strip() == judgement and value.lstrip(" ") == value.strip()
    return JudgementValue(judgement, exact, match.start(1), match.end(1))


def reserved_line(line: str) -> bool:
    """Whether a line would be read as a header or a label, so it may not appear inside a text field."""
    return classify_line(line.rstrip("\r")).kind in ("step", "correction", "end", "label")
