"""``geo pipeline run`` with a process reward model on a program policy: the ``cpu-prm`` preset's path, small.

One run through the real CLI with the real bundled CPU policy: 2 synthesized training figures with their
realised figures kept, critique records from the policy's samples labelled on them, a critic fine-tuned
from the policy for 2 steps, then best-of-N and refined best-of-N (N up to 2) on one held-out figure's
problems (step F1 against its figure labels) and on 2 bundled PGPS9K records. Then the results contract,
the report, a rerun that skips every stage, and the config errors.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from geo_cli.main import app
from geo_cli.pipeline import load_pipeline_config

from .conftest import write_config

for _extra in ("torch", "transformers", "tokenizers", "accelerate"):
    pytest.importorskip(_extra, reason=f"the train and evaluate stages need {_extra}")

runner = CliRunner()
POLICY = "bundled:pgps-cpu-v1/model"
STRATEGIES = {"greedy", "sc", "random", "bon_mean", "bon_min", "bon_max", "refined_bon"}

CONFIG: dict[str, Any] = {
    "name": "prm-small",
    "hardware": {"summary": "2 CPU cores", "gpus": 0, "cpu_cores": 2},
    "workdir": "work",
    "data": {
        "train": {"source": "synthesize", "synth_kind": "pgps", "synth_config": "pgps-v1", "synth_count": 2,
                  "synth_seed": 0, "pgps_figures": True},
        "splits": {
            "heldout": {"source": "synthesize", "synth_kind": "pgps", "synth_config": "pgps-v1",
                        "synth_count": 1, "synth_seed": 1, "pgps_figures": True},
            "pgps9k_test": {"source": "bundled_sample", "sample": "pgps9k_test", "limit": 2},
        },
        "draw_missing_diagrams": False,
    },
    "mts": {"jobs": 1, "critiques": {"policy": POLICY, "samples": 2, "corruptions": 1, "batch_size": 8}},
    "train": {
        "base_model": POLICY,
        "geotrain_preset": "gm_prm",
        "settings": {
            "family": "causal_lm", "use_cpu": True, "precision": "fp32", "finetune": "full",
            "freeze_vision": False, "gradient_checkpointing": False, "effective_batch_size": None,
            "per_device_batch_size": 4, "max_length": 768, "max_steps": 2, "save_steps": 2,
            "logging_steps": 1, "learning_rate": 1.0e-4,
        },
        "export": False,
    },
    "evaluate": {
        "model": POLICY, "setting": "clauses", "order": ["program", "pal"], "depth": 1, "beam": False,
        "max_tokens": 64, "temperature": 0.7, "batch_size": 4, "threads": 1, "sandbox_workers": 1,
        "prm": {"model": "trained", "layout": "program", "ns": [1, 2], "n": 2, "max_critique_tokens": 48,
                "batch_size": 4},
    },
    "report": {"gallery": 2},
}  # fmt: skip


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The config folder after one full ``geo pipeline run`` (work folder ``work/`` inside it)."""
    folder = tmp_path_factory.mktemp("cpu_prm")
    result = runner.invoke(app, ["pipeline", "run", str(write_config(folder, None, base=CONFIG))])
    assert result.exit_code == 0, result.output
    return folder


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]


def test_critique_records_come_from_the_policy_and_the_figures(finished: Path) -> None:
    out = finished / "work" / "mts" / "critiques"
    stats = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    records = _lines(out / "records.jsonl")
    assert records and len(records) == stats["records"] == stats["with_error"] + stats["without_error"]
    assert stats["with_error"] == stats["without_error"]  # balanced
    solutions = _lines(out / "solutions.jsonl")
    assert {s["origin"] for s in solutions} >= {"policy", "reference"}
    samples = _lines(out / "samples.jsonl")
    problems = json.loads((finished / "work" / "data" / "train.json").read_text(encoding="utf-8"))
    assert {row["problem"] for row in samples} == set(problems) and all(len(r["texts"]) == 2 for r in samples)


def test_the_critic_starts_from_the_policy_and_trains_on_those_records(finished: Path) -> None:
    train = finished / "work" / "train"
    summary = json.loads((train / "stage.json").read_text(encoding="utf-8"))["summary"]
    assert summary["global_step"] == 2 and Path(summary["model"]).name == "final"
    assert (Path(summary["model"]) / "config.json").is_file()


