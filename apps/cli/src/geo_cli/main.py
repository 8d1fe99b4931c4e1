"""The ``geo`` Typer app: one sub-app per package, assembled here.

Sub-apps are imported eagerly but every heavy dependency (torch, transformers,
vllm) is imported inside the commands that need it, so ``geo --help`` stays fast.
"""

from __future__ import annotations

from typing import Annotated

import typer

from geo_cli import __version__
from geo_cli.dsl import app as dsl_app
from geo_cli.engine import app as engine_app
from geo_cli.pipeline_cmd import app as pipeline_app
from geo_cli.prm import app as prm_app
from geo_cli.synth import app as synth_app
from geo_cli.train import app as train_app
from geo_cli.tts import app as tts_app

app = typer.Typer(
    name="geo",
    help="geo: plane-geometry problem solving with language models and symbolic engines.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(dsl_app, name="dsl")
app.add_typer(tts_app, name="tts")
app.add_typer(synth_app, name="synth")
app.add_typer(engine_app, name="engine")
app.add_typer(prm_app, name="prm")
app.add_typer(train_app, name="train")
app.add_typer(pipeline_app, name="pipeline")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"geo {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """geo: plane-geometry problem solving with language models and symbolic engines."""


if __name__ == "__main__":  # pragma: no cover
    app()
