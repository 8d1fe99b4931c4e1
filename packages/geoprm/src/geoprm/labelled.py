"""Reward-model training data from exact step labels: no teacher, no Monte Carlo completions.

Where every step of a solution can be checked exactly (a synthetic problem carries its realised figure,
so each step's relation can be tested on it), the critique a teacher would write is known: each step up
to the first wrong one gets a short analysis in fixed template words and a judgement, and the first
wrong step gets a corrected step taken from a verified reference solution. This module turns such
labelled solutions into the same SFT records as :func:`geoprm.data.build_prm_data` (GM-PRM, section
3.2, without its teacher and its agreement filter, which exact labels make moot): it writes the
critiques, removes duplicate solutions, balances solutions with and without an error, and reports the
statistics in the form of the paper's data table (appendix A.3).

What a step says and which check it fails is the caller's: geoprm does not know the program language
or the figure. ``geo prm figure-data`` labels PGPS program traces on geosynth's figures and builds the
:class:`LabelledStep` objects.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Annotated, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from geoprm._printer import format_critique
from geoprm._prompts import critic_prompt
from geoprm._schema import Critique, StepCritique, check_text_field
from geoprm.data import SFTRecord, balance
from geoprm.errors import DataError

__all__ = (
    "PAPER_DATA",
    "Aspect",
    "LabelledBuild",
    "LabelledDrop",
    "LabelledSolution",
    "LabelledStats",
    "LabelledStep",
    "build_labelled_records",
    "data_table",
    "labelled_critique",
    "read_labelled",
)

Aspect = Literal["figure", "logic"]
"""The check a wrong step fails: ``figure`` (what it reads or claims disagrees with the figure) or
``logic`` (its reasoning: an operand nothing provides, an equation that fails, a wrong read-off)."""

LabelledDrop = Literal["unfinished", "duplicate", "no_correction", "balance"]
"""Why a labelled solution gives no record: it stops before its answer step, it has the same steps as an
earlier solution of the same problem, a wrong step has no verified correction, or removed to balance."""

PAPER_DATA: dict[str, int] = {"samples": 19_614, "with_error": 9_061, "without_error": 10_553}
"""GM-PRM's training set (appendix A.3, the paper's figures): samples, solutions with an incorrect step
(found by GPT-4o and Monte Carlo estimation together), and solutions whose steps are all correct."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class LabelledStep(_Frozen):
    """One step with its exact label and the words of its critique."""

    text: str
    """The step as the critic sees it (one of the solution's split steps)."""
    correct: bool
    """Whether the step is correct."""
    failed: Aspect | None = None
    """The check a wrong step fails; None for a correct step."""
    intent: str
    """What the step does (the critique's ``Step goal``)."""
    figure_note: str
    """What checking it against the figure finds (``Figure check``)."""
    logic_note: str
    """What checking its logic finds (``Logic check``)."""

    @field_validator("text", "intent", "figure_note", "logic_note")
    @classmethod
    def _one_text(cls, value: str) -> str:
        return check_text_field(value, "a step's text or note")

    @model_validator(mode="after")
    def _failed_iff_wrong(self) -> Self:
        if self.correct == (self.failed is not None):
            raise ValueError(
                "a wrong step names the check it fails (failed: figure or logic); a correct step names none"
            )
        return self


class LabelledSolution(_Frozen):
    """A solution whose every step carries an exact label."""

    id: str
    """A unique id (e.g. ``<problem id>/s3``)."""
    problem: str
    """The id of the problem it solves."""
    question: str
    """The question as the critic reads it."""
    images: tuple[str, ...] = ()
    """Paths of the problem's images."""
    steps: Annotated[tuple[LabelledStep, ...], Field(min_length=1)]
    """The labelled steps, in order."""
    correction: str | None = None
    """The corrected first wrong step, taken from a verified reference solution; None when every step
    is correct, or when no verified correction was found (the solution then gives no record)."""
    origin: str = "policy"
    """How the solution was made (``policy``: sampled from the policy; ``corrupted:<kind>``: a reference
    solution with one step changed)."""
    source: str = ""
    """Where the problem comes from; carried into the record's source."""
    answer: float | None = None
    """The answer the solution gives, where it gives one (for best-of-N on recorded candidates)."""
    gold: float | None = None
    """The problem's correct answer, where known."""
    finished: bool = True
    """False when the solution stops before its answer step: it gives no record (a critique that passes
    every step would vouch for a solution that answers nothing), but it still counts among the
    candidates of best-of-N."""

    @field_validator("correction")
    @classmethod
    def _correction_text(cls, value: str | None) -> str | None:
        return None if value is None else check_text_field(value, "correction")

    @model_validator(mode="after")
    def _correction_only_when_wrong(self) -> Self:
        if self.correction is not None and self.first_wrong is None:
            raise ValueError(f"solution {self.id}: a correction is given but every step is correct")
        return self

    @property
    def labels(self) -> tuple[bool, ...]:
        """Correct or not, step by step."""
        return tuple(step.correct for step in self.steps)

    @property
    def first_wrong(self) -> int | None:
        """The position (0-based) of the first wrong step, or None."""
        return next((i for i, step in enumerate(self.steps) if not step.correct), None)

    @property
    def step_texts(self) -> tuple[str, ...]:
        """The steps' texts."""
        return tuple(step.text for step in self.steps)


