"""Reading PGPS-format annotation files into plain, type-checked field mappings.

Three layouts are accepted:

* the published layout: one JSON object whose keys are record ids (``prob_<k>``)
  and whose values are the records (without an ``id`` field, or with one equal
  to the key);
* a JSON array of records, each with an ``id`` field;
* JSON Lines (one record object with an ``id`` per line), chosen by the
  ``.jsonl`` / ``.ndjson`` suffix or when the file is not a single JSON value.

Every problem is reported as :class:`~geodsl.errors.DataError` naming the file
and, when known, the record id and the field.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from geodsl.errors import DataError

__all__ = ["OPTIONAL_FIELDS", "REQUIRED_FIELDS", "RawRecord", "read_records"]

_JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson"})


def _as_str(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def _as_str_tuple(value: object) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise TypeError(f"expected a list of strings, got {type(value).__name__}")
    items: list[Any] = value
    for position, item in enumerate(items):
        if not isinstance(item, str):
            raise TypeError(f"item {position} is a {type(item).__name__}, expected a string")
    return tuple(items)


def _as_choices(value: object) -> tuple[float, float, float, float]:
    if not isinstance(value, list):
        raise TypeError(f"expected a list of 4 numbers, got {type(value).__name__}")
    items: list[Any] = value
    if len(items) != 4:
        raise TypeError(f"expected 4 choices, got {len(items)}")
    numbers: list[float] = []
    for position, item in enumerate(items):
        if isinstance(item, bool) or not isinstance(item, int | float) or not math.isfinite(item):
            raise TypeError(f"choice {position} is {item!r}, expected a finite number")
        numbers.append(float(item))
    return numbers[0], numbers[1], numbers[2], numbers[3]


def _as_answer(value: object) -> str:
    text = _as_str(value)
    try:
        number = float(text)
    except ValueError:
        raise TypeError(f"{text!r} is not a number") from None
    if not math.isfinite(number):
        raise TypeError(f"{text!r} is not a finite number")
    return text


def _as_expression(value: object) -> str:
    text = _as_str(value)
    if not text.strip():
        raise TypeError("the program is empty")
    return text


T = TypeVar("T")

REQUIRED_FIELDS = ("text", "parsing_stru_seqs", "parsing_sem_seqs", "expression", "answer", "type", "choices")
"""Input keys every record must have."""
OPTIONAL_FIELDS = ("diagram", "book", "page")
"""Input keys that derived files (such as ``examples_96.json``) may leave out."""


@dataclass(frozen=True)
class RawRecord:
    """One record read from a file, its fields type-checked (clause lists as tuples).

    Keys outside :data:`REQUIRED_FIELDS` and :data:`OPTIONAL_FIELDS` (and ``id``)
    are not kept: derived files add their own (``var_values``, ``dedup_expression``...).
    """

    id: str
    text: str
    stru_clauses: tuple[str, ...]
    sem_clauses: tuple[str, ...]
    expression: str
    answer: str
    type: str
    choices: tuple[float, float, float, float]
    diagram: str | None
    book: str | None
    page: str | None


def _decode(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DataError(f"{path}: cannot read the file ({exc.strerror or exc})") from exc
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bad = data[exc.start : exc.start + 1].hex()
        raise DataError(f"{path}: not UTF-8 text (byte 0x{bad} at offset {exc.start})") from None


def _json_lines(path: Path, text: str) -> list[tuple[str | None, object]]:
    """Parse every line first, so a syntax error is reported before any record problem."""
    entries: list[tuple[str | None, object]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entries.append((None, json.loads(line)))
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}: line {number}: invalid JSON ({exc.msg}, column {exc.colno})") from None
    return entries


class _DuplicateKeyError(Exception):
    """Raised inside JSON decoding when an object repeats a key (json keeps the last silently)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKeyError(key)
        result[key] = value
    return result


def _entries(path: Path, text: str) -> Iterator[tuple[str | None, object]]:
    """Yield (key or None, record object) pairs in file order."""
    if path.suffix.lower() in _JSONL_SUFFIXES:
        yield from _json_lines(path, text)
        return
    try:
        document: object = json.loads(text, object_pairs_hook=_unique_keys)
    except _DuplicateKeyError as exc:
        raise DataError(f"{path}: duplicate key {exc.key!r} in a JSON object") from None
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":  # several JSON values: treat as JSON Lines
            yield from _json_lines(path, text)
            return
        raise DataError(f"{path}: invalid JSON ({exc.msg}, line {exc.lineno}, column {exc.colno})") from None
    if isinstance(document, dict):
        mapping: dict[str, Any] = document
        yield from mapping.items()
    elif isinstance(document, list):
        items: list[Any] = document
        for item in items:
            yield None, item
    else:
        raise DataError(
            f"{path}: expected an object of records or a list of records, got {type(document).__name__}"
        )


def _record_id(path: Path, key: str | None, record: Mapping[str, Any], position: int) -> str:
    stored = record.get("id")
    if isinstance(stored, int) and not isinstance(stored, bool):
        stored = str(stored)  # an integer id reads as its decimal text
    if stored is not None and not isinstance(stored, str):
        raise DataError(
            f"{path}: record #{position}: field 'id' must be a string or an integer, "
            f"got {type(stored).__name__}"
        )
    if key is None:
        if stored is None:
            raise DataError(f"{path}: record #{position}: no 'id' field (needed outside the keyed layout)")
        return stored
    if stored is not None and stored != key:
        raise DataError(f"{path}: record {key}: its 'id' field {stored!r} differs from its key")
    return key


def _convert(path: Path, record_id: str, record: Mapping[str, Any]) -> RawRecord:
    missing = [key for key in REQUIRED_FIELDS if key not in record]
    if missing:
        raise DataError(f"{path}: record {record_id}: missing field(s) {', '.join(map(repr, missing))}")

    def get(key: str, converter: Callable[[object], T]) -> T:
        try:
            return converter(record[key])
        except TypeError as exc:
            raise DataError(f"{path}: record {record_id}: field {key!r}: {exc}") from None

    def optional(key: str) -> str | None:
        return get(key, _as_str) if key in record else None

    return RawRecord(
        id=record_id,
        text=get("text", _as_str),
        stru_clauses=get("parsing_stru_seqs", _as_str_tuple),
        sem_clauses=get("parsing_sem_seqs", _as_str_tuple),
        expression=get("expression", _as_expression),
        answer=get("answer", _as_answer),
        type=get("type", _as_str),
        choices=get("choices", _as_choices),
        diagram=optional("diagram"),
        book=optional("book"),
        page=optional("page"),
    )


def read_records(path: Path) -> list[RawRecord]:
    """Read every record of an annotation file, checking field presence and types.

    Raises:
        DataError: unreadable or non-UTF-8 file, invalid JSON, a record that is
            not an object, a missing or mistyped field, a duplicate id.
    """
    records: list[RawRecord] = []
    seen: set[str] = set()
    for position, (key, item) in enumerate(_entries(path, _decode(path))):
        if not isinstance(item, dict):
            where = key if key is not None else f"#{position}"
            raise DataError(f"{path}: record {where}: expected an object, got {type(item).__name__}")
        record: dict[str, Any] = item
        record_id = _record_id(path, key, record, position)
        if record_id in seen:
            raise DataError(f"{path}: record {record_id}: duplicate id")
        seen.add(record_id)
        records.append(_convert(path, record_id, record))
    return records
