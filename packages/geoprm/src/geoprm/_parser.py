"""Reading a critique's text form, strictly or leniently.

One scanner serves both modes. It reads the text line by line, salvages what it can and records every
deviation from the canonical form as a :class:`ParseProblem`. The lenient mode returns the salvage
with its problems; the strict mode raises on the first problem (by line), so it accepts exactly the
texts the lenient mode reads without complaint.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Literal, TypeAlias, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from geoprm._labels import (
    FIELDS,
    FIELDS_BY_NAME,
    FieldSpec,
    Judgement,
    LineInfo,
    StepField,
    classify_line,
    read_judgement,
)
from geoprm._schema import Critique, StepCritique
from geoprm.errors import CritiqueParseError

ProblemKind: TypeAlias = Literal[
    "empty",
    "chatter",
    "form",
    "judgement",
    "missing",
    "truncated",
    "numbering",
    "order",
    "correction",
    "inconsistent",
]
"""The kind of a parse problem; see :class:`ParseProblem`."""


class ParseProblem(BaseModel):
    """One deviation of a critique text from the canonical form."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    line: int | None
    """1-based line number the problem was found on, or None when it concerns the whole text."""
    kind: ProblemKind
    """empty: no step block; chatter: text outside any block or field (ignored); form: a header or label
    spelled differently from the canonical form; judgement: a judgement value that is not exactly
    Correct or Incorrect; missing: a field absent or empty; truncated: no end marker; numbering: steps
    not numbered 1..k; order: steps judged after an incorrect one; correction: correction missing,
    unexpected or for the wrong step; inconsistent: a final judgement that contradicts the two others,
    or another violation of the schema."""
    message: str
    """What is wrong, in words."""


class ParsedStep(BaseModel):
    """A step block as salvaged from a critique text; any field may be missing."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    index: Annotated[int, Field(ge=0)]
    """The step number the text gives (as written, even when the numbering is wrong)."""
    line: Annotated[int, Field(ge=1)]
    """The line the block starts on."""
    intent: str | None = None
    """The step goal, when present."""
    image_analysis: str | None = None
    """The figure check, when present."""
    image_judgement: Judgement | None = None
    """The figure verdict, when readable."""
    logic_analysis: str | None = None
    """The logic check, when present."""
    logic_judgement: Judgement | None = None
    """The logic verdict, when readable."""
    judgement: Judgement | None = None
    """The final verdict: as written, or inferred from the two others when it is missing."""
    judgement_inferred: bool = False
    """True when the final verdict was missing and was inferred from the figure and logic verdicts."""
    judgement_span: tuple[int, int] | None = None
    """Character offsets [start, end) of the written final-verdict word in the parsed text; None when the
    verdict was not written. A model wrapper maps this span to the token whose log-probs score the step."""
    judgement_value_start: int | None = None
    """Character offset of the text right after the final-verdict label's colon (where the model starts
    choosing between the judgements); None when the verdict was not written."""
    verdict_spans: tuple[tuple[int, int], ...] = ()
    """Character offsets [start, end) of every readable verdict word of the block (figure, logic and
    final), in text order: the decisions of the critique, which a trainer may weight in its loss."""


class ParsedCritique(BaseModel):
    """What the parser salvaged from a critique text, with the problems it met."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    steps: tuple[ParsedStep, ...]
    """The step blocks found, in text order."""
    correction: str | None
    """The correction text, when a correction block was found."""
    correction_for: int | None
    """The step number the correction header names, when it names one."""
    complete: bool
    """True when the end marker was found (the text was not cut off)."""
    problems: tuple[ParseProblem, ...]
    """Every deviation found, ordered by line."""
    critique: Critique | None
    """The validated critique, when the salvage satisfies the schema (it may still have had problems of form)."""

    @property
    def judgements(self) -> tuple[Judgement | None, ...]:
        """The final judgement of each salvaged step (None where unreadable)."""
        return tuple(step.judgement for step in self.steps)

    @property
    def ok(self) -> bool:
        """True when the text was in canonical form with no problem."""
        return not self.problems


_TEXT_FIELDS: tuple[StepField, ...] = tuple(spec.name for spec in FIELDS if not spec.is_judgement)


