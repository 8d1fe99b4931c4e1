"""Benchmark: geotrain's from-scratch training on CPU, tokens per second at 1 and 2 threads, side by side.

Each measurement runs in its own process (torch fixes its thread pool at start-up) and trains the same
from-scratch model on the same PA records through geotrain's own trainer (collator, span masks, Trainer):
a few warm-up steps, then ``--steps`` timed optimizer steps. Tokens are the non-padding tokens of the batches
(prompt and target), as the model processes them.

Usage:
    uv run python bench/bench_train_cpu.py RECORDS.jsonl [--steps 20] [--batch 16] [--threads 1 2]

RECORDS.jsonl: PA records, e.g. the MTS-All mixture of a pipeline run (``runs/cpu-train/mts/mixtures/mts_all.jsonl``).
The model shape is the ``cpu-train`` preset's (2.8M parameters); ``--hidden``/``--layers`` change it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _measure(records: Path, steps: int, batch: int, hidden: int, layers: int) -> dict[str, Any]:
    import torch
    from transformers import TrainerCallback

    import geotrain

    with tempfile.TemporaryDirectory() as tmp:
        source = geotrain.DataSource(path=str(records), kind="pa")
        spec = geotrain.ScratchModel(hidden_size=hidden, num_layers=layers, intermediate_size=3 * hidden)
        model = geotrain.build_scratch_model(spec, geotrain.corpus_texts([source]), Path(tmp) / "base")
        config = geotrain.RunConfig(
            family="causal_lm", model_path=str(model), data=(source,), output_dir=str(Path(tmp) / "run"),
            max_steps=steps + 3, learning_rate=2e-3, per_device_batch_size=batch, max_length=640, use_cpu=True,
            save_steps=10_000, logging_steps=10_000, group_by_length=True,
        )  # fmt: skip
        marks: dict[str, float] = {}
        tokens = [0]

        class _Clock(TrainerCallback):
            def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
                if state.global_step == 3:
                    marks["start"] = time.perf_counter()

            def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
                if state.global_step == steps + 3:
                    marks["end"] = time.perf_counter()

        trainer = geotrain.build_trainer(config, callbacks=[_Clock()])
        collate = trainer.data_collator

        def counting(examples: Any) -> Any:
            out = collate(examples)
            if "start" in marks and "end" not in marks:
                tokens[0] += int(out["attention_mask"].sum())
            return out

        trainer.data_collator = counting
        trainer.train()
        seconds = marks["end"] - marks["start"]
        return {
            "threads": torch.get_num_threads(), "steps": steps, "seconds": round(seconds, 2),
            "tokens": tokens[0], "tokens_per_s": round(tokens[0] / seconds, 1),
            "parameters": sum(p.numel() for p in trainer.model.parameters()),
        }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("records", type=Path)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--hidden", type=int, default=192)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not args.records.is_file():
        sys.exit(f"error: records file {args.records} does not exist")
    if args.child:
        print(json.dumps(_measure(args.records, args.steps, args.batch, args.hidden, args.layers)))
        return
    rows = []
    for threads in args.threads:
        env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
        command = [sys.executable, __file__, str(args.records), "--child", "--steps", str(args.steps),
                   "--batch", str(args.batch), "--hidden", str(args.hidden), "--layers", str(args.layers)]  # fmt: skip
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            sys.exit(f"error: the {threads}-thread run failed: {done.stderr.strip().splitlines()[-1:]}")
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    base = rows[0]["tokens_per_s"]
    print(
        f"{'threads':>7} {'steps':>5} {'seconds':>8} {'tokens':>8} {'tokens/s':>9} {'ratio':>6}  parameters"
    )
    for r in rows:
        print(f"{r['threads']:>7} {r['steps']:>5} {r['seconds']:>8} {r['tokens']:>8} {r['tokens_per_s']:>9} "
              f"{r['tokens_per_s'] / base:>6.2f}  {r['parameters']:,}")  # fmt: skip
    print(f"load average during the runs: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
