"""Tolerant reading of PGPS-format files: every malformed record becomes a drop, never a stopped run.

The layouts are those of :func:`geodsl.data.load_pgps` (an object keyed by record id, a list of
records with ``id`` fields, or JSON Lines); each record is checked on its own and instantiated with
:func:`geodsl.instantiate`, so a missing field, a bad expression or a non-numeric answer costs that
record only.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import geodsl
from geodsl.data import PGPSRecord
from geosynth.mts._models import DROP_REASONS, Drop, DropReason, SourceProblem
from geosynth.mts.errors import MTSInputError

__all__ = ("LoadedDataset", "load_dataset")

_REQUIRED = ("text", "parsing_stru_seqs", "parsing_sem_seqs", "expression", "answer", "type", "choices")


@dataclass(frozen=True, kw_only=True)
class LoadedDataset:
    """The well-formed problems of a file, the drops of the others, and the file's content hash."""

    problems: tuple[SourceProblem, ...]
    drops: tuple[Drop, ...]
    sha256: str
    total: int


def _entries(path: Path, text: str) -> list[tuple[str, Any]]:
    """(id, record) pairs in file order; ids of unkeyed records come from their ``id`` field or position."""
    items: list[tuple[str | None, Any]]
    try:
        document: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg != "Extra data" and path.suffix.lower() not in (".jsonl", ".ndjson"):
            raise MTSInputError(
                f"{path}: invalid JSON ({exc.msg}, line {exc.lineno}, column {exc.colno})"
            ) from None
        items = []
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    items.append((None, json.loads(line)))
                except json.JSONDecodeError:
                    items.append((f"line{number}", f"invalid JSON on line {number}"))
    else:
        if isinstance(document, dict):
            items = list(document.items())
        elif isinstance(document, list):
            items = [(None, item) for item in document]
        else:
            raise MTSInputError(
                f"{path}: expected an object of records or a list, got {type(document).__name__}"
            )
    out: list[tuple[str, Any]] = []
    for position, (key, record) in enumerate(items):
        stored = record.get("id") if isinstance(record, dict) else None
        if isinstance(stored, int) and not isinstance(stored, bool):
            stored = str(stored)  # an integer id reads as its decimal text, as in geodsl.data
        out.append((key or (stored if isinstance(stored, str) else f"#{position}"), record))
    return out


def _drop(record_id: str, stage: str, reason: DropReason, detail: str) -> Drop:
    return Drop(
        problem_id=record_id,
        stage=stage,
        reason=reason,
        lost=DROP_REASONS[reason][1],
        detail=" ".join(detail.split()),
    )


def _check_fields(record: Any) -> str | None:
    """What is wrong with a record's shape, or None."""
    if isinstance(record, str):
        return record
    if not isinstance(record, dict):
        return f"expected an object, got {type(record).__name__}"
    missing = [key for key in _REQUIRED if key not in record]
    if missing:
        return f"missing field(s) {', '.join(missing)}"
    for key in ("text", "expression", "answer", "type"):
        if not isinstance(record[key], str):
            return f"field {key!r} must be a string, got {type(record[key]).__name__}"
    for key in ("parsing_stru_seqs", "parsing_sem_seqs"):
        value = record[key]
        if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
            return f"field {key!r} must be a list of strings"
    choices = record["choices"]
    if not isinstance(choices, list) or not all(
        isinstance(c, int | float) and not isinstance(c, bool) for c in choices
    ):
        return "field 'choices' must be a list of numbers"
    try:
        value = float(record["answer"])
    except ValueError:
        return f"answer {record['answer']!r} is not a number"
    return None if math.isfinite(value) else f"answer {record['answer']!r} is not finite"


def _problem(record_id: str, record: dict[str, Any]) -> SourceProblem | Drop:
    try:
        built = PGPSRecord.build(
            id=record_id,
            text=" ".join(record["text"].split()),
            stru_clauses=[" ".join(c.split()) for c in record["parsing_stru_seqs"]],
            sem_clauses=[" ".join(c.split()) for c in record["parsing_sem_seqs"]],
            expression=record["expression"],
            answer=record["answer"],
            type=record["type"],
            choices=[float(c) for c in record["choices"]],
            diagram=record.get("diagram") if isinstance(record.get("diagram"), str) else None,
        )
    except geodsl.DataError as exc:
        return _drop(record_id, "load", "malformed_record", str(exc))
    try:
        program = geodsl.instantiate(built.expression, built.numbers).text
    except geodsl.GeoDSLError as exc:
        return _drop(
            record_id,
            "prepare",
            "bad_program",
            f"{type(exc).__name__}: {exc} (expression {built.expression!r}, N = {list(built.numbers)})",
        )
    return SourceProblem(
        id=record_id,
        text=built.text,
        stru_clauses=built.stru_clauses,
        sem_clauses=built.sem_clauses,
        diagram=built.diagram,
        choices=tuple(built.choices),
        answer=built.answer,
        answer_value=built.answer_value,
        expression=built.expression,
        numbers=built.numbers,
        program=program,
        knowledge_type=built.knowledge_type,
    )


def load_dataset(path: Path) -> LoadedDataset:
    """Read a PGPS-format file; malformed records and unusable programs become drops.

    Args:
        path: the dataset file.

    Returns:
        The problems (file order), the drops, the SHA-256 of the file's bytes and the record count.

    Raises:
        MTSInputError: the file cannot be read, is not UTF-8, or is not a collection of records.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise MTSInputError(f"cannot read dataset {str(path)!r}: {exc.strerror or exc}") from exc
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise MTSInputError(f"{path}: not UTF-8 text (offset {exc.start})") from None
    problems: list[SourceProblem] = []
    drops: list[Drop] = []
    seen: set[str] = set()
    entries = _entries(path, text)
    for record_id, record in entries:
        problem = _check_fields(record)
        outcome = (
            _drop(record_id, "load", "malformed_record", problem) if problem else _problem(record_id, record)
        )
        if isinstance(outcome, SourceProblem) and outcome.id in seen:
            outcome = _drop(record_id, "load", "malformed_record", "duplicate record id")
        if isinstance(outcome, Drop):
            drops.append(outcome)
        else:
            seen.add(outcome.id)
            problems.append(outcome)
    return LoadedDataset(
        problems=tuple(problems),
        drops=tuple(drops),
        sha256=hashlib.sha256(data).hexdigest(),
        total=len(entries),
    )
