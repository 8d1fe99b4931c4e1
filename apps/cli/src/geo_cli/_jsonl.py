"""JSON Lines in, JSON Lines out: robust line reading shared by the batch commands.

Every input line yields exactly one item, in input order: either the decoded
JSON object or a one-line error saying what is wrong with that line (bad UTF-8,
too long, not JSON, not an object). A bad line never stops the batch.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from geo_cli._errors import InputError

#: Lines longer than this are rejected without being parsed (a program or a script is a few KB).
MAX_LINE_BYTES = 1 << 20


@dataclass(frozen=True, slots=True, kw_only=True)
class Line:
    """One input line: its 1-based number and either its JSON object or why it could not be read."""

    number: int
    record: dict[str, Any] | None
    error: str | None

    @property
    def id(self) -> Any:
        """The record's ``id`` if it has one (None otherwise)."""
        return None if self.record is None else self.record.get("id")

    @property
    def fields(self) -> dict[str, Any]:
        """The record of a line that was read.

        Raises:
            ValueError: the line is not a record (the message says why).
        """
        if self.record is None:
            raise ValueError(self.error or f"line {self.number} is not a record")
        return self.record


def _read_capped(stream: IO[bytes], limit: int) -> Iterator[tuple[bytes, int]]:
    """Yield (line without newline, full length) without ever holding more than ``limit`` bytes of a line."""
    while True:
        chunk = stream.readline(limit + 1)
        if not chunk:
            return
        length = len(chunk)
        if length > limit and not chunk.endswith(b"\n"):
            while True:  # drain the rest of an over-long line
                more = stream.readline(1 << 16)
                length += len(more)
                if not more or more.endswith(b"\n"):
                    break
            yield b"", length
            continue
        yield chunk.rstrip(b"\r\n"), length


def read_lines(stream: IO[bytes], *, limit: int = MAX_LINE_BYTES) -> Iterator[Line]:
    """Read JSON Lines from a binary stream, one :class:`Line` per input line (blank lines included)."""
    for number, (raw, length) in enumerate(_read_capped(stream, limit), start=1):
        if length > limit:
            yield Line(
                number=number, record=None, error=f"line {number} is {length} bytes; the limit is {limit}"
            )
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield Line(
                number=number,
                record=None,
                error=f"line {number} is not UTF-8 ({exc.reason} at byte {exc.start})",
            )
            continue
        if not text.strip():
            yield Line(number=number, record=None, error=f"line {number} is empty")
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            yield Line(
                number=number,
                record=None,
                error=f"line {number} is not JSON: {exc.msg} at column {exc.colno}",
            )
            continue
        if not isinstance(value, dict):
            yield Line(
                number=number,
                record=None,
                error=f"line {number} is a JSON {type(value).__name__}, not an object",
            )
            continue
        yield Line(number=number, record=value, error=None)


def label(path: str, what: str = "input file") -> str:
    """How messages name an input: ``standard input`` for ``-``, else ``<what> <path>``."""
    return "standard input" if path == "-" else f"{what} {path}"


@contextmanager
def open_input(path: str, what: str = "input file") -> Generator[IO[bytes]]:
    """Open ``path`` for binary reading; ``-`` is standard input.

    Raises:
        InputError: the file does not exist or is a directory (the message names it as ``what``).
    """
    if path == "-":
        yield sys.stdin.buffer
        return
    p = Path(path)
    if not p.exists():
        raise InputError(f"{what} {path} does not exist")
    if p.is_dir():
        raise InputError(f"{what} {path} is a directory, not a file")
    with p.open("rb") as handle:
        yield handle


def input_lines(path: str, what: str = "input file", *, limit: int = MAX_LINE_BYTES) -> Iterator[Line]:
    """Every line of a JSON Lines input, as :func:`read_lines` reads them.

    Raises:
        InputError: the input cannot be opened, has no lines at all, or no line is a JSON object (after
            the last line: each bad line has had its own error). Such an input does nothing, so it is
            an error rather than an empty or all-error output.
    """
    count = records = 0
    with open_input(path, what) as stream:
        for line in read_lines(stream, limit=limit):
            count += 1
            records += line.record is not None
            yield line
    if not count:
        raise InputError(f"{label(path, what)} is empty")
    if not records:
        raise InputError(f"{label(path, what)} holds no JSON object (on any of its {count} lines)")


def record_id(value: object) -> object:
    """A record's id as the string every reader uses: an integer id reads as its decimal text.

    JSON files number their records as often as they name them, so ``"id": 7`` and ``"id": "7"`` are the
    same record everywhere a command reads ids; other values are returned as they are (and rejected by
    whoever needs a string).
    """
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def emit(obj: dict[str, Any], out: IO[str] | None = None) -> None:
    """Write one JSON object as one line and flush, so downstream tools see results as they come."""
    stream = out or sys.stdout
    stream.write(json.dumps(obj, ensure_ascii=False) + "\n")
    stream.flush()