@dataclass
class _Draft:
    index: int
    line: int
    texts: dict[StepField, list[str]] = field(default_factory=dict)
    judgements: dict[StepField, Judgement | None] = field(default_factory=dict)
    span: tuple[int, int] | None = None
    value_start: int | None = None
    verdict_line: int | None = None
    verdicts: list[tuple[int, int]] = field(default_factory=list)

    def has(self, name: StepField) -> bool:
        return name in self.texts or name in self.judgements


Target: TypeAlias = Literal["none", "text", "judgement", "correction"]


@dataclass
class _Scanner:
    text: str
    drafts: list[_Draft] = field(default_factory=list)
    problems: list[ParseProblem] = field(default_factory=list)
    target: Target = "none"
    target_field: StepField | None = None
    correction_lines: list[str] | None = None
    correction_line: int | None = None
    correction_for: int | None = None
    complete: bool = False

    def problem(self, line: int | None, kind: ProblemKind, message: str) -> None:
        self.problems.append(ParseProblem(line=line, kind=kind, message=message))

    def scan(self) -> None:
        offset = 0
        handlers: dict[str, Callable[[int, int, str, LineInfo], None]] = {
            "blank": self._blank,
            "step": self._step,
            "correction": self._correction,
            "end": self._end,
            "label": self._label,
            "text": self._text,
        }
        saw_cr = False
        for number, raw in enumerate(self.text.split("\n"), start=1):
            line = raw.removesuffix("\r")
            if line != raw and not saw_cr:
                saw_cr = True
                self.problem(
                    number, "form", "carriage return at the end of the line; the form uses \\n line breaks"
                )
            if self.complete:
                if line.strip():
                    self.problem(number, "chatter", "text after the end marker")
            else:
                info = classify_line(line)
                handlers[info.kind](number, offset, line, info)
            offset += len(raw) + 1

    def _blank(self, number: int, offset: int, line: str, info: LineInfo) -> None:
        self._append(line)

    def _append(self, line: str) -> None:
        if self.target == "correction" and self.correction_lines is not None:
            self.correction_lines.append(line)
        elif self.target == "text" and self.target_field is not None:
            self.drafts[-1].texts[self.target_field].append(line)

    def _step(self, number: int, offset: int, line: str, info: LineInfo) -> None:
        if not info.exact:
            self.problem(
                number, "form", f"step header {line.strip()!r} is not written as [Step {info.index}]"
            )
        if self.correction_lines is not None:
            self.problem(number, "order", "a step block follows the correction block")
        self.drafts.append(_Draft(index=info.index or 0, line=number))
        self.target, self.target_field = "none", None

    def _correction(self, number: int, offset: int, line: str, info: LineInfo) -> None:
        shown = info.index if info.index is not None else "k"
        if not info.exact:
            self.problem(
                number,
                "form",
                f"correction header {line.strip()!r} is not written as [Correction of step {shown}]",
            )
        if self.correction_lines is not None:
            self.problem(number, "correction", "a second correction block; the first one is kept")
            self.target = "none"
            return
        self.correction_lines = [info.value] if info.value.strip() else []
        self.correction_line, self.correction_for = number, info.index
        self.target, self.target_field = "correction", None

    def _end(self, number: int, offset: int, line: str, info: LineInfo) -> None:
        if not info.exact:
            self.problem(number, "form", f"end marker {line.strip()!r} is not written as [End]")
        self.complete = True

    def _label(self, number: int, offset: int, line: str, info: LineInfo) -> None:
        spec = info.field
        if spec is None:
            raise CritiqueParseError("a label line without its field", line=number)
        if not self.drafts or self.drafts[-1].has(spec.name) or self.target == "correction":
            index = self.drafts[-1].index + 1 if self.drafts else 1
            self.problem(number, "missing", f"{spec.label!r} starts a step with no [Step {index}] header")
            self.drafts.append(_Draft(index=index, line=number))
            self.target = "none"
        if not info.exact:
            self.problem(
                number,
                "form",
                f"label {line[: info.value_start].strip()!r} is not written as {spec.label + ':'!r}",
            )
        if spec.is_judgement:
            self._judgement(number, offset, info, spec)
        else:
            self.drafts[-1].texts[spec.name] = [info.value.lstrip()]
            self.target, self.target_field = "text", spec.name

    def _judgement(self, number: int, offset: int, info: LineInfo, spec: FieldSpec) -> None:
        draft = self.drafts[-1]
        value = read_judgement(info.value)
        self.target, self.target_field = "judgement", spec.name
        if value is None:
            self.problem(
                number,
                "judgement",
                f"{spec.label} {info.value.strip()[:40]!r} names neither Correct nor Incorrect",
            )
            draft.judgements[spec.name] = None
            return
        if not value.exact:
            self.problem(
                number,
                "judgement",
                f"{spec.label} {info.value.strip()[:40]!r} is not exactly {value.judgement}",
            )
        draft.judgements[spec.name] = value.judgement
        start = offset + info.value_start + value.start
        draft.verdicts.append((start, start + value.end - value.start))
        if spec.name == "judgement":
            draft.verdict_line = number
            draft.span = draft.verdicts[-1]
            draft.value_start = offset + info.value_start

    def _text(self, number: int, offset: int, line: str, info: LineInfo) -> None:
        if self.target in ("text", "correction"):
            self._append(line)
        elif not self.drafts:
            self.problem(number, "chatter", "text before the first step block")
        else:
            self.problem(number, "chatter", "text outside any field")