def test_results_hold_the_prm_curves_and_step_f1(finished: Path) -> None:
    results = json.loads((finished / "work" / "evaluate" / "results.json").read_text(encoding="utf-8"))
    prm = results["prm"]
    assert 0.0 <= prm["step_f1"] <= 1.0
    curves = prm["curves"]
    assert {c["split"] for c in curves} == {"heldout", "pgps9k_test"}
    assert {c["strategy"] for c in curves} == STRATEGIES
    for c in curves:
        assert set(c) == {"split", "strategy", "n", "accuracy"} and 0.0 <= c["accuracy"] <= 100.0
        assert c["n"] in (1, 2) and (c["strategy"] != "refined_bon" or c["n"] == 2)
    heldout = results["splits"]["heldout"]
    greedy = next(c for c in curves if c["split"] == "heldout" and c["strategy"] == "greedy")
    assert greedy["accuracy"] == pytest.approx(heldout["greedy"]["program"])
    for split in ("heldout", "pgps9k_test"):
        at = {(c["strategy"], c["n"]): c["accuracy"] for c in curves if c["split"] == split}
        assert at[("sc", 1)] == at[("random", 1)] == at[("bon_mean", 1)]  # one candidate: every rule takes it
    answered = {(c["split"], c["strategy"], c["n"]) for c in prm["answered_curves"]}
    assert {s for _, s, _ in answered} == {"bon_mean", "bon_min", "bon_max", "refined_bon"}
    assert ("heldout", "refined_bon", 2) in answered and ("pgps9k_test", "bon_mean", 1) in answered
    assert "step_f1" in prm["splits"]["heldout"] and "step_f1" not in prm["splits"]["pgps9k_test"]
    runs = _lines(finished / "work" / "evaluate" / "prm_runs.jsonl")
    assert len(runs) == heldout["problems"]
    for row in runs:
        assert len(row["run"]["sampled"]) == 2 and len(row["run"]["refined"]) == 1
        assert all(c["text"] for c in row["run"]["sampled"])
        assert set(row["critiques"]) == {"s0", "s1", "r0"}


def test_the_report_shows_the_prm_section_and_a_rerun_skips_every_stage(finished: Path) -> None:
    report = (finished / "work" / "report" / "report.md").read_text(encoding="utf-8")
    assert "## Process reward model" in report and "refined best-of-N" in report
    assert "GM-PRM paper's figures (not from this run)" in report
    assert "refined best-of-N (N/2 samples + N/2 refined), answered only" in report
    assert (finished / "work" / "report" / "figures" / "heldout_prm_accuracy_vs_n.png").is_file()
    result = runner.invoke(app, ["pipeline", "run", str(finished / "pipeline.yaml")])
    assert result.exit_code == 0, result.output
    for stage in ("data", "mts", "train", "evaluate", "report"):
        assert f"{stage}: cached (inputs unchanged)" in result.output, result.output


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"evaluate": {"prm": {"ns": [1, 3]}}}, "largest N (3) must be even"),
        ({"evaluate": {"prm": {"layout": "text"}}}, "ns is only read for layout 'program'"),
        ({"data": {"splits": {"pgps9k_test": {"pgps_figures": True}}}}, "pgps_figures is only read"),
    ],
)
def test_config_errors_name_the_field(tmp_path: Path, changes: dict[str, Any], message: str) -> None:
    result = runner.invoke(app, ["pipeline", "check", str(write_config(tmp_path, changes, base=CONFIG))])
    assert result.exit_code != 0 and message in result.output, result.output


def test_critique_data_needs_the_training_figures(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"data": {"train": {"pgps_figures": None}}}, base=CONFIG)
    result = runner.invoke(app, ["pipeline", "run", str(config), "--until", "mts"])
    assert result.exit_code == 1, result.output
    assert "mts.critiques: the training split must be synthesized with pgps_figures: true" in result.output


def test_the_shipped_preset_is_the_cpu_twin_of_paper_gm_prm() -> None:
    preset, _ = load_pipeline_config("cpu-prm")
    assert preset.hardware.gpus == 0 and preset.evaluate.prm is not None
    assert preset.evaluate.prm.layout == "program" and max(preset.evaluate.prm.ns) == 16
    assert (
        preset.mts.critiques is not None and preset.data.train is not None and preset.data.train.pgps_figures
    )


def test_verdict_first_critiques_change_the_mts_key_and_the_default_keeps_it(tmp_path: Path) -> None:
    from geo_cli.pipeline import STAGES, stage_keys

    keys = {}
    for name, value in (("plain", None), ("default", False), ("first", True)):
        changes = {} if value is None else {"mts": {"critiques": {"verdict_first": value}}}
        (tmp_path / name).mkdir()
        config, base = load_pipeline_config(write_config(tmp_path / name, changes, base=CONFIG))
        keys[name] = stage_keys(config, base, STAGES)
    assert keys["default"]["mts"][0] == keys["plain"]["mts"][0]  # written out at its default: the same key
    assert "verdict_first" not in keys["plain"]["mts"][1]["settings"]["critiques"]
    assert keys["first"]["mts"][0] != keys["plain"]["mts"][0]
    assert keys["first"]["mts"][1]["settings"]["critiques"]["verdict_first"] is True
