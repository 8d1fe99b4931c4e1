r"""PGPS-format datasets (PGPS9K, Geometry3K re-annotation): records, N lists, loading, checking.

A PGPS solution program refers to the known quantities of its problem as
``N0, N1, ...`` and to the unknowns named in the text by their letters. What
``N<i>`` means is not stored in the annotation files: it follows from the
reference preprocessing of the problem text and clauses, which this module
reproduces (:func:`number_list`). Two numberings exist:

* **raw**: text numbers in text order, then the value of every semantic clause
  that has one. The ``expression`` stored in the files uses this numbering.
* **de-duplicated**: the same, minus the semantic values whose string equals a
  text number. This is what the reference model points at; :func:`dedup_program`
  renumbers a raw program into it.

Either pair (raw program + raw list, de-duplicated program + de-duplicated list)
executes to the same answer. The reference loader's ``var_values`` is the
de-duplicated list. One deliberate difference: a raw ``N<i>`` that names a
dropped semantic value is left unchanged by the reference (so it then names a
different value); :func:`dedup_program` maps it to the equal text number. No
program of the published test splits refers to a dropped value.

Whitespace: the reference tokeniser needs single spaces (two spaces in a row
crash it). :func:`load_pgps` rejects such input by default with the record and
field named; ``normalize_whitespace=True`` collapses whitespace runs first.

Example:
    >>> from geodsl.data import number_list
    >>> nl = number_list("Find y.", ["line A B"], ["AC = 24", "BC = x", "AB = y", "m \\angle CBA = 30"])
    >>> nl.numbers, nl.letters
    (('24', 'x', 'y', '30'), ('y',))
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from geodsl._pgps_io import read_records
from geodsl._pgps_text import build_number_list
from geodsl.errors import DataError, GeoDSLError

__all__ = [
    "ANSWER_TOLERANCE",
    "SAMPLES",
    "CheckMiss",
    "CheckReport",
    "NumberList",
    "PGPSRecord",
    "Solver",
    "check_dataset",
    "dedup_program",
    "load_pgps",
    "load_sample",
    "number_list",
]

ANSWER_TOLERANCE = 5e-3
"""Absolute tolerance under which a computed answer agrees with a stored one (PGPS evaluation)."""

_N_TOKEN = re.compile(r"N(\d+)")

_MODEL_CONFIG = ConfigDict(frozen=True, extra="forbid", strict=True, use_attribute_docstrings=True)


class NumberList(BaseModel):
    """What the ``N<i>`` tokens and the argument letters of a problem's program refer to."""

    model_config = _MODEL_CONFIG

    numbers: tuple[str, ...]
    """The raw N list: ``N<i>`` of a stored program is ``numbers[i]`` (lower-cased value strings)."""
    text_count: int
    """How many leading entries of ``numbers`` come from the problem text (the rest: semantic clauses)."""
    letters: tuple[str, ...]
    """The argument letters (``[ARG]`` tokens of the text, condition part first, repeats kept)."""
    dedup_numbers: tuple[str, ...]
    """The de-duplicated N list: ``numbers`` minus semantic values equal to a text number."""
    dedup_index: tuple[int, ...]
    """For each raw index, the de-duplicated index of the same value (a dropped
    semantic value maps to the first text number with the same string)."""

    @model_validator(mode="after")
    def _consistent(self) -> NumberList:
        if len(self.dedup_index) != len(self.numbers) or not 0 <= self.text_count <= len(self.numbers):
            raise ValueError("dedup_index must have one entry per raw number and text_count must fit")
        for raw, dedup in enumerate(self.dedup_index):
            if not 0 <= dedup < len(self.dedup_numbers) or self.dedup_numbers[dedup] != self.numbers[raw]:
                raise ValueError(f"dedup_index[{raw}] = {dedup} does not point at {self.numbers[raw]!r}")
        return self


