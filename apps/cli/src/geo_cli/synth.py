"""`geo synth`: the formal engine and data synthesis (geosynth)."""

from __future__ import annotations

import typer

app = typer.Typer(help="Commands for the formal engine and data synthesis (geosynth).", no_args_is_help=True)


@app.callback()
def _group() -> None:
    """Group callback: lets the sub-app exist (and show --help) before its first command."""
