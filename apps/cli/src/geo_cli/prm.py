"""`geo prm`: the process reward model (geoprm)."""

from __future__ import annotations

import typer

app = typer.Typer(help="Commands for the process reward model (geoprm).", no_args_is_help=True)


@app.callback()
def _group() -> None:
    """Group callback: lets the sub-app exist (and show --help) before its first command."""