def number_list(text: str, stru_clauses: Sequence[str], sem_clauses: Sequence[str]) -> NumberList:
    """Build a problem's N lists and argument letters with the reference preprocessing.

    Args:
        text: the problem text (single-spaced).
        stru_clauses: the structural clauses (``parsing_stru_seqs``); they hold no numbers.
        sem_clauses: the semantic clauses (``parsing_sem_seqs``).

    Returns:
        The raw and de-duplicated N lists, the index map between them and the letters.

    Raises:
        DataError: empty text, or two spaces in a row in the text or a clause.
    """
    parts = build_number_list(text, stru_clauses, sem_clauses)
    return NumberList(
        numbers=parts.numbers,
        text_count=parts.text_count,
        letters=parts.letters,
        dedup_numbers=parts.dedup_numbers,
        dedup_index=parts.dedup_index,
    )


def dedup_program(expression: str, numbers: NumberList) -> str:
    """Renumber the ``N<i>`` tokens of a raw-numbered program into de-duplicated numbering.

    Only whole ``N<digits>`` tokens change; operators, ``V``/``C`` tokens and
    letters are kept, and tokens are re-joined with single spaces. A raw index
    past the end of the raw list (an annotation error) is shifted down by the
    number of dropped entries, so it stays out of range instead of silently
    pointing at another value.

    Args:
        expression: the program text in raw numbering (as stored in the files).
        numbers: the problem's :class:`NumberList`.

    Returns:
        The program text in de-duplicated numbering.
    """
    dropped = len(numbers.numbers) - len(numbers.dedup_numbers)
    out: list[str] = []
    for token in expression.split():
        match = _N_TOKEN.fullmatch(token)
        if match is None:
            out.append(token)
            continue
        raw = int(match.group(1))
        new = numbers.dedup_index[raw] if raw < len(numbers.dedup_index) else raw - dropped
        out.append(f"N{new}")
    return " ".join(out)


def _program_n_indices(expression: str) -> list[int]:
    """Return the indices of the ``N<i>`` tokens of a program text, in order."""
    return [int(m.group(1)) for token in expression.split() if (m := _N_TOKEN.fullmatch(token))]