def labelled_critique(solution: LabelledSolution) -> Critique:
    """The critique of a labelled solution: its steps up to the first wrong one, and that step's correction.

    A correct step is Correct on both checks; a wrong one is Incorrect on the check it fails and
    Correct on the other, so its overall verdict is Incorrect.

    Raises:
        DataError: a step is wrong but the solution has no correction.
    """
    first = solution.first_wrong
    if first is not None and solution.correction is None:
        raise DataError(f"solution {solution.id}: step {first + 1} is wrong but no correction is given")
    judged = solution.steps if first is None else solution.steps[: first + 1]
    steps = tuple(
        StepCritique(
            index=number,
            intent=step.intent,
            image_analysis=step.figure_note,
            image_judgement="Incorrect" if step.failed == "figure" else "Correct",
            logic_analysis=step.logic_note,
            logic_judgement="Incorrect" if step.failed == "logic" else "Correct",
            judgement="Correct" if step.correct else "Incorrect",
        )
        for number, step in enumerate(judged, start=1)
    )
    return Critique(steps=steps, correction=solution.correction if first is not None else None)


class LabelledStats(_Frozen):
    """What became of the labelled solutions: the counts of the data table."""

    solutions: int
    """Labelled solutions given."""
    problems: int
    """Distinct problems among them."""
    dropped: dict[str, int]
    """Solutions that gave no record, by reason (unfinished, duplicate, no_correction, balance)."""
    with_error: int
    """Records whose solution has a wrong step."""
    without_error: int
    """Records whose solution is correct at every step."""
    by_origin: dict[str, dict[str, int]]
    """Records per origin: ``{origin: {"with_error": n, "without_error": n}}``."""
    first_error: tuple[int, ...]
    """Records with an error by the position of the first wrong step: entry i counts step i + 1."""
    failed: dict[str, int]
    """Records with an error by the check their first wrong step fails (figure, logic)."""
    steps: int
    """Steps of the recorded solutions."""
    judged_steps: int
    """Steps their critiques judge (up to and including the first wrong one)."""

    @property
    def records(self) -> int:
        """Records written."""
        return self.with_error + self.without_error


class LabelledBuild(_Frozen):
    """The records and statistics of one build."""

    records: tuple[SFTRecord, ...]
    """The kept records, in solution order."""
    stats: LabelledStats
    """The counts."""
    drops: dict[str, LabelledDrop]
    """Why each dropped solution was dropped, by solution id."""


def _record(solution: LabelledSolution, critique: Critique, verdict_first: bool) -> SFTRecord:
    source = f"{solution.source}/{solution.origin}" if solution.source else solution.origin
    return SFTRecord(
        id=solution.id,
        images=solution.images,
        prompt=critic_prompt(solution.question, solution.step_texts),
        completion=format_critique(critique, verdict_first=verdict_first),
        has_error=critique.has_error,
        first_error=critique.first_error,
        source=source,
    )


def build_labelled_records(
    solutions: Sequence[LabelledSolution],
    *,
    rng: random.Random,
    balanced: bool = True,
    verdict_first: bool = False,
) -> LabelledBuild:
    """Reward-model SFT records from labelled solutions, with the statistics of the data table.

    Unfinished solutions are dropped, so are solutions with the same steps as an earlier solution of
    the same problem (a policy samples the same program many times) and wrong solutions without a
    verified correction;
    then, when ``balanced``, the larger of the two sides (with and without an error) is sampled down
    to the smaller (GM-PRM, appendix A.3, balances its set the same way).

    Args:
        solutions: the labelled solutions.
        rng: the random source of the balancing.
        balanced: keep as many solutions with an error as without.
        verdict_first: write each step's verdict before its analyses in the completions
            (:func:`geoprm.format_critique`).

    Returns:
        The records (prompt: :func:`geoprm.critic_prompt`; completion: the critique's text form), the
        statistics and the drops.

    Raises:
        DataError: two solutions share an id.
    """
    ids = [s.id for s in solutions]
    if len(set(ids)) != len(ids):
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        raise DataError(f"solution ids must be unique; repeated: {repeated[:5]}")
    drops: dict[str, LabelledDrop] = {}
    seen: set[tuple[str, tuple[str, ...]]] = set()
    kept: list[tuple[LabelledSolution, Critique]] = []
    for solution in solutions:
        if not solution.finished:
            drops[solution.id] = "unfinished"
            continue
        key = (solution.problem, solution.step_texts)
        if key in seen:
            drops[solution.id] = "duplicate"
            continue
        seen.add(key)
        if solution.first_wrong is not None and solution.correction is None:
            drops[solution.id] = "no_correction"
            continue
        kept.append((solution, labelled_critique(solution)))
    if balanced:
        keep = balance(
            [s.id for s, c in kept if c.has_error], [s.id for s, c in kept if not c.has_error], rng
        )
        drops.update({s.id: "balance" for s, _ in kept if s.id not in keep})
        kept = [(s, c) for s, c in kept if s.id in keep]
    records = tuple(_record(s, c, verdict_first) for s, c in kept)
    by_origin: dict[str, dict[str, int]] = {}
    first_error: list[int] = []
    failed = {"figure": 0, "logic": 0}
    for solution, critique in kept:
        side = "with_error" if critique.has_error else "without_error"
        counts = by_origin.setdefault(solution.origin, {"with_error": 0, "without_error": 0})
        counts[side] += 1
        if critique.first_error is not None:
            first_error.extend([0] * (critique.first_error - len(first_error)))
            first_error[critique.first_error - 1] += 1
            aspect = solution.steps[critique.first_error - 1].failed
            failed[aspect or "logic"] += 1
    reasons: tuple[LabelledDrop, ...] = ("unfinished", "duplicate", "no_correction", "balance")
    stats = LabelledStats(
        solutions=len(solutions),
        problems=len({s.problem for s in solutions}),
        dropped={reason: sum(1 for r in drops.values() if r == reason) for reason in reasons},
        with_error=sum(1 for r in records if r.has_error),
        without_error=sum(1 for r in records if not r.has_error),
        by_origin=dict(sorted(by_origin.items())),
        first_error=tuple(first_error),
        failed=failed,
        steps=sum(len(s.steps) for s, _ in kept),
        judged_steps=sum(len(c.steps) for _, c in kept),
    )
    return LabelledBuild(records=records, stats=stats, drops=drops)


