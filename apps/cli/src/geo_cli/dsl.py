"""`geo dsl`: the PGPS program language (geodsl)."""

from __future__ import annotations

import typer

app = typer.Typer(help="Commands for the PGPS program language (geodsl).", no_args_is_help=True)


@app.callback()
def _group() -> None:
    """Group callback: lets the sub-app exist (and show --help) before its first command."""
