"""Checks of the files and folders a command is given, made before any work starts.

Each check raises :class:`~geo_cli._errors.InputError` with one line that names the input and the
problem, in one shape for every command: ``<what> <path> <problem>``, for example
``problem file x.txt does not exist``, ``problem file data is a directory, not a file``,
``proofs file p.jsonl is not UTF-8 text (invalid start byte at line 3, byte 41)`` or
``problems file q.jsonl is empty``.
"""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import TYPE_CHECKING

from geo_cli._errors import InputError

if TYPE_CHECKING:
    from geosynth.engine import ProblemEntry

__all__ = ("folder", "problem_entries", "problem_lines", "read_text", "text_file")

#: Bytes read at a time when a file is only checked (its text is not kept).
CHUNK = 1 << 20


def _present(path: Path, what: str) -> None:
    if not path.exists():
        raise InputError(f"{what} {path} does not exist")


def _not_utf8(
    path: Path, what: str, exc: UnicodeDecodeError, data: bytes, offset: int = 0, lines: int = 0
) -> InputError:
    """The error for bad UTF-8 at ``exc.start`` in ``data``.

    ``data`` starts ``offset`` bytes and ``lines`` newlines into the file.
    """
    line = lines + data[: exc.start].count(b"\n") + 1
    return InputError(
        f"{what} {path} is not UTF-8 text ({exc.reason} at line {line}, byte {offset + exc.start})"
    )


def text_file(path: Path, what: str) -> Path:
    """``path`` itself when it is a non-empty UTF-8 text file.

    Args:
        path: The file a command was given.
        what: How messages name it (``problem file``, ``config file``...).

    Raises:
        InputError: the file is missing, a folder, unreadable, not UTF-8 or empty.
    """
    _present(path, what)
    if path.is_dir():
        raise InputError(f"{what} {path} is a directory, not a file")
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset, lines = 0, 0
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(CHUNK):
                pending = decoder.getstate()[0]
                try:
                    decoder.decode(chunk)
                except UnicodeDecodeError as exc:
                    raise _not_utf8(path, what, exc, pending + chunk, offset - len(pending), lines) from None
                offset += len(chunk)
                lines += chunk.count(b"\n")
            pending = decoder.getstate()[0]
            try:
                decoder.decode(b"", final=True)
            except UnicodeDecodeError as exc:
                raise _not_utf8(path, what, exc, pending, offset - len(pending), lines) from None
    except OSError as exc:
        raise InputError(f"{what} {path} cannot be read ({exc.strerror or exc})") from None
    if offset == 0:
        raise InputError(f"{what} {path} is empty")
    return path


def read_text(path: Path, what: str) -> str:
    """The text of a non-empty UTF-8 file.

    Raises:
        InputError: as :func:`text_file`.
    """
    _present(path, what)
    if path.is_dir():
        raise InputError(f"{what} {path} is a directory, not a file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{what} {path} cannot be read ({exc.strerror or exc})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _not_utf8(path, what, exc, data, 0) from None
    if not data:
        raise InputError(f"{what} {path} is empty")
    return text


def folder(path: Path, what: str) -> Path:
    """``path`` itself when it is an existing folder.

    Raises:
        InputError: the path is missing or is a file.
    """
    _present(path, what)
    if not path.is_dir():
        raise InputError(f"{what} {path} is a file, not a folder")
    return path


def problem_lines(path: Path) -> list[tuple[str, str]]:
    """The (name, problem line) pairs of a JGEX problem file that holds at least one problem.

    Raises:
        InputError: as :func:`text_file`, or the file holds only blank lines.
        ProblemSyntaxError: the lines do not pair up into names and problems.
    """
    text_file(path, "problem file")  # UTF-8 throughout, so no entry below carries an error
    return [(entry.name, entry.line) for entry in problem_entries(path)]


def problem_entries(path: Path) -> list[ProblemEntry]:
    """The problems of a JGEX problem file, each on its own: a problem line that is not UTF-8 is marked.

    For commands that report each bad problem in its place and carry on (see
    :func:`geosynth.engine.read_problem_entries`).

    Raises:
        InputError: the file is missing, a folder, unreadable or empty, holds only blank lines, or none of
            its problem lines is UTF-8 (then nothing could be done: the message names the first bad byte).
        ProblemSyntaxError: the lines do not pair up into names and problems.
    """
    from geosynth.engine import read_problem_entries
    from geosynth.errors import ProblemSyntaxError

    _present(path, "problem file")
    if path.is_dir():
        raise InputError(f"problem file {path} is a directory, not a file")
    try:
        entries = read_problem_entries(path)
    except OSError as exc:
        raise InputError(f"problem file {path} cannot be read ({exc.strerror or exc})") from None
    except ProblemSyntaxError:
        text_file(path, "problem file")  # unpaired lines in a file that is not UTF-8: name the bytes first
        raise
    if not entries or all(entry.error is not None for entry in entries):
        text_file(path, "problem file")  # an empty file, or one whose every problem line is not UTF-8
        raise InputError(f"problem file {path} holds no problems (only blank lines)")
    return entries