class PGPSRecord(BaseModel):
    """One PGPS-format problem with its annotated program and the derived N lists.

    Build one with :meth:`build` (which derives the N lists) or :func:`load_pgps`.
    The constructor re-derives the N lists and rejects stored ones that differ.
    """

    model_config = _MODEL_CONFIG

    id: str
    """Record id: the key in the file (``prob_<k>``) or the record's ``id`` field."""
    text: str
    """Problem text with LaTeX commands, single-spaced."""
    stru_clauses: tuple[str, ...]
    """Structural clauses (file key ``parsing_stru_seqs``): collinear points, points on circles."""
    sem_clauses: tuple[str, ...]
    """Semantic clauses (file key ``parsing_sem_seqs``): lengths, angle and arc measures, relations."""
    expression: str
    """The solution program as stored, in raw N numbering."""
    answer: str
    """The stored answer string (three decimals, the reference executor's output)."""
    type: str
    """Knowledge type exactly as stored; one type has a trailing space ("Midsegment of Triangle ").
    Kept raw so records round-trip; :attr:`knowledge_type` gives the stripped name."""
    choices: tuple[float, float, float, float]
    """The four multiple-choice options (duplicates occur)."""
    diagram: str | None = None
    """Diagram file name (``img_<k>.png``); None when the input file has no such field."""
    book: str | None = None
    """Source book; None when the input file has no such field."""
    page: str | None = None
    """Page in the source book (``""`` when unknown in the published files); None when absent."""
    numbers: tuple[str, ...]
    """Derived: the raw N list (``N<i>`` of :attr:`expression` is ``numbers[i]``)."""
    letters: tuple[str, ...]
    """Derived: the argument letters of the text."""
    dedup_numbers: tuple[str, ...]
    """Derived: the de-duplicated N list."""
    dedup_expression: str
    """Derived: :attr:`expression` renumbered for :attr:`dedup_numbers`."""

    @model_validator(mode="after")
    def _derived_fields_match(self) -> PGPSRecord:
        try:
            derived = number_list(self.text, self.stru_clauses, self.sem_clauses)
        except DataError as exc:
            raise ValueError(str(exc)) from None
        expected = {
            "numbers": derived.numbers,
            "letters": derived.letters,
            "dedup_numbers": derived.dedup_numbers,
            "dedup_expression": dedup_program(self.expression, derived),
        }
        for name, value in expected.items():
            if getattr(self, name) != value:
                raise ValueError(f"{name} {getattr(self, name)!r} differs from the derived {value!r}")
        try:
            float(self.answer)
        except ValueError:
            raise ValueError(f"answer {self.answer!r} is not a number") from None
        return self

    @classmethod
    def build(
        cls,
        *,
        id: str,
        text: str,
        stru_clauses: Sequence[str],
        sem_clauses: Sequence[str],
        expression: str,
        answer: str,
        type: str,
        choices: Sequence[float],
        diagram: str | None = None,
        book: str | None = None,
        page: str | None = None,
    ) -> PGPSRecord:
        """Create a record from its annotation fields, deriving the N lists.

        Raises:
            DataError: the text or a clause cannot be tokenised (see :func:`number_list`),
                or a field has the wrong shape.
        """
        try:
            derived = number_list(text, stru_clauses, sem_clauses)
        except DataError as exc:
            raise DataError(f"record {id}: {exc}") from None
        if len(choices) != 4:
            raise DataError(f"record {id}: expected 4 choices, got {len(choices)}")
        try:
            return cls(
                id=id,
                text=text,
                stru_clauses=tuple(stru_clauses),
                sem_clauses=tuple(sem_clauses),
                expression=expression,
                answer=answer,
                type=type,
                choices=(float(choices[0]), float(choices[1]), float(choices[2]), float(choices[3])),
                diagram=diagram,
                book=book,
                page=page,
                numbers=derived.numbers,
                letters=derived.letters,
                dedup_numbers=derived.dedup_numbers,
                dedup_expression=dedup_program(expression, derived),
            )
        except ValueError as exc:
            raise DataError(f"record {id}: {exc}") from None

    @property
    def answer_value(self) -> float:
        """The stored answer as a float."""
        return float(self.answer)

    @property
    def knowledge_type(self) -> str:
        """The knowledge type without surrounding whitespace."""
        return self.type.strip()

    def number_list(self) -> NumberList:
        """Return the full :class:`NumberList` of this record (with the raw-to-dedup index map)."""
        return number_list(self.text, self.stru_clauses, self.sem_clauses)

    def out_of_range_n(self) -> list[int]:
        """Return the ``N`` indices of :attr:`expression` that have no entry in :attr:`numbers`."""
        return [i for i in _program_n_indices(self.expression) if i >= len(self.numbers)]


def _collapse(value: str) -> str:
    return " ".join(value.split())


def _same(value: str) -> str:
    return value


def load_pgps(path: str | Path, *, normalize_whitespace: bool = False) -> list[PGPSRecord]:
    """Load a PGPS-format annotation file into records, in file order.

    Accepted layouts: the published object keyed by record id (``prob_<k>``),
    a JSON array of records with ``id`` fields, or JSON Lines. Keys other than
    the annotation fields are ignored: derived files (``examples_96.json``
    carries ``var_values``, ``dedup_expression`` and more) add their own.
    ``diagram``, ``book`` and ``page`` may be absent; every other field is required.

    Args:
        path: the annotation file.
        normalize_whitespace: collapse whitespace runs in the text and the
            clauses to single spaces instead of rejecting them.

    Returns:
        One :class:`PGPSRecord` per record.

    Raises:
        DataError: unreadable or non-UTF-8 file, invalid JSON, or a malformed
            record; the message names the file and the record id.
    """
    path = Path(path)
    fix: Callable[[str], str] = _collapse if normalize_whitespace else _same
    records: list[PGPSRecord] = []
    for raw in read_records(path):
        try:
            records.append(
                PGPSRecord.build(
                    id=raw.id,
                    text=fix(raw.text),
                    stru_clauses=[fix(c) for c in raw.stru_clauses],
                    sem_clauses=[fix(c) for c in raw.sem_clauses],
                    expression=raw.expression,
                    answer=raw.answer,
                    type=raw.type,
                    choices=raw.choices,
                    diagram=raw.diagram,
                    book=raw.book,
                    page=raw.page,
                )
            )
        except DataError as exc:
            raise DataError(f"{path}: {exc}") from None
    return records


