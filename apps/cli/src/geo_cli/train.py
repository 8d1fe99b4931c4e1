"""`geo train`: fine-tuning of Qwen-VL-family models (geotrain).

``sft`` and ``prm`` train in this process (one CPU or one GPU); for several GPUs launch the same
configuration with ``accelerate launch --config_file CONFIG -m geotrain --config FILE`` (see
docs/geotrain.md). Every command prints one JSON object on stdout.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

import typer

from geo_cli._errors import guarded
from geo_cli._inputs import folder as input_folder
from geo_cli._inputs import text_file

app = typer.Typer(help="Commands for fine-tuning of Qwen-VL-family models (geotrain).", no_args_is_help=True)

ConfigOpt = Annotated[Path | None, typer.Option("--config", "-c", help="Run configuration YAML.")]
PresetOpt = Annotated[
    str | None,
    typer.Option("--preset", help="Preset to start from when the file names none (see geotrain docs)."),
]
ResumeOpt = Annotated[
    bool, typer.Option("--resume", help="Resume from the latest complete checkpoint in output_dir.")
]
OverridesArg = Annotated[
    list[str] | None, typer.Argument(help="key=value overrides (dotted keys, YAML values), applied last.")
]


def _run(
    config: Path | None, overrides: list[str] | None, preset: str | None, resume: bool, task: str
) -> None:
    import geotrain

    if config is not None:
        text_file(config, "config file")
    cfg = geotrain.load_config(config, [*(overrides or []), f"task={task}"], base_preset=preset)
    result = geotrain.train(cfg, resume_from=True if resume else None)
    last = next((entry for entry in reversed(result.log_history) if "loss" in entry), {})
    summary: dict[str, object] = {"final_dir": result.final_dir, "global_step": result.global_step}
    summary.update(
        {k: last[k] for k in ("loss", "perception_loss", "reasoning_loss", "verdict_loss") if k in last}
    )
    typer.echo(json.dumps(summary))


@app.command()
@guarded
def sft(
    config: ConfigOpt = None,
    overrides: OverridesArg = None,
    preset: PresetOpt = None,
    resume: ResumeOpt = False,
) -> None:
    """Perception-augmented SFT on PA records (logs joint, perception and reasoning losses)."""
    _run(config, overrides, preset, resume, "pa_sft")


@app.command()
@guarded
def prm(
    config: ConfigOpt = None,
    overrides: OverridesArg = None,
    preset: Annotated[str | None, typer.Option("--preset", help="Preset to start from.")] = "gm_prm",
    resume: ResumeOpt = False,
) -> None:
    """GM-PRM critique training on geoprm SFT records (frozen vision tower by default)."""
    _run(config, overrides, preset, resume, "prm")


@app.command()
@guarded
def export(
    source: Annotated[
        Path, typer.Argument(help="A final or checkpoint folder: full weights or a LoRA adapter.")
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder to write the merged model and processor to.")
    ],
    base_model: Annotated[
        str | None, typer.Option("--base-model", help="The adapter's base model (default: from the adapter).")
    ] = None,
) -> None:
    """Merge adapters (if any) and write a model folder the geotts backends load."""
    import geotrain

    written = geotrain.export_model(input_folder(source, "export source"), out, base_model=base_model)
    typer.echo(json.dumps({"out": str(written)}))


@app.command("tiny-model")
@guarded
def tiny_model(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder to write.")],
    family: Annotated[
        Literal["qwen2_vl", "qwen2_5_vl", "qwen3_vl"], typer.Option("--family", help="Model family.")
    ] = "qwen2_vl",
    seed: Annotated[int, typer.Option("--seed", help="Weight initialisation seed.")] = 0,
) -> None:
    """Build a tiny random model + offline processor (for tests, demos and CI)."""
    import geotrain

    folder = geotrain.build_tiny_model(family, out, seed=seed)
    typer.echo(json.dumps({"out": str(folder), "family": family}))