def _finish_step(draft: _Draft, problems: list[ParseProblem]) -> ParsedStep:
    texts: dict[str, str | None] = {}
    for name in _TEXT_FIELDS:
        label = FIELDS_BY_NAME[name].label
        joined = "\n".join(draft.texts.get(name, [])).strip()
        texts[name] = joined or None
        if name not in draft.texts:
            problems.append(
                ParseProblem(line=draft.line, kind="missing", message=f"step {draft.index} has no {label!r}")
            )
        elif not joined:
            problems.append(
                ParseProblem(
                    line=draft.line, kind="missing", message=f"step {draft.index} has an empty {label!r}"
                )
            )
    for name in ("image_judgement", "logic_judgement", "judgement"):
        if name not in draft.judgements:
            label = FIELDS_BY_NAME[name].label
            problems.append(
                ParseProblem(line=draft.line, kind="missing", message=f"step {draft.index} has no {label!r}")
            )
    image, logic = draft.judgements.get("image_judgement"), draft.judgements.get("logic_judgement")
    final = draft.judgements.get("judgement")
    inferred = False
    expected: Judgement | None = None
    if image is not None and logic is not None:
        expected = "Correct" if image == logic == "Correct" else "Incorrect"
    elif "Incorrect" in (image, logic):
        expected = "Incorrect"
    if "judgement" not in draft.judgements and expected is not None:
        final, inferred = expected, True
        problems.append(
            ParseProblem(
                line=draft.line,
                kind="missing",
                message=f"step {draft.index}: final verdict inferred as {expected}",
            )
        )
    elif final is not None and image is not None and logic is not None and final != expected:
        problems.append(
            ParseProblem(
                line=draft.verdict_line or draft.line,
                kind="inconsistent",
                message=f"step {draft.index}: verdict {final} contradicts figure {image} and logic {logic}",
            )
        )
    return ParsedStep(
        index=draft.index,
        line=draft.line,
        intent=texts["intent"],
        image_analysis=texts["image_analysis"],
        image_judgement=image,
        logic_analysis=texts["logic_analysis"],
        logic_judgement=logic,
        judgement=final,
        judgement_inferred=inferred,
        judgement_span=draft.span,
        judgement_value_start=draft.value_start,
        verdict_spans=tuple(draft.verdicts),
    )


