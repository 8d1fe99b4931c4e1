"""The ``geo`` Typer app: one sub-app per package, assembled here.

Sub-apps are imported eagerly but every heavy dependency (torch, transformers,
vllm) is imported inside the commands that need it, so ``geo --help`` stays fast.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from geo_cli import __version__
from geo_cli._errors import report
from geo_cli.dsl import app as dsl_app
from geo_cli.engine import app as engine_app
from geo_cli.pipeline_cmd import app as pipeline_app
from geo_cli.prm import app as prm_app
from geo_cli.synth import app as synth_app
from geo_cli.train import app as train_app
from geo_cli.tts import app as tts_app


class _Root(TyperGroup):
    """The ``geo`` group: a usage error prints as one ``error:`` line (Typer draws a box that wraps)."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        """Run the CLI; a usage error exits 2 as in click, printed as one line that never wraps."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        try:
            code = super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        except typer.Abort:
            report("aborted")
            sys.exit(1)
        except Exception as exc:
            # click's ClickException, or the copy of click that Typer vendors: matched by name, as Typer does
            if not any(cls.__name__ == "ClickException" for cls in type(exc).__mro__):
                raise
            exit_code = int(getattr(exc, "exit_code", 2))
            if type(exc).__name__ != "NoArgsIsHelpError":  # that one has printed the help already
                ctx = getattr(exc, "ctx", None)
                path = getattr(ctx, "command_path", None)
                hint = f" (see '{path} --help')" if path else ""
                report(f"{getattr(exc, 'format_message', exc.__str__)()}{hint}")
            sys.exit(exit_code)
        sys.exit(code if isinstance(code, int) else 0)


app = typer.Typer(
    cls=_Root,
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