def _share(part: int, whole: int) -> str:
    return f"{part:,} ({100 * part / whole:.1f}%)" if whole else f"{part:,}"


def data_table(stats: LabelledStats, *, labels: str = "the realised figure (exact)") -> str:
    """The statistics as a Markdown table beside GM-PRM's training set (appendix A.3, the paper's figures).

    Args:
        stats: the statistics of a build.
        labels: how our steps were labelled, for the table's last row.

    Returns:
        The table, ending with a newline.
    """
    paper = PAPER_DATA
    total = stats.records
    positions = stats.first_error
    head = [f"step {i + 1}: {n:,}" for i, n in enumerate(positions[:3])]
    if len(positions) > 3:
        head.append(f"step 4 or later: {sum(positions[3:]):,}")
    origins = "; ".join(
        f"{origin}: {c['with_error']:,} with an error, {c['without_error']:,} without"
        for origin, c in stats.by_origin.items()
    )
    rows = [
        ("samples (solutions)", f"{paper['samples']:,}", f"{total:,}"),
        (
            "with an incorrect step",
            _share(paper["with_error"], paper["samples"]),
            _share(stats.with_error, total),
        ),
        (
            "every step correct",
            _share(paper["without_error"], paper["samples"]),
            _share(stats.without_error, total),
        ),
        ("problems", "not given", f"{stats.problems:,}"),
        (
            "steps per solution (judged by the critique)",
            "not given",
            f"{stats.steps / total:.2f} ({stats.judged_steps / total:.2f})" if total else "-",
        ),
        ("first incorrect step", "not given", ", ".join(head) or "-"),
        (
            "check the first incorrect step fails",
            "not given",
            f"figure: {stats.failed['figure']:,}, logic: {stats.failed['logic']:,}",
        ),
        ("records by origin", "policy solutions (VisualPRM400K)", origins or "-"),
        (
            "step labels",
            "GPT-4o critiques kept where Monte Carlo hard estimation agrees",
            labels,
        ),
    ]
    lines = ["| | GM-PRM (the paper's figures, appendix A.3) | ours |", "|---|---:|---:|"]
    lines += [f"| {name} | {theirs} | {ours} |" for name, theirs, ours in rows]
    return "\n".join(lines) + "\n"


def _first_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(map(str, first["loc"]))
    return f"{where}: {first['msg']}" if where else str(first["msg"])


def read_labelled(path: str | Path) -> Iterator[tuple[LabelledSolution | None, str | None]]:
    """Read labelled solutions from JSON Lines, one ``(solution, None)`` or ``(None, error)`` per line.

    A bad line (not JSON, a missing field, a wrong step without the check it fails, no steps) gives a
    one-line error naming the file, the line and the record's id where it has one; reading goes on.

    Raises:
        DataError: the file cannot be read.
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise DataError(f"{file}: cannot be read: {exc.strerror or exc}") from exc
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            yield None, f"{file}: line {number}: not valid JSON ({exc.msg})"
            continue
        name = f" (record {raw['id']})" if isinstance(raw, dict) and isinstance(raw.get("id"), str) else ""
        try:
            yield LabelledSolution.model_validate_json(line), None
        except ValidationError as exc:
            yield None, f"{file}: line {number}{name}: {_first_error(exc)}"