def _check_sequence(steps: Sequence[ParsedStep], scanner: _Scanner, correction: str | None) -> None:
    problems = scanner.problems
    for position, step in enumerate(steps, start=1):
        if step.index != position:
            problems.append(
                ParseProblem(
                    line=step.line,
                    kind="numbering",
                    message=f"step numbered {step.index} at position {position}",
                )
            )
    first_bad = next((step for step in steps if step.judgement == "Incorrect"), None)
    if first_bad is not None and first_bad is not steps[-1]:
        problems.append(
            ParseProblem(
                line=steps[steps.index(first_bad) + 1].line,
                kind="order",
                message=f"steps are judged after the first incorrect step ({first_bad.index})",
            )
        )
    line = scanner.correction_line
    if first_bad is not None and correction is None:
        line = line if line is not None else first_bad.line
        problems.append(
            ParseProblem(
                line=line,
                kind="correction",
                message=f"step {first_bad.index} is Incorrect but no correction is given",
            )
        )
    if (
        first_bad is None
        and scanner.correction_lines is not None
        and all(s.judgement is not None for s in steps)
    ):
        problems.append(
            ParseProblem(
                line=line, kind="correction", message="a correction is given but every step is Correct"
            )
        )
    named = scanner.correction_for
    if first_bad is not None and named is not None and named != first_bad.index:
        problems.append(
            ParseProblem(
                line=line,
                kind="correction",
                message=f"the correction names step {named}, the first incorrect step is {first_bad.index}",
            )
        )


def _validated(
    steps: Sequence[ParsedStep], correction: str | None, problems: list[ParseProblem]
) -> Critique | None:
    if (
        not steps
        or any(getattr(step, name) is None for step in steps for name in FIELDS_BY_NAME)
        or any(step.judgement_inferred for step in steps)
    ):
        return None
    try:
        return Critique(
            steps=tuple(
                StepCritique.model_validate(
                    {name: getattr(step, name) for name in ("index", *FIELDS_BY_NAME)}
                )
                for step in steps
            ),
            correction=correction,
        )
    except ValidationError as error:
        explained = {"missing", "numbering", "order", "correction", "inconsistent"}
        if not any(problem.kind in explained for problem in problems):
            first = error.errors()[0]
            problems.append(ParseProblem(line=None, kind="inconsistent", message=str(first["msg"])))
        return None


def _salvage(text: str) -> ParsedCritique:
    scanner = _Scanner(text)
    scanner.scan()
    problems = scanner.problems
    steps = tuple(_finish_step(draft, problems) for draft in scanner.drafts)
    correction = None
    if scanner.correction_lines is not None:
        correction = "\n".join(scanner.correction_lines).strip() or None
        if correction is None:
            problems.append(
                ParseProblem(
                    line=scanner.correction_line, kind="missing", message="the correction block is empty"
                )
            )
    if not steps:
        problems.append(ParseProblem(line=None, kind="empty", message="no step block found"))
    else:
        _check_sequence(steps, scanner, correction)
    if not scanner.complete:
        problems.append(
            ParseProblem(line=None, kind="truncated", message="no [End] marker: the text may be cut off")
        )
    critique = _validated(steps, correction, problems)
    ordered = sorted(problems, key=lambda p: math.inf if p.line is None else p.line)
    return ParsedCritique(
        steps=steps,
        correction=correction,
        correction_for=scanner.correction_for,
        complete=scanner.complete,
        problems=tuple(ordered),
        critique=critique,
    )


@overload
def parse_critique(text: str) -> Critique: ...
@overload
def parse_critique(text: str, *, strict: Literal[True]) -> Critique: ...
@overload
def parse_critique(text: str, *, strict: Literal[False]) -> ParsedCritique: ...
@overload
def parse_critique(text: str, *, strict: bool) -> Critique | ParsedCritique: ...
def parse_critique(text: str, *, strict: bool = True) -> Critique | ParsedCritique:
    """Read a critique from its text form.

    Args:
        text: the critique text, as written by :func:`geoprm.format_critique` or by a model.
        strict: when True (the default), accept only the canonical form and return the critique;
            when False, salvage what can be read and return it with the problems found.

    Returns:
        The critique (strict), or a :class:`ParsedCritique` (lenient).

    Raises:
        CritiqueParseError: in strict mode, naming the line of the first problem.
    """
    parsed = _salvage(text)
    if not strict:
        return parsed
    if parsed.problems:
        first = parsed.problems[0]
        raise CritiqueParseError(f"{first.message} [{first.kind}]", line=first.line)
    if parsed.critique is None:  # pragma: no cover - every failure path above records a problem
        raise CritiqueParseError("the text does not form a valid critique")
    return parsed.critique
