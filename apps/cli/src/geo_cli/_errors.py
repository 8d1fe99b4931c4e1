"""The one error boundary of the CLI: package errors become a message and an exit code."""

from __future__ import annotations

from collections.abc import Callable, Generator
from contextlib import contextmanager
from typing import NoReturn, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

err_console = Console(stderr=True)

P = ParamSpec("P")
R = TypeVar("R")

#: Exit codes by error family. 1 is a user error (bad input or config), 2 is usage (Typer's own),
#: 3 is a runtime failure of the work itself.
EXIT_USER = 1
EXIT_RUNTIME = 3


def _families() -> list[tuple[type[BaseException], int]]:
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
        (OSError, EXIT_USER),
    ]


def fail(message: str, code: int = EXIT_USER) -> NoReturn:
    """Print ``message`` in red on stderr and exit with ``code``."""
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(code=code)


@contextmanager
def error_boundary() -> Generator[None]:
    """Turn known package errors raised inside the block into a one-line message and an exit code."""
    try:
        yield
    except typer.Exit:
        raise
    except Exception as exc:
        for family, code in _families():
            if isinstance(exc, family):
                fail(f"{type(exc).__name__}: {exc}", code)
        raise


def guarded(fn: Callable[P, R]) -> Callable[P, R]:
    """Decorator form of :func:`error_boundary` for Typer commands."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with error_boundary():
            return fn(*args, **kwargs)

    return wrapper
