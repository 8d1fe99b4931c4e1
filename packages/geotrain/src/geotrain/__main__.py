"""``python -m geotrain``: the runnable entry for ``accelerate launch`` / ``torchrun``.

    accelerate launch --config_file $(python -c "import geotrain; print(geotrain.accelerate_config('zero2'))") \
        -m geotrain --config run.yaml learning_rate=1e-5

Arguments: ``--config FILE`` (optional ``--preset NAME``, ``--resume``, ``--progress FILE``) then ``key=value``
overrides. With ``--progress FILE`` the first process appends one JSON line per optimizer step
(``{"step": 120, "max_steps": 5000}``), so whoever launched the run can show how far it is.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from geotrain._api import train
from geotrain._config import load_config


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments, train, and write the result summary as JSON on stdout (rank 0 only)."""
    parser = argparse.ArgumentParser(
        prog="python -m geotrain", description="Train a Qwen-VL model with geotrain."
    )
    parser.add_argument("--config", help="run configuration YAML")
    parser.add_argument("--preset", help="preset to start from (when the file names none)")
    parser.add_argument(
        "--resume", action="store_true", help="resume from the latest complete checkpoint in output_dir"
    )
    parser.add_argument("--progress", type=Path, help="append one JSON line per optimizer step to this file")
    parser.add_argument("overrides", nargs="*", help="key=value overrides (dotted keys, YAML values)")
    args = parser.parse_args(argv)
    config = load_config(args.config, args.overrides, base_preset=args.preset)
    callbacks = (
        [_progress_writer(args.progress)] if args.progress and os.environ.get("RANK", "0") == "0" else []
    )
    try:
        result = train(config, resume_from=True if args.resume else None, callbacks=callbacks)
    finally:
        _close_process_group()
    if os.environ.get("RANK", "0") == "0":
        sys.stdout.write(json.dumps(result.model_dump(mode="json")) + "\n")
    return 0


def _progress_writer(path: Path) -> Any:
    """A callback that appends ``{"step", "max_steps"}`` to ``path`` after every optimizer step."""
    from transformers import TrainerCallback

    class _Progress(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            line = json.dumps({"step": int(state.global_step), "max_steps": int(state.max_steps)})
            with path.open("a", encoding="utf-8") as out:
                out.write(line + "\n")

    return _Progress()


def _close_process_group() -> None:
    """Tear down the torch.distributed group while the interpreter is still whole.

    A gloo group left for interpreter shutdown can abort the process ("terminate called without an
    active exception", SIGABRT) after training has already succeeded: its worker threads still hold
    work objects whose release needs the GIL. This process owns the group, so it closes it.
    """
    if "torch" not in sys.modules:
        return
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    raise SystemExit(main())
