"""The one error boundary of the CLI: package errors become a one-line message and an exit code.

Every error the CLI prints is one line on stderr, ``error: <what> <path>: <problem>``, whatever the
terminal width: :data:`err_console` never wraps, multi-line messages are folded, and a pydantic
validation dump inside a message is replaced by its first problem.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from contextlib import contextmanager
from typing import TYPE_CHECKING, NoReturn, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:
    from pydantic import ValidationError

#: stderr, for errors, warnings and progress; ``soft_wrap`` keeps each message on one line.
err_console = Console(stderr=True, soft_wrap=True)

P = ParamSpec("P")
R = TypeVar("R")

#: Exit codes by error family. 1 is a user error (bad input or config), 2 is usage (Typer's own),
#: 3 is a runtime failure of the work itself.
EXIT_USER = 1
EXIT_RUNTIME = 3


class InputError(Exception):
    """An input the user named cannot be used: missing, a folder, not UTF-8, empty, or holding nothing.

    The message names the input and the problem (``problem file x.txt is empty``); it prints as is.
    """


def _families() -> list[tuple[type[BaseException], int]]:
    from pydantic import ValidationError

    import geodsl
    import geoprm
    import geoprm.data
    import geosynth
    import geotrain
    import geotts

    return [
        (geodsl.DSLSyntaxError, EXIT_USER),
        (geodsl.ValueSyntaxError, EXIT_USER),
        (geodsl.DataError, EXIT_USER),
        (geotts.StrategyConfigError, EXIT_USER),
        (geotts.MissingExtraError, EXIT_USER),
        (geoprm.MissingExtraError, EXIT_USER),
        (geoprm.data.DataError, EXIT_USER),
        (geotrain.ConfigError, EXIT_USER),
        (geotrain.DataError, EXIT_USER),
        (geotrain.MissingExtraError, EXIT_USER),
        (geosynth.ProblemSyntaxError, EXIT_USER),
        (geodsl.GeoDSLError, EXIT_RUNTIME),
        (geotts.GeoTTSError, EXIT_RUNTIME),
        (geosynth.GeoSynthError, EXIT_RUNTIME),
        (geoprm.GeoPRMError, EXIT_RUNTIME),
        (geotrain.GeoTrainError, EXIT_RUNTIME),
        (ValidationError, EXIT_USER),
        (UnicodeDecodeError, EXIT_USER),
        (OSError, EXIT_USER),
    ]


def validation_summary(exc: ValidationError) -> str:
    """The first problem of a pydantic error as ``loc: msg``, with how many more there are."""
    problems = exc.errors()
    if not problems:
        return exc.title
    first = problems[0]
    where = ".".join(str(part) for part in first["loc"]) or exc.title
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"{where}: {first['msg']}{more}"


def _chain(exc: BaseException) -> Generator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def one_line(exc: BaseException, *, with_type: bool = True) -> str:
    """``exc`` as one line (its type name first when ``with_type``), validation dumps summarised."""
    from pydantic import ValidationError

    if isinstance(exc, UnicodeDecodeError):
        return f"an input file is not UTF-8 text ({exc.reason} at byte {exc.start})"
    text = str(exc)
    for inner in _chain(exc):
        if isinstance(inner, ValidationError):
            dump, summary = str(inner), validation_summary(inner)
            text = f"{inner.title}: {summary}" if inner is exc else text.replace(dump, summary)
    text = " ".join(text.split())
    if not with_type or isinstance(exc, InputError):
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def report(message: str) -> None:
    """Print ``message`` as one red ``error:`` line on stderr (the command goes on)."""
    err_console.print(f"[bold red]error:[/] {escape(' '.join(message.split()))}", highlight=False)


def fail(message: str, code: int = EXIT_USER) -> NoReturn:
    """Print ``message`` as one red ``error:`` line on stderr and exit with ``code``."""
    report(message)
    raise typer.Exit(code=code)


@contextmanager
def error_boundary() -> Generator[None]:
    """Turn known errors raised inside the block into a one-line message and an exit code."""
    try:
        yield
    except typer.Exit:
        raise
    except InputError as exc:
        fail(str(exc), EXIT_USER)
    except Exception as exc:
        for family, code in _families():
            if isinstance(exc, family):
                fail(one_line(exc), code)
        raise


def guarded(fn: Callable[P, R]) -> Callable[P, R]:
    """Decorator form of :func:`error_boundary` for Typer commands."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with error_boundary():
            return fn(*args, **kwargs)

    return wrapper