# --------------------------------------------------------------------------- dataset check

Solver = Callable[[str, Sequence[str]], float]
"""Executes a raw-numbered program against a raw N list and returns the answer."""


class CheckMiss(BaseModel):
    """One record whose program did not reproduce the stored answer."""

    model_config = _MODEL_CONFIG

    id: str
    """Record id."""
    expression: str
    """The program that was run (raw numbering)."""
    expected: str
    """The stored answer."""
    got: float | None
    """The computed answer, or None when execution failed."""
    error: str | None
    """``ErrorType: message`` when execution failed, else None."""


class CheckReport(BaseModel):
    """Agreement of executed programs with the stored answers over a set of records."""

    model_config = _MODEL_CONFIG

    total: int
    """Records checked."""
    agree: int
    """Records whose answer is within :data:`ANSWER_TOLERANCE` of the stored one."""
    disagree: int
    """Records that executed to a different answer."""
    error: int
    """Records whose execution raised a geodsl error."""
    crash: int
    """Records whose execution raised anything else (a bug in the executor)."""
    misses: tuple[CheckMiss, ...]
    """Every record that did not agree, in input order."""

    @property
    def agreement(self) -> float:
        """Fraction of records that agree (0.0 for an empty check)."""
        return self.agree / self.total if self.total else 0.0


SAMPLES: tuple[str, ...] = ("pgps9k_test", "geometry3k_test")
"""The bundled samples: the first 120 records of each public test split, in the published format."""


def load_sample(name: str = "pgps9k_test") -> list[PGPSRecord]:
    """Load a bundled sample: the first 120 records of the public PGPS9K (default) or Geometry3K test split.

    Args:
        name: ``pgps9k_test`` or ``geometry3k_test`` (see :data:`SAMPLES`).

    Returns:
        The records, in file order.

    Raises:
        DataError: for an unknown sample name.
    """
    from importlib.resources import as_file, files

    if name not in SAMPLES:
        raise DataError(f"no bundled sample {name!r}; bundled: {', '.join(SAMPLES)}")
    with as_file(files("geodsl").joinpath("samples", f"{name}_sample.json")) as path:
        return load_pgps(path)


def _default_solver() -> Solver:
    import geodsl  # local: geodsl's facade may import this module

    execute: Any = getattr(geodsl, "execute", None)
    if execute is None:
        raise DataError("check_dataset needs geodsl.execute, which this installation does not provide")

    def solve(program: str, numbers: Sequence[str]) -> float:
        return float(execute(program, numbers).answer)

    return solve


def check_dataset(
    records: Iterable[PGPSRecord], *, solver: Solver | None = None, tolerance: float = ANSWER_TOLERANCE
) -> CheckReport:
    """Execute every record's stored program on its raw N list and compare with the stored answer.

    Args:
        records: the records to check.
        solver: how to execute a program; defaults to ``geodsl.execute`` (numeric mode).
        tolerance: absolute tolerance for agreement.

    Returns:
        Counts of agreements, disagreements, geodsl errors and other exceptions,
        and the list of misses.
    """
    run = solver if solver is not None else _default_solver()
    counts = {"agree": 0, "disagree": 0, "error": 0, "crash": 0}
    misses: list[CheckMiss] = []
    total = 0
    for record in records:
        total += 1
        got: float | None = None
        error: str | None = None
        try:
            got = run(record.expression, record.numbers)
        except GeoDSLError as exc:
            counts["error"] += 1
            error = f"{type(exc).__name__}: {exc}"
        except Exception as exc:  # a checker reports executor bugs instead of stopping on them
            counts["crash"] += 1
            error = f"{type(exc).__name__}: {exc}"
        else:
            if math.isfinite(got) and abs(got - record.answer_value) < tolerance:
                counts["agree"] += 1
                continue
            counts["disagree"] += 1
        misses.append(
            CheckMiss(
                id=record.id, expression=record.expression, expected=record.answer, got=got, error=error
            )
        )
    return CheckReport(total=total, misses=tuple(misses), **counts)
